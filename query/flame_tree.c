/* flame_tree.c — stacks of frame names merged into a weighted tree: a hash
 * of (parent, name) -> node, totals, children sorted by name (flame-local.h
 * says what it is for). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame-local.h"

/* ---- the stack tree ----------------------------------------------------------------- */

#define FTREE_NONE SPTD_QUERY_FTREE_NONE
#define DEFAULT_MAX_NODES ((size_t)1 << 21)

static size_t slot_of(const struct sptd_query_ftree *s, uint32_t parent, uint32_t name)
{
	/* splitmix64's finaliser: every bit of both halves reaches the low
	 * bits the mask keeps */
	uint64_t h = (uint64_t)parent << 32 | name;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (size_t)h & (s->nslots - 1);
}

/* Double the hash and put every node back. */
static int slots_grow(struct sptd_query_ftree *s)
{
	size_t nslots = s->nslots * 2;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	free(s->slots);
	s->slots = slots;
	s->nslots = nslots;
	for (size_t i = 1; i < s->n; i++) {
		size_t at = slot_of(s, s->nodes[i].parent, s->nodes[i].name);

		while (s->slots[at])
			at = (at + 1) & (nslots - 1);
		s->slots[at] = (uint32_t)i + 1;
	}
	return 0;
}

int sptd_query_ftree_init(struct sptd_query_ftree *s, size_t max_nodes)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->max_nodes = max_nodes ? max_nodes : DEFAULT_MAX_NODES;
	s->cap = 1024;
	s->nslots = 2048;
	s->nodes = calloc(s->cap, sizeof(*s->nodes));
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	rc = sptd_query_smap_intern(&s->names, "all");
	if (!s->nodes || !s->slots || rc < 0) {
		sptd_query_ftree_fini(s);
		return -ENOMEM;
	}
	s->nodes[0] = (struct sptd_query_ftree_node){
		.parent = FTREE_NONE, .name = 0, .child = FTREE_NONE,
		.sibling = FTREE_NONE,
	};
	s->n = 1;
	return 0;
}

void sptd_query_ftree_fini(struct sptd_query_ftree *s)
{
	if (!s)
		return;
	free(s->nodes);
	free(s->slots);
	sptd_query_smap_fini(&s->names);
	memset(s, 0, sizeof(*s));
}

int sptd_query_ftree_name(struct sptd_query_ftree *s, const char *name)
{
	return sptd_query_smap_intern(&s->names, name);
}

int sptd_query_ftree_child(struct sptd_query_ftree *s, uint32_t parent, uint32_t name)
{
	size_t at;
	uint32_t id;

	if (parent >= s->n || name >= s->names.count)
		return -EINVAL;
	at = slot_of(s, parent, name);
	while (s->slots[at]) {
		id = s->slots[at] - 1;
		if (s->nodes[id].parent == parent && s->nodes[id].name == name)
			return (int)id;
		at = (at + 1) & (s->nslots - 1);
	}
	if (s->n >= s->max_nodes)
		return -E2BIG;
	if (s->n == s->cap) {
		struct sptd_query_ftree_node *g = realloc(s->nodes, 2 * s->cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		s->nodes = g;
		s->cap *= 2;
	}
	id = (uint32_t)s->n++;
	s->nodes[id] = (struct sptd_query_ftree_node){
		.parent = parent, .name = name, .child = FTREE_NONE,
		.sibling = s->nodes[parent].child,
	};
	s->nodes[parent].child = id;
	s->slots[at] = id + 1;
	if (s->n * 2 > s->nslots) {
		int rc = slots_grow(s);

		if (rc < 0)
			return rc;
	}
	return (int)id;
}

void sptd_query_ftree_weigh(struct sptd_query_ftree *s, uint32_t node, int side,
                             uint64_t weight)
{
	uint64_t *w = &s->nodes[node].self[side];

	*w = *w > UINT64_MAX - weight ? UINT64_MAX : *w + weight;
}

int sptd_query_ftree_add(struct sptd_query_ftree *s, const uint32_t *names, size_t n,
                          int side, uint64_t weight)
{
	uint32_t node = 0;

	if (side < 0 || side >= SPTD_QUERY_FTREE_SIDES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int rc = sptd_query_ftree_child(s, node, names[i]);

		if (rc < 0)
			return rc;
		node = (uint32_t)rc;
	}
	sptd_query_ftree_weigh(s, node, side, weight);
	return (int)node;
}

/* The tree whose children sort_children() orders (qsort has no context). */
static const struct sptd_query_ftree *sorting;

static int name_cmp(const void *a, const void *b)
{
	const struct sptd_query_ftree_node *x = &sorting->nodes[*(const uint32_t *)a];
	const struct sptd_query_ftree_node *y = &sorting->nodes[*(const uint32_t *)b];

	return strcmp(sorting->names.strs[x->name], sorting->names.strs[y->name]);
}

/* Relink each node's children in name order (one buffer of all nodes). */
static void sort_children(struct sptd_query_ftree *s, uint32_t *buf)
{
	sorting = s;
	for (size_t p = 0; p < s->n; p++) {
		size_t k = 0;

		for (uint32_t c = s->nodes[p].child; c != FTREE_NONE; c = s->nodes[c].sibling)
			buf[k++] = c;
		if (k < 2)
			continue;
		qsort(buf, k, sizeof(*buf), name_cmp);
		s->nodes[p].child = buf[0];
		for (size_t i = 0; i + 1 < k; i++)
			s->nodes[buf[i]].sibling = buf[i + 1];
		s->nodes[buf[k - 1]].sibling = FTREE_NONE;
	}
	sorting = NULL;
}

int sptd_query_ftree_sum(struct sptd_query_ftree *s)
{
	uint32_t *buf = malloc(s->n * sizeof(*buf));

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		memcpy(s->nodes[i].total, s->nodes[i].self, sizeof(s->nodes[i].total));
	/* a child is always made after its parent: adding from the last node
	 * back gives each parent its children's finished totals */
	for (size_t i = s->n; i-- > 1;) {
		struct sptd_query_ftree_node *c = &s->nodes[i], *p = &s->nodes[c->parent];

		for (int k = 0; k < SPTD_QUERY_FTREE_SIDES; k++)
			p->total[k] = p->total[k] > UINT64_MAX - c->total[k] ? UINT64_MAX :
			              p->total[k] + c->total[k];
	}
	sort_children(s, buf);
	free(buf);
	return 0;
}
