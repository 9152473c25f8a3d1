/* test_imgfind.c — where decoding finds the bytes of a dso (imgfind.c):
 * the image cache's layout (table-driven), then lookups in order — the
 * copy embedded in the incident, the cache by build-id (from
 * $SPTD_IMAGE_CACHE or meta pt_image_cache), the recorded path when its
 * build-id still matches — and what each failure returns; then the files
 * decode unwinds stored user stacks with (derive_unwind.c), only those a
 * build-id or the incident's own copy proves. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "derive-local.h"
#include "derive_harness.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "store_rows.h"

static void test_cache_path(void)
{
	static const char hex128[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	static const struct {
		const char *dir, *build_id, *path;
		size_t outlen;
		int ret;
		const char *want;
	} cases[] = {
		{ "/c", "abcdef01", "/usr/lib/libx.so.1", 256, 0, "/c/abcdef01/libx.so.1" },
		{ "/c", "ab", "noslash", 256, 0, "/c/ab/noslash" },
		{ "/c/", "ab", "/x", 256, 0, "/c//ab/x" },
		{ "/c", hex128, "/x", 512, 0, NULL },
		{ "/c", "ab", "/usr/bin/tool", 9, -ENAMETOOLONG, NULL },
		{ "/c", "ABCDEF", "/x", 256, -EINVAL, NULL },     /* hex is lowercase */
		{ "/c", "abcg", "/x", 256, -EINVAL, NULL },
		{ "/c", "a", "/x", 256, -EINVAL, NULL },          /* too short */
		{ "/c", hex128 + 1, "/x", 256, 0, NULL },
		{ "/c", "", "/x", 256, -EINVAL, NULL },
		{ "/c", NULL, "/x", 256, -EINVAL, NULL },
		{ NULL, "ab", "/x", 256, -EINVAL, NULL },
		{ "", "ab", "/x", 256, -EINVAL, NULL },
		{ "/c", "ab", NULL, 256, -EINVAL, NULL },
	};
	char out[512], long_id[sizeof(hex128) + 1];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = sptd_col_pt_imgcache_path(cases[i].dir, cases[i].build_id, cases[i].path,
		                                    out, cases[i].outlen);

		CHECK_INT(ret, cases[i].ret);
		if (ret != cases[i].ret)
			fprintf(stderr, "  case %zu\n", i);
		if (cases[i].want && ret == 0)
			CHECK_STR(out, cases[i].want);
	}
	/* 129 hex digits: longer than any build-id */
	snprintf(long_id, sizeof(long_id), "%s0", hex128);
	CHECK_INT(sptd_col_pt_imgcache_path("/c", long_id, "/x", out, sizeof(out)), -EINVAL);
	CHECK_INT(sptd_col_pt_imgcache_path("/c", "ab", "/x", NULL, 10), -EINVAL);
	CHECK_STR(sptd_col_pt_imgcache_default(), "/var/lib/sysptd/images");
}

static void test_invalid(void)
{
	struct sptd_col_pt_imgfind *f = NULL;
	struct sptd_store *st = NULL;
	const char *where = "unset";

	CHECK_INT(sptd_test_store_new(harness_dir, "invalid", &st), 0);
	CHECK_INT(sptd_col_pt_imgfind_create(NULL, &f), -EINVAL);
	CHECK_INT(sptd_col_pt_imgfind_create(st, NULL), -EINVAL);
	CHECK_INT(sptd_col_pt_imgfind_lookup(NULL, 1, "/x", NULL, &where), -EINVAL);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, NULL, NULL, &where), -EINVAL);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, "/x", NULL, NULL), -EINVAL);
	sptd_col_pt_imgfind_destroy(f);
	sptd_col_pt_imgfind_destroy(NULL);
	sptd_store_destroy(st);
}

static int write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp);
}

/* This test binary: an ELF file with a build-id, at a path that exists. */
static int self(char *path, size_t len, char *build_id, size_t idlen)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 1);

	if (n <= 0)
		return -1;
	path[n] = '\0';
	return sptd_dec_build_id(path, build_id, idlen);
}

static void test_lookup(void)
{
	char cache[PATH_MAX], dir[PATH_MAX + 64], file[PATH_MAX + 128], exe[PATH_MAX],
	     bid[130], unpacked[PATH_MAX];
	struct sptd_col_pt_imgfind *f = NULL;
	struct sptd_store *st = NULL;
	const char *where = NULL;
	char *bytes = NULL;
	size_t len = 0;

	snprintf(cache, sizeof(cache), "%s/cache", harness_dir);
	snprintf(dir, sizeof(dir), "%s/c0ffee", cache);
	snprintf(file, sizeof(file), "%s/libbar.so", dir);
	CHECK_INT(mkdir(cache, 0700), 0);
	CHECK_INT(mkdir(dir, 0700), 0);
	CHECK_INT(write_file(file, "cached bytes"), 0);
	CHECK_INT(self(exe, sizeof(exe), bid, sizeof(bid)), 0);
	CHECK_INT(setenv("SPTD_IMAGE_CACHE", cache, 1), 0);

	CHECK_INT(sptd_test_store_new(harness_dir, "lookup", &st), 0);
	if (!st)
		goto out;
	/* dso 5 is embedded (and cached: embedded wins) */
	CHECK_INT(sptd_store_raw_file_add(st, 5, "c0ffee", "embedded bytes", 14), 0);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	if (!f)
		goto out;

	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 5, "/gone/dir/libbar.so", "c0ffee", &where),
	          SPTD_PT_IMAGE_EMBEDDED);
	CHECK(where != NULL);
	if (where) {
		/* unpacked under a private directory, keeping the basename */
		snprintf(unpacked, sizeof(unpacked), "%s", where);
		CHECK(strcmp(strrchr(unpacked, '/'), "/libbar.so") == 0);
		bytes = sptd_test_slurp(unpacked, &len);
		CHECK(bytes && len == 14 && memcmp(bytes, "embedded bytes", 14) == 0);
		free(bytes);
		bytes = NULL;
	}
	/* dso 6: not embedded, in the cache by build-id */
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 6, "/gone/dir/libbar.so", "c0ffee", &where),
	          SPTD_PT_IMAGE_CACHED);
	CHECK_STR(where, file);
	/* dso 7: the recorded path, its build-id still the recorded one */
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 7, exe, bid, &where), SPTD_PT_IMAGE_ORIGINAL);
	/* the very file checked (issue 28: the path is not opened twice),
	 * under its basename */
	{
		struct stat a, b;

		CHECK(where && strcmp(strrchr(where, '/'), strrchr(exe, '/')) == 0);
		CHECK(where && stat(where, &a) == 0 && stat(exe, &b) == 0 &&
		      a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	}
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 7, exe, NULL, &where), SPTD_PT_IMAGE_ORIGINAL);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 7, exe, "", &where), SPTD_PT_IMAGE_ORIGINAL);
	/* another build there now, and none cached: stale */
	where = "unset";
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 7, exe, "00ff", &where), -ESTALE);
	CHECK(where == NULL);
	/* nowhere at all */
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 8, "/nonexistent/lib.so", "00ff", &where),
	          -ENOENT);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 8, "/nonexistent/lib.so", NULL, &where),
	          -ENOENT);
	/* the unpacked copy goes with the lookup */
	sptd_col_pt_imgfind_destroy(f);
	f = NULL;
	CHECK(access(unpacked, F_OK) != 0);
	sptd_store_destroy(st);
	st = NULL;

	/* without $SPTD_IMAGE_CACHE: meta pt_image_cache names the cache */
	unsetenv("SPTD_IMAGE_CACHE");
	CHECK_INT(sptd_test_store_new(harness_dir, "meta", &st), 0);
	if (!st)
		goto out;
	CHECK_INT(sptd_store_meta_set(st, "pt_image_cache", cache), 0);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	if (f) {
		CHECK_INT(sptd_col_pt_imgfind_lookup(f, 6, "/gone/libbar.so", "c0ffee", &where),
		          SPTD_PT_IMAGE_CACHED);
		CHECK_STR(where, file);
	}
out:
	unsetenv("SPTD_IMAGE_CACHE");
	sptd_col_pt_imgfind_destroy(f);
	sptd_store_destroy(st);
	remove(file);
	rmdir(dir);
	rmdir(cache);
}

/* The descriptor @fd is of the file at @path. */
static int same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

static void test_unwind_files(void)
{
	char exe[PATH_MAX], bid[130];
	struct sptd_col_derive_files *f = NULL;
	struct sptd_store *st = NULL;
	const char *name = "unset";
	int fd;

	CHECK_INT(self(exe, sizeof(exe), bid, sizeof(bid)), 0);
	CHECK_INT(sptd_test_store_new(harness_dir, "files", &st), 0);
	if (!st)
		return;
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, exe, bid), 0);        /* proven by build-id */
	CHECK_INT(SPTD_STORE_ADD(st, dso, 2, exe, NULL), 0);       /* a path alone */
	CHECK_INT(SPTD_STORE_ADD(st, dso, 3, exe, "00ff"), 0);     /* another build now */
	CHECK_INT(SPTD_STORE_ADD(st, dso, 4, "[vdso]", NULL), 0);  /* no file */
	CHECK_INT(SPTD_STORE_ADD(st, dso, 5, "/gone/libx.so", NULL), 0);
	CHECK_INT(sptd_store_raw_file_add(st, 5, NULL, "embedded bytes", 14), 0);
	CHECK_INT(sptd_col_derive_files_create(NULL, &f), -EINVAL);
	CHECK_INT(sptd_col_derive_files_create(st, NULL), -EINVAL);
	CHECK_INT(sptd_col_derive_files_create(st, &f), 0);
	if (!f)
		goto out;
	CHECK_INT(sptd_col_derive_files_open(NULL, 1, &name), -EINVAL);
	CHECK_INT(sptd_col_derive_files_open(f, 1, NULL), -EINVAL);
	fd = sptd_col_derive_files_open(f, 1, &name);
	CHECK(fd >= 0 && same_file(fd, exe));
	CHECK(name && strcmp(name, exe) == 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(sptd_col_derive_files_open(f, 2, &name), -ENOENT);
	CHECK_INT(sptd_col_derive_files_open(f, 3, &name), -ESTALE);
	CHECK_INT(sptd_col_derive_files_open(f, 4, &name), -ENOENT);
	CHECK_INT(sptd_col_derive_files_open(f, 99, &name), -ENOENT);
	fd = sptd_col_derive_files_open(f, 5, &name);
	CHECK(fd >= 0);
	if (fd >= 0) {
		char buf[32] = { 0 };

		CHECK(read(fd, buf, sizeof(buf)) == 14 && memcmp(buf, "embedded bytes", 14) == 0);
		close(fd);
	}
out:
	sptd_col_derive_files_destroy(f);
	sptd_col_derive_files_destroy(NULL);
	sptd_store_destroy(st);
}

int main(void)
{
	if (harness_init("imgfind") < 0)
		return 1;
	test_cache_path();
	test_invalid();
	test_lookup();
	test_unwind_files();
	harness_fini();
	return SPTD_TEST_END();
}
