#!/usr/bin/env python3
"""test_perfetto_tp.py — `sysptd export` checked by Perfetto's own
trace_processor (v58.2, the engine behind ui.perfetto.dev).

    test_perfetto_tp.py synthetic SYSPTD MAKE_INCIDENT TRACE_PROCESSOR
    test_perfetto_tp.py real      SYSPTD MAKE_INCIDENT TRACE_PROCESSOR

synthetic: query_incident.c's PT incident plus gaps (call slices, irqs,
softirqs, wakeups, a trigger) and its sampling one (samples, gaps).
real: an incident this machine records now (root, tracefs; run under the
machine-wide lock), exported as it is.

For each: the trace loads with no `error` or `data_loss` stat; trace
processor's tables hold what the incident holds, compared row by row with
the incident read through `sysptd query`:
  sched        every sched_slice of a task (idle aside): ts, cpu, tid, dur
               (-1 in Perfetto where the slice is still running at the end)
  thread_state every Running state (ts, tid, cpu) and every wakeup (an R
               state with a waker: ts, tid)
  slice        every call slice (ts, dur, name, depth, tid), every sample
               (an instant on its thread named by its leaf function), every
               irq and softirq (ts, dur, name on its CPU's track), every gap
  thread       every thread (tid, name); process: every process (pid, name)
Exit 77 (skipped) when trace_processor is absent, or for `real` when not
root or without tracefs.
"""
import csv
import io
import os
import subprocess
import time
import sys
import tempfile

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what, file=sys.stderr)


def tagged(text):
    """CSV rows of several results whose first column is a tag -> {tag: [rows]}."""
    out = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 1 or row[0].startswith("'") or row[0] in ("incident",):
            continue
        out.setdefault(row[0], []).append(tuple(row[1:]))
    return out


def tp_query(tp, trace, queries):
    """Run every (tag, sql) of @queries in one trace_processor run."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        for tag, sql in queries:
            f.write("SELECT '%s' AS tag, * FROM (%s);\n" % (tag, sql))
        name = f.name
    try:
        r = subprocess.run([tp, "-q", name, trace], capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(name)
    check(r.returncode == 0, "trace_processor exit %d: %s" % (r.returncode, r.stderr[-2000:]))
    return tagged(r.stdout.replace('"[NULL]"', ""))


def incident_query(sysptd, db, queries):
    text = "".join("SELECT '%s' AS tag, * FROM (%s);\n" % q for q in queries)
    r = subprocess.run([sysptd, "query", db, "-", "--format", "csv"], input=text,
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "sysptd query exit %d: %s" % (r.returncode, r.stderr))
    return tagged(r.stdout)


# What the incident holds, in the shape trace_processor gives it back.
INCIDENT = [
    ("sched", "SELECT s.ts, s.cpu, t.tid, CASE WHEN s.end_state IS NULL AND s.ts + s.dur = "
              "(SELECT max(x.ts + x.dur) FROM sched_slice x WHERE x.cpu = s.cpu) THEN -1 "
              "ELSE s.dur END FROM sched_slice s JOIN thread t USING (utid) WHERE t.tid != 0"),
    # Perfetto rebuilds thread states from the switches; a task whose
    # thread_state says Running where no sched slice of it begins (the
    # synthetic incident's client; in a recording, a task whose switch out
    # the kernel's ring lost) is left out of the thread_state comparison
    ("running", "SELECT st.ts, t.tid, st.cpu FROM thread_state st JOIN thread t USING (utid) "
                "WHERE st.state = 'Running' AND t.tid != 0"),
    ("odd", "SELECT DISTINCT t.tid FROM thread_state st JOIN thread t USING (utid) "
            "WHERE st.state = 'Running' AND NOT EXISTS (SELECT 1 FROM sched_slice s "
            "WHERE s.utid = st.utid AND s.ts = st.ts AND s.cpu = st.cpu)"),
    ("wakeup", "SELECT st.ts, t.tid FROM thread_state st JOIN thread t USING (utid) "
               "WHERE st.state = 'R' AND st.waker_utid IS NOT NULL AND t.tid != 0"),
    ("wakeup_info", "SELECT st.ts, t.tid, st.flags, st.dur, st.cpu, (SELECT value FROM meta "
                    "WHERE key = 'window_start') FROM thread_state st JOIN thread t USING (utid) "
                    "WHERE st.state = 'R' AND st.waker_utid IS NOT NULL AND t.tid != 0"),
    ("call", "SELECT s.ts, s.dur, coalesce(sym.name, '[unknown]'), s.depth, t.tid FROM slice s "
             "JOIN thread t USING (utid) LEFT JOIN symbol sym ON sym.id = s.symbol_id"),
    ("sample", "SELECT s.ts, t.tid FROM sample s JOIN thread t USING (utid)"),
    # every sample with its stack, leaf first, named as the export names
    # frames (a frame no symbol covers: its dso and offset, or its address)
    ("psample", "WITH RECURSIVE nm(id, parent_id, name) AS (SELECT c.id, c.parent_id, "
                "CASE WHEN y.name IS NOT NULL AND y.name != '[unknown]' THEN y.name "
                "WHEN d.path IS NOT NULL THEN '[unknown] (' || d.path || '+0x' || "
                "printf('%x', c.addr) || ')' ELSE '[unknown] (0x' || printf('%x', c.addr) || ')' "
                "END FROM callsite c LEFT JOIN symbol y ON y.id = c.symbol_id "
                "LEFT JOIN dso d ON d.id = y.dso_id), "
                "ch(leaf, parent, path, n) AS (SELECT id, parent_id, name, 0 FROM nm UNION ALL "
                "SELECT ch.leaf, nm.parent_id, ch.path || ';' || nm.name, ch.n + 1 FROM ch "
                "JOIN nm ON nm.id = ch.parent WHERE ch.n < 1100) "
                "SELECT s.ts, t.tid, s.cpu, (SELECT path FROM ch WHERE ch.leaf = s.callsite_id "
                "AND ch.parent IS NULL) FROM sample s JOIN thread t USING (utid)"),
    ("watch", "SELECT w.ts, w.tid, 'watch: ' || coalesce(w.function, '[unknown]') "
              "FROM watch_hit w"),
    ("irq", "SELECT ts, dur, 'IRQ (' || name || ')', cpu FROM irq_slice UNION ALL "
            "SELECT ts, dur, name, cpu FROM softirq_slice"),
    ("gap", "SELECT ts, dur, reason FROM gap"),
    ("thread", "SELECT tid, name FROM thread WHERE tid != 0"),
    # Perfetto names a process by its cmdline's first word when it has one
    ("process", "SELECT pid, name, CASE WHEN instr(cmdline, ' ') > 0 THEN "
                "substr(cmdline, 1, instr(cmdline, ' ') - 1) ELSE cmdline END "
                "FROM process WHERE pid != 0"),
    ("window", "SELECT (SELECT value FROM meta WHERE key = 'window_start'), "
               "(SELECT value FROM meta WHERE key = 'window_end')"),
]

# The same from trace_processor's tables.
TRACE = [
    ("stats", "SELECT name, idx, severity, value FROM stats WHERE value > 0 AND "
              "severity IN ('error', 'data_loss')"),
    ("sched", "SELECT s.ts, s.cpu, t.tid, s.dur FROM sched s JOIN thread t USING (utid) "
              "WHERE t.tid != 0"),
    ("running", "SELECT st.ts, t.tid, st.cpu FROM thread_state st JOIN thread t USING (utid) "
                "WHERE st.state = 'Running' AND t.tid != 0"),
    ("rstate", "SELECT st.ts, t.tid FROM thread_state st JOIN thread t USING (utid) "
               "WHERE st.state = 'R' AND t.tid != 0"),
    ("tslice", "SELECT s.ts, s.dur, s.name, s.depth, t.tid FROM slice s JOIN thread_track tt "
               "ON tt.id = s.track_id JOIN thread t ON t.utid = tt.utid"),
    ("irq", "SELECT s.ts, s.dur, s.name, c.cpu FROM slice s JOIN cpu_track c ON c.id = s.track_id "
            "WHERE c.type IN ('cpu_irq', 'cpu_softirq')"),
    ("gap", "SELECT s.ts, s.dur, s.name FROM slice s JOIN track tr ON tr.id = s.track_id "
            "WHERE tr.name LIKE 'sysptd gaps%'"),
    ("thread", "SELECT tid, name FROM thread WHERE tid != 0"),
    ("process", "SELECT pid, name FROM process WHERE pid != 0"),
    ("psample", "WITH RECURSIVE ch(leaf, parent, path) AS (SELECT c.id, c.parent_id, f.name "
                "FROM stack_profile_callsite c JOIN stack_profile_frame f ON f.id = c.frame_id "
                "UNION ALL SELECT ch.leaf, p.parent_id, ch.path || ';' || f.name FROM ch "
                "JOIN stack_profile_callsite p ON p.id = ch.parent "
                "JOIN stack_profile_frame f ON f.id = p.frame_id) "
                "SELECT ps.ts, t.tid, ps.cpu, (SELECT path FROM ch WHERE ch.leaf = ps.callsite_id "
                "AND ch.parent IS NULL) FROM perf_sample ps JOIN thread t USING (utid)"),
]


def compare(label, db, sysptd, tp, trace):
    inc = incident_query(sysptd, db, INCIDENT)
    got = tp_query(tp, trace, TRACE)
    check(not got.get("stats"), "%s: error/data_loss stats: %r" % (label, got.get("stats")))

    def same(name, want, have):
        want, have = sorted(want), sorted(have)
        missing = [r for r in want if r not in set(have)]
        extra = [r for r in have if r not in set(want)]
        check(not missing and not extra and len(want) == len(have),
              "%s %s: %d rows vs %d; missing %r extra %r" %
              (label, name, len(want), len(have), missing[:5], extra[:5]))

    same("sched", inc.get("sched", []), got.get("sched", []))
    # thread_state: every Running row; every wakeup is an R state there
    odd = {r[0] for r in inc.get("odd", [])}
    threads = len(inc.get("thread", []))
    check(len(odd) <= max(2, threads // 20), "%s: %d of %d tasks have Running states that "
          "begin no sched slice: %r" % (label, len(odd), threads, sorted(odd)[:10]))
    have = set(got.get("running", []))
    want = [r for r in inc.get("running", []) if r[1] not in odd]
    miss = [r for r in want if r not in have]
    check(not miss and want, "%s thread_state Running: %d of %d missing: %r" %
          (label, len(miss), len(want), miss[:5]))
    have = set(got.get("rstate", []))
    want = [r for r in inc.get("wakeup", []) if r[1] not in odd]
    miss = [r for r in want if r not in have]
    # a live recording has edges the synthetic incidents do not (a wakeup
    # of a task Perfetto still has Running because its switch out lies on
    # another CPU's ring edge: seen once in ~10 full-suite runs); there at
    # most 2 % may be missing, each printed; the synthetic ones must be exact
    allowed = len(want) // 50 if label == "real" else 0
    check(len(miss) <= allowed, "%s thread_state R after wakeups: %d of %d missing %r" %
          (label, len(miss), len(want), miss[:5]))
    if miss:
        info = {(r[0], r[1]): r for r in inc.get("wakeup_info", [])}
        for m in miss[:5]:
            print("  missing wakeup (ts, tid, flags, dur, cpu, window_start): %r" %
                  (info.get((m[0], m[1])),), file=sys.stderr)
    if odd:
        print("%s: thread_state of %d task(s) left out (Running without a sched slice): %s" %
              (label, len(odd), " ".join(sorted(odd))))
    # slices on thread tracks: call slices exactly, samples as instants
    tsl = got.get("tslice", [])
    calls = [r for r in tsl if not (r[1] == "0" and r[3] == "0")] if not inc.get("sample") else \
        [r for r in tsl if r[1] != "0"]
    want_calls = inc.get("call", [])
    if inc.get("sample"):
        want_calls = [r for r in want_calls if r[1] != "0"]
    same("slice (calls)", want_calls, calls)
    inst = {(r[0], r[4]) for r in tsl if r[1] == "0" and r[3] == "0"}
    miss = [r for r in inc.get("sample", []) if (r[0], r[1]) not in inst]
    check(not miss, "%s slice (samples): %d of %d missing: %r" %
          (label, len(miss), len(inc.get("sample", [])), miss[:5]))
    # samples as Perfetto's CPU profile: every one, on its thread and CPU,
    # with its whole stack
    same("perf_sample", inc.get("psample", []), got.get("psample", []))
    counts = {}
    for r in got.get("psample", []):
        counts[r[1]] = counts.get(r[1], 0) + 1
    want = {}
    for r in inc.get("psample", []):
        want[r[1]] = want.get(r[1], 0) + 1
    check(counts == want, "%s perf_sample per thread: %r, incident %r" % (label, counts, want))
    # watchpoint hits: instants on the writing thread's track
    hits = {(r[0], r[4], r[2]) for r in tsl if r[2].startswith("watch: ")}
    miss = [r for r in inc.get("watch", []) if tuple(r) not in hits]
    check(not miss, "%s watch hits: %d of %d missing: %r" %
          (label, len(miss), len(inc.get("watch", [])), miss[:5]))
    same("irq/softirq", inc.get("irq", []), got.get("irq", []))
    same("gap", inc.get("gap", []), got.get("gap", []))
    have = dict(got.get("thread", []))
    miss = [r for r in inc.get("thread", []) if have.get(r[0]) != r[1]]
    check(not miss, "%s thread: %d of %d missing or named otherwise: %r" %
          (label, len(miss), len(inc.get("thread", [])), miss[:5]))
    have = {}
    for pid, name in got.get("process", []):
        have.setdefault(pid, set()).add(name)
    miss = [r for r in inc.get("process", []) if not have.get(r[0], set()) & {r[1], r[2]}]
    check(not miss, "%s process: %d of %d missing or named otherwise: %r (trace has %r)" %
          (label, len(miss), len(inc.get("process", [])), miss[:5],
           [(r[0], have.get(r[0])) for r in miss[:5]]))
    return inc, got


def export(sysptd, db, out):
    r = subprocess.run([sysptd, "export", db, "-o", out, "-q"], capture_output=True, text=True)
    check(r.returncode == 0 and os.path.getsize(out) > 0, "export %s: %s" % (db, r.stderr))


def synthetic(sysptd, make, tp, tmp):
    full, sample = os.path.join(tmp, "full.db"), os.path.join(tmp, "sample.db")
    for path, kind in ((full, "full"), (sample, "sample")):
        subprocess.run([make, path, kind], check=True)
    export(sysptd, full, full + ".pftrace")
    inc, got = compare("full", full, sysptd, tp, full + ".pftrace")
    # a few exact rows, as query_incident.c defines them
    check(("1250000", "100000", "handle", "3", "100") in got.get("tslice", []),
          "the depth-3 call handle at 1.25 ms: %r" % got.get("tslice"))
    check(("2000000", "10000", "IRQ (eth0)", "0") in got.get("irq", []), "irq eth0 at 2 ms")
    check(("7000000", "2000", "pt: lost sync") in got.get("gap", []), "the gap of every CPU")
    check(("500000", "1", "200", "2500000") in got.get("sched", []),
          "client's first slice on cpu 1 (the one Perfetto drops without a seed)")
    check(("5000000", "0", "101", "-1") in got.get("sched", []),
          "worker still running at the window end: open (-1)")
    check(len(inc.get("call", [])) == 5 and len(inc.get("gap", [])) == 2, "the incident's rows")
    # a comm with blanks and no cmdline (a kernel thread) stays whole
    check({r[1] for r in got.get("process", []) if r[0] == "300"} == {BLANKS},
          "full: process 300 is %r in trace_processor, not '%s'" %
          ([r for r in got.get("process", []) if r[0] == "300"], BLANKS))
    check(("300", BLANKS) in got.get("thread", []), "full: thread 300 named '%s'" % BLANKS)
    export(sysptd, sample, sample + ".pftrace")
    compare("sample", sample, sysptd, tp, sample + ".pftrace")


# A process whose name has blanks, as the NVIDIA driver's kernel threads
# ("UVM global queu") have: it names itself, then waits, running now and
# then so that the window holds it.
BLANKS = "sptd two words"
BLANKS_PROG = ("import ctypes, time\n"
               "ctypes.CDLL(None).prctl(15, b'%s', 0, 0, 0)\n"
               "while True:\n"
               "    time.sleep(0.005)\n" % BLANKS)


def real(sysptd, tp, tmp):
    out = os.path.join(tmp, "rec")
    load = subprocess.Popen(["sh", "-c", "while :; do ls / >/dev/null; sleep 0.001; done"])
    named = subprocess.Popen([sys.executable, "-c", BLANKS_PROG])
    try:
        time.sleep(0.3)
        # a recorder of its own (--name), beside the machine's service
        r = subprocess.run([sysptd, "--name", "tp%d" % os.getpid(), "--window", "30ms", "--trigger", "timer=300ms", "--once",
                            "-q", "-o", out], capture_output=True, text=True, timeout=120)
    finally:
        for p in (load, named):
            p.kill()
            p.wait()
    check(r.returncode == 0, "recording exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode != 0:
        return
    db = r.stdout.strip().splitlines()[-1]
    export(sysptd, db, os.path.join(tmp, "real.pftrace"))
    inc, got = compare("real", db, sysptd, tp, os.path.join(tmp, "real.pftrace"))
    # its thread keeps the name whole; its process is named by the cmdline
    # when the recording read one (/proc is read for processes that were
    # sampled), else by that comm, whole
    check((str(named.pid), BLANKS) in got.get("thread", []),
          "real: thread %d is %r in trace_processor, not '%s'" %
          (named.pid, [r for r in got.get("thread", []) if r[0] == str(named.pid)], BLANKS))
    argv0 = {r[2] for r in inc.get("process", []) if r[0] == str(named.pid)}
    want = argv0 if argv0 and argv0 != {""} else {BLANKS}
    names = {name for pid, name in got.get("process", []) if pid == str(named.pid)}
    check(names == want, "real: the process named '%s' is %r in trace_processor, not %r" %
          (BLANKS, names, want))
    check(len(inc.get("sched", [])) > 10 and len(got.get("sched", [])) == len(inc["sched"]),
          "real: %d sched slices in the incident, %d in trace_processor" %
          (len(inc.get("sched", [])), len(got.get("sched", []))))
    print("real incident: %d sched slices, %d Running states, %d wakeups, %d samples, %d irqs, "
          "%d threads" % tuple(len(inc.get(k, [])) for k in
                               ("sched", "running", "wakeup", "sample", "irq", "thread")))


def main():
    mode, sysptd, make, tp = sys.argv[1:5]
    if not os.access(tp, os.X_OK):
        print("SKIP: no trace_processor at %s (see shared/tools/perfetto/README.md)" % tp,
              file=sys.stderr)
        return 77
    if mode == "real":
        if os.geteuid() != 0:
            print("SKIP: recording needs root", file=sys.stderr)
            return 77
        if not os.path.isdir("/sys/kernel/tracing/events") and \
                subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"]).returncode:
            print("SKIP: no tracefs", file=sys.stderr)
            return 77
    tmp = tempfile.mkdtemp(prefix="sptd-tp-")
    try:
        if mode == "real":
            real(sysptd, tp, tmp)
        else:
            synthetic(sysptd, make, tp, tmp)
    finally:
        subprocess.run(["rm", "-rf", tmp])
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
