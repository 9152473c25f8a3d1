#!/bin/sh
# bench-qflow.sh BUILD [ROUNDS] [TRACE...] — the two flow decoders of issue
# 33 side by side in one run: `sysptd import -j 1` with --decoder libipt and
# with --decoder sptd (alternating, ROUNDS each), one decoding thread's
# instructions/s from the incident's stats (instructions / decode_ns), the
# import's CPU time (user + system), and `perf script --itrace=cr -F +flags` on the same
# perf.data as the baseline; medians.  TRACE: folders of
# $SPTD_FIXTURES/real-pt holding perf.data + symfs/ (default libxdc-mruby),
# or a directory of bench-import-dense.sh (perf.data + dense).
set -u
BUILD=${1:?usage: bench-qflow.sh BUILD [ROUNDS] [TRACE...]}
ROUNDS=${2:-5}
shift $(($# >= 2 ? 2 : 1))
src=$(cd "$(dirname "$0")/.." && pwd)
fx=${SPTD_FIXTURES:-$src/../shared/fixtures}
[ $# -gt 0 ] || set -- libxdc-mruby
tmp=$(mktemp -d /tmp/sptd-qflow-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-16s %12s | %-24s | %-24s | %10s | %s\n' trace instructions \
	"libipt: Minsn/s, import cpu s" "sptd: Minsn/s, import cpu s" "perf cr cpu s" \
	"sptd/libipt per thread; perf/import (libipt, sptd)"
for t in "$@"; do
	case "$t" in
	/*) d=$t; symfs=--symfs=$d ;;
	*) d=$fx/real-pt/$t; symfs=--symfs=$d/symfs ;;
	esac
	[ -f "$d/perf.data" ] || { echo "no $d/perf.data" >&2; continue; }
	: >"$tmp/libipt.rate"; : >"$tmp/sptd.rate"; : >"$tmp/libipt.wall"; : >"$tmp/sptd.wall"
	: >"$tmp/perf.wall"
	insns=
	i=0
	while [ $i -lt "$ROUNDS" ]; do
		for dec in libipt sptd; do
			rm -f "$tmp/$dec.incident"
			# CPU time (user + system): less at the mercy of a shared machine
			/usr/bin/time -f '%U %S' -o "$tmp/$dec.time" \
				"$BUILD/sysptd" import --decoder "$dec" -q -j 1 "$d/perf.data" "$symfs" \
				-o "$tmp/$dec.incident" >/dev/null 2>"$tmp/$dec.log" ||
				{ cat "$tmp/$dec.log" >&2; exit 1; }
			awk '{ printf "%d\n", ($1 + $2) * 1e6 }' "$tmp/$dec.time" >>"$tmp/$dec.wall"
			sqlite3 "$tmp/$dec.incident" "SELECT sum(CASE WHEN name = 'instructions' THEN value END) * 1000.0 / sum(CASE WHEN name = 'decode_ns' THEN value END) FROM stats" >>"$tmp/$dec.rate"
			n=$(sqlite3 "$tmp/$dec.incident" "SELECT sum(value) FROM stats WHERE name = 'instructions'")
			[ -z "$insns" ] && insns=$n
			[ "$n" = "$insns" ] || echo "$t: instruction counts differ: $insns, $n ($dec)" >&2
		done
		if command -v perf >/dev/null 2>&1; then
			/usr/bin/time -f '%U %S' -o "$tmp/perf.time" \
				perf script -i "$d/perf.data" "$symfs" --itrace=cr -F +flags >/dev/null 2>&1
			awk '{ printf "%d\n", ($1 + $2) * 1e6 }' "$tmp/perf.time" >>"$tmp/perf.wall"
		fi
		i=$((i + 1))
	done
	rl=$(median <"$tmp/libipt.rate"); rs=$(median <"$tmp/sptd.rate")
	wl=$(median <"$tmp/libipt.wall"); ws=$(median <"$tmp/sptd.wall")
	wp=$( [ -s "$tmp/perf.wall" ] && median <"$tmp/perf.wall" || echo 0)
	awk -v t="$t" -v n="$insns" -v rl="$rl" -v rs="$rs" -v wl="$wl" -v ws="$ws" -v wp="$wp" 'BEGIN {
		printf "%-16s %12d | %8.1f %10.3f     | %8.1f %10.3f     | %10.3f | %5.2fx  %5.2fx %5.2fx\n",
		       t, n, rl, wl / 1e6, rs, ws / 1e6, wp / 1e6, rs / rl,
		       wp ? wp / wl : 0, wp ? wp / ws : 0 }'
done
