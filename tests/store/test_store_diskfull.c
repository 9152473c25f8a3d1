/* test_store_diskfull.c — incidents written onto a 1 MiB tmpfs mounted by
 * the test: the store reports -ENOSPC with a message saying so, stays
 * failed, and leaves neither PATH nor its temporary file behind — also when
 * the disk fills while the slice rows kept for the commit are written as
 * pages, after SQLite's own commit worked; an update (decode's copy)
 * leaves the incident unchanged and says to run it again.  Needs root
 * (mount); skips otherwise. */
#include <dirent.h>
#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "sptd_store.h"
#include "sptd_test.h"

static unsigned char chunk[64 * 1024];

static int files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

/* Write @chunks chunks of PT (64 KiB each) into @dir: fewer than SQLite's
 * page cache holds fail at commit, more fail while rows are added. */
static void fill(const char *dir, int chunks)
{
	struct sptd_store *st = NULL;
	char path[128];
	struct stat sb;
	int ret = 0, i;

	snprintf(path, sizeof(path), "%s/full%d.db", dir, chunks);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		return;
	for (i = 0; i < chunks && ret == 0; i++)
		ret = SPTD_STORE_ADD(st, raw_pt, 0, i, chunk, sizeof(chunk));
	printf("%d chunks: %s after %d\n", chunks, ret ? "add failed" : "adds worked", i);
	if (ret == 0)
		ret = sptd_store_commit(st);
	CHECK_INT(ret, -ENOSPC);
	printf("  %s\n", sptd_store_errmsg(st));
	CHECK(strstr(sptd_store_errmsg(st), "disk full") != NULL);
	CHECK(strstr(sptd_store_errmsg(st), "nothing was written to") != NULL);
	CHECK(strstr(sptd_store_errmsg(st), path) != NULL);
	/* the failure is sticky: no later row or commit pretends to work */
	CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 0, 999, chunk, 16), -ENOSPC);
	CHECK_INT(sptd_store_commit(st), -ENOSPC);
	CHECK(stat(path, &sb) < 0 && errno == ENOENT);
	sptd_store_destroy(st);
	CHECK(stat(path, &sb) < 0 && errno == ENOENT);
	CHECK_INT(files_in(dir), 0);
}

/* A small incident whose kept slice rows (60,000: some 3 MiB of pages)
 * do not fit once SQLite has committed the rest. */
static void fill_slices(const char *dir)
{
	struct sptd_store_slice_row rows[1000];
	struct sptd_store *st = NULL;
	char path[128];
	struct stat sb;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/slices.db", dir);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		return;
	for (int i = 0; i < 4 && ret == 0; i++)
		ret = SPTD_STORE_ADD(st, raw_pt, 0, i, chunk, sizeof(chunk));
	CHECK_INT(ret, 0);
	CHECK_INT(sptd_store_slices_defer(st), 0);
	for (int k = 0; k < 60 && ret == 0; k++) {
		for (int i = 0; i < 1000; i++)
			rows[i] = (struct sptd_store_slice_row){
				.id = k * 1000 + i + 1, .ts = 1000000 + k * 1000 + i, .dur = 5,
				.utid = 1, .parent_id = -1, .symbol_id = i, .kind = SPTD_SLICE_USER,
			};
		ret = sptd_store_slices_add(st, rows, 1000);
	}
	CHECK_INT(ret, 0);
	CHECK_INT(sptd_store_commit(st), -ENOSPC);
	printf("  %s\n", sptd_store_errmsg(st));
	CHECK(strstr(sptd_store_errmsg(st), "disk full") != NULL);
	CHECK(strstr(sptd_store_errmsg(st), "nothing was written to") != NULL);
	CHECK(strstr(sptd_store_errmsg(st), path) != NULL);
	CHECK_INT(sptd_store_commit(st), -ENOSPC);
	CHECK(stat(path, &sb) < 0 && errno == ENOENT);
	sptd_store_destroy(st);
	CHECK(stat(path, &sb) < 0 && errno == ENOENT);
	CHECK_INT(files_in(dir), 0);
}

/* An update (sysptd decode's copy) that fills the disk: the incident is
 * unchanged, and the message says so and to run it again — not to record
 * again.  Through SQLite's commit, and through the slice pages. */
static void fill_update(const char *dir, int slices)
{
	struct sptd_store_slice_row rows[1000];
	struct sptd_store *st = NULL;
	struct stat before, after;
	char path[128];
	int ret = 0;

	snprintf(path, sizeof(path), "%s/update%d.db", dir, slices);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (st)
		CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 0, 0, chunk, 4096), 0);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	st = NULL;
	CHECK_INT(stat(path, &before), 0);
	CHECK_INT(sptd_store_open(path, 1, &st), 0);
	if (!st)
		return;
	if (slices) {
		CHECK_INT(sptd_store_slices_defer(st), 0);
		for (int k = 0; k < 60 && ret == 0; k++) {
			for (int i = 0; i < 1000; i++)
				rows[i] = (struct sptd_store_slice_row){
					.id = k * 1000 + i + 1, .ts = k * 1000 + i, .dur = 5, .utid = 1,
					.parent_id = -1, .symbol_id = i, .kind = SPTD_SLICE_USER,
				};
			ret = sptd_store_slices_add(st, rows, 1000);
		}
	} else {
		for (int i = 1; i < 40 && ret == 0; i++)
			ret = SPTD_STORE_ADD(st, raw_pt, 0, i, chunk, sizeof(chunk));
	}
	if (ret == 0)
		ret = sptd_store_commit(st);
	CHECK_INT(ret, -ENOSPC);
	printf("  %s\n", sptd_store_errmsg(st));
	CHECK(strstr(sptd_store_errmsg(st), "disk full") != NULL);
	CHECK(strstr(sptd_store_errmsg(st), " is unchanged; free some space and run it again"));
	CHECK(strstr(sptd_store_errmsg(st), "record again") == NULL);
	sptd_store_destroy(st);
	CHECK_INT(stat(path, &after), 0);
	CHECK_INT(after.st_size, before.st_size);
	CHECK_INT(after.st_ino, before.st_ino);
	CHECK_INT(files_in(dir), 1);
	unlink(path);
}

int main(void)
{
	char dir[64];

	SPTD_REQUIRE_ROOT();
	snprintf(dir, sizeof(dir), "/tmp/sptd-store-full-XXXXXX");
	if (!mkdtemp(dir))
		SPTD_SKIP("cannot make a temporary directory");
	if (mount("sptd-test", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0700") < 0) {
		int err = errno;

		rmdir(dir);
		SPTD_SKIP("cannot mount a small tmpfs: %s", strerror(err));
	}
	memset(chunk, 0x5a, sizeof(chunk));
	fill(dir, 64);  /* 4 MiB: fits the page cache, fails at commit */
	fill(dir, 800); /* 50 MiB: the cache spills, fails on an add */
	fill_slices(dir);
	umount2(dir, MNT_DETACH);
	/* an incident (half a MiB of empty tables) and its copy fit in 2 MiB */
	if (mount("sptd-test", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=2m,mode=0700") == 0) {
		fill_update(dir, 0);
		fill_update(dir, 1);
		umount2(dir, MNT_DETACH);
	} else {
		CHECK(0);
	}
	rmdir(dir);
	return SPTD_TEST_END();
}
