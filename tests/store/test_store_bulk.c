/* test_store_bulk.c — a million slice rows through the cached INSERT: checks
 * that every row arrives and prints the rate (timings are never asserted). */
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <time.h>

#include "sptd_store.h"
#include "sptd_test.h"

#define N_SLICES 1000000

static char dir[64];

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
	struct sptd_store *st = NULL;
	char path[128];
	double t0, t1, t2, t3;
	int64_t v = -1;
	int ret = 0;

	snprintf(dir, sizeof(dir), "/tmp/sptd-store-bulk-XXXXXX");
	if (!mkdtemp(dir))
		SPTD_SKIP("cannot make a temporary directory");
	snprintf(path, sizeof(path), "%s/bulk.db", dir);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		goto out;
	t0 = now_s();
	for (int64_t i = 0; i < N_SLICES && ret == 0; i++)
		ret = sptd_store_slice_add(st, i, i * 100, 50, (int)(i & 7), i % 1000,
		                           (int)(i % 16), i % 16 ? i - 1 : -1, i % 5000,
		                           i & 1 ? SPTD_SLICE_USER : SPTD_SLICE_KERNEL, 0);
	CHECK_INT(ret, 0);
	if (ret < 0)
		fprintf(stderr, "%s\n", sptd_store_errmsg(st));
	t1 = now_s();
	CHECK_INT(sptd_store_commit(st), 0);
	t2 = now_s();
	sptd_store_destroy(st);
	st = NULL;
	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM slice", &v), 0);
	CHECK_INT(v, N_SLICES);
	CHECK_INT(sptd_store_query_int(st, "SELECT sum(ts) / 100 FROM slice WHERE utid = 7", &v), 0);
	CHECK_INT(v, (int64_t)1000 * 7 + (int64_t)1000 * (999 * 1000) / 2);
	t3 = now_s();
	printf("slice insert: %d rows in %.3f s = %.0f rows/s; commit (indexes, fsync, "
	       "rename) %.3f s; reopen + check %.3f s\n", N_SLICES, t1 - t0,
	       N_SLICES / (t1 - t0), t2 - t1, t3 - t2);
	sptd_store_destroy(st);
out:
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return SPTD_TEST_END();
}
