/* store_flame.c — the readers behind `sysptd flamegraph` and `sysptd diff`
 * that the views of store_tables.c do not cover: PT call slices
 * in nesting order, and the per-name aggregates a diff compares (CPU time
 * per thread name, IRQ and softirq time, wakeup latency).
 *
 * Each reader prepares its statement on the call (they run once per
 * command, so no cached statement) and hands typed rows to a callback;
 * a non-zero callback result stops the walk and is returned. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"
#include "sptd_store_flame.h"

/* Run @sql on @st, handing each row to @row(s, @arg). */
static int flame_read(struct sptd_store *st, const char *sql, const char *what,
                      int (*row)(sqlite3_stmt *s, void *arg), void *arg)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (!st || !st->db)
		return -EINVAL;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sptd_store_fail_sqlite(st, rc, what);
	sptd_store_guard_statement_start(st);
	/* owned: finalized by named_each */
	return sptd_store_named_each(st, s, 1, what, row, arg);
}

/* Column @col as an id where NULL is -1. */
static int64_t opt_id(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, col);
}

/* ---- PT call slices --------------------------------------------------------------- */

struct slice_ctx {
	int (*fn)(void *ctx, const struct sptd_store_slice_nest_row *row);
	void *ctx;
};

static int slice_row(sqlite3_stmt *s, void *arg)
{
	const struct slice_ctx *c = arg;
	struct sptd_store_slice_nest_row r = {
		.id = sqlite3_column_int64(s, 0),
		.ts = sqlite3_column_int64(s, 1),
		.dur = sqlite3_column_int64(s, 2),
		.cpu = sqlite3_column_type(s, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 3),
		.utid = opt_id(s, 4),
		.has_parent = sqlite3_column_type(s, 5) != SQLITE_NULL,
		.parent_id = sqlite3_column_int64(s, 5),
		.symbol_id = opt_id(s, 6),
		.name = (const char *)sqlite3_column_text(s, 7),
		.dso_id = opt_id(s, 8),
	};

	return c->fn(c->ctx, &r);
}

int sptd_store_slice_nest_each(struct sptd_store *st,
                               int (*fn)(void *ctx, const struct sptd_store_slice_nest_row *row),
                               void *ctx)
{
	struct slice_ctx c = { fn, ctx };

	if (!fn)
		return -EINVAL;
	return flame_read(st, "SELECT s.id, s.ts, s.dur, s.cpu, s.utid, s.parent_id, s.symbol_id, "
	                   "y.name, y.dso_id FROM slice s LEFT JOIN symbol y ON y.id = s.symbol_id "
	                   "ORDER BY s.utid, s.ts, s.depth, s.id",
	                   "reading slice", slice_row, &c);
}

/* ---- per-name aggregates (diff) ---------------------------------------------------- */

/* Each kind's statement: key, count, total ns (float: a forged dur cannot
 * overflow it), max ns. */
static const char *const agg_sql[] = {
	[SPTD_STORE_AGG_THREAD_CPU] =
		"SELECT coalesce(t.name, '[tid ' || t.tid || ']'), count(DISTINCT s.utid), "
		"total(s.dur), max(s.dur) FROM sched_slice s JOIN thread t ON t.utid = s.utid "
		"WHERE t.tid != 0 GROUP BY 1",
	[SPTD_STORE_AGG_IRQ] =
		"SELECT 'irq ' || irq || ' ' || coalesce(name, ''), count(*), total(dur), max(dur) "
		"FROM irq_slice GROUP BY irq, name UNION ALL "
		"SELECT 'softirq ' || coalesce(name, vec), count(*), total(dur), max(dur) "
		"FROM softirq_slice GROUP BY 1",
	/* a runnable row a wakeup opened (a waker, or interrupt context:
	 * flags 32/64), followed by Running, not clipped at the window start
	 * (flags 1): report_sql.c's wakeup ranking */
	[SPTD_STORE_AGG_WAKEUP] =
		"WITH seq AS (SELECT t.*, lead(state) OVER (PARTITION BY utid ORDER BY ts, id) AS nst,"
		" lead(ts) OVER (PARTITION BY utid ORDER BY ts, id) AS nts FROM thread_state t) "
		"SELECT coalesce(th.name, '[tid ' || th.tid || ']'), count(*), total(r.nts - r.ts), "
		"max(r.nts - r.ts) FROM seq r LEFT JOIN thread th ON th.utid = r.utid "
		"WHERE r.state = 'R' AND (r.waker_utid IS NOT NULL OR coalesce(r.flags, 0) & 96) "
		"AND r.nst = 'Running' AND coalesce(r.flags, 0) & 1 = 0 GROUP BY 1",
};

struct agg_ctx {
	int (*fn)(void *ctx, const struct sptd_store_agg_row *row);
	void *ctx;
};

static int agg_row(sqlite3_stmt *s, void *arg)
{
	const struct agg_ctx *c = arg;
	struct sptd_store_agg_row r = {
		.key = (const char *)sqlite3_column_text(s, 0),
		.count = sqlite3_column_int64(s, 1),
		.total_ns = sqlite3_column_double(s, 2),
		.max_ns = sqlite3_column_int64(s, 3),
	};

	return c->fn(c->ctx, &r);
}

int sptd_store_agg_each(struct sptd_store *st, enum sptd_store_agg kind,
                        int (*fn)(void *ctx, const struct sptd_store_agg_row *row), void *ctx)
{
	struct agg_ctx c = { fn, ctx };

	if (!fn || (unsigned)kind >= sizeof(agg_sql) / sizeof(agg_sql[0]))
		return -EINVAL;
	return flame_read(st, agg_sql[kind], "reading aggregates", agg_row, &c);
}
