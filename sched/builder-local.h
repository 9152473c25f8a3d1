/* builder-local.h — private to the slice builder: the builder object,
 * per-task and per-CPU walk state (builder.c collects, names and drives the
 * walk; builder_walk.c holds the evidence rules), and the tid -> task table
 * (builder_tasks.c). */
#ifndef SPTD_SCHED_BUILDER_LOCAL_H
#define SPTD_SCHED_BUILDER_LOCAL_H

#include <stdint.h>

#include "sptd_sched.h"

#define BUILDER_MAX_IRQ_NAMES 256
#define BUILDER_WHY_LEN 160

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
	int flags;                        /* SPTD_SCHED_F_START_CUT: @since was not seen */
	int prio;                         /* last prio an event gave it, -1 none */
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

/* One collected event and its arrival order (the last sort key). */
struct builder_event {
	struct sptd_sched_event ev;   /* as added, strings terminated */
	uint64_t arrival;             /* position in the add() sequence */
};

/* A handler a CPU is inside (a hard irq's or a softirq's). */
struct builder_handler {
	int open;                     /* its entry was seen, its exit not yet */
	int num;                      /* the irq number or softirq vector */
	int64_t ts;                   /* its entry */
	char name[32];                /* irq: the action name from the entry */
};

/* Walk state of one CPU.  A "segment" is a stretch of the CPU seen without
 * a break: inside one, ftrace missed no event. */
struct builder_cpu {
	int has_data;                 /* any event from this CPU */
	int64_t first_ts;             /* its first event (a LOST one included) */
	int lost_first;               /* that first event is a LOST: the ring wrapped */
	int64_t seg_start;            /* since when the CPU is seen without a break */
	int64_t last_ts;              /* its latest event so far (seg_start before any) */
	int64_t not_in[2];            /* latest time proven outside every hard irq handler
	                               * [0] / every softirq [1] */
	int cur_known;                /* a switch (or the segment start) told who runs */
	int cur_tid;                  /* ... that task */
	int cur_prio;                 /* ... its prio */
	int64_t cur_start;            /* ... since when */
	int64_t cur_seen;             /* ... its latest event here (proof it still ran) */
	int cur_flags;                /* ... SPTD_SCHED_F_START_CUT when inferred */
	struct builder_handler hard;  /* the hard irq handler it is in */
	struct builder_handler soft;  /* the softirq it is in */
};

struct sptd_sched_builder {
	int64_t window_start, window_end;  /* clip bounds, ns */
	unsigned char *excluded;      /* [ncpus]: 1 a CPU not recorded (-C); NULL none */
	int64_t gap_slack;            /* see sptd_sched_builder_set_gap_slack */
	int64_t started, stopped;     /* see sptd_sched_builder_set_recording */
	char started_why[BUILDER_WHY_LEN]; /* ... why it (re)started, "" none */
	char stopped_why[BUILDER_WHY_LEN]; /* ... why it stopped, "" none */
	int ncpus;                    /* CPUs that had a ring */
	struct builder_event *events; /* collected events */
	size_t nr, cap;               /* used / allocated entries of @events */
	/* per finish() */
	const struct sptd_sched_sink *sink; /* where rows go */
	struct builder_cpu *cpu;      /* @ncpus entries */
	struct sptd_sched_tasks tasks;/* every tid the events name */
	int64_t data_end;             /* where what was seen ends: window_end, or
	                               * earlier when ftrace stopped early */
	int nr_irq_names;             /* used entries below */
	int irq_name_irq[BUILDER_MAX_IRQ_NAMES];      /* irq number ... */
	char irq_name[BUILDER_MAX_IRQ_NAMES][32];     /* ... and its last name */
	int slices;                   /* sched slices emitted */
};

/* ---- the walk (builder_walk.c) -------------------------------------------- */

/* The gaps before each CPU's record and after an early stop, and each
 * CPU's first segment.  Call once, before the walk. */
int sptd_sched_walk_begin(struct sptd_sched_builder *b);
/* Take one event (time order) through the rules. */
int sptd_sched_walk_event(struct sptd_sched_builder *b, const struct sptd_sched_event *ev);
/* Close what is still open where the record ends (b->data_end). */
int sptd_sched_walk_end(struct sptd_sched_builder *b);
/* Remember @name as the action name of @irq (the last one wins). */
void sptd_sched_irq_name_set(struct sptd_sched_builder *b, int irq, const char *name);
/* The last name irq @irq had in the events ("" none). */
const char *sptd_sched_irq_name_get(const struct sptd_sched_builder *b, int irq);

#endif /* SPTD_SCHED_BUILDER_LOCAL_H */
