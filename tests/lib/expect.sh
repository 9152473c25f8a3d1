# shellcheck shell=sh
# expect.sh — what the shell tests of sysptd's command line share (sourced
# after $work, a scratch directory, is set): pass/fail counters, ok/bad, and
#   expect STATUS PATTERN -- command...
# which runs the command (stdin /dev/null) and checks its exit status and
# that its stderr or stdout matches PATTERN ("" for any message); with $BIN
# set, `q DB SQL` (one value of an incident) and `wait_for FILE PATTERN
# [SECONDS]`.  The test ends with `finish` (a part that could not run here
# is named in $skipped: exit 77, ctest's skip), or with
#   echo "$passed passed, $failed failed"; [ "$failed" = 0 ]
: "${work:?expect.sh needs $work, a scratch directory}"
passed=0
failed=0
skipped=""

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

expect() {
	want=$1 pattern=$2
	shift 3
	"$@" >"$work/out" 2>"$work/err" </dev/null
	got=$?
	if [ "$got" = "$want" ] && { [ -z "$pattern" ] ||
	                             grep -q -- "$pattern" "$work/err" "$work/out"; }; then ok; else
		bad "$* -> exit $got (want $want, message /$pattern/), output:"
		head -c 4000 "$work/err" "$work/out" >&2
	fi
}

# q DB SQL: the first column of the last row, as csv
q() { "$BIN" query "$1" "$2" --format csv | tail -n 1; }

# wait_until SECONDS CMD...: until CMD succeeds, polled every 0.1 s, at
# most SECONDS (1: it never did)
wait_until() {
	_n=$(($1 * 10))
	shift
	_i=0
	while ! "$@"; do
		_i=$((_i + 1))
		[ $_i -lt $_n ] || return 1
		sleep 0.1
	done
}

# wait_for FILE PATTERN [SECONDS]: until PATTERN appears in FILE (1: it did not)
in_file() { grep -q -- "$2" "$1" 2>/dev/null; }
wait_for() { wait_until "${3:-20}" in_file "$1" "$2"; }

# wait_gone PATTERN [SECONDS]: until no process's command line matches the
# extended regular expression PATTERN (pgrep -f), at most SECONDS (default
# 20; 1: one still runs)
no_process() { ! pgrep -f -- "$1" >/dev/null 2>&1; }
wait_gone() { wait_until "${2:-20}" no_process "$1"; }

# finish: the summary, and exit 1 on a failure or when nothing was checked,
# 77 when a part could not run here, else 0
finish() {
	echo "$passed passed, $failed failed${skipped:+, not run:$skipped}"
	[ "$failed" = 0 ] && [ "$passed" -gt 0 ] || exit 1
	[ -z "$skipped" ] || exit 77
	exit 0
}
