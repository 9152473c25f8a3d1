/* power.c — what the PT says about the CPU itself: the core:bus ratio
 * (CBR: the frequency), C-state entries and exits (MWAIT, PWRE, PWRX) and
 * the values programs write into the trace (PTWRITE).
 *
 * These packets need no code image to be read, so each CPU's PT is walked
 * once more with libipt's query decoder, answering its branch queries
 * blindly (a TNT bit or a TIP, whichever comes) and taking the events with
 * their time.  This is independent of the flow decode (no stitching: a
 * decode error only skips to the next PSB, where the events resume) and
 * costs a small part of it (a twelfth of phase 1 on a dense trace); each
 * CPU's walk is a unit of phase 1's thread pool, its events kept until
 * phase 1 is done and then handed to the sink in CPU order.
 *
 * Decisions:
 *  - CBR is reported when it changes (every PSB+ repeats it).
 *  - A C-state row runs from its PWRE to the next PWRX of its CPU; a PWRX
 *    whose PWRE was not seen starts at the last point known to be outside a
 *    C-state (where the CPU's data begin, or after an overflow or a decode
 *    error resync) with START_TRUNCATED; a PWRE with no PWRX ends at the
 *    last time seen (END_TRUNCATED), as does one open at an overflow.
 *  - An MWAIT is the requested state of the C-state entered with it: the
 *    one open when libipt reports it (it waits for the FUP that follows
 *    the PWRE), else the next one.
 *  - A PTWRITE belongs to the task the sched timeline has on its CPU. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "dec-local.h"

/* One CPU's walk. */
struct power_walk {
	const struct sptd_dec_session *s;
	struct sptd_dec_power_buf *out; /* where its events go */
	int cpu;
	int64_t now;              /* latest time seen, INT64_MIN none */
	int64_t known_awake;      /* latest time proven outside a C-state */
	int have_cbr;             /* a ratio was reported */
	unsigned cbr;             /* ... that one */
	int cbr_waits;            /* a ratio came before any time: reported
	                           * at the first time known (a PSB+ may hold
	                           * its CBR before its TSC) */
	int mwait;                /* an MWAIT waits for its PWRE */
	int mwait_c, mwait_sub;   /* ... its hint as a C-state */
	int idle_open;            /* a PWRE waits for its PWRX */
	struct sptd_dec_power idle; /* ... what it said */
	size_t swi;               /* next switch of s->switches (by CPU, time) */
	int tid;                  /* task on the CPU by the switches, -1 unknown */
};

/* MWAIT hint / PWRE / PWRX C-state code -> C-state number (15 is C0). */
static int cstate_of(unsigned code)
{
	return (int)((code + 1) & 0xf);
}

static int emit(struct power_walk *w, const struct sptd_dec_power *ev)
{
	struct sptd_dec_power_buf *b = w->out;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct sptd_dec_power *n = realloc(b->ev, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->ev = n;
		b->cap = cap;
	}
	b->ev[b->n++] = *ev;
	return 0;
}

/* The open C-state ends at @end, its exit not seen. */
static int idle_cut(struct power_walk *w, int64_t end)
{
	if (!w->idle_open)
		return 0;
	w->idle_open = 0;
	w->idle.dur = end > w->idle.ts ? end - w->idle.ts : 0;
	w->idle.flags |= SPTD_DEC_F_END_TRUNCATED;
	return emit(w, &w->idle);
}

/* The task on the CPU at @ts by the sched timeline (sorted by CPU, then
 * time; w->swi starts at the CPU's first switch). */
static int task_at(struct power_walk *w, int64_t ts)
{
	const struct sptd_dec_session *s = w->s;

	while (w->swi < s->nswitches && s->switches[w->swi].cpu == w->cpu &&
	       s->switches[w->swi].ts <= ts)
		w->tid = s->switches[w->swi++].next_tid;
	return w->tid;
}

static void power_init(struct power_walk *w, struct sptd_dec_power *p, int64_t ts)
{
	memset(p, 0, sizeof(*p));
	p->cpu = w->cpu;
	p->ts = ts;
	p->tid = -1;
	p->cstate = p->sub_cstate = p->requested = p->requested_sub = p->last = p->deepest = -1;
}

/* The ratio w->cbr from @ts on. */
static int emit_cbr(struct power_walk *w, int64_t ts)
{
	struct sptd_dec_power p;

	power_init(w, &p, ts);
	p.kind = SPTD_DEC_POWER_FREQ;
	p.cbr = w->cbr;
	return emit(w, &p);
}

/* The decoder's time @tsc is known: the latest time seen, and what waited
 * for a time. */
static int time_seen(struct power_walk *w, uint64_t tsc)
{
	int64_t ts = sptd_dec_tsc_ns(&w->s->tsc, tsc);

	if (w->now == INT64_MIN || ts > w->now)
		w->now = ts;
	if (w->known_awake == INT64_MIN)
		w->known_awake = ts;   /* where this CPU's data begin */
	if (w->cbr_waits) {
		w->cbr_waits = 0;
		return emit_cbr(w, w->now);
	}
	return 0;
}

static int on_event(struct power_walk *w, const struct pt_event *ev)
{
	struct sptd_dec_power p;
	int64_t ts;
	int ret;

	if (ev->has_tsc && (ret = time_seen(w, ev->tsc)) < 0)
		return ret;
	ts = w->now;
	if (ts == INT64_MIN && ev->type == ptev_cbr) {
		/* before any time: in effect from where the data begin */
		w->have_cbr = 1;
		w->cbr = ev->variant.cbr.ratio;
		w->cbr_waits = 1;
		return 0;
	}
	if (ts == INT64_MIN && ev->type != ptev_overflow)
		return 0;   /* no time yet: nothing to place */
	power_init(w, &p, ts);
	switch (ev->type) {
	case ptev_cbr:
		if (w->have_cbr && w->cbr == ev->variant.cbr.ratio)
			return 0;
		w->have_cbr = 1;
		w->cbr = ev->variant.cbr.ratio;
		return emit_cbr(w, ts);
	case ptev_mwait: {
		int c = cstate_of((ev->variant.mwait.hints >> 4) & 0xf);
		int sub = (int)(ev->variant.mwait.hints & 0xf);

		/* libipt holds an MWAIT until the FUP after it (EXSTOP's), so
		 * it comes after the PWRE it asked for, which is reported at
		 * once: it belongs to the C-state open since then, if any */
		if (w->idle_open && w->idle.requested < 0) {
			w->idle.requested = c;
			w->idle.requested_sub = sub;
			return 0;
		}
		w->mwait = 1;
		w->mwait_c = c;
		w->mwait_sub = sub;
		return 0;
	}
	case ptev_pwre: {
		ret = idle_cut(w, ts);   /* two entries: the first one's exit was lost */

		if (ret < 0)
			return ret;
		w->idle = p;
		w->idle.kind = SPTD_DEC_POWER_IDLE;
		w->idle.cstate = cstate_of(ev->variant.pwre.state);
		w->idle.sub_cstate = ev->variant.pwre.sub_state;
		w->idle.hw = ev->variant.pwre.hw;
		if (w->mwait) {
			w->idle.requested = w->mwait_c;
			w->idle.requested_sub = w->mwait_sub;
		}
		w->mwait = 0;
		w->idle_open = 1;
		return 0;
	}
	case ptev_pwrx:
		if (!w->idle_open) {
			/* entered before what was seen: from the last point known
			 * to be awake */
			w->idle = p;
			w->idle.kind = SPTD_DEC_POWER_IDLE;
			w->idle.ts = w->known_awake != INT64_MIN && w->known_awake < ts ? w->known_awake
			                                                                 : ts;
			w->idle.flags = SPTD_DEC_F_START_TRUNCATED;
		}
		w->idle_open = 0;
		w->idle.dur = ts - w->idle.ts;
		w->idle.last = cstate_of(ev->variant.pwrx.last);
		w->idle.deepest = cstate_of(ev->variant.pwrx.deepest);
		w->idle.wake = (ev->variant.pwrx.interrupt ? SPTD_DEC_WAKE_INTERRUPT : 0) |
		               (ev->variant.pwrx.store ? SPTD_DEC_WAKE_STORE : 0) |
		               (ev->variant.pwrx.autonomous ? SPTD_DEC_WAKE_AUTONOMOUS : 0);
		w->known_awake = ts;
		return emit(w, &w->idle);
	case ptev_ptwrite:
		p.kind = SPTD_DEC_POWER_PTWRITE;
		p.payload = ev->variant.ptwrite.payload;
		p.size = ev->variant.ptwrite.size;
		p.ip = ev->ip_suppressed ? 0 : ev->variant.ptwrite.ip;
		p.tid = task_at(w, ts);
		w->known_awake = ts;
		return emit(w, &p);
	case ptev_overflow: {
		/* packets were lost: a C-state's exit may be among them */
		ret = ts == INT64_MIN ? 0 : idle_cut(w, ts);

		w->mwait = 0;
		w->known_awake = INT64_MIN;
		return ret;
	}
	default:
		if (ev->type == ptev_enabled || ev->type == ptev_async_branch)
			w->known_awake = ts;   /* code runs: not in a C-state */
		return 0;
	}
}

int sptd_dec_power_collect(const struct sptd_dec_session *s, int cpu,
                           struct sptd_dec_power_buf *out)
{
	struct power_walk w = { .s = s, .out = out, .cpu = cpu, .now = INT64_MIN,
	                        .known_awake = INT64_MIN, .tid = -1 };
	struct pt_query_decoder *q;
	struct pt_config cfg;
	int64_t t0 = sptd_dec_now_ns();
	uint64_t ip;
	int status, taken, ret = 0;

	while (w.swi < s->nswitches && s->switches[w.swi].cpu < cpu)
		w.swi++;
	sptd_dec_flow_config(s, &s->cpus[cpu], &cfg);
	q = pt_qry_alloc_decoder(&cfg);
	if (!q)
		return -ENOMEM;
	status = pt_qry_sync_forward(q, &ip);
	while (status != -pte_eos && ret >= 0) {
		struct pt_event ev;

		if (status < 0) {
			/* undecodable here: on from the next PSB, state unknown */
			ret = idle_cut(&w, w.now);
			w.mwait = 0;
			w.known_awake = INT64_MIN;
			status = pt_qry_sync_forward(q, &ip);
			continue;
		}
		while ((status & pts_event_pending) && ret >= 0) {
			status = pt_qry_event(q, &ev, sizeof(ev));
			if (status < 0)
				break;
			ret = on_event(&w, &ev);
		}
		if (status < 0 || ret < 0)
			continue;
		if (status & pts_eos)
			break;
		/* no image: answer whichever branch query the trace holds */
		status = pt_qry_cond_branch(q, &taken);
		if (status == -pte_bad_query)
			status = pt_qry_indirect_branch(q, &ip);
		if (status == -pte_bad_query)
			status = -pte_bad_packet;   /* neither: resync at the next PSB */
		if (w.cbr_waits && status >= 0) {
			uint64_t tsc;
			uint32_t lost_mtc, lost_cyc;

			if (pt_qry_time(q, &tsc, &lost_mtc, &lost_cyc) >= 0)
				ret = time_seen(&w, tsc);
		}
	}
	if (ret >= 0)
		ret = idle_cut(&w, w.now);
	pt_qry_free_decoder(q);
	out->ns = sptd_dec_now_ns() - t0;
	return ret;
}

int sptd_dec_power_emit(struct sptd_dec_session *s, struct sptd_dec_power_buf *bufs, int n)
{
	int ret = 0;

	for (int cpu = 0; cpu < n; cpu++) {
		if (ret >= 0 && bufs[cpu].err < 0)
			ret = bufs[cpu].err;
		for (size_t i = 0; i < bufs[cpu].n && ret >= 0; i++)
			ret = s->sink->power(s->sink->ctx, &bufs[cpu].ev[i]);
		if (ret >= 0 && s->cpus[cpu].len && s->sink->stat)
			ret = s->sink->stat(s->sink->ctx, "power_ns", cpu, bufs[cpu].ns);
		free(bufs[cpu].ev);
		memset(&bufs[cpu], 0, sizeof(bufs[cpu]));
	}
	return ret;
}
