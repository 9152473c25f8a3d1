/* sptd_col_record.h — the recording service: what the program needs of it.
 * The trigger language, the record options, probing Intel PT (for doctor),
 * running the service, and talking to a running one. */
#ifndef SPTD_COL_RECORD_H
#define SPTD_COL_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_col_base.h"

struct sptd_store;

/* ---- triggers (trigger_parse.c, trigger_irq.c) ---------------------------- */

enum sptd_col_trigger_kind {
	SPTD_TRIG_IRQ = 1,       /* irq[=NUM|NAME][,min=DUR] */
	SPTD_TRIG_TRACEPOINT,    /* tracepoint=SYS:EVENT[,filter=EXPR] */
	SPTD_TRIG_TIMER,         /* timer=DUR */
	SPTD_TRIG_LATENCY,       /* latency=DUR */
	SPTD_TRIG_UPROBE,        /* uprobe=PATH:SYMBOL */
	SPTD_TRIG_MANUAL,        /* snapshot command / SIGUSR2 (not parsed) */
	SPTD_TRIG_BREAK,         /* break=PID:SYMBOL */
	SPTD_TRIG_WATCH,         /* watch=PID:SYMBOL[+OFF]|PID:0xADDR[,w|rw][,len=N] */
};

struct sptd_col_trigger_spec {
	enum sptd_col_trigger_kind kind;
	int irq;                 /* -1: any (or named, see irq_name) */
	char irq_name[64];       /* as in /proc/interrupts; "" when by number/any */
	int64_t min_ns;          /* irq: handler entry->exit at least this; 0 off */
	char system[64], event[128]; /* tracepoint */
	char filter[512];        /* tracepoint filter, ftrace syntax; "" none */
	int64_t period_ns;       /* timer, latency */
	char path[512], symbol[128]; /* uprobe; break/watch: symbol ("" an address) */
	int pid;                 /* break, watch: the process */
	uint64_t addr;           /* watch PID:0xADDR: the address; else resolved */
	uint64_t offset;         /* watch SYMBOL+OFF */
	int bp_len;              /* watch: bytes watched (1, 2, 4, 8) */
	int bp_rw;               /* watch: 0 writes, 1 reads and writes */
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
/* Whether IRQ @irq can run here: 1 it has a handler, 0 the kernel has it
 * but no driver requested it (no handler: it never runs), -ENOENT no such
 * IRQ.  From @sysfs_irq_dir/N/actions (normally /sys/kernel/irq) where that
 * directory exists, else from @interrupts_path (an IRQ with a line there
 * counts as having a handler); -EINVAL, or the errno reading it. */
int sptd_col_irq_number_check(const char *interrupts_path, const char *sysfs_irq_dir, int irq);


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
	                        psb_period, noretcomp, branch, /* format/ terms */
	                        pwr_evt, ptw, fup_on_ptw;
	int cap_psb_cyc;         /* caps/psb_cyc: cyc, cyc_thresh, psb_period work */
	int cap_mtc;             /* caps/mtc: MTC packets */
	uint32_t mtc_periods;    /* caps/mtc_periods bitmap of allowed mtc_period */
	uint32_t cyc_thresholds; /* caps/cycle_thresholds bitmap of cyc_thresh */
	uint32_t psb_periods;    /* caps/psb_periods bitmap of psb_period */
	int topa_output;         /* caps/topa_output */
	int topa_multiple;       /* caps/topa_multiple_entries: AUX may be big */
	int single_range;        /* caps/single_range_output */
	int ip_filtering;        /* caps/ip_filtering */
	int ptwrite;             /* caps/ptwrite */
	int power_event_trace;   /* caps/power_event_trace */
	uint32_t max_nonturbo_ratio; /* intel_pt/max_nonturbo_ratio (0 unknown) */
	uint32_t tsc_art_num;    /* intel_pt/tsc_art_ratio "num:den" (CPUID 0x15 ebx) */
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
	int power;               /* --power: C-state events and PTWRITE where the
	                          * PMU has them (pwr_evt; ptw, fup_on_ptw) */
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
	int pwr_evt, ptw;        /* 1: set (--power) */
	char power_lacks[160];   /* --power: what this PMU cannot give ("" all) */
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
/* 1 when the kernel takes an intel_pt event with aux_start_paused (AUX
 * pause, Linux 6.13+), 0 when it refuses it, -errno when PT cannot be opened
 * at all (EACCES...). */
int sptd_col_pt_aux_pause_probe(const struct sptd_col_pt_pmu *pmu, int cpu);

/* ---- the service (service.c) ---------------------------------------------- */

#define SPTD_MAX_TRIGGERS 16
#define SPTD_MAX_CPUS 1024

enum sptd_col_source { SPTD_SOURCE_AUTO, SPTD_SOURCE_SAMPLE, SPTD_SOURCE_PT };

#define SPTD_MAX_PIDS 64
#define SPTD_MAX_EVENTS 32

/* -e SYS:EVENT[,filter=EXPR]: a tracepoint added to the ftrace instance. */
struct sptd_col_event_spec {
	char system[64], event[128];
	char filter[512];           /* ftrace filter syntax; "" none */
};
/* Parse one -e.  -EINVAL with a message naming the problem. */
int sptd_col_parse_event(const char *text, struct sptd_col_event_spec *ev, char *err,
                         size_t errlen);

struct sptd_col_record_opts {
	int64_t window_ns;          /* history kept before the trigger */
	int64_t post_ns;            /* and after it */
	int64_t cooldown_ns;        /* ignore triggers this long after a capture */
	int count;                  /* incidents before exiting, 0 forever */
	int keep;                   /* newest incidents kept in output, 0 all */
	uint64_t max_disk;          /* --max-disk: bytes incidents may take in all */
	int max_disk_set;           /* 1: --max-disk given (0 there: no limit);
	                             * 0: 10% of the filesystem, at most 4 GiB */
	const char *output;         /* directory for incident files */
	int unsafe_output;          /* --unsafe-output: accept a directory others
	                             * can write, or a symlink */
	enum sptd_col_source source;
	int freq;                   /* sampling frequency per CPU */
	uint64_t buffer_bytes;      /* --buffer: the ftrace ring per CPU (sampling) or
	                             * the AUX ring (PT); 0: from the window */
	int user_only;
	enum sptd_col_pt_timing timing; /* --timing (PT) */
	const char *image_cache;    /* --image-cache DIR (PT): mapped files by build-id */
	int portable;               /* --portable (PT): embed mapped files in the incident */
	int jobs;                   /* decode threads */
	int quiet;
	struct sptd_col_trigger_spec triggers[SPTD_MAX_TRIGGERS];
	int ntriggers;
	char command[1024];         /* argv joined, for meta */
	int on_stop;                /* SPTD_ON_STOP_*: what SIGINT/SIGTERM/SIGHUP do */
	const char *name;           /* --name; NULL the default service */
	char output_buf[256];       /* the default --output of a named recorder */
	int output_named_default;   /* --output is that default (created if need be) */
	char cpu_list[256];         /* -C/--cpu as given; "" every online CPU */
	int pids[SPTD_MAX_PIDS];    /* -p/--pid: keep only these processes' samples
	                             * and calls (scheduling stays whole) */
	int npids;
	struct sptd_col_event_spec events[SPTD_MAX_EVENTS]; /* -e */
	int nevents;
	int offcpu;                 /* --offcpu: stacks where threads block */
	uint32_t stack_user;        /* --call-graph dwarf[,SIZE]: bytes of user
	                             * stack (and the user registers) kept per
	                             * sample and off-CPU stack, unwound with
	                             * DWARF CFI; 0: fp, the kernel's walk only */
	int power;                  /* --power: PT's C-state events and PTWRITE */
	int no_exit_watch;          /* --no-exit-watch: CMD is not ptrace-seized */
	char **cmd_argv;            /* `-- CMD ARGS`: run CMD, an incident when it
	                             * exits, its exit status ours; NULL none */
};

/* --on-stop: whether a stopping signal first writes the last window as a
 * final incident (as perf and magic-trace save what they hold on Ctrl+C). */
enum {
	SPTD_ON_STOP_AUTO = 0,   /* save when run in the foreground of a terminal
	                          * (Ctrl+C), discard as a service (no tty) */
	SPTD_ON_STOP_SAVE,
	SPTD_ON_STOP_DISCARD,
};

/* Run the recording service with @o until --count incidents or a signal.
 * Returns the process exit status (SPTD_EXIT_*). */
int sptd_col_record_run(struct sptd_col_record_opts *o);

/* ---- the control socket, client side (ctl.c) --------------------------- */

/* --name NAME: a recorder of its own beside the service, with its own
 * ftrace instance ("sysptd-NAME"), lock and control socket (in
 * RUNDIR/name/NAME); `sysptd snapshot --name NAME` talks to it.  NAME: 1 to
 * SPTD_NAME_MAX of [A-Za-z0-9._-], not starting with '-' or '.'; NULL: the
 * default service.  -EINVAL for a bad name. */
#define SPTD_NAME_MAX 32
int sptd_col_set_service_name(const char *name);
const char *sptd_col_service_name(void); /* "" for the default service */
/* The ftrace instance of the service named so far. */
void sptd_col_instance_name(char *buf, size_t len);
/* Directory for the lock and the socket: $SYSPTD_RUNDIR (tests), else
 * /run/sysptd; with a name, its subdirectory name/NAME. */
const char *sptd_col_rundir(void);
/* The lock `sysptd doctor` holds while it measures with its ftrace instance
 * (SPTD_DOCTOR_INSTANCE), so that two doctors take turns instead of
 * removing each other's instance as stale: RUNDIR/.doctor.lock, waited
 * for up to 10 s.  Returns the fd (closing it releases the lock), -EBUSY
 * when another doctor held it all that time, or -errno. */
int sptd_col_doctor_lock(void);
/* That instance: no service's ("sysptd", "sysptd-NAME") can be named so. */
#define SPTD_DOCTOR_INSTANCE "sysptd_doctor"
/* Send @cmd to the running service, read the whole reply into @reply.
 * -ECONNREFUSED / -ENOENT when no service runs. */
int sptd_col_ctl_request(const char *cmd, char *reply, size_t len, int timeout_ms);

#endif /* SPTD_COL_RECORD_H */
