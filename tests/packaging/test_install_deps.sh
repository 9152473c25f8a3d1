#!/bin/sh
# test_install_deps.sh — issue 14 item 6: scripts/install-deps.sh waits for
# apt's locks instead of dying.  A helper holds apt's and dpkg's locks (the
# fcntl locks apt itself takes) for a few seconds while the script runs: it
# must say it is waiting, then install and exit 0, no sooner than the locks
# were let go.  Needs root and apt-get (Debian), like the script itself.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	echo "not root, or no apt-get/python3: skipped"
	exit 77
fi
work=$(mktemp -d /tmp/sptd-aptlock-XXXXXX)
trap 'kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT
hold=6
python3 - "$hold" "$work/held" <<'PY' &
import fcntl, os, sys, time
fds = []
for p in ("/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock",
          "/var/lib/apt/lists/lock", "/var/cache/apt/archives/lock"):
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o640)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fds.append(fd)
open(sys.argv[2], "w").close()
time.sleep(float(sys.argv[1]))
PY
holder=$!
i=0
while [ ! -e "$work/held" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$work/held" ] || { echo "FAIL: could not take apt's locks (is apt running?)"; exit 1; }
start=$(date +%s)
sh "$src/scripts/install-deps.sh" >"$work/out" 2>&1
rc=$?
took=$(($(date +%s) - start))
failed=0
[ "$rc" = 0 ] || { echo "FAIL: install-deps.sh exited $rc while the lock was held"; failed=1; }
grep -q "waiting for apt's lock" "$work/out" || { echo "FAIL: it did not say it was waiting"; failed=1; }
grep -q "build dependencies installed" "$work/out" || { echo "FAIL: it did not finish"; failed=1; }
[ "$took" -ge $((hold - 2)) ] || { echo "FAIL: done in ${took}s, before the ${hold}s lock was let go"; failed=1; }
wait "$holder" 2>/dev/null
# a lock never let go: a clear failure after SPTD_APT_LOCK_WAIT, not a hang
python3 - 30 "$work/held2" <<'PY' &
import fcntl, os, sys, time
fd = os.open("/var/lib/apt/lists/lock", os.O_RDWR | os.O_CREAT, 0o640)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
open(sys.argv[2], "w").close()
time.sleep(float(sys.argv[1]))
PY
holder=$!
i=0
while [ ! -e "$work/held2" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
SPTD_APT_LOCK_WAIT=4 sh "$src/scripts/install-deps.sh" >"$work/out2" 2>&1
rc=$?
[ "$rc" != 0 ] || { echo "FAIL: exit 0 with the lock held throughout"; failed=1; }
grep -q "still held after 4 s" "$work/out2" || { echo "FAIL: no clear message when the lock stays held"; cat "$work/out2"; failed=1; }
kill "$holder" 2>/dev/null
[ "$failed" = 0 ] || { echo "output:"; cat "$work/out"; exit 1; }
echo "ok: waited ${took}s for apt's lock, then installed; gave up clearly after SPTD_APT_LOCK_WAIT"
