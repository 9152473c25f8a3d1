#!/bin/sh
# test_cli_ux.sh — issue 14, items 9-16 at the command line (items 7-8:
# tests/query/test_query_cmd.c and test_query_shell.py; item 15:
# tests/packaging/test_install.sh): each item's exit status and output, on
# the synthetic incidents of sptd_make_incident and the real perf.data
# fixture.  The doctor-as-a-normal-user part needs root (to become one).
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
MAKE=${SPTD_MAKE_INCIDENT:?SPTD_MAKE_INCIDENT must name sptd_make_incident}
FIX=${SPTD_FIXTURES:-}

work=$(mktemp -d /tmp/sptd-cliux-XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../lib/expect.sh"

"$MAKE" "$work/s.db" sample && "$MAKE" "$work/p.db" pt || { echo "cannot make incidents" >&2; exit 1; }
mkdir "$work/dir" && cp "$work/s.db" "$work/dir/incident-20250101T000000Z-000001.db"

# ---- 9: script
expect 0 "sched:sched_switch: prev_comm=server prev_pid=100" -- "$BIN" script "$work/s.db"
[ "$(grep -c '' "$work/out")" -gt 30 ] && ok || bad "script printed too little"
# every line in time order (stack lines aside)
awk '!/^\t/ { t = $4; sub(/:$/, "", t); if (t + 0 < last + 0) bad = 1; last = t }
     END { exit bad }' "$work/out" && ok || bad "script lines out of time order"
expect 0 "call:       handle (/usr/bin/server)" -- "$BIN" script "$work/p.db" -e call
expect 0 "trigger: irq" -- "$BIN" script latest --dir "$work/dir" -e trigger
expect 0 "0.000500000: return:     parse" -- "$BIN" script "$work/p.db" --reltime --time 0.0005,0.0005
[ "$(grep -c '' "$work/out")" = 1 ] && ok || bad "--time A,A gave $(grep -c '' "$work/out") lines"
expect 0 "" -- "$BIN" script "$work/s.db" --cpu 1 --time 2ms,50%
awk '{ if ($3 != "[001]" && $3 != "[---]" && $1 !~ /^\t/) exit 1 }' "$work/out" && ok ||
	bad "--cpu 1 printed another CPU"
expect 0 "sched:sched_waking: comm=worker pid=101" -- "$BIN" script "$work/s.db" --tid 101 -G
grep -q "^	" "$work/out" && bad "-G printed stacks" || ok
expect 2 "bad --cpu '1-x'" -- "$BIN" script "$work/s.db" --cpu 1-x
expect 2 "ends before it starts" -- "$BIN" script "$work/s.db" --time 5ms,1ms
expect 2 "bad --time 'soon'" -- "$BIN" script "$work/s.db" --time soon
expect 2 "bad --event 'bogus'" -- "$BIN" script "$work/s.db" -e bogus
expect 2 "one incident at a time" -- "$BIN" script "$work/s.db" "$work/p.db"
expect 6 "missing.db" -- "$BIN" script "$work/missing.db"
head -c 4096 /dev/urandom >"$work/garbage.db"
expect 6 "garbage.db" -- "$BIN" script "$work/garbage.db"
expect 0 "Usage: sysptd script" -- "$BIN" script --help
# a reader that goes away ends the output quietly, as for perf script |
# head: status 141 (SIGPIPE) and nothing on stderr (as root the parsing
# runs in a child that dies of the signal; it was reported as a failure)
rc=$( { "$BIN" query "$work/s.db" --format csv "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL
	SELECT i + 1 FROM n LIMIT 1000000) SELECT i FROM n" 2>"$work/err"; echo $? >"$work/rc"; } |
	head -n 1 >/dev/null; cat "$work/rc")
[ "$rc" = 141 ] && ok || bad "query | head: status $rc, not 141"
[ -s "$work/err" ] && bad "query | head wrote to stderr: $(cat "$work/err")" || ok

# ---- 10: one human unit style in tables, raw ns in csv/json
expect 0 "   0 | 9.000 ms |     90.0 | 1.000 ms" -- "$BIN" query "$work/s.db" --report cpus
grep -q "_ns" "$work/out" && bad "a table report still shows a *_ns column" || ok
grep -q "[0-9]ms" "$work/out" && bad "a table report mixes the old '2.106ms' style" || ok
expect 0 "0,9000000,90.0,1000000" -- "$BIN" query "$work/s.db" --report cpus --format csv
expect 0 '"busy_ns":9000000' -- "$BIN" query "$work/s.db" --report cpus --format json

# ---- 12: export's format from the name; -o - is stdout
cd "$work"
expect 0 "wrote y.json" -- "$BIN" export "$work/s.db" -o y.json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))["traceEvents"]' y.json && ok ||
	bad "-o y.json is not JSON"
expect 0 "wrote y.pftrace" -- "$BIN" export "$work/s.db" -o y.pftrace
[ "$(head -c 1 y.pftrace | od -An -tx1 | tr -d ' ')" = "0a" ] && ok || bad "-o y.pftrace is not a protobuf Trace"
expect 0 "wrote y.perfetto-trace" -- "$BIN" export "$work/s.db" -o y.perfetto-trace
expect 0 "wrote y.pb" -- "$BIN" export "$work/s.db" -o y.pb
cmp -s y.pftrace y.pb && cmp -s y.pftrace y.perfetto-trace && ok || bad ".pb/.perfetto-trace differ from .pftrace"
expect 2 "pftrace, .perfetto-trace or .pb .* .json" -- "$BIN" export "$work/s.db" -o y.trace
[ ! -e y.trace ] && ok || bad "a refused export left y.trace"
expect 0 "wrote y.trace" -- "$BIN" export "$work/s.db" -o y.trace --format json
cmp -s y.trace y.json && ok || bad "--format json over .trace differs from .json"
expect 0 "wrote y2.json" -- "$BIN" export "$work/s.db" -o y2.json --format proto
cmp -s y2.json y.pftrace && ok || bad "--format proto does not override .json"
"$BIN" export "$work/s.db" -o - >stdout.pftrace 2>"$work/err" && ok || bad "-o - failed"
cmp -s stdout.pftrace y.pftrace && ok || bad "-o - wrote other bytes than -o y.pftrace"
[ ! -e ./- ] && ok || bad "-o - created a file named '-'"
"$BIN" export "$work/s.db" -o - --format json -q >stdout.json 2>"$work/err" && ok || bad "-o - json failed"
cmp -s stdout.json y.json && [ ! -s "$work/err" ] && ok || bad "-o - --format json -q differs or talks"
expect 0 "wrote latest.json" -- "$BIN" export latest --dir "$work/dir" -o latest.json
cd - >/dev/null

# ---- 13: import: stdout is only the path; the default name ends in .db
pd=$FIX/real-pt/hase-control_flow
if [ -n "$FIX" ] && [ -f "$pd/perf.data" ]; then
	mkdir "$work/imp"
	cd "$work/imp"
	"$BIN" import "$pd/perf.data" --symfs "$pd/symfs" >"$work/out" 2>"$work/err"
	st=$?
	[ "$st" = 0 ] && ok || { bad "import exit $st"; cat "$work/err" >&2; }
	[ "$(cat "$work/out")" = "perf.data.db" ] && ok || bad "import stdout: '$(cat "$work/out")' (want perf.data.db)"
	grep -q "sysptd import: perf.data.db: .* records" "$work/err" && ok || bad "import summary not on stderr"
	# long work shows progress on a terminal only: not in this file
	grep -q "decoding PT" "$work/err" && bad "import printed progress to a file" || ok
	expect 0 "perf.data.db" -- "$BIN" list .
	expect 1 "already exists" -- "$BIN" import "$pd/perf.data" --symfs "$pd/symfs"
	# ... where it is one line rewritten in place, cleared before the
	# summary; never with -q
	if command -v script >/dev/null; then
		SHELL=/bin/sh script -qfec "exec $BIN import $pd/perf.data --symfs $pd/symfs -o tty.db" \
			/dev/null >"$work/tty.out" 2>&1
		grep -q "sysptd import: decoding PT .*(0 of 1616)" "$work/tty.out" && ok ||
			bad "import on a terminal: no progress line: $(cat -v "$work/tty.out")"
		grep -q "sysptd import: decoding PT 100% (1616 of 1616)" "$work/tty.out" && ok ||
			bad "import on a terminal: decoding PT does not end at 100%"
		grep -q "sysptd import: call stacks 100% (\([0-9]*\) of \1)" "$work/tty.out" && ok ||
			bad "import on a terminal: call stacks does not end at 100%"
		grep -q "sysptd import: writing the incident" "$work/tty.out" && ok ||
			bad "import on a terminal: no 'writing the incident'"
		# the summary starts on a cleared line
		grep -q "$(printf '\033')\\[Ksysptd import: tty.db: .* records" "$work/tty.out" && ok ||
			bad "import on a terminal: the summary is not on a cleared line"
		SHELL=/bin/sh script -qfec "exec $BIN decode tty.db" /dev/null >"$work/tty.out" 2>&1
		grep -q "sysptd decode: decoding PT" "$work/tty.out" && ok ||
			bad "decode on a terminal: no progress line: $(cat -v "$work/tty.out")"
		SHELL=/bin/sh script -qfec "exec $BIN import -q $pd/perf.data --symfs $pd/symfs -o tty2.db" \
			/dev/null >"$work/tty.out" 2>&1
		grep -q "decoding PT" "$work/tty.out" && bad "import -q printed progress" || ok
		[ -f tty2.db ] && ok || bad "import -q wrote no incident"
	else
		skipped="$skipped progress(no script)"
	fi
	cd - >/dev/null
else
	skipped="$skipped import(no fixtures)"
fi

# ---- 14: doctor as a normal user says what it cannot check, and why
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" doctor >"$work/out" 2>&1
	st=$?
	[ "$st" = 1 ] && ok || bad "doctor as nobody exits $st (want 1: not root)"
	grep -q "not mounted" "$work/out" && bad "doctor as nobody says tracefs is not mounted" || ok
	grep -q "^skip  tracefs .*cannot check as uid 65534: .*not readable by this user (Permission denied)" \
		"$work/out" && ok || bad "doctor as nobody: no skip line for tracefs"
	grep -q "^skip  cpu-clock sampling .*needs root" "$work/out" && ok || bad "doctor: no skip for sampling"
	grep -q "^skip  tracepoints " "$work/out" && ok || bad "doctor: no skip for tracepoints"
	grep -q "^skip  cost per sample .*uid 65534" "$work/out" && ok || bad "doctor as nobody: no skip for the cost"
	# root sees it all: no skip line
	"$BIN" doctor >"$work/out" 2>&1
	grep -q "^skip" "$work/out" && bad "doctor as root skipped a check" || ok
	# and what a sample and an event cost here (issue 12: pick --freq knowingly)
	grep -q "^info  cost per sample .*about [0-9.]* us of CPU per cpu-clock sample" "$work/out" && ok ||
		bad "doctor as root: no cost per sample"
	grep -q "^info  cost per event .*about [0-9.]* us of CPU per ftrace event\|^info  cost per event .*not measured" \
		"$work/out" && ok || bad "doctor as root: no cost per event"
else
	skipped="$skipped doctor-as-user(not root)"
fi

# ---- 16: -V, --version, version
expect 0 "^sysptd [0-9]" -- "$BIN" -V
v1=$(cat "$work/out")
expect 0 "^sysptd [0-9]" -- "$BIN" version
[ "$(cat "$work/out")" = "$v1" ] && ok || bad "version differs from -V"
expect 0 "^sysptd [0-9]" -- "$BIN" --version
[ "$(cat "$work/out")" = "$v1" ] && ok || bad "--version differs from -V"
expect 2 "unexpected argument 'x'" -- "$BIN" version x
expect 0 "Usage: sysptd version" -- "$BIN" version --help
expect 0 "  script " -- "$BIN" --help
expect 0 "  version " -- "$BIN" --help

finish
