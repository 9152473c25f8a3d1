#!/bin/sh
# Configure and build sysptd into ./build (Release with debug info).
# Extra arguments go to cmake's configure step (e.g. -DSPTD_WERROR=ON).
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j"$(nproc)"
