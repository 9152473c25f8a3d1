# import-lib.sh — what bench-import.sh and bench-import-dense.sh share:
# timing `sysptd import` and `perf script --itrace=cr -F +flags` on the same
# perf.data, alternating, and printing medians and the ratio.  Sourced.

# Wall and CPU (user + system) seconds of "$@" (its output to /dev/null),
# as "WALL CPU" with three decimals; "FAIL" when it fails.  Bash's time
# keyword: microsecond rusage, no extra process in the measurement.
bench_time() {
	local TIMEFORMAT='%3R %3U %3S' out rc
	out=$( { time "$@" >/dev/null 2>&1; echo "rc=$?" >&2; } 2>&1 )
	rc=$(echo "$out" | sed -n 's/^rc=//p')
	if [ "$rc" != 0 ]; then
		echo FAIL
		return
	fi
	echo "$out" | grep -v '^rc=' | awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }'
}

# The median of the numbers on stdin.
bench_median() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_pair NAME PERF_DATA SYMFS ROUNDS SYSPTD TMPDIR: ROUNDS rounds, each
# `sysptd import` then perf script, alternating; prints one markdown row:
# name, PT bytes, slices, medians (wall; CPU), ratio of the wall medians.
bench_pair() {
	local name=$1 data=$2 symfs=$3 rounds=$4 sysptd=$5 tmp=$6 i=0 r s p
	local symarg="" perfsym=""
	if [ -n "$symfs" ]; then
		symarg="--symfs=$symfs"
		perfsym="--symfs=$symfs"
	fi
	: >"$tmp/s.txt"
	: >"$tmp/p.txt"
	while [ $i -lt "$rounds" ]; do
		rm -f "$tmp/out.incident"
		r=$(bench_time "$sysptd" import "$data" $symarg -o "$tmp/out.incident")
		[ "$r" = FAIL ] && { echo "| $name | sysptd import failed |"; return 1; }
		echo "$r" >>"$tmp/s.txt"
		r=$(bench_time perf script -i "$data" $perfsym --itrace=cr -F +flags)
		[ "$r" = FAIL ] && { echo "| $name | perf script failed |"; return 1; }
		echo "$r" >>"$tmp/p.txt"
		i=$((i + 1))
	done
	local sw sc pw pc bytes slices segs
	sw=$(cut -d' ' -f1 "$tmp/s.txt" | bench_median)
	sc=$(cut -d' ' -f2 "$tmp/s.txt" | bench_median)
	pw=$(cut -d' ' -f1 "$tmp/p.txt" | bench_median)
	pc=$(cut -d' ' -f2 "$tmp/p.txt" | bench_median)
	bytes=$("$sysptd" query "$tmp/out.incident" --format csv \
		"SELECT sum(value) FROM stats WHERE name = 'pt_bytes'" 2>/dev/null | tail -1)
	slices=$("$sysptd" query "$tmp/out.incident" --format csv \
		"SELECT count(*) FROM slice" 2>/dev/null | tail -1)
	segs=$("$sysptd" query "$tmp/out.incident" --format csv \
		"SELECT coalesce(max(value), 1) FROM stats WHERE name = 'decode_segments'" \
		2>/dev/null | tail -1)
	echo "| $name | $bytes | $slices | $segs | $sw ($sc) | $pw ($pc) | $(awk -v a="$pw" -v b="$sw" 'BEGIN { printf "%.2fx", a / b }') |"
}

bench_header() {
	echo "| perf.data | PT bytes | slices | pieces decoded in | sysptd import: wall s (CPU s) | perf script --itrace=cr -F +flags: wall s (CPU s) | perf / sysptd (wall) |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
}

bench_footer() {
	echo
	echo "Medians of $1 rounds, sysptd and perf alternating; $(nproc) CPUs; $(perf --version 2>/dev/null); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "sysptd import runs with its default -j (one thread per core)."
}

# bench_probe_checks BIN DATA: what a uprobe bench needs before it starts
# (the sysptd binary, the perf.data, root, perf); exits 2 naming what is
# missing.
bench_probe_checks() {
	[ -x "$1" ] || { echo "no $1: build the sysptd target first" >&2; exit 2; }
	[ -e "$2" ] || { echo "no $2" >&2; exit 2; }
	[ "$(id -u)" = 0 ] || { echo "uprobes need root" >&2; exit 2; }
	command -v perf >/dev/null ||
		{ echo "perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
}
