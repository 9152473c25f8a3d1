/* trigger-bp-local.h — inside the break= and watch= triggers: what
 * trigger_bp.c (the kind: break=PID, watch=, hits, names) and
 * trigger_bp_path.c (break=/PATH: every process mapping a file) share. */
#ifndef SPTD_COL_TRIGGER_BP_LOCAL_H
#define SPTD_COL_TRIGGER_BP_LOCAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sptd_col_trigger;

/* One executable file mapping of /proc/PID/maps. */
struct bp_map {
	uint64_t start, end, pgoff;
	dev_t dev;               /* the file's device and inode */
	ino_t ino;
	char path[512];
};

/* Call @fn for each executable file mapping of @pid, in the order of its
 * maps; stops at @fn's first non-zero return, which is returned.
 * -ESRCH: no such process. */
int sptd_col_bp_each_exec_map(int pid, int (*fn)(void *ctx, const struct bp_map *m),
                              void *ctx);

/* break=/PATH:SYMBOL's state (trigger_bp_path.c). */
struct bp_path;
/* Open t->spec.path, find its symbol, arm every thread of every process
 * that maps it; the state through *@out (set as soon as it exists, so the
 * caller frees it whatever happens).  -ENOENT, -EINVAL, -ENOMEM, with @err. */
int sptd_col_bp_path_arm(struct sptd_col_trigger *t, struct bp_path **out, char *err,
                         size_t errlen);
/* At each wake of the service: close exited threads' events, and at most
 * once a second look for new processes and threads. */
void sptd_col_bp_path_tick(struct sptd_col_trigger *t, struct bp_path *p);
/* Threads that map the file and the last scan left unwatched (no slot:
 * see trigger_bp_path.c for who is served first).  0 for NULL. */
size_t sptd_col_bp_path_unwatched(const struct bp_path *p);
/* The sum of that over the break=/PATH triggers of @trig (@n of them; the
 * others are skipped): for `sysptd status` and meta break_unwatched.  -1
 * when none is a break=/PATH trigger. */
int64_t sptd_col_bp_unwatched(struct sptd_col_trigger *const *trig, int n);
/* 1 when process @pid is one @p armed. */
int sptd_col_bp_path_has(const struct bp_path *p, int pid);
/* Accepts NULL. */
void sptd_col_bp_path_free(struct bp_path *p);

#endif /* SPTD_COL_TRIGGER_BP_LOCAL_H */
