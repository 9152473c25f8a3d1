/* pftrace_check.c — pft_check_incident(): the decoded trace against
 * the incident's own rows (see pftrace_reader.h).  Shared by the perfetto
 * tests; not a test binary itself. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace_reader.h"
#include "sptd_store.h"

#define FAIL(...) do { fprintf(stderr, "pft_check: " __VA_ARGS__); fputc('\n', stderr); fails++; } while (0)

#define UUID(kind, id) (((uint64_t)(kind) << 56) | ((uint64_t)(id) & 0xffffffffffffffULL))

int64_t pft_state_bits(const char *state)
{
	static const char letters[] = "SDTtXZPI+";
	static const int64_t bits[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
	int64_t v = 0;
	const char *p, *q;

	for (p = state ? state : ""; *p; p++)
		if ((q = strchr(letters, *p)))
			v |= bits[q - letters];
	return v;
}

/* A slice-like record: (key, ts, end or dur, depth, num, name). */
struct rec { uint64_t key; int64_t ts, dur; int64_t depth, num; const char *name; int used; };

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key) return x->key < y->key ? -1 : 1;
	if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
	if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
	if (x->dur != y->dur) return x->dur < y->dur ? -1 : 1;
	if (x->num != y->num) return x->num < y->num ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

struct recs { struct rec *r; size_t n, cap; };

static void add(struct recs *v, struct rec r)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 1024;
		v->r = realloc(v->r, v->cap * sizeof(*v->r));
		if (!v->r)
			abort();
	}
	v->r[v->n++] = r;
}

/* Two record lists equal as multisets; prints the first differences. */
static int same(const char *what, struct recs *want, struct recs *got)
{
	size_t i, shown = 0;
	int fails = 0;

	if (want->n)   /* an empty list may be NULL */
		qsort(want->r, want->n, sizeof(struct rec), rec_cmp);
	if (got->n)
		qsort(got->r, got->n, sizeof(struct rec), rec_cmp);
	if (want->n != got->n)
		FAIL("%s: %zu in the incident, %zu in the trace", what, want->n, got->n);
	for (i = 0; i < want->n && i < got->n; i++) {
		if (rec_cmp(&want->r[i], &got->r[i]) == 0)
			continue;
		if (shown++ < 5)
			FAIL("%s #%zu: want key %" PRIx64 " ts %" PRId64 " dur %" PRId64
			     " depth %" PRId64 " num %" PRId64 " '%s', got key %" PRIx64
			     " ts %" PRId64 " dur %" PRId64 " depth %" PRId64 " num %" PRId64 " '%s'",
			     what, i, want->r[i].key, want->r[i].ts, want->r[i].dur,
			     want->r[i].depth, want->r[i].num, want->r[i].name ? want->r[i].name : "",
			     got->r[i].key, got->r[i].ts, got->r[i].dur, got->r[i].depth,
			     got->r[i].num, got->r[i].name ? got->r[i].name : "");
		else
			fails++;
	}
	return fails;
}

static char *dupstr(const char *s)
{
	return strdup(s ? s : "");
}

static void free_names(struct recs *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		free((char *)v->r[i].name);
	free(v->r);
}

static int sw_cmp(const void *a, const void *b)
{
	const struct pft_switch *x = a, *y = b;

	if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* sched_slice rows vs slices rebuilt from the switches. */
static int check_sched(struct sptd_store *st, const struct pftrace *t)
{
	struct sptd_store_stmt *q = NULL;
	struct recs want = { 0 }, got = { 0 };
	struct pft_switch *sw = malloc((t->nsw + 1) * sizeof(*sw));
	size_t i;
	int fails = 0;

	if (t->nsw) {   /* t->sw is NULL when the trace has no switch */
		memcpy(sw, t->sw, t->nsw * sizeof(*sw));
		qsort(sw, t->nsw, sizeof(*sw), sw_cmp); /* stable enough: ts unique per cpu */
	}
	for (i = 0; i < t->nsw; i++) {
		int last = i + 1 == t->nsw || sw[i + 1].cpu != sw[i].cpu;
		struct rec r = { .key = (uint64_t)sw[i].cpu, .ts = sw[i].ts,
		                 .num = sw[i].next_pid };
		char state[32];

		r.dur = last ? -1 : sw[i + 1].ts - sw[i].ts;
		snprintf(state, sizeof(state), "%" PRId64, last ? -1 : sw[i + 1].prev_state);
		r.name = dupstr(state);
		if (sw[i].next_pid == 0) {
			free((char *)r.name);
			continue; /* idle: written where the CPU had no task */
		}
		add(&got, r);
	}
	if (sptd_store_prepare(st, "SELECT ss.cpu, ss.ts, ss.dur, t.tid, ss.end_state, "
	                       "ss.ts + ss.dur = m.last FROM sched_slice ss JOIN thread t "
	                       "ON t.utid = ss.utid JOIN (SELECT cpu, max(ts + dur) AS last "
	                       "FROM sched_slice GROUP BY cpu) m ON m.cpu = ss.cpu "
	                       "WHERE t.tid != 0", &q) < 0) {
		FAIL("sched_slice query: %s", sptd_store_errmsg(st));
		goto out;
	}
	while (sptd_store_step(q) == 1) {
		struct rec r = { .key = (uint64_t)sptd_store_column_int(q, 0),
		                 .ts = sptd_store_column_int(q, 1),
		                 .dur = sptd_store_column_int(q, 2),
		                 .num = sptd_store_column_int(q, 3) };
		const char *es = sptd_store_column_text(q, 4);
		char state[32];

		if (!es && sptd_store_column_int(q, 5)) {
			/* running at the end: the trace leaves it open */
			r.dur = -1;
			snprintf(state, sizeof(state), "-1");
		} else {
			snprintf(state, sizeof(state), "%" PRId64, pft_state_bits(es));
		}
		r.name = dupstr(state);
		add(&want, r);
	}
	fails += same("sched_slice", &want, &got);
out:
	sptd_store_finalize(q);
	free_names(&want);
	free_names(&got);
	free(sw);
	return fails;
}

static int check_irqs(struct sptd_store *st, const struct pftrace *t)
{
	struct sptd_store_stmt *q = NULL;
	struct recs want = { 0 }, got = { 0 };
	size_t *stack = malloc((t->nirq + 1) * sizeof(*stack)), depth = 0, i;
	int fails = 0, cpu = -1;

	for (i = 0; i < t->nirq; i++) {
		const struct pft_irq *e = &t->irq[i];
		int entry = e->kind == PFT_IRQ_ENTRY || e->kind == PFT_SOFT_ENTRY;

		if (e->cpu != cpu) {
			if (depth)
				FAIL("irq: %zu entries without exit on cpu %d", depth, cpu);
			depth = 0;
			cpu = e->cpu;
		}
		if (i && t->irq[i - 1].cpu == e->cpu && t->irq[i - 1].ts > e->ts)
			FAIL("irq: time goes back on cpu %d at %" PRId64, cpu, e->ts);
		if (entry) {
			stack[depth++] = i;
			continue;
		}
		if (!depth) {
			FAIL("irq: exit without entry on cpu %d at %" PRId64, cpu, e->ts);
			continue;
		}
		{
			const struct pft_irq *b = &t->irq[stack[--depth]];
			int soft = b->kind == PFT_SOFT_ENTRY;
			struct rec r = { .key = (uint64_t)b->cpu * 2 + (uint64_t)soft, .ts = b->ts,
			                 .dur = e->ts - b->ts, .num = b->num,
			                 .name = dupstr(soft ? "" : b->name) };

			if ((e->kind == PFT_SOFT_EXIT) != soft || e->num != b->num)
				FAIL("irq: exit %d/%d does not match entry %d/%d at %" PRId64,
				     e->kind, e->num, b->kind, b->num, e->ts);
			r.depth = soft ? 0 : e->ret;
			add(&got, r);
		}
	}
	if (depth)
		FAIL("irq: %zu entries without exit on cpu %d", depth, cpu);
	if (sptd_store_prepare(st, "SELECT cpu * 2, ts, dur, irq, name, ret FROM irq_slice "
	                       "UNION ALL SELECT cpu * 2 + 1, ts, dur, vec, '', 0 "
	                       "FROM softirq_slice", &q) < 0) {
		FAIL("irq query: %s", sptd_store_errmsg(st));
		goto out;
	}
	while (sptd_store_step(q) == 1) {
		struct rec r = { .key = (uint64_t)sptd_store_column_int(q, 0),
		                 .ts = sptd_store_column_int(q, 1),
		                 .dur = sptd_store_column_int(q, 2),
		                 .num = sptd_store_column_int(q, 3),
		                 .depth = sptd_store_column_int(q, 5),
		                 .name = dupstr(sptd_store_column_text(q, 4)) };
		add(&want, r);
	}
	fails += same("irq_slice+softirq_slice", &want, &got);
out:
	sptd_store_finalize(q);
	free_names(&want);
	free_names(&got);
	free(stack);
	return fails;
}

/* Per-track begin/end stacks for slices (thread tracks) and gaps. */
struct tstack { uint64_t track; size_t *idx; size_t depth, cap; int64_t last_ts; };

static int check_track_events(struct sptd_store *st, const struct pftrace *t)
{
	struct tstack *ts = NULL;
	size_t nts = 0, i, k, cur = 0, samples = 0, gaps = 0, triggers = 0;
	struct recs want = { 0 }, got = { 0 };
	struct sptd_store_stmt *q = NULL;
	int64_t n;
	int fails = 0;

	if (t->unresolved)
		FAIL("%zu interned ids did not resolve", t->unresolved);
	if (t->bad_flags)
		FAIL("%zu packets break the sequence_flags rules", t->bad_flags);
	if (t->negative_deltas)
		FAIL("%zu compact_sched deltas go backwards", t->negative_deltas);
	for (i = 0; i < t->nev; i++) {
		const struct pft_event *e = &t->ev[i];
		struct tstack *s = NULL;

		if (!pft_track(t, e->track))
			FAIL("event at %" PRId64 " on undeclared track %" PRIx64, e->ts, e->track);
		if (e->type == 3) {
			uint64_t kind = e->track >> 56;

			samples += kind == 1 || kind == 5;
			triggers += e->track == UUID(4, 0);
			continue;
		}
		if (cur < nts && ts[cur].track == e->track)
			s = &ts[cur];
		for (k = 0; !s && k < nts; k++)
			if (ts[k].track == e->track)
				s = &ts[cur = k];
		if (!s) {
			ts = realloc(ts, (nts + 1) * sizeof(*ts));
			memset(&ts[nts], 0, sizeof(*ts));
			ts[nts].track = e->track;
			ts[nts].last_ts = INT64_MIN;
			s = &ts[cur = nts++];
		}
		if (e->ts < s->last_ts)
			FAIL("track %" PRIx64 ": time goes back at %" PRId64, e->track, e->ts);
		s->last_ts = e->ts;
		if (e->type == 1) {
			if (s->depth == s->cap) {
				s->cap = s->cap ? s->cap * 2 : 16;
				s->idx = realloc(s->idx, s->cap * sizeof(*s->idx));
			}
			s->idx[s->depth++] = i;
			continue;
		}
		if (!s->depth) {
			FAIL("track %" PRIx64 ": SLICE_END without begin at %" PRId64, e->track, e->ts);
			continue;
		}
		{
			const struct pft_event *b = &t->ev[s->idx[--s->depth]];
			uint64_t kind = b->track >> 56;

			if (kind == 3) {
				gaps++;
				continue;
			}
			add(&got, (struct rec){ .key = b->track, .ts = b->ts, .dur = e->ts - b->ts,
			                        .depth = (int64_t)s->depth, .num = b->flags,
			                        .name = dupstr(b->name) });
		}
	}
	for (k = 0; k < nts; k++) {
		if (ts[k].depth)
			FAIL("track %" PRIx64 ": %zu slices never end", ts[k].track, ts[k].depth);
		free(ts[k].idx);
	}
	free(ts);
	if (sptd_store_prepare(st, "SELECT s.utid, s.ts, s.dur, s.depth, s.flags, "
	                       "coalesce(sym.name, '[unknown]') FROM slice s "
	                       "LEFT JOIN symbol sym ON sym.id = s.symbol_id", &q) < 0) {
		FAIL("slice query: %s", sptd_store_errmsg(st));
		goto out;
	}
	while (sptd_store_step(q) == 1) {
		int null_utid = sptd_store_column_type(q, 0) == SPTD_STORE_NULL;

		add(&want, (struct rec){
			.key = null_utid ? UUID(5, 0) : UUID(1, sptd_store_column_int(q, 0)),
			.ts = sptd_store_column_int(q, 1), .dur = sptd_store_column_int(q, 2),
			.depth = sptd_store_column_int(q, 3), .num = sptd_store_column_int(q, 4),
			.name = dupstr(sptd_store_column_text(q, 5)) });
	}
	fails += same("slice (track, ts, dur, depth, flags, name)", &want, &got);
	if (sptd_store_query_int(st, "SELECT count(*) FROM sample", &n) == 0 &&
	    (size_t)n != samples)
		FAIL("sample: %" PRId64 " rows, %zu instants on thread tracks", n, samples);
	if (sptd_store_query_int(st, "SELECT count(*) FROM gap", &n) == 0 && (size_t)n != gaps)
		FAIL("gap: %" PRId64 " rows, %zu slices on gap tracks", n, gaps);
	if (sptd_store_query_int(st, "SELECT count(*) FROM trigger", &n) == 0 &&
	    (size_t)n != triggers)
		FAIL("trigger: %" PRId64 " rows, %zu instants on the trigger track", n, triggers);
out:
	sptd_store_finalize(q);
	free_names(&want);
	free_names(&got);
	return fails;
}

int pft_check_incident(struct sptd_store *st, const struct pftrace *t)
{
	return check_sched(st, t) + check_irqs(st, t) + check_track_events(st, t);
}
