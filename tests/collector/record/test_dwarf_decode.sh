#!/bin/sh
# test_dwarf_decode.sh — issue 29: `sysptd decode` unwinds the stored user
# stacks (raw_sample.ustack) again.  A service records sptd_dwarf_prog
# (-O2 -fomit-frame-pointer: main -> sptd_level1 -> sptd_level2 ->
# sptd_level3 hot, threads blocked in libc) with --source sample --offcpu
# --call-graph dwarf, then:
#   a. `sysptd decode` of the incident gives the stacks capture gave;
#   b. a copy whose raw_sample chains keep only what the frame-pointer walk
#      of this program gives (the IP: every user frame after it cut off)
#      decodes, with SPTD_DECODE_UNWIND=0, to stacks without sptd_level1
#      (the copy lost them), and, unwound again, to the capture's stacks.
# Needs root.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
PROG=${SPTD_DWARF_PROG:?SPTD_DWARF_PROG must name sptd_dwarf_prog}
if [ "$(id -u)" != 0 ]; then
	echo "needs root (recording): skipped"
	exit 77
fi
work=$(mktemp -d /tmp/sptd-dwdec-XXXXXX)
svc="" prog=""
trap '[ -n "$prog" ] && kill $prog 2>/dev/null; [ -n "$svc" ] && kill $svc 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../lib/expect.sh"
. "$(dirname "$0")/dwarf_lib.sh"
name=dwdec$$

dwarf_start dwarf
sleep 1.2
inc=$("$BIN" snapshot --name "$name" 2>"$work/snap.err" | tail -n 1)
kill "$svc"; wait "$svc" 2>/dev/null; svc=""
[ -f "$inc" ] && ok || { bad "no incident: $(cat "$work/snap.err")"; finish; }

# the program's stacks (dwarf_stacks), sorted
stacks() { dwarf_stacks "$1" | sort; }
stacks "$inc" >"$work/captured"
deep=$(grep -c 'sptd_level1;sptd_level2;sptd_level3' "$work/captured")
# the capture's own unwind gave whole stacks: else nothing below is shown
[ "$deep" -ge 20 ] && ok || { bad "only $deep captured stacks hold level1;level2;level3"; finish; }

# the capture unwound each stack once, while the processes lived: its
# derive took the chains as stored (an unwind there would say so)
[ "$(q "$inc" "SELECT value FROM meta WHERE key = 'dwarf_unwind_done'")" = 1 ] &&
	[ "$(q "$inc" "SELECT count(*) FROM meta WHERE key = 'dwarf_decode_unwound'")" = 0 ] && ok ||
	bad "the capture unwound its stacks twice (meta: $(q "$inc" "SELECT group_concat(key || '=' || value) FROM meta WHERE key LIKE 'dwarf%'"))"
# a. decode unwinds again and gives the same stacks
cp "$inc" "$work/a.db"
expect 0 "decoded in" -- "$BIN" decode "$work/a.db"
stacks "$work/a.db" >"$work/a.stacks"
[ "$(q "$work/a.db" "SELECT value FROM meta WHERE key = 'dwarf_decode_unwound'")" -ge 20 ] 2>/dev/null && ok ||
	bad "decode did not unwind the stored stacks again (meta: $(q "$work/a.db" "SELECT group_concat(key || '=' || value) FROM meta WHERE key LIKE 'dwarf%'"))"
cmp -s "$work/captured" "$work/a.stacks" && ok ||
	{ bad "decode changed the stacks:"; diff "$work/captured" "$work/a.stacks" | head -20 >&2; }

# b. the chains of samples in the program's own code and in the vDSO
# (which no file holds: decode unwinds it with the image the capture
# embedded) cut to what the frame-pointer walk gives it (the IP alone),
# ustack kept
cp "$inc" "$work/b.db"
python3 - "$work/b.db" "$pid" <<'PY' >"$work/cut" 2>&1 || bad "could not cut the chains: $(cat "$work/cut")"
import struct, sqlite3, sys
USER = 2**64 - 512  # PERF_CONTEXT_USER
db = sqlite3.connect(sys.argv[1])
prog = db.execute("SELECT m.start, m.end FROM raw_mmap m JOIN dso d ON d.id = m.dso_id "
                  "WHERE m.pid = ? AND d.path LIKE '%/sptd_dwarf_prog'", (int(sys.argv[2]),)).fetchall()
vdso = db.execute("SELECT m.start, m.end FROM raw_mmap m JOIN dso d ON d.id = m.dso_id "
                  "WHERE m.pid = ? AND d.path = '[vdso]'", (int(sys.argv[2]),)).fetchall()
prog += vdso
cut = 0
cut_vdso = 0
for rid, chain in db.execute("SELECT rowid, callchain FROM raw_sample WHERE ustack IS NOT NULL").fetchall():
    ips = list(struct.unpack(f"<{len(chain) // 8}Q", chain))
    if USER in ips and len(ips) > ips.index(USER) + 2 and \
       any(lo <= ips[ips.index(USER) + 1] < hi for lo, hi in prog):
        cut_vdso += any(lo <= ips[ips.index(USER) + 1] < hi for lo, hi in vdso)
        ips = ips[:ips.index(USER) + 2]
        db.execute("UPDATE raw_sample SET callchain = ? WHERE rowid = ?",
                   (struct.pack(f"<{len(ips)}Q", *ips), rid))
        cut += 1
db.commit()
print(cut_vdso)
print(cut)
PY
# the vDSO thread's samples among them (sptd_vdso_thread spins in it)
[ "$(head -n 1 "$work/cut")" -ge 5 ] && ok ||
	bad "only $(head -n 1 "$work/cut") cut chains begin in the vDSO"
cp "$work/b.db" "$work/b0.db"
expect 0 "decoded in" -- env SPTD_DECODE_UNWIND=0 "$BIN" decode "$work/b0.db"
stacks "$work/b0.db" >"$work/b0.stacks"
# the cut copy, not unwound, lost the callers in most stacks: the check
# below can fail
had=$(grep -c 'sptd_level1' "$work/captured")
kept=$(grep -c 'sptd_level1' "$work/b0.stacks")
[ "$(tail -n 1 "$work/cut")" -ge 20 ] && [ $((kept * 2)) -lt "$had" ] && ok ||
	bad "cutting $(tail -n 1 "$work/cut") chains left sptd_level1 in $kept of $had stacks"
expect 0 "decoded in" -- "$BIN" decode "$work/b.db"
stacks "$work/b.db" >"$work/b.stacks"
cmp -s "$work/captured" "$work/b.stacks" && ok ||
	{ bad "re-unwound stacks differ from the capture's ($(tail -n 1 "$work/cut") chains cut):";
	  diff "$work/captured" "$work/b.stacks" | head -20 >&2; }
finish
