/* query-local.h — internals shared by query/'s printers and reports.
 *
 * A statement's rows flow: query_print.c steps the statement and renders
 * each column into a struct sptd_query_value; the format's printer
 * (format_table.c, format_csv.c, format_json.c) writes it.  Reports
 * (report*.c) run their SQL through the same path.
 */
#ifndef SPTD_QUERY_LOCAL_H
#define SPTD_QUERY_LOCAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sptd_query.h"
#include "sptd_store.h"

/* ---- text helpers (query_text.c) ---------------------------------------- */

/* Format a message into @err (NULL or @errlen 0: dropped).  Returns @rc so
 * that callers can write `return sptd_query_err(err, len, -EINVAL, ...)`. */
int sptd_query_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same with a va_list; @err may also be one of the arguments. */
int sptd_query_verr(char *err, size_t errlen, int rc, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* @text from a file (a name, a schema's SQL) to a terminal: each control
 * character as '?' (newlines and tabs kept with @keep_lines), so that no
 * escape sequence or forged line of it reaches the screen. */
void sptd_query_put_shown(FILE *out, const char *text, int keep_lines);

/* Length in bytes of the well-formed UTF-8 sequence at @s (at most @n bytes
 * available), or 0 when the bytes there are not valid UTF-8 (overlongs,
 * surrogates and truncated sequences included). */
int sptd_query_utf8_seq(const char *s, size_t n);

/* A growable byte buffer; zero-initialise, release with _fini. */
struct sptd_query_buf {
	char *data;              /* NUL-terminated contents, NULL until first use */
	size_t len;              /* bytes used, excluding the NUL */
	size_t cap;              /* bytes allocated */
};

/* Make room for @extra more bytes plus the NUL.  -ENOMEM. */
int sptd_query_buf_reserve(struct sptd_query_buf *b, size_t extra);
/* Append @n bytes.  -ENOMEM. */
int sptd_query_buf_add(struct sptd_query_buf *b, const char *s, size_t n);
/* Empty without freeing. */
void sptd_query_buf_clear(struct sptd_query_buf *b);
/* Free; accepts a zeroed buffer. */
void sptd_query_buf_fini(struct sptd_query_buf *b);

/* ---- one column value of one row ---------------------------------------- */

/* A value as the printers see it: its SQLite type plus a text rendering
 * (integers in decimal, floats shortest round-trip, blobs lowercase hex,
 * text as stored).  Borrowed: valid until the next row. */
struct sptd_query_value {
	enum sptd_store_type type; /* SPTD_STORE_NULL .. SPTD_STORE_BLOB */
	const char *text;          /* rendering; NULL only for SQL NULL */
	size_t len;                /* bytes of @text */
};

/* ---- printers ------------------------------------------------------------ */

/* Printer behaviour flags. */
/* Said after SQLite's "integer overflow" when the user's SQL fails on a
 * file's values (query_print.c; reports, whose SQL is fixed, drop it). */
#define SPTD_QUERY_OVERFLOW_HINT \
	" (sum() stops beyond 64-bit integers; total() adds as floating point)"
#define SPTD_QUERY_PF_FOOTER 0x1 /* table: print "(N rows)" after the rows */
#define SPTD_QUERY_PF_HUMAN  0x2 /* columns named *_ns print as durations
                                  * ("20.000 ms") under the name without
                                  * "_ns" (reports in table format) */

struct sptd_query_table;

/* Table printer (format_table.c): buffers up to SPTD_QUERY_SIZE_ROWS rows to
 * size its columns, then streams.  @width > 0: lines are kept to @width
 * columns by cutting the widest text columns ("…"); 0: nothing is cut.
 * @names are copied. */
int sptd_query_table_create(FILE *out, unsigned flags, int width, int ncols,
                            const char *const *names,
                            struct sptd_query_table **tp);
/* Buffer or print one row of @ncols values. */
int sptd_query_table_row(struct sptd_query_table *t,
                         const struct sptd_query_value *vals);
/* Print whatever is buffered (the header at least) and the footer. */
int sptd_query_table_finish(struct sptd_query_table *t);
/* Free; accepts NULL.  Does not print. */
void sptd_query_table_destroy(struct sptd_query_table *t);

/* CSV printer (format_csv.c): one RFC 4180 record per call. */
int sptd_query_csv_header(FILE *out, int ncols, const char *const *names);
int sptd_query_csv_row(FILE *out, int ncols, const struct sptd_query_value *vals);
/* Write one field, quoted when it holds a comma, quote, CR or LF. */
int sptd_query_csv_field(FILE *out, const char *s, size_t n);

/* JSON printer (format_json.c).  An array of objects; @first tells the row
 * function whether a separating comma is due. */
int sptd_query_json_begin(FILE *out);
int sptd_query_json_row(FILE *out, int first, int ncols,
                        const char *const *names,
                        const struct sptd_query_value *vals);
int sptd_query_json_end(FILE *out, int64_t rows);
/* Write @s as a JSON string literal (quotes included); invalid UTF-8
 * becomes U+FFFD so the output is always valid JSON. */
int sptd_query_json_string(FILE *out, const char *s, size_t n);
/* The same, adding the bytes written to *@bytes (NULL: not counted). */
int sptd_query_json_string_counted(FILE *out, const char *s, size_t n, uint64_t *bytes);

/* "20.000 ms": @ns as a duration in the unit that keeps it readable (ns
 * below 1 us, then us, ms, s, three decimals) into @buf.  Returns @buf. */
char *sptd_query_duration_text(int64_t ns, char *buf, size_t len);

/* ---- results: statements printed under one header (query_print.c) -------- */

/* One printed result (the public struct sptd_query_result): the header
 * comes from the first statement added, every statement's rows follow it,
 * optionally behind a label column ("incident"). */
struct sptd_query_result {
	enum sptd_query_format fmt;   /* table, csv, json */
	FILE *out;                    /* where it goes */
	unsigned flags;               /* SPTD_QUERY_PF_* */
	int width;                    /* table: line width limit, 0 none */
	char *label_name;             /* label column's name, NULL none */
	int started;                  /* header known (a statement was added) */
	int ncols;                    /* printed columns, label included */
	int nstmt;                    /* columns of each statement */
	char **names;                 /* printed column names (ncols) */
	int *dur_col;                 /* per statement column: show as duration */
	int kv_human;                 /* key/value rows: "*_ns" keys' values too */
	struct sptd_query_table *table; /* table printer, once started */
	int64_t rows;                 /* rows printed or buffered so far */
	struct sptd_query_value *vals; /* one row being printed (ncols) */
	struct sptd_query_buf *bufs;  /* rendering buffers (ncols) */
	int finished;                 /* finish() ran */
};

/* Start @r (caller's memory).  -ENOMEM, -EINVAL (bad format). */
int sptd_query_result_init(struct sptd_query_result *r, enum sptd_query_format fmt,
                           FILE *out, unsigned flags, int width, const char *label_name);
/* Step @stmt to its end, adding every row (after @label when the result
 * has a label column).  Returns the rows added, or a negative errno with
 * the reason in @err; rows already added stay. */
int sptd_query_result_stmt(struct sptd_query_result *r, struct sptd_store *st,
                           struct sptd_store_stmt *stmt, const char *label,
                           char *err, size_t errlen);
/* Print what is buffered and close the result (footer, "]").  A result
 * that never started prints nothing.  Returns the rows printed. */
int sptd_query_result_close(struct sptd_query_result *r, char *err, size_t errlen);
/* Free what @r holds (prints nothing); accepts a zeroed one. */
void sptd_query_result_fini(struct sptd_query_result *r);

/* Step @stmt to the end, printing every row in @fmt to @out as a result of
 * its own.  Returns the number of rows, or a negative errno with @st's
 * message in @err. */
int sptd_query_print_stmt(struct sptd_store *st, struct sptd_store_stmt *stmt,
                          enum sptd_query_format fmt, FILE *out,
                          unsigned flags, int width, char *err, size_t errlen);

/* Check that @sql is one statement: -EINVAL (message in @err) when it is
 * empty or has another statement after a ';'. */
int sptd_query_check_single(const char *sql, char *err, size_t errlen);

/* Prepare @sql on @st, mapping store errors to query errors and messages
 * ("query is read-only: ...", SQLite's syntax message). */
int sptd_query_prepare(struct sptd_store *st, const char *sql,
                       struct sptd_store_stmt **out, char *err, size_t errlen);

/* ---- sessions (query_session.c, query_shell.c) ------------------------- */

/* One incident of a session. */
struct sptd_query_incident {
	struct sptd_store *st;        /* borrowed: the caller closes it */
	char *label;                  /* its name in results and messages */
};

struct sptd_query_session {
	struct sptd_query_print_opts opts; /* format and width (.mode changes it) */
	FILE *out;                    /* results */
	FILE *msg;                    /* errors, banner, help */
	char *prefix;                 /* before every error ("sysptd query: ") */
	struct sptd_query_incident *inc; /* the incidents, in the order added */
	size_t n, cap;                /* used and allocated entries of @inc */
	char where[64];               /* the statement running, for its errors
	                               * ("statement 2 (line 5)"), "" none */
};

/* Report @err (or strerror(-@rc) when empty) on s->msg, after s->prefix,
 * "@label: " when @label is not NULL and "WHERE: " when s->where names the
 * statement running. */
void sptd_query_session_error(struct sptd_query_session *s, const char *label,
                              const char *err, int rc);
/* Run ONE statement @sql on every incident as one result.  Returns 0 or
 * the first failure (reported). */
int sptd_query_session_statement(struct sptd_query_session *s, const char *sql);

/* ---- reports (report.c runs them, report_sql.c defines them) ------------- */

/* One titled part of a report. */
struct sptd_query_section {
	const char *id;          /* key in json output, e.g. "top_tasks" */
	const char *title;       /* one-line title printed above the rows */
	const char *sql;         /* the rows; NULL: made by @build */
	/* writes the SQL when it depends on the build or the incident */
	int (*build)(struct sptd_store *st, struct sptd_query_buf *sql);
	const char *when;        /* NULL, or SQL giving one value: 0 skip the
	                          * section, text print it as a note instead of
	                          * rows (data absent), anything else run it */
};

/* ---- string -> index map (perfetto_intern.c) ----------------------------- */

/* string -> index in insertion order (the exporter's comm tables, the
 * reports' function keys). */
struct sptd_query_smap {
	char **strs;        /* strings by index, owned */
	uint32_t *slots;    /* index + 1, 0: empty */
	size_t cap;         /* slots, a power of two */
	size_t count;       /* strings stored */
	size_t strs_cap;    /* room in @strs */
};

void sptd_query_smap_fini(struct sptd_query_smap *m);
void sptd_query_smap_clear(struct sptd_query_smap *m);
/* Index of @s (NULL: ""), inserting it if new.  Returns >= 0 or -ENOMEM. */
int sptd_query_smap_intern(struct sptd_query_smap *m, const char *s);

/* The sample reports' stack totals (report_stacks.c): appends the CTE
 * "tot(fkey, total) AS (VALUES ...), " for the incident @st to @sql.
 * 0, -ENOMEM, or a store error. */
int sptd_query_stack_totals(struct sptd_store *st, struct sptd_query_buf *sql);

/* A named report: sections printed in order. */
struct sptd_query_report_def {
	const char *name;        /* as given to --report */
	const char *describe;    /* one line for --report list */
	const struct sptd_query_section *sections; /* ends with an id of NULL */
	const struct sptd_query_section *sections_clipped; /* with
	                          * SPTD_QUERY_REPORT_CLIPPED (wakeup: clipped rows
	                          * ranked too); NULL: @sections */
	const struct sptd_query_section *sections_all; /* with
	                          * SPTD_QUERY_REPORT_ALL_TASKS (threads: those
	                          * that did nothing in the window too); NULL:
	                          * @sections */
};

/* Every report, "summary" first, ending with a name of NULL. */
extern const struct sptd_query_report_def sptd_query_reports[];
/* Their names, NULL-terminated, same order. */
extern const char *const sptd_query_report_name_list[];

/* a - b of values read from an incident (any int64), clipped to
 * INT64_MIN..INT64_MAX instead of overflowing. */
static inline int64_t sptd_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

#endif /* SPTD_QUERY_LOCAL_H */
