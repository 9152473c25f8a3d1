/* fakepmu_cut.c — see fakepmu_cut.h. */
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>

#include "fakepmu_cut.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "truth_compare.h"

void fakepmu_cuts_rings(struct fakepmu_cuts *k, const struct fakepmu_ptgen *g, int drop_cpu,
                        size_t drop_len, size_t aux_bytes)
{
	for (int c = 0; c < g->ncpus; c++) {
		size_t kept = g->pt_len[c] - (c == drop_cpu ? drop_len : 0);

		k->ring_len[c] = kept > aux_bytes ? aux_bytes : kept;
		k->ring[c] = g->pt[c] + (g->pt_len[c] - k->ring_len[c]);
	}
}

/* TSC of the first PSB+ in @buf (libipt's packet decoder), its offset in
 * *@at; 0 when none. */
static uint64_t first_psb_tsc(const unsigned char *buf, size_t len, uint64_t *at)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet pkt;
	uint64_t tsc = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return 0;
	*at = 0;
	if (pt_pkt_sync_forward(d) >= 0) {
		pt_pkt_get_sync_offset(d, at);
		while (pt_pkt_next(d, &pkt, sizeof(pkt)) >= 0 && pkt.type != ppt_psbend)
			if (pkt.type == ppt_tsc) {
				tsc = pkt.payload.tsc.tsc;
				break;
			}
	}
	pt_pkt_free_decoder(d);
	return tsc;
}

int fakepmu_cuts_note(struct fakepmu_cuts *k, const struct fakepmu_ptgen *g, int cpu, char *why,
                      size_t whylen)
{
	uint64_t tsc = first_psb_tsc(k->ring[cpu], k->ring_len[cpu], &k->cut_skip[cpu]);
	int64_t cut = (int64_t)((unsigned __int128)tsc * 1000000000u / (uint64_t)g->tsc_hz), since;
	int tid, idx, first_run = -1, ret = 0;

	tid = fakepmu_gen_running_at(g, cpu, cut, &since);
	idx = fakepmu_gen_task_index(g, tid);
	printf("  cpu %d: data from the first PSB left, %" PRId64 " ns (tid %d)\n", cpu, cut, tid);
	if (!tsc) {
		snprintf(why, whylen, "cpu %d: no TSC in the first PSB+ left", cpu);
		return -1;
	}
	if (idx < 0) {
		snprintf(why, whylen, "cpu %d: no task of tasks.txt running at the cut (tid %d)", cpu,
		         tid);
		return -1;
	}
	for (int s = 0; s < g->nsw; s++) {
		if (g->sws[s].next == tid && first_run < 0)
			first_run = s;
		if (g->sws[s].cpu == cpu && g->sws[s].next != 0 && g->sws[s].ts < since) {
			snprintf(why, whylen, "cpu %d: the lost data of this CPU held another run", cpu);
			ret = -1;
		}
	}
	if (ret == 0 && !(first_run >= 0 && g->sws[first_run].ts == since &&
	                  g->sws[first_run].cpu == cpu)) {
		snprintf(why, whylen, "cpu %d: the cut is not tid %d's first run", cpu, tid);
		ret = -1;
	}
	k->cut_ts[idx] = cut;
	k->cut_cpu_ts[cpu] = cut;
	return ret;
}

int fakepmu_cuts_apply(const struct fakepmu_cuts *k, const struct fakepmu_ptgen *g,
                       struct frames *truth, struct frames *dec, int64_t tol)
{
	int truncated = 0;
	size_t i, n;

	for (int t = 0; t < g->ntasks; t++) {
		int64_t cut = k->cut_ts[t];
		int tid = g->tasks[t].tid;

		if (!cut)
			continue;
		for (i = n = 0; i < truth->n; i++) {
			struct frame *f = &truth->v[i];

			if (f->tid == tid && f->end < cut + tol)
				continue;
			if (f->tid == tid && f->start < cut) {
				f->start = cut;
				f->flags |= SPTD_DEC_F_INFERRED | SPTD_DEC_F_START_TRUNCATED;
				truncated++;
			}
			truth->v[n++] = *f;
		}
		truth->n = n;
		for (i = n = 0; i < dec->n; i++)
			if (dec->v[i].tid != tid || dec->v[i].end >= cut + tol)
				dec->v[n++] = dec->v[i];
		dec->n = n;
	}
	truth_sort(truth);
	return truncated;
}

/* 1 (and why on stderr) when the count @sql finds on @cpu is not @want. */
static int gap_count_bad(struct sptd_store *st, int cpu, const char *sql, int64_t want)
{
	int64_t v = -1;

	if (sptd_store_query_int(st, sql, &v) >= 0 && v == want)
		return 0;
	fprintf(stderr, "  cpu %d: %" PRId64 " gap rows, want %" PRId64 ": %s\n", cpu, v, want, sql);
	return 1;
}

int fakepmu_cuts_check_gaps(const struct fakepmu_cuts *k, int ncpus, int drop_cpu,
                            const char *path, int64_t offset_ns, int64_t tol)
{
	struct sptd_store *st = NULL;
	char sql[256];
	int bad = 0, ret = sptd_store_open(path, 0, &st);

	if (ret < 0)
		return ret;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM gap WHERE cpu = %d AND reason "
		         "LIKE 'sideband: pt aux data truncated%%'", cpu);
		bad += gap_count_bad(st, cpu, sql, cpu == drop_cpu ? 1 : 0);
		/* no decode error anywhere: what survived decodes whole */
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM gap WHERE cpu = %d AND reason "
		         "LIKE 'pt: %%' AND reason NOT LIKE 'pt: %% bytes before the first PSB %%'", cpu);
		bad += gap_count_bad(st, cpu, sql, 0);
		/* a lossy CPU says where its data starts again: at the cut, after
		 * the bytes before the first PSB that survived */
		if (k->cut_cpu_ts[cpu]) {
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM gap WHERE cpu = %d AND reason = "
			         "'pt: %" PRIu64 " bytes before the first PSB not decodable' AND "
			         "abs(ts - %" PRId64 ") <= %" PRId64, cpu, k->cut_skip[cpu],
			         k->cut_cpu_ts[cpu] + offset_ns, tol);
			bad += gap_count_bad(st, cpu, sql, 1);
		}
	}
	sptd_store_destroy(st);
	return bad;
}
