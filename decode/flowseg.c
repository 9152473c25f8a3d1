/* flowseg.c — one CPU's PT decoded in parallel segments, and put back
 * together exactly as one decoder would have decoded it.
 *
 * Divisions: flow record storage (chunks, spans); the plan (cutting at
 * PSBs, and for CYC timing the offset where decoders recalibrate); the
 * stitch (where each pair of neighbours meets, seam.c's checkpoints, and
 * renumbering the later segment's positions, order numbers and time
 * stretches into the earlier one's); the finish common to stitched and
 * whole CPUs (time placement, untimed events, the PIP check).
 *
 * A segment's decoder syncs at its PSB with no history, so its first
 * stretch may differ from what a decoder coming from earlier data produces
 * (a switch still deferred, libipt's CYC calibration, a pending branch).
 * The earlier segment therefore decodes on past that PSB and both record
 * checkpoints; the stitch cuts at the first pair of identical ones.  When
 * a seam has none (a decode error right at the PSB, a PSB+ without status
 * updates, CYC timing with no recalibrating MTC before the end), the
 * caller decodes the two segments again as one: the result is always what
 * the serial decode gives, only the time to get it varies. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "flow-local.h"

/* How far past a PSB to look for the MTC that recalibrates CYC timing: at
 * most this many bytes, and no further than two more PSBs (a trace with
 * CYC has MTCs all along; one without needs no recalibration at all). */
#define CONV_SCAN_BYTES (64u << 10)
#define CONV_SCAN_PSBS 2

/* ---- flow record storage ---------------------------------------------------- */

struct sptd_dec_flowrec *sptd_dec_flowbuf_slot(struct sptd_dec_flowbuf *fb)
{
	size_t chunk = fb->n / SPTD_DEC_FLOW_CHUNK;

	if (chunk == fb->nchunks) {
		if (fb->nchunks == fb->capchunks) {
			size_t cap = fb->capchunks ? fb->capchunks * 2 : 16;
			struct sptd_dec_flowrec **n = realloc(fb->chunks, cap * sizeof(*n));

			if (!n)
				return NULL;
			fb->chunks = n;
			fb->capchunks = cap;
		}
		fb->chunks[fb->nchunks] = malloc(SPTD_DEC_FLOW_CHUNK * sizeof(**fb->chunks));
		if (!fb->chunks[fb->nchunks])
			return NULL;
		fb->nchunks++;
	}
	return &fb->chunks[chunk][fb->n % SPTD_DEC_FLOW_CHUNK];
}

void sptd_dec_flowbuf_fini(struct sptd_dec_flowbuf *fb)
{
	size_t i;

	if (!fb)
		return;
	for (i = 0; i < fb->nchunks; i++)
		free(fb->chunks[i]);
	free(fb->chunks);
	memset(fb, 0, sizeof(*fb));
}

int sptd_dec_cpu_flows_add(struct sptd_dec_cpu_flows *cf, const struct sptd_dec_flowbuf *fb,
                           size_t from, size_t to)
{
	while (from < to) {
		size_t in_chunk = SPTD_DEC_FLOW_CHUNK - from % SPTD_DEC_FLOW_CHUNK;
		size_t n = to - from < in_chunk ? to - from : in_chunk;

		if (cf->nspans == cf->capspans) {
			size_t cap = cf->capspans ? cf->capspans * 2 : 16;
			struct sptd_dec_span *sp = realloc(cf->spans, cap * sizeof(*sp));

			if (!sp)
				return -ENOMEM;
			cf->spans = sp;
			cf->capspans = cap;
		}
		cf->spans[cf->nspans].rec = sptd_dec_flowbuf_at(fb, from);
		cf->spans[cf->nspans].n = n;
		cf->nspans++;
		cf->n += n;
		from += n;
	}
	return 0;
}

void sptd_dec_cpu_flows_fini(struct sptd_dec_cpu_flows *cf)
{
	if (!cf)
		return;
	free(cf->spans);
	memset(cf, 0, sizeof(*cf));
}

/* ---- the plan --------------------------------------------------------------- */

/* The offset of the first PSB after @off (exclusive), or @len. */
static uint64_t psb_after(struct pt_packet_decoder *pd, uint64_t off, uint64_t len)
{
	uint64_t sync;

	if (pt_pkt_sync_set(pd, off) < 0 || pt_pkt_sync_forward(pd) < 0 ||
	    pt_pkt_get_sync_offset(pd, &sync) < 0 || sync <= off)
		return len;
	return sync;
}

/* With CYC timing, where a decoder that syncs at the PSB at @start and one
 * that comes from earlier data agree again: libipt calibrates CYC at MTCs
 * from the cycles counted since the previous MTC, so after the second MTC
 * following the PSB with a CYC between them, both have measured the same
 * interval.  The offset after that MTC, or UINT64_MAX. */
static uint64_t conv_after(struct pt_packet_decoder *pd, uint64_t start, uint64_t len)
{
	struct pt_packet pkt;
	uint64_t off = 0, limit = start + CONV_SCAN_BYTES;
	int mtcs = 0, cyc = 0, psbs = 0;

	if (pt_pkt_sync_set(pd, start) < 0)
		return UINT64_MAX;
	while (pt_pkt_next(pd, &pkt, sizeof(pkt)) >= 0) {
		if (pt_pkt_get_offset(pd, &off) < 0 || off > limit || off > len)
			break;
		if (pkt.type == ppt_psb && psbs++ > CONV_SCAN_PSBS)
			break;
		if (pkt.type == ppt_cyc) {
			cyc = 1;
		} else if (pkt.type == ppt_mtc) {
			if (mtcs++ && cyc)
				return off;
			cyc = 0;
		}
	}
	return UINT64_MAX;
}

int sptd_dec_seg_plan(const struct sptd_dec_session *s, int cpu, const uint8_t *data,
                      size_t len, size_t bytes, int max, struct sptd_dec_segplan *plans)
{
	struct pt_packet_decoder *pd;
	struct pt_config cfg;
	size_t want = bytes ? len / bytes : 1;
	int n = 1, i;

	(void)s;
	memset(&plans[0], 0, sizeof(plans[0]));
	plans[0].cpu = cpu;
	plans[0].last = 1;
	if (want > (size_t)max)
		want = (size_t)max;
	if (want < 2 || !data)
		return 1;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + len;
	pd = pt_pkt_alloc_decoder(&cfg);
	if (!pd)
		return -ENOMEM;
	for (i = 1; i < (int)want; i++) {
		uint64_t target = (uint64_t)len * (uint64_t)i / want;
		uint64_t start = psb_after(pd, target, len);

		/* a PSB at or before the previous cut: that one covers it */
		if (start >= len || start <= plans[n - 1].start)
			continue;
		memset(&plans[n], 0, sizeof(plans[n]));
		plans[n].cpu = cpu;
		plans[n].index = n;
		plans[n].start = start;
		plans[n].start_win = psb_after(pd, start, len);
		plans[n].conv = conv_after(pd, start, len);
		plans[n - 1].last = 0;
		plans[n].last = 1;
		n++;
	}
	pt_pkt_free_decoder(pd);
	return n;
}

/* ---- the stitch ------------------------------------------------------------- */

/* Where two neighbours meet: the earlier's tail checkpoint and the later's
 * head checkpoint describing the same point in the same state. */
struct meet {
	const struct sptd_dec_ckpt *tail;   /* in the earlier segment */
	const struct sptd_dec_ckpt *head;   /* in the later one */
};

/* The first point where @a (earlier) and @b (later) agree, past @conv when
 * @cyc.  0 and *m filled, or -1 when they never do. */
static int find_meet(const struct sptd_dec_cpu_result *a, const struct sptd_dec_cpu_result *b,
                     int cyc, uint64_t conv, struct meet *m)
{
	size_t i, j = 0;

	if (!a->tail_ok || !b->head_ok)
		return -1;
	for (i = 0; i < a->tail.n; i++) {
		const struct sptd_dec_ckpt *x = &a->tail.v[i];
		size_t k;

		if (cyc && (conv == UINT64_MAX || x->offset <= conv))
			continue;
		while (j < b->head.n && b->head.v[j].rel < x->rel)
			j++;
		for (k = j; k < b->head.n && b->head.v[k].rel == x->rel; k++) {
			if (sptd_dec_ckpt_same(x, &b->head.v[k])) {
				m->tail = x;
				m->head = &b->head.v[k];
				return 0;
			}
		}
	}
	return -1;
}

/* How one segment's numbers become the whole CPU's. */
struct seg_map {
	uint64_t pos_off, seq_off;  /* added (mod 2^64) to positions, order numbers */
	size_t cur;                 /* its stretch current at the cut, SIZE_MAX none */
	size_t cur_to;              /* ... which is this stretch of the whole */
	size_t base;                /* its stretches after cur start here */
};

static size_t map_seg(const struct seg_map *m, size_t seg)
{
	if (seg == SIZE_MAX)
		return SIZE_MAX;
	if (m->cur != SIZE_MAX && seg <= m->cur)
		return m->cur_to;
	return m->base + (m->cur == SIZE_MAX ? seg : seg - m->cur - 1);
}

/* The stretch count @nsegs of a segment as a count of the whole's. */
static size_t map_nsegs(const struct seg_map *m, size_t nsegs)
{
	return nsegs ? map_seg(m, nsegs - 1) + 1 : 0;
}

static int tplace_append(struct sptd_dec_tplace *to, const struct sptd_dec_tplace *from,
                         size_t seg_from, size_t seg_to, size_t stop_from, size_t stop_to,
                         const struct seg_map *m)
{
	size_t i;
	int err = 0;

	for (i = seg_from; i < seg_to && !err; i++)
		err = sptd_dec_tplace_mark(to, from->segs[i].ts, from->segs[i].pos + m->pos_off);
	for (i = stop_from; i < stop_to && !err; i++) {
		if (to->nstops == to->capstops) {
			size_t cap = to->capstops ? to->capstops * 2 : 64;
			struct sptd_dec_tstop *n = realloc(to->stops, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			to->stops = n;
			to->capstops = cap;
		}
		to->stops[to->nstops].pos = from->stops[i].pos + m->pos_off;
		to->stops[to->nstops].nsegs = map_nsegs(m, from->stops[i].nsegs);
		to->nstops++;
	}
	return err;
}

static int gaps_append(struct sptd_dec_stitched *out, const struct sptd_dec_gaprec *g, size_t n,
                       const struct seg_map *m)
{
	struct sptd_dec_gaprec *v;
	size_t i;

	if (!n)
		return 0;
	v = realloc(out->gaps, (out->ngaps + n) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	out->gaps = v;
	for (i = 0; i < n; i++) {
		v[out->ngaps] = g[i];
		if (g[i].ts_seq)
			v[out->ngaps].ts += (int64_t)m->seq_off;
		if (g[i].end_seq)
			v[out->ngaps].end += (int64_t)m->seq_off;
		out->ngaps++;
	}
	return 0;
}

/* @to - @from, field by field (counts of a stretch of one segment). */
static void stats_add_diff(struct sptd_dec_cpu_stats *sum, const struct sptd_dec_cpu_stats *to,
                           const struct sptd_dec_cpu_stats *from)
{
	sum->instructions += to->instructions - from->instructions;
	sum->calls += to->calls - from->calls;
	sum->returns += to->returns - from->returns;
	sum->far_calls += to->far_calls - from->far_calls;
	sum->far_returns += to->far_returns - from->far_returns;
	sum->interrupts += to->interrupts - from->interrupts;
	sum->decode_errors += to->decode_errors - from->decode_errors;
	sum->gaps += to->gaps - from->gaps;
	sum->cr3_mismatches += to->cr3_mismatches - from->cr3_mismatches;
	sum->saw_time |= to->saw_time;
}

/* Renumber records [@from, @to) of @fb in place by @m. */
static void flows_remap(struct sptd_dec_flowbuf *fb, size_t from, size_t to,
                        const struct seg_map *m)
{
	size_t i;

	for (i = from; i < to; i++) {
		struct sptd_dec_flowrec *r = sptd_dec_flowbuf_at(fb, i);

		r->pos += m->pos_off;
		r->ev.seq += m->seq_off;
		r->seg = map_seg(m, r->seg);
	}
}

int sptd_dec_seg_stitch(struct sptd_dec_session *s, const struct sptd_dec_segplan *const *plans,
                        struct sptd_dec_cpu_result *const *res, size_t n,
                        struct sptd_dec_stitched *out, size_t *bad)
{
	struct meet *meets = NULL;
	struct seg_map m;
	int cyc = 0, ret = 0;
	size_t i;

	(void)s;
	memset(out, 0, sizeof(*out));
	out->seams = n ? (int)n - 1 : 0;
	for (i = 0; i < n; i++)
		cyc |= res[i]->has_cyc;
	meets = calloc(n + 1, sizeof(*meets));
	out->tplace = calloc(1, sizeof(*out->tplace));
	if (!meets || !out->tplace) {
		ret = -ENOMEM;
		goto out;
	}
	/* meets[i]: where segment i-1 hands over to segment i */
	for (i = 1; i < n; i++) {
		if (find_meet(res[i - 1], res[i], cyc, plans[i]->conv, &meets[i]) < 0) {
			*bad = i;
			ret = 1;
			goto out;
		}
		out->met++;
	}
	/* each segment must be handed over to after it took over */
	for (i = 1; i + 1 < n; i++) {
		if (meets[i + 1].tail->pos < meets[i].head->pos) {
			*bad = i + 1;
			ret = 1;
			goto out;
		}
	}
	/* Hardware compresses no return after a PSB whose call came before
	 * it, so a segment's decoder never misses a call it did not see; in
	 * damaged PT it can, and then the decoder coming from earlier data
	 * would have popped a call instead of failing.  Where that happened
	 * in the part of a segment that is used, its seam does not count. */
	for (i = 1; i < n; i++) {
		size_t end = i + 1 < n ? meets[i + 1].tail->underflows : res[i]->underflows;

		if (end > meets[i].head->underflows) {
			*bad = i;
			ret = 1;
			goto out;
		}
	}
	memset(&m, 0, sizeof(m));
	m.cur = SIZE_MAX;
	for (i = 0; i < n && ret >= 0; i++) {
		const struct sptd_dec_ckpt *in = i ? meets[i].head : NULL;
		const struct sptd_dec_ckpt *at = i + 1 < n ? meets[i + 1].tail : NULL;
		struct sptd_dec_cpu_result *r = res[i];
		size_t f0 = in ? in->nflows : 0, f1 = at ? at->nflows : r->flows.n;
		size_t g0 = in ? in->ngaps : 0, g1 = at ? at->ngaps : r->ngaps;
		size_t s0 = in ? in->nsegs : 0, s1 = at ? at->nsegs : r->tplace->nsegs;
		size_t t0 = in ? in->nstops : 0, t1 = at ? at->nstops : r->tplace->nstops;
		struct sptd_dec_cpu_stats zero;

		if (in) {
			/* the previous segment's cut, in the whole's numbers */
			const struct sptd_dec_ckpt *prev = meets[i].tail;

			m.pos_off = prev->pos + m.pos_off - in->pos;
			m.seq_off = prev->seq + m.seq_off - in->seq;
			m.cur = in->nsegs ? in->nsegs - 1 : SIZE_MAX;
			m.cur_to = out->tplace->nsegs ? out->tplace->nsegs - 1 : SIZE_MAX;
			m.base = out->tplace->nsegs;
			s0 = in->nsegs;
			flows_remap(&r->flows, f0, f1, &m);
		} else {
			m.base = 0;
		}
		ret = sptd_dec_cpu_flows_add(&out->flows, &r->flows, f0, f1);
		if (ret >= 0)
			ret = tplace_append(out->tplace, r->tplace, s0, s1, t0, t1, &m);
		if (ret >= 0)
			ret = gaps_append(out, g1 > g0 ? r->gaps + g0 : NULL, g1 - g0, &m);
		memset(&zero, 0, sizeof(zero));
		stats_add_diff(&out->stats, at ? &at->stats : &r->stats, in ? &in->stats : &zero);
		out->stats.decode_ns += r->stats.decode_ns;
		out->stats.saw_time |= r->stats.saw_time;
		out->last_ts = r->last_ts;
	}
	if (ret >= 0) {
		sptd_dec_tplace_restop(out->tplace);
		ret = 0;
	}
out:
	free(meets);
	if (ret != 0)
		sptd_dec_stitched_fini(out);
	return ret;
}

void sptd_dec_stitched_fini(struct sptd_dec_stitched *st)
{
	if (!st)
		return;
	sptd_dec_cpu_flows_fini(&st->flows);
	free(st->gaps);
	sptd_dec_tplace_fini(st->tplace);
	free(st->tplace);
	st->gaps = NULL;
	st->tplace = NULL;
	st->ngaps = 0;
}

/* ---- the finish ------------------------------------------------------------- */

/* The PIP checks, in order over the whole CPU: a mismatch becomes a gap up
 * to the next switch, the rest are dropped. */
static int check_pips(struct sptd_dec_stitched *st)
{
	struct sptd_dec_cr3check chk;
	size_t i, k = 0;
	int ret = 0;

	memset(&chk, 0, sizeof(chk));
	for (i = 0; i < st->ngaps && ret >= 0; i++) {
		struct sptd_dec_gaprec g = st->gaps[i];
		int bound = -1;

		if (!g.cr3_check) {
			st->gaps[k++] = g;
			continue;
		}
		ret = sptd_dec_cr3check_see(&chk, g.cr3, g.pid, g.napplied, &bound);
		if (ret <= 0)
			continue;
		st->stats.cr3_mismatches++;
		st->stats.gaps++;
		g.cr3_check = 0;
		snprintf(g.reason, sizeof(g.reason),
		         "pt: CR3 0x%" PRIx64 " belongs to pid %d but the schedule says pid %d runs",
		         g.cr3, bound, g.pid);
		st->gaps[k++] = g;
	}
	st->ngaps = k;
	sptd_dec_cr3check_fini(&chk);
	return ret < 0 ? ret : 0;
}

int sptd_dec_seg_finish(struct sptd_dec_session *s, int cpu, struct sptd_dec_stitched *st,
                        int has_cyc)
{
	const struct sptd_dec_switch *sw;
	int64_t first = -1;
	size_t i, j, nsw = 0;

	for (i = 0; i < s->nswitches && s->switches[i].cpu < cpu; i++)
		;
	sw = s->switches ? s->switches + i : NULL;   /* none: no arithmetic on NULL */
	while (i + nsw < s->nswitches && s->switches[i + nsw].cpu == cpu)
		nsw++;
	if (st->stats.saw_time && !has_cyc) {
		struct sptd_dec_tplace_cursor cur = { 0 };

		for (i = 0; i < st->flows.nspans; i++)
			sptd_dec_tplace_apply(st->tplace, &cur, st->flows.spans[i].rec,
			                      st->flows.spans[i].n, sw, nsw);
	}
	/* no timing: the switches could not be placed, and the trace is the
	 * task's its recording names (sptd_dec_session_set_untimed_tid) */
	if ((!st->stats.saw_time || s->cfg.no_timing) && s->cpus[cpu].untimed_tid > 0)
		for (i = 0; i < st->flows.nspans; i++)
			for (j = 0; j < st->flows.spans[i].n; j++)
				st->flows.spans[i].rec[j].ev.tid = s->cpus[cpu].untimed_tid;
	for (i = 0; i < st->flows.nspans && first < 0; i++)
		for (j = 0; j < st->flows.spans[i].n && first < 0; j++)
			if (st->flows.spans[i].rec[j].ev.ts >= 0)
				first = st->flows.spans[i].rec[j].ev.ts;
	for (i = 0; i < st->flows.nspans; i++)
		sptd_dec_flows_fix_times(st->flows.spans[i].rec, st->flows.spans[i].n,
		                         st->stats.saw_time, first);
	return check_pips(st);
}
