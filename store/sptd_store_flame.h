/* sptd_store_flame.h — store/'s readers for `sysptd flamegraph` (PT call
 * slices) and `sysptd diff` (per-name aggregates), store_flame.c.  Part of
 * store/'s public API, kept in a header of its own while sptd_store.h
 * stands at the 800-line limit (it folds back in once the table-driven
 * store shrinks that header).
 *
 * Each reader hands rows to @fn (borrowed strings: valid during the call);
 * a non-zero @fn result stops it and is returned.  -EINVAL (NULL @st/@fn,
 * bad range or kind), or the store's error (-EBADMSG: a missing table or a
 * damaged file; the message in sptd_store_errmsg()). */
#ifndef SPTD_STORE_FLAME_H
#define SPTD_STORE_FLAME_H

#include <stdint.h>

#include "sptd_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One PT call slice with its symbol. */
struct sptd_store_slice_nest_row {
	int64_t id, ts, dur;    /* slice.id, ts, dur */
	int cpu;                /* -1 NULL */
	int64_t utid;           /* -1 NULL */
	int has_parent;         /* parent_id is not NULL */
	int64_t parent_id;      /* the enclosing slice (when has_parent) */
	int64_t symbol_id;      /* -1 none */
	const char *name;       /* symbol name, NULL none (borrowed) */
	int64_t dso_id;         /* -1 none */
};
/* Every slice ordered by (utid, ts, depth, id): a parent before the
 * slices it encloses, one thread after another. */
int sptd_store_slice_nest_each(struct sptd_store *st,
                               int (*fn)(void *ctx, const struct sptd_store_slice_nest_row *row),
                               void *ctx);

/* What sptd_store_agg_each() sums per name. */
enum sptd_store_agg {
	SPTD_STORE_AGG_THREAD_CPU = 0, /* sched_slice time per thread name (no idle);
	                                * count: threads of that name */
	SPTD_STORE_AGG_IRQ,            /* irq_slice per "irq N NAME", softirq_slice
	                                * per "softirq NAME": count, time */
	SPTD_STORE_AGG_WAKEUP,         /* wakeup-to-run latency per thread name
	                                * (--report wakeup's rows, clipped ones out) */
};
/* One name's aggregate. */
struct sptd_store_agg_row {
	const char *key;        /* the name (borrowed) */
	int64_t count;          /* events (threads for THREAD_CPU) */
	double total_ns;        /* summed as floating point: no overflow */
	int64_t max_ns;         /* the longest one */
};
int sptd_store_agg_each(struct sptd_store *st, enum sptd_store_agg kind,
                        int (*fn)(void *ctx, const struct sptd_store_agg_row *row), void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* SPTD_STORE_FLAME_H */
