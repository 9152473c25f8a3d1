#!/bin/sh
# test_exited.sh — issue 27 items 1 and 3, with perf and the program itself
# as second witnesses: what the sampling source says of processes and
# threads that are gone before the capture.
#
# 1. `sysptd record --window 3s -- sh -c 'for ...'` over 40 runs of a
#    20 ms program (exited_prog spin: its time in exitedprog_hot_spin),
#    every run exited before the trigger (the command's end), while `perf
#    record -a -g -e cpu-clock -k mono` (about the same 4 kHz) records the
#    same moment.  The runs are the pids they logged themselves.  Of the program's
#    samples in the incident's window (both sides cut to it, both on
#    CLOCK_MONOTONIC), the samples whose leaf is user code: the share in
#    exitedprog_hot_spin must be perf's within 4 binomial standard
#    deviations of the difference of two shares (sqrt(p(1-p)(1/n1+1/n2)),
#    p pooled) plus 1 point for the two windows' edges (about 1000 samples
#    a side: ~10 points; they agree within 2 here), and at most 10% of them
#    may be unnamed (no symbol, or "[unknown]": about one per run is the
#    first instruction after the exec, ld.so's entry, which has no symbol
#    in its stripped tables, for a live process too).  Before the fix: hot
#    function 0%, nearly all unnamed.
# 4. 20 children forked one after another by a program that is gone before
#    the capture too, each burning 60 ms in exitedprog_prexec_spin, the
#    parent's code, before it execs (then ld.so's work and 1 ms in
#    exitedprog_hot_spin): a child runs its parent's mappings until its
#    exec, and perf names those samples.  Of the children's user-code
#    samples, at least half must be named exitedprog_prexec_spin (60 of
#    some 70 ms of each child's user time is there: seen 80-85 %; a child
#    preempted under load is simply not sampled, which leaves the share
#    alone) and at most 10 % unnamed (as in 1).  Before the fix: 0 in the
#    function, the pre-exec ones unnamed.
# 3. A program whose two threads (one named "t_exitw", one unnamed) slept,
#    unsampled, and exited, then the program itself, before the capture
#    (sysptd --freq 10; a sample already names its process): each thread's
#    row must belong to the process the program's own getpid() names, not
#    to a process of its own, in the incident and (through trace_processor,
#    when present) in the Perfetto export.
#
# Needs root (recording) and perf; exit 77 (skip) with the reason
# otherwise.  Usage: test_exited.sh SYSPTD EXITED_PROG
set -u
BIN=${1:?usage: test_exited.sh SYSPTD EXITED_PROG}
PROG=${2:?usage: test_exited.sh SYSPTD EXITED_PROG}

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (sysptd records as root)"; exit 77; }
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
[ -x "$PROG" ] || { echo "FAIL: $PROG is not built"; exit 1; }

work=$(mktemp -d /var/tmp/sptd-exited-XXXXXX)
chmod 700 "$work"
perfpid=""
cleanup() {
	[ -n "$perfpid" ] && kill "$perfpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
. "$(dirname "$0")/../../lib/expect.sh"
export SYSPTD_RUNDIR="$work/run"
# --name: an ftrace instance, lock and socket of its own, beside any other
# recorder on the machine (other tests, a service)
# the program may be a sanitizer build: no leak checker at its exit
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# ---- 1. exited processes are named as perf names them -----------------------

mkdir -m 700 "$work/inc1"
# perf -a on the same CPU clock at about the same rate, recording until its
# own workload (waiting for a file) ends; -B -N: no build-id collection at
# its end, which it needs not for a report of symbols
perf record -q -B -N -a -g -e cpu-clock -F 3989 -k mono -o "$work/perf.data" -- \
	sh -c "i=0; while [ ! -e '$work/stop' ] && [ \$i -lt 1200 ]; do sleep 0.1; i=\$((i + 1)); done" \
	2>"$work/perf.err" &
perfpid=$!
sleep 1   # perf is recording before the first run
"$BIN" record --name "exited$$" --freq 4000 --window 3s -o "$work/inc1" -- \
	sh -c "for i in \$(seq 40); do '$PROG' spin 20; done >'$work/pids'" </dev/null \
	>"$work/rec1.out" 2>"$work/rec1.err"
rc=$?
: >"$work/stop"
wait "$perfpid" || { bad "perf record failed"; cat "$work/perf.err" >&2; }
perfpid=""
inc=$(find "$work/inc1" -name 'incident-*.db' | head -n 1)
[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "record: exit $rc, no incident"; cat "$work/rec1.err" >&2; finish; }
[ -s "$work/perf.data" ] || { bad "perf record wrote nothing"; cat "$work/perf.err" >&2; finish; }

# the runs, as they logged their own pids (each a single thread)
pids=$(paste -s -d, "$work/pids")
[ "$(wc -l <"$work/pids")" = 40 ] && ok || bad "the runs logged $(wc -l <"$work/pids") pids, not 40"
# The runs' samples whose leaf is user code (from the fork of each on: the
# same pid before and after its exec, as perf counts them; user code is
# what a name was missing for): how many, how many in the hot function,
# how many with no name.
"$BIN" query "$inc" --format csv "
	SELECT count(*), coalesce(sum(y.name = 'exitedprog_hot_spin'), 0),
	       coalesce(sum(y.id IS NULL OR y.name = '[unknown]'), 0)
	FROM sample s JOIN thread t ON t.utid = s.utid JOIN callsite c ON c.id = s.callsite_id
	LEFT JOIN symbol y ON y.id = c.symbol_id LEFT JOIN dso d ON d.id = y.dso_id
	WHERE t.tid IN ($pids) AND (y.id IS NULL AND c.addr >= 0 OR
	                             y.id IS NOT NULL AND d.path <> '[kernel.kallsyms]')" \
	2>"$work/q.err" | tail -n 1 | tr ',' ' ' >"$work/sysptd.txt" ||
	{ bad "sysptd query"; cat "$work/q.err" >&2; }
read -r sn shot sunk <"$work/sysptd.txt"
# perf: the same, over exactly the incident's window
ws=$(q "$inc" "SELECT value FROM meta WHERE key = 'window_start'")
we=$(q "$inc" "SELECT value FROM meta WHERE key = 'window_end'")
span=$(awk -v a="$ws" -v b="$we" 'BEGIN { printf "%d.%09d,%d.%09d", a / 1e9, a % 1e9, b / 1e9, b % 1e9 }')
# (each sample's leaf, by pid: perf report --pid with a list of exited
# pids drops some of their samples in perf 6.1)
perf script -i "$work/perf.data" -F pid,ip,sym,dso -G --time "$span" 2>"$work/perfscript.err" |
	awk -v list="$pids" 'BEGIN { n = split(list, a, ","); for (i = 1; i <= n; i++) want[a[i]] = 1 }
	want[$1] && $NF != "([kernel.kallsyms])" { n_user++
		if ($3 == "exitedprog_hot_spin") hot++
		if ($3 == "[unknown]") unk++ }
	END { print n_user + 0, hot + 0, unk + 0 }' >"$work/perf.txt"
read -r pn phot punk <"$work/perf.txt"
echo "sysptd: $sn user-code samples of the runs, $shot in exitedprog_hot_spin, $sunk unnamed"
echo "perf:   $pn user-code samples of the runs, $phot in exitedprog_hot_spin, $punk unnamed"
[ "${pn:-0}" -ge 200 ] && ok || { bad "perf sampled only ${pn:-0} samples of the runs in the window"; head -5 "$work/perfscript.err" >&2; }
[ "${sn:-0}" -ge 200 ] && ok || bad "sysptd sampled only ${sn:-0} samples of the runs in the window"
if [ "${pn:-0}" -gt 0 ] && [ "${sn:-0}" -gt 0 ]; then
	awk -v sh="$shot" -v sn="$sn" -v ph="$phot" -v pn="$pn" 'BEGIN {
		a = sh / sn; b = ph / pn; p = (sh + ph) / (sn + pn)
		tol = 4 * sqrt(p * (1 - p) * (1 / sn + 1 / pn)) + 0.01; d = a - b; if (d < 0) d = -d
		printf "hot-function share: sysptd %.2f%%, perf %.2f%%, |diff| %.2f points, tolerance %.2f\n",
		       100 * a, 100 * b, 100 * d, 100 * tol
		exit !(d <= tol) }' && ok ||
		bad "the exited program's hot function: sysptd's share is not perf's (binomial tolerance)"
	awk -v u="$sunk" -v n="$sn" 'BEGIN { exit !(u <= 0.10 * n) }' && ok ||
		bad "$sunk of sysptd's $sn user-code samples of the exited program are unnamed (over 10%)"
fi

# ---- 4. a child's samples before its exec: its parent's code ---------------

mkdir -m 700 "$work/inc4"
"$BIN" record --name "exited$$" --freq 4000 --window 3s -o "$work/inc4" -- \
	"$PROG" prexec 20 60 </dev/null >"$work/prexec.out" 2>"$work/rec4.err"
rc=$?
inc=$(find "$work/inc4" -name 'incident-*.db' | head -n 1)
[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "record: exit $rc, no incident"; cat "$work/rec4.err" >&2; finish; }
kids=$(awk '$1 == "prexec" { print $2 }' "$work/prexec.out" | paste -s -d,)
[ "$(awk '$1 == "prexec"' "$work/prexec.out" | wc -l)" = 20 ] && ok || bad "the program logged $(grep -c prexec "$work/prexec.out") children, not 20"
# the children's user-code samples, as in 1
"$BIN" query "$inc" --format csv "
	SELECT count(*), coalesce(sum(y.name = 'exitedprog_prexec_spin'), 0),
	       coalesce(sum(y.id IS NULL OR y.name = '[unknown]'), 0)
	FROM sample s JOIN thread t ON t.utid = s.utid JOIN callsite c ON c.id = s.callsite_id
	LEFT JOIN symbol y ON y.id = c.symbol_id LEFT JOIN dso d ON d.id = y.dso_id
	WHERE t.tid IN (${kids:-0}) AND (y.id IS NULL AND c.addr >= 0 OR
	                                 y.id IS NOT NULL AND d.path <> '[kernel.kallsyms]')" \
	2>"$work/q.err" | tail -n 1 | tr ',' ' ' >"$work/prexec.txt" ||
	{ bad "sysptd query"; cat "$work/q.err" >&2; }
read -r kn khot kunk <"$work/prexec.txt"
echo "children before their exec: $kn user-code samples, ${khot:-0} in exitedprog_prexec_spin, ${kunk:-0} unnamed"
[ "${kn:-0}" -ge 100 ] && ok || bad "sysptd sampled only ${kn:-0} user-code samples of the children"
awk -v h="${khot:-0}" -v n="${kn:-0}" 'BEGIN { exit !(n > 0 && h >= 0.5 * n) }' && ok ||
	bad "${khot:-0} of the children's ${kn:-0} samples in exitedprog_prexec_spin (under half: the samples before the exec unnamed)"
awk -v u="${kunk:-0}" -v n="${kn:-0}" 'BEGIN { exit !(u <= 0.10 * n) }' && ok ||
	bad "${kunk:-0} of the children's ${kn:-0} user-code samples are unnamed (over 10%)"

# ---- 3. threads gone before the capture stay in their process ---------------

mkdir -m 700 "$work/inc3"
# --freq 10: the threads, asleep but for microseconds, are not sampled
# (a sample names its process: that case always worked)
"$BIN" record --name "exited$$" --freq 10 --window 1s -o "$work/inc3" -- \
	sh -c "'$PROG' thread >'$work/threads.out'; sleep 0.2" </dev/null >"$work/rec3.out" 2>"$work/rec3.err"
rc=$?
inc=$(find "$work/inc3" -name 'incident-*.db' | head -n 1)
[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "record: exit $rc, no incident"; cat "$work/rec3.err" >&2; finish; }
read -r _ pid _ named _ unnamed <"$work/threads.out"
echo "the program's own log: pid $pid, t_exitw $named, unnamed thread $unnamed"
sampled=$(q "$inc" "SELECT count(*) FROM sample s JOIN thread t USING (utid) WHERE t.tid IN ($named, $unnamed)")
[ "$sampled" = 0 ] || skipped="$skipped threads-unsampled(a sample hit them: this run proves less)"
for tid in "$named" "$unnamed"; do
	got=$(q "$inc" "SELECT coalesce(p.pid, 'none') FROM thread t LEFT JOIN process p ON p.upid = t.upid WHERE t.tid = $tid")
	[ "$got" = "$pid" ] && ok || bad "thread $tid: its process in the incident is '$got', not $pid"
	own=$(q "$inc" "SELECT count(*) FROM process WHERE pid = $tid")
	[ "$own" = 0 ] && ok || bad "thread $tid has a process of its own in the incident"
done
name=$(q "$inc" "SELECT name FROM thread WHERE tid = $named")
[ "$name" = t_exitw ] && ok || bad "thread $named is named '$name', not t_exitw"
"$BIN" export "$inc" -o "$work/t.pftrace" 2>"$work/exp.err" && ok || { bad "export failed"; cat "$work/exp.err" >&2; }
tp=${SPTD_TRACE_PROCESSOR:-$(cd "$(dirname "$0")/../../../.." && pwd)/shared/tools/perfetto/trace_processor}
if [ -x "$tp" ]; then
	printf '%s\n' "SELECT 'thread=' || t.tid || ',' || coalesce(p.pid, 'none') || ',' || coalesce(t.name, '') FROM thread t LEFT JOIN process p USING (upid) WHERE t.tid IN ($named, $unnamed);" \
		"SELECT 'tidproc=' || count(*) FROM process WHERE pid IN ($named, $unnamed);" >"$work/tp.sql"
	"$tp" -q "$work/tp.sql" "$work/t.pftrace" >"$work/tp.out" 2>/dev/null
	grep -q "\"thread=$named,$pid,t_exitw\"" "$work/tp.out" && ok ||
		{ bad "Perfetto does not show t_exitw ($named) under process $pid"; cat "$work/tp.out" >&2; }
	grep -q "\"thread=$unnamed,$pid," "$work/tp.out" && ok ||
		{ bad "Perfetto does not show thread $unnamed under process $pid"; cat "$work/tp.out" >&2; }
	grep -q "\"tidproc=0\"" "$work/tp.out" && ok ||
		{ bad "Perfetto shows a thread as a process of its own"; cat "$work/tp.out" >&2; }
else
	skipped="$skipped trace_processor(absent)"
fi
finish
