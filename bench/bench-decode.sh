#!/bin/sh
# PT decode throughput on the real captures: sysptd vs libipt's instruction
# decoder (in bench_decode) and vs `perf script --itrace=cr` on the same bytes
# repacked as perf.data.  Usage: bench/bench-decode.sh [BUILD_DIR] [ROUNDS]
set -e
build=${1:-build}
rounds=${2:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
fx=${SPTD_FIXTURES:-$src/../shared/fixtures}
"$build/bench/bench_decode" "$fx" "$rounds"
command -v perf >/dev/null 2>&1 || { echo "perf not installed: no perf baseline"; exit 0; }
echo
echo "perf script --itrace=cr (best of $rounds, output to /dev/null):"
for t in libxdc-mruby libxdc-foo libxdc-unzip; do
	d=$fx/real-pt/$t
	best=
	i=0
	while [ $i -lt "$rounds" ]; do
		s=$(date +%s%N)
		perf script -i "$d/perf.data" --symfs="$d/symfs" --itrace=cr -F +flags >/dev/null 2>&1 || true
		e=$(date +%s%N)
		dt=$((e - s))
		if [ -z "$best" ] || [ "$dt" -lt "$best" ]; then best=$dt; fi
		i=$((i + 1))
	done
	bytes=$(stat -c %s "$d/trace.pt")
	awk -v b="$bytes" -v ns="$best" -v t="$t" 'BEGIN { printf "%-14s %9d bytes  %8.4f s  %8.1f MB/s\n", t, b, ns / 1e9, b / (ns / 1e9) / 1e6 }'
done
