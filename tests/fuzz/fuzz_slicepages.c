/* fuzz_slicepages.c — slice rows through the b-tree page writer and through
 * SQL inserts must make the same table (issue 30, item 2).
 *
 * The input: byte 0 picks the page size (512 << (b % 8): 512 .. 65536),
 * then 48-byte records, one slice row each: id, ts, dur, utid, parent_id,
 * symbol_id (int64 each, so negative and huge values), cpu, depth, flags
 * (narrowed), kind (one of the four).  No record is an empty set of rows.
 * An incident is made at that page size, opened for update, and the rows
 * are added once with the page writer (sptd_store_slices_defer) and once
 * through SQL (SPTD_STORE_BULK=sql); both files must pass SQLite's
 * integrity_check and hold the same slice rows, or the store must have
 * refused the rows in both (a duplicate id, a negative dur).
 * SPTD_FUZZ_DEBUG=1 prints each input's outcome and keeps pages.db. */
#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "sptd_store.h"

#define REC 48
#define MAX_ROWS 3000

static char dir[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/sptd-fuzz-pages-XXXXXX");
	FUZZ_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	return 0;
}

static int64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return (int64_t)v;
}

/* A file of @page_size pages holding an empty incident, at @path. */
static int make_empty(const char *path, int page_size)
{
	struct sptd_store *st = NULL;
	sqlite3 *db = NULL;
	char sql[64];
	int ok;

	unlink(path);
	if (sptd_store_create(path, &st) < 0)
		return -1;
	ok = sptd_store_commit(st) == 0;
	sptd_store_destroy(st);
	snprintf(sql, sizeof(sql), "PRAGMA page_size = %d; VACUUM", page_size);
	ok = ok && sqlite3_open(path, &db) == SQLITE_OK &&
	     sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_close(db);
	return ok ? 0 : -1;
}

/* Add @rows to the incident at @path (@pages: through the page writer);
 * the add's or commit's result. */
static int write_rows(const char *path, const struct sptd_store_slice_row *rows, size_t n,
                      int pages)
{
	struct sptd_store *st = NULL;
	int ret;

	if (pages)
		unsetenv("SPTD_STORE_BULK");
	else
		setenv("SPTD_STORE_BULK", "sql", 1);
	ret = sptd_store_open(path, 1, &st);
	FUZZ_CHECK(ret == 0, "open for update: %d %s", ret, sptd_store_errmsg(NULL));
	ret = sptd_store_slices_defer(st);
	if (ret >= 0)
		ret = sptd_store_slices_add(st, rows, n);
	if (ret >= 0)
		ret = sptd_store_commit(st);
	/* the page writer really wrote them (one row per id: none refused) */
	FUZZ_CHECK(ret < 0 || !pages || sptd_store_slices_paged(st) == n,
	           "%zu of %zu rows written as pages", sptd_store_slices_paged(st), n);
	sptd_store_destroy(st);
	return ret < 0 ? ret : 0;
}

/* Every slice row of @path as text, and integrity_check's word. */
static char *dump(const char *path, char *check, size_t check_len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	FUZZ_CHECK(f && sqlite3_open(path, &db) == SQLITE_OK, "open %s", path);
	FUZZ_CHECK(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &q, NULL) == SQLITE_OK &&
	           sqlite3_step(q) == SQLITE_ROW, "integrity_check");
	snprintf(check, check_len, "%s", (const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	FUZZ_CHECK(sqlite3_prepare_v2(db, "SELECT quote(id), quote(ts), quote(dur), quote(cpu), "
	                              "quote(utid), quote(depth), quote(parent_id), "
	                              "quote(symbol_id), quote(kind), quote(flags) FROM slice "
	                              "ORDER BY id", -1, &q, NULL) == SQLITE_OK, "select");
	while (sqlite3_step(q) == SQLITE_ROW)
		for (int c = 0; c < 10; c++)
			fprintf(f, "%s%c", (const char *)sqlite3_column_text(q, c), c == 9 ? '\n' : ' ');
	sqlite3_finalize(q);
	sqlite3_close(db);
	fclose(f);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const kinds[] = { SPTD_SLICE_USER, SPTD_SLICE_KERNEL,
	                                     SPTD_SLICE_SYSCALL, SPTD_SLICE_IRQ };
	static struct sptd_store_slice_row rows[MAX_ROWS];
	char a[96], b[96], check_a[64], check_b[64];
	size_t n = 0;
	int page_size, ra, rb;
	char *da, *db;

	if (size < 1 + REC)
		return 0;
	page_size = 512 << (data[0] % 8);
	for (const uint8_t *p = data + 1; p + REC <= data + size && n < MAX_ROWS; p += REC, n++)
		rows[n] = (struct sptd_store_slice_row){
			.id = get64(p), .ts = get64(p + 8), .dur = get64(p + 16), .utid = get64(p + 24),
			.parent_id = get64(p + 32),
			.symbol_id = (int64_t)(int8_t)p[40] * (int64_t)(p[41] << 20),
			.cpu = (int8_t)p[42], .depth = p[43], .flags = (int8_t)p[44],
			.kind = kinds[p[45] % 4],
		};
	snprintf(a, sizeof(a), "%s/pages.db", dir);
	snprintf(b, sizeof(b), "%s/sql.db", dir);
	FUZZ_CHECK(make_empty(a, page_size) == 0 && make_empty(b, page_size) == 0,
	           "empty incident at %d", page_size);
	ra = write_rows(a, rows, n, 1);
	rb = write_rows(b, rows, n, 0);
	if (getenv("SPTD_FUZZ_DEBUG"))
		fprintf(stderr, "%zu rows, page size %d: pages %d, sql %d\n", n, page_size, ra, rb);
	FUZZ_CHECK((ra == 0) == (rb == 0), "pages %d, sql %d", ra, rb);
	if (ra == 0) {
		da = dump(a, check_a, sizeof(check_a));
		db = dump(b, check_b, sizeof(check_b));
		FUZZ_CHECK(strcmp(check_a, "ok") == 0 && strcmp(check_b, "ok") == 0,
		           "integrity_check: pages %s, sql %s (page size %d)", check_a, check_b,
		           page_size);
		FUZZ_CHECK(strcmp(da, db) == 0, "%zu rows differ at page size %d", n, page_size);
		free(da);
		free(db);
	}
	if (!getenv("SPTD_FUZZ_DEBUG"))
		unlink(a);
	unlink(b);
	return 0;
}
