/* sptd_col_perf.h — the kernel's perf interface, for the rest of collector/:
 * the perf ABI under sysptd's own names, opening events and mapping their
 * rings through a replaceable syscall table, ring and AUX unwrap, and the
 * one parser of perf records (the sampler's rings, the PT sideband and
 * perf.data files all go through it).  Only collector/perf includes
 * linux/perf_event.h; abi.c ties every value below to the kernel's.
 *
 * Divisions: ABI names · syscall table · events · mapped rings · ring
 * arithmetic · records · CPU lists · the sampler's samples · AUX ring ·
 * the PT sideband. */
#ifndef SPTD_COL_PERF_H
#define SPTD_COL_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- the perf ABI under sysptd's names (abi.c asserts each) --------------- */

/* Record types (perf_event_header.type).  Below 64 the kernel's; from 64 on
 * perf's own, found only in perf.data files. */
#define SPTD_PERF_RECORD_MMAP             1u
#define SPTD_PERF_RECORD_LOST             2u
#define SPTD_PERF_RECORD_COMM             3u
#define SPTD_PERF_RECORD_EXIT             4u
#define SPTD_PERF_RECORD_THROTTLE         5u
#define SPTD_PERF_RECORD_UNTHROTTLE       6u
#define SPTD_PERF_RECORD_FORK             7u
#define SPTD_PERF_RECORD_READ             8u
#define SPTD_PERF_RECORD_SAMPLE           9u
#define SPTD_PERF_RECORD_MMAP2           10u
#define SPTD_PERF_RECORD_AUX             11u
#define SPTD_PERF_RECORD_ITRACE_START    12u
#define SPTD_PERF_RECORD_LOST_SAMPLES    13u
#define SPTD_PERF_RECORD_SWITCH          14u
#define SPTD_PERF_RECORD_SWITCH_CPU_WIDE 15u
#define SPTD_PERF_RECORD_KSYMBOL         17u  /* kernel code (BPF JIT, trampolines) added/removed */
#define SPTD_PERF_RECORD_TEXT_POKE       20u  /* kernel text rewritten (Linux 5.9+) */
#define SPTD_PERF_RECORD_USER_START      64u  /* first of perf's own types */
#define SPTD_PERF_RECORD_FINISHED_ROUND  68u  /* perf.data: a flush point */
#define SPTD_PERF_RECORD_AUXTRACE_INFO   70u  /* perf.data: AUX PMU setup */
#define SPTD_PERF_RECORD_AUXTRACE        71u  /* perf.data: AUX bytes follow */
#define SPTD_PERF_RECORD_AUXTRACE_ERROR  72u  /* perf.data: decoder error */
#define SPTD_PERF_RECORD_TIME_CONV       79u  /* perf.data: TSC conversion */
#define SPTD_PERF_RECORD_COMPRESSED      81u  /* perf.data: zstd records */

/* sample_type bits: which fields a SAMPLE (and the sample_id trailer) has. */
#define SPTD_PERF_SAMPLE_IP          (1ull << 0)
#define SPTD_PERF_SAMPLE_TID         (1ull << 1)
#define SPTD_PERF_SAMPLE_TIME        (1ull << 2)
#define SPTD_PERF_SAMPLE_ADDR        (1ull << 3)
#define SPTD_PERF_SAMPLE_READ        (1ull << 4)
#define SPTD_PERF_SAMPLE_CALLCHAIN   (1ull << 5)
#define SPTD_PERF_SAMPLE_ID          (1ull << 6)
#define SPTD_PERF_SAMPLE_CPU         (1ull << 7)
#define SPTD_PERF_SAMPLE_PERIOD      (1ull << 8)
#define SPTD_PERF_SAMPLE_STREAM_ID   (1ull << 9)
#define SPTD_PERF_SAMPLE_RAW         (1ull << 10)
#define SPTD_PERF_SAMPLE_BRANCH_STACK (1ull << 11)
#define SPTD_PERF_SAMPLE_REGS_USER   (1ull << 12) /* the user registers (a mask) */
#define SPTD_PERF_SAMPLE_STACK_USER  (1ull << 13) /* a copy of the user stack */
#define SPTD_PERF_SAMPLE_IDENTIFIER  (1ull << 16)

/* read_format bits: the layout of a SAMPLE's READ part. */
#define SPTD_PERF_FORMAT_TOTAL_TIME_ENABLED (1ull << 0)
#define SPTD_PERF_FORMAT_TOTAL_TIME_RUNNING (1ull << 1)
#define SPTD_PERF_FORMAT_ID                 (1ull << 2)
#define SPTD_PERF_FORMAT_GROUP              (1ull << 3)
#define SPTD_PERF_FORMAT_LOST               (1ull << 4)

/* perf_event_header.misc bits.  Bit 13 and bit 14 mean different things
 * for different record types (the kernel reuses them). */
#define SPTD_PERF_MISC_CPUMODE_MASK  0x7u         /* where a SAMPLE's ip was */
#define SPTD_PERF_MISC_KERNEL        0x1u
#define SPTD_PERF_MISC_USER          0x2u
#define SPTD_PERF_MISC_MMAP_DATA     (1u << 13)   /* MMAP*: not executable */
#define SPTD_PERF_MISC_COMM_EXEC     (1u << 13)   /* COMM: from exec() */
#define SPTD_PERF_MISC_SWITCH_OUT    (1u << 13)   /* SWITCH*: switched out */
#define SPTD_PERF_MISC_SWITCH_OUT_PREEMPT (1u << 14) /* SWITCH* out: still runnable
                                                * (preempted; Linux 4.17+) */
#define SPTD_PERF_MISC_MMAP_BUILD_ID (1u << 14)   /* MMAP2: build id, not inode */
#define SPTD_PERF_MISC_BUILD_ID_SIZE (1u << 15)   /* perf.data BUILD_ID feature:
                                                   * size byte valid (perf's) */

/* AUX record flags. */
#define SPTD_PERF_AUX_FLAG_TRUNCATED 0x01u  /* the AUX ring was full: data lost */
#define SPTD_PERF_AUX_FLAG_OVERWRITE 0x02u  /* snapshot mode */
#define SPTD_PERF_AUX_FLAG_PARTIAL   0x04u  /* the record has gaps */
#define SPTD_PERF_AUX_FLAG_COLLISION 0x08u  /* sample collided with another */

/* Call-chain context markers: an entry at or above SPTD_PERF_CONTEXT_MAX
 * is a marker saying where the entries after it come from. */
#define SPTD_PERF_CONTEXT_HV           ((uint64_t)-32)
#define SPTD_PERF_CONTEXT_KERNEL       ((uint64_t)-128)
#define SPTD_PERF_CONTEXT_USER         ((uint64_t)-512)
#define SPTD_PERF_CONTEXT_GUEST        ((uint64_t)-2048)
#define SPTD_PERF_CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define SPTD_PERF_CONTEXT_GUEST_USER   ((uint64_t)-2560)
#define SPTD_PERF_CONTEXT_MAX          ((uint64_t)-4095)

/* Event types and the generic events sysptd opens. */
#define SPTD_PERF_TYPE_HARDWARE      0u
#define SPTD_PERF_TYPE_SOFTWARE      1u
#define SPTD_PERF_TYPE_TRACEPOINT    2u
#define SPTD_PERF_TYPE_BREAKPOINT    5u
/* Hardware breakpoint kinds (bp_type) */
#define SPTD_PERF_BP_R  1u   /* data read */
#define SPTD_PERF_BP_W  2u   /* data write */
#define SPTD_PERF_BP_RW 3u   /* data read or write */
#define SPTD_PERF_BP_X  4u   /* instruction execution */
#define SPTD_PERF_COUNT_HW_CPU_CYCLES 0u   /* HARDWARE */
#define SPTD_PERF_COUNT_SW_CPU_CLOCK 0u    /* SOFTWARE: the sampling clock */
#define SPTD_PERF_COUNT_SW_DUMMY     9u    /* SOFTWARE: sideband only */

/* aux_action bits (Linux 6.13: the u32 after aux_sample_size, where older
 * headers have __reserved_3). */
#define SPTD_PERF_AUX_START_PAUSED (1u << 0)  /* start AUX tracing paused */
#define SPTD_PERF_AUX_PAUSE        (1u << 1)  /* on overflow, pause AUX tracing */
#define SPTD_PERF_AUX_RESUME       (1u << 2)  /* on overflow, resume AUX tracing */

/* ---- perf syscalls through a replaceable table (sys.c) ------------------- */

struct perf_event_attr;
struct sptd_col_sys {
	/* perf_event_open(2): an fd, or -1 and errno */
	int (*perf_event_open)(struct perf_event_attr *attr, pid_t pid, int cpu,
	                       int group_fd, unsigned long flags);
	/* mmap(2): the mapping, or MAP_FAILED and errno */
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	/* munmap(2) */
	int (*munmap)(void *addr, size_t len);
	/* ioctl(2) on a perf event fd: 0, or -1 and errno */
	int (*ioctl)(int fd, unsigned long req, unsigned long arg);
	/* close(2) */
	int (*close)(int fd);
	/* read a whole small file (sysfs, procfs) into @buf, NUL-terminated;
	 * returns its length or -errno */
	ssize_t (*read_file)(const char *path, char *buf, size_t len);
	/* the time stamp counter now (rdtsc; where there is none, CLOCK_MONOTONIC
	 * ns): what PT stamps its trace with, read to relate it to the clocks */
	uint64_t (*tsc)(void);
};
/* The table in use; tests assign their fakes to its members.  The sysptd
 * program exports it (collector/CMakeLists.txt), so that the fake PMU
 * preloaded into it (tests/fakepmu/preload.c) can do the same. */
extern struct sptd_col_sys sptd_col_sys;

/* ---- events (event.c) ------------------------------------------------------ */

/* Bits of sptd_col_perf_event.flags: the perf_event_attr flags sysptd uses. */
#define SPTD_PERF_EV_DISABLED       (1u << 0)  /* open disabled; enable later */
#define SPTD_PERF_EV_FREQ           (1u << 1)  /* @period is a frequency (Hz) */
#define SPTD_PERF_EV_EXCLUDE_KERNEL (1u << 2)  /* user mode only */
#define SPTD_PERF_EV_EXCLUDE_HV     (1u << 3)  /* not in the hypervisor */
#define SPTD_PERF_EV_EXCLUDE_CALLCHAIN_KERNEL (1u << 4) /* user call chains only */
#define SPTD_PERF_EV_SAMPLE_ID_ALL  (1u << 5)  /* sample_id trailer on every record */
#define SPTD_PERF_EV_WRITE_BACKWARD (1u << 6)  /* overwrite ring, newest first */
#define SPTD_PERF_EV_MMAP           (1u << 7)  /* MMAP records (executable maps) */
#define SPTD_PERF_EV_MMAP2          (1u << 8)  /* ... as MMAP2 */
#define SPTD_PERF_EV_COMM           (1u << 9)  /* COMM records */
#define SPTD_PERF_EV_COMM_EXEC      (1u << 10) /* COMM flags exec */
#define SPTD_PERF_EV_TASK           (1u << 11) /* FORK/EXIT records */
#define SPTD_PERF_EV_CONTEXT_SWITCH (1u << 12) /* SWITCH(_CPU_WIDE) records */
#define SPTD_PERF_EV_WATERMARK      (1u << 13) /* @wakeup counts bytes */
#define SPTD_PERF_EV_USE_CLOCKID    (1u << 14) /* times on @clockid */
#define SPTD_PERF_EV_BUILD_ID       (1u << 15) /* MMAP2 carries the build id
                                                * (Linux 5.12+) */
#define SPTD_PERF_EV_KSYMBOL        (1u << 16) /* KSYMBOL records (Linux 5.1+) */
#define SPTD_PERF_EV_TEXT_POKE      (1u << 17) /* TEXT_POKE records (Linux 5.9+) */

/* One perf event as sysptd asks for it; sptd_col_perf_event_open() turns
 * it into a perf_event_attr.  Zero-initialise and set what matters. */
struct sptd_col_perf_event {
	uint32_t type;           /* SPTD_PERF_TYPE_*, or a PMU's dynamic type
	                          * (sptd_col_perf_pmu_type) */
	uint64_t config[3];      /* config, config1, config2 (tracepoint: its id) */
	const char *config1_path; /* not NULL: config1 is this string's address
	                          * (the uprobe PMU's uprobe_path; config[2] is
	                          * the probe's file offset); read during the open */
	uint64_t period;         /* sample_period, or sample_freq with EV_FREQ */
	uint64_t sample_type;    /* SPTD_PERF_SAMPLE_* */
	uint64_t read_format;    /* SPTD_PERF_FORMAT_* */
	uint32_t flags;          /* SPTD_PERF_EV_* */
	uint32_t wakeup;         /* wakeup_events, or wakeup_watermark bytes
	                          * with EV_WATERMARK; 0: the kernel's default */
	int clockid;             /* with EV_USE_CLOCKID: a CLOCK_* id */
	uint16_t max_stack;      /* sample_max_stack; 0: the kernel's default */
	uint32_t aux_action;     /* SPTD_PERF_AUX_* (AUX pause, Linux 6.13) */
	uint32_t bp_type;        /* BREAKPOINT: SPTD_PERF_BP_*; bp_addr is
	                          * config[1], bp_len config[2] */
	uint64_t regs_user;      /* SAMPLE_REGS_USER: which registers (the
	                          * arch's perf_regs numbering) */
	uint32_t stack_user;     /* SAMPLE_STACK_USER: bytes of user stack per
	                          * sample (a multiple of 8) */
};

/* A tracepoint event: @ev zeroed, type TRACEPOINT, config[0] = @id (the
 * tracepoint's id, sptd_sched_event_exists), @period 1. */
void sptd_col_perf_event_tracepoint(struct sptd_col_perf_event *ev, uint64_t id);
/* A uprobe PMU event on @path at file offset @offset (entry, not return):
 * @ev zeroed, type @pmu_type (sptd_col_perf_pmu_type("uprobe")), @period 1.
 * @path must stay valid until the open. */
void sptd_col_perf_event_uprobe(struct sptd_col_perf_event *ev, uint32_t pmu_type,
                                const char *path, uint64_t offset);
/* A hardware breakpoint (debug register) on @len bytes at @addr: @ev
 * zeroed, type BREAKPOINT, bp_type @bp_type (SPTD_PERF_BP_*; X: @len is
 * sizeof(long) as the kernel wants), @period 1. */
void sptd_col_perf_event_breakpoint(struct sptd_col_perf_event *ev, uint32_t bp_type,
                                    uint64_t addr, uint64_t len);
/* Open @ev for @pid (-1: every task) on @cpu (-1: any), in the group of
 * @group_fd (-1: none; with @ev->aux_action, the AUX event to pause or
 * resume), close-on-exec.  Returns the fd, or the kernel's -errno (-EIO
 * when it gave none): -EINVAL attributes refused (also: aux_action on a
 * kernel before 6.13), -EACCES/-EPERM not allowed, -ENOENT/-ENODEV no such
 * event, -EOPNOTSUPP, -EMFILE, -EBUSY; -EINVAL for a NULL @ev. */
int sptd_col_perf_event_open(const struct sptd_col_perf_event *ev, pid_t pid, int cpu,
                             int group_fd);
/* PERF_EVENT_IOC_ENABLE / _DISABLE.  0 or -errno (-EBADF for fd < 0). */
int sptd_col_perf_event_enable(int fd);
int sptd_col_perf_event_disable(int fd);
/* PERF_EVENT_IOC_REFRESH: enable a sampling event for @overflows
 * overflows, after which the kernel disables it again.  0 or -errno
 * (-EBADF for fd < 0, -EINVAL not a sampling event or @overflows 0). */
int sptd_col_perf_event_refresh(int fd, int overflows);
/* PERF_EVENT_IOC_PAUSE_OUTPUT: stop (@paused 1) or restart (0) writing
 * into the event's ring.  0 or -errno (-EBADF for fd < 0). */
int sptd_col_perf_event_pause_output(int fd, int paused);
/* PERF_EVENT_IOC_SET_FILTER: an ftrace filter ("irq == 36") on a
 * tracepoint event.  0, -EINVAL for a NULL @filter or one the kernel
 * refuses, -EBADF for fd < 0, or the kernel's -errno. */
int sptd_col_perf_event_set_filter(int fd, const char *filter);
/* The type of the PMU @name from /sys/bus/event_source/devices/NAME/type
 * (through sptd_col_sys.read_file).  >= 0, -EINVAL bad @name, -ENOENT no
 * such PMU (or the read's -errno), -EBADMSG not a number. */
int sptd_col_perf_pmu_type(const char *name);

/* ---- mapped rings (ring_map.c) -------------------------------------------- */

/* Gets each whole record of a ring walk, @len bytes at @rec (header
 * included; unwrapped into a bounce buffer when it wraps, so @rec is
 * borrowed for the call only).  A negative return stops the walk. */
typedef int (*sptd_col_record_fn)(void *ctx, const void *rec, size_t len);

/* An event's mapping: the control page, the data ring after it, and the
 * AUX ring when one is mapped.  Zero-initialise before mapping. */
struct sptd_col_perf_ring {
	void *base;              /* control page + data pages; NULL: unmapped */
	size_t len;              /* bytes mapped at @base */
	void *aux;               /* AUX ring; NULL: none */
	size_t aux_len;          /* bytes mapped at @aux */
	size_t page;             /* page size: the control page's length */
};

/* The perf clock as the control page describes it: ns = time_zero +
 * (tsc * time_mult >> time_shift) when cap_user_time_zero. */
struct sptd_col_perf_clock {
	int cap_user_time;       /* time_mult/shift/offset are valid */
	int cap_user_time_zero;  /* time_zero is valid: TSC -> perf clock */
	uint32_t time_mult;      /* multiplier of the TSC */
	uint16_t time_shift;     /* right shift after multiplying */
	uint64_t time_zero;      /* perf clock ns at TSC 0 */
	uint64_t time_offset;    /* ns offset of the event's enabled time */
};

/* Map the control page and @data_pages data pages (a power of two) of
 * event @fd into @ring: @writable for a ring whose reader moves data_tail
 * (forward mode), read-only for an overwrite ring (write_backward, or one
 * only read while paused).  0, -EINVAL, or mmap's -errno (-EPERM: over
 * kernel.perf_event_mlock_kb, -ENOMEM). */
int sptd_col_perf_ring_map(struct sptd_col_perf_ring *ring, int fd, size_t data_pages,
                           int writable);
/* Map an AUX ring of @aux_bytes (a power of two pages) behind @ring's data
 * pages: sets aux_offset/aux_size in the control page (so @ring must be
 * writable), then maps; read-only puts the AUX ring in overwrite
 * (snapshot) mode.  0, -EINVAL, or mmap's -errno. */
int sptd_col_perf_ring_map_aux(struct sptd_col_perf_ring *ring, int fd, size_t aux_bytes,
                               int writable);
/* Unmap both rings; accepts NULL and a zeroed ring. */
void sptd_col_perf_ring_unmap(struct sptd_col_perf_ring *ring);
/* The data area (borrowed while mapped) and its size in *@size; NULL when
 * @ring is not mapped. */
const void *sptd_col_perf_ring_data(const struct sptd_col_perf_ring *ring, uint64_t *size);
/* data_head, read with acquire order (0 when unmapped). */
uint64_t sptd_col_perf_ring_head(const struct sptd_col_perf_ring *ring);
/* aux_head, read with acquire order (0 when unmapped). */
uint64_t sptd_col_perf_ring_aux_head(const struct sptd_col_perf_ring *ring);
/* The clock fields of the control page, read under its seqlock.  0,
 * -EINVAL when unmapped. */
int sptd_col_perf_ring_clock(const struct sptd_col_perf_ring *ring,
                             struct sptd_col_perf_clock *clock);
/* Forward ring: bytes between data_tail and data_head (at most the data
 * size). */
uint64_t sptd_col_perf_ring_unread(const struct sptd_col_perf_ring *ring);
/* Forward ring: copy the oldest unread bytes, at most @cap, into @dst and
 * mark them read (data_tail moves past them; bytes the kernel already
 * overwrote are skipped).  Returns the bytes copied, -EINVAL. */
int64_t sptd_col_perf_ring_consume(struct sptd_col_perf_ring *ring, void *dst, uint64_t cap);
/* Forward ring: sptd_col_ring_walk_forward() from data_tail to data_head,
 * then data_tail = data_head (even when @fn failed: those records are
 * gone).  Returns as the walk; -EINVAL when unmapped or @fn is NULL. */
int sptd_col_perf_ring_drain(struct sptd_col_perf_ring *ring, sptd_col_record_fn fn,
                             void *ctx);

/* ---- perf ring arithmetic (ring.c) --------------------------------------- */

/* Copy the @len bytes that end at @head out of a ring of @size bytes (a
 * power of two) at @base into @dst, unwrapping.  @len <= @size. */
void sptd_col_ring_copy(const void *base, uint64_t size, uint64_t head,
                        uint64_t len, void *dst);

/* Walk the records of a write_backward ring: the newest starts at @head
 * (as the kernel left data_head), older ones follow; stops at a zero header,
 * at a record that would cross the oldest byte, or after @size bytes.
 * Returns the count, -EINVAL, -ENOMEM, or @fn's error. */
int sptd_col_ring_walk_backward(const void *base, uint64_t size, uint64_t head,
                                sptd_col_record_fn fn, void *ctx);
/* The records of a write_backward ring (as walked above), oldest first and
 * back to back, into *@buf (grown with realloc; *@cap its size; the caller
 * frees it).  Returns the bytes written, -EINVAL, -ENOMEM. */
int64_t sptd_col_ring_copy_backward(const void *base, uint64_t size, uint64_t head,
                                    unsigned char **buf, size_t *cap);
/* Forward ring: the records from @tail up to @head, in order; stops at a
 * header shorter than itself or a record that would pass @head.  Returns
 * the count, -EINVAL, -ENOMEM, or @fn's error. */
int sptd_col_ring_walk_forward(const void *base, uint64_t size, uint64_t tail,
                               uint64_t head, sptd_col_record_fn fn, void *ctx);

/* ---- records: the one parser (record.c) ----------------------------------- */

/* What an event's records look like: from its attr (sysptd's own events,
 * or a perf.data file's attrs). */
struct sptd_col_perf_layout {
	uint64_t sample_type;    /* SPTD_PERF_SAMPLE_* */
	uint64_t read_format;    /* SPTD_PERF_FORMAT_*: a SAMPLE's READ part */
	int sample_id_all;       /* 1: non-SAMPLE kernel records end in the
	                          * sample_id trailer */
	uint64_t regs_user;      /* attr.sample_regs_user: the registers a
	                          * SAMPLE_REGS_USER part holds */
};

/* The sample_id fields: the trailer of a non-SAMPLE record, or the same
 * fields of a SAMPLE. */
struct sptd_col_perf_id {
	int present;             /* 1: the layout gave the record these fields */
	int pid, tid;            /* TID; -1 absent */
	int has_time;            /* 1: @time was in the record */
	uint64_t time;           /* TIME: perf clock (or attr clockid) ns; 0 absent */
	uint64_t id;             /* ID or IDENTIFIER: the event's id; 0 absent */
	uint64_t stream_id;      /* STREAM_ID; 0 absent */
	int cpu;                 /* CPU; -1 absent */
};

/* A SAMPLE's READ part (read_format). */
struct sptd_col_perf_read {
	uint64_t nr;             /* counters: 1, or the group's members (GROUP) */
	uint64_t time_enabled;   /* TOTAL_TIME_ENABLED; 0 absent */
	uint64_t time_running;   /* TOTAL_TIME_RUNNING; 0 absent */
	uint64_t value, id, lost; /* the (first) counter: its count, ID, LOST */
	const void *group;       /* GROUP: @nr entries of @stride bytes, u64
	                          * value, [u64 id], [u64 lost], borrowed from
	                          * the record (sptd_col_perf_u64); else NULL */
	size_t stride;           /* bytes per @group entry (8, 16 or 24) */
};

/* A SAMPLE's fields beyond the sample_id ones.  REGS_USER and STACK_USER
 * are parsed where no BRANCH_STACK stands before them; fields after
 * STACK_USER are not parsed. */
struct sptd_col_perf_sample {
	uint64_t ip;             /* IP */
	uint64_t addr;           /* ADDR */
	uint64_t period;         /* PERIOD */
	struct sptd_col_perf_read read; /* READ */
	uint64_t nr;             /* CALLCHAIN: entries, PERF_CONTEXT_* markers
	                          * included */
	const void *callchain;   /* @nr u64s, borrowed from the record (maybe
	                          * unaligned: sptd_col_perf_u64) */
	uint32_t raw_size;       /* RAW: bytes at @raw */
	const void *raw;         /* RAW: the tracepoint's record, borrowed */
	uint64_t regs_abi;       /* REGS_USER: PERF_SAMPLE_REGS_ABI_*; 0 none
	                          * (a kernel thread) */
	uint32_t nregs;          /* REGS_USER: u64s at @regs (popcount of the
	                          * layout's regs_user); 0 with abi 0 */
	const void *regs;        /* REGS_USER: the values, borrowed (maybe
	                          * unaligned: sptd_col_perf_u64) */
	uint64_t stack_size;     /* STACK_USER: bytes the kernel reserved */
	uint64_t stack_dyn;      /* STACK_USER: bytes of @stack it filled */
	const void *stack;       /* STACK_USER: the copy from the user stack
	                          * pointer up, borrowed; NULL none */
};

/* One perf record, decoded.  Fields the type does not have are 0, or -1
 * for pids, tids and CPUs.  Pointers borrow from the record's bytes. */
struct sptd_col_perf_record {
	uint32_t type;           /* SPTD_PERF_RECORD_* */
	uint16_t misc;           /* SPTD_PERF_MISC_* bits */
	uint16_t size;           /* bytes, header included */
	struct sptd_col_perf_id id; /* sample_id trailer / SAMPLE's own */
	int pid, tid;            /* MMAP, MMAP2, COMM, FORK, EXIT, ITRACE_START */
	int ppid, ptid;          /* FORK, EXIT: the parent */
	uint64_t task_time;      /* FORK, EXIT: the time in the body */
	uint64_t addr, len, pgoff; /* MMAP, MMAP2: the mapping */
	uint32_t maj, min;       /* MMAP2 without a build id: the device */
	uint64_t ino, ino_generation; /* MMAP2 without a build id: the inode */
	uint8_t build_id[20];    /* MMAP2 with SPTD_PERF_MISC_MMAP_BUILD_ID */
	uint8_t build_id_size;   /* bytes of @build_id used; 0: none */
	uint32_t prot, flags;    /* MMAP2: PROT_*, MAP_* */
	const char *name;        /* MMAP/MMAP2 file name, COMM comm: a string
	                          * NUL-terminated inside the body */
	int switch_out;          /* SWITCH, SWITCH_CPU_WIDE: 1 out, 0 in */
	int switch_preempt;      /* out: the task was preempted (runnable); 0 it
	                          * blocked or exited, or a kernel before 4.17 */
	int other_pid, other_tid; /* SWITCH_CPU_WIDE: next (out) / previous (in) */
	uint64_t aux_offset, aux_size, aux_flags; /* AUX (SPTD_PERF_AUX_FLAG_*) */
	uint64_t lost_id;        /* LOST: the id of the event that lost */
	uint64_t lost;           /* LOST: records lost; LOST_SAMPLES: samples */
	/* KSYMBOL: @addr, @len, @name as above, and: */
	uint16_t ksym_type;      /* PERF_RECORD_KSYMBOL_TYPE_* (1 BPF, 2 OOL: trampolines) */
	uint16_t ksym_flags;     /* 1: unregistered (the code is gone) */
	/* TEXT_POKE: at @addr, @poke_old_len bytes became @poke_new_len */
	uint16_t poke_old_len, poke_new_len;
	const uint8_t *poke_old; /* the old bytes, then the new ones right
	                          * after (borrowed from the record) */
	const uint8_t *poke_new;
	struct sptd_col_perf_sample sample; /* SAMPLE */
};

/* The record at @buf (@len bytes there, at least its header's size) laid
 * out per @layout into @r.  Kernel records carry the sample_id trailer
 * when @layout->sample_id_all; bodies of types not named above (and of
 * perf's own types, >= 64) are left unparsed.  Nothing is trusted: 0,
 * -EINVAL (NULL argument), -EBADMSG (shorter than a header, a header size
 * below 8 or beyond @len, a body or trailer that does not fit, a string
 * without its NUL, a call chain or READ part longer than the record). */
int sptd_col_perf_record_parse(const void *buf, size_t len,
                               const struct sptd_col_perf_layout *layout,
                               struct sptd_col_perf_record *r);
/* The event id of the SAMPLE at @buf, found from @sample_type's leading
 * bits alone (IDENTIFIER first; else ID after IP, TID, TIME, ADDR): which
 * of several events (perf.data attrs sharing those bits) wrote it.  1 and
 * *@id, 0 when the layout holds no id, -EINVAL, -EBADMSG (too short). */
int sptd_col_perf_sample_event_id(const void *buf, size_t len, uint64_t sample_type,
                                  uint64_t *id);
/* Bytes of the sample_id trailer that @sample_type gives a record. */
size_t sptd_col_perf_id_size(uint64_t sample_type);
/* The @i-th u64 of the (possibly unaligned) array at @p. */
uint64_t sptd_col_perf_u64(const void *p, size_t i);

/* An event as a perf.data file stores its attr: what the importer needs. */
struct sptd_col_perf_attr {
	uint32_t type;           /* SPTD_PERF_TYPE_* or a dynamic PMU type */
	uint64_t config;         /* config (intel_pt: its RTIT_CTL-like bits;
	                          * tracepoint: its id) */
	struct sptd_col_perf_layout layout; /* how its records are laid out */
};
/* Decode a perf_event_attr of @len bytes as stored in a file (little
 * endian, any version from the first, 64 bytes).  0, -EINVAL, -EBADMSG
 * (shorter than 64 bytes). */
int sptd_col_perf_attr_decode(const void *buf, size_t len, struct sptd_col_perf_attr *attr);

/* ---- CPU lists (cpus.c) --------------------------------------------------- */

/* Parse a CPU list as sysfs writes it ("0-3,6\n") into @cpus (up to @max);
 * returns the count.  With @cpus NULL and @max 0 only counts.  -EINVAL
 * when malformed or a CPU is above 65535, -E2BIG when more than @max. */
int sptd_col_cpus_parse(const char *text, int *cpus, int max);
/* The online CPUs (/sys/devices/system/cpu/online), as above; -errno of
 * the read. */
int sptd_col_cpus_online(int *cpus, int max);
/* @cpus as the kernel's hex CPU mask (tracing_cpumask): "2" for CPU 1,
 * "1,00000001" for CPUs 0 and 32.  -EINVAL, -E2BIG (@buf too small). */
int sptd_col_cpumask_hex(const int *cpus, int n, char *buf, size_t len);

/* ---- samples of the sampling source (sample_ring.c) ---------------------- */

/* One sample as read back from a ring. @ips borrowed for the callback only. */
struct sptd_col_sample {
	int64_t ts;              /* ns, CLOCK_MONOTONIC */
	int cpu, pid, tid;       /* where and who */
	uint64_t nr;             /* entries in @ips, PERF_CONTEXT_* markers included */
	const uint64_t *ips;     /* the call chain, innermost first */
	/* --call-graph dwarf: the user state at the sample (borrowed like @ips) */
	uint32_t nregs;          /* entries of @regs: 0, or SPTD_COL_SAMPLER_NREGS */
	const uint64_t *regs;    /* SPTD_COL_SAMPLER_REGS_USER's registers in
	                          * perf_regs order (AX BX CX DX SI DI BP SP IP
	                          * R8..R15 on x86-64) */
	uint64_t stack_len;      /* bytes of @stack the kernel filled */
	const unsigned char *stack; /* the user stack from regs' SP up */
};
typedef int (*sptd_col_sample_fn)(void *ctx, const struct sptd_col_sample *s);

/* The user registers a --call-graph dwarf sample holds (x86-64 perf_regs:
 * AX BX CX DX SI DI BP SP IP, R8..R15; what a DWARF unwinder reads), and
 * how many. */
#define SPTD_COL_SAMPLER_REGS_USER 0xff01ffull
#define SPTD_COL_SAMPLER_NREGS 17

/* The sample_type the sampling source opens its events with (IP | TID |
 * TIME | CPU | CALLCHAIN), which sptd_col_sample_parse() reads. */
uint64_t sptd_col_sampler_sample_type(void);
/* ... and with @user_stack (--call-graph dwarf): | REGS_USER | STACK_USER. */
uint64_t sptd_col_sampler_sample_type_as(int user_stack);
/* Parse one PERF_RECORD_SAMPLE laid out as the sampler asks for it into
 * @s; @s->ips points into @rec (which must be 8-byte aligned).  -ENOMSG
 * for a record of another type, -EBADMSG when truncated, -EINVAL. */
int sptd_col_sample_parse(const void *rec, size_t len, struct sptd_col_sample *s);
/* The same for the layout sptd_col_sampler_sample_type_as(@user_stack)
 * gives; with @user_stack, @s->regs and @s->stack point into @rec too
 * (@s->nregs 0 for a sample without user registers: a kernel thread). */
int sptd_col_sample_parse_as(const void *rec, size_t len, int user_stack,
                             struct sptd_col_sample *s);
/* Deliver the samples of one write_backward ring (@base, @size data bytes,
 * @head as the kernel left data_head) with @from <= ts <= @to to @fn,
 * oldest first.  Returns how many, or the first negative return of @fn,
 * -EINVAL, -ENOMEM. */
int sptd_col_sample_ring_read(const void *base, uint64_t size, uint64_t head,
                              int64_t from, int64_t to, sptd_col_sample_fn fn,
                              void *ctx);
/* The same for a ring of sptd_col_sampler_sample_type_as(@user_stack). */
int sptd_col_sample_ring_read_as(const void *base, uint64_t size, uint64_t head,
                                 int user_stack, int64_t from, int64_t to,
                                 sptd_col_sample_fn fn, void *ctx);

/* ---- AUX ring (aux_ring.c) ---------------------------------------------- */

/* Copy the history out of an overwrite-mode AUX ring of @size bytes (a
 * power of two) at @base whose aux_head is @head (a free-running counter or
 * a position below @size, as the PMU keeps it): everything written, oldest
 * first, whether or not the ring has wrapped.  A ring that wrapped is
 * recognised by @head >= @size or by a non-zero byte after the head (the
 * kernel hands out zeroed pages).  Returns the bytes written to @dst (room
 * for @size), or -EINVAL. */
int64_t sptd_col_pt_aux_copy(const void *base, uint64_t size, uint64_t head, void *dst);

/* Bytes of the ring kept at a re-arm to tell later whether the PMU has
 * gone round once since. */
#define SPTD_COL_PT_AUX_REF 256

/* An overwrite-mode AUX ring as it was when PT was (re-)armed.  The
 * kernel resumes at the old aux_head without clearing anything (a
 * read-only AUX mapping cannot be cleared either), so what a freeze may
 * keep is only what was written since: from @head on.  The newest bytes
 * before @head are the last the PMU overwrites: while they are unchanged
 * it has not gone round since the re-arm. */
struct sptd_col_pt_aux_mark {
	uint64_t head;                          /* aux_head at the re-arm */
	uint64_t ref_len;                       /* bytes in @ref: min(ring, REF) */
	unsigned char ref[SPTD_COL_PT_AUX_REF]; /* ring bytes [head - ref_len, head) */
};

/* Take @mark of the ring (@base, @size bytes, a power of two) whose aux_head
 * is @head, with the PMU stopped, just before it is enabled again.
 * 0 or -EINVAL. */
int sptd_col_pt_aux_mark(const void *base, uint64_t size, uint64_t head,
                         struct sptd_col_pt_aux_mark *mark);
/* Copy what the PMU wrote into the ring since @mark, oldest first, into
 * @dst (room for @size): the bytes from the mark's head to @head, or the
 * whole ring from @head on when the PMU has gone round since (a counter
 * head that moved by @size or more, or a reference byte overwritten; an
 * exactly full ring counts as gone round).  *@wrapped (may be NULL) says
 * which.  Returns the bytes copied or -EINVAL.  Never returns bytes from
 * before the mark: where the reference cannot tell (the PMU rewrote it
 * with identical bytes), older bytes are lost, not stale ones kept. */
int64_t sptd_col_pt_aux_copy_since(const void *base, uint64_t size, uint64_t head,
                                   const struct sptd_col_pt_aux_mark *mark, void *dst,
                                   int *wrapped);

/* ---- the PT sideband (sideband.c) ------------------------------------------ */

/* Gets each record of a walk, decoded (borrowed for the call only). */
typedef int (*sptd_col_perf_record_fn)(void *ctx, const struct sptd_col_perf_record *r);

/* The sample_type sysptd gives its sideband events (TID|TIME|CPU). */
uint64_t sptd_col_pt_sideband_sample_type(void);
/* Walk the whole records in @buf (@len bytes, records back to back, as
 * stored in raw_sideband) written with @sample_type and sample_id_all, and
 * hand each to @fn.  Returns the count, -EINVAL, -EBADMSG at a record that
 * is cut short, malformed or of type 0 (records before it were delivered),
 * or @fn's error. */
int sptd_col_pt_sideband_parse(const void *buf, size_t len, uint64_t sample_type,
                               sptd_col_perf_record_fn fn, void *ctx);

#endif /* SPTD_COL_PERF_H */
