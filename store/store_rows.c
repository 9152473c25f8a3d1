/* store_rows.c — writing rows: one cached INSERT per table, bound and
 * stepped per row (no SQL text per row), the one add every table's rows
 * go through (sptd_store_add), and the bulk path of the biggest table
 * (slices: a cached INSERT of many rows per statement, one step per 64
 * rows). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
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

/* ---- one generic add, driven by the table's description ----------------- */

/* The reason column @c of @row is refused (NULL: it is not). */
static const char *col_refused(const struct sptd_store_col *c, const void *row)
{
	const char *p = (const char *)row + c->off;
	int64_t v;

	switch (c->type) {
	case SPTD_STORE_C_I64:
		v = *(const int64_t *)(const void *)p;
		break;
	case SPTD_STORE_C_I32:
		v = *(const int *)(const void *)p;
		break;
	case SPTD_STORE_C_TEXT: {
		const char *text = *(const char *const *)(const void *)p;

		if ((c->flags & SPTD_STORE_F_REQUIRED) && (!text || !*text))
			return "is NULL or empty";
		if ((c->flags & SPTD_STORE_F_NOT_NULL) && !text)
			return "is NULL";
		return NULL;
	}
	case SPTD_STORE_C_BYTES:
	case SPTD_STORE_C_CHAIN: {
		const void *data = *(const void *const *)(const void *)p;
		size_t len = *(const size_t *)(const void *)((const char *)row + c->off2);

		if (!data && len)
			return "is NULL";
		if (c->type == SPTD_STORE_C_CHAIN && len > SIZE_MAX / sizeof(uint64_t))
			return "is too long";
		return NULL;
	}
	default:
		return NULL;
	}
	return (c->flags & SPTD_STORE_F_NOT_NEG) && v < 0 ? "is negative" : NULL;
}

/* The callchain as little-endian bytes: the array itself on a
 * little-endian host, a swapped copy in st->le_buf otherwise. */
static const void *callchain_le(struct sptd_store *st, const uint64_t *chain, size_t nr)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	(void)st;
	(void)nr;
	return chain;
#else
	if (nr > st->le_cap) {
		uint64_t *buf = realloc(st->le_buf, nr * sizeof(*buf));

		if (!buf)
			return NULL;
		st->le_buf = buf;
		st->le_cap = nr;
	}
	for (size_t i = 0; i < nr; i++)
		st->le_buf[i] = __builtin_bswap64(chain[i]);
	return st->le_buf;
#endif
}

/* Bind column @c of @row at parameter @idx (@null: store NULL). */
static int col_bind(struct sptd_store *st, sqlite3_stmt *s, int idx,
                    const struct sptd_store_col *c, const void *row, int null,
                    const char *what)
{
	const char *p = (const char *)row + c->off;
	const char *text;
	const void *data;
	size_t len;
	int64_t v;

	if (null || c->type == SPTD_STORE_C_AUTO || c->type == SPTD_STORE_C_NONE)
		return sqlite3_bind_null(s, idx), 0;
	switch (c->type) {
	case SPTD_STORE_C_TEXT:
		text = *(const char *const *)(const void *)p;
		if (!text)
			text = c->dflt;
		if (text && !*text && (c->flags & SPTD_STORE_F_EMPTY_NULL))
			text = NULL;
		sptd_store_bind_str(s, idx, text);
		return 0;
	case SPTD_STORE_C_BYTES:
	case SPTD_STORE_C_CHAIN:
		data = *(const void *const *)(const void *)p;
		len = *(const size_t *)(const void *)((const char *)row + c->off2);
		if (!data && (c->flags & SPTD_STORE_F_ZERO_NULL))
			return sqlite3_bind_null(s, idx), 0;
		if (c->type == SPTD_STORE_C_CHAIN) {
			data = len ? callchain_le(st, data, len) : NULL;
			if (len && !data)
				return sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
			len *= sizeof(uint64_t);
		}
		return sptd_store_bind_bytes(st, s, idx, data, len, what);
	case SPTD_STORE_C_I32:
		v = *(const int *)(const void *)p;
		break;
	default:   /* I64, U64: the same bits */
		memcpy(&v, p, sizeof(v));
		break;
	}
	if (((c->flags & SPTD_STORE_F_NEG_NULL) && v < 0) ||
	    ((c->flags & SPTD_STORE_F_ZERO_NULL) && v == 0))
		sqlite3_bind_null(s, idx);
	else
		sqlite3_bind_int64(s, idx, v);
	return 0;
}

int sptd_store_add(struct sptd_store *st, enum sptd_store_table_id table, const void *row)
{
	const struct sptd_store_table_def *t;
	const char *why = NULL, *col = "";
	uint32_t nulls = 0;
	sqlite3_stmt *s;
	int ret = 0;

	if (!st || (int)table < 0 || table >= SPTD_STORE_T_COUNT)
		return -EINVAL;
	t = &sptd_store_table_defs[table];
	SPTD_STORE_REQUIRE(st, row, t->what, "no row");
	if (t->check)
		why = t->check(row, &nulls);
	for (int c = 0; c < t->ncols && !why; c++) {
		why = col_refused(&t->cols[c], row);
		col = t->cols[c].name;
	}
	if (why)
		return sptd_store_fail(st, -EINVAL, "%s: %s%s%s", t->what, col, *col ? " " : "",
		                       why);
	s = sptd_store_row_begin(st, table, t->what, &ret);
	if (!s)
		return ret;
	for (int c = 0; c < t->ncols && ret >= 0; c++)
		ret = col_bind(st, s, c + 1, &t->cols[c], row, (int)(nulls >> c & 1), t->what);
	if (ret < 0) {
		sqlite3_reset(s);
		return ret;
	}
	return sptd_store_row_end(st, s, t->what);
}

/* ---- the bulk path of slice -------------------------------------------------- */

/* Bind slice row @r (checked) at parameters @idx on, one per column. */
static void bind_slice(struct sptd_store *st, sqlite3_stmt *s, int idx,
                       const struct sptd_store_slice_row *r)
{
	const struct sptd_store_table_def *t = &sptd_store_table_defs[SPTD_STORE_T_SLICE];

	for (int c = 0; c < t->ncols; c++)
		col_bind(st, s, idx + c, &t->cols[c], r, 0, t->what);
}

/* The cached INSERT of SPTD_STORE_BULK_ROWS slice rows; NULL after a
 * failure (recorded, returned through @ret). */
static sqlite3_stmt *slice_bulk_stmt(struct sptd_store *st, const char *what, int *ret)
{
	const struct sptd_store_table_def *t = &sptd_store_table_defs[SPTD_STORE_T_SLICE];
	char *sql;
	size_t n, size = 64 + SPTD_STORE_BULK_ROWS * (4 + 2 * (size_t)t->ncols);
	int rc;

	*ret = 0;
	if (st->slice_bulk)
		return st->slice_bulk;
	sql = malloc(size);
	if (!sql) {
		*ret = sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
		return NULL;
	}
	n = (size_t)snprintf(sql, size, "INSERT INTO \"%s\" VALUES ", t->name);
	for (int i = 0; i < SPTD_STORE_BULK_ROWS; i++)
		for (int c = 0; c < t->ncols; c++)
			n += (size_t)snprintf(sql + n, size - n, "%s%s%s", !c && i ? "," : "",
			                      c ? ",?" : "(?", c == t->ncols - 1 ? ")" : "");
	rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->slice_bulk, NULL);
	free(sql);
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
			bind_slice(st, bulk, 1 + sptd_store_table_defs[SPTD_STORE_T_SLICE].ncols *
			                         (int)k, &rows[i + k]);
		ret = sptd_store_row_end(st, bulk, what);
	}
	if (i < n && ret >= 0) {
		one = sptd_store_row_begin(st, SPTD_STORE_T_SLICE, what, &ret);
		for (; one && i < n && ret >= 0; i++) {
			bind_slice(st, one, 1, &rows[i]);
			ret = sptd_store_row_end(st, one, what);
		}
	}
	return ret < 0 ? ret : 0;
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
