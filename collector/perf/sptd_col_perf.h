/* sptd_col_perf.h — the kernel's perf interface, for the rest of collector/:
 * perf syscalls through a replaceable table, ring and AUX unwrap, and the
 * parsing of perf records.  Only collector/perf includes linux/perf_event.h. */
#ifndef SPTD_COL_PERF_H
#define SPTD_COL_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_event_attr;

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

/* ---- CPU lists (cpus.c) --------------------------------------------------- */

/* Parse a CPU list as sysfs writes it ("0-3,6\n") into @cpus (up to @max);
 * returns the count, -EINVAL when malformed. */
int sptd_col_cpus_parse(const char *text, int *cpus, int max);
/* The online CPUs (/sys/devices/system/cpu/online). */
int sptd_col_cpus_online(int *cpus, int max);

/* ---- samples of the sampling source (sample_ring.c) ---------------------- */

/* One sample as read back from a ring. @ips borrowed for the callback only. */
struct sptd_col_sample {
	int64_t ts;              /* ns, CLOCK_MONOTONIC */
	int cpu, pid, tid;
	uint64_t nr;             /* entries in @ips, PERF_CONTEXT_* markers included */
	const uint64_t *ips;
};
typedef int (*sptd_col_sample_fn)(void *ctx, const struct sptd_col_sample *s);

/* Walk the records of a write_backward ring: the newest starts at @head
 * (as the kernel left data_head), older ones follow; stops at a zero header,
 * at a record that would cross the oldest byte, or after @size bytes.
 * @fn gets each record (unwrapped into a bounce buffer when it wraps). */
typedef int (*sptd_col_record_fn)(void *ctx, const void *rec, size_t len);
int sptd_col_ring_walk_backward(const void *base, uint64_t size, uint64_t head,
                                sptd_col_record_fn fn, void *ctx);

/* Parse one PERF_RECORD_SAMPLE laid out as the sampler asks for it
 * (IP | TID | TIME | CPU | CALLCHAIN) into @s; @s->ips points into @rec.
 * -ENOMSG for a record of another type, -EBADMSG when truncated. */
int sptd_col_sample_parse(const void *rec, size_t len, struct sptd_col_sample *s);
/* Deliver the samples of one write_backward ring (@base, @size data bytes,
 * @head as the kernel left data_head) with @from <= ts <= @to to @fn,
 * oldest first.  Returns how many, or the first negative return of @fn,
 * -ENOMEM. */
int sptd_col_sample_ring_read(const void *base, uint64_t size, uint64_t head,
                              int64_t from, int64_t to, sptd_col_sample_fn fn,
                              void *ctx);

/* ---- AUX ring (aux_ring.c) ---------------------------------------------- */

/* Copy the history out of an overwrite-mode AUX ring of @size bytes (a
 * power of two) at @base whose aux_head is @head (a free-running counter or
 * a position below @size, as the PMU keeps it): everything written, oldest
 * first, whether or not the ring has wrapped.  A ring that wrapped is
 * recognised by @head >= @size or by a non-zero byte after the head (the
 * kernel hands out zeroed pages).  Returns the bytes written to @dst (room
 * for @size), or -EINVAL. */
int64_t sptd_col_pt_aux_copy(const void *base, uint64_t size, uint64_t head, void *dst);

/* ---- sideband records (sideband.c) --------------------------------------- */

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

#endif /* SPTD_COL_PERF_H */
