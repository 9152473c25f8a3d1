/* stacks.c — every callsite chain of an incident in memory (sptd_query.h,
 * "stacks"): the callsite rows, and the symbol and dso rows they use,
 * loaded once through the store's readers, so that the exports that
 * aggregate sampled stacks (Perfetto profile packets, pprof, flame graphs)
 * walk stacks in C at array speed.
 *
 * A file is untrusted: a parent link that names no callsite, or one whose
 * depth is not below its child's, ends the chain there (the walk reports
 * it cut); since depth falls at every followed link, no cycle can make a
 * walk loop, and @max bounds a long chain.  Names are kept to
 * SPTD_QUERY_NAME_MAX bytes, so a crafted megabyte-long symbol costs that
 * once, not once per frame. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"
#include "query-local.h"

/* One callsite row. */
struct stack_node {
	int64_t id;             /* callsite.id */
	int64_t depth;          /* as stored */
	int64_t parent_id;      /* as stored, when has_parent */
	uint64_t addr;          /* the pc */
	uint32_t parent;        /* index of the parent, SPTD_QUERY_NONE: none or broken */
	uint32_t sym;           /* index into syms, SPTD_QUERY_NONE none */
	uint8_t has_parent;     /* the row names a parent */
};

/* One symbol a callsite uses. */
struct stack_sym {
	char *name;             /* NULL: no such row, or "[unknown]" */
	int64_t dso_id;         /* its dso row */
	uint32_t dso;           /* index into dsos, SPTD_QUERY_NONE none */
	int found;              /* a symbol row was read */
};

/* One dso a used symbol is in. */
struct stack_dso {
	char *path;             /* NULL: no such row */
	char *build_id;         /* hex, NULL none */
};

struct sptd_query_stacks {
	struct stack_node *nodes;       /* callsite rows by id */
	uint32_t n, cap;                /* used, allocated */
	struct stack_sym *syms;         /* symbols used */
	uint32_t nsyms, syms_cap;
	struct stack_dso *dsos;         /* dsos of the symbols used */
	uint32_t ndsos, dsos_cap;
	struct sptd_query_imap by_id;   /* callsite id -> node index + 1 */
	struct sptd_query_imap sym_of;  /* symbol id -> sym index + 1 */
	struct sptd_query_imap dso_of;  /* dso id -> dso index + 1 */
	int err;                        /* a loader callback's failure */
};

/* Grow *@arr (of @size-byte elements, *@cap of them) to hold @want. */
static int grow(void **arr, uint32_t *cap, uint32_t want, size_t size)
{
	uint32_t n = *cap ? *cap : 64;
	void *p;

	if (want <= *cap)
		return 0;
	if (want >= UINT32_MAX / 2)
		return -E2BIG;
	while (n < want)
		n *= 2;
	p = realloc(*arr, (size_t)n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/* A copy of @s cut at SPTD_QUERY_NAME_MAX bytes (NULL for NULL); *@rc
 * -ENOMEM when out of memory. */
static char *name_dup(const char *s, int *rc)
{
	char *d;

	if (!s)
		return NULL;
	d = strndup(s, SPTD_QUERY_NAME_MAX);
	if (!d)
		*rc = -ENOMEM;
	return d;
}

static int add_callsite(void *ctx, const struct sptd_store_frame_row *row)
{
	struct sptd_query_stacks *s = ctx;
	struct stack_node *node;
	int rc;

	if ((rc = grow((void **)&s->nodes, &s->cap, s->n + 1, sizeof(*s->nodes))) < 0)
		return s->err = rc;
	node = &s->nodes[s->n];
	memset(node, 0, sizeof(*node));
	node->id = row->id;
	node->depth = row->depth;
	node->parent_id = row->parent_id;
	node->has_parent = (uint8_t)row->has_parent;
	node->addr = row->addr;
	node->parent = SPTD_QUERY_NONE;
	node->sym = SPTD_QUERY_NONE;
	if (row->has_symbol) {
		uint64_t sym = sptd_query_imap_get(&s->sym_of, row->symbol_id);

		if (!sym) {
			if ((rc = grow((void **)&s->syms, &s->syms_cap, s->nsyms + 1,
			               sizeof(*s->syms))) < 0 ||
			    (rc = sptd_query_imap_put(&s->sym_of, row->symbol_id, s->nsyms + 1)) < 0)
				return s->err = rc;
			memset(&s->syms[s->nsyms], 0, sizeof(s->syms[0]));
			s->syms[s->nsyms].dso = SPTD_QUERY_NONE;
			sym = ++s->nsyms;
		}
		node->sym = (uint32_t)(sym - 1);
	}
	if ((rc = sptd_query_imap_put(&s->by_id, row->id, s->n + 1)) < 0)
		return s->err = rc;
	s->n++;
	return 0;
}

static int add_symbol(void *ctx, const struct sptd_store_symbol_row *row)
{
	struct sptd_query_stacks *s = ctx;
	uint64_t at = sptd_query_imap_get(&s->sym_of, row->id);
	struct stack_sym *sym;
	int rc = 0;

	if (!at || s->syms[at - 1].found)
		return 0;
	sym = &s->syms[at - 1];
	sym->found = 1;
	sym->dso_id = row->dso_id;
	if (row->name && strcmp(row->name, "[unknown]") != 0 &&
	    !(sym->name = name_dup(row->name, &rc)))
		return s->err = rc;
	if (!sptd_query_imap_get(&s->dso_of, row->dso_id)) {
		if ((rc = grow((void **)&s->dsos, &s->dsos_cap, s->ndsos + 1, sizeof(*s->dsos))) < 0 ||
		    (rc = sptd_query_imap_put(&s->dso_of, row->dso_id, s->ndsos + 1)) < 0)
			return s->err = rc;
		memset(&s->dsos[s->ndsos++], 0, sizeof(s->dsos[0]));
	}
	sym->dso = (uint32_t)(sptd_query_imap_get(&s->dso_of, row->dso_id) - 1);
	return 0;
}

static int add_dso(void *ctx, const struct sptd_store_dso_row *row)
{
	struct sptd_query_stacks *s = ctx;
	uint64_t at = sptd_query_imap_get(&s->dso_of, row->id);
	struct stack_dso *dso;
	int rc = 0;

	if (!at || s->dsos[at - 1].path)
		return 0;
	dso = &s->dsos[at - 1];
	if (!(dso->path = name_dup(row->path ? row->path : "[unknown]", &rc)) ||
	    (row->build_id && !(dso->build_id = name_dup(row->build_id, &rc))))
		return s->err = rc;
	return 0;
}

/* Parent links: a parent that is a callsite and shallower than its child. */
static void link_parents(struct sptd_query_stacks *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		struct stack_node *node = &s->nodes[i];
		uint64_t at;

		if (!node->has_parent)
			continue;
		at = sptd_query_imap_get(&s->by_id, node->parent_id);
		if (at && s->nodes[at - 1].depth < node->depth)
			node->parent = (uint32_t)(at - 1);
	}
}

int sptd_query_stacks_load(struct sptd_store *st, struct sptd_query_stacks **out,
                           char *err, size_t errlen)
{
	struct sptd_query_stacks *s;
	const char *what = "callsite";
	int rc;

	if (!st || !out)
		return sptd_query_err(err, errlen, -EINVAL, "stacks: %s is NULL",
		                      !st ? "the incident" : "out");
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return sptd_query_err(err, errlen, -ENOMEM, "out of memory");
	rc = SPTD_STORE_EACH(st, frame, add_callsite, s);
	if (rc >= 0) {
		what = "symbol";
		rc = SPTD_STORE_EACH(st, symbol, add_symbol, s);
	}
	if (rc >= 0) {
		what = "dso";
		rc = SPTD_STORE_EACH(st, dso, add_dso, s);
	}
	if (rc < 0) {
		if (s->err == -ENOMEM || rc == -ENOMEM)
			sptd_query_err(err, errlen, -ENOMEM, "out of memory reading %s", what);
		else if (s->err)
			sptd_query_err(err, errlen, s->err, "reading %s: %s", what, strerror(-s->err));
		else
			sptd_query_err(err, errlen, rc == -EIO ? -EBADMSG : rc, "cannot read %s: %s",
			               what, sptd_store_errmsg(st));
		rc = s->err ? s->err : rc == -EIO ? -EBADMSG : rc;
		sptd_query_stacks_destroy(s);
		return rc;
	}
	link_parents(s);
	*out = s;
	return 0;
}

void sptd_query_stacks_destroy(struct sptd_query_stacks *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nsyms; i++)
		free(s->syms[i].name);
	for (uint32_t i = 0; i < s->ndsos; i++) {
		free(s->dsos[i].path);
		free(s->dsos[i].build_id);
	}
	free(s->nodes);
	free(s->syms);
	free(s->dsos);
	sptd_query_imap_fini(&s->by_id);
	sptd_query_imap_fini(&s->sym_of);
	sptd_query_imap_fini(&s->dso_of);
	free(s);
}

uint32_t sptd_query_stacks_count(const struct sptd_query_stacks *s)
{
	return s ? s->n : 0;
}

uint32_t sptd_query_stacks_nsyms(const struct sptd_query_stacks *s)
{
	return s ? s->nsyms : 0;
}

uint32_t sptd_query_stacks_ndsos(const struct sptd_query_stacks *s)
{
	return s ? s->ndsos : 0;
}

uint32_t sptd_query_stacks_find(const struct sptd_query_stacks *s, int64_t callsite)
{
	uint64_t at = s ? sptd_query_imap_get(&s->by_id, callsite) : 0;

	return at ? (uint32_t)(at - 1) : SPTD_QUERY_NONE;
}

int sptd_query_stacks_walk(const struct sptd_query_stacks *s, uint32_t leaf,
                           struct sptd_query_frame *frames, size_t max, int *cut)
{
	uint32_t at = leaf;
	size_t n = 0;

	if (!s || !frames || !cut || !max || leaf >= s->n)
		return -EINVAL;
	*cut = 0;
	for (;;) {
		const struct stack_node *node = &s->nodes[at];
		const struct stack_sym *sym = node->sym != SPTD_QUERY_NONE ? &s->syms[node->sym] : NULL;
		const struct stack_dso *dso = sym && sym->dso != SPTD_QUERY_NONE
		                              ? &s->dsos[sym->dso] : NULL;
		struct sptd_query_frame *f = &frames[n++];

		f->callsite = node->id;
		f->addr = node->addr;
		f->symbol = sym ? sym->name : NULL;
		f->dso = dso ? dso->path : NULL;
		f->build_id = dso ? dso->build_id : NULL;
		f->node = at;
		f->sym = sym && sym->name ? node->sym : SPTD_QUERY_NONE;
		f->dso_index = dso && dso->path ? sym->dso : SPTD_QUERY_NONE;
		if (!node->has_parent)
			break;
		if (node->parent == SPTD_QUERY_NONE || n == max) {
			*cut = 1;
			break;
		}
		at = node->parent;
	}
	return (int)(n > INT32_MAX ? INT32_MAX : n);
}
