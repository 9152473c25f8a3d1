#!/bin/sh
# test_hotplug.sh — a CPU goes offline and comes back while the service
# records.  Its perf events do not survive that (Linux 6.18 here: after the
# round trip a busy CPU had no sample at all, for as long as the service
# ran), so the service must notice and arm again: a loop that keeps that
# CPU busy must then have its samples and its sched slices there, and the
# incident's CPU count must follow the online list.  Needs root and a CPU
# other than 0 that can go offline; every CPU is put back online at the end
# (each snapshot is bounded, so that the test ends well before ctest's
# timeout, whose kill no trap survives: a CPU would stay offline).
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
if [ "$(id -u)" != 0 ]; then
	echo "needs root (recording, CPU hotplug): skipped"
	exit 77
fi
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	{ echo "no tracefs: skipped"; exit 77; }
# the highest online CPU but 0, if it can go offline
cpu=$(tr ',' '\n' </sys/devices/system/cpu/online | sed 's/.*-//' | sort -n | tail -n 1)
ctl=/sys/devices/system/cpu/cpu$cpu/online
if [ -z "$cpu" ] || [ "$cpu" = 0 ] || [ ! -w "$ctl" ]; then
	echo "no CPU here can go offline: skipped"
	exit 77
fi
work=$(mktemp -d /tmp/sptd-hotplug-XXXXXX)
# a recorder of its own (--name): the suite runs beside the machine's service
recorder=hotplug$$
export SYSPTD_RUNDIR="$work/run"
svc=""
cleanup() {
	echo 1 >"$ctl" 2>/dev/null
	[ -n "$svc" ] && kill -TERM "$svc" 2>/dev/null && wait "$svc" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
. "$(dirname "$0")/../../lib/expect.sh"

# busy_snapshot: keep $cpu busy 1.5 s, snapshot in the middle; the incident's path
busy_snapshot() {
	taskset -c "$cpu" timeout 1.5 sh -c 'while :; do :; done' &
	_b=$!
	sleep 0.7
	timeout 10 "$BIN" snapshot --name "$recorder" 2>>"$work/snap.err" | tail -n 1
	wait "$_b"
}
# on INCIDENT: "SAMPLES BUSY_MS CPUS" of $cpu and the incident
on_cpu() {
	echo "$(q "$1" "SELECT count(*) FROM sample WHERE cpu = $cpu")" \
	     "$(q "$1" "SELECT coalesce(sum(s.dur), 0) / 1000000 FROM sched_slice s JOIN thread t USING (utid) WHERE s.cpu = $cpu AND t.tid != 0")" \
	     "$(q "$1" "SELECT value FROM meta WHERE key = 'cpus'")"
}

ncpu=$(tr ',' '\n' </sys/devices/system/cpu/online | awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n }')
mkdir -m 700 "$work/inc"
"$BIN" --name "$recorder" --window 100ms -o "$work/inc" >"$work/out" 2>"$work/err" &
svc=$!
wait_for "$work/err" "armed:" 20 || { bad "the service did not arm"; cat "$work/err" >&2; finish; }

# before: the busy CPU is sampled (the baseline the rest depends on)
inc=$(busy_snapshot)
set -- $(on_cpu "$inc")
[ "${1:-0}" -ge 50 ] && [ "${2:-0}" -ge 50 ] && [ "${3:-}" = "$ncpu" ] && ok ||
	bad "before: CPU $cpu busy: ${1:-?} samples, ${2:-?} ms running, ${3:-?} CPUs (want >= 50, >= 50, $ncpu)"

# offline: the service arms on the others; an incident then counts one CPU less
echo 0 >"$ctl" || { bad "cannot take CPU $cpu offline"; finish; }
wait_for "$work/err" "online CPUs changed" 5 && ok || bad "the service did not notice CPU $cpu going offline"
inc=$(timeout 10 "$BIN" snapshot --name "$recorder" 2>>"$work/snap.err" | tail -n 1)
set -- $(on_cpu "$inc")
[ "${3:-}" = $((ncpu - 1)) ] && [ "${1:-1}" = 0 ] && ok ||
	bad "offline: ${1:-?} samples on CPU $cpu, ${3:-?} CPUs (want 0, $((ncpu - 1)))"

# back online: armed again, so the busy CPU has its samples again
echo 1 >"$ctl" || { bad "cannot bring CPU $cpu back"; finish; }
i=0
while [ "$(grep -c "online CPUs changed" "$work/err")" -lt 2 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ $i -lt 50 ] && ok || bad "the service did not notice CPU $cpu coming back"
sleep 0.3
inc=$(busy_snapshot)
set -- $(on_cpu "$inc")
[ "${1:-0}" -ge 50 ] && [ "${2:-0}" -ge 50 ] && [ "${3:-}" = "$ncpu" ] && ok ||
	bad "after the round trip: CPU $cpu busy: ${1:-?} samples, ${2:-?} ms running, ${3:-?} CPUs (want >= 50, >= 50, $ncpu)"
kill -0 "$svc" 2>/dev/null && ok || bad "the service died: $(cat "$work/err")"
[ "$failed" = 0 ] || cat "$work/err" "$work/snap.err" >&2
finish
