/* test_store_clear.c — deleting what one producer wrote (store_clear.c)
 * and emptying every derived table (sptd_store_derived_clear) on real
 * SQLite files: exactly the rows named go, the rest stays; LIKE's own
 * characters in a prefix are literal; read-only and committed stores
 * refuse; every function's argument checks. */
#include <stdint.h>

#include "sptd_store_mem.h"
#include "store_fixture.h"

/* The gap reasons left, by id, as "a,b,c". */
static void gaps_left(struct sptd_store *st, char *out, size_t len)
{
	struct sptd_store_stmt *q = NULL;
	size_t n = 0;

	out[0] = '\0';
	CHECK_INT(sptd_store_prepare(st, "SELECT reason FROM gap ORDER BY id", &q), 0);
	while (sptd_store_step(q) == 1 && n < len)
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "," : "",
		                      sptd_store_column_text(q, 0));
	sptd_store_finalize(q);
}

static void test_gap_clear(void)
{
	static const char *const reasons[] = {
		"pt: overflow", "PT: upper case", "pt:no space", "sideband: 3 records lost",
		"100% full", "1000 x", "a_b", "axb", "back\\slash", "backXslash",
	};
	struct sptd_store *st = fixture_create("gap.db");
	char left[512];

	if (!st)
		return;
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		CHECK_INT(SPTD_STORE_ADD(st, gap, (int64_t)i, 0, -1, reasons[i]), 0);
	/* a prefix, ASCII case-insensitive as LIKE */
	CHECK_INT(sptd_store_gap_clear(st, "pt: "), 2);
	CHECK_INT(sptd_store_gap_clear(st, "pt: "), 0);
	CHECK_INT(sptd_store_gap_clear(st, "sideband: "), 1);
	/* %, _ and \ in the prefix are themselves */
	CHECK_INT(sptd_store_gap_clear(st, "100%"), 1);
	CHECK_INT(sptd_store_gap_clear(st, "a_"), 1);
	CHECK_INT(sptd_store_gap_clear(st, "back\\"), 1);
	CHECK_INT(sptd_store_gap_clear(st, "zzz"), 0);
	gaps_left(st, left, sizeof(left));
	CHECK_STR(left, "pt:no space,1000 x,axb,backXslash");
	CHECK_INT(sptd_store_commit(st), 0);
	CHECK_INT(sptd_store_gap_clear(st, "pt:"), -EROFS);
	sptd_store_destroy(st);
}

static void test_stats_clear(void)
{
	static const char *const pt[] = { "calls", "returns", "not_there" };
	struct sptd_store *st = fixture_create("stats.db");
	int64_t n = -1;

	if (!st)
		return;
	CHECK_INT(SPTD_STORE_ADD(st, stats, "calls", 0, 1), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "calls", 1, 2), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "calls", -1, 3), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "returns", 0, 4), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "sched_events", -1, 5), 0);
	CHECK_INT(sptd_store_stats_clear(st, pt, 0), 0);
	CHECK_INT(sptd_store_stats_clear(st, NULL, 0), 0);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_STATS, &n), 0);
	CHECK_INT(n, 5);
	CHECK_INT(sptd_store_stats_clear(st, pt, 3), 4);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_STATS, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(sptd_store_stats_clear(st, pt, 3), 0);
	st = fixture_reopen(st);
	if (!st)
		return;
	CHECK_INT(sptd_store_stats_clear(st, pt, 1), -EROFS);
	CHECK(fixture_has(sptd_store_errmsg(st), "read-only"));
	sptd_store_destroy(st);
}

/* One row in every table. */
static void fill_every_table(struct sptd_store *st)
{
	static const uint64_t chain[] = { 0x401000 };

	CHECK_INT(SPTD_STORE_ADD(st, trigger, 1, 0, "irq", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, process, 1, 100, "app", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, thread, 1, 100, 1, "app"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 0, 1, 0, 1, "S", 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, thread_state, 0, 1, 1, "S", -1, -1, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, irq_slice, 0, 1, 0, 11, "eth0", 1, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, softirq_slice, 0, 1, 0, 3, "NET_RX", 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, slice, 1, 0, 1, 0, 1, 0, -1, 1, SPTD_SLICE_USER, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 1, "main", 1, 0x401000, 0x10), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, "/usr/bin/app", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sample, 0, 0, 1, 1), 0);
	CHECK_INT(SPTD_STORE_ADD(st, ftrace_event, 0, 0, 1, "sched:sched_process_exec", "{\"pid\":1}"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, callsite, 1, -1, 0, 1, 0x401000), 0);
	CHECK_INT(SPTD_STORE_ADD(st, gap, 0, 1, -1, "pt: overflow"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "calls", 0, 1), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_page, 0, 0, "p", 1), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_format, "header_page", "x"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 0, 0, 100, 100, chain, 1, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_task, 100, 100, "app", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 100, 0x400000, 0x401000, 0, 1, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 0, 0, "t", 1), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 0, 0, "s", 1), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_image, 1, 0x401000, "c", 1, NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 0, 0, 0, 100, "app", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, cpu_freq, 0, 0, 24, 2400000), 0);
	{
		struct sptd_store_cpu_idle_row r = { .ts = 0, .dur = 5, .state = 6, .sub_state = 0,
		                                     .requested = 6, .requested_sub = -1,
		                                     .last = 6, .deepest = 6, .wake = "interrupt" };

		CHECK_INT(sptd_store_add(st, SPTD_STORE_T_CPU_IDLE, &r), 0);
	}
	CHECK_INT(SPTD_STORE_ADD(st, ptwrite, 0, 0, 1, 0x401000, 0xdeadbeef, 4), 0);
	{
		struct sptd_store_watch_hit_row r = { .ts = 1, .tid = 100, .ip = 0x401010,
		                                      .function = "f+0x3", .watch = 1, .old_value = 1,
		                                      .new_value = 2, .trigger = "watch=100:v" };

		CHECK_INT(sptd_store_add(st, SPTD_STORE_T_WATCH_HIT, &r), 0);
	}
	CHECK_INT(SPTD_STORE_ADD(st, mem_sample, .ts = 1, .cpu = 0, .utid = 1, .pc = 0x401010, .symbol_id = 1,
	                         .vaddr = 0x7f0000001000, .paddr = 0, .op = "load",
	                         .data_source = 0, .lat_total = 9, .lat_issue = 2, .lat_xlat = 1,
	                         .events = 6), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_spe, 0, 0, "e", 1), 0);
}

/* Is @t one of the tables decode rebuilds? */
static int derived(enum sptd_store_table_id t)
{
	switch (t) {
	case SPTD_STORE_T_PROCESS: case SPTD_STORE_T_THREAD: case SPTD_STORE_T_SCHED_SLICE:
	case SPTD_STORE_T_THREAD_STATE: case SPTD_STORE_T_IRQ_SLICE:
	case SPTD_STORE_T_SOFTIRQ_SLICE: case SPTD_STORE_T_SLICE: case SPTD_STORE_T_SAMPLE:
	case SPTD_STORE_T_CALLSITE: case SPTD_STORE_T_GAP: case SPTD_STORE_T_STATS:
	case SPTD_STORE_T_FTRACE_EVENT: case SPTD_STORE_T_CPU_FREQ: case SPTD_STORE_T_CPU_IDLE:
	case SPTD_STORE_T_PTWRITE: case SPTD_STORE_T_MEM_SAMPLE:
		return 1;
	default:
		return 0;
	}
}

static void test_derived_clear(void)
{
	struct sptd_store *st = fixture_create("derived.db");
	int64_t n;

	if (!st)
		return;
	fill_every_table(st);
	CHECK_INT(sptd_store_derived_clear(st), 0);
	for (int i = 0; i < SPTD_STORE_T_COUNT; i++) {
		n = -1;
		CHECK_INT(sptd_store_count(st, (enum sptd_store_table_id)i, &n), 0);
		if (n != (derived((enum sptd_store_table_id)i) ? 0 : 1))
			fprintf(stderr, "table %s: %" PRId64 " rows\n",
			        sptd_store_table_name((enum sptd_store_table_id)i), n);
		CHECK_INT(n, derived((enum sptd_store_table_id)i) ? 0 : 1);
	}
	/* refilled and committed: the indexes are back */
	CHECK_INT(SPTD_STORE_ADD(st, slice, 1, 0, 1, 0, 1, 0, -1, 1, SPTD_SLICE_USER, 0), 0);
	st = fixture_reopen(st);
	if (!st)
		return;
	{
		struct sptd_store_stmt *q = NULL;

		CHECK_INT(sptd_store_prepare(st, "SELECT count(*) FROM sqlite_schema WHERE "
		                             "type = 'index' AND sql IS NOT NULL", &q), 0);
		CHECK_INT(sptd_store_step(q), 1);
		CHECK_INT(sptd_store_column_int(q, 0), 12);
		sptd_store_finalize(q);
	}
	CHECK_INT(sptd_store_derived_clear(st), -EROFS);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SLICE, &n), 0);
	CHECK_INT(n, 1);
	sptd_store_destroy(st);
}

static void test_invalid_args(void)
{
	static const char *const with_null[] = { "calls", NULL };
	struct sptd_store *st = fixture_create("inv.db");

	CHECK_INT(sptd_store_derived_clear(NULL), -EINVAL);
	CHECK_INT(sptd_store_gap_clear(NULL, "pt: "), -EINVAL);
	CHECK_INT(sptd_store_stats_clear(NULL, with_null, 1), -EINVAL);
	if (!st)
		return;
	CHECK_INT(sptd_store_gap_clear(st, NULL), -EINVAL);
	CHECK(fixture_has(sptd_store_errmsg(st), "prefix"));
	CHECK_INT(sptd_store_gap_clear(st, ""), -EINVAL);
	CHECK_INT(sptd_store_stats_clear(st, NULL, 1), -EINVAL);
	CHECK_INT(sptd_store_stats_clear(st, with_null, 2), -EINVAL);
	CHECK(fixture_has(sptd_store_errmsg(st), "name is NULL"));
	/* nothing was deleted by a rejected call; the store still works */
	CHECK_INT(SPTD_STORE_ADD(st, stats, "calls", 0, 1), 0);
	CHECK_INT(sptd_store_stats_clear(st, with_null, 1), 1);
	sptd_store_destroy(st);
}

int main(void)
{
	fixture_begin();
	test_gap_clear();
	test_stats_clear();
	test_derived_clear();
	test_invalid_args();
	fixture_end();
	return SPTD_TEST_END();
}
