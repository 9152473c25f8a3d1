/* trigger-kind-local.h — inside the triggers: the core's state, the ops
 * table each kind provides, and the perf events the kinds open.
 *
 *   trigger.c             the core: arming across CPUs, hit collection,
 *                         warm-up/cooldown, deciding and firing, drain, lifetime
 *   trigger_irq.c, trigger_tracepoint.c, trigger_timer.c, trigger_latency.c,
 *   trigger_uprobe.c      one kind each: its ops
 *   trigger_bp.c          break= and watch= (hardware breakpoints), with
 *                         break=/PATH's per-thread arming
 *   trigger_events.c      every perf event of a trigger (the one file of
 *                         the triggers that speaks perf_event_attr)
 *   trigger_parse.c       the --trigger SPEC language
 *
 * Calls go one way: the core calls the kinds (through their ops) and the
 * events; the kinds call the events; the events call neither. */
#ifndef SPTD_TRIGGER_KIND_LOCAL_H
#define SPTD_TRIGGER_KIND_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_col_perf.h"
#include "trigger-local.h"

/* Which of a trigger's events a hit came from. */
enum sptd_col_trigger_role {
	SPTD_TRIG_ROLE_HIT = 0,      /* any record is a hit (tracepoint, uprobe, irq entry) */
	SPTD_TRIG_ROLE_IRQ_EXIT,     /* irq min=: closes an entry */
	SPTD_TRIG_ROLE_WAKING,       /* latency: sched_waking */
	SPTD_TRIG_ROLE_SWITCH,       /* latency: sched_switch */
};

/* One perf event of a trigger on one CPU (opened by trigger_events.c). */
struct sptd_col_trigger_event {
	int fd;                      /* the event, -1 when not open */
	int cpu;                     /* the CPU it counts on */
	enum sptd_col_trigger_role role; /* what its records mean */
	struct sptd_col_perf_layout layout; /* how its samples are laid out */
	struct sptd_col_perf_ring ring; /* control page + data pages; zeroed: unmapped */
	size_t data_pages;           /* data pages of @ring */
	int perf_clock;              /* 1: stamped on the perf clock (an AUX pause
	                              * sibling: a group has one clock, the PT
	                              * event's), converted when read */
	const int64_t *perf_offset_ns; /* with @perf_clock: CLOCK_MONOTONIC - perf
	                              * clock, the trigger's (NULL: 0) */
};

/* Struct sptd_col_trigger_hit is in trigger-local.h (tests feed it). */

struct sptd_col_trigger;

/* What a trigger kind provides.  Optional members may be NULL. */
struct sptd_col_trigger_ops {
	enum sptd_col_trigger_kind kind; /* the kind these ops are for */
	/* 1 when every hit of @spec fires (no decision after the event), so a
	 * kernel pause of PT at the event is right (AUX pause). */
	int (*every_hit)(const struct sptd_col_trigger_spec *spec);
	/* Optional: allocate the kind's state (t->kind_state) for deciding,
	 * without touching the system.  -ENOMEM. */
	int (*init)(struct sptd_col_trigger *t);
	/* Open what the kind needs on @cpus (events, a timer); @err says why
	 * not.  -ENOENT, -EINVAL, -EOPNOTSUPP, -EACCES... */
	int (*arm)(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
	           size_t errlen);
	/* Optional: fill the kind's fields of @h from a tracepoint's raw
	 * record (@raw, @size bytes). */
	void (*decode)(const struct sptd_col_trigger *t, const unsigned char *raw, uint32_t size,
	               struct sptd_col_trigger_hit *h);
	/* Optional (NULL: every hit fires): take @h (hits come in time
	 * order) into the kind's state; 1 when it fires, with what it
	 * measured (handler time, wait) in *@measure. */
	int (*decide)(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
	              int64_t *measure);
	/* Optional: see each sample record of the kind's events as it is
	 * read (before the hits are decided), e.g. to keep its call chain. */
	void (*record)(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
	               const struct sptd_col_perf_record *r);
	/* Optional: fill the kind's own fields of @fire (tid, ip, watch
	 * values) for the hit @h that fired, right after describe. */
	void (*fill)(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
	             struct sptd_col_fire *fire);
	/* The trigger row's detail for the hit @h that fired. */
	void (*describe)(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
	                 int64_t measure, char *buf, size_t len);
	/* Optional, for kinds that are not perf events (timer): 1 and @fire
	 * filled (ts, detail) when the kind fired at or after @not_before. */
	int (*tick)(struct sptd_col_trigger *t, int64_t not_before, struct sptd_col_fire *fire);
	/* Optional: the tracepoint (and filter) whose hit fires @spec, for a
	 * traceoff event trigger in ftrace; 1 filled, 0 when there is none. */
	int (*freeze_point)(const struct sptd_col_trigger_spec *spec, char *system, size_t syslen,
	                    char *event, size_t evlen, char *filter, size_t filterlen);
	/* Optional: the hits it logged from @from to @to (break, watch), in
	 * time order, to @fn; stops at @fn's first error. */
	int (*hits)(const struct sptd_col_trigger *t, int64_t from, int64_t to,
	            sptd_col_trigger_hit_fn fn, void *ctx);
	/* Optional: free the kind's state. */
	void (*fini)(struct sptd_col_trigger *t);
};

/* The kinds. */
extern const struct sptd_col_trigger_ops sptd_col_trigger_irq_ops;
extern const struct sptd_col_trigger_ops sptd_col_trigger_tracepoint_ops;
extern const struct sptd_col_trigger_ops sptd_col_trigger_timer_ops;
extern const struct sptd_col_trigger_ops sptd_col_trigger_latency_ops;
extern const struct sptd_col_trigger_ops sptd_col_trigger_uprobe_ops;
extern const struct sptd_col_trigger_ops sptd_col_trigger_break_ops;
extern const struct sptd_col_trigger_ops sptd_col_trigger_watch_ops;

/* One armed trigger. */
struct sptd_col_trigger {
	struct sptd_col_trigger_spec spec;   /* what was asked (a copy) */
	const struct sptd_col_trigger_ops *ops; /* its kind */
	void *kind_state;                    /* the kind's own state (ops->init), or NULL */
	int max_cpu;                         /* highest CPU number armed */
	struct sptd_col_trigger_event *events; /* perf events, all CPUs */
	int nevents, events_cap;             /* used and allocated entries of @events */
	int own_fd;                          /* a kind's fd that is not a perf event
	                                      * (timer: timerfd), -1 none; closed by the core */
	struct sptd_col_trigger_hit *hits;   /* one check's hits, sorted before deciding */
	size_t nhits, hits_cap;              /* used and allocated entries of @hits */
	const int *leaders;                  /* AUX pause: PT event fd per CPU index while
	                                      * arming, NULL none */
	int aux_pausing;                     /* 1: hit events pause PT (group siblings) */
	int aux_refused;                     /* errno the kernel refused AUX pause with, 0 none */
	enum sptd_col_trigger_aux_why aux_why; /* why it was refused */
	const int64_t *perf_offset_ns;       /* CLOCK_MONOTONIC - perf clock, kept
	                                      * current by the PT source (NULL: 0) */
};

/* ---- perf events of triggers (trigger_events.c) ---------------------------- */

/* How a trigger event is opened. */
#define SPTD_TRIG_EV_BUSY  1   /* a busy event (every switch): bigger ring,
                                * wake the service per half ring */
#define SPTD_TRIG_EV_PAUSE 2   /* may pause PT on its CPU (AUX pause) when
                                * t->leaders is set */

/* Open tracepoint @system:@event on each of @cpus (index i joins
 * t->leaders[i] with @flags & SPTD_TRIG_EV_PAUSE) as events of @t with
 * @role, with ftrace @filter (NULL or "" none), mapped and enabled.
 * -ENOENT no such tracepoint, -EINVAL the filter was refused, -EACCES...;
 * @err says which. */
int sptd_col_trigger_events_tracepoint(struct sptd_col_trigger *t, const char *system,
                                       const char *event, const char *filter,
                                       enum sptd_col_trigger_role role, int flags,
                                       const int *cpus, int ncpus, char *err, size_t errlen);
/* Open the uprobe PMU (@type) at @offset of @path (the string must live as
 * long as @t) on each of @cpus, joining t->leaders for AUX pause.  Errors as
 * perf_event_open; @err says which. */
int sptd_col_trigger_events_uprobe(struct sptd_col_trigger *t, uint32_t type, const char *path,
                                   const char *symbol, uint64_t offset, const int *cpus,
                                   int ncpus, char *err, size_t errlen);
/* A hardware breakpoint (@bp_type SPTD_PERF_BP_*, @len bytes at @addr) on
 * each of @cpus, system-wide (the hits of other processes at that address
 * are the kind's to filter), samples with TID, IP and TIME.  -ENOSPC: no
 * debug register left on a CPU (@err says so); errors as perf_event_open. */
int sptd_col_trigger_events_breakpoint(struct sptd_col_trigger *t, uint32_t bp_type,
                                       uint64_t addr, uint64_t len, const int *cpus, int ncpus,
                                       char *err, size_t errlen);
/* A breakpoint on thread @tid alone (pid = tid, cpu -1: it follows the
 * thread; its debug register is switched with it).  -errno with @err
 * saying why; the event slot is left closed then. */
int sptd_col_trigger_events_breakpoint_task(struct sptd_col_trigger *t, uint32_t bp_type,
                                            uint64_t addr, uint64_t len, int tid, char *err,
                                            size_t errlen);
/* Close one event of a trigger (its thread exited): fd -1, ring unmapped. */
void sptd_col_trigger_events_close_one(struct sptd_col_trigger_event *ev);
/* The byte offset of field @name of tracepoint @system:@event's raw
 * record into *@offset.  -ENOENT (@err says which) when it has none. */
int sptd_col_trigger_events_field(const char *system, const char *event, const char *name,
                                  int *offset, char *err, size_t errlen);
/* The int32 at @off of a raw record of @size bytes; -1 when out of it. */
int32_t sptd_col_trigger_raw_i32(const unsigned char *raw, uint32_t size, int off);

/* One sample record of a trigger event: TIME and CPU, the RAW bytes when
 * the event has them (borrowed for the callback only), and the whole
 * parsed record @r (TID, IP where the event asked for them). */
typedef int (*sptd_col_trigger_sample_fn)(void *ctx, const struct sptd_col_trigger_event *ev,
                                          int64_t ts, int cpu, const unsigned char *raw,
                                          uint32_t raw_size, const struct sptd_col_perf_record *r);
/* Hand every new sample record of @ev's ring to @fn, then consume them.
 * Returns @fn's first error, else 0. */
int sptd_col_trigger_events_drain(struct sptd_col_trigger_event *ev,
                                  sptd_col_trigger_sample_fn fn, void *ctx);
/* 1 when a ring of @t's events holds records not drained yet (a hit that
 * came in after the last drain), else 0. */
int sptd_col_trigger_events_unread(const struct sptd_col_trigger *t);
/* Unmap and close every event of @t. */
void sptd_col_trigger_events_close(struct sptd_col_trigger *t);

#endif /* SPTD_TRIGGER_KIND_LOCAL_H */
