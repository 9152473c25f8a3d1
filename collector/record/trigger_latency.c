/* trigger_latency.c — latency=DUR: a task waited at least DUR between its
 * wakeup and running.  sched_waking and sched_switch on every CPU (busy
 * events: the service is woken per half ring); each waking opens a wait
 * for the woken task, the switch that runs it closes the wait and fires
 * when it was long enough.  A task switched out forgets its earlier
 * wakeup: it ran, so that was not a wait. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "trigger-kind-local.h"

#define LATENCY_WAKE_SLOTS 4096   /* open waits kept at once (power of two) */

/* When a woken task was woken, until it runs. */
struct pending_wake {
	int pid;                  /* 0: empty slot */
	int64_t ts;               /* the waking */
};

struct latency_state {
	struct pending_wake *wakes; /* open-addressed by pid */
	int64_t fired_wait;       /* the wait of the switch that fired last */
	size_t nwake_slots;       /* power of two */
	int off_wake_pid;         /* raw offsets: sched_waking pid */
	int off_next_pid, off_prev_pid; /* sched_switch next_pid, prev_pid */
};

static int latency_every_hit(const struct sptd_col_trigger_spec *spec)
{
	(void)spec;
	return 0;   /* decided at the switch, after the event */
}

static int latency_init(struct sptd_col_trigger *t)
{
	struct latency_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	t->kind_state = st;
	st->off_wake_pid = st->off_next_pid = st->off_prev_pid = -1;
	st->nwake_slots = LATENCY_WAKE_SLOTS;
	st->wakes = calloc(st->nwake_slots, sizeof(*st->wakes));
	return st->wakes ? 0 : -ENOMEM;
}

static int latency_arm(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                       size_t errlen)
{
	struct latency_state *st = t->kind_state;
	int ret;

	if (sptd_col_trigger_events_field("sched", "sched_waking", "pid", &st->off_wake_pid, err, errlen) < 0 ||
	    sptd_col_trigger_events_field("sched", "sched_switch", "next_pid", &st->off_next_pid, err, errlen) < 0 ||
	    sptd_col_trigger_events_field("sched", "sched_switch", "prev_pid", &st->off_prev_pid, err, errlen) < 0)
		return -ENOENT;
	ret = sptd_col_trigger_events_tracepoint(t, "sched", "sched_waking", NULL, SPTD_TRIG_ROLE_WAKING,
	                                         SPTD_TRIG_EV_BUSY, cpus, ncpus, err, errlen);
	if (ret >= 0)
		ret = sptd_col_trigger_events_tracepoint(t, "sched", "sched_switch", NULL,
		                                         SPTD_TRIG_ROLE_SWITCH, SPTD_TRIG_EV_BUSY, cpus,
		                                         ncpus, err, errlen);
	return ret;
}

static void latency_decode(const struct sptd_col_trigger *t, const unsigned char *raw,
                           uint32_t size, struct sptd_col_trigger_hit *h)
{
	const struct latency_state *st = t->kind_state;

	if (h->role == SPTD_TRIG_ROLE_WAKING) {
		h->pid = sptd_col_trigger_raw_i32(raw, size, st->off_wake_pid);
	} else if (h->role == SPTD_TRIG_ROLE_SWITCH) {
		h->pid = sptd_col_trigger_raw_i32(raw, size, st->off_next_pid);
		h->prev_pid = sptd_col_trigger_raw_i32(raw, size, st->off_prev_pid);
	}
}

static struct pending_wake *wake_slot(struct latency_state *st, int pid, int insert)
{
	size_t mask = st->nwake_slots - 1, s = ((uint32_t)pid * 2654435761u) & mask;

	for (size_t probes = 0; probes < st->nwake_slots; probes++, s = (s + 1) & mask) {
		if (st->wakes[s].pid == pid)
			return &st->wakes[s];
		if (st->wakes[s].pid == 0)
			return insert ? &st->wakes[s] : NULL;
	}
	return NULL; /* full: forget this wakeup rather than grow without bound */
}

static void wake_forget(struct latency_state *st, struct pending_wake *w)
{
	size_t mask = st->nwake_slots - 1, s = (size_t)(w - st->wakes);

	/* backward-shift deletion keeps probe chains intact */
	w->pid = 0;
	for (size_t n = (s + 1) & mask; st->wakes[n].pid; n = (n + 1) & mask) {
		struct pending_wake moved = st->wakes[n];

		st->wakes[n].pid = 0;
		*wake_slot(st, moved.pid, 1) = moved;
	}
}

static int latency_decide(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                          int64_t *measure)
{
	struct latency_state *st = t->kind_state;
	struct pending_wake *w;
	int64_t waited;

	if (h->role == SPTD_TRIG_ROLE_WAKING && h->pid > 0) {
		w = wake_slot(st, h->pid, 1);
		if (w && w->pid == 0)
			*w = (struct pending_wake){ .pid = h->pid, .ts = h->ts };
		return 0;
	}
	if (h->role != SPTD_TRIG_ROLE_SWITCH)
		return 0;
	/* switched out: any earlier waking of it was not a wait */
	if (h->prev_pid > 0 && (w = wake_slot(st, h->prev_pid, 0)))
		wake_forget(st, w);
	if (h->pid <= 0 || !(w = wake_slot(st, h->pid, 0)))
		return 0;
	waited = h->ts - w->ts;
	wake_forget(st, w);
	*measure = waited;
	if (waited < t->spec.period_ns)
		return 0;
	st->fired_wait = waited;
	return 1;
}

/* What perf measured, for the capture to hold against the incident's own
 * thread_state (claim.c): perf's tracepoint samples miss events ftrace
 * records, and a wakeup whose later switch-out perf lost pairs with a
 * later switch-in as a wait that never was. */
static void latency_fill(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                         struct sptd_col_fire *fire)
{
	const struct latency_state *st = t->kind_state;

	fire->measured = 1;
	fire->subject = h->pid;
	fire->measure = st->fired_wait;
}

static void latency_describe(const struct sptd_col_trigger *t,
                             const struct sptd_col_trigger_hit *h, int64_t measure, char *buf,
                             size_t len)
{
	(void)t;
	snprintf(buf, len, "pid %d waited %" PRId64 " ns from wakeup to running", h->pid, measure);
}

static void latency_fini(struct sptd_col_trigger *t)
{
	struct latency_state *st = t->kind_state;

	if (!st)
		return;
	free(st->wakes);
	free(st);
	t->kind_state = NULL;
}

const struct sptd_col_trigger_ops sptd_col_trigger_latency_ops = {
	.kind = SPTD_TRIG_LATENCY,
	.every_hit = latency_every_hit,
	.init = latency_init,
	.arm = latency_arm,
	.decode = latency_decode,
	.decide = latency_decide,
	.fill = latency_fill,
	.describe = latency_describe,
	.fini = latency_fini,
};
