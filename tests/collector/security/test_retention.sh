#!/bin/sh
# test_retention.sh — --keep and --max-disk with the real recorder (root,
# tracefs, useradd; skips 77):
#   3. the issue's case: three files planted by a user with incident names
#      and four real incidents, --keep 3: the planted files stay, the three
#      newest real incidents stay, the oldest goes; twelve incidents in a
#      row (most in the same second): unique names, in text order, each
#      printed once, the newest kept; a restart goes on with the sequence;
#   9. --max-disk: the oldest go until the rest fit, said once; one
#      incident larger than the budget is kept alone, said once.
HERE=$(dirname "$0")
. "$HERE/seclib.sh"
cleanup() { seclib_cleanup; }
trap cleanup EXIT
trap 'exit 143' INT TERM HUP

# rec DIR ARGS...: one recorder run, bounded in time; stdout in $work/rec.out
rec() {
	dir=$1
	shift
	timeout 90 "$BIN" --name "$recorder" --window 5ms --trigger timer=30ms -o "$dir" "$@" \
		>"$work/rec.out" 2>"$work/rec.err"
	st=$?
	[ "$st" = 0 ] || { bad "recorder exit $st: $(tail -n 3 "$work/rec.err")"; return 1; }
}

# ---- 3. planted look-alikes, --keep 3 --------------------------------------------
# the user may write the directory only with --unsafe-output (a checked one
# is root's alone); the look-alikes sort before, among and after the real
# names, the last one with a sequence far beyond ours
out="$adir/out"
mkdir "$out"
chown "$atk" "$out"
chmod 755 "$adir" "$out"
for name in incident-00000000T000000Z-0.db incident-20000101T000000Z-000002.db \
            incident-99999999T999999Z-999999.db; do
	as_atk sh -c "echo planted > '$out/$name'"
done
rec "$out" --unsafe-output --count 4 --keep 3
check '[ "$(wc -l <"$work/rec.out")" = 4 ]' "4 incidents expected: $(cat "$work/rec.out")"
check '[ "$(sort -u "$work/rec.out" | wc -l)" = 4 ]' "a path was printed twice: $(cat "$work/rec.out")"
check '[ ! -e "$(sed -n 1p "$work/rec.out")" ]' "the oldest real incident was kept"
for k in 2 3 4; do
	f=$(sed -n ${k}p "$work/rec.out")
	check '[ -f "$f" ] && integrity "$f"' "real incident $k missing or damaged: $f"
done
for name in incident-00000000T000000Z-0.db incident-20000101T000000Z-000002.db \
            incident-99999999T999999Z-999999.db; do
	check '[ "$(cat "$out/$name")" = planted ]' "retention touched the planted $name"
done

# ---- 3. twelve in a row, in a checked directory -------------------------------
rec "$work/burst" --count 12 --keep 5
check '[ "$(wc -l <"$work/rec.out")" = 12 ]' "12 incidents expected, got $(wc -l <"$work/rec.out")"
check '[ "$(sort -u "$work/rec.out" | wc -l)" = 12 ]' "names reused or printed twice: $(cat "$work/rec.out")"
# the order they were written in is their text order
check '[ "$(sort "$work/rec.out")" = "$(cat "$work/rec.out")" ]' "names do not sort in order: $(cat "$work/rec.out")"
same=$(sed 's/.*incident-\([0-9T]*Z\)-.*/\1/' "$work/rec.out" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
echo "note: at most $same of the 12 incidents were written in the same second"
check '[ "$(ls "$work/burst" | grep -c "^incident-.*\.db$")" = 5 ]' "--keep 5 kept $(ls "$work/burst")"
for k in 8 9 10 11 12; do
	f=$(sed -n ${k}p "$work/rec.out")
	check '[ -f "$f" ]' "incident $k (one of the newest five) was deleted"
done
last=$(sed -n 12p "$work/rec.out")
# a restart: the sequence goes on (never reused), the old ones still count
rec "$work/burst" --once --keep 5
new=$(cat "$work/rec.out")
check '[ "${new##*-}" = "000013.db" ]' "after a restart the next incident is $new (want ...-000013.db)"
check '[ "$(ls "$work/burst" | grep -c "^incident-.*\.db$")" = 5 ] && [ -f "$last" ]' \
	"after a restart --keep 5: $(ls "$work/burst")"

# ---- 9. --max-disk ------------------------------------------------------------
# a budget of two and a half incidents of this machine as it is now (one
# is ~0.5 MB on an idle VM, several MB beside the rest of the suite): the
# oldest must go, more than one fits
rec "$work/size" --count 1
one=$(du -cb "$work"/size/incident-*.db | tail -n 1 | cut -f 1)
budget=$((one * 5 / 2 / 1024))
rec "$work/disk" --count 6 --max-disk "${budget}K"
total=$(du -cb "$work"/disk/incident-*.db | tail -n 1 | cut -f 1)
n=$(ls "$work/disk" | grep -c '^incident-.*\.db$')
check '[ "$total" -le $((budget * 1024)) ] && [ "$n" -ge 1 ]' \
	"over --max-disk ${budget}K: $n incidents, $total bytes"
check '[ -f "$(sed -n 6p "$work/rec.out")" ]' "the newest incident was deleted for space"
check '[ "$(grep -c "deleting the oldest to make room" "$work/rec.err")" = 1 ]' \
	"the deletion for space was not said exactly once: $(grep -c "make room" "$work/rec.err")"
# a budget smaller than one incident: the newest is kept alone, said once
rec "$work/tiny" --count 3 --max-disk 10K
check '[ "$(ls "$work/tiny" | grep -c "^incident-.*\.db$")" = 1 ] && [ -f "$(sed -n 3p "$work/rec.out")" ]' \
	"tiny budget kept $(ls "$work/tiny")"
check '[ "$(grep -c "alone takes" "$work/rec.err")" = 1 ]' \
	"an incident over the budget was not said exactly once: $(grep -c "alone takes" "$work/rec.err")"
finish
