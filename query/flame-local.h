/* flame-local.h — flame graphs and diffs of query/:
 *
 *   flame_tree.c   stacks of frame names (root first) merged into a tree
 *                  whose nodes carry a weight (samples, ns) per side (one
 *                  profile, or a diff's A and B); bounded in nodes
 *   flame.c        incidents -> a tree: samples, off-CPU waits or PT call
 *                  time, narrowed by thread, CPU and time; folded output
 *   flame_svg.c    a tree -> a self-contained interactive SVG
 *   diff.c         `sysptd diff`: per function, thread, IRQ and wakeup
 *                  latency, what changed from A to B
 *
 * Memory is per distinct stack (tree node), never per sample. */
#ifndef SPTD_QUERY_FLAME_LOCAL_H
#define SPTD_QUERY_FLAME_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "query-local.h"

/* No node. */
#define SPTD_QUERY_FTREE_NONE UINT32_MAX
/* Sides of a tree's weights: a profile uses 0; a diff A (0) and B (1). */
#define SPTD_QUERY_FTREE_SIDES 2
/* Bytes of a frame name a flame graph keeps (a forged symbol, a C++
 * template of kilobytes: cut, ending in "..."). */
#define SPTD_QUERY_FLAME_NAME_MAX 1024

/* One node: a frame name below its parent's. */
struct sptd_query_ftree_node {
	uint32_t parent;         /* SPTD_QUERY_FTREE_NONE for the root (node 0) */
	uint32_t name;           /* index into names */
	uint32_t child;          /* first child, SPTD_QUERY_FTREE_NONE none */
	uint32_t sibling;        /* next child of the parent */
	uint64_t self[SPTD_QUERY_FTREE_SIDES];  /* weight added right here */
	uint64_t total[SPTD_QUERY_FTREE_SIDES]; /* self plus every descendant's
	                          * (after sptd_query_ftree_sum) */
};

/* A tree of stacks; node 0 is the root (all stacks, named "all"). */
struct sptd_query_ftree {
	struct sptd_query_ftree_node *nodes; /* n used, cap allocated */
	size_t n, cap;
	size_t max_nodes;        /* the budget: adding past it is -E2BIG */
	uint32_t *slots;         /* (parent, name) -> node + 1, 0 empty */
	size_t nslots;           /* a power of two */
	struct sptd_query_smap names; /* frame names, interned */
};

/* Start an empty tree of at most @max_nodes nodes (0: the default, 2^21,
 * about 100 MB).  -ENOMEM. */
int sptd_query_ftree_init(struct sptd_query_ftree *s, size_t max_nodes);
/* Free; accepts a zeroed tree. */
void sptd_query_ftree_fini(struct sptd_query_ftree *s);
/* The index of frame name @name (interned).  >= 0 or -ENOMEM. */
int sptd_query_ftree_name(struct sptd_query_ftree *s, const char *name);
/* Add @weight on @side to the stack of @n name indices, outermost first
 * (root excluded).  Returns the leaf's node (>= 0), -ENOMEM, -E2BIG when
 * the node budget is spent, -EINVAL (@side, a name not interned). */
int sptd_query_ftree_add(struct sptd_query_ftree *s, const uint32_t *names, size_t n,
                         int side, uint64_t weight);
/* The child of node @parent named @name, made when missing.  >= 0, or
 * the errors of _add. */
int sptd_query_ftree_child(struct sptd_query_ftree *s, uint32_t parent, uint32_t name);
/* Add @weight on @side right at node @node (saturating). */
void sptd_query_ftree_weigh(struct sptd_query_ftree *s, uint32_t node, int side,
                            uint64_t weight);
/* Fill every node's total (saturating at UINT64_MAX) and sort each
 * node's children by name (byte order), as flamegraph.pl lays them out.
 * 0 or -ENOMEM. */
int sptd_query_ftree_sum(struct sptd_query_ftree *s);

/* ---- building (flame.c) ------------------------------------------------------ */

/* Add the stacks of incident @st to side @side of @t, as @o asks (its
 * weight must be resolved: not AUTO).  Adds to *@total what was added
 * (samples or ns) and to *@cut the stacks that stopped short of a root.
 * 0, or a negative errno with the reason in @err (-EBADMSG: damaged, -E2BIG:
 * more distinct stacks than the tree allows). */
int sptd_query_flame_add(struct sptd_query_ftree *t, struct sptd_store *st, int side,
                         const struct sptd_query_flame_opts *o, uint64_t *total,
                         uint64_t *cut, char *err, size_t errlen);

/* ---- rendering (flame_svg.c) ---------------------------------------------------- */

/* Write summed tree @t as an SVG to @out: side 0 alone, or with @diff the
 * widths of side 1 coloured by the change from side 0 (scaled to side 1's
 * total).  @title and @unit ("samples", "ns") label it.  Returns the frames
 * drawn, or -EIO (writing failed), -ENOMEM. */
int sptd_query_flame_svg(const struct sptd_query_ftree *t, int diff, const char *title,
                         const char *subtitle, const char *unit, FILE *out);

#endif /* SPTD_QUERY_FLAME_LOCAL_H */
