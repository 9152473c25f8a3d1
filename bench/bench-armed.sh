#!/bin/sh
# Armed cost (issue 12, row 4): a realistic pipeline,
#   tar cf - /usr/share/doc /usr/include | gzip -1 >/dev/null
# timed unarmed, under a bare ftrace instance with sysptd's nine events
# (sched_switch, sched_waking, sched_wakeup_new, sched_process_fork/exit,
# irq_handler_entry/exit, softirq_entry/exit; overwrite ring, mono clock:
# what the service's instance costs on its own), under `perf record -a -g`
# at 10 kHz (the sampling baseline), and under sysptd armed with its
# defaults and with each --freq given.  Configurations alternate within a
# round, so drift hits all alike; each figure is the median of ROUNDS.
#
# --call-graph dwarf (issue 29): the configurations "dwarf" (sysptd armed
# with --call-graph dwarf, 8 KiB of stack per sample) and "perfdwarf"
# (perf record -a --call-graph dwarf at sysptd's default 1 kHz) join the
# round when DWARF=1.  CONFIGS="unarmed ftrace ..." runs only those.
#
# WORKLOAD=pingpong runs the worst case instead: bench/pingpong.c's pipe
# ping-pong pinned to CPU 0, 100,000 round trips (four events each).
#
# Usage: sudo sh bench/bench-armed.sh [BUILD_DIR] [ROUNDS] [FREQ...]
# Run it under the machine's locks (one ftrace instance "sysptd" per
# machine):
#   flock /tmp/sysptd-bench.lock flock /tmp/sysptd-ctest.lock \
#     sh bench/bench-armed.sh build 5 1000 100
set -eu
build=${1:-build}
rounds=${2:-5}
[ $# -ge 2 ] && shift 2 || shift $#
freqs=${*:-1000 100}
bin=$(cd "$build" && pwd)/sysptd
if [ "$(id -u)" != 0 ]; then
	echo "bench-armed.sh: needs root (ftrace, perf -a, the service)" >&2
	exit 4
fi
tr=/sys/kernel/tracing
[ -d "$tr/instances" ] || tr=/sys/kernel/debug/tracing
work=$(mktemp -d)
export SYSPTD_RUNDIR=$work/run
svc=""
perfpid=""
cleanup() {
	[ -n "$svc" ] && kill "$svc" 2>/dev/null
	[ -n "$perfpid" ] && kill -INT "$perfpid" 2>/dev/null
	[ -d "$tr/instances/sptd-bench" ] && { echo 0 >"$tr/instances/sptd-bench/tracing_on"; rmdir "$tr/instances/sptd-bench"; }
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

workload=${WORKLOAD:-tar}
pp=$(find "$(cd "$build" && pwd)" -name sptd_pingpong -type f | head -n 1)
if [ "$workload" = pingpong ] && [ -z "$pp" ]; then
	echo "bench-armed.sh: no sptd_pingpong in $build" >&2
	exit 1
fi
pipeline() {	# -> seconds, to stdout
	s=$(date +%s%N)
	if [ "$workload" = pingpong ]; then
		taskset -c 0 "$pp" 100000 >/dev/null
	else
		tar cf - /usr/share/doc /usr/include 2>/dev/null | gzip -1 >/dev/null
	fi
	e=$(date +%s%N)
	awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }'
}
ftrace_on() {
	i=$tr/instances/sptd-bench
	mkdir "$i"
	echo 1 >"$i/options/overwrite"
	echo 1344 >"$i/buffer_size_kb"
	echo mono >"$i/trace_clock"
	for e in sched/sched_switch sched/sched_waking sched/sched_wakeup_new sched/sched_process_fork \
	         sched/sched_process_exit irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry \
	         irq/softirq_exit; do
		echo 1 >"$i/events/$e/enable"
	done
	echo 1 >"$i/tracing_on"
}
ftrace_off() {
	echo 0 >"$tr/instances/sptd-bench/tracing_on"
	rmdir "$tr/instances/sptd-bench"
}
sysptd_on() {	# extra options
	rm -f "$work"/incident-*.db
	# shellcheck disable=SC2086
	# a recorder of its own (--name): beside a service or a test's, on its
	# own ftrace instance
	"$bin" --name "bench$$" --window 10ms --trigger timer=3600s -o "$work" $* \
		</dev/null >/dev/null 2>"$work/err" &
	svc=$!
	while ! grep -q "armed:" "$work/err"; do
		kill -0 "$svc" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
		sleep 0.1
	done
}
sysptd_off() {
	kill "$svc"
	wait "$svc" || true
	svc=""
}

perf_pipeline() {	# CONFIG PERF-OPTIONS...: the pipeline under perf record -a
	_c=$1
	shift
	perf record -q -a "$@" -o "$work/perf.data" -- sleep 3600 2>/dev/null &
	perfpid=$!
	sleep 1
	pipeline >>"$work/t.$_c"
	kill -INT "$perfpid"; wait "$perfpid" || true
	perfpid=""
	rm -f "$work/perf.data"
}

configs="unarmed ftrace perf default"
for f in $freqs; do configs="$configs freq$f"; done
[ "${DWARF:-0}" = 1 ] && configs="$configs dwarf perfdwarf"
configs=${CONFIGS:-$configs}
for c in $configs; do : >"$work/t.$c"; done
pipeline >/dev/null   # warm the page cache
for r in $(seq "$rounds"); do
	for c in $configs; do
		case $c in
		unarmed) pipeline >>"$work/t.$c" ;;
		ftrace) ftrace_on; pipeline >>"$work/t.$c"; ftrace_off ;;
		perf) perf_pipeline "$c" -g -F 10000 ;;
		perfdwarf) perf_pipeline "$c" --call-graph dwarf -F 1000 ;;
		default) sysptd_on; pipeline >>"$work/t.$c"; sysptd_off ;;
		dwarf) sysptd_on --call-graph dwarf; pipeline >>"$work/t.$c"; sysptd_off ;;
		freq*) sysptd_on --freq "${c#freq}"; pipeline >>"$work/t.$c"; sysptd_off ;;
		esac
	done
	printf 'round %d/%d done\n' "$r" "$rounds" >&2
done

median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(median "$work/t.unarmed")
ft=$(median "$work/t.ftrace")
if [ "$workload" = pingpong ]; then
	echo "pipe ping-pong on CPU 0, 100,000 round trips: median of $rounds runs each (s)"
else
	echo "tar cf - /usr/share/doc /usr/include | gzip -1: median of $rounds runs each (s)"
fi
printf '  %-34s %8s %10s %10s   %s\n' configuration median vs-unarmed vs-ftrace runs
for c in $configs; do
	m=$(median "$work/t.$c")
	case $c in
	unarmed) name="unarmed" ;;
	ftrace) name="bare ftrace instance, same 9 events" ;;
	perf) name="perf record -a -g -F 10000" ;;
	default) name="sysptd, defaults" ;;
	dwarf) name="sysptd --call-graph dwarf" ;;
	perfdwarf) name="perf record -a --call-graph dwarf -F 1000" ;;
	freq*) name="sysptd --freq ${c#freq}" ;;
	esac
	printf '  %-34s %8s %9.3fx %9.3fx   %s\n' "$name" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN{print a/b}')" \
		"$(awk -v a="$m" -v b="$ft" 'BEGIN{print a/b}')" "$(tr '\n' ' ' <"$work/t.$c")"
done
