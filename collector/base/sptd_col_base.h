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
#include <sys/types.h>

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

/* ---- writing a new file safely (newfile.c) ------------------------------- */

/* A file being written beside its final name (see newfile.c): created
 * O_CREAT|O_EXCL|O_NOFOLLOW as "NAME.tmp.PID.XXXXXX" relative to a
 * descriptor of its directory, flock()ed while it is written, then fsynced
 * and renamed over NAME. */
struct sptd_col_newfile {
	int dirfd;              /* the directory, opened once; -1 none */
	int fd;                 /* the temporary file, open read-write; -1 none */
	char name[256];         /* final name inside the directory */
	char tmp[256];          /* temporary name inside it; "" once renamed */
	int committed;          /* 1 once renamed into place */
};

/* commit flags */
#define SPTD_COL_NEWFILE_NOREPLACE 0x1 /* fail with -EEXIST if NAME exists */

/* Start writing a new file: @path is a name inside the directory @dirfd,
 * or (@dirfd AT_FDCWD) a path whose directory is opened here.  The
 * temporary file gets exactly @mode (umask aside).  Write through nf->fd.
 * -EINVAL, -EISDIR (@path names no file), -ENAMETOOLONG, or the negative
 * errno of open/openat (-EACCES, -ENOENT ...).  On failure nothing is left
 * and sptd_col_newfile_fini() may still be called. */
int sptd_col_newfile_open(struct sptd_col_newfile *nf, int dirfd, const char *path,
                          mode_t mode);
/* fsync the file, rename it to its final name (replacing what is there, a
 * planted symlink included, or with SPTD_COL_NEWFILE_NOREPLACE refusing
 * with -EEXIST), fsync the directory.  -ENOSPC when the data did not fit. */
int sptd_col_newfile_commit(struct sptd_col_newfile *nf, int flags);
/* Close; remove the temporary file unless committed.  Accepts a zeroed or
 * failed @nf. */
void sptd_col_newfile_fini(struct sptd_col_newfile *nf);
/* Remove @name in @dirfd when it is a temporary file of this naming
 * ("NAME.tmp.PID.XXXXXX", owned by us) whose writer is gone: not locked,
 * and its pid dead or the file a minute old.  1 removed, 0 kept (not
 * ours, or alive), negative errno. */
int sptd_col_newfile_stale(int dirfd, const char *name);

/* Exit statuses (sysexits-like, documented in --help). */
#define SPTD_EXIT_OK        0
#define SPTD_EXIT_FAIL      1   /* runtime failure */
#define SPTD_EXIT_USAGE     2   /* bad command line */
#define SPTD_EXIT_NOPERM    4   /* needs root / capability */
#define SPTD_EXIT_UNSUPP    5   /* this machine lacks what was asked (e.g. --source pt) */
#define SPTD_EXIT_BADFILE   6   /* input file missing, corrupt or not an incident */
#define SPTD_EXIT_BUSY      7   /* another sysptd is running */

#endif /* SPTD_COL_BASE_H */
