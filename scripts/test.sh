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
# CI runs as root, so there they all run.  Arguments go to both ctest runs
# (e.g. -R test_query).  SPTD_TEST_QUICK=1 stops after part 1.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)
common="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPTD_WERROR=ON -DSPTD_STRICT_TESTS=ON"

echo "== 1/3 build-test: the suite" >&2
# shellcheck disable=SC2086
cmake -S . -B build-test $common >/dev/null
cmake --build build-test -j"$jobs"
(cd build-test && ctest --output-on-failure --timeout 300 "$@")
[ "${SPTD_TEST_QUICK:-0}" = 1 ] && exit 0

echo "== 2/3 build-sanitize: the suite under ASan + UBSan" >&2
# shellcheck disable=SC2086
cmake -S . -B build-sanitize $common -DSPTD_SANITIZE=ON >/dev/null
cmake --build build-sanitize -j"$jobs"
(cd build-sanitize &&
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:verify_asan_link_order=0} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$(pwd)/../tests/fuzz/lsan.supp:print_suppressions=0} \
	ctest --output-on-failure --timeout 600 -LE '^shell$' "$@")

echo "== 3/3 build-fuzz: every harness, its corpus, then ${SPTD_FUZZ_SECONDS:-20} s of fuzzing" >&2
if ! command -v clang >/dev/null 2>&1; then
	echo "test.sh: no clang: the fuzz harnesses cannot run (scripts/install-deps.sh" \
	     "installs it)" >&2
	exit 1
fi
mkdir -p build-fuzz
for name in $(sh scripts/fuzz.sh --list); do
	SPTD_FUZZ_BUILD=build-fuzz sh scripts/fuzz.sh "$name" 0 >"build-fuzz/$name.log" 2>&1 ||
		{ tail -40 "build-fuzz/$name.log" >&2; echo "test.sh: fuzz_$name: corpus replay failed" >&2; exit 1; }
	SPTD_FUZZ_BUILD=build-fuzz sh scripts/fuzz.sh "$name" "${SPTD_FUZZ_SECONDS:-20}" \
		-seed="${SPTD_FUZZ_SEED:-1}" \
		>"build-fuzz/$name.log" 2>&1 ||
		{ tail -60 "build-fuzz/$name.log" >&2; echo "test.sh: fuzz_$name found a failure" >&2; exit 1; }
	echo "fuzz_$name: $(grep -E '^Done [0-9]+ runs' "build-fuzz/$name.log")" >&2
done
