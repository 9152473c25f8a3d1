/* textpoke.c — kernel code as it was at a given time, from the copy taken
 * at capture and the TEXT_POKE records of the kernel's rewrites.
 *
 * The kernel text is copied out of /proc/kcore after the freeze; static
 * keys, ftrace and kprobes rewrite it at run time (text_poke_bp), and
 * every rewrite is a PERF_RECORD_TEXT_POKE stamped once the new bytes are
 * in place (kernel/events/core.c perf_event_text_poke, called after the
 * write).  So the copy holds every poke up to the copy; trace from before
 * a poke ran the old bytes, trace from its time on the new. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_dec.h"

/* A poke to undo, in time order (index breaks ties: later is newer). */
struct poke_ref {
	int64_t ts;
	size_t i;
};

static int poke_newest_first(const void *a, const void *b)
{
	const struct poke_ref *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? 1 : -1;
	return x->i < y->i ? 1 : x->i > y->i ? -1 : 0;
}

/* Put @p's old bytes back where they meet [@addr, @addr + @len); 1 when
 * @p touched that range at all. */
static int poke_undo(uint8_t *code, size_t len, uint64_t addr, const struct sptd_dec_text_poke *p)
{
	uint64_t span = p->old_len > p->new_len ? p->old_len : p->new_len;
	uint64_t lo, hi;

	if (p->addr >= addr + len || p->addr + span <= addr)
		return 0;
	/* the bytes the old code had; beyond old_len (code added) there was
	 * nothing the trace could have run */
	lo = p->addr > addr ? p->addr : addr;
	hi = p->addr + p->old_len < addr + len ? p->addr + p->old_len : addr + len;
	if (lo < hi)
		memcpy(code + (lo - addr), p->old_bytes + (lo - p->addr), (size_t)(hi - lo));
	return 1;
}

int sptd_dec_text_as_of(uint8_t *code, size_t len, uint64_t addr, int64_t copy_ts, int64_t ts,
                        const struct sptd_dec_text_poke *pokes, size_t npokes)
{
	struct poke_ref *undo;
	size_t n = 0;
	int undone = 0;

	if (!code || !len || addr > UINT64_MAX - len || (!pokes && npokes))
		return -EINVAL;
	for (size_t i = 0; i < npokes; i++)
		if ((!pokes[i].old_bytes && pokes[i].old_len) ||
		    pokes[i].addr > UINT64_MAX - (pokes[i].old_len > pokes[i].new_len ?
		                                  pokes[i].old_len : pokes[i].new_len))
			return -EINVAL;
	if (ts >= copy_ts || !npokes)
		return 0;
	undo = malloc(npokes * sizeof(*undo));
	if (!undo)
		return -ENOMEM;
	/* in the copy, and after @ts: undone, newest first */
	for (size_t i = 0; i < npokes; i++)
		if (pokes[i].ts > ts && pokes[i].ts <= copy_ts)
			undo[n++] = (struct poke_ref){ pokes[i].ts, i };
	qsort(undo, n, sizeof(*undo), poke_newest_first);
	for (size_t k = 0; k < n; k++)
		undone += poke_undo(code, len, addr, &pokes[undo[k].i]);
	free(undo);
	return undone;
}
