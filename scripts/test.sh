#!/bin/sh
# The whole test suite, three ways (CI runs exactly this through .ci/run):
#   1. build-test: warnings as errors, every test (ctest);
#   2. build-sanitize: the same suite built with ASan + UBSan, any report
#      fatal (-fno-sanitize-recover): memory errors, leaks and undefined
#      behaviour fail the test that hit them (verify_asan_link_order=0: the
#      fake-PMU tests LD_PRELOAD their own library ahead of gcc's libasan);
#      tests labelled "shell" run none of sysptd's code and are left out;
#   3. build-fuzz (clang): every libFuzzer harness of tests/fuzz replays
#      its corpus, then fuzzes for $SPTD_FUZZ_SECONDS (default 20) s from
#      the fixed seed $SPTD_FUZZ_SEED (default 1), so that a CI run can be
#      repeated; long runs with other seeds are scripts/fuzz.sh's job.
# Tests that need root or tracefs skip with a reason when those are missing;
# CI runs as root, so there they all run.  Each part ends with the tests it
# skipped and why (a skip is never a pass), and the run with each part's
# time.  Part 1's ctest runs $(nproc) tests at once (every recorder has a
# --name of its own; the recording tests take one lock among themselves);
# part 2 runs the tests that do not record $(nproc) at once, then those that
# record (scripts/ctest_alone.py) one at a time, alone: under ASan the truth
# tests that compare with perf on the same moment (test_witness,
# test_vs_perf, test_exited, test_irq_idle) fell outside their tolerances
# beside other sanitized tests on 2 CPUs, and pass alone.  Arguments
# go to both ctest runs (e.g. -R test_query).  SPTD_TEST_QUICK=1 stops after
# part 1.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)
common="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPTD_WERROR=ON -DSPTD_STRICT_TESTS=ON"
t0=$(date +%s)
times=""

# part_done NAME: note how long the part took since the last one
part_done() {
	t1=$(date +%s)
	times="$times $1 $((t1 - t0)) s;"
	t0=$t1
}

# ctest_run DIR JOBS JUNIT ARGS...: ctest in DIR, JOBS tests at once, its
# report in DIR/JUNIT; then the skipped tests, each with the last line its
# output gave as the reason
ctest_run() {
	_dir=$1
	_jobs=$2
	_junit=$3
	shift 3
	_rc=0
	(cd "$_dir" && ctest -j"$_jobs" --output-on-failure --output-junit "$_junit" "$@") || _rc=$?
	python3 scripts/ctest_skips.py "$_dir/$_junit" >&2 || true
	return $_rc
}

echo "== 1/3 build-test: the suite" >&2
# shellcheck disable=SC2086
cmake -S . -B build-test $common >/dev/null
cmake --build build-test -j"$jobs"
part_done "build-test build"
ctest_run build-test "$jobs" junit.xml --timeout 300 "$@"
part_done "build-test ctest"
[ "${SPTD_TEST_QUICK:-0}" = 1 ] && { echo "test.sh: times:$times" >&2; exit 0; }

echo "== 2/3 build-sanitize: the suite under ASan + UBSan" >&2
# shellcheck disable=SC2086
cmake -S . -B build-sanitize $common -DSPTD_SANITIZE=ON >/dev/null
cmake --build build-sanitize -j"$jobs"
part_done "build-sanitize build"
(
	export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:verify_asan_link_order=0}"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
	export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$(pwd)/tests/fuzz/lsan.supp:print_suppressions=0}"
	# with arguments (say -R test_query) one serial run of what they select
	if [ $# -gt 0 ]; then
		ctest_run build-sanitize 1 junit.xml --timeout 600 -LE '^shell$' "$@"
		exit
	fi
	alone=$(python3 scripts/ctest_alone.py build-sanitize)
	_rc=0
	ctest_run build-sanitize "$jobs" junit-parallel.xml --timeout 600 -LE '^shell$' \
		-E "$alone" || _rc=$?
	ctest_run build-sanitize 1 junit-alone.xml --timeout 600 -LE '^shell$' \
		-R "$alone" || _rc=$?
	exit $_rc
)
part_done "build-sanitize ctest"

echo "== 3/3 build-fuzz: every harness, its corpus, then ${SPTD_FUZZ_SECONDS:-20} s of fuzzing" >&2
if ! command -v clang >/dev/null 2>&1; then
	echo "test.sh: no clang: the fuzz harnesses cannot run (scripts/install-deps.sh" \
	     "installs it)" >&2
	exit 1
fi
mkdir -p build-fuzz
# each harness built and its corpus replayed, one after the other (they
# share the build directory) ...
for name in $(sh scripts/fuzz.sh --list); do
	SPTD_FUZZ_BUILD=build-fuzz sh scripts/fuzz.sh "$name" 0 >"build-fuzz/$name.log" 2>&1 ||
		{ tail -40 "build-fuzz/$name.log" >&2; echo "test.sh: fuzz_$name: corpus replay failed" >&2; exit 1; }
done
# ... then fuzzed, $jobs harnesses at once (each is one process on one core)
fuzz_one() {
	SPTD_FUZZ_BUILD=build-fuzz sh scripts/fuzz.sh "$1" "${SPTD_FUZZ_SECONDS:-20}" \
		-seed="${SPTD_FUZZ_SEED:-1}" >"build-fuzz/$1.log" 2>&1
	echo $? >"build-fuzz/$1.rc"
}
# shellcheck disable=SC2046
set -- $(sh scripts/fuzz.sh --list)
while [ $# -gt 0 ]; do
	batch=""
	n=0
	while [ $# -gt 0 ] && [ "$n" -lt "$jobs" ]; do
		batch="$batch $1"
		n=$((n + 1))
		fuzz_one "$1" &
		shift
	done
	wait
	for name in $batch; do
		[ "$(cat "build-fuzz/$name.rc")" = 0 ] ||
			{ tail -60 "build-fuzz/$name.log" >&2; echo "test.sh: fuzz_$name found a failure" >&2; exit 1; }
		echo "fuzz_$name: $(grep -E '^Done [0-9]+ runs' "build-fuzz/$name.log")" >&2
	done
done
part_done "build-fuzz"
echo "test.sh: times:$times" >&2
