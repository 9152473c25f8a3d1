#!/bin/sh
# Install what sysptd needs to build, test and run, from Debian's packages.
# Debian bookworm (12) or newer; run as root.  Safe to run again.
# clang, libclang-rt-dev (the ASan/UBSan/libFuzzer runtimes) and llvm
# (llvm-symbolizer for readable reports) build and run tests/fuzz.
set -eu
if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: run as root (it installs Debian packages): sudo $0" >&2
	exit 4
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	build-essential cmake pkg-config \
	libtracefs-dev libtraceevent-dev libipt-dev libsqlite3-dev libelf-dev libiberty-dev liblzma-dev libc6-dbg \
	sqlite3 protobuf-compiler linux-perf binutils xz-utils python3 strace \
	clang libclang-rt-dev llvm man-db bsdextrautils >/dev/null
echo "install-deps.sh: build dependencies installed"
