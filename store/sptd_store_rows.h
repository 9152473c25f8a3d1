/* sptd_store_rows.h — part of sptd_store.h (which includes it): the
 * incident's tables in C, one row struct per table, as sptd_store_add
 * takes a row and the readers hand one out (SPTD_STORE_ADD,
 * SPTD_STORE_EACH).  Each struct has a field per column in column order,
 * less an id the store assigns; store/store_tables.c ties each field to
 * its column.  docs/SCHEMA.md says what the columns mean.
 *
 * Arguments: ts may be any int64; dur must be >= 0 (-EINVAL otherwise: a
 * slice open at the end is closed at the window end and flagged); a cpu
 * column that is not nullable rejects cpu < 0.  Name-like strings (process,
 * thread, irq, softirq names, trigger detail, comm) may be NULL and store
 * NULL; identifying strings (meta key/value, trigger kind, state, slice
 * kind, dso path, symbol name, gap reason, stat name, format name/text) may
 * not.  uint64 values (addresses, sizes) are stored as their int64 two's
 * complement: read them back with sptd_store_column_int and cast.
 */
#ifndef SPTD_STORE_ROWS_H
#define SPTD_STORE_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* Every incident table, in schema order (derived, then raw): the order of
 * sptd_store_tables(), of the store's insert statement cache, and the order
 * sptd_store_derived_clear() empties the derived ones in.  raw_file (made
 * on first use, see sptd_store_raw_file_add) is not among them. */
#define SPTD_STORE_TABLE_LIST(X)                                                   \
	X(META, meta) X(TRIGGER, trigger) X(PROCESS, process) X(THREAD, thread)    \
	X(SCHED_SLICE, sched_slice) X(THREAD_STATE, thread_state)                  \
	X(IRQ_SLICE, irq_slice) X(SOFTIRQ_SLICE, softirq_slice) X(SLICE, slice)    \
	X(SYMBOL, symbol) X(DSO, dso) X(SAMPLE, sample) X(CALLSITE, callsite)      \
	X(GAP, gap) X(STATS, stats) X(RAW_FTRACE_PAGE, raw_ftrace_page)            \
	X(RAW_FTRACE_FORMAT, raw_ftrace_format) X(RAW_SAMPLE, raw_sample)          \
	X(RAW_TASK, raw_task) X(RAW_MMAP, raw_mmap) X(RAW_PT, raw_pt)              \
	X(RAW_SIDEBAND, raw_sideband) X(RAW_IMAGE, raw_image)                      \
	X(RAW_SWITCH, raw_switch) X(FTRACE_EVENT, ftrace_event) /* schema 3 */     \
	X(CPU_FREQ, cpu_freq) X(CPU_IDLE, cpu_idle) X(PTWRITE, ptwrite)            \
	X(WATCH_HIT, watch_hit) /* schema 4 */ X(MEM_SAMPLE, mem_sample) X(RAW_SPE, raw_spe) /* 8 */
/* SPTD_STORE_T_GAP, ..., each also as SPTD_STORE_T_OF_gap (for the macros
 * SPTD_STORE_ADD and SPTD_STORE_EACH, which name a table in lower case). */
/* Joins and selections the readers serve like tables (SPTD_STORE_EACH;
 * sptd_store_add refuses them), each with the row struct it hands out:
 * raw_switch rows by ts; raw_image rows with their dso's path; the files
 * decoding must read (mapped_file); the per-CPU stats rows by cpu; each
 * thread's end (thread_exit); callsite rows by id as frames; sample rows
 * and the thread_state rows that hold a stack (--offcpu) as stacks, by ts
 * then id; thread rows by utid with their process (thread_info); watch_hit
 * rows by ts with the thread of their tid (watch_hit_thread). */
#define SPTD_STORE_VIEW_LIST(X)                                                    \
	X(RAW_SWITCH_BY_TS, raw_switch_by_ts) X(RAW_IMAGE_PATH, raw_image_path)    \
	X(MAPPED_FILE, mapped_file) X(CPU_STATS, cpu_stats) X(THREAD_EXIT, thread_exit) \
	X(FRAME, frame) X(SAMPLE_STACK, sample_stack) X(OFFCPU_STACK, offcpu_stack) \
	X(THREAD_INFO, thread_info) X(WATCH_HIT_THREAD, watch_hit_thread)
enum sptd_store_table_id {
#define SPTD_STORE_T_(U, l) SPTD_STORE_T_##U, SPTD_STORE_T_OF_##l = SPTD_STORE_T_##U,
	SPTD_STORE_TABLE_LIST(SPTD_STORE_T_)
	SPTD_STORE_T_COUNT,     /* tables; the views follow */
	SPTD_STORE_T_VIEWS_ = SPTD_STORE_T_COUNT - 1,
	SPTD_STORE_VIEW_LIST(SPTD_STORE_T_)
#undef SPTD_STORE_T_
	SPTD_STORE_T_ALL        /* tables and views */
};

/* slice.kind */
#define SPTD_SLICE_USER     "user"
#define SPTD_SLICE_KERNEL   "kernel"
#define SPTD_SLICE_SYSCALL  "syscall"
#define SPTD_SLICE_IRQ      "irq"
/* The flags of slice, sched_slice, thread_state, irq_slice, softirq_slice,
 * cpu_idle (0: both edges seen). */
#define SPTD_SLICE_F_START_TRUNCATED 0x1 /* began before the data: starts at window/data start */
#define SPTD_SLICE_F_END_TRUNCATED   0x2 /* still open at the end: ends at window/data end */
#define SPTD_SLICE_F_INFERRED        0x4 /* frame created for a return on an empty stack */
#define SPTD_SLICE_F_TAILCALL        0x8 /* entered by a jump that replaced the caller's frame */
#define SPTD_SLICE_F_NO_TIME        0x10 /* trace had no timing packets: ts is order, not time */
/* raw_sample.kind: what took the sample. */
enum {
	SPTD_RAW_SAMPLE_CLOCK = 0,  /* the cpu-clock sampler (NULL in older files) */
	SPTD_RAW_SAMPLE_OFFCPU = 1, /* a sched_switch: the stack of the task
	                             * switched out (--offcpu) */
	SPTD_RAW_SAMPLE_TRIGGER = 2, /* the hit that fired a break=/watch=
	                             * trigger: derive puts its callsite in meta
	                             * trigger_callsite_id */
};

/* --- the derived tables' rows -------------------------------------------- */

/* Why the incident was taken: @kind "irq", "manual", ... (the trigger's
 * spec), @detail what exactly (NULL none), @cpu -1 not tied to a CPU. */
struct sptd_store_trigger_row { int64_t ts; int cpu /* < 0 NULL */; const char *kind, *detail; };
/* @upid, @utid: keys the caller chooses (>= 0); names NULL unknown. */
struct sptd_store_process_row { int64_t upid; int pid; const char *name, *cmdline; };
struct sptd_store_thread_row {
	int64_t utid; int tid; int64_t upid /* < 0 NULL: process unknown */; const char *name;
};
/* A thread on a CPU: @end_state the kernel's letter(s) as ftrace prints
 * prev_state ("R", "R+", "S", "D", ...), NULL while still running at the
 * window end; @flags SPTD_SLICE_F_*. */
struct sptd_store_sched_slice_row {
	int64_t ts, dur; int cpu; int64_t utid; const char *end_state;
	int priority /* < 0 NULL */, flags;
};
/* A thread's state: "Running", "R" (runnable), "R+" (preempted), "S", "D", ... */
struct sptd_store_thread_state_row {
	int64_t ts, dur, utid; const char *state; int cpu /* < 0 NULL */;
	int64_t waker_utid /* < 0 NULL */; int flags;
};
/* @ret: the handler's return (1 handled, 0 not), -1 when its exit was not seen. */
struct sptd_store_irq_slice_row { int64_t ts, dur; int cpu, irq; const char *name; int ret, flags; };
struct sptd_store_softirq_slice_row { int64_t ts, dur; int cpu, vec; const char *name; int flags; };
/* A call: @id, @depth >= 0, @kind one of SPTD_SLICE_* (-EINVAL otherwise). */
struct sptd_store_slice_row {
	int64_t id;         /* slice.id, >= 0 */
	int64_t ts, dur;    /* start and length, dur >= 0 */
	int cpu;            /* CPU where it began */
	int64_t utid;       /* thread */
	int depth;          /* nesting, >= 0 */
	int64_t parent_id;  /* < 0 stores NULL */
	int64_t symbol_id;  /* < 0 stores NULL */
	const char *kind;   /* SPTD_SLICE_* */
	int flags;          /* SPTD_SLICE_F_* */
#ifdef SPTD_STORE_TEST_SLICE_NOTE
	int64_t note;       /* a test build's extra column (test_store_pagecols) */
#endif
};
/* @addr: the symbol's start in its dso's own address space (ELF vaddr for
 * files, kernel virtual address for the kernel); @size 0 unknown. */
struct sptd_store_symbol_row { int64_t id; const char *name; int64_t dso_id; uint64_t addr, size; };
/* @path: file path or "[name]"; @build_id hex, NULL none. */
struct sptd_store_dso_row { int64_t id; const char *path, *build_id; };
/* @utid < 0: the kernel named no task (a sample past exit); @callsite_id
 * < 0: no stack. */
struct sptd_store_sample_row { int64_t ts; int cpu; int64_t utid, callsite_id; /* < 0 NULL */ };
/* One frame of a stack: @parent_id < 0 a root (outermost caller),
 * @symbol_id < 0 an unresolved address. */
struct sptd_store_callsite_row {
	int64_t id, parent_id /* < 0 NULL */; int depth; int64_t symbol_id /* < 0 NULL */;
	uint64_t addr;
};
/* Time the data does not cover: @cpu < 0 all CPUs; @reason starts with
 * its producer's tag ("pt: ", "sched: "). */
struct sptd_store_gap_row { int64_t ts, dur; int cpu /* < 0 NULL */; const char *reason; };
/* A figure: @cpu < 0 the whole incident. */
struct sptd_store_stat_row { const char *name; int cpu /* < 0 NULL */; int64_t value; };
/* A record of an added tracepoint (sysptd -e): @name "SYS:EVENT", @args its
 * fields as a JSON object (NULL stores "{}"), @utid the task current. */
struct sptd_store_ftrace_event_row {
	int64_t ts; int cpu; int64_t utid /* < 0 NULL */; const char *name, *args;
};
/* PT's core:bus ratio of @cpu from @ts on, and the frequency it means. */
struct sptd_store_cpu_freq_row { int64_t ts; int cpu, cbr; int64_t freq_khz /* < 0 NULL */; };
/* One C-state of a CPU, as PT's power events gave it (< 0 and NULL: NULL). */
struct sptd_store_cpu_idle_row {
	int64_t ts, dur;
	int cpu;
	int state, sub_state;        /* the C-state resolved (C-state number) */
	int requested, requested_sub; /* what MWAIT asked for */
	int last, deepest;           /* core C-state at the wake, deepest reached */
	const char *wake;            /* "interrupt", "store", "autonomous" (comma list) */
	int hw;                      /* 1: entered by the hardware */
	int flags;                   /* SPTD_SLICE_F_* truncation bits */
};
/* A PTWRITE: @payload of @size bytes (stored as SQLite's signed 64-bit
 * integer) by task @utid at instruction @ip. */
struct sptd_store_ptwrite_row {
	int64_t ts; int cpu; int64_t utid /* < 0 NULL */; uint64_t ip /* 0 NULL */, payload;
	int size;
};
/* One hit of a break= or watch= trigger (written at capture; decode keeps
 * it): @watch 0: a break (no values); @silent -1: values unknown (both
 * stored NULL). */
struct sptd_store_watch_hit_row {
	int64_t ts;
	int cpu, tid;
	uint64_t ip;
	const char *function;        /* NULL or "" unknown */
	int watch;
	uint64_t old_value, new_value;
	int silent;
	const char *trigger;         /* the trigger's spec text */
};

/* --- the raw tables' rows: the capture, from which decode rebuilds ------- */

/* raw_pt (PT), raw_sideband (perf records, whole) or raw_ftrace_page (one
 * ring-buffer page): @len bytes of @cpu, @seq their capture order there. */
struct sptd_store_chunk_row { int cpu, seq; const void *data; size_t len; };
/* A format file the pages need: @name "header_page", "header_event",
 * "SYSTEM/EVENT", ...; @text the file. */
struct sptd_store_ftrace_format_row { const char *name, *text; };
/* A task alive at capture time (from /proc) or named by the trace. */
struct sptd_store_raw_task_row { int pid, tid; const char *comm, *cmdline; /* NULL unknown */ };
/* A context switch (ftrace, import --sched, perf SWITCH records). */
struct sptd_store_raw_switch_row {
	int64_t ts; int cpu;    /* when and where */
	int prev_tid, next_tid; /* the task that stopped, the one that started */
	const char *next_comm;  /* its name, NULL unknown */
	const char *prev_state; /* prev_tid's state as ftrace prints it ("R", "R+", "S",
	                         * "D", ...), NULL unknown */
};
/* One perf sample. */
struct sptd_store_raw_sample_row {
	int64_t ts; int cpu;    /* when and where */
	int pid, tid;           /* the task, -1 unknown */
	const uint64_t *callchain; /* the kernel's array in host byte order,
	                            * PERF_CONTEXT_* markers included */
	size_t nr;              /* entries of @callchain */
	int kind;               /* SPTD_RAW_SAMPLE_* */
	const void *ustack; size_t ustack_len; /* registers and stack (SCHEMA.md); NULL none */
};
/* An executable mapping of @pid (-1 the kernel): runtime address = dso
 * address + @bias; in force before @until_ts (ns, the samples' clock: an
 * exec or a newer mapping ended it; <= 0 stores NULL: to the end). */
struct sptd_store_raw_mmap_row {
	int pid; uint64_t start, end /* one past the last */, pgoff /* file offset of start */;
	int64_t dso_id, bias, until_ts;
};
/* Code bytes mapped at @addr (a flat image; ELF files are referenced by dso
 * path/build-id instead unless --portable embeds them in raw_file). */
struct sptd_store_raw_image_row {
	int64_t dso_id; uint64_t addr; const void *data; size_t len;
	const char *path;       /* view raw_image_path: dso.path, NULL none; add ignores it */
};

/* A file that decoding must read: a mapping's dso with no raw_image bytes. */
struct sptd_store_mapped_file_row {
	int pid;                /* process that mapped it, -1 the kernel */
	int64_t dso_id;         /* dso.id */
	int64_t bias;           /* runtime address = file address + bias */
	const char *path;       /* dso.path (borrowed) */
	const char *build_id;   /* dso.build_id, NULL none (borrowed) */
};

/* The rows of the views that share a table's struct. */
#define sptd_store_raw_switch_by_ts_row sptd_store_raw_switch_row
#define sptd_store_raw_image_path_row sptd_store_raw_image_row
#define sptd_store_cpu_stats_row sptd_store_stat_row
#define sptd_store_sample_stack_row sptd_store_stack_row
#define sptd_store_offcpu_stack_row sptd_store_stack_row
/* A thread's end in the window: @ts the end of a sched_slice that left
 * thread @utid dead (end_state X or Z, its end seen). */
struct sptd_store_thread_exit_row { int64_t utid, ts; };
/* One callsite row as the stack readers want it: a frame of a stack, its
 * parent the next one out. */
struct sptd_store_frame_row {
	int64_t id;             /* callsite.id */
	int64_t parent_id;      /* the caller's frame; valid when has_parent */
	int64_t depth;          /* 0 at the root */
	int64_t symbol_id;      /* valid when has_symbol */
	uint64_t addr;          /* the pc */
	int has_parent;         /* 0: a root (parent_id NULL) */
	int has_symbol;         /* 0: no symbol covers addr */
};
/* One stack of a thread at an instant: a sample, or an off-CPU wait. */
struct sptd_store_stack_row {
	int64_t ts;             /* when */
	int64_t dur;            /* samples 0; a wait: how long (thread_state.dur) */
	int64_t utid;           /* the thread, -1 unknown */
	int64_t callsite_id;    /* the leaf frame, -1 none */
	int cpu;                /* -1 unknown */
	const char *state;      /* a wait: its thread_state (borrowed); samples NULL */
};
/* One thread with its process's pid and name. */
struct sptd_store_thread_info_row {
	int64_t utid;           /* thread.utid */
	int64_t tid;            /* the kernel's id */
	int64_t pid;            /* its process's, -1 unknown */
	const char *name;       /* thread name, NULL unknown (borrowed) */
	const char *process;    /* process name, NULL unknown (borrowed) */
};
/* A watch_hit row (@hit.watch 0 and @hit.silent -1 where the values were
 * not read) with @utid, the newest thread row of its tid (-1 none: a
 * reused tid has several; the hit is the live one's). */
struct sptd_store_watch_hit_thread_row {
	struct sptd_store_watch_hit_row hit; /* the row */
	int64_t utid;           /* its thread */
};

#endif /* SPTD_STORE_ROWS_H */
