/* test_store_bulk.c — a million slice rows through the cached INSERT: checks
 * that every row arrives and prints the rate; then raw_sample and raw_pt
 * rows read back through the named readers next to the generic
 * prepare/step/column loop the collector used before them, on the same
 * rows in the same run (timings are printed, never asserted). */
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <time.h>

#include "sptd_store.h"
#include "sptd_test.h"

#define N_SLICES 1000000
#define N_SAMPLES 300000 /* raw_sample rows of the read comparison */
#define CHAIN 12        /* entries per call chain */
#define N_CHUNKS 20000  /* raw_pt rows of 4 KiB */

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

/* Sums what a reader saw, so neither loop can be optimized away. */
struct read_sum {
	uint64_t sum;           /* of ts, cpu, chain entries / bytes */
	int64_t rows;           /* rows seen */
};

static int sum_sample(void *arg, const struct sptd_store_raw_sample_row *row)
{
	struct read_sum *r = arg;

	r->sum += (uint64_t)row->ts + (uint64_t)row->cpu + (uint64_t)row->tid;
	for (size_t i = 0; i < row->nr; i++)
		r->sum += row->callchain[i];
	r->rows++;
	return 0;
}

static int sum_chunk(void *arg, const struct sptd_store_chunk_row *row)
{
	struct read_sum *r = arg;

	r->sum += (uint64_t)row->cpu + row->len + ((const unsigned char *)row->data)[row->len - 1];
	r->rows++;
	return 0;
}

/* raw_sample the way derive_samples read it before the named reader: a
 * prepared statement, columns by position, the chain decoded byte by byte. */
static int generic_samples(struct sptd_store *st, struct read_sum *r)
{
	struct sptd_store_stmt *q = NULL;
	uint64_t chain[CHAIN];
	int ret = sptd_store_prepare(st, "SELECT ts, cpu, pid, tid, callchain FROM raw_sample "
	                             "ORDER BY ts", &q);

	while (ret >= 0 && (ret = sptd_store_step(q)) == 1) {
		size_t len = 0, nr;
		const unsigned char *b = sptd_store_column_blob(q, 4, &len);

		nr = len / 8 < CHAIN ? len / 8 : CHAIN;
		for (size_t i = 0; i < nr; i++) {
			uint64_t v = 0;

			for (int k = 7; k >= 0; k--)
				v = (v << 8) | b[i * 8 + (size_t)k];
			chain[i] = v;
		}
		r->sum += (uint64_t)sptd_store_column_int(q, 0) +
		          (uint64_t)sptd_store_column_int(q, 1) + (uint64_t)sptd_store_column_int(q, 3);
		for (size_t i = 0; i < nr; i++)
			r->sum += chain[i];
		r->rows++;
	}
	sptd_store_finalize(q);
	return ret;
}

/* raw_pt the way derive_pt read it before the named reader. */
static int generic_chunks(struct sptd_store *st, struct read_sum *r)
{
	struct sptd_store_stmt *q = NULL;
	int ret = sptd_store_prepare(st, "SELECT cpu, data FROM raw_pt ORDER BY cpu, seq", &q);

	while (ret >= 0 && (ret = sptd_store_step(q)) == 1) {
		size_t len = 0;
		const unsigned char *b = sptd_store_column_blob(q, 1, &len);

		r->sum += (uint64_t)sptd_store_column_int(q, 0) + len + b[len - 1];
		r->rows++;
	}
	sptd_store_finalize(q);
	return ret;
}

/* Best of 3 wall seconds of one read loop; its sums in *@r. */
static double best_of_3(struct sptd_store *st, int (*generic)(struct sptd_store *, struct read_sum *),
                        int (*named)(struct sptd_store *, struct read_sum *), struct read_sum *r)
{
	double best = 1e9;

	for (int round = 0; round < 3; round++) {
		double t0 = now_s();

		memset(r, 0, sizeof(*r));
		CHECK_INT(generic ? generic(st, r) : named(st, r), 0);
		if (now_s() - t0 < best)
			best = now_s() - t0;
	}
	return best;
}

static int named_samples(struct sptd_store *st, struct read_sum *r)
{
	return SPTD_STORE_EACH(st, raw_sample, sum_sample, r);
}

static int named_chunks(struct sptd_store *st, struct read_sum *r)
{
	return SPTD_STORE_EACH(st, raw_pt, sum_chunk, r);
}

/* Write the rows of the read comparison, commit, reopen; print the rates. */
static void compare_reads(const char *path)
{
	static unsigned char page[4096];
	struct sptd_store *st = NULL;
	struct read_sum g, n;
	uint64_t chain[CHAIN];
	double tg, tn;
	int ret = 0;

	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		return;
	for (int64_t i = 0; i < N_SAMPLES && ret == 0; i++) {
		for (int k = 0; k < CHAIN; k++)
			chain[k] = 0xffffffff81000000ull + (uint64_t)(i * 31 + k * 7);
		ret = SPTD_STORE_ADD(st, raw_sample, (i * 7919) % N_SAMPLES, (int)(i & 7), 100,
		                     (int)(i % 50), chain, CHAIN, SPTD_RAW_SAMPLE_CLOCK, NULL, 0);
	}
	for (int i = 0; i < N_CHUNKS && ret == 0; i++) {
		page[4095] = (unsigned char)i;
		ret = SPTD_STORE_ADD(st, raw_pt, i % 8, i / 8, page, sizeof(page));
	}
	CHECK_INT(ret, 0);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	st = NULL;
	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	if (!st)
		return;
	tg = best_of_3(st, generic_samples, NULL, &g);
	tn = best_of_3(st, NULL, named_samples, &n);
	CHECK_INT(n.rows, N_SAMPLES);
	CHECK(n.sum == g.sum && n.rows == g.rows);
	printf("raw_sample read (%d rows, %d-entry chains): prepare/step %.3f s, "
	       "sptd_store_raw_sample_each %.3f s: %.2fx\n", N_SAMPLES, CHAIN, tg, tn, tg / tn);
	tg = best_of_3(st, generic_chunks, NULL, &g);
	tn = best_of_3(st, NULL, named_chunks, &n);
	CHECK_INT(n.rows, N_CHUNKS);
	CHECK(n.sum == g.sum && n.rows == g.rows);
	printf("raw_pt read (%d rows of 4 KiB): prepare/step %.3f s, "
	       "sptd_store_raw_pt_each %.3f s: %.2fx\n", N_CHUNKS, tg, tn, tg / tn);
	sptd_store_destroy(st);
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
		ret = SPTD_STORE_ADD(st, slice, i, i * 100, 50, (int)(i & 7), i % 1000,
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
	snprintf(path, sizeof(path), "%s/read.db", dir);
	compare_reads(path);
out:
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return SPTD_TEST_END();
}
