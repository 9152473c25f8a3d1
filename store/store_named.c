/* store_named.c — the store's own statements: each named by an enum
 * sptd_store_named_id, prepared once per store on first use (persistent),
 * then reset and reused, so a reader or lookup costs a bind and steps, not
 * a compile.  The readers, lookups and deletes of store_read.c,
 * store_lookup.c and store_clear.c all run through here. */
#include <errno.h>

#include "store-local.h"

sqlite3_stmt *sptd_store_named_get(struct sptd_store *st, int q, const char *sql,
                                   const char *what, int *owned, int *ret)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*owned = 0;
	if (!st->db) {
		*ret = sptd_store_fail(st, -EINVAL, "%s: the store is closed", what);
		return NULL;
	}
	if (st->named[q] && !sqlite3_stmt_busy(st->named[q]))
		return st->named[q];
	/* Busy: called again from a row callback of the same statement.  Such
	 * nesting is rare, so the nested call pays for its own compile. */
	rc = sqlite3_prepare_v3(st->db, sql, -1, st->named[q] ? 0 : SQLITE_PREPARE_PERSISTENT,
	                        &s, NULL);
	if (rc != SQLITE_OK) {
		*ret = sptd_store_fail_sqlite(st, rc, what);
		return NULL;
	}
	if (st->named[q])
		*owned = 1;
	else
		st->named[q] = s;
	return s;
}

void sptd_store_named_done(sqlite3_stmt *s, int owned)
{
	if (owned) {
		sqlite3_finalize(s);
		return;
	}
	/* reset repeats the last step's error, which was already reported */
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

int sptd_store_named_each(struct sptd_store *st, sqlite3_stmt *s, int owned,
                          const char *what, int (*row)(sqlite3_stmt *s, void *arg),
                          void *arg)
{
	int ret = 0, rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		ret = row(s, arg);
		if (ret != 0)
			break;
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = sptd_store_fail_sqlite(st, rc, what);
	sptd_store_named_done(s, owned);
	return ret;
}

int sptd_store_named_one(struct sptd_store *st, sqlite3_stmt *s, int owned,
                         const char *what, int64_t *value)
{
	int ret, rc = sqlite3_step(s);

	if (rc == SQLITE_ROW) {
		/* the statement's only column */
		if (value)
			*value = sqlite3_column_int64(s, 0);
		ret = 1;
	} else if (rc == SQLITE_DONE) {
		ret = 0;
	} else {
		ret = sptd_store_fail_sqlite(st, rc, what);
	}
	sptd_store_named_done(s, owned);
	return ret;
}

void sptd_store_named_release(struct sptd_store *st)
{
	for (int q = 0; q < SPTD_STORE_Q_N; q++) {
		sqlite3_finalize(st->named[q]);
		st->named[q] = NULL;
	}
}
