/* flowsort.c — phase 2's event order: per task (tid, or CPU when the task
 * is unknown), then time, CPU and stream position, then input order.
 *
 * Phase 1 hands over each CPU's records in stream order, so a task's
 * events are a few runs already in time order: bucket by task, then merge
 * the runs.  What is sorted is an array of pointers to the records, which
 * stay where phase 1 put them (records are 64 bytes, pointers 8: the sort
 * touches an eighth of the memory a sort of copies would, and nothing is
 * allocated per record but the pointers). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dec-local.h"

/* A task's identity while sorting. */
struct sort_key {
	int tid, cpu_key;          /* tid, and the CPU for tid < 0 (else -1) */
	size_t index;              /* order of first appearance */
	size_t count;              /* its events */
};

/* Time, then CPU and stream position: the order within one task. */
static inline int flow_cmp_time(const struct sptd_dec_flow *x, const struct sptd_dec_flow *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/* Task order: by tid, and for unknown tasks (tid < 0) by CPU. */
static int task_key_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->cpu_key != y->cpu_key)
		return x->cpu_key < y->cpu_key ? -1 : 1;
	return 0;
}

/* Stable merge sort of @ev[0..n) by time, using @tmp (n entries): find the
 * sorted runs and merge neighbours until one is left (n log runs
 * comparisons, n when sorted). */
static int sort_by_time(struct sptd_dec_flow **ev, size_t n, struct sptd_dec_flow **tmp)
{
	size_t *runs, nruns = 0, i;

	for (i = 1; i < n && flow_cmp_time(ev[i - 1], ev[i]) <= 0; i++)
		;
	if (i >= n)
		return 0;
	runs = malloc((n + 1) * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	runs[nruns++] = 0;
	for (i = 1; i < n; i++)
		if (flow_cmp_time(ev[i - 1], ev[i]) > 0)
			runs[nruns++] = i;
	runs[nruns] = n;
	while (nruns > 1) {
		size_t r, out = 0;

		for (r = 0; r + 1 < nruns; r += 2) {
			size_t a = runs[r], am = runs[r + 1], b = am, bm = runs[r + 2], k = a;

			while (a < am && b < bm)
				tmp[k++] = flow_cmp_time(ev[b], ev[a]) < 0 ? ev[b++] : ev[a++];
			memcpy(&tmp[k], &ev[a], (am - a) * sizeof(*ev));
			k += am - a;
			memcpy(&tmp[k], &ev[b], (bm - b) * sizeof(*ev));
			memcpy(&ev[runs[r]], &tmp[runs[r]], (bm - runs[r]) * sizeof(*ev));
			runs[out++] = runs[r];
		}
		if (r < nruns)
			runs[out++] = runs[r];
		runs[out] = n;
		nruns = out;
	}
	free(runs);
	return 0;
}

/* The events @in[0..@nev) (pointers, in input order) into phase 2's order
 * in @out: a stable bucket pass by task, then a run-merging sort inside
 * each task, the order a stable comparison sort on (task, ts, cpu, seq)
 * gives.  0 or -ENOMEM. */
static int order_ptrs(struct sptd_dec_flow **in, size_t nev, struct sptd_dec_flow **out)
{
	struct sort_key *keys = NULL;
	uint32_t *slot = NULL, *rank = NULL;
	size_t *start = NULL, nkeys = 0, cap = 16, i, h;
	int err = -ENOMEM;

	if (nev == 0)
		return 0;        /* nothing to sort: *evp stays as it is */
	if (nev > UINT32_MAX / 2)
		return -ENOMEM;  /* beyond the 32-bit indexes below (200+ GB of events) */
	/* one task only (a single-threaded program, a CPU without sched
	 * info): no buckets, only the time order */
	for (i = 1; i < nev; i++) {
		const struct sptd_dec_flow *a = in[0], *b = in[i];

		if (a->tid != b->tid || (a->tid < 0 && a->cpu != b->cpu))
			break;
	}
	if (i >= nev) {
		memcpy(out, in, nev * sizeof(*in));
		return sort_by_time(out, nev, in);
	}
	while (cap < 2 * nev)
		cap *= 2;
	slot = calloc(cap, sizeof(*slot));   /* hash: key index + 1, 0 empty */
	rank = malloc((nev ? nev : 1) * sizeof(*rank)); /* per event: its key index */
	keys = malloc((nev ? nev : 1) * sizeof(*keys));
	if (!slot || !rank || !keys)
		goto out;
	for (i = 0; i < nev; i++) {
		const struct sptd_dec_flow *e = in[i];
		int key = e->tid < 0 ? e->cpu : -1;
		uint64_t hv = ((uint64_t)(uint32_t)e->tid << 32 | (uint32_t)key) * 0x9e3779b97f4a7c15ull;

		for (h = (size_t)(hv >> 32) & (cap - 1); slot[h]; h = (h + 1) & (cap - 1)) {
			const struct sort_key *k = &keys[slot[h] - 1];

			if (k->tid == e->tid && k->cpu_key == key)
				break;
		}
		if (!slot[h]) {
			keys[nkeys] = (struct sort_key){ .tid = e->tid, .cpu_key = key,
			                                 .index = nkeys, .count = 0 };
			slot[h] = (uint32_t)++nkeys;
		}
		rank[i] = slot[h] - 1;
		keys[rank[i]].count++;
	}
	/* tasks in order; slot[] now maps key index -> position in that order */
	qsort(keys, nkeys, sizeof(*keys), task_key_cmp);
	start = malloc((nkeys + 1) * sizeof(*start));
	if (!start)
		goto out;
	start[0] = 0;
	for (i = 0; i < nkeys; i++) {
		slot[keys[i].index] = (uint32_t)i;
		start[i + 1] = start[i] + keys[i].count;
	}
	for (i = 0; i < nev; i++)
		out[start[slot[rank[i]]]++] = in[i];
	/* start[k] is now the end of task k; @in is free for scratch */
	for (i = 0, err = 0; i < nkeys && !err; i++) {
		size_t b = i ? start[i - 1] : 0;

		err = sort_by_time(out + b, start[i] - b, in + b);
	}
out:
	free(slot);
	free(rank);
	free(keys);
	free(start);
	return err;
}

int sptd_dec_flows_order(const struct sptd_dec_cpu_flows *cpus, int ncpus,
                         struct sptd_dec_flow ***out, size_t *nout)
{
	struct sptd_dec_flow **in, **ord;
	size_t n = 0, k = 0, i, j;
	int c, err;

	*out = NULL;
	*nout = 0;
	for (c = 0; c < ncpus; c++)
		n += cpus[c].n;
	in = malloc((n ? n : 1) * sizeof(*in));
	ord = malloc((n ? n : 1) * sizeof(*ord));
	if (!in || !ord) {
		free(in);
		free(ord);
		return -ENOMEM;
	}
	for (c = 0; c < ncpus; c++)
		for (i = 0; i < cpus[c].nspans; i++)
			for (j = 0; j < cpus[c].spans[i].n; j++)
				in[k++] = &cpus[c].spans[i].rec[j].ev;
	err = order_ptrs(in, n, ord);
	free(in);
	if (err < 0) {
		free(ord);
		return err;
	}
	*out = ord;
	*nout = n;
	return 0;
}

int sptd_dec_flows_sort(struct sptd_dec_flow **evp, size_t nev)
{
	struct sptd_dec_flow *ev = *evp, *sorted, **in, **ord;
	size_t i;
	int err = -ENOMEM;

	in = malloc((nev ? nev : 1) * sizeof(*in));
	ord = malloc((nev ? nev : 1) * sizeof(*ord));
	sorted = malloc((nev ? nev : 1) * sizeof(*sorted));
	if (!in || !ord || !sorted)
		goto out;
	for (i = 0; i < nev; i++)
		in[i] = &ev[i];
	err = order_ptrs(in, nev, ord);
	if (err < 0)
		goto out;
	for (i = 0; i < nev; i++)
		sorted[i] = *ord[i];
	free(ev);
	*evp = sorted;
	sorted = NULL;
out:
	free(in);
	free(ord);
	free(sorted);
	return err;
}
