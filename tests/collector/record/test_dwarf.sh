#!/bin/sh
# test_dwarf.sh MODE — issue 29, whole user stacks without frame pointers.
# A service records with --source sample --offcpu --call-graph MODE while
# sptd_dwarf_prog (-O2 -fomit-frame-pointer) holds known states: main ->
# sptd_level1 -> sptd_level2 -> sptd_level3 hot, threads blocked in read(),
# nanosleep(), a futex wait, one inside qsort()'s callback, and one in
# clock_gettime()'s vDSO code (unwound with the vDSO's image, read out of
# the process).  `perf
# record --call-graph dwarf` samples the same process over the same window;
# then a snapshot; then gdb attaches and prints every thread's bt.
#   1. every sampled (hot threads) and off-CPU (blocked threads) stack holds
#      each frame gdb shows from the thread's own sptd_* function outwards,
#      and the stacks in gdb's very state (same innermost function) hold
#      every frame gdb shows, libc's included;
#   2. --report top's total of each sptd_* function, as a share of the
#      process's samples, is within 15 points of perf's share.
# MODE dwarf must pass; MODE fp must fail these checks (the test then
# passes: it proves the checks see the frames frame pointers lose).
# Needs root, gdb and perf.
set -u
MODE=${1:?dwarf or fp}
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
PROG=${SPTD_DWARF_PROG:?SPTD_DWARF_PROG must name sptd_dwarf_prog}
if [ "$(id -u)" != 0 ]; then
	echo "needs root (recording): skipped"
	exit 77
fi
for tool in gdb perf; do
	command -v $tool >/dev/null 2>&1 || { echo "no $tool: skipped"; exit 77; }
done
work=$(mktemp -d /tmp/sptd-dwarf-XXXXXX)
svc="" prog=""
trap '[ -n "$prog" ] && kill $prog 2>/dev/null; [ -n "$svc" ] && kill $svc 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../lib/expect.sh"
. "$(dirname "$0")/dwarf_lib.sh"
name=dwarf$$

# the program first: -p keeps only its samples, so that --report top's
# rows are its functions
dwarf_start "$MODE"
sleep 0.3
# perf over the same second as the incident's window: started disabled,
# enabled and disabled through its control FIFO (each acknowledged), so
# its slow start on a busy machine does not shorten its window
mkfifo "$work/ctl" "$work/ack"
perf record -q -B -N -D -1 --control "fifo:$work/ctl,$work/ack" --call-graph dwarf -F 1000 \
	-p "$pid" -o "$work/perf.data" >/dev/null 2>"$work/perf.err" &
perfpid=$!
exec 3<>"$work/ctl" 4<>"$work/ack"
echo enable >&3
read -r _ <&4
sleep 1
echo disable >&3
read -r _ <&4
inc=$("$BIN" snapshot --name "$name" 2>"$work/snap.err" | tail -n 1)
kill -INT "$perfpid"
wait "$perfpid"
exec 3>&- 4>&-
[ -f "$inc" ] && ok || { bad "no incident: $(cat "$work/snap.err")"; finish; }
# the same program, still holding the same states
gdb -q -p "$pid" -batch -ex "set print frame-info location-and-address" \
	-ex "thread apply all bt" >"$work/gdb.out" 2>&1
kill "$prog"; wait "$prog" 2>/dev/null; prog=""
kill "$svc"; wait "$svc" 2>/dev/null; svc=""

# every sample and blocked state of the program (dwarf_lib.sh)
dwarf_stacks "$inc" >"$work/stacks"
"$BIN" query "$inc" --report top --format csv >"$work/top" 2>&1
nsamples=$(q "$inc" "SELECT count(*) FROM sample s JOIN thread t USING (utid) JOIN process p USING (upid) WHERE p.pid = $pid")
perf script -i "$work/perf.data" -F tid,ip,sym 2>/dev/null >"$work/perf.txt"

python3 - "$work" "$nsamples" "$inc" "$pid" <<'PY' >"$work/verdict" 2>&1
import re, sqlite3, sys
work, nsamples, inc, pid = sys.argv[1], int(sys.argv[2] or 0), sys.argv[3], int(sys.argv[4])

# gdb's frames named as the incident names code: each pc (a return
# address less one, but for frame 0) through the process's raw_mmap rows
# and symbol table, so aliases (qsort/qsort_r, __GI___libc_read/read) and
# inlined frames (gdb prints their physical frame's pc) need no guessing
db = sqlite3.connect(f"file:{inc}?mode=ro", uri=True)
maps = db.execute("SELECT start, end, dso_id, bias FROM raw_mmap WHERE pid = ?", (pid,)).fetchall()
def function_at(addr):
    for start, end, dso, bias in maps:
        if start <= addr < end:
            row = db.execute("SELECT name FROM symbol WHERE dso_id = ? AND addr <= ? "
                             "ORDER BY addr DESC LIMIT 1", (dso, addr - bias)).fetchone()
            if row:
                return row[0]
    return f"?{addr:x}"

gdb, tid = {}, None
for line in open(f"{work}/gdb.out"):
    m = re.match(r"Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)", line)
    if m:
        tid = int(m.group(1)); gdb[tid] = []; continue
    m = re.match(r"#(\d+)\s+(0x[0-9a-f]+) in (\S+) \(", line)
    if m and tid is not None:
        pc = int(m.group(2), 16) - (0 if m.group(1) == "0" else 1)
        name = function_at(pc)
        if not gdb[tid] or gdb[tid][-1] != name or m.group(1) == "0":
            gdb[tid].append(name)
stacks = {}
for line in open(f"{work}/stacks"):
    t, kind, frames = line.strip().split(" ", 2)
    stacks.setdefault(int(t), []).append((kind, frames.split(";")))
problems, checked = [], 0
for t, frames in gdb.items():
    own = [i for i, f in enumerate(frames) if f.startswith("sptd_") and f != "sptd_compare"]
    if not own or t not in stacks:
        continue
    outer = frames[own[0]:]           # state-independent: from its own function out
    leaf = frames[0]
    hot = frames[own[0]] in ("sptd_level3", "sptd_qsort_thread", "sptd_vdso_thread")
    kind = "cpu" if hot else "off"
    mine = [s for k, s in stacks[t] if k == kind]
    if len(mine) < 3:
        problems.append(f"thread {t} ({frames[own[0]]}): only {len(mine)} {kind} stacks")
        continue
    for s in mine:
        missing = [f for f in outer if f not in s]
        # an unnamed leaf ("[unknown]": code no symbol covers, e.g. a PLT
        # stub or the vDSO's internals) says nothing of which state it is
        same_state = leaf in s and not leaf.startswith(("[unknown]", "?"))
        if same_state:
            missing = [f for f in frames if f not in s]
        checked += 1
        if missing:
            problems.append(f"thread {t} {kind} stack {';'.join(s)} lacks {missing} (gdb: {frames})")
# --report top against perf, as shares of the process's samples
top = {}
for line in open(f"{work}/top"):
    cols = line.strip().split(",")
    if len(cols) == 6 and cols[0].startswith("sptd_") and cols[4].isdigit():
        top[cols[0]] = top.get(cols[0], 0) + int(cols[4])
perf, nperf, cur = {}, 0, None
# perf script: a sample's header line (its tid, right-aligned: a tid
# under 10000 begins with a space), then one tab-indented "ip symbol"
# line per frame
for line in list(open(f"{work}/perf.txt")) + ["end"]:
    if line.strip() and not line.startswith("\t"):
        if cur is not None:
            nperf += 1
            for f in cur:
                perf[f] = perf.get(f, 0) + 1
        cur = set()
    elif line.strip() and cur is not None and len(line.split()) >= 2:
        cur.add(line.split()[1])
fns = ["sptd_level1", "sptd_level2", "sptd_level3", "sptd_compare", "sptd_qsort_thread"]
# --report top lists 20 functions by self samples: one it leaves out must
# have none of its own, and its total is then counted from the same
# samples' stacks
cpu_stacks = [s for t in stacks for k, s in stacks[t] if k == "cpu"]
if nsamples < 50 or nperf < 50:
    problems.append(f"too few samples: sysptd {nsamples}, perf {nperf}")
else:
    for f in fns:
        if f not in top:
            if any(s and s[-1] == f for s in cpu_stacks):
                problems.append(f"{f}: not in --report top though it has samples of its own")
            top[f] = sum(1 for s in cpu_stacks if f in s)
        a, b = top.get(f, 0) / nsamples, perf.get(f, 0) / nperf
        print(f"{f}: sysptd {a:.3f} perf {b:.3f}")
        if abs(a - b) > 0.15:
            problems.append(f"{f}: --report top total {a:.1%} of the process's samples, perf {b:.1%}")
print(f"checked {checked} stacks of {len(gdb)} gdb threads")
for p in problems[:15]:
    print("PROBLEM", p)
sys.exit(1 if problems or checked == 0 else 0)
PY
verdict=$?
cat "$work/verdict"
if [ "$MODE" = dwarf ]; then
	[ "$verdict" = 0 ] && ok || { bad "DWARF stacks disagree with gdb or perf"; tail -n 40 "$work/gdb.out" >&2; }
else
	# frame pointers must lose frames here: else these checks prove nothing
	[ "$verdict" = 1 ] && ok || bad "--call-graph fp passed the checks: they cannot see lost frames"
fi
finish
