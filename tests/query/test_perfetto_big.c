/* test_perfetto_big.c — export of an incident of 1,000,000 call slices (4
 * threads, nested 3 deep, 1,000 symbols) plus 20,000 sched slices: prints
 * how long the export took (never asserted) and checks the decoded trace
 * against the incident like the small tests do. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pftrace_reader.h"
#include "sptd_query.h"
#include "sptd_store.h"
#include "sptd_test.h"

#define THREADS 4
#define GROUPS_PER_THREAD 50000 /* 5 slices each: 1,000,000 in all */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	char dir[] = "/tmp/sptd-pfbig-XXXXXX", path[128], out[128], err[256], name[32];
	struct sptd_query_export_stats stats;
	struct sptd_store *st = NULL;
	struct pftrace t;
	int64_t id = 1, ts;
	int th, g, i, ok = 1;
	double t0, t1;
	FILE *f;

	if (!mkdtemp(dir))
		SPTD_SKIP("cannot create a temporary directory");
	snprintf(path, sizeof(path), "%s/big.db", dir);
	snprintf(out, sizeof(out), "%s/big.pftrace", dir);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		return SPTD_TEST_END();
	sptd_store_meta_set_int(st, "window_start", 0);
	sptd_store_meta_set_int(st, "window_end", (int64_t)GROUPS_PER_THREAD * 100);
	sptd_store_meta_set(st, "clock", "tsc");
	SPTD_STORE_ADD(st, process, 1, 1000, "big", NULL);
	SPTD_STORE_ADD(st, dso, 1, "/usr/bin/big", NULL);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		ok &= SPTD_STORE_ADD(st, symbol, i, name, 1, 0x1000 + (uint64_t)i * 16, 16) >= 0;
	}
	for (th = 1; th <= THREADS; th++) {
		ok &= SPTD_STORE_ADD(st, thread, th, 1000 + th, 1, "worker") >= 0;
		for (g = 0; g < GROUPS_PER_THREAD; g++) {
			int64_t root = id, c1 = id + 1;

			ts = (int64_t)g * 100;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts, 100, 0, th, 0, -1, g % 1000, "user", 0) >= 0;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts + 10, 30, 0, th, 1, root, (g + 1) % 1000, "user", 0) >= 0;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts + 15, 10, 0, th, 2, c1, (g + 2) % 1000, "kernel", 0) >= 0;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts + 50, 40, 0, th, 1, root, (g + 3) % 1000, "syscall", 0) >= 0;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts + 90, 0, 0, th, 1, root, -1, "user", 4) >= 0;
		}
	}
	for (i = 0; i < 20000; i++)
		ok &= SPTD_STORE_ADD(st, sched_slice, (int64_t)(i / 2) * 500, 500, i % 2,
		                     1 + (i % THREADS), "S", 120, 0) >= 0;
	CHECK(ok);
	CHECK_INT(sptd_store_commit(st), 0);

	f = fopen(out, "wb");
	CHECK(f != NULL);
	if (!f)
		return SPTD_TEST_END();
	t0 = now();
	CHECK_INT(sptd_query_export(st, f, SPTD_QUERY_EXPORT_PROTO, &stats, err, sizeof(err)), 0);
	fclose(f);
	t1 = now();
	printf("exported %llu slices, %llu sched switches in %.2f s (%.1f MB)\n",
	       (unsigned long long)stats.slices, (unsigned long long)stats.sched_switches,
	       t1 - t0, (double)stats.bytes / 1e6);
	CHECK_INT(stats.slices, (int64_t)THREADS * GROUPS_PER_THREAD * 5);
	CHECK_INT(stats.clamped, 0);
	CHECK_INT(pft_read(out, &t, err, sizeof(err)), 0);
	CHECK_INT(pft_check_incident(st, &t), 0);
	printf("decoded and checked in %.2f s\n", now() - t1);
	pft_free(&t);
	sptd_store_destroy(st);
	if (!getenv("SPTD_KEEP")) {
		remove(out);
		remove(path);
		rmdir(dir);
	}
	return SPTD_TEST_END();
}
