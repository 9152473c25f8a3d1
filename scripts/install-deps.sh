#!/bin/sh
# Install what sysptd needs to build, test and run, from Debian's packages.
# Debian bookworm (12) or newer; run as root.  Safe to run again.
# clang, libclang-rt-dev (the ASan/UBSan/libFuzzer runtimes) and llvm
# (llvm-symbolizer for readable reports) build and run tests/fuzz.
# chromium (headless) and fonts-dejavu-core: test_flame_browser opens the
# flame graph SVG in a real browser, screenshot and DOM.
#
# apt's locks are often held right after a cloud VM boots (cloud-init,
# unattended-upgrades): this waits for them, up to SPTD_APT_LOCK_WAIT
# seconds (default 600), saying so, instead of failing.
set -eu
if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: run as root (it installs Debian packages): sudo $0" >&2
	exit 4
fi
export DEBIAN_FRONTEND=noninteractive
wait_s=${SPTD_APT_LOCK_WAIT:-600}
case "$wait_s" in ''|*[!0-9]*) echo "install-deps.sh: SPTD_APT_LOCK_WAIT must be seconds" >&2; exit 2 ;; esac
err=$(mktemp /tmp/sptd-apt-XXXXXX)
trap 'rm -f "$err"' EXIT

# apt_wait ARGS...: apt-get ARGS, again every 3 s while another process
# holds one of apt's or dpkg's locks, until wait_s has passed.  apt 1.9.11+
# waits for dpkg's lock itself (DPkg::Lock::Timeout); the lists lock of
# `apt-get update` and older apt need the retry.
apt_wait() {
	start=$(date +%s)
	said=
	while :; do
		if apt-get -o DPkg::Lock::Timeout="$wait_s" "$@" 2>"$err"; then
			cat "$err" >&2
			return 0
		fi
		if ! grep -q "Could not get lock\|Unable to lock\|Unable to acquire the dpkg frontend lock" "$err"; then
			cat "$err" >&2
			return 1
		fi
		if [ $(($(date +%s) - start)) -ge "$wait_s" ]; then
			cat "$err" >&2
			echo "install-deps.sh: apt's lock is still held after ${wait_s} s; try again once" \
				"the other package manager is done (or set SPTD_APT_LOCK_WAIT)" >&2
			return 1
		fi
		if [ -z "$said" ]; then
			echo "install-deps.sh: waiting for apt's lock: $(grep -m1 "lock" "$err" | sed 's/^E: //')" >&2
			said=1
		fi
		sleep 3
	done
}

apt_wait update -qq
apt_wait install -y -qq --no-install-recommends \
	build-essential cmake pkg-config \
	libtracefs-dev libtraceevent-dev libipt-dev libsqlite3-dev libelf-dev libdw-dev libiberty-dev liblzma-dev libc6-dbg \
	zlib1g-dev golang-github-google-pprof-dev \
	sqlite3 protobuf-compiler linux-perf binutils elfutils gdb xz-utils python3 strace \
	clang libclang-rt-dev llvm man-db bsdextrautils chromium fonts-dejavu-core >/dev/null
echo "install-deps.sh: build dependencies installed"
