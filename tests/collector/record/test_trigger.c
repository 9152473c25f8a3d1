/* test_trigger.c — the trigger core's decisions without perf events:
 * table-driven, hits in (as the rings would give them, in any order),
 * fire or no fire out, for every kind that decides on hits: warm-up and
 * cooldown (hits before not_before), irq (fires when the handler returns,
 * saying how long it took) and irq min=, latency, tracepoint
 * and uprobe.  Then warm-up/cooldown arithmetic, where the kernel may
 * freeze ftrace, state kept across checks, and bad arguments. */
#include <errno.h>

#include "sptd_test.h"
#include "trigger-kind-local.h"

#define US 1000LL
#define MS 1000000LL
#define MAX_HITS 8

/* One hit as a ring gives it. */
struct hit_row {
	int64_t ts;
	int cpu, role, irq, pid, prev_pid;
	const char *name;
};

#define ENTRY(ts, cpu, irq) { ts, cpu, SPTD_TRIG_ROLE_HIT, irq, -1, -1, "virtio1-req.0" }
#define EXIT(ts, cpu, irq) { ts, cpu, SPTD_TRIG_ROLE_IRQ_EXIT, irq, -1, -1, "" }
#define WAKING(ts, cpu, pid) { ts, cpu, SPTD_TRIG_ROLE_WAKING, -1, pid, -1, "" }
#define SWITCH(ts, cpu, prev, next) { ts, cpu, SPTD_TRIG_ROLE_SWITCH, -1, next, prev, "" }
#define HIT(ts, cpu) { ts, cpu, SPTD_TRIG_ROLE_HIT, -1, -1, -1, "" }

static void test_decisions(void)
{
	static const struct {
		const char *what, *spec;
		int64_t not_before;
		struct hit_row hits[MAX_HITS];
		int fired;               /* expected */
		int64_t ts;
		int cpu;
		const char *detail;
	} cases[] = {
		{ "irq: the handler's return fires", "irq=36", 0, { ENTRY(100, 1, 36), EXIT(150, 1, 36) },
		  1, 150, 1, "irq 36 virtio1-req.0 handler took 50 ns" },
		{ "irq: an entry alone does not fire (yet)", "irq=36", 0, { ENTRY(100, 1, 36) },
		  0, 0, -1, "" },
		{ "irq: an exit whose entry was not seen fires", "irq", 0, { EXIT(500, 0, 36) },
		  1, 500, 0, "irq 36 handler returned (its entry was not seen)" },
		{ "irq: warm-up skips earlier hits", "irq", 100,
		  { ENTRY(50, 0, 36), EXIT(60, 0, 36), ENTRY(150, 2, 36), EXIT(170, 2, 36) },
		  1, 170, 2, "irq 36 virtio1-req.0 handler took 20 ns" },
		{ "irq: every hit in cooldown", "irq", 1000,
		  { ENTRY(50, 0, 36), EXIT(60, 0, 36), ENTRY(990, 2, 36), EXIT(999, 2, 36) },
		  0, 0, -1, "" },
		{ "irq: the earliest hit, whatever the order", "irq", 0,
		  { EXIT(310, 3, 36), ENTRY(300, 3, 36), ENTRY(200, 1, 36), EXIT(205, 1, 36),
		    ENTRY(250, 0, 36), EXIT(290, 0, 36) },
		  1, 205, 1, "irq 36 virtio1-req.0 handler took 5 ns" },
		{ "irq: a return right at not_before fires", "irq", 200,
		  { ENTRY(190, 1, 36), EXIT(200, 1, 36) },
		  1, 200, 1, "irq 36 virtio1-req.0 handler took 10 ns" },
		{ "irq min=: long enough", "irq=36,min=50us", 0, { ENTRY(1000, 0, 36), EXIT(61000, 0, 36) },
		  1, 61000, 0, "irq 36 virtio1-req.0 handler took 60000 ns" },
		{ "irq min=: exactly min", "irq,min=50us", 0, { ENTRY(1000, 0, 36), EXIT(51000, 0, 36) },
		  1, 51000, 0, "irq 36 virtio1-req.0 handler took 50000 ns" },
		{ "irq min=: too short", "irq,min=50us", 0, { ENTRY(1000, 0, 36), EXIT(41000, 0, 36) },
		  0, 0, -1, "" },
		{ "irq min=: an exit without its entry", "irq,min=50us", 0, { EXIT(90 * US, 0, 36) },
		  0, 0, -1, "" },
		{ "irq min=: entries per CPU", "irq,min=50us", 0,
		  { ENTRY(0, 0, 36), ENTRY(10 * US, 1, 37), EXIT(20 * US, 1, 37), EXIT(70 * US, 0, 36) },
		  1, 70 * US, 0, "irq 36 virtio1-req.0 handler took 70000 ns" },
		{ "irq min=: the entry in warm-up counts", "irq,min=50us", 50 * US,
		  { ENTRY(0, 2, 36), EXIT(60 * US, 2, 36) },
		  1, 60 * US, 2, "irq 36 virtio1-req.0 handler took 60000 ns" },
		{ "irq min=: the exit in cooldown", "irq,min=50us", 100 * US,
		  { ENTRY(0, 2, 36), EXIT(60 * US, 2, 36) }, 0, 0, -1, "" },
		{ "irq min=: a CPU out of range", "irq,min=50us", 0,
		  { ENTRY(0, 9, 36), EXIT(60 * US, 9, 36) }, 0, 0, -1, "" },
		{ "latency: a long wait", "latency=1ms", 0, { WAKING(0, 0, 42), SWITCH(2 * MS, 1, 7, 42) },
		  1, 2 * MS, 1, "pid 42 waited 2000000 ns from wakeup to running" },
		{ "latency: a short wait", "latency=1ms", 0, { WAKING(0, 0, 42), SWITCH(500 * US, 1, 7, 42) },
		  0, 0, -1, "" },
		{ "latency: switched out, the waking was no wait", "latency=1ms", 0,
		  { WAKING(0, 0, 42), SWITCH(100, 0, 42, 7), SWITCH(5 * MS, 1, 7, 42) },
		  0, 0, -1, "" },
		{ "latency: the earliest long wait", "latency=1ms", 0,
		  { WAKING(0, 0, 1), WAKING(10, 0, 2), SWITCH(4 * MS, 1, 9, 1), SWITCH(3 * MS, 2, 9, 2) },
		  1, 3 * MS, 2, "pid 2 waited 2999990 ns from wakeup to running" },
		{ "latency: the first waking counts", "latency=1ms", 0,
		  { WAKING(0, 0, 7), WAKING(900 * US, 1, 7), SWITCH(1 * MS, 1, 3, 7) },
		  1, 1 * MS, 1, "pid 7 waited 1000000 ns from wakeup to running" },
		{ "latency: a wait that ends in warm-up", "latency=1ms", 3 * MS,
		  { WAKING(0, 0, 42), SWITCH(2 * MS, 1, 7, 42) }, 0, 0, -1, "" },
		{ "latency: a wait that starts in warm-up", "latency=1ms", 1 * MS,
		  { WAKING(0, 0, 42), SWITCH(2 * MS, 1, 7, 42) },
		  1, 2 * MS, 1, "pid 42 waited 2000000 ns from wakeup to running" },
		{ "tracepoint: the hit fires", "tracepoint=sched:sched_process_exit", 10,
		  { HIT(5, 0), HIT(20, 3) }, 1, 20, 3, "sched:sched_process_exit" },
		{ "uprobe: the hit fires", "uprobe=/usr/bin/true:main", 0, { HIT(7, 1) },
		  1, 7, 1, "uprobe /usr/bin/true:main" },
		{ "no hits", "tracepoint=sched:sched_process_exit", 0, { { 0 } }, 0, 0, -1, "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sptd_col_trigger_spec spec;
		struct sptd_col_trigger *t = NULL;
		struct sptd_col_fire fire;
		char err[256];
		int failed = sptd_test_failed, ret;

		CHECK_INT(sptd_col_parse_trigger(cases[i].spec, &spec, err, sizeof(err)), 0);
		CHECK_INT(sptd_col_trigger_create_unarmed(&spec, 3, &t), 0);
		if (!t)
			continue;
		for (int k = 0; k < MAX_HITS && (cases[i].hits[k].ts || cases[i].hits[k].name); k++) {
			const struct hit_row *r = &cases[i].hits[k];
			struct sptd_col_trigger_hit h = { .ts = r->ts, .cpu = r->cpu, .role = r->role,
			                                  .irq = r->irq, .pid = r->pid,
			                                  .prev_pid = r->prev_pid };

			snprintf(h.name, sizeof(h.name), "%s", r->name);
			CHECK_INT(sptd_col_trigger_feed(t, &h), 0);
		}
		ret = sptd_col_trigger_decide(t, cases[i].not_before, &fire);
		CHECK_INT(ret, cases[i].fired);
		CHECK(fire.spec != NULL && strcmp(fire.spec->text, cases[i].spec) == 0);
		if (ret == 1) {
			CHECK_INT(fire.ts, cases[i].ts);
			CHECK_INT(fire.cpu, cases[i].cpu);
			CHECK_STR(fire.detail, cases[i].detail);
		} else {
			CHECK_INT(fire.cpu, -1);
			CHECK_STR(fire.detail, "");
		}
		/* the hits are gone once decided */
		CHECK_INT(sptd_col_trigger_decide(t, 0, &fire), 0);
		if (sptd_test_failed != failed)
			fprintf(stderr, "  trigger case '%s'\n", cases[i].what);
		sptd_col_trigger_destroy(t);
	}
}

/* An irq min= entry seen in one check and its exit in the next still
 * measure the handler; so does a wakeup and its switch. */
static void test_state_across_checks(void)
{
	static const char *const specs[] = { "irq,min=50us", "latency=1ms" };
	static const struct hit_row first[] = { ENTRY(0, 1, 36), WAKING(0, 1, 42) };
	static const struct hit_row second[] = { EXIT(80 * US, 1, 36), SWITCH(3 * MS, 1, 7, 42) };

	for (size_t i = 0; i < 2; i++) {
		struct sptd_col_trigger_spec spec;
		struct sptd_col_trigger *t = NULL;
		struct sptd_col_fire fire;
		struct sptd_col_trigger_hit h = { .irq = -1, .pid = -1, .prev_pid = -1 };
		char err[256];

		CHECK_INT(sptd_col_parse_trigger(specs[i], &spec, err, sizeof(err)), 0);
		CHECK_INT(sptd_col_trigger_create_unarmed(&spec, 3, &t), 0);
		if (!t)
			continue;
		h.ts = first[i].ts, h.cpu = first[i].cpu, h.role = first[i].role;
		h.irq = first[i].irq, h.pid = first[i].pid;
		CHECK_INT(sptd_col_trigger_feed(t, &h), 0);
		CHECK_INT(sptd_col_trigger_decide(t, 0, &fire), 0);
		h.ts = second[i].ts, h.cpu = second[i].cpu, h.role = second[i].role;
		h.irq = second[i].irq, h.pid = second[i].pid, h.prev_pid = second[i].prev_pid;
		CHECK_INT(sptd_col_trigger_feed(t, &h), 0);
		CHECK_INT(sptd_col_trigger_decide(t, 0, &fire), 1);
		CHECK_INT(fire.ts, second[i].ts);
		/* nothing is left open: the same exit again does not fire */
		CHECK_INT(sptd_col_trigger_feed(t, &h), 0);
		CHECK_INT(sptd_col_trigger_decide(t, 0, &fire), 0);
		/* an unarmed trigger has nothing to poll, nothing to drain */
		CHECK_INT(sptd_col_trigger_fds(t, (int[4]){ 0 }, 4), 0);
		CHECK_INT(sptd_col_trigger_check(t, 0, &fire), 0);
		CHECK_INT(sptd_col_trigger_aux_pause(t, NULL), 0);
		sptd_col_trigger_drain(t);
		sptd_col_trigger_destroy(t);
	}
}

/* Warm-up: a whole window after arming; cooldown: after the last capture. */
static void test_not_before(void)
{
	static const struct {
		int64_t armed_at, window_ns, last_capture, cooldown_ns, want;
	} cases[] = {
		{ 1000, 100, 0, 0, 1100 },       /* warm-up only */
		{ 1000, 100, 900, 500, 1400 },   /* cooldown longer than warm-up */
		{ 1000, 100, 900, 100, 1100 },   /* cooldown over before warm-up */
		{ 1000, 100, 0, 500, 1100 },     /* no capture yet: no cooldown */
		{ 1000, 100, 900, 0, 1100 },     /* no --cooldown */
		{ 5000, 0, 4000, 2000, 6000 },   /* no window: cooldown alone */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_INT(sptd_col_trigger_not_before(cases[i].armed_at, cases[i].window_ns,
		                                      cases[i].last_capture, cases[i].cooldown_ns),
		          cases[i].want);
}

/* Where the kernel may freeze ftrace itself: at a hit that always fires. */
static void test_freeze_point(void)
{
	static const struct {
		const char *spec;
		int ret;
		const char *system, *event, *filter;
	} cases[] = {
		{ "tracepoint=sched:sched_process_exit,filter=comm==\"x\"", 1, "sched",
		  "sched_process_exit", "comm==\"x\"" },
		{ "tracepoint=irq:softirq_entry", 1, "irq", "softirq_entry", "" },
		{ "irq=36", 1, "irq", "irq_handler_exit", "irq==36" },
		{ "irq=999999", 1, "irq", "irq_handler_exit", "irq==999999" },
		{ "irq", 1, "irq", "irq_handler_exit", "" },
		{ "irq=36,min=1ms", 0, NULL, NULL, NULL },
		{ "latency=1ms", 0, NULL, NULL, NULL },
		{ "timer=1s", 0, NULL, NULL, NULL },
		{ "uprobe=/usr/bin/true:main", 0, NULL, NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sptd_col_trigger_spec spec;
		char err[256], system[64], event[128], filter[512];

		CHECK_INT(sptd_col_parse_trigger(cases[i].spec, &spec, err, sizeof(err)), 0);
		CHECK_INT(sptd_col_trigger_freeze_point(&spec, system, sizeof(system), event,
		                                        sizeof(event), filter, sizeof(filter)),
		          cases[i].ret);
		if (cases[i].ret == 1) {
			CHECK_STR(system, cases[i].system);
			CHECK_STR(event, cases[i].event);
			CHECK_STR(filter, cases[i].filter);
		}
	}
}

/* Every kind but manual has ops; every hit of irq (no min=), tracepoint and
 * uprobe fires, so only they may pause PT in the kernel. */
static void test_kinds(void)
{
	static const struct {
		const char *spec;
		int every_hit;
	} cases[] = {
		{ "irq", 1 }, { "irq,min=5us", 0 }, { "tracepoint=a:b", 1 }, { "timer=1s", 0 },
		{ "latency=1ms", 0 }, { "uprobe=/x:y", 1 },
	};
	const struct sptd_col_trigger_ops *ops[] = {
		&sptd_col_trigger_irq_ops, &sptd_col_trigger_irq_ops,
		&sptd_col_trigger_tracepoint_ops, &sptd_col_trigger_timer_ops,
		&sptd_col_trigger_latency_ops, &sptd_col_trigger_uprobe_ops,
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sptd_col_trigger_spec spec;
		char err[256];

		CHECK_INT(sptd_col_parse_trigger(cases[i].spec, &spec, err, sizeof(err)), 0);
		CHECK_INT(ops[i]->kind, spec.kind);
		CHECK_INT(ops[i]->every_hit(&spec), cases[i].every_hit);
		CHECK(ops[i]->arm != NULL && ops[i]->describe != NULL);
	}
}

static void test_invalid(void)
{
	struct sptd_col_trigger_spec spec, manual = { .kind = SPTD_TRIG_MANUAL };
	struct sptd_col_trigger *t = NULL;
	struct sptd_col_trigger_hit h = { 0 };
	struct sptd_col_fire fire;
	char err[256], s[64], e[128], f[512];
	int cpus[1] = { 0 }, fds[4];

	CHECK_INT(sptd_col_parse_trigger("irq", &spec, err, sizeof(err)), 0);
	CHECK_INT(sptd_col_trigger_create_unarmed(NULL, 3, &t), -EINVAL);
	CHECK_INT(sptd_col_trigger_create_unarmed(&spec, -1, &t), -EINVAL);
	CHECK_INT(sptd_col_trigger_create_unarmed(&spec, 3, NULL), -EINVAL);
	CHECK_INT(sptd_col_trigger_create_unarmed(&manual, 3, &t), -EINVAL);
	CHECK(t == NULL);
	CHECK_INT(sptd_col_trigger_create(NULL, cpus, 1, &t, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_col_trigger_create(&spec, NULL, 1, &t, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_col_trigger_create(&spec, cpus, 0, &t, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_col_trigger_create(&spec, cpus, 1, NULL, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_col_trigger_create(&spec, cpus, 1, &t, NULL, 0), -EINVAL);
	err[0] = '\0';
	CHECK_INT(sptd_col_trigger_create(&manual, cpus, 1, &t, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "unknown trigger kind");
	CHECK_INT(sptd_col_trigger_feed(NULL, &h), -EINVAL);
	CHECK_INT(sptd_col_trigger_decide(NULL, 0, &fire), -EINVAL);
	CHECK_INT(sptd_col_trigger_check(NULL, 0, &fire), -EINVAL);
	CHECK_INT(sptd_col_trigger_fds(NULL, fds, 4), -EINVAL);
	CHECK_INT(sptd_col_trigger_aux_pause(NULL, NULL), 0);
	CHECK_INT(sptd_col_trigger_freeze_point(NULL, s, sizeof(s), e, sizeof(e), f, sizeof(f)), -EINVAL);
	CHECK_INT(sptd_col_trigger_freeze_point(&spec, NULL, sizeof(s), e, sizeof(e), f, sizeof(f)), -EINVAL);
	CHECK_INT(sptd_col_trigger_freeze_point(&manual, s, sizeof(s), e, sizeof(e), f, sizeof(f)), 0);
	CHECK_INT(sptd_col_trigger_create_unarmed(&spec, 3, &t), 0);
	CHECK_INT(sptd_col_trigger_feed(t, NULL), -EINVAL);
	CHECK_INT(sptd_col_trigger_decide(t, 0, NULL), -EINVAL);
	CHECK_INT(sptd_col_trigger_fds(t, NULL, 4), -EINVAL);
	sptd_col_trigger_destroy(t);
	sptd_col_trigger_destroy(NULL);
	sptd_col_trigger_drain(NULL);
}

int main(void)
{
	test_decisions();
	test_state_across_checks();
	test_not_before();
	test_freeze_point();
	test_kinds();
	test_invalid();
	return SPTD_TEST_END();
}
