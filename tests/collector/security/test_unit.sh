#!/bin/sh
# test_unit.sh — the systemd unit (packaging/sysptd.service.in):
#   - `systemd-analyze security --offline=true` rates it 5.0 or less;
#   - RestartPreventExitStatus holds 2 4 5, and those are the statuses
#     sysptd gives for a bad command line, too little privilege and a
#     machine without what was asked;
#   - `cmake --install --prefix P` (DESTDIR) puts the program in P/sbin and
#     the unit in P/lib/systemd/system with ExecStart naming P/sbin/sysptd;
#   - root: the service records under the unit's restrictions, emulated
#     where systemd is not PID 1 (here): its CapabilityBoundingSet and
#     NoNewPrivileges (setpriv), ProtectSystem=strict, ProtectHome=read-only
#     and PrivateTmp (a mount namespace: everything read-only but the
#     state and runtime directories and tracefs, a tmpfs on /tmp; the
#     test's own log directory aside), and
#     every system call it makes (strace -f) is one SystemCallFilter allows.
# Skips (77) what this machine cannot do, saying what.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
BUILD=${SPTD_BUILD:?SPTD_BUILD must name the build directory}
unit="$BUILD/packaging/sysptd.service"
passed=0
failed=0
skipped=""
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze" >&2; exit 77; }
[ -f "$unit" ] || { echo "FAIL: $unit not generated" >&2; exit 1; }
work=$(mktemp -d "$BUILD/unit-test-XXXXXX")
# a recorder of its own (--name): the suite runs beside the machine's service
recorder=unit$$
svc=""
cleanup() { [ -n "$svc" ] && kill -9 "$svc" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 143' INT TERM HUP

# ---- exposure ------------------------------------------------------------------
systemd-analyze security --offline=true "$unit" >"$work/sec" 2>&1
score=$(sed -n 's/.*Overall exposure level for sysptd.service: \([0-9.]*\).*/\1/p' "$work/sec")
if [ -z "$score" ]; then
	echo "SKIP: systemd-analyze security --offline=true gives no score here" >&2
	cat "$work/sec" >&2
	exit 77
fi
echo "note: exposure $score"
awk -v s="$score" 'BEGIN { exit !(s <= 5.0) }' && ok || { bad "exposure $score > 5.0"; cat "$work/sec" >&2; }

# ---- restart policy and what the statuses mean ---------------------------------
grep -q '^RestartPreventExitStatus=2 4 5$' "$unit" && ok || bad "RestartPreventExitStatus=2 4 5 missing"
"$BIN" --bogus >/dev/null 2>&1
[ $? = 2 ] && ok || bad "a bad command line is not exit 2"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" --name "$recorder" --once -o /tmp >/dev/null 2>&1
	[ $? = 4 ] && ok || bad "not root is not exit 4"
fi
if [ ! -e /sys/bus/event_source/devices/intel_pt ]; then
	SYSPTD_RUNDIR="$work/run0" "$BIN" --name "$recorder" --source pt --once -o "$work/pt" >/dev/null 2>&1
	[ $? = 5 ] && ok || bad "--source pt without PT is not exit 5"
fi

# ---- install: the path is substituted ------------------------------------------
DESTDIR="$work/dest" cmake --install "$BUILD" --prefix /opt/sptd-unit-test >"$work/inst" 2>&1
u="$work/dest/opt/sptd-unit-test/lib/systemd/system/sysptd.service"
[ -x "$work/dest/opt/sptd-unit-test/sbin/sysptd" ] && [ -f "$u" ] && ok ||
	{ bad "cmake --install did not install the program and the unit"; cat "$work/inst" >&2; }
grep -q '^ExecStart=/opt/sptd-unit-test/sbin/sysptd ' "$u" && ok ||
	bad "installed ExecStart: $(grep '^ExecStart=' "$u")"
grep -q '@SPTD_' "$u" && bad "unsubstituted @...@ in the installed unit" || ok

# ---- the service under the unit's restrictions (root) -----------------------------
if [ "$(id -u)" != 0 ]; then skipped="$skipped sandbox(not root)"; fi
for tool in setpriv unshare strace; do
	command -v $tool >/dev/null || skipped="$skipped sandbox(no $tool)"
done
# PrivateTmp puts an empty /tmp and /var/tmp over a build tree that lives
# there: the program and the test's files would vanish under the sandbox
case "$(readlink -f "$BIN") $(readlink -f "$work")" in
/tmp/*|/var/tmp/*|*" /tmp/"*|*" /var/tmp/"*)
	skipped="$skipped sandbox(the build tree is under /tmp or /var/tmp, which PrivateTmp hides)" ;;
esac
if [ -z "$skipped" ]; then
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
	# the system calls SystemCallFilter allows: its groups, expanded
	expand() { # GROUP...: every syscall name in them, groups within groups too
		for g in "$@"; do
			case $g in @*) ;; *) echo "$g"; continue ;; esac
			systemd-analyze syscall-filter "$g" 2>/dev/null | sed -n '2,$p' |
				grep -v '^ *#' | sed 's/^ *//' | while read -r s; do
					case $s in
					@*) expand "$s" ;;
					?*) echo "$s" ;;
					esac
				done
		done
	}
	allow=$(sed -n 's/^SystemCallFilter=\([^~].*\)/\1/p' "$unit")
	deny=$(sed -n 's/^SystemCallFilter=~\(.*\)/\1/p' "$unit")
	expand $allow | sort -u >"$work/allow.all"
	expand $deny | sort -u >"$work/deny"
	comm -23 "$work/allow.all" "$work/deny" >"$work/allow"
	mkdir -p "$work/state" "$work/runtime" "$work/log"
	chmod 700 "$work/state" "$work/runtime"
	# ProtectSystem=strict, ProtectHome=read-only, PrivateTmp: every mount
	# read-only but the API file systems, then the writable paths
	cat >"$work/sandbox.sh" <<EOF
set -e
mount --make-rprivate /
for mp in \$(awk '{ print \$5 }' /proc/self/mountinfo | sort -u); do
	case \$mp in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
	mount -o remount,bind,ro "\$mp" 2>/dev/null || true
done
for d in "$work/state" "$work/runtime" "$work/log"; do
	mount --bind "\$d" "\$d"
	mount -o remount,bind,rw "\$d"
done
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
touch /usr/.sptd-ro-probe 2>/dev/null && { echo "/usr is writable"; exit 1; }
export SYSPTD_RUNDIR="$work/runtime"
# an ASan build's leak checker cannot run under ptrace (it aborts): off here
export ASAN_OPTIONS="\${ASAN_OPTIONS:-}:detect_leaks=0"
exec strace -f -qq -o "$work/log/strace" setpriv --bounding-set -all,$caps --inh-caps -all \
	--no-new-privs -- "$BIN" --name "$recorder" --window 10ms --trigger timer=300ms --count 2 \
	--output "$work/state/out"
EOF
	timeout 90 unshare --mount sh "$work/sandbox.sh" >"$work/sb.out" 2>"$work/sb.err"
	st=$?
	[ "$st" = 0 ] && ok || { bad "the service under the unit's restrictions: exit $st"; cat "$work/sb.err" >&2; }
	n=0
	for f in $(cat "$work/sb.out"); do
		[ "$(sqlite3 -readonly "file:$f?immutable=1" 'PRAGMA integrity_check' 2>&1)" = ok ] &&
			n=$((n + 1))
	done
	[ "$n" = 2 ] && ok || bad "2 whole incidents expected under the restrictions, got $n: $(cat "$work/sb.out")"
	# every system call it made (after setpriv's exec) is allowed
	awk '/execve\(.*sysptd/ { on = 1 } on { sub(/^[0-9]+ +/, ""); if (match($0, /^[a-z0-9_]+\(/)) print substr($0, 1, RLENGTH - 1) }' \
		"$work/log/strace" | sort -u >"$work/used"
	outside=$(comm -23 "$work/used" "$work/allow" | tr '\n' ' ')
	echo "note: the service made $(wc -l <"$work/used") distinct system calls"
	[ -z "$outside" ] && ok || bad "system calls SystemCallFilter would refuse: $outside"
	[ -s "$work/used" ] && ok || bad "strace saw no system call"
else
	echo "note: not run:$skipped" >&2
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
