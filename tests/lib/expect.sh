# shellcheck shell=sh
# expect.sh — what the shell tests of sysptd's command line share (sourced
# after $work, a scratch directory, is set): pass/fail counters, ok/bad, and
#   expect STATUS PATTERN -- command...
# which runs the command and checks its exit status and that its stderr or
# stdout matches PATTERN ("" for any message).  The test ends with
#   echo "$passed passed, $failed failed"; [ "$failed" = 0 ]
: "${work:?expect.sh needs $work, a scratch directory}"
passed=0
failed=0

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

expect() {
	want=$1 pattern=$2
	shift 3
	"$@" >"$work/out" 2>"$work/err"
	got=$?
	if [ "$got" = "$want" ] && { [ -z "$pattern" ] ||
	                             grep -q -- "$pattern" "$work/err" "$work/out"; }; then ok; else
		bad "$* -> exit $got (want $want, message /$pattern/), output:"
		head -c 4000 "$work/err" "$work/out" >&2
	fi
}
