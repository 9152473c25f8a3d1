/* sptd_sched.h — scheduler and interrupt tracepoints through ftrace.
 *
 * Three parts, usable separately:
 *   1. sptd_sched_trace: an ftrace instance of sysptd's own (libtracefs),
 *      overwrite mode, with sched/irq/softirq events; freeze and capture of
 *      its raw per-CPU ring-buffer pages and the format files to parse them.
 *   2. sptd_sched_parser: raw pages + formats -> typed events
 *      (libtraceevent).  Works offline from what was stored in an incident.
 *   3. sptd_sched_builder: typed events (ns timestamps, any CPU order) ->
 *      sched slices, thread states, irq/softirq slices, clipped to a window.
 *
 * Only sched/ includes tracefs.h and event-parse.h.
 *
 * Errors: >= 0 success, negative errno:
 *   -EINVAL  bad argument;  -ENOMEM;  -EPERM/-EACCES  not root;
 *   -ENODEV  tracefs not available and could not be mounted;
 *   -ENOENT  no such event (e.g. "tracepoint=foo:bar"); -EBUSY instance in use
 *            by another live sysptd;  -EBADMSG  unparsable page or format;
 *   -EIO     other tracefs failure.
 * Callback return values < 0 stop the walk and are returned as they are.
 */
#ifndef SPTD_SCHED_H
#define SPTD_SCHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SPTD_LOG_FN_DEFINED
#define SPTD_LOG_FN_DEFINED
/* Log hook shared by all sysptd libraries: @level is a syslog level. */
typedef void (*sptd_log_fn)(void *ctx, int level, const char *msg);
#endif
/* Where sched/ reports warnings (a library never prints). */
void sptd_sched_set_log(sptd_log_fn fn, void *ctx);

/* ---- 1. the ftrace instance ---------------------------------------------- */

struct sptd_sched_config {
	const char *instance;        /* instance name, e.g. "sysptd" */
	size_t buffer_kb;            /* per-CPU ring size (buffer_size_kb) */
	const char *clock;           /* trace_clock: "mono" (sampling) or "x86-tsc" (PT) */
	int irq;                     /* also irq_handler_entry/exit */
	int softirq;                 /* also softirq_entry/exit */
	const char *cpumask;         /* tracing_cpumask (hex, as the kernel reads
	                              * it: "2", "ff,00000001"); NULL every CPU */
	const struct sptd_sched_extra *extra; /* more tracepoints (sysptd -e) */
	int nextra;                  /* entries of @extra, at most SPTD_SCHED_MAX_EXTRA */
};

/* A tracepoint added to the instance (sysptd -e SYS:EVENT[,filter=EXPR]):
 * its records go into the rings with the scheduler's. */
#define SPTD_SCHED_MAX_EXTRA 32
struct sptd_sched_extra {
	char system[64], event[128];
	char filter[512];            /* ftrace filter syntax; "" none */
};

struct sptd_sched_trace;

/* Mount tracefs if needed; remove a stale instance of the same name left by a
 * killed run (-EBUSY if a live sysptd holds it: the caller checks that with
 * its own lock first); create the instance, set overwrite, buffer size, clock
 * and enable sched_switch, sched_waking, sched_wakeup_new,
 * sched_process_fork, sched_process_exit (+ irq, softirq).  Tracing is left
 * OFF: call sptd_sched_trace_start(). */
int sptd_sched_trace_create(const struct sptd_sched_config *cfg,
                            struct sptd_sched_trace **out);
/* Check that SYSTEM:EVENT exists (-ENOENT otherwise) and install a
 * one-shot "traceoff:1 [if FILTER]" event trigger on it in the instance, so
 * the kernel freezes the rings at the instant the event first fires (the
 * event itself is recorded), and does nothing more until it is removed and
 * installed again.  @filter may be NULL; an invalid filter is -EINVAL. */
int sptd_sched_trace_freeze_on(struct sptd_sched_trace *tr, const char *system,
                               const char *event, const char *filter);
/* Remove every trigger freeze_on installed.  Costs the kernel's grace
 * period (about 150 ms on a 2-CPU VM), but the triggers stop acting at once.
 * 0, or the first error (the detail in sptd_sched_trace_error()). */
int sptd_sched_trace_freeze_off(struct sptd_sched_trace *tr);
int sptd_sched_trace_start(struct sptd_sched_trace *tr);   /* tracing_on = 1 */
int sptd_sched_trace_stop(struct sptd_sched_trace *tr);    /* tracing_on = 0 */
/* 1 if tracing_on, 0 if frozen (by us or by a traceoff trigger). */
int sptd_sched_trace_is_on(struct sptd_sched_trace *tr);
/* Drop everything in the rings (after a capture, before re-arming). */
int sptd_sched_trace_reset(struct sptd_sched_trace *tr);
/* Whether the instance sptd_sched_trace_create made is still there: 1
 * yes; 0 it was removed (another root program's rmdir in
 * tracefs/instances: the kernel allows it while no file of it is open,
 * which is most of the time) or replaced by another of the same name; then
 * the rings, the events enabled and tracing_on are gone, and only
 * destroying @tr and creating the instance again records anew.  -EINVAL,
 * or -errno when tracefs cannot be looked at. */
int sptd_sched_trace_present(const struct sptd_sched_trace *tr);
/* 1 when tracefs has an instance named @name, whoever made it; 0 none;
 * -EINVAL a name that is not one path component. */
int sptd_sched_instance_exists(const char *name);

/* One past the highest CPU number in a CPU list file (@list_path; NULL:
 * /sys/devices/system/cpu/possible): "0-3,8-11" gives 12.  A count of
 * CPUs (sysconf) falls short where the numbers have holes; without the
 * file, that count. */
long sptd_sched_cpu_id_bound(const char *list_path);

enum sptd_sched_raw_kind {
	SPTD_SCHED_RAW_FORMAT, /* @name: "header_page", "header_event", "SYSTEM/EVENT"; @data: text */
	SPTD_SCHED_RAW_PAGE,   /* @cpu, @seq: one ring-buffer page, @len bytes */
};
typedef int (*sptd_sched_raw_fn)(void *ctx, enum sptd_sched_raw_kind kind,
                                 const char *name, int cpu, int seq,
                                 const void *data, size_t len);
/* With tracing stopped: hand out every format file needed for parsing, then
 * every page of every CPU, oldest first. Non-destructive where the kernel
 * allows. Returns the number of pages. */
int sptd_sched_trace_capture(struct sptd_sched_trace *tr, sptd_sched_raw_fn fn,
                             void *ctx);
/* The last failure's detail (with the kernel's error_log text, e.g. why a
 * filter was refused); "" when none.  Valid until the next call on @tr. */
const char *sptd_sched_trace_error(const struct sptd_sched_trace *tr);
/* Stop tracing, remove the instance (and its triggers), free.  Accepts NULL.
 * Safe to call from the exit path after SIGINT/SIGTERM. */
void sptd_sched_trace_destroy(struct sptd_sched_trace *tr);

/* Mount tracefs at /sys/kernel/tracing if nothing is there.  0, or -ENODEV
 * with the reason logged. */
int sptd_sched_tracefs_ensure(void);
/* Every tracepoint of this kernel (tracefs available_events), in its order:
 * @fn(@ctx, system, event) each; a negative return stops the walk and is
 * returned.  0, -ENODEV (no tracefs), -EACCES (not root), -errno. */
int sptd_sched_events_each(int (*fn)(void *ctx, const char *system, const char *event),
                           void *ctx);
/* 1 if SYSTEM:EVENT exists in tracefs, 0 if not, < 0 on error.  Its numeric
 * id through @id if non-NULL (for perf_event_open PERF_TYPE_TRACEPOINT). */
int sptd_sched_event_exists(const char *system, const char *event, int *id);

/* Offset and size in bytes of @field in the raw record of SYSTEM:EVENT (as
 * perf's PERF_SAMPLE_RAW hands it out), from the event's format file.
 * -ENOENT no such event or field, -EINVAL bad names. */
int sptd_sched_event_field(const char *system, const char *event, const char *field,
                           int *offset, int *size);

/* ---- 2. parsing ----------------------------------------------------------- */

enum sptd_sched_event_type {
	SPTD_SCHED_SWITCH = 1,
	SPTD_SCHED_WAKING,      /* sched_waking (falls back to sched_wakeup) */
	SPTD_SCHED_WAKEUP_NEW,
	SPTD_SCHED_FORK,
	SPTD_SCHED_EXIT,
	SPTD_SCHED_IRQ_ENTRY,
	SPTD_SCHED_IRQ_EXIT,
	SPTD_SCHED_SOFTIRQ_ENTRY,
	SPTD_SCHED_SOFTIRQ_EXIT,
	SPTD_SCHED_LOST,        /* not a tracepoint: the ring lost events of @cpu
	                         * before @ts (u.lost) */
	SPTD_SCHED_OTHER,       /* any other tracepoint (sysptd -e), only from a
	                         * parser told to (sptd_sched_parser_want_other):
	                         * u.other */
};

/* sptd_sched_event.context: where the event fired, from its record's
 * common_flags.  0 when not known (switches from outside ftrace, tests):
 * then only the event's type says anything about its context. */
#define SPTD_SCHED_CTX_KNOWN   0x1  /* the bits below are valid */
#define SPTD_SCHED_CTX_HARDIRQ 0x2  /* in hard interrupt context (any vector: also the
                                     * timer and IPIs that irq_handler_entry skips) */
#define SPTD_SCHED_CTX_SOFTIRQ 0x4  /* serving a softirq */
#define SPTD_SCHED_CTX_NMI     0x8  /* in an NMI */

/* Why a LOST event says events are missing (u.lost.reason). */
enum sptd_sched_lost_reason {
	SPTD_SCHED_LOST_OVERWRITTEN = 1, /* the ring wrapped: the kernel overwrote older
	                                  * events (the page's missed-events flag) */
	SPTD_SCHED_LOST_CORRUPT,         /* an unreadable page of this CPU was skipped */
};

#define SPTD_SCHED_COMM_LEN 16

struct sptd_sched_event {
	enum sptd_sched_event_type type;
	int64_t ts;          /* raw trace-clock value from the page (builder: ns) */
	int cpu;             /* CPU whose ring held the event */
	int pid;             /* common_pid: task current on @cpu when it fired */
	unsigned int context; /* SPTD_SCHED_CTX_* bits, 0 unknown */
	union {
		struct {
			int prev_tid, prev_prio, next_tid, next_prio;
			char prev_state[4];  /* "R", "R+", "S", "D", "T", "t", "X", "Z", "P", "I" */
			char prev_comm[SPTD_SCHED_COMM_LEN], next_comm[SPTD_SCHED_COMM_LEN];
		} sw;
		struct {             /* WAKING and WAKEUP_NEW */
			int tid, prio, target_cpu;
			char comm[SPTD_SCHED_COMM_LEN];
		} wake;
		struct {
			int parent_tid, child_tid;
			char child_comm[SPTD_SCHED_COMM_LEN];
		} fork;
		struct {
			char name[128];  /* "SYSTEM:EVENT" */
			const char *args; /* its fields as a JSON object, owned by the
			                   * parser until the next record */
		} other;
		struct {
			int tid;
			char comm[SPTD_SCHED_COMM_LEN];
		} exit;
		struct {
			int irq, ret;    /* ret only for IRQ_EXIT (1 handled, 0 none) */
			char name[32];   /* only for IRQ_ENTRY */
		} irq;
		struct {
			int vec;
		} softirq;
		struct {
			int64_t count;   /* events lost, -1 unknown */
			int reason;      /* enum sptd_sched_lost_reason */
		} lost;
	} u;
};

typedef int (*sptd_sched_event_fn)(void *ctx, const struct sptd_sched_event *ev);

struct sptd_sched_parser;

int sptd_sched_parser_create(struct sptd_sched_parser **out);
/* Feed the format files captured with the pages (same names as above). */
/* Deliver records of every other parsed format too, as SPTD_SCHED_OTHER
 * (off by default: the scheduling view needs only its own events). */
void sptd_sched_parser_want_other(struct sptd_sched_parser *p, int want);
int sptd_sched_parser_add_format(struct sptd_sched_parser *p, const char *name,
                                 const char *text);
/* Decode one page of @cpu, calling @fn for each known event in order; a
 * page the kernel marked as following lost events (the ring wrapped) first
 * gives a SPTD_SCHED_LOST event at the page's time.  Returns the number of
 * tracepoint events; -EBADMSG for a corrupt page (the caller records a gap
 * and goes on with the next page). */
int sptd_sched_parser_parse_page(struct sptd_sched_parser *p, int cpu,
                                 const void *page, size_t len,
                                 sptd_sched_event_fn fn, void *ctx);
/* Why the last add_format/parse_page failed; "" when none.  Valid until the
 * next call on @p. */
const char *sptd_sched_parser_error(const struct sptd_sched_parser *p);
/* The kernel's softirq vector name ("TIMER", "NET_RX", ...) or "?". */
const char *sptd_sched_softirq_name(int vec);
/* sched_switch's prev_state number as ftrace prints it ("R", "R+", "S",
 * "D", ...), by the __print_flags table of @format (a sched_switch format
 * text, as perf.data's TRACING_DATA holds it; NULL or without a usable
 * table: the Linux 4.14+ layout).  create: 0 or -ENOMEM. */
struct sptd_sched_states;
int sptd_sched_states_create(const char *format, struct sptd_sched_states **out);
void sptd_sched_states_letters(const struct sptd_sched_states *s, uint64_t value, char out[4]);
void sptd_sched_states_destroy(struct sptd_sched_states *s);
void sptd_sched_parser_destroy(struct sptd_sched_parser *p);

/* ---- 3. building slices ----------------------------------------------------- */

/* The rule the builder follows: a row is only as long as the evidence.
 * Within a CPU's record, ftrace misses nothing, so a stretch of a CPU is
 * either seen whole or is a gap with its reason (ring overwritten, not yet
 * recording, stopped early, unreadable page).  An edge that was not seen
 * is flagged:
 *   - an irq or softirq entry without its exit ends at the first later event
 *     on its CPU that proves the handler had ended (a switch, a softirq, any
 *     event outside hard irq / softirq context by its flags, another
 *     handler's entry), or at the end of what was seen: SPTD_SCHED_F_END_CUT;
 *   - an exit without its entry starts at the last earlier event that proves
 *     the CPU was not in that handler, or where the CPU's record begins:
 *     SPTD_SCHED_F_START_CUT;
 *   - a sched slice or thread state that began before the record (or the
 *     window) of its CPU starts there with START_CUT; one still open at the
 *     end of the record (or the window) ends there with END_CUT. */

/* Row flags (the sink's @flags): the same bits as slice.flags. */
#define SPTD_SCHED_F_START_CUT 0x1  /* the start was not seen: the row starts where
                                     * the window or the evidence does */
#define SPTD_SCHED_F_END_CUT   0x2  /* the end was not seen: the row ends where the
                                     * window or the evidence does */
/* thread_state only (a runnable row a wakeup opened): the wakeup ran in
 * interrupt context by its record's common_flags, so no task woke it: the
 * task current there was only interrupted, and the waker is -1 */
#define SPTD_SCHED_F_WAKE_HARDIRQ 0x20 /* hard irq (or NMI) */
#define SPTD_SCHED_F_WAKE_SOFTIRQ 0x40 /* softirq */

/* Where the builder writes.  Any callback may be NULL.  tids, not utids: the
 * caller maps them.  @flags: SPTD_SCHED_F_* bits. */
struct sptd_sched_sink {
	void *ctx;
	/* every task the events name, once, with its last known comm, before
	 * any row; @comm NULL when only common_pid named it (a waker); tid 0
	 * is "swapper" */
	int (*thread)(void *ctx, int tid, const char *comm);
	/* @end_state NULL when the end was not seen */
	int (*sched_slice)(void *ctx, int64_t ts, int64_t dur, int cpu, int tid,
	                   const char *end_state, int prio, int flags);
	/* @cpu -1 when not running; @waker_tid -1 when unknown */
	int (*thread_state)(void *ctx, int64_t ts, int64_t dur, int tid,
	                    const char *state, int cpu, int waker_tid, int flags);
	/* @ret -1 when the exit was not seen */
	int (*irq_slice)(void *ctx, int64_t ts, int64_t dur, int cpu, int irq,
	                 const char *name, int ret, int flags);
	int (*softirq_slice)(void *ctx, int64_t ts, int64_t dur, int cpu, int vec,
	                     const char *name, int flags);
	/* a stretch of a CPU that the record did not see, with why */
	int (*gap)(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason);
};

struct sptd_sched_builder;

/* Slices are clipped to [@window_start, @window_end] (ns): anything that
 * began before starts at window_start, anything still open ends at
 * window_end.  @ncpus: CPUs that had a ring (each gets a gap if its data
 * starts after window_start).  Event times may be any int64 (they come from
 * files); the window may not be longer than INT64_MAX ns, so that every
 * row's dur fits: -EINVAL for such a window, an end before the start, or
 * @ncpus outside 1..65536. */
int sptd_sched_builder_create(int64_t window_start, int64_t window_end, int ncpus,
                              struct sptd_sched_builder **out);
/* Change the window (same rules as create) before finish: for a caller that
 * learns it from the events themselves.  -EINVAL as create. */
int sptd_sched_builder_set_window(struct sptd_sched_builder *b, int64_t window_start,
                                  int64_t window_end);
/* CPU @cpu was not recorded (sysptd -C): no "no ftrace events" or "ftrace
 * stopped" gap for it, unless events from it come after all.  -EINVAL
 * (out of range), -ENOMEM. */
int sptd_sched_builder_exclude_cpu(struct sptd_sched_builder *b, int cpu);
/* When neither a LOST event nor sptd_sched_builder_set_recording() says
 * where a CPU's record begins (switches from outside ftrace, old files), a
 * CPU whose first event is later than window_start + @slack_ns gets a gap
 * row "ftrace ring overwritten before window start" (default 1 ms: a late
 * first event is the sign of it).  -EINVAL for a negative slack. */
int sptd_sched_builder_set_gap_slack(struct sptd_sched_builder *b, int64_t slack_ns);
/* When ftrace was recording, as the recorder knows it: it (re)started
 * with empty rings at @started (INT64_MIN: unknown), because of
 * @started_why ("the service started", ...); it stopped at @stopped
 * (INT64_MAX: not before the window end), because of @stopped_why.  A CPU
 * whose ring did not wrap is seen from @started; before it (after the
 * window start) every CPU gets a gap saying why, and so after @stopped.
 * The why strings are copied (NULL: none).  -EINVAL for @started >
 * @stopped. */
int sptd_sched_builder_set_recording(struct sptd_sched_builder *b, int64_t started,
                                     const char *started_why, int64_t stopped,
                                     const char *stopped_why);
/* Add one event, @ev->ts already in ns.  Events may arrive in any order; the
 * builder sorts by (ts, cpu, arrival). */
int sptd_sched_builder_add(struct sptd_sched_builder *b,
                           const struct sptd_sched_event *ev);
/* Produce all rows through @sink.  Returns the number of sched slices. */
int sptd_sched_builder_finish(struct sptd_sched_builder *b,
                              const struct sptd_sched_sink *sink);
void sptd_sched_builder_destroy(struct sptd_sched_builder *b);

#ifdef __cplusplus
}
#endif
#endif /* SPTD_SCHED_H */
