/* diff.c — `sysptd diff A B`: what changed from one incident (or set of
 * incidents) to another, ranked by the size of the change.
 *
 * Divisions: keyed pairs (a name -> its A and B values); functions (from a
 * stack tree of both sides, flame.c); per-name aggregates of store/
 * (threads, IRQs, wakeups); printing sections as report.c lays them out
 * (table "== title ==", csv "# title", json one object keyed by section).
 *
 * Function shares are of each side's whole weight (samples, or PT call
 * time), so sides of different lengths compare; times are the mean per
 * incident of a side. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame-local.h"
#include "sptd_store_flame.h"

/* ---- keyed pairs ------------------------------------------------------------------ */

/* Up to four figures per side of one name. */
struct pair {
	double v[2][4];
};

struct pairs {
	struct sptd_query_smap keys;
	struct pair *p;          /* by key index */
	size_t cap;
};

static void pairs_fini(struct pairs *ps)
{
	sptd_query_smap_fini(&ps->keys);
	free(ps->p);
	memset(ps, 0, sizeof(*ps));
}

/* The pair of @key, made (zeroed) when new; NULL out of memory. */
static struct pair *pair_of(struct pairs *ps, const char *key)
{
	int k = sptd_query_smap_intern(&ps->keys, key ? key : "");

	if (k < 0)
		return NULL;
	if ((size_t)k >= ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 256;
		struct pair *p = realloc(ps->p, cap * sizeof(*p));

		if (!p)
			return NULL;
		memset(p + ps->cap, 0, (cap - ps->cap) * sizeof(*p));
		ps->p = p;
		ps->cap = cap;
	}
	return &ps->p[k];
}

/* ---- printing ---------------------------------------------------------------------- */

/* One section being printed. */
struct section {
	const struct sptd_query_print_opts *opts;
	FILE *out;
	int first;               /* no section printed yet */
	struct sptd_query_table *table;
	int ncols;
	const char *const *names;
	int64_t rows;
};

static int section_begin(struct section *s, const char *id, const char *title, int ncols,
                         const char *const *names)
{
	s->ncols = ncols;
	s->names = names;
	s->rows = 0;
	switch (s->opts->format) {
	case SPTD_QUERY_TABLE:
		fprintf(s->out, "%s== %s ==\n", s->first ? "" : "\n", title);
		return sptd_query_table_create(s->out, SPTD_QUERY_PF_FOOTER, s->opts->width, ncols,
		                               names, &s->table);
	case SPTD_QUERY_CSV:
		fprintf(s->out, "%s# %s\n", s->first ? "" : "\n", title);
		return sptd_query_csv_header(s->out, ncols, names);
	default:
		fprintf(s->out, "%s", s->first ? "{" : ",\n");
		sptd_query_json_string(s->out, id, strlen(id));
		fprintf(s->out, ": {\"title\": ");
		sptd_query_json_string(s->out, title, strlen(title));
		fprintf(s->out, ", \"rows\": ");
		return sptd_query_json_begin(s->out);
	}
}

static int section_row(struct section *s, const struct sptd_query_value *vals)
{
	s->rows++;
	if (s->opts->format == SPTD_QUERY_TABLE)
		return sptd_query_table_row(s->table, vals);
	if (s->opts->format == SPTD_QUERY_CSV)
		return sptd_query_csv_row(s->out, s->ncols, vals);
	return sptd_query_json_row(s->out, s->rows == 1, s->ncols, s->names, vals);
}

static int section_end(struct section *s)
{
	int rc = 0;

	s->first = 0;
	if (s->opts->format == SPTD_QUERY_TABLE) {
		rc = sptd_query_table_finish(s->table);
		sptd_query_table_destroy(s->table);
		s->table = NULL;
	} else if (s->opts->format == SPTD_QUERY_JSON) {
		rc = sptd_query_json_end(s->out, s->rows);
		fprintf(s->out, "}");
	}
	return rc < 0 ? rc : ferror(s->out) ? -EIO : 0;
}

/* A figure as a value: a share ("12.34%"; csv/json the number), a
 * duration (table "1.234 ms"; csv/json integer ns), a count; @sign puts
 * "+" before a positive one in a table. */
enum kind { SHARE, DURATION, COUNT };

static void value_set(const struct section *s, struct sptd_query_value *v, char *buf,
                      size_t len, double x, enum kind kind, int sign)
{
	int table = s->opts->format == SPTD_QUERY_TABLE;
	const char *plus = sign && table && x > 0 ? "+" : "";

	if (kind == SHARE) {
		if (table)
			snprintf(buf, len, "%s%.2f%%", plus, x);
		else
			snprintf(buf, len, "%.4f", x);
		v->type = table ? SPTD_STORE_TEXT : SPTD_STORE_FLOAT;
	} else if (kind == DURATION && table) {
		char d[48];

		sptd_query_duration_text((int64_t)fabs(x) > INT64_MAX / 2 ? INT64_MAX / 2 :
		                         (int64_t)fabs(x), d, sizeof(d));
		snprintf(buf, len, "%s%s", x < 0 ? "-" : plus, d);
		v->type = SPTD_STORE_TEXT;
	} else if (x == floor(x) && fabs(x) < 9e15) {
		snprintf(buf, len, "%s%.0f", plus, x);
		v->type = SPTD_STORE_INT;
	} else {
		snprintf(buf, len, "%s%.1f", plus, x);
		v->type = SPTD_STORE_FLOAT;
	}
	v->text = buf;
	v->len = strlen(buf);
}

/* One figure of a section: which of the pair's four, how it reads. */
struct column {
	const char *name;        /* the header */
	int side;                /* 0 A, 1 B, 2 the change B - A */
	int fig;                 /* index into pair.v[side] */
	enum kind kind;
};

/* The ranking's key: a row's largest |change| among @rank's figures. */
struct ranked {
	uint32_t key;
	double change;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->change < y->change ? 1 : x->change > y->change ? -1 :
	       x->key < y->key ? -1 : x->key > y->key;
}

/* Print @ps ranked by |B - A| of figures @rank (a mask of figure
 * indices), at most @limit rows (0: all). */
static int pairs_print(struct section *s, const struct pairs *ps, const char *id,
                       const char *title, const char *key_name, const struct column *cols,
                       int ncols, unsigned rank, int limit)
{
	const char *names[12];
	struct sptd_query_value vals[12];
	char bufs[12][64];
	struct ranked *r = malloc((ps->keys.count ? ps->keys.count : 1) * sizeof(*r));
	size_t n = 0;
	int rc;

	if (!r)
		return -ENOMEM;
	for (size_t k = 0; k < ps->keys.count; k++) {
		double ch = 0;

		for (int f = 0; f < 4; f++)
			if (rank & (1u << f))
				ch = fmax(ch, fabs(ps->p[k].v[1][f] - ps->p[k].v[0][f]));
		if (ch > 0)
			r[n++] = (struct ranked){ (uint32_t)k, ch };
	}
	qsort(r, n, sizeof(*r), ranked_cmp);
	names[0] = key_name;
	for (int c = 0; c < ncols; c++)
		names[c + 1] = cols[c].name;
	rc = section_begin(s, id, title, ncols + 1, names);
	for (size_t i = 0; rc >= 0 && i < n && (!limit || i < (size_t)limit); i++) {
		const struct pair *p = &ps->p[r[i].key];
		const char *key = ps->keys.strs[r[i].key];

		vals[0] = (struct sptd_query_value){ SPTD_STORE_TEXT, key, strlen(key) };
		for (int c = 0; c < ncols; c++) {
			double x = cols[c].side < 2 ? p->v[cols[c].side][cols[c].fig] :
			           p->v[1][cols[c].fig] - p->v[0][cols[c].fig];

			value_set(s, &vals[c + 1], bufs[c], sizeof(bufs[c]), x, cols[c].kind,
			          cols[c].side == 2);
		}
		rc = section_row(s, vals);
	}
	if (rc >= 0)
		rc = section_end(s);
	free(r);
	return rc;
}

/* ---- functions: self and total share per function name ----------------------------- */

/* Per function name: self and total share of each side, from tree @t
 * (node level 1 is the thread's name: not a function).  A function
 * counts once per stack however often it recurs in it. */
static int functions_fill(const struct sptd_query_ftree *t, struct pairs *ps)
{
	uint32_t *onpath = calloc(t->names.count ? t->names.count : 1, sizeof(*onpath));
	uint32_t *stack = malloc(t->n * sizeof(*stack));
	size_t depth = 0;
	uint32_t at = t->nodes[0].child;
	int rc = 0;

	if (!onpath || !stack)
		rc = -ENOMEM;
	/* depth first: a node is on the path while its subtree is walked */
	while (rc == 0 && at != SPTD_QUERY_FTREE_NONE) {
		const struct sptd_query_ftree_node *n = &t->nodes[at];

		stack[depth++] = at;
		if (depth > 1) {
			struct pair *p = pair_of(ps, t->names.strs[n->name]);

			if (!p) {
				rc = -ENOMEM;
				break;
			}
			for (int s = 0; s < 2; s++) {
				double tot = (double)t->nodes[0].total[s];

				if (!tot)
					continue;
				p->v[s][0] += 100.0 * (double)n->self[s] / tot;
				if (!onpath[n->name])
					p->v[s][1] += 100.0 * (double)n->total[s] / tot;
			}
			onpath[n->name]++;
		}
		if (n->child != SPTD_QUERY_FTREE_NONE) {
			at = n->child;
			continue;
		}
		at = SPTD_QUERY_FTREE_NONE;
		while (depth && at == SPTD_QUERY_FTREE_NONE) {
			uint32_t done = stack[--depth];

			if (depth >= 1)
				onpath[t->nodes[done].name]--;
			at = t->nodes[done].sibling;
		}
	}
	free(onpath);
	free(stack);
	return rc;
}

/* ---- per-name aggregates of store/ ---------------------------------------------------- */

struct agg_fill {
	struct pairs *ps;
	int side;
	double per;              /* 1 / incidents of the side */
};

static int agg_row(void *arg, const struct sptd_store_agg_row *row)
{
	struct agg_fill *f = arg;
	struct pair *p = pair_of(f->ps, row->key);
	double *v;

	if (!p)
		return -ENOMEM;
	v = p->v[f->side];
	v[0] += (double)row->count * f->per;
	v[1] += row->total_ns * f->per;
	v[2] = fmax(v[2], (double)row->max_ns);
	/* the mean of each event: total over count, of the whole side */
	v[3] = v[0] > 0 ? v[1] / v[0] : 0;
	return 0;
}

static int agg_fill(struct sptd_store *const *sides[2], const size_t n[2],
                    enum sptd_store_agg kind, struct pairs *ps, char *err, size_t errlen)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < n[s]; i++) {
			struct agg_fill f = { ps, s, 1.0 / (double)n[s] };
			int rc = sptd_store_agg_each(sides[s][i], kind, agg_row, &f);

			if (rc < 0)
				return rc == -ENOMEM ? sptd_query_err(err, errlen, rc, "out of memory") :
				       sptd_query_err(err, errlen, rc, "%s", sptd_store_errmsg(sides[s][i]));
		}
	return 0;
}

/* ---- the entry point ------------------------------------------------------------------ */

int sptd_query_diff(struct sptd_store *const *a, size_t na, struct sptd_store *const *b,
                    size_t nb, const struct sptd_query_print_opts *opts, int limit,
                    FILE *out, char *err, size_t errlen)
{
	static const struct column fcols[] = {
		{ "a_self", 0, 0, SHARE }, { "b_self", 1, 0, SHARE }, { "self_change", 2, 0, SHARE },
		{ "a_total", 0, 1, SHARE }, { "b_total", 1, 1, SHARE }, { "total_change", 2, 1, SHARE },
	};
	static const struct column tcols[] = {
		{ "a_cpu", 0, 1, DURATION }, { "b_cpu", 1, 1, DURATION }, { "change", 2, 1, DURATION },
		{ "a_threads", 0, 0, COUNT }, { "b_threads", 1, 0, COUNT },
	};
	static const struct column icols[] = {
		{ "a_time", 0, 1, DURATION }, { "b_time", 1, 1, DURATION }, { "change", 2, 1, DURATION },
		{ "a_count", 0, 0, COUNT }, { "b_count", 1, 0, COUNT },
		{ "a_max", 0, 2, DURATION }, { "b_max", 1, 2, DURATION },
	};
	static const struct column wcols[] = {
		{ "a_mean", 0, 3, DURATION }, { "b_mean", 1, 3, DURATION }, { "mean_change", 2, 3, DURATION },
		{ "a_max", 0, 2, DURATION }, { "b_max", 1, 2, DURATION }, { "max_change", 2, 2, DURATION },
		{ "a_count", 0, 0, COUNT }, { "b_count", 1, 0, COUNT },
	};
	struct sptd_store *const *sides[2] = { a, b };
	const size_t n[2] = { na, nb };
	struct section s = { .opts = opts, .out = out, .first = 1 };
	struct sptd_query_flame_opts fo = { 0 };
	struct sptd_query_ftree t = { 0 };
	struct pairs ps = { 0 };
	uint64_t total[2] = { 0, 0 }, cut = 0;
	int rc = 0, have_stacks = 0;

	if (!a || !b || !na || !nb || !opts || !out || limit < 0 ||
	    (unsigned)opts->format > SPTD_QUERY_JSON)
		return sptd_query_err(err, errlen, -EINVAL, "invalid arguments");
	/* functions: samples where A has them, else PT call time */
	fo.weight = SPTD_QUERY_FLAME_SAMPLES;
	{
		int64_t cnt = 0;

		if (sptd_store_count(a[0], SPTD_STORE_T_SAMPLE, &cnt) == 0 && !cnt &&
		    sptd_store_count(a[0], SPTD_STORE_T_SLICE, &cnt) == 0 && cnt)
			fo.weight = SPTD_QUERY_FLAME_PT;
	}
	rc = sptd_query_ftree_init(&t, 0);
	for (int side = 0; rc == 0 && side < 2; side++)
		for (size_t i = 0; rc == 0 && i < n[side]; i++)
			rc = sptd_query_flame_add(&t, sides[side][i], side, &fo, &total[side], &cut,
			                          err, errlen);
	have_stacks = rc == 0 && total[0] && total[1];
	if (rc == 0 && (rc = sptd_query_ftree_sum(&t)) == 0 && have_stacks)
		rc = functions_fill(&t, &ps);
	if (rc == -ENOMEM)
		sptd_query_err(err, errlen, rc, "out of memory");
	if (rc == 0)
		rc = pairs_print(&s, &ps, "functions", fo.weight == SPTD_QUERY_FLAME_PT ?
		                 "functions: share of PT call time (self: on top of the stack)" :
		                 "functions: share of samples (self: on top of the stack)",
		                 "function", fcols, 6, 0x3, limit);
	pairs_fini(&ps);
	sptd_query_ftree_fini(&t);
	if (rc == 0 && (rc = agg_fill(sides, n, SPTD_STORE_AGG_THREAD_CPU, &ps, err, errlen)) == 0)
		rc = pairs_print(&s, &ps, "threads", "threads: CPU time per thread name", "thread",
		                 tcols, 5, 0x2, limit);
	pairs_fini(&ps);
	if (rc == 0 && (rc = agg_fill(sides, n, SPTD_STORE_AGG_IRQ, &ps, err, errlen)) == 0)
		rc = pairs_print(&s, &ps, "irqs", "irqs: time in hard IRQs and softirqs", "irq",
		                 icols, 7, 0x2, limit);
	pairs_fini(&ps);
	if (rc == 0 && (rc = agg_fill(sides, n, SPTD_STORE_AGG_WAKEUP, &ps, err, errlen)) == 0)
		rc = pairs_print(&s, &ps, "wakeups", "wakeups: wakeup-to-run latency per thread name",
		                 "thread", wcols, 8, 0xc, limit);
	pairs_fini(&ps);
	if (rc == 0 && opts->format == SPTD_QUERY_JSON)
		fprintf(out, "}\n");
	if (rc == 0 && (ferror(out) || fflush(out) != 0))
		rc = -EIO;
	if (rc == -EIO)
		sptd_query_err(err, errlen, rc, "writing failed");
	return rc < 0 ? rc : 0;
}
