/* store_lookup.c — counts, id allocation and lookups: the one-row questions
 * the collector asks of an incident ("how many sched slices", "the next dso
 * id", "the dso of this path and build-id", "the embedded file of dso 3").
 * Each is a statement of store_named.c, prepared once per store. */
#include <errno.h>
#include <stdio.h>

#include "store-local.h"

/* Is @table a table of the schema?  0 and an -EINVAL message otherwise. */
static int table_ok(struct sptd_store *st, int table, const char *what)
{
	if (table >= 0 && table < SPTD_STORE_T_COUNT)
		return 0;
	return sptd_store_fail(st, -EINVAL, "%s: no table %d in the schema", what, table);
}

/* The one value of named statement @q (text @sql) in *@value.  Its
 * aggregate always gives a row: none is a broken invariant (-EIO). */
static int value_of(struct sptd_store *st, int q, const char *sql, const char *what,
                    int64_t *value)
{
	sqlite3_stmt *s;
	int owned, ret;

	s = sptd_store_named_get(st, q, sql, what, &owned, &ret);
	if (!s)
		return ret;
	ret = sptd_store_named_one(st, s, owned, what, value);
	if (ret == 0)
		return sptd_store_fail(st, -EIO, "%s: the query gave no row", what);
	return ret < 0 ? ret : 0;
}

int sptd_store_count(struct sptd_store *st, enum sptd_store_table_id table, int64_t *n)
{
	static const char what[] = "counting rows";
	char sql[96];
	int ret;

	SPTD_STORE_REQUIRE(st, n, what, "n is NULL");
	ret = table_ok(st, (int)table, what);
	if (ret < 0)
		return ret;
	/* "trigger" is an SQL keyword: quote every name */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\"",
	         sptd_store_table_defs[table].name);
	ret = value_of(st, SPTD_STORE_Q_COUNT_OF + (int)table, sql, what, n);
	/* slice rows kept for the commit count too (each one will be a row:
	 * an id twice fails the commit) */
	if (ret >= 0 && table == SPTD_STORE_T_SLICE)
		*n += (int64_t)st->nbulk;
	return ret;
}

int sptd_store_raw_mmap_count(struct sptd_store *st, int pid, int64_t *n)
{
	static const char what[] = "counting a process's raw_mmap rows";
	sqlite3_stmt *s;
	int owned, ret;

	SPTD_STORE_REQUIRE(st, n, what, "n is NULL");
	s = sptd_store_named_get(st, SPTD_STORE_Q_RAW_MMAP_COUNT,
	                         "SELECT count(*) FROM raw_mmap WHERE pid = ?1", what, &owned, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int(s, 1, pid);
	ret = sptd_store_named_one(st, s, owned, what, n);
	return ret < 0 ? ret : 0;
}

int sptd_store_next_id(struct sptd_store *st, enum sptd_store_table_id table, int64_t *id)
{
	static const char what[] = "choosing the next id";
	const struct sptd_store_table_def *t;
	char sql[128];
	int ret;

	SPTD_STORE_REQUIRE(st, id, what, "id is NULL");
	ret = table_ok(st, (int)table, what);
	if (ret < 0)
		return ret;
	t = &sptd_store_table_defs[table];
	if (!t->id_col)
		return sptd_store_fail(st, -EINVAL, "%s: the store numbers the rows of %s itself",
		                       what, t->name);
	snprintf(sql, sizeof(sql), "SELECT coalesce(max(\"%s\"), 0) + 1 FROM \"%s\"",
	         t->id_col, t->name);
	ret = value_of(st, SPTD_STORE_Q_NEXT_ID_OF + (int)table, sql, what, id);
	/* and past the slice rows kept for the commit */
	for (size_t i = 0; ret >= 0 && table == SPTD_STORE_T_SLICE && i < st->nbulk; i++)
		if (st->bulk[i].id >= *id)
			*id = st->bulk[i].id + 1;
	return ret;
}

int sptd_store_dso_find(struct sptd_store *st, const char *path, const char *build_id,
                        int64_t *id)
{
	static const char what[] = "looking up a dso";
	sqlite3_stmt *s;
	int owned, ret;

	SPTD_STORE_REQUIRE(st, path && id, what, "path or id is NULL");
	s = sptd_store_named_get(st, SPTD_STORE_Q_DSO_FIND,
	                         "SELECT id FROM dso WHERE path = ?1 AND build_id IS ?2", what,
	                         &owned, &ret);
	if (!s)
		return ret;
	sptd_store_bind_str(s, 1, path);
	sptd_store_bind_str(s, 2, build_id);
	return sptd_store_named_one(st, s, owned, what, id);
}

int sptd_store_dso_find_path(struct sptd_store *st, const char *path, int64_t *id)
{
	static const char what[] = "looking up a dso by path";
	sqlite3_stmt *s;
	int owned, ret;

	SPTD_STORE_REQUIRE(st, path && id, what, "path or id is NULL");
	s = sptd_store_named_get(st, SPTD_STORE_Q_DSO_FIND_PATH,
	                         "SELECT id FROM dso WHERE path = ?1", what, &owned, &ret);
	if (!s)
		return ret;
	sptd_store_bind_str(s, 1, path);
	return sptd_store_named_one(st, s, owned, what, id);
}

int sptd_store_symbol_find(struct sptd_store *st, int64_t dso_id, uint64_t addr,
                           const char *name, int64_t *id)
{
	static const char what[] = "looking up a symbol";
	sqlite3_stmt *s;
	int owned, ret;

	SPTD_STORE_REQUIRE(st, name && id, what, "name or id is NULL");
	s = sptd_store_named_get(st, SPTD_STORE_Q_SYMBOL_FIND,
	                         "SELECT id FROM symbol WHERE dso_id IS ?1 AND addr = ?2 "
	                         "AND name = ?3", what, &owned, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, dso_id);
	sqlite3_bind_int64(s, 2, (int64_t)addr);
	sptd_store_bind_str(s, 3, name);
	return sptd_store_named_one(st, s, owned, what, id);
}

int sptd_store_raw_mmap_has(struct sptd_store *st, int pid, uint64_t start, uint64_t end,
                            int64_t dso_id)
{
	static const char what[] = "looking up a raw_mmap row";
	sqlite3_stmt *s;
	int owned, ret;

	if (!st)
		return -EINVAL;
	s = sptd_store_named_get(st, SPTD_STORE_Q_RAW_MMAP_HAS,
	                         "SELECT 1 FROM raw_mmap WHERE pid = ?1 AND start = ?2 "
	                         "AND end = ?3 AND dso_id = ?4", what, &owned, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int(s, 1, pid);
	sqlite3_bind_int64(s, 2, (int64_t)start);
	sqlite3_bind_int64(s, 3, (int64_t)end);
	sqlite3_bind_int64(s, 4, dso_id);
	return sptd_store_named_one(st, s, owned, what, NULL);
}

/* Does the file have table @name (one made on first use, like raw_file)?
 * 1 yes, 0 no, < 0 error. */
static int table_exists(struct sptd_store *st, const char *name, const char *what)
{
	sqlite3_stmt *s;
	int owned, ret;

	s = sptd_store_named_get(st, SPTD_STORE_Q_TABLE_EXISTS,
	                         "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
	                         what, &owned, &ret);
	if (!s)
		return ret;
	sptd_store_bind_str(s, 1, name);
	return sptd_store_named_one(st, s, owned, what, NULL);
}

enum { RAW_FILE_DATA };

int sptd_store_raw_file_read(struct sptd_store *st, int64_t dso_id,
                             int (*fn)(void *ctx, const void *data, size_t len), void *ctx)
{
	static const char what[] = "reading an embedded file";
	sqlite3_stmt *s;
	int owned, ret, rc;

	SPTD_STORE_REQUIRE(st, fn, what, "fn is NULL");
	if (!st->db)
		return sptd_store_fail(st, -EINVAL, "%s: the store is closed", what);
	/* raw_file exists only in incidents that embed files (--portable);
	 * once its statement is prepared, the table is there for good */
	if (!st->named[SPTD_STORE_Q_RAW_FILE]) {
		ret = table_exists(st, "raw_file", what);
		if (ret <= 0)
			return ret;
	}
	s = sptd_store_named_get(st, SPTD_STORE_Q_RAW_FILE,
	                         "SELECT data FROM raw_file WHERE dso_id = ?1", what, &owned, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, dso_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const void *data = sqlite3_column_blob(s, RAW_FILE_DATA);
		int len = sqlite3_column_bytes(s, RAW_FILE_DATA);

		ret = 0;
		if (data && len > 0) {
			ret = fn(ctx, data, (size_t)len);
			ret = ret < 0 ? ret : 1;
		}
	} else {
		ret = rc == SQLITE_DONE ? 0 : sptd_store_fail_sqlite(st, rc, what);
	}
	sptd_store_named_done(s, owned);
	return ret;
}

int sptd_store_thread_state_wait(struct sptd_store *st, int tid, int64_t end, int64_t slack_ns,
                                 int64_t *dur, int64_t *flags)
{
	/* the runnable row of that tid ending at @end, else the nearest within
	 * the slack, the longest first (a tid reused inside the window has two
	 * threads) */
	static const char sql[] =
		"SELECT s.dur, s.flags FROM thread_state s JOIN thread t ON t.utid = s.utid "
		"WHERE t.tid = ?1 AND s.state IN ('R', 'R+') AND abs(s.ts + s.dur - ?2) <= ?3 "
		"ORDER BY abs(s.ts + s.dur - ?2), s.dur DESC LIMIT 1";
	struct sptd_store_stmt *stmt = NULL;
	int ret;

	if (!st || !dur || !flags || slack_ns < 0)
		return -EINVAL;
	ret = sptd_store_prepare(st, sql, &stmt);
	if (ret >= 0)
		ret = sptd_store_bind_int(stmt, 1, tid);
	if (ret >= 0)
		ret = sptd_store_bind_int(stmt, 2, end);
	if (ret >= 0)
		ret = sptd_store_bind_int(stmt, 3, slack_ns);
	if (ret >= 0)
		ret = sptd_store_step(stmt);
	if (ret == 1) {
		*dur = sptd_store_column_int(stmt, 0);
		*flags = sptd_store_column_int(stmt, 1);
	}
	sptd_store_finalize(stmt);
	return ret;
}
