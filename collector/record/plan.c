/* plan.c — the capture plan: how big every buffer must be for the window.
 *
 * Every ring is sized here, from the span it must hold (--window + --post),
 * --buffer, --freq, --timing and, for PT, the PMU's limits: the ftrace ring,
 * the AUX ring, the sample ring and the sideband ring.  The service arms
 * what the plan says, prints it in the "armed:" line and writes it to meta;
 * pt_attr.c sizes the AUX ring of a PT setup with sptd_col_plan_aux_size. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "plan-local.h"
#include "sptd_store.h"

/* Pages the AUX and sample ring sizes are counted in. */
#define PLAN_PAGE 4096
/* Sideband ring data pages per CPU: mmap/comm/switch records of a busy
 * machine for well over any window (the PT source's default). */
#define PLAN_SIDEBAND_PAGES 64

uint64_t sptd_col_plan_aux_max(const struct sptd_col_pt_pmu *pmu)
{
	/* Without multiple ToPA entries the kernel needs the whole ring as one
	 * table entry: one high-order allocation (MAX_ORDER: 4 MiB on x86). */
	if (!pmu || !pmu->topa_multiple)
		return 4ull << 20;
	return 1ull << 30;
}

/* PT bytes per second of one busy CPU, for what the config turns on: used
 * to size the ring and for the coverage printed at start, so they err on
 * the high side (printed coverage must not promise history that is not
 * there).  perf documents Intel PT as "hundreds of megabytes per second
 * per core" (tools/perf/Documentation/perf-intel-pt.txt); the parts:
 *   user-only branch trace (TNT, TIP, FUP; TSC, MTC at period 3)  200 MB/s
 *   kernel too: interrupts, syscalls, their TIP.PGE/PGD and FUPs  300 MB/s
 *   CYC (1-2 bytes before nearly every TNT/TIP packet)             x2
 *   noretcomp (every RET a TIP of up to 7 bytes, not a TNT bit)    x1.5
 * so 200/300 MB/s (--timing low), 400/600 (normal: CYC), 600/900 (high). */
uint64_t sptd_col_plan_pt_rate(const struct sptd_col_pt_pmu *pmu, enum sptd_col_pt_timing timing,
                               int user_only)
{
	uint64_t rate = user_only ? 200000000ull : 300000000ull;

	if (!pmu)
		return rate;
	if (timing >= SPTD_PT_TIMING_NORMAL && pmu->cap_psb_cyc && pmu->cyc.present)
		rate *= 2;
	if (timing == SPTD_PT_TIMING_HIGH && pmu->noretcomp.present)
		rate += rate / 2;
	return rate;
}

int sptd_col_plan_aux_size(const struct sptd_col_pt_pmu *pmu, enum sptd_col_pt_timing timing,
                           int user_only, uint64_t want_bytes, int64_t span_ns,
                           struct sptd_col_plan_aux *out)
{
	uint64_t aux = 16 * PLAN_PAGE;

	if (!pmu || !out || timing < SPTD_PT_TIMING_LOW || timing > SPTD_PT_TIMING_HIGH ||
	    span_ns < 0)
		return -EINVAL;
	out->rate_bytes_s = sptd_col_plan_pt_rate(pmu, timing, user_only);
	out->max_bytes = sptd_col_plan_aux_max(pmu);
	/* twice the span at the assumed rate, so the window survives until
	 * the freeze lands; a power of two pages (the kernel requires it) */
	if (!want_bytes)
		want_bytes = (uint64_t)((double)span_ns / 1e9 * (double)out->rate_bytes_s * 2);
	while (aux < want_bytes && aux < out->max_bytes)
		aux *= 2;
	if (aux > out->max_bytes)
		aux = out->max_bytes;
	out->bytes = aux;
	out->coverage_ns = sptd_col_plan_coverage_ns(aux, out->rate_bytes_s);
	return 0;
}

int64_t sptd_col_plan_coverage_ns(uint64_t aux_bytes, uint64_t rate_bytes_s)
{
	if (!rate_bytes_s)
		return 0;
	return (int64_t)((double)aux_bytes / (double)rate_bytes_s * 1e9);
}

/* ftrace ring KiB: a busy CPU writes ~30 MB/s of sched/irq events; keep
 * twice the span so the window survives until the freeze lands. */
static uint64_t ftrace_kb(int64_t span_ns, uint64_t buffer_bytes)
{
	uint64_t kb = ((uint64_t)(span_ns / 1000000) + 1) * 64;

	if (buffer_bytes)
		return buffer_bytes / 1024;
	if (kb < 1024)
		kb = 1024;
	if (kb > 262144)
		kb = 262144;
	return kb;
}

/* Sample ring data pages: ~1 KiB per sample with a deep call chain (plus
 * the user stack copy and registers with --call-graph dwarf), twice the
 * span, a power of two from 16 to 8192 pages. */
static size_t sample_pages(int64_t span_ns, int freq, uint32_t stack_user, size_t page_bytes)
{
	double span_s = (double)span_ns / 1e9;
	double per_sample = 1024.0 + (stack_user ? stack_user + 24.0 + 8.0 * 17 : 0);
	uint64_t bytes = (uint64_t)(span_s * freq * per_sample * 2) + 65536 +
	                 (stack_user ? 4 * (uint64_t)stack_user : 0);
	size_t pages = 16;

	while ((uint64_t)pages * page_bytes < bytes && pages < 8192)
		pages *= 2;
	return pages;
}

int sptd_col_plan_compute(const struct sptd_col_record_opts *o, enum sptd_col_source source,
                          const struct sptd_col_pt_pmu *pmu, size_t page_bytes,
                          struct sptd_col_plan *out)
{
	int ret = 0;

	if (!o || !out || o->window_ns < 0 || o->post_ns < 0 ||
	    (source != SPTD_SOURCE_PT && source != SPTD_SOURCE_SAMPLE) ||
	    (source == SPTD_SOURCE_PT && !pmu))
		return -EINVAL;
	*out = (struct sptd_col_plan){
		.source = source,
		.span_ns = o->window_ns + o->post_ns,
		.page_bytes = page_bytes ? page_bytes : PLAN_PAGE,
	};
	if (source == SPTD_SOURCE_PT) {
		/* --buffer sizes the AUX ring: the ftrace ring follows the span */
		out->ftrace_kb = ftrace_kb(out->span_ns, 0);
		out->sideband_pages = PLAN_SIDEBAND_PAGES;
		ret = sptd_col_plan_aux_size(pmu, o->timing, o->user_only, o->buffer_bytes,
		                             out->span_ns, &out->aux);
	} else {
		out->ftrace_kb = ftrace_kb(out->span_ns, o->buffer_bytes);
		out->sample_pages = sample_pages(out->span_ns, o->freq, o->stack_user, out->page_bytes);
	}
	return ret;
}

int sptd_col_plan_describe(const struct sptd_col_plan *p, char *buf, size_t len)
{
	uint64_t page_kb;

	if (!p || !buf || !len)
		return -EINVAL;
	page_kb = p->page_bytes / 1024;
	if (p->source == SPTD_SOURCE_PT)
		return snprintf(buf, len, "ftrace ring %" PRIu64 " KiB + AUX ring %" PRIu64
		                " KiB + sideband ring %" PRIu64 " KiB", p->ftrace_kb,
		                p->aux.bytes / 1024, (uint64_t)p->sideband_pages * page_kb);
	return snprintf(buf, len, "ftrace ring %" PRIu64 " KiB + sample ring %" PRIu64 " KiB",
	                p->ftrace_kb, (uint64_t)p->sample_pages * page_kb);
}

int sptd_col_plan_meta_write(const struct sptd_col_plan *p, struct sptd_store *st)
{
	int ret;

	if (!p || !st)
		return -EINVAL;
	ret = sptd_store_meta_set_int(st, "ftrace_buffer_kb", (int64_t)p->ftrace_kb);
	if (ret >= 0 && p->source == SPTD_SOURCE_PT)
		ret = sptd_store_meta_set_int(st, "sideband_ring_kb",
		                              (int64_t)(p->sideband_pages * p->page_bytes / 1024));
	else if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "sample_ring_kb",
		                              (int64_t)(p->sample_pages * p->page_bytes / 1024));
	return ret;
}
