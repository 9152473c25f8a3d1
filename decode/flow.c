/* flow.c — phase 1: one CPU's PT through libipt's block decoder into flow
 * events (calls, returns, far transfers, interrupts, enable/disable,
 * overflows, errors) with timestamps, switching address spaces as the sched
 * timeline says, counting what libipt classifies, and recording every
 * stretch that could not be decoded as a gap.  PIP packets (CR3 writes)
 * cross-check the timeline: a CR3 bound to another process than the one
 * scheduled is counted (cr3_mismatches) and becomes a gap; decoding still
 * follows the timeline.
 *
 * Blocks end at every call and jump (end_on_call/end_on_jump), so the
 * branch of interest is always a block's last instruction; its target is
 * the next block's first ip (or the ip of the event that intervenes).
 *
 * Time: libipt's time is that of the last timing packet read, a step
 * function.  With coarse timing (no CYC packets: TSC only, one time per
 * PSB+; MTC, one per MTC period) every event between two updates would get
 * the earlier one.  Each event therefore keeps its position in the
 * instruction stream, and once the CPU is decoded, the events of a stretch
 * between two updates are placed between the two times in proportion to
 * the instructions executed (an estimate, never outside the two known
 * times).  In a stretch where tracing stopped (disable, overflow, error)
 * for an unknown time, events up to the stop advance at the average rate
 * of the stretches before, bounded by the next known time and the next
 * context switch on the CPU; events after the stop take the stop's time.
 * With CYC, libipt's times are cycle-accurate already (and run a packet
 * ahead of the instruction position), so they are kept as they are. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "dec-local.h"

/* A stretch of constant decoder time: from the update to @ts on. */
struct flow_seg {
	int64_t ts;                        /* the time (ns) from this update on */
	uint64_t pos;                      /* instructions decoded at the update */
	int stopped;                       /* tracing stopped within the stretch */
	uint64_t stop_pos;                 /* instruction position of the first stop */
};

/* One remembered branch class (flow_classify): code does not change under
 * a section, so (section, ip, mode) always gives the same answer. */
struct flow_class {
	uint64_t ip;                       /* end ip of the block */
	int isid;                          /* section it was read from; 0: empty slot */
	int mode;                          /* enum pt_exec_mode */
	int iclass;                        /* enum pt_insn_class */
};
#define FLOW_CLASS_SLOTS 4096            /* power of two */

/* A CR3 this CPU has seen, and the process it was bound to (flow_paging). */
struct flow_cr3 {
	uint64_t cr3;                      /* page-table base from a PIP */
	int pid;                           /* process the timeline ran at its first PIP */
};

/* State of one CPU's decode. */
struct flow_state {
	struct sptd_dec_session *s;
	struct sptd_dec_cpu_result *res;
	struct pt_block_decoder *dec;
	int cpu;
	const struct sptd_dec_switch *sw;  /* this CPU's switches, by time */
	size_t nsw, swi;                   /* count, next to apply */
	int tid;                           /* task on the CPU now, -1 unknown */
	struct sptd_dec_aspace *as;        /* its address space */
	struct pt_image **images;          /* this decoder's own libipt image of
	                                    * each address space (by index in
	                                    * s->aspaces), built on first use */
	int64_t now;                       /* latest time (ns), valid with has_time */
	uint64_t now_tsc;                  /* the decoder time @now was made from */
	int has_time;                      /* a timing packet has been seen */
	uint64_t seq;                      /* events so far: order and tie-break */
	uint64_t last_ip;                  /* last instruction decoded */
	int in_user;                       /* 1: decoding user code with tracing
	                                    * on (no switch can happen now) */
	/* the branch ending the previous block, waiting for its target */
	int pend_kind;                     /* 0: none */
	uint64_t pend_from;
	int64_t pend_ts;
	int pend_timed;
	int pend_tid;
	int peek_tid;                      /* task whose address space is peek_as */
	struct sptd_dec_aspace *peek_as;   /* for jump targets; NULL none yet */
	uint64_t pend_pos;
	size_t pend_seg;
	/* time updates, for placing events between them (see the top) */
	uint64_t pos;                      /* instructions decoded so far */
	struct flow_seg *segs;             /* every change of the decoder's time */
	size_t nsegs, capsegs;
	uint64_t *ev_pos;                  /* per flow event: instruction position */
	size_t *ev_seg;                    /* per flow event: segs index, SIZE_MAX none */
	size_t capev;                      /* allocated entries of ev_pos/ev_seg */
	/* branch classes of blocks libipt left unclassified, by end ip */
	struct flow_class *classes;        /* FLOW_CLASS_SLOTS entries, direct-mapped */
	/* PIP/CR3 cross-check of the sched timeline (flow_paging) */
	struct flow_cr3 *cr3s;             /* CR3s learned on this CPU */
	size_t ncr3, capcr3;
	size_t cr3_flagged;                /* 1 + switches applied at the last
	                                    * reported mismatch; 0 none */
	/* an open gap (after an error or overflow) */
	int gap_open;
	int64_t gap_ts;
	char gap_reason[160];
};

static int64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Refresh fs->now from the decoder's time; @ahead: instructions of a block
 * just decoded but not yet counted (the time read with it times its end). */
static int flow_time(struct flow_state *fs, uint64_t ahead)
{
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	int64_t now;

	if (fs->s->cfg.no_timing)
		return 0;
	if (pt_blk_time(fs->dec, &tsc, &lost_mtc, &lost_cyc) < 0)
		return 0;
	if (fs->has_time && tsc == fs->now_tsc)
		return 0;                  /* unchanged: most blocks */
	now = sptd_dec_tsc_ns(&fs->s->tsc, tsc);
	if (!fs->has_time || now != fs->now) {
		if (fs->nsegs == fs->capsegs) {
			size_t cap = fs->capsegs ? fs->capsegs * 2 : 256;
			struct flow_seg *n = realloc(fs->segs, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			fs->segs = n;
			fs->capsegs = cap;
		}
		fs->segs[fs->nsegs++] = (struct flow_seg){ .ts = now, .pos = fs->pos + ahead };
	}
	fs->now = now;
	fs->now_tsc = tsc;
	fs->has_time = 1;
	fs->res->stats.saw_time = 1;
	return 0;
}

/* The current stretch of constant time, SIZE_MAX before the first. */
static size_t flow_seg_now(const struct flow_state *fs)
{
	return fs->nsegs ? fs->nsegs - 1 : SIZE_MAX;
}

/* Tracing stopped now: the stretch it stopped in keeps step times.  libipt
 * reads timing packets ahead of events, so stretches that began at this
 * instruction position (a PSB+ after the disable, say) are marked too,
 * back to the one the position lies in. */
static void flow_seg_stop(struct flow_state *fs)
{
	size_t k = fs->nsegs;

	while (k-- > 0) {
		if (!fs->segs[k].stopped || fs->segs[k].stop_pos > fs->pos)
			fs->segs[k].stop_pos = fs->pos;
		fs->segs[k].stopped = 1;
		if (fs->segs[k].pos < fs->pos)
			break;
	}
}

/* Timestamp for an event now: time when known, else -1 (fixed up later). */
static int64_t flow_ts(const struct flow_state *fs)
{
	return fs->has_time ? fs->now : -1;
}

/* Append an event stamped @ts, at instruction position @pos of stretch
 * @seg. */
static int flow_push_at(struct flow_state *fs, int kind, int tid, int64_t ts,
                        uint64_t from, uint64_t to, uint64_t pos, size_t seg)
{
	struct sptd_dec_flowbuf *fb = &fs->res->flows;
	struct sptd_dec_flow *ev;

	if (fb->n == fb->cap) {
		size_t cap = fb->cap ? fb->cap * 2 : 4096;
		struct sptd_dec_flow *n = realloc(fb->ev, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		fb->ev = n;
		fb->cap = cap;
	}
	if (fb->n == fs->capev) {
		size_t cap = fs->capev ? fs->capev * 2 : 4096;
		uint64_t *np = realloc(fs->ev_pos, cap * sizeof(*np));
		size_t *ns;

		if (!np)
			return -ENOMEM;
		fs->ev_pos = np;
		ns = realloc(fs->ev_seg, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		fs->ev_seg = ns;
		fs->capev = cap;
	}
	fs->ev_pos[fb->n] = pos;
	fs->ev_seg[fb->n] = seg;
	ev = &fb->ev[fb->n++];
	ev->ts = ts;
	ev->seq = fs->seq++;
	ev->cpu = fs->cpu;
	ev->tid = tid;
	ev->kind = kind;
	ev->flags = 0;
	ev->from = from;
	ev->to = to;
	return 0;
}

/* Append an event happening now. */
static int flow_push(struct flow_state *fs, int kind, int tid, int64_t ts,
                     uint64_t from, uint64_t to)
{
	return flow_push_at(fs, kind, tid, ts, from, to, fs->pos, flow_seg_now(fs));
}

/* Emit the pending branch now that its target @to is known (0: unknown). */
static int flow_flush(struct flow_state *fs, uint64_t to)
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

static int gap_add(struct flow_state *fs, int64_t ts, int64_t dur, const char *reason)
{
	struct sptd_dec_cpu_result *r = fs->res;

	if (r->ngaps == r->capgaps) {
		size_t cap = r->capgaps ? r->capgaps * 2 : 16;
		struct sptd_dec_gaprec *n = realloc(r->gaps, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->gaps = n;
		r->capgaps = cap;
	}
	r->gaps[r->ngaps].ts = ts;
	r->gaps[r->ngaps].dur = dur < 0 ? 0 : dur;
	snprintf(r->gaps[r->ngaps].reason, sizeof(r->gaps[r->ngaps].reason), "%s", reason);
	r->ngaps++;
	r->stats.gaps++;
	return 0;
}

/* Start a gap at the current time; it ends when decoding resumes. */
static void gap_open(struct flow_state *fs, const char *reason)
{
	if (fs->gap_open)
		return;
	fs->gap_open = 1;
	fs->gap_ts = fs->has_time ? fs->now : (int64_t)fs->seq;
	snprintf(fs->gap_reason, sizeof(fs->gap_reason), "%s", reason);
}

static int gap_close(struct flow_state *fs)
{
	int64_t end;

	if (!fs->gap_open)
		return 0;
	fs->gap_open = 0;
	end = fs->has_time ? fs->now : (int64_t)fs->seq;
	return gap_add(fs, fs->gap_ts, end - fs->gap_ts, fs->gap_reason);
}

/* Decode with address space @as from now on. */
static int flow_use_aspace(struct flow_state *fs, struct sptd_dec_aspace *as)
{
	size_t k = (size_t)(as - fs->s->aspaces);
	int err;

	if (!fs->images[k]) {
		err = sptd_dec_aspace_image_new(fs->s, as, &fs->images[k]);
		if (err < 0)
			return err;
	}
	fs->as = as;
	return pt_blk_set_image(fs->dec, fs->images[k]) < 0 ? -EIO : 0;
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
static int flow_switch(struct flow_state *fs, int user_code)
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
static int flow_sched_tid(const struct flow_state *fs, size_t *napplied)
{
	size_t i = fs->swi;
	int tid = fs->tid;

	while (i < fs->nsw && fs->sw[i].ts <= fs->now)
		tid = fs->sw[i++].next_tid;
	*napplied = i;
	return tid;
}

/* A PIP (CR3 write) as a cross-check of the timeline: the first CR3 seen
 * while the timeline runs a process binds it to that process (threads
 * share one); a bound CR3 showing up while the timeline runs another
 * process is a mismatch, reported once per stretch between two switches
 * as a gap up to the next switch.  Decoding keeps following the timeline.
 * Guest (non-root) CR3s, CR3 0 and traces without time are left alone. */
static int flow_paging(struct flow_state *fs, uint64_t cr3, int non_root)
{
	char reason[160];
	size_t i, napplied;
	int tid, pid;
	int64_t dur = 0;

	if (non_root || !cr3 || !fs->has_time || fs->s->cfg.no_timing)
		return 0;
	tid = flow_sched_tid(fs, &napplied);
	if (tid < 0)
		return 0;
	pid = sptd_dec_task_pid(fs->s, tid);
	for (i = 0; i < fs->ncr3 && fs->cr3s[i].cr3 != cr3; i++)
		;
	if (i == fs->ncr3) {
		if (fs->ncr3 == fs->capcr3) {
			size_t cap = fs->capcr3 ? fs->capcr3 * 2 : 16;
			struct flow_cr3 *n = realloc(fs->cr3s, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			fs->cr3s = n;
			fs->capcr3 = cap;
		}
		fs->cr3s[fs->ncr3++] = (struct flow_cr3){ .cr3 = cr3, .pid = pid };
		return 0;
	}
	if (fs->cr3s[i].pid == pid || fs->cr3_flagged == napplied + 1)
		return 0;
	fs->cr3_flagged = napplied + 1;
	fs->res->stats.cr3_mismatches++;
	if (napplied < fs->nsw && fs->sw[napplied].ts > fs->now)
		dur = fs->sw[napplied].ts - fs->now;
	snprintf(reason, sizeof(reason),
	         "pt: CR3 0x%" PRIx64 " belongs to pid %d but the schedule says pid %d runs",
	         cr3, fs->cr3s[i].pid, pid);
	return gap_add(fs, fs->now, dur, reason);
}

static int flow_event(struct flow_state *fs, const struct pt_event *ev)
{
	int err = 0;

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
		flow_seg_stop(fs);
		err = flow_flush(fs, ev->ip_suppressed ? 0 : ev->variant.disabled.ip);
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_DISABLE, fs->tid, flow_ts(fs),
			                fs->last_ip, 0);
		break;
	case ptev_async_disabled:
		fs->in_user = 0;
		flow_seg_stop(fs);
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
		flow_seg_stop(fs);
		err = flow_flush(fs, 0);
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_OVERFLOW, fs->tid, flow_ts(fs), 0,
			                ev->ip_suppressed ? 0 : ev->variant.overflow.ip);
		gap_open(fs, "pt: overflow: the CPU dropped trace");
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

/* The class of the branch at @ip, for blocks whose iclass libipt leaves at
 * ptic_error (its block cache does so for indirect and far branches: the
 * caller is to decode the instruction).  Legacy prefixes and REX are
 * skipped; only the opcodes that end a block are told apart. */
static enum pt_insn_class flow_classify_insn(struct flow_state *fs, const struct pt_block *b)
{
	uint8_t insn[16];
	const uint8_t *p = insn, *end;
	int n;

	if (b->truncated) {
		memcpy(insn, b->raw, b->size < sizeof(insn) ? b->size : sizeof(insn));
		n = b->size;
	} else {
		n = pt_iscache_read(fs->s->iscache, insn, sizeof(insn), b->isid, b->end_ip);
	}
	if (n <= 0)
		return ptic_error;
	end = insn + (n < (int)sizeof(insn) ? n : (int)sizeof(insn));
	while (p < end && (*p == 0x66 || *p == 0x67 || *p == 0xf2 || *p == 0xf3 ||
	                   *p == 0xf0 || *p == 0x2e || *p == 0x36 || *p == 0x3e ||
	                   *p == 0x26 || *p == 0x64 || *p == 0x65))
		p++;
	if (p < end && (*p & 0xf0) == 0x40 && b->mode == ptem_64bit)
		p++;
	if (p >= end)
		return ptic_error;
	switch (*p) {
	case 0xe8:
		return ptic_call;
	case 0xe9: case 0xeb:
		return ptic_jump;
	case 0xc2: case 0xc3:
		return ptic_return;
	case 0xca: case 0xcb: case 0xcf:
		return ptic_far_return;
	case 0xcc: case 0xcd: case 0xce:
		return ptic_far_call;
	case 0x9a:
		return ptic_far_call;
	case 0xea:
		return ptic_far_jump;
	case 0x0f:
		if (p + 1 >= end)
			return ptic_error;
		if (p[1] == 0x05 || p[1] == 0x34)
			return ptic_far_call;        /* syscall, sysenter */
		if (p[1] == 0x07 || p[1] == 0x35)
			return ptic_far_return;      /* sysret, sysexit */
		return ptic_other;
	case 0xff:
		if (p + 1 >= end)
			return ptic_error;
		switch ((p[1] >> 3) & 7) {
		case 2:
			return ptic_call;
		case 3:
			return ptic_far_call;
		case 4:
			return ptic_jump;
		case 5:
			return ptic_far_jump;
		default:
			return ptic_other;
		}
	default:
		return ptic_other;
	}
}

/* flow_classify_insn, remembered per (section, ip, mode) unless the block
 * is truncated (its bytes span sections). */
static enum pt_insn_class flow_classify(struct flow_state *fs, const struct pt_block *b)
{
	struct flow_class *c;
	enum pt_insn_class iclass;

	if (b->truncated || b->isid <= 0 || !fs->classes)
		return flow_classify_insn(fs, b);
	c = &fs->classes[(b->end_ip ^ (b->end_ip >> 12)) & (FLOW_CLASS_SLOTS - 1)];
	if (c->isid == b->isid && c->ip == b->end_ip && c->mode == (int)b->mode)
		return (enum pt_insn_class)c->iclass;
	iclass = flow_classify_insn(fs, b);
	*c = (struct flow_class){ .ip = b->end_ip, .isid = b->isid, .mode = (int)b->mode,
	                          .iclass = (int)iclass };
	return iclass;
}

/* One decoded block: count it and note its last branch. */
static int flow_block(struct flow_state *fs, const struct pt_block *b)
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
	fs->in_user = !(b->end_ip >> 63);
	switch (b->iclass == ptic_error ? flow_classify(fs, b) : b->iclass) {
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
		fs->pend_seg = flow_seg_now(fs);
	}
	return 0;
}

/* A decode error: record it and leave the resync to the caller. */
static int flow_error(struct flow_state *fs, int code, const struct pt_block *b)
{
	char reason[160];
	uint64_t off = 0;
	int err;

	pt_blk_get_offset(fs->dec, &off);
	fs->res->stats.decode_errors++;
	if (code == pte_nomap)
		snprintf(reason, sizeof(reason),
		         "pt: no image for ip 0x%" PRIx64 " (missing image), offset 0x%" PRIx64,
		         b->ninsn ? b->end_ip : b->ip, off);
	else
		snprintf(reason, sizeof(reason), "pt: decode error: %s at offset 0x%" PRIx64,
		         pt_errstr((enum pt_error_code)code), off);
	flow_seg_stop(fs);
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
static int flow_stalled(struct flow_state *fs, uint64_t ninsn, uint64_t *stall_off,
                        uint64_t *stall_n)
{
	uint64_t off = 0;

	if (pt_blk_get_offset(fs->dec, &off) < 0 || off != *stall_off) {
		*stall_off = off;
		*stall_n = 0;
		return 0;
	}
	*stall_n += ninsn ? ninsn : 1;
	return *stall_n > FLOW_STALL_LIMIT;
}

/* The decoder stalled: a gap up to the next sync point. */
static int flow_stall(struct flow_state *fs, uint64_t off)
{
	char reason[160];
	int err;

	snprintf(reason, sizeof(reason),
	         "pt: decoder made no progress at offset 0x%" PRIx64 " (%u instructions "
	         "without trace, near ip 0x%" PRIx64 "): image does not match the trace?",
	         off, FLOW_STALL_LIMIT, fs->last_ip);
	fs->res->stats.decode_errors++;
	flow_seg_stop(fs);
	err = flow_flush(fs, 0);
	if (!err)
		err = flow_push(fs, SPTD_DEC_FLOW_ERROR, fs->tid, flow_ts(fs), 0, 0);
	gap_open(fs, reason);
	return err;
}

/* Decode from a sync point until the end or an error; returns 0 at the end
 * of the trace, 1 after a decode error or a stall (resync needed), < 0
 * failure. */
static int flow_decode(struct flow_state *fs, int status)
{
	uint64_t stall_off = UINT64_MAX, stall_n = 0;
	int err;

	for (;;) {
		struct pt_block b;

		while (status & pts_event_pending) {
			struct pt_event ev;

			status = pt_blk_event(fs->dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			err = flow_time(fs, 0);
			if (!err)
				err = flow_event(fs, &ev);
			if (err)
				return err;
		}
		if (status < 0) {
			memset(&b, 0, sizeof(b));
		} else {
			err = flow_switch(fs, fs->in_user);
			if (err)
				return err;
			memset(&b, 0, sizeof(b));
			status = pt_blk_next(fs->dec, &b, sizeof(b));
			err = flow_time(fs, b.ninsn);
			if (!err && b.ninsn)
				err = flow_block(fs, &b);
			if (err)
				return err;
			if (status >= 0 && flow_stalled(fs, b.ninsn, &stall_off, &stall_n)) {
				err = flow_stall(fs, stall_off);
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

/* The time events of stretch @k at instruction position @pos are placed at
 * (@rate_num / @rate_den: ns per instruction over the stretches before it
 * that ran without a stop, 0 none yet). */
static int64_t flow_seg_place(const struct flow_state *fs, size_t k, uint64_t pos,
                              int64_t rate_num, uint64_t rate_den)
{
	const struct flow_seg *a = &fs->segs[k], *b = k + 1 < fs->nsegs ? a + 1 : NULL;
	int64_t bound, t;
	size_t i;

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
	for (i = 0; i < fs->nsw; i++) {
		if (fs->sw[i].ts > a->ts) {
			if (fs->sw[i].ts < bound)
				bound = fs->sw[i].ts;
			break;
		}
	}
	if (bound == INT64_MAX || bound <= a->ts)
		return a->ts;
	t = a->ts + (int64_t)((unsigned __int128)(uint64_t)rate_num * (pos - a->pos) / rate_den);
	return t < bound ? t : bound;
}

/* Place the events of each stretch between its time and the next one's,
 * by instruction position (see the top of the file). */
static void flow_place_times(struct flow_state *fs)
{
	struct sptd_dec_flowbuf *fb = &fs->res->flows;
	int64_t rate_num = 0;
	uint64_t rate_den = 0;
	size_t i, k = 0;

	for (i = 0; i < fb->n; i++) {
		size_t seg = fs->ev_seg[i];

		if (seg == SIZE_MAX || fb->ev[i].ts != fs->segs[seg].ts)
			continue;
		/* the average rate of the stopless stretches before @seg */
		for (; k < seg && k + 1 < fs->nsegs; k++) {
			const struct flow_seg *a = &fs->segs[k], *b = a + 1;

			if (!a->stopped && b->ts > a->ts && b->pos > a->pos) {
				rate_num += b->ts - a->ts;
				rate_den += b->pos - a->pos;
			}
		}
		fb->ev[i].ts = flow_seg_place(fs, seg, fs->ev_pos[i], rate_num, rate_den);
	}
}

/* Does @c's trace hold a CYC packet?  (Then its times need no placing.) */
static int flow_has_cyc(const struct pt_config *cfg)
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

/* Events timed before the first timing packet take its time; a trace with
 * none keeps order numbers. */
static void flow_fixup_times(struct flow_state *fs)
{
	struct sptd_dec_flowbuf *fb = &fs->res->flows;
	int64_t first = -1;
	size_t i;

	for (i = 0; i < fb->n; i++) {
		if (!fs->res->stats.saw_time) {
			fb->ev[i].ts = (int64_t)fb->ev[i].seq;
			fb->ev[i].flags |= SPTD_DEC_F_NO_TIME;
		} else if (fb->ev[i].ts >= 0 && first < 0) {
			first = fb->ev[i].ts;
		}
	}
	if (!fs->res->stats.saw_time)
		return;
	for (i = 0; i < fb->n && fb->ev[i].ts < 0; i++)
		fb->ev[i].ts = first;
}

static int flow_config(const struct sptd_dec_session *s, const struct sptd_dec_cpu *c,
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
		if (pt_cpu_errata(&cfg->errata, &cfg->cpu) < 0)
			return -EINVAL;
	}
	cfg->mtc_freq = (uint8_t)s->cfg.mtc_freq;
	cfg->nom_freq = (uint8_t)s->cfg.nom_freq;
	cfg->cpuid_0x15_eax = s->cfg.cpuid15_eax;
	cfg->cpuid_0x15_ebx = s->cfg.cpuid15_ebx;
	cfg->flags.variant.block.end_on_call = 1;
	cfg->flags.variant.block.end_on_jump = 1;
	return 0;
}

int sptd_dec_flow_cpu(struct sptd_dec_session *s, int cpu, struct sptd_dec_cpu_result *res)
{
	struct sptd_dec_cpu *c = &s->cpus[cpu];
	struct flow_state fs;
	struct pt_config cfg;
	uint64_t sync_off = 0, last_sync = 0;
	int64_t t0 = now_mono_ns();
	int status, err, first = 1, stuck = 0, decoded = 0;
	size_t i;

	memset(&fs, 0, sizeof(fs));
	fs.s = s;
	fs.res = res;
	fs.cpu = cpu;
	fs.tid = -1;
	for (i = 0; i < s->nswitches && s->switches[i].cpu < cpu; i++)
		;
	fs.sw = s->switches + i;
	while (i + fs.nsw < s->nswitches && s->switches[i + fs.nsw].cpu == cpu)
		fs.nsw++;
	if (fs.nsw)
		fs.tid = fs.sw[0].prev_tid;
	/* switches at or before time 0 hold from the start, also in a trace
	 * without timing (where later ones cannot be placed) */
	while (fs.swi < fs.nsw && fs.sw[fs.swi].ts <= 0)
		fs.tid = fs.sw[fs.swi++].next_tid;
	err = flow_config(s, c, &cfg);
	if (err)
		return err;
	fs.images = calloc(s->naspaces, sizeof(*fs.images));
	fs.classes = calloc(FLOW_CLASS_SLOTS, sizeof(*fs.classes));
	fs.dec = pt_blk_alloc_decoder(&cfg);
	if (!fs.dec || !fs.images || !fs.classes) {
		pt_blk_free_decoder(fs.dec);
		free(fs.images);
		free(fs.classes);
		return -ENOMEM;
	}
	err = flow_use_aspace(&fs, sptd_dec_aspace_of(s, fs.tid));
	while (!err) {
		status = pt_blk_sync_forward(fs.dec);
		if (status == -pte_eos) {
			if (first)
				err = gap_add(&fs, 0, 0, "pt: no PSB in the trace: nothing decodable");
			break;
		}
		pt_blk_get_sync_offset(fs.dec, &sync_off);
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
		fs.in_user = 0;
		if (first && sync_off > 0) {
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
		int cyc = flow_has_cyc(&cfg);

		if (cyc < 0)
			err = cyc;
		else if (!cyc)
			flow_place_times(&fs);
	}
	flow_fixup_times(&fs);
	res->last_ts = fs.has_time ? fs.now : -1;
	pt_blk_free_decoder(fs.dec);
	for (i = 0; i < s->naspaces; i++)
		pt_image_free(fs.images[i]);
	free(fs.images);
	free(fs.classes);
	free(fs.cr3s);
	free(fs.segs);
	free(fs.ev_pos);
	free(fs.ev_seg);
	res->stats.decode_ns = now_mono_ns() - t0;
	return err;
}

void sptd_dec_cpu_result_fini(struct sptd_dec_cpu_result *res)
{
	if (!res)
		return;
	free(res->flows.ev);
	free(res->gaps);
	memset(&res->flows, 0, sizeof(res->flows));
	res->gaps = NULL;
	res->ngaps = res->capgaps = 0;
}
