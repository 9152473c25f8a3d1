#!/bin/bash
# bench-export-wakings.sh BUILD [N] [ROUNDS] — `sysptd export` of an
# incident with N sched slices and N wakeups (default 20000) over three
# threads, each woken by another: the wakeup rows look up where their
# waker ran.  Times BUILD's sysptd and, with SPTD_BENCH_SYSPTD set, another
# (an older build) on the same file, alternating; medians of ROUNDS
# (default 3).  The file is made from sptd_make_incident's sample incident
# with sqlite3 (scripts/install-deps.sh installs it), once per run: it has
# the indexes of BUILD's schema.  Tests never assert timings; this prints
# them.
set -u
BUILD=${1:?usage: bench-export-wakings.sh BUILD [N] [ROUNDS]}
N=${2:-20000}
ROUNDS=${3:-3}
OTHER=${SPTD_BENCH_SYSPTD:-}
command -v sqlite3 >/dev/null || { echo "no sqlite3 shell (scripts/install-deps.sh)" >&2; exit 2; }
[ -x "$BUILD/sysptd" ] && [ -x "$BUILD/tests/sptd_make_incident" ] ||
	{ echo "build the sysptd and sptd_make_incident targets in $BUILD first" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BUILD/tests/sptd_make_incident" "$TMP/w.db" sample || exit 1
sqlite3 "$TMP/w.db" "
	WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $N)
	INSERT INTO sched_slice (ts, dur, cpu, utid, end_state, priority, flags)
	SELECT 20000000 + i * 10, 5, i % 2, 1 + i % 3, 'S', 120, 0 FROM c;
	WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $N)
	INSERT INTO thread_state (ts, dur, utid, state, cpu, waker_utid, flags)
	SELECT 20000000 + i * 10 + 4, 1, 1 + i % 3, 'R', i % 2, 1 + (i + 1) % 3, 0 FROM c;" || exit 1

wall() { # the wall seconds of "$@"
	local TIMEFORMAT='%3R'
	{ time "$@" >/dev/null 2>&1; } 2>&1
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: >"$TMP/this"
: >"$TMP/other"
for i in $(seq "$ROUNDS"); do
	wall "$BUILD/sysptd" export "$TMP/w.db" -q -o "$TMP/a.pftrace" >>"$TMP/this"
	[ -n "$OTHER" ] && wall "$OTHER" export "$TMP/w.db" -q -o "$TMP/b.pftrace" >>"$TMP/other"
done
echo "| sysptd | sched slices | wakeups | export wall s (median of $ROUNDS) |"
echo "| --- | ---: | ---: | ---: |"
echo "| $BUILD/sysptd | $N | $N | $(median <"$TMP/this") |"
[ -n "$OTHER" ] && echo "| $OTHER | $N | $N | $(median <"$TMP/other") |"
[ -n "$OTHER" ] && { cmp -s "$TMP/a.pftrace" "$TMP/b.pftrace" && echo "(the two exports are identical)" ||
	echo "(the two exports differ)"; }
exit 0
