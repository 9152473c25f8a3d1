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

/* ---- CPU seeding (seed.c) ------------------------------------------------ */

/* Visit each CPU in @cpus with the calling thread (then restore its
 * affinity), so every ftrace ring holds a sched_switch from the start.
 * Returns the number of CPUs visited. */
int sptd_col_seed_cpus(const int *cpus, int ncpus);

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

/* The value of long option @opt at argv[*i]: "--opt=V", or the next
 * argument (advancing *i); NULL when it is missing. */
const char *sptd_col_option_value(int argc, char **argv, int *i, const char *opt);
/* Open INCIDENT @path for subcommand @cmd; on failure print one message
 * naming the file and the problem to stderr and return the exit status
 * (SPTD_EXIT_BADFILE for missing/corrupt/not an incident), else 0. */
int sptd_col_incident_open(const char *cmd, const char *path, int writable,
                           struct sptd_store **st);

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


/* ---- Intel PT source (pt_*.c) --------------------------------------------- */

/* Where sysfs is read (the intel_pt PMU's type, format/ and caps/): @root
 * replaces "/sys" (tests point it at a fake tree); NULL restores the
 * default, which is $SPTD_SYSFS_ROOT when set, else "/sys".  The string is
 * copied. */
void sptd_col_pt_set_sysfs_root(const char *root);
/* The sysfs root in use.  Static storage, valid until the next set. */
const char *sptd_col_pt_sysfs_root(void);
/* 1 when ROOT/bus/event_source/devices/intel_pt exists, else 0. */
int sptd_col_pt_available(void);

/* One config term of the PMU's format/ directory ("config:14-17"): which
 * attr word and which bits a term's value is spread over, low bits first. */
#define SPTD_PT_TERM_RANGES 4
struct sptd_col_pt_term {
	int present;             /* 1: format/NAME exists */
	int word;                /* 0 config, 1 config1, 2 config2 */
	int nranges;             /* bit ranges used */
	int lo[SPTD_PT_TERM_RANGES], hi[SPTD_PT_TERM_RANGES]; /* inclusive */
};

/* What the intel_pt PMU of this machine says about itself. */
struct sptd_col_pt_pmu {
	uint32_t type;           /* attr.type, from .../intel_pt/type */
	struct sptd_col_pt_term pt, tsc, mtc, mtc_period, cyc, cyc_thresh,
	                        psb_period, noretcomp, branch; /* format/ terms */
	int cap_psb_cyc;         /* caps/psb_cyc: cyc, cyc_thresh, psb_period work */
	int cap_mtc;             /* caps/mtc: MTC packets */
	uint32_t mtc_periods;    /* caps/mtc_periods bitmap of allowed mtc_period */
	uint32_t cyc_thresholds; /* caps/cyc_thresholds bitmap of cyc_thresh */
	uint32_t psb_periods;    /* caps/psb_periods bitmap of psb_period */
	int topa_output;         /* caps/topa_output */
	int topa_multiple;       /* caps/topa_multiple_entries: AUX may be big */
	int single_range;        /* caps/single_range_output */
	int ip_filtering;        /* caps/ip_filtering */
	int ptwrite;             /* caps/ptwrite */
	int power_event_trace;   /* caps/power_event_trace */
	uint32_t max_nonturbo_ratio; /* caps/max_nonturbo_ratio (0 unknown) */
	uint32_t tsc_art_num;    /* caps/tsc_art_ratio "num:den" (CPUID 0x15 ebx) */
	uint32_t tsc_art_den;    /* ... (CPUID 0x15 eax); 0 unknown */
};

/* Read the PMU under the sysfs root.  -ENODEV no intel_pt PMU, -EBADMSG a
 * type or format file that does not parse (@err names it). */
int sptd_col_pt_pmu_read(struct sptd_col_pt_pmu *pmu, char *err, size_t errlen);

/* --timing: how much timing PT carries (magic-trace's levels). */
enum sptd_col_pt_timing {
	SPTD_PT_TIMING_LOW = 0,  /* TSC + MTC (mtc_period 3): cheapest */
	SPTD_PT_TIMING_NORMAL,   /* + CYC (cyc_thresh 1), MTC as often as allowed */
	SPTD_PT_TIMING_HIGH,     /* + noretcomp: a TIP for every return */
};
/* "low", "normal", "high" -> the level; -EINVAL otherwise. */
int sptd_col_pt_timing_parse(const char *text, enum sptd_col_pt_timing *out);

/* What the user asked for. */
struct sptd_col_pt_request {
	enum sptd_col_pt_timing timing;
	int user_only;           /* leave the kernel out (exclude_kernel) */
	uint64_t aux_bytes;      /* AUX ring per CPU; 0: sized from @window_ns */
	int64_t window_ns;       /* history wanted (for sizing and coverage) */
};

/* The event as it will be opened, and what went into it. */
struct sptd_col_pt_setup {
	uint32_t type;           /* attr.type */
	uint64_t config[3];      /* attr.config, config1, config2 */
	int exclude_kernel;      /* attr.exclude_kernel */
	int mtc, mtc_period;     /* MTC on, its period (-1: not settable) */
	int cyc, cyc_thresh;     /* CYC on, its threshold (-1: not settable) */
	int psb_period;          /* -1: hardware default */
	int noretcomp, branch;   /* 1: set */
	uint64_t aux_bytes;      /* AUX ring per CPU: power of two pages */
	int64_t coverage_ns;     /* expected history the AUX ring holds */
	uint64_t rate_bytes_s;   /* the PT rate per busy CPU assumed for it */
	char desc[256];          /* "tsc,mtc,mtc_period=0,cyc,..." for meta/logs */
};

/* Choose config bits from @pmu's format/ and caps/ for @req.  -ENOTSUP when
 * the PMU lacks a term that is required (tsc), -EINVAL bad arguments. */
int sptd_col_pt_setup_build(const struct sptd_col_pt_pmu *pmu,
                            const struct sptd_col_pt_request *req,
                            struct sptd_col_pt_setup *out, char *err, size_t errlen);
/* Put @value into the bits of @term in @config (3 words).  -EINVAL when the
 * term is absent or @value does not fit. */
int sptd_col_pt_term_set(const struct sptd_col_pt_term *term, uint64_t value,
                         uint64_t config[3]);
/* Parse a format file's text ("config:0-3,7", "config1:5") into @term.
 * -EBADMSG when it does not parse. */
int sptd_col_pt_term_parse(const char *text, struct sptd_col_pt_term *term);

/* Copy the history out of an overwrite-mode AUX ring of @size bytes (a
 * power of two) at @base whose aux_head is @head (a free-running counter or
 * a position below @size, as the PMU keeps it): everything written, oldest
 * first, whether or not the ring has wrapped.  A ring that wrapped is
 * recognised by @head >= @size or by a non-zero byte after the head (the
 * kernel hands out zeroed pages).  Returns the bytes written to @dst (room
 * for @size), or -EINVAL. */
int64_t sptd_col_pt_aux_copy(const void *base, uint64_t size, uint64_t head, void *dst);

/* One perf sideband record, decoded.  Strings are borrowed from the
 * record for the callback only. */
struct sptd_col_pt_record {
	uint32_t type;           /* PERF_RECORD_* */
	uint16_t misc;           /* header misc bits */
	int has_id;              /* 1: the sample_id fields below are valid */
	int id_pid, id_tid, id_cpu; /* sample_id_all: task and CPU it happened on */
	uint64_t time;           /* sample_id_all: perf clock ns */
	int pid, tid;            /* MMAP2, COMM, FORK/EXIT, ITRACE_START */
	int ppid, ptid;          /* FORK/EXIT */
	uint64_t addr, len, pgoff; /* MMAP2 */
	uint32_t prot, flags;    /* MMAP2 */
	const char *name;        /* MMAP2 file name, COMM comm */
	int switch_out;          /* SWITCH_CPU_WIDE: 1 out, 0 in */
	int other_pid, other_tid; /* SWITCH_CPU_WIDE: the next (out) / previous (in) task */
	uint64_t aux_offset, aux_size, aux_flags; /* AUX */
	uint64_t lost;           /* LOST: records lost; LOST_SAMPLES: samples */
};
typedef int (*sptd_col_pt_record_fn)(void *ctx, const struct sptd_col_pt_record *r);

/* The sample_type sysptd gives its sideband events (TID|TIME|CPU). */
uint64_t sptd_col_pt_sideband_sample_type(void);
/* Walk the whole records in @buf (@len bytes, records back to back, as
 * stored in raw_sideband) written with @sample_type and sample_id_all, and
 * hand each to @fn.  Returns the count, -EBADMSG at a record that is cut
 * short or malformed (records before it were delivered), or @fn's error. */
int sptd_col_pt_sideband_parse(const void *buf, size_t len, uint64_t sample_type,
                               sptd_col_pt_record_fn fn, void *ctx);
/* Rebuild the gap rows of raw_sideband (reasons "sideband: ..."): AUX
 * records flagged truncated/partial/collision, LOST records and trace
 * (re)starts (ITRACE_START).  Times converted with meta perf_clock_offset_ns.
 * Returns the number of gap rows. */
int sptd_col_derive_pt_sideband(struct sptd_store *st);

/* The recording source: an intel_pt event and a sideband event per CPU. */
struct sptd_col_pt_config {
	struct sptd_col_pt_request req; /* timing, user_only, sizes */
	const int *cpus;         /* CPUs to trace */
	int ncpus;               /* count of @cpus */
	size_t sideband_pages;   /* data pages of each sideband ring, power of
	                          * two; 0: 64 */
	int aux_pause;           /* 1: try AUX pause (kernel >= 6.13) */
	int cpu_family, cpu_model, cpu_stepping; /* 0: CPUID of this machine
	                          * (recorded only on GenuineIntel: other vendors
	                          * have no PT, and libipt knows no errata for them) */
};

struct sptd_col_pt;

/* Read the PMU, build the setup, open per CPU the PT event (pid -1, cpu N,
 * disabled; data ring + read-only AUX ring = overwrite/snapshot mode) and
 * the sideband dummy event (mmap2, comm, comm_exec, task, context_switch;
 * sample_id_all TID|TIME|CPU; read-only write_backward ring), and read the
 * time conversion from the PT event's mmap page.  Nothing is enabled yet.
 * -ENODEV no PT, -ENOTSUP PMU lacks tsc, -EACCES/-EPERM not allowed,
 * -ENOMEM; @err says what and why. */
int sptd_col_pt_create(const struct sptd_col_pt_config *cfg, struct sptd_col_pt **out,
                       char *err, size_t errlen);
/* The setup in use (borrowed for the life of @pt). */
const struct sptd_col_pt_setup *sptd_col_pt_setup(const struct sptd_col_pt *pt);
/* Enable every CPU's events, sideband first, in one tight loop. */
int sptd_col_pt_enable(struct sptd_col_pt *pt);
/* Freeze: disable PT on every CPU (the PMU writes its last bytes and
 * aux_head), pause the sideband rings, then copy AUX and sideband into
 * memory owned by @pt.  Call sptd_col_pt_enable() to resume. */
int sptd_col_pt_freeze(struct sptd_col_pt *pt);
/* Write the last freeze into @st: raw_pt and raw_sideband per CPU,
 * raw_switch rows from SWITCH_CPU_WIDE, raw_task rows from COMM records,
 * meta pt_* (decode configuration, config used), tsc_* and
 * perf_clock_offset_ns (incident clock: CLOCK_MONOTONIC).  Returns bytes of
 * PT written. */
int64_t sptd_col_pt_write(struct sptd_col_pt *pt, struct sptd_store *st);
/* Processes named by the last freeze's sideband (pids > 0), sorted, unique:
 * fills up to @max, returns how many there are. */
int sptd_col_pt_pids(const struct sptd_col_pt *pt, int *pids, int max);
/* Code that is not in a file, for each process in @pids: anonymous
 * executable mappings (JIT) and the vDSO, copied from /proc/PID/mem into
 * raw_image rows (with a dso row "[anon:PID]" / "[vdso:PID]").  Processes
 * gone meanwhile are skipped.  Returns the number of images. */
int sptd_col_pt_images_anon(struct sptd_store *st, const int *pids, int npids);
/* Kernel text as it is in memory, from /proc/kcore (@kcore, NULL for the
 * default) into raw_image rows under dso "[kernel.kallsyms]", ranges from
 * /proc/kallsyms _stext.._etext.  -EACCES/-ENOENT when unreadable (then
 * meta pt_kernel_image says patched code may misdecode). */
int sptd_col_pt_images_kernel(struct sptd_store *st, const char *kcore);
/* Every sideband record of the last freeze (both rings of every CPU) to
 * @fn.  Returns the count, or @fn's error. */
int sptd_col_pt_records(const struct sptd_col_pt *pt, sptd_col_pt_record_fn fn, void *ctx);
/* The intel_pt event fd on @cpu (a group leader for AUX pause triggers);
 * -ENOENT when @cpu is not traced. */
int sptd_col_pt_fd(const struct sptd_col_pt *pt, int cpu);
/* AUX pause needs a way back: open per CPU an aux_resume sibling of the PT
 * event (a syscalls:sys_enter_sched_yield tracepoint filtered to this
 * process).  -ENOENT no such tracepoint, -EINVAL/-EOPNOTSUPP the kernel
 * has no AUX pause (then nothing stays open); @err says which. */
int sptd_col_pt_resume_open(struct sptd_col_pt *pt, char *err, size_t errlen);
/* Resume PT wherever a trigger paused it (after sptd_col_pt_enable, or
 * after a hit that did not fire): yields once on every traced CPU.
 * Returns the CPUs visited. */
int sptd_col_pt_resume(struct sptd_col_pt *pt);
/* File mappings of @pids (processes gone before the capture read /proc)
 * from the last freeze's MMAP2 records: dso rows (path + build-id when the
 * file is still there) and raw_mmap rows.  Writes meta pt_exited_mmaps.
 * Returns the raw_mmap rows added. */
int sptd_col_pt_mmaps_exited(const struct sptd_col_pt *pt, struct sptd_store *st,
                             const int *pids, int npids);

/* ---- images of mapped files (pt_imgcache.c) ---- */

/* The GNU build-id of the 64-bit ELF file @path as lowercase hex (as
 * dso.build_id holds it).  -ENOENT/-EACCES unreadable, -EBADMSG not a
 * 64-bit little-endian ELF file, -ENODATA no build-id note. */
int sptd_col_pt_build_id(const char *path, char *hex, size_t hexlen);
/* The default --image-cache directory (static string). */
const char *sptd_col_pt_imgcache_default(void);
/* Where the cache @dir keeps the file @path of @build_id:
 * DIR/<build-id>/<basename of path>.  -EINVAL (bad build-id: hex only). */
int sptd_col_pt_imgcache_path(const char *dir, const char *build_id, const char *path,
                              char *out, size_t outlen);
/* Copy @path into the cache @dir under @build_id unless it is there; the
 * copy is checked to still have @build_id (-ESTALE: the file changed since)
 * and renamed into place whole.  @out gets the cached path.  Returns 1
 * copied, 0 already cached, -errno. */
int sptd_col_pt_imgcache_put(const char *dir, const char *path, const char *build_id,
                             char *out, size_t outlen);
/* For every dso row naming a file ("/..."): check the file still has the
 * recorded build-id, copy it into the cache @cache_dir (NULL: none) and,
 * with @portable, embed its bytes in raw_file.  Files that changed or
 * vanished are logged and counted (meta pt_images_missing), not fatal.
 * Writes meta pt_image_cache, pt_portable, pt_images_cached/_embedded.
 * Returns the number of file dsos, or a store error. */
int sptd_col_pt_images_files(struct sptd_store *st, const char *cache_dir, int portable);

/* Where decoding finds the bytes of a dso (sptd_col_pt_imgfind_lookup). */
#define SPTD_PT_IMAGE_EMBEDDED 1 /* raw_file of the incident (--portable) */
#define SPTD_PT_IMAGE_CACHED   2 /* the image cache, by build-id */
#define SPTD_PT_IMAGE_ORIGINAL 3 /* the recorded path, same build-id */

struct sptd_col_pt_imgfind;
/* A lookup over @st (borrowed, must outlive it).  The cache directory is
 * $SPTD_IMAGE_CACHE, else meta pt_image_cache, else the default. */
int sptd_col_pt_imgfind_create(struct sptd_store *st, struct sptd_col_pt_imgfind **out);
/* A readable file with the bytes of dso @dso_id (recorded @path, hex
 * @build_id or NULL): the embedded copy (unpacked into a private temporary
 * directory, keeping the basename), else DIR/<build-id>/<basename>, else
 * @path when its build-id matches.  *@where is valid until the next lookup;
 * an unpacked file stays on disk until destroy, so a decoder may read it
 * lazily.  Returns SPTD_PT_IMAGE_*, -ENOENT nowhere, -ESTALE @path is now a
 * different file, -EINVAL, or a store/file error. */
int sptd_col_pt_imgfind_lookup(struct sptd_col_pt_imgfind *f, int64_t dso_id, const char *path,
                               const char *build_id, const char **where);
/* Removes unpacked files.  Accepts NULL. */
void sptd_col_pt_imgfind_destroy(struct sptd_col_pt_imgfind *f);

/* Accepts NULL: disables, unmaps and closes everything. */
void sptd_col_pt_destroy(struct sptd_col_pt *pt);

#ifdef __cplusplus
}
#endif
#endif /* SPTD_COL_H */
