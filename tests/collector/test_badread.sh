#!/bin/sh
# test_badread.sh — readers (script, export, query) on incidents edited the
# way a hostile or damaged file would be, from the audit of 2026-11-27:
# each case hid data, put it somewhere else, or blamed the user for the
# file.  Every check fails on the binary before those fixes.  Needs the
# shared fixtures and the sqlite3 shell; no root.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
FIX=${SPTD_FIXTURES:-}/real-pt
[ -f "$FIX/hase-loopy/perf.data" ] || { echo "SKIP: no fixtures at $FIX" >&2; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 shell (scripts/install-deps.sh)" >&2; exit 77; }

work=$(mktemp -d /tmp/sptd-badread-XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=../lib/expect.sh
. "$(dirname "$0")/../lib/expect.sh"
check() {
	if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', want '$2'"; fi
}
proto=$(dirname "$0")/../perfetto/sysptd_trace.proto
# pbtext FILE.pftrace: the trace as protoc's text ("" without protoc)
pbtext() {
	if command -v protoc >/dev/null 2>&1 && [ -f "$proto" ]; then
		protoc --decode=perfetto.protos.Trace -I "$(dirname "$proto")" "$proto" <"$1"
	fi
}

expect 0 "sched slices" -- "$BIN" import "$FIX/hase-loopy/perf.data" \
	--symfs "$FIX/hase-loopy/symfs" -o "$work/loopy.db"
# three sampled frames main <- foo <- bar and two samples (the fixture has
# none): stacks to walk
SAMPLES="INSERT INTO symbol VALUES (10, 'main', 2, 4096, 100), (11, 'foo', 2, 8192, 100),
		(12, 'bar', 2, 12288, 100);
	INSERT INTO callsite VALUES (1, NULL, 0, 10, 4100), (2, 1, 1, 11, 8200), (3, 2, 2, 12, 12300);
	INSERT INTO sample VALUES (1, 969349987564300, 2, 0, 3), (2, 969349987564400, 2, 0, 2);"

# ---- a frame's name over 511 bytes (C++ templates run to kilobytes) was
# cut without its newline: the export glued the next frame onto it
cp "$work/loopy.db" "$work/long.db"
sqlite3 "$work/long.db" "$SAMPLES
	UPDATE symbol SET name = 'std::' || replace(hex(zeroblob(300)), '0', 'ab') || '::END' WHERE id = 11"
expect 0 "" -- "$BIN" export "$work/long.db" -q -o "$work/long.json"
check "a 1,200-byte frame name whole, each frame its line" "1 3" "$(python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
st = [e["args"]["stack"] for e in ev if e.get("args", {}).get("stack") and e["ts"] == 969349987564.3]
s = st[0].split("\n") if st else []
print(sum(1 for l in s if l.endswith("::END (/work/shared/fixtures/real-pt/hase-loopy/symfs/home/joerg/git/angr/hase/tests/bin/loopy/loopy)") or "::END (" in l), len(s))
' "$work/long.json" 2>&1)"

# ---- script: a leaf whose depth is INT64_MAX printed an empty stack; a
# walk stopped short of its root (a parent not shallower than its child)
# said nothing of the cut
cp "$work/loopy.db" "$work/depth.db"
sqlite3 "$work/depth.db" "$SAMPLES UPDATE callsite SET depth = 9223372036854775807 WHERE id = 3"
"$BIN" script "$work/depth.db" >"$work/out" 2>&1
check "script: the INT64_MAX-deep leaf's three frames" "0 1 1 0" \
	"$? $(grep -A1 '564300: sample' "$work/out" | grep -c ' bar (') \
$(grep -A3 '564300: sample' "$work/out" | grep -c ' main (') $(grep -c '\[stack cut\]' "$work/out")"
cp "$work/loopy.db" "$work/cut.db"
sqlite3 "$work/cut.db" "$SAMPLES UPDATE callsite SET depth = 7 WHERE id = 1"
"$BIN" script "$work/cut.db" >"$work/out" 2>&1
check "script: a walk that stops says so" "0 2 0" "$? $(grep -c '\[stack cut\]' "$work/out") \
$(grep -c ' main (' "$work/out")"
expect 0 "" -- "$BIN" export "$work/cut.db" -q -o "$work/cut.json"
check "export: the cut said in the stacks" 2 "$(grep -o 'foo ([^)]*)\\n\[stack cut\]' "$work/cut.json" | wc -l)"

# ---- export: stacks of a chain of 20,000 callsites, each a sample's leaf,
# wrote 2 GB from a 2 MB file (1024 frames each); a budget of 128 frames
# per callsite row (perf's default --max-stack is 127) cuts them, said
cp "$work/loopy.db" "$work/chain.db"
sqlite3 "$work/chain.db" "INSERT INTO symbol VALUES (10, 'main', 2, 4096, 100);
	WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
	INSERT INTO callsite SELECT i, CASE WHEN i = 1 THEN NULL ELSE i - 1 END, i - 1, 10, 4096 + i FROM n;
	WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
	INSERT INTO sample SELECT i, 969349987564300 + i, 2, 0, i FROM n"
expect 0 "stacks end in .\[stack cut\]" -- "$BIN" export "$work/chain.db" -o "$work/chain.pftrace"
size=$(wc -c <"$work/chain.pftrace")
# 20,000 x 128 + 2^20 frames of about 100 bytes: at most 0.4 GB
check "export of the chain: at most 128 frames per callsite" 1 \
	"$([ "$size" -lt 400000000 ] && echo 1 || echo 0)"
rm -f "$work/chain.pftrace"

# ---- proto export: rows of CPU 2^32 + 2 went onto CPU 2 (an int cast);
# they are skipped: the trace is the one of a file without them
cp "$work/loopy.db" "$work/cpu.db"
sqlite3 "$work/cpu.db" "UPDATE sched_slice SET cpu = cpu + 4294967296 WHERE cpu = 2 AND id % 2 = 0"
cp "$work/loopy.db" "$work/nocpu.db"
sqlite3 "$work/nocpu.db" "DELETE FROM sched_slice WHERE cpu = 2 AND id % 2 = 0"
expect 0 "" -- "$BIN" export "$work/cpu.db" -q -o "$work/cpu.pftrace"
expect 0 "" -- "$BIN" export "$work/nocpu.db" -q -o "$work/nocpu.pftrace"
check "CPU 2^32 + 2's rows: not on CPU 2" same \
	"$(cmp -s "$work/cpu.pftrace" "$work/nocpu.pftrace" && echo same)"

# ---- JSON export: a CPU numbered like a gap thread (1,000,001 = the gap
# thread of CPU 0) shared that thread: two names, both CPUs' rows
cp "$work/loopy.db" "$work/gapcpu.db"
sqlite3 "$work/gapcpu.db" "UPDATE sched_slice SET cpu = 1000001 WHERE cpu = 3; UPDATE gap SET cpu = 0"
expect 0 "" -- "$BIN" export "$work/gapcpu.db" -q -o "$work/gapcpu.json"
check "JSON: one name per thread" 0 "$(python3 -c '
import json, sys
n = {}
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e.get("ph") == "M" and e.get("name") == "thread_name":
        n.setdefault((e["pid"], e["tid"]), set()).add(e["args"]["name"])
print(sum(1 for v in n.values() if len(v) > 1))' "$work/gapcpu.json" 2>&1)"

# ---- proto export: symbol ids beyond 56 bits (or INT64_MIN) took another
# symbol's interned name
cp "$work/loopy.db" "$work/symid.db"
sqlite3 "$work/symid.db" "INSERT INTO symbol VALUES (72057594037927938, 'HIDDEN_FN', -1, 0, 0);
	UPDATE slice SET symbol_id = 72057594037927938 WHERE id = 3"
expect 6 "symbol id 72057594037927938 is out of range" -- "$BIN" export "$work/symid.db" -q \
	-o "$work/symid.pftrace"
cp "$work/loopy.db" "$work/symmin.db"
sqlite3 "$work/symmin.db" "INSERT INTO symbol VALUES (-9223372036854775808, 'EVIL_FN', -1, 0, 0);
	UPDATE slice SET symbol_id = -9223372036854775808 WHERE id = 3"
expect 6 "symbol id -9223372036854775808 is out of range" -- "$BIN" export "$work/symmin.db" -q \
	-o "$work/symmin.pftrace"

# ---- ftrace events' args: the proto export cut strings at 1023 bytes,
# script at 4 KB, and script ended at the first '}' of a nested object
cp "$work/loopy.db" "$work/args.db"
sqlite3 "$work/args.db" "INSERT INTO ftrace_event VALUES
	(1, 969349987564300, 2, 0, 'sched:sched_process_exec',
	 '{\"filename\":\"/' || replace(hex(zeroblob(700)), '0', 'd') || '/END_OF_PATH\",\"pid\":5}'),
	(2, 969349987564301, 2, 0, 'x:y', '{\"a\":{\"b\":1},\"hidden\":42}'),
	(3, 969349987564302, 2, 0, 'x:z',
	 '{\"a\":\"' || replace(hex(zeroblob(2100)), '0', 'q') || '\",\"tail\":\"TAIL_VISIBLE\"}')"
"$BIN" script "$work/args.db" >"$work/out" 2>&1
check "script: nested object, 4 KB value, 1.4 KB path" "0 1 1 1" "$? \
$(grep -c 'a={\"b\":1} hidden=42' "$work/out") $(grep -c 'tail=TAIL_VISIBLE' "$work/out") \
$(grep -c 'END_OF_PATH pid=5' "$work/out")"
expect 0 "" -- "$BIN" export "$work/args.db" -q -o "$work/args.pftrace"
if [ -n "$(pbtext "$work/args.pftrace" | head -1)" ]; then
	check "proto: the 1.4 KB path whole" 1 "$(pbtext "$work/args.pftrace" | grep -c 'END_OF_PATH')"
fi

# ---- a generated column or an unknown collation passed the open's
# checks and then failed statements as the user's fault (exit 2 or 1)
cp "$work/loopy.db" "$work/gen.db"
sqlite3 "$work/gen.db" "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET
	sql = replace(sql, 'depth INT,', 'depth INT AS (abs(-9223372036854775807 - 1)),') WHERE name = 'slice'"
expect 6 "column depth is generated" -- "$BIN" script "$work/gen.db"
expect 6 "column depth is generated" -- "$BIN" export "$work/gen.db" -q -o "$work/gen.json"
cp "$work/loopy.db" "$work/coll.db"
sqlite3 "$work/coll.db" "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET
	sql = replace(sql, 'name TEXT', 'name TEXT COLLATE nosuchcoll') WHERE name = 'thread'"
expect 6 "column name uses collation \"nosuchcoll\"" -- "$BIN" query "$work/coll.db" \
	"SELECT name FROM thread ORDER BY name"
cp "$work/loopy.db" "$work/coll2.db"
sqlite3 "$work/coll2.db" "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET
	sql = replace(sql, '(utid, ts)', '(utid COLLATE nosuch, ts)') WHERE name = 'slice_utid_ts'"
expect 6 "index slice_utid_ts uses collation \"nosuch\"" -- "$BIN" script "$work/coll2.db"
# the message names the problem once (script put "not a sysptd incident"
# in front of a message in the same buffer: vsnprintf into its own
# argument, garbled; that path is sptd_query_verr's now)
"$BIN" script "$work/coll2.db" >"$work/out" 2>&1
check "the message once" 1 "$(grep -o 'not a complete sysptd incident' "$work/out" | wc -l)"

# ---- script: a tid beyond 32 bits was printed and matched as its low half
cp "$work/loopy.db" "$work/tid.db"
sqlite3 "$work/tid.db" "UPDATE thread SET tid = 4294986529 WHERE name = 'loopy'"
"$BIN" script "$work/tid.db" --tid 19233 >"$work/out" 2>&1
check "--tid 19233 does not match tid 4294986529" "0 0" "$? $(grep -c loopy "$work/out")"
"$BIN" script "$work/tid.db" >"$work/out" 2>&1
check "tid 4294986529 printed whole" "0 0" \
	"$? $(grep loopy "$work/out" | grep -v 'next_pid=4294986529 ' | grep -vc 'loopy 4294986529 ')"

# ---- script --time on a file whose window ends before it starts: the
# file's fault (6), as query's reports say, not the request's (2)
cp "$work/loopy.db" "$work/rev.db"
sqlite3 "$work/rev.db" "UPDATE meta SET value = '969350059511549' WHERE key = 'window_start';
	UPDATE meta SET value = '969349986286884' WHERE key = 'window_end'"
expect 6 "window ends before it starts" -- "$BIN" script "$work/rev.db" --time 0%,100%

# ---- readers check the file they opened and SQLite then read it again by
# name: a FIFO renamed over it in between blocked them for ever, a link
# swapped to another incident was read, and a path over 512 bytes could
# not be opened at all (SQLite's limit on names).  SQLite now reads the
# descriptor that was checked (store/store_fdvfs.c): the long path shows it
long=$work/lp
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	long=$long/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
done
mkdir -p "$long"
cp "$work/loopy.db" "$long/incident.db"
"$BIN" query "$long/incident.db" "SELECT count(*) FROM thread" --format csv >"$work/out" 2>&1
check "a 640-byte path: query" "0 21" "$? $(tail -n 1 "$work/out")"
expect 0 "" -- "$BIN" export "$long/incident.db" -q -o "$work/long-path.json"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
