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

int sptd_col_derive_pt_sideband(struct sptd_store *st)
{
	struct sptd_store_stmt *stmt = NULL, *del = NULL;
	struct gap_ctx g = { .st = st };
	int64_t sample_type = (int64_t)sptd_col_pt_sideband_sample_type();
	int ret;

	if (!st)
		return -EINVAL;
	sptd_store_meta_get_int(st, "perf_clock_offset_ns", &g.offset_ns);
	sptd_store_meta_get_int(st, "pt_sideband_sample_type", &sample_type);
	ret = sptd_store_prepare(st, "DELETE FROM gap WHERE reason LIKE 'sideband: %'", &del);
	while (ret >= 0 && (ret = sptd_store_step(del)) == 1)
		;
	sptd_store_finalize(del);
	if (ret < 0)
		return ret;
	ret = sptd_store_prepare(st, "SELECT cpu, data FROM raw_sideband ORDER BY cpu, seq", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		size_t len = 0;
		const void *data = sptd_store_column_blob(stmt, 1, &len);
		int n;

		g.cpu = (int)sptd_store_column_int(stmt, 0);
		if (!data || !len)
			continue;
		n = sptd_col_pt_sideband_parse(data, len, (uint64_t)sample_type, on_gap_record, &g);
		if (n == -EBADMSG) {
			/* what parsed is in; the rest is itself a gap */
			n = sptd_store_gap_add(st, 0, 0, g.cpu, "sideband: malformed records skipped");
			if (n >= 0)
				g.rows++;
		}
		if (n < 0)
			ret = n;
	}
	sptd_store_finalize(stmt);
	return ret < 0 ? ret : g.rows;
}
