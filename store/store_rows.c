/* store_rows.c — writing rows: one cached INSERT per table, bound and
 * stepped per row (no SQL text per row), the derived tables' add
 * functions, and the bulk path of the biggest one (slices: a cached
 * INSERT of many rows per statement, one step per 64 rows). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* The cached INSERT of @table, prepared on first use; NULL after a failure
 * (recorded on @st, returned through @ret). */
sqlite3_stmt *sptd_store_row_begin(struct sptd_store *st, int table, const char *what,
                                   int *ret)
{
	const struct sptd_store_table_def *t = &sptd_store_table_defs[table];
	char sql[256];
	size_t n;
	int rc;

	*ret = sptd_store_writable_check(st, what);
	if (*ret < 0)
		return NULL;
	if (st->insert[table])
		return st->insert[table];
	n = (size_t)snprintf(sql, sizeof(sql), "INSERT %sINTO \"%s\" VALUES (?",
	                     t->replace ? "OR REPLACE " : "", t->name);
	for (int i = 1; i < t->ncols && n + 3 < sizeof(sql); i++, n += 2)
		memcpy(sql + n, ",?", 3);
	snprintf(sql + n, sizeof(sql) - n, ")");
	rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	                        &st->insert[table], NULL);
	if (rc != SQLITE_OK) {
		*ret = sptd_store_fail_sqlite(st, rc, what);
		return NULL;
	}
	return st->insert[table];
}

/* Step the bound INSERT and make it ready for the next row. */
int sptd_store_row_end(struct sptd_store *st, sqlite3_stmt *ins, const char *what)
{
	int rc = sqlite3_step(ins);

	sqlite3_reset(ins);
	return rc == SQLITE_DONE ? 0 : sptd_store_fail_sqlite(st, rc, what);
}

/* Bind @v, or NULL where @v < 0 means "unknown". */
void sptd_store_bind_opt(sqlite3_stmt *s, int idx, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(s, idx);
	else
		sqlite3_bind_int64(s, idx, v);
}

/* Bind a string (copied by step: SQLITE_STATIC suffices), NULL for NULL. */
void sptd_store_bind_str(sqlite3_stmt *s, int idx, const char *v)
{
	if (v)
		sqlite3_bind_text(s, idx, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, idx);
}

/* Bind bytes; an empty blob is stored as a zero-length BLOB, not NULL. */
int sptd_store_bind_bytes(struct sptd_store *st, sqlite3_stmt *s, int idx,
                          const void *data, size_t len, const char *what)
{
	int rc = len ? sqlite3_bind_blob64(s, idx, data, len, SQLITE_STATIC)
	             : sqlite3_bind_zeroblob(s, idx, 0);

	if (rc == SQLITE_TOOBIG)
		return sptd_store_fail(st, -EINVAL, "%s: %zu bytes is more than one row "
		                       "can hold", what, len);
	return rc == SQLITE_OK ? 0 : sptd_store_fail_sqlite(st, rc, what);
}

/* --- derived tables ------------------------------------------------------ */

int sptd_store_trigger_add(struct sptd_store *st, int64_t ts, int cpu,
                           const char *kind, const char *detail)
{
	static const char what[] = "adding a trigger row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, kind && *kind, what, "kind is NULL or empty");
	s = sptd_store_row_begin(st, SPTD_STORE_T_TRIGGER, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sptd_store_bind_opt(s, 3, cpu);
	sptd_store_bind_str(s, 4, kind);
	sptd_store_bind_str(s, 5, detail);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_process_add(struct sptd_store *st, int64_t upid, int pid,
                           const char *name, const char *cmdline)
{
	static const char what[] = "adding a process row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, upid >= 0, what, "upid is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_PROCESS, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, upid);
	sqlite3_bind_int(s, 2, pid);
	sptd_store_bind_str(s, 3, name);
	sptd_store_bind_str(s, 4, cmdline);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_thread_add(struct sptd_store *st, int64_t utid, int tid,
                          int64_t upid, const char *name)
{
	static const char what[] = "adding a thread row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, utid >= 0, what, "utid is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_THREAD, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, utid);
	sqlite3_bind_int(s, 2, tid);
	sptd_store_bind_opt(s, 3, upid);
	sptd_store_bind_str(s, 4, name);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_sched_slice_add(struct sptd_store *st, int64_t ts, int64_t dur,
                               int cpu, int64_t utid, const char *end_state,
                               int priority)
{
	return sptd_store_sched_slice_add_flags(st, ts, dur, cpu, utid, end_state, priority, 0);
}

int sptd_store_sched_slice_add_flags(struct sptd_store *st, int64_t ts, int64_t dur,
                                     int cpu, int64_t utid, const char *end_state,
                                     int priority, int flags)
{
	static const char what[] = "adding a sched_slice row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, dur >= 0 && cpu >= 0, what, "dur or cpu is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_SCHED_SLICE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int64(s, 3, dur);
	sqlite3_bind_int(s, 4, cpu);
	sqlite3_bind_int64(s, 5, utid);
	sptd_store_bind_str(s, 6, end_state);
	if (priority >= 0)
		sqlite3_bind_int(s, 7, priority);
	else
		sqlite3_bind_null(s, 7);   /* no event gave it */
	sqlite3_bind_int(s, 8, flags);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_thread_state_add(struct sptd_store *st, int64_t ts, int64_t dur,
                                int64_t utid, const char *state, int cpu,
                                int64_t waker_utid)
{
	return sptd_store_thread_state_add_flags(st, ts, dur, utid, state, cpu, waker_utid, 0);
}

int sptd_store_thread_state_add_flags(struct sptd_store *st, int64_t ts, int64_t dur,
                                      int64_t utid, const char *state, int cpu,
                                      int64_t waker_utid, int flags)
{
	static const char what[] = "adding a thread_state row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, dur >= 0, what, "dur is negative");
	SPTD_STORE_REQUIRE(st, state && *state, what, "state is NULL or empty");
	s = sptd_store_row_begin(st, SPTD_STORE_T_THREAD_STATE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int64(s, 3, dur);
	sqlite3_bind_int64(s, 4, utid);
	sptd_store_bind_str(s, 5, state);
	sptd_store_bind_opt(s, 6, cpu);
	sptd_store_bind_opt(s, 7, waker_utid);
	sqlite3_bind_int(s, 8, flags);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_irq_slice_add(struct sptd_store *st, int64_t ts, int64_t dur,
                             int cpu, int irq, const char *name, int ret_value)
{
	return sptd_store_irq_slice_add_flags(st, ts, dur, cpu, irq, name, ret_value, 0);
}

int sptd_store_irq_slice_add_flags(struct sptd_store *st, int64_t ts, int64_t dur,
                                   int cpu, int irq, const char *name, int ret_value,
                                   int flags)
{
	static const char what[] = "adding an irq_slice row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, dur >= 0 && cpu >= 0, what, "dur or cpu is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_IRQ_SLICE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int64(s, 3, dur);
	sqlite3_bind_int(s, 4, cpu);
	sqlite3_bind_int(s, 5, irq);
	sptd_store_bind_str(s, 6, name);
	sqlite3_bind_int(s, 7, ret_value);
	sqlite3_bind_int(s, 8, flags);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_softirq_slice_add(struct sptd_store *st, int64_t ts, int64_t dur,
                                 int cpu, int vec, const char *name)
{
	return sptd_store_softirq_slice_add_flags(st, ts, dur, cpu, vec, name, 0);
}

int sptd_store_softirq_slice_add_flags(struct sptd_store *st, int64_t ts, int64_t dur,
                                       int cpu, int vec, const char *name, int flags)
{
	static const char what[] = "adding a softirq_slice row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, dur >= 0 && cpu >= 0, what, "dur or cpu is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_SOFTIRQ_SLICE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int64(s, 3, dur);
	sqlite3_bind_int(s, 4, cpu);
	sqlite3_bind_int(s, 5, vec);
	sptd_store_bind_str(s, 6, name);
	sqlite3_bind_int(s, 7, flags);
	return sptd_store_row_end(st, s, what);
}

/* Is @kind one of the SPTD_SLICE_* kinds? */
static int slice_kind_ok(const char *kind)
{
	return kind && (strcmp(kind, SPTD_SLICE_USER) == 0 ||
	                strcmp(kind, SPTD_SLICE_KERNEL) == 0 ||
	                strcmp(kind, SPTD_SLICE_SYSCALL) == 0 ||
	                strcmp(kind, SPTD_SLICE_IRQ) == 0);
}

int sptd_store_slice_add(struct sptd_store *st, int64_t id, int64_t ts, int64_t dur,
                         int cpu, int64_t utid, int depth, int64_t parent_id,
                         int64_t symbol_id, const char *kind, int flags)
{
	static const char what[] = "adding a slice row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, id >= 0 && dur >= 0 && depth >= 0, what, "id, dur or depth is negative");
	SPTD_STORE_REQUIRE(st, slice_kind_ok(kind), what,
	                   "kind is not one of user, kernel, syscall, irq");
	s = sptd_store_row_begin(st, SPTD_STORE_T_SLICE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int64(s, 3, dur);
	sqlite3_bind_int(s, 4, cpu);
	sqlite3_bind_int64(s, 5, utid);
	sqlite3_bind_int(s, 6, depth);
	sptd_store_bind_opt(s, 7, parent_id);
	sptd_store_bind_opt(s, 8, symbol_id);
	sptd_store_bind_str(s, 9, kind);
	sqlite3_bind_int(s, 10, flags);
	return sptd_store_row_end(st, s, what);
}

/* Bind slice row @r at parameters @idx .. @idx + 9. */
static void bind_slice(sqlite3_stmt *s, int idx, const struct sptd_store_slice_row *r)
{
	sqlite3_bind_int64(s, idx, r->id);
	sqlite3_bind_int64(s, idx + 1, r->ts);
	sqlite3_bind_int64(s, idx + 2, r->dur);
	sqlite3_bind_int(s, idx + 3, r->cpu);
	sqlite3_bind_int64(s, idx + 4, r->utid);
	sqlite3_bind_int(s, idx + 5, r->depth);
	sptd_store_bind_opt(s, idx + 6, r->parent_id);
	sptd_store_bind_opt(s, idx + 7, r->symbol_id);
	sptd_store_bind_str(s, idx + 8, r->kind);
	sqlite3_bind_int(s, idx + 9, r->flags);
}

/* The cached INSERT of SPTD_STORE_BULK_ROWS slice rows; NULL after a
 * failure (recorded, returned through @ret). */
static sqlite3_stmt *slice_bulk_stmt(struct sptd_store *st, const char *what, int *ret)
{
	const char one[] = ",(?,?,?,?,?,?,?,?,?,?)";
	char sql[64 + SPTD_STORE_BULK_ROWS * sizeof(one)];
	size_t n;
	int rc, i;

	*ret = 0;
	if (st->slice_bulk)
		return st->slice_bulk;
	n = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO \"%s\" VALUES %s",
	                     sptd_store_table_defs[SPTD_STORE_T_SLICE].name, one + 1);
	for (i = 1; i < SPTD_STORE_BULK_ROWS; i++, n += sizeof(one) - 1)
		memcpy(sql + n, one, sizeof(one));
	rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->slice_bulk, NULL);
	if (rc != SQLITE_OK) {
		st->slice_bulk = NULL;
		*ret = sptd_store_fail_sqlite(st, rc, what);
	}
	return st->slice_bulk;
}

int sptd_store_slices_sql(struct sptd_store *st, const struct sptd_store_slice_row *rows,
                          size_t n)
{
	static const char what[] = "adding slice rows";
	sqlite3_stmt *bulk = NULL, *one = NULL;
	size_t i = 0, k;
	int ret = 0;

	if (n >= SPTD_STORE_BULK_ROWS) {
		bulk = slice_bulk_stmt(st, what, &ret);
		if (!bulk)
			return ret;
	}
	for (; bulk && n - i >= SPTD_STORE_BULK_ROWS && ret >= 0; i += SPTD_STORE_BULK_ROWS) {
		for (k = 0; k < SPTD_STORE_BULK_ROWS; k++)
			bind_slice(bulk, 1 + 10 * (int)k, &rows[i + k]);
		ret = sptd_store_row_end(st, bulk, what);
	}
	if (i < n && ret >= 0) {
		one = sptd_store_row_begin(st, SPTD_STORE_T_SLICE, what, &ret);
		for (; one && i < n && ret >= 0; i++) {
			bind_slice(one, 1, &rows[i]);
			ret = sptd_store_row_end(st, one, what);
		}
	}
	return ret < 0 ? ret : 0;
}

int sptd_store_dso_add(struct sptd_store *st, int64_t id, const char *path,
                       const char *build_id)
{
	static const char what[] = "adding a dso row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, id >= 0, what, "id is negative");
	SPTD_STORE_REQUIRE(st, path && *path, what, "path is NULL or empty");
	s = sptd_store_row_begin(st, SPTD_STORE_T_DSO, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, id);
	sptd_store_bind_str(s, 2, path);
	sptd_store_bind_str(s, 3, build_id);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_symbol_add(struct sptd_store *st, int64_t id, const char *name,
                          int64_t dso_id, uint64_t addr, uint64_t size)
{
	static const char what[] = "adding a symbol row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, id >= 0, what, "id is negative");
	SPTD_STORE_REQUIRE(st, name && *name, what, "name is NULL or empty");
	s = sptd_store_row_begin(st, SPTD_STORE_T_SYMBOL, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, id);
	sptd_store_bind_str(s, 2, name);
	sqlite3_bind_int64(s, 3, dso_id);
	sqlite3_bind_int64(s, 4, (int64_t)addr);
	sqlite3_bind_int64(s, 5, (int64_t)size);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_ftrace_event_add(struct sptd_store *st, int64_t ts, int cpu, int64_t utid,
                                const char *name, const char *args)
{
	static const char what[] = "adding an ftrace_event row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, cpu >= 0, what, "cpu is negative");
	SPTD_STORE_REQUIRE(st, name && *name, what, "no event name");
	s = sptd_store_row_begin(st, SPTD_STORE_T_FTRACE_EVENT, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int(s, 3, cpu);
	sptd_store_bind_opt(s, 4, utid);
	sqlite3_bind_text(s, 5, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 6, args ? args : "{}", -1, SQLITE_TRANSIENT);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_cpu_freq_add(struct sptd_store *st, int64_t ts, int cpu, int cbr,
                            int64_t freq_khz)
{
	static const char what[] = "adding a cpu_freq row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, cpu >= 0 && cbr >= 0, what, "cpu or ratio is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_CPU_FREQ, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int(s, 3, cpu);
	sqlite3_bind_int(s, 4, cbr);
	sptd_store_bind_opt(s, 5, freq_khz);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_cpu_idle_add(struct sptd_store *st, const struct sptd_store_cpu_idle_row *r)
{
	static const char what[] = "adding a cpu_idle row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, r && r->cpu >= 0 && r->dur >= 0, what, "cpu or dur is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_CPU_IDLE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, r->ts);
	sqlite3_bind_int64(s, 3, r->dur);
	sqlite3_bind_int(s, 4, r->cpu);
	sptd_store_bind_opt(s, 5, r->state);
	sptd_store_bind_opt(s, 6, r->sub_state);
	sptd_store_bind_opt(s, 7, r->requested);
	sptd_store_bind_opt(s, 8, r->requested_sub);
	sptd_store_bind_opt(s, 9, r->last);
	sptd_store_bind_opt(s, 10, r->deepest);
	sptd_store_bind_str(s, 11, r->wake);
	sqlite3_bind_int(s, 12, r->hw);
	sqlite3_bind_int(s, 13, r->flags);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_ptwrite_add(struct sptd_store *st, int64_t ts, int cpu, int64_t utid,
                           uint64_t ip, uint64_t payload, int size)
{
	static const char what[] = "adding a ptwrite row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, cpu >= 0 && size >= 0, what, "cpu or size is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_PTWRITE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int(s, 3, cpu);
	sptd_store_bind_opt(s, 4, utid);
	if (ip)
		sqlite3_bind_int64(s, 5, (int64_t)ip);
	else
		sqlite3_bind_null(s, 5);
	sqlite3_bind_int64(s, 6, (int64_t)payload);
	sqlite3_bind_int(s, 7, size);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_watch_hit_add(struct sptd_store *st, const struct sptd_store_watch_hit_row *r)
{
	static const char what[] = "adding a watch_hit row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, r && r->cpu >= 0, what, "cpu is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_WATCH_HIT, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, r->ts);
	sqlite3_bind_int(s, 2, r->cpu);
	sqlite3_bind_int(s, 3, r->tid);
	sqlite3_bind_int64(s, 4, (int64_t)r->ip);
	sptd_store_bind_str(s, 5, r->function && r->function[0] ? r->function : NULL);
	if (r->watch && r->silent >= 0) {
		sqlite3_bind_int64(s, 6, (int64_t)r->old_value);
		sqlite3_bind_int64(s, 7, (int64_t)r->new_value);
		sqlite3_bind_int(s, 8, r->silent);
	} else {
		sqlite3_bind_null(s, 6);
		sqlite3_bind_null(s, 7);
		sqlite3_bind_null(s, 8);
	}
	sptd_store_bind_str(s, 9, r->trigger ? r->trigger : "");
	return sptd_store_row_end(st, s, what);
}

int sptd_store_sample_add(struct sptd_store *st, int64_t ts, int cpu,
                          int64_t utid, int64_t callsite_id)
{
	static const char what[] = "adding a sample row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, cpu >= 0, what, "cpu is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_SAMPLE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int(s, 3, cpu);
	sptd_store_bind_opt(s, 4, utid);
	sptd_store_bind_opt(s, 5, callsite_id);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_callsite_add(struct sptd_store *st, int64_t id, int64_t parent_id,
                            int depth, int64_t symbol_id, uint64_t addr)
{
	static const char what[] = "adding a callsite row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, id >= 0 && depth >= 0, what, "id or depth is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_CALLSITE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, id);
	sptd_store_bind_opt(s, 2, parent_id);
	sqlite3_bind_int(s, 3, depth);
	sptd_store_bind_opt(s, 4, symbol_id);
	sqlite3_bind_int64(s, 5, (int64_t)addr);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_gap_add(struct sptd_store *st, int64_t ts, int64_t dur, int cpu,
                       const char *reason)
{
	static const char what[] = "adding a gap row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, dur >= 0, what, "dur is negative");
	SPTD_STORE_REQUIRE(st, reason && *reason, what, "reason is NULL or empty");
	s = sptd_store_row_begin(st, SPTD_STORE_T_GAP, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, ts);
	sqlite3_bind_int64(s, 3, dur);
	sptd_store_bind_opt(s, 4, cpu);
	sptd_store_bind_str(s, 5, reason);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_stat_add(struct sptd_store *st, const char *name, int cpu, int64_t value)
{
	static const char what[] = "adding a stats row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, name && *name, what, "name is NULL or empty");
	s = sptd_store_row_begin(st, SPTD_STORE_T_STATS, what, &ret);
	if (!s)
		return ret;
	sptd_store_bind_str(s, 1, name);
	sptd_store_bind_opt(s, 2, cpu);
	sqlite3_bind_int64(s, 3, value);
	return sptd_store_row_end(st, s, what);
}

void sptd_store_rows_release(struct sptd_store *st)
{
	for (int i = 0; i < SPTD_STORE_T_COUNT; i++) {
		sqlite3_finalize(st->insert[i]);
		st->insert[i] = NULL;
	}
	sqlite3_finalize(st->slice_bulk);
	st->slice_bulk = NULL;
	sqlite3_finalize(st->meta_get);
	st->meta_get = NULL;
}
