/* sptd_store_profile.h — part of sptd_store.h (which includes it): the
 * readers of an incident's profile — callsite chains, samples, off-CPU
 * stacks, watchpoint hits and who the threads are — for the stack
 * aggregation, the Perfetto profile packets and the pprof export of
 * query/.  store/store_profile.c runs them; the reader conventions of
 * sptd_store.h hold (borrowed pointers, @fn's return, the errors). */
#ifndef SPTD_STORE_PROFILE_H
#define SPTD_STORE_PROFILE_H

#include <stdint.h>

struct sptd_store;
struct sptd_store_watch_hit_row;

/* One callsite row as the stack readers want it: a frame of a stack, its
 * parent the next one out. */
struct sptd_store_frame_row {
	int64_t id;             /* callsite.id */
	int64_t parent_id;      /* the caller's frame; valid when has_parent */
	int64_t depth;          /* 0 at the root */
	int64_t symbol_id;      /* valid when has_symbol */
	uint64_t addr;          /* the pc */
	int has_parent;         /* 0: a root (parent_id NULL) */
	int has_symbol;         /* 0: no symbol covers addr */
};

/* callsite rows by id. */
int sptd_store_callsite_each(struct sptd_store *st,
                             int (*fn)(void *ctx, const struct sptd_store_frame_row *row),
                             void *ctx);

/* One stack of a thread at an instant: a sample, or an off-CPU wait. */
struct sptd_store_stack_row {
	int64_t ts;             /* when */
	int64_t dur;            /* samples 0; a wait: how long (thread_state.dur) */
	int64_t utid;           /* the thread, -1 unknown */
	int64_t callsite_id;    /* the leaf frame, -1 none */
	int cpu;                /* -1 unknown */
	const char *state;      /* a wait: its thread_state (borrowed); samples NULL */
};

/* sample rows by ts, then id. */
int sptd_store_sample_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_stack_row *row),
                           void *ctx);
/* thread_state rows that hold a stack (--offcpu), by ts, then id. */
int sptd_store_offcpu_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_stack_row *row),
                           void *ctx);

/* One thread with its process's pid and name. */
struct sptd_store_thread_info_row {
	int64_t utid;           /* thread.utid */
	int64_t tid;            /* the kernel's id */
	int64_t pid;            /* its process's, -1 unknown */
	const char *name;       /* thread name, NULL unknown (borrowed) */
	const char *process;    /* process name, NULL unknown (borrowed) */
};

/* thread rows by utid. */
int sptd_store_thread_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_thread_info_row *row),
                           void *ctx);

/* watch_hit rows by ts, then id, as struct sptd_store_watch_hit_row
 * (sptd_store_rows.h; watch 0 and silent -1 where the values were not read),
 * each with @utid, the thread row of its tid (-1 none). */
int sptd_store_watch_hit_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_watch_hit_row *row,
                                        int64_t utid),
                              void *ctx);

#endif /* SPTD_STORE_PROFILE_H */
