/* store_sql.h — reading an incident back with SQLite itself, for the
 * tests of the slice pages (test_store_pages, test_store_pagefile). */
#ifndef SPTD_STORE_SQL_H
#define SPTD_STORE_SQL_H

#include <stdio.h>

#include <sqlite3.h>

/* The first column of @sql's first row on @path as text ("" when there is
 * none); a static buffer, valid until the next call. */
static inline const char *sql_text(const char *path, const char *sql)
{
	static char out[256];
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;

	out[0] = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW &&
	    sqlite3_column_text(q, 0))
		snprintf(out, sizeof(out), "%s", (const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	sqlite3_close(db);
	return out;
}

#endif
