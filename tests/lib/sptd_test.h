/* sptd_test.h — the few macros every sysptd test binary uses.
 *
 * CHECK() records a failure and goes on (so one run shows every broken
 * expectation); SPTD_TEST_END() prints "N passed, N failed" and returns the
 * exit status.  SPTD_SKIP() exits 77, which CTest reports as skipped (1 when
 * a check already failed);
 * SPTD_SKIP_PART() notes that one part could not run here and goes on.
 *
 * A binary passes only when it ran at least one check, every check held and
 * nothing was skipped: a skipped part makes it report skip (77) unless a
 * check failed, and a binary that checked nothing fails (a test that
 * silently stopped testing must not look green).
 *
 * Fixtures (the real captures in ../shared/fixtures) are found through
 * sptd_test_fixtures(); a test that needs them skips when that directory is
 * absent (a clone outside the workspace) and fails when the directory is
 * there but lacks a file the test names (sptd_test_fixture()).
 * sptd_test_slurp() reads a whole file. */
#ifndef SPTD_TEST_H
#define SPTD_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Checks that held, checks that failed, parts that could not run here. */
static int sptd_test_passed, sptd_test_failed, sptd_test_skipped;

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

/* Nothing more can run here (say why): exit 77, or 1 when a check that
 * already ran failed (a skip never hides a failure). */
#define SPTD_SKIP(...)                                                           \
	do {                                                                     \
		fprintf(stderr, "SKIP: " __VA_ARGS__);                           \
		fputc('\n', stderr);                                             \
		if (sptd_test_failed) {                                          \
			printf("%d passed, %d failed\n", sptd_test_passed,       \
			       sptd_test_failed);                                \
			exit(1);                                                 \
		}                                                                \
		exit(77);                                                        \
	} while (0)

/* One part of the binary cannot run here (say why); the rest goes on, and
 * SPTD_TEST_END() reports skip instead of pass. */
#define SPTD_SKIP_PART(...)                                                      \
	do {                                                                     \
		fprintf(stderr, "SKIP part: " __VA_ARGS__);                      \
		fputc('\n', stderr);                                             \
		sptd_test_skipped++;                                             \
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

/* The shared fixtures directory: $SPTD_FIXTURES (CTest sets it from the
 * CMake cache entry SPTD_FIXTURES), else the directory that entry named when
 * the test was built (SPTD_FIXTURES_DEFAULT), so a binary run by hand finds
 * the same files.  Static string or the environment's. */
static inline const char *sptd_test_fixtures(void)
{
	const char *dir = getenv("SPTD_FIXTURES");

	if (dir && dir[0])
		return dir;
#ifdef SPTD_FIXTURES_DEFAULT
	return SPTD_FIXTURES_DEFAULT;
#else
	return "../shared/fixtures";
#endif
}

/* 1 when the fixtures directory exists.  When it does not (a clone outside
 * the workspace), the tests that need it skip: there is nothing to test
 * against, which is not the same as a broken fixture. */
static inline int sptd_test_have_fixtures(void)
{
	struct stat sb;

	return stat(sptd_test_fixtures(), &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The whole binary needs the fixtures: skip (77) without them. */
#define SPTD_REQUIRE_FIXTURES()                                                  \
	do {                                                                     \
		if (!sptd_test_have_fixtures())                                  \
			SPTD_SKIP("no fixtures directory at %s (set SPTD_FIXTURES, " \
			          "or configure with -DSPTD_FIXTURES=DIR)",     \
			          sptd_test_fixtures());                         \
	} while (0)

/* A part of the binary needs the fixtures: 1 when they are there, else 0
 * after SPTD_SKIP_PART naming @part. */
static inline int sptd_test_fixtures_for(const char *part)
{
	if (sptd_test_have_fixtures())
		return 1;
	SPTD_SKIP_PART("%s: no fixtures directory at %s", part, sptd_test_fixtures());
	return 0;
}

/* The path of fixture @rel (relative to the fixtures directory) in @buf of
 * @len bytes.  0 when that file is readable.  Otherwise -1 and a failed
 * check naming the file: the directory is there, so a file it lacks is a
 * broken or partial copy of the fixtures, never a reason to skip. */
static inline int sptd_test_fixture(char *buf, size_t len, const char *rel)
{
	int n = snprintf(buf, len, "%s/%s", sptd_test_fixtures(), rel);

	if (n < 0 || (size_t)n >= len) {
		sptd_test_failed++;
		fprintf(stderr, "FAIL: fixture path too long: %s/%s\n", sptd_test_fixtures(), rel);
		return -1;
	}
	if (access(buf, R_OK) != 0) {
		sptd_test_failed++;
		fprintf(stderr, "FAIL: fixture missing: %s (the fixtures directory %s is there, "
		        "so it must hold this file)\n", buf, sptd_test_fixtures());
		return -1;
	}
	return 0;
}

/* The exit status of a test binary (see the top of this file), after the
 * "N passed, N failed" line. */
__attribute__((warn_unused_result)) static inline int sptd_test_end(void)
{
	printf("%d passed, %d failed", sptd_test_passed, sptd_test_failed);
	if (sptd_test_skipped)
		printf(", %d part(s) skipped", sptd_test_skipped);
	putchar('\n');
	fflush(stdout);
	if (sptd_test_failed)
		return 1;
	if (sptd_test_skipped) {
		fprintf(stderr, "SKIP: %d part(s) could not run here (SKIP part lines above); "
		        "the checks that ran held\n", sptd_test_skipped);
		return 77;
	}
	if (!sptd_test_passed) {
		fprintf(stderr, "FAIL: no check ran: a test that checked nothing does not pass\n");
		return 1;
	}
	return 0;
}

#define SPTD_TEST_END() sptd_test_end()

#endif /* SPTD_TEST_H */
