#!/bin/bash
# bench-import-dense.sh BUILD [ROUNDS] [INSTRUCTIONS] — row 3 of
# BENCHMARKS.md: `sysptd import` against `perf script --itrace=cr -F
# +flags` on a dense single-CPU trace, in the same run, alternating,
# medians (as bench-import.sh).
#
# The trace is made once and kept (in $SPTD_BENCH_DIR, default
# /tmp/sptd-bench): sptd-ptgen runs BUILD/bench/sptd_bench_dense (a PIE: a
# bytecode machine calling hash, table, sort and recursive functions) for
# INSTRUCTIONS user instructions (default 30,000,000), single-stepping it
# under ptrace into user-only PT with MTC timing and return compression,
# about 2 MB; sptd-ptgen2perf makes it the perf.data perf record would have
# written.  Single-stepping costs some 30 us per instruction on a VM:
# making it takes about a quarter of an hour, once.  Needs ptrace (root).
set -u
BUILD=${1:?usage: bench-import-dense.sh BUILD [ROUNDS] [INSTRUCTIONS]}
ROUNDS=${2:-5}
INSNS=${3:-30000000}
# SPTD_BENCH_SYSPTD: another sysptd binary to time (an older build: "before")
SYSPTD=${SPTD_BENCH_SYSPTD:-$BUILD/sysptd}
DIR=${SPTD_BENCH_DIR:-/tmp/sptd-bench}/dense-$INSNS
. "$(dirname "$0")/import-lib.sh"
[ -x "$SYSPTD" ] || { echo "no $SYSPTD: build the sysptd target first" >&2; exit 2; }
for t in sptd-ptgen sptd-ptgen2perf bench/sptd_bench_dense; do
	[ -x "$BUILD/$t" ] || { echo "no $BUILD/$t: build the bench-import-dense target first" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf is not installed: no baseline (apt-get install linux-perf)" >&2; exit 2; }

if [ ! -f "$DIR/perf.data" ]; then
	mkdir -p "$DIR" || exit 1
	rm -rf "$DIR/gen" "$DIR/perf.data"
	# the program the trace refers to stays with it
	cp "$BUILD/bench/sptd_bench_dense" "$DIR/dense" || exit 1
	echo "making the dense trace in $DIR: $INSNS instructions single-stepped" \
	     "(about $((INSNS / 2000000)) minutes, once) ..." >&2
	if ! "$BUILD/sptd-ptgen" -o "$DIR/gen" --timing mtc --retcomp --max-insns "$INSNS" \
	     -- "$DIR/dense" >"$DIR/gen.log" 2>&1; then
		echo "sptd-ptgen failed (needs ptrace: root); see $DIR/gen.log" >&2
		exit 1
	fi
	"$BUILD/sptd-ptgen2perf" "$DIR/gen" "$DIR/perf.data.tmp" >"$DIR/p2p.log" 2>&1 &&
		mv "$DIR/perf.data.tmp" "$DIR/perf.data" ||
		{ echo "sptd-ptgen2perf failed; see $DIR/p2p.log" >&2; exit 1; }
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
bench_header
echo "  dense: $ROUNDS rounds ..." >&2
bench_pair "dense ($(sed -n 's/^instructions=//p' "$DIR/gen/config.txt") instructions)" \
	"$DIR/perf.data" "" "$ROUNDS" "$SYSPTD" "$TMP"
bench_footer "$ROUNDS"
