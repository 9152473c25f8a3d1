#!/bin/sh
# Build with warnings as errors and run the whole test suite (ctest).
# Tests that need root or tracefs skip with a reason when those are missing;
# CI runs as root, so there they all run.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPTD_WERROR=ON -DSPTD_STRICT_TESTS=ON >/dev/null
cmake --build build-test -j"$(nproc)"
cd build-test
ctest --output-on-failure --timeout 300 "$@"
