#!/bin/sh
# test_badinput.sh — hostile files given to sysptd: every command gets exit
# status 6 ("bad or missing incident or input file", README) with a message
# naming the file, never a crash, 1 or 2; values from a file that overflow
# int64 arithmetic are clipped (no gap of INT64_MAX ns, reports still run);
# a trigger planted in an incident does not fire; user SQL cannot leak a
# library pointer or run forever.  Needs the shared fixtures and the sqlite3
# shell (scripts/install-deps.sh); no root.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
FIX=${SPTD_FIXTURES:-}/real-pt
[ -f "$FIX/drpt2trace-hello/pt.bin" ] || { echo "SKIP: no fixtures at $FIX" >&2; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 shell (scripts/install-deps.sh)" >&2; exit 77; }

work=$(mktemp -d /tmp/sptd-badinput-XXXXXX)
# import reads its --image/--maps/--tasks/--sched files as nobody (as root)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# ok, bad, expect STATUS PATTERN -- command...
# shellcheck source=../lib/expect.sh
. "$(dirname "$0")/../lib/expect.sh"
# check WHAT EXPECTED ACTUAL
check() {
	if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', want '$2'"; fi
}
q() { sqlite3 "$1" "$2"; }

# ---- a good incident to damage: raw PT of drpt2trace-hello
expect 0 "calls" -- "$BIN" import --pt "$FIX/drpt2trace-hello/pt.bin" \
	--image "$FIX/drpt2trace-hello/hello" --cpu-id 6/85/4 -o "$work/good.db"
expect 0 "sched slices" -- "$BIN" import "$FIX/hase-loopy/perf.data" \
	--symfs "$FIX/hase-loopy/symfs" -o "$work/loopy.db"
pagesize=$(q "$work/good.db" "PRAGMA page_size")

# garbage PAGE-NUMBER FILE: overwrite one page with a fixed pattern
garbage() {
	yes 'not a b-tree page' | head -c "$pagesize" |
		dd of="$2" bs="$pagesize" seek=$(($1 - 1)) conv=notrunc status=none
}

# root page of TABLE in the good incident
root() { q "$work/good.db" "SELECT rootpage FROM sqlite_schema WHERE name = '$1'"; }

mkdir "$work/trunc" "$work/tablepages" "$work/notinc" "$work/empty" "$work/text" "$work/metapage" \
	"$work/renamed" "$work/format" "$work/autovac" "$work/nomem"
head -c $(($(wc -c <"$work/good.db") / 2)) "$work/good.db" >"$work/trunc/incident-1.db"
# the tables every command reads without an index in between: trigger
# (query, reports, export, list) and raw_pt (decode)
cp "$work/good.db" "$work/tablepages/incident-1.db"
garbage "$(root trigger)" "$work/tablepages/incident-1.db"
garbage "$(root raw_pt)" "$work/tablepages/incident-1.db"
cp "$work/good.db" "$work/metapage/incident-1.db"
garbage "$(root meta)" "$work/metapage/incident-1.db"
sqlite3 "$work/notinc/incident-1.db" "CREATE TABLE t(a); INSERT INTO t VALUES (1)"
# schema format number 9 in the header (SQLite knows 1 to 4)
cp "$work/good.db" "$work/format/incident-1.db"
printf '\011' | dd of="$work/format/incident-1.db" bs=1 seek=47 conv=notrunc status=none
# an auto-vacuum root page far beyond the file (SQLite said "disk full")
cp "$work/good.db" "$work/autovac/incident-1.db"
printf '\244' | dd of="$work/autovac/incident-1.db" bs=1 seek=52 conv=notrunc status=none
# a schema edited by hand: every table there, one column renamed
cp "$work/good.db" "$work/renamed/incident-1.db"
sqlite3 "$work/renamed/incident-1.db" "ALTER TABLE raw_pt RENAME COLUMN cpu TO cpu_renamed"
: >"$work/empty/incident-1.db"
echo "this is not a database" >"$work/text/incident-1.db"
# a file whose schema makes SQLite ask for an impossible allocation: it
# said "out of memory" (fuzz_incident's find)
cp "$(dirname "$0")/../fuzz/corpus/incident/crash-nomem-schema" "$work/nomem/incident-1.db"

# ---- every reader of a corrupt incident: exit 6, the file named
for kind in trunc tablepages metapage notinc empty text renamed format autovac nomem; do
	f=$work/$kind/incident-1.db
	expect 6 "incident-1.db" -- "$BIN" query "$f" "SELECT * FROM trigger"
	expect 6 "incident-1.db" -- "$BIN" query "$f" --report summary
	expect 6 "incident-1.db" -- "$BIN" export "$f" -q -o "$work/$kind.pftrace"
	[ -e "$work/$kind.pftrace" ] && bad "$kind: a failed export left its output"
	expect 6 "incident-1.db" -- "$BIN" export "$f" -q --format json -o "$work/$kind.json"
	expect 6 "incident-1.db" -- "$BIN" list "$work/$kind"
	cp "$f" "$work/before"
	expect 6 "incident-1.db" -- "$BIN" decode "$f"
	if cmp -s "$f" "$work/before"; then ok; else bad "$kind: a failed decode changed the file"; fi
done

# ---- hostile values in a well-formed incident: clipped, never 1 or 2
# planted derived rows: reports that sum them fail as a bad file (6); the
# export clips them
cp "$work/loopy.db" "$work/rows.db"
sqlite3 "$work/rows.db" "
	INSERT INTO gap (ts, dur, cpu, reason) VALUES (9223372036854775000, 9223372036854775807, 0, 'x');
	INSERT INTO gap (ts, dur, cpu, reason) VALUES (-9223372036854775808, 9223372036854775807,
	                                               2147483647, 'x');
	UPDATE slice SET ts = 9223372036854775800, dur = 9223372036854775807 WHERE rowid = 1;"
expect 6 "integer overflow" -- "$BIN" query "$work/rows.db" --report summary
check "a report's overflow: no advice to change its SQL" 0 "$(grep -c 'total()' "$work/err")"
# the user's own SQL failing on those values is the SQL's error (2), and
# the message names the way out
expect 2 "integer overflow (sum() stops.*total()" -- "$BIN" query "$work/rows.db" \
	"SELECT sum(dur) FROM slice"
expect 0 "" -- "$BIN" export "$work/rows.db" -q -o "$work/rows.pftrace"
expect 0 "" -- "$BIN" export "$work/rows.db" -q --format json -o "$work/rows.json"
# hostile raw tables and meta: decode rebuilds sane rows from them
cp "$work/loopy.db" "$work/raw.db"
sqlite3 "$work/raw.db" "
	UPDATE meta SET value = '9000000000000000000' WHERE key = 'window_start';
	UPDATE meta SET value = '-9000000000000000000' WHERE key = 'window_end';
	UPDATE meta SET value = '300' WHERE key = 'tsc_shift';
	UPDATE meta SET value = '-7' WHERE key = 'pt_mtc_freq';
	UPDATE raw_switch SET cpu = 2147483647 WHERE rowid = 1;
	UPDATE raw_switch SET ts = -9223372036854775808 WHERE rowid = 2;
	UPDATE raw_switch SET ts = 9223372036854775807 WHERE rowid = 3;"
expect 0 "decoded" -- "$BIN" decode "$work/raw.db"
check "rows with a negative or overflowing dur after decode" 0 \
	"$(q "$work/raw.db" "SELECT count(*) FROM (SELECT ts, dur FROM sched_slice UNION ALL
	   SELECT ts, dur FROM thread_state UNION ALL SELECT ts, dur FROM gap UNION ALL
	   SELECT ts, dur FROM slice) WHERE dur < 0 OR (ts > 0 AND dur > 9223372036854775807 - ts)")"
check "a skipped switch is a gap" 1 \
	"$(q "$work/raw.db" "SELECT count(*) FROM gap WHERE reason LIKE 'sched: events with a CPU%'")"
check "a PT configuration out of range is a gap" 1 \
	"$(q "$work/raw.db" "SELECT count(*) FROM gap WHERE reason LIKE 'pt: meta % out of range%'")"
# its window (start 9e18, end -9e18) ends before it starts: the reports
# say the file is bad rather than clip to it (rows.db above has the
# wrapped sum)
expect 6 "window ends before it starts" -- "$BIN" query "$work/raw.db" --report summary
expect 0 "" -- "$BIN" export "$work/raw.db" -q -o "$work/raw.pftrace"

# ---- script and export on hostile values (an audit, 2026-11-26): a
# negative depth printed gigabytes of indent; times and windows near the
# int64 ends overflowed (UBSan in the sanitizer run); a thread whose utid is
# -1 was taken for tid 0 (the cache's empty-slot mark)
cp "$work/loopy.db" "$work/scr.db"
sqlite3 "$work/scr.db" "
	UPDATE slice SET depth = -1000000000 WHERE rowid = 1;
	INSERT OR REPLACE INTO meta VALUES ('window_start', '-9000000000000000000');
	INSERT OR REPLACE INTO meta VALUES ('window_end', '9000000000000000000');
	INSERT INTO gap (ts, dur, cpu, reason) VALUES (-9223372036854775808, 1, 0, 'x');
	INSERT INTO gap (ts, dur, cpu, reason) VALUES (9000000000000000000, 1, 0, 'y');
	UPDATE sched_slice SET ts = 9223372036854775807 - dur + 5 WHERE rowid = 1;
	INSERT INTO thread VALUES (-1, 4242, NULL, 'minus_one');
	UPDATE slice SET utid = -1;"
"$BIN" script "$work/scr.db" >"$work/scr.out" 2>&1
check "script exit on hostile values" 0 "$?"
check "script output at most 1 MB with a depth of -1e9" 1 "$([ "$(wc -c <"$work/scr.out")" -lt 1000000 ] && echo 1 || echo 0)"
expect 0 "" -- "$BIN" script "$work/scr.db" --reltime
expect 0 "" -- "$BIN" script "$work/scr.db" --time 10%,90%
expect 0 "" -- "$BIN" script "$work/scr.db" --time 1s,
expect 0 "" -- "$BIN" export "$work/scr.db" -q -o "$work/scr.pftrace"
check "call slices of utid -1 under its own thread" 1 \
	"$("$BIN" script "$work/scr.db" --tid 4242 | grep -q '^ *minus_one  *4242 ' && echo 1 || echo 0)"

# names that are not UTF-8: the JSON export is still JSON (U+FFFD), the
# protobuf one's strings still UTF-8
cp "$work/loopy.db" "$work/utf.db"
sqlite3 "$work/utf.db" "UPDATE thread SET name = CAST(x'c3' AS TEXT) || 'ab';
	UPDATE symbol SET name = CAST(x'80ff' AS TEXT)"
expect 0 "" -- "$BIN" export "$work/utf.db" -q --format json -o "$work/utf.json"
check "JSON export of non-UTF-8 names parses" ok \
	"$(python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8")); print("ok")' "$work/utf.json" 2>&1 | tail -1)"
expect 0 "" -- "$BIN" export "$work/utf.db" -q -o "$work/utf.pftrace"
proto=$(dirname "$0")/../perfetto/sysptd_trace.proto
if command -v protoc >/dev/null 2>&1 && [ -f "$proto" ]; then
	protoc --decode=perfetto.protos.Trace -I "$(dirname "$proto")" "$proto" <"$work/utf.pftrace" \
		>"$work/utf.txt" 2>"$work/utf.err"
	check "protoc on non-UTF-8 names" "0 0" "$? $(grep -ci 'utf-8' "$work/utf.err")"
	# protoc prints the bytes of U+FFFD as octal escapes
	check "the name with U+FFFD" 1 "$(grep -qF '"\357\277\275ab"' "$work/utf.txt" && echo 1 || echo 0)"
fi

# text of a file that reaches a terminal: no control character of it
# (a forged line, an escape sequence) in list, report notes, errors
mkdir "$work/ctl"
cp "$work/loopy.db" "$work/ctl/incident-1.db"
sqlite3 "$work/ctl/incident-1.db" "
	INSERT INTO trigger (ts, cpu, kind, detail) VALUES (1, 0, 'irq',
		'eth0' || char(10) || 'incident-FAKE.db  forged' || char(27) || '[2J');
	INSERT OR REPLACE INTO meta VALUES ('source', 'pt)' || char(10) || '== forged ==' || char(27) || '[8m')"
cp "$work/loopy.db" "$work/ctlver.db"
sqlite3 "$work/ctlver.db" "UPDATE meta SET value = '4' || char(10) || 'forged' || char(27) || '[2K'
	WHERE key = 'schema_version'"
esc=$(printf '\033')
"$BIN" list "$work/ctl" >"$work/ctl.out" 2>&1
check "list: lines, escapes" "2 0" "$(wc -l <"$work/ctl.out") $(grep -c "$esc" "$work/ctl.out")"
"$BIN" query "$work/ctl/incident-1.db" --report top >"$work/ctl.out" 2>&1
check "report notes: forged lines, escapes" "0 0" \
	"$(grep -c '^== forged' "$work/ctl.out") $(grep -c "$esc" "$work/ctl.out")"
"$BIN" query "$work/ctlver.db" "SELECT 1" >"$work/ctl.out" 2>&1
check "error message: lines, escapes" "1 0" "$(wc -l <"$work/ctl.out") $(grep -c "$esc" "$work/ctl.out")"

# a file's name as given, with an escape sequence and a new line in it:
# list's "unreadable" reason and the report's heading printed it raw
nl='
'
mkdir "$work/escl"
echo junk >"$work/escl/evil${esc}]0;PWNED${esc}[31m${nl}fake line.db"
"$BIN" list "$work/escl" >"$work/ctl.out" 2>&1
check "list: an unreadable file's reason (a header, a line)" "2 0" "$(wc -l <"$work/ctl.out") $(grep -c "$esc" "$work/ctl.out")"
cp "$work/loopy.db" "$work/escl/inc${esc}[2J.db"
"$BIN" query "$work/loopy.db" "$work/escl/inc${esc}[2J.db" --report summary >"$work/ctl.out" 2>&1
check "report headings of two incidents" "0 2" \
	"$(grep -c "$esc" "$work/ctl.out") $(grep -c '^=== ' "$work/ctl.out")"
"$BIN" query "$work/escl/evil${esc}]0;PWNED${esc}[31m${nl}fake line.db" "SELECT 1" >"$work/ctl.out" 2>&1
check "error naming a file: lines, escapes" "1 0" "$(wc -l <"$work/ctl.out") $(grep -c "$esc" "$work/ctl.out")"

# a file planted in the current directory under the name of the SQL
# ("select count(*) from thread") was queried instead of the SQL run
cp "$work/loopy.db" "$work/select count(*) from thread"
(cd "$work" && "$BIN" query "$work/loopy.db" "select count(*) from thread" --format csv) \
	>"$work/out" 2>&1
check "SQL whose text names a file here" "0 21" "$? $(tail -n 1 "$work/out")"

# a NUL byte inside a file's text cut every name a reader printed or
# exported at it: "loopy\0HIDDEN" showed as "loopy", the rest hidden.
# query prints every byte (escaped), the others show the NUL as '?'
cp "$work/loopy.db" "$work/nul.db"
sqlite3 "$work/nul.db" "UPDATE thread SET name = 'loopy' || char(0) || 'HIDDEN' WHERE name = 'loopy';
	UPDATE symbol SET name = name || char(0) || 'SYMHIDE' WHERE id IN (SELECT symbol_id FROM slice)"
"$BIN" query "$work/nul.db" "SELECT name FROM thread WHERE name LIKE 'loopy%'" >"$work/out" 2>&1
check "query table: a name with a NUL" "0 1" "$? $(grep -c 'loopy\\x00HIDDEN' "$work/out")"
"$BIN" query "$work/nul.db" --format json "SELECT name FROM thread WHERE name LIKE 'loopy%'" >"$work/out" 2>&1
check "query json: a name with a NUL" "0 1" "$? $(grep -c 'loopy\\u0000HIDDEN' "$work/out")"
"$BIN" script "$work/nul.db" >"$work/out" 2>&1
check "script: comms and symbols with a NUL" "0 0 0" "$? $(grep -c 'loopy ' "$work/out") \
$(grep -c ': \[syscall\] (' "$work/out")"
check "script: the whole names shown" "yes yes" "$(grep -q 'loopy?HIDDEN' "$work/out" && echo yes) \
$(grep -q 'syscall]?SYMHIDE' "$work/out" && echo yes)"
"$BIN" export "$work/nul.db" -q -o "$work/nul.json" >"$work/out" 2>&1
check "export json: a thread and calls named whole" "0 yes yes" "$? \
$(grep -q '"loopy?HIDDEN"' "$work/nul.json" && echo yes) \
$(grep -q 'syscall]?SYMHIDE' "$work/nul.json" && echo yes)"

# a table made again without its INTEGER PRIMARY KEY (same columns) can
# hold an id twice: duplicate threads counted every slice twice in the
# reports, duplicate callsites made export's stack walk branch at every
# frame and never end
cp "$work/loopy.db" "$work/dupkey.db"
sqlite3 "$work/dupkey.db" "ALTER TABLE thread RENAME TO t_old;
	CREATE TABLE thread (utid INT, tid INT, upid INT NULL, name TEXT);
	INSERT INTO thread SELECT * FROM t_old; INSERT INTO thread SELECT * FROM t_old;
	DROP TABLE t_old"
expect 6 "table thread does not have utid as its INTEGER PRIMARY KEY" -- \
	"$BIN" query "$work/dupkey.db" --report summary
cp "$work/loopy.db" "$work/dupcs.db"
sqlite3 "$work/dupcs.db" "ALTER TABLE callsite RENAME TO c_old;
	CREATE TABLE callsite (id INT, parent_id INT NULL, depth INT, symbol_id INT NULL, addr INT);
	WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 60)
	INSERT INTO callsite SELECT i, CASE WHEN i > 1 THEN i - 1 END, i - 1, NULL, i FROM k
	UNION ALL SELECT i, CASE WHEN i > 1 THEN i - 1 END, i - 1, NULL, i FROM k;
	DROP TABLE c_old;
	INSERT INTO sample (ts, cpu, utid, callsite_id) SELECT ts, cpu, utid, 60 FROM sched_slice LIMIT 3"
expect 6 "table callsite does not have id" -- timeout 60 "$BIN" export "$work/dupcs.db" -q \
	-o "$work/dupcs.pftrace"

# a REAL duration beyond int64 was cast (undefined) and printed negative
cp "$work/ctl/incident-1.db" "$work/realdur.db"
sqlite3 "$work/realdur.db" "INSERT INTO irq_slice (ts, dur, cpu, irq, name, ret, flags)
	VALUES (1000, 1.5e19, 0, 24, 'eth0', 1, 0)"
"$BIN" query "$work/realdur.db" --report irq >"$work/out" 2>&1
check "--report irq of a 1.5e19 ns REAL dur: exit, negative durations" "0 0" \
	"$? $(grep -c -- '-9223372036' "$work/out")"

# a window that ends before it starts: every thread came out at 0 %, said
# as if true
cp "$work/loopy.db" "$work/badwin.db"
sqlite3 "$work/badwin.db" "INSERT OR REPLACE INTO meta VALUES ('window_start', '20000000');
	INSERT OR REPLACE INTO meta VALUES ('window_end', '1000')"
expect 6 "window ends before it starts" -- "$BIN" query "$work/badwin.db" --report threads

# callsites that loop (A -> B -> A): each stack ends where a caller is not
# shallower than its callee (before: 1024 frames per sample, hundreds of
# MB of script and JSON from a small file)
cp "$work/loopy.db" "$work/cycle.db"
sqlite3 "$work/cycle.db" "INSERT INTO callsite (id, parent_id, depth, symbol_id, addr) VALUES
	(900001, 900002, 1, NULL, 4096), (900002, 900001, 0, NULL, 8192);
	INSERT INTO sample (ts, cpu, utid, callsite_id) SELECT ts, cpu, utid, 900001 FROM sched_slice LIMIT 5"
"$BIN" script "$work/cycle.db" -e sample >"$work/out" 2>&1
check "script of 5 samples on a callsite loop: exit, frame lines" "0 10" \
	"$? $(grep -c '^	  *[0-9a-f]* ' "$work/out")"
expect 0 "" -- "$BIN" export "$work/cycle.db" -q --format json -o "$work/cycle.json"
check "JSON export of a callsite loop under 1 MB" 1 \
	"$([ "$(wc -c <"$work/cycle.json")" -lt 1000000 ] && echo 1 || echo 0)"

# a chain of 20,000 callsites, each one a blocked row's: --report offcpu
# walked every stack before keeping the heaviest 30 (200 million frames,
# 1.4 GB, minutes); now only those 30, 1024 frames at most, marked "..."
cp "$work/loopy.db" "$work/chain.db"
sqlite3 "$work/chain.db" "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 20000)
	INSERT INTO callsite (id, parent_id, depth, symbol_id, addr)
	SELECT 800000 + i, CASE WHEN i > 1 THEN 800000 + i - 1 END, i - 1, NULL, i FROM k;
	WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 20000)
	INSERT INTO thread_state (ts, dur, utid, state, cpu, waker_utid, flags, callsite_id,
	  blocked_function) SELECT i * 100000, i, 0, 'S', NULL, NULL, 0, 800000 + i, 'f' FROM k"
timeout 60 "$BIN" query "$work/chain.db" --report offcpu --format csv >"$work/out" 2>&1
check "--report offcpu of a 20,000-deep callsite chain: exit, cut stacks of 1024 frames" \
	"0 30 30" "$? $(grep -c '^loopy.*,\.\.\.;' "$work/out") $(awk -F, '/\.\.\.;/ {
		if (split($4, a, ";") == 1025) n++ } END { print n + 0 }' "$work/out")"

# the same chain, each callsite a sample's leaf: --report top walked every
# leaf's stack in SQL (20,000 x 1,024 frames: 36 s); now in C, the same
# answer (one function, [unknown], on every sample's stack)
sqlite3 "$work/chain.db" "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 20000)
	INSERT INTO sample (ts, cpu, utid, callsite_id) SELECT i * 1000, 0, 0, 800000 + i FROM k"
timeout 60 "$BIN" query "$work/chain.db" --report top --format csv >"$work/out" 2>&1
check "--report top of a 20,000-deep callsite chain: exit, every sample under [unknown]" \
	"0 20000" "$? $(awk -F, '$1 == "[unknown]" && $2 == "[unknown]" { print $5 }' "$work/out")"

# stack totals against the recursive SQL they replaced, on a forest of
# 3,000 callsites with roots, cycles, parents that are no callsite, samples
# of callsites that do not exist, symbols, no symbol and "[unknown]" ones,
# and text with a quote where a symbol id belongs (the totals reach the
# report's SQL as literals): the report's rows equal the SQL's, row for row
cp "$work/loopy.db" "$work/forest.db"
sqlite3 "$work/forest.db" "DELETE FROM sample; DELETE FROM callsite; DELETE FROM slice;
	INSERT INTO symbol (id, name, dso_id, addr, size) VALUES (990001, '[unknown]', 1, 0, 0),
	  (990002, '[unknown]', 2, 0, 0);
	WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 29)
	INSERT INTO symbol (id, name, dso_id, addr, size) SELECT 991000 + i, 'f' || i, 1,
	  4096 * i, 64 FROM k;
	WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 3000),
	  r(i, h) AS (SELECT i, (i * 2654435761 + 12345) % 1000003 FROM k),
	  syms(rn, id) AS (SELECT id - 991000, id FROM symbol WHERE id BETWEEN 991000 AND 991029)
	INSERT INTO callsite (id, parent_id, depth, symbol_id, addr) SELECT i,
	  CASE WHEN h % 20 = 0 THEN NULL WHEN h % 20 = 1 THEN 900000 + h % 50
	    WHEN h % 20 = 2 THEN i + h % 7 WHEN i > 1 THEN 1 + h % (i - 1) END, 0,
	  CASE WHEN h % 10 = 3 THEN NULL WHEN h % 10 = 4 THEN 990001 + h % 2
	    ELSE (SELECT id FROM syms WHERE rn = h % 30) END, i FROM r;
	WITH RECURSIVE k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 6000)
	INSERT INTO sample (ts, cpu, utid, callsite_id) SELECT j * 1000, 0, 0,
	  CASE WHEN j % 97 = 0 THEN 950000 + j % 10 ELSE 1 + (j * 7919) % 3000 END FROM k;
	UPDATE callsite SET symbol_id = 'x''); DROP TABLE sample; --' WHERE id % 211 = 0"
timeout 60 "$BIN" query "$work/forest.db" --report top --format csv 2>&1 |
	awk 'NR > 2 && /^$/ { exit } NR > 2' >"$work/top.csv"
sqlite3 -csv "$work/forest.db" "WITH RECURSIVE
	leaf AS (SELECT callsite_id AS cs, count(*) AS n FROM sample
	  WHERE callsite_id IS NOT NULL GROUP BY callsite_id),
	fr(leaf, cs, k) AS (SELECT cs, cs, 0 FROM leaf UNION ALL
	  SELECT fr.leaf, c.parent_id, fr.k + 1 FROM fr JOIN callsite c ON c.id = fr.cs
	  WHERE c.parent_id IS NOT NULL AND fr.k < 1024),
	fn AS (SELECT c.id AS cs, CASE WHEN c.symbol_id IS NULL THEN 'u'
	  WHEN y.name = '[unknown]' THEN 'u' || y.dso_id ELSE 's' || c.symbol_id END AS fkey,
	  c.symbol_id, y.dso_id FROM callsite c LEFT JOIN symbol y ON y.id = c.symbol_id),
	lf AS (SELECT DISTINCT fr.leaf, fn.fkey FROM fr JOIN fn ON fn.cs = fr.cs),
	tot AS (SELECT lf.fkey, sum(leaf.n) AS total FROM lf JOIN leaf ON leaf.cs = lf.leaf
	  GROUP BY lf.fkey),
	slf AS (SELECT fn.fkey, sum(leaf.n) AS self FROM leaf JOIN fn ON fn.cs = leaf.cs
	  GROUP BY fn.fkey),
	info AS (SELECT fkey, min(symbol_id) AS symbol_id, min(dso_id) AS dso_id FROM fn
	  GROUP BY fkey),
	n AS (SELECT count(*) AS n FROM sample)
	SELECT CASE WHEN info.fkey LIKE 'u%' THEN '[unknown]' ELSE sym.name END AS function,
	  coalesce(d.path, '[unknown]') AS dso, coalesce(slf.self, 0) AS self,
	  round(100.0 * coalesce(slf.self, 0) / n.n, 2) AS self_pct, tot.total AS total,
	  round(100.0 * tot.total / n.n, 2) AS total_pct
	FROM tot JOIN info ON info.fkey = tot.fkey CROSS JOIN n
	LEFT JOIN slf ON slf.fkey = tot.fkey LEFT JOIN symbol sym ON sym.id = info.symbol_id
	LEFT JOIN dso d ON d.id = info.dso_id
	ORDER BY self DESC, total DESC, function, dso LIMIT 20" >"$work/oracle.csv"
check "--report top totals equal the recursive SQL's on a crafted forest" \
	"20 same" "$(wc -l <"$work/oracle.csv" | tr -d ' ') $(cmp -s "$work/top.csv" "$work/oracle.csv" &&
	echo same || { diff "$work/top.csv" "$work/oracle.csv" | head -5; echo differ; })"

# a thread whose utid is 2^56 shared the Perfetto track of utid 0 (a
# track's uuid keeps 56 bits of it): trace_processor put loopy's calls
# under the planted thread's name ("track_descriptor_conflicting_reservation")
cp "$work/loopy.db" "$work/uuid.db"
sqlite3 "$work/uuid.db" "INSERT INTO thread (utid, tid, upid, name)
	VALUES (72057594037927936, 4242, NULL, 'impostor');
	INSERT INTO slice (id, ts, dur, cpu, utid, depth, parent_id, symbol_id, kind, flags)
	SELECT id + 1000000, ts, dur, cpu, 72057594037927936, depth, NULL, symbol_id, kind, flags
	FROM slice WHERE utid = 0 LIMIT 1"
expect 6 "thread utid 72057594037927936 is out of range" -- \
	"$BIN" export "$work/uuid.db" -q -o "$work/uuid.pftrace"
cp "$work/loopy.db" "$work/uuidcpu.db"
sqlite3 "$work/uuidcpu.db" "INSERT INTO gap (ts, dur, cpu, reason) VALUES (1, 1, 72057594037927935, 'x')"
expect 6 "gap cpu 72057594037927935 is out of range" -- \
	"$BIN" export "$work/uuidcpu.db" -q -o "$work/uuidcpu.pftrace"

# a file whose indexes were dropped makes export's and script's lookups
# quadratic (45 s and 106 s here for 20,000 rows each): --timeout stops
# them, exit 1, the limit named, no half-written export left
cp "$work/loopy.db" "$work/slow.db"
sqlite3 "$work/slow.db" "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
	INSERT INTO sched_slice (ts, dur, cpu, utid, end_state, priority, flags)
	SELECT 20000000 + i * 10, 5, i % 2, 1 + i % 3, 'S', 120, 0 FROM c;
	WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
	INSERT INTO thread_state (ts, dur, utid, state, cpu, waker_utid, flags)
	SELECT 20000000 + i * 10 + 4, 1, 1 + i % 3, 'R', i % 2, 1 + (i + 1) % 3, 0 FROM c;
	WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
	INSERT INTO irq_slice (ts, dur, cpu, irq, name, ret, flags)
	SELECT 20000000 + i * 10 + 2, 1, i % 2, 24, 'eth0', 1, 0 FROM c;
	DROP INDEX sched_slice_utid; DROP INDEX sched_slice_cpu_ts"
expect 1 "stopped after the time limit of 1 s" -- \
	timeout 60 "$BIN" export "$work/slow.db" -q --timeout 1s -o "$work/slow.pftrace"
check "no export left by a stopped export" 0 "$(ls "$work" | grep -c '^slow\.pftrace')"
expect 1 "stopped after the time limit of 1 s" -- \
	timeout 60 "$BIN" script "$work/slow.db" --timeout 1s

# ---- a trigger planted in an incident does not fire when decode writes
cp "$work/good.db" "$work/trigger.db"
sqlite3 "$work/trigger.db" "CREATE TRIGGER planted AFTER INSERT ON slice
	BEGIN INSERT OR REPLACE INTO meta VALUES ('planted', 'fired'); END;"
expect 0 "decoded" -- "$BIN" decode "$work/trigger.db"
check "planted trigger fired" 0 "$(q "$work/trigger.db" "SELECT count(*) FROM meta WHERE key = 'planted'")"
check "decode still wrote slices" 3 "$(q "$work/trigger.db" "SELECT count(*) FROM slice")"

# ---- raw PT with damaged bytes: gaps, never a gap of INT64_MAX ns
cp "$FIX/libxdc-unzip/trace.pt" "$work/bad.pt"
for off in 700 2900 5100 8000 11000 14000; do
	printf '\377\001\377' | dd of="$work/bad.pt" bs=1 seek=$off conv=notrunc status=none
done
expect 0 "decode_errors" -- "$BIN" import --pt "$work/bad.pt" \
	--image "$FIX/libxdc-unzip/flat_400000.img@0x400000" -o "$work/badpt.db"
check "decode errors recorded as gaps" 1 \
	"$(q "$work/badpt.db" "SELECT count(*) > 0 FROM gap WHERE reason LIKE 'pt: %'")"
check "gaps of INT64_MAX ns or negative" 0 \
	"$(q "$work/badpt.db" "SELECT count(*) FROM gap WHERE dur < 0 OR dur >= 9223372036854775807")"
expect 0 "rows per table" -- "$BIN" query "$work/badpt.db" --report summary

# ---- corrupt input files for import: exit 6, not 2
printf 'PERFILE2 but then nothing' >"$work/short.data"
expect 6 "header is truncated" -- "$BIN" import "$work/short.data" -o "$work/short.db"
head -c 20000 "$FIX/hase-loopy/perf.data" >"$work/cut.data"
expect 6 "truncated" -- "$BIN" import "$work/cut.data" -o "$work/cut.db"
[ -e "$work/cut.db" ] && bad "a failed import left its output"
echo "1000 0 1 2 a" >"$work/sched.txt"
echo "what is this" >>"$work/sched.txt"
expect 6 "want TS_NS CPU" -- "$BIN" import --pt "$FIX/drpt2trace-hello/pt.bin" \
	--image "$FIX/drpt2trace-hello/hello" --sched "$work/sched.txt" -o "$work/sched.db"
expect 2 "bad address" -- "$BIN" import --pt "$FIX/drpt2trace-hello/pt.bin" \
	--image "$FIX/drpt2trace-hello/hello@nowhere" -o "$work/spec.db"
# images that cannot be one exited 2 or 1, mostly without a word: a
# PT_LOAD past 2^64, a FIFO, a device, an empty file (exit 6, said)
python3 -c 'import struct, sys
eh = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 64, 0, 0, 64, 56, 1, 64, 0, 0)
ph = struct.pack("<IIQQQQQQ", 1, 5, 0, 0xffffffffffff0000, 0xffffffffffff0000, 0x100, 0x20000, 0x1000)
open(sys.argv[1], "wb").write(eh + ph + bytes(0x100))' "$work/wrap.elf"
mkfifo "$work/fifo"
: >"$work/emptyimg"
for img in "wrap.elf|ends past the top of the address space" "fifo@0x1000|not a regular file" \
	"emptyimg@0x1000|the file is empty"; do
	expect 6 "${img#*|}" -- "$BIN" import --pt "$FIX/drpt2trace-hello/pt.bin" \
		--image "$work/${img%%|*}" --cpu-id 6/85/4 -o "$work/img.db"
done
expect 6 "/dev/zero: not a regular file" -- "$BIN" import --pt "$FIX/drpt2trace-hello/pt.bin" \
	--image /dev/zero@0x1000 --cpu-id 6/85/4 -o "$work/img.db"

# ---- user SQL: no heap bytes, no pointer, no extension, no endless query
"$BIN" query "$work/good.db" "SELECT '' AS e, 'x' AS f" >"$work/out" 2>&1
check "empty cell" "$(printf ' e | f\n---+---\n   | x\n(1 row)')" "$(cat "$work/out")"
check "fts3_tokenizer hidden" "1" \
	"$("$BIN" query "$work/good.db" --format csv "SELECT fts3_tokenizer('simple') IS NULL" | tail -1)"
expect 2 "not authorized" -- "$BIN" query "$work/good.db" "SELECT load_extension('libc.so.6')"
start=$(date +%s)
expect 1 "time limit" -- "$BIN" query "$work/good.db" --timeout 1s \
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
took=$(($(date +%s) - start))
if [ "$took" -le 10 ]; then ok; else bad "--timeout 1s took $took s"; fi
expect 2 "bad duration 'soon' for --timeout: give a number and its unit" -- "$BIN" query "$work/good.db" --timeout soon "SELECT 1"
expect 0 "1000" -- "$BIN" query "$work/good.db" --timeout 0 \
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) SELECT max(x) FROM c"

# the limit is each statement's, not the session's: a statement typed 2 s
# after the file was opened still has its own 1 s (before, the clock ran
# from the open, and an interactive shell stopped working after it)
(sleep 2; echo "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
	SELECT max(x) FROM c;") | "$BIN" query "$work/good.db" - --timeout 1s --format csv >"$work/out" 2>&1
check "a statement 2 s after the open, --timeout 1s" "0 100000" "$? $(tail -n 1 "$work/out")"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
