/* sptd_query.h — SQL over an incident file: a read-only statement runner
 * with table/csv/json printers, canned reports, and the Perfetto exporter
 * (declared at the end of this header).
 *
 * query/ never includes sqlite3.h: it reads through the statement API of
 * sptd_store.h, so a store opened read-only (sptd_store_open(path, 0, ...))
 * is all it needs.  Library code never prints except to the FILE the caller
 * passes in; failures come back as a negative errno plus a message in the
 * caller's @err buffer (always NUL-terminated when @errlen > 0).
 *
 * Errors: >= 0 success, negative errno:
 *   -EINVAL  NULL argument, unknown format or report, empty SQL, more than
 *            one statement, or SQL that SQLite cannot compile (its message
 *            is in @err)
 *   -EROFS   the statement would write ("query is read-only")
 *   -ENOMEM  out of memory
 *   -EBADMSG the incident is corrupt (found while stepping)
 *   -EIO     any other SQLite failure, or writing to @out failed
 */
#ifndef SPTD_QUERY_H
#define SPTD_QUERY_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sptd_store;

/* How rows are printed. */
enum sptd_query_format {
	SPTD_QUERY_TABLE = 0, /* aligned columns, header, separator; for people */
	SPTD_QUERY_CSV,       /* RFC 4180 quoting, header row, '\n' line ends */
	SPTD_QUERY_JSON,      /* array of objects, one per row */
};

/* Rows a table buffers to size its columns; later rows reuse those widths. */
#define SPTD_QUERY_SIZE_ROWS 1000

/* "table", "csv" or "json" -> *fmt.  -EINVAL for anything else. */
int sptd_query_format_parse(const char *name, enum sptd_query_format *fmt);

/* Run ONE read-only SQL statement on @st and print its rows to @out in
 * @fmt.  Returns the number of rows printed, or a negative errno with a
 * message naming the problem in @err (-EROFS: "query is read-only: ...";
 * -EINVAL: SQLite's message for bad SQL).  Rows already printed when a
 * step fails stay printed. */
int sptd_query_run(struct sptd_store *st, const char *sql,
                   enum sptd_query_format fmt, FILE *out,
                   char *err, size_t errlen);

/* Print canned report @name (NULL: "summary") of @st to @out.  Each report
 * is a few sections, each with a one-line title and its rows printed like
 * sptd_query_run() (json: one object keyed by section).  A section whose
 * data the incident lacks prints a note ("no samples in this incident
 * (source=pt)") instead of failing.  Returns the number of sections
 * printed, -EINVAL for an unknown name (listed in @err), or any error of
 * sptd_query_run(). */
int sptd_query_report(struct sptd_store *st, const char *name,
                      enum sptd_query_format fmt, FILE *out,
                      char *err, size_t errlen);

/* Options of sptd_query_report_flags(). */
#define SPTD_QUERY_REPORT_CLIPPED 0x1 /* wakeup, summary: rank wakeup latencies
                                        * clipped at the window start too (the
                                        * task was runnable before it: the true
                                        * latency is longer), marked "*" */
#define SPTD_QUERY_REPORT_ALL_TASKS 0x2 /* threads: list every task the incident
                                          * names, also those that did nothing in
                                          * the window (by default only tasks
                                          * that ran, woke or were woken,
                                          * changed state, or were sampled) */
/* sptd_query_report() with SPTD_QUERY_REPORT_* @flags (0: as it). */
int sptd_query_report_flags(struct sptd_store *st, const char *name, int flags,
                            enum sptd_query_format fmt, FILE *out, char *err, size_t errlen);

/* NULL-terminated names of the reports, "summary" first.  Static storage. */
const char *const *sptd_query_report_names(void);

/* One-line description of report @name, NULL if there is no such report.
 * Static storage. */
const char *sptd_query_report_describe(const char *name);

/* ---- print options, results over several incidents ------------------------ */

/* How rows are printed. */
struct sptd_query_print_opts {
	enum sptd_query_format format; /* table, csv or json */
	int width;                     /* table: the widest a line may be (a
	                                * terminal's columns): the widest text
	                                * columns are cut with "…" until a row
	                                * fits, numbers never are; 0: nothing is
	                                * ever cut (output to a file or pipe) */
	int report_flags;              /* reports: SPTD_QUERY_REPORT_* bits */
};

/* One printed result: a header, then the rows of one statement run on each
 * of several incidents in turn.  Opaque. */
struct sptd_query_result;

/* Start a result printed to @out.  @label_column non-NULL adds a first
 * column of that name ("incident") holding each add's @label; NULL: none.
 * -EINVAL (NULL @opts/@out/@res, unknown format), -ENOMEM. */
int sptd_query_result_create(const struct sptd_query_print_opts *opts, FILE *out,
                             const char *label_column, struct sptd_query_result **res);
/* Run ONE read-only statement @sql on @st and add its rows (behind @label).
 * The first add fixes the columns; a statement giving another number of
 * columns later is -EINVAL.  Returns the rows added, or any error of
 * sptd_query_run(); rows added before a failure stay. */
int sptd_query_result_add(struct sptd_query_result *res, struct sptd_store *st,
                          const char *label, const char *sql, char *err, size_t errlen);
/* Print what is buffered and close the result (table: "(N rows)"; json:
 * "]").  A result nothing was added to prints nothing.  Returns the rows
 * printed, -EIO when writing failed. */
int sptd_query_result_finish(struct sptd_query_result *res, char *err, size_t errlen);
/* Free; accepts NULL.  Prints nothing (finish first). */
void sptd_query_result_destroy(struct sptd_query_result *res);

/* sptd_query_report() with print options and a heading: @incident non-NULL
 * names the incident above the report (table "=== INCIDENT ===", csv
 * "# incident: INCIDENT", json an "incident" key), for one report each when
 * several incidents are read.  In table format durations (columns named
 * *_ns) print as "20.000 ms" under the name without "_ns"; csv and json
 * keep integer nanoseconds. */
int sptd_query_report_opts(struct sptd_store *st, const char *name,
                           const struct sptd_query_print_opts *opts,
                           const char *incident, FILE *out,
                           char *err, size_t errlen);

/* ---- sessions: SQL text, reports and a shell over one or more incidents -- */

/* A set of open incidents that statements and reports run on, printing to
 * one stream with fixed print options.  With several incidents a statement
 * prints ONE result with a first column "incident" (each incident's label),
 * and a report prints once per incident, headed by its label.  Messages
 * (errors, the shell's banner and help) go to the caller's @msg stream,
 * each error prefixed with @prefix ("sysptd query: ").  Opaque. */
struct sptd_query_session;

/* -EINVAL (NULL argument, unknown format), -ENOMEM. */
int sptd_query_session_create(const struct sptd_query_print_opts *opts, FILE *out,
                              FILE *msg, const char *prefix,
                              struct sptd_query_session **s);
/* Add incident @st (borrowed: it must outlive the session) under @label
 * (copied; its path as the user named it).  -EINVAL, -ENOMEM. */
int sptd_query_session_add(struct sptd_query_session *s, struct sptd_store *st,
                           const char *label);
/* Run every statement of @text in order (';' between them), each as one
 * result over every incident.  A statement that fails on one incident (a
 * corrupt file) is reported and the others still run; a statement that
 * cannot run anywhere (bad SQL, a write) stops the text.  Returns 0, or the
 * first failure's negative errno (-EINVAL bad SQL, -EROFS a write,
 * -EBADMSG a corrupt incident, -EIO, -ENOMEM) after reporting it. */
int sptd_query_session_sql(struct sptd_query_session *s, const char *text);
/* Print report @name (NULL: summary) of every incident.  Returns 0 or the
 * first failure's negative errno, as sptd_query_session_sql(). */
int sptd_query_session_report(struct sptd_query_session *s, const char *name);
/* The interactive shell (query_shell.c), as sqlite3 and trace_processor
 * have one: reads @in line by line; SQL statements may span lines and end
 * with ';'; dot commands (.help, .tables, .schema [TABLE], .report [NAME],
 * .mode table|csv|json, .incidents, .read FILE, .quit) on a line of their
 * own.  @interactive: print a banner and prompts to @msg, and start over on
 * a line interrupted by a signal (the caller's SIGINT handler, installed
 * without SA_RESTART) instead of stopping.  Errors are reported and the
 * shell goes on.  Returns 0 at end of input or .quit, -EIO when @in fails. */
int sptd_query_session_shell(struct sptd_query_session *s, FILE *in, int interactive);
/* Free; accepts NULL.  Closes no store. */
void sptd_query_session_destroy(struct sptd_query_session *s);

/* ---- script: every event in time order, one per line (query_script*.c) -- */

/* Event kinds for sptd_query_script_opts.kinds. */
#define SPTD_QUERY_EV_SCHED   0x01  /* sched_switch */
#define SPTD_QUERY_EV_WAKEUP  0x02  /* sched_waking (thread_state with a waker) */
#define SPTD_QUERY_EV_IRQ     0x04  /* irq_handler_entry/exit */
#define SPTD_QUERY_EV_SOFTIRQ 0x08  /* softirq_entry/exit */
#define SPTD_QUERY_EV_SAMPLE  0x10  /* samples with their stacks */
#define SPTD_QUERY_EV_CALL    0x20  /* call/return of PT call slices */
#define SPTD_QUERY_EV_GAP     0x40  /* stretches with data missing */
#define SPTD_QUERY_EV_TRIGGER 0x80  /* what fired */
#define SPTD_QUERY_EV_FTRACE  0x100 /* events of an ftrace_event table, if any */
#define SPTD_QUERY_EV_ALL     0x1ff

/* What sptd_query_script() prints. */
struct sptd_query_script_opts {
	const int *cpus;         /* only events on these CPUs (NULL: all) */
	size_t ncpus;            /* entries of @cpus */
	const int *tids;         /* only events of these threads, either side of
	                          * a switch or wakeup (NULL: all) */
	size_t ntids;            /* entries of @tids */
	int64_t start_ns;        /* only events at or after (INT64_MIN: open) */
	int64_t end_ns;          /* ... and at or before (INT64_MAX: open) */
	unsigned kinds;          /* SPTD_QUERY_EV_* to print (0: all) */
	int reltime;             /* times relative to the window start */
	int no_stack;            /* samples without their call stacks */
};

/* Print every event of @st in time order to @out, one line each in the
 * manner of `perf script` and `trace-cmd report`:
 *     COMM  TID [CPU] SECONDS: EVENT: DETAILS
 * (a sample's stack follows on indented lines, innermost frame first, as
 * perf script prints it).  Events come from the incident's tables, merged
 * by time: sched switches and wakeups, irq and softirq entry/exit, samples,
 * call/return of call slices, gaps, triggers.  Memory stays bounded
 * whatever the incident's size: each table is read as one sorted stream.
 * Returns the number of events printed (capped at INT_MAX), or a negative
 * errno with the reason in @err: -EINVAL (NULL argument, start after end),
 * -EBADMSG (a table or column an incident has is missing), -EIO (writing
 * to @out failed, or SQLite), -ENOMEM. */
int sptd_query_script(struct sptd_store *st, const struct sptd_query_script_opts *opts,
                      FILE *out, char *err, size_t errlen);

/* ==== stacks: every callsite chain of an incident in memory (stacks.c) ===
 * For everything that aggregates sampled stacks (Perfetto's profile
 * packets, pprof, flame graphs): each callsite row loaded once with its
 * symbol and dso, so walking a stack costs no SQL.  Memory follows the
 * callsite rows and the symbols and dsos they use, never the samples. */
#include <stdint.h>

struct sptd_query_stacks;                 /* opaque */

#define SPTD_QUERY_STACK_MAX 1024         /* frames a walk follows (as report, script) */
#define SPTD_QUERY_NAME_MAX 4096          /* bytes a name keeps (longer ones are cut) */
#define SPTD_QUERY_NONE UINT32_MAX        /* "no index" */

/* One frame of a stack; pointers are borrowed until sptd_query_stacks_destroy. */
struct sptd_query_frame {
	int64_t callsite;     /* callsite.id */
	uint64_t addr;        /* callsite.addr: the pc */
	const char *symbol;   /* function name; NULL when no symbol covers addr
	                       * (a "[unknown]" symbol row included) */
	const char *dso;      /* dso path, NULL unknown */
	const char *build_id; /* hex, NULL none */
	uint32_t node;        /* callsite index, 0..sptd_query_stacks_count() - 1 */
	uint32_t sym;         /* distinct symbol index 0..nsyms - 1, SPTD_QUERY_NONE none */
	uint32_t dso_index;   /* distinct dso index 0..ndsos - 1, SPTD_QUERY_NONE none */
};

/* Load the callsite, symbol and dso rows of @st.  0, or -EINVAL (NULL),
 * -ENOMEM, -EBADMSG (a table an incident has is missing or damaged) with
 * the reason in @err. */
int sptd_query_stacks_load(struct sptd_store *st, struct sptd_query_stacks **out,
                           char *err, size_t errlen);
/* Accepts NULL. */
void sptd_query_stacks_destroy(struct sptd_query_stacks *s);
/* Callsite rows, distinct symbols and dsos used by them. */
uint32_t sptd_query_stacks_count(const struct sptd_query_stacks *s);
uint32_t sptd_query_stacks_nsyms(const struct sptd_query_stacks *s);
uint32_t sptd_query_stacks_ndsos(const struct sptd_query_stacks *s);
/* The node index of callsite @callsite, SPTD_QUERY_NONE if there is none. */
uint32_t sptd_query_stacks_find(const struct sptd_query_stacks *s, int64_t callsite);
/* The frames of the stack whose leaf is node @leaf, leaf first, at most
 * @max of them into @frames.  Returns their count (>= 1), or -EINVAL (NULL,
 * @leaf out of range, @max 0).  *@cut = 1 when the walk stopped short of a
 * root: @max frames, a parent that is no callsite, or a parent not
 * shallower than its child (a damaged file; depth falls at every step, so
 * a cycle of parent links ends there). */
int sptd_query_stacks_walk(const struct sptd_query_stacks *s, uint32_t leaf,
                           struct sptd_query_frame *frames, size_t max, int *cut);

/* ==== export (Perfetto writer: declarations below belong to query/perfetto*.c) */

/* The export writes the whole incident to @out as one trace:
 *   SPTD_QUERY_EXPORT_PROTO  native Perfetto protobuf (a Trace message:
 *       ftrace compact_sched + irq/softirq per CPU, SystemInfo, ProcessTree,
 *       TrackEvent slices per thread, gaps, triggers, samples); open it in
 *       ui.perfetto.dev.  Memory stays bounded: rows are streamed and each
 *       packet is flushed to @out as soon as it is complete.
 *   SPTD_QUERY_EXPORT_JSON   Chrome trace-event JSON ("traceEvents") for
 *       tools that read only that (chrome://tracing, speedscope).
 * Extra errors: -EINVAL also for a format out of range; -EBADMSG when the
 * file lacks a table or column an incident has; -E2BIG for one packet over
 * 256 MiB (cannot happen with the chunk sizes used). */
#include <stdint.h>

enum sptd_query_export_format {
	SPTD_QUERY_EXPORT_PROTO = 0, /* Perfetto protobuf (.pftrace), the default */
	SPTD_QUERY_EXPORT_JSON,      /* Chrome trace-event JSON */
	SPTD_QUERY_EXPORT_PPROF,     /* the samples as gzipped pprof profile.proto */
};

/* What an export wrote; every count is of items written to @out. */
struct sptd_query_export_stats {
	uint64_t bytes;          /* bytes written to @out */
	uint64_t packets;        /* TracePackets (proto) or trace events (json) */
	uint64_t sched_switches; /* sched_switch records (incl. synthesized idle) */
	uint64_t sched_wakings;  /* sched_waking records */
	uint64_t irq_events;     /* irq/softirq entry+exit records (2 per row) */
	uint64_t ftrace_events;  /* ftrace_event rows (sysptd -e) as generic ftrace events */
	uint64_t slices;         /* slice rows written as begin/end pairs */
	uint64_t samples;        /* sample rows written as instant events */
	uint64_t profile_samples;/* sample rows written as PerfSample packets (pprof:
	                          * counted into its Samples) */
	uint64_t watch_hits;     /* watch_hit rows written as instant events */
	uint64_t offcpu;         /* blocked thread_state rows with a stack (--offcpu) */
	uint64_t power_events;   /* cpu_frequency and cpu_idle ftrace events (PT power) */
	uint64_t ptwrites;       /* ptwrite rows written as instant events */
	uint64_t gaps;           /* gap rows */
	uint64_t triggers;       /* trigger rows */
	uint64_t threads;        /* thread rows (ProcessTree / metadata) */
	uint64_t processes;      /* process rows */
	uint64_t clamped;        /* slice ends moved to keep nesting valid (bad input) */
	uint64_t skipped;        /* rows with nothing to attach them to (see docs) */
	uint64_t stacks_cut;     /* stacks that end in "[stack cut]": a walk that
	                          * stopped short of a root, or the export's frame
	                          * budget spent (SPTD_PF_STACK_BUDGET) */
};

/* Called between phases and every few thousand rows: @phase names the
 * table being written, @done/@total count its rows (@total 0: unknown). */
typedef void (*sptd_query_export_progress_fn)(void *ctx, const char *phase,
                                              uint64_t done, uint64_t total);

/* Options of sptd_query_export_opts(); zero-initialised means protobuf, no
 * progress reports. */
struct sptd_query_export_options {
	enum sptd_query_export_format format;    /* what to write */
	sptd_query_export_progress_fn progress;  /* NULL: none */
	void *progress_ctx;                      /* handed to @progress */
};

/* "proto" (also "pftrace", "protobuf", "perfetto"), "json" or "pprof" -> *fmt.
 * -EINVAL for anything else. */
int sptd_query_export_format_parse(const char *name,
                                   enum sptd_query_export_format *fmt);

/* Write incident @st to @out in @fmt.  @stats may be NULL; when not, it is
 * zeroed and filled even on failure (what was written so far).  Returns 0
 * or a negative errno with the reason in @err. */
int sptd_query_export(struct sptd_store *st, FILE *out,
                      enum sptd_query_export_format fmt,
                      struct sptd_query_export_stats *stats,
                      char *err, size_t errlen);

/* sptd_query_export() with options (progress reporting).  @opts NULL:
 * defaults. */
int sptd_query_export_opts(struct sptd_store *st, FILE *out,
                           const struct sptd_query_export_options *opts,
                           struct sptd_query_export_stats *stats,
                           char *err, size_t errlen);

/* ==== flame graphs and diffs (flame*.c, diff.c) ==================================== */

/* What a flame graph weighs. */
enum sptd_query_flame_weight {
	SPTD_QUERY_FLAME_AUTO = 0, /* samples where the incident has them, else PT
	                            * call time where it has slices */
	SPTD_QUERY_FLAME_SAMPLES,  /* one per sample (the sampling source) */
	SPTD_QUERY_FLAME_OFFCPU,   /* ns blocked, per stack a thread blocked with
	                            * (--offcpu recordings) */
	SPTD_QUERY_FLAME_PT,       /* ns of PT call slices, each frame's own time */
};

/* What is written. */
enum sptd_query_flame_format {
	SPTD_QUERY_FLAME_SVG = 0,  /* an interactive SVG (zoom, search, tooltips) */
	SPTD_QUERY_FLAME_FOLDED,   /* "a;b;c COUNT" lines (flamegraph.pl, inferno,
	                            * speedscope, Pyroscope) */
};

/* Options of sptd_query_flame(); zero-initialised: every sample, SVG. */
struct sptd_query_flame_opts {
	enum sptd_query_flame_weight weight;
	enum sptd_query_flame_format format;
	const int *cpus;         /* only stacks on these CPUs (NULL: all) */
	size_t ncpus;
	const int *tids;         /* only these threads' stacks (NULL: all) */
	size_t ntids;
	int has_time;            /* 1: only what lies in [start_ns, end_ns] */
	int64_t start_ns;        /* from here (the incident's clock) */
	int64_t end_ns;          /* ... to here */
	const char *title;       /* the SVG's title (NULL: "Flame Graph") */
};

/* What sptd_query_flame() found. */
struct sptd_query_flame_stats {
	enum sptd_query_flame_weight weight; /* what it weighed (AUTO resolved) */
	uint64_t total[2];       /* samples or ns of side A, B */
	uint64_t nodes;          /* distinct frames-in-context (tree nodes) */
	uint64_t cut;            /* stacks that stopped short of a root */
	int64_t drawn;           /* SVG frames drawn (narrow ones are not) */
};

/* A flame graph of incidents @a[0..@na) (all added up) to @out; with @nb
 * > 0 a differential one: widths from @b, each frame red where it grew
 * from A to B and blue where it shrank (A scaled to B's total).  Returns 0
 * or a negative errno with the reason in @err: -EINVAL (NULL, no incident,
 * bad options), -ENODATA (the incidents hold nothing of that weight: the
 * message says what they do hold), -EBADMSG (a damaged incident), -E2BIG
 * (more distinct stacks than a graph is allowed: a forged file), -EIO,
 * -ENOMEM.  @stats may be NULL. */
int sptd_query_flame(struct sptd_store *const *a, size_t na, struct sptd_store *const *b,
                     size_t nb, const struct sptd_query_flame_opts *o, FILE *out,
                     struct sptd_query_flame_stats *stats, char *err, size_t errlen);

/* What changed from incidents @a[0..@na) to @b[0..@nb) (each side's
 * incidents added up; several per side are averaged per incident), ranked
 * by the size of the change: per function (share of samples, or of PT
 * time, self and total), per thread name (CPU time), per IRQ and softirq
 * (time), per thread name (wakeup-to-run latency).  Each row gives both
 * values and the signed change.  Printed in @opts' format.  Returns 0 or a
 * negative errno as sptd_query_flame(). */
int sptd_query_diff(struct sptd_store *const *a, size_t na, struct sptd_store *const *b,
                    size_t nb, const struct sptd_query_print_opts *opts, int limit,
                    FILE *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* SPTD_QUERY_H */
