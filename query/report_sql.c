/* report_sql.c — the canned reports: each is a list of sections, each
 * section plain SQL against docs/SCHEMA.md run through the same printer as
 * `sysptd query`.
 *
 * Divisions: shared SQL fragments; summary; cpus; top; wakeup; irq;
 * threads; the report table.
 *
 * Conventions of these queries:
 *   - the window is meta window_start..window_end (else the span of
 *     sched_slice); time is clipped to it and percentages are of it (one CPU
 *     fully busy for the whole window is 100%);
 *   - idle is the time of the idle task (thread tid 0, "swapper");
 *   - a task is shown as its thread name, with tid in its own column or as
 *     "name[tid]" inside a text cell;
 *   - ties are broken by id so output is deterministic.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "query-local.h"

/* ---- shared SQL fragments ------------------------------------------------ */

/* w(ws, we): the window, one row. */
#define W_CTE \
	"w(ws, we) AS (SELECT " \
	"coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_start'), " \
	"(SELECT min(ts) FROM sched_slice), 0), " \
	"coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_end'), " \
	"(SELECT max(ts + dur) FROM sched_slice), 0))"

/* idle(utid): the idle task's utids. */
#define IDLE_CTE "idle(utid) AS (SELECT utid FROM thread WHERE tid = 0)"

/* Nanoseconds of row alias A inside the window. */
#define CLIP(A) "max(0, min(" A ".ts + " A ".dur, w.we) - max(" A ".ts, w.ws))"

/* Percent of the window, two decimals. */
#define PCT(X) "round(100.0 * (" X ") / nullif(w.we - w.ws, 0), 2)"

/* The incident's source for notes. */
#define SOURCE "coalesce((SELECT value FROM meta WHERE key = 'source'), 'unknown')"

/* "name[tid]" for row @T of thread (its time goes in a column of its own,
 * so that tables show it as a duration and csv/json as ns). */
#define TASK_LABEL(T, UTID) \
	"coalesce(" T ".name, 'utid ' || " UTID ") || '[' || coalesce(" T ".tid, '?') || ']'"

/* Hottest functions by samples: self = innermost frame, total = anywhere in
 * the stack (once per sample, so recursion does not count twice).  The
 * totals come from report_stacks.c (the stacks walked in C, once per
 * distinct leaf callsite, at most 1024 frames up in case parent links
 * loop) as the table tot(fkey, total); this is the rest.  Frames no symbol
 * covers are named as perf names them: "[unknown]" with their dso beside
 * it, one row per dso (symbol rows named "[unknown]" carry the dso; a frame
 * in no known mapping has no symbol and its dso is "[unknown]" too). */
#define TOP_SAMPLES_REST(LIMIT) \
	"leaf AS (SELECT callsite_id AS cs, count(*) AS n FROM sample" \
	" WHERE callsite_id IS NOT NULL GROUP BY callsite_id), " \
	"fn AS (SELECT c.id AS cs, CASE WHEN c.symbol_id IS NULL THEN 'u'" \
	" WHEN y.name = '[unknown]' THEN 'u' || y.dso_id ELSE 's' || c.symbol_id END AS fkey," \
	" c.symbol_id, y.dso_id FROM callsite c LEFT JOIN symbol y ON y.id = c.symbol_id), " \
	"slf AS (SELECT fn.fkey, sum(leaf.n) AS self FROM leaf JOIN fn ON fn.cs = leaf.cs" \
	" GROUP BY fn.fkey), " \
	"info AS (SELECT fkey, min(symbol_id) AS symbol_id, min(dso_id) AS dso_id FROM fn" \
	" GROUP BY fkey), " \
	"n AS (SELECT count(*) AS n FROM sample) " \
	"SELECT CASE WHEN info.fkey LIKE 'u%' THEN '[unknown]' ELSE sym.name END AS function, " \
	" coalesce(d.path, '[unknown]') AS dso, " \
	" coalesce(slf.self, 0) AS self, round(100.0 * coalesce(slf.self, 0) / n.n, 2) AS self_pct, " \
	" tot.total AS total, round(100.0 * tot.total / n.n, 2) AS total_pct " \
	"FROM tot JOIN info ON info.fkey = tot.fkey CROSS JOIN n " \
	"LEFT JOIN slf ON slf.fkey = tot.fkey " \
	"LEFT JOIN symbol sym ON sym.id = info.symbol_id LEFT JOIN dso d ON d.id = info.dso_id " \
	"ORDER BY self DESC, total DESC, function, dso LIMIT " LIMIT

/* The whole query: the totals' VALUES, then the rest. */
static int build_top_samples(struct sptd_store *st, struct sptd_query_buf *sql, const char *rest)
{
	int rc = sptd_query_buf_add(sql, "WITH ", 5);

	if (rc == 0)
		rc = sptd_query_stack_totals(st, sql);
	if (rc == 0)
		rc = sptd_query_buf_add(sql, rest, strlen(rest));
	return rc;
}

static int build_top_samples_5(struct sptd_store *st, struct sptd_query_buf *sql)
{
	return build_top_samples(st, sql, TOP_SAMPLES_REST("5"));
}

static int build_top_samples_20(struct sptd_store *st, struct sptd_query_buf *sql)
{
	return build_top_samples(st, sql, TOP_SAMPLES_REST("20"));
}

/* Hottest functions by PT slice time: self = duration minus children's,
 * total = duration of the calls not nested in a call of the same function
 * (so recursion does not count twice); percentages of all root time.  The
 * walk goes down from root slices (no parent, or a parent not stored)
 * carrying the set of symbols on the path, each once: a recursion 45,000
 * calls deep kept a path of every frame and took time quadratic in its
 * depth (11 s). */
#define TOP_SLICES(LIMIT) \
	"WITH RECURSIVE " \
	"roots AS (SELECT id FROM slice WHERE parent_id IS NULL" \
	" OR parent_id NOT IN (SELECT id FROM slice)), " \
	"walk(id, path, counted) AS (" \
	" SELECT s.id, ',' || coalesce(s.symbol_id, '') || ',', 1" \
	" FROM slice s JOIN roots r ON r.id = s.id" \
	" UNION ALL" \
	" SELECT s.id, CASE WHEN s.symbol_id IS NULL" \
	" OR instr(walk.path, ',' || s.symbol_id || ',') > 0 THEN walk.path" \
	" ELSE walk.path || s.symbol_id || ',' END," \
	" CASE WHEN s.symbol_id IS NULL THEN 1" \
	" ELSE instr(walk.path, ',' || s.symbol_id || ',') = 0 END" \
	" FROM walk JOIN slice s ON s.parent_id = walk.id), " \
	"kids AS (SELECT parent_id AS id, sum(dur) AS d FROM slice" \
	" WHERE parent_id IS NOT NULL GROUP BY parent_id), " \
	"per AS (SELECT s.id, s.symbol_id, s.dur, max(0, s.dur - coalesce(k.d, 0)) AS self," \
	" walk.counted FROM slice s JOIN walk ON walk.id = s.id LEFT JOIN kids k ON k.id = s.id), " \
	"tot AS (SELECT sum(s.dur) AS n FROM slice s JOIN roots r ON r.id = s.id) " \
	"SELECT coalesce(sym.name, '[unknown]') AS function, d.path AS dso, count(*) AS calls, " \
	" sum(per.self) AS self_ns, round(100.0 * sum(per.self) / nullif(tot.n, 0), 2) AS self_pct, " \
	" sum(CASE WHEN per.counted THEN per.dur ELSE 0 END) AS total_ns, " \
	" round(100.0 * sum(CASE WHEN per.counted THEN per.dur ELSE 0 END) / nullif(tot.n, 0), 2)" \
	" AS total_pct " \
	"FROM per CROSS JOIN tot LEFT JOIN symbol sym ON sym.id = per.symbol_id " \
	"LEFT JOIN dso d ON d.id = sym.dso_id " \
	"GROUP BY per.symbol_id ORDER BY self_ns DESC, total_ns DESC, function LIMIT " LIMIT

/* A runnable row a wakeup opened: it names its waker, or says it was woken
 * from interrupt context (thread_state.flags 32 hard irq, 64 softirq). */
#define WOKEN(R) "(" R ".waker_utid IS NOT NULL OR coalesce(" R ".flags, 0) & 96)"

/* Wakeup latency: a runnable "R" state that names its waker, followed (for
 * the same thread) by Running; latency runs from the wakeup to the run.  A
 * state clipped at the window start (flags bit 1: the task was runnable
 * before the window) has a longer true latency than shown: it is marked
 * "*" in `clipped`, and left out of the ranking unless @WITH_CLIPPED. */
#define WAKEUPS_RANKED(LIMIT, WITH_CLIPPED) \
	"WITH seq AS (SELECT t.*," \
	" lead(state) OVER (PARTITION BY utid ORDER BY ts, id) AS next_state," \
	" lead(ts) OVER (PARTITION BY utid ORDER BY ts, id) AS next_ts," \
	" lead(cpu) OVER (PARTITION BY utid ORDER BY ts, id) AS next_cpu" \
	" FROM thread_state t) " \
	"SELECT r.next_ts - r.ts AS latency_ns, " \
	" CASE WHEN coalesce(r.flags, 0) & 1 THEN '*' ELSE '' END AS clipped, " \
	" r.ts AS ts, th.tid AS tid, th.name AS task, " \
	" wk.tid AS waker_tid, CASE WHEN coalesce(r.flags, 0) & 32 THEN '[hard irq]' " \
	" WHEN coalesce(r.flags, 0) & 64 THEN '[softirq]' ELSE wk.name END AS waker, " \
	" coalesce(r.next_cpu, r.cpu) AS cpu " \
	"FROM seq r LEFT JOIN thread th ON th.utid = r.utid LEFT JOIN thread wk ON wk.utid = r.waker_utid " \
	"WHERE r.state = 'R' AND " WOKEN("r") " AND r.next_state = 'Running' " \
	WITH_CLIPPED \
	"ORDER BY latency_ns DESC, r.ts, r.id LIMIT " LIMIT
#define WAKEUPS(LIMIT) WAKEUPS_RANKED(LIMIT, "AND coalesce(r.flags, 0) & 1 = 0 ")
#define WAKEUPS_ALL(LIMIT) WAKEUPS_RANKED(LIMIT, "")

/* How many wakeups the ranking left out as clipped; a note, or nothing. */
#define CLIPPED_NOTE \
	"WITH seq AS (SELECT t.*, lead(state) OVER (PARTITION BY utid ORDER BY ts, id) AS next_state" \
	" FROM thread_state t) " \
	"SELECT CASE WHEN count(*) = 0 THEN 0 ELSE count(*) || ' wakeup(s) clipped at the window " \
	"start are not ranked: the task was runnable before the window, so the latency shown " \
	"would be too short (--include-clipped ranks them, marked *)' END " \
	"FROM seq r WHERE r.state = 'R' AND " WOKEN("r") " AND r.next_state = 'Running' " \
	"AND coalesce(r.flags, 0) & 1"

#define WHEN_WAKEUPS \
	"SELECT CASE WHEN EXISTS (SELECT 1 FROM thread_state t WHERE " WOKEN("t") ") " \
	"THEN 1 ELSE 'no wakeups in this incident (no thread_state row names a waker)' END"

#define WHEN_SCHED \
	"SELECT CASE WHEN EXISTS (SELECT 1 FROM sched_slice) THEN 1 " \
	"ELSE 'no scheduler data in this incident (sched_slice is empty)' END"

#define WHEN_SAMPLES \
	"SELECT CASE WHEN EXISTS (SELECT 1 FROM sample) THEN 1 " \
	"ELSE 'no samples in this incident (source=' || " SOURCE " || ')' END"

#define WHEN_SLICES \
	"SELECT CASE WHEN EXISTS (SELECT 1 FROM slice) THEN 1 " \
	"ELSE 'no PT slices in this incident (source=' || " SOURCE " || ')' END"

/* Per-task CPU time (idle excluded): top tasks and threads share it. */
#define TASK_TIME(LIMIT) \
	"WITH " W_CTE ", " IDLE_CTE " " \
	"SELECT th.tid AS tid, th.name AS thread, p.name AS process, " \
	" sum(" CLIP("s") ") AS cpu_ns, " PCT("sum(" CLIP("s") ")") " AS cpu_pct, " \
	" count(*) AS slices " \
	"FROM sched_slice s CROSS JOIN w LEFT JOIN thread th ON th.utid = s.utid " \
	"LEFT JOIN process p ON p.upid = th.upid " \
	"WHERE s.utid NOT IN (SELECT utid FROM idle) " \
	"GROUP BY s.utid ORDER BY cpu_ns DESC, s.utid LIMIT " LIMIT

/* ---- summary --------------------------------------------------------------- */

/* Row counts of every incident table, from the store's own list. */
static int build_table_counts(struct sptd_store *st, struct sptd_query_buf *sql)
{
	const char *const *t = sptd_store_tables();
	char part[256];
	int rc = 0, first = 1;

	(void)st;

	for (; t && *t && rc == 0; t++) {
		if (strchr(*t, '"'))
			continue;
		snprintf(part, sizeof(part), "%sSELECT '%s' AS \"table\", count(*) AS rows FROM \"%s\"",
		         first ? "" : " UNION ALL ", *t, *t);
		rc = sptd_query_buf_add(sql, part, strlen(part));
		first = 0;
	}
	if (rc == 0 && first)
		rc = -ENOENT;
	return rc;
}

static const struct sptd_query_section summary_sections[] = {
	{ "incident", "incident", 
	  "WITH k(ord, key) AS (VALUES (1, 'host'), (2, 'kernel'), (3, 'machine'), "
	  "(4, 'cpu_model'), (5, 'cpus'), (6, 'source'), (7, 'clock'), (8, 'created'), "
	  "(9, 'window_ns'), (10, 'post_ns'), (11, 'window_start'), (12, 'window_end'), "
	  "(13, 'trigger_spec'), (14, 'command'), (15, 'sysptd_version')) "
	  "SELECT k.key AS key, m.value AS value FROM k JOIN meta m ON m.key = k.key ORDER BY k.ord",
	  NULL, NULL },
	{ "tables", "rows per table", NULL, build_table_counts, NULL },
	{ "trigger", "trigger",
	  "WITH " W_CTE " SELECT t.ts AS ts, t.ts - w.ws AS at_ns, t.cpu AS cpu, t.kind AS kind, "
	  "t.detail AS detail FROM trigger t CROSS JOIN w ORDER BY t.ts, t.id",
	  NULL,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM trigger) THEN 1 "
	  "ELSE 'no trigger row in this incident' END" },
	{ "top_tasks", "top 5 tasks by CPU time", TASK_TIME("5"), NULL, WHEN_SCHED },
	{ "top_functions_pt", "top 5 functions by self time (PT slices)", TOP_SLICES("5"), NULL,
	  "SELECT EXISTS (SELECT 1 FROM slice)" },
	{ "top_functions", "top 5 functions by self samples", NULL, build_top_samples_5,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM slice) THEN 0 "
	  "WHEN EXISTS (SELECT 1 FROM sample) THEN 1 "
	  "ELSE 'no samples or PT slices in this incident (source=' || " SOURCE " || ')' END" },
	{ "worst_wakeup", "worst wakeup latency", WAKEUPS("1"), NULL, WHEN_WAKEUPS },
	{ "gaps", "gaps (stretches with missing or undecodable data)",
	  "SELECT count(*) AS gaps, coalesce(sum(dur), 0) AS total_ns, "
	  "(SELECT group_concat(reason, ', ') FROM (SELECT DISTINCT reason FROM gap ORDER BY reason))"
	  " AS reasons FROM gap",
	  NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- cpus ------------------------------------------------------------------ */

static const struct sptd_query_section cpus_sections[] = {
	{ "cpus", "per CPU: busy, idle, irq and softirq time over the window; top 3 tasks",
	  "WITH " W_CTE ", " IDLE_CTE ", "
	  "cpus(cpu) AS (SELECT cpu FROM sched_slice UNION SELECT cpu FROM irq_slice "
	  " UNION SELECT cpu FROM softirq_slice), "
	  "st AS (SELECT s.cpu, s.utid, " CLIP("s") " AS d, "
	  " s.utid IN (SELECT utid FROM idle) AS is_idle FROM sched_slice s CROSS JOIN w), "
	  "busy AS (SELECT cpu, sum(CASE WHEN is_idle THEN 0 ELSE d END) AS busy, "
	  " sum(CASE WHEN is_idle THEN d ELSE 0 END) AS idle FROM st GROUP BY cpu), "
	  "hi AS (SELECT i.cpu, sum(" CLIP("i") ") AS t FROM irq_slice i CROSS JOIN w GROUP BY i.cpu), "
	  "si AS (SELECT i.cpu, sum(" CLIP("i") ") AS t FROM softirq_slice i CROSS JOIN w "
	  " GROUP BY i.cpu), "
	  "task AS (SELECT cpu, utid, sum(d) AS t, "
	  " row_number() OVER (PARTITION BY cpu ORDER BY sum(d) DESC, utid) AS rn "
	  " FROM st WHERE NOT is_idle GROUP BY cpu, utid), "
	  "lbl AS (SELECT task.cpu, task.rn, task.t, " TASK_LABEL("th", "task.utid") " AS label "
	  " FROM task LEFT JOIN thread th ON th.utid = task.utid WHERE task.rn <= 3) "
	  "SELECT c.cpu AS cpu, "
	  " coalesce(b.busy, 0) AS busy_ns, " PCT("coalesce(b.busy, 0)") " AS busy_pct, "
	  " coalesce(b.idle, 0) AS idle_ns, " PCT("coalesce(b.idle, 0)") " AS idle_pct, "
	  " coalesce(hi.t, 0) AS irq_ns, " PCT("coalesce(hi.t, 0)") " AS irq_pct, "
	  " coalesce(si.t, 0) AS softirq_ns, " PCT("coalesce(si.t, 0)") " AS softirq_pct, "
	  " (SELECT label FROM lbl WHERE lbl.cpu = c.cpu AND lbl.rn = 1) AS top1, "
	  " (SELECT t FROM lbl WHERE lbl.cpu = c.cpu AND lbl.rn = 1) AS top1_time_ns, "
	  " (SELECT label FROM lbl WHERE lbl.cpu = c.cpu AND lbl.rn = 2) AS top2, "
	  " (SELECT t FROM lbl WHERE lbl.cpu = c.cpu AND lbl.rn = 2) AS top2_time_ns, "
	  " (SELECT label FROM lbl WHERE lbl.cpu = c.cpu AND lbl.rn = 3) AS top3, "
	  " (SELECT t FROM lbl WHERE lbl.cpu = c.cpu AND lbl.rn = 3) AS top3_time_ns "
	  "FROM cpus c CROSS JOIN w LEFT JOIN busy b ON b.cpu = c.cpu "
	  "LEFT JOIN hi ON hi.cpu = c.cpu LEFT JOIN si ON si.cpu = c.cpu ORDER BY c.cpu",
	  NULL,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM sched_slice) OR EXISTS (SELECT 1 FROM irq_slice) "
	  "OR EXISTS (SELECT 1 FROM softirq_slice) THEN 1 "
	  "ELSE 'no scheduler or interrupt data in this incident' END" },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- top ------------------------------------------------------------------- */

static const struct sptd_query_section top_sections[] = {
	{ "samples", "hottest functions by samples (self = innermost frame, total = on the stack)",
	  NULL, build_top_samples_20, WHEN_SAMPLES },
	{ "slices", "hottest functions by PT time (self = minus callees, total = whole calls)",
	  TOP_SLICES("20"), NULL, WHEN_SLICES },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- wakeup ---------------------------------------------------------------- */

static const struct sptd_query_section wakeup_sections[] = {
	{ "wakeups", "worst wakeup-to-run latencies", WAKEUPS("20"), NULL, WHEN_WAKEUPS },
	{ "clipped", "clipped wakeups", "SELECT 1 WHERE 0", NULL, CLIPPED_NOTE },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* --include-clipped: clipped latencies ranked with the rest, marked "*". */
static const struct sptd_query_section wakeup_clipped_sections[] = {
	{ "wakeups", "worst wakeup-to-run latencies (* clipped at the window start: the true "
	  "latency is longer)", WAKEUPS_ALL("20"), NULL, WHEN_WAKEUPS },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- irq ------------------------------------------------------------------- */

/* Max and mean of the rows whose both edges were seen (flags 0; NULL in
 * files older than the flags), and how many were not: a truncated row's
 * duration is only a bound, so it ranks nothing. */
#define EXACT_MAX_AVG \
	"max(CASE WHEN coalesce(flags, 0) = 0 THEN dur END) AS max_ns, " \
	"CAST(avg(CASE WHEN coalesce(flags, 0) = 0 THEN dur END) AS INTEGER) AS avg_ns, " \
	"sum(coalesce(flags, 0) != 0) AS truncated"

static const struct sptd_query_section irq_sections[] = {
	{ "irq", "hard IRQ handlers (max and avg of the handlers seen whole; truncated: "
	  "entry or exit not seen, their time is a bound)",
	  "SELECT irq, name, count(*) AS count, sum(dur) AS total_ns, " EXACT_MAX_AVG ", "
	  "count(DISTINCT cpu) AS cpus "
	  "FROM irq_slice GROUP BY irq, name ORDER BY count DESC, total_ns DESC, irq, name",
	  NULL,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM irq_slice) THEN 1 "
	  "ELSE 'no hard IRQ events in this incident' END" },
	{ "softirq", "softirqs (max and avg of those seen whole; truncated: entry or exit "
	  "not seen)",
	  "SELECT vec, name, count(*) AS count, sum(dur) AS total_ns, " EXACT_MAX_AVG ", "
	  "count(DISTINCT cpu) AS cpus "
	  "FROM softirq_slice GROUP BY vec, name ORDER BY count DESC, total_ns DESC, vec, name",
	  NULL,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM softirq_slice) THEN 1 "
	  "ELSE 'no softirq events in this incident' END" },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- watch ----------------------------------------------------------------- */

#define META_OF(K) "(SELECT value FROM meta WHERE key = '" K "')"

/* The hit that froze a break= or watch= incident: the writer, where, and
 * what the store changed, as WITCH reports a store (silent: the value was
 * already there).  Over several incidents, one report each. */
static const struct sptd_query_section watch_sections[] = {
	{ "watch", "the breakpoint or watchpoint hit that froze this incident",
	  "SELECT t.kind AS trigger, CAST(" META_OF("trigger_tid") " AS INTEGER) AS tid, "
	  " (SELECT name FROM thread WHERE tid = CAST(" META_OF("trigger_tid") " AS INTEGER) "
	  "  ORDER BY utid DESC LIMIT 1) AS thread, "
	  " printf('0x%x', CAST(" META_OF("trigger_ip") " AS INTEGER)) AS ip, "
	  " " META_OF("trigger_function") " AS function, "
	  " CASE WHEN " META_OF("watch_addr") " IS NULL THEN NULL ELSE "
	  "  printf('0x%x', CAST(" META_OF("watch_addr") " AS INTEGER)) END AS address, "
	  " CAST(" META_OF("watch_old") " AS INTEGER) AS old_value, "
	  " CAST(" META_OF("watch_new") " AS INTEGER) AS new_value, "
	  " CASE CAST(" META_OF("watch_silent") " AS INTEGER) WHEN 1 THEN 'silent store' "
	  "  WHEN 0 THEN 'changed' END AS store, "
	  " CAST(" META_OF("watch_silent_hits") " AS INTEGER) AS silent_so_far, "
	  " CAST(" META_OF("watch_hits") " AS INTEGER) AS hits_so_far "
	  "FROM trigger t ORDER BY t.ts LIMIT 1",
	  NULL,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'trigger_tid') THEN 1 "
	  "ELSE 'not a break= or watch= incident' END" },
	{ "watch_stack", "the hit's call stack, innermost first",
	  "WITH RECURSIVE up(id, parent_id, symbol_id, addr, depth) AS ("
	  " SELECT id, parent_id, symbol_id, addr, depth FROM callsite WHERE id = "
	  "  CAST(" META_OF("trigger_callsite_id") " AS INTEGER) "
	  " UNION ALL SELECT c.id, c.parent_id, c.symbol_id, c.addr, c.depth FROM callsite c "
	  " JOIN up ON c.id = up.parent_id WHERE c.depth < up.depth) "
	  "SELECT up.depth AS depth, coalesce(s.name, '[unknown]') AS function, "
	  " coalesce(d.path, printf('0x%x', up.addr)) AS file "
	  "FROM up LEFT JOIN symbol s ON s.id = up.symbol_id LEFT JOIN dso d ON d.id = s.dso_id "
	  "ORDER BY up.depth DESC",
	  NULL,
	  "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'trigger_tid') THEN 0 "
	  "WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'trigger_callsite_id') THEN 1 "
	  "ELSE 'no stack of the hit in this incident (PT source, or a frame-less hit)' END" },
	{ "watch_hits", "every hit of the window, in time order (WITCH's view: who stored "
	  "what, and which stores changed nothing)",
	  "SELECT (h.ts - CAST(" META_OF("window_start") " AS INTEGER)) / 1000.0 AS at_us, "
	  " h.trigger AS trigger, h.tid AS tid, "
	  " (SELECT name FROM thread WHERE tid = h.tid ORDER BY utid DESC LIMIT 1) AS thread, "
	  " coalesce(h.function, printf('0x%x', h.ip)) AS function, h.old_value AS old_value, "
	  " h.new_value AS new_value, "
	  " CASE h.silent WHEN 1 THEN 'silent store' WHEN 0 THEN 'changed' END AS store "
	  "FROM watch_hit h ORDER BY h.ts, h.rowid",
	  NULL,
	  "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'trigger_tid') THEN 0 "
	  "WHEN EXISTS (SELECT 1 FROM watch_hit) THEN 1 "
	  "ELSE 'no hit rows in this incident (recorded before sysptd logged them)' END" },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- offcpu ---------------------------------------------------------------- */

#define WHEN_OFFCPU \
	"SELECT CASE WHEN EXISTS (SELECT 1 FROM thread_state WHERE callsite_id IS NOT NULL) " \
	"THEN 1 ELSE 'no off-CPU stacks in this incident (record with --offcpu)' END"

/* Row @A is no wait: the thread had exited (Z: a zombie until its parent
 * reaps it; X: dead).  Its stack is do_task_dead's, and ranking the time
 * its parent took to call wait() as the thread's own blocking misleads.
 * Idle (I) and parked (P) kernel threads do wait, for work or an unpark:
 * they stay. */
#define NOT_GONE(A) "coalesce(" A ".state, '') NOT IN ('Z', 'X')"

/* Where threads waited, as the poor man's profiler's histogram but exact:
 * blocked time (thread_state rows that began with a stack) per thread and
 * kernel function, then per thread and whole stack (outermost caller first,
 * frames joined by ';' as folded stacks are). */
static const struct sptd_query_section offcpu_sections[] = {
	{ "offcpu_functions", "blocked time per thread and kernel function it blocked in",
	  "SELECT " TASK_LABEL("th", "ts.utid") " AS thread, ts.state AS state, "
	  " coalesce(ts.blocked_function, '[unknown]') AS blocked_function, count(*) AS blocks, "
	  " sum(ts.dur) AS total_ns, max(ts.dur) AS max_ns "
	  "FROM thread_state ts LEFT JOIN thread th ON th.utid = ts.utid "
	  "WHERE ts.callsite_id IS NOT NULL AND " NOT_GONE("ts") " "
	  "GROUP BY ts.utid, ts.state, ts.blocked_function ORDER BY total_ns DESC, thread LIMIT 30",
	  NULL, WHEN_OFFCPU },
	{ "offcpu_stacks", "blocked time per thread and stack (outermost caller first)",
	  /* the 30 heaviest (thread, stack) pairs first, then only their
	   * stacks walked, 1024 frames at most ("...;" first when a walk
	   * reached that): walking every stack of the file before the LIMIT
	   * made a chain of 20,000 callsites, each a blocked row's, 200
	   * million frames (1.4 GB for a 1.8 MB file) */
	  "WITH RECURSIVE top AS (SELECT ts.utid AS utid, ts.callsite_id AS cs, "
	  " " TASK_LABEL("th", "ts.utid") " AS thread, count(*) AS blocks, sum(ts.dur) AS total_ns "
	  " FROM thread_state ts LEFT JOIN thread th ON th.utid = ts.utid "
	  " WHERE ts.callsite_id IN (SELECT id FROM callsite) AND " NOT_GONE("ts") " "
	  " GROUP BY ts.utid, ts.callsite_id ORDER BY total_ns DESC, thread LIMIT 30), "
	  "up(start, id, parent_id, symbol_id, addr, depth, k) AS ("
	  " SELECT c.id, c.id, c.parent_id, c.symbol_id, c.addr, c.depth, 0 FROM callsite c "
	  " WHERE c.id IN (SELECT cs FROM top) "
	  " UNION ALL SELECT up.start, c.id, c.parent_id, c.symbol_id, c.addr, c.depth, up.k + 1 "
	  " FROM callsite c JOIN up ON c.id = up.parent_id WHERE c.depth < up.depth "
	  " AND up.k < 1023), "
	  "stacks AS (SELECT start, CASE WHEN max(k) >= 1023 THEN '...;' ELSE '' END || "
	  " group_concat(name, ';') AS stack FROM (SELECT up.start, up.k, "
	  " coalesce(sym.name, printf('0x%x', up.addr)) AS name FROM up "
	  " LEFT JOIN symbol sym ON sym.id = up.symbol_id ORDER BY up.start, up.depth) "
	  " GROUP BY start) "
	  "SELECT top.thread AS thread, top.blocks AS blocks, top.total_ns AS total_ns, "
	  " st.stack AS stack "
	  "FROM top JOIN stacks st ON st.start = top.cs ORDER BY top.total_ns DESC, top.thread",
	  NULL, WHEN_OFFCPU },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- power ----------------------------------------------------------------- */

/* What PT said about the CPUs (cpu_freq, cpu_idle, ptwrite): frequency over
 * the window (each ratio holds until the next), time in each C-state, the
 * PTWRITE values per thread. */
static const struct sptd_query_section power_sections[] = {
	{ "power_freq", "frequency per CPU (each ratio holds until the next; time-weighted "
	  "over the window from the first one)",
	  "WITH " W_CTE ", "
	  "f AS (SELECT cpu, ts, cbr, freq_khz, lead(ts) OVER (PARTITION BY cpu ORDER BY ts, id) "
	  " AS nts FROM cpu_freq), "
	  "c AS (SELECT f.cpu, f.cbr, f.freq_khz, max(0, min(coalesce(f.nts, w.we), w.we) - "
	  " max(f.ts, w.ws)) AS d FROM f CROSS JOIN w) "
	  "SELECT cpu, count(*) AS ratios, min(cbr) AS min_cbr, max(cbr) AS max_cbr, "
	  " min(freq_khz) / 1000 AS min_mhz, max(freq_khz) / 1000 AS max_mhz, "
	  " round(sum(freq_khz * d) / nullif(sum(d), 0) / 1000.0, 1) AS avg_mhz "
	  "FROM c GROUP BY cpu ORDER BY cpu",
	  NULL,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM cpu_freq) THEN 1 ELSE 'no frequency in this "
	  "incident (it comes from Intel PT: CBR packets)' END" },
	{ "power_idle", "time in each C-state per CPU (PWRE to PWRX; clipped to the window)",
	  "WITH " W_CTE " "
	  "SELECT i.cpu AS cpu, CASE WHEN i.state IS NULL THEN '?' WHEN i.state = 0 THEN 'C0' "
	  " ELSE 'C' || i.state END AS state, count(*) AS entries, sum(" CLIP("i") ") AS total_ns, "
	  " " PCT("sum(" CLIP("i") ")") " AS pct_window, max(i.dur) AS max_ns, "
	  " sum(i.wake LIKE '%interrupt%') AS woken_by_irq, sum(i.flags != 0) AS truncated "
	  "FROM cpu_idle i CROSS JOIN w GROUP BY i.cpu, i.state ORDER BY i.cpu, total_ns DESC",
	  NULL,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM cpu_idle) THEN 1 ELSE 'no C-states in this "
	  "incident (record Intel PT with --power on a CPU with power event trace)' END" },
	{ "ptwrite", "PTWRITE values per thread",
	  "SELECT " TASK_LABEL("th", "p.utid") " AS thread, count(*) AS writes, "
	  " printf('0x%x', (SELECT payload FROM ptwrite q WHERE q.utid IS p.utid ORDER BY ts, id "
	  "  LIMIT 1)) AS first, "
	  " printf('0x%x', (SELECT payload FROM ptwrite q WHERE q.utid IS p.utid ORDER BY ts DESC, "
	  "  id DESC LIMIT 1)) AS last "
	  "FROM ptwrite p LEFT JOIN thread th ON th.utid = p.utid GROUP BY p.utid "
	  "ORDER BY writes DESC, thread",
	  NULL,
	  "SELECT CASE WHEN EXISTS (SELECT 1 FROM ptwrite) THEN 1 ELSE 'no PTWRITE values in this "
	  "incident (record Intel PT with --power on a CPU with PTWRITE)' END" },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- threads --------------------------------------------------------------- */

/* Every thread with its CPU time; WHERE (a condition on th.utid, with the
 * window w and act(utid) at hand) picks which. */
#define THREADS_SQL(WHERE) \
	"WITH " W_CTE ", " ACTIVE_CTE ", " \
	"per AS (SELECT s.utid, sum(" CLIP("s") ") AS cpu_ns, count(*) AS slices " \
	" FROM sched_slice s CROSS JOIN w GROUP BY s.utid) " \
	"SELECT th.utid AS utid, th.tid AS tid, th.name AS thread, p.pid AS pid, " \
	" p.name AS process, coalesce(per.cpu_ns, 0) AS cpu_ns, coalesce(per.slices, 0) AS slices " \
	"FROM thread th LEFT JOIN process p ON p.upid = th.upid " \
	"LEFT JOIN per ON per.utid = th.utid WHERE " WHERE " ORDER BY cpu_ns DESC, th.utid"

/* act(utid): the threads that did something in the window: ran (a sched
 * or call slice: both are cut to it), changed state in it (a thread_state
 * row with an edge inside: woken, blocked, preempted, exited), woke
 * another, were sampled, or hit a recorded tracepoint.  A thread asleep
 * from before the window to after it, or only listed by /proc at the
 * capture, did nothing (a 20 ms window of a busy host names ~900). */
#define ACTIVE_CTE \
	"act(utid) AS (SELECT utid FROM sched_slice " \
	"UNION SELECT s.utid FROM thread_state s CROSS JOIN w " \
	" WHERE s.ts > w.ws OR s.ts + s.dur < w.we " \
	"UNION SELECT waker_utid FROM thread_state WHERE waker_utid IS NOT NULL " \
	"UNION SELECT utid FROM sample UNION SELECT utid FROM slice " \
	"UNION SELECT utid FROM ftrace_event WHERE utid IS NOT NULL)"

#define WHEN_THREADS \
	"SELECT CASE WHEN EXISTS (SELECT 1 FROM thread) THEN 1 " \
	"ELSE 'no threads in this incident' END"

static const struct sptd_query_section threads_sections[] = {
	{ "threads", "threads that did something in the window (ran, woke or were woken, "
	  "changed state, were sampled; --all-tasks: every one): CPU time and sched slices",
	  THREADS_SQL("th.utid IN (SELECT utid FROM act)"), NULL, WHEN_THREADS },
	{ NULL, NULL, NULL, NULL, NULL },
};

static const struct sptd_query_section threads_all_sections[] = {
	{ "threads", "every thread the incident names: CPU time in the window and sched slices",
	  THREADS_SQL("1"), NULL, WHEN_THREADS },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* ---- the report table ------------------------------------------------------ */

const struct sptd_query_report_def sptd_query_reports[] = {
	{ "summary", "what happened: meta, table sizes, trigger, top tasks/functions, "
	  "worst wakeup, gaps", summary_sections, NULL, NULL },
	{ "cpus", "per CPU busy/idle/irq/softirq time and top 3 tasks", cpus_sections, NULL, NULL },
	{ "top", "hottest functions: samples self/total, PT self/total time", top_sections, NULL,
	  NULL },
	{ "wakeup", "worst wakeup-to-run latencies with their wakers (clipped ones only "
	  "with --include-clipped)", wakeup_sections, wakeup_clipped_sections, NULL },
	{ "irq", "hard IRQ and softirq handlers: count, total, max time", irq_sections, NULL, NULL },
	{ "threads", "the threads that did something in the window (--all-tasks: every one) "
	  "with their process, CPU time and slices", threads_sections, NULL,
	  threads_all_sections },
	{ "offcpu", "where threads waited (--offcpu): blocked time per kernel function and "
	  "per stack", offcpu_sections, NULL, NULL },
	{ "watch", "the break=/watch= hit: writer, function, value before and after, silent "
	  "stores", watch_sections, NULL, NULL },
	{ "power", "what Intel PT said of the CPUs: frequency, C-states, PTWRITE values",
	  power_sections, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

const char *const sptd_query_report_name_list[] = {
	"summary", "cpus", "top", "wakeup", "irq", "threads", "offcpu", "watch", "power", NULL,
};
