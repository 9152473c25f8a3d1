/* flowtime.c — time placement of one CPU's flow events.
 *
 * libipt's time is that of the last timing packet read, a step function.
 * With coarse timing (no CYC packets: TSC only, one time per PSB+; MTC, one
 * per MTC period) every event between two updates would get the earlier
 * one.  Each event therefore keeps its position in the instruction stream,
 * and once the CPU is decoded, the events of a stretch between two updates
 * are placed between the two times in proportion to the instructions
 * executed (an estimate, never outside the two known times).  In a stretch
 * where tracing stopped (disable, overflow, error) for an unknown time,
 * events up to the stop advance at the average rate of the stretches
 * before, bounded by the next known time and the next context switch on
 * the CPU; events after the stop take the stop's time.  With CYC, libipt's
 * times are cycle-accurate already (and run a packet ahead of the
 * instruction position), so they are kept as they are. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "flow-local.h"

int sptd_dec_tplace_mark(struct sptd_dec_tplace *tp, int64_t ts, uint64_t pos)
{
	if (tp->nsegs == tp->capsegs) {
		size_t cap = tp->capsegs ? tp->capsegs * 2 : 256;
		struct sptd_dec_tseg *n = realloc(tp->segs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		tp->segs = n;
		tp->capsegs = cap;
	}
	tp->segs[tp->nsegs++] = (struct sptd_dec_tseg){ .ts = ts, .pos = pos };
	return 0;
}

/* libipt reads timing packets ahead of events, so stretches that began at
 * this instruction position (a PSB+ after the disable, say) are marked too,
 * back to the one the position lies in.  Only stretches that existed at
 * the stop (the first @nsegs) are touched: replaying a logged stop later
 * gives the same result. */
static void stop_apply(struct sptd_dec_tplace *tp, uint64_t pos, size_t nsegs)
{
	size_t k = nsegs;

	while (k-- > 0) {
		if (!tp->segs[k].stopped || tp->segs[k].stop_pos > pos)
			tp->segs[k].stop_pos = pos;
		tp->segs[k].stopped = 1;
		if (tp->segs[k].pos < pos)
			break;
	}
}

int sptd_dec_tplace_stop(struct sptd_dec_tplace *tp, uint64_t pos)
{
	if (tp->nstops == tp->capstops) {
		size_t cap = tp->capstops ? tp->capstops * 2 : 64;
		struct sptd_dec_tstop *n = realloc(tp->stops, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		tp->stops = n;
		tp->capstops = cap;
	}
	tp->stops[tp->nstops++] = (struct sptd_dec_tstop){ .pos = pos, .nsegs = tp->nsegs };
	stop_apply(tp, pos, tp->nsegs);
	return 0;
}

void sptd_dec_tplace_restop(struct sptd_dec_tplace *tp)
{
	size_t i;

	for (i = 0; i < tp->nsegs; i++) {
		tp->segs[i].stopped = 0;
		tp->segs[i].stop_pos = 0;
	}
	for (i = 0; i < tp->nstops; i++)
		stop_apply(tp, tp->stops[i].pos, tp->stops[i].nsegs);
}

void sptd_dec_tplace_fini(struct sptd_dec_tplace *tp)
{
	if (!tp)
		return;
	free(tp->segs);
	free(tp->stops);
	tp->segs = NULL;
	tp->stops = NULL;
	tp->nsegs = tp->capsegs = tp->nstops = tp->capstops = 0;
}

/* The time events of stretch @k at instruction position @pos are placed at
 * (@rate_num / @rate_den: ns per instruction over the stretches before it
 * that ran without a stop, 0 none yet). */
static int64_t seg_place(const struct sptd_dec_tplace *tp, size_t k, uint64_t pos,
                         int64_t rate_num, uint64_t rate_den,
                         const struct sptd_dec_switch *sw, size_t nsw)
{
	const struct sptd_dec_tseg *a = &tp->segs[k], *b = k + 1 < tp->nsegs ? a + 1 : NULL;
	int64_t bound, t;
	size_t lo, hi;

	if (pos <= a->pos)
		return a->ts;
	if (!a->stopped) {
		/* ran without a stop up to the next time: by instruction count */
		if (!b || b->ts <= a->ts || b->pos <= a->pos || pos >= b->pos)
			return a->ts;
		return a->ts + (int64_t)((unsigned __int128)(b->ts - a->ts) * (pos - a->pos) /
		                         (b->pos - a->pos));
	}
	/* Tracing stopped in it, for an unknown time: up to the stop, at the
	 * average rate of the earlier stretches without one; after the stop (tracing back
	 * on before the next time) no later than the stop.  Never past the
	 * next time, or the next context switch on this CPU. */
	if (!rate_num || !rate_den)
		return a->ts;
	if (pos > a->stop_pos)
		pos = a->stop_pos;
	bound = b ? b->ts : INT64_MAX;
	/* the first switch after the stretch's time (the CPU's switches are
	 * sorted by time) */
	for (lo = 0, hi = nsw; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (sw[mid].ts > a->ts)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < nsw && sw[lo].ts < bound)
		bound = sw[lo].ts;
	if (bound == INT64_MAX || bound <= a->ts)
		return a->ts;
	t = a->ts + (int64_t)((unsigned __int128)(uint64_t)rate_num * (pos - a->pos) / rate_den);
	return t < bound ? t : bound;
}

void sptd_dec_tplace_apply(const struct sptd_dec_tplace *tp, struct sptd_dec_tplace_cursor *cur,
                           struct sptd_dec_flowrec *rec, size_t n,
                           const struct sptd_dec_switch *sw, size_t nsw)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t seg = rec[i].seg;

		if (seg == SIZE_MAX || seg >= tp->nsegs || rec[i].ev.ts != tp->segs[seg].ts)
			continue;
		/* the average rate of the stopless stretches before @seg */
		for (; cur->k < seg && cur->k + 1 < tp->nsegs; cur->k++) {
			const struct sptd_dec_tseg *a = &tp->segs[cur->k], *b = a + 1;

			if (!a->stopped && b->ts > a->ts && b->pos > a->pos) {
				cur->rate_num += b->ts - a->ts;
				cur->rate_den += b->pos - a->pos;
			}
		}
		rec[i].ev.ts = seg_place(tp, seg, rec[i].pos, cur->rate_num, cur->rate_den, sw, nsw);
	}
}

int sptd_dec_trace_has_cyc(const struct pt_config *cfg)
{
	struct pt_packet_decoder *pd = pt_pkt_alloc_decoder(cfg);
	int found = 0, status;

	if (!pd)
		return -ENOMEM;
	while (!found && pt_pkt_sync_forward(pd) >= 0) {
		struct pt_packet pkt;

		while ((status = pt_pkt_next(pd, &pkt, sizeof(pkt))) >= 0) {
			if (pkt.type == ppt_cyc) {
				found = 1;
				break;
			}
		}
		if (status == -pte_eos)
			break;
	}
	pt_pkt_free_decoder(pd);
	return found;
}

void sptd_dec_flows_fix_times(struct sptd_dec_flowrec *rec, size_t n, int saw_time,
                              int64_t first)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!saw_time) {
			rec[i].ev.ts = (int64_t)rec[i].ev.seq;
			rec[i].ev.flags |= SPTD_DEC_F_NO_TIME;
		} else if (rec[i].ev.ts < 0) {
			rec[i].ev.ts = first;
		}
	}
}

/* libipt reads packets ahead of the instructions: by the time it hands out
 * an event its clock (so fs->now, and the stretch of time marked at this
 * instruction position) can be that of timing packets after the event.
 * An asynchronous disable (an interrupt of a user-only trace) is the
 * plain case: the decoder has read on through the MTCs sent while tracing
 * was off, up to the re-enable, so the interrupt took the time it ended
 * and lasted 0 ns (perf and libipt's own event time put it 1-8 us earlier
 * on the hase fixtures).  The event carries its own time, that of the last
 * timing packet before it: when that is earlier, the stretch marked at
 * this very position is lowered to it (never below the one before), with
 * the pending branch and the records already stamped with that stretch;
 * the decoder's later time is marked again at the next read. */
void sptd_dec_flow_event_time(struct sptd_dec_flowstate *fs, const struct pt_event *ev)
{
	struct sptd_dec_tplace *tp = fs->tp;
	struct sptd_dec_flowbuf *fb = &fs->res->flows;
	struct sptd_dec_tseg *last;
	int64_t t, old;
	size_t k, i;

	if (!ev->has_tsc || !fs->has_time || fs->s->cfg.no_timing || !tp->nsegs)
		return;
	k = tp->nsegs - 1;
	last = &tp->segs[k];
	if (last->pos != fs->pos || last->ts != fs->now)
		return;
	t = sptd_dec_tsc_ns(&fs->s->tsc, ev->tsc);
	if (k > 0 && t < tp->segs[k - 1].ts)
		t = tp->segs[k - 1].ts;
	if (t >= last->ts)
		return;
	old = last->ts;
	last->ts = t;
	fs->now = t;
	fs->now_tsc = ev->tsc;
	if (fs->pend_kind && fs->pend_seg == k && fs->pend_ts == old)
		fs->pend_ts = t;
	for (i = fb->n; i-- > 0;) {
		struct sptd_dec_flowrec *rec = sptd_dec_flowbuf_at(fb, i);

		if (rec->seg != k)
			break;
		if (rec->ev.ts == old)
			rec->ev.ts = t;
	}
}
