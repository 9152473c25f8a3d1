# shellcheck shell=sh
# dwarf_lib.sh — what the --call-graph tests over sptd_dwarf_prog share
# (sourced after expect.sh, with $work, $BIN, $PROG and $name set).

# dwarf_start MODE: sptd_dwarf_prog running ($prog, its $pid) and a
# recorder of it armed ($svc): --source sample --offcpu --call-graph MODE
# --window 1s -F 1000 -p $pid, incidents in $work/inc
dwarf_start() {
	"$PROG" 180000 >"$work/prog.out" &
	prog=$!
	wait_for "$work/prog.out" "^ready" 30 || { bad "the program did not start"; finish; }
	pid=$(sed -n 's/^ready //p' "$work/prog.out")
	mkdir -m 700 "$work/inc"
	"$BIN" --name "$name" --source sample --offcpu --call-graph "$1" --window 1s -F 1000 \
		-p "$pid" -o "$work/inc" </dev/null >/dev/null 2>"$work/err" &
	svc=$!
	if ! wait_for "$work/err" "armed:" 120; then
		bad "the service did not arm"; cat "$work/err" >&2; finish
	fi
}

# dwarf_stacks DB: every sample and blocked state of process $pid in DB,
# one a line, "tid kind frame;frame..." (outermost first; kind cpu or off)
dwarf_stacks() {
	"$BIN" query "$1" --format csv "WITH RECURSIVE src(n, tid, kind, cs) AS (SELECT s.id, t.tid, 'cpu', s.callsite_id FROM sample s JOIN thread t USING (utid) JOIN process p USING (upid) WHERE p.pid = $pid UNION ALL SELECT -ts.id, t.tid, 'off', ts.callsite_id FROM thread_state ts JOIN thread t USING (utid) JOIN process p USING (upid) WHERE p.pid = $pid AND ts.callsite_id IS NOT NULL), up(n, tid, kind, id, parent_id, symbol_id, depth) AS (SELECT src.n, tid, kind, c.id, c.parent_id, c.symbol_id, c.depth FROM src JOIN callsite c ON c.id = src.cs UNION ALL SELECT up.n, up.tid, up.kind, c.id, c.parent_id, c.symbol_id, c.depth FROM callsite c JOIN up ON c.id = up.parent_id) SELECT tid || ' ' || kind || ' ' || group_concat(name, ';') FROM (SELECT n, tid, kind, coalesce(sy.name, '?') AS name FROM up LEFT JOIN symbol sy ON sy.id = up.symbol_id ORDER BY n, depth) GROUP BY n" | tail -n +2
}
