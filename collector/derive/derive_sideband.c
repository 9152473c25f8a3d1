/* derive_sideband.c — gap rows from the stored PT sideband: AUX records
 * flagged truncated/partial/collision, LOST records, trace (re)starts. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive-local.h"
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
	ret = sptd_store_gap_add(g->st, ts, 0, r->id.cpu >= 0 ? r->id.cpu : g->cpu, reason);
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
		n = sptd_store_gap_add(g->st, 0, 0, g->cpu, "sideband: malformed records skipped");
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
		ret = sptd_store_raw_sideband_each(st, on_sideband, &sc);
	return ret < 0 ? ret : g.rows;
}
