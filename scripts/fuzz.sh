#!/bin/sh
# Build and run one libFuzzer harness of tests/fuzz (clang, ASan + UBSan).
#
#   scripts/fuzz.sh NAME SECONDS [LIBFUZZER-OPTION...]
#   scripts/fuzz.sh --list
#
# NAME: perfrec (collector/perf's record parser and ring walks), perfdata
# (the perf.data reader), pdimport (`sysptd import perf.data` end to end),
# ftrace (sched/'s page parser and slice builder), rawpt (PT decode with an
# image), flowdiff (the two PT flow decoders, libipt's and the own, against
# each other: the same rows), incident (query/export/list/decode over a
# corrupt incident),
# unwind (DWARF unwinding of a copied stack: ELF, registers, stack bytes),
# slicepages (slice rows through the page writer and SQL: the same table),
# spe (decode/'s Arm SPE packet decoder).
# SECONDS 0 only replays the corpus once.
#
# Builds in $SPTD_FUZZ_BUILD (default build-fuzz) with CC=clang
# -DSPTD_FUZZ=ON.  The committed corpus tests/fuzz/corpus/NAME and seeds
# taken from ../shared/fixtures are read; what the run finds goes to
# $SPTD_FUZZ_BUILD/work/NAME/corpus (kept between runs), crashes to
# $SPTD_FUZZ_BUILD/work/NAME/crash-*: reproduce one with
#   $SPTD_FUZZ_BUILD/fuzz/fuzz_NAME FILE
# minimize it (-minimize_crash=1), fix the bug, and commit the minimized
# file to tests/fuzz/corpus/NAME/ as the regression input (CTest replays
# every corpus: test_fuzz_replay_NAME).
#
# Exit status: 0 no failure, 1 the harness found one (see the report),
# 2 bad command line, 5 no clang on this machine.
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
names="perfrec perfdata pdimport ftrace ftformat rawpt flowdiff incident unwind slicepages spe"

usage() {
	echo "usage: scripts/fuzz.sh NAME SECONDS [LIBFUZZER-OPTION...]  (NAME: $names)" >&2
	exit 2
}
if [ "${1:-}" = "--list" ]; then
	for n in $names; do echo "$n"; done
	exit 0
fi
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
	sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
fi
[ $# -ge 2 ] || usage
name=$1
secs=$2
shift 2
case " $names " in *" $name "*) ;; *) echo "fuzz.sh: unknown harness '$name'" >&2; usage ;; esac
case "$secs" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number" >&2; usage ;; esac
if ! command -v clang >/dev/null 2>&1; then
	echo "fuzz.sh: clang is needed for libFuzzer (scripts/install-deps.sh installs it)" >&2
	exit 5
fi

build=${SPTD_FUZZ_BUILD:-build-fuzz}
fixtures=${SPTD_FIXTURES:-$src/../shared/fixtures}
if [ ! -f "$build/CMakeCache.txt" ]; then
	CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPTD_FUZZ=ON \
		-DBUILD_TESTING=OFF -DSPTD_FIXTURES="$fixtures" >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target "fuzz_$name" >/dev/null

work=$build/work/$name
mkdir -p "$work/corpus" "$work/seeds"
# Seeds referenced from the shared fixtures (too big to commit).
case $name in
perfdata|pdimport)
	for f in libxdc-foo libxdc-unzip; do
		[ -f "$fixtures/real-pt/$f/perf.data" ] &&
			cp -f "$fixtures/real-pt/$f/perf.data" "$work/seeds/fixture-$f.data"
	done
	;;
esac
dirs="$work/corpus $src/tests/fuzz/corpus/$name $work/seeds"
# pdimport starts from the perf.data reader's corpus too
[ "$name" = pdimport ] && dirs="$dirs $src/tests/fuzz/corpus/perfdata"

# A single input running over 60 s is reported as a hang (a finding).
opts="-timeout=60 -rss_limit_mb=4096 -artifact_prefix=$work/ -print_final_stats=1"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$src/tests/fuzz/lsan.supp:print_suppressions=0}"
export SPTD_FIXTURES="$fixtures"
if [ "$secs" = 0 ]; then
	# shellcheck disable=SC2086
	exec "$build/fuzz/fuzz_$name" $opts -runs=0 "$@" $dirs
fi
echo "fuzz.sh: fuzz_$name for $secs s (corpus $work/corpus)" >&2
# shellcheck disable=SC2086
exec "$build/fuzz/fuzz_$name" $opts -max_total_time="$secs" "$@" $dirs
