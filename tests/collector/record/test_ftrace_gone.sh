#!/bin/sh
# test_ftrace_gone.sh — issue 28.9: another root program removes the
# service's ftrace instance while it records (an rmdir in tracefs'
# instances/: the kernel allows it, since the service opens the instance's
# files only while it copies a window).  Before, the service logged
# "cannot re-arm the ftrace instance: Input/output error" at every incident,
# every later incident had no ftrace page, `sysptd status` exited 0 and the
# service too.  Checked, on a named recorder of its own (its own instance,
# run directory and output):
#  1. the instance is made again within seconds; the next incident has
#     ftrace pages and sched slices again, meta ftrace_recreated, and a gap
#     for the stretch before the re-creation saying why;
#  2. while it cannot be made again (another program made one of the same
#     name and uses it: the service leaves it alone), `sysptd status` says
#     "state not recording: ..." and exits 1, an incident written then says
#     so in meta ftrace_missing; once the other removes it, the service
#     makes its own again and status exits 0;
#  3. a recorder that stays without it stops after a minute with exit
#     status 1 (systemd's Restart=on-failure starts it again).
# Root (recording).
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
if [ "$(id -u)" != 0 ]; then
	echo "needs root (recording): skipped"
	exit 77
fi
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T 2>/dev/null || { echo "no tracefs: skipped"; exit 77; }
work=$(mktemp -d /tmp/sptd-ftgone-XXXXXX)
name=ftgone$$
inst=$T/instances/sysptd-$name
export SYSPTD_RUNDIR="$work/run"
svc=""
holder=""
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	[ -n "$svc" ] && kill -9 "$svc" 2>/dev/null
	wait 2>/dev/null
	[ -d "$inst" ] && rmdir "$inst" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
. "$(dirname "$0")/../../lib/expect.sh"

# take_instance: remove the service's instance and make one of the same
# name at once, holding its trace file open (another tool using it).  The
# service may make its own in between: then again.
take_instance() {
	for _t in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$inst" 2>/dev/null
		if mkdir "$inst" 2>/dev/null; then
			sleep 600 <"$inst/trace" &
			holder=$!
			return 0
		fi
	done
	return 1
}

# snap: an incident now (`sysptd snapshot`), its path on stdout
snap() { "$BIN" snapshot --name "$name" 2>>"$work/snap.err" | tail -n 1; }

mkdir -m 700 "$work/out"
"$BIN" --name "$name" --window 5s --buffer 16M -F 100 --trigger timer=600s -o "$work/out" \
	</dev/null >/dev/null \
	2>"$work/err" &
svc=$!
if ! wait_for "$work/err" "armed:" 30; then
	bad "the service did not arm"
	cat "$work/err" >&2
	finish
fi
[ -d "$inst" ] && ok || bad "no ftrace instance $inst"

# ---- 1. removed: made again, and the next incident records
rmdir "$inst" && ok || bad "rmdir $inst was refused"
wait_for "$work/err" "made the ftrace instance sysptd-$name again" 10 && ok ||
	bad "the service did not make its instance again"
[ -d "$inst" ] && ok || bad "no instance $inst after the re-creation"
sleep 1
inc=$(snap)
if [ -z "$inc" ] || [ ! -f "$inc" ]; then
	bad "snapshot after the re-creation: no incident"; cat "$work/snap.err" "$work/err" >&2
else
	n=$(q "$inc" "SELECT count(*) FROM raw_ftrace_page")
	[ "$n" -gt 0 ] && ok || bad "the incident after the re-creation has $n ftrace pages"
	n=$(q "$inc" "SELECT count(*) FROM sched_slice")
	[ "$n" -gt 0 ] && ok || bad "the incident after the re-creation has $n sched slices"
	r=$(q "$inc" "SELECT value FROM meta WHERE key = 'ftrace_recreated'")
	s=$(q "$inc" "SELECT value FROM meta WHERE key = 'ftrace_started'")
	[ -n "$r" ] && [ "$r" = "$s" ] && ok ||
		bad "meta ftrace_recreated '$r', want ftrace_started '$s'"
	# the 5 s window began before the re-creation: that stretch is a gap
	n=$(q "$inc" "SELECT count(*) FROM gap WHERE reason LIKE '%made again%removed%'")
	[ "$n" -gt 0 ] && ok || { bad "no gap names the re-creation";
		"$BIN" query "$inc" "SELECT * FROM gap" >&2; }
fi
"$BIN" status --name "$name" >"$work/st" 2>"$work/st.err"
rc=$?
[ "$rc" = 0 ] && grep -q "^state recording$" "$work/st" && grep -q "^ftrace_recreated 1$" "$work/st" &&
	ok || { bad "status after the re-creation: exit $rc"; cat "$work/st" "$work/st.err" >&2; }
grep -q "cannot re-arm the ftrace instance" "$work/err" &&
	bad "the service still says it cannot re-arm the instance" || ok

# ---- 2. cannot be made again: said by status (exit 1) and the incident
take_instance && ok || bad "could not take the instance's name"
wait_for "$work/err" "one of that name is there now, not sysptd's" 10 && ok ||
	{ bad "the service did not say it cannot make its instance again"; cat "$work/err" >&2; }
"$BIN" status --name "$name" >"$work/st" 2>"$work/st.err"
rc=$?
[ "$rc" = 1 ] && grep -q "^state not recording: the ftrace instance sysptd-$name was removed" "$work/st" &&
	grep -q "sysptd status: the service is running but not recording" "$work/st.err" && ok ||
	{ bad "status without the instance: exit $rc"; cat "$work/st" "$work/st.err" >&2; }
inc=$(snap)
if [ -z "$inc" ] || [ ! -f "$inc" ]; then
	bad "snapshot without the instance: no incident"; cat "$work/snap.err" >&2
else
	m=$(q "$inc" "SELECT value FROM meta WHERE key = 'ftrace_missing'")
	case "$m" in *"sysptd-$name was removed by another program, and one of that name is there now"*) ok ;;
	*) bad "meta ftrace_missing '$m'" ;; esac
	[ "$(q "$inc" "SELECT count(*) FROM sample")" -gt 0 ] && ok ||
		bad "the incident without the instance lost its samples too"
fi
# the other program's instance is left alone; once it is removed, the
# service makes its own at the next try (every 5 s)
kill -0 "$holder" 2>/dev/null && [ -d "$inst" ] && ok ||
	bad "the other program's instance of the same name was not left alone"
kill "$holder"
wait "$holder" 2>/dev/null
holder=""
rmdir "$inst" || bad "cannot remove the other program's instance"
wait_for "$work/err" "s without it: recording scheduling and IRQs again" 15 && ok ||
	{ bad "the service did not make its instance again once free"; cat "$work/err" >&2; }
"$BIN" status --name "$name" >"$work/st" 2>"$work/st.err"
rc=$?
[ "$rc" = 0 ] && grep -q "^state recording$" "$work/st" && grep -q "^ftrace_recreated 2$" "$work/st" &&
	ok || { bad "status once made again: exit $rc"; cat "$work/st" "$work/st.err" >&2; }
sleep 1
inc=$(snap)
[ -n "$inc" ] && [ "$(q "$inc" "SELECT count(*) FROM raw_ftrace_page")" -gt 0 ] && ok ||
	bad "no ftrace pages once made again"

# ---- 3. without it for a minute: the service stops, exit status 1
take_instance && ok || bad "could not take the instance's name"
i=0
while kill -0 "$svc" 2>/dev/null && [ $i -lt 900 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$svc" 2>/dev/null; then
	bad "the service still runs 90 s without its instance"
else
	wait "$svc"
	rc=$?
	svc=""
	[ "$rc" = 1 ] && grep -q "for 60 s: stopping with exit status 1" "$work/err" && ok ||
		{ bad "the service without its instance: exit $rc"; tail -n 5 "$work/err" >&2; }
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=""
rmdir "$inst" 2>/dev/null
finish
