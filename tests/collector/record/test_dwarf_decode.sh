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
name=dwdec$$

"$PROG" 180000 >"$work/prog.out" &
prog=$!
wait_for "$work/prog.out" "^ready" 30 || { bad "the program did not start"; finish; }
pid=$(sed -n 's/^ready //p' "$work/prog.out")
mkdir -m 700 "$work/inc"
"$BIN" --name "$name" --source sample --offcpu --call-graph dwarf --window 1s -F 1000 \
	-p "$pid" -o "$work/inc" </dev/null >/dev/null 2>"$work/err" &
svc=$!
if ! wait_for "$work/err" "armed:" 120; then
	bad "the service did not arm"; cat "$work/err" >&2; finish
fi
sleep 1.2
inc=$("$BIN" snapshot --name "$name" 2>"$work/snap.err" | tail -n 1)
kill "$svc"; wait "$svc" 2>/dev/null; svc=""
[ -f "$inc" ] && ok || { bad "no incident: $(cat "$work/snap.err")"; finish; }

# every sample and blocked state of the program, "tid kind frame;frame..."
# (outermost first), sorted
stacks() {
	"$BIN" query "$1" --format csv "WITH RECURSIVE src(n, tid, kind, cs) AS (SELECT s.id, t.tid, 'cpu', s.callsite_id FROM sample s JOIN thread t USING (utid) JOIN process p USING (upid) WHERE p.pid = $pid UNION ALL SELECT -ts.id, t.tid, 'off', ts.callsite_id FROM thread_state ts JOIN thread t USING (utid) JOIN process p USING (upid) WHERE p.pid = $pid AND ts.callsite_id IS NOT NULL), up(n, tid, kind, id, parent_id, symbol_id, depth) AS (SELECT src.n, tid, kind, c.id, c.parent_id, c.symbol_id, c.depth FROM src JOIN callsite c ON c.id = src.cs UNION ALL SELECT up.n, up.tid, up.kind, c.id, c.parent_id, c.symbol_id, c.depth FROM callsite c JOIN up ON c.id = up.parent_id) SELECT tid || ' ' || kind || ' ' || group_concat(name, ';') FROM (SELECT n, tid, kind, coalesce(sy.name, '?') AS name FROM up LEFT JOIN symbol sy ON sy.id = up.symbol_id ORDER BY n, depth) GROUP BY n" |
		tail -n +2 | sort
}
stacks "$inc" >"$work/captured"
deep=$(grep -c 'sptd_level1;sptd_level2;sptd_level3' "$work/captured")
# the capture's own unwind gave whole stacks: else nothing below is shown
[ "$deep" -ge 20 ] && ok || { bad "only $deep captured stacks hold level1;level2;level3"; finish; }

# a. decode unwinds again and gives the same stacks
cp "$inc" "$work/a.db"
expect 0 "decoded in" -- "$BIN" decode "$work/a.db"
stacks "$work/a.db" >"$work/a.stacks"
cmp -s "$work/captured" "$work/a.stacks" && ok ||
	{ bad "decode changed the stacks:"; diff "$work/captured" "$work/a.stacks" | head -20 >&2; }

# b. the chains cut to the frame-pointer walk's (the IP alone), ustack kept
cp "$inc" "$work/b.db"
python3 - "$work/b.db" <<'PY' >"$work/cut" 2>&1 || bad "could not cut the chains: $(cat "$work/cut")"
import struct, sqlite3, sys
USER = 2**64 - 512  # PERF_CONTEXT_USER
db = sqlite3.connect(sys.argv[1])
cut = 0
for rid, chain in db.execute("SELECT rowid, callchain FROM raw_sample WHERE ustack IS NOT NULL").fetchall():
    ips = list(struct.unpack(f"<{len(chain) // 8}Q", chain))
    if USER in ips and len(ips) > ips.index(USER) + 2:
        ips = ips[:ips.index(USER) + 2]
        db.execute("UPDATE raw_sample SET callchain = ? WHERE rowid = ?",
                   (struct.pack(f"<{len(ips)}Q", *ips), rid))
        cut += 1
db.commit()
print(cut)
PY
cp "$work/b.db" "$work/b0.db"
expect 0 "decoded in" -- env SPTD_DECODE_UNWIND=0 "$BIN" decode "$work/b0.db"
stacks "$work/b0.db" >"$work/b0.stacks"
# the cut copy, not unwound, lost the callers: the check below can fail
lost=$(grep -c 'sptd_level1' "$work/b0.stacks")
[ "$lost" = 0 ] && ok || bad "the cut chains still hold sptd_level1 in $lost stacks"
expect 0 "decoded in" -- "$BIN" decode "$work/b.db"
stacks "$work/b.db" >"$work/b.stacks"
cmp -s "$work/captured" "$work/b.stacks" && ok ||
	{ bad "re-unwound stacks differ from the capture's ($(tail -n 1 "$work/cut") chains cut):";
	  diff "$work/captured" "$work/b.stacks" | head -20 >&2; }
finish
