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
 * cross-check of the timeline (cr3check.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "flow-local.h"

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
	int pend_kind;                     /* SPTD_DEC_FLOW_*; 0: none */
	uint64_t pend_from;                /* its ip */
	int64_t pend_ts;                   /* its time (flow_ts) */
	int pend_tid;                      /* the task it ran in */
	uint64_t pend_pos;                 /* its instruction position */
	size_t pend_seg;                   /* its stretch of constant time */
	int peek_tid;                      /* task whose address space is peek_as */
	struct sptd_dec_aspace *peek_as;   /* for jump targets; NULL none yet */
	uint64_t pos;                      /* instructions decoded so far */
	struct sptd_dec_tplace tp;         /* time updates, for placing events
	                                    * between them (flowtime.c) */
	struct sptd_dec_brcache br;        /* branch classes of blocks libipt
	                                    * left unclassified (brcache.c) */
	struct sptd_dec_cr3check cr3;      /* PIP/CR3 cross-check of the sched
	                                    * timeline (cr3check.c) */
	/* an open gap (after an error or overflow) */
	int gap_open;                      /* 1: a gap is open */
	int64_t gap_ts;                    /* where it began (time, or order) */
	char gap_reason[160];              /* why, "pt: ..." */
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
	if ((!fs->has_time || now != fs->now) &&
	    sptd_dec_tplace_mark(&fs->tp, now, fs->pos + ahead) < 0)
		return -ENOMEM;
	fs->now = now;
	fs->now_tsc = tsc;
	fs->has_time = 1;
	fs->res->stats.saw_time = 1;
	return 0;
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
	if (sptd_dec_tplace_note(&fs->tp, fb->n, pos, seg) < 0)
		return -ENOMEM;
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
	return flow_push_at(fs, kind, tid, ts, from, to, fs->pos, sptd_dec_tplace_seg_now(&fs->tp));
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
	return gap_add(fs, fs->gap_ts, sptd_dec_span(fs->gap_ts, end), fs->gap_reason);
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

/* A PIP (CR3 write): checked against the timeline (cr3check.c); a mismatch
 * is counted and becomes a gap up to the next switch.  Guest (non-root)
 * CR3s, CR3 0 and traces without time are left alone. */
static int flow_paging(struct flow_state *fs, uint64_t cr3, int non_root)
{
	char reason[160];
	size_t napplied;
	int tid, pid, bound = -1, ret;
	int64_t dur = 0;

	if (non_root || !cr3 || !fs->has_time || fs->s->cfg.no_timing)
		return 0;
	tid = flow_sched_tid(fs, &napplied);
	if (tid < 0)
		return 0;
	pid = sptd_dec_task_pid(fs->s, tid);
	ret = sptd_dec_cr3check_see(&fs->cr3, cr3, pid, napplied, &bound);
	if (ret <= 0)
		return ret;
	fs->res->stats.cr3_mismatches++;
	if (napplied < fs->nsw && fs->sw[napplied].ts > fs->now)
		dur = sptd_dec_span(fs->now, fs->sw[napplied].ts);
	snprintf(reason, sizeof(reason),
	         "pt: CR3 0x%" PRIx64 " belongs to pid %d but the schedule says pid %d runs",
	         cr3, bound, pid);
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
		sptd_dec_tplace_stop(&fs->tp, fs->pos);
		err = flow_flush(fs, ev->ip_suppressed ? 0 : ev->variant.disabled.ip);
		if (!err)
			err = flow_push(fs, SPTD_DEC_FLOW_DISABLE, fs->tid, flow_ts(fs),
			                fs->last_ip, 0);
		break;
	case ptev_async_disabled:
		fs->in_user = 0;
		sptd_dec_tplace_stop(&fs->tp, fs->pos);
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
		sptd_dec_tplace_stop(&fs->tp, fs->pos);
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
		fs->pend_seg = sptd_dec_tplace_seg_now(&fs->tp);
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
	sptd_dec_tplace_stop(&fs->tp, fs->pos);
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
	sptd_dec_tplace_stop(&fs->tp, fs->pos);
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
	fs.sw = s->nswitches ? s->switches + i : NULL;   /* no arithmetic on NULL */
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
	err = sptd_dec_brcache_init(&fs.br, s->iscache);
	fs.dec = pt_blk_alloc_decoder(&cfg);
	if (!fs.dec || !fs.images || err < 0) {
		pt_blk_free_decoder(fs.dec);
		free(fs.images);
		sptd_dec_brcache_fini(&fs.br);
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
		int cyc = sptd_dec_trace_has_cyc(&cfg);

		if (cyc < 0)
			err = cyc;
		else if (!cyc)
			sptd_dec_tplace_apply(&fs.tp, res->flows.ev, res->flows.n, fs.sw, fs.nsw);
	}
	sptd_dec_flows_fix_times(res->flows.ev, res->flows.n, res->stats.saw_time);
	res->last_ts = fs.has_time ? fs.now : -1;
	pt_blk_free_decoder(fs.dec);
	for (i = 0; i < s->naspaces; i++)
		pt_image_free(fs.images[i]);
	free(fs.images);
	sptd_dec_brcache_fini(&fs.br);
	sptd_dec_cr3check_fini(&fs.cr3);
	sptd_dec_tplace_fini(&fs.tp);
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
