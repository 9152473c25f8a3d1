/* trigger.c — the trigger core: arming a kind across CPUs, collecting hits
 * from its events, warm-up and cooldown, deciding and firing, draining,
 * lifetime.  What each kind arms and how it decides is in its own file
 * (trigger_<kind>.c) behind struct sptd_col_trigger_ops; every perf event is
 * opened and read in trigger_events.c.
 *
 * The kernel freezes ftrace itself where it can (a traceoff event trigger
 * installed by the service at sptd_col_trigger_freeze_point()); these
 * events tell the service that, and when, a trigger fired, with the CPU and
 * a CLOCK_MONOTONIC timestamp. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trigger-kind-local.h"

/* ---- kinds ------------------------------------------------------------------ */

static const struct sptd_col_trigger_ops *const kinds[] = {
	&sptd_col_trigger_irq_ops, &sptd_col_trigger_tracepoint_ops, &sptd_col_trigger_timer_ops,
	&sptd_col_trigger_latency_ops, &sptd_col_trigger_uprobe_ops, &sptd_col_trigger_break_ops,
	&sptd_col_trigger_watch_ops,
};

static const struct sptd_col_trigger_ops *ops_of(enum sptd_col_trigger_kind kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i]->kind == kind)
			return kinds[i];
	return NULL;
}

/* ---- lifetime --------------------------------------------------------------- */

/* A trigger of @spec with its kind's state, nothing opened. */
static int trigger_new(const struct sptd_col_trigger_spec *spec, int max_cpu,
                       struct sptd_col_trigger **out)
{
	const struct sptd_col_trigger_ops *ops = ops_of(spec->kind);
	struct sptd_col_trigger *t;
	int ret = 0;

	if (!ops)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->spec = *spec;
	t->ops = ops;
	t->own_fd = -1;
	t->max_cpu = max_cpu;
	if (ops->init)
		ret = ops->init(t);
	if (ret < 0) {
		sptd_col_trigger_destroy(t);
		return ret;
	}
	*out = t;
	return 0;
}

int sptd_col_trigger_create(const struct sptd_col_trigger_spec *spec, const int *cpus, int ncpus,
                            struct sptd_col_trigger **out, char *err, size_t errlen)
{
	return sptd_col_trigger_create_aux(spec, cpus, ncpus, NULL, NULL, out, err, errlen);
}

int sptd_col_trigger_create_aux(const struct sptd_col_trigger_spec *spec, const int *cpus,
                                int ncpus, const int *pt_fds, const int64_t *perf_offset_ns,
                                struct sptd_col_trigger **out, char *err, size_t errlen)
{
	struct sptd_col_trigger *t = NULL;
	int max_cpu = 0, ret;

	if (!spec || !cpus || ncpus <= 0 || !out || !err)
		return -EINVAL;
	for (int i = 0; i < ncpus; i++)
		if (cpus[i] > max_cpu)
			max_cpu = cpus[i];
	ret = trigger_new(spec, max_cpu, &t);
	if (ret == -EINVAL)
		snprintf(err, errlen, "unknown trigger kind");
	if (ret < 0)
		return ret;
	/* only where each hit fires: where the kind decides later (irq min=,
	 * latency), a kernel pause at the event would be wrong */
	if (pt_fds && t->ops->every_hit(spec)) {
		t->leaders = pt_fds;
		t->aux_pausing = 1;
		t->perf_offset_ns = perf_offset_ns;
	}
	ret = t->ops->arm(t, cpus, ncpus, err, errlen);
	t->leaders = NULL;   /* borrowed for the opening only */
	if (ret < 0) {
		sptd_col_trigger_destroy(t);
		return ret;
	}
	*out = t;
	return 0;
}

int sptd_col_trigger_create_unarmed(const struct sptd_col_trigger_spec *spec, int max_cpu,
                                    struct sptd_col_trigger **out)
{
	if (!spec || max_cpu < 0 || !out)
		return -EINVAL;
	return trigger_new(spec, max_cpu, out);
}

void sptd_col_trigger_destroy(struct sptd_col_trigger *t)
{
	if (!t)
		return;
	sptd_col_trigger_events_close(t);
	if (t->ops && t->ops->fini)
		t->ops->fini(t);
	if (t->own_fd >= 0)
		close(t->own_fd);
	free(t->events);
	free(t->hits);
	free(t);
}

/* ---- what the service asks ---------------------------------------------------- */

int sptd_col_trigger_aux_pause(const struct sptd_col_trigger *t, int *refused)
{
	if (refused)
		*refused = t ? t->aux_refused : 0;
	return t && t->aux_pausing ? 1 : 0;
}

enum sptd_col_trigger_aux_why sptd_col_trigger_aux_why(const struct sptd_col_trigger *t)
{
	return t ? t->aux_why : SPTD_TRIG_AUX_OK;
}

int sptd_col_trigger_fds(const struct sptd_col_trigger *t, int *fds, int max)
{
	int n = 0;

	if (!t || !fds)
		return -EINVAL;
	if (t->own_fd >= 0 && n < max)
		fds[n++] = t->own_fd;
	for (int i = 0; i < t->nevents && n < max; i++)
		if (t->events[i].fd >= 0)
			fds[n++] = t->events[i].fd;
	return n;
}

int sptd_col_trigger_freeze_point(const struct sptd_col_trigger_spec *spec, char *system,
                                  size_t syslen, char *event, size_t evlen, char *filter,
                                  size_t filterlen)
{
	const struct sptd_col_trigger_ops *ops = spec ? ops_of(spec->kind) : NULL;

	if (!spec || !system || !event || !filter || !syslen || !evlen || !filterlen)
		return -EINVAL;
	if (!ops || !ops->freeze_point)
		return 0;
	return ops->freeze_point(spec, system, syslen, event, evlen, filter, filterlen);
}

/* ---- warm-up and cooldown ----------------------------------------------------- */

int64_t sptd_col_trigger_not_before(int64_t armed_at, int64_t window_ns, int64_t last_capture,
                                    int64_t cooldown_ns)
{
	/* An automatic trigger acts only once the rings hold a whole window
	 * (right after start or a capture they do not yet) and the cooldown
	 * is over; a manual one always acts, and what is missing becomes a
	 * gap. */
	int64_t not_before = armed_at + window_ns;

	if (cooldown_ns && last_capture && last_capture + cooldown_ns > not_before)
		not_before = last_capture + cooldown_ns;
	return not_before;
}

/* ---- hits --------------------------------------------------------------------- */

int sptd_col_trigger_feed(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h)
{
	if (!t || !h)
		return -EINVAL;
	if (t->nhits == t->hits_cap) {
		size_t cap = t->hits_cap ? t->hits_cap * 2 : 1024;
		struct sptd_col_trigger_hit *more = realloc(t->hits, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		t->hits = more;
		t->hits_cap = cap;
	}
	t->hits[t->nhits++] = *h;
	return 0;
}

/* A sample record of one of @ctx's events becomes a hit. */
static int on_sample(void *ctx, const struct sptd_col_trigger_event *ev, int64_t ts, int cpu,
                     const unsigned char *raw, uint32_t raw_size,
                     const struct sptd_col_perf_record *r)
{
	struct sptd_col_trigger *t = ctx;
	struct sptd_col_trigger_hit h = {
		.ts = ts, .cpu = cpu, .role = ev->role, .irq = -1, .pid = -1, .prev_pid = -1,
		.task_pid = r ? r->id.pid : -1, .task_tid = r ? r->id.tid : -1,
		.ip = r ? r->sample.ip : 0,
	};

	if (raw && t->ops->decode)
		t->ops->decode(t, raw, raw_size, &h);
	if (r && t->ops->record)
		t->ops->record(t, &h, r);
	return sptd_col_trigger_feed(t, &h);
}

/* ---- deciding ------------------------------------------------------------------ */

static int cmp_hits(const void *a, const void *b)
{
	const struct sptd_col_trigger_hit *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Walk the hits in time order through the kind's decision and pick the
 * earliest that fires at or after @not_before (earlier than a fire already
 * in @fire when *@fired). */
static void decide(struct sptd_col_trigger *t, int64_t not_before, struct sptd_col_fire *fire,
                   int *fired)
{
	if (t->nhits)   /* t->hits is NULL before the first hit */
		qsort(t->hits, t->nhits, sizeof(*t->hits), cmp_hits);
	for (size_t i = 0; i < t->nhits; i++) {
		const struct sptd_col_trigger_hit *h = &t->hits[i];
		int64_t measure = 0;

		/* every hit goes through the kind: its state (open handler
		 * entries, pending wakeups) follows warm-up and cooldown too */
		if (t->ops->decide && !t->ops->decide(t, h, &measure))
			continue;
		if (h->ts < not_before || (*fired && h->ts >= fire->ts))
			continue;
		*fired = 1;
		fire->ts = h->ts;
		fire->cpu = h->cpu;
		t->ops->describe(t, h, measure, fire->detail, sizeof(fire->detail));
		if (t->ops->fill)
			t->ops->fill(t, h, fire);
	}
	t->nhits = 0;
}

static void fire_init(struct sptd_col_trigger *t, struct sptd_col_fire *fire)
{
	memset(fire, 0, sizeof(*fire));
	fire->spec = &t->spec;
	fire->cpu = -1;
	fire->tid = -1;
	fire->pid = -1;
}

int sptd_col_trigger_decide(struct sptd_col_trigger *t, int64_t not_before,
                            struct sptd_col_fire *fire)
{
	int fired = 0;

	if (!t || !fire)
		return -EINVAL;
	fire_init(t, fire);
	decide(t, not_before, fire, &fired);
	return fired;
}

int sptd_col_trigger_check(struct sptd_col_trigger *t, int64_t not_before,
                           struct sptd_col_fire *fire)
{
	int fired = 0;

	if (!t || !fire)
		return -EINVAL;
	fire_init(t, fire);
	if (t->ops->tick)
		fired = t->ops->tick(t, not_before, fire) == 1;
	for (int i = 0; i < t->nevents; i++)
		if (sptd_col_trigger_events_drain(&t->events[i], on_sample, t) < 0)
			break; /* out of memory: decide on what we have */
	decide(t, not_before, fire, &fired);
	return fired;
}

int sptd_col_trigger_hits(const struct sptd_col_trigger *t, int64_t from, int64_t to,
                          sptd_col_trigger_hit_fn fn, void *ctx)
{
	if (!t || !fn)
		return -EINVAL;
	return t->ops->hits ? t->ops->hits(t, from, to, fn, ctx) : 0;
}

const char *sptd_col_trigger_text(const struct sptd_col_trigger *t)
{
	return t ? t->spec.text : "";
}

void sptd_col_trigger_drain(struct sptd_col_trigger *t)
{
	struct sptd_col_fire ignored;

	if (t)
		sptd_col_trigger_check(t, INT64_MAX, &ignored);
}
