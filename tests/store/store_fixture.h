/* store_fixture.h — what the store unit tests of the named functions share
 * (test_store_read, test_store_lookup, test_store_clear): a private
 * temporary directory, paths in it, a fresh incident, the rows a reader
 * saw as text, and checking a message.  Static inline: a test that does not
 * use a helper gets no unused-function warning. */
#ifndef SPTD_STORE_FIXTURE_H
#define SPTD_STORE_FIXTURE_H

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "sptd_store.h"
#include "sptd_test.h"

/* The test's temporary directory ("" before fixture_begin). */
static char fixture_dir[64];

/* Make the temporary directory (exit 77 when it cannot be made). */
static inline void fixture_begin(void)
{
	snprintf(fixture_dir, sizeof(fixture_dir), "/tmp/sptd-store-XXXXXX");
	if (!mkdtemp(fixture_dir))
		SPTD_SKIP("cannot make a temporary directory");
}

static inline int fixture_rm_one(const char *path, const struct stat *sb, int flag,
                                 struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove the temporary directory and all in it. */
static inline void fixture_end(void)
{
	nftw(fixture_dir, fixture_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* @name inside the temporary directory (a static buffer per @slot, 0..3). */
static inline const char *fixture_path(int slot, const char *name)
{
	static char paths[4][256];

	snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", fixture_dir, name);
	return paths[slot];
}

/* A new incident @name in the temporary directory, open for writing; NULL
 * (and a failed check) when it cannot be made. */
static inline struct sptd_store *fixture_create(const char *name)
{
	struct sptd_store *st = NULL;
	int ret = sptd_store_create(fixture_path(0, name), &st);

	CHECK_INT(ret, 0);
	if (ret < 0)
		fprintf(stderr, "create %s: %s\n", name, sptd_store_errmsg(NULL));
	return st;
}

/* Commit @st, destroy it and open the file again read-only: the reopened
 * store, NULL (and a failed check) on failure. */
static inline struct sptd_store *fixture_reopen(struct sptd_store *st)
{
	char path[256];
	int ret;

	snprintf(path, sizeof(path), "%s", sptd_store_path(st));
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	st = NULL;
	ret = sptd_store_open(path, 0, &st);
	CHECK_INT(ret, 0);
	return st;
}

/* Does @msg contain @needle?  Says what it lacks when not. */
static inline int fixture_has(const char *msg, const char *needle)
{
	if (msg && strstr(msg, needle))
		return 1;
	fprintf(stderr, "message \"%s\" lacks \"%s\"\n", msg ? msg : "(null)", needle);
	return 0;
}

/* Rows as a reader handed them, one line each. */
struct fixture_text {
	char buf[8192];         /* the lines so far */
	size_t n;               /* bytes used */
	int rows;               /* lines added */
};

static inline void fixture_put(struct fixture_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append one printf-formatted piece to @t (truncated when full). */
static inline void fixture_put(struct fixture_text *t, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (t->n >= sizeof(t->buf))
		return;
	va_start(ap, fmt);
	w = vsnprintf(t->buf + t->n, sizeof(t->buf) - t->n, fmt, ap);
	va_end(ap);
	if (w > 0)
		t->n += (size_t)w < sizeof(t->buf) - t->n ? (size_t)w : sizeof(t->buf) - t->n;
}

/* Append @len bytes as "x" and hex, or "N" for NULL. */
static inline void fixture_put_bytes(struct fixture_text *t, const void *data, size_t len)
{
	if (!data) {
		fixture_put(t, "N");
		return;
	}
	fixture_put(t, "x");
	for (size_t i = 0; i < len; i++)
		fixture_put(t, "%02x", ((const unsigned char *)data)[i]);
}

/* NULL text as "N". */
static inline const char *fixture_str(const char *s)
{
	return s ? s : "N";
}

#endif /* SPTD_STORE_FIXTURE_H */
