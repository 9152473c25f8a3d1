#!/bin/bash
# bench-import.sh BUILD [ROUNDS] — row 2 of BENCHMARKS.md: `sysptd import
# perf.data` (default -j) against `perf script --itrace=cr -F +flags` on the
# same files (the perf.data captures of ../shared/fixtures/real-pt, with
# their symfs), in the same run: ROUNDS rounds (default 7), sysptd and perf
# alternating, medians of wall and CPU seconds, the ratio of the wall
# medians (higher: sysptd faster).  sysptd does the whole job (parse, raw
# tables, decode to call slices, scheduling tables, one committed SQLite
# file); perf only decodes and prints calls and returns (to /dev/null).
# Tests never assert timings; this prints them.
set -u
BUILD=${1:?usage: bench-import.sh BUILD [ROUNDS]}
ROUNDS=${2:-7}
# SPTD_BENCH_SYSPTD: another sysptd binary to time (an older build: "before")
SYSPTD=${SPTD_BENCH_SYSPTD:-$BUILD/sysptd}
FIX=${SPTD_FIXTURES:-$(dirname "$0")/../../shared/fixtures}/real-pt
. "$(dirname "$0")/import-lib.sh"
[ -x "$SYSPTD" ] || { echo "no $SYSPTD: build the sysptd target first" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is not installed: no baseline (apt-get install linux-perf)" >&2; exit 2; }
[ -d "$FIX" ] || { echo "no fixtures at $FIX (set SPTD_FIXTURES)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

bench_header
for d in libxdc-mruby libxdc-foo libxdc-unzip hase-control_flow; do
	[ -f "$FIX/$d/perf.data" ] || continue
	echo "  $d: $ROUNDS rounds ..." >&2
	bench_pair "$d" "$FIX/$d/perf.data" "$FIX/$d/symfs" "$ROUNDS" "$SYSPTD" "$TMP"
done
bench_footer "$ROUNDS"
