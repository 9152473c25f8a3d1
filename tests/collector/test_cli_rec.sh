#!/bin/sh
# test_cli_rec.sh — issue 14, items 1-5 at the command line: recording as a
# perf / trace-cmd user expects it.  Runs the real service (root: ftrace and
# perf events), each item's exit status and output, and what the incidents
# it writes hold.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}

work=$(mktemp -d /tmp/sptd-clirec-XXXXXX)
# a recorder of its own (--name): the suite runs beside the machine's service
recorder=clirec$$
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../lib/expect.sh"

# ---- 1: a duration needs its unit (a bare number was nanoseconds)
for arg in "--window 10" "--post 5" "--cooldown 100" "--trigger timer=200" "--trigger irq,min=50" \
           "--trigger latency=3"; do
	# shellcheck disable=SC2086
	expect 2 "unit: ns, us, ms or s" -- "$BIN" $arg --once -o "$work"
done
expect 2 "unit: ns, us, ms or s" -- "$BIN" query "$work/none.db" --timeout 30 "select 1"
expect 2 "bad duration '10' for --window" -- "$BIN" --window 10
[ ! -e "$work/incident-"* ] 2>/dev/null && ok || bad "a refused command line wrote an incident"

if [ "$(id -u)" != 0 ]; then
	echo "$passed passed, $failed failed; the recording parts need root: skipped"
	[ "$failed" = 0 ] || exit 1
	exit 77
fi

# count_incidents DIR
count_incidents() { find "$1" -maxdepth 1 -name 'incident-*.db' | wc -l; }

# ---- 2: Ctrl+C in a terminal writes the last window; a service discards
if command -v script >/dev/null 2>&1; then
	# a real terminal (script(1) gives the run a pty and makes it the
	# foreground job); ^C typed into it is the terminal's SIGINT. script
	# runs the command through $SHELL: exec, so that the shell (dash, when
	# SHELL is /bin/sh as under CI) is not a second process in the
	# foreground group that dies of the same ^C and makes script say 130
	mkdir -m 700 "$work/tty"
	# the pipe stays open until the recorder is gone (at most 4 s)
	(wait_for "$work/tty.out" "armed:" 30; sleep 0.3; printf '\003'
	 sleep 0.2; wait_gone " -o $work/tty\$" 4) |
		SHELL=/bin/sh script -qfec "exec $BIN --name $recorder --window 20ms -o $work/tty" /dev/null >"$work/tty.out" 2>&1
	rc=$?
	inc=$(find "$work/tty" -name 'incident-*.db')
	if [ "$rc" = 0 ] && [ "$(count_incidents "$work/tty")" = 1 ]; then ok; else
		bad "Ctrl+C in a terminal: exit $rc, $(count_incidents "$work/tty") incidents"; cat "$work/tty.out" >&2
	fi
	if [ -n "$inc" ]; then
		[ "$(q "$inc" "SELECT kind || ' ' || detail FROM trigger")" = "stop SIGINT from the terminal (Ctrl+C)" ] &&
			ok || bad "the final incident's trigger: $(q "$inc" "SELECT kind || ' ' || detail FROM trigger")"
		# the last window: 20 ms ending at the signal, with every CPU's
		# scheduling in it
		[ "$(q "$inc" "SELECT (SELECT value FROM meta WHERE key='window_end') - (SELECT value FROM meta WHERE key='window_start')")" = 20000000 ] &&
			ok || bad "the final incident's window is not 20 ms"
		[ "$(q "$inc" "SELECT (SELECT value FROM meta WHERE key='window_end') = (SELECT ts FROM trigger)")" = 1 ] &&
			ok || bad "the final incident does not end at the signal"
		[ "$(q "$inc" "SELECT count(DISTINCT cpu) FROM sched_slice")" = "$(nproc)" ] &&
			ok || bad "the final incident lacks some CPU's scheduling"
		grep -q "stopping on SIGINT: writing the last window" "$work/tty.out" && ok || bad "Ctrl+C was not said"
	fi
	# --on-stop discard in a terminal: nothing written
	mkdir -m 700 "$work/tty2"
	(wait_for "$work/tty2.out" "armed:" 30; sleep 0.3; printf '\003'
	 sleep 0.2; wait_gone " -o $work/tty2\$" 4) |
		SHELL=/bin/sh script -qfec "exec $BIN --name $recorder --window 20ms --on-stop discard -o $work/tty2" /dev/null >"$work/tty2.out" 2>&1
	rc=$?
	[ "$rc" = 0 ] && [ "$(count_incidents "$work/tty2")" = 0 ] && ok ||
		bad "--on-stop discard in a terminal: exit $rc, $(count_incidents "$work/tty2") incidents"
else
	skipped="$skipped ctrl-c-in-a-terminal(no script(1))"
fi
# no terminal (a service): SIGINT and SIGTERM stop without writing
mkdir -m 700 "$work/svc"
"$BIN" --name "$recorder" --window 20ms -o "$work/svc" </dev/null >"$work/svc.out" 2>&1 &
pid=$!
wait_for "$work/svc.out" "armed:" 30
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 0 ] && [ "$(count_incidents "$work/svc")" = 0 ] && ok ||
	bad "SIGINT without a terminal: exit $rc, $(count_incidents "$work/svc") incidents"
# ... unless --on-stop save
"$BIN" --name "$recorder" --window 20ms --on-stop save -o "$work/svc" </dev/null >"$work/svc.out" 2>&1 &
pid=$!
wait_for "$work/svc.out" "armed:" 30
kill -TERM "$pid"
wait "$pid"
rc=$?
inc=$(find "$work/svc" -name 'incident-*.db')
[ "$rc" = 0 ] && [ "$(count_incidents "$work/svc")" = 1 ] && ok ||
	bad "--on-stop save, SIGTERM: exit $rc, $(count_incidents "$work/svc") incidents"
[ -n "$inc" ] && [ "$(q "$inc" "SELECT detail FROM trigger")" = "SIGTERM from pid $$" ] && ok ||
	bad "--on-stop save: trigger '$(q "$inc" "SELECT detail FROM trigger")'"
expect 2 "unknown --on-stop 'maybe' (save or discard)" -- "$BIN" --on-stop maybe

# ---- 3: record -- CMD, -C LIST, -p PID (at 10 kHz: the checks count samples
# of processes that share a CPU with whatever else runs)
# busy SECONDS: a shell spinning on a CPU (its own pid is the process)
busy='i=0; end=$(($(date +%s%N) + $1 * 1000000)); while [ "$(date +%s%N)" -lt "$end" ]; do i=$((i+1)); done'
mkdir -m 700 "$work/cmd"
"$BIN" record --name "$recorder" --freq 10000 --window 50ms -o "$work/cmd" -- sh -c "$busy"'; exit 3' sh 300 </dev/null >"$work/cmd.out" 2>"$work/cmd.err"
rc=$?
inc=$(find "$work/cmd" -name 'incident-*.db')
[ "$rc" = 3 ] && [ "$(count_incidents "$work/cmd")" = 1 ] && ok ||
	{ bad "record -- CMD: exit $rc (want CMD's 3), $(count_incidents "$work/cmd") incidents"; cat "$work/cmd.err" >&2; }
if [ -n "$inc" ]; then
	detail=$(q "$inc" "SELECT kind || ' ' || detail FROM trigger")
	cpid=$(echo "$detail" | sed -n 's/^exit sh (pid \([0-9]*\)) exited with status 3$/\1/p')
	[ -n "$cpid" ] && ok || bad "record -- CMD: trigger '$detail'"
	# CMD spun until it exited: its last 50 ms are in the incident, on a
	# CPU and in the samples
	[ "$(q "$inc" "SELECT count(*) > 0 FROM sched_slice s JOIN thread t USING (utid) WHERE t.tid = ${cpid:-0}")" = 1 ] &&
		ok || bad "record -- CMD: CMD never ran in its own incident"
	[ "$(q "$inc" "SELECT count(*) > 5 FROM sample s JOIN thread t USING (utid) WHERE t.tid = ${cpid:-0}")" = 1 ] &&
		ok || bad "record -- CMD: CMD has (almost) no samples in its incident"
	[ "$(q "$inc" "SELECT value FROM meta WHERE key = 'window_end'")" = "$(q "$inc" "SELECT ts FROM trigger")" ] &&
		ok || bad "record -- CMD: the incident does not end at CMD's exit"
fi
# killed by a signal: 128+N, as a shell says
"$BIN" record --name "$recorder" --window 20ms -o "$work/cmd" -- sh -c 'kill -TERM $$' </dev/null >/dev/null 2>&1
rc=$?
[ "$rc" = 143 ] && ok || bad "record -- CMD killed by SIGTERM: exit $rc, want 143"
expect 127 "cannot run '/nonexistent/cmd': No such file" -- "$BIN" record --name "$recorder" -o "$work/cmd" -- /nonexistent/cmd
# CMD is timeout(1): when its time is up it sends SIGCONT to its group,
# and ptrace then reports a stop that is no group stop; sysptd held CMD
# there for good (this hung until killed).  Its status is timeout's, 124.
mkdir -m 700 "$work/tmo"
timeout -s KILL 20 "$BIN" record --name "$recorder" --window 20ms -o "$work/tmo" -- timeout 0.3 sleep 5 \
	</dev/null >/dev/null 2>"$work/tmo.err"
rc=$?
[ "$rc" = 124 ] && [ "$(count_incidents "$work/tmo")" = 1 ] && ok ||
	{ bad "record -- timeout 0.3 sleep 5: exit $rc (want 124; 137: it hung), $(count_incidents "$work/tmo") incidents"; cat "$work/tmo.err" >&2; }
pkill -KILL -f '^sleep 5$' 2>/dev/null
# a real group stop stays one: CMD stopped by SIGSTOP stays stopped until
# SIGCONT, then goes on to its end
mkdir -m 700 "$work/gstop"
timeout -s KILL 20 "$BIN" record --name "$recorder" --window 20ms -o "$work/gstop" -- sh -c 'kill -STOP $$; echo resumed' \
	</dev/null >"$work/gstop.out" 2>"$work/gstop.err" &
gs=$!
gpid=""
i=0
while [ -z "$gpid" ] && [ $i -lt 100 ]; do
	gpid=$(pgrep -f '^sh -c kill -STOP' | head -n 1)
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
st=$(awk '{ print $3 }' "/proc/${gpid:-0}/stat" 2>/dev/null)
case "$st" in
[Tt]) ok ;;
*) bad "CMD stopped by SIGSTOP is in state '$st', want stopped" ;;
esac
[ -n "$gpid" ] && kill -CONT "$gpid"
wait "$gs"
rc=$?
[ "$rc" = 0 ] && grep -q "^resumed$" "$work/gstop.out" && ok ||
	{ bad "CMD after SIGSTOP/SIGCONT: exit $rc, output $(cat "$work/gstop.out")"; cat "$work/gstop.err" >&2; }
# --no-exit-watch: CMD is not ptrace-seized; the incident and the status
# are the same
mkdir -m 700 "$work/nw"
if command -v strace >/dev/null 2>&1; then
	"$BIN" record --name "$recorder" --no-exit-watch --window 20ms -o "$work/nw" -- strace -f -o /dev/null sh -c 'exit 5' \
		</dev/null >/dev/null 2>"$work/nw.err"
	rc=$?
	[ "$rc" = 5 ] && [ "$(count_incidents "$work/nw")" = 1 ] && ok ||
		{ bad "--no-exit-watch: exit $rc, $(count_incidents "$work/nw") incidents"; cat "$work/nw.err" >&2; }
fi
[ "$(count_incidents "$work/cmd")" = 2 ] && ok || bad "a CMD that cannot run wrote an incident"
expect 2 "a command to run goes after --" -- "$BIN" record -o "$work/cmd" ls

# -C: only CPU 1 is recorded (a machine with one CPU has nothing to leave out)
if [ "$(nproc)" -ge 2 ]; then
	mkdir -m 700 "$work/cpu"
	# CPU 0 is kept busy meanwhile: left out all the same
	taskset -c 0 sh -c "$busy" sh 3000 & spin0=$!
	"$BIN" record --name "$recorder" --freq 10000 -C 1 --window 50ms -o "$work/cpu" -- taskset -c 1 sh -c "$busy" sh 200 </dev/null >/dev/null 2>"$work/cpu.err"
	rc=$?
	kill "$spin0" 2>/dev/null
	inc=$(find "$work/cpu" -name 'incident-*.db')
	[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "-C 1: exit $rc"; cat "$work/cpu.err" >&2; }
	if [ -n "$inc" ]; then
		[ "$(q "$inc" "SELECT group_concat(DISTINCT cpu) FROM sched_slice")" = 1 ] && ok ||
			bad "-C 1: sched slices on CPUs $(q "$inc" "SELECT group_concat(DISTINCT cpu) FROM sched_slice")"
		[ "$(q "$inc" "SELECT count(*) FROM sample WHERE cpu <> 1")" = 0 ] &&
		[ "$(q "$inc" "SELECT count(*) > 10 FROM sample WHERE cpu = 1")" = 1 ] && ok ||
			bad "-C 1: samples outside CPU 1, or none on it"
		# CPU 0 was left out, not lost: no gap claims it lacked events
		[ "$(q "$inc" "SELECT count(*) FROM gap WHERE cpu = 0")" = 0 ] && ok ||
			bad "-C 1: gaps on CPU 0: $(q "$inc" "SELECT group_concat(reason) FROM gap WHERE cpu = 0")"
		[ "$(q "$inc" "SELECT value FROM meta WHERE key = 'cpu_list'")" = 1 ] && ok || bad "-C 1: meta cpu_list"
		# and CPU 1's record is whole: every slice ends where the next begins
		[ "$(q "$inc" "SELECT count(*) FROM (SELECT ts, dur, lead(ts) OVER (ORDER BY ts) AS nx FROM sched_slice WHERE cpu = 1) WHERE nx IS NOT NULL AND ts + dur <> nx")" = 0 ] &&
			ok || bad "-C 1: CPU 1's slices do not tile"
	fi
	expect 2 "CPU 4096 is not online" -- "$BIN" record --name "$recorder" -C 4096 -o "$work/cpu" -- true
	expect 2 "bad CPU list 'x'" -- "$BIN" -C x
else
	skipped="$skipped -C(one CPU)"
fi

# -p: two spinning processes, only one kept; scheduling stays whole
mkdir -m 700 "$work/pid"
# (30 s, killed below: arming took over 2 s on a loaded machine, and 3 s
# spinners were gone before the window)
sh -c "$busy" sh 30000 & keep=$!
sh -c "$busy" sh 30000 & other=$!
sleep 0.2
"$BIN" record --name "$recorder" --freq 10000 -p "$keep" --window 100ms -o "$work/pid" -- sleep 0.5 </dev/null >/dev/null 2>"$work/pid.err"
rc=$?
inc=$(find "$work/pid" -name 'incident-*.db')
[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "-p: exit $rc"; cat "$work/pid.err" >&2; }
if [ -n "$inc" ]; then
	[ "$(q "$inc" "SELECT count(*) > 10 FROM sample s JOIN thread t USING (utid) JOIN process p USING (upid) WHERE p.pid = $keep")" = 1 ] &&
		ok || bad "-p: the kept process has (almost) no samples"
	[ "$(q "$inc" "SELECT count(*) FROM sample s LEFT JOIN thread t USING (utid) LEFT JOIN process p USING (upid) WHERE p.pid IS NOT $keep")" = 0 ] &&
		ok || bad "-p: samples of other processes kept"
	[ "$(q "$inc" "SELECT count(*) > 0 FROM sched_slice s JOIN thread t USING (utid) WHERE t.tid = $other")" = 1 ] &&
		ok || bad "-p: the other process's scheduling was dropped"
	[ "$(q "$inc" "SELECT value FROM meta WHERE key = 'pid_filter'")" = "$keep" ] && ok || bad "-p: meta pid_filter"
	# and it holds after `sysptd decode` re-derives the incident
	"$BIN" decode "$inc" >/dev/null 2>&1
	[ "$(q "$inc" "SELECT count(*) FROM sample s LEFT JOIN thread t USING (utid) LEFT JOIN process p USING (upid) WHERE p.pid IS NOT $keep")" = 0 ] &&
		ok || bad "-p: decode brought other processes' samples back"
fi
kill "$keep" "$other" 2>/dev/null
expect 2 "no such process" -- "$BIN" -p 4000000 -o "$work/pid"
expect 2 "bad --pid 'x1'" -- "$BIN" -p x1

# ---- 4: -e SYS:EVENT adds tracepoints; list-events lists them
mkdir -m 700 "$work/ev"
"$BIN" record --name "$recorder" -e sched:sched_process_exec --window 500ms -o "$work/ev" -- \
	sh -c '/bin/true; /bin/echo x >/dev/null; exit 0' </dev/null >/dev/null 2>"$work/ev.err"
rc=$?
inc=$(find "$work/ev" -name 'incident-*.db')
[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "-e: exit $rc"; cat "$work/ev.err" >&2; }
if [ -n "$inc" ]; then
	# both execs, each with its path, and the pid in its args is the
	# thread the row is attributed to
	got=$(q "$inc" "SELECT group_concat(json_extract(args, '\$.filename'), ' ') FROM (SELECT args FROM ftrace_event WHERE name = 'sched:sched_process_exec' AND json_extract(args, '\$.filename') IN ('/bin/true', '/bin/echo') ORDER BY ts)")
	[ "$got" = "/bin/true /bin/echo" ] && ok || bad "-e: exec rows '$got', want '/bin/true /bin/echo'"
	[ "$(q "$inc" "SELECT count(*) FROM ftrace_event f JOIN thread t USING (utid) WHERE f.name = 'sched:sched_process_exec' AND t.tid <> json_extract(f.args, '\$.pid')")" = 0 ] &&
	[ "$(q "$inc" "SELECT count(*) FROM ftrace_event WHERE utid IS NULL")" = 0 ] && ok ||
		bad "-e: an exec row attributed to another thread than the one that exec'd"
	# inside the window
	[ "$(q "$inc" "SELECT count(*) FROM ftrace_event WHERE ts < (SELECT value FROM meta WHERE key = 'window_start') OR ts > (SELECT value FROM meta WHERE key = 'window_end')")" = 0 ] &&
		ok || bad "-e: rows outside the window"
	expect 0 "sched:sched_process_exec: filename=/bin/echo pid=" -- "$BIN" script "$inc" --event ftrace
	expect 0 "ftrace events" -- "$BIN" export "$inc" -o "$work/ev.pftrace"
	tp=${SPTD_TRACE_PROCESSOR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/tools/perfetto/trace_processor}
	if [ -x "$tp" ]; then
		printf '%s\n' "SELECT a.display_value FROM ftrace_event e JOIN args a USING (arg_set_id) WHERE e.name = 'sched_process_exec' AND a.key = 'filename' ORDER BY e.ts;" >"$work/tp.sql"
		"$tp" -q "$work/tp.sql" "$work/ev.pftrace" >"$work/tp.out" 2>/dev/null
		grep -q '"/bin/true"' "$work/tp.out" && grep -q '"/bin/echo"' "$work/tp.out" && ok ||
			{ bad "trace_processor does not show the exec events"; cat "$work/tp.out" >&2; }
	else
		skipped="$skipped trace_processor(absent)"
	fi
fi
# the kernel applies the filter: only /bin/true's exec is kept
mkdir -m 700 "$work/evf"
"$BIN" record --name "$recorder" -e 'sched:sched_process_exec,filter=filename ~ "*true"' --window 500ms -o "$work/evf" -- \
	sh -c '/bin/true; /bin/echo x >/dev/null' </dev/null >/dev/null 2>"$work/evf.err"
inc=$(find "$work/evf" -name 'incident-*.db')
[ -n "$inc" ] && [ "$(q "$inc" "SELECT group_concat(json_extract(args, '\$.filename')) FROM ftrace_event")" = /bin/true ] &&
	ok || { bad "-e with a filter: $(q "$inc" "SELECT group_concat(args) FROM ftrace_event")"; cat "$work/evf.err" >&2; }
expect 2 "no tracepoint nope:nothing" -- "$BIN" record --name "$recorder" -e nope:nothing -o "$work/evf" -- true
expect 2 "the kernel refused the filter" -- "$BIN" record --name "$recorder" -e 'sched:sched_process_exec,filter=((' -o "$work/evf" -- true
expect 2 "expected SYS:EVENT" -- "$BIN" -e sched_process_exec
expect 0 "^sched:sched_process_exec$" -- "$BIN" list-events 'sched:sched_process_e*'
grep -q "^sched:sched_switch$" "$work/out" && bad "list-events: the glob let sched_switch through" || ok
expect 0 "^sched:sched_process_exec$" -- "$BIN" list-events '*process_exec'
expect 0 "no tracepoint matches" -- "$BIN" list-events 'nope:*'
if id nobody >/dev/null 2>&1; then
	expect 4 "tracefs is root's" -- su nobody -s /bin/sh -c "$BIN list-events"
fi

# ---- 5: a second recorder beside the service with --name
tracefs=/sys/kernel/tracing
[ -d "$tracefs/instances" ] || tracefs=/sys/kernel/debug/tracing
mkdir -m 700 "$work/main" "$work/adhoc"
# The default service: this machine's own when one records (then what
# would disturb it, a snapshot into its directory, is not done), else one
# of the test's (no other test starts a default service: ctest's
# RESOURCE_LOCK sysptd_default keeps the few that do apart)
# default_runs: a default sysptd holds its lock (recording or not: status
# exits 1 while its ftrace instance is gone, and still names its pid)
default_runs() { "$BIN" status 2>/dev/null | grep -q '^pid [0-9]'; }
# status_default: `status` names the default service "-" (exit 0 for the
# test's own; the machine's may be between instances: its output only)
status_default() {
	if [ -n "$main" ]; then expect 0 "^name -" -- "$BIN" status
	else "$BIN" status 2>/dev/null | grep -q '^name -' && ok || bad "status: no '^name -'"; fi
}
main=""
if default_runs; then
	echo "note: a default sysptd service records on this machine: part 5 runs beside it" \
	     "without a snapshot of it" >&2
else
	"$BIN" --window 20ms --trigger timer=3600s -o "$work/main" </dev/null >"$work/main.out" 2>&1 &
	main=$!
	wait_for "$work/main.out" "armed:" 30 || bad "the service did not arm"
fi
expect 7 "run beside it with --name NAME" -- "$BIN" --window 20ms -o "$work/adhoc"
"$BIN" --name adhoc --window 20ms -o "$work/adhoc" </dev/null >"$work/adhoc.out" 2>&1 &
adhoc=$!
wait_for "$work/adhoc.out" "armed:" 30 || bad "the named recorder did not arm beside the service"
[ -d "$tracefs/instances/sysptd" ] && [ -d "$tracefs/instances/sysptd-adhoc" ] && ok ||
	bad "not two ftrace instances: $(ls "$tracefs/instances")"
expect 7 "a sysptd named 'adhoc' is already recording" -- "$BIN" --name adhoc -o "$work/tty"
expect 2 "bad --name '../x'" -- "$BIN" --name ../x
expect 0 "^name adhoc" -- "$BIN" status --name adhoc
status_default
# each snapshot reaches its own recorder and writes into its own directory
a=$("$BIN" snapshot --name adhoc)
case "$a" in "$work/adhoc/incident-"*.db) ok ;; *) bad "snapshot --name adhoc: '$a'" ;; esac
m=""
if [ -n "$main" ]; then
	m=$("$BIN" snapshot)
	case "$m" in "$work/main/incident-"*.db) ok ;; *) bad "snapshot: '$m'" ;; esac
fi
for inc in "$a" "$m"; do
	[ -f "$inc" ] || continue
	# both hold every CPU's scheduling, from their own instance
	[ "$(q "$inc" "SELECT count(DISTINCT cpu) FROM sched_slice")" = "$(nproc)" ] && ok ||
		bad "$inc lacks some CPU's scheduling"
done
expect 1 "no sysptd named 'nope' is running" -- "$BIN" snapshot --name nope
kill -TERM "$adhoc"
wait "$adhoc"
[ -d "$tracefs/instances/sysptd-adhoc" ] && bad "the named instance outlived its recorder" || ok
[ -d "$tracefs/instances/sysptd" ] && ok || bad "stopping the named recorder removed the service's instance"
status_default
if [ -n "$main" ]; then
	m2=$("$BIN" snapshot)
	[ -f "$m2" ] && ok || bad "the service stopped answering after the named recorder stopped: '$m2'"
	kill -TERM "$main"
	wait "$main"
fi

# `sysptd doctor` measures with an ftrace instance of its own, which no
# service name can reach: a recorder named "doctor" (instance sysptd-doctor)
# kept running through it.  The doctor once used "sysptd-doctor" and removed
# that recorder's live instance as a stale one.
mkdir -m 700 "$work/doc"
"$BIN" --name doctor --window 20ms --trigger timer=3600s -o "$work/doc" </dev/null \
	>"$work/doc.out" 2>&1 &
doc=$!
wait_for "$work/doc.out" "armed:" 30 || bad "the recorder named doctor did not arm"
expect 0 "cost per event .*about [0-9.]* us" -- "$BIN" doctor
[ -d "$tracefs/instances/sysptd-doctor" ] && ok ||
	bad "sysptd doctor removed the instance of the recorder named doctor"
d=$("$BIN" snapshot --name doctor)
[ -f "$d" ] && [ "$(q "$d" "SELECT count(DISTINCT cpu) FROM sched_slice")" = "$(nproc)" ] && ok ||
	bad "the recorder named doctor lost its scheduling after sysptd doctor: '$d'"
kill -TERM "$doc"
wait "$doc"
# two doctors at once take turns (a lock in the run directory), each
# measuring with a live instance
"$BIN" doctor >"$work/doc1" 2>&1 &
d1=$!
"$BIN" doctor >"$work/doc2" 2>&1
wait "$d1"
grep -q "^info  cost per event .*about" "$work/doc1" && grep -q "^info  cost per event .*about" \
	"$work/doc2" && ok || bad "two doctors at once: $(grep 'cost per event' "$work/doc1" "$work/doc2")"
[ -d "$tracefs/instances/sysptd_doctor" ] && bad "the doctor's instance outlived it" || ok
# ... but never waits for ever: a doctor stopped while it held the lock
# costs the next one 10 s and that measurement, not a hang
mkdir -m 700 "$work/dlock"
if command -v flock >/dev/null && command -v pkill >/dev/null; then
	# held by flock itself (-o: not by its sleep) until the doctor is done,
	# however long the doctor's other checks take (ASan)
	flock -o "$work/dlock/.doctor.lock" sleep 300 &
	holder=$!
	n=0
	while flock -n "$work/dlock/.doctor.lock" true 2>/dev/null && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	SYSPTD_RUNDIR="$work/dlock" timeout 120 "$BIN" doctor >"$work/doc3" 2>&1
	grep -q "^warn  cost per event .*not measured: another sysptd doctor held .*/.doctor.lock for 10 s" \
		"$work/doc3" && ok || bad "a held doctor lock: $(grep 'cost per event' "$work/doc3")"
	pkill -P "$holder" sleep 2>/dev/null
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
fi

# a NAME that is also the name of one of the service's own files: the named
# recorder's directory lives apart (RUNDIR/name/NAME), so the service still
# takes its lock and socket beside a recorder named "lock" or "control"
mkdir -m 700 "$work/nlock" "$work/nctl" "$work/nmain"
"$BIN" --name lock --window 20ms --trigger timer=3600s -o "$work/nlock" </dev/null \
	>"$work/nlock.out" 2>&1 &
nlock=$!
"$BIN" --name control --window 20ms --trigger timer=3600s -o "$work/nctl" </dev/null \
	>"$work/nctl.out" 2>&1 &
nctl=$!
wait_for "$work/nlock.out" "armed:" 30 && wait_for "$work/nctl.out" "armed:" 30 ||
	bad "the recorders named lock and control did not arm"
main=""
if ! default_runs; then
	"$BIN" --window 20ms --trigger timer=3600s -o "$work/nmain" </dev/null >"$work/nmain.out" 2>&1 &
	main=$!
	wait_for "$work/nmain.out" "armed:" 30 && ok ||
		bad "the service did not arm beside recorders named lock and control: $(cat "$work/nmain.out")"
fi
expect 0 "^name lock" -- "$BIN" status --name lock
expect 0 "^name control" -- "$BIN" status --name control
status_default
kill -TERM $main "$nlock" "$nctl"
wait $main "$nlock" "$nctl"

# ---- 8: the open-file limit.  Recording holds descriptors per CPU (sample
# and off-CPU events, two per irq or latency trigger): a soft limit of
# 1024 is too few on a machine of a few hundred CPUs.  Here a soft limit
# of 16 stands for that: sysptd raises it within the hard limit, and CMD
# gets the one sysptd started with (and none of its descriptors); a hard
# limit too low is refused at once, saying which limit and what to do.
mkdir -m 700 "$work/nofile"
sh -c 'ulimit -Sn 16; exec "$@"' sh "$BIN" record --name "$recorder" --offcpu --trigger irq --trigger latency=50ms \
	--window 20ms -o "$work/nofile" -- sh -c 'ulimit -Sn; ls /proc/self/fd | wc -l' \
	</dev/null >"$work/nofile.out" 2>"$work/nofile.err"
rc=$?
[ "$rc" = 0 ] && [ "$(count_incidents "$work/nofile")" -ge 1 ] && ok ||
	{ bad "record under a soft limit of 16 files: exit $rc"; cat "$work/nofile.err" >&2; }
# CMD's lines: its soft limit, then its descriptors (0-2 and ls's own)
[ "$(grep -v incident- "$work/nofile.out" | tr '\n' ' ')" = "16 4 " ] && ok ||
	bad "CMD under sysptd: limit and descriptors '$(grep -v incident- "$work/nofile.out" | tr '\n' ' ')', want '16 4'"
expect 5 "RLIMIT_NOFILE's hard limit): raise it" -- sh -c 'ulimit -n 40; exec "$@"' sh "$BIN" record --name "$recorder" \
	--trigger irq --window 20ms -o "$work/nofile" -- true
# rings the kernel cannot give (1000 GiB a CPU: it checks the memory
# available before allocating): say how much was asked and what to lower
expect 1 "could not give .* ftrace ring of 1048576000 KiB each .*smaller --buffer" -- \
	"$BIN" record --name "$recorder" --buffer 1000G -o "$work/nofile" -- true

# ---- 9: a PID namespace of its own (a container without --pid=host):
# ftrace names tasks by the machine's pids, perf and /proc by the
# namespace's, so an incident recorded there mixed them up (its thread 1
# was the recorder's shell under the name the host's init has).  Recording
# refuses, saying what to do; the doctor says so too.
expect 0 "^ok  *pid namespace" -- "$BIN" doctor
if command -v unshare >/dev/null && unshare --pid --fork --mount-proc true 2>/dev/null; then
	mkdir -m 700 "$work/pidns"
	expect 5 "PID namespace of its own.*--pid=host" -- unshare --pid --fork --mount-proc \
		"$BIN" record --name "$recorder" --window 20ms -o "$work/pidns" -- true
	[ "$(count_incidents "$work/pidns")" = 0 ] && ok || bad "an incident was written in a PID namespace"
	expect 1 "^no  *pid namespace .*hostPID" -- unshare --pid --fork --mount-proc "$BIN" doctor
else
	skipped="$skipped pid-namespace(no unshare --pid)"
fi

finish
