/* plan-local.h — the capture plan: every buffer the service sizes (ftrace
 * ring, AUX ring, sample ring, sideband ring), computed in one place from
 * the options and, for PT, the PMU's limits (plan.c). */
#ifndef SPTD_PLAN_LOCAL_H
#define SPTD_PLAN_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_col_record.h"

struct sptd_store;

/* What one CPU's AUX (PT) ring will be and hold. */
struct sptd_col_plan_aux {
	uint64_t bytes;          /* the ring: a power of two pages, at least 16,
	                          * at most @max_bytes */
	uint64_t max_bytes;      /* the largest ring the PMU's ToPA caps allow */
	uint64_t rate_bytes_s;   /* PT bytes per second of one busy CPU assumed
	                          * at the chosen --timing (for sizing and coverage) */
	int64_t coverage_ns;     /* history the ring holds at that rate */
};

/* The plan: what the service arms, per CPU. */
struct sptd_col_plan {
	enum sptd_col_source source; /* SPTD_SOURCE_PT or SPTD_SOURCE_SAMPLE (resolved) */
	int64_t span_ns;         /* window + post: the history every ring must hold */
	uint64_t ftrace_kb;      /* ftrace ring, KiB (--buffer when sampling, else
	                          * from the span) */
	size_t page_bytes;       /* the system page size the rings are mapped in */
	size_t sample_pages;     /* sampling: data pages of the sample ring, a
	                          * power of two; 0 with PT */
	size_t sideband_pages;   /* PT: data pages of the sideband ring, a power of
	                          * two; 0 when sampling */
	struct sptd_col_plan_aux aux; /* PT: the AUX ring; zeroed when sampling */
};

/* The largest AUX ring @pmu's ToPA capabilities allow per CPU: 4 MiB (one
 * high-order allocation) without multiple ToPA entries, else 1 GiB. */
uint64_t sptd_col_plan_aux_max(const struct sptd_col_pt_pmu *pmu);

/* PT bytes per second of one busy CPU assumed for what @timing turns on
 * with @pmu (CYC, noretcomp where the PMU has them) and for user code only
 * (@user_only) or kernel too: 200/300 MB/s plain, twice that with CYC,
 * 1.5 times more with noretcomp (plan.c says why). */
uint64_t sptd_col_plan_pt_rate(const struct sptd_col_pt_pmu *pmu, enum sptd_col_pt_timing timing,
                               int user_only);

/* Size the AUX ring: @want_bytes (--buffer) or, when 0, twice @span_ns at
 * the rate assumed for @timing and @user_only; rounded up to a power of
 * two pages (at least 16), capped at @pmu's limit.  -EINVAL on bad
 * arguments. */
int sptd_col_plan_aux_size(const struct sptd_col_pt_pmu *pmu, enum sptd_col_pt_timing timing,
                           int user_only, uint64_t want_bytes, int64_t span_ns,
                           struct sptd_col_plan_aux *out);

/* The history an AUX ring of @aux_bytes holds at @rate_bytes_s (0 for a
 * zero rate). */
int64_t sptd_col_plan_coverage_ns(uint64_t aux_bytes, uint64_t rate_bytes_s);

/* The plan for @o recording from @source (PT or SAMPLE: AUTO must be
 * resolved first), with @pmu's limits when @source is PT (required then,
 * ignored otherwise), rings mapped in pages of @page_bytes (0: 4096).
 * -EINVAL on bad arguments (AUTO, PT without @pmu, negative window). */
int sptd_col_plan_compute(const struct sptd_col_record_opts *o, enum sptd_col_source source,
                          const struct sptd_col_pt_pmu *pmu, size_t page_bytes,
                          struct sptd_col_plan *out);

/* The buffers of @p as the "armed:" line prints them, each named for what
 * it is: "ftrace ring 1024 KiB + AUX ring 8192 KiB + sideband ring 256 KiB"
 * (PT) or "ftrace ring 1024 KiB + sample ring 1024 KiB" (sampling).
 * Returns the length snprintf would, -EINVAL on bad arguments. */
int sptd_col_plan_describe(const struct sptd_col_plan *p, char *buf, size_t len);

/* Write @p's sizes into meta: ftrace_buffer_kb, and sample_ring_kb
 * (sampling) or sideband_ring_kb (PT; the AUX ring is pt_aux_bytes, written
 * with the PT configuration).  The store's error, -EINVAL. */
int sptd_col_plan_meta_write(const struct sptd_col_plan *p, struct sptd_store *st);

#endif /* SPTD_PLAN_LOCAL_H */
