#!/usr/bin/env python3
"""test_query_shell.py — `sysptd query INCIDENT...` on a terminal: the
interactive shell (issue 14 item 7) and tables cut to the terminal's width
(item 8), driven through a real pseudo-terminal.

    test_query_shell.py SYSPTD MAKE_INCIDENT

Checks: banner and prompt; dot commands (.tables, .schema, .report, .mode,
.incidents, .help, unknown); a statement over several lines with the
continuation prompt; results over two incidents with the `incident` column;
bad SQL reported and the shell goes on; Ctrl+C drops the statement being
typed and prompts again; .quit and end of input (Ctrl+D) leave with status
0; on a 40-column terminal a long text is cut to fit, and the same query
with stdout redirected to a file is not.
"""
import fcntl
import os
import pty
import select
import struct
import sys
import tempfile
import termios
import time

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what, file=sys.stderr)


class Shell:
    """One `sysptd query` on a pty of @cols columns."""

    def __init__(self, argv, cols=120, stdout_file=None):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            if stdout_file:
                out = os.open(stdout_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(out, 1)
            os.execv(argv[0], argv)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
        self.buf = b""

    def read_until(self, token, timeout=10.0):
        """Everything up to and including @token (bytes), or what came
        before the timeout."""
        end = time.time() + timeout
        while token not in self.buf:
            left = end - time.time()
            if left <= 0:
                break
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                break
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                break
            if not data:
                break
            self.buf += data
        i = self.buf.find(token)
        if i < 0:
            got, self.buf = self.buf, b""
            return got.decode("utf-8", "replace")
        got, self.buf = self.buf[:i + len(token)], self.buf[i + len(token):]
        return got.decode("utf-8", "replace").replace("\r\n", "\n")

    def send(self, text):
        os.write(self.fd, text.encode())

    def command(self, line):
        """Type @line and return what printed before the next prompt."""
        self.send(line + "\n")
        out = self.read_until(b"sysptd> ")
        # the terminal echoes the typed line first
        return out.split("\n", 1)[1] if "\n" in out else out

    def wait(self, timeout=10.0):
        end = time.time() + timeout
        while time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            self.read_until(b"\0", 0.1)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        return None


def main():
    sysptd, make = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="sptd-shell-")
    a, b = os.path.join(tmp, "a.db"), os.path.join(tmp, "b.db")
    for path, kind in ((a, "sample"), (b, "pt")):
        if os.spawnv(os.P_WAIT, make, [make, path, kind]) != 0:
            print("cannot make the test incidents", file=sys.stderr)
            return 1

    sh = Shell([sysptd, "query", a, b])
    banner = sh.read_until(b"sysptd> ")
    check("sysptd query shell on 2 incidents" in banner and ".help" in banner,
          "banner: %r" % banner)
    out = sh.command(".tables")
    check("sched_slice" in out and "thread_state" in out and "raw_ftrace_page" in out,
          ".tables: %r" % out)
    out = sh.command(".schema thread")
    check(("CREATE TABLE thread" in out or 'CREATE TABLE "thread"' in out) and
          "sched_slice" not in out,
          ".schema thread: %r" % out)
    out = sh.command(".incidents")
    check(a in out and b in out, ".incidents: %r" % out)
    # a statement over two lines: the continuation prompt, then one result
    # with the incident column
    sh.send("SELECT count(*) AS n\n")
    cont = sh.read_until(b"...> ")
    check(cont.endswith("   ...> "), "continuation prompt: %r" % cont)
    out = sh.command("FROM sched_slice;")
    check(" incident " in out and "| 6\n" in out and "(2 rows)" in out and a in out and b in out,
          "two-line statement over two incidents: %r" % out)
    # a trigger's BEGIN ... END: its inner ';' ends no statement (SQLite
    # splits), so the shell waits for END; then one refusal (a write)
    sh.send("CREATE TEMP TRIGGER t AFTER INSERT ON meta BEGIN SELECT 1;\n")
    cont = sh.read_until(b"...> ")
    check(cont.endswith("   ...> ") and "error" not in cont,
          "a trigger's inner ';' is not its end: %r" % cont)
    out = sh.command("END;")
    check("read-only" in out and "incomplete input" not in out and
          out.count("sysptd query:") == 1, "trigger in the shell: %r" % out)
    # bad SQL: reported, the shell goes on
    out = sh.command("SELEC 1;")
    check("syntax error" in out, "bad SQL: %r" % out)
    out = sh.command(".bogus")
    check("unknown command '.bogus'" in out, "unknown dot command: %r" % out)
    # Ctrl+C drops the half-typed statement
    sh.send("SELECT 2 AS two")
    time.sleep(0.2)
    sh.send("\x03")
    sh.read_until(b"sysptd> ")
    out = sh.command("SELECT 3 AS three;")
    check("three" in out and "two" not in out and "(2 rows)" in out, "after Ctrl+C: %r" % out)
    out = sh.command(".mode csv")
    out = sh.command("SELECT 1 AS one;")
    check("incident,one\n" in out and a + ",1\n" in out, ".mode csv: %r" % out)
    out = sh.command(".mode")
    check(out.strip().startswith("csv"), ".mode: %r" % out)
    sh.command(".mode table")
    out = sh.command(".report irq")
    check("=== %s ===" % a in out and "== hard IRQ handlers (" in out and "960.000 us" in out,
          ".report irq: %r" % out)
    out = sh.command(".help")
    check(".schema" in out and ".quit" in out, ".help: %r" % out)
    sh.send(".quit\n")
    check(sh.wait() == 0, ".quit leaves with status 0")

    # end of input leaves too (a statement left unfinished still runs)
    sh = Shell([sysptd, "query", a])
    sh.read_until(b"sysptd> ")
    sh.send("SELECT 42 AS answer")
    time.sleep(0.2)
    sh.send("\n\x04")
    out = sh.read_until(b"(1 row)")
    check("42" in out, "statement finished by end of input: %r" % out)
    check(sh.wait() == 0, "Ctrl+D leaves with status 0")

    # item 8: a 40-column terminal cuts text to fit; a file gets it whole
    long_sql = "SELECT printf('%.100c', 'x') AS t, 1 AS n"
    sh = Shell([sysptd, "query", a, long_sql], cols=40)
    out = sh.read_until(b"(1 row)")
    sh.wait()
    lines = [l for l in out.split("\n") if "|" in l]
    check(lines and all(len(l) <= 40 for l in lines) and "\u2026" in out,
          "cut to 40 columns: %r" % out)
    outfile = os.path.join(tmp, "out.txt")
    sh = Shell([sysptd, "query", a, long_sql], cols=40, stdout_file=outfile)
    sh.wait()
    text = open(outfile, encoding="utf-8").read()
    check("x" * 100 in text and "\u2026" not in text, "not cut into a file: %r" % text)

    for f in (a, b, outfile):
        if os.path.exists(f):
            os.unlink(f)
    os.rmdir(tmp)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
