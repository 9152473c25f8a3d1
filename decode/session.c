/* session.c — the decode session: configuration, inputs (images, tasks,
 * switches, per-CPU PT), and the run that drives phase 1 on worker threads
 * and phase 2 on the caller's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "dec-local.h"

#define MAX_CPUS 1024

static sptd_log_fn dec_log_fn;
static void *dec_log_ctx;

void sptd_dec_set_log(sptd_log_fn fn, void *ctx)
{
	dec_log_fn = fn;
	dec_log_ctx = ctx;
}

int sptd_dec_session_create(const struct sptd_dec_config *cfg,
                            struct sptd_dec_session **out)
{
	struct sptd_dec_session *s;

	if (!cfg || !out || cfg->cpu_family < 0 || cfg->cpu_model < 0 ||
	    cfg->cpu_stepping < 0 || cfg->mtc_freq < 0 || cfg->mtc_freq > 15 ||
	    cfg->nom_freq < 0 || cfg->nom_freq > 255 || cfg->tsc_shift < 0 ||
	    cfg->tsc_shift > 63 || cfg->jobs < 0 || cfg->cpu_family > 255 ||
	    cfg->cpu_model > 255 || cfg->cpu_stepping > 255)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->tsc = (struct sptd_dec_tsc){
		.mult = cfg->tsc_mult, .shift = (unsigned int)cfg->tsc_shift,
		.zero = cfg->tsc_zero, .offset_ns = cfg->tsc_offset_ns, .hz = cfg->tsc_hz,
	};
	s->iscache = pt_iscache_alloc("sysptd");
	if (!s->iscache) {
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void sptd_dec_session_destroy(struct sptd_dec_session *s)
{
	size_t i;

	if (!s)
		return;
	sptd_dec_aspaces_free(s);
	pt_iscache_free(s->iscache);
	sptd_dec_images_free(s);
	free(s->task_pid);
	free(s->switches);
	for (i = 0; i < (size_t)s->ncpus; i++)
		free(s->cpus[i].data);
	free(s->cpus);
	free(s->symtab);
	free(s);
}

/* ---- inputs ----------------------------------------------------------------- */

int sptd_dec_session_add_task(struct sptd_dec_session *s, int tid, int pid)
{
	if (!s || tid < 0 || pid < 0)
		return -EINVAL;
	if (s->ntasks == s->captasks) {
		size_t cap = s->captasks ? s->captasks * 2 : 64;
		int *n = realloc(s->task_pid, cap * 2 * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->task_pid = n;
		s->captasks = cap;
	}
	s->task_pid[2 * s->ntasks] = tid;
	s->task_pid[2 * s->ntasks + 1] = pid;
	s->ntasks++;
	return 0;
}

int sptd_dec_session_add_switch(struct sptd_dec_session *s, int64_t ts, int cpu,
                                int prev_tid, int next_tid)
{
	if (!s || cpu < 0 || cpu >= MAX_CPUS || prev_tid < 0 || next_tid < 0)
		return -EINVAL;
	if (s->nswitches == s->capswitches) {
		size_t cap = s->capswitches ? s->capswitches * 2 : 256;
		struct sptd_dec_switch *n = realloc(s->switches, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->switches = n;
		s->capswitches = cap;
	}
	s->switches[s->nswitches++] = (struct sptd_dec_switch){
		.ts = ts, .cpu = cpu, .prev_tid = prev_tid, .next_tid = next_tid,
	};
	return 0;
}

int sptd_dec_session_add_pt(struct sptd_dec_session *s, int cpu, const void *data,
                            size_t len)
{
	struct sptd_dec_cpu *c;

	if (!s || cpu < 0 || cpu >= MAX_CPUS || (!data && len))
		return -EINVAL;
	if (cpu >= s->ncpus) {
		struct sptd_dec_cpu *n = realloc(s->cpus, (size_t)(cpu + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		memset(n + s->ncpus, 0, (size_t)(cpu + 1 - s->ncpus) * sizeof(*n));
		s->cpus = n;
		s->ncpus = cpu + 1;
	}
	c = &s->cpus[cpu];
	if (c->len + len > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		uint8_t *n;

		while (cap < c->len + len)
			cap *= 2;
		n = realloc(c->data, cap);
		if (!n)
			return -ENOMEM;
		c->data = n;
		c->cap = cap;
	}
	if (len)
		memcpy(c->data + c->len, data, len);
	c->len += len;
	return 0;
}

int sptd_dec_session_no_time(const struct sptd_dec_session *s)
{
	return s ? s->no_time : 0;
}

/* ---- run ----------------------------------------------------------------- */

static int switch_cmp(const void *a, const void *b)
{
	const struct sptd_dec_switch *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return 0;
}

/* Work shared by the phase-1 threads: the next CPU to take. */
struct run_pool {
	struct sptd_dec_session *s;
	struct sptd_dec_cpu_result *res;
	int next_cpu;
	pthread_mutex_t lock;
};

static void *run_worker(void *arg)
{
	struct run_pool *pool = arg;

	for (;;) {
		int cpu;

		pthread_mutex_lock(&pool->lock);
		cpu = pool->next_cpu++;
		pthread_mutex_unlock(&pool->lock);
		if (cpu >= pool->s->ncpus)
			break;
		if (pool->s->cpus[cpu].len)
			pool->res[cpu].err = sptd_dec_flow_cpu(pool->s, cpu, &pool->res[cpu]);
	}
	return NULL;
}

static int run_prepare(struct sptd_dec_session *s)
{
	if (s->nswitches)
		qsort(s->switches, s->nswitches, sizeof(*s->switches), switch_cmp);
	sptd_dec_aspaces_free(s);
	s->resolve_as = NULL;
	return sptd_dec_aspaces_build(s);
}

static int emit_stats(const struct sptd_dec_sink *sink, int cpu, size_t pt_bytes,
                      const struct sptd_dec_cpu_stats *cs)
{
	const struct { const char *name; int64_t value; } rows[] = {
		{ "pt_bytes", (int64_t)pt_bytes },
		{ "instructions", cs->instructions },
		{ "calls", cs->calls },
		{ "returns", cs->returns },
		{ "far_calls", cs->far_calls },
		{ "far_returns", cs->far_returns },
		{ "interrupts", cs->interrupts },
		{ "decode_errors", cs->decode_errors },
		{ "gaps", cs->gaps },
		{ "decode_ns", cs->decode_ns },
		{ "cr3_mismatches", cs->cr3_mismatches },
	};
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]) && !err; i++)
		err = sink->stat ? sink->stat(sink->ctx, rows[i].name, cpu, rows[i].value) : 0;
	return err;
}

int64_t sptd_dec_session_run(struct sptd_dec_session *s, const struct sptd_dec_sink *sink)
{
	struct sptd_dec_cpu_result *res = NULL;
	struct sptd_dec_stacks *stacks = NULL;
	struct run_pool pool;
	pthread_t *threads = NULL;
	int64_t ret = 0, start = INT64_MAX, end = INT64_MIN;
	int jobs, started = 0, i, no_time = 0;
	size_t k;

	if (!s || !sink)
		return -EINVAL;
	ret = run_prepare(s);
	if (ret < 0)
		goto out;
	s->sink = sink;
	res = calloc((size_t)s->ncpus + 1, sizeof(*res));
	if (!res) {
		ret = -ENOMEM;
		goto out;
	}
	jobs = s->cfg.jobs ? s->cfg.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	if (jobs > s->ncpus)
		jobs = s->ncpus ? s->ncpus : 1;
	pool.s = s;
	pool.res = res;
	pool.next_cpu = 0;
	pthread_mutex_init(&pool.lock, NULL);
	threads = calloc((size_t)jobs, sizeof(*threads));
	if (!threads) {
		ret = -ENOMEM;
		goto out_lock;
	}
	for (i = 1; i < jobs; i++) {
		if (pthread_create(&threads[i], NULL, run_worker, &pool) != 0)
			break;
		started++;
	}
	run_worker(&pool);
	for (i = 1; i <= started; i++)
		pthread_join(threads[i], NULL);

	/* gaps and stats go out from this thread only */
	for (i = 0; i < s->ncpus && ret >= 0; i++) {
		struct sptd_dec_cpu_result *r = &res[i];

		if (!s->cpus[i].len)
			continue;
		if (r->err < 0) {
			ret = r->err;
			break;
		}
		for (k = 0; k < r->ngaps && ret >= 0; k++)
			if (sink->gap)
				ret = sink->gap(sink->ctx, r->gaps[k].ts, r->gaps[k].dur, i,
				                r->gaps[k].reason);
		if (ret >= 0)
			ret = emit_stats(sink, i, s->cpus[i].len, &r->stats);
		if (!r->stats.saw_time && r->flows.n)
			no_time = 1;
	}
	if (ret < 0)
		goto out_lock;
	s->no_time = no_time || s->cfg.no_timing;

	/* phase 2 */
	ret = sptd_dec_stacks_create(sptd_dec_func_resolve, s, sink, &stacks);
	if (ret < 0)
		goto out_lock;
	s->next_symbol_id = SPTD_DEC_SYM_IRQ;
	for (i = 0; i < s->ncpus && ret >= 0; i++) {
		for (k = 0; k < res[i].flows.n && ret >= 0; k++) {
			struct sptd_dec_flow *ev = &res[i].flows.ev[k];

			if (s->no_time)
				ev->flags |= SPTD_DEC_F_NO_TIME;
			if (ev->ts < start)
				start = ev->ts;
			if (ev->ts > end)
				end = ev->ts;
			ret = sptd_dec_stacks_add(stacks, ev);
		}
		sptd_dec_cpu_result_fini(&res[i]);
	}
	/* frames open at the end close where the data end: the last timing
	 * packet or context switch, which may be after the last branch (a
	 * task ending in exit_group) */
	if (!s->no_time && end >= start) {
		for (i = 0; i < s->ncpus; i++)
			if (s->cpus[i].len && res[i].last_ts > end)
				end = res[i].last_ts;
		for (k = 0; k < s->nswitches; k++)
			if (s->switches[k].ts > end)
				end = s->switches[k].ts;
	}
	if (ret >= 0)
		ret = sptd_dec_stacks_run(stacks, start, end);
out_lock:
	pthread_mutex_destroy(&pool.lock);
out:
	if (res)
		for (i = 0; i < s->ncpus; i++)
			sptd_dec_cpu_result_fini(&res[i]);
	free(res);
	free(threads);
	sptd_dec_stacks_destroy(stacks);
	s->sink = NULL;
	return ret;
}

int64_t sptd_dec_session_run_cpu(struct sptd_dec_session *s, int cpu,
                                 const struct sptd_dec_sink *sink,
                                 sptd_dec_flow_fn fn, void *ctx)
{
	struct sptd_dec_cpu_result res;
	int64_t ret;
	size_t k;

	if (!s || cpu < 0 || cpu >= s->ncpus)
		return -EINVAL;
	ret = run_prepare(s);
	if (ret < 0)
		return ret;
	memset(&res, 0, sizeof(res));
	ret = sptd_dec_flow_cpu(s, cpu, &res);
	for (k = 0; k < res.ngaps && ret >= 0 && sink; k++)
		if (sink->gap)
			ret = sink->gap(sink->ctx, res.gaps[k].ts, res.gaps[k].dur, cpu,
			                res.gaps[k].reason);
	if (ret >= 0 && sink)
		ret = emit_stats(sink, cpu, s->cpus[cpu].len, &res.stats);
	for (k = 0; k < res.flows.n && ret >= 0 && fn; k++)
		ret = fn(ctx, &res.flows.ev[k]);
	if (ret >= 0)
		ret = (int64_t)res.flows.n;
	sptd_dec_cpu_result_fini(&res);
	return ret;
}
