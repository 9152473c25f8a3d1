/* derive_sideband.c — from the stored sideband (the PT source's, or the
 * sampling source's): gap rows for AUX records flagged truncated/partial/
 * collision, LOST records, trace (re)starts; and the process of every
 * thread its FORK, EXIT and COMM records name, so a thread gone before the
 * capture is not taken for a process of its own. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

/* ---- decode: gap rows -------------------------------------------------------- */

struct gap_ctx {
	struct sptd_store *st;
	int cpu;
	int64_t offset_ns;
	int rows;
};

static int on_gap_record(void *arg, const struct sptd_col_perf_record *r)
{
	struct gap_ctx *g = arg;
	int64_t ts = (int64_t)r->id.time + g->offset_ns;
	char reason[160];
	int ret;

	reason[0] = '\0';
	if (r->type == SPTD_PERF_RECORD_AUX) {
		if (r->aux_flags & SPTD_PERF_AUX_FLAG_TRUNCATED)
			snprintf(reason, sizeof(reason), "sideband: pt aux data truncated "
			         "(%" PRIu64 " bytes at offset %" PRIu64 ")", r->aux_size, r->aux_offset);
		else if (r->aux_flags & SPTD_PERF_AUX_FLAG_PARTIAL)
			snprintf(reason, sizeof(reason), "sideband: pt aux data has gaps "
			         "(%" PRIu64 " bytes at offset %" PRIu64 ")", r->aux_size, r->aux_offset);
		else if (r->aux_flags & SPTD_PERF_AUX_FLAG_COLLISION)
			snprintf(reason, sizeof(reason), "sideband: pt aux data collided");
	} else if (r->type == SPTD_PERF_RECORD_LOST) {
		snprintf(reason, sizeof(reason), "sideband: %" PRIu64 " sideband records lost",
		         r->lost);
	} else if (r->type == SPTD_PERF_RECORD_LOST_SAMPLES) {
		snprintf(reason, sizeof(reason), "sideband: %" PRIu64 " samples lost", r->lost);
	} else if (r->type == SPTD_PERF_RECORD_ITRACE_START) {
		snprintf(reason, sizeof(reason), "sideband: pt trace (re)started (pid %d tid %d)",
		         r->pid, r->tid);
	}
	if (!reason[0])
		return 0;
	ret = SPTD_STORE_ADD(g->st, gap, ts, 0, r->id.cpu >= 0 ? r->id.cpu : g->cpu, reason);
	if (ret >= 0)
		g->rows++;
	return ret;
}

/* What the sideband reader hands the record parser. */
struct sideband_ctx {
	struct gap_ctx *g;            /* where gap rows go */
	uint64_t sample_type;         /* of the sideband records */
};

static int on_sideband(void *arg, const struct sptd_store_chunk_row *row)
{
	struct sideband_ctx *sc = arg;
	struct gap_ctx *g = sc->g;
	int n;

	g->cpu = row->cpu;
	if (!row->data || !row->len)
		return 0;
	n = sptd_col_pt_sideband_parse(row->data, row->len, sc->sample_type, on_gap_record, g);
	if (n == -EBADMSG) {
		/* what parsed is in; the rest is itself a gap */
		n = SPTD_STORE_ADD(g->st, gap, 0, 0, g->cpu, "sideband: malformed records skipped");
		if (n >= 0)
			g->rows++;
	}
	return n < 0 ? n : 0;
}

int sptd_col_derive_pt_sideband(struct sptd_store *st)
{
	struct gap_ctx g = { .st = st };
	struct sideband_ctx sc = { .g = &g };
	int64_t sample_type = (int64_t)sptd_col_pt_sideband_sample_type();
	int ret;

	if (!st)
		return -EINVAL;
	sptd_store_meta_get_int(st, "perf_clock_offset_ns", &g.offset_ns);
	sptd_store_meta_get_int(st, "pt_sideband_sample_type", &sample_type);
	sc.sample_type = (uint64_t)sample_type;
	ret = sptd_store_gap_clear(st, "sideband: ");
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, raw_sideband, on_sideband, &sc);
	return ret < 0 ? ret : g.rows;
}

/* ---- decode: the kernel's text rewrites -------------------------------------- */

/* What the sideband reader hands the TEXT_POKE reader. */
struct poke_ctx {
	struct sptd_dec_session *s;   /* where pokes go */
	uint64_t sample_type;         /* of the sideband records */
	int64_t offset_ns;            /* perf clock -> incident clock */
};

static int on_poke_record(void *arg, const struct sptd_col_perf_record *r)
{
	struct poke_ctx *pc = arg;
	struct sptd_dec_text_poke p;
	int ret;

	if (r->type != SPTD_PERF_RECORD_TEXT_POKE)
		return 0;
	p = (struct sptd_dec_text_poke){
		.ts = (int64_t)r->id.time + pc->offset_ns, .addr = r->addr,
		.old_bytes = r->poke_old, .new_bytes = r->poke_new,
		.old_len = r->poke_old_len, .new_len = r->poke_new_len,
	};
	ret = sptd_dec_session_add_text_poke(pc->s, &p);
	/* a poke the decoder refuses (past 2^64, too many) is left out */
	return ret == -ENOMEM ? ret : 0;
}

static int on_poke_sideband(void *arg, const struct sptd_store_chunk_row *row)
{
	struct poke_ctx *pc = arg;
	int n;

	if (!row->data || !row->len)
		return 0;
	n = sptd_col_pt_sideband_parse(row->data, row->len, pc->sample_type, on_poke_record, pc);
	/* the records before a malformed one are in (its gap row says so) */
	return n < 0 && n != -EBADMSG ? n : 0;
}

int sptd_col_derive_text_pokes(struct sptd_store *st, struct sptd_dec_session *s)
{
	struct poke_ctx pc = { .s = s };
	int64_t sample_type = (int64_t)sptd_col_pt_sideband_sample_type(), copied;
	int ret = 0;

	if (!st || !s)
		return -EINVAL;
	sptd_store_meta_get_int(st, "perf_clock_offset_ns", &pc.offset_ns);
	sptd_store_meta_get_int(st, "pt_sideband_sample_type", &sample_type);
	pc.sample_type = (uint64_t)sample_type;
	if (sptd_store_meta_get_int(st, "pt_kernel_copied_ns", &copied) == 0)
		ret = sptd_dec_session_set_text_copied(s, copied);
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, raw_sideband, on_poke_sideband, &pc);
	return ret < 0 ? ret : 0;
}

/* ---- tasks: which process each thread belongs to ----------------------------- */

static int on_task_record(void *arg, const struct sptd_col_perf_record *r)
{
	int ret;

	/* FORK and EXIT name the thread and its thread group (pid), COMM
	 * both and the name; a thread's process never changes */
	if ((r->type != SPTD_PERF_RECORD_FORK && r->type != SPTD_PERF_RECORD_EXIT &&
	     r->type != SPTD_PERF_RECORD_COMM) || r->pid <= 0 || r->tid <= 0)
		return 0;
	ret = sptd_col_tasks_note(arg, r->tid, r->pid,
	                          r->type == SPTD_PERF_RECORD_COMM ? r->name : NULL, NULL);
	return ret < 0 ? ret : 0;
}

/* What the sideband reader hands the record parser for tasks. */
struct task_sideband_ctx {
	struct sptd_col_tasks *tasks; /* where threads are noted */
	uint64_t sample_type;         /* of the sideband records */
};

static int on_task_sideband(void *arg, const struct sptd_store_chunk_row *row)
{
	struct task_sideband_ctx *tc = arg;
	int n;

	if (!row->data || !row->len)
		return 0;
	n = sptd_col_pt_sideband_parse(row->data, row->len, tc->sample_type, on_task_record,
	                               tc->tasks);
	/* the records before a malformed one are in (its gap row says so) */
	return n < 0 && n != -EBADMSG ? n : 0;
}

int sptd_col_derive_sideband_tasks(struct sptd_store *st, struct sptd_col_tasks *tasks)
{
	struct task_sideband_ctx tc = { .tasks = tasks };
	int64_t sample_type = (int64_t)sptd_col_pt_sideband_sample_type();
	int ret;

	if (!st || !tasks)
		return -EINVAL;
	sptd_store_meta_get_int(st, "pt_sideband_sample_type", &sample_type);
	tc.sample_type = (uint64_t)sample_type;
	ret = SPTD_STORE_EACH(st, raw_sideband, on_task_sideband, &tc);
	return ret < 0 ? ret : 0;
}
