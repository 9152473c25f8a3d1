/* builder_walk.c — the evidence rules of the slice builder: events in time
 * order -> rows, each only as long as the evidence (see "building slices"
 * in sptd_sched.h).
 *
 * Divisions: row emission with clipping and flags; irq names; what an event
 * proves; where each CPU's record begins (gaps before it, and after an early
 * stop); switches and wakeups; hard irqs and softirqs (one set of rules, two
 * tables); a break inside a CPU's record (lost or unreadable pages); the end
 * of the record.
 *
 * Why the rules hold: ftrace records every enabled event of a CPU into that
 * CPU's ring in order, and a ring loses events only at a wrap (the oldest
 * ones, flagged on the next page the reader gets) or when tracing is off.
 * So inside one stretch of a CPU's record (a segment) nothing is missing:
 * an exit whose entry is not in the segment entered before the segment
 * began, an entry whose exit is not there had not exited where the segment
 * ends, unless a later event proves otherwise (the exit's record was
 * lost — a record that cannot be trusted — and the handler had ended). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder-local.h"

#define F_START SPTD_SCHED_F_START_CUT
#define F_END SPTD_SCHED_F_END_CUT

#define GAP_OVERWRITTEN "ftrace ring overwritten before window start"
#define GAP_NO_DATA "no ftrace events from this CPU"

/* ---- emitting rows, clipped --------------------------------------------- */

/* Clip [*ts, *end] to the window: 0 to drop the row, 1 to keep it, with
 * START_CUT / END_CUT added to *@flags for an edge moved to the window. */
static int clip(const struct sptd_sched_builder *b, int64_t *ts, int64_t *end, int *flags)
{
	/* compared, not subtracted: event times are the file's, any int64 */
	int had_length = *end > *ts;

	if (*end < b->window_start || *ts > b->window_end)
		return 0;
	if (*ts < b->window_start) {
		*ts = b->window_start;
		*flags |= F_START;
	}
	if (*end > b->window_end) {
		*end = b->window_end;
		*flags |= F_END;
	}
	/* a stretch that only touches a window edge is outside it */
	return !(*end == *ts && had_length);
}

static int emit_slice(struct sptd_sched_builder *b, int64_t ts, int64_t end, int cpu,
                      int tid, const char *end_state, int prio, int flags)
{
	/* zero-length: a task seen only at the instant the data began */
	if (end <= ts || !clip(b, &ts, &end, &flags))
		return 0;
	b->slices++;
	if (!b->sink->sched_slice)
		return 0;
	return b->sink->sched_slice(b->sink->ctx, ts, end - ts, cpu, tid,
	                            flags & F_END ? NULL : end_state, prio, flags);
}

static int emit_state(struct sptd_sched_builder *b, int64_t ts, int64_t end, int tid,
                      const char *state, int cpu, int waker, int flags)
{
	if (tid == 0 || end <= ts || !b->sink->thread_state || !clip(b, &ts, &end, &flags))
		return 0;
	return b->sink->thread_state(b->sink->ctx, ts, end - ts, tid, state, cpu, waker, flags);
}

/* Hard irqs and softirqs: the same rules, two tables. */
enum handler_kind { HARD = 0, SOFT = 1 };

static int emit_handler(struct sptd_sched_builder *b, enum handler_kind kind, int64_t ts,
                        int64_t end, int cpu, int num, const char *name, int ret, int flags)
{
	if (end < ts)
		end = ts;
	if (kind == HARD) {
		if (!b->sink->irq_slice || !clip(b, &ts, &end, &flags))
			return 0;
		return b->sink->irq_slice(b->sink->ctx, ts, end - ts, cpu, num, name,
		                          flags & F_END ? -1 : ret, flags);
	}
	if (!b->sink->softirq_slice || !clip(b, &ts, &end, &flags))
		return 0;
	return b->sink->softirq_slice(b->sink->ctx, ts, end - ts, cpu, num,
	                              sptd_sched_softirq_name(num), flags);
}

static int emit_gap(struct sptd_sched_builder *b, int64_t ts, int64_t end, int cpu,
                    const char *reason)
{
	int flags = 0;

	if (end <= ts || !b->sink->gap || !clip(b, &ts, &end, &flags))
		return 0;
	return b->sink->gap(b->sink->ctx, ts, end - ts, cpu, reason);
}

/* Close the open state row of @t at @ts (if any), adding @flags. */
static int task_close(struct sptd_sched_builder *b, struct sptd_sched_task *t, int64_t ts,
                      int flags)
{
	int ret = 0;

	if (t->state_known && ts >= t->since)
		ret = emit_state(b, t->since, ts, t->tid, t->state, t->cpu, t->waker,
		                 t->flags | flags);
	t->state_known = 0;
	return ret;
}

static void task_open(struct sptd_sched_task *t, int64_t ts, const char *state, int cpu,
                      int waker, int flags)
{
	t->state_known = 1;
	snprintf(t->state, sizeof(t->state), "%s", state);
	t->since = ts;
	t->cpu = cpu;
	t->waker = waker;
	t->flags = flags;
}

/* ---- irq names ------------------------------------------------------------ */

/* Remember @name as the action name of @irq (the last one wins). */
void sptd_sched_irq_name_set(struct sptd_sched_builder *b, int irq, const char *name)
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

const char *sptd_sched_irq_name_get(const struct sptd_sched_builder *b, int irq)
{
	int i;

	for (i = 0; i < b->nr_irq_names; i++)
		if (b->irq_name_irq[i] == irq)
			return b->irq_name[i];
	return "";
}

/* ---- what an event proves ------------------------------------------------ */

/* Events that only run in task context. */
static int task_context_type(enum sptd_sched_event_type type)
{
	return type == SPTD_SCHED_SWITCH || type == SPTD_SCHED_FORK ||
	       type == SPTD_SCHED_EXIT || type == SPTD_SCHED_WAKEUP_NEW;
}

/* 1 if @ev shows its CPU outside every handler of @kind at ev->ts: by its
 * type (task-context events; softirq events for hard irqs), or by the
 * context its record says it ran in. */
static int proves_outside(const struct sptd_sched_event *ev, enum handler_kind kind)
{
	if (task_context_type(ev->type))
		return 1;
	if (kind == HARD) {
		if (ev->type == SPTD_SCHED_SOFTIRQ_ENTRY || ev->type == SPTD_SCHED_SOFTIRQ_EXIT)
			return 1;
		return (ev->context & SPTD_SCHED_CTX_KNOWN) &&
		       !(ev->context & (SPTD_SCHED_CTX_HARDIRQ | SPTD_SCHED_CTX_NMI));
	}
	return (ev->context & SPTD_SCHED_CTX_KNOWN) && !(ev->context & SPTD_SCHED_CTX_SOFTIRQ);
}

/* HARD or SOFT for an irq or softirq event, -1 for others. */
static int handler_event_kind(enum sptd_sched_event_type type)
{
	if (type == SPTD_SCHED_IRQ_ENTRY || type == SPTD_SCHED_IRQ_EXIT)
		return HARD;
	if (type == SPTD_SCHED_SOFTIRQ_ENTRY || type == SPTD_SCHED_SOFTIRQ_EXIT)
		return SOFT;
	return -1;
}

/* ---- where each CPU's record begins ---------------------------------------- */

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* A new segment of @c from @ts: nothing known of what runs there. */
static void segment_start(struct builder_cpu *c, int64_t ts)
{
	c->seg_start = c->last_ts = c->not_in[HARD] = c->not_in[SOFT] = ts;
	c->cur_known = c->hard.open = c->soft.open = 0;
}

/* Text of "+1.234567 ms after the window start" for reasons. */
static void rel_time(const struct sptd_sched_builder *b, int64_t ts, char *buf, size_t len)
{
	snprintf(buf, len, "%+.6f ms", ((double)ts - (double)b->window_start) / 1e6);
}

int sptd_sched_walk_begin(struct sptd_sched_builder *b)
{
	char reason[2 * BUILDER_WHY_LEN], at[64];
	int i, ret = 0;

	for (i = 0; i < b->ncpus && ret >= 0; i++) {
		struct builder_cpu *c = &b->cpu[i];
		int64_t start;

		if (!c->has_data) {
			segment_start(c, b->window_start);
			if (!b->excluded || !b->excluded[i])
				ret = emit_gap(b, b->window_start, b->data_end, i, GAP_NO_DATA);
			continue;
		}
		if (c->lost_first) {
			/* the ring wrapped: what came before its oldest page is gone */
			start = c->first_ts;
			snprintf(reason, sizeof(reason), "ftrace ring overwritten: this CPU's "
			         "oldest events were lost (the ring holds less than the window; "
			         "raise --buffer)");
		} else if (b->started != INT64_MIN) {
			/* the ring did not wrap: seen since recording (re)started */
			start = min64(b->started, c->first_ts);
			rel_time(b, start, at, sizeof(at));
			snprintf(reason, sizeof(reason), "ftrace was not recording: it started at %s%s%s",
			         at, b->started_why[0] ? ": " : "", b->started_why);
		} else {
			start = c->first_ts;
			snprintf(reason, sizeof(reason), "%s", GAP_OVERWRITTEN);
			if (start <= b->window_start ||
			    (uint64_t)start - (uint64_t)b->window_start <= (uint64_t)b->gap_slack)
				reason[0] = '\0';
		}
		segment_start(c, start);
		if (reason[0] && start > b->window_start)
			ret = emit_gap(b, b->window_start, min64(start, b->data_end), i, reason);
	}
	if (ret >= 0 && b->data_end < b->window_end) {
		rel_time(b, b->data_end, at, sizeof(at));
		snprintf(reason, sizeof(reason), "ftrace stopped at %s, before the window end%s%s",
		         at, b->stopped_why[0] ? ": " : "", b->stopped_why);
		for (i = 0; i < b->ncpus && ret >= 0; i++)
			if (b->cpu[i].has_data || !b->excluded || !b->excluded[i])
				ret = emit_gap(b, b->data_end, b->window_end, i, reason);
	}
	return ret;
}

/* ---- switches and wakeups ---------------------------------------------------- */

/* @c runs task @tid (prio @prio, -1 unknown) since @start, last seen at
 * @seen; @flags F_START when that start was not seen. */
static void cur_set(struct builder_cpu *c, int tid, int prio, int64_t start, int64_t seen,
                    int flags)
{
	c->cur_known = 1;
	c->cur_tid = tid;
	c->cur_prio = prio;
	c->cur_start = start;
	c->cur_seen = seen;
	c->cur_flags = flags;
}

static int on_switch(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct builder_cpu *c = &b->cpu[ev->cpu];
	struct sptd_sched_task *prev = sptd_sched_tasks_get(&b->tasks, ev->u.sw.prev_tid);
	struct sptd_sched_task *next = sptd_sched_tasks_get(&b->tasks, ev->u.sw.next_tid);
	/* before the first switch of a segment, prev ran since it began */
	int64_t start = c->cur_known ? c->cur_start : c->seg_start;
	int flags = c->cur_known ? c->cur_flags : F_START;
	int ret;

	if (!prev || !next)
		return -ENOMEM;   /* cannot happen: the naming pass added them */
	if (start > ev->ts)
		start = ev->ts;
	prev->prio = ev->u.sw.prev_prio;
	next->prio = ev->u.sw.next_prio;
	ret = emit_slice(b, start, ev->ts, ev->cpu, prev->tid, ev->u.sw.prev_state,
	                 ev->u.sw.prev_prio, flags);
	/* prev: Running until now (from the slice start if its state was lost) */
	if (ret >= 0 && prev->state_known && strcmp(prev->state, "Running") != 0)
		ret = task_close(b, prev, start, flags & F_START ? F_END : 0);
	if (ret >= 0 && !prev->state_known)
		task_open(prev, start, "Running", ev->cpu, -1, flags);
	if (ret >= 0)
		ret = task_close(b, prev, ev->ts, 0);
	if (ret >= 0 && strcmp(ev->u.sw.prev_state, "X") != 0)
		task_open(prev, ev->ts, ev->u.sw.prev_state, -1, -1, 0);
	/* next: whatever it was (runnable, usually) ends now */
	if (ret >= 0)
		ret = task_close(b, next, ev->ts, 0);
	if (ret >= 0)
		task_open(next, ev->ts, "Running", ev->cpu, -1, 0);
	cur_set(c, next->tid, ev->u.sw.next_prio, ev->ts, ev->ts, 0);
	return ret;
}

/* @ev ran on its CPU in task ev->pid, but the CPU was running another task
 * by the last switch seen there: the switch in between was not recorded.
 * Some kernels never trace it (a VM's secondary CPUs leaving idle, seen on
 * 6.18 under Firecracker: perf misses it too), so this is routine, not
 * corruption.  ev->pid runs from the other task's last event there, or
 * from just after its wakeup when that came later (START_CUT); the other
 * task's slice ends there (END_CUT, end state unknown), so that a CPU's
 * slices still leave no hole. */
static int on_missed_switch(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct builder_cpu *c = &b->cpu[ev->cpu];
	struct sptd_sched_task *t = sptd_sched_tasks_get(&b->tasks, ev->pid), *old;
	int64_t start = c->cur_seen;
	int woken, ret;

	if (!t)
		return -ENOMEM;
	/* woken after the CPU's last proof of the other task: not running
	 * before its wakeup, nor at it (a wakeup is not a switch), so from 1 ns
	 * later at the earliest.  Its state row (runnable, with who woke it,
	 * usually) ends where it is first believed running, with END_CUT either
	 * way: that end is a bound, not the switch in, which was not recorded
	 * (without the flag a runnable row claimed a wait up to the other
	 * task's last event: 26 ms where perf's own pairing, which drops a
	 * waking whose switch in it lacks, claimed none) */
	woken = t->state_known && t->state[0] == 'R' && t->since >= start && t->since < ev->ts;
	if (woken)
		start = t->since + 1;
	/* the task believed current ran up to there (the CPU's slices leave
	 * no hole), its end not seen */
	ret = emit_slice(b, c->cur_start, start, ev->cpu, c->cur_tid, NULL, c->cur_prio,
	                 c->cur_flags | F_END);
	old = sptd_sched_tasks_get(&b->tasks, c->cur_tid);
	if (ret >= 0 && old && old != t && old->state_known && strcmp(old->state, "Running") == 0 &&
	    old->cpu == ev->cpu)
		ret = task_close(b, old, start, F_END);
	if (ret >= 0)
		ret = task_close(b, t, start, F_END);
	if (ret >= 0)
		task_open(t, start, "Running", ev->cpu, -1, F_START);
	cur_set(c, ev->pid, ev->type == SPTD_SCHED_SWITCH ? ev->u.sw.prev_prio : t->prio, start,
	        ev->ts, F_START);
	return ret;
}

static int on_wake(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct sptd_sched_task *t = sptd_sched_tasks_get(&b->tasks, ev->u.wake.tid);
	int ret, wflags = 0;

	/* woken from an interrupt: common_pid is whoever it interrupted */
	if ((ev->context & SPTD_SCHED_CTX_KNOWN) &&
	    (ev->context & (SPTD_SCHED_CTX_HARDIRQ | SPTD_SCHED_CTX_NMI)))
		wflags = SPTD_SCHED_F_WAKE_HARDIRQ;
	else if ((ev->context & SPTD_SCHED_CTX_KNOWN) && (ev->context & SPTD_SCHED_CTX_SOFTIRQ))
		wflags = SPTD_SCHED_F_WAKE_SOFTIRQ;

	if (!t)
		return -ENOMEM;
	t->prio = ev->u.wake.prio;
	if (t->state_known && (strcmp(t->state, "Running") == 0 || t->state[0] == 'R'))
		return 0;   /* already on a CPU or runnable */
	ret = task_close(b, t, ev->ts, 0);
	if (ret >= 0)
		task_open(t, ev->ts, "R", -1, wflags ? -1 : ev->pid, wflags);
	return ret;
}

/* ---- hard irqs and softirqs ------------------------------------------------- */

static struct builder_handler *handler_of(struct builder_cpu *c, enum handler_kind kind)
{
	return kind == HARD ? &c->hard : &c->soft;
}

/* End the open handler of @kind of @c at @end, its exit not seen. */
static int handler_cut(struct sptd_sched_builder *b, struct builder_cpu *c, int cpu,
                       enum handler_kind kind, int64_t end)
{
	struct builder_handler *h = handler_of(c, kind);

	h->open = 0;
	return emit_handler(b, kind, h->ts, end, cpu, h->num, h->name, -1, F_END);
}

static int on_handler(struct sptd_sched_builder *b, const struct sptd_sched_event *ev,
                      enum handler_kind kind)
{
	struct builder_cpu *c = &b->cpu[ev->cpu];
	struct builder_handler *h = handler_of(c, kind);
	int entry = ev->type == SPTD_SCHED_IRQ_ENTRY || ev->type == SPTD_SCHED_SOFTIRQ_ENTRY;
	int num = kind == HARD ? ev->u.irq.irq : ev->u.softirq.vec;
	int ret_value = kind == HARD ? ev->u.irq.ret : 0;
	int64_t start;
	int ret = 0;

	if (entry) {
		/* they do not nest: an open one had ended, its exit unseen */
		if (h->open)
			ret = handler_cut(b, c, ev->cpu, kind, ev->ts);
		h->open = 1;
		h->num = num;
		h->ts = ev->ts;
		snprintf(h->name, sizeof(h->name), "%s", kind == HARD ? ev->u.irq.name : "");
		return ret;
	}
	if (h->open && h->num == num) {
		h->open = 0;
		return emit_handler(b, kind, h->ts, ev->ts, ev->cpu, num, h->name, ret_value, 0);
	}
	/* an exit without its entry: it entered after the CPU was last seen
	 * elsewhere (after the open one of another number, whose exit was
	 * lost: the last event that may still be in that one) */
	start = max64(c->not_in[kind], c->seg_start);
	if (h->open) {
		start = max64(start, max64(c->last_ts, h->ts));
		ret = handler_cut(b, c, ev->cpu, kind, start);
	}
	if (ret >= 0)
		ret = emit_handler(b, kind, start, ev->ts, ev->cpu, num,
		                   kind == HARD ? sptd_sched_irq_name_get(b, num) : "", ret_value,
		                   F_START);
	return ret;
}

/* ---- a break inside a CPU's record ------------------------------------------- */

/* Close everything open on CPU @cpu at @end (its record stops being whole
 * there): its slice, handlers, the state of the task running on it and of
 * every task not running anywhere (a wakeup of it may be what was lost). */
static int cpu_close(struct sptd_sched_builder *b, int cpu, int64_t end, int tasks)
{
	struct builder_cpu *c = &b->cpu[cpu];
	struct sptd_sched_task **v;
	long n, i;
	int ret = 0;

	if (c->cur_known && c->cur_start < end)
		ret = emit_slice(b, c->cur_start, end, cpu, c->cur_tid, NULL, c->cur_prio,
		                 c->cur_flags | F_END);
	if (ret >= 0 && c->hard.open)
		ret = handler_cut(b, c, cpu, HARD, max64(end, c->hard.ts));
	if (ret >= 0 && c->soft.open)
		ret = handler_cut(b, c, cpu, SOFT, max64(end, c->soft.ts));
	c->cur_known = c->hard.open = c->soft.open = 0;
	if (ret < 0 || !tasks)
		return ret;
	v = sptd_sched_tasks_sorted(&b->tasks, &n);
	if (n < 0)
		return -ENOMEM;
	for (i = 0; i < n && ret >= 0; i++) {
		struct sptd_sched_task *t = v[i];

		if (!t->state_known || t->since > end ||
		    (strcmp(t->state, "Running") == 0 && t->cpu != cpu))
			continue;
		ret = task_close(b, t, end, F_END);
	}
	free(v);
	return ret;
}

/* The ring of @ev->cpu lost events before @ev->ts (not at its start). */
static int on_lost(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	struct builder_cpu *c = &b->cpu[ev->cpu];
	int64_t end = c->last_ts;
	char reason[160];
	int ret;

	if (ev->ts <= c->seg_start && c->last_ts == c->seg_start)
		return 0;   /* the CPU's record begins here: see walk_begin */
	ret = cpu_close(b, ev->cpu, end, 1);
	if (ev->u.lost.reason == SPTD_SCHED_LOST_CORRUPT)
		snprintf(reason, sizeof(reason), "unreadable ftrace page skipped");
	else if (ev->u.lost.count >= 0)
		snprintf(reason, sizeof(reason), "ftrace ring lost %" PRId64 " events", ev->u.lost.count);
	else
		snprintf(reason, sizeof(reason), "ftrace ring lost events");
	if (ret >= 0)
		ret = emit_gap(b, end, min64(ev->ts, b->data_end), ev->cpu, reason);
	segment_start(c, max64(ev->ts, end));
	return ret;
}

/* ---- the walk -------------------------------------------------------------------- */

int sptd_sched_walk_event(struct sptd_sched_builder *b, const struct sptd_sched_event *ev)
{
	static const enum handler_kind kinds[] = { HARD, SOFT };
	struct builder_cpu *c = &b->cpu[ev->cpu];
	int ret = 0;

	if (ev->type == SPTD_SCHED_LOST)
		return on_lost(b, ev);
	/* evidence that an open handler had ended, its exit unseen (its own
	 * kind's events are the handler's business) */
	for (int k = 0; k < 2 && ret >= 0; k++) {
		enum handler_kind kind = kinds[k];

		if (handler_of(c, kind)->open && handler_event_kind(ev->type) != (int)kind &&
		    proves_outside(ev, kind))
			ret = handler_cut(b, c, ev->cpu, kind, ev->ts);
	}
	if (ret < 0)
		return ret;
	if (c->cur_known && ev->pid >= 0 && ev->pid != c->cur_tid) {
		ret = on_missed_switch(b, ev);
	} else if (c->cur_known && ev->pid == c->cur_tid && ev->ts > c->cur_seen) {
		c->cur_seen = ev->ts;
	} else if (!c->cur_known && ev->pid >= 0) {
		/* the first event of a stretch names the task current since it
		 * began (as a first switch's prev does): a later event of another
		 * task is then a switch not recorded */
		cur_set(c, ev->pid, -1, c->seg_start, ev->ts, F_START);
	}
	if (ret < 0)
		return ret;
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
		ret = on_handler(b, ev, HARD);
		break;
	case SPTD_SCHED_SOFTIRQ_ENTRY:
	case SPTD_SCHED_SOFTIRQ_EXIT:
		ret = on_handler(b, ev, SOFT);
		break;
	default:    /* fork/exit only name tasks */
		break;
	}
	if (ev->ts > c->last_ts)
		c->last_ts = ev->ts;
	/* a handler's exit shows the CPU out of it too */
	for (int k = 0; k < 2; k++)
		if (proves_outside(ev, kinds[k]) ||
		    (handler_event_kind(ev->type) == (int)kinds[k] &&
		     ev->type != SPTD_SCHED_IRQ_ENTRY && ev->type != SPTD_SCHED_SOFTIRQ_ENTRY))
			c->not_in[kinds[k]] = max64(c->not_in[kinds[k]], ev->ts);
	return ret;
}

/* What is still open where the record ends is cut there. */
int sptd_sched_walk_end(struct sptd_sched_builder *b)
{
	int64_t end = b->data_end;
	struct sptd_sched_task **v;
	long n, i;
	int ret = 0;

	for (i = 0; i < b->ncpus && ret >= 0; i++)
		ret = cpu_close(b, (int)i, end, 0);
	if (ret < 0)
		return ret;
	v = sptd_sched_tasks_sorted(&b->tasks, &n);
	if (n < 0)
		return -ENOMEM;
	for (i = 0; i < n && ret >= 0; i++)
		if (v[i]->state_known && v[i]->since < end)
			ret = task_close(b, v[i], end, F_END);
	free(v);
	return ret;
}
