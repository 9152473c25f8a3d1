/* store_read.c — the readers: rows handed to a callback as typed structs.
 *
 * sptd_store_each reads any table into its row struct as the table's
 * description says (store_tables.c); SPTD_STORE_EACH is it with a typed
 * callback.  Joins and selections (raw_image with its path, the mapped
 * files, per-CPU stats, thread exits) have a statement and a row function
 * of their own.  Each statement is one of
 * store_named.c, prepared once per store. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* The caller's row callback, typed by the row it takes, and its argument. */
struct reader {
	union {
		int (*image)(void *ctx, const struct sptd_store_raw_image_row *row);
		int (*file)(void *ctx, const struct sptd_store_mapped_file_row *row);
		int (*stat)(void *ctx, const struct sptd_store_stat_row *row);
		int (*exit)(void *ctx, int64_t utid, int64_t ts);
	} fn;                   /* the member the reader's row function calls */
	void *ctx;              /* the caller's argument */
};

int sptd_store_read_rows(struct sptd_store *st, int has_fn, int q, const char *sql,
                         const char *what, int (*row)(sqlite3_stmt *s, void *arg), void *arg)
{
	sqlite3_stmt *s;
	int owned, ret;

	SPTD_STORE_REQUIRE(st, has_fn, what, "fn is NULL");
	s = sptd_store_named_get(st, q, sql, what, &owned, &ret);
	if (!s)
		return ret;
	return sptd_store_named_each(st, s, owned, what, row, arg);
}

/* Bytes of column @col: NULL for NULL, a valid pointer for an empty blob. */
static const void *column_bytes(sqlite3_stmt *s, int col, size_t *len)
{
	const void *data;

	*len = 0;
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return NULL;
	data = sqlite3_column_blob(s, col);
	*len = (size_t)sqlite3_column_bytes(s, col);
	/* A zero-length blob has no pointer in SQLite; give a valid one. */
	return data ? data : "";
}

/* Column @col as an int where NULL means "none" (-1). */
static int column_opt_int(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL ? -1 : sqlite3_column_int(s, col);
}

/* Column @col as text, NULL for NULL. */
static const char *column_str(sqlite3_stmt *s, int col)
{
	return (const char *)sqlite3_column_text(s, col);
}

/* ---- one generic reader, driven by the table's description -------------- */

/* A reader's state: the caller's callback and the row being filled. */
struct each {
	const struct sptd_store_table_def *t; /* the table */
	int (*fn)(void *ctx, const void *row); /* the caller's callback */
	void *ctx;              /* its argument */
	union {                 /* the row (the largest struct a table has) */
		struct sptd_store_cpu_idle_row idle;
		struct sptd_store_watch_hit_row hit;
		struct sptd_store_slice_row slice;
		struct sptd_store_raw_sample_row sample;
		int64_t align[16];
	} row;
	uint64_t *chain;        /* a CHAIN column in host order */
	size_t cap;             /* entries @chain holds; grows, never per row */
	int nomem;              /* growing @chain failed */
};

/* Column @col of @s into @c's field of @row. */
static int col_fill(struct each *e, sqlite3_stmt *s, int col, const struct sptd_store_col *c)
{
	char *p = (char *)&e->row + c->off;
	size_t *lenp = (size_t *)(void *)((char *)&e->row + c->off2);
	int null = sqlite3_column_type(s, col) == SQLITE_NULL;
	int64_t v = sqlite3_column_int64(s, col);
	const void *bytes;
	size_t len, nr;

	if (null && (c->flags & SPTD_STORE_F_NEG_NULL))
		v = -1;
	switch (c->type) {
	case SPTD_STORE_C_I32:
		*(int *)(void *)p = (int)v;
		break;
	case SPTD_STORE_C_I64:
	case SPTD_STORE_C_U64:
		memcpy(p, &v, sizeof(v));
		break;
	case SPTD_STORE_C_TEXT:
		*(const char **)(void *)p = (const char *)sqlite3_column_text(s, col);
		break;
	case SPTD_STORE_C_BYTES:
		*(const void **)(void *)p = column_bytes(s, col, lenp);
		break;
	case SPTD_STORE_C_CHAIN:
		bytes = column_bytes(s, col, &len);
		nr = len / sizeof(uint64_t);
		if (nr > e->cap) {
			uint64_t *more = realloc(e->chain, nr * sizeof(*more));

			if (!more) {
				e->nomem = 1;
				return -ENOMEM;
			}
			e->chain = more;
			e->cap = nr;
		}
		/* stored little-endian; the blob need not be aligned */
		if (nr)
			memcpy(e->chain, bytes, nr * sizeof(uint64_t));
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
		for (size_t i = 0; i < nr; i++)
			e->chain[i] = __builtin_bswap64(e->chain[i]);
#endif
		*(const uint64_t **)(void *)p = e->chain;
		*lenp = nr;
		break;
	default:
		break;
	}
	return 0;
}

/* A row of the reader's SELECT: its columns into the row, then the caller. */
static int each_row(sqlite3_stmt *s, void *arg)
{
	struct each *e = arg;
	int col = 0, ret = 0;

	memset(&e->row, 0, sizeof(e->row));
	for (int c = 0; c < e->t->ncols && ret == 0; c++)
		if (e->t->cols[c].type != SPTD_STORE_C_AUTO && e->t->cols[c].type != SPTD_STORE_C_NONE)
			ret = col_fill(e, s, col++, &e->t->cols[c]);
	return ret ? ret : e->fn(e->ctx, &e->row);
}

/* The rows of a table with bytes, in its order: the order is taken over
 * rowids alone, then each row is read by its rowid (ordering the rows
 * themselves would copy every chunk through SQLite's sorter twice: a
 * perf.data import holds a CPU's whole PT in one chunk). */
static int each_by_rowid(struct sptd_store *st, int table, const char *cols, struct each *e,
                         const char *what)
{
	char order_sql[160], row_sql[640];
	sqlite3_stmt *o, *r;
	int o_owned, r_owned, ret = 0, rc;

	snprintf(order_sql, sizeof(order_sql), "SELECT rowid FROM \"%s\" ORDER BY %s",
	         e->t->name, e->t->order);
	snprintf(row_sql, sizeof(row_sql), "SELECT %s FROM \"%s\" WHERE rowid = ?1", cols,
	         e->t->name);
	o = sptd_store_named_get(st, SPTD_STORE_Q_EACH_OF + table, order_sql, what, &o_owned, &ret);
	if (!o)
		return ret;
	r = sptd_store_named_get(st, SPTD_STORE_Q_ROW_OF + table, row_sql, what, &r_owned, &ret);
	if (!r) {
		sptd_store_named_done(o, o_owned);
		return ret;
	}
	while (ret == 0 && (rc = sqlite3_step(o)) == SQLITE_ROW) {
		int rrc;

		sqlite3_bind_int64(r, 1, sqlite3_column_int64(o, 0));
		rrc = sqlite3_step(r);
		if (rrc == SQLITE_ROW)
			ret = each_row(r, e);
		else if (rrc != SQLITE_DONE)
			ret = sptd_store_fail_sqlite(st, rrc, what);
		sqlite3_reset(r);
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = sptd_store_fail_sqlite(st, rc, what);
	sptd_store_named_done(r, r_owned);
	sptd_store_named_done(o, o_owned);
	return ret;
}

int sptd_store_each(struct sptd_store *st, enum sptd_store_table_id table,
                    int (*fn)(void *ctx, const void *row), void *ctx)
{
	struct each *e;
	char what[64], cols[512], sql[640];
	size_t n = 0;
	int bytes = 0, ret, owned;
	sqlite3_stmt *s;

	if (!st || (int)table < 0 || table >= SPTD_STORE_T_COUNT)
		return -EINVAL;
	snprintf(what, sizeof(what), "reading %s", sptd_store_table_defs[table].name);
	SPTD_STORE_REQUIRE(st, fn, what, "fn is NULL");
	e = calloc(1, sizeof(*e));
	if (!e)
		return sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
	*e = (struct each){ .t = &sptd_store_table_defs[table], .fn = fn, .ctx = ctx };
	for (int c = 0; c < e->t->ncols; c++) {
		const struct sptd_store_col *col = &e->t->cols[c];

		if (col->type == SPTD_STORE_C_AUTO || col->type == SPTD_STORE_C_NONE)
			continue;
		bytes |= col->type == SPTD_STORE_C_BYTES;
		n += (size_t)snprintf(cols + n, sizeof(cols) - n, "%s\"%s\"", n ? ", " : "",
		                      col->name);
	}
	if (bytes && e->t->order) {
		ret = each_by_rowid(st, table, cols, e, what);
	} else {
		snprintf(sql, sizeof(sql), "SELECT %s FROM \"%s\"%s%s", cols, e->t->name,
		         e->t->order ? " ORDER BY " : "", e->t->order ? e->t->order : "");
		s = sptd_store_named_get(st, SPTD_STORE_Q_EACH_OF + table, sql, what, &owned, &ret);
		if (s)
			ret = sptd_store_named_each(st, s, owned, what, each_row, e);
	}
	if (e->nomem)
		sptd_store_fail(st, ret, "%s: out of memory for a call chain", what);
	free(e->chain);
	free(e);
	return ret;
}

/* ---- raw_switch by time ---------------------------------------------------------- */

int sptd_store_raw_switch_each(struct sptd_store *st, int by_time,
                               int (*fn)(void *ctx, const struct sptd_store_raw_switch_row *row),
                               void *ctx)
{
	struct each e = { .t = &sptd_store_table_defs[SPTD_STORE_T_RAW_SWITCH],
	                  .fn = (int (*)(void *, const void *))fn, .ctx = ctx };

	if (!by_time)
		return SPTD_STORE_EACH(st, raw_switch, fn, ctx);
	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_RAW_SWITCH_BY_TS,
	                "SELECT ts, cpu, prev_tid, next_tid, next_comm, prev_state FROM raw_switch "
	                "ORDER BY ts", "reading raw_switch", each_row, &e);
}

/* ---- raw_image and the files mappings name: joins ------------------------------ */

enum { IMAGE_DSO_ID, IMAGE_ADDR, IMAGE_DATA, IMAGE_PATH };

static int image_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_raw_image_row r = {
		.dso_id = sqlite3_column_int64(s, IMAGE_DSO_ID),
		.addr = (uint64_t)sqlite3_column_int64(s, IMAGE_ADDR),
		.path = column_str(s, IMAGE_PATH),
	};

	r.data = column_bytes(s, IMAGE_DATA, &r.len);
	return e->fn.image(e->ctx, &r);
}

int sptd_store_raw_image_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_raw_image_row *row),
                              void *ctx)
{
	struct reader e = { .fn.image = fn, .ctx = ctx };

	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_RAW_IMAGE,
	                "SELECT i.dso_id, i.addr, i.data, d.path FROM raw_image i "
	                "LEFT JOIN dso d ON d.id = i.dso_id", "reading raw_image", image_row, &e);
}

enum { FILE_PID, FILE_DSO_ID, FILE_BIAS, FILE_PATH, FILE_BUILD_ID };

static int file_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_mapped_file_row r = {
		.pid = sqlite3_column_int(s, FILE_PID),
		.dso_id = sqlite3_column_int64(s, FILE_DSO_ID),
		.bias = sqlite3_column_int64(s, FILE_BIAS),
		.path = column_str(s, FILE_PATH),
		.build_id = column_str(s, FILE_BUILD_ID),
	};

	return e->fn.file(e->ctx, &r);
}

int sptd_store_mapped_file_each(struct sptd_store *st,
                                int (*fn)(void *ctx,
                                          const struct sptd_store_mapped_file_row *row),
                                void *ctx)
{
	struct reader e = { .fn.file = fn, .ctx = ctx };

	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_MAPPED_FILE,
	                "SELECT DISTINCT m.pid, m.dso_id, m.bias, d.path, d.build_id FROM raw_mmap m "
	                "JOIN dso d ON d.id = m.dso_id "
	                "WHERE m.dso_id NOT IN (SELECT dso_id FROM raw_image)",
	                "reading the mapped files", file_row, &e);
}

/* ---- stats, thread exits: selections ------------------------------------------ */

enum { STAT_CPU, STAT_NAME, STAT_VALUE };

static int stat_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_stat_row r = {
		.name = column_str(s, STAT_NAME),
		.cpu = column_opt_int(s, STAT_CPU),
		.value = sqlite3_column_int64(s, STAT_VALUE),
	};

	return e->fn.stat(e->ctx, &r);
}

int sptd_store_cpu_stats_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_stat_row *row),
                              void *ctx)
{
	struct reader e = { .fn.stat = fn, .ctx = ctx };

	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_CPU_STATS,
	                "SELECT cpu, name, value FROM stats WHERE cpu IS NOT NULL ORDER BY cpu",
	                "reading stats", stat_row, &e);
}

static int exit_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;

	return e->fn.exit(e->ctx, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
}

int sptd_store_thread_exits_each(struct sptd_store *st,
                                 int (*fn)(void *ctx, int64_t utid, int64_t ts), void *ctx)
{
	struct reader e = { .fn.exit = fn, .ctx = ctx };

	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_THREAD_EXITS,
	                "SELECT utid, ts + dur FROM sched_slice WHERE substr(end_state, 1, 1) "
	                "IN ('X', 'Z') AND (flags & 2) = 0 ORDER BY ts",
	                "reading the threads' exits", exit_row, &e);
}
