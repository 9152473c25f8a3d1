#!/bin/sh
# test_report_truth.sh — issue 27 items 7, 8 and 9, on one real incident:
# `sysptd record --offcpu --window 1s` over sptd_truth_prog latency (sleepers,
# a pipe ping-pong, a hog pinned on every CPU) and sptd_truth_prog zombies
# 4 300 (four children that exit at once, each reaped 300 ms later: zombies
# meanwhile; the program logs each child's pid) while an independent bare
# ftrace instance records every sched_waking and sched_wakeup_new.
#
# 7. no sched_waking line `sysptd script` prints is at exactly the window
#    start, and the lines are wakings the bare instance saw: the same woken
#    pid within 20 us (the instance prints microseconds), for at least
#    99.5 % of them (the two instances' times of one event disagree by tens
#    of us for a few events here, see below).  Before the fix the rows of tasks
#    runnable since before the window (the hogs keep some so at every
#    instant) were printed as wakings at exactly the window start, CPU
#    [---].
# 8. `--report offcpu` ranks no time of a thread after it exited: the
#    children never blocked (they exit at once), so none of their time is
#    in the report, though each was a zombie for 300 ms (the program's log
#    and the incident's Z rows say so); blocked time is still ranked.
# 9. `--report threads` lists only threads that did something in the
#    window: each listed one ran, changed state, woke another, or was
#    sampled, checked row by row against the incident's tables; the
#    program is listed; with --all-tasks every thread of the incident is.
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
work=$(mktemp -d /var/tmp/sptd-rtruth-XXXXXX)
chmod 700 "$work"
inst="$T/instances/sptd-test-rtruth-$$"
cleanup() {
	[ -d "$inst" ] && rmdir "$inst" 2>/dev/null
	# the service's own, if it was killed before removing it
	[ -d "$T/instances/sysptd-rtruth-$$" ] && rmdir "$T/instances/sysptd-rtruth-$$" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
. "$(dirname "$0")/../../lib/expect.sh"
export SYSPTD_RUNDIR="$work/run"

# the witness: a bare ftrace instance on the service's clock
mkdir "$inst" || { bad "cannot make $inst"; finish; }
echo mono >"$inst/trace_clock"
echo 16384 >"$inst/buffer_size_kb"
echo 1 >"$inst/events/sched/sched_waking/enable"
echo 1 >"$inst/events/sched/sched_wakeup_new/enable"

mkdir -m 700 "$work/inc"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# the hogs keep tasks runnable at every instant, the window start too
"$BIN" record --name "rtruth-$$" --offcpu --window 1s -o "$work/inc" -- \
	sh -c '"$1" latency 1.6 & "$1" zombies 4 300; wait' sh "$PROG" </dev/null \
	>"$work/out" 2>"$work/err"
rc=$?
echo 0 >"$inst/tracing_on"
inc=$(find "$work/inc" -name 'incident-*.db' | head -n 1)
[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "record: exit $rc"; cat "$work/err" >&2; finish; }
[ -n "${SPTD_TEST_KEEP:-}" ] && cp "$inc" "$SPTD_TEST_KEEP"
lost=$(cat "$inst/per_cpu"/cpu*/stats 2>/dev/null | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
[ "$lost" = 0 ] || { skipped="$skipped script(the-bare-instance-lost-$lost-events)"; }
ws=$(q "$inc" "SELECT value FROM meta WHERE key = 'window_start'")
we=$(q "$inc" "SELECT value FROM meta WHERE key = 'window_end'")
# a record the kernel did not give whole (another test's storm wrapped the
# rings, or stopped tracing) is no ground for these checks: said, not failed
gapped=$(q "$inc" "SELECT coalesce(sum(dur), 0) * 4 > ($we - $ws) * (SELECT value FROM meta WHERE key = 'cpus') FROM gap")
if [ "$gapped" = 1 ]; then
	"$BIN" query "$inc" "SELECT cpu, ts, dur, reason FROM gap" >&2
	skipped="$skipped all(the-incident's-sched-record-has-gaps-over-a-quarter-of-the-window)"
	finish
fi

# ---- 7: script's wakings happened -----------------------------------------
"$BIN" script "$inc" >"$work/script" 2>"$work/script.err" || bad "script: $(cat "$work/script.err")"
# "wakee-pid microseconds" of each waking line, then of the witness
awk '/ sched:sched_waking: / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\.[0-9]+:$/) { split(substr($i, 1, length($i) - 1), p, ".");
				us = p[1] * 1000000 + int(p[2] / 1000) }
			if ($i ~ /^pid=/) pid = substr($i, 5)
		}
		print pid, us }' "$work/script" >"$work/lines"
awk '/ sched_waking: | sched_wakeup_new: / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\.[0-9]+:$/) { split(substr($i, 1, length($i) - 1), p, ".");
				us = p[1] * 1000000 + p[2] }
			if ($i ~ /^pid=/) pid = substr($i, 5)
		}
		print pid, us }' "$inst/trace" >"$work/seen"
nlines=$(wc -l <"$work/lines")
echo "script prints $nlines wakings; the bare instance saw $(wc -l <"$work/seen")"
[ "$nlines" -ge 10 ] && ok || bad "script printed $nlines wakings in a 1 s window"
if [ "$lost" = 0 ]; then
	# one pass over both lists, sorted by pid then time: a line matches
	# the bare event of its pid nearest before or after it
	phantom=$( { awk '{ print $1, $2, "L" }' "$work/lines"; awk '{ print $1, $2, "S" }' "$work/seen"; } |
		sort -k1,1n -k2,2n -k3,3r | awk '
		function unmatched(k) { bad++; if (bad <= 5) print "pid " pend_pid[k] " at " pend_us[k] " us" > "/dev/stderr" }
		$1 != pid { for (k = 0; k < np; k++) unmatched(k); np = 0; pid = $1; last = "" }
		$3 == "S" { for (k = 0; k < np; k++) if ($2 - pend_us[k] > 20) unmatched(k); np = 0; last = $2; next }
		{ if (last != "" && $2 - last <= 20) next; pend_pid[np] = $1; pend_us[np] = $2; np++ }
		END { for (k = 0; k < np; k++) unmatched(k); print bad + 0 }')
	# a few: the two instances' times of one event disagree by up to ~40 us
	# for some (seen for ptrace-stopped tasks on this VM: 50 of 19660
	# unmatched at 20 us, while each pid's count of wakings was equal)
	[ $((phantom * 200)) -le "$nlines" ] && ok || bad "script prints $phantom of its $nlines sched_waking lines that no waking matches (over 0.5 %; the first above; window start $ws)"
fi
atstart=$(grep -c " sched:sched_waking: " "$work/script" | head -n 1)
edge=$(awk -v ws="$ws" '/ sched:sched_waking: / { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
		split(substr($i, 1, length($i) - 1), p, "."); if (p[1] * 1000000000 + p[2] == ws) n++ } }
	END { print n + 0 }' "$work/script")
[ "$edge" = 0 ] && ok || bad "script prints $edge of its $atstart wakings at exactly the window start"

# ---- 8: offcpu ranks no zombie time ---------------------------------------
"$BIN" query "$inc" --report offcpu --format csv >"$work/offcpu" 2>"$work/offcpu.err" ||
	bad "report offcpu: $(cat "$work/offcpu.err")"
children=$(awk '$1 == "child" { print $2 }' "$work/out")
[ "$(echo "$children" | wc -w)" = 4 ] && ok || bad "the program logged children '$children'"
zombies=0
for c in $children; do
	# the witness: the program held the child unreaped 300 ms (its log);
	# the incident has its zombie row
	z=$(q "$inc" "SELECT count(*) FROM thread_state s JOIN thread t USING (utid) WHERE t.tid = $c AND s.state = 'Z' AND s.dur >= 200000000")
	zombies=$((zombies + z))
	grep -q "\[$c\]" "$work/offcpu" && bad "offcpu ranks child $c, which never blocked (it exited at once; a zombie for 300 ms): $(grep "\[$c\]" "$work/offcpu" | head -n 2)" || ok
done
[ "$zombies" -ge 1 ] && ok || bad "no child has a zombie row of 200+ ms: the test did not make one"
ranked=$(grep -c '^[^#].*,[0-9]*,[0-9]*,[0-9]*$' "$work/offcpu")
[ "$ranked" -ge 1 ] && ok || bad "offcpu ranks nothing: $(head -n 8 "$work/offcpu")"
gone=$(grep -c ',Z,\|,X,' "$work/offcpu")
[ "$gone" = 0 ] && ok || bad "offcpu ranks $gone rows of state Z or X"

# ---- 9: threads lists the threads that did something ----------------------
"$BIN" query "$inc" --report threads --format csv >"$work/threads" 2>"$work/threads.err" ||
	bad "report threads: $(cat "$work/threads.err")"
"$BIN" query "$inc" --report threads --all-tasks --format csv >"$work/threads_all" 2>"$work/threads.err" ||
	bad "report threads --all-tasks: $(cat "$work/threads.err")"
listed=$(grep -c '^[0-9]' "$work/threads")
all=$(grep -c '^[0-9]' "$work/threads_all")
nthreads=$(q "$inc" "SELECT count(*) FROM thread")
echo "threads: $listed listed, $all with --all-tasks, $nthreads in the incident"
[ "$all" = "$nthreads" ] && ok || bad "--all-tasks lists $all threads, the incident has $nthreads"
[ "$listed" -ge 1 ] && [ "$listed" -lt "$all" ] && ok ||
	bad "threads lists $listed of $all (idle tasks that did nothing are listed, or nothing is)"
# each listed thread, checked against the tables: it ran, changed state,
# woke another, or was sampled in the window
utids=$(awk -F, '/^[0-9]/ { printf "%s%s", n++ ? "," : "", $1 }' "$work/threads")
idle=$(q "$inc" "SELECT count(*) FROM thread th CROSS JOIN (SELECT $ws AS ws, $we AS we) w WHERE th.utid IN (${utids:-NULL}) AND NOT EXISTS (SELECT 1 FROM sched_slice s WHERE s.utid = th.utid) AND NOT EXISTS (SELECT 1 FROM thread_state s WHERE s.utid = th.utid AND (s.ts > w.ws OR s.ts + s.dur < w.we)) AND NOT EXISTS (SELECT 1 FROM thread_state s WHERE s.waker_utid = th.utid) AND NOT EXISTS (SELECT 1 FROM sample s WHERE s.utid = th.utid)")
[ "$idle" = 0 ] && ok || bad "threads lists $idle threads that did nothing in the window"
# the program's main thread ran: it is listed
main=$(q "$inc" "SELECT utid FROM thread t JOIN process p USING (upid) WHERE p.name = 'sptd_truth_prog' ORDER BY utid LIMIT 1")
[ -n "$main" ] && awk -F, -v u="$main" '$1 == u { f = 1 } END { exit !f }' "$work/threads" && ok ||
	bad "threads does not list the program (utid '$main')"
finish
