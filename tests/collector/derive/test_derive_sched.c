/* test_derive_sched.c — sptd_col_derive_sched and sptd_col_derive_all on
 * raw tables written with store/'s public API: a switch list (raw_switch,
 * as import --sched and perf SWITCH records give it), hand-made ftrace
 * pages on the x86-tsc clock (with a corrupt page among them), and a whole
 * `sysptd decode` of a small incident.  Every sched_slice, thread_state,
 * irq_slice, softirq_slice, gap and stats row is compared exactly.
 *
 * utids: a fresh task registry numbers tasks in the order derive_sched
 * names them, by tid (the sched builder announces every task, sorted,
 * before any row), so tid 0, 100, 200, 300 are utids 0, 1, 2, 3. */
#include <errno.h>
#include <stdlib.h>
#include <syslog.h>

#include "derive_harness.h"
#include "ftrace_craft.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "store_rows.h"

#define Q_SLICES "SELECT ts, dur, cpu, utid, end_state, priority FROM sched_slice ORDER BY ts, cpu"
#define Q_STATES "SELECT ts, dur, utid, state, cpu, waker_utid FROM thread_state ORDER BY utid, ts"
#define Q_IRQS "SELECT ts, dur, cpu, irq, name, ret FROM irq_slice ORDER BY ts, cpu"
#define Q_SOFTIRQS "SELECT ts, dur, cpu, vec, name FROM softirq_slice ORDER BY ts, cpu"
#define Q_GAPS "SELECT ts, dur, cpu, reason FROM gap ORDER BY id"
#define Q_STATS "SELECT name, cpu, value FROM stats ORDER BY name, cpu"

static void test_invalid(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("invalid", &tasks, &st), 0);
	CHECK_INT(sptd_col_derive_sched(NULL, tasks), -EINVAL);
	CHECK_INT(sptd_col_derive_sched(st, NULL), -EINVAL);
	CHECK_INT(sptd_col_derive_all(NULL, 0), -EINVAL);
	/* an empty incident: no rows, one stats row */
	CHECK_INT(sptd_col_derive_sched(st, tasks), 0);
	CHECK_ROWS(st, "SELECT count(*) FROM sched_slice", "0\n");
	CHECK_ROWS(st, Q_STATS, "sched_events|NULL|0\n");
	/* jobs < 0 (checked by the PT step, after the scheduling rows) */
	CHECK_INT(sptd_col_derive_all(st, -1), -EINVAL);
	harness_case_end(tasks, st);
}

/* A switch list: window [1000, 10000] ns, two CPUs.  cpu 0 runs 100,
 * then 200, then 100 again; cpu 1 runs 300.  Switch-list switches carry
 * no prev_state (stored as "R") and no priorities (0). */
static void test_switch_list(void)
{
	static const struct {
		int64_t ts;
		int cpu, prev, next;
		const char *comm;
	} sw[] = {
		{ 2000, 0, 0, 100, "alpha" },
		{ 5000, 0, 100, 200, "beta" },
		{ 8000, 0, 200, 100, "alpha" },
		{ 3000, 1, 0, 300, "gamma" },
	};
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("switches", &tasks, &st), 0);
	if (!tasks || !st)
		goto out;
	CHECK_INT(sptd_store_meta_set_int(st, "window_start", 1000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "window_end", 10000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "cpus", 2), 0);
	for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++)
		CHECK_INT(SPTD_STORE_ADD(st, raw_switch, sw[i].ts, sw[i].cpu, sw[i].prev, sw[i].next,
		                         sw[i].comm, NULL), 0);
	CHECK_INT(sptd_col_derive_sched(st, tasks), 0);
	CHECK_INT(sptd_col_tasks_utid(tasks, 100), 1);
	CHECK_INT(sptd_col_tasks_utid(tasks, 300), 3);
	CHECK_ROWS(st, Q_SLICES,
	           "2000|3000|0|1|R|0\n"
	           "3000|7000|1|3|NULL|0\n"      /* open at the window end */
	           "5000|3000|0|2|R|0\n"
	           "8000|2000|0|1|NULL|0\n");
	/* the idle task (utid 0) has slices but no states */
	CHECK_ROWS(st, Q_STATES,
	           "2000|3000|1|Running|0|NULL\n"
	           "5000|3000|1|R|NULL|NULL\n"
	           "8000|2000|1|Running|0|NULL\n"
	           "5000|3000|2|Running|0|NULL\n"
	           "8000|2000|2|R|NULL|NULL\n"
	           "3000|7000|3|Running|1|NULL\n");
	CHECK_ROWS(st, Q_IRQS, "");
	CHECK_ROWS(st, Q_GAPS, "");
	CHECK_ROWS(st, Q_STATS, "sched_events|NULL|4\n");
out:
	harness_case_end(tasks, st);
}

/* TSC ticks -> ns as the incident's meta says: ns = (tsc - 1000000) * 3 / 2
 * + 5000000 (tsc_mult 3, tsc_shift 1). */
#define TSC(ns) ((uint64_t)(((ns) - 5000000) * 2 / 3 + 1000000))

static int store_page(struct sptd_store *st, int cpu, int seq, struct craft_page *p)
{
	CHECK_INT(craft_page_end(p), 0);
	return SPTD_STORE_ADD(st, raw_ftrace_page, cpu, seq, p->data, sizeof(p->data));
}

static void ftrace_incident(struct sptd_store *st)
{
	struct craft_page p;
	uint64_t commit = 5000;

	CHECK_INT(sptd_store_meta_set_int(st, "window_start", 5000000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "window_end", 11000000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "cpus", 3), 0);
	CHECK_INT(sptd_store_meta_set(st, "ftrace_clock", "x86-tsc"), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "tsc_mult", 3), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "tsc_shift", 1), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "tsc_zero", 1000000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "tsc_offset_ns", 5000000), 0);
	CHECK_INT(craft_formats_add(st), 0);

	/* cpu 0: 100 runs, takes irq 11 and a NET_RX softirq, wakes 200,
	 * sleeps; 200 runs until preempted (on a later page) */
	craft_page_begin(&p, TSC(5003000));
	craft_switch(&p, TSC(5003000), 0, "swapper/0", 0, 120, CRAFT_STATE_R, "alpha", 100, 120);
	craft_irq_entry(&p, TSC(5006000), 100, 11, "eth0");
	craft_irq_exit(&p, TSC(5006600), 100, 11, 1);
	craft_softirq(&p, TSC(5006600), 100, 3, 1);
	craft_softirq(&p, TSC(5007500), 100, 3, 0);
	craft_waking(&p, TSC(5009000), 100, "beta", 200, 110, 0);
	craft_switch(&p, TSC(5012000), 100, "alpha", 100, 120, CRAFT_STATE_S, "beta", 200, 110);
	CHECK_INT(store_page(st, 0, 0, &p), 0);
	/* a corrupt page: its commit runs past the page; skipped, a gap */
	craft_page_begin(&p, TSC(5013000));
	craft_irq_exit(&p, TSC(5013000), 200, 12, 1);
	CHECK_INT(craft_page_end(&p), 0);
	memcpy(p.data + 8, &commit, 8);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_page, 0, 1, p.data, sizeof(p.data)), 0);
	craft_page_begin(&p, TSC(5015000));
	craft_switch(&p, TSC(5015000), 200, "beta", 200, 110, CRAFT_STATE_R | CRAFT_STATE_PREEMPT,
	             "swapper/0", 0, 120);
	CHECK_INT(store_page(st, 0, 2, &p), 0);

	/* cpu 1: data starts 3 ms into the window (ring overwritten); an irq
	 * exit without its entry, a softirq and an irq still open at the end */
	craft_page_begin(&p, TSC(8000000));
	craft_switch(&p, TSC(8000000), 0, "swapper/1", 0, 120, CRAFT_STATE_R, "gamma", 300, 120);
	craft_irq_exit(&p, TSC(8003000), 300, 9, 1);
	craft_softirq(&p, TSC(8006000), 300, 1, 1);
	craft_irq_entry(&p, TSC(8009000), 300, 10, "ahci");
	CHECK_INT(store_page(st, 1, 0, &p), 0);
	/* cpu 2: no events at all */
}

static void test_ftrace_pages(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("ftrace", &tasks, &st), 0);
	if (!tasks || !st)
		goto out;
	ftrace_incident(st);
	harness_log[0] = '\0';
	CHECK_INT(sptd_col_derive_sched(st, tasks), 0);
	CHECK_STR(harness_log, "1 unreadable ftrace pages skipped (gaps \"sched: unreadable "
	          "ftrace page skipped\")");
	/* the corrupt page breaks cpu 0's record from its last event before
	 * (5012000) to its first after (5015000): beta's slice on cpu 0 and
	 * what alpha did meanwhile are not proven, so no rows span it */
	CHECK_ROWS(st, Q_SLICES,
	           "5003000|9000|0|1|S|120\n"
	           "5015000|5985000|0|0|NULL|120\n"
	           "8000000|3000000|1|3|NULL|120\n");
	/* 200: runnable from its wakeup (waker 100 = utid 1) until it ran */
	CHECK_ROWS(st, Q_STATES,
	           "5003000|9000|1|Running|0|NULL\n"
	           "5009000|3000|2|R|NULL|1\n"
	           "5015000|5985000|2|R+|NULL|NULL\n"
	           "8000000|3000000|3|Running|1|NULL\n");
	/* irq 9's entry is before cpu 1's data: from its first event, no
	 * name; irq 10 never returned: ret -1 at the window end */
	CHECK_ROWS(st, Q_IRQS,
	           "5006000|600|0|11|eth0|1\n"
	           "8000000|3000|1|9||1\n"
	           "8009000|2991000|1|10|ahci|-1\n");
	/* the TIMER softirq never exits: it ends at irq 10's entry, whose
	 * context flags (no softirq bit) prove it was over by then */
	CHECK_ROWS(st, Q_SOFTIRQS,
	           "5006600|900|0|3|NET_RX\n"
	           "8006000|3000|1|1|TIMER\n");
	CHECK_ROWS(st, Q_GAPS,
	           "5000000|3000000|1|sched: ftrace ring overwritten before window start\n"
	           "5000000|6000000|2|sched: no ftrace events from this CPU\n"
	           "5012000|3000|0|sched: unreadable ftrace page skipped\n");
	CHECK_ROWS(st, Q_STATS, "ftrace_bad_pages|NULL|1\nsched_events|NULL|12\n");
	CHECK_INT(sptd_col_tasks_utid(tasks, 300), 3);
out:
	harness_case_end(tasks, st);
}

/* ftrace said x86-tsc but meta has no conversion: a clear error, no rows. */
static void test_tsc_without_conversion(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("notsc", &tasks, &st), 0);
	if (!tasks || !st)
		goto out;
	CHECK_INT(sptd_store_meta_set(st, "ftrace_clock", "x86-tsc"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 10, 0, 0, 1, "one", NULL), 0);
	harness_log[0] = '\0';
	CHECK_INT(sptd_col_derive_sched(st, tasks), -EBADMSG);
	CHECK(strstr(harness_log, "no TSC conversion") != NULL);
	CHECK_ROWS(st, "SELECT count(*) FROM sched_slice", "0\n");
out:
	harness_case_end(tasks, st);
}

/* derive_all: what `sysptd decode` runs.  Stale derived rows go, tasks
 * come from raw_task (names and processes) and the switches. */
static void test_derive_all(void)
{
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_test_store_new(harness_dir, "all", &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_meta_set_int(st, "window_start", 1000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "window_end", 6000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "cpus", 1), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_task, 42, 42, "app", "app --x"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_task, 42, 43, "app-worker", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 2000, 0, 0, 42, "app", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 4000, 0, 42, 43, "app-worker", NULL), 0);
	/* what an earlier decode left */
	CHECK_INT(SPTD_STORE_ADD(st, slice, 1, 1000, 10, 0, 0, 0, -1, -1, "user", 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, gap, 1000, 10, 0, "pt: stale"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 1000, 5, 0, 7, "S", 1, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "calls", 0, 99), 0);
	CHECK_INT(SPTD_STORE_ADD(st, thread, 7, 7, -1, "stale"), 0);

	CHECK_INT(sptd_col_derive_all(st, 1), 0);
	CHECK_ROWS(st, "SELECT upid, pid, name, cmdline FROM process ORDER BY upid",
	           "0|42|app|app --x\n"
	           "2|0|swapper|NULL\n");
	CHECK_ROWS(st, "SELECT utid, tid, upid, name FROM thread ORDER BY utid",
	           "0|42|0|app\n"
	           "1|43|0|app-worker\n"
	           "2|0|2|swapper\n");
	CHECK_ROWS(st, Q_SLICES,
	           "2000|2000|0|0|R|0\n"
	           "4000|2000|0|1|NULL|0\n");
	CHECK_ROWS(st, Q_STATES,
	           "2000|2000|0|Running|0|NULL\n"
	           "4000|2000|0|R|NULL|NULL\n"
	           "4000|2000|1|Running|0|NULL\n");
	CHECK_ROWS(st, "SELECT count(*) FROM slice", "0\n");
	CHECK_ROWS(st, Q_GAPS, "");
	CHECK_ROWS(st, Q_STATS, "sched_events|NULL|2\n");
	/* again: the same rows, nothing doubled */
	CHECK_INT(sptd_col_derive_all(st, 1), 0);
	CHECK_ROWS(st, "SELECT count(*) FROM sched_slice", "2\n");
	CHECK_ROWS(st, "SELECT count(*) FROM thread", "3\n");
	CHECK_ROWS(st, Q_STATS, "sched_events|NULL|2\n");
	sptd_store_destroy(st);
}

int main(void)
{
	if (harness_init("dsched") < 0)
		return 1;
	test_invalid();
	test_switch_list();
	test_ftrace_pages();
	test_tsc_without_conversion();
	test_derive_all();
	harness_fini();
	return SPTD_TEST_END();
}
