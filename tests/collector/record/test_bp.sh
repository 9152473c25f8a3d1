#!/bin/sh
# test_bp.sh — issue 13.1: break=PID:SYMBOL, break=PATH:SYMBOL and watch=PID:SYMBOL[+OFF]
# triggers (hardware breakpoints) on sptd_bp_prog, which logs the time and
# value of every call of sptd_bump (the function broken on, the writer of
# the watched sptd_counter).  Checked: the breakpoint's address is the
# function's (nm + the process's load base), each trigger fires at a
# logged call of that process, a watch hit carries the value the program
# stored and the one before, names the writing function, and flags silent
# stores exactly when the value did not change; errors for a missing
# symbol or process, an unaligned address, and more watchpoints than the
# CPU has debug registers.  Needs root (recording).
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
PROG=${SPTD_BP_PROG:?SPTD_BP_PROG must name sptd_bp_prog}
if [ "$(id -u)" != 0 ]; then
	echo "needs root (recording): skipped"
	exit 77
fi
# a breakpoint must fire somewhere before a trigger on one can: some VMs
# (an AMD guest here) accept perf breakpoints that never count
if [ -n "${SPTD_BP_SLOTS:-}" ] && [ "$("$SPTD_BP_SLOTS" --fires)" != 1 ]; then
	echo "SKIP: hardware breakpoints do not fire on this machine (a perf breakpoint on" \
	     "a function called 3 times counts 0): break= and watch= cannot be tested here"
	exit 77
fi
work=$(mktemp -d /tmp/sptd-bp-XXXXXX)
# a recorder of its own (--name): the suite runs beside the machine's service
recorder=bp$$
prog=""
progb=""
progc=""
progf=""
trap '[ -n "$prog" ] && kill "$prog" $progb $progc $progf 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../lib/expect.sh"

# a store every 150 ms: far above an incident's write time, under which a
# later store would show in a hit's value (the service reads it then)
"$PROG" 60 150 >"$work/prog.out" &
prog=$!
i=0
while ! grep -q "^pid " "$work/prog.out" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(sed -n 's/^pid //p' "$work/prog.out")
[ "$pid" = "$prog" ] || { echo "FAIL: sptd_bp_prog did not start"; exit 1; }
# the program's load base (its first mapping, offset 0) and nm's addresses
real=$(readlink -f "$PROG")
base=$(awk -v p="$real" '$6 == p && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' /proc/$pid/maps)
fn_off=$(nm "$real" | awk '$3 == "sptd_bump" { print $1 }')
[ -n "$base" ] && [ -n "$fn_off" ] || { echo "FAIL: no load base or nm address"; exit 1; }
fn_addr=$(printf '0x%x' $((0x$base + 0x$fn_off)))

# nearest logged call at or before T (ns): "T V", or nothing
call_before() {
	awk -v t="$1" '$1 == "call" && $2 <= t { c = $2; v = $3 } END { if (c) print c, v }' "$work/prog.out"
}
# the value the call before that one stored: what the watched word held
value_before_call() {
	awk -v t="$1" '$1 == "call" && $2 < t { v = $3 } END { print v }' "$work/prog.out"
}

# ---- break=PID:SYMBOL
mkdir -m 700 "$work/brk"
timeout 30 "$BIN" --name "$recorder" --window 20ms --trigger "break=$pid:sptd_bump" --once -o "$work/brk" </dev/null \
	>/dev/null 2>"$work/brk.err"
inc=$(find "$work/brk" -name 'incident-*.db')
if [ -z "$inc" ]; then
	bad "break: no incident"; cat "$work/brk.err" >&2
else
	d=$(q "$inc" "SELECT detail FROM trigger")
	[ "$d" = "break $pid:sptd_bump ($fn_addr) hit by tid $pid" ] && ok ||
		bad "break: detail '$d', want the function at $fn_addr hit by tid $pid"
	ts=$(q "$inc" "SELECT ts FROM trigger")
	c=$(call_before "$ts")
	# the call the program logged right before calling: within 5 ms
	[ -n "$c" ] && [ $((ts - ${c% *})) -lt 5000000 ] && ok ||
		bad "break: fired at $ts, no logged call in the 5 ms before (nearest: ${c:-none})"
	# --report watch: the hit's thread and function (no values for a break)
	r=$("$BIN" query "$inc" --report watch --format csv | sed -n 3p | tr -d '"')
	case "$r" in
	"break=$pid:sptd_bump,$pid,sptd_bp_prog,$fn_addr,sptd_bump+0x0,,,,,,") ok ;;
	*) bad "break: --report watch row '$r'" ;;
	esac
fi

# ---- watch=PID:SYMBOL,w,len=8
mkdir -m 700 "$work/w"
timeout 30 "$BIN" --name "$recorder" --window 20ms --trigger "watch=$pid:sptd_counter,w,len=8" --count 4 -o "$work/w" \
	</dev/null >/dev/null 2>"$work/w.err"
n=0
silent=0
unknown=0
for inc in $(find "$work/w" -name 'incident-*.db' | sort); do
	n=$((n + 1))
	d=$(q "$inc" "SELECT detail FROM trigger" | tr -d '"')
	ts=$(q "$inc" "SELECT ts FROM trigger")
	old=$(echo "$d" | sed -n 's/.*: \([0-9]*\) -> \([0-9]*\).*/\1/p')
	new=$(echo "$d" | sed -n 's/.*: \([0-9]*\) -> \([0-9]*\).*/\2/p')
	case "$d" in
	"watch 0x"*" len 8 written by tid $pid at 0x"*" sptd_bump+0x"*) ok ;;
	*) bad "watch: detail '$d'"; continue ;;
	esac
	# the service wrote the previous incident for longer than the stores
	# are apart (a busy machine): this hit was stored over before it was
	# read, and says so instead of claiming values
	case "$d" in
	*": values unknown (stored again before it was read)"|*": values unknown (the value before is not known)")
		unknown=$((unknown + 1))
		[ -z "$(q "$inc" "SELECT old_value || new_value || silent FROM watch_hit WHERE ts = $ts")" ] &&
			ok || bad "watch: '$d' but its watch_hit row has values"
		continue ;;
	esac
	[ -n "$old" ] && [ -n "$new" ] || { bad "watch: no values in '$d'"; continue; }
	# the value the program stored at that call
	c=$(call_before "$ts")
	[ -n "$c" ] && [ "${c#* }" = "$new" ] && [ $((ts - ${c% *})) -lt 5000000 ] && ok ||
		bad "watch: fired at $ts with new value $new; the program's call before: ${c:-none}"
	# and the value before is the one the previous store left (the hits
	# the service drained while it wrote an incident are followed too)
	[ -n "$c" ] && [ "$(value_before_call "${c% *}")" = "$old" ] && ok ||
		bad "watch: value before $old, the program's previous store was $(value_before_call "${c% *}")"
	# --report watch agrees with the trigger row
	r=$("$BIN" query "$inc" --report watch --format csv | sed -n 3p | tr -d '"')
	hits=$(echo "$r" | awk -F, '{ print $NF }')
	sil=$(echo "$r" | awk -F, '{ print $(NF - 1) }')
	case "$r" in
	"watch=$pid:sptd_counter,w,len=8,$pid,sptd_bp_prog,0x"*",sptd_bump+0x"*",0x"*",$old,$new,"*) ok ;;
	*) bad "watch: --report watch row '$r' (old $old new $new)" ;;
	esac
	case "$r:$old:$new" in
	*",silent store,"*":$old:$old"|*",changed,"*) ok ;;
	*) bad "watch: --report watch store column of '$r' for $old -> $new" ;;
	esac
	# the hit's own call stack: the writer, called from main
	"$BIN" query "$inc" --report watch --format csv >"$work/rep" 2>&1
	awk -F, '$2 == "sptd_bump" { w = NR } $2 == "main" { m = NR } END { exit !(w && m && w < m) }' "$work/rep" &&
		ok || { bad "watch: the hit's stack is not sptd_bump called from main"; cat "$work/rep" >&2; }
	# i / 2: each store keeps the value or adds one; silent exactly when kept
	if [ "$new" = "$old" ]; then
		silent=$((silent + 1))
		case "$d" in *"silent store"*) ok ;; *) bad "watch: $old -> $new not flagged silent" ;; esac
	else
		[ "$new" = $((old + 1)) ] && ok || bad "watch: $old -> $new is not a store of i/2"
		case "$d" in *"silent store"*) bad "watch: $old -> $new flagged silent" ;; *) ok ;; esac
	fi
done
[ "$n" = 4 ] && ok || { bad "watch: $n incidents, want 4"; cat "$work/w.err" >&2; }
# every hit of the process is counted, and every other store of i/2 is
# silent: of H consecutive hits, H/2 rounded either way
# (hits whose values were not read are not counted, and break that run:
# then only at most all)
if [ "$unknown" = 0 ]; then
	[ -n "${hits:-}" ] && [ "$hits" -ge 4 ] && [ $((2 * sil - hits)) -le 1 ] &&
		[ $((hits - 2 * sil)) -le 1 ] && ok || bad "watch: ${sil:-?} silent of ${hits:-?} hits, want half"
else
	echo "watch: $unknown of $n triggers without values (the machine was busy)"
	[ -n "${hits:-}" ] && [ "${sil:-0}" -le "$hits" ] && ok || bad "watch: ${sil:-?} silent of ${hits:-?} hits"
fi

"$BIN" query "$inc" --report watch >"$work/out" 2>&1

# check_hits INC PID LOG: the watch_hit rows of INC against the program's
# LOG.  Each row with values: the last call logged before it stored its new
# value over the value of the call before; the thread is the program's;
# silent iff equal.  A row without values (the service read the word after
# a later store: see trigger_bp.c) claims none.  Sets nh (rows), nu
# (rows without values), nc (stores in the window), bad_rows.
check_hits() {
	h_inc=$1
	h_pid=$2
	ws=$(q "$h_inc" "SELECT value FROM meta WHERE key = 'window_start'")
	we=$(q "$h_inc" "SELECT value FROM meta WHERE key = 'window_end'")
	# the program's stores in the window: each logged just before its store
	awk -v a="$ws" -v b="$we" '$1 == "call" { if ($2 >= a - 2000000 && $2 <= b) print $2, $3, prev; prev = $3 }' \
		"$3" >"$work/calls"
	"$BIN" query "$h_inc" --format csv "SELECT ts, tid, coalesce(old_value, 'none'), \
		coalesce(new_value, 'none'), coalesce(silent, 'none'), function FROM watch_hit ORDER BY ts" |
		tail -n +2 | tr -d '"' | tr ',' ' ' >"$work/hits"
	nh=$(wc -l <"$work/hits")
	nu=$(awk '$3 == "none" || $4 == "none" || $5 == "none"' "$work/hits" | wc -l)
	nc=$(awk -v a="$ws" '$1 >= a' "$work/calls" | wc -l)
	bad_rows=0
	while read -r ts tid old new silent fn; do
		c=$(awk -v t="$ts" '$1 <= t { c = $0 } END { print c }' "$work/calls")
		set -- $c
		if [ "$old$new$silent" != nonenonenone ] &&
		   { [ -z "$c" ] || [ $((ts - $1)) -gt 5000000 ] || [ "$new" != "$2" ] ||
		     [ "$old" != "$3" ] || [ "$silent" != "$([ "$old" = "$new" ] && echo 1 || echo 0)" ]; }; then
			bad_rows=$((bad_rows + 1))
			echo "row: $ts $tid $old -> $new silent $silent; call before: ${c:-none}" >&2
		fi
		[ "$tid" = "$h_pid" ] || { bad_rows=$((bad_rows + 1)); echo "row tid $tid" >&2; }
		case "$fn" in sptd_bump+0x*) ;; *) bad_rows=$((bad_rows + 1)); echo "row function $fn" >&2 ;; esac
	done <"$work/hits"
}

# ---- every hit of a longer window: one watch_hit row per store the program
# logged in it (a store every 150 ms: about 6 in 1 s), each with the value
# it stored and the one before, silent exactly when they are equal
mkdir -m 700 "$work/wl"
timeout 30 "$BIN" --name "$recorder" --window 1s --trigger "watch=$pid:sptd_counter,w,len=8" --once \
	-o "$work/wl" </dev/null >/dev/null 2>"$work/wl.err"
inc=$(find "$work/wl" -name 'incident-*.db')
if [ -z "$inc" ]; then
	bad "watch window: no incident"; cat "$work/wl.err" >&2
else
	check_hits "$inc" "$pid" "$work/prog.out"
	[ "$nh" -ge 5 ] && ok || bad "watch window: $nh hit rows in 1 s, want about 6"
	# stores 150 ms apart: only a busy machine delays the service so much
	[ $((2 * nu)) -le "$nh" ] && ok || bad "watch window: $nu of $nh rows without values"
	[ "$bad_rows" = 0 ] && ok || bad "watch window: $bad_rows of $nh hit rows disagree with the program's log"
	# and no logged store of the window is missing (the first may lie just
	# before the window start)
	[ "$nh" -ge "$nc" ] && ok || bad "watch window: $nh hit rows, the program stored $nc times in it"
	# the one that fired is the last row, as meta says
	[ "$(tail -n 1 "$work/hits" | cut -d' ' -f1)" = "$(q "$inc" "SELECT ts FROM trigger")" ] && ok ||
		bad "watch window: the last hit row is not the trigger's"
	"$BIN" query "$inc" --report watch --format csv >"$work/rep" 2>&1
	[ "$(grep -c ',sptd_bump+0x' "$work/rep")" -ge "$nh" ] && ok ||
		{ bad "watch window: --report watch does not list every hit"; cat "$work/rep" >&2; }
fi
# ---- a service that reads late: stores 1 ms apart, the service stopped for
# 100 ms, so that one check drains a hundred hits; only the last store is
# in the word by then.  Rows that cannot know their values must say so, and
# every value a row does give must be the program's (before, each hit of
# such a batch took the word's value at the end: old and new wrong).
"$PROG" 6 1 >"$work/fast.out" &
progf=$!
i=0
while ! grep -q "^pid " "$work/fast.out" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
mkdir -m 700 "$work/wf"
"$BIN" --name "$recorder" --window 1s --trigger "watch=$progf:sptd_counter,w,len=8" --once -o "$work/wf" </dev/null \
	>/dev/null 2>"$work/wf.err" &
svc=$!
wait_for "$work/wf.err" "armed:" 30
sleep 0.3
kill -STOP "$svc"
sleep 0.1
kill -CONT "$svc"
wait "$svc"
rc=$?
kill "$progf" 2>/dev/null
wait "$progf" 2>/dev/null
inc=$(find "$work/wf" -name 'incident-*.db')
if [ "$rc" != 0 ] || [ -z "$inc" ]; then
	bad "watch, late reads: exit $rc, no incident"; cat "$work/wf.err" >&2
else
	check_hits "$inc" "$progf" "$work/fast.out"
	echo "watch, late reads: $nh rows, $nu without values, the program stored $nc times"
	[ "$nu" -ge 20 ] && ok || bad "watch, late reads: only $nu of $nh rows without values"
	[ "$bad_rows" = 0 ] && ok || bad "watch, late reads: $bad_rows of $nh rows disagree with the program's log"
	[ $((nh - nu)) -ge 100 ] && ok || bad "watch, late reads: only $((nh - nu)) rows with values"
fi

mkdir -m 700 "$work/plain"
timeout 30 "$BIN" --name "$recorder" --window 20ms --trigger timer=100ms --once -o "$work/plain" </dev/null >/dev/null 2>&1
plain=$(find "$work/plain" -name 'incident-*.db')
[ -n "$plain" ] && "$BIN" query "$plain" --report watch 2>&1 | grep -q "not a break= or watch= incident" &&
	ok || bad "--report watch on a timer incident does not say it is none"

# ---- break=PATH:SYMBOL: every process that maps the file, at its own
# address, and one started after arming (found by the scan of /proc)
"$PROG" 8 150 >"$work/progb.out" &
progb=$!
mkdir -m 700 "$work/path"
"$BIN" --name "$recorder" --window 2s --trigger "break=$PROG:sptd_bump" --once -o "$work/path" </dev/null \
	>/dev/null 2>"$work/path.err" &
svc=$!
wait_for "$work/path.err" "armed:" 30
"$PROG" 4 150 >"$work/progc.out" &
progc=$!
wait "$svc"
rc=$?
inc=$(find "$work/path" -name 'incident-*.db')
if [ "$rc" != 0 ] || [ -z "$inc" ]; then
	bad "break=PATH: exit $rc, no incident"; cat "$work/path.err" >&2
else
	grep -q "2 process(es) map $PROG" "$work/path.err" && ok ||
		{ bad "break=PATH: the two running processes were not armed"; cat "$work/path.err" >&2; }
	ws=$(q "$inc" "SELECT value FROM meta WHERE key = 'window_start'")
	for who in "$pid:$work/prog.out" "$progb:$work/progb.out" "$progc:$work/progc.out"; do
		p=${who%%:*}
		log=${who#*:}
		base_p=$(awk -v f="$real" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' \
			/proc/$p/maps 2>/dev/null)
		want_ip=$((0x${base_p:-0} + 0x$fn_off))
		"$BIN" query "$inc" --format csv "SELECT ts, ip, function FROM watch_hit WHERE tid = $p ORDER BY ts" |
			tail -n +2 | tr ',' ' ' >"$work/path.hits"
		nh=$(wc -l <"$work/path.hits")
		[ "$nh" -ge 1 ] && ok || bad "break=PATH: no hit of process $p in the window"
		# each hit: this process's own address of sptd_bump, right after a
		# call it logged; and as many hits as calls it logged in the window
		# (less the one its last call may have had after the trigger)
		while read -r ts ip fn; do
			c=$(awk -v t="$ts" '$1 == "call" && $2 <= t { c = $2 } END { print c }' "$log")
			[ "$ip" = "$want_ip" ] && [ "$fn" = sptd_bump ] && [ -n "$c" ] &&
				[ $((ts - c)) -lt 5000000 ] && ok ||
				bad "break=PATH: process $p hit at $ts ip $ip ($fn), want $want_ip after a call (last ${c:-none})"
		done <"$work/path.hits"
		last=$(tail -n 1 "$work/path.hits" | cut -d' ' -f1)
		first=$(head -n 1 "$work/path.hits" | cut -d' ' -f1)
		from=$ws
		if [ "$p" = "$progc" ]; then
			# started after arming: hit from the scan that found it on,
			# at most a second (and a call period) after it started
			from=$((first - 5000000))
			started=$(awk '$1 == "call" { print $2; exit }' "$log")
			[ -n "$started" ] && [ $((first - started)) -lt 1500000000 ] && ok ||
				bad "break=PATH: the new process's first hit came $(((first - ${started:-0}) / 1000000)) ms after its first call"
		fi
		nc=$(awk -v a="$from" -v b="${last:-0}" '$1 == "call" && $2 >= a && $2 <= b' "$log" | wc -l)
		[ "$nh" -ge "$nc" ] && ok || bad "break=PATH: process $p: $nh hits, $nc calls logged in the window"
	done
	n=$(q "$inc" "SELECT count(*) FROM watch_hit WHERE tid NOT IN ($pid, $progb, $progc)")
	[ "$n" = 0 ] && ok || bad "break=PATH: $n hits of other processes"
	d=$(q "$inc" "SELECT detail FROM trigger")
	case "$d" in "break $PROG:sptd_bump (0x"*" in pid "*") hit by tid "*) ok ;;
	*) bad "break=PATH: detail '$d'" ;; esac
fi
kill "$progb" "$progc" 2>/dev/null
# a thread that exits hangs its event up: the service closes it instead of
# waking for it over and over (it spun at 100 % of a CPU before)
"$PROG" 2 100 >/dev/null &
progb=$!
mkdir -m 700 "$work/reap"
"$BIN" --name "$recorder" --window 10s --trigger "break=$PROG:sptd_bump" --trigger timer=10s --once \
	-o "$work/reap" </dev/null >/dev/null 2>"$work/reap.err" &
svc=$!
wait_for "$work/reap.err" "armed:" 30
grep -q "2 process(es) map" "$work/reap.err" && ok ||
	{ bad "break=PATH: the short-lived process was not armed"; cat "$work/reap.err" >&2; }
wait "$progb" 2>/dev/null
sleep 0.5
t0=$(awk '{ print $14 + $15 }' /proc/$svc/stat)
sleep 2
t1=$(awk '{ print $14 + $15 }' /proc/$svc/stat)
hz=$(getconf CLK_TCK)
[ $((t1 - t0)) -lt $((hz / 2)) ] && ok ||
	bad "break=PATH: the service used $((t1 - t0)) of $((2 * hz)) CPU ticks after the process exited"
kill "$svc" 2>/dev/null
wait "$svc" 2>/dev/null

# ---- errors
expect 2 "cannot open /nonexistent/lib.so" -- "$BIN" --name "$recorder" --trigger "break=/nonexistent/lib.so:f" --once -o "$work/w"
expect 2 "no function 'nosuch' in $PROG" -- "$BIN" --name "$recorder" --trigger "break=$PROG:nosuch" --once -o "$work/w"
expect 2 "needs a symbol after the file" -- "$BIN" --name "$recorder" --trigger "break=$PROG:" --once -o "$work/w"
expect 2 "no function 'nosuch'" -- "$BIN" --name "$recorder" --trigger "break=$pid:nosuch" --once -o "$work/w"
expect 2 "no process 2000000000" -- "$BIN" --name "$recorder" --trigger "break=2000000000:main" --once -o "$work/w"
expect 2 "is not aligned to len=8" -- "$BIN" --name "$recorder" --trigger "watch=$pid:sptd_spare+4,w,len=8" --once -o "$work/w"
expect 2 "watch: unknown option 'x'" -- "$BIN" --name "$recorder" --trigger "watch=$pid:sptd_counter,x" --once
# more watchpoints than debug registers (x86: 4 per CPU)
"$BIN" --name "$recorder" --trigger "watch=$pid:sptd_spare+0,w" --trigger "watch=$pid:sptd_spare+8,w" \
	--trigger "watch=$pid:sptd_spare+16,w" --trigger "watch=$pid:sptd_spare+24,w" \
	--trigger "watch=$pid:sptd_spare+32,w" --once -o "$work/w" </dev/null >"$work/out" 2>"$work/err" &
five=$!
i=0
while kill -0 "$five" 2>/dev/null && ! grep -q "armed:" "$work/err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if grep -q "armed:" "$work/err"; then
	kill "$five" 2>/dev/null
	skipped="$skipped debug-register-limit(this CPU armed 5 watchpoints)"
else
	wait "$five"
	rc=$?
	[ "$rc" = 2 ] && grep -q "no debug register left" "$work/err" && ok ||
		{ bad "5 watchpoints: exit $rc"; cat "$work/err" >&2; }
fi
wait "$five" 2>/dev/null

finish
