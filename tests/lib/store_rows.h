/* store_rows.h — an incident's rows as text, so a test can compare what a
 * step wrote with what it expects, exactly and in one look; and a scratch
 * incident to write raw tables into.  Shared by the derive tests. */
#ifndef SPTD_TEST_STORE_ROWS_H
#define SPTD_TEST_STORE_ROWS_H

#include <stddef.h>
#include <stdint.h>

struct sptd_store;

/* The rows @sql selects from @st as a new string the caller frees: one
 * line per row, each ended by '\n', columns joined by '|', integers in
 * decimal, NULL as "NULL", text as it is, a blob as "<N bytes>".  "" when
 * no row.  NULL when the statement fails (the store's message printed to
 * stderr) or memory runs out. */
char *sptd_test_rows(struct sptd_store *st, const char *sql);

/* A new incident "@dir/@name.db" to fill through store/'s add functions
 * (never committed: sptd_store_destroy() removes it).  0, or the error of
 * sptd_store_create() with its message printed to stderr. */
int sptd_test_store_new(const char *dir, const char *name, struct sptd_store **out);

/* Compare the rows of @sql with @want (sptd_test_rows' format); both are
 * printed when they differ.  Needs sptd_test.h's CHECK_STR. */
#define CHECK_ROWS(st, sql, want)                                                \
	do {                                                                     \
		char *rows_ = sptd_test_rows((st), (sql));                       \
		CHECK_STR(rows_, (want));                                        \
		if (rows_ && strcmp(rows_, (want)) != 0)                          \
			fprintf(stderr, "  query: %s\n", (sql));                 \
		free(rows_);                                                     \
	} while (0)

#endif
