/* session.c — the decode session: configuration, inputs (images, tasks,
 * switches, per-CPU PT), and the run that drives phase 1 on worker threads
 * and phase 2 on the caller's. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

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
	s->text_copied = INT64_MAX;
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
	free(s->exits);
	for (i = 0; i < (size_t)s->ncpus; i++)
		free(s->cpus[i].data);
	free(s->cpus);
	free(s->symtab);
	free(s->kernel_note);
	sptd_dec_text_pokes_free(s);
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

int sptd_dec_session_add_exit(struct sptd_dec_session *s, int tid, int64_t ts)
{
	if (!s || tid <= 0)
		return -EINVAL;
	if (s->nexits == s->capexits) {
		size_t cap = s->capexits ? s->capexits * 2 : 64;
		struct sptd_dec_switch *n = realloc(s->exits, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->exits = n;
		s->capexits = cap;
	}
	s->exits[s->nexits++] = (struct sptd_dec_switch){ .ts = ts, .prev_tid = tid };
	return 0;
}

int sptd_dec_session_set_kernel_note(struct sptd_dec_session *s, const char *note)
{
	char *copy = NULL;

	if (!s)
		return -EINVAL;
	if (note && note[0]) {
		copy = strdup(note);
		if (!copy)
			return -ENOMEM;
	}
	free(s->kernel_note);
	s->kernel_note = copy;
	return 0;
}

int sptd_dec_session_set_untimed_tid(struct sptd_dec_session *s, int cpu, int tid)
{
	int ret;

	if (!s || tid <= 0)
		return -EINVAL;
	ret = sptd_dec_session_add_pt(s, cpu, NULL, 0);   /* the CPU's entry */
	if (ret < 0)
		return ret;
	s->cpus[cpu].untimed_tid = tid;
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

/* One piece of phase-1 work: a CPU, or a segment of one. */
struct run_unit {
	int cpu;                               /* the CPU */
	const struct sptd_dec_segplan *plan;   /* its segment; NULL the whole CPU */
	const struct sptd_dec_segplan *next;   /* the segment after it, NULL none */
	struct sptd_dec_cpu_result *res;       /* what it found (a CPU's units'
	                                        * results are contiguous) */
	struct sptd_dec_power_buf *power;      /* not NULL: this unit reads the
	                                        * CPU's power events (power.c) */
};

/* Work shared by the phase-1 threads: the next unit to take. */
struct run_pool {
	struct sptd_dec_session *s;            /* the session */
	struct run_unit *units;                /* every unit */
	size_t nunits, next;                   /* count, next to take */
	uint64_t done, total;                  /* PT bytes decoded, and to decode */
	pthread_mutex_t lock;                  /* guards next and done */
};

/* The PT bytes unit @u decodes. */
static uint64_t unit_bytes(const struct sptd_dec_session *s, const struct run_unit *u)
{
	uint64_t end = s->cpus[u->cpu].len;

	if (u->power)
		return 0;
	if (!u->plan)
		return end;
	if (u->next && u->next->start < end)
		end = u->next->start;
	return end > u->plan->start ? end - u->plan->start : 0;
}

/* Count @u decoded and say so (under the pool lock: one report at a time). */
static void unit_done(struct run_pool *pool, const struct run_unit *u)
{
	const struct sptd_dec_config *cfg = &pool->s->cfg;

	pthread_mutex_lock(&pool->lock);
	pool->done += unit_bytes(pool->s, u);
	if (cfg->progress && !u->power)
		cfg->progress(cfg->progress_ctx, "decoding PT", pool->done, pool->total);
	pthread_mutex_unlock(&pool->lock);
}

/* glibc's defaults for the two thresholds run_arenas_begin() moves
 * (malloc(3), mallopt(3)): 128 KiB each. */
#define RUN_GLIBC_DEFAULT_THRESHOLD (128 * 1024)
/* The largest M_MMAP_THRESHOLD glibc accepts on 64-bit: 32 MiB. */
#define RUN_ARENA_MAX (32u << 20)

/* Memory for the decode threads, and why.  libipt gives each section a
 * block cache of 4 bytes per byte of the section (pt_bcache_alloc, a
 * calloc), and reads an entry before it writes it.  Memory glibc gets
 * fresh from the kernel is not cleared by calloc: its first read maps the
 * shared zero page, and the write that follows is a copy-on-write fault
 * that, with the other decode threads running on the other CPUs, flushes
 * their TLBs by IPI.  Measured on the mruby import: 1,815 such faults'
 * samples of 19,447 (9 %), the IPIs the largest part.  The flow buffers
 * the threads fill are the next largest source of faults (one a page).
 *
 * So while the threads run, allocations up to 32 MiB come from the
 * threads' arenas instead of mmap, freed memory stays in the arena, and
 * each thread first grows its arena by what its block caches and flow
 * buffers will take (run_arena_pregrow), without touching it, and asks
 * for transparent huge pages there.  calloc clears memory the arena
 * already holds, so the block cache's first touch is that clear, a write:
 * no zero page, no IPI; with huge pages one fault maps 2 MiB.  Where THP
 * is off ("never") the advice is refused and the pages are small, one
 * fault each.  Past 32 MiB (a kernel image's cache) glibc maps as before.
 * The thresholds go back to glibc's defaults afterwards, so a long-lived
 * service returns the memory on its next frees. */
static void run_arenas_begin(void)
{
	mallopt(M_MMAP_THRESHOLD, (int)RUN_ARENA_MAX);
	mallopt(M_TRIM_THRESHOLD, (int)(2 * RUN_ARENA_MAX));
}

static void run_arenas_end(void)
{
	mallopt(M_TRIM_THRESHOLD, RUN_GLIBC_DEFAULT_THRESHOLD);
	mallopt(M_MMAP_THRESHOLD, RUN_GLIBC_DEFAULT_THRESHOLD);
}

/* Grow the calling thread's arena by the block caches of @s's images (4
 * bytes a byte) and 4 MiB for flow buffers, at most RUN_ARENA_MAX less a
 * page, with its whole 2 MiB pages advised for THP: allocated and freed
 * untouched, it stays in the arena as its top. */
static void run_arena_pregrow(const struct sptd_dec_session *s)
{
	const uintptr_t huge = 2u << 20;
	uint64_t want = 4u << 20;
	uintptr_t a, e;
	void *p;

	for (size_t i = 0; i < s->nimages && want < RUN_ARENA_MAX; i++)
		want += s->images[i].size < RUN_ARENA_MAX ? 4 * s->images[i].size : RUN_ARENA_MAX;
	if (want > RUN_ARENA_MAX - 4096)
		want = RUN_ARENA_MAX - 4096;
	p = malloc((size_t)want);
	if (!p)
		return;
	a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	e = ((uintptr_t)p + (size_t)want) & ~(huge - 1);
	/* refused where THP is off or unknown: small pages then */
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
	free(p);
}

static void *run_worker(void *arg)
{
	struct run_pool *pool = arg;
	struct sptd_dec_wcache wc, *wcp = &wc;

	run_arena_pregrow(pool->s);
	/* without a cache of its own (out of memory) the thread shares the
	 * session's */
	if (sptd_dec_wcache_init(&wc, pool->s) < 0)
		wcp = NULL;
	for (;;) {
		struct run_unit *u;

		pthread_mutex_lock(&pool->lock);
		u = pool->next < pool->nunits ? &pool->units[pool->next++] : NULL;
		pthread_mutex_unlock(&pool->lock);
		if (!u)
			break;
		if (u->power)
			u->power->err = sptd_dec_power_collect(pool->s, u->cpu, u->power);
		else
			u->res->err = sptd_dec_flow_cpu(pool->s, wcp, u->cpu, u->plan, u->next, u->res);
		unit_done(pool, u);
	}
	sptd_dec_wcache_fini(wcp);
	return NULL;
}

static int run_prepare(struct sptd_dec_session *s)
{
	int err;

	if (s->nswitches)
		qsort(s->switches, s->nswitches, sizeof(*s->switches), switch_cmp);
	sptd_dec_aspaces_free(s);
	s->resolve_as = NULL;
	err = sptd_dec_text_patches_build(s);
	return err < 0 ? err : sptd_dec_aspaces_build(s);
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
		{ "decode_segments", cs->segments },
		{ "cr3_mismatches", cs->cr3_mismatches },
	};
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]) && !err; i++)
		err = sink->stat ? sink->stat(sink->ctx, rows[i].name, cpu, rows[i].value) : 0;
	return err;
}

/* Gaps (then stats) of one CPU to @sink, from this thread only. */
static int emit_cpu(const struct sptd_dec_sink *sink, int cpu, size_t pt_bytes,
                    const struct sptd_dec_stitched *st)
{
	size_t k;
	int ret = 0;

	for (k = 0; k < st->ngaps && ret >= 0 && sink->gap; k++) {
		const struct sptd_dec_gaprec *g = &st->gaps[k];

		ret = sink->gap(sink->ctx, g->ts, sptd_dec_span(g->ts, g->end), cpu, g->reason);
	}
	if (ret >= 0)
		ret = emit_stats(sink, cpu, pt_bytes, &st->stats);
	return ret;
}

/* Segments per CPU at most, and the smallest automatic segment. */
#define RUN_MAX_SEGS 256
#define RUN_MIN_SEG_BYTES (64u << 10)

/* How big phase-1 segments are: cfg.segment_bytes, or with several
 * threads about a quarter of each thread's share (at least 64 KiB), so
 * one CPU's PT keeps every thread busy; 0: whole CPUs. */
static size_t run_seg_bytes(const struct sptd_dec_session *s, int jobs)
{
	size_t total = 0, b;
	int i;

	if (s->cfg.segment_bytes)
		return s->cfg.segment_bytes;
	if (jobs < 2)
		return 0;
	for (i = 0; i < s->ncpus; i++)
		total += s->cpus[i].len;
	b = total / ((size_t)jobs * 4);
	return b < RUN_MIN_SEG_BYTES ? RUN_MIN_SEG_BYTES : b;
}

/* Stitch CPU @c's @n segment results @res (plans @plans) into @st and
 * finish it.  Where a seam does not meet, the segment before it is
 * decoded again on through the one after it (serially, on this thread),
 * which then drops out.  0 or a negative error. */
static int run_stitch_cpu(struct sptd_dec_session *s, int c, const struct sptd_dec_segplan *plans,
                          struct sptd_dec_cpu_result *res, size_t n,
                          struct sptd_dec_stitched *st)
{
	const struct sptd_dec_segplan **ap;
	struct sptd_dec_cpu_result **ar;
	size_t na = n, i, bad = 0;
	int ret = 0, cyc = 0;

	ap = calloc(n, sizeof(*ap));
	ar = calloc(n, sizeof(*ar));
	if (!ap || !ar) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n && ret >= 0; i++) {
		ap[i] = n > 1 ? &plans[i] : NULL;
		ar[i] = &res[i];
		ret = res[i].err;
	}
	while (ret >= 0) {
		ret = sptd_dec_seg_stitch(s, ap, ar, na, st, &bad);
		if (ret != 1)
			break;
		/* segment bad - 1 decodes on over segment bad */
		sptd_dec_cpu_result_fini(ar[bad - 1]);
		sptd_dec_cpu_result_fini(ar[bad]);
		memset(ar[bad - 1], 0, sizeof(*ar[bad - 1]));
		memmove(&ap[bad], &ap[bad + 1], (na - bad - 1) * sizeof(*ap));
		memmove(&ar[bad], &ar[bad + 1], (na - bad - 1) * sizeof(*ar));
		na--;
		if (na == 1)
			ap[0] = NULL;
		ret = sptd_dec_flow_cpu(s, NULL, c, ap[bad - 1], bad < na ? ap[bad] : NULL, ar[bad - 1]);
	}
	st->stats.segments = (int64_t)na;
	for (i = 0; i < na; i++)
		cyc |= ar[i]->has_cyc;
	if (ret >= 0)
		ret = sptd_dec_seg_finish(s, c, st, cyc);
out:
	free(ap);
	free(ar);
	return ret;
}

/* Phase 1 over every CPU: units planned, decoded on @jobs threads,
 * stitched per CPU into @st (ncpus entries), finished.  The results stay
 * allocated in *@resp (*@nresp of them: @st points into their records),
 * the plans in *@plansp.  With @power (ncpus entries), each CPU's power
 * events are read into it by a unit of the same pool. */
static int run_phase1(struct sptd_dec_session *s, int jobs, struct sptd_dec_stitched *st,
                      struct sptd_dec_cpu_result **resp, size_t *nresp,
                      struct sptd_dec_segplan **plansp, struct sptd_dec_power_buf *power)
{
	struct sptd_dec_cpu_result *res = NULL;
	struct sptd_dec_segplan *plans = NULL;
	struct run_unit *units = NULL;
	struct run_pool pool;
	pthread_t *threads = NULL;
	size_t bytes = run_seg_bytes(s, jobs), nunits = 0, maxunits = 0, u;
	int *nseg, c, i, started = 0, ret = 0;

	*resp = NULL;
	*plansp = NULL;
	*nresp = 0;
	nseg = calloc((size_t)s->ncpus + 1, sizeof(*nseg));
	threads = calloc((size_t)jobs, sizeof(*threads));
	if (!nseg || !threads) {
		ret = -ENOMEM;
		goto out;
	}
	/* room for the most segments each CPU can be cut into */
	for (c = 0; c < s->ncpus; c++) {
		size_t most = bytes ? s->cpus[c].len / bytes + 1 : 1;

		if (s->cpus[c].len)
			maxunits += most < RUN_MAX_SEGS ? most : RUN_MAX_SEGS;
	}
	plans = calloc(maxunits + 1, sizeof(*plans));
	units = calloc(maxunits + (size_t)s->ncpus + 1, sizeof(*units));
	res = calloc(maxunits + 1, sizeof(*res));
	*resp = res;
	*plansp = plans;
	if (!plans || !units || !res) {
		ret = -ENOMEM;
		goto out;
	}
	for (c = 0; c < s->ncpus && ret >= 0; c++) {
		struct sptd_dec_segplan *p = plans + nunits;
		size_t most = bytes ? s->cpus[c].len / bytes + 1 : 1;

		if (!s->cpus[c].len)
			continue;
		ret = nseg[c] = sptd_dec_seg_plan(s, c, s->cpus[c].data, s->cpus[c].len, bytes,
		                                  most < RUN_MAX_SEGS ? (int)most : RUN_MAX_SEGS, p);
		for (i = 0; i < nseg[c] && ret >= 0; i++) {
			units[nunits].cpu = c;
			units[nunits].plan = nseg[c] > 1 ? &p[i] : NULL;
			units[nunits].next = i + 1 < nseg[c] ? &p[i + 1] : NULL;
			units[nunits].res = &res[nunits];
			nunits++;
		}
	}
	*nresp = nunits;
	if (ret < 0)
		goto out;
	/* the power walks go last: the longest units (segments) first keep
	 * the threads evenly busy */
	u = nunits;
	for (c = 0; power && c < s->ncpus; c++) {
		if (!s->cpus[c].len)
			continue;
		units[u].cpu = c;
		units[u].power = &power[c];
		u++;
	}
	pool.s = s;
	pool.units = units;
	pool.nunits = u;
	pool.next = 0;
	pool.done = pool.total = 0;
	for (i = 0; (size_t)i < pool.nunits; i++)
		pool.total += unit_bytes(s, &units[i]);
	if (s->cfg.progress)
		s->cfg.progress(s->cfg.progress_ctx, "decoding PT", 0, pool.total);
	pthread_mutex_init(&pool.lock, NULL);
	if ((size_t)jobs > pool.nunits)
		jobs = pool.nunits ? (int)pool.nunits : 1;
	run_arenas_begin();
	for (i = 1; i < jobs; i++) {
		if (pthread_create(&threads[i], NULL, run_worker, &pool) != 0)
			break;
		started++;
	}
	run_worker(&pool);
	for (i = 1; i <= started; i++)
		pthread_join(threads[i], NULL);
	run_arenas_end();
	pthread_mutex_destroy(&pool.lock);

	/* stitch each CPU; two segments whose seam did not meet are decoded
	 * again as one */
	for (c = 0, u = 0; c < s->ncpus && ret >= 0; c++) {
		if (!s->cpus[c].len)
			continue;
		ret = run_stitch_cpu(s, c, plans + u, &res[u], (size_t)nseg[c], &st[c]);
		u += (size_t)nseg[c];
	}
out:
	free(nseg);
	free(threads);
	free(units);
	return ret;
}

int64_t sptd_dec_session_run(struct sptd_dec_session *s, const struct sptd_dec_sink *sink)
{
	struct sptd_dec_stitched *st = NULL;
	struct sptd_dec_cpu_flows *flows = NULL;
	struct sptd_dec_segplan *plans = NULL;
	struct sptd_dec_stacks *stacks = NULL;
	struct sptd_dec_cpu_result *res = NULL;
	struct sptd_dec_power_buf *power = NULL;
	size_t nres = 0, k, j, u;
	int64_t ret = 0, start = INT64_MAX, end = INT64_MIN;
	int jobs, i, no_time = 0;

	if (!s || !sink)
		return -EINVAL;
	ret = run_prepare(s);
	if (ret < 0)
		goto out;
	s->sink = sink;
	st = calloc((size_t)s->ncpus + 1, sizeof(*st));
	flows = calloc((size_t)s->ncpus + 1, sizeof(*flows));
	if (!st || !flows) {
		ret = -ENOMEM;
		goto out;
	}
	jobs = s->cfg.jobs ? s->cfg.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	if (sink->power && !s->cfg.no_timing) {
		power = calloc((size_t)s->ncpus + 1, sizeof(*power));
		if (!power) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (s->text_unpatched && sink->gap) {
		char why[160];

		snprintf(why, sizeof(why), "pt: %zu rewritten range(s) of kernel code decode as "
		         "copied, not as they ran (too many TEXT_POKE records)", s->text_unpatched);
		ret = sink->gap(sink->ctx, 0, 0, -1, why);
		if (ret < 0)
			goto out;
	}
	ret = run_phase1(s, jobs, st, &res, &nres, &plans, power);
	/* gaps and stats go out from this thread only */
	for (i = 0; i < s->ncpus && ret >= 0; i++) {
		if (!s->cpus[i].len)
			continue;
		ret = emit_cpu(sink, i, s->cpus[i].len, &st[i]);
		if (!st[i].stats.saw_time && st[i].flows.n)
			no_time = 1;
	}
	/* what the PT said about the CPUs themselves (power.c) */
	if (ret >= 0 && power)
		ret = sptd_dec_power_emit(s, power, s->ncpus);
	if (ret < 0)
		goto out;
	s->no_time = no_time || s->cfg.no_timing;

	/* phase 2, over the records where phase 1 left them */
	ret = sptd_dec_stacks_create(sptd_dec_func_resolve, s, sink, &stacks);
	if (ret < 0)
		goto out;
	sptd_dec_stacks_set_progress(stacks, s->cfg.progress, s->cfg.progress_ctx);
	for (k = 0; k < s->nexits && ret >= 0; k++)
		ret = sptd_dec_stacks_add_exit(stacks, s->exits[k].prev_tid, s->exits[k].ts);
	if (ret < 0)
		goto out;
	s->next_symbol_id = SPTD_DEC_SYM_IRQ;
	for (i = 0; i < s->ncpus; i++) {
		flows[i] = st[i].flows;
		for (k = 0; k < flows[i].nspans; k++) {
			for (j = 0; j < flows[i].spans[k].n; j++) {
				struct sptd_dec_flow *ev = &flows[i].spans[k].rec[j].ev;

				if (s->no_time)
					ev->flags |= SPTD_DEC_F_NO_TIME;
				if (ev->ts < start)
					start = ev->ts;
				if (ev->ts > end)
					end = ev->ts;
			}
		}
	}
	/* frames open at the end close where the data end: the last timing
	 * packet or context switch, which may be after the last branch (a
	 * task ending in exit_group) */
	if (!s->no_time && end >= start) {
		for (i = 0; i < s->ncpus; i++)
			if (s->cpus[i].len && st[i].last_ts > end)
				end = st[i].last_ts;
		for (k = 0; k < s->nswitches; k++)
			if (s->switches[k].ts > end)
				end = s->switches[k].ts;
	}
	ret = sptd_dec_stacks_run_cpus(stacks, flows, s->ncpus, start, end);
out:
	if (st)
		for (i = 0; i < s->ncpus; i++)
			sptd_dec_stitched_fini(&st[i]);
	for (u = 0; u < nres; u++)
		sptd_dec_cpu_result_fini(&res[u]);
	free(res);
	free(plans);
	free(st);
	free(flows);
	if (power) {
		for (i = 0; i < s->ncpus; i++)
			free(power[i].ev);
		free(power);
	}
	sptd_dec_stacks_destroy(stacks);
	s->sink = NULL;
	return ret;
}

int64_t sptd_dec_session_run_cpu(struct sptd_dec_session *s, int cpu,
                                 const struct sptd_dec_sink *sink,
                                 sptd_dec_flow_fn fn, void *ctx)
{
	struct sptd_dec_cpu_result res;
	struct sptd_dec_stitched st;
	int64_t ret;
	size_t k, j;

	if (!s || cpu < 0 || cpu >= s->ncpus)
		return -EINVAL;
	ret = run_prepare(s);
	if (ret < 0)
		return ret;
	memset(&res, 0, sizeof(res));
	memset(&st, 0, sizeof(st));
	ret = sptd_dec_flow_cpu(s, NULL, cpu, NULL, NULL, &res);
	if (ret >= 0) {
		const struct sptd_dec_segplan *none = NULL;
		struct sptd_dec_cpu_result *one = &res;
		size_t bad;

		ret = sptd_dec_seg_stitch(s, &none, &one, 1, &st, &bad);
	}
	if (ret >= 0)
		ret = sptd_dec_seg_finish(s, cpu, &st, res.has_cyc);
	st.stats.segments = 1;
	if (ret >= 0 && sink)
		ret = emit_cpu(sink, cpu, s->cpus[cpu].len, &st);
	for (k = 0; k < st.flows.nspans && ret >= 0 && fn; k++)
		for (j = 0; j < st.flows.spans[k].n && ret >= 0; j++)
			ret = fn(ctx, &st.flows.spans[k].rec[j].ev);
	if (ret >= 0)
		ret = (int64_t)st.flows.n;
	sptd_dec_stitched_fini(&st);
	sptd_dec_cpu_result_fini(&res);
	return ret;
}
