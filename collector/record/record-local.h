/* record-local.h — the recording service's options and state. */
#ifndef SPTD_RECORD_LOCAL_H
#define SPTD_RECORD_LOCAL_H

#include <stdint.h>
#include <sys/resource.h>

#include "sptd_col_base.h"
#include "sptd_col_perf.h"
#include "sptd_col_derive.h"
#include "sptd_col_record.h"
#include "outdir-local.h"
#include "plan-local.h"
#include "sampling-local.h"
#include "trigger-local.h"

struct sptd_sched_trace;
struct sptd_col_pt;

#define SPTD_MAX_CPUS 1024

/* ---- capture-time symbol and task snapshot (symcap.c) --------------------- */

struct sptd_col_symcap;
struct sptd_col_symcache;

/* Collects, for the processes and addresses an incident names: raw_task and
 * raw_mmap rows (from /proc/PID/{maps,comm,cmdline,task}), dso rows (path +
 * build-id) and the symbol rows of every function an address falls in
 * (ELF .symtab/.dynsym of the mapped file or its debug file;
 * /proc/kallsyms for the kernel), with the tables of @cache (NULL: a
 * private one, dropped with the symcap).  Starts an incident in @cache
 * (sptd_col_symcache_begin); the caller ends it once the incident is
 * written. */
int sptd_col_symcap_create(struct sptd_store *st, struct sptd_col_symcache *cache,
                           struct sptd_col_symcap **out);
/* Snapshot process @pid (all its threads) now, before it can exit. */
int sptd_col_symcap_task(struct sptd_col_symcap *c, int pid);
/* A file mapping of a process as the sampling sideband recorded it
 * (MMAP2), for a process gone before its snapshot. */
struct sptd_col_symcap_mapping {
	uint64_t start, end;     /* [start, end) runtime addresses */
	uint64_t pgoff;          /* file offset of @start */
	const char *path;        /* the file's path when it was mapped */
	uint64_t dev, ino;       /* its device (st_dev) and inode; 0 unknown */
	uint64_t generation;     /* its inode generation; 0 unknown */
	const char *build_id;    /* hex; NULL: the record had none */
	int64_t until;           /* ns (the samples' clock) the mapping ended: an
	                          * exec, a newer mapping over it; 0 in force at
	                          * the capture */
};
/* Process @pid, whose /proc was gone (sptd_col_symcap_task failed or found
 * no mapping), with the @n mappings @maps the sideband recorded (sorted by
 * start and not overlapping where none has an end time; with end times in
 * any order, overlapping: each address is then named by the mapping in
 * force at its time, see sptd_col_symcap_addr): raw_mmap and dso rows as from /proc,
 * symbols from a file only while it is still the one recorded (build-id,
 * else device/inode/generation).  A mapping whose file is gone or replaced
 * keeps its raw_mmap and dso rows without symbols.  Returns the mappings
 * added; -EINVAL, -EEXIST (@pid already has mappings), -ENOMEM, the
 * store's errors. */
int sptd_col_symcap_task_recorded(struct sptd_col_symcap *c, int pid,
                                  const struct sptd_col_symcap_mapping *maps, size_t n);
/* The mappings /proc gave for the live process @pid (snapshotted now if it
 * was not yet: what its children inherit at a fork), each to @fn, @until 0,
 * @path borrowed until the symcap is destroyed.  Returns how many, -ENOENT
 * (none: gone, or its mappings came from the sideband), -EINVAL, or @fn's
 * or the store's error. */
int sptd_col_symcap_task_mappings(struct sptd_col_symcap *c, int pid,
                                  int (*fn)(void *ctx, const struct sptd_col_symcap_mapping *m),
                                  void *ctx);
/* Make sure the symbol covering @addr in @pid (-1 or kernel address: the
 * kernel) at time @ts (ns, the samples' clock: which mapping was in force
 * where the process's mappings have end times) is in the store. */
int sptd_col_symcap_addr(struct sptd_col_symcap *c, int pid, uint64_t addr, int64_t ts);
/* Flush remaining rows. */
int sptd_col_symcap_finish(struct sptd_col_symcap *c);
/* For the DWARF unwinder (sptd_dec_unwind_find_fn): the executable file
 * mapping of snapshotted process @pid that holds @addr, its file opened
 * as the symbolizer opens it (sptd_col_symcache_locate: proven to be the
 * mapped inode).  0 and *@map, -ENOENT (no such mapping, the vDSO, a
 * mapping recorded from the sideband, the file gone: @map's range says
 * which when known), -EINVAL. */
struct sptd_dec_unwind_map;
int sptd_col_symcap_unwind_map(struct sptd_col_symcap *c, int pid, uint64_t addr,
                               struct sptd_dec_unwind_map *map);

void sptd_col_symcap_destroy(struct sptd_col_symcap *c);

/* ---- the sampling source's sideband at capture (sample_exited.c) --------- */

struct sptd_store;

/* Every CPU's sideband ring of sampler @s (paused) into @st: raw_sideband
 * rows, and raw_task rows from its COMM records.  Returns the CPUs stored,
 * -EINVAL, -ENOMEM, the store's errors. */
int sptd_col_sample_sideband_store(struct sptd_col_sampler *s, struct sptd_store *st);
/* The processes @pids (sampled, but gone before /proc could be read) with
 * the mappings their stored sideband records give (raw_sideband of @st),
 * through sptd_col_symcap_task_recorded.  Returns the mappings added,
 * -EINVAL, -ENOMEM, the store's errors. */
int sptd_col_sample_exited_maps(struct sptd_col_symcap *sc, struct sptd_store *st,
                                const int *pids, int npids);

/* ---- CPU seeding (seed.c) ------------------------------------------------ */

/* Visit each CPU in @cpus with the calling thread (then restore its
 * affinity), so every ftrace ring holds a sched_switch from the start.
 * Returns the number of CPUs visited. */
int sptd_col_seed_cpus(const int *cpus, int ncpus);


/* The running service: what is armed and what it has done (service.c
 * runs the loop, arm.c arms and re-arms, capture.c freezes, copies and
 * writes). */
struct sptd_col_service {
	struct sptd_col_record_opts *o; /* the options (owned by the caller) */
	int cpus[SPTD_MAX_CPUS], ncpus; /* the CPUs recorded: online ones (of -C) */
	int online_cpus;            /* how many are online (meta "cpus") */
	char cpumask[300];          /* -C as ftrace's tracing_cpumask; "" all */
	enum sptd_col_source source; /* the source chosen: PT or SAMPLE */
	const char *source_name;     /* "pt" or "sample", for logs and meta */
	struct sptd_col_plan plan;   /* every ring's size (arm.c computes it) */
	const char *ftrace_clock;    /* trace_clock of the ftrace instance */
	struct sptd_sched_trace *trace; /* the ftrace instance */
	struct sptd_col_sampler *sampler; /* the sampling source, else NULL */
	struct sptd_col_sampler *offcpu;  /* --offcpu: stacks at sched_switch, else NULL */
	struct sptd_col_pt *pt;     /* the PT source (source "pt"), else NULL */
	struct sptd_col_symcache *symcache; /* symbol tables kept across incidents */
	struct sptd_col_trigger *trig[SPTD_MAX_TRIGGERS]; /* armed --trigger's */
	int ntrig;                  /* entries of @trig */
	struct sptd_col_trigger_spec manual; /* what snapshot / SIGUSR2 fire as */
	struct sptd_col_trigger_spec stop;   /* what a stopping signal fires as
	                                      * when it saves (--on-stop) */
	int save_on_stop;            /* --on-stop resolved: 1 save, 0 discard */
	struct sptd_col_trigger_spec exit_spec; /* what CMD's exit fires as */
	int child;                   /* `-- CMD`: its pid while it runs, else 0 */
	int child_status;            /* its exit status as a shell gives it (128+N
	                              * for signal N); -1 not ended yet */
	int stop_signals;            /* stopping signals seen while CMD ran */
	int child_traced;            /* CMD's exit is watched (ptrace) */
	int child_exit_stop;         /* CMD is (was) stopped at its exit */
	int lock_fd, ctl_fd, sig_fd; /* the lock, control socket, signalfd; -1 none */
	struct sptd_col_outdir outdir; /* --output: checked, held open, named, retained */
	int incidents;             /* written so far */
	int64_t last_capture;      /* ns, for --cooldown */
	int64_t armed_at;          /* ns when the rings last started filling */
	char last_path[4096];      /* the last incident written */
	int pt_failed;             /* opening PT failed: a runtime failure, not usage */
	int aux_pause;             /* 1: triggers may pause PT in the kernel (AUX
	                            * pause: the resume siblings are open) */
	char aux_pause_why[256];   /* why not, when aux_pause is 0 */
	int kfreeze_wanted;        /* some trigger can freeze ftrace in the kernel
	                            * (a one-shot traceoff event trigger) */
	int kfreeze_on;            /* ... and those triggers are installed now:
	                            * only while a hit may fire (never in warm-up
	                            * or cooldown) */
	int64_t kfreeze_since;     /* ns when they were installed */
	int64_t ftrace_started;    /* ns when ftrace last (re)started with empty rings */
	const char *ftrace_why;    /* why it did then (for the incident's gaps) */
	int64_t ftrace_checked;    /* ns when the instance was last looked for */
	int64_t ftrace_recreated;  /* ns when it was last made again after another
	                            * program removed it; 0 never */
	int ftrace_recreations;    /* ... how many times */
	char ftrace_down[400];     /* "" recording; else why the instance is gone
	                            * and could not be made again (status, logs) */
	int64_t ftrace_down_since; /* ns when that began */
	int aux_refused_logged;    /* the kernel's refusal was said once */
	struct rlimit nofile;      /* RLIMIT_NOFILE as started (CMD gets it back) */
	char online_text[256];     /* the kernel's online CPU list armed on */
	int64_t online_checked;    /* ns when it was last compared */
};

/* ---- arming (arm.c) ------------------------------------------------------ */

/* Resolve --source (auto: PT when the machine has it) into s->source and
 * s->source_name, saying which.  -ENODEV: --source pt without Intel PT. */
int sptd_col_record_choose_source(struct sptd_col_service *s);
/* Size every ring (s->plan), create the ftrace instance, open PT or the
 * sampler and the triggers, start them, and say "armed:".  Errors are
 * logged; s->pt_failed tells a PT failure.  What was armed is undone by
 * sptd_col_record_disarm(). */
int sptd_col_record_arm(struct sptd_col_service *s);
/* Turn every source back on after a capture, and forget the hits it
 * caused. */
void sptd_col_record_rearm(struct sptd_col_service *s);
/* A hit that did not fire (warm-up, cooldown) may have paused PT: resume
 * it; and ftrace found frozen without a capture is restarted with empty
 * rings (what it held ends in a stretch nothing saw: no incident may span
 * it), the warm-up starting over. */
void sptd_col_record_unfreeze(struct sptd_col_service *s);
/* Install the kernel freeze (one-shot traceoff triggers) once hits may fire
 * (@now >= @not_before): never in warm-up or cooldown, so a hit the service
 * would ignore cannot freeze the rings.  A failure falls back to freezing
 * from user space, said once. */
void sptd_col_record_kfreeze_arm(struct sptd_col_service *s, int64_t now, int64_t not_before);
/* Remove the kernel freeze (after a capture; about 150 ms of the kernel's
 * grace period, the triggers stop acting at once). */
void sptd_col_record_kfreeze_disarm(struct sptd_col_service *s);
/* The ftrace instance is still the one armed (looked at once a second, or
 * now with @force): when another program removed it, make it again and
 * start it (the rings empty, ftrace_why saying so): 1; 0 nothing to do;
 * -errno it cannot be made now (s->trace NULL, s->ftrace_down says why;
 * tried again every 5 s).  Logged. */
int sptd_col_record_ftrace_check(struct sptd_col_service *s, int64_t now, int force);
/* How long the service goes on without its ftrace instance before it
 * stops with exit status 1. */
#define SPTD_FTRACE_GIVE_UP_NS 60000000000LL
/* Close every source and trigger; accepts a partly armed service. */
void sptd_col_record_disarm(struct sptd_col_service *s);

/* ---- CPU hotplug (hotplug.c) ------------------------------------------- */

/* The CPUs of --cpu's @list that are among the @non online ones @on,
 * each once, in the list's order, into @out (room for SPTD_MAX_CPUS).
 * Their count, or -EINVAL when @list does not parse; *@offline gets the
 * first CPU of @list that is not online, -1 none. */
int sptd_col_record_cpus_listed(const char *list, const int *on, int non, int *out,
                                int *offline);
/* Note the online CPU list the service armed on. */
void sptd_col_record_hotplug_note(struct sptd_col_service *s);
/* At most once a second: when the online CPUs changed, disarm and arm
 * again on the CPUs online now (of --cpu's), logged.  0 nothing to do, 1
 * armed again, negative errno when arming again failed (the service
 * cannot go on). */
int sptd_col_record_hotplug(struct sptd_col_service *s, int64_t now);

/* ---- `-- CMD` (command.c) ---------------------------------------------- */

/* Start s->o->cmd_argv once armed: in this process group, every signal
 * unblocked, no descriptor of ours, RLIMIT_NOFILE as sysptd started; its
 * exit watched with ptrace unless --no-exit-watch (s->child_traced).  0
 * (s->child set), or an exit status (127 cannot run it, 126 cannot exec
 * it, SPTD_EXIT_FAIL cannot fork). */
int sptd_col_record_command_start(struct sptd_col_service *s);
/* On SIGCHLD: 1 when CMD is at its exit stop or has ended (an incident to
 * fire; @detail, @len bytes, says how it ended; s->child_status set), 0
 * for any other stop (passed on) or when there is no CMD. */
int sptd_col_record_command_reap(struct sptd_col_service *s, char *detail, size_t len);

/* ---- capture (capture.c) ----------------------------------------------- */

/* Freeze, copy the window around @fire, re-arm, then decode and write one
 * incident.  An error loses this incident only. */
int sptd_col_record_capture(struct sptd_col_service *s, const struct sptd_col_fire *fire);

/* The directory holding the kernel's proc/kallsyms, proc/kcore and
 * proc/modules (pt_image.c for the code, symcache.c for the symbols):
 * @root, else $SPTD_KERNEL_ROOT (tests: a fake kernel,
 * tests/fakepmu/fakepmu_kcore.h), else "" (the real /proc). */
const char *sptd_col_kernel_root(const char *root);

#endif
