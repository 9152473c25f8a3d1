/* test_store_pagecols.c — the slice page writer follows the slice table's
 * description (issue 30, item 2).
 *
 * Built against a test build of the store (sptd_store_note, compiled with
 * SPTD_STORE_TEST_SLICE_NOTE) whose slice table has one more column,
 * `note INT NULL` (< 0 stores NULL), described by one line in
 * store_tables.c and a field of struct sptd_store_slice_row.  Slice rows
 * written at the commit as b-tree pages must carry it: every row reads
 * back with its note, the pages were really written
 * (sptd_store_slices_paged), and SQLite's integrity_check says ok.  A
 * record encoder of its own (the ten columns it knew) wrote records without
 * the note, which SQLite reads as NULL. */
#include <sqlite3.h>

#include "store_fixture.h"
#include "store_sql.h"

#ifndef SPTD_STORE_TEST_SLICE_NOTE
#error "test_store_pagecols needs the store built with SPTD_STORE_TEST_SLICE_NOTE"
#endif

#define NROWS 4000

/* Row @i's note: every integer width, negatives (NULL), huge values. */
static int64_t note_of(size_t i)
{
	static const int64_t notes[] = { 0, 1, 127, 128, 32768, 2147483648LL, INT64_MAX, -1,
	                                 INT64_MIN, 42 };

	int64_t v = notes[i % (sizeof(notes) / sizeof(notes[0]))];

	/* some rows moved off the table's values, never past INT64_MAX */
	if (i % 7 == 3 && v >= 0 && v <= INT64_MAX - (int64_t)i)
		v += (int64_t)i;
	return v;
}

/* Does slice of @path hold rows 1..NROWS with their notes? */
static int notes_hold(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	size_t i = 0;
	int ok = 1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT id, note, kind FROM slice ORDER BY id", -1, &q,
	                       NULL) != SQLITE_OK)
		ok = 0;
	for (; ok && sqlite3_step(q) == SQLITE_ROW; i++) {
		int64_t want = note_of(i);

		ok = sqlite3_column_int64(q, 0) == (int64_t)i + 1 &&
		     (want < 0 ? sqlite3_column_type(q, 1) == SQLITE_NULL
		               : sqlite3_column_type(q, 1) == SQLITE_INTEGER &&
		                 sqlite3_column_int64(q, 1) == want) &&
		     strcmp((const char *)sqlite3_column_text(q, 2), SPTD_SLICE_KERNEL) == 0;
		if (!ok)
			fprintf(stderr, "row %zu: note %s, want %" PRId64 "\n", i + 1,
			        sqlite3_column_text(q, 1) ? (const char *)sqlite3_column_text(q, 1) :
			        "NULL", want);
	}
	sqlite3_finalize(q);
	sqlite3_close(db);
	return ok && i == NROWS;
}

/* NROWS rows through the page writer (@paged 1) or SQL (0) into @name. */
static void write_case(const char *name, int paged)
{
	struct sptd_store_slice_row *rows = calloc(NROWS, sizeof(*rows));
	struct sptd_store *st = fixture_create(name);
	char path[256];

	CHECK(rows != NULL);
	if (!st || !rows) {
		sptd_store_destroy(st);
		free(rows);
		return;
	}
	snprintf(path, sizeof(path), "%s", sptd_store_path(st));
	for (size_t i = 0; i < NROWS; i++)
		rows[i] = (struct sptd_store_slice_row){
			.id = (int64_t)i + 1, .ts = (int64_t)i * 10, .dur = 5, .cpu = (int)(i % 3),
			.utid = 1, .depth = 0, .parent_id = -1, .symbol_id = -1,
			.kind = SPTD_SLICE_KERNEL, .flags = 0, .note = note_of(i),
		};
	if (paged)
		CHECK_INT(sptd_store_slices_defer(st), 0);
	CHECK_INT(sptd_store_slices_add(st, rows, NROWS), 0);
	CHECK_INT(sptd_store_commit(st), 0);
	CHECK_INT((int64_t)sptd_store_slices_paged(st), paged ? NROWS : 0);
	sptd_store_destroy(st);
	free(rows);
	CHECK_STR(sql_text(path, "PRAGMA integrity_check"), "ok");
	CHECK(notes_hold(path));
}

int main(void)
{
	fixture_begin();
	write_case("pages.db", 1);
	write_case("sql.db", 0);
	fixture_end();
	return SPTD_TEST_END();
}
