#!/bin/bash
# bench-import-ab.sh OLD_SYSPTD NEW_SYSPTD PERF.DATA [SYMFS] [ROUNDS] — two
# sysptd builds and perf script on the same perf.data, the three
# alternating within each round (default 7), so that before, after and the
# baseline share the machine's moods: medians of wall and CPU seconds, and
# perf's wall median over each sysptd's.  Tests never assert timings.
set -u
OLD=${1:?usage: bench-import-ab.sh OLD_SYSPTD NEW_SYSPTD PERF.DATA [SYMFS] [ROUNDS]}
NEW=${2:?usage}
DATA=${3:?usage}
SYMFS=${4:-}
ROUNDS=${5:-7}
. "$(dirname "$0")/import-lib.sh"
for b in "$OLD" "$NEW"; do
	[ -x "$b" ] || { echo "no $b" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf is not installed: no baseline" >&2; exit 2; }
sym=()
[ -n "$SYMFS" ] && sym=("--symfs=$SYMFS")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
i=0
while [ $i -lt "$ROUNDS" ]; do
	for k in old new; do
		b=$OLD
		[ $k = new ] && b=$NEW
		rm -f "$TMP/out.db"
		r=$(bench_time "$b" import "$DATA" "${sym[@]}" -o "$TMP/out.db")
		[ "$r" = FAIL ] && { echo "$k sysptd import failed" >&2; exit 1; }
		echo "$r" >>"$TMP/$k"
	done
	r=$(bench_time perf script -i "$DATA" "${sym[@]}" --itrace=cr -F +flags)
	[ "$r" = FAIL ] && { echo "perf script failed" >&2; exit 1; }
	echo "$r" >>"$TMP/perf"
	i=$((i + 1))
done
pw=$(cut -d' ' -f1 "$TMP/perf" | bench_median)
echo "| run | wall s (median) | CPU s (median) | every wall s | perf / this (wall) |"
echo "| --- | ---: | ---: | --- | ---: |"
for k in old new perf; do
	w=$(cut -d' ' -f1 "$TMP/$k" | bench_median)
	c=$(cut -d' ' -f2 "$TMP/$k" | bench_median)
	echo "| $k | $w | $c | $(cut -d' ' -f1 "$TMP/$k" | tr '\n' ' ')| $(awk -v a="$pw" -v b="$w" 'BEGIN { printf "%.2fx", a / b }') |"
done
echo
echo "$ROUNDS rounds, old / new / perf alternating; $(nproc) CPUs; $(perf --version 2>/dev/null); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
