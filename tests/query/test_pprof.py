#!/usr/bin/env python3
"""test_pprof.py — `sysptd export INCIDENT -o FILE.pb.gz`: the samples as a
pprof profile, checked against pprof's own schema and the incident.

    test_pprof.py SYSPTD MAKE_INCIDENT PROFILE_PROTO

1. The synthetic sampling incident (query_incident.c) exported by its
   extension: a gzip file that `protoc --decode=perftools.profiles.Profile`
   reads with pprof's profile.proto (Debian's golang-github-google-pprof-dev)
   with no field unknown to it; decoded again here by a small independent
   reader: the values sum to the incident's samples, and per (tid, cpu,
   stack) the counts equal the incident's (stacks leaf first, a frame by its
   function name, else its address); labels thread/tid/pid/cpu, the mapping
   of /usr/bin/server with its build-id.
2. A hostile incident: a 30,000-frame chain with a sample on every 30th frame,
   a cycle of parent links, a 1 MB symbol name: the pprof and Perfetto
   exports end within the test's timeout with bounded files, the cycle's
   stack ending in "[stack cut]".
Exit 77 (skipped) without protoc or profile.proto.
"""
import collections
import gzip
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

failed = passed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what, file=sys.stderr)


def fields(buf):
    """(field number, wire type, value) of a protobuf message's fields."""
    i, n = 0, len(buf)
    while i < n:
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            ln, i = varint(buf, i)
            v, i = buf[i:i + ln], i + ln
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def ints(wt, v):
    """A repeated integer field's values, packed or not."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def decode(data):
    """The profile as dicts: strings, functions, locations, mappings, samples."""
    p = {"strings": [], "functions": {}, "locations": {}, "mappings": {}, "samples": []}
    for num, wt, v in fields(data):
        if num == 6:
            p["strings"].append(v.decode())
        elif num == 5:
            f = {n: x for n, _, x in fields(v)}
            p["functions"][f.get(1, 0)] = f.get(2, 0)
        elif num == 3:
            m = {n: x for n, _, x in fields(v)}
            p["mappings"][m.get(1, 0)] = (m.get(5, 0), m.get(6, 0))
        elif num == 4:
            loc = {"lines": []}
            for n, w, x in fields(v):
                if n == 4:
                    loc["lines"].append({a: b for a, _, b in fields(x)}.get(1, 0))
                else:
                    loc[n] = x
            p["locations"][loc.get(1, 0)] = loc
        elif num == 2:
            s = {"locs": [], "values": [], "labels": []}
            for n, w, x in fields(v):
                if n == 1:
                    s["locs"] += ints(w, x)
                elif n == 2:
                    s["values"] += [signed(y) for y in ints(w, x)]
                elif n == 3:
                    s["labels"].append({a: b for a, _, b in fields(x)})
            p["samples"].append(s)
    return p


def stacks(p):
    """Counter of (tid, cpu, stack leaf first) -> samples, and thread names by tid."""
    st = p["strings"]
    out, names = collections.Counter(), {}
    for s in p["samples"]:
        lab = {st[l[1]]: (st[l[2]] if 2 in l else l.get(3, 0)) for l in s["labels"]}
        frames = []
        for lid in s["locs"]:
            loc = p["locations"][lid]
            frames.append(st[p["functions"][loc["lines"][0]]] if loc["lines"]
                          else "0x%x" % loc.get(3, 0))
        out[(str(lab.get("tid")), str(lab.get("cpu", 0)), ";".join(frames))] += s["values"][0]
        if "thread" in lab:
            names[str(lab["tid"])] = lab["thread"]
    return out, names


INCIDENT_STACKS = (
    "WITH RECURSIVE nm(id, parent_id, name) AS (SELECT c.id, c.parent_id, "
    "CASE WHEN y.name IS NOT NULL AND y.name != '[unknown]' THEN y.name "
    "ELSE '0x' || printf('%x', c.addr) END FROM callsite c "
    "LEFT JOIN symbol y ON y.id = c.symbol_id), "
    "ch(leaf, parent, path) AS (SELECT id, parent_id, name FROM nm UNION ALL "
    "SELECT ch.leaf, nm.parent_id, ch.path || ';' || nm.name FROM ch JOIN nm ON nm.id = ch.parent) "
    "SELECT t.tid, s.cpu, (SELECT path FROM ch WHERE ch.leaf = s.callsite_id AND ch.parent IS NULL), "
    "count(*) FROM sample s JOIN thread t USING (utid) GROUP BY 1, 2, 3")


def query(sysptd, db, sql):
    r = subprocess.run([sysptd, "query", db, sql, "--format", "csv"], capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, "query %s: %s" % (sql[:60], r.stderr))
    return [line.split(",") for line in r.stdout.splitlines()[1:]]


def export(sysptd, db, out, timeout=120):
    t0 = time.monotonic()
    r = subprocess.run([sysptd, "export", db, "-o", out, "-q"], capture_output=True, text=True,
                       timeout=timeout)
    return r, time.monotonic() - t0


def synthetic(sysptd, make, proto, tmp):
    db, out = os.path.join(tmp, "s.db"), os.path.join(tmp, "s.pb.gz")
    subprocess.run([make, db, "sample"], check=True)
    r, _ = export(sysptd, db, out)
    check(r.returncode == 0, "export -o s.pb.gz: exit %d %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    with open(out, "rb") as f:
        raw = f.read()
    check(raw[:2] == b"\x1f\x8b", "gzip magic")
    data = gzip.decompress(raw)
    r = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "-I",
                        os.path.dirname(proto), os.path.basename(proto)], input=data,
                       capture_output=True, timeout=60)
    text = r.stdout.decode(errors="replace")
    check(r.returncode == 0, "protoc --decode with pprof's profile.proto: %s" % r.stderr[-500:])
    unknown = [l for l in text.splitlines() if l.strip()[:1].isdigit()]
    check(not unknown, "fields pprof's schema does not know: %r" % unknown[:5])
    p = decode(data)
    check(p["strings"][:1] == [""], "string_table[0] is \"\"")
    total = int(query(sysptd, db, "SELECT count(*) FROM sample")[0][0])
    check(sum(s["values"][0] for s in p["samples"]) == total,
          "values sum to the incident's %d samples" % total)
    got, names = stacks(p)
    want = collections.Counter()
    for tid, cpu, path, n in query(sysptd, db, INCIDENT_STACKS):
        want[(tid, cpu, path)] += int(n)
    check(got == want, "samples per (tid, cpu, stack): %r, incident %r" % (got, want))
    threads = dict((r[0], r[1]) for r in query(sysptd, db, "SELECT tid, name FROM thread"))
    check(names and all(threads.get(t) == n for t, n in names.items()),
          "thread labels name the threads: %r" % names)
    maps = {p["strings"][f]: p["strings"][b] for f, b in p["mappings"].values()}
    check(maps.get("/usr/bin/server") == "abcdef", "mapping with its build-id: %r" % maps)
    for s in p["samples"]:
        keys = {p["strings"][l[1]] for l in s["labels"]}
        check({"tid", "pid", "cpu", "thread"} <= keys, "labels of a sample: %r" % keys)


def hostile(sysptd, make, tmp):
    db = os.path.join(tmp, "h.db")
    subprocess.run([make, db, "sample"], check=True)
    con = sqlite3.connect(db)
    base = 1000
    n = 30000
    con.execute("INSERT INTO symbol (id, name, dso_id, addr, size) VALUES (900, ?, 1, 0, 0)",
                ("x" * (1 << 20),))
    con.executemany("INSERT INTO callsite (id, parent_id, depth, symbol_id, addr) "
                    "VALUES (?, ?, ?, 900, ?)",
                    [(base + i, base + i - 1 if i else None, i, 0x1000 + i) for i in range(n)])
    # a cycle of parent links at one depth
    con.execute("INSERT INTO callsite VALUES (90001, 90002, 5, 2, 1)")
    con.execute("INSERT INTO callsite VALUES (90002, 90001, 5, 2, 2)")
    # a sample on every 30th frame of the chain: 1,000 stacks, most of them
    # deeper than the frame budget, enough to show the bound without making
    # the decoding of the result the test's cost
    every = 30
    con.executemany("INSERT INTO sample (ts, cpu, utid, callsite_id) VALUES (?, 0, 1, ?)",
                    [(9000000 + i, base + i) for i in range(0, n, every)] +
                    [(9500000, 90001), (9500001, 90002)])
    con.commit()
    con.close()
    for ext in ("pb.gz", "pftrace"):
        out = db + "." + ext
        try:
            r, secs = export(sysptd, db, out, timeout=240)
        except subprocess.TimeoutExpired:
            check(False, "hostile export %s did not end in 240 s" % ext)
            continue
        check(r.returncode in (0, 6), "hostile export %s: exit %d %s" %
              (ext, r.returncode, r.stderr[-300:]))
        size = os.path.getsize(out) if os.path.exists(out) else 0
        # unbounded, the chain's stacks alone are 1,000 x 1,024 frames
        # and each frame's name 1 MB
        check(size < 64 << 20, "hostile export %s: %d bytes" % (ext, size))
        print("hostile %s: exit %d, %.1f MB, %.1f s" % (ext, r.returncode, size / 1e6, secs))
        if ext == "pb.gz" and r.returncode == 0:
            with open(out, "rb") as f:
                p = decode(gzip.decompress(f.read()))
            got, _ = stacks(p)
            check(sum(got.values()) == n // every + 10, "hostile pprof: %d samples" % sum(got.values()))
            cyc = [k for k in got if k[2].startswith("0x1;") or k[2].startswith("0x2;")
                   or k[2].startswith("handle")]
            check(any(k[2].endswith("[stack cut]") for k in cyc),
                  "the cycle's stack ends in [stack cut]: %r" % [k[2][:80] for k in cyc])
            longest = max(len(k[2].split(";")) for k in got)
            check(longest <= 1025, "longest stack %d frames" % longest)
            names = max(len(x) for x in p["strings"])
            check(names <= 4096, "longest name %d bytes" % names)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    sysptd, make, proto = sys.argv[1:]
    if not shutil.which("protoc") or not os.path.exists(proto):
        print("SKIP: protoc or pprof's profile.proto (golang-github-google-pprof-dev) absent")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        synthetic(sysptd, make, proto, tmp)
        hostile(sysptd, make, tmp)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
