/* test_store_pagefile.c — white-box: store_pagefile.c putting the slice
 * b-trees into a committed incident, and what a failure half-way leaves.
 *
 * A new incident has no free page, so each tree goes after the file's end
 * as soon as its builder is done (the others still building).  When a
 * later builder then fails (a page too small for its keys: SQL instead;
 * out of memory) or a write fails, the file must be exactly what SQLite
 * committed: cut back to its own pages, its bytes unchanged, so that the
 * SQL fallback works on it.  Builder failures are set by hand on trees
 * already built (they cannot be provoked with real rows).  Every file
 * written is read back with SQLite: integrity_check, every row, both
 * index orders. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store-pages.h"
#include "store_fixture.h"
#include "store_sql.h"

#define NROWS 30000

/* @n rows as a decode gives them: ids 1.., three threads, parents earlier. */
static void make_rows(struct sptd_store_slice_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct sptd_store_slice_row){
			.id = (int64_t)i + 1, .ts = (int64_t)(i * 37 % 100003), .dur = (int64_t)(i % 11),
			.utid = (int64_t)(i % 3) + 1, .parent_id = i ? (int64_t)(i / 2) : -1,
			.symbol_id = i % 5 ? (int64_t)(i % 97) : -1, .cpu = (int32_t)(i % 4),
			.depth = (int32_t)(i % 9), .flags = 0, .kind = sptd_store_pages_kind((unsigned)(i % 4)),
		};
}

static int64_t sql_int(const char *path, const char *sql)
{
	return atoll(sql_text(path, sql));
}

/* A committed incident with empty slice trees: its page count, page size
 * and the three roots.  0 or -1. */
static int committed(const char *name, int64_t *page_count, uint32_t *psz, int64_t root[3])
{
	static const char *const trees[3] = { "slice", "slice_utid_ts", "slice_parent_id" };
	struct sptd_store *st = fixture_create(name);
	const char *path = fixture_path(1, name);
	char sql[128];

	if (!st)
		return -1;
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	*page_count = sql_int(path, "PRAGMA page_count");
	*psz = (uint32_t)sql_int(path, "PRAGMA page_size");
	CHECK_INT(sql_int(path, "PRAGMA freelist_count"), 0);   /* the progressive case */
	for (int t = 0; t < 3; t++) {
		snprintf(sql, sizeof(sql), "SELECT rootpage FROM sqlite_schema WHERE name = '%s'",
		         trees[t]);
		root[t] = sql_int(path, sql);
	}
	return *page_count > 0 && root[0] > 1 && root[1] > 1 && root[2] > 1 ? 0 : -1;
}

/* Does @path hold exactly @rows (every column) with both indexes in
 * order, by SQLite's own reading? */
static int holds(const char *path, const struct sptd_store_slice_row *rows, size_t n)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	size_t i = 0;
	int ok = strcmp(sql_text(path, "PRAGMA integrity_check"), "ok") == 0;

	if (!ok)
		fprintf(stderr, "%s: %s\n", path, sql_text(path, "PRAGMA integrity_check"));
	if (ok && sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT id, ts, dur, cpu, utid, depth, parent_id, symbol_id, "
	                       "kind FROM slice ORDER BY id", -1, &q, NULL) == SQLITE_OK) {
		for (; ok && sqlite3_step(q) == SQLITE_ROW; i++) {
			const struct sptd_store_slice_row *r = &rows[i];

			ok = i < n && sqlite3_column_int64(q, 0) == r->id &&
			     sqlite3_column_int64(q, 1) == r->ts && sqlite3_column_int64(q, 2) == r->dur &&
			     sqlite3_column_int64(q, 3) == r->cpu && sqlite3_column_int64(q, 4) == r->utid &&
			     sqlite3_column_int64(q, 5) == r->depth &&
			     (r->parent_id < 0 ? sqlite3_column_type(q, 6) == SQLITE_NULL
			                       : sqlite3_column_int64(q, 6) == r->parent_id) &&
			     (r->symbol_id < 0 ? sqlite3_column_type(q, 7) == SQLITE_NULL
			                       : sqlite3_column_int64(q, 7) == r->symbol_id) &&
			     strcmp((const char *)sqlite3_column_text(q, 8),
			            r->kind) == 0;
		}
	} else {
		ok = 0;
	}
	sqlite3_finalize(q);
	sqlite3_close(db);
	if (ok && i != n)
		ok = 0;
	/* both indexes hold every row, in order (the walks see each once) */
	if (ok)
		ok = sql_int(path, "SELECT count(*) FROM slice INDEXED BY slice_utid_ts "
		                   "WHERE utid >= -9e18") == (int64_t)n &&
		     sql_int(path, "SELECT count(*) FROM slice INDEXED BY slice_parent_id "
		                   "WHERE parent_id IS NULL OR parent_id >= -9e18") == (int64_t)n &&
		     sql_int(path, "SELECT count(*) FROM slice s INDEXED BY slice_parent_id "
		                   "WHERE parent_id = 7") == 2;
	return ok;
}

/* Write the trees of @rows into a new committed file @name, with builder
 * @fail_tree's result set to @fail_err first (-1: none) and the file
 * opened with @oflags: what sptd_store_pages_write returned. */
static int write_case(const char *name, const struct sptd_store_slice_row *rows, size_t n,
                      int fail_tree, int fail_err, int oflags, unsigned char **before,
                      size_t *nbefore)
{
	struct sptd_store_pages *pg = NULL;
	int64_t page_count = 0, root[3];
	uint32_t psz = 0;
	int fd, w;

	*before = NULL;
	if (committed(name, &page_count, &psz, root) < 0) {
		CHECK(0);
		return -1000;
	}
	*before = sptd_test_slurp(fixture_path(1, name), nbefore);
	CHECK_INT(sptd_store_pages_start(rows, n, psz, &pg), 0);
	if (!pg)
		return -1000;
	if (fail_tree >= 0) {
		/* every builder done, then one of them "failed" */
		CHECK_INT(sptd_store_pages_wait(pg), 0);
		pg->tree[fail_tree].err = fail_err;
	}
	fd = open(fixture_path(1, name), oflags);
	CHECK(fd >= 0);
	w = sptd_store_pages_write(pg, fd, page_count, root);
	/* every builder is done when the write returns (nothing left to join) */
	for (int t = 0; t < SPTD_STORE_N_TREES; t++)
		CHECK_INT(pg->started[t], 0);
	if (fd >= 0)
		close(fd);
	sptd_store_pages_free(pg);
	return w;
}

/* The file @name is byte for byte @before. */
static int unchanged(const char *name, const unsigned char *before, size_t nbefore)
{
	size_t n = 0;
	unsigned char *now = sptd_test_slurp(fixture_path(1, name), &n);
	int same = now && before && n == nbefore && memcmp(now, before, n) == 0;

	if (!same)
		fprintf(stderr, "%s: %zu bytes before, %zu now\n", name, nbefore, n);
	free(now);
	return same;
}

int main(void)
{
	struct sptd_store_slice_row *rows = calloc(NROWS, sizeof(*rows));
	unsigned char *before = NULL;
	size_t nbefore = 0;
	int w;

	if (!rows)
		SPTD_SKIP("out of memory");
	make_rows(rows, NROWS);
	fixture_begin();

	/* every tree after the file's end, as its builder finishes */
	w = write_case("ok.db", rows, NROWS, -1, 0, O_RDWR, &before, &nbefore);
	CHECK_INT(w, 0);
	CHECK(holds(fixture_path(1, "ok.db"), rows, NROWS));
	free(before);

	/* a later builder fails after the table went out: the file is cut
	 * back to what SQLite committed, and SQL takes the rows (1) */
	for (int t = 0; t < SPTD_STORE_N_TREES; t++) {
		char name[32];

		snprintf(name, sizeof(name), "efbig%d.db", t);
		w = write_case(name, rows, NROWS, t, -EFBIG, O_RDWR, &before, &nbefore);
		CHECK_INT(w, 1);
		CHECK(unchanged(name, before, nbefore));
		CHECK_STR(sql_text(fixture_path(1, name), "PRAGMA integrity_check"), "ok");
		free(before);
	}
	/* out of memory in the last builder: said as such, the file as it was */
	w = write_case("nomem.db", rows, NROWS, 2, -ENOMEM, O_RDWR, &before, &nbefore);
	CHECK_INT(w, SPTD_STORE_PAGES_NOMEM);
	CHECK(unchanged("nomem.db", before, nbefore));
	free(before);
	/* a write that fails (here: a file not open for writing) is an error,
	 * never "written" */
	w = write_case("rdonly.db", rows, NROWS, -1, 0, O_RDONLY, &before, &nbefore);
	CHECK(w < 0 && w != -1000);
	CHECK(unchanged("rdonly.db", before, nbefore));
	free(before);

	fixture_end();
	free(rows);
	return SPTD_TEST_END();
}
