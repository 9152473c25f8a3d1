/* derive_samples.c — sample and callsite rows from raw_sample, resolved
 * with the raw_mmap and symbol rows written at capture time.
 *
 * Call chains are split at SPTD_PERF_CONTEXT_* markers (kernel frames first,
 * then user frames, innermost first within each); every ip is resolved
 * through its process's mappings (kernel ips through the pid -1 mapping)
 * to the symbol containing it.  Stacks are stored outermost caller first
 * (depth 0), with identical prefixes shared: a frame is interned by
 * (parent, symbol) when resolved and by (parent, ip) when not, so one
 * function is one node under a given caller no matter where in it the
 * sample hit.  callsite.addr is the symbol's start (dso address space) when
 * resolved, else the raw ip. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "derive-local.h"
#include "sptd_store.h"

/* Addresses at or above this are the kernel's. */
#define DERIVE_KERNEL_START 0xffff800000000000ull

struct derive_map {
	int pid;                 /* -1 for the kernel */
	uint64_t start, end;     /* [start, end) */
	int64_t dso_id;          /* dso.id */
	int64_t bias;            /* runtime = dso address + bias */
};

struct derive_sym {
	int64_t id, dso_id;      /* symbol.id, symbol.dso_id */
	uint64_t addr, size;     /* dso address space; size 0 unknown */
};

/* One interned callsite. */
struct derive_node {
	int64_t parent, symbol;  /* parent id (-1 root), symbol id (-1 unresolved) */
	uint64_t addr;           /* raw ip when unresolved, else 0 */
	int64_t id;              /* callsite.id; 0 marks an empty slot */
};

struct derive {
	struct sptd_store *st;   /* borrowed */
	struct derive_map *maps; /* sorted by pid, start */
	size_t nmaps;
	struct derive_sym *syms; /* sorted by dso_id, addr */
	size_t nsyms;
	struct derive_node *nodes; /* open-addressing table */
	size_t slots, nnodes;    /* table size (power of two) / used */
	int64_t next_id;         /* next callsite id */
};

static int map_cmp(const void *a, const void *b)
{
	const struct derive_map *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct derive_sym *x = a, *y = b;

	if (x->dso_id != y->dso_id)
		return x->dso_id < y->dso_id ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_maps(struct derive *d)
{
	struct sptd_store_stmt *q = NULL;
	size_t cap = 0;
	int ret;

	ret = sptd_store_prepare(d->st, "SELECT pid, start, end, dso_id, bias FROM raw_mmap", &q);
	if (ret < 0)
		return ret;
	while ((ret = sptd_store_step(q)) == 1) {
		if (d->nmaps == cap) {
			struct derive_map *n;

			cap = cap ? cap * 2 : 256;
			n = realloc(d->maps, cap * sizeof(*n));
			if (!n) {
				ret = -ENOMEM;
				break;
			}
			d->maps = n;
		}
		d->maps[d->nmaps++] = (struct derive_map){
			.pid = (int)sptd_store_column_int(q, 0),
			.start = (uint64_t)sptd_store_column_int(q, 1),
			.end = (uint64_t)sptd_store_column_int(q, 2),
			.dso_id = sptd_store_column_int(q, 3),
			.bias = sptd_store_column_int(q, 4),
		};
	}
	sptd_store_finalize(q);
	if (ret < 0)
		return ret;
	if (d->nmaps)
		qsort(d->maps, d->nmaps, sizeof(*d->maps), map_cmp);
	return 0;
}

static int load_syms(struct derive *d)
{
	struct sptd_store_stmt *q = NULL;
	size_t cap = 0;
	int ret;

	ret = sptd_store_prepare(d->st, "SELECT id, dso_id, addr, size FROM symbol", &q);
	if (ret < 0)
		return ret;
	while ((ret = sptd_store_step(q)) == 1) {
		if (d->nsyms == cap) {
			struct derive_sym *n;

			cap = cap ? cap * 2 : 1024;
			n = realloc(d->syms, cap * sizeof(*n));
			if (!n) {
				ret = -ENOMEM;
				break;
			}
			d->syms = n;
		}
		d->syms[d->nsyms++] = (struct derive_sym){
			.id = sptd_store_column_int(q, 0),
			.dso_id = sptd_store_column_int(q, 1),
			.addr = (uint64_t)sptd_store_column_int(q, 2),
			.size = (uint64_t)sptd_store_column_int(q, 3),
		};
	}
	sptd_store_finalize(q);
	if (ret < 0)
		return ret;
	if (d->nsyms)
		qsort(d->syms, d->nsyms, sizeof(*d->syms), sym_cmp);
	return 0;
}

/* The mapping of @pid containing @ip, or NULL. */
static const struct derive_map *find_map(const struct derive *d, int pid, uint64_t ip)
{
	size_t lo = 0, hi = d->nmaps;

	/* first mapping ordered after (pid, ip) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct derive_map *m = &d->maps[mid];

		if (m->pid < pid || (m->pid == pid && m->start <= ip))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && d->maps[lo - 1].pid == pid && ip < d->maps[lo - 1].end &&
	    ip >= d->maps[lo - 1].start)
		return &d->maps[lo - 1];
	return NULL;
}

/* Symbol id containing @ip in @pid's address space (kernel ips: pid -1),
 * -1 when unknown; *start gets the symbol's dso address. */
static int64_t resolve(const struct derive *d, int pid, uint64_t ip, int kernel,
                       uint64_t *start)
{
	const struct derive_map *m;
	uint64_t a;
	size_t lo = 0, hi = d->nsyms;

	if (kernel || ip >= DERIVE_KERNEL_START)
		pid = -1;
	m = find_map(d, pid, ip);
	if (!m)
		return -1;
	a = ip - (uint64_t)m->bias;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct derive_sym *s = &d->syms[mid];

		if (s->dso_id < m->dso_id || (s->dso_id == m->dso_id && s->addr <= a))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	{
		const struct derive_sym *s = &d->syms[lo - 1];

		/* size 0: the capture stored it for an address it contains */
		if (s->dso_id != m->dso_id || (s->size && a - s->addr >= s->size))
			return -1;
		*start = s->addr;
		return s->id;
	}
}

static uint64_t node_hash(int64_t parent, int64_t symbol, uint64_t addr)
{
	uint64_t h = (uint64_t)parent * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)symbol + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
	h ^= addr + 0xc2b2ae3d27d4eb4full + (h << 6) + (h >> 2);
	h ^= h >> 31;
	return h * 0xff51afd7ed558ccdull;
}

static int nodes_grow(struct derive *d)
{
	size_t slots = d->slots ? d->slots * 2 : 4096, i;
	struct derive_node *old = d->nodes, *n = calloc(slots, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < d->slots; i++) {
		size_t j;

		if (!old[i].id)
			continue;
		j = node_hash(old[i].parent, old[i].symbol, old[i].addr) & (slots - 1);
		while (n[j].id)
			j = (j + 1) & (slots - 1);
		n[j] = old[i];
	}
	free(old);
	d->nodes = n;
	d->slots = slots;
	return 0;
}

/* The callsite id of frame (@parent, @symbol or @ip) at @depth, adding the
 * row if new. */
static int64_t intern(struct derive *d, int64_t parent, int depth, int64_t symbol,
                      uint64_t sym_start, uint64_t ip)
{
	uint64_t key_addr = symbol >= 0 ? 0 : ip;
	size_t i;
	int ret;

	if (d->nnodes * 2 >= d->slots && (ret = nodes_grow(d)) < 0)
		return ret;
	i = node_hash(parent, symbol, key_addr) & (d->slots - 1);
	while (d->nodes[i].id) {
		const struct derive_node *n = &d->nodes[i];

		if (n->parent == parent && n->symbol == symbol && n->addr == key_addr)
			return n->id;
		i = (i + 1) & (d->slots - 1);
	}
	ret = sptd_store_callsite_add(d->st, d->next_id, parent, depth, symbol,
	                              symbol >= 0 ? sym_start : ip);
	if (ret < 0)
		return ret;
	d->nodes[i] = (struct derive_node){
		.parent = parent, .symbol = symbol, .addr = key_addr, .id = d->next_id,
	};
	d->nnodes++;
	return d->next_id++;
}

/* One raw_sample row: its callsite chain, then its sample row. */
static int derive_one(struct derive *d, struct sptd_col_tasks *tasks, int64_t ts,
                      int cpu, int pid, int tid, const uint64_t *chain, size_t nr)
{
	int64_t parent = -1, utid;
	int depth = 0, kernel = 0, frames = 0;
	size_t i;
	int ret;

	/* Which context each entry is in: markers precede their frames, so
	 * walk forward to learn contexts, then build outermost first. */
	unsigned char *ctx = malloc(nr ? nr : 1);

	if (!ctx)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		if (chain[i] >= SPTD_PERF_CONTEXT_MAX) {
			kernel = chain[i] == SPTD_PERF_CONTEXT_KERNEL ||
			         chain[i] == SPTD_PERF_CONTEXT_GUEST_KERNEL;
			ctx[i] = 2;
		} else {
			ctx[i] = (unsigned char)kernel;
		}
	}
	for (i = nr; i > 0; i--) {
		uint64_t ip = chain[i - 1], start = 0;
		int64_t sym, id;

		if (ctx[i - 1] == 2)
			continue;
		sym = resolve(d, pid, ip, ctx[i - 1], &start);
		id = intern(d, parent, depth, sym, start, ip);
		if (id < 0) {
			free(ctx);
			return (int)id;
		}
		parent = id;
		depth++;
		frames++;
	}
	free(ctx);
	if (!frames)
		return 0; /* nothing to attribute the sample to */
	/* perf reports tid -1 for a sample in a task already past exit:
	 * keep the sample, with no thread */
	if (tid < 0)
		return sptd_store_sample_add(d->st, ts, cpu, -1, parent);
	ret = sptd_col_tasks_note(tasks, tid, pid, NULL, NULL);
	if (ret < 0)
		return ret;
	utid = sptd_col_tasks_utid(tasks, tid);
	if (utid < 0)
		return (int)utid;
	return sptd_store_sample_add(d->st, ts, cpu, utid, parent);
}

int sptd_col_derive_samples(struct sptd_store *st, struct sptd_col_tasks *tasks)
{
	struct derive d = { .st = st, .next_id = 1 };
	struct sptd_store_stmt *q = NULL;
	uint64_t *chain = NULL;
	size_t chain_cap = 0;
	int ret;

	if (!st || !tasks)
		return -EINVAL;
	ret = sptd_store_table_clear(st, "sample");
	if (ret >= 0)
		ret = sptd_store_table_clear(st, "callsite");
	if (ret >= 0)
		ret = load_maps(&d);
	if (ret >= 0)
		ret = load_syms(&d);
	if (ret >= 0)
		ret = sptd_store_prepare(st, "SELECT ts, cpu, pid, tid, callchain FROM raw_sample "
		                         "ORDER BY ts", &q);
	if (ret < 0)
		goto out;
	while ((ret = sptd_store_step(q)) == 1) {
		size_t len = 0, nr;
		const void *blob = sptd_store_column_blob(q, 4, &len);

		nr = len / sizeof(uint64_t);
		if (nr > chain_cap) {
			uint64_t *n = realloc(chain, nr * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				goto out;
			}
			chain = n;
			chain_cap = nr;
		}
		/* stored little-endian; x86-64 and arm64 hosts are too, but
		 * decode byte by byte so a big-endian reader gets it right */
		for (size_t i = 0; i < nr; i++) {
			const unsigned char *b = (const unsigned char *)blob + i * 8;
			uint64_t v = 0;

			for (int k = 7; k >= 0; k--)
				v = (v << 8) | b[k];
			chain[i] = v;
		}
		ret = derive_one(&d, tasks, sptd_store_column_int(q, 0),
		                 (int)sptd_store_column_int(q, 1), (int)sptd_store_column_int(q, 2),
		                 (int)sptd_store_column_int(q, 3), chain, nr);
		if (ret < 0)
			goto out;
	}
out:
	sptd_store_finalize(q);
	free(chain);
	free(d.maps);
	free(d.syms);
	free(d.nodes);
	return ret < 0 ? ret : 0;
}
