#!/bin/sh
# test_crash.sh — crash consistency (root, tracefs; skips 77): the recorder
# is killed with SIGKILL at random moments while it writes incidents, many
# times (SPTD_CRASH_KILLS, default 50).  Afterwards every incident opens,
# passes SQLite's PRAGMA integrity_check and answers a query; the next
# start removes every temporary file the kills left; nothing else is in
# the directory.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
kills=${SPTD_CRASH_KILLS:-50}
passed=0
failed=0
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (CI runs as root)" >&2; exit 77; fi
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	{ echo "SKIP: no tracefs" >&2; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 (the CLI) missing" >&2; exit 77; }
work=$(mktemp -d /tmp/sptd-crash-XXXXXX)
# a recorder of its own (--name): the suite runs beside the machine's service
recorder=crash$$
export SYSPTD_RUNDIR="$work/run"
out="$work/out"
svc=""
cleanup() { [ -n "$svc" ] && kill -9 "$svc" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 143' INT TERM HUP
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# a random delay in ms in [lo, hi) (awk's rand, seeded per kill)
delay_ms() { awk -v s="$1$$" -v lo="$2" -v hi="$3" 'BEGIN { srand(s); printf "%d", lo + rand() * (hi - lo) }'; }

t0=$(date +%s)
tmps_seen=0
killed_writing=0
for k in $(seq 1 "$kills"); do
	# timer=15ms: an incident is being written most of the time (each
	# takes ~100-200 ms here); the kill lands anywhere: arming, freezing,
	# writing the temporary file, committing, renaming, saving the state
	"$BIN" --name "$recorder" --window 5ms --trigger timer=15ms -o "$out" --keep 20 >/dev/null \
		2>"$work/svc.err" &
	svc=$!
	# from "armed:" on (arming took over 2 s on a loaded machine: kills
	# before it hit no write at all)
	i=0
	while ! grep -q "armed:" "$work/svc.err" && kill -0 "$svc" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	ms=$(delay_ms "$k" 150 900)
	sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
	ls "$out" 2>/dev/null | grep -q '\.tmp\.' && killed_writing=$((killed_writing + 1))
	kill -9 "$svc" 2>/dev/null
	wait "$svc" 2>/dev/null
	svc=""
	n=$(ls "$out" 2>/dev/null | grep -c '\.tmp\.')
	tmps_seen=$((tmps_seen + n))
done
t1=$(date +%s)
echo "note: $kills kills in $((t1 - t0)) s; $killed_writing while a temporary file existed, $tmps_seen leftovers seen along the way"
# the kills must have hit writes, or the test proved nothing
[ "$killed_writing" -ge $((kills / 4)) ] && ok || bad "only $killed_writing of $kills kills hit a write"

# every incident in the directory is whole
n=0
for f in "$out"/incident-*.db; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	r=$(sqlite3 -readonly "file:$f?immutable=1" 'PRAGMA integrity_check' 2>&1)
	[ "$r" = ok ] && ok || bad "$f: integrity_check says $r"
	"$BIN" query "$f" "SELECT count(*) FROM sched_slice" --format csv >"$work/q" 2>&1 && ok ||
		bad "$f: query failed: $(cat "$work/q")"
done
[ "$n" -ge 1 ] && ok || bad "no incident survived $kills kills"
echo "note: $n incidents written and kept"

# the next start removes what the kills left, and only that
timeout 60 "$BIN" --name "$recorder" --window 5ms --trigger timer=15ms --once -o "$out" >"$work/last.out" 2>"$work/last.err"
[ $? = 0 ] && ok || bad "the start after the kills failed: $(tail -n 3 "$work/last.err")"
left=$(ls -a "$out" | grep '\.tmp\.')
[ -z "$left" ] && ok || bad "temporary files survived the next start: $left"
other=$(ls -a "$out" | grep -v -e '^\.$' -e '^\.\.$' -e '^\.sysptd-state$' -e '^incident-.*\.db$')
[ -z "$other" ] && ok || bad "unexpected files: $other"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
