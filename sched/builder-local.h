/* builder-local.h — private to the slice builder: per-task and per-CPU walk
 * state, and the tid -> task table (builder_tasks.c). */
#ifndef SPTD_SCHED_BUILDER_LOCAL_H
#define SPTD_SCHED_BUILDER_LOCAL_H

#include <stdint.h>

#include "sptd_sched.h"

/* What the builder knows of one task during the walk. */
struct sptd_sched_task {
	int tid;                          /* -1: free table slot */
	int has_comm;                     /* @comm came from an event */
	char comm[SPTD_SCHED_COMM_LEN];   /* latest comm in time order */
	int state_known;                  /* an open thread_state row exists */
	char state[8];                    /* "Running", "R", "R+", "S", ... */
	int64_t since;                    /* when @state began */
	int cpu;                          /* CPU while "Running", else -1 */
	int waker;                        /* waker tid for "R" after a wakeup, else -1 */
};

/* Open-addressing table of tasks keyed by tid. */
struct sptd_sched_tasks {
	struct sptd_sched_task *slot;     /* @cap slots */
	size_t cap;                       /* power of two */
	size_t used;                      /* slots holding a task */
};

/* Empty table; 0 or -ENOMEM. */
int sptd_sched_tasks_init(struct sptd_sched_tasks *t);
void sptd_sched_tasks_fini(struct sptd_sched_tasks *t);
/* The task for @tid, added (state unknown, no comm) if new; NULL on ENOMEM.
 * Adding a tid may move every task: earlier pointers are then stale. */
struct sptd_sched_task *sptd_sched_tasks_get(struct sptd_sched_tasks *t, int tid);
/* All tasks sorted by tid into a new array the caller frees; count through
 * @n.  NULL with *n == 0 for an empty table, NULL with *n == -1 on ENOMEM. */
struct sptd_sched_task **sptd_sched_tasks_sorted(struct sptd_sched_tasks *t, long *n);

#endif /* SPTD_SCHED_BUILDER_LOCAL_H */
