/* retention.c — --keep: the oldest incidents go beyond N. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record-local.h"

/* ---- retention ---------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sptd_col_retention(const char *dir, int keep)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int removed = 0;

	if (!dir || keep < 0)
		return -EINVAL;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, "incident-", 9) != 0 || len < 4 ||
		    strcmp(e->d_name + len - 3, ".db") != 0)
			continue;
		if (n == cap) {
			char **more = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));

			if (!more)
				break;
			names = more;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	/* names carry a UTC stamp and a sequence: name order is age order */
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i + (size_t)keep < n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (unlink(path) == 0)
			removed++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return removed;
}

