#!/bin/sh
# test_flame.sh — `sysptd flamegraph` and `sysptd diff` (issue 31 items 2
# and 4) at the command line: exact folded stacks of the synthetic
# incidents of sptd_make_incident (samples and PT call time), the
# filters, the SVG well-formed, the diff's ranking and signs, crafted
# incidents (a chain of 20,000 callsites each a sample's leaf, a loop of
# parent links, a symbol of a megabyte) bounded or refused with exit 6,
# and, as root with tracefs, an incident recorded now at 10 kHz whose
# folded counts add up to its samples and whose off-CPU weights add up to
# its blocked time (the time each takes is printed, never asserted).
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
MAKE=${SPTD_MAKE_INCIDENT:?SPTD_MAKE_INCIDENT must name sptd_make_incident}

work=$(mktemp -d /tmp/sptd-flame-XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../lib/expect.sh"

command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 to craft incidents"; exit 77; }
"$MAKE" "$work/s.db" sample && "$MAKE" "$work/p.db" pt || { echo "cannot make incidents" >&2; exit 1; }
chmod 644 "$work/s.db" "$work/p.db"

# sum of the last field of folded lines
fsum() { awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ---- folded stacks of samples: exact, and adding up to the samples
expect 0 "" -- "$BIN" flamegraph "$work/s.db" --format folded
cat >"$work/want" <<'EOF'
server;main;handle;parse 3
worker;main 1
worker;main;[unknown] 1
worker;main;handle 2
worker;main;handle;parse;handle 1
EOF
cmp -s "$work/out" "$work/want" && ok || { bad "folded samples differ:"; diff "$work/want" "$work/out" >&2; }
[ "$(fsum "$work/out")" = "$(q "$work/s.db" "SELECT count(*) FROM sample")" ] && ok ||
	bad "folded counts $(fsum "$work/out") are not the incident's samples"
expect 0 "" -- "$BIN" flamegraph "$work/s.db" -f folded --tid 100
[ "$(cat "$work/out")" = "server;main;handle;parse 3" ] && ok || bad "--tid 100: $(cat "$work/out")"
expect 0 "" -- "$BIN" flamegraph "$work/s.db" -f folded --reltime --time 4.5ms,
[ "$(fsum "$work/out")" = "$(q "$work/s.db" "SELECT count(*) FROM sample WHERE ts >= (SELECT value FROM meta WHERE key = 'window_start') + 4500000")" ] &&
	ok || bad "--time 4.5ms,: $(fsum "$work/out") samples"
expect 1 "no samples left after --tid" -- "$BIN" flamegraph "$work/s.db" --cpu 3

# ---- PT call time: each function's own time, adding up to the calls' time
expect 0 "" -- "$BIN" flamegraph "$work/p.db" -f folded
cat >"$work/want" <<'EOF'
server;main 300000
server;main;handle 300000
server;main;handle;parse 200000
server;main;handle;parse;handle 100000
server;main;parse 100000
EOF
cmp -s "$work/out" "$work/want" && ok || { bad "folded PT time differs:"; diff "$work/want" "$work/out" >&2; }
[ "$(fsum "$work/out")" = "$(q "$work/p.db" "SELECT sum(dur) FROM slice WHERE parent_id IS NULL")" ] &&
	ok || bad "PT self times do not add up to the outermost calls' time"
expect 0 "" -- "$BIN" flamegraph "$work/p.db" -f folded --cpu "$(q "$work/p.db" "SELECT min(cpu) FROM slice")"
[ "$(fsum "$work/out")" -gt 0 ] && ok || bad "PT with --cpu: nothing"
expect 1 "no samples in this incident (a PT incident: --pt" -- "$BIN" flamegraph "$work/p.db" --samples -f folded
expect 1 "no off-CPU stacks" -- "$BIN" flamegraph "$work/s.db" --offcpu -f folded

# ---- the SVG: well-formed, each frame named, written with -o as private as the incident
chmod 600 "$work/s.db"
expect 0 "" -- "$BIN" flamegraph "$work/s.db" -o "$work/s.svg"
python3 - "$work/s.svg" <<'EOF' && ok || bad "the SVG is not what it should be"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
frames = {g.get("data-n") for g in root.iter(ns + "g") if g.get("class") == "f"}
assert frames == {"all", "server", "worker", "main", "handle", "parse", "[unknown]"}, frames
assert root.find(ns + "script") is not None
EOF
[ "$(stat -c %a "$work/s.svg")" = 600 ] && ok || bad "the SVG is $(stat -c %a "$work/s.svg"), not 600"
chmod 644 "$work/s.db"
expect 0 "" -- "$BIN" flamegraph --diff "$work/s.db" "$work/s.db" -o "$work/d.svg"
grep -q "A 3 samples, 37.50%; B 3 samples, 37.50%; +0.00 points" "$work/d.svg" && ok || bad "--diff A A tooltips"
expect 2 "which incidents?" -- "$BIN" flamegraph --diff "$work/s.db"
expect 2 "bad -f 'png'" -- "$BIN" flamegraph "$work/s.db" -f png
expect 6 "missing.db" -- "$BIN" flamegraph "$work/missing.db"

# ---- diff: B has only the server's samples
cp "$work/s.db" "$work/b.db"
sqlite3 "$work/b.db" "DELETE FROM sample WHERE utid = 2; UPDATE sched_slice SET dur = dur * 2 WHERE utid = 1"
expect 0 "" -- "$BIN" diff "$work/s.db" "$work/b.db" -f csv
grep -q '^parse,37.5000,100.0000,62.5000,50.0000,100.0000,50.0000$' "$work/out" && ok ||
	bad "diff: parse's row: $(grep '^parse,' "$work/out")"
grep -q '^\[unknown\],12.5000,0.0000,-12.5000,' "$work/out" && ok || bad "diff: [unknown]'s row"
# functions ranked by the largest change: parse (+62.5 points self) first
[ "$(sed -n '/^# functions/,/^$/p' "$work/out" | sed -n 3p | cut -d, -f1)" = parse ] && ok ||
	bad "diff: not ranked by the change"
a_srv=$(q "$work/s.db" "SELECT sum(dur) FROM sched_slice WHERE utid = 1")
grep -q "^server,$a_srv,$((a_srv * 2)),$a_srv,1,1$" "$work/out" && ok || bad "diff: server's CPU time row"
expect 0 "+50.00%" -- "$BIN" diff "$work/s.db" "$work/b.db"
expect 0 "" -- "$BIN" diff "$work/s.db" "$work/s.db" -- "$work/b.db" -f json
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert set(d) == {"functions", "threads", "irqs", "wakeups"}' \
	"$work/out" && ok || bad "diff --format json is not one JSON object of four sections"
expect 2 "which incidents?" -- "$BIN" diff "$work/s.db"

# ---- crafted incidents: bounded or refused, never a hang
# a chain of 20,000 callsites, each a sample's leaf (each walk cut at 1,024)
cp "$work/s.db" "$work/chain.db"
sqlite3 "$work/chain.db" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
  INSERT INTO callsite (id, parent_id, depth, symbol_id, addr) SELECT 1000 + i, CASE WHEN i > 1 THEN 999 + i END, i - 1, 1, i FROM n;
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
  INSERT INTO sample (ts, cpu, utid, callsite_id) SELECT 1000000 + i, 0, 1, 1000 + i FROM n"
t0=$(now_ms)
timeout 60 "$BIN" flamegraph "$work/chain.db" -f folded >"$work/chain.out" 2>"$work/chain.err"
rc=$?
echo "chain of 20,000 leaves: exit $rc in $(($(now_ms) - t0)) ms, $(wc -c <"$work/chain.out") bytes"
{ [ "$rc" = 6 ] && grep -q "more distinct stacks than a flame graph may hold" "$work/chain.err"; } ||
	{ [ "$rc" = 0 ] && [ "$(wc -c <"$work/chain.out")" -lt 1100000000 ]; } && ok ||
	bad "chain: exit $rc: $(head -c 300 "$work/chain.err")"
# a loop of parent links (depth that does not fall) and a symbol of a megabyte
cp "$work/s.db" "$work/loop.db"
sqlite3 "$work/loop.db" "INSERT INTO callsite VALUES (900, 901, 5, 2, 1), (901, 900, 5, 3, 2);
  INSERT INTO symbol (id, name, dso_id, addr, size) VALUES (50, printf('%.*c', 1000000, 'x') || ';evil' || char(10) || 'forged 99', 1, 0, 0);
  INSERT INTO callsite VALUES (902, 1, 1, 50, 3);
  INSERT INTO sample (ts, cpu, utid, callsite_id) VALUES (2000000, 0, 1, 900), (2000001, 0, 1, 902)"
timeout 60 "$BIN" flamegraph "$work/loop.db" -f folded >"$work/loop.out" 2>"$work/loop.err"
rc=$?
[ "$rc" = 0 ] && grep -q '^server;\[stack cut\];handle 1$' "$work/loop.out" && ok ||
	bad "loop: exit $rc, $(head -c 300 "$work/loop.err") $(grep -c '' "$work/loop.out") lines"
[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$work/loop.out")" -lt 1100 ] && ok ||
	bad "a megabyte symbol was not cut"
[ "$(grep -c '' "$work/loop.out")" = 7 ] && [ "$(fsum "$work/loop.out")" = 10 ] && ok ||
	bad "a name with a newline forged a line: $(grep -c '' "$work/loop.out") lines"
timeout 60 "$BIN" flamegraph "$work/loop.db" -o "$work/loop.svg" 2>"$work/loop.err" &&
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$work/loop.svg" && ok ||
	bad "loop: the SVG is not well-formed"

# ---- an incident recorded now: 10 kHz, two busy CPUs, --offcpu (root and tracefs)
if [ "$(id -u)" != 0 ] || [ ! -d /sys/kernel/tracing/instances ]; then
	skipped="$skipped recording"
else
	busy='end=$(($(date +%s%N) + 1500000000)); while [ "$(date +%s%N)" -lt "$end" ]; do :; done'
	mkdir -m 700 "$work/rec"
	"$BIN" record --name sptdflame --freq 10000 --offcpu --window 1s -o "$work/rec" -- \
		sh -c "sh -c '$busy' & sh -c '$busy'; wait" </dev/null >"$work/rec.out" 2>"$work/rec.err"
	inc=$(find "$work/rec" -name 'incident-*.db' | head -n 1)
	if [ -z "$inc" ]; then
		bad "record: no incident: $(tail -n 5 "$work/rec.err")"
	else
		t0=$(now_ms)
		"$BIN" flamegraph "$inc" -f folded >"$work/rec.folded" 2>"$work/err" && ok || bad "folded: $(cat "$work/err")"
		t1=$(now_ms)
		"$BIN" flamegraph "$inc" -o "$work/rec.svg" 2>"$work/err" && ok || bad "svg: $(cat "$work/err")"
		t2=$(now_ms)
		n=$(q "$inc" "SELECT count(*) FROM sample")
		echo "recorded: $n samples, $(grep -c '' "$work/rec.folded") stacks; folded in $((t1 - t0)) ms, SVG in $((t2 - t1)) ms ($(wc -c <"$work/rec.svg") bytes)"
		[ "$n" -gt 1000 ] && [ "$(fsum "$work/rec.folded")" = "$n" ] && ok ||
			bad "recorded: folded counts $(fsum "$work/rec.folded") are not the $n samples"
		"$BIN" flamegraph "$inc" --offcpu -f folded >"$work/rec.off" 2>"$work/err" && ok || bad "offcpu: $(cat "$work/err")"
		blocked=$(q "$inc" "SELECT coalesce(sum(max(dur, 0)), 0) FROM thread_state WHERE callsite_id IS NOT NULL AND coalesce(state, '') NOT IN ('Z', 'X')")
		[ "$(fsum "$work/rec.off")" = "$blocked" ] && ok ||
			bad "offcpu: $(fsum "$work/rec.off") ns, the incident's blocked rows $blocked"
		"$BIN" diff "$work/s.db" "$inc" >"$work/out" 2>"$work/err" && grep -q "== wakeups" "$work/out" && ok ||
			bad "diff with the recorded incident: $(cat "$work/err")"
	fi
fi
finish
