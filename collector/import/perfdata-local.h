/* perfdata-local.h — reading perf.data files (perf record's output) and
 * importing them as incidents.  Written from the documented format
 * (tools/perf/Documentation/perf.data-file-format.txt); no perf code.
 *
 * perfdata_read.c    file header, attrs + ids, feature sections, record walk
 * perfdata_sample.c  records decoded by collector/perf's parser with the
 *                    layout of the event that wrote them; sched_switch
 *                    tracepoint fields
 * perfdata_tracing.c wakeup and interrupt tracepoints -> ftrace pages
 * perfdata_images.c  finding the code perf would use (--symfs, build-id cache)
 * perfdata_import.c  records -> raw tables + meta, then decode, gaps, stats
 *
 * Only little-endian, seekable (non-pipe), uncompressed files are read.
 * Errors: -EBADMSG not perf.data / corrupt / truncated, -ENOTSUP a variant
 * not handled (pipe, big-endian, compressed), -ENOENT, -ENOMEM, -EINVAL;
 * the detail is in sptd_col_perfdata_errmsg(). */
#ifndef SPTD_PERFDATA_LOCAL_H
#define SPTD_PERFDATA_LOCAL_H

#include <stddef.h>
#include <stdint.h>

struct sptd_store;

#include "import-local.h"
#include "sptd_sched.h"

/* CPUs an import can name (per-CPU tables, pseudo CPUs of per-thread
 * buffers) */
#define PD_MAX_CPU 1024

/* header feature bits */
#define PD_FEAT_TRACING_DATA  1
#define PD_FEAT_BUILD_ID      2
#define PD_FEAT_HOSTNAME      3
#define PD_FEAT_OSRELEASE     4
#define PD_FEAT_VERSION       5
#define PD_FEAT_ARCH          6
#define PD_FEAT_NRCPUS        7
#define PD_FEAT_CPUDESC       8
#define PD_FEAT_CPUID         9
#define PD_FEAT_CMDLINE      11
#define PD_FEAT_AUXTRACE     18
#define PD_FEAT_MAX         256

/* One event attribute of the file and the sample ids that name it. */
struct sptd_col_perfdata_attr {
	struct sptd_col_perf_attr event; /* type, config, record layout */
	const uint64_t *ids;    /* borrowed from the file mapping, @nids entries
	                         * (unaligned-safe: read with memcpy) */
	size_t nids;            /* entries at @ids */
};

/* An open perf.data: the whole file mapped read-only. */
struct sptd_col_perfdata {
	const uint8_t *map;     /* file bytes */
	size_t size;            /* file length */
	uint64_t data_off, data_size;   /* the records */
	uint64_t feat_off[PD_FEAT_MAX]; /* feature sections; size 0 absent */
	uint64_t feat_size[PD_FEAT_MAX];
	struct sptd_col_perfdata_attr *attrs; /* one per event */
	size_t nattrs;          /* entries at @attrs */
	int data_size_guessed;  /* header said 0: records read to end of file */
	char err[512];          /* last error, for the user */
};

/* One record handed to a walker.  @data is the record (header included);
 * @payload is the AUXTRACE buffer that follows an AUXTRACE record. */
struct sptd_col_perfdata_rec {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const uint8_t *data;
	const uint8_t *payload; /* AUXTRACE only, else NULL */
	uint64_t payload_len;
	uint64_t offset;        /* file offset of the record */
};

typedef int (*sptd_col_perfdata_rec_fn)(void *ctx, const struct sptd_col_perfdata_rec *rec);

/* ---- perfdata_read.c ----------------------------------------------------- */

/* Open and validate @path (a perf.data file, or a `perf record --kcore`
 * directory holding "data").  *out freed with sptd_col_perfdata_close().
 * On failure *out is NULL and @err (may be NULL) gets the reason. */
int sptd_col_perfdata_open(const char *path, struct sptd_col_perfdata **out,
                           char *err, size_t errlen);
/* Accepts NULL. */
void sptd_col_perfdata_close(struct sptd_col_perfdata *pd);
/* The last error's detail ("" none). */
const char *sptd_col_perfdata_errmsg(const struct sptd_col_perfdata *pd);
/* Call @fn for every record of the data section in file order; stops at
 * the first negative return.  -EBADMSG on a truncated or corrupt record
 * (the records before it were delivered), -ENOTSUP on compressed data. */
int sptd_col_perfdata_walk(struct sptd_col_perfdata *pd, sptd_col_perfdata_rec_fn fn,
                           void *ctx);
/* Feature section @feat: borrowed bytes and length, or NULL when absent. */
const uint8_t *sptd_col_perfdata_feature(const struct sptd_col_perfdata *pd, int feat,
                                         size_t *len);
/* A perf_header_string feature (hostname, osrelease, cpuid, ...) copied
 * into @buf; -ENOENT absent, -EBADMSG malformed. */
int sptd_col_perfdata_feature_string(const struct sptd_col_perfdata *pd, int feat,
                                     char *buf, size_t len);
/* The CMDLINE feature joined with spaces into @buf. */
int sptd_col_perfdata_cmdline(const struct sptd_col_perfdata *pd, char *buf, size_t len);
/* Little-endian loads from possibly unaligned bytes. */
uint64_t sptd_col_pd_u64(const uint8_t *p);
uint32_t sptd_col_pd_u32(const uint8_t *p);

/* ---- perfdata_sample.c --------------------------------------------------- */

/* The attr whose ids contain @id, or the only attr; NULL unknown. */
const struct sptd_col_perfdata_attr *
sptd_col_perfdata_attr_by_id(const struct sptd_col_perfdata *pd, uint64_t id);
/* Decode kernel record @rec (type below SPTD_PERF_RECORD_USER_START) with
 * collector/perf's record parser: a SAMPLE with the layout of the event
 * its id names (*@attr that event, NULL when the file names none: @r then
 * holds the header only), any other record with the layout every event of
 * a file shares (the first attr's: perf requires it to find the id).
 * 0, -EINVAL, -EBADMSG (a record that does not fit its layout). */
int sptd_col_perfdata_rec_parse(const struct sptd_col_perfdata *pd,
                                const struct sptd_col_perfdata_rec *rec,
                                struct sptd_col_perf_record *r,
                                const struct sptd_col_perfdata_attr **attr);

/* Where sched_switch keeps its fields (offsets into the raw record). */
struct sptd_col_pd_switch_fmt {
	uint64_t id;                 /* tracepoint id (attr.config) */
	int prev_comm, prev_pid, prev_prio, prev_state; /* offsets */
	int next_comm, next_pid, next_prio;
	int prev_state_size;         /* 4 or 8 */
	int found;                   /* 1: taken from the file's format text */
	struct sptd_sched_states *states; /* prev_state letters, NULL: none
	                              * (out of memory) */
};
/* Offsets from the TRACING_DATA feature's sched:sched_switch format, or
 * the layout every kernel since 4.x uses when the file has none; the
 * prev_state letters from its print fmt (the 4.14+ ones without).  Free
 * with sptd_col_perfdata_switch_fmt_fini. */
void sptd_col_perfdata_switch_fmt(const struct sptd_col_perfdata *pd,
                                  struct sptd_col_pd_switch_fmt *fmt);
void sptd_col_perfdata_switch_fmt_fini(struct sptd_col_pd_switch_fmt *fmt);
/* What one sched_switch record says. */
struct sptd_col_pd_sw_fields {
	int prev, next;                  /* tids */
	char prev_comm[17], next_comm[17];
	char state[4];                   /* prev's state as sched_switch prints it, "" unknown */
};
/* Read the sched_switch record @raw (@raw_size bytes) by @f's offsets into
 * @out: 1, or 0 when a field would lie outside the record. */
int sptd_col_pd_switch_read(const struct sptd_col_pd_switch_fmt *f, const uint8_t *raw,
                            uint32_t raw_size, struct sptd_col_pd_sw_fields *out);

/* ---- perfdata_switches.c ------------------------------------------------- */

/* Where a context switch was learnt, worst first: one source is stored. */
enum sptd_col_pd_sw_source {
	SPTD_COL_PD_SW_ITRACE = 1, SPTD_COL_PD_SW_TASK, SPTD_COL_PD_SW_CPU_WIDE,
	SPTD_COL_PD_SW_TRACEPOINT
};

/* One context-switch fact before deduplication. */
struct sptd_col_pd_switch {
	int64_t ts;          /* perf clock ns */
	int cpu;
	int prev, next;      /* tids; prev -1: not known (an IN record) */
	int other;           /* an IN record's previous task from the record, -1 none */
	int source;          /* enum sptd_col_pd_sw_source */
	size_t seq;          /* order in the file: ties keep it */
	char comm[16];       /* next task's comm, "" unknown */
	char prev_state[4];  /* the state prev left in, "" unknown */
};

/* The @n switches of @sw (sorted here) into raw_switch: the best source
 * only, per CPU in time order, an IN/OUT pair as one switch; then one
 * switch at @t_min onto each per-thread buffer's task (@cpu_tid[cpu] > 0,
 * @ncpu entries).  *@count gets the switches stored.  0 or -errno. */
int sptd_col_pd_switches_store(struct sptd_store *st, struct sptd_col_pd_switch *sw, size_t n,
                               const int *cpu_tid, int ncpu, int64_t t_min, int64_t *count);

/* A task's exit (PERF_RECORD_EXIT). */
struct sptd_col_pd_exit {
	int64_t ts;          /* perf clock ns */
	int pid, tid;
	size_t best;         /* (sptd_col_pd_switches_exits' own) */
};
/* Each exited task's first switch out at or after its exit, when the
 * source did not say the state (perf's SWITCH records), leaves it dead:
 * "Z" for a process's main thread (a zombie until reaped), "X" for another
 * thread, as the kernel's sched_switch says.  Sorts @exits. */
void sptd_col_pd_switches_exits(struct sptd_col_pd_switch *sw, size_t n,
                                struct sptd_col_pd_exit *exits, size_t nexits);

/* Every name a task had, with when (a perf.data is in per-CPU chunks, not
 * in time order). */
struct sptd_col_pd_name;
struct sptd_col_pd_names {
	struct sptd_col_pd_name *v;
	size_t n, cap;
};
/* @tid was named @comm at @ts (perf clock ns, 0 unknown).  0 or -ENOMEM. */
int sptd_col_pd_names_add(struct sptd_col_pd_names *names, int64_t ts, int tid,
                          const char *comm);
/* Each task's latest name as its last raw_task row, which derive takes
 * over every earlier one.  0 or -errno. */
int sptd_col_pd_names_store(struct sptd_col_pd_names *names, struct sptd_store *st);
void sptd_col_pd_names_free(struct sptd_col_pd_names *names);

/* ---- perfdata_tracing.c -------------------------------------------------- */

/* Wakeup and interrupt tracepoint samples (sched_waking, sched_wakeup,
 * sched_wakeup_new, irq_handler_entry/exit, softirq_entry/exit) kept as
 * ftrace pages, with their formats from TRACING_DATA. */
struct sptd_col_pd_tracing;
/* Read @pd's TRACING_DATA: a file without it (or with formats that do not
 * parse) gives a collector that keeps nothing.  0, -EINVAL, -ENOMEM. */
int sptd_col_pd_tracing_create(const struct sptd_col_perfdata *pd,
                               struct sptd_col_pd_tracing **out);
/* Keep the RAW field of a tracepoint sample of id @config taken at @ts
 * (perf clock ns) on @cpu: 1 kept, 0 not a wanted tracepoint (or a record
 * no ring could hold), -EINVAL, -ENOMEM. */
int sptd_col_pd_tracing_add(struct sptd_col_pd_tracing *t, uint64_t config, int64_t ts,
                            int cpu, const void *raw, uint32_t raw_size);
/* The kept records as raw_ftrace_page rows (per CPU, time order) and the
 * formats needed to read them as raw_ftrace_format rows: the records
 * stored, or -errno.  Of sched_waking and sched_wakeup only the first is
 * kept where the file has both, as the recorder enables only one. */
int64_t sptd_col_pd_tracing_store(struct sptd_col_pd_tracing *t, struct sptd_store *st);
void sptd_col_pd_tracing_destroy(struct sptd_col_pd_tracing *t);

/* ---- perfdata_images.c --------------------------------------------------- */

/* Files loaded for the mappings of one import, the latest
 * SPTD_COL_PD_LOADED_MAX: a library has two to four mapping records in a
 * perf.data (a crafted one thousands of the same file), and each load
 * parses the whole symbol table (and may CRC a debuglink candidate).
 * Zero-initialised; sptd_col_perfdata_loaded_fini() frees it. */
#define SPTD_COL_PD_LOADED_MAX 16

struct sptd_col_pd_loaded {
	struct {
		char *path;                   /* the file (NULL: slot free) */
		struct sptd_dec_symfile *sf;  /* its symbols and segments */
		int err;                      /* or why it could not be loaded */
	} slot[SPTD_COL_PD_LOADED_MAX];
	size_t next;                          /* the slot given up next */
};

/* The symbols of @path, loaded now unless @c has them (borrowed: valid
 * until the next call or fini): 0 and *@sf, or the load's error. */
int sptd_col_perfdata_load(struct sptd_col_pd_loaded *c, const char *path,
                           struct sptd_dec_symfile **sf);
void sptd_col_perfdata_loaded_fini(struct sptd_col_pd_loaded *c);

/* Resolve @recorded (with hex @build_id or NULL) to a readable file, as
 * perf does: symfs + path, build-id cache, the recorded path itself; a
 * candidate whose build-id differs from @build_id is refused.  1 and
 * @out filled (absolute), 0 not found.  Kernel names ("[kernel.kallsyms]")
 * resolve to DIR/kcore when @paths->kcore is set. */
int sptd_col_perfdata_find_image(const struct sptd_col_pd_paths *paths,
                                 const char *recorded, const char *build_id,
                                 char *out, size_t outlen);

#endif /* SPTD_PERFDATA_LOCAL_H */
