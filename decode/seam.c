/* seam.c — checkpoints where two segments of one CPU's PT meet.
 *
 * A segment's decoder starts fresh at its PSB; the decoder of the segment
 * before it arrives at that PSB with a history (a task switched in, a
 * branch waiting for its target, libipt's time calibration).  Both record
 * checkpoints of their state from that PSB on, each relative to the point
 * where the PSB's status updates (PSB+) were read: the same instruction
 * of the same stream.  Where two checkpoints at the same relative position
 * are equal in everything that decides what comes next, the later decoder
 * gives exactly what the earlier one would have: the stitch (flowseg.c)
 * cuts there.
 *
 * What is compared: libipt's trace offset, time and status as it reports
 * them; the loop's task, switches applied, address space, user/kernel
 * state, time, last instruction, pending branch and stall detector.  What
 * libipt keeps inside is either reset at a PSB (last IP, TNT cache, mode,
 * time without CYC) or guaranteed by the hardware not to be needed across
 * one (the return-compression stack); CYC calibration is not, so with CYC
 * the stitch only looks past an MTC that recalibrates both (the plan's
 * conv offset).  What the loop keeps only for the end (the PIP check's
 * CR3s, time stretches) is put together after stitching. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flow-local.h"

struct sptd_dec_ckpt *sptd_dec_ckpts_push(struct sptd_dec_ckpts *c)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct sptd_dec_ckpt *n = realloc(c->v, cap * sizeof(*n));

		if (!n)
			return NULL;
		c->v = n;
		c->cap = cap;
	}
	return &c->v[c->n++];
}

int sptd_dec_ckpt_same(const struct sptd_dec_ckpt *a, const struct sptd_dec_ckpt *b)
{
	if (!a->usable || !b->usable)
		return 0;
	if (a->rel != b->rel || a->offset != b->offset || a->time_rc != b->time_rc ||
	    a->tsc != b->tsc || a->lost_mtc != b->lost_mtc || a->lost_cyc != b->lost_cyc ||
	    a->status != b->status || a->tid != b->tid || a->swi != b->swi || a->as != b->as ||
	    a->in_user != b->in_user || a->has_time != b->has_time || a->now != b->now ||
	    a->now_tsc != b->now_tsc || a->last_ip != b->last_ip || a->pend_kind != b->pend_kind ||
	    a->stall_off != b->stall_off || a->stall_n != b->stall_n)
		return 0;
	return !a->pend_kind || (a->pend_from == b->pend_from && a->pend_ts == b->pend_ts &&
	                         a->pend_tid == b->pend_tid && a->pend_rel == b->pend_rel);
}

/* The state at the top of the decode loop, relative to position @origin. */
static void ckpt_fill(const struct sptd_dec_flowstate *fs, uint64_t origin, uint64_t offset,
                      int status, struct sptd_dec_ckpt *c)
{
	memset(c, 0, sizeof(*c));
	c->rel = fs->pos - origin;
	c->offset = offset;
	c->time_rc = sptd_dec_blk_time(&fs->dec, &c->tsc, &c->lost_mtc, &c->lost_cyc);
	c->status = status;
	c->tid = fs->tid;
	c->swi = fs->swi;
	c->as = fs->as;
	c->in_user = fs->in_user;
	c->has_time = fs->has_time;
	c->now = fs->has_time ? fs->now : 0;
	c->last_ip = fs->last_ip;
	c->now_tsc = fs->has_time ? fs->now_tsc : 0;
	c->pend_kind = fs->pend_kind;
	if (fs->pend_kind) {
		c->pend_from = fs->pend_from;
		c->pend_ts = fs->pend_ts;
		c->pend_tid = fs->pend_tid;
		c->pend_rel = (int64_t)(fs->pend_pos - origin);
	}
	/* no cut inside an open gap, nor where a pending branch belongs to
	 * an older stretch of time than the current one (the stitch maps a
	 * segment's current stretch onto the other's) */
	c->usable = !fs->gap_open &&
	            (!fs->pend_kind || fs->pend_seg == sptd_dec_tplace_seg_now(fs->tp));
	c->stall_off = fs->stall_off;
	c->stall_n = fs->stall_n;
	c->pos = fs->pos;
	c->seq = fs->seq;
	c->nflows = fs->res->flows.n;
	c->ngaps = fs->res->ngaps;
	c->nsegs = fs->tp->nsegs;
	c->nstops = fs->tp->nstops;
	c->underflows = fs->res->underflows;
	c->stats = fs->res->stats;
}

int sptd_dec_seam_step(struct sptd_dec_flowstate *fs, int status)
{
	const struct sptd_dec_segplan *p = fs->plan, *n = fs->next;
	struct sptd_dec_ckpt *c;
	uint64_t off = 0;
	int seen = fs->status_seen;

	fs->status_seen = 0;
	/* nothing to record and no PSB passed: only now and then look
	 * whether the next segment's PSB went by unseen */
	if (!seen && !fs->head_on && !fs->tail_on && (p->index == 0 || fs->head_done) &&
	    (++fs->seam_polls & 255))
		return 0;
	/* (the offset is libipt's read position: it may run ahead of the
	 * instructions, never behind) */
	sptd_dec_blk_get_offset(&fs->dec, &off);
	if (p->index > 0 && !fs->head_done) {
		/* the first loop top: the segment's origin, if its PSB's
		 * status updates were just read */
		fs->head_done = 1;
		if (seen && off > p->start && off <= p->start_win) {
			fs->head_on = 1;
			fs->head_pos = fs->pos;
			fs->res->head_ok = 1;
		}
	}
	/* with CYC (a conv offset), no cut before it: nothing to record */
	if (fs->head_on && (p->conv == UINT64_MAX || off > p->conv)) {
		c = sptd_dec_ckpts_push(&fs->res->head);
		if (!c)
			return -ENOMEM;
		ckpt_fill(fs, fs->head_pos, off, status, c);
		if (fs->res->head.n >= SPTD_DEC_SEAM_CKPTS)
			fs->head_on = 0;
	}
	if (!n)
		return 0;
	if (!fs->tail_on) {
		if (seen && off > n->start && off <= n->start_win) {
			fs->tail_on = 1;
			fs->tail_pos = fs->pos;
			fs->res->tail_ok = 1;
		} else if (off > n->start_win) {
			return 1;  /* its status updates never came: no seam here */
		}
	}
	if (fs->tail_on && (n->conv == UINT64_MAX || off > n->conv)) {
		c = sptd_dec_ckpts_push(&fs->res->tail);
		if (!c)
			return -ENOMEM;
		ckpt_fill(fs, fs->tail_pos, off, status, c);
		if (fs->res->tail.n >= SPTD_DEC_SEAM_CKPTS)
			return 1;
	}
	return 0;
}

