/* qblk.c — sysptd's own block decoder on libipt's query layer (pt_qry_*):
 * it hands out the blocks and events libipt's block decoder (with
 * end_on_call and end_on_jump) would, so that phase 1 (flow.c) can use
 * either.  A block runs from its first instruction through straight-line
 * code and direct jumps/calls are not followed past (they end it), up to
 * and including the first branch, or up to a section change, a full block
 * (65535 instructions) or an event's place.  Trace is asked for in the
 * order libipt asks (a TNT bit per conditional branch and compressed
 * return, a TIP per indirect branch, events when the query says one is
 * pending), so the query decoder's offset and time match libipt's after
 * every call.  Instructions come from ild.c through the cache of qcode.c.
 *
 * Divisions: state; walking without trace; walking
 * with trace; events (binding, trailing, handing out); sync and the rest of
 * the interface; the scan for what it leaves to libipt. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dec-local.h"
#include "qcode-local.h"

#define QBLK_MAPS 64       /* address-space maps kept before the oldest go */

struct sptd_dec_qblk {
	struct pt_query_decoder *qry;    /* the packets */
	int skd022, bdm64;               /* the errata apply */
	struct sptd_dec_qmap maps[QBLK_MAPS]; /* code of address spaces used */
	size_t nmaps;                    /* used entries of maps */
	uint32_t next_mapid;             /* id for the next map built */
	struct sptd_dec_qmap *map;       /* the code decoded now; NULL none */
	struct sptd_dec_qcache cache;    /* decoded instructions */
	enum pt_exec_mode mode;          /* execution mode */
	uint64_t ip;                     /* the next instruction */
	int status;                      /* the query decoder's last status */
	int enabled;                     /* tracing is on */
	int process_event;               /* event holds one in progress */
	struct pt_event event;           /* the event in progress */
	int speculative;                 /* in a TSX transaction */
	int process_insn;                /* an instruction waits for its event */
	int bound_paging;                /* ... a paging event bound to it */
	int bound_vmcs;                  /* ... a VMCS event bound to it */
	struct sptd_dec_qinsn insn;      /* that instruction */
	uint64_t insn_ip;                /* ... at this address */
	struct sptd_dec_qretstack rs;    /* return addresses */
};

/* ---- state ------------------------------------------------------------------------ */

static void qblk_reset(struct sptd_dec_qblk *q)
{
	q->mode = ptem_unknown;
	q->ip = 0;
	q->status = 0;
	q->enabled = 0;
	q->process_event = 0;
	q->speculative = 0;
	q->process_insn = 0;
	q->bound_paging = 0;
	q->bound_vmcs = 0;
	memset(&q->event, 0, sizeof(q->event));
	q->rs.top = q->rs.bottom = 0;
}

/* The status flags handed out with @flags added. */
static int qblk_status(const struct sptd_dec_qblk *q, int flags)
{
	if (!q->enabled)
		flags |= pts_ip_suppressed;
	if ((q->status & pts_eos) && !q->process_event)
		flags |= pts_eos;
	return flags;
}

/* ---- walking without trace --------------------------------------------------- */

/* The next ip after @in at @ip when no trace is needed: 0, or
 * -pte_bad_query when it is (a conditional, indirect or far branch). */
static int next_ip(uint64_t *next, uint64_t ip, const struct sptd_dec_qinsn *in)
{
	uint64_t n = ip + in->ild.size;

	switch (in->ild.iclass) {
	case ptic_other:
	case ptic_ptwrite:
		break;
	case ptic_call:
	case ptic_jump:
		if (!in->ild.direct)
			return -pte_bad_query;
		n += (uint64_t)(int64_t)in->ild.disp;
		break;
	case ptic_error:
		return -pte_bad_insn;
	default:
		return -pte_bad_query;
	}
	*next = n;
	return 0;
}

/* Add the instruction at q->ip to @b: 1 added (in *@in), 0 it does not fit
 * (full block, another section, after a truncated one), < 0 error. */
static int one_insn(struct sptd_dec_qblk *q, struct pt_block *b, struct sptd_dec_qinsn *in)
{
	uint16_t n = (uint16_t)(b->ninsn + 1);
	int err;

	if (!n || b->truncated)
		return 0;
	err = sptd_dec_qcode_decode(&q->cache, q->map, q->ip, q->mode, in);
	if (err < 0)
		return err;
	if (in->isid != b->isid) {
		if (b->ninsn)
			return 0;
		b->isid = in->isid;
	}
	if (in->truncated) {
		memcpy(b->raw, in->raw, in->ild.size);
		b->size = in->ild.size;
		b->truncated = 1;
	}
	/* a call to the next instruction (position-independent code) is no
	 * call to return from */
	if (in->ild.iclass == ptic_call && !(in->ild.direct && !in->ild.disp))
		sptd_dec_qret_push(&q->rs, q->ip + in->ild.size);
	b->iclass = (enum pt_insn_class)in->ild.iclass;
	b->end_ip = q->ip;
	b->ninsn = n;
	return 1;
}

/* What proceeding to an instruction stops at. */
enum qblk_stop {
	QSTOP_NONE,            /* nothing: go until trace is needed */
	QSTOP_CR3,             /* a mov to CR3 */
	QSTOP_PIP,             /* what a PIP binds to: mov CR3, VM entry, far branch */
	QSTOP_VMCS,            /* what a VMCS binds to: vmptrld, VM entry, far branch */
};

static int stops_at(const struct sptd_dec_qinsn *in, enum qblk_stop stop)
{
	if (stop == QSTOP_CR3)
		return in->ild.special == SPTD_DEC_ILD_MOV_CR3;
	if (stop == QSTOP_NONE)
		return 0;
	if (in->ild.special == SPTD_DEC_ILD_VMENTRY ||
	    in->ild.special == (stop == QSTOP_PIP ? SPTD_DEC_ILD_MOV_CR3 : SPTD_DEC_ILD_VMPTRLD))
		return 1;
	return in->ild.iclass == ptic_far_call || in->ild.iclass == ptic_far_return ||
	       in->ild.iclass == ptic_far_jump;
}

/* Proceed through instructions until one @stop names (1, q->ip at it), the
 * block ends (0) or trace is needed (-pte_bad_query, q->ip at the
 * instruction, which is in *@in). */
static int to_insn(struct sptd_dec_qblk *q, struct pt_block *b, struct sptd_dec_qinsn *in,
                   enum qblk_stop stop)
{
	for (;;) {
		int st = one_insn(q, b, in);

		if (st <= 0)
			return st;
		if (stop != QSTOP_NONE && stops_at(in, stop))
			return 1;
		st = next_ip(&q->ip, q->ip, in);
		if (st < 0)
			return st;
		if (in->ild.iclass == ptic_call || in->ild.iclass == ptic_jump)
			return 0;
	}
}

/* Proceed until q->ip is @ip (1), the block ends (0) or trace is needed
 * (-pte_bad_query, with the instruction in *@in). */
static int to_ip(struct sptd_dec_qblk *q, struct pt_block *b, struct sptd_dec_qinsn *in,
                 uint64_t ip)
{
	for (;;) {
		int st;

		if (q->ip == ip)
			return 1;
		st = one_insn(q, b, in);
		if (st <= 0)
			return st;
		st = next_ip(&q->ip, q->ip, in);
		if (st < 0)
			return st;
		if (in->ild.iclass == ptic_call || in->ild.iclass == ptic_jump)
			return q->ip == ip;
	}
}

/* ---- walking with trace ------------------------------------------------------- */

/* The instruction @in at q->ip needs trace for its successor: ask for it,
 * as libipt does.  0 or an error; q->status takes the query's status. */
static int with_trace(struct sptd_dec_qblk *q, const struct sptd_dec_qinsn *in)
{
	uint64_t ip = q->ip;
	int st, taken;

	switch (in->ild.iclass) {
	case ptic_cond_jump:
		st = pt_qry_cond_branch(q->qry, &taken);
		if (st < 0)
			return st;
		ip += in->ild.size;
		if (taken)
			ip += (uint64_t)(int64_t)in->ild.disp;
		q->ip = ip;
		q->status = st;
		return 0;
	case ptic_return:
		/* a compressed return is a taken TNT bit */
		st = pt_qry_cond_branch(q->qry, &taken);
		if (st >= 0) {
			q->status = st;
			return taken ? sptd_dec_qret_pop(&q->rs, &q->ip) : -pte_bad_retcomp;
		}
		if (st != -pte_bad_query)
			return st;
		break;
	case ptic_call:
	case ptic_jump:
		if (in->ild.direct)
			return -pte_internal;
		break;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		break;
	case ptic_error:
		return -pte_bad_insn;
	default:
		return -pte_internal;
	}
	st = pt_qry_indirect_branch(q->qry, &ip);
	if (st < 0)
		return st;
	/* no -pte_noip for a suppressed IP: libipt checks that only the
	 * first time it decodes the branch (before its block cache knows
	 * it), not in its steady state, which is matched here */
	q->ip = ip;
	q->status = st;
	return 0;
}

/* The block with no event in the way: up to and including the first
 * branch that ends it. */
static int proceed_no_event(struct sptd_dec_qblk *q, struct pt_block *b)
{
	const struct sptd_dec_qrun *r;
	struct sptd_dec_qinsn in;
	int st;

	/* a run of straight-line code at a time (qcode.c); what does not fit
	 * a run (an error, a full block) is walked singly below */
	while (!b->truncated && (r = sptd_dec_qcode_run(&q->cache, q->map, q->ip, q->mode))) {
		if (r->isid != b->isid) {
			if (b->ninsn)
				return 0;
			b->isid = r->isid;
		}
		if ((unsigned)b->ninsn + r->n + 1 > UINT16_MAX)
			break;
		if (r->n) {
			b->ninsn = (uint16_t)(b->ninsn + r->n);
			b->end_ip = r->last_ip;
			b->iclass = (enum pt_insn_class)r->last_class;
		}
		q->ip = r->next_ip;
		if (!r->has_term)
			continue;
		memset(&in, 0, sizeof(in));
		in.ild = r->term;
		in.isid = r->isid;
		b->ninsn++;
		b->end_ip = q->ip;
		b->iclass = (enum pt_insn_class)in.ild.iclass;
		if (in.ild.iclass == ptic_call && !(in.ild.direct && !in.ild.disp))
			sptd_dec_qret_push(&q->rs, q->ip + in.ild.size);
		st = next_ip(&q->ip, q->ip, &in);
		if (st == -pte_bad_query)
			return with_trace(q, &in);
		return st < 0 ? st : 0;
	}
	st = to_insn(q, b, &in, QSTOP_NONE);

	if (st == -pte_bad_query)
		return with_trace(q, &in);
	return st < 0 ? st : 0;
}

/* Proceed to @ip, using trace for the last step if need be; 1 when there. */
static int to_ip_with_trace(struct sptd_dec_qblk *q, struct pt_block *b, uint64_t ip)
{
	struct sptd_dec_qinsn in;
	int st = to_ip(q, b, &in, ip);

	if (st == -pte_bad_query)
		st = with_trace(q, &in);
	if (st < 0)
		return st;
	return q->ip == ip;
}

/* ---- events -------------------------------------------------------------------- */

/* Fetch the next event if one is pending: 1 one is in progress, 0 none. */
static int fetch_event(struct sptd_dec_qblk *q)
{
	int st;

	if (q->process_event)
		return 1;
	if (!(q->status & pts_event_pending))
		return 0;
	st = pt_qry_event(q->qry, &q->event, sizeof(q->event));
	if (st < 0)
		return st;
	q->process_event = 1;
	q->status = st;
	return 1;
}

/* Complete the instruction a bound event waited for. */
static int postponed_insn(struct sptd_dec_qblk *q)
{
	int st;

	if (!q->process_insn)
		return 0;
	if (q->enabled) {
		q->ip = q->insn_ip;
		st = next_ip(&q->ip, q->insn_ip, &q->insn);
		if (st == -pte_bad_query) {
			q->ip = q->insn_ip;
			st = with_trace(q, &q->insn);
		}
		if (st < 0)
			return st;
	}
	q->process_insn = 0;
	q->bound_paging = 0;
	q->bound_vmcs = 0;
	return 0;
}

/* VM entry reported as an asynchronous disable (erratum SKD022): 1 when
 * the event at q->ip became a disable. */
static int skd022(struct sptd_dec_qblk *q)
{
	struct sptd_dec_qinsn in;

	if (!q->skd022 ||
	    sptd_dec_qcode_decode_slow(q->map, q->event.variant.async_disabled.at, q->mode, &in) < 0 ||
	    in.ild.special != SPTD_DEC_ILD_VMENTRY)
		return 0;
	q->event.type = ptev_disabled;
	q->event.variant.disabled.ip = q->event.variant.async_disabled.ip;
	return 1;
}

/* An aborted transaction reported after a branch its abort did not come
 * from (erratum BDM64): 1 when the code from q->ip does not run straight
 * to the abort's ip, then decoding goes on from there. */
static int bdm64(struct sptd_dec_qblk *q, const struct pt_block *b, const struct pt_event *ev)
{
	struct sptd_dec_qinsn in;
	uint64_t ip = q->ip;
	int steps;

	if (!q->bdm64 || !b || !b->ninsn || !ev->variant.tsx.aborted ||
	    sptd_dec_qcode_decode_slow(q->map, b->end_ip, b->mode, &in) < 0 ||
	    in.ild.iclass == ptic_other || in.ild.iclass == ptic_ptwrite)
		return 0;
	for (steps = 0; steps < 0x100 && ip != ev->variant.tsx.ip; steps++)
		if (sptd_dec_qcode_decode_slow(q->map, ip, q->mode, &in) < 0 ||
		    next_ip(&ip, ip, &in) < 0)
			break;
	if (ip == ev->variant.tsx.ip)
		return 0;
	q->ip = ev->variant.tsx.ip;
	return 1;
}

/* The event after block @b (NULL after a sync or an event): is it due
 * here?  The status to hand out. */
static int trailing_event(struct sptd_dec_qblk *q, const struct pt_block *b)
{
	struct pt_event *ev = &q->event;
	uint64_t at;
	int st = fetch_event(q), due = 1;

	if (st <= 0) {
		if (st < 0)
			return st;
		st = postponed_insn(q);
		return st < 0 ? st : qblk_status(q, 0);
	}
	switch (ev->type) {
	case ptev_disabled:
		if (!q->process_insn)
			break;
		if (ev->ip_suppressed && q->insn.ild.special == SPTD_DEC_ILD_MOV_CR3)
			return qblk_status(q, pts_event_pending);
		q->ip = q->insn_ip;
		st = next_ip(&q->ip, q->insn_ip, &q->insn);
		if (st < 0) {
			if (st != -pte_bad_query)
				return st;
			q->ip = q->insn.ild.iclass == ptic_call || q->insn.ild.iclass == ptic_far_call
			        ? q->insn_ip + q->insn.ild.size : 0;
			return qblk_status(q, pts_event_pending);
		}
		q->process_insn = 0;
		q->bound_paging = 0;
		q->bound_vmcs = 0;
		if (!ev->ip_suppressed && q->ip == ev->variant.disabled.ip)
			return qblk_status(q, pts_event_pending);
		break;
	case ptev_paging:
		if (!q->enabled)
			return qblk_status(q, pts_event_pending);
		if (!q->process_insn || q->bound_paging || !stops_at(&q->insn, QSTOP_PIP))
			break;
		q->bound_paging = 1;
		return qblk_status(q, pts_event_pending);
	case ptev_vmcs:
		if (!q->enabled)
			return qblk_status(q, pts_event_pending);
		if (!q->process_insn || q->bound_vmcs || !stops_at(&q->insn, QSTOP_VMCS))
			break;
		q->bound_vmcs = 1;
		return qblk_status(q, pts_event_pending);
	default:
		st = postponed_insn(q);
		if (st < 0)
			return st;
		switch (ev->type) {
		case ptev_async_disabled:
			at = ev->variant.async_disabled.at;
			due = q->ip == at && !skd022(q);
			break;
		case ptev_async_branch:
			due = q->ip == ev->variant.async_branch.from;
			break;
		case ptev_async_paging:
			due = ev->ip_suppressed || q->ip == ev->variant.async_paging.ip;
			break;
		case ptev_async_vmcs:
			due = ev->ip_suppressed || q->ip == ev->variant.async_vmcs.ip;
			break;
		case ptev_tsx:
			if (!ev->ip_suppressed)
				bdm64(q, b, ev);
			due = ev->ip_suppressed || q->ip == ev->variant.tsx.ip;
			break;
		case ptev_exec_mode:
			due = ev->ip_suppressed || q->ip == ev->variant.exec_mode.ip;
			break;
		case ptev_exstop:
			due = ev->ip_suppressed || !q->enabled || q->ip == ev->variant.exstop.ip;
			break;
		case ptev_mwait:
			due = ev->ip_suppressed || !q->enabled || q->ip == ev->variant.mwait.ip;
			break;
		default:
			break;
		}
		if (due)
			return qblk_status(q, pts_event_pending);
		return qblk_status(q, 0);
	}
	st = postponed_insn(q);
	return st < 0 ? st : qblk_status(q, 0);
}

/* Proceed to where the event in progress binds. */
static int proceed_event(struct sptd_dec_qblk *q, struct pt_block *b)
{
	struct pt_event *ev = &q->event;
	struct sptd_dec_qinsn in;
	int st;

	memset(&in, 0, sizeof(in));
	switch (ev->type) {
	case ptev_disabled:
		if (ev->ip_suppressed)
			st = to_insn(q, b, &in, QSTOP_CR3);
		else
			st = to_ip(q, b, &in, ev->variant.disabled.ip);
		if (st <= 0) {
			if (st != -pte_bad_query)
				return st;
			q->ip = in.ild.iclass == ptic_call || in.ild.iclass == ptic_far_call
			        ? q->ip + in.ild.size : 0;
		}
		break;
	case ptev_async_disabled:
		st = to_ip(q, b, &in, ev->variant.async_disabled.at);
		if (st <= 0)
			return st;
		if (skd022(q))
			return proceed_event(q, b);
		break;
	case ptev_async_branch:
		st = to_ip(q, b, &in, ev->variant.async_branch.from);
		if (st <= 0)
			return st;
		break;
	case ptev_paging:
	case ptev_vmcs:
		if (!q->enabled)
			break;
		st = to_insn(q, b, &in, ev->type == ptev_paging ? QSTOP_PIP : QSTOP_VMCS);
		if (st <= 0)
			return st;
		if (ev->type == ptev_paging)
			q->bound_paging = 1;
		else
			q->bound_vmcs = 1;
		q->process_insn = 1;
		q->insn = in;
		q->insn_ip = q->ip;
		return qblk_status(q, pts_event_pending);
	case ptev_async_paging:
	case ptev_async_vmcs:
		if (ev->ip_suppressed)
			break;
		st = to_ip_with_trace(q, b, ev->type == ptev_async_paging
		                                ? ev->variant.async_paging.ip
		                                : ev->variant.async_vmcs.ip);
		if (st <= 0)
			return st;
		break;
	case ptev_exec_mode:
		if (ev->ip_suppressed)
			break;
		st = to_ip_with_trace(q, b, ev->variant.exec_mode.ip);
		if (st <= 0)
			return st;
		break;
	case ptev_tsx:
		if (ev->ip_suppressed)
			break;
		st = to_ip(q, b, &in, ev->variant.tsx.ip);
		if (st <= 0)
			return st;
		break;
	case ptev_exstop:
	case ptev_mwait:
		if (!q->enabled || ev->ip_suppressed)
			break;
		st = to_ip(q, b, &in, ev->type == ptev_exstop ? ev->variant.exstop.ip
		                                              : ev->variant.mwait.ip);
		if (st <= 0)
			return st;
		break;
	default:
		/* enabled, overflow, stop, power, timing: bound to no ip */
		break;
	}
	return qblk_status(q, pts_event_pending);
}

int sptd_dec_qblk_next(struct sptd_dec_qblk *q, struct pt_block *b)
{
	int st;

	if (!q || !b)
		return -pte_invalid;
	memset(b, 0, sizeof(*b));
	b->ip = q->ip;
	b->mode = q->mode;
	b->speculative = q->speculative != 0;
	st = fetch_event(q);
	if (st)
		return st < 0 ? st : proceed_event(q, b);
	if (!q->enabled)
		return q->status & pts_eos ? -pte_eos : -pte_no_enable;
	st = proceed_no_event(q, b);
	return st < 0 ? st : trailing_event(q, b);
}

int sptd_dec_qblk_event(struct sptd_dec_qblk *q, struct pt_event *uev)
{
	struct pt_event *ev;

	if (!q || !uev)
		return -pte_invalid;
	if (!q->process_event)
		return -pte_bad_query;
	ev = &q->event;
	switch (ev->type) {
	case ptev_enabled:
		if (ev->variant.enabled.ip == q->ip)
			ev->variant.enabled.resumed = 1;
		if (ev->status_update)
			return -pte_bad_context;
		if (ev->ip_suppressed)
			return -pte_noip;
		if (q->enabled)
			return -pte_bad_context;
		q->ip = ev->variant.enabled.ip;
		q->enabled = 1;
		break;
	case ptev_async_disabled:
		if (q->ip != ev->variant.async_disabled.at)
			return -pte_bad_query;
		/* fall through */
	case ptev_disabled:
		if (ev->status_update || !q->enabled)
			return -pte_bad_context;
		q->enabled = 0;
		break;
	case ptev_async_branch:
		if (q->ip != ev->variant.async_branch.from)
			return -pte_bad_query;
		if (ev->status_update || !q->enabled)
			return -pte_bad_context;
		q->ip = ev->variant.async_branch.to;
		break;
	case ptev_async_paging:
		if (!ev->ip_suppressed && q->ip != ev->variant.async_paging.ip)
			return -pte_bad_query;
		break;
	case ptev_async_vmcs:
		if (!ev->ip_suppressed && q->ip != ev->variant.async_vmcs.ip)
			return -pte_bad_query;
		break;
	case ptev_overflow:
		if (ev->status_update)
			return -pte_bad_context;
		q->enabled = !ev->ip_suppressed;
		q->speculative = 0;
		q->ip = ev->ip_suppressed ? 0 : ev->variant.overflow.ip;
		break;
	case ptev_exec_mode:
		if (!ev->ip_suppressed && q->ip != ev->variant.exec_mode.ip)
			return -pte_bad_query;
		if (ev->status_update && q->enabled && q->mode != ptem_unknown &&
		    q->mode != ev->variant.exec_mode.mode)
			return -pte_bad_status_update;
		q->mode = ev->variant.exec_mode.mode;
		break;
	case ptev_tsx:
		if (!ev->ip_suppressed && q->ip != ev->variant.tsx.ip)
			return -pte_bad_query;
		q->speculative = ev->variant.tsx.speculative;
		break;
	case ptev_stop:
		if (ev->status_update || q->enabled)
			return -pte_bad_context;
		break;
	case ptev_exstop:
		if (!ev->ip_suppressed && q->enabled && q->ip != ev->variant.exstop.ip)
			return -pte_bad_query;
		break;
	case ptev_mwait:
		if (!ev->ip_suppressed && q->enabled && q->ip != ev->variant.mwait.ip)
			return -pte_bad_query;
		break;
	default:
		/* paging (the asid is not used: sections serve every CR3),
		 * power, timing */
		break;
	}
	q->process_event = 0;
	*uev = *ev;
	return trailing_event(q, NULL);
}

/* ---- sync and the rest of the interface --------------------------------------------- */

static int qblk_start(struct sptd_dec_qblk *q, int st)
{
	if (st < 0)
		return st;
	q->status = st;
	if (!(st & pts_ip_suppressed))
		q->enabled = 1;
	return trailing_event(q, NULL);
}

int sptd_dec_qblk_sync_forward(struct sptd_dec_qblk *q)
{
	if (!q)
		return -pte_invalid;
	qblk_reset(q);
	return qblk_start(q, pt_qry_sync_forward(q->qry, &q->ip));
}

int sptd_dec_qblk_sync_set(struct sptd_dec_qblk *q, uint64_t offset)
{
	if (!q)
		return -pte_invalid;
	qblk_reset(q);
	return qblk_start(q, pt_qry_sync_set(q->qry, &q->ip, offset));
}

int sptd_dec_qblk_time(const struct sptd_dec_qblk *q, uint64_t *tsc, uint32_t *lost_mtc,
                       uint32_t *lost_cyc)
{
	if (!q || !tsc)
		return -pte_invalid;
	return pt_qry_time(q->qry, tsc, lost_mtc, lost_cyc);
}

int sptd_dec_qblk_get_offset(const struct sptd_dec_qblk *q, uint64_t *off)
{
	return q ? pt_qry_get_offset(q->qry, off) : -pte_invalid;
}

int sptd_dec_qblk_get_sync_offset(const struct sptd_dec_qblk *q, uint64_t *off)
{
	return q ? pt_qry_get_sync_offset(q->qry, off) : -pte_invalid;
}

int sptd_dec_qblk_create(const struct pt_config *cfg, struct sptd_dec_qblk **out)
{
	struct sptd_dec_qblk *q;

	if (!cfg || !out)
		return -EINVAL;
	*out = NULL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->qry = pt_qry_alloc_decoder(cfg);
	q->skd022 = cfg->errata.skd022;
	q->bdm64 = cfg->errata.bdm64;
	q->next_mapid = 1;
	if (!q->qry || sptd_dec_qcode_cache_init(&q->cache) < 0) {
		sptd_dec_qblk_destroy(q);
		return -ENOMEM;
	}
	*out = q;
	return 0;
}

void sptd_dec_qblk_destroy(struct sptd_dec_qblk *q)
{
	if (!q)
		return;
	pt_qry_free_decoder(q->qry);
	for (size_t i = 0; i < q->nmaps; i++)
		sptd_dec_qcode_fini(&q->maps[i]);
	sptd_dec_qcode_cache_fini(&q->cache);
	free(q);
}

int sptd_dec_qblk_set_aspace(struct sptd_dec_qblk *q, struct sptd_dec_session *s,
                             struct sptd_dec_wcache *wc, const struct sptd_dec_aspace *as,
                             int epoch)
{
	struct sptd_dec_qmap *m;
	size_t i;
	int err;

	if (!q || !s || !as)
		return -EINVAL;
	for (i = 0; i < q->nmaps; i++)
		if (q->maps[i].as == as && q->maps[i].epoch == epoch) {
			q->map = &q->maps[i];
			return 0;
		}
	if (q->nmaps == QBLK_MAPS) {
		/* many address spaces: start over (the cache keys on map ids) */
		for (i = 0; i < q->nmaps; i++)
			sptd_dec_qcode_fini(&q->maps[i]);
		q->nmaps = 0;
	}
	m = &q->maps[q->nmaps];
	err = sptd_dec_qcode_build(s, wc, as, epoch, m);
	if (err < 0)
		return err;
	m->id = q->next_mapid++;
	if (!q->next_mapid) {
		/* ids wrapped: forget what the cache holds */
		memset(q->cache.slots, 0, SPTD_DEC_QCACHE_SLOTS * sizeof(*q->cache.slots));
		q->next_mapid = 1;
	}
	q->nmaps++;
	q->map = m;
	return 0;
}

int sptd_dec_qblk_unsupported(const struct pt_config *cfg)
{
	return sptd_dec_qcode_unsupported(cfg);
}
