/* sptd_test.h — the few macros every sysptd test binary uses.
 *
 * CHECK() records a failure and goes on (so one run shows every broken
 * expectation); SPTD_TEST_END() prints "N passed, N failed" and returns the
 * exit status.  SPTD_SKIP() exits 77, which CTest reports as skipped.
 * sptd_test_slurp() reads a whole file. */
#ifndef SPTD_TEST_H
#define SPTD_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int sptd_test_passed, sptd_test_failed;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (cond) {                                                      \
			sptd_test_passed++;                                      \
		} else {                                                         \
			sptd_test_failed++;                                      \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,   \
			        __LINE__, #cond);                                \
		}                                                                \
	} while (0)

#define CHECK_INT(a, b)                                                          \
	do {                                                                     \
		long long va_ = (long long)(a), vb_ = (long long)(b);            \
		if (va_ == vb_) {                                                \
			sptd_test_passed++;                                      \
		} else {                                                         \
			sptd_test_failed++;                                      \
			fprintf(stderr, "%s:%d: CHECK_INT failed: %s == %lld, expected %s == %lld\n", \
			        __FILE__, __LINE__, #a, va_, #b, vb_);           \
		}                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                          \
	do {                                                                     \
		const char *sa_ = (a), *sb_ = (b);                               \
		if (sa_ && sb_ && strcmp(sa_, sb_) == 0) {                       \
			sptd_test_passed++;                                      \
		} else {                                                         \
			sptd_test_failed++;                                      \
			fprintf(stderr, "%s:%d: CHECK_STR failed: %s == \"%s\", expected \"%s\"\n", \
			        __FILE__, __LINE__, #a, sa_ ? sa_ : "(null)",    \
			        sb_ ? sb_ : "(null)");                           \
		}                                                                \
	} while (0)

#define SPTD_SKIP(...)                                                           \
	do {                                                                     \
		fprintf(stderr, "SKIP: " __VA_ARGS__);                           \
		fputc('\n', stderr);                                             \
		exit(77);                                                        \
	} while (0)

#define SPTD_REQUIRE_ROOT()                                                      \
	do {                                                                     \
		if (geteuid() != 0)                                              \
			SPTD_SKIP("needs root (CI runs as root)");               \
	} while (0)

/* Read the whole file @path into a new buffer (the caller frees it), with a
 * NUL byte after its last byte so that a text file is also a string; its
 * size in *@len (when @len is not NULL; 0 on failure).  NULL when the file
 * cannot be opened, sized or read, or memory runs out.  static inline: a
 * test that does not read files gets no unused-function warning. */
static inline void *sptd_test_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n = -1;

	if (len)
		*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	if (n >= 0 && fseek(f, 0, SEEK_SET) == 0)
		buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

#define SPTD_TEST_END()                                                          \
	(printf("%d passed, %d failed\n", sptd_test_passed, sptd_test_failed),   \
	 sptd_test_failed ? 1 : 0)

#endif /* SPTD_TEST_H */
