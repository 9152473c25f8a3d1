#!/bin/sh
# Overhead of an armed sysptd on a context-switch-heavy workload (pipe
# ping-pong), against the same workload unarmed, in the same run.  Runs
# alternate (off, on, off, on, ...) so drift hits both sides alike.
# Both ping-pong processes are pinned to CPU 0 (taskset), so every round
# trip is two context switches on one CPU and runs are comparable.
# Usage: sudo sh bench/bench-overhead.sh [BUILD_DIR] [RUNS] [ROUNDS]
set -eu
build=${1:-build}
runs=${2:-5}
rounds=${3:-200000}
bin=$build/sysptd
pp=$build/bench/sptd_pingpong
[ -x "$pp" ] || pp=$(find "$build" -name sptd_pingpong -type f | head -n 1)
work=$(mktemp -d)
export SYSPTD_RUNDIR=$work/run
trap 'kill $svc 2>/dev/null; rm -rf "$work"' EXIT
svc=""
off=""
on=""
for i in $(seq "$runs"); do
	off="$off $(taskset -c 0 $pp "$rounds")"
	"$bin" --window 10ms --trigger timer=3600s -o "$work" 2>"$work/err" &
	svc=$!
	while ! grep -q armed: "$work/err"; do
		kill -0 $svc 2>/dev/null || { cat "$work/err" >&2; exit 1; }
		sleep 0.1
	done
	on="$on $(taskset -c 0 $pp "$rounds")"
	kill $svc; wait $svc || true
	svc=""
done
median() { printf '%s\n' $* | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m_off=$(median $off)
m_on=$(median $on)
echo "pipe ping-pong, $rounds round trips, $runs runs each, median round trips/s"
echo "  unarmed:                 $m_off   (runs:$off)"
echo "  armed (sample + ftrace): $m_on   (runs:$on)"
awk -v a="$m_off" -v b="$m_on" 'BEGIN { printf "  armed / unarmed = %.3f  (overhead %.1f%%)\n", b / a, (1 - b / a) * 100 }'
