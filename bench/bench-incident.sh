#!/bin/sh
# Trigger -> incident committed ("written in N ms" on the incident line) on
# a busy machine, with the symbol cache on and off, in the same run against
# the same workload: two python3 processes (one hashing in libcrypto, one
# building JSON) and an `ls -R` loop keep both CPUs busy.  Rounds alternate
# (on, off, on, off, ...) so drift hits both sides alike; each round is one
# service run writing INCIDENTS incidents of a 10 ms window (timer trigger,
# sampling source).  The first incident of a round is counted too: it is
# the cold one the cache cannot help, except for kallsyms, read at arm.
#
# BASELINE=/path/to/old/sysptd adds a third side: that binary, same runs.
#
# Usage: sudo sh bench/bench-incident.sh [BUILD_DIR] [ROUNDS] [INCIDENTS]
# Run it under the machine's locks (one ftrace instance "sysptd" per
# machine):
#   flock /tmp/sysptd-bench.lock flock /tmp/sysptd-ctest.lock \
#     sh bench/bench-incident.sh build 5 8
set -eu
build=${1:-build}
rounds=${2:-5}
incidents=${3:-8}
bin=$(cd "$build" && pwd)/sysptd
baseline=${BASELINE:-}
python=$(command -v python3.11 || command -v python3)
if [ "$(id -u)" != 0 ]; then
	echo "bench-incident.sh: needs root (it runs the recording service)" >&2
	exit 4
fi
work=$(mktemp -d)
export SYSPTD_RUNDIR=$work/run
load=""
cleanup() {
	for p in $load; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# the busy machine
"$python" -c 'import hashlib
d = b"x" * 65536
while True: hashlib.sha256(d).digest()' &
load="$load $!"
"$python" -c 'import json
while True: json.dumps([{"a": i, "b": str(i)} for i in range(2000)])' &
load="$load $!"
sh -c 'while :; do ls -R /usr/share /usr/lib >/dev/null 2>&1; done' &
load="$load $!"
sleep 1

# One service run: INCIDENTS incidents; prints each "written in N ms".
one_run() {	# BIN CACHE(on|off) OUTFILE
	rm -f "$work"/incident-*.db
	SPTD_SYMBOL_CACHE=$2 "$1" --window 10ms --trigger timer=300ms --count "$incidents" \
		-o "$work" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	grep -o 'written in [0-9]* ms' "$work/err" | awk '{print $3}' >>"$3"
}

: >"$work/on"; : >"$work/off"; : >"$work/base"
for i in $(seq "$rounds"); do
	one_run "$bin" on "$work/on"
	one_run "$bin" off "$work/off"
	[ -n "$baseline" ] && one_run "$baseline" on "$work/base"
	printf 'round %d/%d done\n' "$i" "$rounds" >&2
done

median() { sort -n "$1" | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }
cold() {	# the first incident of each run
	awk -v n="$incidents" '(NR - 1) % n == 0' "$1" | sort -n |
		awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'
}
echo "trigger -> incident committed, 10 ms window, busy machine; $rounds runs x $incidents incidents"
echo "                       median ms   median of first incidents   all (ms)"
printf '  symbol cache on:     %-11s %-27s %s\n' "$(median "$work/on")" "$(cold "$work/on")" "$(tr '\n' ' ' <"$work/on")"
printf '  symbol cache off:    %-11s %-27s %s\n' "$(median "$work/off")" "$(cold "$work/off")" "$(tr '\n' ' ' <"$work/off")"
if [ -n "$baseline" ]; then
	printf '  baseline %s: %-11s %-27s %s\n' "$baseline" "$(median "$work/base")" "$(cold "$work/base")" "$(tr '\n' ' ' <"$work/base")"
fi
awk -v a="$(median "$work/off")" -v b="$(median "$work/on")" \
	'BEGIN { if (b > 0) printf "  off / on = %.2fx\n", a / b }'
