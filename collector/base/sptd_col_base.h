/* sptd_col_base.h — what every collector/ library shares: the log hook, the
 * durations and sizes users type, and the exit statuses.
 *
 * Errors: >= 0 success, negative errno (-EINVAL caller's mistake, -ENOMEM,
 * -EACCES/-EPERM not root, -ENOENT missing thing, -EIO I/O).  Library code
 * never prints: messages go through sptd_col_log(). */
#ifndef SPTD_COL_BASE_H
#define SPTD_COL_BASE_H

#include <stddef.h>
#include <stdint.h>

struct sptd_store;

#ifndef SPTD_LOG_FN_DEFINED
#define SPTD_LOG_FN_DEFINED
/* Log hook shared by all sysptd libraries: @level is a syslog level. */
typedef void (*sptd_log_fn)(void *ctx, int level, const char *msg);
#endif

/* ---- logging (log.c) ----------------------------------------------------- */

/* Route collector/ messages (and sched/, decode/ ones: the program sets the
 * same hook everywhere) to @fn.  Default: drop. */
void sptd_col_set_log(sptd_log_fn fn, void *ctx);
void sptd_col_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- durations and sizes (units.c) -------------------------------------- */

/* "10ms", "250us", "1.5s", "100ns", "42" (ns).  -EINVAL on anything else,
 * negative or overflowing. */
int sptd_col_parse_duration(const char *text, int64_t *ns);
/* "64M", "512K", "1G", "4096" (bytes). */
int sptd_col_parse_size(const char *text, uint64_t *bytes);
/* A whole decimal (or 0x hex) integer in [@min, @max]: "42", "0x10".
 * -EINVAL for anything else. */
int sptd_col_parse_int(const char *text, int64_t min, int64_t max, int64_t *out);

/* Exit statuses (sysexits-like, documented in --help). */
#define SPTD_EXIT_OK        0
#define SPTD_EXIT_FAIL      1   /* runtime failure */
#define SPTD_EXIT_USAGE     2   /* bad command line */
#define SPTD_EXIT_NOPERM    4   /* needs root / capability */
#define SPTD_EXIT_UNSUPP    5   /* this machine lacks what was asked (e.g. --source pt) */
#define SPTD_EXIT_BADFILE   6   /* input file missing, corrupt or not an incident */
#define SPTD_EXIT_BUSY      7   /* another sysptd is running */

#endif /* SPTD_COL_BASE_H */
