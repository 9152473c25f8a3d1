/* builder.c — typed sched/irq events -> sched slices, thread states, irq and
 * softirq slices and gaps, clipped to the incident window.
 *
 * Divisions: collecting and sorting events; the naming pass (thread rows);
 * row emission with clipping; the walk (switch, wakeup, irq, softirq); the
 * end of the window.
 *
 * Decisions where the design is silent:
 *  - tid 0 (the per-CPU idle tasks) gets sched slices but no thread_state
 *    rows: several CPUs run "tid 0" at once, so it has no single state.
 *  - a slice cut by window_end has end_state NULL: its real end (and the
 *    state it left in) lies outside the window.
 *  - a task that switched out dead ("X") gets no trailing state row.
 *  - the waker is common_pid of the waking event: the task current where the
 *    wakeup ran (0 when an interrupt on an idle CPU woke it).
 *  - an irq/softirq exit whose entry is not in the data starts at the CPU's
 *    first data (or window start); an entry with no exit ends at window_end
 *    with ret -1.
 *  - zero-length sched slices and thread states are dropped (a task seen
 *    only at the instant its CPU's data began); zero-length irqs are kept. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder-local.h"
#include "sched-local.h"

#define BUILDER_DEFAULT_SLACK_NS 1000000LL
#define BUILDER_MAX_CPUS 65536
#define BUILDER_MAX_IRQ_NAMES 256
#define GAP_OVERWRITTEN "ftrace ring overwritten before window start"
#define GAP_NO_DATA "no ftrace events from this CPU"

/* One collected event and its arrival order (the last sort key). */
struct builder_event {
	struct sptd_sched_event ev;   /* as added, strings terminated */
	uint64_t arrival;             /* position in the add() sequence */
};

/* Walk state of one CPU. */
struct builder_cpu {
	int has_data;                 /* any event from this CPU */
	int64_t first_ts;             /* its first event */
	int cur_known;                /* a switch told who runs now */
	int cur_tid;                  /* ... that task */
	int cur_prio;                 /* ... its prio */
	int64_t cur_start;            /* ... since when */
	int irq_open;                 /* inside a hard irq handler */
	int irq;                      /* ... which irq */
	int64_t irq_ts;               /* ... since when */
	char irq_name[32];            /* ... its action name */
	int softirq_open;             /* inside a softirq */
	int vec;                      /* ... which vector */
	int64_t softirq_ts;           /* ... since when */
};

struct sptd_sched_builder {
	int64_t window_start, window_end;  /* clip bounds, ns */
	int64_t gap_slack;            /* see sptd_sched_builder_set_gap_slack */
	int ncpus;                    /* CPUs that had a ring */
	struct builder_event *events; /* collected events */
	size_t nr, cap;               /* used / allocated entries of @events */
	/* per finish() */
	const struct sptd_sched_sink *sink; /* where rows go */
	struct builder_cpu *cpu;      /* @ncpus entries */
	struct sptd_sched_tasks tasks;/* every tid the events name */
	int nr_irq_names;             /* used entries below */
	int irq_name_irq[BUILDER_MAX_IRQ_NAMES];      /* irq number ... */
	char irq_name[BUILDER_MAX_IRQ_NAMES][32];     /* ... and its last name */
	int slices;                   /* sched slices emitted */
};

/* Every row is clipped to the window, so its length must be an int64: then
 * no dur computed inside it can overflow. */
static int window_ok(int64_t start, int64_t end)
{
	return end >= start && !(start < 0 && end > INT64_MAX + start);
}

int sptd_sched_builder_create(int64_t window_start, int64_t window_end, int ncpus,
                              struct sptd_sched_builder **out)
{
	struct sptd_sched_builder *b;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!window_ok(window_start, window_end) || ncpus <= 0 || ncpus > BUILDER_MAX_CPUS)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->window_start = window_start;
	b->window_end = window_end;
	b->gap_slack = BUILDER_DEFAULT_SLACK_NS;
	b->ncpus = ncpus;
	*out = b;
	return 0;
}

void sptd_sched_builder_destroy(struct sptd_sched_builder *b)
{
	if (!b)
		return;
	free(b->events);
	free(b);
}

int sptd_sched_builder_set_window(struct sptd_sched_builder *b, int64_t window_start,
                                  int64_t window_end)
{
	if (!b || !window_ok(window_start, window_end))
		return -EINVAL;
	b->window_start = window_start;
	b->window_end = window_end;
	return 0;
}

int sptd_sched_builder_set_gap_slack(struct sptd_sched_builder *b, int64_t slack_ns)
{
	if (!b || slack_ns < 0)
		return -EINVAL;
	b->gap_slack = slack_ns;
	return 0;
}

/* ---- collecting ------------------------------------------------------------ */

#define TERMINATE(arr) ((arr)[sizeof(arr) - 1] = '\0')

int sptd_sched_builder_add(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct builder_event *be;

	if (!b || !ev || ev->cpu < 0 || ev->cpu >= b->ncpus ||
	    ev->type < SPTD_SCHED_SWITCH || ev->type > SPTD_SCHED_SOFTIRQ_EXIT)
		return -EINVAL;
	if (ev->type == SPTD_SCHED_SWITCH && (ev->u.sw.prev_tid < 0 || ev->u.sw.next_tid < 0))
		return -EINVAL;
	if ((ev->type == SPTD_SCHED_WAKING || ev->type == SPTD_SCHED_WAKEUP_NEW) &&
	    ev->u.wake.tid < 0)
		return -EINVAL;
	if (b->nr == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct builder_event *bigger = realloc(b->events, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		b->events = bigger;
		b->cap = cap;
	}
	be = &b->events[b->nr];
	be->ev = *ev;
	be->arrival = b->nr++;
	switch (ev->type) {
	case SPTD_SCHED_SWITCH:
		TERMINATE(be->ev.u.sw.prev_state);
		TERMINATE(be->ev.u.sw.prev_comm);
		TERMINATE(be->ev.u.sw.next_comm);
		break;
	case SPTD_SCHED_WAKING:
	case SPTD_SCHED_WAKEUP_NEW:
		TERMINATE(be->ev.u.wake.comm);
		break;
	case SPTD_SCHED_FORK:
		TERMINATE(be->ev.u.fork.child_comm);
		break;
	case SPTD_SCHED_EXIT:
		TERMINATE(be->ev.u.exit.comm);
		break;
	case SPTD_SCHED_IRQ_ENTRY:
	case SPTD_SCHED_IRQ_EXIT:
		TERMINATE(be->ev.u.irq.name);
		break;
	default:
		break;
	}
	return 0;
}

static int event_cmp(const void *a, const void *b)
{
	const struct builder_event *x = a, *y = b;

	if (x->ev.ts != y->ev.ts)
		return x->ev.ts < y->ev.ts ? -1 : 1;
	if (x->ev.cpu != y->ev.cpu)
		return x->ev.cpu < y->ev.cpu ? -1 : 1;
	return (x->arrival > y->arrival) - (x->arrival < y->arrival);
}

/* ---- naming pass ----------------------------------------------------------- */

/* Record @tid (and @comm if non-NULL and non-empty) in time order. */
static int name_task(struct sptd_sched_builder *b, int tid, const char *comm)
{
	struct sptd_sched_task *t = sptd_sched_tasks_get(&b->tasks, tid);

	if (tid < 0)
		return 0;
	if (!t)
		return -ENOMEM;
	if (comm && comm[0]) {
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
		t->has_comm = 1;
	}
	return 0;
}

static int name_all(struct sptd_sched_builder *b)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < b->nr && ret == 0; i++) {
		const struct sptd_sched_event *ev = &b->events[i].ev;

		switch (ev->type) {
		case SPTD_SCHED_SWITCH:
			ret = name_task(b, ev->u.sw.prev_tid, ev->u.sw.prev_comm);
			if (ret == 0)
				ret = name_task(b, ev->u.sw.next_tid, ev->u.sw.next_comm);
			break;
		case SPTD_SCHED_WAKING:
		case SPTD_SCHED_WAKEUP_NEW:
			ret = name_task(b, ev->u.wake.tid, ev->u.wake.comm);
			if (ret == 0)
				ret = name_task(b, ev->pid, NULL);
			break;
		case SPTD_SCHED_FORK:
			ret = name_task(b, ev->u.fork.parent_tid, NULL);
			if (ret == 0)
				ret = name_task(b, ev->u.fork.child_tid, ev->u.fork.child_comm);
			break;
		case SPTD_SCHED_EXIT:
			ret = name_task(b, ev->u.exit.tid, ev->u.exit.comm);
			break;
		default:
			break;
		}
	}
	return ret;
}

static int emit_threads(struct sptd_sched_builder *b)
{
	struct sptd_sched_task **v;
	long n, i;
	int ret = 0;

	v = sptd_sched_tasks_sorted(&b->tasks, &n);
	if (n < 0)
		return -ENOMEM;
	for (i = 0; i < n && ret >= 0 && b->sink->thread; i++) {
		const char *comm = v[i]->has_comm ? v[i]->comm : NULL;

		if (v[i]->tid == 0)
			comm = "swapper";
		ret = b->sink->thread(b->sink->ctx, v[i]->tid, comm);
	}
	free(v);
	return ret < 0 ? ret : 0;
}

/* ---- emitting rows, clipped ------------------------------------------------ */

/* Clip [*ts, *end] to the window: 0 to drop the row, 1 to keep it (with
 * *cut_end set when the end was moved to window_end). */
static int clip(const struct sptd_sched_builder *b, int64_t *ts, int64_t *end, int *cut_end)
{
	/* compared, not subtracted: event times are the file's, any int64 */
	int had_length = *end > *ts;

	*cut_end = 0;
	if (*end < b->window_start || *ts > b->window_end)
		return 0;
	if (*ts < b->window_start)
		*ts = b->window_start;
	if (*end > b->window_end) {
		*end = b->window_end;
		*cut_end = 1;
	}
	/* a stretch that only touches a window edge is outside it */
	return !(*end == *ts && had_length);
}

static int emit_slice(struct sptd_sched_builder *b, int64_t ts, int64_t end, int cpu,
                      int tid, const char *end_state, int prio)
{
	int cut;

	/* zero-length: a task seen only at the instant the data began */
	if (end <= ts || !clip(b, &ts, &end, &cut))
		return 0;
	b->slices++;
	if (!b->sink->sched_slice)
		return 0;
	return b->sink->sched_slice(b->sink->ctx, ts, end - ts, cpu, tid,
	                            cut ? NULL : end_state, prio);
}

static int emit_state(struct sptd_sched_builder *b, int64_t ts, int64_t end, int tid,
                      const char *state, int cpu, int waker)
{
	int cut;

	if (tid == 0 || end <= ts || !b->sink->thread_state || !clip(b, &ts, &end, &cut))
		return 0;
	return b->sink->thread_state(b->sink->ctx, ts, end - ts, tid, state, cpu, waker);
}

static int emit_gap(struct sptd_sched_builder *b, int64_t ts, int64_t end, int cpu,
                    const char *reason)
{
	int cut;

	if (!b->sink->gap || !clip(b, &ts, &end, &cut))
		return 0;
	return b->sink->gap(b->sink->ctx, ts, end - ts, cpu, reason);
}

/* Close the open state row of @t at @ts (if any). */
static int task_close(struct sptd_sched_builder *b, struct sptd_sched_task *t, int64_t ts)
{
	int ret = 0;

	if (t->state_known && ts >= t->since)
		ret = emit_state(b, t->since, ts, t->tid, t->state, t->cpu, t->waker);
	t->state_known = 0;
	return ret;
}

static void task_open(struct sptd_sched_task *t, int64_t ts, const char *state, int cpu,
                      int waker)
{
	t->state_known = 1;
	snprintf(t->state, sizeof(t->state), "%s", state);
	t->since = ts;
	t->cpu = cpu;
	t->waker = waker;
}

/* ---- the walk ---------------------------------------------------------------- */

static int64_t cpu_data_start(const struct sptd_sched_builder *b, const struct builder_cpu *c)
{
	return c->first_ts > b->window_start ? c->first_ts : b->window_start;
}

static int on_switch(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct builder_cpu *c = &b->cpu[ev->cpu];
	struct sptd_sched_task *prev = sptd_sched_tasks_get(&b->tasks, ev->u.sw.prev_tid);
	struct sptd_sched_task *next = sptd_sched_tasks_get(&b->tasks, ev->u.sw.next_tid);
	int64_t start = c->cur_known ? c->cur_start : cpu_data_start(b, c);
	int ret;

	if (!prev || !next)
		return -ENOMEM;   /* cannot happen: the naming pass added them */
	if (start > ev->ts)
		start = ev->ts;
	ret = emit_slice(b, start, ev->ts, ev->cpu, prev->tid, ev->u.sw.prev_state,
	                 ev->u.sw.prev_prio);
	/* prev: Running until now (from the slice start if its state was lost) */
	if (ret >= 0 && prev->state_known && strcmp(prev->state, "Running") != 0)
		ret = task_close(b, prev, start);
	if (ret >= 0 && !prev->state_known)
		task_open(prev, start, "Running", ev->cpu, -1);
	if (ret >= 0)
		ret = task_close(b, prev, ev->ts);
	if (ret >= 0 && strcmp(ev->u.sw.prev_state, "X") != 0)
		task_open(prev, ev->ts, ev->u.sw.prev_state, -1, -1);
	/* next: whatever it was (runnable, usually) ends now */
	if (ret >= 0)
		ret = task_close(b, next, ev->ts);
	if (ret >= 0)
		task_open(next, ev->ts, "Running", ev->cpu, -1);
	c->cur_known = 1;
	c->cur_tid = next->tid;
	c->cur_prio = ev->u.sw.next_prio;
	c->cur_start = ev->ts;
	return ret;
}

static int on_wake(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct sptd_sched_task *t = sptd_sched_tasks_get(&b->tasks, ev->u.wake.tid);
	int ret;

	if (!t)
		return -ENOMEM;
	if (t->state_known && (strcmp(t->state, "Running") == 0 || t->state[0] == 'R'))
		return 0;   /* already on a CPU or runnable */
	ret = task_close(b, t, ev->ts);
	if (ret >= 0)
		task_open(t, ev->ts, "R", -1, ev->pid);
	return ret;
}

static const char *irq_name_get(const struct sptd_sched_builder *b, int irq)
{
	int i;

	for (i = 0; i < b->nr_irq_names; i++)
		if (b->irq_name_irq[i] == irq)
			return b->irq_name[i];
	return "";
}

static void irq_name_set(struct sptd_sched_builder *b, int irq, const char *name)
{
	int i;

	for (i = 0; i < b->nr_irq_names; i++)
		if (b->irq_name_irq[i] == irq)
			break;
	if (i == BUILDER_MAX_IRQ_NAMES)
		return;
	if (i == b->nr_irq_names)
		b->nr_irq_names++;
	b->irq_name_irq[i] = irq;
	snprintf(b->irq_name[i], sizeof(b->irq_name[i]), "%s", name);
}

static int emit_irq(struct sptd_sched_builder *b, int64_t ts, int64_t end, int cpu,
                    int irq, const char *name, int ret)
{
	int cut;

	if (!b->sink->irq_slice || !clip(b, &ts, &end, &cut))
		return 0;
	return b->sink->irq_slice(b->sink->ctx, ts, end - ts, cpu, irq, name, ret);
}

static int emit_softirq(struct sptd_sched_builder *b, int64_t ts, int64_t end, int cpu,
                        int vec)
{
	int cut;

	if (!b->sink->softirq_slice || !clip(b, &ts, &end, &cut))
		return 0;
	return b->sink->softirq_slice(b->sink->ctx, ts, end - ts, cpu, vec,
	                              sptd_sched_softirq_name(vec));
}

static int on_irq(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct builder_cpu *c = &b->cpu[ev->cpu];
	int ret = 0;

	if (ev->type == SPTD_SCHED_IRQ_ENTRY) {
		if (c->irq_open)   /* lost exit: end the old one here */
			ret = emit_irq(b, c->irq_ts, ev->ts, ev->cpu, c->irq, c->irq_name, -1);
		c->irq_open = 1;
		c->irq = ev->u.irq.irq;
		c->irq_ts = ev->ts;
		snprintf(c->irq_name, sizeof(c->irq_name), "%s", ev->u.irq.name);
		if (ev->u.irq.name[0])
			irq_name_set(b, ev->u.irq.irq, ev->u.irq.name);
		return ret;
	}
	if (c->irq_open && c->irq == ev->u.irq.irq) {
		ret = emit_irq(b, c->irq_ts, ev->ts, ev->cpu, c->irq, c->irq_name, ev->u.irq.ret);
	} else {
		int64_t start = cpu_data_start(b, c);

		if (c->irq_open)
			ret = emit_irq(b, c->irq_ts, ev->ts, ev->cpu, c->irq, c->irq_name, -1);
		else if (start < ev->ts)   /* entered before the data began */
			ret = emit_irq(b, start, ev->ts, ev->cpu, ev->u.irq.irq,
			               irq_name_get(b, ev->u.irq.irq), ev->u.irq.ret);
	}
	c->irq_open = 0;
	return ret;
}

static int on_softirq(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct builder_cpu *c = &b->cpu[ev->cpu];
	int ret = 0;

	if (ev->type == SPTD_SCHED_SOFTIRQ_ENTRY) {
		if (c->softirq_open)
			ret = emit_softirq(b, c->softirq_ts, ev->ts, ev->cpu, c->vec);
		c->softirq_open = 1;
		c->vec = ev->u.softirq.vec;
		c->softirq_ts = ev->ts;
		return ret;
	}
	if (c->softirq_open) {
		ret = emit_softirq(b, c->softirq_ts, ev->ts, ev->cpu, c->vec);
	} else {
		int64_t start = cpu_data_start(b, c);

		if (start < ev->ts)
			ret = emit_softirq(b, start, ev->ts, ev->cpu, ev->u.softirq.vec);
	}
	c->softirq_open = 0;
	return ret;
}

/* Gaps first: CPUs whose data starts late, or never. */
static int emit_gaps(struct sptd_sched_builder *b)
{
	int i, ret = 0;

	for (i = 0; i < b->ncpus && ret >= 0; i++) {
		const struct builder_cpu *c = &b->cpu[i];

		if (!c->has_data)
			ret = emit_gap(b, b->window_start, b->window_end, i, GAP_NO_DATA);
		else if (c->first_ts > b->window_start &&
		         (uint64_t)c->first_ts - (uint64_t)b->window_start > (uint64_t)b->gap_slack)
			ret = emit_gap(b, b->window_start,
			               c->first_ts < b->window_end ? c->first_ts : b->window_end,
			               i, GAP_OVERWRITTEN);
	}
	return ret;
}

/* What is still open at the end of the data runs to window_end. */
static int close_all(struct sptd_sched_builder *b)
{
	int64_t end = b->window_end;
	struct sptd_sched_task **v;
	long n, i;
	int ret = 0;

	for (i = 0; i < b->ncpus && ret >= 0; i++) {
		struct builder_cpu *c = &b->cpu[i];

		if (c->cur_known && c->cur_start < end)
			ret = emit_slice(b, c->cur_start, end, (int)i, c->cur_tid, NULL,
			                 c->cur_prio);
		if (ret >= 0 && c->irq_open && c->irq_ts < end)
			ret = emit_irq(b, c->irq_ts, end, (int)i, c->irq, c->irq_name, -1);
		if (ret >= 0 && c->softirq_open && c->softirq_ts < end)
			ret = emit_softirq(b, c->softirq_ts, end, (int)i, c->vec);
	}
	if (ret < 0)
		return ret;
	v = sptd_sched_tasks_sorted(&b->tasks, &n);
	if (n < 0)
		return -ENOMEM;
	for (i = 0; i < n && ret >= 0; i++)
		if (v[i]->state_known && v[i]->since < end)
			ret = emit_state(b, v[i]->since, end, v[i]->tid, v[i]->state,
			                 v[i]->cpu, v[i]->waker);
	free(v);
	return ret;
}

int sptd_sched_builder_finish(struct sptd_sched_builder *b,
                              const struct sptd_sched_sink *sink)
{
	size_t i;
	int ret;

	if (!b || !sink)
		return -EINVAL;
	b->sink = sink;
	b->slices = 0;
	b->nr_irq_names = 0;
	b->cpu = calloc((size_t)b->ncpus, sizeof(*b->cpu));
	if (!b->cpu)
		return -ENOMEM;
	ret = sptd_sched_tasks_init(&b->tasks);
	if (ret < 0)
		goto out_cpu;
	if (b->nr)
		qsort(b->events, b->nr, sizeof(*b->events), event_cmp);
	for (i = 0; i < b->nr; i++) {
		struct builder_cpu *c = &b->cpu[b->events[i].ev.cpu];

		if (!c->has_data) {
			c->has_data = 1;
			c->first_ts = b->events[i].ev.ts;
		}
	}
	ret = name_all(b);
	if (ret >= 0)
		ret = emit_threads(b);
	if (ret >= 0)
		ret = emit_gaps(b);
	for (i = 0; i < b->nr && ret >= 0; i++) {
		const struct sptd_sched_event *ev = &b->events[i].ev;

		switch (ev->type) {
		case SPTD_SCHED_SWITCH:
			ret = on_switch(b, ev);
			break;
		case SPTD_SCHED_WAKING:
		case SPTD_SCHED_WAKEUP_NEW:
			ret = on_wake(b, ev);
			break;
		case SPTD_SCHED_IRQ_ENTRY:
		case SPTD_SCHED_IRQ_EXIT:
			ret = on_irq(b, ev);
			break;
		case SPTD_SCHED_SOFTIRQ_ENTRY:
		case SPTD_SCHED_SOFTIRQ_EXIT:
			ret = on_softirq(b, ev);
			break;
		default:    /* fork/exit only name tasks */
			break;
		}
	}
	if (ret >= 0)
		ret = close_all(b);
	if (ret >= 0)
		ret = b->slices;
	sptd_sched_tasks_fini(&b->tasks);
out_cpu:
	free(b->cpu);
	b->cpu = NULL;
	b->sink = NULL;
	return ret;
}
