#!/bin/sh
# test_hostile.sh — issue 28's attacks on the commands that read incidents
# and write where they are told, done for real (root, tracefs, useradd;
# skips 77).  One incident is recorded by a real recorder while an
# unprivileged user's busy thread is named with terminal escapes; then:
#   4. `query --format csv` of that thread's name, to a file and under a
#      real pty (script(1)): no ESC byte reaches either, the name shows
#      escaped as in the table format;
#   5. a raw_sample call chain of 100 MB, and call chains forging millions
#      of distinct frames: decode exits 6 naming the row, in bounded memory
#      (ulimit -v), the file unchanged, no temporary file left;
#   6. raw_sample, raw_ftrace_page and raw_pt rows with a cpu that is no
#      CPU (-1, 2^31, INT64_MAX, text): decode exits 6 naming table and row;
#   7. kill -9 of import and export mid-way: the next run to the same name
#      leaves no NAME.tmp.*; a live (stopped) writer's temporary is kept;
#   8. `sudo sysptd export/import -o` and decode through a symlink the sudo
#      user owns to a root-only directory: refused, root's files untouched.
HERE=$(dirname "$0")
. "$HERE/seclib.sh"
FIX=${SPTD_FIXTURES:-}/real-pt
name="hostile$$"
cleanup() { seclib_cleanup; }
trap cleanup EXIT
trap 'exit 143' INT TERM HUP
esc=$(printf '\033')

# ---- one real incident, with a thread named "ESC]0;pwned BEL ESC[2J" -----------
# (as_atk runs in a subshell: the spinning shell's own pid is in its
# file, for the kill; timeout ends it in any case)
as_atk timeout 60 sh -c 'echo $$ >"$1"; printf "\033]0;pwned\007\033[2J" >/proc/$$/comm
	while :; do :; done' sh "$adir/spin.pid" >/dev/null 2>&1 &
mkdir -m 700 "$work/rec"
i=0
while [ ! -s "$adir/spin.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
spin=$(cat "$adir/spin.pid")
atk_pids="$atk_pids $spin"
sleep 0.2
timeout 60 "$BIN" --name "$name" --window 300ms --trigger timer=400ms --count 1 \
	-o "$work/rec" >"$work/rec.out" 2>"$work/rec.err"
check '[ $? = 0 ]' "the recorder failed: $(cat "$work/rec.err")"
kill -9 "$spin" 2>/dev/null
chmod 755 "$adir"
inc=$(head -n 1 "$work/rec.out")
[ -f "$inc" ] || { bad "no incident recorded"; finish; }
n=$("$BIN" query "$inc" "SELECT count(*) FROM thread WHERE name LIKE '%pwned%'" --format csv |
    tail -n 1)
check '[ "$n" -ge 1 ]' "the escape-named thread is not in the incident ($n)"

# ---- 4. CSV: no control byte reaches the terminal --------------------------------
sql="SELECT tid, name FROM thread WHERE name LIKE '%pwned%'"
printf '#!/bin/sh\nexec "%s" query "%s" "%s" --format csv\n' "$BIN" "$inc" "$sql" >"$work/q.sh"
script -qec "sh $work/q.sh" /dev/null >"$work/pty.out" 2>&1
check '[ $? = 0 ]' "query under a pty failed: $(cat "$work/pty.out")"
check '! grep -q "$esc" "$work/pty.out"' \
	"an ESC byte reached the terminal: $(od -c "$work/pty.out" | head -3)"
check 'grep -qF "\\x1b]0;pwned\\x07\\x1b[2J" "$work/pty.out"' \
	"the name is not shown escaped: $(od -c "$work/pty.out" | head -3)"
# to a file too (it is cat later), as the table and JSON formats do
sh "$work/q.sh" >"$work/csv.out" 2>&1
check '[ $? = 0 ] && ! grep -q "$esc" "$work/csv.out" && grep -qF "\\x07" "$work/csv.out"' \
	"csv to a file holds control bytes: $(od -c "$work/csv.out" | head -3)"

# ---- 5. and 6. damaged raw rows: exit 6, the row named, nothing changed ----------
# damage SQL PATTERN [ULIMIT_KB]: decode of a copy of the incident with SQL
# applied exits 6 with PATTERN on stderr, within the memory limit, leaving
# the file as it was and no temporary file beside it
# AddressSanitizer reserves terabytes of address space for its shadow: a
# sanitizer build runs without the limit (the plain build holds it)
vlimit=unlimited
ldd "$BIN" 2>/dev/null | grep -q libasan || vlimit=
damage() {
	rm -f "$work/d.db"*
	cp "$inc" "$work/d.db"
	sqlite3 "$work/d.db" "$1" || { bad "sqlite3 could not apply: $1"; return; }
	before=$(sum "$work/d.db")
	(ulimit -v "${vlimit:-${3:-1500000}}"; timeout 120 "$BIN" decode -q "$work/d.db") \
		>"$work/d.out" 2>"$work/d.err"
	st=$?
	check '[ "$st" = 6 ] && grep -q -- "$2" "$work/d.err"' \
		"$1: exit $st (want 6, /$2/): $(head -c 600 "$work/d.err")"
	check '[ "$(sum "$work/d.db")" = "$before" ]' "$1: the file changed"
	check '[ -z "$(ls "$work" | grep "^d\.db\.tmp\.")" ]' "$1: left $(ls "$work" | grep "^d\.db\.")"
}
first="WHERE rowid = (SELECT min(rowid) FROM"
damage "UPDATE raw_sample SET cpu = -1 $first raw_sample)" \
	"damaged: raw_sample row [0-9]* has cpu -1, which is no CPU"
damage "UPDATE raw_sample SET cpu = 2147483648 $first raw_sample)" \
	"damaged: raw_sample row [0-9]* has cpu 2147483648"
damage "UPDATE raw_sample SET cpu = 9223372036854775807 $first raw_sample)" \
	"damaged: raw_sample row [0-9]* has cpu 9223372036854775807"
damage "UPDATE raw_sample SET cpu = 'one' $first raw_sample)" \
	"damaged: raw_sample row [0-9]* has a cpu that is not an integer"
damage "UPDATE raw_ftrace_page SET cpu = -1 $first raw_ftrace_page)" \
	"damaged: raw_ftrace_page row [0-9]* has cpu -1"
damage "UPDATE raw_ftrace_page SET cpu = 2147483648 $first raw_ftrace_page)" \
	"damaged: raw_ftrace_page row [0-9]* has cpu 2147483648"
damage "INSERT INTO raw_pt (cpu, seq, data) VALUES (-1, 0, x'0282028202820282')" \
	"damaged: raw_pt row [0-9]* has cpu -1"
damage "INSERT INTO raw_pt (cpu, seq, data) VALUES (9223372036854775807, 0, x'02820282')" \
	"damaged: raw_pt row [0-9]* has cpu 9223372036854775807"
# 5. one chain of 100 MB (13 M frames), in 1.5 GB of address space
damage "UPDATE raw_sample SET callchain = zeroblob(104857600) $first raw_sample)" \
	"damaged: raw_sample row [0-9]* has a call chain of 13107200 entries, more than any kernel"
damage "UPDATE raw_sample SET callchain = x'0102030405' $first raw_sample)" \
	"call chain of 5 bytes, not whole 8-byte addresses"
# chains each within the limit, together 1.8 M distinct frames for a
# few hundred rows: more callsites than 128 a row and a million
damage "UPDATE raw_sample SET callchain = randomblob(480000) WHERE rowid IN
	(SELECT rowid FROM raw_sample LIMIT 30)" \
	"damaged: its call chains hold more than [0-9]* distinct frames" 1000000
# a chain at the limit is no damage
rm -f "$work/d.db"*
cp "$inc" "$work/d.db"
sqlite3 "$work/d.db" "UPDATE raw_sample SET callchain = zeroblob(8 * 66535) $first raw_sample)"
"$BIN" decode -q "$work/d.db" >"$work/d.out" 2>"$work/d.err"
check '[ $? = 0 ]' "a chain of 66535 entries: $(cat "$work/d.err")"

# ---- 7. kill -9 during import and export, then again to the same name ----------
# tmps DIR NAME: the temporary files of NAME in DIR
tmps() { ls "$1" | grep -c "^$2\.tmp\."; }
# tree PID: its descendants
tree() {
	for _c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$_c"; tree "$_c"; done
}
# kill_midway DIR NAME CMD...: start CMD, and once NAME's temporary file is
# there, kill -9 it and its child; 0 when the kill landed (the file stays)
kill_midway() {
	_dir=$1 _nm=$2
	shift 2
	"$@" >/dev/null 2>&1 &
	_pid=$!
	_i=0
	while [ "$(tmps "$_dir" "$_nm")" = 0 ] && kill -0 "$_pid" 2>/dev/null && [ $_i -lt 2000 ]; do
		_i=$((_i + 1))
	done
	_kids=$(tree "$_pid")
	kill -9 "$_pid" $_kids 2>/dev/null
	wait "$_pid" 2>/dev/null
	for _k in $_kids; do while kill -0 "$_k" 2>/dev/null; do sleep 0.01; done; done
	[ "$(tmps "$_dir" "$_nm")" != 0 ]
}
# an incident whose export is slow (indexes dropped: quadratic lookups)
slow="$work/slow.db"
cp "$inc" "$slow"
sqlite3 "$slow" "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
	INSERT INTO sched_slice (ts, dur, cpu, utid, end_state, priority, flags)
	SELECT 20000000 + i * 10, 5, i % 2, 1, 'S', 120, 0 FROM c;
	DROP INDEX IF EXISTS sched_slice_utid; DROP INDEX IF EXISTS sched_slice_cpu_ts"
out="$work/out"
mkdir -m 700 "$out"
landed=0
for i in 1 2 3; do
	kill_midway "$out" e.pftrace "$BIN" export "$slow" -q -o "$out/e.pftrace" && landed=$((landed + 1))
done
# each run removed what the one before it left: one is there
check '[ "$landed" = 3 ] && [ "$(tmps "$out" e.pftrace)" = 1 ]' \
	"export: $landed of 3 kills landed, $(tmps "$out" e.pftrace) temporaries (want at most 1)"
# a live export of the same name, stopped mid-way: its temporary is kept
"$BIN" export "$slow" -q -o "$out/e.pftrace" >/dev/null 2>"$work/live.err" &
live=$!
while [ "$(tmps "$out" e.pftrace)" = 1 ] && kill -0 "$live" 2>/dev/null; do :; done
sleep 0.2   # its child started
live_kids=$(cat "/proc/$live/task/$live/children" 2>/dev/null)
kill -STOP "$live" $live_kids 2>/dev/null
live_tmp=$(ls -t "$out" | grep "^e\.pftrace\.tmp\." | head -n 1)
"$BIN" export "$inc" -q -o "$out/e.pftrace" >"$work/e.out" 2>"$work/e.err"
check '[ $? = 0 ] && [ -f "$out/e.pftrace" ]' "export after the kills: $(cat "$work/e.err")"
check 'grep -q "removed 1 temporary file(s) beside $out/e.pftrace" "$work/live.err"' \
	"export said: $(cat "$work/live.err")"
check '[ "$(ls "$out" | grep "^e\.pftrace\.tmp\.")" = "$live_tmp" ]' \
	"export: left or removed wrongly: $(ls "$out") (the live one: $live_tmp)"
kill -9 "$live" $live_kids 2>/dev/null
kill -CONT "$live" $live_kids 2>/dev/null
wait "$live" 2>/dev/null
for k in $live_kids; do while kill -0 "$k" 2>/dev/null; do sleep 0.01; done; done
"$BIN" export "$inc" -q -o "$out/e.pftrace" 2>"$work/e.err"
check '[ $? = 0 ] && [ "$(tmps "$out" e.pftrace)" = 0 ]' \
	"export: the dead writer's temporary stays: $(ls "$out")"

if [ -f "$FIX/hase-loopy/perf.data" ]; then
	# an import takes 40 ms: its fsync is made to take 3 s (strace's
	# fault injection), so that the kill lands while the file is written
	slowfs=""
	command -v strace >/dev/null &&
		slowfs="strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=3000000"
	landed=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill_midway "$out" i.db $slowfs "$BIN" import "$FIX/hase-loopy/perf.data" \
			--symfs "$FIX/hase-loopy/symfs" -q -o "$out/i.db" && landed=$((landed + 1))
		rm -f "$out/i.db"
	done
	left=$(tmps "$out" i.db)
	check '[ "$landed" -ge 1 ] && [ "$left" -le 1 ]' \
		"import: $landed of 10 kills landed, $left temporaries (want at most 1)"
	"$BIN" import "$FIX/hase-loopy/perf.data" --symfs "$FIX/hase-loopy/symfs" -q \
		-o "$out/i.db" >/dev/null 2>"$work/i.err"
	check '[ $? = 0 ] && [ "$(tmps "$out" i.db)" = 0 ]' \
		"import after $landed kills left $(tmps "$out" i.db): $(cat "$work/i.err")"
else
	echo "note: no fixtures at $FIX: the import part is not run" >&2
fi

# ---- 8. through sudo, -o through the sudo user's link to a root-only directory --
safe="$work/rootonly"
mkdir -m 700 "$safe"
printf 'precious root data\n' >"$safe/victim.pftrace"
cp "$inc" "$safe/victim.db"
chmod 600 "$safe/victim.pftrace" "$safe/victim.db"
vsum=$(sum "$safe/victim.pftrace")
dsum=$(sum "$safe/victim.db")
chmod 755 "$adir"
as_atk ln -s "$safe" "$adir/exp"
sudo_as() { SUDO_UID=$atk_uid SUDO_GID=$atk_gid SUDO_USER=$atk "$@"; }
sudo_as "$BIN" export "$inc" -q -o "$adir/exp/victim.pftrace" >/dev/null 2>"$work/s.err"
st=$?
check '[ "$st" != 0 ] && grep -q "may not write there" "$work/s.err"' \
	"sudo export through the user's link: exit $st, $(cat "$work/s.err")"
check '[ "$(sum "$safe/victim.pftrace")" = "$vsum" ]' "sudo export replaced root's file"
# the same directory named directly: the user may not write it either
sudo_as "$BIN" export "$inc" -q -o "$safe/new.pftrace" >/dev/null 2>"$work/s.err"
check '[ $? != 0 ] && [ ! -e "$safe/new.pftrace" ]' "sudo export into root's directory: $(cat "$work/s.err")"
if [ -f "$FIX/hase-loopy/perf.data" ]; then
	sudo_as "$BIN" import "$FIX/hase-loopy/perf.data" -q -o "$adir/exp/new.db" \
		>/dev/null 2>"$work/s.err"
	st=$?
	check '[ "$st" != 0 ] && [ ! -e "$safe/new.db" ] && grep -q "may not write there" "$work/s.err"' \
		"sudo import through the user's link: exit $st, $(ls "$safe"), $(cat "$work/s.err")"
fi
# decode replaces the incident it names: never through a user's link
sudo_as "$BIN" decode -q "$adir/exp/victim.db" >/dev/null 2>"$work/s.err"
st=$?
check '[ "$st" = 4 ] && grep -q "is a link owned by uid $atk_uid" "$work/s.err"' \
	"sudo decode through the user's link: exit $st, $(cat "$work/s.err")"
check '[ "$(sum "$safe/victim.db")" = "$dsum" ]' "sudo decode replaced root's incident"
check '[ "$(ls "$safe" | sort | tr "\n" " ")" = "victim.db victim.pftrace " ]' \
	"root's directory now holds: $(ls "$safe")"
# what the user may write still works, and is theirs
sudo_as "$BIN" export "$inc" -q -o "$adir/mine.pftrace" 2>"$work/s.err"
check '[ $? = 0 ] && [ "$(stat -c %u "$adir/mine.pftrace")" = "$atk_uid" ]' \
	"sudo export to the user's own directory: $(cat "$work/s.err")"
finish
