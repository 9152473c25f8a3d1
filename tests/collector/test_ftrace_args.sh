#!/bin/sh
# test_ftrace_args.sh — issue 30 item 3: the args of an added tracepoint
# (ftrace_event.args, JSON that sched/ writes) hold text as it was.  A real
# task renames itself (writing /proc/PID/comm fires task:task_rename) to a
# UTF-8 name, then another to a name with bytes that are not UTF-8;
# recorded for real with -e task:task_rename, read back by `sysptd query`
# (SQLite's json_extract), exported and loaded by trace_processor.
#
# The rule (docs/SCHEMA.md): well-formed UTF-8 is written as it is, every
# other byte as \u00XX, so a JSON reader shows the UTF-8 name itself and a
# stray byte 0xXX as the character U+00XX.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}

work=$(mktemp -d /tmp/sptd-ftargs-XXXXXX)
recorder=ftargs$$
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../lib/expect.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (ftrace)"; exit 77; }
[ -d /sys/kernel/tracing/events/task/task_rename ] ||
	{ echo "SKIP: no task:task_rename tracepoint in this kernel"; exit 77; }

# é… (U+00E9 U+2026) and "zq7"; then "zq7", 0xff 0xfe, a lead byte cut
# short (0xc3), "x" (zq7: no other task's name)
utf8=$(printf '\303\251\342\200\246zq7')
# sh FILE BYTES: take the name BYTES (printf escapes), then sleep under it
cat >"$work/rename.sh" <<'SH'
printf "$1" >/proc/$$/comm
sleep 0.05
SH
mkdir -m 700 "$work/inc"
"$BIN" record --name "$recorder" -e task:task_rename --window 1s -o "$work/inc" -- \
	sh -c "sh $work/rename.sh '\\303\\251\\342\\200\\246zq7'; sh $work/rename.sh 'zq7\\377\\376\\303x'" \
	</dev/null >/dev/null 2>"$work/rec.err"
rc=$?
inc=$(find "$work/inc" -name 'incident-*.db')
[ "$rc" = 0 ] && [ -n "$inc" ] && ok || { bad "record: exit $rc"; cat "$work/rec.err" >&2; finish; }

renames="FROM ftrace_event WHERE name = 'task:task_rename'"
# every args value is JSON
[ "$(q "$inc" "SELECT count(*) $renames")" -ge 2 ] &&
	[ "$(q "$inc" "SELECT count(*) $renames AND NOT json_valid(args)")" = 0 ] && ok ||
	bad "args not valid JSON: $(q "$inc" "SELECT group_concat(args, ' ') $renames")"
# the UTF-8 name reads back as itself ...
got=$(q "$inc" "SELECT json_extract(args, '\$.newcomm') $renames AND json_extract(args, '\$.newcomm') LIKE '%zq7'")
[ "$got" = "$utf8" ] && ok || bad "UTF-8 name in args: '$got', want '$utf8'"
# ... and is written as itself, not escaped
[ "$(q "$inc" "SELECT count(*) $renames AND instr(args, '\"newcomm\":\"$utf8\"') > 0")" = 1 ] && ok ||
	bad "UTF-8 name escaped: $(q "$inc" "SELECT group_concat(args, ' ') $renames")"
# the thread table names the task the same
[ "$(q "$inc" "SELECT count(*) FROM thread WHERE name = '$utf8'")" -ge 1 ] && ok ||
	bad "no thread named $utf8: $(q "$inc" "SELECT group_concat(name, ' ') FROM thread")"
# bytes that are not UTF-8: one \u00XX each, the rest as it is
[ "$(q "$inc" "SELECT count(*) $renames AND instr(args, '\"newcomm\":\"zq7\\u00ff\\u00fe\\u00c3x\"') > 0")" = 1 ] &&
	ok || bad "invalid bytes: $(q "$inc" "SELECT group_concat(args, ' ') $renames")"
latin=$(printf 'zq7\303\277\303\276\303\203x')
got=$(q "$inc" "SELECT json_extract(args, '\$.newcomm') $renames AND json_extract(args, '\$.newcomm') LIKE 'zq7%x'")
[ "$got" = "$latin" ] && ok || bad "invalid bytes read as '$got', want '$latin'"

# exported: trace_processor shows the same names, in the event's args and
# as the thread's name
expect 0 "ftrace events" -- "$BIN" export "$inc" -o "$work/inc.pftrace"
tp=${SPTD_TRACE_PROCESSOR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/tools/perfetto/trace_processor}
if [ -x "$tp" ]; then
	cat >"$work/tp.sql" <<'SQL'
SELECT 'arg=' || a.display_value AS v FROM ftrace_event e JOIN args a USING (arg_set_id)
WHERE e.name = 'task_rename' AND a.key = 'newcomm'
UNION ALL SELECT 'thread=' || name FROM thread WHERE name IS NOT NULL;
SQL
	"$tp" -q "$work/tp.sql" "$work/inc.pftrace" >"$work/tp.out" 2>"$work/tp.err"
	grep -qF "\"arg=$utf8\"" "$work/tp.out" && grep -qF "\"thread=$utf8\"" "$work/tp.out" &&
		ok || { bad "trace_processor does not show $utf8"; cat "$work/tp.out" "$work/tp.err" >&2; }
	grep -qF "\"arg=$latin\"" "$work/tp.out" && ok ||
		{ bad "trace_processor: the invalid bytes' arg is not '$latin'"; cat "$work/tp.out" >&2; }
else
	skipped="$skipped trace_processor(absent)"
fi
finish
