#!/bin/sh
# test_offcpu.sh — issue 13.2, where threads wait: `sysptd record --offcpu`
# over a program whose threads block in read() on a pipe and in nanosleep
# (offcpu_prog.c).  Each blocked thread_state row must name the kernel
# function the thread blocked in, and that name must be the kernel's own
# answer: the thread's /proc wchan, read by the program while it waited.
# Its stack must reach the program's own thread function.  Then the report, the
# Perfetto export (through trace_processor when present), and a run without
# --offcpu that must have no stacks.  Needs root (recording).
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
PROG=${SPTD_OFFCPU_PROG:?SPTD_OFFCPU_PROG must name sptd_offcpu_prog}
if [ "$(id -u)" != 0 ]; then
	echo "needs root (recording): skipped"
	exit 77
fi
work=$(mktemp -d /tmp/sptd-offcpu-XXXXXX)
# a recorder of its own (--name): the suite runs beside the machine's service
recorder=offcpu$$
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../../lib/expect.sh"
# stack DB CALLSITE: its frames outermost first, ';'-joined
stack() {
	q "$1" "WITH RECURSIVE up(id, parent_id, symbol_id, depth) AS (SELECT id, parent_id, symbol_id, depth FROM callsite WHERE id = $2 UNION ALL SELECT c.id, c.parent_id, c.symbol_id, c.depth FROM callsite c JOIN up ON c.id = up.parent_id WHERE c.depth < up.depth) SELECT group_concat(name, ';') FROM (SELECT coalesce(s.name, '?') AS name FROM up LEFT JOIN symbol s ON s.id = up.symbol_id ORDER BY up.depth)"
}

mkdir -m 700 "$work/inc"
# the program may be a sanitizer build (CI's second part): its leak
# checker ptraces its own threads at exit, which the exit watch forbids
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
"$BIN" record --name "$recorder" --offcpu --window 1s -o "$work/inc" -- "$PROG" 400 </dev/null >"$work/out" 2>"$work/err"
rc=$?
inc=$(find "$work/inc" -name 'incident-*.db')
[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "record --offcpu: exit $rc"; cat "$work/err" >&2; exit 1; }
for what in pipe sleep; do
	line=$(grep "^$what " "$work/out")
	tid=$(echo "$line" | cut -d' ' -f2)
	wchan=$(echo "$line" | cut -d' ' -f3)
	fn="sptd_${what}_thread"
	[ -n "$tid" ] || { bad "the program printed no $what thread"; continue; }
	# the long block: the whole 400 ms wait, with a stack
	row=$(q "$inc" "SELECT ts.callsite_id || ' ' || coalesce(ts.blocked_function, '?') FROM thread_state ts JOIN thread t USING (utid) WHERE t.tid = $tid AND ts.state = 'S' AND ts.dur > 300000000 ORDER BY ts.dur DESC LIMIT 1")
	cs=${row%% *}
	got=${row#* }
	if [ -z "$row" ] || [ "$cs" = "$row" ]; then
		bad "$what thread $tid: no 300+ ms blocked row with a stack"
		continue
	fi
	ok
	case "$wchan" in
	''|'?'|0) skipped="$skipped wchan-$what(unreadable)" ;;
	*) [ "$got" = "$wchan" ] && ok || bad "$what thread: blocked_function '$got', the kernel's wchan says '$wchan'" ;;
	esac
	case "$what:$got" in
	pipe:*pipe_read*|sleep:*nanosleep*) ok ;;
	*) bad "$what thread: blocked in '$got'" ;;
	esac
	st=$(stack "$inc" "$cs")
	case "$st" in
	*";$fn;"*) ok ;;
	*) bad "$what thread: its stack does not reach $fn: $st" ;;
	esac
	# the report names it
	"$BIN" query "$inc" --report offcpu --format csv >"$work/rep" 2>&1
	grep -q "\[$tid\],S,$got," "$work/rep" && ok || { bad "--report offcpu lacks $what thread $tid in $got"; cat "$work/rep" >&2; }
done
"$BIN" export "$inc" -o "$work/t.pftrace" 2>"$work/exp.err" && ok || { bad "export failed"; cat "$work/exp.err" >&2; }
grep -q "[1-9][0-9]* off-CPU stacks" "$work/exp.err" && ok || bad "export wrote no off-CPU stacks: $(cat "$work/exp.err")"
tp=${SPTD_TRACE_PROCESSOR:-$(cd "$(dirname "$0")/../../../.." && pwd)/shared/tools/perfetto/trace_processor}
if [ -x "$tp" ]; then
	tid=$(grep "^pipe " "$work/out" | cut -d' ' -f2)
	wchan=$(grep "^pipe " "$work/out" | cut -d' ' -f3)
	printf '%s\n' "SELECT s.name FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid) WHERE t.tid = $tid AND s.name LIKE 'blocked:%';" \
		"SELECT DISTINCT 'bf=' || s.blocked_function FROM thread_state s JOIN thread t USING (utid) WHERE t.tid = $tid AND s.blocked_function IS NOT NULL;" >"$work/tp.sql"
	"$tp" -q "$work/tp.sql" "$work/t.pftrace" >"$work/tp.out" 2>/dev/null
	grep -q "blocked: .*pipe_read" "$work/tp.out" && ok || { bad "trace_processor does not show the pipe thread blocked"; cat "$work/tp.out" >&2; }
	# Perfetto's own thread_state.blocked_function (sched_blocked_reason)
	grep -q "\"bf=$wchan\"" "$work/tp.out" && ok ||
		{ bad "trace_processor's thread_state.blocked_function is not '$wchan'"; cat "$work/tp.out" >&2; }
else
	skipped="$skipped trace_processor(absent)"
fi

# without --offcpu: no stacks, and the report says how to get them
mkdir -m 700 "$work/plain"
"$BIN" record --name "$recorder" --window 500ms -o "$work/plain" -- "$PROG" 100 </dev/null >/dev/null 2>&1
inc=$(find "$work/plain" -name 'incident-*.db')
[ -n "$inc" ] && [ "$(q "$inc" "SELECT count(*) FROM thread_state WHERE callsite_id IS NOT NULL OR blocked_function IS NOT NULL")" = 0 ] &&
	[ "$(q "$inc" "SELECT count(*) FROM raw_sample WHERE kind = 1")" = 0 ] && ok || bad "stacks without --offcpu"
[ -n "$inc" ] && "$BIN" query "$inc" --report offcpu 2>&1 | grep -q "record with --offcpu" && ok ||
	bad "--report offcpu without stacks does not say why"

finish
