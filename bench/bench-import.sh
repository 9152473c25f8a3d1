#!/bin/sh
# bench-import.sh BUILD [ROUNDS] — time `sysptd import perf.data` against
# perf 6.1 on the same files in the same run:
#   baseline 1: perf script --itrace=cr          (decode + print, no SQL)
#   baseline 2: perf script --itrace=cr -s export-to-sqlite.py DB branches calls
#               (perf's path to SQL; needs python3-pyside2.qtsql — installed
#               here with apt-get when absent, skipped with a message if that
#               fails)
# Prints a markdown table (best of ROUNDS wall seconds) and the ratios.
set -u
BUILD=${1:?usage: bench-import.sh BUILD [ROUNDS]}
ROUNDS=${2:-3}
SYSPTD=$BUILD/sysptd
FIX=${SPTD_FIXTURES:-$(dirname "$0")/../../shared/fixtures}/real-pt
EXPORT=""
for p in /usr/share/perf-core/scripts/python/export-to-sqlite.py \
         /usr/lib/perf-core/scripts/python/export-to-sqlite.py; do
	[ -f "$p" ] && EXPORT=$p && break
done
[ -x "$SYSPTD" ] || { echo "no $SYSPTD: build the sysptd target first" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is not installed: no baseline" >&2; exit 2; }
if ! /usr/bin/python3 -c "import PySide2.QtSql" 2>/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-pyside2.qtsql >/dev/null 2>&1
	fi
fi
SQL_OK=1
if [ -z "$EXPORT" ] || ! /usr/bin/python3 -c "import PySide2.QtSql" 2>/dev/null; then
	echo "note: export-to-sqlite.py baseline skipped (script or python3-pyside2.qtsql missing)" >&2
	SQL_OK=0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# best wall time of ROUNDS runs of "$@" (seconds, 3 decimals)
best() {
	b=""
	i=0
	while [ $i -lt "$ROUNDS" ]; do
		rm -f "$TMP/out.db" "$TMP/perf.db"
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1 || { echo "FAIL"; return; }
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
		i=$((i + 1))
	done
	printf '%.3f' "$b"
}

ratio() {
	case "$1$2" in *FAIL*|*-*) echo "-"; return;; esac
	printf '%.1fx' "$(echo "$2 / $1" | bc -l)"
}

echo "| perf.data | bytes | sysptd import -j1 (s) | perf script --itrace=cr (s) | ratio | perf script -s export-to-sqlite.py (s) | ratio |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for d in libxdc-mruby libxdc-foo libxdc-unzip hase-control_flow; do
	data=$FIX/$d/perf.data
	[ -f "$data" ] || continue
	size=$(stat -c %s "$data")
	ours=$(best "$SYSPTD" import "$data" --symfs "$FIX/$d/symfs" -j 1 -o "$TMP/out.db")
	script=$(best perf script -i "$data" --symfs="$FIX/$d/symfs" --itrace=cr -F +flags)
	sql="-"
	if [ $SQL_OK = 1 ]; then
		sql=$(best perf script -i "$data" --symfs="$FIX/$d/symfs" --itrace=cr -s "$EXPORT" \
		      "$TMP/perf.db" branches calls)
	fi
	echo "| $d | $size | $ours | $script | $(ratio "$ours" "$script") | $sql | $(ratio "$ours" "$sql") |"
done
echo
echo "ratio = baseline time / sysptd time (higher: sysptd faster); best of $ROUNDS; $(nproc) CPUs; $(perf --version)"
