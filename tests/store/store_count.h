/* store_count.h — two counts the store tests check: files in a directory
 * by name, and one integer an SQL statement gives through the store. */
#ifndef SPTD_STORE_COUNT_H
#define SPTD_STORE_COUNT_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sptd_store.h"

/* Files in @dir whose name starts with @prefix. */
static inline int count_files_in(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	if (d)
		closedir(d);
	return n;
}

/* The integer @sql gives on @st (-1, said on stderr, when it fails). */
static inline int64_t count(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	if (sptd_store_query_int(st, sql, &v) < 0)
		fprintf(stderr, "query_int(%s): %s\n", sql, sptd_store_errmsg(st));
	return v;
}

#endif
