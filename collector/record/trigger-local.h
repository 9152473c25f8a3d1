/* trigger-local.h — trigger sources of the recording service: what the
 * service (and the tests) use.  The kinds' insides are in
 * trigger-kind-local.h. */
#ifndef SPTD_TRIGGER_LOCAL_H
#define SPTD_TRIGGER_LOCAL_H

#include <stdint.h>
#include <time.h>

#include "sptd_col_base.h"
#include "sptd_col_record.h"

#define SPTD_FIRE_MAX_CHAIN 128

/* A trigger that fired: what, where, when (CLOCK_MONOTONIC ns). */
struct sptd_col_fire {
	int64_t ts;                 /* when the hit happened */
	int cpu;                    /* -1: not tied to a CPU (timer, manual) */
	const struct sptd_col_trigger_spec *spec; /* which trigger (borrowed) */
	char detail[256];           /* e.g. "irq 36 virtio1-req.0 took 12us" */
	int tid;                    /* break, watch: the thread that hit; -1 */
	uint64_t ip;                /* ... its instruction pointer; 0 */
	int watch;                  /* 1: the watch fields below are set */
	uint64_t watch_addr, old_value, new_value; /* watch: what changed */
	int silent;                 /* watch: 1 the store left the value as it was */
	int64_t watch_hits, watch_silent; /* watch: hits so far, silent ones */
	char function[160];         /* break, watch: "func+0x7" at @ip, "" unknown */
	uint64_t chain[SPTD_FIRE_MAX_CHAIN]; /* break, watch: the hit's call chain
	                             * (PERF_CONTEXT_* markers included) */
	int nchain;                 /* entries of @chain, 0 none */
	int pid;                    /* break, watch: the process; -1 */
	int unreported;             /* 1: no perf sample: the service found the
	                             * kernel's freeze (@ts: when it noticed) */
	int measured;               /* latency, irq: 1 when @subject and @measure
	                             * below say what perf measured (the capture
	                             * holds them against ftrace's record) */
	int subject;                /* latency: the task switched in; irq: the IRQ */
	int64_t measure;            /* latency: the wait; irq: the handler's time;
	                             * -1 unknown */
};

/* A record of interest from a trigger event, decoded: what the decision
 * works on.  Fields a record does not carry are -1 (name ""). */
struct sptd_col_trigger_hit {
	int64_t ts;                 /* CLOCK_MONOTONIC ns */
	int cpu;                    /* where it happened */
	int role;                   /* which event of the trigger (SPTD_TRIG_ROLE_*,
	                             * trigger-kind-local.h): 0 a plain hit */
	int irq;                    /* irq events: the IRQ number */
	int pid;                    /* waking: the woken task; switch: the next task */
	int prev_pid;               /* switch: the task switched out */
	char name[64];              /* irq_handler_entry: the handler's name */
	int task_pid, task_tid;     /* the task the sample was taken in (SAMPLE_TID), -1 */
	uint64_t ip;                /* the sample's IP (break, watch), 0 */
};

/* One armed trigger: perf events per CPU or a timerfd. */
struct sptd_col_trigger;

/* One logged hit of a break= or watch= trigger (sptd_col_trigger_hits). */
struct sptd_col_logged_hit {
	int64_t ts;                 /* CLOCK_MONOTONIC ns */
	int cpu, tid;               /* where, and the thread that hit */
	uint64_t ip;                /* the instruction (for a watch: the one after the store) */
	int watch;                  /* 1: the values below are set */
	uint64_t old_value, new_value; /* watch: read around the store */
	int silent;                 /* watch: 1 a silent store, -1 values unknown */
	const char *function;       /* "func+0x7" at @ip, "" unknown (valid during the call) */
};
typedef int (*sptd_col_trigger_hit_fn)(void *ctx, const struct sptd_col_logged_hit *h);
/* The hits @t logged from @from to @to (break, watch: the last 1024 of its
 * process), oldest first; 0 for kinds that log none, else @fn's error. */
int sptd_col_trigger_hits(const struct sptd_col_trigger *t, int64_t from, int64_t to,
                          sptd_col_trigger_hit_fn fn, void *ctx);
/* The text of @t's spec ("watch=123:counter,w"). */
const char *sptd_col_trigger_text(const struct sptd_col_trigger *t);

/* Arm @spec on every CPU in @cpus (count @ncpus).  Tracepoints are resolved
 * and filters applied here, so a missing event or a bad filter fails now,
 * with @err saying which.  -ENOENT, -EINVAL, -EOPNOTSUPP (no uprobe PMU),
 * -EACCES. */
int sptd_col_trigger_create(const struct sptd_col_trigger_spec *spec,
                            const int *cpus, int ncpus,
                            struct sptd_col_trigger **out, char *err, size_t errlen);
/* As sptd_col_trigger_create, and where the trigger is a perf event that
 * fires on every hit (irq without min=, tracepoint, uprobe) and @pt_fds is
 * not NULL: each CPU's event joins the group of the intel_pt event
 * @pt_fds[i] (for @cpus[i]) with aux_pause set, so the kernel pauses PT on
 * the CPU where the trigger fired (AUX pause, Linux 6.13+).  A kernel that
 * refuses it gets plain events: see sptd_col_trigger_aux_pause().  @pt_fds
 * is only read during the call.
 * The kernel only groups events of one clock (perf_event_open: "All events
 * in a group should have the same clock"), so these events stay on the PT
 * event's perf clock; their times become CLOCK_MONOTONIC when read, with
 * *@perf_offset_ns (CLOCK_MONOTONIC - perf clock, read at each hit; NULL:
 * 0), which must live as long as the trigger. */
int sptd_col_trigger_create_aux(const struct sptd_col_trigger_spec *spec, const int *cpus,
                                int ncpus, const int *pt_fds, const int64_t *perf_offset_ns,
                                struct sptd_col_trigger **out, char *err, size_t errlen);
/* A trigger of @spec that opens nothing (no events, no timer): its kind's
 * decision logic fed by hand with sptd_col_trigger_feed() (tests, replay).
 * CPUs 0..@max_cpu.  -EINVAL, -ENOMEM. */
int sptd_col_trigger_create_unarmed(const struct sptd_col_trigger_spec *spec, int max_cpu,
                                    struct sptd_col_trigger **out);
/* Why the kernel refused AUX pause for a trigger. */
enum sptd_col_trigger_aux_why {
	SPTD_TRIG_AUX_OK = 0,        /* not refused (or not asked) */
	SPTD_TRIG_AUX_NO_KERNEL,     /* the kernel has no aux_action (before 6.13):
	                              * the event joins the PT group without it */
	SPTD_TRIG_AUX_GROUP,         /* the kernel refused the event in the PT
	                              * event's group at all (clock, CPU, PMU) */
};
/* 1 when every CPU's event of @t pauses PT in the kernel; else 0, and
 * *@refused (may be NULL) is the errno the kernel refused it with (0: not
 * asked, or not a kind that can). */
int sptd_col_trigger_aux_pause(const struct sptd_col_trigger *t, int *refused);
/* Why @t's AUX pause was refused (SPTD_TRIG_AUX_OK for NULL or none). */
enum sptd_col_trigger_aux_why sptd_col_trigger_aux_why(const struct sptd_col_trigger *t);
/* The fds to poll for input (count returned, at most @max). */
int sptd_col_trigger_fds(const struct sptd_col_trigger *t, int *fds, int max);
/* The earliest moment a hit may fire an automatic trigger: once the rings
 * hold a whole @window_ns after arming at @armed_at (warm-up), and not
 * within @cooldown_ns after the capture that ended at @last_capture (0:
 * none yet). */
int64_t sptd_col_trigger_not_before(int64_t armed_at, int64_t window_ns, int64_t last_capture,
                                    int64_t cooldown_ns);
/* Drain pending input; 1 and *fire filled when the trigger fired (the
 * earliest qualifying hit at or after @not_before, ns), 0 when not.  Hits
 * before @not_before (warm-up, cooldown) are consumed and ignored. */
int sptd_col_trigger_check(struct sptd_col_trigger *t, int64_t not_before,
                           struct sptd_col_fire *fire);
/* Add @h to the hits the next decision takes (as draining a ring does).
 * -EINVAL, -ENOMEM. */
int sptd_col_trigger_feed(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h);
/* Decide on the hits fed so far, in time order, and forget them: 1 and
 * *fire filled as sptd_col_trigger_check, 0 not fired, -EINVAL. */
int sptd_col_trigger_decide(struct sptd_col_trigger *t, int64_t not_before,
                            struct sptd_col_fire *fire);
/* Throw away hits up to now (after a capture, so a storm during the
 * capture does not fire again at once). */
void sptd_col_trigger_drain(struct sptd_col_trigger *t);
/* The tracepoint (and its filter, "" none) whose hit fires @spec, where the
 * kernel can freeze ftrace itself (a traceoff event trigger): tracepoint=,
 * irq without min=.  1 filled, 0 none for this kind, -EINVAL. */
int sptd_col_trigger_freeze_point(const struct sptd_col_trigger_spec *spec, char *system,
                                  size_t syslen, char *event, size_t evlen, char *filter,
                                  size_t filterlen);
/* Accepts NULL: closes everything @t opened and frees it. */
void sptd_col_trigger_destroy(struct sptd_col_trigger *t);
/* Threads that map the file of a break=/PATH trigger and that the last
 * scan left unwatched (no slot left for them: trigger_bp.c), summed over
 * the break=/PATH triggers of @trig (@n of them; the others are skipped):
 * for `sysptd status` and meta break_unwatched.  -1 when none is a
 * break=/PATH trigger. */
int64_t sptd_col_bp_unwatched(struct sptd_col_trigger *const *trig, int n);

#endif
