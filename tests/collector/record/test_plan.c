/* test_plan.c — the capture plan, table-driven: window, post, --buffer,
 * source, --freq, --timing, the PMU's ToPA limit and the page size in;
 * the ftrace ring, AUX ring (and its coverage), sample ring and sideband
 * ring out.  Then the "armed:" text, the meta keys and bad arguments. */
#include <errno.h>

#include "plan-local.h"
#include "sptd_store.h"
#include "sptd_test.h"

#define MS 1000000LL
#define KiB 1024ull
#define MiB (1024ull * 1024)

static void test_table(void)
{
	static const struct {
		const char *what;
		enum sptd_col_source source;
		int64_t window_ns, post_ns;
		uint64_t buffer_bytes;
		int freq;
		enum sptd_col_pt_timing timing;
		int topa_multiple;       /* PT: the PMU's caps/topa_multiple_entries */
		size_t page_bytes;
		uint64_t ftrace_kb;      /* expected */
		uint64_t aux_bytes;
		int64_t coverage_ns;
		size_t sample_pages, sideband_pages;
		int user_only;           /* PT: --user */
		int cyc;                 /* PT: the PMU has CYC (caps/psb_cyc, cyc term)
		                          * and noretcomp */
	} cases[] = {
		/* sampling: ftrace ring from the span (floor 1 MiB), or --buffer */
		{ "sample 10ms", SPTD_SOURCE_SAMPLE, 10 * MS, 0, 0, 10000, 0, 0, 4096,
		  1024, 0, 0, 128, 0, 0, 0 },
		{ "sample --buffer 4M", SPTD_SOURCE_SAMPLE, 10 * MS, 0, 4 * MiB, 10000, 0, 0, 4096,
		  4096, 0, 0, 128, 0, 0, 0 },
		{ "sample 1s + post 500ms", SPTD_SOURCE_SAMPLE, 1000 * MS, 500 * MS, 0, 10000, 0, 0, 4096,
		  1501 * 64, 0, 0, 8192, 0, 0, 0 },
		{ "sample 10s: both rings capped", SPTD_SOURCE_SAMPLE, 10000 * MS, 0, 0, 100000, 0, 0, 4096,
		  262144, 0, 0, 8192, 0, 0, 0 },
		{ "sample 1 Hz: the ring floor", SPTD_SOURCE_SAMPLE, 1 * MS, 0, 0, 1, 0, 0, 4096,
		  1024, 0, 0, 32, 0, 0, 0 },
		{ "sample 16K pages", SPTD_SOURCE_SAMPLE, 10 * MS, 0, 0, 10000, 0, 0, 16384,
		  1024, 0, 0, 32, 0, 0, 0 },
		/* PT: --buffer is the AUX ring; the ftrace ring follows the span.
		 * Rates (plan.c): 300 MB/s kernel+user, 200 user-only; x2 with
		 * CYC (--timing normal/high where caps/psb_cyc), x1.5 more with
		 * noretcomp (high) */
		{ "pt 10ms normal: 600 MB/s with CYC, 12 MB", SPTD_SOURCE_PT, 10 * MS, 0, 0, 10000,
		  SPTD_PT_TIMING_NORMAL, 1, 4096, 1024, 16 * MiB, 27962026, 0, 64, 0, 1 },
		{ "pt 10ms normal user-only: 400 MB/s", SPTD_SOURCE_PT, 10 * MS, 0, 0, 10000,
		  SPTD_PT_TIMING_NORMAL, 1, 4096, 1024, 8 * MiB, 20971520, 0, 64, 1, 1 },
		{ "pt 10ms normal, no CYC on this PMU: 300 MB/s", SPTD_SOURCE_PT, 10 * MS, 0, 0, 10000,
		  SPTD_PT_TIMING_NORMAL, 1, 4096, 1024, 8 * MiB, 27962026, 0, 64, 0, 0 },
		{ "pt 10ms, single ToPA: 4 MiB at most", SPTD_SOURCE_PT, 10 * MS, 0, 0, 10000,
		  SPTD_PT_TIMING_NORMAL, 0, 4096, 1024, 4 * MiB, 6990506, 0, 64, 0, 1 },
		{ "pt 10ms, single ToPA, no CYC", SPTD_SOURCE_PT, 10 * MS, 0, 0, 10000,
		  SPTD_PT_TIMING_NORMAL, 0, 4096, 1024, 4 * MiB, 13981013, 0, 64, 0, 0 },
		{ "pt --buffer 64K: ftrace ring still from the window", SPTD_SOURCE_PT, 10 * MS, 0, 64 * KiB,
		  10000, SPTD_PT_TIMING_NORMAL, 1, 4096, 1024, 64 * KiB, 109226, 0, 64, 0, 1 },
		{ "pt --buffer 100K: up to a power of two", SPTD_SOURCE_PT, 10 * MS, 0, 100 * KiB, 10000,
		  SPTD_PT_TIMING_NORMAL, 1, 4096, 1024, 128 * KiB, 218453, 0, 64, 0, 1 },
		{ "pt 1ms low: 300 MB/s", SPTD_SOURCE_PT, 1 * MS, 0, 0, 10000, SPTD_PT_TIMING_LOW, 1, 4096,
		  1024, 1 * MiB, 3495253, 0, 64, 0, 1 },
		{ "pt 100ms + post 100ms high: 900 MB/s", SPTD_SOURCE_PT, 100 * MS, 100 * MS, 0, 10000,
		  SPTD_PT_TIMING_HIGH, 1, 4096, 201 * 64, 512 * MiB, 596523235, 0, 64, 0, 1 },
		{ "pt 10ms high user-only: 600 MB/s", SPTD_SOURCE_PT, 10 * MS, 0, 0, 10000,
		  SPTD_PT_TIMING_HIGH, 1, 4096, 1024, 16 * MiB, 27962026, 0, 64, 1, 1 },
		{ "pt --buffer 2G: the ToPA limit", SPTD_SOURCE_PT, 10 * MS, 0, 2048 * MiB, 10000,
		  SPTD_PT_TIMING_NORMAL, 1, 4096, 1024, 1024 * MiB, 1789569706, 0, 64, 0, 1 },
		{ "pt no window: the smallest AUX ring", SPTD_SOURCE_PT, 0, 0, 0, 10000,
		  SPTD_PT_TIMING_NORMAL, 1, 4096, 1024, 64 * KiB, 109226, 0, 64, 0, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sptd_col_record_opts o = {
			.window_ns = cases[i].window_ns, .post_ns = cases[i].post_ns,
			.buffer_bytes = cases[i].buffer_bytes, .freq = cases[i].freq,
			.timing = cases[i].timing, .user_only = cases[i].user_only,
		};
		struct sptd_col_pt_pmu pmu = { .topa_multiple = cases[i].topa_multiple,
		                               .cap_psb_cyc = cases[i].cyc,
		                               .cyc = { .present = cases[i].cyc },
		                               .noretcomp = { .present = cases[i].cyc } };
		struct sptd_col_plan p;
		int failed = sptd_test_failed;

		CHECK_INT(sptd_col_plan_compute(&o, cases[i].source, &pmu, cases[i].page_bytes, &p), 0);
		CHECK_INT(p.source, cases[i].source);
		CHECK_INT(p.span_ns, cases[i].window_ns + cases[i].post_ns);
		CHECK_INT(p.ftrace_kb, cases[i].ftrace_kb);
		CHECK_INT(p.aux.bytes, cases[i].aux_bytes);
		CHECK_INT(p.aux.coverage_ns, cases[i].coverage_ns);
		CHECK_INT(p.sample_pages, cases[i].sample_pages);
		CHECK_INT(p.sideband_pages, cases[i].sideband_pages);
		CHECK_INT(p.page_bytes, cases[i].page_bytes);
		if (sptd_test_failed != failed)
			fprintf(stderr, "  plan case '%s'\n", cases[i].what);
	}
}

/* The AUX ring of a PT setup is the plan's: one arithmetic for both. */
static void test_aux(void)
{
	struct sptd_col_pt_pmu pmu = { .topa_multiple = 1 };
	struct sptd_col_plan_aux aux;

	CHECK_INT(sptd_col_plan_aux_max(&pmu), 1024 * MiB);
	pmu.topa_multiple = 0;
	CHECK_INT(sptd_col_plan_aux_max(&pmu), 4 * MiB);
	CHECK_INT(sptd_col_plan_aux_max(NULL), 4 * MiB);
	CHECK_INT(sptd_col_plan_aux_size(&pmu, SPTD_PT_TIMING_NORMAL, 0, 0, 10 * MS, &aux), 0);
	CHECK_INT(aux.bytes, 4 * MiB);
	CHECK_INT(aux.max_bytes, 4 * MiB);
	CHECK_INT(aux.rate_bytes_s, 300000000);   /* no CYC on this PMU */
	/* a ring the plan chose is kept as it is when asked for again */
	CHECK_INT(sptd_col_plan_aux_size(&pmu, SPTD_PT_TIMING_NORMAL, 0, aux.bytes, 10 * MS, &aux), 0);
	CHECK_INT(aux.bytes, 4 * MiB);
	CHECK_INT(sptd_col_plan_aux_size(NULL, SPTD_PT_TIMING_NORMAL, 0, 0, 10 * MS, &aux), -EINVAL);
	CHECK_INT(sptd_col_plan_aux_size(&pmu, SPTD_PT_TIMING_NORMAL, 0, 0, 10 * MS, NULL), -EINVAL);
	CHECK_INT(sptd_col_plan_aux_size(&pmu, (enum sptd_col_pt_timing)7, 0, 0, 10 * MS, &aux), -EINVAL);
	CHECK_INT(sptd_col_plan_aux_size(&pmu, SPTD_PT_TIMING_NORMAL, 0, 0, -1, &aux), -EINVAL);

	/* the rate follows what the config turns on, as the PMU allows it */
	pmu.cap_psb_cyc = 1;
	pmu.cyc.present = 1;
	pmu.noretcomp.present = 1;
	CHECK_INT(sptd_col_plan_pt_rate(&pmu, SPTD_PT_TIMING_LOW, 1), 200000000);
	CHECK_INT(sptd_col_plan_pt_rate(&pmu, SPTD_PT_TIMING_LOW, 0), 300000000);
	CHECK_INT(sptd_col_plan_pt_rate(&pmu, SPTD_PT_TIMING_NORMAL, 1), 400000000);
	CHECK_INT(sptd_col_plan_pt_rate(&pmu, SPTD_PT_TIMING_NORMAL, 0), 600000000);
	CHECK_INT(sptd_col_plan_pt_rate(&pmu, SPTD_PT_TIMING_HIGH, 1), 600000000);
	CHECK_INT(sptd_col_plan_pt_rate(&pmu, SPTD_PT_TIMING_HIGH, 0), 900000000);
	pmu.cap_psb_cyc = 0;   /* Broadwell: no CYC, noretcomp still */
	CHECK_INT(sptd_col_plan_pt_rate(&pmu, SPTD_PT_TIMING_HIGH, 0), 450000000);
	CHECK_INT(sptd_col_plan_coverage_ns(4 * MiB, 0), 0);
	CHECK_INT(sptd_col_plan_coverage_ns(600000000, 600000000), 1000000000);
}

/* Each buffer named for what it is (the "armed:" line). */
static void test_describe(void)
{
	struct sptd_col_record_opts o = { .window_ns = 10 * MS, .freq = 10000,
	                                  .timing = SPTD_PT_TIMING_NORMAL, .buffer_bytes = 64 * KiB };
	struct sptd_col_pt_pmu pmu = { .topa_multiple = 1 };
	struct sptd_col_plan p;
	char buf[256];

	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_PT, &pmu, 4096, &p), 0);
	CHECK(sptd_col_plan_describe(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "ftrace ring 1024 KiB + AUX ring 64 KiB + sideband ring 256 KiB");
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_SAMPLE, NULL, 4096, &p), 0);
	CHECK(sptd_col_plan_describe(&p, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "ftrace ring 64 KiB + sample ring 512 KiB");
	CHECK_INT(sptd_col_plan_describe(NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_INT(sptd_col_plan_describe(&p, NULL, sizeof(buf)), -EINVAL);
	CHECK_INT(sptd_col_plan_describe(&p, buf, 0), -EINVAL);
}

static void test_meta(const char *dir)
{
	struct sptd_col_record_opts o = { .window_ns = 10 * MS, .freq = 10000,
	                                  .timing = SPTD_PT_TIMING_NORMAL };
	struct sptd_col_pt_pmu pmu = { .topa_multiple = 1 };
	static const enum sptd_col_source sources[] = { SPTD_SOURCE_SAMPLE, SPTD_SOURCE_PT };

	for (size_t i = 0; i < 2; i++) {
		struct sptd_store *st = NULL;
		struct sptd_col_plan p;
		char path[512];
		int64_t v = -1;

		snprintf(path, sizeof(path), "%s/plan-%zu.db", dir, i);
		CHECK_INT(sptd_col_plan_compute(&o, sources[i], &pmu, 4096, &p), 0);
		CHECK_INT(sptd_store_create(path, &st), 0);
		if (!st)
			continue;
		CHECK_INT(sptd_col_plan_meta_write(&p, st), 0);
		CHECK_INT(sptd_store_meta_get_int(st, "ftrace_buffer_kb", &v), 0);
		CHECK_INT(v, 1024);
		if (sources[i] == SPTD_SOURCE_PT) {
			CHECK_INT(sptd_store_meta_get_int(st, "sideband_ring_kb", &v), 0);
			CHECK_INT(v, 256);
		} else {
			CHECK_INT(sptd_store_meta_get_int(st, "sample_ring_kb", &v), 0);
			CHECK_INT(v, 512);
		}
		CHECK_INT(sptd_col_plan_meta_write(NULL, st), -EINVAL);
		CHECK_INT(sptd_col_plan_meta_write(&p, NULL), -EINVAL);
		sptd_store_destroy(st);
	}
}

static void test_invalid(void)
{
	struct sptd_col_record_opts o = { .window_ns = 10 * MS, .freq = 10000 };
	struct sptd_col_pt_pmu pmu = { 0 };
	struct sptd_col_plan p;

	CHECK_INT(sptd_col_plan_compute(NULL, SPTD_SOURCE_SAMPLE, NULL, 4096, &p), -EINVAL);
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_SAMPLE, NULL, 4096, NULL), -EINVAL);
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_AUTO, &pmu, 4096, &p), -EINVAL);
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_PT, NULL, 4096, &p), -EINVAL);
	o.window_ns = -1;
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_SAMPLE, NULL, 4096, &p), -EINVAL);
	o.window_ns = 10 * MS;
	o.post_ns = -1;
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_SAMPLE, NULL, 4096, &p), -EINVAL);
	o.post_ns = 0;
	/* page size 0: 4096 */
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_SAMPLE, NULL, 0, &p), 0);
	CHECK_INT(p.page_bytes, 4096);
}

int main(void)
{
	char dir[] = "/tmp/sptd-plan-XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	test_table();
	test_aux();
	test_describe();
	test_meta(dir);
	test_invalid();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		(void)!system(cmd);
	}
	return SPTD_TEST_END();
}
