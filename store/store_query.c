/* store_query.c — the caller's statement API: prepare (read-only where the
 * store is), bind, step, columns, and one-value queries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* Authorizer during a caller's prepare: the store owns the transaction and
 * the set of attached files, so the caller's SQL may not touch either. */
static int authorize(void *ctx, int action, const char *a, const char *b,
                     const char *db, const char *trigger)
{
	switch (action) {
	case SQLITE_TRANSACTION:
	case SQLITE_SAVEPOINT:
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		return SQLITE_DENY;
	default:
		return SQLITE_OK;
	}
}

/* Is the rest of the SQL text only blanks and comments? */
static int tail_is_empty(sqlite3 *db, const char *tail)
{
	sqlite3_stmt *next = NULL;
	int rc;

	if (!tail || !*tail)
		return 1;
	rc = sqlite3_prepare_v2(db, tail, -1, &next, NULL);
	sqlite3_finalize(next);
	return rc == SQLITE_OK && !next;
}

int sptd_store_prepare(struct sptd_store *st, const char *sql,
                       struct sptd_store_stmt **out)
{
	static const char what[] = "preparing a query";
	struct sptd_store_stmt *stmt = NULL;
	sqlite3_stmt *s = NULL;
	const char *tail = NULL;
	int ret = 0, rc;

	if (out)
		*out = NULL;
	if (!st || !sql || !out)
		return st ? sptd_store_fail(st, -EINVAL, "%s: sql or out is NULL", what) : -EINVAL;
	if (!st->db)
		return sptd_store_fail(st, -EINVAL, "%s: the store is closed", what);
	/* the query sees slice rows kept for the commit */
	if (st->nbulk) {
		ret = sptd_store_bulk_settle(st);
		if (ret < 0)
			return ret;
	}
	sqlite3_set_authorizer(st->db, authorize, st);
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, &tail);
	sqlite3_set_authorizer(st->db, NULL, NULL);
	if (rc == SQLITE_AUTH) {
		ret = sptd_store_fail(st, -EINVAL, "%s: transactions and ATTACH are "
		                      "managed by the store, not by queries: %s", what, sql);
		goto fail;
	}
	if (rc != SQLITE_OK) {
		ret = sptd_store_fail(st, sptd_store_errno_of(st->db, rc),
		                      "%s: %s (in: %s)", what, sqlite3_errmsg(st->db), sql);
		goto fail;
	}
	if (!s) {
		ret = sptd_store_fail(st, -EINVAL, "%s: no statement in '%s'", what, sql);
		goto fail;
	}
	if (!tail_is_empty(st->db, tail)) {
		ret = sptd_store_fail(st, -EINVAL, "%s: one statement at a time; "
		                      "not run: %s", what, tail);
		goto fail;
	}
	if (!st->writable && !sqlite3_stmt_readonly(s)) {
		ret = sptd_store_fail(st, -EROFS, "query is read-only: %s writes (%s %s)",
		                      sql, st->path, st->committed ? "is committed"
		                                                   : "was opened read-only");
		goto fail;
	}
	stmt = calloc(1, sizeof(*stmt));
	if (!stmt) {
		ret = sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
		goto fail;
	}
	stmt->stmt = s;
	stmt->st = st;
	stmt->next = st->stmts;
	if (st->stmts)
		st->stmts->prev = stmt;
	st->stmts = stmt;
	*out = stmt;
	return 0;
fail:
	sqlite3_finalize(s);
	return ret;
}

void sptd_store_finalize(struct sptd_store_stmt *stmt)
{
	if (!stmt)
		return;
	if (stmt->st) {
		if (stmt->prev)
			stmt->prev->next = stmt->next;
		else
			stmt->st->stmts = stmt->next;
		if (stmt->next)
			stmt->next->prev = stmt->prev;
	}
	sqlite3_finalize(stmt->stmt);
	for (int i = 0; i < stmt->nshown; i++)
		free(stmt->shown[i]);
	free(stmt->shown);
	free(stmt->shown_cap);
	free(stmt);
}

void sptd_store_stmts_release(struct sptd_store *st)
{
	struct sptd_store_stmt *stmt = st->stmts;

	/* The caller still owns (and later finalizes) each statement; it only
	 * loses its connection. */
	while (stmt) {
		struct sptd_store_stmt *next = stmt->next;

		sqlite3_finalize(stmt->stmt);
		stmt->stmt = NULL;
		stmt->st = NULL;
		stmt->prev = stmt->next = NULL;
		stmt = next;
	}
	st->stmts = NULL;
}

/* A statement that can still be used. */
static int live(const struct sptd_store_stmt *stmt)
{
	return stmt && stmt->stmt && stmt->st;
}

static int bind_result(struct sptd_store_stmt *stmt, int rc, int idx)
{
	if (rc == SQLITE_OK)
		return 0;
	if (rc == SQLITE_MISUSE && sqlite3_stmt_busy(stmt->stmt))
		return sptd_store_fail(stmt->st, -EINVAL, "binding parameter %d: the query "
		                       "is running; reset it first", idx);
	if (rc == SQLITE_RANGE)
		return sptd_store_fail(stmt->st, -EINVAL, "binding parameter %d: the query "
		                       "has %d parameters", idx,
		                       sqlite3_bind_parameter_count(stmt->stmt));
	return sptd_store_fail_sqlite(stmt->st, rc, "binding a parameter");
}

int sptd_store_bind_int(struct sptd_store_stmt *stmt, int idx, int64_t value)
{
	if (!live(stmt))
		return -EINVAL;
	return bind_result(stmt, sqlite3_bind_int64(stmt->stmt, idx, value), idx);
}

int sptd_store_bind_text(struct sptd_store_stmt *stmt, int idx, const char *value)
{
	int rc;

	if (!live(stmt))
		return -EINVAL;
	rc = value ? sqlite3_bind_text(stmt->stmt, idx, value, -1, SQLITE_TRANSIENT)
	           : sqlite3_bind_null(stmt->stmt, idx);
	return bind_result(stmt, rc, idx);
}

int sptd_store_step(struct sptd_store_stmt *stmt)
{
	int rc;

	if (!live(stmt))
		return -EINVAL;
	/* the time limit is each statement's, from its first step: not
	 * the whole session's (an interactive shell, several statements) */
	if (!sqlite3_stmt_busy(stmt->stmt))
		sptd_store_guard_statement_start(stmt->st);
	rc = sqlite3_step(stmt->stmt);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return sptd_store_fail_sqlite(stmt->st, rc, "running a query");
}

int sptd_store_reset(struct sptd_store_stmt *stmt)
{
	if (!live(stmt))
		return -EINVAL;
	/* reset repeats the last step's error; that was already reported. */
	sqlite3_reset(stmt->stmt);
	return 0;
}

int sptd_store_column_count(struct sptd_store_stmt *stmt)
{
	return live(stmt) ? sqlite3_column_count(stmt->stmt) : -EINVAL;
}

/* Is @col a column of @stmt? */
static int col_ok(struct sptd_store_stmt *stmt, int col)
{
	return live(stmt) && col >= 0 && col < sqlite3_column_count(stmt->stmt);
}

const char *sptd_store_column_name(struct sptd_store_stmt *stmt, int col)
{
	return col_ok(stmt, col) ? sqlite3_column_name(stmt->stmt, col) : NULL;
}

enum sptd_store_type sptd_store_column_type(struct sptd_store_stmt *stmt, int col)
{
	if (!col_ok(stmt, col))
		return SPTD_STORE_NULL;
	switch (sqlite3_column_type(stmt->stmt, col)) {
	case SQLITE_INTEGER:
		return SPTD_STORE_INT;
	case SQLITE_FLOAT:
		return SPTD_STORE_FLOAT;
	case SQLITE_TEXT:
		return SPTD_STORE_TEXT;
	case SQLITE_BLOB:
		return SPTD_STORE_BLOB;
	default:
		return SPTD_STORE_NULL;
	}
}

int64_t sptd_store_column_int(struct sptd_store_stmt *stmt, int col)
{
	return col_ok(stmt, col) ? sqlite3_column_int64(stmt->stmt, col) : 0;
}

double sptd_store_column_double(struct sptd_store_stmt *stmt, int col)
{
	return col_ok(stmt, col) ? sqlite3_column_double(stmt->stmt, col) : 0.0;
}

const char *sptd_store_column_text_n(struct sptd_store_stmt *stmt, int col, size_t *len)
{
	const char *text = NULL;

	if (col_ok(stmt, col)) {
		text = (const char *)sqlite3_column_text(stmt->stmt, col);
		/* after column_text: the length of the text, not of a blob */
		if (len)
			*len = text ? (size_t)sqlite3_column_bytes(stmt->stmt, col) : 0;
	} else if (len) {
		*len = 0;
	}
	return text;
}

/* @text (@n bytes, NUL bytes inside) copied into column @col's buffer
 * of @stmt with each NUL shown as '?'; NULL without memory. */
static const char *shown_copy(struct sptd_store_stmt *stmt, int col, const char *text, size_t n)
{
	if (col >= stmt->nshown) {
		int count = sqlite3_column_count(stmt->stmt);
		char **shown = realloc(stmt->shown, (size_t)count * sizeof(*shown));
		size_t *cap;

		if (!shown)
			return NULL;
		stmt->shown = shown;
		cap = realloc(stmt->shown_cap, (size_t)count * sizeof(*cap));
		if (!cap)
			return NULL;
		stmt->shown_cap = cap;
		for (int i = stmt->nshown; i < count; i++) {
			stmt->shown[i] = NULL;
			stmt->shown_cap[i] = 0;
		}
		stmt->nshown = count;
	}
	if (stmt->shown_cap[col] < n + 1) {
		char *buf = realloc(stmt->shown[col], n + 1);

		if (!buf)
			return NULL;
		stmt->shown[col] = buf;
		stmt->shown_cap[col] = n + 1;
	}
	for (size_t i = 0; i < n; i++)
		stmt->shown[col][i] = text[i] ? text[i] : '?';
	stmt->shown[col][n] = '\0';
	return stmt->shown[col];
}

const char *sptd_store_column_text(struct sptd_store_stmt *stmt, int col)
{
	size_t n;
	const char *text = sptd_store_column_text_n(stmt, col, &n);
	const char *shown;

	/* A NUL inside a (hostile) file's text would cut every name, path
	 * and note a reader prints or exports at it: the rest would be
	 * hidden.  Such a text is shown whole, its NULs as '?'. */
	if (!text || strlen(text) == n)
		return text;
	shown = shown_copy(stmt, col, text, n);
	return shown ? shown : text;
}

const void *sptd_store_column_blob(struct sptd_store_stmt *stmt, int col, size_t *len)
{
	const void *data = NULL;
	size_t n = 0;

	if (col_ok(stmt, col) && sqlite3_column_type(stmt->stmt, col) != SQLITE_NULL) {
		data = sqlite3_column_blob(stmt->stmt, col);
		n = (size_t)sqlite3_column_bytes(stmt->stmt, col);
		/* A zero-length blob has no pointer in SQLite; give a valid one. */
		if (!data)
			data = "";
	}
	if (len)
		*len = n;
	return data;
}

int sptd_store_query_int(struct sptd_store *st, const char *sql, int64_t *value)
{
	struct sptd_store_stmt *stmt = NULL;
	int ret;

	if (!st || !sql || !value)
		return st ? sptd_store_fail(st, -EINVAL, "query_int: sql or value is NULL")
		          : -EINVAL;
	ret = sptd_store_prepare(st, sql, &stmt);
	if (ret < 0)
		goto out;
	ret = sptd_store_step(stmt);
	if (ret < 0)
		goto out;
	if (ret == 0 || sqlite3_column_type(stmt->stmt, 0) == SQLITE_NULL) {
		ret = sptd_store_fail(st, -ENOENT, "query_int: no value from %s", sql);
		goto out;
	}
	*value = sqlite3_column_int64(stmt->stmt, 0);
	ret = 0;
out:
	sptd_store_finalize(stmt);
	return ret;
}
