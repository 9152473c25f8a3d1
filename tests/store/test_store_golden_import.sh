#!/bin/sh
# test_store_golden_import.sh — same files out, from real input: `sysptd
# import` of the real PT capture hase-control_flow (../shared/fixtures)
# dumped table by table (every column through quote(), rows by rowid) and
# compared with golden/import-control_flow.txt.
#
# That file was written by this script (GOLDEN_WRITE=FILE) with the sysptd
# built from main at c011954, before the store became table-driven.  What
# differs from run to run is left out: meta "command" and "perf_data" (paths) and
# the stats rows that are timings (*_ns); the place of the fixtures on this
# machine (dso.path names the file found under --symfs) is written FIXTURE.
# Skips (77) without the fixtures.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
SRC=${SPTD_SRC:-$(dirname "$0")/../..}
FIX=${SPTD_FIXTURES:-$SRC/../shared/fixtures}/real-pt/hase-control_flow
GOLDEN=$SRC/tests/store/golden/import-control_flow.txt
[ -f "$FIX/perf.data" ] || { echo "SKIP: no fixture $FIX/perf.data" >&2; exit 77; }
work=$(mktemp -d /tmp/sptd-golden-XXXXXX)
trap 'rm -rf "$work"' EXIT
"$BIN" import "$FIX/perf.data" --symfs "$FIX/symfs" -o "$work/i.db" >"$work/log" 2>&1 ||
	{ echo "FAIL: import"; cat "$work/log"; exit 1; }
q() { "$BIN" query --format csv "$work/i.db" "$1"; }
tables=$(q "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name" | tail -n +2)
{
	echo "schema"
	q "SELECT type, name, sql FROM sqlite_schema ORDER BY name"
	for t in $tables; do
		cols=$(q "SELECT group_concat('quote(\"' || name || '\")', ', ') FROM pragma_table_info('$t')" |
		       tail -n 1 | tr -d '"')
		where=
		[ "$t" = meta ] && where="WHERE key NOT IN ('command', 'perf_data')"
		[ "$t" = stats ] && where="WHERE name NOT LIKE '%\\_ns' ESCAPE '\\'"
		echo "table $t"
		q "SELECT $cols FROM \"$t\" $where ORDER BY rowid"
	done
} >"$work/dump.raw" 2>&1
# where the checkout sits differs by machine (CI clones elsewhere): the
# fixture's real path, as import resolves it, becomes FIXTURE
fixreal=$(cd "$FIX" && pwd -P)
awk -v p="$fixreal" '{ while ((i = index($0, p)) > 0) $0 = substr($0, 1, i - 1) "FIXTURE" substr($0, i + length(p)); print }' \
	"$work/dump.raw" >"$work/dump"
if [ -n "${GOLDEN_WRITE:-}" ]; then
	cp "$work/dump" "$GOLDEN_WRITE"
	exit 0
fi
if ! diff -u "$GOLDEN" "$work/dump" >"$work/diff"; then
	echo "FAIL: the incident differs from $GOLDEN:"
	head -40 "$work/diff"
	exit 1
fi
echo "PASS: $(grep -c '^table ' "$work/dump") tables as before"
