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
#include <time.h>

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

/* CLOCK_MONOTONIC now, in ns: the incident clock of the service, the clock
 * of every trigger hit and fire, and what timings on a terminal use. */
static inline int64_t sptd_col_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- durations and sizes (units.c) -------------------------------------- */

/* Room in *@arr (*@cap elements of @elem bytes, @used of them taken) for
 * one more: doubled (from 32) when full.  0, -EINVAL, or -ENOMEM (*@arr
 * and *@cap unchanged). */
int sptd_col_grow(void **arr, size_t *cap, size_t used, size_t elem);

/* "10ms", "250us", "1.5s", "100ns", "42" (ns).  -EINVAL on anything else,
 * negative or overflowing. */
int sptd_col_parse_duration(const char *text, int64_t *ns);
/* What a bad duration is told: every unit, with examples. */
#define SPTD_DURATION_HELP "give a number and its unit: ns, us, ms or s (e.g. 10ms, 500us, 2s)"
/* "64M", "512K", "1G", "4096" (bytes). */
int sptd_col_parse_size(const char *text, uint64_t *bytes);
/* --call-graph as perf spells it: "fp" (*@stack_user 0) or "dwarf[,SIZE]"
 * (*@stack_user SIZE bytes of user stack per sample, a multiple of 8 from
 * 8 to SPTD_CALL_GRAPH_STACK_MAX; SPTD_CALL_GRAPH_STACK_DEFAULT without
 * SIZE).  -EINVAL on anything else. */
int sptd_col_parse_call_graph(const char *text, uint32_t *stack_user);
/* perf's default bytes of user stack per sample, and the most the kernel
 * copies (a record stays under 64 KiB). */
#define SPTD_CALL_GRAPH_STACK_DEFAULT 8192u
#define SPTD_CALL_GRAPH_STACK_MAX 65528u
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
/* Remove the temporary files of @path ("PATH.tmp.PID.XXXXXX") that a
 * killed writer left, as sptd_col_newfile_stale judges them (a live
 * writer's are kept); the directory opened as sptd_col_newfile_dir_open
 * does with @flags.  The number removed, or negative errno. */
int sptd_col_newfile_sweep(const char *path, int flags);
/* Open directory @dir to create a file in (O_RDONLY | O_DIRECTORY): as
 * root through sudo, by a child that has become the user who ran sudo,
 * who must be able to write it (else -EACCES, said on stderr): a link of
 * theirs to /root took root's rights there; as root otherwise (and for
 * SPTD_COL_NEWFILE_DIR_UPDATE, replacing a file root has opened), every
 * symbolic link on the way must be root's (-EPERM, said on stderr).  Not
 * root: open() as it is.  The descriptor, or negative errno. */
/* As root, every symbolic link on the way to @path, its last component
 * included, is root's (a file root will replace, reached through a user's
 * link, would be root's to lose): 0, -EPERM (said on stderr), -errno.  Not
 * root: 0 when @path exists. */
int sptd_col_newfile_links_ok(const char *path);
#define SPTD_COL_NEWFILE_DIR_UPDATE 0x1
int sptd_col_newfile_dir_open(const char *dir, int flags);

/* ---- least privilege (privs.c; the model: docs/SECURITY.md) -------------- */

/* Whom a command that parses files becomes when run as root. */
struct sptd_col_user {
	uid_t uid;              /* never 0 */
	gid_t gid;              /* primary group */
	int from_sudo;          /* 1: $SUDO_UID/$SUDO_GID (gets that user's groups) */
	char name[64];          /* login name, "" unknown; "nobody" otherwise */
};

/* The user who ran `sudo sysptd ...` ($SUDO_UID, $SUDO_GID; not 0), else
 * nobody (65534 when the passwd database has none). */
int sptd_col_privs_target(struct sptd_col_user *u);
/* Become @u for good: groups, gid, uid (real, effective, saved), checked
 * to be irreversible, and no_new_privs.  0 when not root (nothing to
 * drop), 1 dropped, negative errno. */
int sptd_col_privs_drop(const struct sptd_col_user *u);
/* sptd_col_privs_drop(sptd_col_privs_target()) for a command that has
 * opened what it needs root for; on failure @err says so (the command
 * must then stop: never parse as root by accident). */
int sptd_col_privs_drop_root(char *err, size_t errlen);
/* Run @fn in a child process when root (in this process otherwise); @fn
 * opens what it needs, drops root (sptd_col_privs_drop_root) and parses,
 * and its return value is its exit status.  The parent, still root, waits
 * so that it can rename or remove what the child wrote; SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT sent to it are passed on to the child.  Returns the
 * child's exit status (128 + signal when it was killed), or a negative
 * errno when fork failed. */
int sptd_col_privs_child(int (*fn)(void *ctx), void *ctx);
/* A file a privs child writes through a temporary name (a new or updated
 * incident) is renamed by the parent, which is still root: the child
 * announces the temporary file as it creates it (before it drops root;
 * announcements after that are ignored) and hands it over when it is
 * complete.  When the child succeeds the parent renames what was handed
 * over and removes every other announced file.  @what: */
#define SPTD_COL_HANDOFF_CREATED 1 /* @tmp exists now, to become @path */
#define SPTD_COL_HANDOFF_READY   2 /* @tmp is complete and synced */
/* 1 handed to the parent, 0 not in a privs child (rename it yourself),
 * negative errno. */
int sptd_col_privs_handoff(int what, const char *tmp, const char *path, int replace);
/* Keep only the capabilities @keep (CAP_* numbers) in the effective,
 * permitted and bounding sets, clear the ambient set and set
 * no_new_privs; the uid stays 0.  For the service, after it armed. */
int sptd_col_privs_limit_caps(const int *keep, int nkeep);
/* 1 when this process is in a PID namespace other than the machine's
 * first one (a container without the host's PID namespace), 0 when in
 * that one, negative errno when it cannot tell; *@ino gets the
 * namespace's inode (0 unknown). */
int sptd_col_pidns_nested(unsigned long *ino);

/* Exit statuses (sysexits-like, documented in --help). */
#define SPTD_EXIT_OK        0
#define SPTD_EXIT_FAIL      1   /* runtime failure */
#define SPTD_EXIT_USAGE     2   /* bad command line */
#define SPTD_EXIT_NOPERM    4   /* needs root / capability */
#define SPTD_EXIT_UNSUPP    5   /* this machine lacks what was asked (e.g. --source pt) */
#define SPTD_EXIT_BADFILE   6   /* input file missing, corrupt or not an incident */
#define SPTD_EXIT_BUSY      7   /* another sysptd is running */

#endif /* SPTD_COL_BASE_H */
