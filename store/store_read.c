/* store_read.c — the readers: rows handed to a callback as typed structs.
 *
 * sptd_store_each reads any table into its row struct as the table's
 * description says (store_tables.c); SPTD_STORE_EACH is it with a typed
 * callback.  A view (a join or selection: raw_image with its path, the
 * mapped files, per-CPU stats, thread exits, the profile's frames, stacks,
 * threads and watch hits) is read the same way from its SELECT.  Each statement is
 * one of store_named.c, prepared once per store. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

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
		struct sptd_store_frame_row frame;
		struct sptd_store_stack_row stack;
		struct sptd_store_thread_info_row thread;
		struct sptd_store_mapped_file_row file;
		struct sptd_store_watch_hit_thread_row hit_thread;
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

	if (!st || (int)table < 0 || table >= SPTD_STORE_T_ALL)
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
	if (e->t->select) {
		s = sptd_store_named_get(st, SPTD_STORE_Q_EACH_OF + table, e->t->select, what, &owned,
		                         &ret);
		if (s)
			ret = sptd_store_named_each(st, s, owned, what, each_row, e);
	} else if (bytes && e->t->order) {
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
