/* derive_samples.c — sample and callsite rows from raw_sample, resolved
 * with the raw_mmap and symbol rows written at capture time.
 *
 * Call chains are split at SPTD_PERF_CONTEXT_* markers (kernel frames first,
 * then user frames, innermost first within each); every ip is resolved
 * through its process's mappings (kernel ips through the pid -1 mapping)
 * to the symbol containing it: the mapping in force at the sample's time
 * (raw_mmap.until_ts: a child's samples before its exec are named by its
 * parent's mappings, after it by its own).  Stacks are stored outermost caller first
 * (depth 0), with identical prefixes shared: a frame is interned by
 * (parent, symbol) when resolved and by (parent, ip) when not, so one
 * function is one node under a given caller no matter where in it the
 * sample hit.  callsite.addr is the symbol's start (dso address space) when
 * resolved, else the raw ip.
 *
 * A frame in a known mapping that no symbol covers still names its dso, as
 * perf does ("[unknown]" with the library beside it): it gets a symbol row
 * named "[unknown]" in that dso at the frame's address in the dso's own
 * address space (ip - bias: what addr2line and objdump take), size 0; such
 * rows are reused when the samples are derived again.  Only a frame in no
 * known mapping (JIT code, a process gone before its snapshot) has no
 * symbol.
 *
 * A row with a copied user stack (raw_sample.ustack, --call-graph dwarf)
 * is unwound again (sample_unwind.c) with the files derive_unwind.c proves
 * to be the recorded ones; its DWARF frames replace the stored user part
 * when they are more, as at capture. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "derive-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

/* Addresses at or above this are the kernel's. */
#define DERIVE_KERNEL_START 0xffff800000000000ull

struct derive_map {
	int pid;                 /* -1 for the kernel */
	uint64_t start, end;     /* [start, end) */
	uint64_t pgoff;          /* file offset of @start */
	int64_t dso_id;          /* dso.id */
	int64_t bias;            /* runtime = dso address + bias */
	int64_t until;           /* in force before this time; INT64_MAX: to the end */
	uint64_t reach;          /* the largest end of this pid's mappings up to
	                          * this one (sorted order): where a search for an
	                          * address can stop looking back */
};

struct derive_sym {
	int64_t id, dso_id;      /* symbol.id, symbol.dso_id */
	uint64_t addr, size;     /* dso address space; size 0 unknown */
	int plumbing;            /* the scheduler's or tracing's own function:
	                          * never what a task blocked in */
};

/* An "[unknown]" symbol row: one frame address of a dso without a symbol. */
struct derive_unknown {
	int64_t dso_id;          /* symbol.dso_id */
	uint64_t addr;           /* symbol.addr: the frame, dso address space */
	int64_t id;              /* symbol.id; 0 marks an empty slot */
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
	size_t nmaps, maps_cap;  /* used / allocated */
	struct derive_sym *syms; /* sorted by dso_id, addr */
	size_t nsyms, syms_cap;  /* used / allocated */
	struct derive_node *nodes; /* open-addressing table */
	size_t slots, nnodes;    /* table size (power of two) / used */
	int64_t next_id;         /* next callsite id */
	struct derive_unknown *unknowns; /* open-addressing table of "[unknown]" rows */
	size_t unknown_slots, nunknowns; /* table size (power of two) / used */
	int64_t next_symbol_id;  /* next symbol id, for new "[unknown]" rows */
	int64_t offcpu_linked;   /* off-CPU stacks put on their thread_state row */
	int64_t callsite_budget; /* callsite rows this decode may add
	                          * (SPTD_DERIVE_CALLSITE_BUDGET) */
	uint64_t sched_lo, sched_hi; /* the kernel's __sched text (meta), 0 unknown */
	struct sptd_col_derive_files *files; /* the dsos' proven files, NULL: no
	                          * unwinding (SPTD_DECODE_UNWIND=0) */
	struct sptd_col_unwinders *uw; /* stored user stacks unwound again */
	int no_unwind;               /* the capture unwound them already */
};

/* The name perf gives a frame no symbol covers. */
static const char unknown_name[] = "[unknown]";

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

/* @arr of *@cap elements of @size bytes made twice as big (@first when
 * empty): the new array, *@cap updated; NULL, both as they were, when out
 * of memory. */
static void *grow(void *arr, size_t *cap, size_t first, size_t size)
{
	size_t n = *cap ? *cap * 2 : first;
	void *more = realloc(arr, n * size);

	if (more)
		*cap = n;
	return more;
}

static int on_map(void *arg, const struct sptd_store_raw_mmap_row *row)
{
	struct derive *d = arg;

	if (d->nmaps == d->maps_cap) {
		struct derive_map *more = grow(d->maps, &d->maps_cap, 256, sizeof(*more));

		if (!more)
			return -ENOMEM;
		d->maps = more;
	}
	d->maps[d->nmaps++] = (struct derive_map){
		.pid = row->pid,
		.start = row->start,
		.end = row->end,
		.pgoff = row->pgoff,
		.dso_id = row->dso_id,
		.bias = row->bias,
		.until = row->until_ts > 0 ? row->until_ts : INT64_MAX,
	};
	return 0;
}

static int load_maps(struct derive *d)
{
	int ret = SPTD_STORE_EACH(d->st, raw_mmap, on_map, d);

	if (ret < 0)
		return ret;
	if (d->nmaps)
		qsort(d->maps, d->nmaps, sizeof(*d->maps), map_cmp);
	for (size_t i = 0; i < d->nmaps; i++) {
		struct derive_map *m = &d->maps[i];

		m->reach = i > 0 && m[-1].pid == m->pid && m[-1].reach > m->end ? m[-1].reach : m->end;
	}
	return 0;
}

static uint64_t unknown_hash(int64_t dso_id, uint64_t addr)
{
	uint64_t h = (uint64_t)dso_id * 0x9e3779b97f4a7c15ull ^ addr;

	h ^= h >> 31;
	return h * 0xff51afd7ed558ccdull;
}

/* The slot of (@dso_id, @addr) in the "[unknown]" table: where it is, or
 * the empty slot it would take (the table has room). */
static size_t unknown_slot(const struct derive *d, int64_t dso_id, uint64_t addr)
{
	size_t i = unknown_hash(dso_id, addr) & (d->unknown_slots - 1);

	while (d->unknowns[i].id &&
	       (d->unknowns[i].dso_id != dso_id || d->unknowns[i].addr != addr))
		i = (i + 1) & (d->unknown_slots - 1);
	return i;
}

/* Make room for one more "[unknown]" row. */
static int unknowns_reserve(struct derive *d)
{
	size_t slots, i;
	struct derive_unknown *old = d->unknowns, *n;

	if ((d->nunknowns + 1) * 2 <= d->unknown_slots)
		return 0;
	slots = d->unknown_slots ? d->unknown_slots * 2 : 1024;
	n = calloc(slots, sizeof(*n));
	if (!n)
		return -ENOMEM;
	d->unknowns = n;
	d->unknown_slots = slots;
	for (i = 0; i < slots / 2; i++)
		if (old && old[i].id)
			d->unknowns[unknown_slot(d, old[i].dso_id, old[i].addr)] = old[i];
	free(old);
	return 0;
}

/* The "[unknown]" symbol row of the frame at @addr of dso @dso_id: the one
 * stored already, or a new one. */
static int64_t unknown_symbol(struct derive *d, int64_t dso_id, uint64_t addr)
{
	size_t i;
	int ret = unknowns_reserve(d);

	if (ret < 0)
		return ret;
	i = unknown_slot(d, dso_id, addr);
	if (d->unknowns[i].id)
		return d->unknowns[i].id;
	ret = SPTD_STORE_ADD(d->st, symbol, d->next_symbol_id, unknown_name, dso_id, addr, 0);
	if (ret < 0)
		return ret;
	d->unknowns[i] = (struct derive_unknown){
		.dso_id = dso_id, .addr = addr, .id = d->next_symbol_id,
	};
	d->nunknowns++;
	return d->next_symbol_id++;
}

/* Kernel functions every blocking switch passes through (the switch
 * itself, the tracepoint and perf): the function a task blocked in is the
 * innermost frame that is none of these, as wchan and Perfetto's
 * blocked_function name it ("pipe_read", "do_nanosleep", "futex_wait"). */
static int plumbing(const char *name)
{
	static const char *const prefixes[] = {
		"__schedule", "schedule", "preempt_schedule", "io_schedule", "__cond_resched",
		"_cond_resched", "__traceiter_", "__bpf_trace_", "perf_", "__perf_",
		"trace_event_", "perf_trace_", "context_switch", "finish_task_switch",
		"__switch_to", "__wait_event", "__wait_for_common", "wait_for_common",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static int on_sym(void *arg, const struct sptd_store_symbol_row *row)
{
	struct derive *d = arg;

	/* "[unknown]" rows name a frame, not a function: never a range */
	if (row->name && strcmp(row->name, unknown_name) == 0) {
		size_t i;
		int ret = unknowns_reserve(d);

		if (ret < 0)
			return ret;
		i = unknown_slot(d, row->dso_id, row->addr);
		if (!d->unknowns[i].id) {
			d->unknowns[i] = (struct derive_unknown){
				.dso_id = row->dso_id, .addr = row->addr, .id = row->id,
			};
			d->nunknowns++;
		}
		return 0;
	}
	if (d->nsyms == d->syms_cap) {
		struct derive_sym *more = grow(d->syms, &d->syms_cap, 1024, sizeof(*more));

		if (!more)
			return -ENOMEM;
		d->syms = more;
	}
	d->syms[d->nsyms++] = (struct derive_sym){
		.id = row->id,
		.dso_id = row->dso_id,
		.addr = row->addr,
		.size = row->size,
		.plumbing = row->name && plumbing(row->name),
	};
	return 0;
}

static int load_syms(struct derive *d)
{
	int ret = SPTD_STORE_EACH(d->st, symbol, on_sym, d);

	if (ret < 0)
		return ret;
	if (d->nsyms)
		qsort(d->syms, d->nsyms, sizeof(*d->syms), sym_cmp);
	return 0;
}

/* The mapping of @pid containing @ip in force at @ts, or NULL.  Of several
 * (a mapping replaced, a child's before and after its exec), the one that
 * ended first after @ts: the one in force then. */
static const struct derive_map *find_map(const struct derive *d, int pid, uint64_t ip,
                                         int64_t ts)
{
	const struct derive_map *best = NULL;
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
	/* back over the mappings starting at or below ip, while one could
	 * still reach it */
	for (; lo > 0 && d->maps[lo - 1].pid == pid && d->maps[lo - 1].reach > ip; lo--) {
		const struct derive_map *m = &d->maps[lo - 1];

		if (ip < m->end && m->until > ts && (!best || m->until < best->until))
			best = m;
	}
	return best;
}

/* Symbol id containing @ip in @pid's address space at @ts (kernel ips: pid
 * -1), -1 when unknown; *start gets the symbol's dso address.  *@m_out is the
 * mapping of @ip (NULL none), even when no symbol covers it. */
static int64_t resolve(const struct derive *d, int pid, uint64_t ip, int64_t ts, int kernel,
                       uint64_t *start, const struct derive_map **m_out, int *plumb)
{
	const struct derive_map *m;
	uint64_t a;
	size_t lo = 0, hi = d->nsyms;

	if (kernel || ip >= DERIVE_KERNEL_START)
		pid = -1;
	m = find_map(d, pid, ip, ts);
	*m_out = m;
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
		if (plumb)
			*plumb = s->plumbing;
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
	if ((int64_t)d->nnodes >= d->callsite_budget)
		return sptd_store_damaged(d->st, "its call chains hold more than %" PRId64
		                          " distinct frames (128 per raw_sample row and a "
		                          "million more): forged to exhaust memory",
		                          d->callsite_budget);
	ret = SPTD_STORE_ADD(d->st, callsite, d->next_id, parent, depth, symbol,
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
/* The innermost kernel frame of @chain that is not plumbing(): the symbol
 * a switched-out task blocked in, -1 none known. */
static int64_t blocked_symbol(const struct derive *d, int pid, int64_t ts, const uint64_t *chain,
                              size_t nr)
{
	int kernel = 0;

	for (size_t i = 0; i < nr; i++) {
		const struct derive_map *m;
		uint64_t start;
		int64_t sym;
		int plumb = 0;

		if (chain[i] >= SPTD_PERF_CONTEXT_MAX) {
			kernel = chain[i] == SPTD_PERF_CONTEXT_KERNEL;
			continue;
		}
		if (!kernel)
			return -1;
		/* __sched functions (schedule, do_nanosleep, ...): as get_wchan */
		if (d->sched_hi && chain[i] >= d->sched_lo && chain[i] < d->sched_hi)
			continue;
		sym = resolve(d, pid, chain[i], ts, 1, &start, &m, &plumb);
		if (sym >= 0 && !plumb)
			return sym;
	}
	return -1;
}

/* Window around an off-CPU sample in which the sched_switch that began the
 * blocked thread_state row lies: one event seen by perf and by ftrace,
 * whose clocks are read a few microseconds apart. */
#define OFFCPU_SLACK_NS 50000

static int derive_one(struct derive *d, struct sptd_col_tasks *tasks, int64_t ts,
                      int cpu, int pid, int tid, const uint64_t *chain, size_t nr, int kind)
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
		const struct derive_map *m;
		int64_t sym, id;

		if (ctx[i - 1] == 2)
			continue;
		sym = resolve(d, pid, ip, ts, ctx[i - 1], &start, &m, NULL);
		if (sym < 0 && m) {
			start = ip - (uint64_t)m->bias;
			sym = unknown_symbol(d, m->dso_id, start);
			if (sym < 0) {
				free(ctx);
				return (int)sym;
			}
		}
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
	if (kind == SPTD_RAW_SAMPLE_TRIGGER)   /* the break=/watch= hit's stack */
		return sptd_store_meta_set_int(d->st, "trigger_callsite_id", parent);
	/* perf reports tid -1 for a sample in a task already past exit:
	 * keep the sample, with no thread */
	if (tid < 0)
		return kind == SPTD_RAW_SAMPLE_OFFCPU ? 0 : SPTD_STORE_ADD(d->st, sample, ts, cpu, -1, parent);
	ret = sptd_col_tasks_note(tasks, tid, pid, NULL, NULL);
	if (ret < 0)
		return ret;
	utid = sptd_col_tasks_utid(tasks, tid);
	if (utid < 0)
		return (int)utid;
	if (kind == SPTD_RAW_SAMPLE_OFFCPU) {
		/* the stack of a task switched out: on the row its block begins */
		int64_t sym = blocked_symbol(d, pid, ts, chain, nr);

		ret = sptd_store_thread_state_block(d->st, utid, ts,
		                                    ts > INT64_MIN + OFFCPU_SLACK_NS ? ts - OFFCPU_SLACK_NS : ts,
		                                    ts < INT64_MAX - OFFCPU_SLACK_NS ? ts + OFFCPU_SLACK_NS : ts,
		                                    parent, sym);
		if (ret > 0)
			d->offcpu_linked++;
		return ret < 0 ? ret : 0;
	}
	return SPTD_STORE_ADD(d->st, sample, ts, cpu, utid, parent);
}

/* The unwinder's mappings at decode: @pid's raw_mmap row holding @addr at
 * @ts, its dso's file as derive_unwind.c proves it. */
static int unwind_find(void *arg, int pid, int64_t ts, uint64_t addr,
                       struct sptd_dec_unwind_map *map)
{
	struct derive *d = arg;
	const struct derive_map *m = find_map(d, pid, addr, ts);
	int fd;

	map->fd = -1;
	if (!m)
		return -ENOENT;
	map->start = m->start;
	map->end = m->end;
	map->pgoff = m->pgoff;
	fd = sptd_col_derive_files_open(d->files, m->dso_id, &map->name);
	if (fd < 0)
		return -ENOENT;
	map->fd = fd;
	return 0;
}

/* What the raw_sample reader hands derive_one. */
struct samples_ctx {
	struct derive *d;             /* maps, symbols, interned callsites */
	struct sptd_col_tasks *tasks; /* tid -> utid */
};

static int on_sample(void *arg, const struct sptd_store_raw_sample_row *row)
{
	struct samples_ctx *sc = arg;
	const uint64_t *chain = row->callchain;
	uint64_t nr = row->nr;

	/* the stored copy unwound again: its DWARF frames when they are more
	 * than the stored chain's, as at capture */
	if (sc->d->uw && row->ustack) {
		int ret = sptd_col_unwind_sample(sc->d->uw, row->pid, row->ts, row->callchain,
		                                 row->nr, row->ustack, row->ustack_len, &chain, &nr);

		if (ret < 0)
			return ret;
	}
	return derive_one(sc->d, sc->tasks, row->ts, row->cpu, row->pid, row->tid,
	                  chain, (size_t)nr, row->kind);
}

/* Whether stored user stacks are unwound again: unless SPTD_DECODE_UNWIND
 * is "0" (the chains as stored, e.g. to compare). */
static int unwind_wanted(void)
{
	const char *env = getenv("SPTD_DECODE_UNWIND");

	return !env || strcmp(env, "0") != 0;
}

int sptd_col_derive_samples(struct sptd_store *st, struct sptd_col_tasks *tasks)
{
	struct derive d = { .st = st, .next_id = 1 };
	struct samples_ctx sc = { .d = &d, .tasks = tasks };
	int ret;

	if (!st || !tasks)
		return -EINVAL;
	{
		int64_t lo = 0, hi = 0;

		if (sptd_store_meta_get_int(st, "kernel_sched_text_start", &lo) == 0 &&
		    sptd_store_meta_get_int(st, "kernel_sched_text_end", &hi) == 0 &&
		    (uint64_t)hi > (uint64_t)lo) {
			d.sched_lo = (uint64_t)lo;
			d.sched_hi = (uint64_t)hi;
		}
	}
	/* a damaged row is a damaged file, found before any work */
	ret = sptd_col_derive_check_cpus(st, "raw_sample");
	if (ret >= 0)
		ret = sptd_col_derive_check_chains(st);
	if (ret >= 0)
		ret = sptd_store_count(st, SPTD_STORE_T_RAW_SAMPLE, &d.callsite_budget);
	d.callsite_budget = SPTD_DERIVE_CALLSITE_BUDGET(d.callsite_budget);
	if (ret >= 0)
		ret = sptd_store_table_clear(st, "sample");
	if (ret >= 0)
		ret = sptd_store_table_clear(st, "callsite");
	if (ret >= 0)
		ret = load_maps(&d);
	if (ret >= 0)
		ret = load_syms(&d);
	if (ret >= 0)
		ret = sptd_store_next_id(st, SPTD_STORE_T_SYMBOL, &d.next_symbol_id);
	/* a capture that unwound its samples while their processes lived
	 * (meta dwarf_unwind_done, which `sysptd decode` clears) stored the
	 * result in callchain: unwinding again would give the same */
	{
		int64_t done = 0;

		if (sptd_store_meta_get_int(st, "dwarf_unwind_done", &done) < 0)
			done = 0;
		if (done)
			d.no_unwind = 1;
	}
	if (ret >= 0 && !d.no_unwind && unwind_wanted()) {
		ret = sptd_col_derive_files_create(st, &d.files);
		if (ret >= 0)
			ret = sptd_col_unwinders_create(unwind_find, &d, &d.uw);
	}
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, raw_sample, on_sample, &sc);
	if (ret >= 0 && d.uw) {
		struct sptd_col_unwind_stats us;

		sptd_col_unwinders_stats(d.uw, &us);
		if (us.samples)
			ret = sptd_store_meta_set_int(st, "dwarf_decode_unwound", (int64_t)us.unwound);
	}
	sptd_col_unwinders_destroy(d.uw);
	sptd_col_derive_files_destroy(d.files);
	free(d.maps);
	free(d.syms);
	free(d.nodes);
	free(d.unknowns);
	return ret < 0 ? ret : 0;
}
