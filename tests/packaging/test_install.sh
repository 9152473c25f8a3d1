#!/bin/sh
# test_install.sh BUILD_DIR — `cmake --install` into a DESTDIR, then every
# installed file is checked (issue 14 item 15):
#   sbin/sysptd runs; bin/sysptd is a link to it that a normal user can run
#   for the read-only commands, and that refuses the root-only ones with
#   exit 4; the man page renders with `man -l` without warnings and names
#   every subcommand and every option of every --help (it cannot drift);
#   the bash completion loads and completes subcommands, options, report
#   names and incident files; the systemd unit, where one is installed,
#   runs the installed program.  No other file may be installed.
set -u
BUILD=${1:?usage: test_install.sh BUILD_DIR}
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$2"; then ok; else bad "$1"; fi; }

command -v cmake >/dev/null || { echo "SKIP: no cmake" >&2; exit 77; }
work=$(mktemp -d /tmp/sptd-install-XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
dest=$work/dest
prefix=/usr/local
root=$dest$prefix

DESTDIR=$dest cmake --install "$BUILD" --prefix "$prefix" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; bad "cmake --install failed"; echo "$passed passed, $failed failed"; exit 1; }

# ---- exactly these files, nothing else
expected="bin/sysptd
sbin/sysptd
share/bash-completion/completions/sysptd
share/man/man8/sysptd.8"
unit=""
for u in lib/systemd/system/sysptd.service; do
	[ -e "$root/$u" ] && unit=$u && expected="$expected
$u"
done
got=$(cd "$root" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)
want=$(printf '%s\n' "$expected" | sort)
check "installed files: got [$got], want [$want]" '[ "$got" = "$want" ]'

# ---- the program, and bin/sysptd for normal users
sbin=$root/sbin/sysptd
bin=$root/bin/sysptd
check "sbin/sysptd is not executable" '[ -x "$sbin" ] && [ ! -L "$sbin" ]'
check "bin/sysptd is not a link to ../sbin/sysptd" '[ -L "$bin" ] && [ "$(readlink "$bin")" = ../sbin/sysptd ]'
ver=$("$bin" version 2>&1)
check "bin/sysptd version: '$ver'" 'echo "$ver" | grep -q "^sysptd [0-9]"'
check "-V and --version differ from version" '[ "$("$bin" -V)" = "$ver" ] && [ "$("$bin" --version)" = "$ver" ]'
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# a normal user: read-only commands work on a file they can read
	user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	mkdir "$work/inc" && chmod 755 "$work/inc"
	"$BUILD/tests/sptd_make_incident" "$work/inc/x.db" sample && chmod 644 "$work/inc/x.db"
	out=$(user "$bin" query "$work/inc/x.db" "SELECT count(*) AS n FROM sched_slice" --format csv 2>&1); st=$?
	check "normal user: query exits $st: $out" '[ $st = 0 ] && [ "$out" = "$(printf "n\\n6")" ]'
	out=$(user "$bin" script "$work/inc/x.db" -e trigger 2>&1); st=$?
	check "normal user: script exits $st: $out" '[ $st = 0 ] && echo "$out" | grep -q "trigger: irq"'
	out=$(user "$bin" export "$work/inc/x.db" -o - 2>/dev/null | wc -c); st=$?
	check "normal user: export -o - wrote $out bytes" '[ "$out" -gt 100 ]'
	out=$(user "$bin" list "$work/inc" 2>&1); st=$?
	check "normal user: list exits $st: $out" '[ $st = 0 ]'
	out=$(user "$bin" doctor 2>&1); st=$?
	check "normal user: doctor says what it cannot check: $out" 'echo "$out" | grep -q "^skip .*cannot check as uid 65534"'
	out=$(user "$bin" --once 2>&1); st=$?
	check "normal user: record exits $st (want 4): $out" '[ $st = 4 ] && echo "$out" | grep -q "needs root"'
	out=$(user "$bin" snapshot 2>&1); st=$?
	check "normal user: snapshot exits $st (want 4): $out" '[ $st = 4 ] && echo "$out" | grep -q "needs root"'
	out=$(user "$bin" status 2>&1); st=$?
	check "normal user: status exits $st (want 4)" '[ $st = 4 ]'
fi

# ---- the man page: renders, names every command and every option
man=$root/share/man/man8/sysptd.8
# a man that renders: a minimized system's stub (Ubuntu's /usr/bin/man
# without man-db) prints a notice and renders nothing
printf '.TH PROBE 1\n.SH NAME\nprobe \\- a page\n' >"$work/probe.1"
if command -v man >/dev/null && MANWIDTH=80 man -l "$work/probe.1" 2>/dev/null | grep -q "a page"; then
	MANWIDTH=200 man --warnings -l "$man" >"$work/man.txt" 2>"$work/man.err"
	st=$?
	col -b <"$work/man.txt" >"$work/man.plain" 2>/dev/null || cp "$work/man.txt" "$work/man.plain"
	check "man -l exits $st" '[ $st = 0 ]'
	check "man -l warns: $(head -3 "$work/man.err")" '[ ! -s "$work/man.err" ]'
	check "man page has no NAME/SYNOPSIS" 'grep -q "^NAME" "$work/man.plain" && grep -q "^SYNOPSIS" "$work/man.plain"'
	for c in record snapshot status list list-events query script export decode import doctor version; do
		check "man page lacks 'sysptd $c'" 'grep -q "^ *sysptd $c\$" "$work/man.plain"'
		# every option --help names is in the page
		for o in $("$sbin" "$c" --help | grep -oE -- '(^|[ ,])--[a-z][a-z0-9-]*' | tr -d ' ,' | sort -u); do
			check "man page lacks $c's option $o" 'grep -q -- "$o" "$work/man.plain"'
		done
	done
	# the page is the --help of this very build (a test would catch a stale one)
	check "man page is older than the program's --help" 'grep -q -- "--hide-call-graph" "$work/man.plain"'
else
	echo "SKIP part: no man that renders pages (scripts/install-deps.sh installs man-db)" >&2
	skipped=1
fi

# ---- bash completion
comp=$root/share/bash-completion/completions/sysptd
if command -v bash >/dev/null; then
	mkdir -p "$work/c/sub" && touch "$work/c/a.db" "$work/c/b.txt"
	complete_words() {   # complete_words WORD... : COMPREPLY for the last word
		bash -c '
			source "$0" || exit 3
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			_sysptd; printf "%s\n" "${COMPREPLY[@]}"' "$comp" "$@" 2>&1 | sort | tr '\n' ' '
	}
	r=$(complete_words "$sbin" qu)
	check "complete 'sysptd qu' -> '$r'" '[ "$r" = "query " ]'
	r=$(complete_words "$sbin" s)
	check "complete 'sysptd s' -> '$r'" '[ "$r" = "script snapshot status " ]'
	r=$(complete_words "$sbin" script --ti)
	check "complete 'script --ti' -> '$r'" '[ "$r" = "--tid --time --timeout " ]'
	r=$(complete_words "$sbin" query x.db --report c)
	check "complete '--report c' -> '$r'" '[ "$r" = "cpus " ]'
	r=$(complete_words "$sbin" export x.db --format "")
	check "complete 'export --format' -> '$r'" '[ "$r" = "json proto " ]'
	r=$(complete_words "$sbin" query "$work/c/")
	check "complete incidents -> '$r'" '[ "$r" = "$work/c/a.db $work/c/sub " ]'
	r=$(complete_words "$sbin" script l)
	check "complete 'script l' -> '$r'" '[ "$r" = "latest " ]'
	r=$(complete_words "$sbin" --win)
	check "complete 'sysptd --win' (record) -> '$r'" '[ "$r" = "--window " ]'
fi

# ---- the service unit, where installed: runs the installed program
if [ -n "$unit" ]; then
	check "the unit does not run $prefix/sbin/sysptd" 'grep -q "^ExecStart=$prefix/sbin/sysptd" "$root/$unit"'
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ] || exit 1
[ -z "${skipped:-}" ] || exit 77
