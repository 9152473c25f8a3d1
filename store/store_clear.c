/* store_clear.c — deleting rows: the ones one producer wrote into a table
 * that several fill (gap reasons tagged "pt: ", "sideband: "; the stats a
 * decoder counts), so that producer can run again without touching the
 * others' rows; whole derived tables (sysptd decode); the rows of processes
 * not asked for (-p). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* @prefix as a LIKE pattern matching what starts with it: its own %, _ and
 * \ escaped with \, then %.  Freed by the caller; NULL out of memory. */
static char *prefix_pattern(const char *prefix)
{
	size_t n = strlen(prefix);
	char *pat = malloc(2 * n + 2), *p = pat;

	if (!pat)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (prefix[i] == '%' || prefix[i] == '_' || prefix[i] == '\\')
			*p++ = '\\';
		*p++ = prefix[i];
	}
	*p++ = '%';
	*p = '\0';
	return pat;
}

int sptd_store_gap_clear(struct sptd_store *st, const char *prefix)
{
	static const char what[] = "deleting gap rows";
	sqlite3_stmt *s;
	char *pattern;
	int owned, ret, rc;

	SPTD_STORE_REQUIRE(st, prefix && *prefix, what, "prefix is NULL or empty");
	ret = sptd_store_writable_check(st, what);
	if (ret < 0)
		return ret;
	pattern = prefix_pattern(prefix);
	if (!pattern)
		return sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
	s = sptd_store_named_get(st, SPTD_STORE_Q_GAP_CLEAR,
	                         "DELETE FROM gap WHERE reason LIKE ?1 ESCAPE '\\'", what,
	                         &owned, &ret);
	if (s) {
		sqlite3_bind_text(s, 1, pattern, -1, SQLITE_STATIC);
		rc = sqlite3_step(s);
		ret = rc == SQLITE_DONE ? sqlite3_changes(st->db) : sptd_store_fail_sqlite(st, rc, what);
		sptd_store_named_done(s, owned);
	}
	free(pattern);
	return ret;
}

int sptd_store_stats_clear(struct sptd_store *st, const char *const *names, size_t n)
{
	static const char what[] = "deleting stats rows";
	sqlite3_stmt *s;
	int owned, ret, deleted = 0;

	SPTD_STORE_REQUIRE(st, names || !n, what, "names is NULL");
	for (size_t i = 0; i < n; i++)
		SPTD_STORE_REQUIRE(st, names[i], what, "a name is NULL");
	ret = sptd_store_writable_check(st, what);
	if (ret < 0 || !n)
		return ret;
	s = sptd_store_named_get(st, SPTD_STORE_Q_STATS_CLEAR,
	                         "DELETE FROM stats WHERE name = ?1", what, &owned, &ret);
	if (!s)
		return ret;
	for (size_t i = 0; i < n && ret >= 0; i++) {
		int rc;

		sptd_store_bind_str(s, 1, names[i]);
		rc = sqlite3_step(s);
		if (rc == SQLITE_DONE)
			deleted += sqlite3_changes(st->db);
		else
			ret = sptd_store_fail_sqlite(st, rc, what);
		sqlite3_reset(s);
	}
	sptd_store_named_done(s, owned);
	return ret < 0 ? ret : deleted;
}

int sptd_store_thread_state_block(struct sptd_store *st, int64_t utid, int64_t at, int64_t from,
                                  int64_t to, int64_t callsite_id, int64_t blocked_symbol_id)
{
	static const char what[] = "linking an off-CPU stack to thread_state";
	sqlite3_stmt *s;
	int owned, ret, rc;

	ret = sptd_store_writable_check(st, what);
	if (ret < 0)
		return ret;
	/* decode drops the index while it refills thread_state: the lookup
	 * needs it back (commit would create it anyway), once per refill */
	if (!st->block_index) {
		ret = sptd_store_exec(st, "CREATE INDEX IF NOT EXISTS \"thread_state_utid_ts\" ON "
		                      "\"thread_state\" (utid, ts)", what);
		if (ret < 0)
			return ret;
		st->block_index = 1;
	}
	/* the row this switch began is the one of the thread starting nearest
	 * to it: a preemption begins a runnable row (no stack wanted there),
	 * a block a sleeping one */
	s = sptd_store_named_get(st, SPTD_STORE_Q_THREAD_STATE_BLOCK,
	                         "UPDATE thread_state SET callsite_id = ?4, blocked_function = "
	                         "(SELECT name FROM symbol WHERE id = ?5) "
	                         "WHERE id = (SELECT id FROM thread_state WHERE utid = ?1 AND ts "
	                         "BETWEEN ?2 AND ?3 ORDER BY abs(ts - ?6), ts LIMIT 1) "
	                         "AND state NOT IN ('R', 'R+', 'Running') AND callsite_id IS NULL",
	                         what, &owned, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, utid);
	sqlite3_bind_int64(s, 2, from);
	sqlite3_bind_int64(s, 3, to);
	sqlite3_bind_int64(s, 6, at);
	if (callsite_id >= 0)
		sqlite3_bind_int64(s, 4, callsite_id);
	else
		sqlite3_bind_null(s, 4);
	if (blocked_symbol_id >= 0)
		sqlite3_bind_int64(s, 5, blocked_symbol_id);
	else
		sqlite3_bind_null(s, 5);
	rc = sqlite3_step(s);
	ret = rc == SQLITE_DONE ? sqlite3_changes(st->db) : sptd_store_fail_sqlite(st, rc, what);
	sptd_store_named_done(s, owned);
	return ret;
}

int sptd_store_table_clear(struct sptd_store *st, const char *table)
{
	char sql[160];
	int id, ret;

	ret = sptd_store_writable_check(st, "clearing a table");
	if (ret < 0)
		return ret;
	id = sptd_store_table_find(table);
	/* kept rows are the table's too: cleared with it */
	if (id == SPTD_STORE_T_SLICE)
		sptd_store_bulk_release(st);
	if (id < 0 || !sptd_store_table_defs[id].clearable)
		return sptd_store_fail(st, -EINVAL,
		                       "cannot clear table '%s': only derived tables (process, "
		                       "thread, sched_slice, thread_state, irq_slice, "
		                       "softirq_slice, slice, sample, callsite, gap, stats, "
		                       "ftrace_event, cpu_freq, cpu_idle, ptwrite, mem_sample) "
		                       "are rebuilt", table ? table : "(null)");
	ret = sptd_store_schema_drop_indexes(st, id);
	if (ret < 0)
		return ret;
	snprintf(sql, sizeof(sql), "DELETE FROM \"%s\"", table);
	return sptd_store_exec(st, sql, "clearing a table");
}

/* Keep only the kept slice rows of the threads @utids_sql selects (the
 * same rows the DELETE below keeps in the table). */
static int keep_kept(struct sptd_store *st, const char *utids_sql)
{
	static const char what[] = "keeping only some processes";
	sqlite3_stmt *q = NULL;
	int64_t *utids = NULL;
	size_t n = 0, cap = 0;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(st->db, utids_sql, -1, &q, NULL);
	if (rc == SQLITE_OK)
		rc = SQLITE_ROW;
	while (rc == SQLITE_ROW && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (n == cap) {
			int64_t *p = realloc(utids, (cap = cap ? 2 * cap : 64) * sizeof(*utids));

			if (!p) {
				ret = sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
				break;
			}
			utids = p;
		}
		utids[n++] = sqlite3_column_int64(q, 0);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sptd_store_fail_sqlite(st, rc, what);
	sqlite3_finalize(q);
	if (!ret)
		sptd_store_bulk_keep_utids(st, utids, n);
	free(utids);
	return ret;
}

int sptd_store_keep_pids(struct sptd_store *st, const int *pids, int n)
{
	static const char *const tables[] = { "slice", "sample" };
	char in[256 * 12], utids[256 * 12 + 96], sql[256 * 12 + 192];
	size_t off = 0;
	int ret = sptd_store_writable_check(st, "keeping only some processes");

	if (ret < 0)
		return ret;
	if (!pids || n <= 0 || n > 256)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (pids[i] <= 0)
			return -EINVAL;
		off += (size_t)snprintf(in + off, sizeof(in) - off, "%s%d", i ? "," : "", pids[i]);
	}
	snprintf(utids, sizeof(utids), "SELECT t.utid FROM thread t JOIN process p USING (upid) "
	         "WHERE p.pid IN (%s)", in);
	/* the slice rows kept for the commit are filtered in memory */
	if (st->nbulk) {
		ret = keep_kept(st, utids);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]) && ret >= 0; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE utid IS NULL OR utid NOT IN (%s)",
		         tables[i], utids);
		ret = sptd_store_exec(st, sql, "keeping only some processes");
	}
	return ret;
}

int sptd_store_derived_clear(struct sptd_store *st)
{
	int ret = sptd_store_writable_check(st, "clearing the derived tables");

	for (int i = 0; i < SPTD_STORE_T_COUNT && ret >= 0; i++)
		if (sptd_store_table_defs[i].clearable)
			ret = sptd_store_table_clear(st, sptd_store_table_defs[i].name);
	return ret;
}
