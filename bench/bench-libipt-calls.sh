#!/bin/bash
# bench-libipt-calls.sh BUILD PERF.DATA [SYMFS] [JOBS] — what one `sysptd
# import` asks of libipt, counted (not timed): calls of pt_blk_next (one a
# block), of pt_blk_event (one an event), and of pthread_mutex_lock in the
# whole process, next to the instructions, calls and returns the decode
# reports.  libipt takes four section locks for every instruction it
# decodes one at a time (pt_image_read: map, the image section cache's
# LRU, unmap): at a synchronous disable it walks from the last branch to
# the disabling one that way, and it fills its block cache that way.  The
# lock count per import is therefore the measure of that slow path, the
# part of phase 1 that no change in sysptd's own loop reaches.
#
# Uprobes (perf probe) on the shared libraries sysptd is linked with; they
# slow the import down a lot, so nothing here is a time.  JOBS: -j of the
# import (default 1: every unit on one thread, the same count each run).
# Needs root and perf.  Run it under the benchmark lock:
#   flock /tmp/sysptd-bench.lock bash bench/bench-libipt-calls.sh build \
#     ../shared/fixtures/real-pt/libxdc-mruby/perf.data \
#     ../shared/fixtures/real-pt/libxdc-mruby/symfs
set -u
BUILD=${1:?usage: bench-libipt-calls.sh BUILD PERF.DATA [SYMFS] [JOBS]}
DATA=${2:?usage: bench-libipt-calls.sh BUILD PERF.DATA [SYMFS] [JOBS]}
SYMFS=${3:-}
JOBS=${4:-1}
BIN=$BUILD/sysptd
GROUP=sptdlib
. "$(dirname "$0")/import-lib.sh"
bench_probe_checks "$BIN" "$DATA"
lib() { ldd "$BIN" | awk -v n="$1" '$1 ~ "^"n { print $3; exit }'; }
LIBC=$(lib libc.so)
LIBIPT=$(lib libipt.so)
[ -n "$LIBC" ] && [ -n "$LIBIPT" ] || { echo "cannot find libc and libipt in ldd $BIN" >&2; exit 2; }
TMP=$(mktemp -d)
cleanup() {
	perf probe -q -d "$GROUP:*" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
perf probe -q -d "$GROUP:*" >/dev/null 2>&1
perf probe -q -x "$LIBC" -a "$GROUP:mutex_lock=pthread_mutex_lock" >/dev/null 2>&1 &&
	perf probe -q -x "$LIBIPT" -a "$GROUP:blk_next=pt_blk_next" >/dev/null 2>&1 &&
	perf probe -q -x "$LIBIPT" -a "$GROUP:blk_event=pt_blk_event" >/dev/null 2>&1 ||
	{ echo "cannot place the uprobes (perf probe -x $LIBC / $LIBIPT)" >&2; exit 1; }
sym=()
[ -n "$SYMFS" ] && sym=(--symfs "$SYMFS")
perf stat -x, -e "$GROUP:mutex_lock,$GROUP:blk_next,$GROUP:blk_event" -o "$TMP/stat" -- \
	"$BIN" import "$DATA" "${sym[@]}" -o "$TMP/out.db" -q -j "$JOBS" >/dev/null 2>"$TMP/err" ||
	{ echo "sysptd import failed: $(cat "$TMP/err")" >&2; exit 1; }
count() { awk -F, -v e="$GROUP:$1" '$3 == e { print $1 }' "$TMP/stat"; }
stat() { "$BIN" query "$TMP/out.db" --format csv "SELECT sum(value) FROM stats WHERE name = '$1'" 2>/dev/null | tail -1; }
locks=$(count mutex_lock)
blocks=$(count blk_next)
events=$(count blk_event)
insns=$(stat instructions)
calls=$(stat calls)
rets=$(stat returns)
echo "sysptd import $(basename "$(dirname "$DATA")")/$(basename "$DATA") -j $JOBS, counted with uprobes:"
printf "  instructions %s, calls %s, returns %s\n" "$insns" "$calls" "$rets"
printf "  pt_blk_next %s (%.1f instructions a block), pt_blk_event %s\n" "$blocks" \
	"$(echo "$insns $blocks" | awk '{ print $2 ? $1 / $2 : 0 }')" "$events"
printf "  pthread_mutex_lock %s in the process (%.2f a block)\n" "$locks" \
	"$(echo "$locks $blocks" | awk '{ print $2 ? $1 / $2 : 0 }')"
