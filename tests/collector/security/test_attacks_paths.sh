#!/bin/sh
# test_attacks_paths.sh — issue 28 items 1 and 2, done for real by an
# unprivileged user (root, tracefs, useradd; skips 77).  The user maps a
# copy of a library (no build-id) and, in a loop, exchanges a name on its
# path with a symlink to a root-only file (0600 in a 0700 directory)
# through renameat2(RENAME_EXCHANGE).  That file is the same library built
# with another function name (atk_SECRET_root_0001) and other marker bytes
# (SPTD-ROOT-SECRET-28), at the same addresses:
#   1. the mapped file's own name swapped, against the running recorder
#      (sampling, symbol cache off so that every incident reads the file
#      again): no incident may name the root-only file's function, and the
#      user's own function is named (the fix does not just drop symbols);
#   2. a directory on the path swapped, against the image step of a PT
#      capture (--portable embeds each mapped file in raw_file; the image
#      cache): no raw_file row may hold the root-only file's bytes, and the
#      user's file is embedded; once no process maps it, a file without a
#      build-id is refused (nothing proves the path's file is the one mapped).
# On the code before the fix, 1 named the secret function in a few per
# cent of incidents and 2 embedded the secret file about half the time.
HERE=$(dirname "$0")
. "$HERE/seclib.sh"
for v in ATK_SWAP ATK_PUBLIC ATK_SECRET ATK_IMGCACHE; do
	eval "f=\${$v:-}"
	[ -n "$f" ] && [ -f "$f" ] || { echo "SKIP: \$$v (a build product) not set" >&2; exit 77; }
done
cleanup() { seclib_cleanup; }
trap cleanup EXIT
trap 'exit 143' INT TERM HUP

# root's secret: the library with the other name and bytes, 0600 in 0700
secret="$work/secret"
mkdir -m 700 "$secret"
cp "$ATK_SECRET" "$secret/lib.so"
chmod 600 "$secret/lib.so"
chmod 755 "$adir"
if as_atk cat "$secret/lib.so" >/dev/null 2>&1; then bad "the attacker can read the secret"; else ok; fi
# the same layout, so that an address names one function in either file
pub_addr=$(nm -D "$ATK_PUBLIC" 2>/dev/null | awk '/ atk_spin_public_0001$/ {print $1}')
sec_addr=$(nm -D "$ATK_SECRET" 2>/dev/null | awk '/ atk_SECRET_root_0001$/ {print $1}')
check '[ -n "$pub_addr" ] && [ "$pub_addr" = "$sec_addr" ]' \
	"the two libraries differ in layout ($pub_addr vs $sec_addr)"

# start_atk NAME A B LIB [SYMBOL]: the swapper as the attacker; its pid in $apid
start_atk() {
	n=$1
	shift
	as_atk "$ATK_SWAP" "$@" >"$work/$n.out" 2>"$work/$n.err" &
	atk_pids="$atk_pids $!"
	wait_for "$work/$n.out" ready || { bad "$n: the attacker did not start: $(cat "$work/$n.err")"; return 1; }
	apid=$(awk '/^ready/ {print $2}' "$work/$n.out")
	atk_pids="$atk_pids $apid"
}

# ---- 1. the mapped file's name swapped under the recorder --------------------
one="$adir/one"
as_atk mkdir "$one"
cp "$ATK_PUBLIC" "$one/lib.so"
chown "$atk" "$one/lib.so"
as_atk ln -s "$secret/lib.so" "$one/alt"
incidents=${SPTD_PATHS_INCIDENTS:-40}
if start_atk swap1 "$one/lib.so" "$one/alt" "$one/lib.so" atk_spin_public_0001; then
	SPTD_SYMBOL_CACHE=off timeout 450 "$BIN" --name "$recorder" --window 20ms --trigger timer=60ms \
		--count "$incidents" -o "$work/inc1" >"$work/rec1.out" 2>"$work/rec1.err"
	check '[ $? = 0 ]' "recorder failed: $(tail -n 5 "$work/rec1.err")"
	kill -9 "$apid" 2>/dev/null
	wait "$apid" 2>/dev/null
	check '! grep -q "atk_swap:" "$work/swap1.err"' "the swap loop stopped: $(cat "$work/swap1.err")"
	n=0 named=0 leaked=0
	for inc in $(cat "$work/rec1.out"); do
		n=$((n + 1))
		k=$("$BIN" query "$inc" "SELECT count(*) FROM symbol WHERE name = 'atk_SECRET_root_0001'" \
			--format csv | tail -n 1)
		[ "${k:-0}" -gt 0 ] && leaked=$((leaked + 1))
		k=$("$BIN" query "$inc" "SELECT count(*) FROM symbol WHERE name = 'atk_spin_public_0001'" \
			--format csv | tail -n 1)
		[ "${k:-0}" -gt 0 ] && named=$((named + 1))
	done
	echo "item 1: $n incidents, $named name the user's function, $leaked the root-only file's"
	check '[ "$n" = "$incidents" ]' "$n incidents of $incidents"
	check '[ "$leaked" = 0 ]' \
		"$leaked of $n incidents named atk_SECRET_root_0001, read from root's 0600 file"
	check '[ "$named" -ge $((n / 4)) ]' "only $named of $n incidents name the user's own function"
fi

# ---- 2. a directory on the path swapped under the image step -------------------
two="$adir/two"
as_atk mkdir "$two" "$two/d"
cp "$ATK_PUBLIC" "$two/d/lib.so"
chown "$atk" "$two/d/lib.so"
as_atk ln -s "$secret" "$two/e"
reads=${SPTD_PATHS_READS:-400}
if start_atk swap2 "$two/d" "$two/e" "$two/d/lib.so"; then
	"$ATK_IMGCACHE" "$work/img.db" "$work/cache" "$apid" "$two/d/lib.so" "$reads" \
		>"$work/img.out" 2>"$work/img.err"
	check '[ $? = 0 ]' "image step failed: $(cat "$work/img.err")"
	# the mapping gone (the process exited): no build-id, nothing proves
	# the path's file is the one that ran: refused, not read
	"$ATK_IMGCACHE" "$work/gone.db" "$work/cache" "$apid" "$two/d/lib.so" 50 gone \
		>"$work/gone.out" 2>"$work/gone.err"
	check '[ $? = 0 ] && grep -q "embedded 0 missing 50" "$work/gone.out"' \
		"a file without build-id or live mapping was read: $(cat "$work/gone.out" "$work/gone.err")"
	kill -9 "$apid" 2>/dev/null
	wait "$apid" 2>/dev/null
	leaked=$(sqlite3 "$work/img.db" "SELECT count(*) FROM raw_file WHERE
		instr(data, CAST('SPTD-ROOT-SECRET-28' AS BLOB)) > 0")
	mine=$(sqlite3 "$work/img.db" "SELECT count(*) FROM raw_file WHERE
		instr(data, CAST('SPTD-USER-PUBLIC-28' AS BLOB)) > 0")
	echo "item 2: $(cat "$work/img.out"); raw_file rows: $mine the user's file, $leaked the root-only file"
	check '[ "${leaked:-1}" = 0 ]' "$leaked of $reads raw_file rows hold root's 0600 file"
	check '[ "${mine:-0}" = "$reads" ]' "$mine of $reads raw_file rows hold the mapped file"
	check '[ -z "$(find "$work/cache" -type f 2>/dev/null)" ]' "a file without a build-id was cached"
fi
finish
