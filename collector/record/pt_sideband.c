/* pt_sideband.c — PT sideband at capture: the records of every CPU's rings
 * stored raw, with raw_switch rows (SWITCH_CPU_WIDE) and raw_task rows (COMM). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt-local.h"
#include "sptd_store.h"

/* ---- capture: switches and task names -------------------------------------- */

struct store_ctx {
	struct sptd_store *st;
	int cpu;
	int64_t offset_ns;
	int cur_tid;          /* the task the last stored switch put on the CPU, -1 */
	/* last comm per tid seen in this buffer, for raw_switch.next_comm */
	struct { int tid; char comm[16]; } *comms;
	size_t ncomms, cap;
};

static const char *comm_of(struct store_ctx *c, int tid)
{
	for (size_t i = c->ncomms; i-- > 0;)
		if (c->comms[i].tid == tid)
			return c->comms[i].comm;
	return NULL;
}

/* Each switch makes two records: out on the old task's side, stamped in
 * the scheduler before the new task's page tables are loaded
 * (perf_event_task_sched_out from prepare_task_switch), and in on the new
 * one's, stamped after (perf_event_task_sched_in from finish_task_switch).
 * The CR3 write, and its PIP in the PT, fall between the two, as does the
 * kernel's switch code after __switch_to: the CPU is the new task's from
 * the switch-out on, so that is the row's time (perf: intel_pt_context_switch,
 * and the perf.data import here).  A switch-in stands in only where its
 * switch-out was lost (the ring overwrote it). */
static int on_switch(struct store_ctx *c, const struct sptd_col_perf_record *r, int64_t ts)
{
	int cpu = r->id.cpu >= 0 ? r->id.cpu : c->cpu;

	if (r->switch_out) {
		c->cur_tid = r->other_tid;
		return SPTD_STORE_ADD(c->st, raw_switch, ts, cpu, r->id.tid, r->other_tid,
		                      comm_of(c, r->other_tid),
		                      r->switch_preempt ? "R+" : NULL);
	}
	if (c->cur_tid == r->id.tid)
		return 0;   /* its switch-out is stored */
	c->cur_tid = r->id.tid;
	return SPTD_STORE_ADD(c->st, raw_switch, ts, cpu, r->other_tid, r->id.tid,
	                      comm_of(c, r->id.tid), NULL);
}

static int on_store_record(void *arg, const struct sptd_col_perf_record *r)
{
	struct store_ctx *c = arg;
	int64_t ts = (int64_t)r->id.time + c->offset_ns;

	if (r->type == SPTD_PERF_RECORD_COMM && r->name) {
		if (c->ncomms == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			void *more = realloc(c->comms, cap * sizeof(*c->comms));

			if (!more)
				return -ENOMEM;
			c->comms = more;
			c->cap = cap;
		}
		c->comms[c->ncomms].tid = r->tid;
		snprintf(c->comms[c->ncomms].comm, sizeof(c->comms[0].comm), "%s", r->name);
		c->ncomms++;
		return SPTD_STORE_ADD(c->st, raw_task, r->pid, r->tid, r->name, NULL);
	}
	if (r->type == SPTD_PERF_RECORD_SWITCH_CPU_WIDE && r->id.present && r->id.tid >= 0 &&
	    r->other_tid >= 0)
		return on_switch(c, r, ts);
	return 0;
}

int sptd_col_pt_sideband_store(struct sptd_store *st, int cpu, int seq, const void *buf,
                               size_t len, uint64_t sample_type, int64_t offset_ns)
{
	struct store_ctx c = { .st = st, .cpu = cpu, .offset_ns = offset_ns, .cur_tid = -1 };
	int ret;

	if (!st || cpu < 0)
		return -EINVAL;
	if (!len)
		return 0;
	ret = SPTD_STORE_ADD(st, raw_sideband, cpu, seq, buf, len);
	if (ret >= 0)
		ret = sptd_col_pt_sideband_parse(buf, len, sample_type, on_store_record, &c);
	free(c.comms);
	return ret;
}
