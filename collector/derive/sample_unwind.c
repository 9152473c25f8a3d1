/* sample_unwind.c — --call-graph dwarf: each sample's copied user
 * registers and stack unwound (decode/unwind.c) with files the caller
 * proves to be the mapped ones: at capture time the descriptors the
 * symbolizer reads (symcap: sptd_col_symcache_locate), at `sysptd decode`
 * the recorded files found by build-id (derive_unwind.c).  Kernel frames
 * keep the kernel's call chain; the user part becomes the DWARF one when
 * that has more frames than the stored chain gave.
 *
 * One libdw session per process, kept for the capture or decode (its
 * files are read once), at most UNWIND_PROCS of them at a time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_col_derive.h"
#include "sptd_col_perf.h"
#include "sptd_dec.h"

/* Processes whose unwinders (and their open files) are kept at once. */
#define UNWIND_PROCS 16

struct unwind_proc {
	int pid;                    /* 0: free */
	struct sptd_dec_unwind *u;  /* its unwinder */
	uint64_t used;              /* last use (for eviction) */
};

struct sptd_col_unwinders {
	sptd_col_unwind_find_fn find; /* the mappings and their files */
	void *find_ctx;             /* its context; borrowed */
	int cur_pid;                /* the process being unwound (find_map) */
	int64_t cur_ts;             /* the time of the sample being unwound */
	struct unwind_proc procs[UNWIND_PROCS];
	uint64_t clock;             /* use counter */
	uint64_t dwarf[SPTD_DEC_UNWIND_MAX_FRAMES]; /* one unwind's frames */
	uint64_t *chain;            /* the merged chain (grown as needed) */
	size_t chain_cap;           /* entries @chain holds */
	struct sptd_col_unwind_stats stats; /* what was done */
};

/* What sptd_dec_unwind asks of a process: its mapping at @addr. */
static int find_map(void *arg, uint64_t addr, struct sptd_dec_unwind_map *map)
{
	struct sptd_col_unwinders *w = arg;

	return w->find(w->find_ctx, w->cur_pid, w->cur_ts, addr, map);
}

int sptd_col_unwinders_create(sptd_col_unwind_find_fn find, void *ctx,
                              struct sptd_col_unwinders **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!find)
		return -EINVAL;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->find = find;
	(*out)->find_ctx = ctx;
	return 0;
}

/* The unwinder of @pid, made (evicting the least recently used) when new;
 * NULL out of memory. */
static struct sptd_dec_unwind *unwinder_of(struct sptd_col_unwinders *w, int pid)
{
	struct unwind_proc *victim = &w->procs[0];

	for (int i = 0; i < UNWIND_PROCS; i++) {
		struct unwind_proc *p = &w->procs[i];

		if (p->pid == pid) {
			p->used = ++w->clock;
			return p->u;
		}
		if (p->used < victim->used)
			victim = p;
	}
	sptd_dec_unwind_destroy(victim->u);
	*victim = (struct unwind_proc){ 0 };
	if (sptd_dec_unwind_create(pid, find_map, w, &victim->u) < 0)
		return NULL;
	victim->pid = pid;
	victim->used = ++w->clock;
	return victim->u;
}

int sptd_col_unwind_sample(struct sptd_col_unwinders *w, int pid, int64_t ts,
                           const uint64_t *ips, uint64_t nr, const void *ustack,
                           size_t ustack_len, const uint64_t **chain, uint64_t *chain_nr)
{
	struct sptd_dec_ustack us;
	struct sptd_dec_unwind *u;
	uint64_t user_at = nr, fp_user = 0;
	int n;

	if (!w || !chain || !chain_nr || (!ips && nr))
		return -EINVAL;
	*chain = ips;
	*chain_nr = nr;
	if (!ustack || pid <= 0 || sptd_dec_ustack_decode(ustack, ustack_len, &us) < 0)
		return 0;
	w->stats.samples++;
	u = unwinder_of(w, pid);
	if (!u)
		return -ENOMEM;
	w->cur_pid = pid;
	w->cur_ts = ts;
	n = sptd_dec_unwind_run(u, &us, w->dwarf, SPTD_DEC_UNWIND_MAX_FRAMES);
	if (n < 0)
		return n;
	for (uint64_t i = 0; i < nr; i++)
		if (ips[i] == SPTD_PERF_CONTEXT_USER) {
			user_at = i;
			fp_user = nr - i - 1;
			break;
		}
	if (n > 0)
		w->stats.unwound++;
	/* the kernel's walk stays where DWARF knows no more */
	if ((uint64_t)n <= fp_user)
		return 0;
	if (user_at + 1 + (size_t)n > w->chain_cap) {
		size_t cap = user_at + 1 + (size_t)n;
		uint64_t *more = realloc(w->chain, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		w->chain = more;
		w->chain_cap = cap;
	}
	memcpy(w->chain, ips, user_at * sizeof(*ips));
	w->chain[user_at] = SPTD_PERF_CONTEXT_USER;
	memcpy(w->chain + user_at + 1, w->dwarf, (size_t)n * sizeof(*w->dwarf));
	w->stats.deeper++;
	*chain = w->chain;
	*chain_nr = user_at + 1 + (uint64_t)n;
	return 1;
}

void sptd_col_unwinders_stats(const struct sptd_col_unwinders *w,
                              struct sptd_col_unwind_stats *stats)
{
	if (w && stats)
		*stats = w->stats;
}

void sptd_col_unwinders_destroy(struct sptd_col_unwinders *w)
{
	if (!w)
		return;
	for (int i = 0; i < UNWIND_PROCS; i++)
		sptd_dec_unwind_destroy(w->procs[i].u);
	free(w->chain);
	free(w);
}
