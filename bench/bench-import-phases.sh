#!/bin/bash
# bench-import-phases.sh BUILD PERF.DATA [SYMFS] [ROUNDS] — where the wall
# time of one `sysptd import` goes, phase by phase, with `perf script
# --itrace=cr -F +flags` on the same file timed in the same rounds
# (alternating), and what the phases say about other core counts.
#
# The phases are read from uprobes on functions sysptd exports (perf probe,
# entry and return), so the binary is measured as built: no timing code in
# it.  Medians of ROUNDS (default 7), in ms:
#   start      exec to the decode's start: privilege separation, the new
#              file's schema, perf.data parsed into the raw tables
#   prepare    raw tables read back, symbols and images loaded
#   phase 1    PT decoded (threads, one per core) and the pieces stitched
#   phase 2    call stacks replayed (one thread), slices handed to the writer
#   rows       the writer thread's remaining inserts after phase 2
#   indexes    index builds at commit (slice_utid_ts, slice_parent_id, ...)
#   commit     commit, fsync, rename into place
#   exit       back in the parent, freeing, exit
# Only phase 1 runs on several cores; everything else is one thread at a
# time.  The last lines apply Amdahl's law to the medians: the wall time
# with N cores if phase 1 shrank in proportion (an estimate, labelled so).
# It starts from the same import timed without probes in the same rounds
# (perf record and the probes cost it some milliseconds), split into phase
# 1 and the rest in the proportions the probes measured.
#
# Needs root (uprobes) and perf.  Tests never assert timings; this prints
# them.  Run it under the benchmark lock:
#   flock /tmp/sysptd-bench.lock bash bench/bench-import-phases.sh build \
#     ../shared/fixtures/real-pt/libxdc-mruby/perf.data \
#     ../shared/fixtures/real-pt/libxdc-mruby/symfs 11
set -u
BUILD=${1:?usage: bench-import-phases.sh BUILD PERF.DATA [SYMFS] [ROUNDS]}
DATA=${2:?usage: bench-import-phases.sh BUILD PERF.DATA [SYMFS] [ROUNDS]}
SYMFS=${3:-}
ROUNDS=${4:-7}
BIN=$BUILD/sysptd
GROUP=sptdphase
. "$(dirname "$0")/import-lib.sh"
bench_probe_checks "$BIN" "$DATA"
sym=()
[ -n "$SYMFS" ] && sym=("--symfs=$SYMFS")
TMP=$(mktemp -d)
cleanup() {
	perf probe -q -d "$GROUP:*" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
perf probe -q -d "$GROUP:*" >/dev/null 2>&1
# probe name = function: main sptd_col_derive_all sptd_dec_session_run
# sptd_dec_stacks_run_cpus sptd_store_commit sptd_store_schema_index
for p in main:main derive:sptd_col_derive_all session:sptd_dec_session_run \
	stacks:sptd_dec_stacks_run_cpus commit:sptd_store_commit index:sptd_store_schema_index; do
	name=${p%%:*}
	fn=${p#*:}
	perf probe -q -x "$BIN" -a "$GROUP:${name}_in=$fn" >/dev/null 2>&1 &&
		perf probe -q -x "$BIN" -a "$GROUP:${name}_out=$fn%return" >/dev/null 2>&1 ||
		{ echo "cannot place a uprobe on $fn in $BIN (stripped?)" >&2; exit 1; }
done

: >"$TMP/phases"
: >"$TMP/perf"
: >"$TMP/bare"
i=0
while [ $i -lt "$ROUNDS" ]; do
	rm -f "$TMP/out.db"
	perf record -q -e "$GROUP:*" -o "$TMP/p.data" -- \
		"$BIN" import "$DATA" "${sym[@]}" -o "$TMP/out.db" -q >/dev/null 2>"$TMP/err" ||
		{ echo "sysptd import failed: $(cat "$TMP/err")" >&2; exit 1; }
	# first time each probe fired (the stacks run once per import)
	perf script -i "$TMP/p.data" -F time,event 2>/dev/null | awk '
		{ t = $1; sub(":", "", t); e = $2; sub(":$", "", e); sub(".*:", "", e)
		  sub("__return$", "", e); if (!(e in at)) at[e] = t * 1000 }
		END {
			printf "%.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f\n",
			    at["derive_in"] - at["main_in"], at["session_in"] - at["derive_in"],
			    at["stacks_in"] - at["session_in"], at["stacks_out"] - at["stacks_in"],
			    at["derive_out"] - at["stacks_out"], at["index_out"] - at["index_in"],
			    at["commit_out"] - at["index_out"], at["main_out"] - at["commit_out"],
			    at["main_out"] - at["main_in"]
		}' >>"$TMP/phases"
	rm -f "$TMP/out.db"
	r=$(bench_time "$BIN" import "$DATA" "${sym[@]}" -o "$TMP/out.db")
	[ "$r" = FAIL ] && { echo "sysptd import failed" >&2; exit 1; }
	echo "$r" >>"$TMP/bare"
	r=$(bench_time perf script -i "$DATA" "${sym[@]}" --itrace=cr -F +flags)
	[ "$r" = FAIL ] && { echo "perf script failed" >&2; exit 1; }
	echo "$r" >>"$TMP/perf"
	i=$((i + 1))
done

med() { cut -d' ' -f"$1" "$TMP/phases" | bench_median; }
pw=$(cut -d' ' -f1 "$TMP/perf" | bench_median)
echo "sysptd import $(basename "$(dirname "$DATA")")/$(basename "$DATA"), $ROUNDS rounds, medians in ms ($(nproc) CPUs):"
k=1
for n in start prepare "phase 1" "phase 2" rows indexes commit exit total; do
	printf '  %-9s %8s\n' "$n" "$(med $k)"
	k=$((k + 1))
done
bw=$(cut -d' ' -f1 "$TMP/bare" | bench_median)
awk -v p1="$(med 3)" -v pt="$(med 9)" -v bw="$bw" -v pw="$pw" -v n="$(nproc)" 'BEGIN {
	tot = bw * 1000
	p1 = pt > 0 ? tot * p1 / pt : 0
	serial = tot - p1
	printf "  the same import without probes: %.0f ms; perf script: %.0f ms; perf / sysptd %.2fx\n", tot, pw * 1000, pw / bw
	printf "  one thread at a time: %.0f ms of %.0f; phase 1: %.0f ms on %d cores\n", serial, tot, p1, n
	for (c = 1; c <= 16; c *= 2) {
		t = serial + p1 * n / c
		printf "  estimate with %2d cores: %4.0f ms, %.2fx perf\n", c, t, pw * 1000 / t
	}
}'
