/* flame_out.c — sptd_query_flame(): which weight, the incidents of each
 * side into one tree (flame.c), then folded stacks (here) or the SVG
 * (flame_svg.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame-local.h"

/* Folded output's most bytes: beyond it a forged incident (deep stacks
 * under many leaves) is refused before a byte is written. */
#define FOLDED_MAX_BYTES ((uint64_t)1 << 30)

/* Whether node @i gets a line: weight of its own on a side shown. */
static int folded_line(const struct sptd_query_ftree_node *n, int diff)
{
	return n->self[0] || (diff && n->self[1]);
}

/* The bytes folded output takes: every printed node's path ("a;b;c") and
 * counts.  Paths come from the parent's, which is always an earlier node. */
static int folded_size(const struct sptd_query_ftree *t, int diff, uint64_t *bytes)
{
	uint64_t *path = malloc(t->n * sizeof(*path));

	if (!path)
		return -ENOMEM;
	*bytes = 0;
	path[0] = 0;
	for (size_t i = 1; i < t->n; i++) {
		const struct sptd_query_ftree_node *n = &t->nodes[i];

		path[i] = path[n->parent] + strlen(t->names.strs[n->name]) + 1;
		if (folded_line(n, diff))
			*bytes += path[i] + 42;
	}
	free(path);
	return 0;
}

/* "a;b;c COUNT" (a diff: "a;b;c A B", as flamegraph.pl's difffolded reads
 * them) for each node with weight of its own, depth first in name order. */
static int folded_write(const struct sptd_query_ftree *t, int diff, FILE *out)
{
	uint32_t *stack = malloc(t->n * sizeof(*stack));
	size_t depth = 0;
	uint32_t at;

	if (!stack)
		return -ENOMEM;
	at = t->nodes[0].child;
	while (at != SPTD_QUERY_FTREE_NONE) {
		const struct sptd_query_ftree_node *n = &t->nodes[at];

		stack[depth++] = at;
		if (folded_line(n, diff)) {
			for (size_t i = 0; i < depth; i++)
				fprintf(out, "%s%s", i ? ";" : "", t->names.strs[t->nodes[stack[i]].name]);
			if (diff)
				fprintf(out, " %" PRIu64 " %" PRIu64 "\n", n->self[0], n->self[1]);
			else
				fprintf(out, " %" PRIu64 "\n", n->self[0]);
		}
		/* next: the first child, else the next sibling of the nearest
		 * node on the path that has one */
		if (n->child != SPTD_QUERY_FTREE_NONE) {
			at = n->child;
			continue;
		}
		at = SPTD_QUERY_FTREE_NONE;
		while (depth && at == SPTD_QUERY_FTREE_NONE)
			at = t->nodes[stack[--depth]].sibling;
	}
	free(stack);
	return ferror(out) ? -EIO : 0;
}

/* What @st holds to weigh: SAMPLES, PT, or AUTO when neither. */
static enum sptd_query_flame_weight weight_of(struct sptd_store *st)
{
	int64_t n = 0;

	if (sptd_store_count(st, SPTD_STORE_T_SAMPLE, &n) == 0 && n > 0)
		return SPTD_QUERY_FLAME_SAMPLES;
	if (sptd_store_count(st, SPTD_STORE_T_SLICE, &n) == 0 && n > 0)
		return SPTD_QUERY_FLAME_PT;
	return SPTD_QUERY_FLAME_AUTO;
}

static const char *weight_word(enum sptd_query_flame_weight w)
{
	return w == SPTD_QUERY_FLAME_SAMPLES ? "samples" : w == SPTD_QUERY_FLAME_OFFCPU ?
	       "off-CPU stacks (record --offcpu)" : "PT call slices";
}

/* Add every incident of one side; -ENODATA when they hold nothing of the
 * weight. */
static int side_add(struct sptd_query_ftree *t, struct sptd_store *const *sts, size_t n,
                    int side, const struct sptd_query_flame_opts *o,
                    struct sptd_query_flame_stats *stats, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t before = stats->total[side];
		int rc = sptd_query_flame_add(t, sts[i], side, o, &stats->total[side], &stats->cut,
		                              err, errlen);

		if (rc < 0)
			return rc;
		if (stats->total[side] == before && !o->has_time && !o->cpus && !o->tids)
			return sptd_query_err(err, errlen, -ENODATA, "%s: no %s in this incident%s",
			                      sptd_store_path(sts[i]), weight_word(o->weight),
			                      o->weight == SPTD_QUERY_FLAME_SAMPLES &&
			                      weight_of(sts[i]) == SPTD_QUERY_FLAME_PT ?
			                      " (a PT incident: --pt weighs its call time)" : "");
	}
	if (!stats->total[side])
		return sptd_query_err(err, errlen, -ENODATA, "no %s left after --tid, --cpu and "
		                      "--time", weight_word(o->weight));
	return 0;
}

int sptd_query_flame(struct sptd_store *const *a, size_t na, struct sptd_store *const *b,
                     size_t nb, const struct sptd_query_flame_opts *o, FILE *out,
                     struct sptd_query_flame_stats *stats, char *err, size_t errlen)
{
	static const char *const units[] = {
		[SPTD_QUERY_FLAME_SAMPLES] = "samples", [SPTD_QUERY_FLAME_OFFCPU] = "ns",
		[SPTD_QUERY_FLAME_PT] = "ns",
	};
	struct sptd_query_flame_stats local;
	struct sptd_query_flame_opts ro;
	struct sptd_query_ftree t;
	char subtitle[160];
	uint64_t bytes = 0;
	int rc;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (!a || !na || (nb && !b) || !o || !out || (o->has_time && o->start_ns > o->end_ns) ||
	    (unsigned)o->weight > SPTD_QUERY_FLAME_PT || (unsigned)o->format > SPTD_QUERY_FLAME_FOLDED)
		return sptd_query_err(err, errlen, -EINVAL, "invalid arguments");
	ro = *o;
	if (ro.weight == SPTD_QUERY_FLAME_AUTO)
		ro.weight = weight_of(a[0]);
	if (ro.weight == SPTD_QUERY_FLAME_AUTO)
		return sptd_query_err(err, errlen, -ENODATA, "%s: no samples and no PT call slices "
		                      "in this incident: nothing to draw", sptd_store_path(a[0]));
	stats->weight = ro.weight;
	rc = sptd_query_ftree_init(&t, 0);
	if (rc < 0)
		return sptd_query_err(err, errlen, rc, "out of memory");
	rc = side_add(&t, a, na, 0, &ro, stats, err, errlen);
	if (rc == 0 && nb)
		rc = side_add(&t, b, nb, 1, &ro, stats, err, errlen);
	if (rc == 0 && (rc = sptd_query_ftree_sum(&t)) < 0)
		sptd_query_err(err, errlen, rc, "out of memory");
	stats->nodes = t.n;
	if (rc == 0 && ro.format == SPTD_QUERY_FLAME_FOLDED) {
		rc = folded_size(&t, nb > 0, &bytes);
		if (rc == 0 && bytes > FOLDED_MAX_BYTES)
			rc = sptd_query_err(err, errlen, -E2BIG, "the folded stacks would take %" PRIu64
			                    " bytes (at most %" PRIu64 "): a forged incident?", bytes,
			                    FOLDED_MAX_BYTES);
		if (rc == 0)
			rc = folded_write(&t, nb > 0, out);
	} else if (rc == 0) {
		if (nb)
			snprintf(subtitle, sizeof(subtitle), "A: %" PRIu64 " %s, B: %" PRIu64
			         " %s; widths are B's, red grew, blue shrank", stats->total[0],
			         units[ro.weight], stats->total[1], units[ro.weight]);
		else
			snprintf(subtitle, sizeof(subtitle), "%" PRIu64 " %s%s", stats->total[0],
			         units[ro.weight], ro.weight == SPTD_QUERY_FLAME_OFFCPU ? " blocked" :
			         ro.weight == SPTD_QUERY_FLAME_PT ? " in PT call slices" : "");
		rc = sptd_query_flame_svg(&t, nb > 0, ro.title ? ro.title : nb ?
		                          "Differential Flame Graph" : ro.weight ==
		                          SPTD_QUERY_FLAME_OFFCPU ? "Off-CPU Flame Graph" :
		                          "Flame Graph", subtitle, units[ro.weight], out);
		if (rc >= 0)
			stats->drawn = rc;
	}
	if (rc == -EIO || (rc >= 0 && fflush(out) != 0))
		rc = sptd_query_err(err, errlen, -EIO, "writing the flame graph failed");
	else if (rc == -ENOMEM)
		sptd_query_err(err, errlen, rc, "out of memory");
	sptd_query_ftree_fini(&t);
	return rc < 0 ? rc : 0;
}
