# seclib.sh — what the security tests share (sourced, POSIX sh): root and
# tracefs or skip (77), a private work directory, an unprivileged user
# created for this run and removed after, and the check helpers.
#
# After sourcing: $BIN (sysptd), $work (0700, root's), $atk / $atk_uid /
# $atk_gid (the attacker), as_atk CMD... (run as the attacker), ok / bad,
# wait_for FILE PATTERN, sum FILE, and $SYSPTD_RUNDIR set to a private
# run directory.  The caller sets `trap cleanup EXIT` (or calls
# seclib_cleanup from its own).
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
BUILD=$(dirname "$BIN")
passed=0
failed=0
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (CI runs as root)" >&2; exit 77; fi
# sqlite3 (the CLI) checks the incidents' integrity (integrity())
for tool in useradd userdel setpriv sqlite3; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool missing" >&2; exit 77; }
done
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	{ echo "SKIP: no tracefs" >&2; exit 77; }

work=$(mktemp -d /tmp/sptd-sec-XXXXXX)
# a recorder of its own (--name): the suite runs beside the machine's service
recorder=sec$$
export SYSPTD_RUNDIR="$work/run"
svc=""
atk="sptdatk$$"
useradd -M -N -d /nonexistent -s /usr/sbin/nologin "$atk" ||
	{ echo "SKIP: useradd $atk failed" >&2; rm -rf "$work"; exit 77; }
atk_uid=$(id -u "$atk")
atk_gid=$(id -g "$atk")
# the attacker's own directories live here (like a home: theirs alone)
adir=$(mktemp -d /tmp/sptd-atk-XXXXXX)
chown "$atk" "$adir"

# pids of the attacker's processes this test started (killed at the end)
atk_pids=""

seclib_cleanup() {
	[ -n "$svc" ] && kill -9 "$svc" 2>/dev/null
	for p in $atk_pids; do kill -9 "$p" 2>/dev/null; done
	userdel "$atk" 2>/dev/null
	rm -rf "$work" "$adir"
}

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }

# as_atk CMD...: run CMD as the unprivileged attacker
as_atk() { setpriv --reuid="$atk_uid" --regid="$atk_gid" --clear-groups -- "$@"; }

# wait_for FILE PATTERN [TENTHS]: until FILE holds PATTERN (20 s default)
wait_for() {
	i=0
	while [ $i -lt "${3:-200}" ]; do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

sum() { md5sum <"$1" 2>/dev/null; }

# integrity FILE: SQLite's own check of an incident (sqlite3 CLI), opened
# as sysptd opens incidents: immutable (a journal planted beside it by the
# attacker is not the file's)
integrity() { [ "$(sqlite3 -readonly "file:$1?immutable=1" 'PRAGMA integrity_check' 2>&1)" = ok ]; }

# finish: print the count and exit with the status
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit $?
}
