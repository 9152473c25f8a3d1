/* flow.c — phase 1, the decode loop: one CPU's PT through libipt's block
 * decoder into flow events (calls, returns, far transfers, interrupts,
 * enable/disable, overflows, errors) with timestamps, switching address
 * spaces as the sched timeline says, counting what libipt classifies, and
 * recording every stretch that could not be decoded as a gap.
 *
 * Blocks end at every call and jump (end_on_call/end_on_jump), so the
 * branch of interest is always a block's last instruction; its target is
 * the next block's first ip (or the ip of the event that intervenes).
 *
 * Its parts live in units of their own (flow-local.h): the class of blocks
 * libipt leaves open (brcache.c, opclass.c), placing events between two
 * timing packets (flowtime.c, which explains how), and the PIP/CR3
 * cross-check of the timeline (cr3check.c, run after the CPU is complete).
 *
 * A CPU's PT may be decoded in segments cut at PSBs (flowseg.c): then this
 * loop decodes one segment, from its PSB on and on past the next segment's
 * PSB, recording checkpoints of its state at both ends for the stitch. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "flow-local.h"

static int flow_text_epoch(struct sptd_dec_flowstate *fs);

/* Refresh fs->now from the decoder's time; @ahead: instructions of a block
 * just decoded but not yet counted (the time read with it times its end). */
static int flow_time(struct sptd_dec_flowstate *fs, uint64_t ahead)
{
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	int64_t now;

	if (fs->s->cfg.no_timing)
		return 0;
	if (sptd_dec_blk_time(&fs->dec, &tsc, &lost_mtc, &lost_cyc) < 0)
		return 0;
	if (fs->has_time && tsc == fs->now_tsc)
		return 0;                  /* unchanged: most blocks */
	now = sptd_dec_tsc_ns(&fs->s->tsc, tsc);
	if ((!fs->has_time || now != fs->now) &&
	    sptd_dec_tplace_mark(fs->tp, now, fs->pos + ahead) < 0)
		return -ENOMEM;
	fs->now = now;
	fs->now_tsc = tsc;
	fs->has_time = 1;
	fs->res->stats.saw_time = 1;
	return fs->s->ntext_times ? flow_text_epoch(fs) : 0;
}

/* Timestamp for an event now: time when known, else -1 (fixed up later). */
static int64_t flow_ts(const struct sptd_dec_flowstate *fs)
{
	return fs->has_time ? fs->now : -1;
}

/* Append an event stamped @ts, at instruction position @pos of stretch
 * @seg. */
static int flow_push_at(struct sptd_dec_flowstate *fs, int kind, int tid, int64_t ts,
                        uint64_t from, uint64_t to, uint64_t pos, size_t seg)
{
	struct sptd_dec_flowbuf *fb = &fs->res->flows;
	struct sptd_dec_flowrec *rec = sptd_dec_flowbuf_slot(fb);

	if (!rec)
		return -ENOMEM;
	fb->n++;
	rec->pos = pos;
	rec->seg = seg;
	rec->ev.ts = ts;
	rec->ev.seq = fs->seq++;
	rec->ev.cpu = fs->cpu;
	rec->ev.tid = tid;
	rec->ev.kind = kind;
	rec->ev.flags = 0;
	rec->ev.from = from;
	rec->ev.to = to;
	return 0;
}

/* Append an event happening now. */
static int flow_push(struct sptd_dec_flowstate *fs, int kind, int tid, int64_t ts,
                     uint64_t from, uint64_t to)
{
	return flow_push_at(fs, kind, tid, ts, from, to, fs->pos, sptd_dec_tplace_seg_now(fs->tp));
}

/* Emit the pending branch now that its target @to is known (0: unknown). */
static int flow_flush(struct sptd_dec_flowstate *fs, uint64_t to)
{
	int kind = fs->pend_kind;

	if (!kind)
		return 0;
	fs->pend_kind = 0;
	if (kind == SPTD_DEC_FLOW_JUMP) {
		struct sptd_dec_func f;

		/* only jumps that may change the function matter to phase 2 */
		if (fs->peek_tid != fs->pend_tid || !fs->peek_as) {
			fs->peek_as = sptd_dec_aspace_of(fs->s, fs->pend_tid);
			fs->peek_tid = fs->pend_tid;
		}
		if (!to || sptd_dec_func_peek_as(fs->peek_as, to, &f) < 0 || !f.known)
			return 0;
		if (to != f.start && fs->pend_from - f.start < f.size)
			return 0;
	}
	return flow_push_at(fs, kind, fs->pend_tid, fs->pend_ts, fs->pend_from, to,
	                    fs->pend_pos, fs->pend_seg);
}

/* A new gap record of @fs's result (zeroed), NULL when out of memory. */
static struct sptd_dec_gaprec *gap_new(struct sptd_dec_flowstate *fs)
{
	struct sptd_dec_cpu_result *r = fs->res;

	if (r->ngaps == r->capgaps) {
		size_t cap = r->capgaps ? r->capgaps * 2 : 16;
		struct sptd_dec_gaprec *n = realloc(r->gaps, cap * sizeof(*n));

		if (!n)
			return NULL;
		r->gaps = n;
		r->capgaps = cap;
	}
	memset(&r->gaps[r->ngaps], 0, sizeof(r->gaps[r->ngaps]));
	return &r->gaps[r->ngaps++];
}

/* A gap from @ts to @end, each an order number when its flag says so. */
static int gap_add_at(struct sptd_dec_flowstate *fs, int64_t ts, int ts_seq, int64_t end,
                      int end_seq, const char *reason)
{
	struct sptd_dec_gaprec *g = gap_new(fs);

	if (!g)
		return -ENOMEM;
	g->ts = ts;
	g->end = end;
	g->ts_seq = ts_seq;
	g->end_seq = end_seq;
	snprintf(g->reason, sizeof(g->reason), "%s", reason);
	fs->res->stats.gaps++;
	return 0;
}

/* A gap of @dur from the time @ts. */
static int gap_add(struct sptd_dec_flowstate *fs, int64_t ts, int64_t dur, const char *reason)
{
	/* saturated: a time from the trace plus a length may pass INT64_MAX */
	return gap_add_at(fs, ts, 0, dur <= 0 ? ts : ts > INT64_MAX - dur ? INT64_MAX : ts + dur, 0,
	                  reason);
}

/* Now: the time, or the event order before the first timing packet. */
static int64_t flow_now_or_seq(const struct sptd_dec_flowstate *fs)
{
	return fs->has_time ? fs->now : (int64_t)fs->seq;
}

/* Start a gap now; it ends when decoding resumes. */
static void gap_open(struct sptd_dec_flowstate *fs, const char *reason)
{
	if (fs->gap_open)
		return;
	fs->gap_open = 1;
	fs->gap_ts = flow_now_or_seq(fs);
	fs->gap_ts_seq = !fs->has_time;
	snprintf(fs->gap_reason, sizeof(fs->gap_reason), "%s", reason);
}

static int gap_close(struct sptd_dec_flowstate *fs)
{
	if (!fs->gap_open)
		return 0;
	fs->gap_open = 0;
	return gap_add_at(fs, fs->gap_ts, fs->gap_ts_seq, flow_now_or_seq(fs), !fs->has_time,
	                  fs->gap_reason);
}

/* Decode with address space @as from now on. */
static int flow_use_aspace(struct sptd_dec_flowstate *fs, struct sptd_dec_aspace *as)
{
	size_t k = (size_t)(as - fs->s->aspaces);
	int err;

	if (!fs->images[k]) {
		err = sptd_dec_aspace_image_new(fs->s, fs->wc, as, fs->epoch, &fs->images[k]);
		if (err < 0)
			return err;
	}
	fs->as = as;
	if (fs->dec.own)
		return sptd_dec_qblk_set_aspace(fs->dec.own, fs->s, fs->wc, as, fs->epoch);
	return pt_blk_set_image(fs->dec.lib, fs->images[k]) < 0 ? -EIO : 0;
}

/* The kernel code changes at a TEXT_POKE's time (textpatch.c): from the
 * decoder's time on, decode with the images of its text epoch. */
static int flow_text_epoch(struct sptd_dec_flowstate *fs)
{
	int epoch = sptd_dec_text_epoch(fs->s, fs->now), err;
	struct pt_image **old = fs->images;

	if (epoch == fs->epoch)
		return 0;
	fs->images = calloc(fs->s->naspaces, sizeof(*fs->images));
	if (!fs->images) {
		fs->images = old;
		return -ENOMEM;
	}
	fs->epoch = epoch;
	err = flow_use_aspace(fs, fs->as);
	for (size_t i = 0; i < fs->s->naspaces; i++)
		pt_image_free(old[i]);   /* the decoder has the new one now */
	free(old);
	return err;
}

/* Apply the sched switches up to now; change the decoder's image if the
 * next task lives in another address space.
 *
 * The decoder's time runs ahead of the instruction it is at (a timing
 * packet times the branch packet after it, which may cover several earlier
 * branches), so a switch timed at the end of a task's slice would take
 * effect before that task's last instructions were decoded.  A switch
 * happens in the kernel: while user code is being decoded (@user_code) the
 * current task keeps running; switches take effect when tracing is enabled
 * again, at a sync point, or while kernel code is traced. */
static int flow_switch(struct sptd_dec_flowstate *fs, int user_code)
{
	struct sptd_dec_aspace *as;

	if (user_code || !fs->has_time || fs->swi >= fs->nsw || fs->sw[fs->swi].ts > fs->now)
		return 0;
	while (fs->swi < fs->nsw && fs->sw[fs->swi].ts <= fs->now)
		fs->tid = fs->sw[fs->swi++].next_tid;
	as = sptd_dec_aspace_of(fs->s, fs->tid);
	return as != fs->as ? flow_use_aspace(fs, as) : 0;
}

/* The task the timeline says runs at the decoder's time (its switches
 * applied up to now, the decoder's state unchanged), and in *@napplied how
 * many of this CPU's switches that takes; -1 unknown. */
static int flow_sched_tid(const struct sptd_dec_flowstate *fs, size_t *napplied)
{
	size_t i = fs->swi;
	int tid = fs->tid;

	while (i < fs->nsw && fs->sw[i].ts <= fs->now)
		tid = fs->sw[i++].next_tid;
	*napplied = i;
	return tid;
}

/* A PIP (CR3 write): recorded to be checked against the timeline once the
 * CPU is complete (cr3check.c, sptd_dec_seg_finish: the check remembers
 * every CR3 the CPU showed, which a segment alone does not know); a
 * mismatch becomes a count and a gap up to the next switch.  Guest
 * (non-root) CR3s, CR3 0 and traces without time are left alone. */
static int flow_paging(struct sptd_dec_flowstate *fs, uint64_t cr3, int non_root)
{
	struct sptd_dec_gaprec *g;
	size_t napplied;
	int tid;

	if (non_root || !cr3 || !fs->has_time || fs->s->cfg.no_timing)
		return 0;
	tid = flow_sched_tid(fs, &napplied);
	if (tid < 0)
		return 0;
	g = gap_new(fs);
	if (!g)
		return -ENOMEM;
	g->cr3_check = 1;
	g->cr3 = cr3;
	g->pid = sptd_dec_task_pid(fs->s, tid);
	g->napplied = napplied;
	g->ts = fs->now;
	g->end = napplied < fs->nsw && fs->sw[napplied].ts > fs->now ? fs->sw[napplied].ts
	                                                              : fs->now;
	return 0;
}

/* A PTWRITE bound to its instruction: libipt proceeds to it and past it,
 * and when a direct call led there (PTWRITE as a function's first
 * instruction: instrumentation) the call is no longer the block's last
 * instruction, so flow_block did not see it.  Find it in the block's
 * bytes (a call rel32 in them whose target is the PTWRITE) and record it,
 * one instruction before the block's end.  0 or -ENOMEM. */
static int flow_ptwrite(struct sptd_dec_flowstate *fs, const struct pt_event *ev)
{
	uint8_t code[512];
	uint64_t at = 0;
	int n;

	if (ev->ip_suppressed || ev->variant.ptwrite.ip != fs->last_ip || fs->blk_ninsn < 2 ||
	    fs->blk_isid <= 0)
		return 0;
	n = pt_iscache_read(fs->iscache, code, sizeof(code), fs->blk_isid, fs->blk_ip);
	for (int i = 0; i + 5 <= n; i++) {
		int32_t rel;

		if (code[i] != 0xe8)
			continue;
		memcpy(&rel, code + i + 1, 4);
		if (fs->blk_ip + (uint64_t)i + 5 + (uint64_t)(int64_t)rel == fs->last_ip)
			at = fs->blk_ip + (uint64_t)i;
	}
	if (!at)
		return 0;
	fs->res->stats.calls++;
	return flow_push_at(fs, SPTD_DEC_FLOW_CALL, fs->tid, flow_ts(fs), at, fs->last_ip,
	                    fs->pos - 1, sptd_dec_tplace_seg_now(fs->tp));
}

static int flow_event(struct sptd_dec_flowstate *fs, const struct pt_event *ev)
{
	int err = 0;

	if (ev->status_update) {
		/* PSB+: a sync point passed.  The stall detector starts over,
		 * and the PSB's IP says whether user code runs (a decoder
		 * synced at this PSB knows no more than that either). */
		fs->status_seen = 1;
		fs->stall_off = UINT64_MAX;
		fs->stall_n = 0;
		if (ev->type == ptev_exec_mode && !ev->ip_suppressed)
			fs->in_user = !(ev->variant.exec_mode.ip >> 63);
	}
	switch (ev->type) {
	case ptev_enabled:
		err = flow_flush(fs, 0);
		if (!err)
			err = gap_close(fs);
		if (!err)
			err = flow_switch(fs, 0);
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_ENABLE, fs->tid, flow_ts(fs), 0,
			                ev->variant.enabled.ip);
		break;
	case ptev_disabled:
		fs->in_user = 0;
		err = sptd_dec_tplace_stop(fs->tp, fs->pos);
		if (!err)
			err = flow_flush(fs, ev->ip_suppressed ? 0 : ev->variant.disabled.ip);
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_DISABLE, fs->tid, flow_ts(fs),
			                fs->last_ip, 0);
		break;
	case ptev_async_disabled:
		fs->in_user = 0;
		err = sptd_dec_tplace_stop(fs->tp, fs->pos);
		if (!err)
			err = flow_flush(fs, ev->variant.async_disabled.at);
		fs->res->stats.interrupts++;
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_INTERRUPT, fs->tid, flow_ts(fs),
			                ev->variant.async_disabled.at, 0);
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_DISABLE, fs->tid, flow_ts(fs),
			                ev->variant.async_disabled.at, 0);
		break;
	case ptev_async_branch:
		fs->in_user = 0;
		err = flow_flush(fs, ev->variant.async_branch.from);
		fs->res->stats.interrupts++;
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_INTERRUPT, fs->tid, flow_ts(fs),
			                ev->variant.async_branch.from,
			                ev->ip_suppressed ? 0 : ev->variant.async_branch.to);
		break;
	case ptev_overflow:
		fs->in_user = 0;
		err = sptd_dec_tplace_stop(fs->tp, fs->pos);
		if (!err)
			err = flow_flush(fs, 0);
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_OVERFLOW, fs->tid, flow_ts(fs), 0,
			                ev->ip_suppressed ? 0 : ev->variant.overflow.ip);
		gap_open(fs, "pt: overflow: the CPU dropped trace");
		break;
	case ptev_stop:
		/* TraceStop: the CPU cleared TraceEn itself (an IP filter range
		 * configured as TraceStop): nothing is traced until software
		 * enables it again */
		fs->in_user = 0;
		err = sptd_dec_tplace_stop(fs->tp, fs->pos);
		if (!err)
			err = flow_flush(fs, 0);
		gap_open(fs, "pt: TraceStop: the CPU stopped tracing (an IP filter's TraceStop range)");
		break;
	case ptev_ptwrite:
		err = flow_ptwrite(fs, ev);
		break;
	case ptev_paging:
		err = flow_paging(fs, ev->variant.paging.cr3, ev->variant.paging.non_root);
		break;
	case ptev_async_paging:
		err = flow_paging(fs, ev->variant.async_paging.cr3,
		                  ev->variant.async_paging.non_root);
		break;
	default:
		/* timing, power, exec mode: nothing for the stacks */
		break;
	}
	return err;
}

/* One decoded block: count it and note its last branch. */
static int flow_block(struct sptd_dec_flowstate *fs, const struct pt_block *b)
{
	struct sptd_dec_cpu_stats *st = &fs->res->stats;
	int err, kind = 0;

	err = flow_flush(fs, b->ip);
	if (!err)
		err = gap_close(fs);
	if (err)
		return err;
	st->instructions += b->ninsn;
	fs->pos += b->ninsn;
	fs->last_ip = b->end_ip;
	fs->blk_ip = b->ip;
	fs->blk_ninsn = b->ninsn;
	fs->blk_isid = b->isid;
	fs->in_user = !(b->end_ip >> 63);
	switch (b->iclass == ptic_error ? sptd_dec_brcache_class(&fs->br, b) : b->iclass) {
	case ptic_call:
		st->calls++;
		kind = SPTD_DEC_FLOW_CALL;
		break;
	case ptic_return:
		st->returns++;
		kind = SPTD_DEC_FLOW_RETURN;
		break;
	case ptic_jump:
		kind = SPTD_DEC_FLOW_JUMP;
		break;
	case ptic_far_call:
		st->far_calls++;
		kind = SPTD_DEC_FLOW_FAR_CALL;
		break;
	case ptic_far_return:
		st->far_returns++;
		kind = SPTD_DEC_FLOW_FAR_RETURN;
		break;
	default:
		break;
	}
	if (kind) {
		fs->pend_kind = kind;
		fs->pend_from = b->end_ip;
		fs->pend_ts = flow_ts(fs);
		fs->pend_tid = fs->tid;
		fs->pend_pos = fs->pos;
		fs->pend_seg = sptd_dec_tplace_seg_now(fs->tp);
	}
	return 0;
}

/* A decode error: record it and leave the resync to the caller. */
static int flow_error(struct sptd_dec_flowstate *fs, int code, const struct pt_block *b)
{
	char reason[160];
	uint64_t off = 0, ip;
	int err;

	sptd_dec_blk_get_offset(&fs->dec, &off);
	fs->res->stats.decode_errors++;
	if (code == pte_retstack_empty)
		fs->res->underflows++;
	ip = b->ninsn ? b->end_ip : b->ip;
	/* the upper half of the address space is the kernel's (x86-64) */
	if (code == pte_nomap && ip >= 0xffff800000000000ull && fs->s->kernel_note)
		snprintf(reason, sizeof(reason),
		         "pt: kernel text not captured (%s), ip 0x%" PRIx64 ", offset 0x%" PRIx64,
		         fs->s->kernel_note, ip, off);
	else if (code == pte_nomap)
		snprintf(reason, sizeof(reason),
		         "pt: no image for ip 0x%" PRIx64 " (missing image), offset 0x%" PRIx64, ip, off);
	else
		snprintf(reason, sizeof(reason), "pt: decode error: %s at offset 0x%" PRIx64,
		         pt_errstr((enum pt_error_code)code), off);
	err = sptd_dec_tplace_stop(fs->tp, fs->pos);
	if (!err)
		err = flow_flush(fs, 0);
	if (!err)
		err = flow_push(fs, SPTD_DEC_FLOW_ERROR, fs->tid, flow_ts(fs), 0, 0);
	gap_open(fs, reason);
	return err;
}

/* Decoding without reading trace: libipt follows direct branches from
 * the image alone, so an image whose code does not match the trace (or a
 * `jmp .` the trace never leaves) keeps pt_blk_next returning blocks
 * forever at one trace offset.  Real code cannot run this far on one packet:
 * between two packets lie at most 47 conditional branches (a long TNT) and
 * straight-line code between them. */
#define FLOW_STALL_LIMIT (1u << 20)   /* instructions (or empty calls) at one offset */

/* Note progress after a decoder call that decoded @ninsn instructions;
 * 1 when the decoder has stalled (see FLOW_STALL_LIMIT). */
static int flow_stalled(struct sptd_dec_flowstate *fs, uint64_t ninsn)
{
	uint64_t off = 0;

	if (sptd_dec_blk_get_offset(&fs->dec, &off) < 0 || off != fs->stall_off) {
		fs->stall_off = off;
		fs->stall_n = 0;
		return 0;
	}
	fs->stall_n += ninsn ? ninsn : 1;
	return fs->stall_n > FLOW_STALL_LIMIT;
}

/* The decoder stalled: a gap up to the next sync point. */
static int flow_stall(struct sptd_dec_flowstate *fs, uint64_t off)
{
	char reason[160];
	int err;

	snprintf(reason, sizeof(reason),
	         "pt: decoder made no progress at offset 0x%" PRIx64 " (%u instructions "
	         "without trace, near ip 0x%" PRIx64 "): image does not match the trace?",
	         off, FLOW_STALL_LIMIT, fs->last_ip);
	fs->res->stats.decode_errors++;
	err = sptd_dec_tplace_stop(fs->tp, fs->pos);
	if (!err)
		err = flow_flush(fs, 0);
	if (!err)
		err = flow_push(fs, SPTD_DEC_FLOW_ERROR, fs->tid, flow_ts(fs), 0, 0);
	gap_open(fs, reason);
	return err;
}

/* Decode from a sync point until the end or an error; returns 0 at the end
 * of the trace, 1 after a decode error or a stall (resync needed), < 0
 * failure. */
static int flow_decode(struct sptd_dec_flowstate *fs, int status)
{
	int err;

	fs->stall_off = UINT64_MAX;
	fs->stall_n = 0;
	for (;;) {
		struct pt_block b;

		while (status & pts_event_pending) {
			struct pt_event ev;

			status = sptd_dec_blk_event(&fs->dec, &ev);
			if (status < 0)
				break;
			err = flow_time(fs, 0);
			if (!err && ev.type == ptev_async_disabled)
				sptd_dec_flow_event_time(fs, &ev);
			if (!err)
				err = flow_event(fs, &ev);
			if (err)
				return err;
		}
		if (status >= 0 && fs->plan) {
			err = sptd_dec_seam_step(fs, status);
			if (err)
				return err < 0 ? err : 0;
		}
		if (status < 0) {
			memset(&b, 0, sizeof(b));
		} else {
			err = flow_switch(fs, fs->in_user);
			if (err)
				return err;
			memset(&b, 0, sizeof(b));
			status = sptd_dec_blk_next(&fs->dec, &b);
			err = flow_time(fs, b.ninsn);
			if (!err && b.ninsn)
				err = flow_block(fs, &b);
			if (err)
				return err;
			if (status >= 0 && flow_stalled(fs, b.ninsn)) {
				err = flow_stall(fs, fs->stall_off);
				return err ? err : 1;
			}
		}
		if (status < 0) {
			if (status == -pte_eos)
				return 0;
			err = flow_error(fs, pt_errcode(status), &b);
			return err ? err : 1;
		}
	}
}

int sptd_dec_flow_config(const struct sptd_dec_session *s, const struct sptd_dec_cpu *c,
                         struct pt_config *cfg)
{
	pt_config_init(cfg);
	cfg->begin = c->data;
	cfg->end = c->data + c->len;
	if (s->cfg.cpu_family) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = (uint16_t)s->cfg.cpu_family;
		cfg->cpu.model = (uint8_t)s->cfg.cpu_model;
		cfg->cpu.stepping = (uint8_t)s->cfg.cpu_stepping;
		/* a CPU libipt knows no errata for (a damaged file's model):
		 * decoded as an unknown CPU, not a failed decode */
		if (pt_cpu_errata(&cfg->errata, &cfg->cpu) < 0) {
			memset(&cfg->cpu, 0, sizeof(cfg->cpu));
			memset(&cfg->errata, 0, sizeof(cfg->errata));
		}
	}
	cfg->mtc_freq = (uint8_t)s->cfg.mtc_freq;
	cfg->nom_freq = (uint8_t)s->cfg.nom_freq;
	cfg->cpuid_0x15_eax = s->cfg.cpuid15_eax;
	cfg->cpuid_0x15_ebx = s->cfg.cpuid15_ebx;
	cfg->flags.variant.block.end_on_call = 1;
	cfg->flags.variant.block.end_on_jump = 1;
	return 0;
}

/* The CYC check of time placement, for the stretch of PT a segment
 * covers: 1 when it holds a CYC packet. */
static int flow_range_has_cyc(const struct pt_config *cfg, const struct sptd_dec_segplan *plan,
                              const struct sptd_dec_segplan *next)
{
	struct pt_config range = *cfg;

	if (plan)
		range.begin = cfg->begin + plan->start;
	if (next)
		range.end = cfg->begin + next->start;
	return sptd_dec_trace_has_cyc(&range);
}

int sptd_dec_flow_cpu(struct sptd_dec_session *s, struct sptd_dec_wcache *wc, int cpu,
                      const struct sptd_dec_segplan *plan, const struct sptd_dec_segplan *next,
                      struct sptd_dec_cpu_result *res)
{
	struct sptd_dec_cpu *c = &s->cpus[cpu];
	struct sptd_dec_flowstate fs;
	struct pt_config cfg;
	uint64_t sync_off = 0, last_sync = 0;
	int64_t t0 = sptd_dec_now_ns();
	int status, err, first = 1, stuck = 0, decoded = 0;
	int whole = !plan || plan->index == 0;
	size_t i;

	memset(&fs, 0, sizeof(fs));
	fs.s = s;
	fs.wc = wc;
	fs.iscache = wc ? wc->iscache : s->iscache;
	fs.res = res;
	fs.cpu = cpu;
	fs.plan = plan;
	fs.next = plan ? next : NULL;
	fs.tid = -1;
	for (i = 0; i < s->nswitches && s->switches[i].cpu < cpu; i++)
		;
	fs.sw = s->nswitches ? s->switches + i : NULL;   /* no arithmetic on NULL */
	while (i + fs.nsw < s->nswitches && s->switches[i + fs.nsw].cpu == cpu)
		fs.nsw++;
	if (fs.nsw)
		fs.tid = fs.sw[0].prev_tid;
	/* switches at or before time 0 hold from the start, also in a trace
	 * without timing (where later ones cannot be placed) */
	while (fs.swi < fs.nsw && fs.sw[fs.swi].ts <= 0)
		fs.tid = fs.sw[fs.swi++].next_tid;
	err = sptd_dec_flow_config(s, c, &cfg);
	if (err)
		return err;
	res->tplace = calloc(1, sizeof(*res->tplace));
	fs.tp = res->tplace;
	fs.images = calloc(s->naspaces, sizeof(*fs.images));
	fs.epoch = (int)s->ntext_times;   /* as copied, until a time is known */
	err = sptd_dec_brcache_init(&fs.br, fs.iscache);
	if (s->cfg.decoder == SPTD_DEC_DECODER_SPTD &&
	    !sptd_dec_qblk_unsupported(&cfg))
		sptd_dec_qblk_create(&cfg, &fs.dec.own);
	else
		fs.dec.lib = pt_blk_alloc_decoder(&cfg);
	if ((!fs.dec.lib && !fs.dec.own) || !fs.images || !fs.tp || err < 0) {
		pt_blk_free_decoder(fs.dec.lib);
		sptd_dec_qblk_destroy(fs.dec.own);
		free(fs.images);
		sptd_dec_brcache_fini(&fs.br);
		return -ENOMEM;
	}
	err = flow_use_aspace(&fs, sptd_dec_aspace_of(s, fs.tid));
	while (!err) {
		/* a later segment starts at its own PSB */
		status = first && !whole ? sptd_dec_blk_sync_set(&fs.dec, plan->start)
		                         : sptd_dec_blk_sync_forward(&fs.dec);
		if (status == -pte_eos) {
			if (first && whole)
				err = gap_add(&fs, 0, 0, "pt: no PSB in the trace: nothing decodable");
			break;
		}
		sptd_dec_blk_get_sync_offset(&fs.dec, &sync_off);
		if (status < 0) {
			/* a bad PSB+: count it and look for the next */
			fs.res->stats.decode_errors++;
			decoded = 0;
			stuck = sync_off <= last_sync && !first ? stuck + 1 : 0;
			last_sync = sync_off;
			first = 0;
			if (stuck > 2)
				break;
			continue;
		}
		if (decoded && sync_off <= last_sync) {
			/* libipt syncs past the PSB it failed at; if it ever did
			 * not, decoding the same stretch again would never end */
			err = gap_add(&fs, fs.has_time ? fs.now : 0, 0,
			              "pt: no sync point after the last error: rest not decoded");
			break;
		}
		err = flow_time(&fs, 0);
		if (err)
			break;
		/* at a sync point the timeline holds up to now */
		fs.in_user = 0;
		err = flow_switch(&fs, 0);
		if (!err && first && whole && sync_off > 0) {
			char reason[96];

			snprintf(reason, sizeof(reason),
			         "pt: %" PRIu64 " bytes before the first PSB not decodable", sync_off);
			err = gap_add(&fs, fs.has_time ? fs.now : 0, 0, reason);
		}
		first = 0;
		last_sync = sync_off;
		if (!err)
			err = flow_decode(&fs, status);
		decoded = 1;
		if (err == 1)
			err = 0;
		else if (!err)
			break;
	}
	if (err >= 0)
		err = flow_flush(&fs, 0);
	if (err >= 0)
		err = gap_close(&fs);
	if (err >= 0 && fs.res->stats.saw_time) {
		res->has_cyc = flow_range_has_cyc(&cfg, plan, fs.next);
		if (res->has_cyc < 0)
			err = res->has_cyc;
	}
	res->last_ts = fs.has_time ? fs.now : -1;
	pt_blk_free_decoder(fs.dec.lib);
	sptd_dec_qblk_destroy(fs.dec.own);
	for (i = 0; i < s->naspaces; i++)
		pt_image_free(fs.images[i]);
	free(fs.images);
	sptd_dec_brcache_fini(&fs.br);
	res->stats.decode_ns = sptd_dec_now_ns() - t0;
	return err;
}

void sptd_dec_cpu_result_fini(struct sptd_dec_cpu_result *res)
{
	if (!res)
		return;
	sptd_dec_flowbuf_fini(&res->flows);
	free(res->gaps);
	res->gaps = NULL;
	res->ngaps = res->capgaps = 0;
	sptd_dec_tplace_fini(res->tplace);
	free(res->tplace);
	res->tplace = NULL;
	free(res->head.v);
	free(res->tail.v);
	memset(&res->head, 0, sizeof(res->head));
	memset(&res->tail, 0, sizeof(res->tail));
}
