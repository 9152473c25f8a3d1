/* sptd_col.h — the sysptd program's library: command line, recording
 * sources, triggers, capture, and the wiring of sched/, decode/ and store/.
 *
 * Only collector/ includes linux/perf_event.h; this header does not, so its
 * users need not either.
 *
 * Errors: >= 0 success, negative errno (-EINVAL caller's mistake, -ENOMEM,
 * -EACCES/-EPERM not root, -ENOENT missing thing, -EIO I/O).  Library code
 * never prints: messages go through sptd_col_log().
 */
#ifndef SPTD_COL_H
#define SPTD_COL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* ---- parsing (parse.c) --------------------------------------------------- */

/* "10ms", "250us", "1.5s", "100ns", "42" (ns).  -EINVAL on anything else,
 * negative or overflowing. */
int sptd_col_parse_duration(const char *text, int64_t *ns);
/* "64M", "512K", "1G", "4096" (bytes). */
int sptd_col_parse_size(const char *text, uint64_t *bytes);

enum sptd_col_trigger_kind {
	SPTD_TRIG_IRQ = 1,       /* irq[=NUM|NAME][,min=DUR] */
	SPTD_TRIG_TRACEPOINT,    /* tracepoint=SYS:EVENT[,filter=EXPR] */
	SPTD_TRIG_TIMER,         /* timer=DUR */
	SPTD_TRIG_LATENCY,       /* latency=DUR */
	SPTD_TRIG_UPROBE,        /* uprobe=PATH:SYMBOL */
	SPTD_TRIG_MANUAL,        /* snapshot command / SIGUSR2 (not parsed) */
};

struct sptd_col_trigger_spec {
	enum sptd_col_trigger_kind kind;
	int irq;                 /* -1: any (or named, see irq_name) */
	char irq_name[64];       /* as in /proc/interrupts; "" when by number/any */
	int64_t min_ns;          /* irq: handler entry->exit at least this; 0 off */
	char system[64], event[128]; /* tracepoint */
	char filter[512];        /* tracepoint filter, ftrace syntax; "" none */
	int64_t period_ns;       /* timer, latency */
	char path[512], symbol[128]; /* uprobe */
	char text[768];          /* the spec as given, for meta/trigger rows */
};

/* Parse one --trigger SPEC.  -EINVAL with a message naming the problem. */
int sptd_col_parse_trigger(const char *text, struct sptd_col_trigger_spec *spec,
                           char *err, size_t errlen);

/* Resolve an IRQ name ("virtio1-req.0", "ahci", "nvme0q1") to the numbers in
 * @interrupts_path (normally /proc/interrupts).  Fills up to @max numbers;
 * returns how many, -ENOENT if none matches. */
int sptd_col_irq_lookup(const char *interrupts_path, const char *name,
                        int *irqs, int max);

/* ---- tasks (tasks.c): tid/pid -> utid/upid for every table -------------- */

struct sptd_col_tasks;

int sptd_col_tasks_create(struct sptd_col_tasks **out);
void sptd_col_tasks_destroy(struct sptd_col_tasks *t);
/* Learn that @tid belongs to process @pid (-1 unknown) and is called @comm
 * (NULL unknown).  Later knowledge refines earlier. */
int sptd_col_tasks_note(struct sptd_col_tasks *t, int tid, int pid,
                        const char *comm, const char *cmdline);
/* The utid for @tid, assigning one if new (never fails for tid >= 0;
 * -EINVAL for tid < 0, -ENOMEM). tid 0 is the idle task ("swapper"). */
int64_t sptd_col_tasks_utid(struct sptd_col_tasks *t, int tid);
/* Write process and thread rows for everything known. */
int sptd_col_tasks_store(struct sptd_col_tasks *t, struct sptd_store *st);

/* ---- perf syscalls through a replaceable table (sys.c) ------------------- */

struct perf_event_attr;
struct sptd_col_sys {
	int (*perf_event_open)(struct perf_event_attr *attr, pid_t pid, int cpu,
	                       int group_fd, unsigned long flags);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	int (*munmap)(void *addr, size_t len);
	int (*ioctl)(int fd, unsigned long req, unsigned long arg);
	int (*close)(int fd);
	/* read a whole small file (sysfs, procfs) into @buf, NUL-terminated;
	 * returns its length or -errno */
	ssize_t (*read_file)(const char *path, char *buf, size_t len);
};
/* The table in use; tests assign their fakes to its members. */
extern struct sptd_col_sys sptd_col_sys;

/* ---- perf ring arithmetic (ring.c) --------------------------------------- */

/* Copy the @len bytes that end at @head out of a ring of @size bytes (a
 * power of two) at @base into @dst, unwrapping.  @len <= @size. */
void sptd_col_ring_copy(const void *base, uint64_t size, uint64_t head,
                        uint64_t len, void *dst);

/* ---- sampling source (sampler.c, sample_ring.c) --------------------------- */

struct sptd_col_sampler_config {
	int freq;                /* samples per second per CPU (10000) */
	size_t ring_pages;       /* data pages per CPU ring, power of two */
	int use_clock;           /* attr.use_clockid with CLOCK_MONOTONIC */
	int exclude_kernel;      /* user-only */
	int max_stack;           /* callchain depth limit (127) */
};

/* One sample as read back from a ring. @ips borrowed for the callback only. */
struct sptd_col_sample {
	int64_t ts;              /* ns, CLOCK_MONOTONIC */
	int cpu, pid, tid;
	uint64_t nr;             /* entries in @ips, PERF_CONTEXT_* markers included */
	const uint64_t *ips;
};
typedef int (*sptd_col_sample_fn)(void *ctx, const struct sptd_col_sample *s);

struct sptd_col_sampler;

/* One software cpu-clock event per online CPU, system-wide, kernel+user
 * callchains, overwrite (write_backward) ring each, enabled.  -ENOENT/
 * -EACCES/-EINVAL from perf_event_open with a logged reason. */
int sptd_col_sampler_create(const struct sptd_col_sampler_config *cfg,
                            struct sptd_col_sampler **out);
/* Stop (pause) / resume ring output on every CPU. */
int sptd_col_sampler_pause(struct sptd_col_sampler *s, int paused);
/* With output paused: every sample with @from <= ts <= @to, per CPU oldest
 * first.  Returns the number delivered. */
int sptd_col_sampler_read(struct sptd_col_sampler *s, int64_t from, int64_t to,
                          sptd_col_sample_fn fn, void *ctx);
void sptd_col_sampler_destroy(struct sptd_col_sampler *s);

/* Walk the records of a write_backward ring: the newest starts at @head
 * (as the kernel left data_head), older ones follow; stops at a zero header,
 * at a record that would cross the oldest byte, or after @size bytes.
 * @fn gets each record (unwrapped into a bounce buffer when it wraps). */
typedef int (*sptd_col_record_fn)(void *ctx, const void *rec, size_t len);
int sptd_col_ring_walk_backward(const void *base, uint64_t size, uint64_t head,
                                sptd_col_record_fn fn, void *ctx);

/* ---- capture-time symbol and task snapshot (symcap.c) --------------------- */

struct sptd_col_symcap;

/* Collects, for the processes and addresses an incident names: raw_task and
 * raw_mmap rows (from /proc/PID/{maps,comm,cmdline,task}), dso rows (path +
 * build-id) and the symbol rows of every function an address falls in
 * (ELF .symtab/.dynsym of the mapped file; /proc/kallsyms for the kernel). */
int sptd_col_symcap_create(struct sptd_store *st, struct sptd_col_symcap **out);
/* Snapshot process @pid (all its threads) now, before it can exit. */
int sptd_col_symcap_task(struct sptd_col_symcap *c, int pid);
/* Make sure the symbol covering @addr in @pid (-1 or kernel address: the
 * kernel) is in the store. */
int sptd_col_symcap_addr(struct sptd_col_symcap *c, int pid, uint64_t addr);
/* Flush remaining rows. */
int sptd_col_symcap_finish(struct sptd_col_symcap *c);
void sptd_col_symcap_destroy(struct sptd_col_symcap *c);

/* ---- derivation from raw tables (derive_*.c): what `sysptd decode` runs -- */

/* Rebuild sample + callsite rows from raw_sample, raw_mmap, symbol. */
int sptd_col_derive_samples(struct sptd_store *st, struct sptd_col_tasks *tasks);
/* Rebuild sched_slice, thread_state, irq_slice, softirq_slice (+ gaps) from
 * raw_ftrace_* and raw_switch, clipped to meta window_start..window_end. */
int sptd_col_derive_sched(struct sptd_store *st, struct sptd_col_tasks *tasks);
/* Rebuild slice/gap/stats rows from raw_pt (+ images, switches); 0 rows and
 * success when the incident has no PT.  @jobs threads (0: all cores). */
int sptd_col_derive_pt(struct sptd_store *st, struct sptd_col_tasks *tasks, int jobs);
/* All of the above in order, then process/thread rows; used after capture
 * and by `sysptd decode`. */
int sptd_col_derive_all(struct sptd_store *st, int jobs);

/* ---- subcommands (cmd_*.c): each returns the process exit status -------- */

/* Dispatch argv[1] to a subcommand (no subcommand or an option first:
 * record).  Returns the exit status. */
int sptd_col_main(int argc, char **argv);

int sptd_col_cmd_record(int argc, char **argv);
int sptd_col_cmd_decode(int argc, char **argv);
int sptd_col_cmd_query(int argc, char **argv);
int sptd_col_cmd_export(int argc, char **argv);
int sptd_col_cmd_import(int argc, char **argv);
int sptd_col_cmd_snapshot(int argc, char **argv);
int sptd_col_cmd_status(int argc, char **argv);
int sptd_col_cmd_list(int argc, char **argv);
int sptd_col_cmd_doctor(int argc, char **argv);

/* Exit statuses (sysexits-like, documented in --help). */
#define SPTD_EXIT_OK        0
#define SPTD_EXIT_FAIL      1   /* runtime failure */
#define SPTD_EXIT_USAGE     2   /* bad command line */
#define SPTD_EXIT_NOPERM    4   /* needs root / capability */
#define SPTD_EXIT_UNSUPP    5   /* this machine lacks what was asked (e.g. --source pt) */
#define SPTD_EXIT_BADFILE   6   /* input file missing, corrupt or not an incident */
#define SPTD_EXIT_BUSY      7   /* another sysptd is running */

#ifdef __cplusplus
}
#endif
#endif /* SPTD_COL_H */
