/* test_store_migrate.c — an incident of schema 1 (no flags columns in
 * sched_slice, thread_state, irq_slice, softirq_slice), made from a current
 * file the way sysptd 1 wrote it (the columns dropped with SQLite itself,
 * schema_version 1):
 *   - opened read-only, it reads as the current schema (flags NULL: not
 *     known) and the file is not touched;
 *   - opened for update, it gets the columns (old rows NULL) and schema
 *     version 2 in the same transaction, and takes rows with flags;
 *   - an update that is not committed leaves it at schema 1. */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include "sptd_store.h"
#include "sptd_test.h"

static const char *const flag_tables[] = {
	"sched_slice", "thread_state", "irq_slice", "softirq_slice", NULL,
};

/* An integer from the first row of @sql run on @path by SQLite itself; -999
 * on any failure, -1 for NULL. */
static long long raw_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	long long v = -999;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_type(q, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	return v;
}

/* How many of the four tables have a flags column in the file itself. */
static long long raw_flag_columns(const char *path)
{
	return raw_int(path, "SELECT (SELECT count(*) FROM pragma_table_info('sched_slice') WHERE "
	                     "name = 'flags') + (SELECT count(*) FROM pragma_table_info('thread_state')"
	                     " WHERE name = 'flags') + (SELECT count(*) FROM "
	                     "pragma_table_info('irq_slice') WHERE name = 'flags') + (SELECT count(*) "
	                     "FROM pragma_table_info('softirq_slice') WHERE name = 'flags')");
}

/* A schema-1 incident at @path with one row in each of the four tables. */
static int make_v1(const char *path)
{
	struct sptd_store *st = NULL;
	sqlite3 *db = NULL;
	char sql[256];
	int ok = 1;

	if (sptd_store_create(path, &st) < 0)
		return 0;
	ok &= SPTD_STORE_ADD(st, sched_slice, 10, 5, 0, 1, "S", 120, 0) == 0;
	ok &= SPTD_STORE_ADD(st, thread_state, 10, 5, 1, "R", -1, 2, 0) == 0;
	ok &= SPTD_STORE_ADD(st, irq_slice, 20, 2, 1, 11, "eth0", 1, 0) == 0;
	ok &= SPTD_STORE_ADD(st, softirq_slice, 22, 4, 1, 3, "NET_RX", 0) == 0;
	ok &= sptd_store_commit(st) == 0;
	sptd_store_destroy(st);
	if (!ok || sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		return 0;
	for (int i = 0; flag_tables[i] && ok; i++) {
		snprintf(sql, sizeof(sql), "ALTER TABLE %s DROP COLUMN flags", flag_tables[i]);
		ok = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
	}
	/* schema 3 added a table and columns */
	ok = ok && sqlite3_exec(db, "DROP TABLE ftrace_event", NULL, NULL, NULL) == SQLITE_OK;
	ok = ok && sqlite3_exec(db, "ALTER TABLE thread_state DROP COLUMN blocked_function; "
	                        "ALTER TABLE thread_state DROP COLUMN callsite_id; "
	                        "ALTER TABLE raw_sample DROP COLUMN kind", NULL, NULL, NULL) == SQLITE_OK;
	ok = ok && sqlite3_exec(db, "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
	                        NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_close(db);
	return ok;
}

/* Run @sql through the store: the first column of its first row (-1 NULL,
 * -999 failure). */
static int64_t store_int(struct sptd_store *st, const char *sql)
{
	struct sptd_store_stmt *q = NULL;
	int64_t v = -999;

	if (sptd_store_prepare(st, sql, &q) == 0 && sptd_store_step(q) == 1)
		v = sptd_store_column_type(q, 0) == SPTD_STORE_NULL ? -1 : sptd_store_column_int(q, 0);
	sptd_store_finalize(q);
	return v;
}

static void test_read_only(const char *path)
{
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	if (!st)
		return;
	/* every current column is there, the added ones NULL */
	CHECK_INT(store_int(st, "SELECT count(*) FROM irq_slice WHERE flags IS NULL"), 1);
	CHECK_INT(store_int(st, "SELECT count(*) FROM sched_slice WHERE flags IS NULL"), 1);
	CHECK_INT(store_int(st, "SELECT count(*) FROM thread_state WHERE flags IS NULL"), 1);
	CHECK_INT(store_int(st, "SELECT flags FROM softirq_slice"), -1);
	CHECK_INT(store_int(st, "SELECT ret FROM irq_slice"), 1);
	CHECK_INT(store_int(st, "SELECT waker_utid FROM thread_state"), 2);
	CHECK_INT(store_int(st, "SELECT count(*) FROM pragma_table_info('irq_slice')"), 8);
	/* a table added since reads as empty, with its columns */
	CHECK_INT(store_int(st, "SELECT count(*) FROM ftrace_event"), 0);
	CHECK_INT(store_int(st, "SELECT count(*) FROM pragma_table_info('ftrace_event')"), 6);
	/* and still nothing may write */
	CHECK(store_int(st, "INSERT INTO ftrace_event (ts) VALUES (1)") == -999);
	CHECK(store_int(st, "DELETE FROM irq_slice") == -999);
	sptd_store_destroy(st);
	/* the file is as it was */
	CHECK_INT(raw_int(path, "SELECT value FROM meta WHERE key = 'schema_version'"), 1);
	CHECK_INT(raw_flag_columns(path), 0);
	CHECK_INT(raw_int(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'ftrace_event'"), 0);
}

static void test_update(const char *path)
{
	struct sptd_store *st = NULL;

	/* not committed: nothing changes */
	CHECK_INT(sptd_store_open(path, 1, &st), 0);
	sptd_store_destroy(st);
	st = NULL;
	CHECK_INT(raw_int(path, "SELECT value FROM meta WHERE key = 'schema_version'"), 1);
	CHECK_INT(raw_flag_columns(path), 0);

	CHECK_INT(sptd_store_open(path, 1, &st), 0);
	if (!st)
		return;
	CHECK_INT(SPTD_STORE_ADD(st, irq_slice, 30, 7, 0, 12, "nvme0q1", -1,
	                         SPTD_SLICE_F_END_TRUNCATED), 0);
	CHECK_INT(SPTD_STORE_ADD(st, softirq_slice, 31, 2, 0, 1, "TIMER",
	                         SPTD_SLICE_F_START_TRUNCATED), 0);
	CHECK_INT(SPTD_STORE_ADD(st, thread_state, 40, 3, 1, "R", -1, 2,
	                         SPTD_SLICE_F_START_TRUNCATED), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 40, 3, 0, 1, NULL, 120,
	                         SPTD_SLICE_F_END_TRUNCATED), 0);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	CHECK_INT(raw_int(path, "SELECT value FROM meta WHERE key = 'schema_version'"),
	          SPTD_STORE_SCHEMA_VERSION);
	CHECK_INT(raw_flag_columns(path), 4);
	CHECK_INT(raw_int(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'ftrace_event'"), 1);
	CHECK_INT(raw_int(path, "SELECT count(*) FROM irq_slice WHERE flags IS NULL"), 1);
	CHECK_INT(raw_int(path, "SELECT flags FROM irq_slice WHERE irq = 12"), 2);
	CHECK_INT(raw_int(path, "SELECT flags FROM softirq_slice WHERE ts = 31"), 1);
	CHECK_INT(raw_int(path, "SELECT flags FROM thread_state WHERE ts = 40"), 1);
	CHECK_INT(raw_int(path, "SELECT flags FROM sched_slice WHERE ts = 40"), 2);
	/* a current file opens read-only without views in the way */
	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	CHECK_INT(store_int(st, "SELECT count(*) FROM temp.sqlite_schema"), 0);
	sptd_store_destroy(st);
}

int main(void)
{
	char dir[] = "/tmp/sptd-migrate-XXXXXX", path[128];

	if (!mkdtemp(dir))
		SPTD_SKIP("cannot make a temporary directory");
	snprintf(path, sizeof(path), "%s/v1.db", dir);
	CHECK(make_v1(path));
	CHECK_INT(raw_flag_columns(path), 0);
	test_read_only(path);
	test_update(path);
	unlink(path);
	rmdir(dir);
	return SPTD_TEST_END();
}
