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
		return sptd_store_raw_task_add(c->st, r->pid, r->tid, r->name, NULL);
	}
	/* Each switch makes two records (out on the old task's side, in on the
	 * new one's); the switch-in names both and is kept. */
	if (r->type == SPTD_PERF_RECORD_SWITCH_CPU_WIDE && !r->switch_out && r->id.present &&
	    r->id.tid >= 0 && r->other_tid >= 0)
		return sptd_store_raw_switch_add(c->st, ts, r->id.cpu >= 0 ? r->id.cpu : c->cpu,
		                                 r->other_tid, r->id.tid, comm_of(c, r->id.tid));
	return 0;
}

int sptd_col_pt_sideband_store(struct sptd_store *st, int cpu, int seq, const void *buf,
                               size_t len, uint64_t sample_type, int64_t offset_ns)
{
	struct store_ctx c = { .st = st, .cpu = cpu, .offset_ns = offset_ns };
	int ret;

	if (!st || cpu < 0)
		return -EINVAL;
	if (!len)
		return 0;
	ret = sptd_store_raw_sideband_add(st, cpu, seq, buf, len);
	if (ret >= 0)
		ret = sptd_col_pt_sideband_parse(buf, len, sample_type, on_store_record, &c);
	free(c.comms);
	return ret;
}
