/* test_store_pages.c — slice rows written at the commit as b-tree pages
 * (store_bulk.c) make a file SQLite itself finds whole, holding exactly
 * the rows given, in tables and indexes it reads as its own:
 *
 * - PRAGMA integrity_check (every page used once, cells ordered, every
 *   index entry matching its row) says ok;
 * - every row reads back as given, and each index walked in its order
 *   gives the ids in the order a sort of the rows does;
 * - the pages were really written (sptd_store_slices_paged), in files of
 *   16 KiB pages (new) and 512-byte pages (an update of a file made so:
 *   trees four levels deep), for 1 to 5000 rows around page boundaries;
 * - whatever the writer must not write into (an index of the user's on
 *   slice, an index of ours defined otherwise, rows already in the
 *   table) goes through SQL, with the same checks;
 * - reads before the commit see the rows kept; an id twice fails the
 *   commit and publishes nothing; SPTD_STORE_BULK=sql keeps SQL. */
#include <sqlite3.h>

#include "store_fixture.h"
#include "store_sql.h"

/* A row of the test, and the value a row gets from its number. */
static void make_row(struct sptd_store_slice_row *r, int64_t id, uint64_t seed)
{
	static const char *const kinds[] = { SPTD_SLICE_USER, SPTD_SLICE_KERNEL,
	                                     SPTD_SLICE_SYSCALL, SPTD_SLICE_IRQ };
	/* values crossing every integer width, and the small ones SQLite
	 * stores in no bytes */
	static const int64_t edges[] = { 0, 1, 2, 127, 128, 32767, 32768, 8388607, 8388608,
	                                 2147483647, 2147483648LL, 140737488355327LL,
	                                 140737488355328LL, INT64_MAX, -1, -128, -129,
	                                 INT64_MIN };
	uint64_t h = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)id * 0xbf58476d1ce4e5b9ULL;

	h ^= h >> 31;
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->utid = (int64_t)(h % 7);
	r->ts = (h >> 8) % 3 ? (int64_t)((h >> 12) % 100000) : edges[(h >> 20) % 18];
	r->dur = (int64_t)((h >> 24) % 5000);
	r->cpu = (int)((h >> 30) % 4);
	r->depth = (int)((h >> 33) % 9);
	r->parent_id = (h >> 37) % 4 ? (int64_t)((h >> 40) % (uint64_t)(id + 1)) : -1;
	r->symbol_id = (h >> 45) % 5 ? (int64_t)((h >> 48) % 100000) : -1;
	if ((h >> 52) % 7 == 0)
		r->symbol_id = edges[(h >> 55) % 14];
	r->kind = kinds[(h >> 58) % 4];
	r->flags = (int)((h >> 60) % 16);
}

/* qsort orders of the rows as each index walks them. */
static int by_utid_ts(const void *pa, const void *pb)
{
	const struct sptd_store_slice_row *a = pa, *b = pb;

	if (a->utid != b->utid)
		return a->utid < b->utid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static int by_parent(const void *pa, const void *pb)
{
	const struct sptd_store_slice_row *a = pa, *b = pb;
	int an = a->parent_id < 0, bn = b->parent_id < 0;

	if (an != bn)
		return an ? -1 : 1;
	if (!an && a->parent_id != b->parent_id)
		return a->parent_id < b->parent_id ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static int by_id(const void *pa, const void *pb)
{
	const struct sptd_store_slice_row *a = pa, *b = pb;

	return (a->id > b->id) - (a->id < b->id);
}

/* Run @sql (no rows) on @path; 0 or -1. */
static int sql_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		fprintf(stderr, "%s: %s: %s\n", path, sql, sqlite3_errmsg(db));
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

/* Does file @path hold exactly @rows (@n, any order), each index walking
 * them in its order, and does SQLite find it whole?  1 yes. */
static int file_holds(const char *path, struct sptd_store_slice_row *rows, size_t n)
{
	static const char *const walks[] = {
		"SELECT id, ts, dur, cpu, utid, depth, parent_id, symbol_id, kind, flags "
		"FROM slice ORDER BY id",
		"SELECT id FROM slice INDEXED BY slice_utid_ts WHERE utid >= -9e18 "
		"ORDER BY utid, ts",
		"SELECT id FROM slice INDEXED BY slice_parent_id ORDER BY parent_id",
	};
	int (*const orders[])(const void *, const void *) = { by_id, by_utid_ts, by_parent };
	sqlite3 *db = NULL;
	int ok = 1;

	if (strcmp(sql_text(path, "PRAGMA integrity_check"), "ok") != 0) {
		fprintf(stderr, "%s: integrity_check: %s\n", path,
		        sql_text(path, "PRAGMA integrity_check"));
		return 0;
	}
	/* no interior page without a cell (SQLite makes none; dbstat may be
	 * missing from this SQLite: "" then) */
	if (strcmp(sql_text(path, "SELECT count(*) FROM dbstat WHERE pagetype = 'internal' "
	                          "AND ncell = 0"), "0") != 0 &&
	    strcmp(sql_text(path, "SELECT count(*) FROM dbstat"), "") != 0) {
		fprintf(stderr, "%s: an interior page without cells\n", path);
		return 0;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return 0;
	for (int w = 0; w < 3 && ok; w++) {
		sqlite3_stmt *q = NULL;
		size_t i = 0;

		qsort(rows, n, sizeof(*rows), orders[w]);
		if (sqlite3_prepare_v2(db, walks[w], -1, &q, NULL) != SQLITE_OK) {
			fprintf(stderr, "%s: %s\n", walks[w], sqlite3_errmsg(db));
			ok = 0;
		}
		while (ok && sqlite3_step(q) == SQLITE_ROW) {
			const struct sptd_store_slice_row *r = &rows[i];
			const char *kind = (const char *)sqlite3_column_text(q, 8);

			if (i >= n || sqlite3_column_int64(q, 0) != r->id) {
				fprintf(stderr, "walk %d row %zu: id %lld\n", w, i,
				        (long long)sqlite3_column_int64(q, 0));
				ok = 0;
			} else if (w == 0 &&
			           (sqlite3_column_int64(q, 1) != r->ts ||
			            sqlite3_column_int64(q, 2) != r->dur ||
			            sqlite3_column_int(q, 3) != r->cpu ||
			            sqlite3_column_int64(q, 4) != r->utid ||
			            sqlite3_column_int(q, 5) != r->depth ||
			            (sqlite3_column_type(q, 6) == SQLITE_NULL) != (r->parent_id < 0) ||
			            (r->parent_id >= 0 && sqlite3_column_int64(q, 6) != r->parent_id) ||
			            (sqlite3_column_type(q, 7) == SQLITE_NULL) != (r->symbol_id < 0) ||
			            (r->symbol_id >= 0 && sqlite3_column_int64(q, 7) != r->symbol_id) ||
			            sqlite3_column_type(q, 1) != SQLITE_INTEGER ||
			            sqlite3_column_type(q, 8) != SQLITE_TEXT || !kind ||
			            strcmp(kind, r->kind) != 0 || sqlite3_column_int(q, 9) != r->flags)) {
				fprintf(stderr, "row id %lld differs\n", (long long)r->id);
				ok = 0;
			}
			i++;
		}
		sqlite3_finalize(q);
		if (ok && i != n) {
			fprintf(stderr, "walk %d: %zu rows, expected %zu\n", w, i, n);
			ok = 0;
		}
	}
	sqlite3_close(db);
	return ok;
}

/* @n rows of @seed with ids shuffled (the commit orders them). */
static struct sptd_store_slice_row *rows_make(size_t n, uint64_t seed)
{
	struct sptd_store_slice_row *rows = calloc(n ? n : 1, sizeof(*rows));

	for (size_t i = 0; rows && i < n; i++)
		make_row(&rows[i], (int64_t)(i * 3 + 1), seed);
	for (size_t i = n; rows && i > 1; i--) {
		size_t j = (size_t)((seed * 2654435761u + i * 40503u) % i);
		struct sptd_store_slice_row t = rows[i - 1];

		rows[i - 1] = rows[j];
		rows[j] = t;
	}
	return rows;
}

/* @n rows as one decode makes them: a few threads, each one's calls in
 * time order but for every 500th (a frame inferred for a return on an
 * empty stack starts early), so each thread's (utid, ts) has a few
 * ascending runs. */
static struct sptd_store_slice_row *rows_nearly_sorted(size_t n)
{
	struct sptd_store_slice_row *rows = calloc(n ? n : 1, sizeof(*rows));

	for (size_t i = 0; rows && i < n; i++) {
		make_row(&rows[i], (int64_t)i + 1, 77);
		rows[i].utid = (int64_t)(i * 3 / n) + 1;
		rows[i].ts = i % 500 == 499 ? (int64_t)(i % 7) : (int64_t)i * 10;
		rows[i].parent_id = i ? (int64_t)i - (int64_t)(i % 5) : -1;
	}
	return rows;
}

/* Add @rows in a few calls (as the writer does). */
static int rows_add(struct sptd_store *st, const struct sptd_store_slice_row *rows, size_t n)
{
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i += 777)
		ret = sptd_store_slices_add(st, rows + i, n - i < 777 ? n - i : 777);
	return ret;
}

/* A new incident of @n rows, deferred; @paged: they must go as pages. */
static void new_file(const char *name, size_t n, uint64_t seed, int paged)
{
	struct sptd_store_slice_row *rows = rows_make(n, seed);
	struct sptd_store *st = fixture_create(name);
	int64_t count = -1, next = -1;

	if (!st || !rows) {
		CHECK(0);
		free(rows);
		sptd_store_destroy(st);
		return;
	}
	CHECK_INT(sptd_store_slices_defer(st), 0);
	CHECK_INT(rows_add(st, rows, n), 0);
	/* the kept rows count before the commit, without going to SQL */
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SLICE, &count), 0);
	CHECK_INT(count, (long long)n);
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_SLICE, &next), 0);
	CHECK_INT(next, n ? (long long)(3 * (n - 1) + 2) : 1);
	CHECK_INT(sptd_store_commit(st), 0);
	CHECK_INT(sptd_store_slices_paged(st), paged ? (long long)n : 0);
	/* the connection reads the pages written behind it */
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SLICE, &count), 0);
	CHECK_INT(count, (long long)n);
	sptd_store_destroy(st);
	CHECK(file_holds(fixture_path(1, name), rows, n));
	free(rows);
}

/* Update @name: clear slice (after @sql on the file, if any), keep @n
 * new rows; @paged as in new_file. */
static void update_file(const char *name, const char *sql, size_t n, uint64_t seed, int paged)
{
	struct sptd_store_slice_row *rows = rows_make(n, seed);
	struct sptd_store *st = NULL;
	char path[256];

	snprintf(path, sizeof(path), "%s", fixture_path(1, name));
	if (sql)
		CHECK_INT(sql_exec(path, sql), 0);
	CHECK_INT(sptd_store_open(path, 1, &st), 0);
	if (!st || !rows) {
		CHECK(0);
		free(rows);
		sptd_store_destroy(st);
		return;
	}
	CHECK_INT(sptd_store_table_clear(st, "slice"), 0);
	CHECK_INT(sptd_store_slices_defer(st), 0);
	CHECK_INT(rows_add(st, rows, n), 0);
	CHECK_INT(sptd_store_commit(st), 0);
	CHECK_INT(sptd_store_slices_paged(st), paged ? (long long)n : 0);
	sptd_store_destroy(st);
	CHECK(file_holds(path, rows, n));
	free(rows);
}

int main(void)
{
	struct sptd_store *st;
	struct sptd_store_slice_row r[3];
	int64_t count = -1;
	size_t sizes[] = { 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 40, 41, 100, 777, 5000 };

	fixture_begin();
	unsetenv("SPTD_STORE_BULK");

	/* new files, 16 KiB pages: one leaf, then two levels */
	new_file("one.db", 1, 1, 1);
	new_file("small.db", 500, 2, 1);
	new_file("big.db", 200000, 3, 1);

	/* (utid, ts) nearly in id order: merged, not sorted from scratch */
	st = fixture_create("nearly.db");
	if (st) {
		struct sptd_store_slice_row *rows = rows_nearly_sorted(30000);

		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(rows_add(st, rows, 30000), 0);
		CHECK_INT(sptd_store_commit(st), 0);
		CHECK_INT(sptd_store_slices_paged(st), 30000);
		sptd_store_destroy(st);
		CHECK(file_holds(fixture_path(1, "nearly.db"), rows, 30000));
		free(rows);
	}

	/* 512-byte pages: many levels; sizes around a leaf's worth (a 512-byte
	 * leaf holds about 11-20 rows, so the last page's separator moves) */
	new_file("p512.db", 10, 4, 1);
	CHECK_INT(sql_exec(fixture_path(1, "p512.db"), "PRAGMA page_size=512; VACUUM"), 0);
	CHECK_STR(sql_text(fixture_path(1, "p512.db"), "PRAGMA page_size"), "512");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		update_file("p512.db", NULL, sizes[i], 10 + i, 1);
	/* every count up to a few leaves (a full leaf with one key left over:
	 * that key cannot be a separator), and counts where the first
	 * interior page leaves one child over (about 32 leaves of 44 keys) */
	for (size_t n = 24; n <= 160; n++)
		update_file("p512.db", NULL, n, 1000 + n, 1);
	for (size_t n = 880; n <= 960; n += 2) /* the table's: ~56 leaves of 16 rows */
		update_file("p512.db", NULL, n, 1000 + n, 1);
	for (size_t n = 1300; n <= 1560; n += 2)
		update_file("p512.db", NULL, n, 1000 + n, 1);
	update_file("p512.db", NULL, 60000, 99, 1);
	CHECK(atoi(sql_text(fixture_path(1, "p512.db"),
	                    "SELECT max(depth) FROM (SELECT 0 AS depth UNION ALL SELECT "
	                    "length(path) - length(replace(path, '/', '')) FROM dbstat "
	                    "WHERE name = 'slice_utid_ts')")) >= 3 ||
	      strcmp(sql_text(fixture_path(1, "p512.db"), "SELECT count(*) FROM dbstat"), "") == 0);

	/* decoded again and again: the old slice pages (free after the
	 * clear) are reused, the file does not grow each time */
	new_file("again.db", 20000, 21, 1);
	{
		struct stat sb0, sb;

		CHECK_INT(stat(fixture_path(1, "again.db"), &sb0), 0);
		for (int i = 0; i < 4; i++) {
			update_file("again.db", NULL, 20000, 22 + (uint64_t)i, 1);
			CHECK_INT(stat(fixture_path(1, "again.db"), &sb), 0);
			if (sb.st_size > sb0.st_size + 4 * 16384)
				fprintf(stderr, "again.db grew: %lld -> %lld\n", (long long)sb0.st_size,
				        (long long)sb.st_size);
			CHECK(sb.st_size <= sb0.st_size + 4 * 16384);
		}
		/* fewer rows: free pages are left over, a freelist again */
		update_file("again.db", NULL, 3000, 30, 1);
		CHECK(atoi(sql_text(fixture_path(1, "again.db"), "PRAGMA freelist_count")) > 0);
		update_file("again.db", NULL, 30000, 31, 1);
		CHECK_STR(sql_text(fixture_path(1, "again.db"), "PRAGMA freelist_count"), "0");
	}

	/* not ours to write into: through SQL, same truth */
	new_file("user.db", 300, 5, 1);
	update_file("user.db", "CREATE INDEX mine ON slice(dur)", 3000, 6, 0);
	CHECK_STR(sql_text(fixture_path(1, "user.db"), "SELECT count(*) FROM slice INDEXED BY mine "
	                                               "WHERE dur >= 0"), "3000");
	/* a trigger on slice: SQL (where the store's guard keeps it from
	 * running) */
	new_file("trig.db", 300, 9, 1);
	update_file("trig.db", "CREATE TABLE n(x); CREATE TRIGGER t AFTER INSERT ON slice "
	            "BEGIN INSERT INTO n VALUES (new.id); END", 100, 10, 0);
	CHECK_STR(sql_text(fixture_path(1, "trig.db"), "SELECT count(*) FROM n"), "0");
	/* an index of ours defined otherwise goes with the clear (and comes
	 * back as ours); kept, it sends the rows through SQL */
	new_file("redef.db", 300, 7, 1);
	update_file("redef.db", "DROP INDEX slice_utid_ts; CREATE INDEX slice_utid_ts ON slice(ts)",
	            3000, 8, 1);
	st = fixture_create("redef2.db");
	if (st) {
		struct sptd_store_slice_row *rows = rows_make(1000, 13);
		struct sptd_store_stmt *q = NULL;

		CHECK_INT(sptd_store_prepare(st, "CREATE INDEX slice_parent_id ON slice(depth)", &q),
		          0);
		CHECK_INT(sptd_store_step(q), 0);
		sptd_store_finalize(q);
		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(rows_add(st, rows, 1000), 0);
		CHECK_INT(sptd_store_commit(st), 0);
		CHECK_INT(sptd_store_slices_paged(st), 0);
		sptd_store_destroy(st);
		CHECK_STR(sql_text(fixture_path(1, "redef2.db"), "PRAGMA integrity_check"), "ok");
		CHECK_STR(sql_text(fixture_path(1, "redef2.db"), "SELECT count(*) FROM slice "
		                   "INDEXED BY slice_parent_id WHERE depth >= 0"), "1000");
		free(rows);
	}

	/* a row inserted through SQL before: the table is not empty */
	st = fixture_create("mixed.db");
	if (st) {
		struct sptd_store_slice_row *rows = rows_make(1000, 11);

		CHECK_INT(SPTD_STORE_ADD(st, slice, 0, 5, 1, 0, 0, 0, -1, -1, SPTD_SLICE_USER, 0), 0);
		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(rows_add(st, rows, 1000), 0);
		CHECK_INT(sptd_store_commit(st), 0);
		CHECK_INT(sptd_store_slices_paged(st), 0);
		sptd_store_destroy(st);
		CHECK_STR(sql_text(fixture_path(1, "mixed.db"), "PRAGMA integrity_check"), "ok");
		CHECK_STR(sql_text(fixture_path(1, "mixed.db"), "SELECT count(*) FROM slice"), "1001");
		free(rows);
	}

	/* a query before the commit sees the kept rows (they go to SQL) */
	st = fixture_create("query.db");
	if (st) {
		struct sptd_store_stmt *q = NULL;

		make_row(&r[0], 1, 1);
		make_row(&r[1], 2, 1);
		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(sptd_store_slices_add(st, r, 2), 0);
		CHECK_INT(sptd_store_prepare(st, "SELECT count(*) FROM slice", &q), 0);
		CHECK_INT(sptd_store_step(q), 1);
		CHECK_INT(sptd_store_column_int(q, 0), 2);
		sptd_store_finalize(q);
		CHECK_INT(sptd_store_commit(st), 0);
		CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SLICE, &count), 0);
		CHECK_INT(count, 2);
		sptd_store_destroy(st);
	}

	/* -p's filter: the kept rows of other processes' threads go, in
	 * memory; the rest are still written as pages */
	st = fixture_create("pids.db");
	if (st) {
		struct sptd_store_slice_row *rows = rows_make(4000, 16);
		size_t kept = 0;

		for (size_t i = 0; i < 4000; i++)
			rows[i].utid = (int64_t)(i % 4) + 1;
		CHECK_INT(SPTD_STORE_ADD(st, process, 1, 100, "a", "a"), 0);
		CHECK_INT(SPTD_STORE_ADD(st, process, 2, 200, "b", "b"), 0);
		CHECK_INT(SPTD_STORE_ADD(st, thread, 1, 100, 1, "a"), 0);
		CHECK_INT(SPTD_STORE_ADD(st, thread, 2, 101, 1, "a2"), 0);
		CHECK_INT(SPTD_STORE_ADD(st, thread, 3, 200, 2, "b"), 0);
		CHECK_INT(SPTD_STORE_ADD(st, thread, 4, 300, -1, "c"), 0);
		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(rows_add(st, rows, 4000), 0);
		CHECK_INT(sptd_store_keep_pids(st, (const int[]){ 100 }, 1), 0);
		CHECK_INT(sptd_store_commit(st), 0);
		for (size_t i = 0; i < 4000; i++)
			if (rows[i].utid <= 2)
				rows[kept++] = rows[i];
		CHECK_INT(kept, 2000);
		CHECK_INT(sptd_store_slices_paged(st), 2000);
		sptd_store_destroy(st);
		CHECK(file_holds(fixture_path(1, "pids.db"), rows, kept));
		free(rows);
	}

	/* built early (sptd_store_slices_ready), then the rows change: more
	 * rows, -p's filter, a clear: the commit writes the rows as they are */
	for (int change = 0; change < 4; change++) {
		char name[32];
		struct sptd_store_slice_row *rows = rows_make(6000, 40 + (uint64_t)change);
		size_t n = change == 1 ? 6000 : 4000, kept = 0;

		snprintf(name, sizeof(name), "ready%d.db", change);
		st = fixture_create(name);
		if (!st || !rows) {
			CHECK(0);
			free(rows);
			sptd_store_destroy(st);
			continue;
		}
		for (size_t i = 0; i < 6000; i++)
			rows[i].utid = (int64_t)(i % 2) + 1;
		CHECK_INT(SPTD_STORE_ADD(st, process, 1, 100, "a", "a"), 0);
		CHECK_INT(SPTD_STORE_ADD(st, thread, 1, 100, 1, "a"), 0);
		CHECK_INT(SPTD_STORE_ADD(st, thread, 2, 200, -1, "b"), 0);
		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(rows_add(st, rows, 4000), 0);
		CHECK_INT(sptd_store_slices_ready(st), 0);
		if (change == 1)      /* 2,000 more after the trees started */
			CHECK_INT(rows_add(st, rows + 4000, 2000), 0);
		else if (change == 2) /* only process 100's threads */
			CHECK_INT(sptd_store_keep_pids(st, (const int[]){ 100 }, 1), 0);
		else if (change == 3) { /* cleared and filled again */
			CHECK_INT(sptd_store_table_clear(st, "slice"), 0);
			CHECK_INT(rows_add(st, rows + 2000, 4000), 0);
			memmove(rows, rows + 2000, 4000 * sizeof(*rows));
		}
		CHECK_INT(sptd_store_commit(st), 0);
		for (size_t i = 0; i < n; i++)
			if (change != 2 || rows[i].utid == 1)
				rows[kept++] = rows[i];
		CHECK_INT(sptd_store_slices_paged(st), (long long)kept);
		sptd_store_destroy(st);
		CHECK(file_holds(fixture_path(1, name), rows, kept));
		free(rows);
	}
	/* ids one decode gives (dense, from 5), in the order slices end (not
	 * id order): placed, not sorted; the same with one id twice (another
	 * then missing) still fails as SQL would */
	for (int dup = 0; dup < 2; dup++) {
		size_t n = 20000;
		struct sptd_store_slice_row *rows = rows_make(n, 31 + (uint64_t)dup);

		st = fixture_create(dup ? "dense-twice.db" : "dense.db");
		if (!st || !rows) {
			CHECK(0);
			free(rows);
			sptd_store_destroy(st);
			break;
		}
		for (size_t i = 0; i < n; i++)
			rows[i].id = (int64_t)(i * 7919 % n) + 5;   /* a permutation */
		if (dup)
			rows[n / 2].id = rows[n / 3].id;
		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(rows_add(st, rows, n), 0);
		CHECK_INT(sptd_store_slices_ready(st), 0);
		if (dup) {
			char want[64];

			snprintf(want, sizeof(want), "slice id %lld twice", (long long)rows[n / 3].id);
			CHECK_INT(sptd_store_commit(st), -EINVAL);
			CHECK(strstr(sptd_store_errmsg(st), want) != NULL);
			sptd_store_destroy(st);
			CHECK(access(fixture_path(1, "dense-twice.db"), F_OK) < 0);
		} else {
			CHECK_INT(sptd_store_commit(st), 0);
			CHECK_INT(sptd_store_slices_paged(st), (long long)n);
			sptd_store_destroy(st);
			CHECK(file_holds(fixture_path(1, "dense.db"), rows, n));
		}
		free(rows);
	}

	/* built early, then cleared with nothing added after: the trees go
	 * with the rows they were built from (kept, they leak at destroy and
	 * their builders read the rows the clear freed: the sanitizer build
	 * says so) */
	st = fixture_create("ready_clear.db");
	if (st) {
		struct sptd_store_slice_row *rows = rows_make(4000, 50);

		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(rows_add(st, rows, 4000), 0);
		CHECK_INT(sptd_store_slices_ready(st), 0);
		CHECK_INT(sptd_store_table_clear(st, "slice"), 0);
		CHECK_INT(sptd_store_commit(st), 0);
		CHECK_INT(sptd_store_slices_paged(st), 0);
		sptd_store_destroy(st);
		CHECK_STR(sql_text(fixture_path(1, "ready_clear.db"), "SELECT count(*) FROM slice"), "0");
		free(rows);
	}

	/* an id twice, built early: the commit still says so */
	st = fixture_create("twice2.db");
	if (st) {
		make_row(&r[0], 7, 1);
		make_row(&r[1], 7, 2);
		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(sptd_store_slices_add(st, r, 2), 0);
		CHECK_INT(sptd_store_slices_ready(st), 0);
		CHECK_INT(sptd_store_commit(st), -EINVAL);
		CHECK(strstr(sptd_store_errmsg(st), "slice id 7 twice") != NULL);
		sptd_store_destroy(st);
	}

	/* an id twice: the commit fails, nothing is published */
	st = fixture_create("twice.db");
	if (st) {
		make_row(&r[0], 7, 1);
		make_row(&r[1], 8, 1);
		make_row(&r[2], 7, 2);
		CHECK_INT(sptd_store_slices_defer(st), 0);
		CHECK_INT(sptd_store_slices_add(st, r, 3), 0);
		CHECK_INT(sptd_store_commit(st), -EINVAL);
		CHECK(strstr(sptd_store_errmsg(st), "slice id 7 twice") != NULL);
		sptd_store_destroy(st);
		CHECK(access(fixture_path(1, "twice.db"), F_OK) < 0);
	}

	/* more rows than may be kept (a number: the limit): SQL from there */
	setenv("SPTD_STORE_BULK", "1000", 1);
	new_file("limit.db", 5000, 14, 0);
	new_file("under.db", 1000, 15, 1);
	/* SPTD_STORE_BULK=sql: the SQL path, the same file content */
	setenv("SPTD_STORE_BULK", "sql", 1);
	new_file("sql.db", 20000, 12, 0);
	unsetenv("SPTD_STORE_BULK");

	fixture_end();
	return SPTD_TEST_END();
}
