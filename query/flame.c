/* flame.c — `sysptd flamegraph`: the stacks of one or more incidents merged
 * into a tree (flame_tree.c) and written as folded stacks or an SVG
 * (flame_svg.c).
 *
 * Divisions: filters and names; samples; off-CPU waits; PT call time;
 * folded output; the entry point.
 *
 * Every stack starts with its thread's name (as perf's stackcollapse does
 * with comm), then its frames outermost first.  A sample without a stack
 * (or whose leaf is no callsite) is "[no stack]" under its thread, so the
 * counts add up to the incident's samples; a stack whose walk stopped
 * short of its root (1,024 frames, a forged loop) has "[stack cut]" above
 * the frames it has. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame-local.h"
#include "sptd_store_flame.h"

/* What building one side from one incident carries. */
struct build {
	struct sptd_query_ftree *t;
	int side;
	const struct sptd_query_flame_opts *o;
	struct sptd_query_stacks *cs;   /* the incident's callsites (samples, offcpu) */
	uint32_t *memo_root;            /* per callsite: the thread name of memo_node */
	uint32_t *memo_node;            /* per callsite: its tree node under that name */
	uint32_t *fname;                /* per callsite: its frame's name, NONE unknown yet */
	int64_t frames_left;            /* frames walks may still take (FRAME_BUDGET) */
	struct thread *threads;         /* by utid */
	size_t nthreads, threads_cap;
	uint64_t *total, *cut;          /* the caller's counts */
	uint32_t path[SPTD_QUERY_STACK_MAX + 2];
	struct sptd_query_frame frames[SPTD_QUERY_STACK_MAX];
};

/* Frames the walks of one incident may take: as the Perfetto export's
 * stack texts, per callsite as many as perf's --max-stack and a margin.
 * Each distinct (thread name, leaf) is walked once, so only a forged file
 * (a chain of 20,000 callsites, each a sample's leaf: 20 million frames)
 * reaches it. */
#define FRAME_BUDGET(CALLSITES) ((int64_t)(CALLSITES) * 128 + ((int64_t)1 << 20))

/* A thread: its tid and its name in the tree. */
struct thread {
	int64_t utid;
	int64_t tid;
	uint32_t name;
};

/* ---- filters and names --------------------------------------------------------- */

static int in_list(const int *list, size_t n, int64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return !list;
}

/* The part of [ts, ts + dur] inside the --time range, in ns (0 for a
 * negative or forged duration; saturating). */
static uint64_t overlap(const struct sptd_query_flame_opts *o, int64_t ts, int64_t dur)
{
	int64_t from = ts, to;

	if (dur <= 0)
		return 0;
	if (__builtin_add_overflow(ts, dur, &to))
		to = INT64_MAX;
	if (o->has_time) {
		from = from < o->start_ns ? o->start_ns : from;
		to = to > o->end_ns ? o->end_ns : to;
	}
	return to > from ? (uint64_t)to - (uint64_t)from : 0;
}

/* @name interned as a frame name: cut to SPTD_QUERY_FLAME_NAME_MAX bytes
 * (ending in "..."), each control character, ';' (the folded format's
 * separator) and byte that is not UTF-8 (an SVG must be well-formed) as
 * '?'. */
static int name_of(struct sptd_query_ftree *t, const char *name)
{
	char buf[SPTD_QUERY_FLAME_NAME_MAX + 1];
	size_t len = strlen(name), n = 0;

	while (*name && n < SPTD_QUERY_FLAME_NAME_MAX) {
		int seq = sptd_query_utf8_seq(name, len);

		if (seq > 1 && n + (size_t)seq <= SPTD_QUERY_FLAME_NAME_MAX) {
			memcpy(buf + n, name, (size_t)seq);
			n += (size_t)seq;
			name += seq;
			len -= (size_t)seq;
			continue;
		}
		if (seq > 1)
			break;
		buf[n++] = seq == 1 && (unsigned char)*name >= 0x20 && *name != 0x7f &&
		           *name != ';' ? *name : '?';
		name++;
		len--;
	}
	if (*name) {   /* cut: "..." in the last bytes, never inside a character */
		size_t end = n;

		if (n > SPTD_QUERY_FLAME_NAME_MAX - 3)
			n = SPTD_QUERY_FLAME_NAME_MAX - 3;
		while (n && n < end && ((unsigned char)buf[n] & 0xc0) == 0x80)
			n--;
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return sptd_query_ftree_name(t, buf);
}

/* A frame's function name: its symbol, else "[unknown] (DSO)", else
 * "[unknown]". */
static int frame_name(struct sptd_query_ftree *t, const char *symbol, const char *dso)
{
	char buf[SPTD_QUERY_FLAME_NAME_MAX + 1];

	if (symbol && strcmp(symbol, "[unknown]") != 0)
		return name_of(t, symbol);
	if (!dso)
		return name_of(t, "[unknown]");
	snprintf(buf, sizeof(buf), "[unknown] (%s)", dso);
	return name_of(t, buf);
}

static int thread_add(void *arg, const struct sptd_store_thread_info_row *row)
{
	struct build *b = arg;
	struct thread *th;
	int name;

	if (b->nthreads == b->threads_cap) {
		size_t cap = b->threads_cap ? 2 * b->threads_cap : 64;

		th = realloc(b->threads, cap * sizeof(*th));
		if (!th)
			return -ENOMEM;
		b->threads = th;
		b->threads_cap = cap;
	}
	name = name_of(b->t, row->name ? row->name : row->process ? row->process : "[unknown]");
	if (name < 0)
		return name;
	b->threads[b->nthreads++] = (struct thread){ row->utid, row->tid, (uint32_t)name };
	return 0;
}

/* The thread of @utid, NULL when the incident names none. */
static const struct thread *thread_of(const struct build *b, int64_t utid)
{
	size_t lo = 0, hi = b->nthreads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->threads[mid].utid < utid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nthreads && b->threads[lo].utid == utid ? &b->threads[lo] : NULL;
}

/* Whether a stack of thread @utid on @cpu (INT_MIN: any) passes --tid and
 * --cpu; the thread's name into *@root. */
static int wanted(struct build *b, int64_t utid, int cpu, uint32_t *root)
{
	const struct thread *th = thread_of(b, utid);
	int rc;

	if ((cpu != INT_MIN && !in_list(b->o->cpus, b->o->ncpus, cpu)) ||
	    !in_list(b->o->tids, b->o->ntids, th ? th->tid : -1))
		return 0;
	if (th) {
		*root = th->name;
		return 1;
	}
	rc = name_of(b->t, "[unknown]");
	if (rc < 0)
		return rc;
	*root = (uint32_t)rc;
	return 1;
}

/* ---- samples and off-CPU waits: callsite stacks ---------------------------------- */

/* Add @weight to the stack of callsite @callsite (-1 none) under @root. */
static int stack_add(struct build *b, uint32_t root, int64_t callsite, uint64_t weight)
{
	uint32_t leaf = callsite < 0 ? SPTD_QUERY_NONE : sptd_query_stacks_find(b->cs, callsite);
	size_t n = 0;
	int k, cut = 0, rc;

	b->path[n++] = root;
	if (leaf == SPTD_QUERY_NONE) {
		rc = name_of(b->t, "[no stack]");
		if (rc < 0)
			return rc;
		b->path[n++] = (uint32_t)rc;
	} else if (b->memo_root[leaf] == root) {
		sptd_query_ftree_weigh(b->t, b->memo_node[leaf], b->side, weight);
		return 0;
	} else {
		k = sptd_query_stacks_walk(b->cs, leaf, b->frames, SPTD_QUERY_STACK_MAX, &cut);
		if (k < 0)
			return k;
		if (cut) {
			rc = name_of(b->t, "[stack cut]");
			if (rc < 0)
				return rc;
			b->path[n++] = (uint32_t)rc;
			(*b->cut)++;
		}
		b->frames_left -= k;
		if (b->frames_left < 0)
			return -E2BIG;
		while (k-- > 0) {
			uint32_t *name = &b->fname[b->frames[k].node];

			if (*name == SPTD_QUERY_NONE) {
				rc = frame_name(b->t, b->frames[k].symbol, b->frames[k].dso);
				if (rc < 0)
					return rc;
				*name = (uint32_t)rc;
			}
			b->path[n++] = *name;
		}
	}
	rc = sptd_query_ftree_add(b->t, b->path, n, b->side, weight);
	if (rc >= 0 && leaf != SPTD_QUERY_NONE) {
		b->memo_root[leaf] = root;
		b->memo_node[leaf] = (uint32_t)rc;
	}
	return rc < 0 ? rc : 0;
}

static int sample_row(void *arg, const struct sptd_store_stack_row *row)
{
	struct build *b = arg;
	uint32_t root;
	int rc;

	if (b->o->has_time && (row->ts < b->o->start_ns || row->ts > b->o->end_ns))
		return 0;
	rc = wanted(b, row->utid, row->cpu, &root);
	if (rc <= 0)
		return rc;
	rc = stack_add(b, root, row->callsite_id, 1);
	if (rc == 0)
		(*b->total)++;
	return rc;
}

static int offcpu_row(void *arg, const struct sptd_store_stack_row *row)
{
	struct build *b = arg;
	uint64_t ns = overlap(b->o, row->ts, row->dur);
	uint32_t root;
	int rc;

	/* an exited thread (Z, X) waits for nothing (as --report offcpu) */
	if (!ns || (row->state && (strcmp(row->state, "Z") == 0 || strcmp(row->state, "X") == 0)))
		return 0;
	rc = wanted(b, row->utid, row->cpu, &root);
	if (rc <= 0)
		return rc;
	rc = stack_add(b, root, row->callsite_id, ns);
	if (rc == 0)
		*b->total = *b->total > UINT64_MAX - ns ? UINT64_MAX : *b->total + ns;
	return rc;
}

/* ---- PT call time: each slice's own time (its time less its children's) ----------- */

/* One slice still open on the walk. */
struct open_slice {
	int64_t id;
	uint32_t node;      /* its tree node */
	uint64_t own;       /* its time inside --time */
	uint64_t inner;     /* its children's */
};

struct pt_walk {
	struct build *b;
	int64_t utid;       /* the thread being walked */
	int skip;           /* its slices are filtered out */
	uint32_t root;      /* its name */
	int depth;          /* open slices */
	struct open_slice open[SPTD_QUERY_STACK_MAX];
};

/* Close the innermost open slice: its own time to its node. */
static void pt_close(struct pt_walk *w)
{
	struct open_slice *s = &w->open[--w->depth];
	uint64_t self = s->own > s->inner ? s->own - s->inner : 0;

	sptd_query_ftree_weigh(w->b->t, s->node, w->b->side, self);
	*w->b->total = *w->b->total > UINT64_MAX - self ? UINT64_MAX : *w->b->total + self;
	if (w->depth) {
		uint64_t *in = &w->open[w->depth - 1].inner;

		*in = *in > UINT64_MAX - s->own ? UINT64_MAX : *in + s->own;
	}
}

static int slice_row(void *arg, const struct sptd_store_slice_nest_row *row)
{
	struct pt_walk *w = arg;
	struct build *b = w->b;
	uint32_t parent;
	int rc;

	if (row->utid != w->utid) {
		while (w->depth)
			pt_close(w);
		w->utid = row->utid;
		rc = wanted(b, row->utid, INT_MIN, &w->root);   /* --cpu: per slice */
		if (rc < 0)
			return rc;
		w->skip = !rc;
	}
	if (w->skip || !in_list(b->o->cpus, b->o->ncpus, row->cpu))
		return 0;
	/* the walk comes by (ts, depth): close what ended before this one */
	while (w->depth && (!row->has_parent || w->open[w->depth - 1].id != row->parent_id))
		pt_close(w);
	if (w->depth == SPTD_QUERY_STACK_MAX) {   /* deeper: its time stays its parent's */
		(*b->cut)++;
		return 0;
	}
	parent = w->depth ? w->open[w->depth - 1].node : SPTD_QUERY_FTREE_NONE;
	if (parent == SPTD_QUERY_FTREE_NONE) {
		rc = sptd_query_ftree_child(b->t, 0, w->root);
		if (rc < 0)
			return rc;
		parent = (uint32_t)rc;
	}
	rc = frame_name(b->t, row->name, NULL);
	if (rc >= 0)
		rc = sptd_query_ftree_child(b->t, parent, (uint32_t)rc);
	if (rc < 0)
		return rc;
	w->open[w->depth++] = (struct open_slice){
		.id = row->id, .node = (uint32_t)rc, .own = overlap(b->o, row->ts, row->dur),
	};
	return 0;
}

/* ---- one incident ---------------------------------------------------------------- */

/* Message for a failure @rc of reading @st. */
static int build_fail(struct sptd_store *st, int rc, char *err, size_t errlen)
{
	if (rc == -E2BIG)
		return sptd_query_err(err, errlen, rc, "%s: more distinct stacks than a flame graph "
		                      "may hold (%zu frames in context, or stacks of more than 128 "
		                      "frames per callsite): a forged incident?",
		                      sptd_store_path(st), (size_t)1 << 21);
	if (rc == -ENOMEM)
		return sptd_query_err(err, errlen, rc, "out of memory");
	return sptd_query_err(err, errlen, rc, "%s", sptd_store_errmsg(st));
}

int sptd_query_flame_add(struct sptd_query_ftree *t, struct sptd_store *st, int side,
                         const struct sptd_query_flame_opts *o, uint64_t *total,
                         uint64_t *cut, char *err, size_t errlen)
{
	struct build *b = calloc(1, sizeof(*b));
	struct pt_walk *w = NULL;
	int rc;

	if (!b)
		return sptd_query_err(err, errlen, -ENOMEM, "out of memory");
	*b = (struct build){ .t = t, .side = side, .o = o, .total = total, .cut = cut };
	rc = SPTD_STORE_EACH(st, thread_info, thread_add, b);
	if (rc == 0 && o->weight == SPTD_QUERY_FLAME_PT) {
		w = calloc(1, sizeof(*w));
		if (!w)
			rc = -ENOMEM;
		if (rc == 0) {
			w->b = b;
			w->utid = INT64_MIN;
			rc = sptd_store_slice_nest_each(st, slice_row, w);
		}
		while (rc == 0 && w->depth)
			pt_close(w);
	} else if (rc == 0) {
		char msg[512] = "";
		uint32_t n;

		rc = sptd_query_stacks_load(st, &b->cs, msg, sizeof(msg));
		if (rc < 0) {
			free(b->threads);
			free(b);
			return sptd_query_err(err, errlen, rc, "%s", msg);
		}
		n = sptd_query_stacks_count(b->cs);
		b->frames_left = FRAME_BUDGET(n);
		b->memo_root = malloc((n ? n : 1) * sizeof(uint32_t));
		b->memo_node = malloc((n ? n : 1) * sizeof(uint32_t));
		b->fname = malloc((n ? n : 1) * sizeof(uint32_t));
		if (!b->memo_root || !b->memo_node || !b->fname) {
			rc = -ENOMEM;
		} else {
			memset(b->memo_root, 0xff, (n ? n : 1) * sizeof(uint32_t));
			memset(b->fname, 0xff, (n ? n : 1) * sizeof(uint32_t));
		}
		if (rc == 0 && o->weight == SPTD_QUERY_FLAME_OFFCPU)
			rc = SPTD_STORE_EACH(st, offcpu_stack, offcpu_row, b);
		else if (rc == 0)
			rc = SPTD_STORE_EACH(st, sample_stack, sample_row, b);
	}
	if (rc < 0)
		rc = build_fail(st, rc, err, errlen);
	free(w);
	sptd_query_stacks_destroy(b->cs);
	free(b->memo_root);
	free(b->memo_node);
	free(b->fname);
	free(b->threads);
	free(b);
	return rc < 0 ? rc : 0;
}
