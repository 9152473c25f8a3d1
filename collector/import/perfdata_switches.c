/* perfdata_switches.c — a perf.data's context switches and task names into
 * the raw tables.
 *
 * A perf.data holds each CPU's records in chunks as its ring was drained,
 * so neither the switches nor the names are in time order in the file.
 * Switches are sorted per CPU and stored from one source only (the best the
 * file has: perfdata_import.c collects them all).  Names are kept with
 * their time; each task's latest goes out last, so that a task that exec'd
 * is named by what it became ("sleep", not "perf-exec"), whichever CPU's
 * chunk came last. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

#include "perfdata-local.h"
#include "sptd_store.h"

/* A task's name at a time. */
struct sptd_col_pd_name {
	int64_t ts;          /* perf clock ns, 0 unknown */
	int tid;
	size_t seq;          /* order in the file: ties keep it */
	char comm[16];
};

static int sw_cmp(const void *a, const void *b)
{
	const struct sptd_col_pd_switch *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int sptd_col_pd_switches_store(struct sptd_store *st, struct sptd_col_pd_switch *sw, size_t n,
                               const int *cpu_tid, int ncpu, int64_t t_min, int64_t *count)
{
	int best = 0, cur = -1, cur_cpu = -1, ret = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (sw[i].source > best)
			best = sw[i].source;
	if (n)   /* sw is NULL when the file had no switch */
		qsort(sw, n, sizeof(*sw), sw_cmp);
	for (i = 0; i < n && ret >= 0; i++) {
		const struct sptd_col_pd_switch *s = &sw[i];

		if (s->source != best)
			continue;
		if (s->cpu != cur_cpu) {
			cur_cpu = s->cpu;
			cur = -1;
		}
		/* an IN record whose task the OUT half of the pair already
		 * started adds nothing (file order breaks timestamp ties) */
		if (s->prev < 0 && s->next == cur)
			continue;
		ret = SPTD_STORE_ADD(st, raw_switch, s->ts, s->cpu, s->prev >= 0 ? s->prev :
		                     cur >= 0 ? cur : s->other >= 0 ? s->other : 0,
		                     s->next, s->comm,
		                     s->prev_state[0] ? s->prev_state : NULL);
		cur = s->next;
		(*count)++;
	}
	/* per-thread PT buffers: their pseudo CPU runs that thread throughout */
	for (i = 0; i < (size_t)ncpu && ret >= 0; i++)
		if (cpu_tid[i] > 0)
			ret = SPTD_STORE_ADD(st, raw_switch, t_min, (int)i, 0, cpu_tid[i], NULL, NULL);
	return ret < 0 ? ret : 0;
}

static int exit_cmp(const void *a, const void *b)
{
	const struct sptd_col_pd_exit *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

void sptd_col_pd_switches_exits(struct sptd_col_pd_switch *sw, size_t n,
                                struct sptd_col_pd_exit *exits, size_t nexits)
{
	size_t i;

	if (!nexits)
		return;
	qsort(exits, nexits, sizeof(*exits), exit_cmp);
	for (i = 0; i < nexits; i++)
		exits[i].best = SIZE_MAX;
	for (i = 0; i < n; i++) {
		size_t lo = 0, hi = nexits;
		struct sptd_col_pd_exit *e;

		if (sw[i].prev <= 0)
			continue;
		/* the latest exit of that tid at or before this switch */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (exits[mid].tid < sw[i].prev ||
			    (exits[mid].tid == sw[i].prev && exits[mid].ts <= sw[i].ts))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || exits[lo - 1].tid != sw[i].prev)
			continue;
		e = &exits[lo - 1];
		if (e->best == SIZE_MAX || sw[i].ts < sw[e->best].ts)
			e->best = i;
	}
	for (i = 0; i < nexits; i++) {
		struct sptd_col_pd_switch *s;

		if (exits[i].best == SIZE_MAX)
			continue;
		s = &sw[exits[i].best];
		if (!s->prev_state[0])
			snprintf(s->prev_state, sizeof(s->prev_state), "%s",
			         exits[i].pid == exits[i].tid ? "Z" : "X");
	}
}

int sptd_col_pd_names_add(struct sptd_col_pd_names *names, int64_t ts, int tid,
                          const char *comm)
{
	struct sptd_col_pd_name *n;

	if (tid <= 0 || !comm || !comm[0])
		return 0;
	if (names->n == names->cap) {
		size_t cap = names->cap ? names->cap * 2 : 256;
		struct sptd_col_pd_name *v = realloc(names->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		names->v = v;
		names->cap = cap;
	}
	n = &names->v[names->n];
	n->seq = names->n++;
	n->ts = ts;
	n->tid = tid;
	snprintf(n->comm, sizeof(n->comm), "%s", comm);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	const struct sptd_col_pd_name *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int sptd_col_pd_names_store(struct sptd_col_pd_names *names, struct sptd_store *st)
{
	int ret = 0;
	size_t i;

	if (names->n)
		qsort(names->v, names->n, sizeof(*names->v), name_cmp);
	for (i = 0; i < names->n && ret >= 0; i++)
		if (i + 1 == names->n || names->v[i + 1].tid != names->v[i].tid)
			ret = SPTD_STORE_ADD(st, raw_task, -1, names->v[i].tid, names->v[i].comm, NULL);
	return ret < 0 ? ret : 0;
}

void sptd_col_pd_names_free(struct sptd_col_pd_names *names)
{
	free(names->v);
	names->v = NULL;
	names->n = names->cap = 0;
}
