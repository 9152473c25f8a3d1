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

/* Widest a table column grows (code points) before text is cut with "…". */
#define SPTD_QUERY_MAX_WIDTH 48
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
/* sptd_query_report() with SPTD_QUERY_REPORT_* @flags (0: as it). */
int sptd_query_report_flags(struct sptd_store *st, const char *name, int flags,
                            enum sptd_query_format fmt, FILE *out, char *err, size_t errlen);

/* NULL-terminated names of the reports, "summary" first.  Static storage. */
const char *const *sptd_query_report_names(void);

/* One-line description of report @name, NULL if there is no such report.
 * Static storage. */
const char *sptd_query_report_describe(const char *name);

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
};

/* What an export wrote; every count is of items written to @out. */
struct sptd_query_export_stats {
	uint64_t bytes;          /* bytes written to @out */
	uint64_t packets;        /* TracePackets (proto) or trace events (json) */
	uint64_t sched_switches; /* sched_switch records (incl. synthesized idle) */
	uint64_t sched_wakings;  /* sched_waking records */
	uint64_t irq_events;     /* irq/softirq entry+exit records (2 per row) */
	uint64_t slices;         /* slice rows written as begin/end pairs */
	uint64_t samples;        /* sample rows written as instant events */
	uint64_t gaps;           /* gap rows */
	uint64_t triggers;       /* trigger rows */
	uint64_t threads;        /* thread rows (ProcessTree / metadata) */
	uint64_t processes;      /* process rows */
	uint64_t clamped;        /* slice ends moved to keep nesting valid (bad input) */
	uint64_t skipped;        /* rows with nothing to attach them to (see docs) */
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

/* "proto" (also "pftrace", "protobuf", "perfetto") or "json" -> *fmt.
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

#ifdef __cplusplus
}
#endif
#endif /* SPTD_QUERY_H */
