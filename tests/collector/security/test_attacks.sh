#!/bin/sh
# test_attacks.sh — issue 10's attacks by an unprivileged local user, done
# for real against the built sysptd (root, tracefs, useradd; skips 77):
#   1. a deleted executable replaced by a FIFO: the recorder must not hang
#      (it writes its incident, answers `sysptd snapshot` and SIGTERM) and
#      must name the deleted program's functions from the bytes that ran;
#      a FIFO as uprobe target is refused at once;
#   2. symlinks planted at export, decode and incident names pointing at a
#      root-owned victim: the victim stays untouched;
#   4. --output: a symlinked, a world-writable, a user-owned directory are
#      refused (exit 2); in the default directory the user cannot replace
#      an incident; with --unsafe-output a replaced incident is not deleted;
#   5. kill -9 of `sysptd decode` at random moments: the incident stays
#      whole, query/export never fail on it, the next decode cleans up;
#   6. query, export, script and decode run as nobody (or the sudo user) once the
#      incident is open; the service keeps only its capabilities.
HERE=$(dirname "$0")
. "$HERE/seclib.sh"
cleanup() { seclib_cleanup; }
trap cleanup EXIT
trap 'exit 143' INT TERM HUP

victim="$work/victim"
printf 'precious root data\n' >"$victim"
chmod 600 "$victim"
victim_sum=$(sum "$victim")

# ---- 1. the FIFO at a deleted executable's path -------------------------------
prog="$adir/victimprog"
cp "$BUILD/progs/ptprog-fib" "$prog"
chown "$atk" "$prog"
chmod 700 "$prog" "$adir"
as_atk "$prog" 47 &
upid=$!
atk_pids="$atk_pids $upid"
sleep 0.3
as_atk rm "$prog"
as_atk mkfifo "$prog"
[ -p "$prog" ] && ok || bad "the attacker could not put a FIFO at $prog"
"$BIN" --name "$recorder" --window 50ms --trigger timer=400ms --count 3 -o "$work/fifo" \
	>"$work/fifo.out" 2>"$work/fifo.err" &
svc=$!
if wait_for "$work/fifo.err" "armed:"; then ok; else bad "recorder did not arm"; cat "$work/fifo.err" >&2; fi
# the recorder stays responsive: a snapshot answers (the old open() blocked
# for ever in wait_for_partner), within seconds
if timeout 20 "$BIN" snapshot --name "$recorder" >"$work/snap.out" 2>"$work/snap.err"; then ok; else
	bad "sysptd snapshot did not answer"; cat "$work/snap.err" "$work/fifo.err" >&2
fi
snap=$(cat "$work/snap.out")
[ -f "$snap" ] && ok || bad "snapshot wrote no incident ($snap)"
i=0
while kill -0 "$svc" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$svc" 2>/dev/null; then
	bad "the recorder hangs (wchan $(cat /proc/$svc/wchan 2>/dev/null))"
	kill -9 "$svc"
fi
wait "$svc"
check '[ $? = 0 ]' "recorder exit status"
svc=""
check '[ "$(wc -l <"$work/fifo.out")" = 3 ]' "3 incidents expected: $(cat "$work/fifo.out")"
# the deleted program's samples are named from the deleted file itself
# (/proc/PID/map_files), not from the FIFO now at its path
n=0
for inc in $(cat "$work/fifo.out"); do
	k=$("$BIN" query "$inc" "SELECT count(*) FROM symbol JOIN dso ON dso.id = symbol.dso_id
	     WHERE symbol.name = 'fib' AND dso.path = '$prog' AND dso.build_id IS NOT NULL" \
	     --format csv | tail -n 1)
	n=$((n + k))
done
check '[ "$n" -ge 1 ]' "no symbol 'fib' of the deleted $prog in any incident"
[ -p "$prog" ] && ok || bad "the FIFO was touched"
# SIGTERM is answered at once while the user's FIFO is still there
"$BIN" --name "$recorder" --window 20ms --trigger timer=200ms -o "$work/fifo" >/dev/null 2>"$work/term.err" &
svc=$!
wait_for "$work/term.err" "armed:" || bad "second recorder did not arm"
sleep 0.6
kill -TERM "$svc"
i=0
while kill -0 "$svc" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$svc" 2>/dev/null; then bad "SIGTERM ignored"; kill -9 "$svc"; else ok; fi
wait "$svc" 2>/dev/null
svc=""
# a uprobe on the FIFO is refused at once (exit 2), not waited on
timeout 10 "$BIN" --name "$recorder" --trigger "uprobe=$prog:fib" --once -o "$work/up" >/dev/null 2>"$work/up.err"
st=$?
check '[ "$st" = 2 ] && grep -q "not a regular file" "$work/up.err"' \
	"uprobe on a FIFO: exit $st, $(cat "$work/up.err")"
kill -9 "$upid" 2>/dev/null

# ---- 2. symlinks planted at the names root writes -----------------------------
inc=$(head -n 1 "$work/fifo.out")
exp="$adir/exp"
mkdir "$exp"
chown "$atk" "$exp"
chmod 755 "$exp" "$adir"
# the names a careless writer would use: FILE, FILE.tmp, FILE.tmp.<pid>
for name in t.pftrace t.pftrace.tmp t.pftrace.tmp.1 x.db-journal x.db.tmp x.db.tmp.1; do
	as_atk ln -s "$victim" "$exp/$name"
done
"$BIN" export "$inc" -o "$exp/t.pftrace" >/dev/null 2>"$work/exp.err"
check '[ $? = 0 ]' "export into the attacker's directory failed: $(cat "$work/exp.err")"
check '[ "$(sum "$victim")" = "$victim_sum" ]' "export wrote through a planted symlink"
check '[ -f "$exp/t.pftrace" ] && [ ! -L "$exp/t.pftrace" ]' "export did not replace the symlink"
# as private as the incident (0600), and root's (root ran it)
check '[ "$(stat -c %a:%u "$exp/t.pftrace")" = "600:0" ]' \
	"export mode/owner $(stat -c %a:%u "$exp/t.pftrace") (want 600:0)"
# run through sudo: the export is the user's
SUDO_UID=$atk_uid SUDO_GID=$atk_gid "$BIN" export "$inc" -o "$exp/mine.pftrace" -q
check '[ "$(stat -c %a:%u "$exp/mine.pftrace")" = "600:$atk_uid" ]' \
	"sudo export mode/owner $(stat -c %a:%u "$exp/mine.pftrace")"
# decode of an incident in that directory (root's copy of it)
cp "$inc" "$exp/x.db"
"$BIN" decode "$exp/x.db" >/dev/null 2>"$work/dec.err"
check '[ $? = 0 ]' "decode failed: $(cat "$work/dec.err")"
check '[ "$(sum "$victim")" = "$victim_sum" ]' "decode wrote through a planted symlink"
check '[ -L "$exp/x.db-journal" ] && [ -f "$exp/x.db" ] && [ ! -L "$exp/x.db" ]' \
	"decode touched the planted journal link or the incident is not a file"
check 'integrity "$exp/x.db"' "decoded copy fails integrity_check"
# the recorder in a directory the user writes (--unsafe-output): links at
# the next incident names and at the state file
rec="$adir/rec"
mkdir "$rec"
chown "$atk" "$rec"
chmod 755 "$rec"
now=$(date -u +%s)
for s in 0 1 2 3; do
	stamp=$(date -u -d "@$((now + s))" +%Y%m%dT%H%M%SZ)
	for q in 000001 000002; do as_atk ln -s "$victim" "$rec/incident-$stamp-$q.db"; done
done
as_atk ln -s "$victim" "$rec/.sysptd-state"
timeout 60 "$BIN" --name "$recorder" --unsafe-output --window 20ms --trigger timer=200ms --once -o "$rec" \
	>"$work/rec.out" 2>"$work/rec.err"
check '[ $? = 0 ] && [ -f "$(cat "$work/rec.out")" ] && [ ! -L "$(cat "$work/rec.out")" ]' \
	"recorder with planted links: $(cat "$work/rec.err")"
check '[ "$(sum "$victim")" = "$victim_sum" ]' "the recorder wrote through a planted symlink"
check '[ -f "$rec/.sysptd-state" ] && [ ! -L "$rec/.sysptd-state" ]' "state file not replaced"

# ---- 4. --output checks ------------------------------------------------------
as_atk mkdir "$adir/real"
as_atk ln -s "$adir/real" "$adir/link"
timeout 60 "$BIN" --name "$recorder" --once -o "$adir/link" >/dev/null 2>"$work/o1.err"
check '[ $? = 2 ] && grep -q "symbolic link" "$work/o1.err" && grep -q -- "--unsafe-output" "$work/o1.err"' \
	"symlinked --output: $(cat "$work/o1.err")"
timeout 60 "$BIN" --name "$recorder" --once -o "$adir/real" >/dev/null 2>"$work/o2.err"
check '[ $? = 2 ] && grep -q "owned by another user" "$work/o2.err"' "user-owned --output: $(cat "$work/o2.err")"
mkdir "$work/ww"
chmod 1777 "$work/ww"
timeout 60 "$BIN" --name "$recorder" --once -o "$work/ww" >/dev/null 2>"$work/o3.err"
check '[ $? = 2 ] && grep -q "writable by group or others" "$work/o3.err"' \
	"world-writable --output: $(cat "$work/o3.err")"
# in a checked directory the user can neither replace nor remove an incident
chmod 755 "$work"
one=$(head -n 1 "$work/fifo.out")
as_atk sh -c "rm -f '$one'; echo forged > '$one'" 2>/dev/null
check '[ -f "$one" ] && integrity "$one"' "the user replaced $one"
chmod 700 "$work"
# where they can (--unsafe-output), a replaced incident is never deleted
timeout 60 "$BIN" --name "$recorder" --unsafe-output --window 20ms --trigger timer=150ms --count 2 --keep 1 -o "$rec" \
	>"$work/rep.out" 2>"$work/rep.err"
first=$(sed -n 1p "$work/rep.out")
second=$(sed -n 2p "$work/rep.out")
check '[ ! -e "$first" ] && [ -f "$second" ]' "--keep 1 did not keep only the newest"
as_atk sh -c "rm -f '$second' && echo forged > '$second'"
timeout 60 "$BIN" --name "$recorder" --unsafe-output --window 20ms --trigger timer=150ms --once --keep 1 -o "$rec" \
	>"$work/rep2.out" 2>"$work/rep2.err"
check '[ "$(cat "$second")" = forged ]' "retention deleted the user's file at $second"
check 'grep -q "no longer the incident sysptd wrote" "$work/rep2.err"' "no message about the replaced incident"

# ---- 5. kill -9 during decode ------------------------------------------------
dec="$work/dec.db"
cp "$(sed -n 2p "$work/fifo.out")" "$dec"
for k in 1 2 3 4 5 6 7 8; do
	setsid "$BIN" decode "$dec" >/dev/null 2>&1 &
	dpid=$!
	sleep "0.0$((k * 7 % 10))"
	kill -9 -- "-$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	check '[ ! -e "$dec-journal" ] && integrity "$dec"' "decode killed ($k): incident damaged"
	"$BIN" query "$dec" "SELECT count(*) FROM meta" >/dev/null 2>"$work/q.err"
	check '[ $? = 0 ]' "query after a killed decode ($k): $(cat "$work/q.err")"
done
"$BIN" export "$dec" -o "$work/dec.pftrace" -q
check '[ $? = 0 ]' "export after killed decodes"
"$BIN" decode "$dec" >/dev/null 2>&1
check '[ $? = 0 ] && [ -z "$(ls "$work" | grep "^dec.db.tmp")" ]' \
	"a decode left temporary files: $(ls "$work" | grep "^dec.db.tmp")"

# ---- 6. least privilege ------------------------------------------------------
# a long query: read the child's credentials while it runs
slow="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000000) SELECT count(*) FROM c"
status_of_child() { # PARENT: the Uid/NoNewPrivs/CapEff lines of its child
	i=0
	while [ $i -lt 100 ]; do
		c=$(cat "/proc/$1/task/$1/children" 2>/dev/null | awk '{print $1}')
		[ -n "$c" ] && grep -E "^(Uid|NoNewPrivs|CapEff):" "/proc/$c/status" 2>/dev/null &&
			return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}
"$BIN" query "$dec" "$slow" >/dev/null 2>&1 &
q=$!
sleep 0.3
status_of_child "$q" >"$work/creds" || bad "no child process for query"
kill "$q" 2>/dev/null
wait "$q" 2>/dev/null
nobody=$(id -u nobody)
check 'grep -q "^Uid:[[:space:]]*$nobody[[:space:]]*$nobody[[:space:]]*$nobody[[:space:]]*$nobody" "$work/creds"' \
	"query's reader is not nobody: $(cat "$work/creds")"
check 'grep -q "^CapEff:[[:space:]]*0000000000000000" "$work/creds" && grep -q "^NoNewPrivs:[[:space:]]*1" "$work/creds"' \
	"query's reader keeps privileges: $(cat "$work/creds")"
# the parent killed (kill -9) while its unprivileged reader runs: the
# reader stops too (the kernel forgets a parent-death signal when the
# credentials change, so the drop must set it again), within 2 s
"$BIN" query "$dec" "$slow" >/dev/null 2>&1 &
q=$!
sleep 0.3
reader=""
i=0
while [ -z "$reader" ] && [ $i -lt 100 ]; do
	reader=$(awk '{print $1}' "/proc/$q/task/$q/children" 2>/dev/null)
	[ -z "$reader" ] && sleep 0.05
	i=$((i + 1))
done
if [ -z "$reader" ]; then
	bad "no child process for query (parent-death check)"
else
	# the drop happens once the incident is open: wait for the reader's uid
	i=0
	while [ $i -lt 100 ] && ! grep -q "^Uid:[[:space:]]*$nobody" "/proc/$reader/status" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -9 "$q" 2>/dev/null
	wait "$q" 2>/dev/null
	i=0
	while [ $i -lt 40 ] && kill -0 "$reader" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	if kill -0 "$reader" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$reader/stat" 2>/dev/null)" != Z ]; then
		bad "query's unprivileged reader (pid $reader) outlived its killed parent by 2 s"
		kill -9 "$reader" 2>/dev/null
	else
		ok
	fi
fi
# script parses as well (it parsed as root until the audit of
# 2026-11-26): its child's setresuid, as strace sees it
if command -v strace >/dev/null 2>&1; then
	strace -f -qq -e trace=setresuid -o "$work/script.strace" "$BIN" script "$dec" >/dev/null 2>&1
	check 'grep -Eq "setresuid\\($nobody, $nobody, $nobody\\) += 0" "$work/script.strace"' \
		"script's reader is not nobody: $(cat "$work/script.strace")"
	# and SQLite reads the incident only after that drop (it parsed the
	# schema as root until 2026-11-27): the file is opened as root, read
	# as the user; strace -y names the file each pread64 reads
	read_after_drop() { # STRACE-LOG FILE-NAME: its first pread64 after a setresuid
		awk -v f="$2>" '/setresuid\(/ { if (!drop) drop = NR }
			index($0, "pread64(") && index($0, f) { if (!rd) rd = NR }
			END { exit !(drop && rd > drop) }' "$1"
	}
	for c in query script export list; do
		case $c in
		list) set -- list "$(dirname "$dec")" ;;
		query) set -- query "$dec" "SELECT count(*) FROM slice" ;;
		script) set -- script "$dec" ;;
		export) rm -f "$work/ord.pftrace"; set -- export "$dec" -o "$work/ord.pftrace" ;;
		esac
		strace -f -qq -y -e trace=setresuid,pread64 -o "$work/ord.strace" "$BIN" "$@" \
			>/dev/null 2>&1
		check 'read_after_drop "$work/ord.strace" "$(basename "$dec")"' \
			"$c reads the incident before giving root up: $(grep -E "setresuid|$(basename "$dec")" "$work/ord.strace" | head -3)"
	done
	# decode: root makes the private copy, SQLite parses the copy only
	# after the drop (it did as root until 2026-11-27); root's own reads
	# of the copy are the 2 format bytes at offset 18, nothing SQLite reads
	cp "$dec" "$work/ord-dec.db"
	strace -f -qq -y -e trace=setresuid,pread64 -o "$work/ord.strace" "$BIN" decode \
		"$work/ord-dec.db" >/dev/null 2>&1
	check 'awk "/setresuid\\(/ { if (!drop) drop = NR }
		index(\$0, \"pread64(\") && index(\$0, \"ord-dec.db.tmp.\") &&
		\$0 !~ /, 2, 18\\) = 2\$/ { if (!rd) rd = NR }
		END { exit !(drop && rd > drop) }" "$work/ord.strace"' \
		"decode parses its copy before giving root up: $(grep -E 'setresuid|ord-dec' "$work/ord.strace" | head -4)"
else
	echo "no strace: script's reader not checked"
fi
SUDO_UID=$atk_uid SUDO_GID=$atk_gid "$BIN" query "$dec" "$slow" >/dev/null 2>&1 &
q=$!
sleep 0.3
status_of_child "$q" >"$work/creds2" || bad "no child process for sudo query"
kill "$q" 2>/dev/null
wait "$q" 2>/dev/null
check 'grep -q "^Uid:[[:space:]]*$atk_uid[[:space:]]" "$work/creds2"' "sudo query not run as the user: $(cat "$work/creds2")"
# it really cannot read what only root can: the images of a raw PT import
# are read after the drop.  A root-only ELF image, or a root-only flat one
# (FILE@ADDR, whose bytes go into the incident: before, root copied them
# in, and any reader of the incident could read them), in a root-only
# directory: exit 6, "Permission denied", no incident; the same ELF image
# where nobody may read it decodes all 8 instructions
hello=${SPTD_FIXTURES:-/nonexistent}/real-pt/drpt2trace-hello
if [ -r "$hello/pt.bin" ]; then
	mkdir -m 700 "$work/rootonly"
	mkdir -m 755 "$work/open"
	chmod 711 "$work"
	cp "$hello/hello" "$work/rootonly/hello"
	chmod 600 "$work/rootonly/hello"
	echo "TOP SECRET" >"$work/rootonly/secret"
	chmod 600 "$work/rootonly/secret"
	cp "$hello/hello" "$work/open/hello"
	chmod 644 "$work/open/hello"
	for where in rootonly/hello rootonly/secret@0x1000 open/hello; do
		name=$(echo "$where" | tr '/@' '__')
		"$BIN" import --pt "$hello/pt.bin" --image "$work/$where" --cpu-id 6/85/4 \
			-o "$work/$name.db" >/dev/null 2>"$work/$name.err"
		echo $? >"$work/$name.st"
	done
	chmod 700 "$work"
	ins() { "$BIN" query "$1" "SELECT value FROM stats WHERE name = 'instructions'" \
	        --format csv | tail -n 1; }
	for name in rootonly_hello rootonly_secret_0x1000; do
		check '[ "$(cat "$work/$name.st")" = 6 ] && grep -q "Permission denied" "$work/$name.err"' \
			"import read a root-only --image ($name) as root: $(cat "$work/$name.st" "$work/$name.err")"
		check '[ ! -e "$work/$name.db" ]' "an incident of a root-only --image ($name)"
	done
	check '[ "$(cat "$work/open_hello.st")" = 0 ] && [ "$(ins "$work/open_hello.db")" = 8 ]' \
		"import of a readable image: $(cat "$work/open_hello.err")"
else
	echo "note: fixtures not found (SPTD_FIXTURES): the root-only image case did not run" >&2
fi
# the query itself works on a readable incident as that user
"$BIN" query "$dec" "SELECT count(*) FROM sched_slice" --format csv >"$work/q.out" 2>&1
check '[ $? = 0 ] && [ "$(tail -n 1 "$work/q.out")" -gt 0 ]' "query as nobody on a readable incident: $(cat "$work/q.out")"

# export -o through a directory the attacker made a link to a root-only
# one: root's file there was replaced.  A link root does not own (nor the
# sudo user) is not followed as root
mkdir -m 700 "$work/rootdir"
echo "root's own" >"$work/rootdir/notes.json"
chmod 711 "$work"
as_atk ln -s "$work/rootdir" "$adir/exports"
"$BIN" export "$dec" -q -o "$adir/exports/notes.json" >"$work/ex.out" 2>&1
st=$?
chmod 700 "$work"
check '[ $st = 4 ] && grep -q "not followed as root" "$work/ex.out" && [ "$(cat "$work/rootdir/notes.json")" = "root'"'"'s own" ] && [ "$(ls "$work/rootdir" | wc -l)" = 1 ]' \
	"export -o through the attacker's link to a root-only directory: $st $(head -c 300 "$work/ex.out")"

# query -f FILE where the attacker chose what FILE is: read after the
# drop, so a link to /etc/shadow is "Permission denied" (it was read as
# root and echoed in the syntax error), and a FIFO is refused at once (it
# blocked the root child for ever)
as_atk ln -s /etc/shadow "$adir/q.sql"
as_atk mkfifo "$adir/fifo.sql"
"$BIN" query "$dec" -f "$adir/q.sql" >"$work/qf.out" 2>&1
check '[ $? = 4 ] && grep -q "Permission denied" "$work/qf.out" && ! grep -q "^root:" "$work/qf.out" && ! grep -q "root:[^ ]*:[0-9]" "$work/qf.out"' \
	"query -f a link to /etc/shadow: $(head -c 300 "$work/qf.out")"
timeout 20 "$BIN" query "$dec" -f "$adir/fifo.sql" >"$work/qf.out" 2>&1
check '[ $? = 6 ] && grep -q "not a regular file" "$work/qf.out"' \
	"query -f a FIFO: $(head -c 300 "$work/qf.out")"

# the service: after arming, only its capabilities; it still records
"$BIN" --name "$recorder" --window 20ms --trigger timer=3600s -o "$work/caps" >/dev/null 2>"$work/caps.err" &
svc=$!
wait_for "$work/caps.err" "armed:" || bad "service did not arm"
sleep 0.3
grep -E "^(Uid|CapEff|CapPrm|CapBnd|NoNewPrivs):" "/proc/$svc/status" >"$work/svc.status"
# perfmon 38, sys_ptrace 19, dac_read_search 2, checkpoint_restore 40,
# syslog 34, ipc_lock 14 (sys_rawio 17 only with PT)
want=$(printf '%016x' $(( (1 << 38) | (1 << 19) | (1 << 2) | (1 << 40) | (1 << 34) | (1 << 14) )))
check 'grep -q "^CapEff:[[:space:]]*$want" "$work/svc.status" && grep -q "^CapBnd:[[:space:]]*$want" "$work/svc.status"' \
	"service capabilities (want $want): $(cat "$work/svc.status")"
check 'grep -q "^NoNewPrivs:[[:space:]]*1" "$work/svc.status"' "service without no_new_privs"
timeout 20 "$BIN" snapshot --name "$recorder" >"$work/caps.snap" 2>&1
check '[ $? = 0 ] && integrity "$(cat "$work/caps.snap")"' "no incident with reduced capabilities: $(cat "$work/caps.snap")"
kill -TERM "$svc"
wait "$svc"
svc=""
finish
