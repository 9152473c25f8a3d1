/* store_rows.c — an incident's rows as text (see store_rows.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_store.h"
#include "store_rows.h"

/* A growing string. */
struct text {
	char *s;        /* NUL-terminated, heap */
	size_t len;     /* bytes before the NUL */
	size_t cap;     /* bytes allocated */
	int failed;     /* out of memory once: the text is lost */
};

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->failed = 1;
		return;
	}
	if (t->len + (size_t)n + 1 > t->cap) {
		size_t cap = (t->len + (size_t)n + 1) * 2;
		char *s = realloc(t->s, cap);

		if (!s) {
			t->failed = 1;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

char *sptd_test_rows(struct sptd_store *st, const char *sql)
{
	struct sptd_store_stmt *stmt = NULL;
	struct text t = { 0 };
	int ret, ncol;

	ret = sptd_store_prepare(st, sql, &stmt);
	if (ret < 0) {
		fprintf(stderr, "sptd_test_rows: %s: %s (%s)\n", sql, strerror(-ret),
		        sptd_store_errmsg(st));
		return NULL;
	}
	text_add(&t, "%s", "");
	ncol = sptd_store_column_count(stmt);
	while ((ret = sptd_store_step(stmt)) == 1) {
		for (int i = 0; i < ncol; i++) {
			const char *sep = i ? "|" : "";
			size_t len = 0;

			switch (sptd_store_column_type(stmt, i)) {
			case SPTD_STORE_NULL:
				text_add(&t, "%sNULL", sep);
				break;
			case SPTD_STORE_INT:
				text_add(&t, "%s%" PRId64, sep, sptd_store_column_int(stmt, i));
				break;
			case SPTD_STORE_FLOAT:
				text_add(&t, "%s%g", sep, sptd_store_column_double(stmt, i));
				break;
			case SPTD_STORE_TEXT:
				text_add(&t, "%s%s", sep, sptd_store_column_text(stmt, i));
				break;
			case SPTD_STORE_BLOB:
				sptd_store_column_blob(stmt, i, &len);
				text_add(&t, "%s<%zu bytes>", sep, len);
				break;
			}
		}
		text_add(&t, "\n");
	}
	sptd_store_finalize(stmt);
	if (ret < 0 || t.failed) {
		fprintf(stderr, "sptd_test_rows: %s: %s\n", sql,
		        t.failed ? "out of memory" : sptd_store_errmsg(st));
		free(t.s);
		return NULL;
	}
	return t.s;
}

int sptd_test_store_new(const char *dir, const char *name, struct sptd_store **out)
{
	char path[4096];
	int ret;

	if (snprintf(path, sizeof(path), "%s/%s.db", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	ret = sptd_store_create(path, out);
	if (ret < 0)
		fprintf(stderr, "sptd_test_store_new: %s: %s (%s)\n", path, strerror(-ret),
		        sptd_store_errmsg(NULL));
	return ret;
}
