#!/bin/bash
# bench-power.sh BUILD [ROUNDS] [INSTRUCTIONS] — what reading PT for power
# events and PTWRITEs costs (decode/power.c: a second walk of each CPU's
# PT with libipt's query decoder), against the flow decode of the same
# import (libipt's block decoder, phase 1): both measured by sysptd itself
# in every import (stats power_ns and decode_ns), ROUNDS imports (default
# 7), medians, and the import's wall time.
#
# The trace: BUILD/bench/sptd_bench_dense run by sptd-ptgen for
# INSTRUCTIONS user instructions (default 8,000,000: about a minute to make,
# once, kept in $SPTD_BENCH_DIR, default /tmp/sptd-bench), one CPU, MTC
# timing, return compression; needs ptrace (root) to make it.
set -u
BUILD=${1:?usage: bench-power.sh BUILD [ROUNDS] [INSTRUCTIONS]}
ROUNDS=${2:-7}
INSNS=${3:-8000000}
SYSPTD=${SPTD_BENCH_SYSPTD:-$BUILD/sysptd}
DIR=${SPTD_BENCH_DIR:-/tmp/sptd-bench}/power-$INSNS
for t in sysptd sptd-ptgen bench/sptd_bench_dense; do
	[ -x "$BUILD/$t" ] || { echo "no $BUILD/$t: build the project first" >&2; exit 2; }
done
if [ ! -f "$DIR/gen/cpu0.pt" ]; then
	mkdir -p "$DIR" && cp "$BUILD/bench/sptd_bench_dense" "$DIR/dense" || exit 1
	echo "making the trace in $DIR ($INSNS instructions single-stepped) ..." >&2
	"$BUILD/sptd-ptgen" -o "$DIR/gen" --cpus 1 --slice-insns 10000 --timing mtc --retcomp \
		--max-insns "$INSNS" -- "$DIR/dense" >"$DIR/gen.log" 2>&1 ||
		{ echo "sptd-ptgen failed (needs ptrace: root); see $DIR/gen.log" >&2; exit 1; }
fi
g=$DIR/gen
cfg() { sed -n "s/^$1=//p" "$g/config.txt"; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
: >"$TMP/rows"
for r in $(seq "$ROUNDS"); do
	rm -f "$TMP/x.db"
	t0=$(date +%s%N)
	"$SYSPTD" import --pt="$g/cpu0.pt" --maps="$g/maps.txt" --tasks="$g/tasks.txt" \
		--sched="$g/sched.txt" --cpu-id="$(cfg cpu_family)/$(cfg cpu_model)/$(cfg cpu_stepping)" \
		--mtc-freq="$(cfg mtc_freq)" --nom-freq="$(cfg nom_freq)" \
		--cpuid15="$(cfg cpuid15_eax)/$(cfg cpuid15_ebx)" --tsc-hz="$(cfg tsc_hz)" \
		-o "$TMP/x.db" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / 1000 )) $("$SYSPTD" query "$TMP/x.db" --format csv \
		"SELECT (SELECT sum(value) FROM stats WHERE name = 'power_ns') / 1000,
		        (SELECT sum(value) FROM stats WHERE name = 'decode_ns') / 1000" | tail -n 1 | tr ',' ' ')" \
		>>"$TMP/rows"
done
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
wall=$(awk '{ print $1 }' "$TMP/rows" | med)
pw=$(awk '{ print $2 }' "$TMP/rows" | med)
dec=$(awk '{ print $3 }' "$TMP/rows" | med)
bytes=$(stat -c %s "$g/cpu0.pt")
echo "| trace | PT bytes | import wall ms | flow decode (decode_ns) ms | power walk (power_ns) ms | power / decode |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
awk -v i="$INSNS" -v b="$bytes" -v w="$wall" -v p="$pw" -v d="$dec" 'BEGIN {
	printf "| dense, %d instructions | %d | %.1f | %.1f | %.1f | %.3f |\n", i, b, w / 1000, d / 1000, p / 1000, p / d }'
echo
echo "Medians of $ROUNDS imports; $(nproc) CPUs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
