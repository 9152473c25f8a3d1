/* test_derive_samples.c — sptd_col_derive_samples on raw tables written
 * with store/'s public API: raw_sample call chains (PERF_CONTEXT_* markers
 * included), raw_mmap mappings of one process and of the kernel, dso and
 * symbol rows.  Every sample and callsite row is compared exactly:
 * outermost caller first, identical prefixes shared, a resolved frame
 * interned by (parent, symbol) and stored at the symbol's start, an
 * unresolved one by (parent, ip) and stored at the ip.  Mappings with an
 * end time (raw_mmap.until_ts: a child before and after its exec) name a
 * frame by the mapping in force at its sample's time. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>

#include "derive_harness.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "store_rows.h"

/* /usr/bin/app is mapped at 0x400000 in pid 42 (bias 0x3ff000: its file
 * address 0x1000 runs at 0x400000); the kernel at its own addresses. */
#define BIAS 0x3ff000ull
#define KSTART 0xffffffff81000000ull
#define USER ((uint64_t)PERF_CONTEXT_USER)
#define KERNEL ((uint64_t)PERF_CONTEXT_KERNEL)

static void incident(struct sptd_store *st)
{
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, "/usr/bin/app", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 2, "[kernel.kallsyms]", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 10, "main", 1, 0x1000, 0x100), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 11, "work", 1, 0x1100, 0x80), 0);
	/* size 0: the capture only knew it contains the address it stored */
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 12, "leaf", 1, 0x1200, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 20, "schedule", 2, KSTART, 0x1000), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 42, 0x400000, 0x402000, 0, 1, (int64_t)BIAS, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, -1, KSTART, KSTART + 0x1000000, 0, 2, 0, 0), 0);
}

/* One raw_sample of pid 42. */
#define SAMPLE(ts, cpu, tid, ...)                                                \
	do {                                                                     \
		const uint64_t chain_[] = { __VA_ARGS__ };                       \
		CHECK_INT(SPTD_STORE_ADD(st, raw_sample, ts, cpu, 42, tid, chain_, \
		                         sizeof(chain_) / sizeof(chain_[0]), SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0); \
	} while (0)

static void samples(struct sptd_store *st)
{
	/* main -> work -> leaf (innermost first, as the kernel gives them) */
	SAMPLE(100, 0, 42, USER, 0x400210, 0x400110, 0x400010);
	/* thread 43 in the kernel under main -> work: main and work shared
	 * with the first stack, though the ips differ */
	SAMPLE(200, 1, 43, KERNEL, KSTART + 0x100, USER, 0x400150, 0x400020);
	/* an ip in no mapping: unresolved, kept by address */
	SAMPLE(300, 0, 42, USER, 0x500000, 0x400010);
	/* a task already past exit (tid -1): sample with no thread */
	SAMPLE(400, 0, -1, USER, 0x400010);
	/* markers only: nothing to attribute, no sample */
	SAMPLE(500, 0, 42, USER);
	/* past leaf (size 0): still leaf; past work's size: unresolved */
	SAMPLE(600, 1, 42, USER, 0x400300);
	SAMPLE(700, 0, 42, USER, 0x400190);
	SAMPLE(800, 0, 42, USER, 0x400190);
}

#define Q_CALLSITES                                                              \
	"SELECT id, parent_id, depth, symbol_id, printf('%x', addr) FROM callsite ORDER BY id"
#define Q_SAMPLES "SELECT ts, cpu, utid, callsite_id FROM sample ORDER BY ts"
#define WANT_CALLSITES                                                           \
	"1|NULL|0|10|1000\n"                                                     \
	"2|1|1|11|1100\n"                                                        \
	"3|2|2|12|1200\n"                                                        \
	"4|2|2|20|ffffffff81000000\n"                                            \
	"5|1|1|NULL|500000\n"                                                    \
	"6|NULL|0|12|1200\n"                                                     \
	"7|NULL|0|21|1190\n"
#define WANT_SAMPLES                                                             \
	"100|0|0|3\n"                                                            \
	"200|1|1|4\n"                                                            \
	"300|0|0|5\n"                                                            \
	"400|0|NULL|1\n"                                                         \
	"600|1|0|6\n"                                                            \
	"700|0|0|7\n"                                                            \
	"800|0|0|7\n"

static void test_samples(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("samples", &tasks, &st), 0);
	if (!tasks || !st)
		goto out;
	incident(st);
	samples(st);
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	CHECK_ROWS(st, Q_CALLSITES, WANT_CALLSITES);
	CHECK_ROWS(st, Q_SAMPLES, WANT_SAMPLES);
	/* past work's size in a known mapping: perf's "[unknown]" in that dso,
	 * at the dso address (0x400190 minus the mapping's bias 0x3ff000) */
	CHECK_ROWS(st, "SELECT name, dso_id, printf('%x', addr) FROM symbol WHERE id = 21",
	           "[unknown]|1|1190\n");
	/* tids met in time order: 42, then 43 (whose process is 42) */
	CHECK_INT(sptd_col_tasks_utid(tasks, 42), 0);
	CHECK_INT(sptd_col_tasks_utid(tasks, 43), 1);
	CHECK_INT(sptd_col_tasks_store(tasks, st), 0);
	CHECK_ROWS(st, "SELECT utid, tid, upid FROM thread ORDER BY utid", "0|42|0\n1|43|0\n");
	/* derive again (sysptd decode): rows replaced, not added */
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	CHECK_ROWS(st, Q_CALLSITES, WANT_CALLSITES);
	CHECK_ROWS(st, Q_SAMPLES, WANT_SAMPLES);
out:
	harness_case_end(tasks, st);
}

/* No mappings or symbols at all: every frame is unresolved, by ip. */
static void test_unresolved(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("bare", &tasks, &st), 0);
	if (!tasks || !st)
		goto out;
	SAMPLE(10, 2, 42, KERNEL, KSTART + 8, USER, 0x400010);
	SAMPLE(20, 2, 42, KERNEL, KSTART + 8, USER, 0x400010);
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	CHECK_ROWS(st, Q_CALLSITES,
	           "1|NULL|0|NULL|400010\n"
	           "2|1|1|NULL|ffffffff81000008\n");
	CHECK_ROWS(st, Q_SAMPLES, "10|2|0|2\n20|2|0|2\n");
out:
	harness_case_end(tasks, st);
}

/* A child (pid 50) ran its parent's app until its exec at 100, then
 * /usr/bin/other, mapped over the same addresses; the app's mapping also
 * reaches past other's.  Each sample is named by what was mapped at its
 * time: before 100 the app's main (or its sizeless leaf), from 100 on
 * other's other_main, and past other's end nothing at all. */
static void test_in_time(void)
{
	static const struct { int64_t ts; uint64_t ip; } at[] = {
		{ 50, 0x400010 }, { 60, 0x401100 }, { 100, 0x400010 }, { 150, 0x400010 },
		{ 160, 0x401100 },
	};
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("intime", &tasks, &st), 0);
	if (!tasks || !st)
		goto out;
	incident(st);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 3, "/usr/bin/other", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 30, "other_main", 3, 0x1000, 0x100), 0);
	/* after the exec first: stored order must not matter */
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 50, 0x400000, 0x401000, 0, 3, (int64_t)BIAS, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 50, 0x400000, 0x402000, 0, 1, (int64_t)BIAS,
	                         100), 0);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		const uint64_t chain[] = { USER, at[i].ip };

		CHECK_INT(SPTD_STORE_ADD(st, raw_sample, at[i].ts, 0, 50, 50, chain, 2, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	}
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	CHECK_ROWS(st, "SELECT s.ts, coalesce(y.name, '-'), coalesce(y.dso_id, 0) FROM sample s "
	           "JOIN callsite c ON c.id = s.callsite_id LEFT JOIN symbol y ON "
	           "y.id = c.symbol_id ORDER BY s.ts",
	           "50|main|1\n60|leaf|1\n100|other_main|3\n150|other_main|3\n160|-|0\n");
out:
	harness_case_end(tasks, st);
}

static void test_invalid(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("invalid", &tasks, &st), 0);
	CHECK_INT(sptd_col_derive_samples(NULL, tasks), -EINVAL);
	CHECK_INT(sptd_col_derive_samples(st, NULL), -EINVAL);
	/* nothing to derive: success, no rows */
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	CHECK_ROWS(st, Q_SAMPLES, "");
	CHECK_ROWS(st, Q_CALLSITES, "");
	harness_case_end(tasks, st);
}

int main(void)
{
	if (harness_init("dsamples") < 0)
		return 1;
	test_invalid();
	test_samples();
	test_unresolved();
	test_in_time();
	harness_fini();
	return SPTD_TEST_END();
}
