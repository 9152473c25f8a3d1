#!/bin/sh
# test_trigger_claims.sh — issue 27 items 2 and 4: what a trigger row claims
# is what its incident holds, for every incident.
#
# latency=: sleepers and a pipe ping-pong with a CPU hog pinned on every
# CPU (sptd_truth_prog latency: real waits), several incidents.  Each
# trigger row that claims "pid P waited N ns" must be a runnable
# thread_state row of P ending at the trigger's ts, N long (tolerance
# 1 us on both, as the issue states it; the fix gives 0), flagged as cut
# at the window start exactly when it says "more than".  Before the fix the
# trigger was perf's switch, a few us from ftrace's, and perf pairs a
# switch-in with a wakeup it kept after losing the switch-out between
# ("waited 200141940 ns" over a 7.9 us runnable row).
#
# irq=N and irq=N,min=1us: disk IRQs that fsync raises.  Each trigger row
# must be exactly one irq_slice of IRQ N on its CPU: ts = the slice's end,
# "took D ns" = its dur (tolerance 0: one handler, one measurement, the
# same ftrace events); nothing else runs on that CPU inside it (no switch,
# softirq or other hard IRQ); an independent bare ftrace instance saw that
# return within 20 us (it prints microseconds, and two instances' times of
# one event differ by tens of us now and then on this loaded VM, as
# test_irq_idle found); /proc/interrupts counted at
# least as many IRQ N as the incidents hold slices of it.  Before the fix
# the row was perf's entry/exit: 6119 ns against the slice's 4544, its ts
# 1.6-3.4 us after the slice's end.
#
# Needs root and tracefs.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
PROG=${SPTD_TRUTH_PROG:?SPTD_TRUTH_PROG must name sptd_truth_prog}
if [ "$(id -u)" != 0 ]; then
	echo "needs root (recording): skipped"
	exit 77
fi
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null || { echo "no tracefs: skipped"; exit 77; }
work=$(mktemp -d /var/tmp/sptd-claims-XXXXXX)
chmod 700 "$work"
inst="$T/instances/sptd-test-claims-$$"
svc=""
prog=""
cleanup() {
	[ -n "$svc" ] && kill -9 "$svc" 2>/dev/null
	[ -n "$prog" ] && kill "$prog" 2>/dev/null
	wait 2>/dev/null
	[ -d "$inst" ] && rmdir "$inst" 2>/dev/null
	# the service's own, if it was killed before removing it
	[ -d "$T/instances/sysptd-claims-$$" ] && rmdir "$T/instances/sysptd-claims-$$" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
. "$(dirname "$0")/../../lib/expect.sh"
export SYSPTD_RUNDIR="$work/run"
# a service of its own name: its own ftrace instance, beside other
# engineers' services and tests on this machine

# service TRIGGER COUNT DIR: the service armed with TRIGGER until it wrote
# COUNT incidents into DIR (60 s at most; then stopped, what it wrote kept)
service() {
	mkdir -m 700 "$3"
	"$BIN" --name "claims-$$" --window 20ms --trigger "$1" --count "$2" --cooldown 100ms -o "$3" \
		>"$work/svc.out" 2>"$work/svc.err" &
	svc=$!
	wait_for "$work/svc.err" "armed:" 30 || { bad "$1: the service did not arm"; cat "$work/svc.err" >&2; }
	i=0
	while kill -0 "$svc" 2>/dev/null && [ $i -lt 600 ]; do
		[ -n "${CAUSE:-}" ] && $CAUSE
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$svc" 2>/dev/null; then
		kill -INT "$svc"
		sleep 2
		kill -9 "$svc" 2>/dev/null
	fi
	wait "$svc" 2>/dev/null
	svc=""
}

# ---- latency= ------------------------------------------------------------
"$PROG" latency 60 >"$work/prog.out" &
prog=$!
sleep 0.5
CAUSE="" service latency=1ms 6 "$work/lat"
kill "$prog" 2>/dev/null
wait "$prog" 2>/dev/null
prog=""
n=0
held=0
for inc in "$work"/lat/incident-*.db; do
	[ -f "$inc" ] || continue
	n=$((n + 1))
	tts=$(q "$inc" "SELECT ts FROM trigger")
	# csv quotes a detail with a comma: without them
	detail=$(q "$inc" "SELECT replace(detail, ',', ';') FROM trigger")
	echo "latency incident $n: $detail (trigger at $tts)"
	case "$detail" in
	"pid "*" waited more than "*" ns "*) more=1 ;;
	"pid "*" waited "*" ns "*) more=0 ;;
	*"no wait claimed"*)
		# no claim: then no runnable row of it may end there either
		pid=$(echo "$detail" | awk '{ print $2 }')
		c=$(q "$inc" "SELECT count(*) FROM thread_state s JOIN thread t USING (utid) WHERE t.tid = $pid AND s.state IN ('R', 'R+') AND abs(s.ts + s.dur - $tts) <= 1000")
		[ "$c" = 0 ] && ok || bad "latency: '$detail' but a runnable row of $pid ends at $tts"
		continue ;;
	*) bad "latency: trigger detail '$detail' says no wait"; continue ;;
	esac
	pid=$(echo "$detail" | awk '{ print $2 }')
	ns=$(echo "$detail" | sed -n 's/.* waited \(more than \)\{0,1\}\([0-9]*\) ns.*/\2/p')
	# the claimed wait: a runnable row of that thread ending at the
	# trigger, that long (1 us), cut at the window start iff "more than"
	got=$(q "$inc" "SELECT count(*) FROM thread_state s JOIN thread t USING (utid) WHERE t.tid = $pid AND s.state IN ('R', 'R+') AND abs(s.ts + s.dur - $tts) <= 1000 AND abs(s.dur - $ns) <= 1000 AND (coalesce(s.flags, 0) & 1) = $more")
	if [ "$got" = 1 ]; then
		ok
		[ "$more" = 1 ] || [ "$ns" -ge 1000000 ] && held=$((held + 1))
	else
		bad "latency incident $n: '$detail' at $tts, but the incident's last rows of $pid up to it are: $(q "$inc" "SELECT group_concat(r, '; ') FROM (SELECT s.ts || '+' || s.dur || ' ' || s.state || ' flags ' || s.flags AS r FROM thread_state s JOIN thread t USING (utid) WHERE t.tid = $pid AND s.ts + s.dur <= $tts + 1000000 ORDER BY s.ts DESC LIMIT 4)")"
	fi
	# the window ends at the trigger (no --post)
	we=$(q "$inc" "SELECT value FROM meta WHERE key = 'window_end'")
	[ "$we" = "$tts" ] && ok || bad "latency incident $n: window_end $we, trigger at $tts"
done
[ "$n" -ge 3 ] && ok || bad "latency=1ms: $n incidents in 60 s with hogs on every CPU ($(tail -n 3 "$work/svc.err"))"
[ "$held" -ge 1 ] && ok || bad "latency=1ms: no incident holds a wait of 1 ms or more that its trigger claims"

# ---- irq ------------------------------------------------------------------
# the IRQ fsync raises here: the one whose count grows most
irq_counts() {
	awk '$1 ~ /^[0-9]+:$/ { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; else break;
	                         sub(":", "", $1); print $1, s }' /proc/interrupts | sort -k1,1
}
fsync_write() { dd if=/dev/zero of="$work/f" bs=4k count=1 conv=fsync status=none; }
irq_counts >"$work/before"
for _k in 1 2 3 4 5 6 7 8 9 10; do fsync_write; done
irq_counts >"$work/after"
irq=$(join "$work/before" "$work/after" | awk '{ d = $3 - $2; if (d > best) { best = d; n = $1 } }
                                           END { if (best >= 5) print n }')
if [ -z "$irq" ]; then
	skipped="$skipped irq(no-IRQ-follows-fsync-here)"
	finish
fi
mkdir "$inst" || { bad "cannot make $inst"; finish; }
echo mono >"$inst/trace_clock"
echo 8192 >"$inst/buffer_size_kb"
echo "irq==$irq" >"$inst/events/irq/irq_handler_exit/filter"
echo 1 >"$inst/events/irq/irq_handler_exit/enable"
before=$(irq_counts | awk -v n="$irq" '$1 == n { print $2 }')
slices=0
m=0
for spec in "irq=$irq" "irq=$irq,min=1us"; do
	dir="$work/irq$m"
	m=$((m + 1))
	CAUSE=fsync_write service "$spec" 3 "$dir"
	k=0
	for inc in "$dir"/incident-*.db; do
		[ -f "$inc" ] || continue
		k=$((k + 1))
		tts=$(q "$inc" "SELECT ts FROM trigger")
		tcpu=$(q "$inc" "SELECT cpu FROM trigger")
		detail=$(q "$inc" "SELECT replace(detail, ',', ';') FROM trigger")
		echo "$spec incident $k: $detail (cpu $tcpu, at $tts)"
		took=$(echo "$detail" | sed -n "s/^irq $irq .*handler took \([0-9]*\) ns.*/\1/p")
		[ -n "$took" ] || { bad "$spec: trigger detail '$detail' gives no handler time"; continue; }
		# one handler, one measurement: exactly one slice, same end, same dur
		got=$(q "$inc" "SELECT count(*) FROM irq_slice WHERE irq = $irq AND cpu = $tcpu AND ts + dur = $tts AND dur = $took AND flags = 0")
		[ "$got" = 1 ] && ok || bad "$spec incident $k: trigger at $tts took $took ns on cpu $tcpu; IRQ $irq slices there: $(q "$inc" "SELECT group_concat(ts || '+' || dur || ' flags ' || flags, '; ') FROM irq_slice WHERE irq = $irq AND cpu = $tcpu AND ts + dur BETWEEN $tts - 100000 AND $tts + 100000")"
		# nothing else on that CPU inside its hard IRQ
		inside=$(q "$inc" "SELECT (SELECT count(*) FROM sched_slice WHERE cpu = $tcpu AND ts > $tts - $took AND ts < $tts) + (SELECT count(*) FROM softirq_slice WHERE cpu = $tcpu AND ts < $tts AND ts + dur > $tts - $took) + (SELECT count(*) FROM irq_slice WHERE cpu = $tcpu AND ts < $tts AND ts + dur > $tts - $took) - 1")
		[ "$inside" = 0 ] && ok || bad "$spec incident $k: $inside other events run on cpu $tcpu inside the handler"
		we=$(q "$inc" "SELECT value FROM meta WHERE key = 'window_end'")
		[ "$we" = "$tts" ] && ok || bad "$spec incident $k: window_end $we, trigger at $tts"
		# the bare instance's lines: "... [CPU] ... SECONDS.MICROS: irq_handler_exit: irq=N ..."
		seen=$(awk -v c="$tcpu" -v t="$tts" '/irq_handler_exit:/ {
				for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) cpu = substr($i, 2, length($i) - 2) + 0;
				for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { split(substr($i, 1, length($i) - 1), p, ".");
					us = p[1] * 1000000 + p[2] }
				d = us - int(t / 1000); if (cpu == c && d <= 20 && d >= -20) n++ }
			END { print n + 0 }' "$inst/trace")
		[ "$seen" -ge 1 ] && ok || bad "$spec incident $k: no IRQ $irq return within 20 us of $tts on cpu $tcpu in the bare instance"
		slices=$((slices + $(q "$inc" "SELECT count(*) FROM irq_slice WHERE irq = $irq")))
	done
	[ "$k" -ge 1 ] && ok || bad "$spec: no incident ($(tail -n 3 "$work/svc.err"))"
done
after=$(irq_counts | awk -v n="$irq" '$1 == n { print $2 }')
echo 0 >"$inst/events/irq/irq_handler_exit/enable"
# /proc/interrupts: the kernel counted at least what the incidents hold
[ $((after - before)) -ge "$slices" ] && ok ||
	bad "IRQ $irq: /proc/interrupts counted $((after - before)), the incidents hold $slices slices of it"
rm -f "$work/f"
finish
