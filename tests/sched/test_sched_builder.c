/* test_sched_builder.c — table-driven tests of the slice builder: events in,
 * rows out (as text lines compared as sets), plus argument checks. */
#include <errno.h>
#include <stdint.h>

#include "sptd_sched.h"
#include "sptd_test.h"

#define MAX_ROWS 64

/* The rows a sink received, one text line each. */
struct rows {
	int n;
	char line[MAX_ROWS][128];
	int fail_slice;        /* sched_slice returns this when non-zero */
};

static void add_row(struct rows *r, const char *text)
{
	if (r->n < MAX_ROWS)
		snprintf(r->line[r->n++], sizeof(r->line[0]), "%s", text);
}

static int rec_thread(void *ctx, int tid, const char *comm)
{
	char b[128];

	snprintf(b, sizeof(b), "thread %d %s", tid, comm ? comm : "(null)");
	add_row(ctx, b);
	return 0;
}

static int rec_slice(void *ctx, int64_t ts, int64_t dur, int cpu, int tid,
                     const char *end_state, int prio)
{
	struct rows *r = ctx;
	char b[128];

	if (r->fail_slice)
		return r->fail_slice;
	snprintf(b, sizeof(b), "slice %" PRId64 " %" PRId64 " cpu%d tid%d %s %d", ts, dur,
	         cpu, tid, end_state ? end_state : "NULL", prio);
	add_row(r, b);
	return 0;
}

static int rec_state(void *ctx, int64_t ts, int64_t dur, int tid, const char *state,
                     int cpu, int waker)
{
	char b[128];

	snprintf(b, sizeof(b), "state %" PRId64 " %" PRId64 " tid%d %s cpu%d waker%d", ts,
	         dur, tid, state, cpu, waker);
	add_row(ctx, b);
	return 0;
}

static int rec_irq(void *ctx, int64_t ts, int64_t dur, int cpu, int irq,
                   const char *name, int ret)
{
	char b[128];

	snprintf(b, sizeof(b), "irq %" PRId64 " %" PRId64 " cpu%d %d %s ret%d", ts, dur, cpu,
	         irq, name, ret);
	add_row(ctx, b);
	return 0;
}

static int rec_softirq(void *ctx, int64_t ts, int64_t dur, int cpu, int vec,
                       const char *name)
{
	char b[128];

	snprintf(b, sizeof(b), "softirq %" PRId64 " %" PRId64 " cpu%d %d %s", ts, dur, cpu,
	         vec, name);
	add_row(ctx, b);
	return 0;
}

static int rec_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	char b[128];

	snprintf(b, sizeof(b), "gap %" PRId64 " %" PRId64 " cpu%d %s", ts, dur, cpu, reason);
	add_row(ctx, b);
	return 0;
}

/* ---- event constructors (constant initializers, for the table) --------- */

#define SW(ts_, cpu_, prev_, pcomm_, pprio_, pstate_, next_, ncomm_, nprio_)        \
	{ .type = SPTD_SCHED_SWITCH, .ts = (ts_), .cpu = (cpu_), .pid = (prev_),    \
	  .u.sw = { .prev_tid = (prev_), .prev_prio = (pprio_), .next_tid = (next_), \
	            .next_prio = (nprio_), .prev_state = pstate_,                   \
	            .prev_comm = pcomm_, .next_comm = ncomm_ } }
#define WAKE(type_, ts_, cpu_, waker_, tid_, comm_)                                 \
	{ .type = (type_), .ts = (ts_), .cpu = (cpu_), .pid = (waker_),             \
	  .u.wake = { .tid = (tid_), .prio = 120, .target_cpu = (cpu_), .comm = comm_ } }
#define IRQ(type_, ts_, cpu_, irq_, name_, ret_)                                    \
	{ .type = (type_), .ts = (ts_), .cpu = (cpu_),                              \
	  .u.irq = { .irq = (irq_), .ret = (ret_), .name = name_ } }
#define SIRQ(type_, ts_, cpu_, vec_)                                                \
	{ .type = (type_), .ts = (ts_), .cpu = (cpu_), .u.softirq = { .vec = (vec_) } }

/* ---- the table ----------------------------------------------------------------- */

struct builder_case {
	const char *name;
	int64_t ws, we, slack;
	int ncpus;
	int nev;
	struct sptd_sched_event ev[16];   /* deliberately not in time order */
	int slices;                       /* expected return of finish() */
	const char *rows[32];             /* expected rows, any order, NULL-ended */
};

static int rows_has(const struct rows *r, const char *line, int *used)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (!used[i] && strcmp(r->line[i], line) == 0) {
			used[i] = 1;
			return 1;
		}
	return 0;
}

static void run_case(const struct builder_case *c)
{
	struct sptd_sched_sink sink = {
		.thread = rec_thread, .sched_slice = rec_slice, .thread_state = rec_state,
		.irq_slice = rec_irq, .softirq_slice = rec_softirq, .gap = rec_gap,
	};
	struct sptd_sched_builder *b = NULL;
	struct rows r = { 0 };
	int used[MAX_ROWS] = { 0 };
	int i, nexp = 0, ret;

	sink.ctx = &r;
	CHECK_INT(sptd_sched_builder_create(c->ws, c->we, c->ncpus, &b), 0);
	if (!b)
		return;
	CHECK_INT(sptd_sched_builder_set_gap_slack(b, c->slack), 0);
	for (i = 0; i < c->nev; i++)
		CHECK_INT(sptd_sched_builder_add(b, &c->ev[i]), 0);
	ret = sptd_sched_builder_finish(b, &sink);
	CHECK_INT(ret, c->slices);
	for (i = 0; c->rows[i]; i++, nexp++) {
		int found = rows_has(&r, c->rows[i], used);

		CHECK(found);
		if (!found)
			fprintf(stderr, "  [%s] missing row: %s\n", c->name, c->rows[i]);
	}
	CHECK_INT(r.n, nexp);
	for (i = 0; i < r.n; i++)
		if (!used[i])
			fprintf(stderr, "  [%s] unexpected row: %s\n", c->name, r.line[i]);
	sptd_sched_builder_destroy(b);
}

static const struct builder_case cases[] = {
	{
		/* one CPU sleeps and is woken from another; both window ends clip */
		.name = "sleep-wake", .ws = 1000, .we = 2000, .slack = 50, .ncpus = 2,
		.nev = 5,
		.ev = {
			SW(1600, 0, 0, "swapper/0", 120, "R", 10, "a", 120),
			WAKE(SPTD_SCHED_WAKING, 1500, 1, 20, 10, "a"),
			SW(1200, 0, 10, "a", 120, "S", 0, "swapper/0", 120),
			SW(950, 1, 0, "swapper/1", 120, "R", 20, "b", 100),
			SW(900, 0, 0, "swapper/0", 120, "R", 10, "a", 120),
		},
		.slices = 4,
		.rows = {
			"thread 0 swapper", "thread 10 a", "thread 20 b",
			"slice 1000 200 cpu0 tid10 S 120",
			"slice 1200 400 cpu0 tid0 R 120",
			"slice 1600 400 cpu0 tid10 NULL 120",
			"slice 1000 1000 cpu1 tid20 NULL 100",
			"state 1000 200 tid10 Running cpu0 waker-1",
			"state 1200 300 tid10 S cpu-1 waker-1",
			"state 1500 100 tid10 R cpu-1 waker20",
			"state 1600 400 tid10 Running cpu0 waker-1",
			"state 1000 1000 tid20 Running cpu1 waker-1",
			NULL,
		},
	},
	{
		/* CPU 0's data starts late (gap), CPU 1 has none; irqs with a lost
		 * entry, a lost exit and a normal pair; softirqs likewise */
		.name = "gap-irq", .ws = 1000, .we = 2000, .slack = 50, .ncpus = 2,
		.nev = 7,
		.ev = {
			IRQ(SPTD_SCHED_IRQ_ENTRY, 1900, 0, 7, "timer", 0),
			IRQ(SPTD_SCHED_IRQ_EXIT, 1170, 0, 5, "", 1),
			SIRQ(SPTD_SCHED_SOFTIRQ_EXIT, 1120, 0, 1),
			SW(1100, 0, 30, "c", 120, "R+", 31, "d", 110),
			IRQ(SPTD_SCHED_IRQ_ENTRY, 1150, 0, 5, "eth0", 0),
			SIRQ(SPTD_SCHED_SOFTIRQ_ENTRY, 1180, 0, 3),
			SIRQ(SPTD_SCHED_SOFTIRQ_EXIT, 1190, 0, 3),
		},
		.slices = 1,
		.rows = {
			"thread 30 c", "thread 31 d",
			"gap 1000 100 cpu0 ftrace ring overwritten before window start",
			"gap 1000 1000 cpu1 no ftrace events from this CPU",
			"slice 1100 900 cpu0 tid31 NULL 110",
			"state 1100 900 tid30 R+ cpu-1 waker-1",
			"state 1100 900 tid31 Running cpu0 waker-1",
			"irq 1150 20 cpu0 5 eth0 ret1",
			"irq 1900 100 cpu0 7 timer ret-1",
			"softirq 1100 20 cpu0 1 TIMER",
			"softirq 1180 10 cpu0 3 NET_RX",
			NULL,
		},
	},
	{
		/* task 40 is preempted on CPU 0 and resumes on CPU 1 (migration);
		 * switches after window_end cut slices with end_state NULL; a new
		 * task is woken by 40; D state runs to the end */
		.name = "migration", .ws = 1000, .we = 2000, .slack = 1000, .ncpus = 2,
		.nev = 7,
		.ev = {
			SW(2200, 0, 41, "n", 110, "X", 0, "swapper/0", 120),
			SW(2100, 1, 40, "m", 120, "S", 43, "new", 120),
			WAKE(SPTD_SCHED_WAKEUP_NEW, 1700, 1, 40, 43, "new"),
			SW(1400, 1, 42, "o", 130, "D", 40, "m", 120),
			SW(1300, 0, 40, "m", 120, "R+", 41, "n", 110),
			SW(600, 1, 0, "swapper/1", 120, "R", 42, "o", 130),
			SW(500, 0, 0, "swapper/0", 120, "R", 40, "m", 120),
		},
		.slices = 4,
		.rows = {
			"thread 0 swapper", "thread 40 m", "thread 41 n", "thread 42 o",
			"thread 43 new",
			"slice 1000 300 cpu0 tid40 R+ 120",
			"slice 1300 700 cpu0 tid41 NULL 110",
			"slice 1000 400 cpu1 tid42 D 130",
			"slice 1400 600 cpu1 tid40 NULL 120",
			"state 1000 300 tid40 Running cpu0 waker-1",
			"state 1300 100 tid40 R+ cpu-1 waker-1",
			"state 1400 600 tid40 Running cpu1 waker-1",
			"state 1300 700 tid41 Running cpu0 waker-1",
			"state 1000 400 tid42 Running cpu1 waker-1",
			"state 1400 600 tid42 D cpu-1 waker-1",
			"state 1700 300 tid43 R cpu-1 waker40",
			NULL,
		},
	},
	{
		/* events before the window are dropped; a second waking of a
		 * runnable task changes nothing; an irq entry and exit with the same
		 * timestamp keep their arrival order (a zero-length irq, not an
		 * exit without entry) */
		.name = "ties-before-window", .ws = 1000, .we = 1100, .slack = 0, .ncpus = 2,
		.nev = 8,
		.ev = {
			SW(1060, 1, 51, "q", 120, "R+", 50, "p", 120),
			SW(300, 0, 50, "p", 120, "S", 0, "swapper/0", 120),
			IRQ(SPTD_SCHED_IRQ_ENTRY, 1050, 0, 9, "nvme", 0),
			WAKE(SPTD_SCHED_WAKING, 1045, 1, 51, 50, "p"),
			SW(100, 0, 0, "swapper/0", 120, "R", 50, "p", 120),
			IRQ(SPTD_SCHED_IRQ_EXIT, 1050, 0, 9, "", 1),
			WAKE(SPTD_SCHED_WAKING, 1040, 1, 51, 50, "p"),
			SW(200, 1, 0, "swapper/1", 120, "R", 51, "q", 120),
		},
		.slices = 3,
		.rows = {
			"thread 0 swapper", "thread 50 p", "thread 51 q",
			"slice 1000 100 cpu0 tid0 NULL 120",
			"slice 1000 60 cpu1 tid51 R+ 120",
			"slice 1060 40 cpu1 tid50 NULL 120",
			"state 1000 40 tid50 S cpu-1 waker-1",
			"state 1040 20 tid50 R cpu-1 waker51",
			"state 1060 40 tid50 Running cpu1 waker-1",
			"state 1000 60 tid51 Running cpu1 waker-1",
			"state 1060 40 tid51 R+ cpu-1 waker-1",
			"irq 1050 0 cpu0 9 nvme ret1",
			NULL,
		},
	},
};

/* Event times are a file's: the extremes of int64 must give clipped rows
 * and no overflow (the sanitizer build checks the arithmetic), and a
 * window longer than INT64_MAX is refused. */
#define WS (-INT64_C(4611686018427387904))   /* -2^62 */
#define WE INT64_C(4611686018427387903)      /* 2^62 - 1: length INT64_MAX */
static const struct builder_case extremes = {
	.name = "int64-extremes", .ws = WS, .we = WE, .slack = 50, .ncpus = 1, .nev = 4,
	.ev = {
		SW(INT64_MAX, 0, 10, "a", 120, "S", 0, "swapper/0", 120),
		IRQ(SPTD_SCHED_IRQ_ENTRY, INT64_MIN + 1, 0, 5, "x", 0),
		SW(INT64_MIN, 0, 0, "swapper/0", 120, "R", 10, "a", 120),
		IRQ(SPTD_SCHED_IRQ_EXIT, INT64_MAX - 1, 0, 5, "", 1),
	},
	.slices = 1,
	.rows = {
		"thread 0 swapper", "thread 10 a",
		"slice -4611686018427387904 9223372036854775807 cpu0 tid10 NULL 120",
		"state -4611686018427387904 9223372036854775807 tid10 Running cpu0 waker-1",
		"irq -4611686018427387904 9223372036854775807 cpu0 5 x ret1",
		NULL,
	},
};

static void check_windows(void)
{
	struct sptd_sched_builder *b = NULL;

	run_case(&extremes);
	CHECK_INT(sptd_sched_builder_create(INT64_MIN, INT64_MAX, 1, &b), -EINVAL);
	CHECK_INT(sptd_sched_builder_create(-1, INT64_MAX, 1, &b), -EINVAL);
	CHECK_INT(sptd_sched_builder_create(WS, WE, 1, &b), 0);
	CHECK_INT(sptd_sched_builder_set_window(b, WS - 1, WE), -EINVAL);
	CHECK_INT(sptd_sched_builder_set_window(b, 5, 4), -EINVAL);
	CHECK_INT(sptd_sched_builder_set_window(NULL, 0, 1), -EINVAL);
	CHECK_INT(sptd_sched_builder_set_window(b, 0, INT64_MAX), 0);
	sptd_sched_builder_destroy(b);
}

static void check_args(void)
{
	struct sptd_sched_sink sink = { 0 };
	struct sptd_sched_builder *b = NULL;
	struct sptd_sched_event e = SW(10, 0, 1, "a", 120, "S", 2, "b", 120);
	const struct sptd_sched_event e2 = SW(20, 0, 2, "b", 120, "S", 1, "a", 120);
	struct rows r = { .fail_slice = -42 };

	CHECK_INT(sptd_sched_builder_create(0, 10, 1, NULL), -EINVAL);
	CHECK_INT(sptd_sched_builder_create(10, 0, 1, &b), -EINVAL);
	CHECK(b == NULL);
	CHECK_INT(sptd_sched_builder_create(0, 10, 0, &b), -EINVAL);
	CHECK_INT(sptd_sched_builder_create(0, 10, -3, &b), -EINVAL);
	CHECK_INT(sptd_sched_builder_create(0, 100, 2, &b), 0);
	CHECK_INT(sptd_sched_builder_set_gap_slack(NULL, 5), -EINVAL);
	CHECK_INT(sptd_sched_builder_set_gap_slack(b, -1), -EINVAL);
	CHECK_INT(sptd_sched_builder_add(NULL, &e), -EINVAL);
	CHECK_INT(sptd_sched_builder_add(b, NULL), -EINVAL);
	e.cpu = 2;
	CHECK_INT(sptd_sched_builder_add(b, &e), -EINVAL);
	e.cpu = -1;
	CHECK_INT(sptd_sched_builder_add(b, &e), -EINVAL);
	e.cpu = 0;
	e.type = (enum sptd_sched_event_type)0;
	CHECK_INT(sptd_sched_builder_add(b, &e), -EINVAL);
	e.type = (enum sptd_sched_event_type)99;
	CHECK_INT(sptd_sched_builder_add(b, &e), -EINVAL);
	e.type = SPTD_SCHED_SWITCH;
	e.u.sw.next_tid = -5;
	CHECK_INT(sptd_sched_builder_add(b, &e), -EINVAL);
	e.u.sw.next_tid = 2;
	/* unterminated strings are cut, not read past */
	memset(e.u.sw.prev_comm, 'x', sizeof(e.u.sw.prev_comm));
	memset(e.u.sw.prev_state, 'S', sizeof(e.u.sw.prev_state));
	CHECK_INT(sptd_sched_builder_add(b, &e), 0);
	e = e2;
	CHECK_INT(sptd_sched_builder_add(b, &e), 0);
	CHECK_INT(sptd_sched_builder_finish(NULL, &sink), -EINVAL);
	CHECK_INT(sptd_sched_builder_finish(b, NULL), -EINVAL);
	/* an all-NULL sink still counts slices: [10,20) tid 2, [20,100) tid 1
	 * (tid 1 before 10 is zero-length: the data starts at 10) */
	CHECK_INT(sptd_sched_builder_finish(b, &sink), 2);
	/* a callback error stops the walk and comes back as it is */
	sink.sched_slice = rec_slice;
	sink.ctx = &r;
	CHECK_INT(sptd_sched_builder_finish(b, &sink), -42);
	sptd_sched_builder_destroy(b);
	sptd_sched_builder_destroy(NULL);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	check_windows();
	check_args();
	return SPTD_TEST_END();
}
