#!/bin/sh
# The main job on a fresh machine: record one incident with sysptd (as root),
# then print its summary and per-CPU report.  A timer trigger fires after a
# second; a small workload runs meanwhile so there is something to see.
set -eu
cd "$(dirname "$0")/.."
out=${SYSPTD_DEMO_DIR:-/tmp/sysptd-demo}
mkdir -p "$out"
# some work to look at: a pipe ping-pong and a busy loop
( i=0; while [ $i -lt 3000 ]; do echo x; i=$((i+1)); done | cat >/dev/null ) &
( end=$(( $(date +%s) + 2 )); while [ "$(date +%s)" -lt $end ]; do :; done ) &
incident=$(./build/sysptd --window 20ms --trigger timer=1s --once --output "$out")
wait
echo "incident: $incident"
./build/sysptd query "$incident"
./build/sysptd query "$incident" --report cpus
