/* test_pt_images.c — images of mapped files for PT: build-ids (equal to
 * decode/'s reader), the content-addressed cache (copied once, checked),
 * embedding with --portable, the decode-time lookup order (incident, cache,
 * recorded path; a changed file is refused), and file mappings of exited
 * processes rebuilt from MMAP2 sideband records.  Real files (a copy of
 * this test's own ELF), real incidents. */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakepmu/fakepmu.h"
#include "pt-local.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"

static char root[] = "/tmp/sptd-ptimg-XXXXXX";

static int spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int same_file(const char *a, const void *data, size_t len)
{
	size_t n;
	unsigned char *b = sptd_test_slurp(a, &n);
	int same = b && n == len && memcmp(b, data, len) == 0;

	free(b);
	return same;
}

static int64_t q(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	return sptd_store_query_int(st, sql, &v) < 0 ? -1 : v;
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", root, name);
}

int main(void)
{
	char prog[512], other[512], cache[512], cache2[512], db[512], bid[130], dbid[130];
	char expect[1024], sql[1024], junk[512];
	unsigned char *self, *otherbytes;
	size_t self_len, other_len;
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_store *st = NULL;
	struct sptd_col_pt_imgfind *f = NULL;
	const char *where = NULL;
	int ret;

	self = sptd_test_slurp("/proc/self/exe", &self_len);
	otherbytes = sptd_test_slurp("/bin/true", &other_len);
	if (!self || !otherbytes)
		SPTD_SKIP("cannot read /proc/self/exe or /bin/true");
	if (!mkdtemp(root))
		SPTD_SKIP("no temp dir");
	path_of(prog, sizeof(prog), "prog");
	path_of(other, sizeof(other), "true");
	path_of(cache, sizeof(cache), "cache");
	path_of(cache2, sizeof(cache2), "cache2");
	path_of(junk, sizeof(junk), "junk");
	CHECK_INT(spit(prog, self, self_len), 0);
	CHECK_INT(spit(other, otherbytes, other_len), 0);
	CHECK_INT(spit(junk, "not elf at all, just text", 25), 0);

	/* ---- build-ids: the same hex as decode/'s ELF reader -------------- */
	CHECK_INT(sptd_dec_build_id(prog, bid, sizeof(bid)), 0);
	CHECK_INT(sptd_dec_symfile_load_elf(prog, &sf), 0);
	if (sf && sptd_dec_symfile_build_id(sf))
		CHECK_STR(bid, sptd_dec_symfile_build_id(sf));
	else
		CHECK(!"decode/ found no build-id in this test binary");
	sptd_dec_symfile_destroy(sf);
	sf = NULL;
	CHECK_INT(sptd_dec_build_id(other, dbid, sizeof(dbid)), 0);
	CHECK(strcmp(bid, dbid) != 0);
	CHECK_INT(sptd_dec_build_id(junk, dbid, sizeof(dbid)), -EBADMSG);
	CHECK_INT(sptd_dec_build_id("/nonexistent/x", dbid, sizeof(dbid)), -ENOENT);
	CHECK_INT(sptd_dec_build_id(NULL, dbid, sizeof(dbid)), -EINVAL);
	CHECK_INT(sptd_dec_build_id(prog, dbid, 4), -ENAMETOOLONG);

	/* ---- the cache: DIR/<build-id>/<basename>, copied once, checked --- */
	CHECK_INT(sptd_col_pt_imgcache_path(cache, "xyz", prog, expect, sizeof(expect)), -EINVAL);
	CHECK_INT(sptd_col_pt_imgcache_path(cache, bid, prog, expect, sizeof(expect)), 0);
	{
		char want[1024], out[1024];
		struct stat a, b;

		snprintf(want, sizeof(want), "%s/%s/prog", cache, bid);
		CHECK_STR(expect, want);
		CHECK_INT(sptd_col_pt_imgcache_put(cache, prog, bid, out, sizeof(out)), 1);
		CHECK_STR(out, want);
		CHECK(same_file(out, self, self_len));
		CHECK_INT(stat(out, &a), 0);
		CHECK_INT(sptd_col_pt_imgcache_put(cache, prog, bid, out, sizeof(out)), 0);
		CHECK_INT(stat(out, &b), 0);
		CHECK(a.st_ino == b.st_ino && a.st_mtime == b.st_mtime);
		/* a file whose contents no longer have the build-id is refused */
		CHECK_INT(sptd_col_pt_imgcache_put(cache2, other, bid, out, sizeof(out)), -ESTALE);
		CHECK(access(out, F_OK) != 0);
		CHECK_INT(sptd_col_pt_imgcache_put(cache, "relative", bid, out, sizeof(out)), -EINVAL);
		CHECK_INT(sptd_col_pt_imgcache_put(cache, "/nonexistent/x", "abcd", out, sizeof(out)),
		          -ENOENT);
	}

	/* ---- capture with --portable: embedded bytes, missing files counted */
	path_of(db, sizeof(db), "a.db");
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		goto out;
	CHECK_INT(sptd_store_dso_add(st, 1, prog, bid), 0);
	CHECK_INT(sptd_store_dso_add(st, 2, "/nonexistent/libgone.so", "abcd"), 0);
	CHECK_INT(sptd_store_dso_add(st, 3, "[vdso]", NULL), 0);
	CHECK_INT(sptd_store_dso_add(st, 4, other, "00ff"), 0);   /* changed since */
	CHECK_INT(sptd_col_pt_images_files(st, cache2, 1), 3);
	CHECK_INT(q(st, "SELECT count(*) FROM raw_file"), 1);
	CHECK_INT(q(st, "SELECT dso_id FROM raw_file"), 1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_file WHERE build_id = '%s' AND "
	         "length(data) = %zu", bid, self_len);
	CHECK_INT(q(st, sql), 1);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_images_missing'"), 2);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_images_embedded'"), 1);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_portable'"), 1);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_images_cached'"), 1);
	CHECK_INT(sptd_store_raw_file_add(st, 1, bid, "x", 1), -EINVAL);  /* once per dso */
	CHECK_INT(sptd_store_raw_file_add(st, -1, bid, "x", 1), -EINVAL);
	CHECK_INT(sptd_store_raw_file_add(NULL, 5, bid, "x", 1), -EINVAL);
	CHECK_INT(sptd_col_pt_images_files(NULL, cache2, 1), -EINVAL);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	st = NULL;

	/* ---- decode-time lookup: the incident first ------------------------ */
	unlink(prog);   /* the recording machine's file is gone */
	CHECK_INT(setenv("SPTD_IMAGE_CACHE", "/nonexistent-cache", 1), 0);
	CHECK_INT(sptd_store_open(db, 0, &st), 0);
	if (!st)
		goto out;
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	ret = sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where);
	CHECK_INT(ret, SPTD_PT_IMAGE_EMBEDDED);
	if (ret == SPTD_PT_IMAGE_EMBEDDED) {
		struct sptd_dec_config cfg = { .jobs = 1 };
		struct sptd_dec_session *s = NULL;

		CHECK(same_file(where, self, self_len));
		CHECK(strcmp(strrchr(where, '/'), "/prog") == 0);
		snprintf(expect, sizeof(expect), "%s", where);
		/* the decoder loads it as it would the original */
		CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
		CHECK(sptd_dec_session_add_elf(s, 100, expect, 0, 1) >= 0);
		sptd_dec_session_destroy(s);
	}
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 2, "/nonexistent/libgone.so", "abcd", &where),
	          -ENOENT);
	CHECK(where == NULL);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 4, other, "00ff", &where), -ESTALE);
	CHECK_INT(sptd_col_pt_imgfind_lookup(NULL, 1, prog, bid, &where), -EINVAL);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, NULL, bid, &where), -EINVAL);
	sptd_col_pt_imgfind_destroy(f);
	f = NULL;
	CHECK(access(expect, F_OK) != 0);   /* unpacked files are removed */
	sptd_store_destroy(st);
	st = NULL;
	CHECK_INT(sptd_col_pt_imgfind_create(NULL, &f), -EINVAL);

	/* ---- then the cache (from meta), then the recorded path ------------ */
	unsetenv("SPTD_IMAGE_CACHE");
	CHECK_INT(spit(prog, self, self_len), 0);
	path_of(db, sizeof(db), "b.db");
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		goto out;
	CHECK_INT(sptd_store_dso_add(st, 1, prog, bid), 0);
	CHECK_INT(sptd_col_pt_images_files(st, cache, 0), 1);
	CHECK_INT(q(st, "SELECT count(*) FROM sqlite_schema WHERE name = 'raw_file'"), 0);
	unlink(prog);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where), SPTD_PT_IMAGE_CACHED);
	snprintf(expect, sizeof(expect), "%s/%s/prog", cache, bid);
	CHECK(where && strcmp(where, expect) == 0);
	sptd_col_pt_imgfind_destroy(f);
	f = NULL;
	CHECK_INT(setenv("SPTD_IMAGE_CACHE", cache2, 1), 0);   /* overrides meta */
	CHECK_INT(spit(prog, self, self_len), 0);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	snprintf(expect, sizeof(expect), "%s/%s", cache2, bid);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where), SPTD_PT_IMAGE_CACHED);
	snprintf(sql, sizeof(sql), "%s/%s/prog", cache2, bid);
	CHECK(where && strcmp(where, sql) == 0);
	CHECK_INT(setenv("SPTD_IMAGE_CACHE", "/nonexistent-cache", 1), 0);
	sptd_col_pt_imgfind_destroy(f);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where), SPTD_PT_IMAGE_ORIGINAL);
	/* the file checked, through a name keeping its basename (issue 28:
	 * never the user's path opened a second time) */
	CHECK(where && strcmp(strrchr(where, '/'), "/prog") == 0);
	CHECK(where && same_file(where, self, self_len));
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, NULL, &where), SPTD_PT_IMAGE_ORIGINAL);
	CHECK_INT(spit(prog, otherbytes, other_len), 0);   /* upgraded since */
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where), -ESTALE);
	sptd_col_pt_imgfind_destroy(f);
	f = NULL;
	sptd_col_pt_imgfind_destroy(NULL);
	unsetenv("SPTD_IMAGE_CACHE");

	/* ---- exited processes: mappings from MMAP2 records ----------------- */
	CHECK_INT(spit(prog, self, self_len), 0);
	{
		unsigned char rec[2048];
		size_t n = 0;
		int gone = 4194303, alive_elsewhere = 4194302;
		const uint64_t addr = 0x555555550000ull;
		int64_t bias = 0;
		uint64_t stype = sptd_col_pt_sideband_sample_type();

		if (kill(gone, 0) == 0)
			SPTD_SKIP("pid %d exists here", gone);
		n = fakepmu_rec_comm(rec, n, sizeof(rec), gone, gone, "prog", 100, 0);
		n = fakepmu_rec_mmap2(rec, n, sizeof(rec), gone, gone, addr, 0x4000, 0, prog, 110, 0);
		n = fakepmu_rec_mmap2(rec, n, sizeof(rec), gone, gone, addr + 0x10000, 0x1000, 0,
		                      "//anon", 111, 0);
		n = fakepmu_rec_mmap2(rec, n, sizeof(rec), alive_elsewhere, alive_elsewhere, addr,
		                      0x4000, 0, other, 112, 0);
		n = fakepmu_rec_mmap2(rec, n, sizeof(rec), gone, gone, 0x7f0000000000ull, 0x2000, 0,
		                      "/nonexistent/libgone.so", 113, 0);
		CHECK_INT(sptd_col_pt_mmaps_from_records(st, rec, n, stype, &gone, 1), 2);
		CHECK_INT(sptd_col_pt_mmaps_from_records(st, rec, n, stype, &gone, 1), 0); /* once */
		CHECK_INT(sptd_col_pt_mmaps_from_records(st, rec, n, stype, NULL, 1), -EINVAL);
		CHECK_INT(sptd_col_pt_mmaps_from_records(NULL, rec, n, stype, &gone, 1), -EINVAL);
		/* a cut-short tail keeps what came before */
		CHECK_INT(sptd_col_pt_mmaps_from_records(st, rec, n - 3, stype, &gone, 1), 0);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_mmap WHERE pid = %d", gone);
		CHECK_INT(q(st, sql), 2);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_mmap WHERE pid = %d",
		         alive_elsewhere);
		CHECK_INT(q(st, sql), 0);
		/* the file's dso row is shared (same path + build-id) */
		CHECK_INT(q(st, "SELECT count(*) FROM dso"), 2);
		snprintf(sql, sizeof(sql), "SELECT m.dso_id FROM raw_mmap m JOIN dso d ON "
		         "d.id = m.dso_id WHERE m.pid = %d AND m.start = %lld AND d.build_id = '%s'",
		         gone, (long long)addr, bid);
		CHECK_INT(q(st, sql), 1);
		CHECK_INT(q(st, "SELECT count(*) FROM dso WHERE path = '/nonexistent/libgone.so' "
		            "AND build_id IS NULL"), 1);
		CHECK_INT(sptd_dec_symfile_load_elf(prog, &sf), 0);
		if (sf)
			CHECK_INT(sptd_dec_symfile_bias(sf, addr, 0, &bias), 0);
		sptd_dec_symfile_destroy(sf);
		snprintf(sql, sizeof(sql), "SELECT bias FROM raw_mmap WHERE pid = %d AND start = %lld",
		         gone, (long long)addr);
		CHECK_INT(q(st, sql), bias);
		snprintf(sql, sizeof(sql), "SELECT bias FROM raw_mmap WHERE pid = %d AND start = %lld",
		         gone, (long long)0x7f0000000000ull);
		CHECK_INT(q(st, sql), 0x7f0000000000ll);
	}
	CHECK_INT(sptd_store_commit(st), 0);
out:
	sptd_col_pt_imgfind_destroy(f);
	sptd_store_destroy(st);
	snprintf(sql, sizeof(sql), "rm -rf '%s'", root);
	if (system(sql) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	free(self);
	free(otherbytes);
	return SPTD_TEST_END();
}
