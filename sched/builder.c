/* builder.c — typed sched/irq events -> sched slices, thread states, irq and
 * softirq slices and gaps, clipped to the incident window: collecting and
 * sorting events, the naming pass (thread rows and irq names), and the
 * driver of the walk.  The rules that turn events into rows — each row only
 * as long as the evidence — are in builder_walk.c.
 *
 * Decisions where the design is silent:
 *  - tid 0 (the per-CPU idle tasks) gets sched slices but no thread_state
 *    rows: several CPUs run "tid 0" at once, so it has no single state.
 *  - a slice cut by the end of what was seen has end_state NULL: its real
 *    end (and the state it left in) was not seen.
 *  - a task that switched out dead ("X") gets no trailing state row.
 *  - the waker is common_pid of the waking event: the task current where the
 *    wakeup ran; when the record's common_flags say it ran in a hard irq,
 *    NMI or softirq, no task woke it (the current one was interrupted): no
 *    waker, and the row's flags say which context (SPTD_SCHED_F_WAKE_*).
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
	b->started = INT64_MIN;
	b->stopped = INT64_MAX;
	b->ncpus = ncpus;
	*out = b;
	return 0;
}

void sptd_sched_builder_destroy(struct sptd_sched_builder *b)
{
	if (!b)
		return;
	free(b->events);
	free(b->excluded);
	free(b);
}

int sptd_sched_builder_exclude_cpu(struct sptd_sched_builder *b, int cpu)
{
	if (!b || cpu < 0 || cpu >= b->ncpus)
		return -EINVAL;
	if (!b->excluded) {
		b->excluded = calloc((size_t)b->ncpus, 1);
		if (!b->excluded)
			return -ENOMEM;
	}
	b->excluded[cpu] = 1;
	return 0;
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

int sptd_sched_builder_set_recording(struct sptd_sched_builder *b, int64_t started,
                                     const char *started_why, int64_t stopped,
                                     const char *stopped_why)
{
	if (!b || started > stopped)
		return -EINVAL;
	b->started = started;
	b->stopped = stopped;
	snprintf(b->started_why, sizeof(b->started_why), "%s", started_why ? started_why : "");
	snprintf(b->stopped_why, sizeof(b->stopped_why), "%s", stopped_why ? stopped_why : "");
	return 0;
}

/* ---- collecting ------------------------------------------------------------ */

#define TERMINATE(arr) ((arr)[sizeof(arr) - 1] = '\0')

int sptd_sched_builder_add(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct builder_event *be;

	if (!b || !ev || ev->cpu < 0 || ev->cpu >= b->ncpus ||
	    ev->type < SPTD_SCHED_SWITCH || ev->type > SPTD_SCHED_LOST)
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

/* Every task the events name, and every irq's name, in time order. */
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
		case SPTD_SCHED_IRQ_ENTRY:
			if (ev->u.irq.name[0])
				sptd_sched_irq_name_set(b, ev->u.irq.irq, ev->u.irq.name);
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
	/* what was seen ends at the window end, or where ftrace stopped
	 * early (but never before an event it recorded) */
	b->data_end = b->window_end;
	if (b->stopped < b->window_end) {
		b->data_end = b->stopped;
		if (b->nr && b->events[b->nr - 1].ev.ts > b->data_end)
			b->data_end = b->events[b->nr - 1].ev.ts < b->window_end ?
			              b->events[b->nr - 1].ev.ts : b->window_end;
	}
	for (i = 0; i < b->nr; i++) {
		struct builder_cpu *c = &b->cpu[b->events[i].ev.cpu];

		if (!c->has_data) {
			c->has_data = 1;
			c->first_ts = b->events[i].ev.ts;
			c->lost_first = b->events[i].ev.type == SPTD_SCHED_LOST;
		}
	}
	ret = name_all(b);
	if (ret >= 0)
		ret = emit_threads(b);
	if (ret >= 0)
		ret = sptd_sched_walk_begin(b);
	for (i = 0; i < b->nr && ret >= 0; i++)
		ret = sptd_sched_walk_event(b, &b->events[i].ev);
	if (ret >= 0)
		ret = sptd_sched_walk_end(b);
	if (ret >= 0)
		ret = b->slices;
	sptd_sched_tasks_fini(&b->tasks);
out_cpu:
	free(b->cpu);
	b->cpu = NULL;
	b->sink = NULL;
	return ret;
}
