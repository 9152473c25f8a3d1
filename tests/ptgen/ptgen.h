/* ptgen.h — internals of sptd-ptgen, the emulated-PT generator.
 *
 * sptd-ptgen single-steps real programs under ptrace, classifies every
 * executed instruction with a small branch-only x86-64 decoder, encodes the
 * Intel PT a user-only (CPL3) trace of that execution would contain with
 * libipt's encoder, writes the ground-truth call intervals, and (--verify)
 * decodes its own PT with libipt to prove the two agree.
 *
 * Units: x86.c (branch classifier), symtab.c (ELF function symbols),
 * tracer.c (ptrace and memory images), stream.c (PT packets of one CPU),
 * truth.c (frame rules), verify.c (libipt round trip), output.c (text
 * files, ptgen-out.h), main.c (options, the virtual-CPU scheduler, the
 * error message).
 *
 * Errors: >= 0 success, negative errno.  Detail for a user goes to the
 * message buffer given by sptd_ptgen_err() (this is a test tool: main()
 * prints it). */
#ifndef SPTD_PTGEN_H
#define SPTD_PTGEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- errors ----------------------------------------------------------------- */

/* Record a message for the user (printf-style); returns @err so callers can
 * write "return sptd_ptgen_fail(-EINVAL, ...)". */
int sptd_ptgen_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The last message recorded by sptd_ptgen_fail ("" if none). */
const char *sptd_ptgen_err(void);

/* ---- x86.c: branch classification ------------------------------------------ */

enum sptd_ptgen_br {
	SPTD_PTGEN_BR_NONE,     /* not a branch: falls through */
	SPTD_PTGEN_BR_JCC,      /* conditional (Jcc, LOOPcc, JrCXZ): TNT bit */
	SPTD_PTGEN_BR_JMP,      /* near direct jump: no packet */
	SPTD_PTGEN_BR_JMP_IND,  /* near indirect jump: TIP */
	SPTD_PTGEN_BR_CALL,     /* near direct call: no packet */
	SPTD_PTGEN_BR_CALL_IND, /* near indirect call: TIP */
	SPTD_PTGEN_BR_RET,      /* near return: TIP, or a TNT bit if compressed */
	SPTD_PTGEN_BR_SYSCALL,  /* SYSCALL, SYSENTER, INT n, INT3: enters the kernel */
	SPTD_PTGEN_BR_FAR,      /* far call/jump/return, IRET, SYSRET: unsupported in user code */
};

/* What the branch decoder learned about one instruction. */
struct sptd_ptgen_insn {
	enum sptd_ptgen_br kind; /* class */
	uint8_t len;             /* length in bytes; valid for every kind but NONE */
	uint64_t target;         /* branch target of JCC, JMP and CALL */
};

/* Classify the instruction at @ip whose bytes are @code[0..@avail).  0 and
 * *out filled; -EINVAL bad argument; -ENODATA @avail too short for the
 * branch instruction found. */
int sptd_ptgen_x86_classify(const uint8_t *code, size_t avail, uint64_t ip,
                            struct sptd_ptgen_insn *out);
/* Short name of a class ("jcc", "ret", ...), for messages. */
const char *sptd_ptgen_br_name(enum sptd_ptgen_br kind);

/* ---- symtab.c: function symbols of an ELF file or memory image ------------- */

struct sptd_ptgen_symtab;

/* Load the STT_FUNC/STT_GNU_IFUNC symbols of .symtab and .dynsym of the ELF
 * file @path, or (path NULL) of the in-memory ELF @mem[0..@size) (the vdso).
 * -ENOENT no file, -EBADMSG not an ELF. */
int sptd_ptgen_symtab_load(const char *path, const void *mem, size_t size,
                           struct sptd_ptgen_symtab **out);
/* Accepts NULL. */
void sptd_ptgen_symtab_destroy(struct sptd_ptgen_symtab *st);
/* The function containing file address @addr: 0 with *name (borrowed for
 * the life of @st), *start and *end (exclusive) set; -ENOENT none. */
int sptd_ptgen_symtab_lookup(const struct sptd_ptgen_symtab *st, uint64_t addr,
                             const char **name, uint64_t *start, uint64_t *end);
/* Bias (runtime = file address + bias) of a mapping of this file at
 * @map_start with file offset @pgoff.  -ENOENT no PT_LOAD holds @pgoff. */
int sptd_ptgen_symtab_bias(const struct sptd_ptgen_symtab *st, uint64_t map_start,
                           uint64_t pgoff, int64_t *bias);
/* File address of the function @name; -ENOENT none. */
int sptd_ptgen_symtab_find(const struct sptd_ptgen_symtab *st, const char *name,
                           uint64_t *addr);
/* The @i-th function in address order (one per address, the name the
 * alias rules keep) and its file range [*start, *end); -ENOENT past the
 * last. */
int sptd_ptgen_symtab_get(const struct sptd_ptgen_symtab *st, size_t i, const char **name,
                          uint64_t *start, uint64_t *end);

/* ---- kernel.c: --kernel, a synthetic kernel run as kernel code ------------- */

/* A traced program's code at user addresses [KWIN_LO, KWIN_HI) runs as
 * kernel code at that address + SPTD_PTGEN_KDELTA: its .ktext, linked at
 * 0x41000000, is kernel text at 0xffffffff81000000, its .mtext, linked at
 * 0x80000000, module text at 0xffffffffc0000000 (tests/progs/kernel.c). */
#define SPTD_PTGEN_KWIN_LO 0x40000000ull
#define SPTD_PTGEN_KWIN_HI 0xc0000000ull
#define SPTD_PTGEN_KDELTA (0xffffffff81000000ull - 0x41000000ull)
#define SPTD_PTGEN_KMODULES 0xffffffffc0000000ull   /* module area: from here up */
#define SPTD_PTGEN_KENTRY "entry_SYSCALL_64"        /* where SYSCALL enters */
#define SPTD_PTGEN_KMODULE "ptgen_mod"              /* the module's name */

/* The kernel address of user address @uip, or @uip outside the window. */
static inline uint64_t sptd_ptgen_kaddr(uint64_t uip)
{
	return uip >= SPTD_PTGEN_KWIN_LO && uip < SPTD_PTGEN_KWIN_HI ? uip + SPTD_PTGEN_KDELTA : uip;
}
/* The user address a kernel address @ip runs at, or @ip when not kernel. */
static inline uint64_t sptd_ptgen_uaddr(uint64_t ip)
{
	return ip >= SPTD_PTGEN_KWIN_LO + SPTD_PTGEN_KDELTA ? ip - SPTD_PTGEN_KDELTA : ip;
}
/* Whether @ip is a kernel address (the upper half). */
static inline int sptd_ptgen_is_kernel(uint64_t ip)
{
	return (ip >> 63) != 0;
}

/* ---- tracer.c: processes, threads, memory images ---------------------------- */

/* One executable (r-x) mapping of a traced process, with its bytes. */
struct sptd_ptgen_map {
	uint64_t start, end;             /* runtime address range */
	uint64_t pgoff;                  /* file offset of @start */
	char *path;                      /* mapped file, or "[vdso]" etc. (heap) */
	uint8_t *bytes;                  /* copy of the code, end - start bytes (heap) */
	int touched;                     /* an executed instruction lay here */
	struct sptd_ptgen_symtab *syms;  /* loaded on first lookup; NULL if none */
	int syms_tried;                  /* loading was attempted */
	int64_t bias;                    /* runtime = file address + bias */
};

/* One traced process (thread group). */
struct sptd_ptgen_proc {
	pid_t pid;                       /* thread-group id */
	uint64_t cr3;                    /* invented page-table base for PIP */
	char comm[16];                   /* program name, as in /proc/PID/comm */
	struct sptd_ptgen_map *maps;     /* executable mappings (heap) */
	size_t nmaps;                    /* entries in @maps */
	size_t last_map;                 /* lookup cache: index of last hit */
	uint64_t kentry;                 /* --kernel: user address of SPTD_PTGEN_KENTRY */
};

enum sptd_ptgen_task_state {
	SPTD_PTGEN_TASK_STOPPED,  /* in ptrace-stop, ready to step */
	SPTD_PTGEN_TASK_BLOCKED,  /* stepping a syscall that has not returned */
	SPTD_PTGEN_TASK_NEW,      /* clone seen, initial stop not yet seen */
	SPTD_PTGEN_TASK_EXITED,   /* gone */
};

struct sptd_ptgen_truth_task;

/* One traced thread. */
struct sptd_ptgen_task {
	pid_t tid;                        /* thread id */
	struct sptd_ptgen_proc *proc;     /* its process */
	enum sptd_ptgen_task_state state; /* see above */
	uint64_t rip;                     /* next instruction (valid when STOPPED) */
	int last_cpu;                     /* virtual CPU of its last slice, -1 none */
	int early_stop;                   /* initial stop arrived before the clone event */
	uint64_t insns;                   /* instructions executed */
	struct sptd_ptgen_truth_task *truth; /* shadow stack for truth.txt */
};

/* Start @argv[0] (searched in PATH if it has no '/') under ptrace and run
 * it to its `main`, where it stops with the breakpoint removed and its code
 * copied.  -EPERM ptrace not permitted; -ENOENT no such program or no
 * `main` symbol; -ECHILD it died before main. */
int sptd_ptgen_proc_launch(char *const argv[], struct sptd_ptgen_proc **proc,
                           uint64_t *main_ip);
/* Kill the process if it still lives and free @proc.  Accepts NULL. */
void sptd_ptgen_proc_destroy(struct sptd_ptgen_proc *proc);
/* Read /proc/PID/maps again and copy mappings not seen before. */
int sptd_ptgen_proc_rescan(struct sptd_ptgen_proc *proc);
/* The mapping containing @ip, or NULL (after one rescan). */
struct sptd_ptgen_map *sptd_ptgen_proc_map(struct sptd_ptgen_proc *proc, uint64_t ip);
/* Name of the function containing @ip (written into @buf, "0xADDR" when no
 * symbol covers it) and its runtime range [*start, *end). */
void sptd_ptgen_proc_symbolize(struct sptd_ptgen_proc *proc, uint64_t ip, char *buf,
                               size_t len, uint64_t *start, uint64_t *end);
/* The symbols of the file @m maps, loaded on first use (bias in m->bias);
 * NULL when it has none. */
struct sptd_ptgen_symtab *sptd_ptgen_map_syms(struct sptd_ptgen_map *m);
/* Whether @ip is the first byte of a function symbol. */
int sptd_ptgen_proc_is_func_start(struct sptd_ptgen_proc *proc, uint64_t ip);

/* ---- stream.c: the PT packets of one virtual CPU ---------------------------- */

enum sptd_ptgen_timing {
	SPTD_PTGEN_TIMING_NONE, /* no timing packets at all */
	SPTD_PTGEN_TIMING_TSC,  /* TSC (+CBR) in PSB+ */
	SPTD_PTGEN_TIMING_MTC,  /* plus TMA and MTC */
	SPTD_PTGEN_TIMING_CYC,  /* plus CYC before control-flow packets and MTC */
};

/* The synthetic clock and the PT configuration shared by all CPUs. */
struct sptd_ptgen_clock {
	uint64_t core_hz;        /* core clock; one instruction = one cycle */
	uint64_t tsc_hz;         /* TSC rate; a multiple of core_hz */
	uint64_t tsc_per_cycle;  /* tsc_hz / core_hz */
	uint32_t cpuid15_eax;    /* TSC/CTC ratio denominator */
	uint32_t cpuid15_ebx;    /* TSC/CTC ratio numerator (a multiple of eax) */
	uint8_t mtc_freq;        /* MTC every 2^mtc_freq CTC ticks */
	uint8_t cbr;             /* core:bus ratio = core_hz / 100 MHz */
	uint8_t nom_freq;        /* tsc_hz / 100 MHz */
	enum sptd_ptgen_timing timing; /* which timing packets */
	int retcomp;             /* compress returns that match the call stack */
	size_t psb_period;       /* bytes between PSB+ */
	uint64_t syscall_cycles; /* extra cycles a syscall costs */
	uint64_t switch_cycles;  /* cycles between two slices */
	uint64_t start_cycle;    /* cycle count at the first instruction */
	int power;               /* --power: C-states, CBR changes, PTWRITEs */
	int kernel;              /* --kernel: kernel code is traced too (CPL0 and CPL3) */
};

struct sptd_ptgen_stream;

/* A stream for virtual CPU @cpu.  -ENOMEM. */
int sptd_ptgen_stream_create(int cpu, const struct sptd_ptgen_clock *clk,
                             struct sptd_ptgen_stream **out);
/* Accepts NULL. */
void sptd_ptgen_stream_destroy(struct sptd_ptgen_stream *s);
/* A task of address space @cr3 is switched in at @cycle, about to run @ip:
 * timing catch-up, PSB+ with PIP, MODE.Exec, TIP.PGE. */
int sptd_ptgen_stream_switch_in(struct sptd_ptgen_stream *s, uint64_t cycle,
                                uint64_t cr3, uint64_t ip);
/* The task is switched out at @cycle with @ip next (FUP + TIP.PGD if it was
 * traced; nothing if a syscall already disabled tracing). */
int sptd_ptgen_stream_switch_out(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip);
/* Before the instruction at @ip runs at @cycle: timing packets, re-enable
 * after a syscall (TIP.PGE), PSB+ when due; with --power and @plain (the
 * instruction is no branch), the slice's PTWRITE if not yet written. */
int sptd_ptgen_stream_before(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip,
                             int plain);
/* The instruction @insn at @ip ran at @cycle and went to @next. */
int sptd_ptgen_stream_insn(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip,
                           const struct sptd_ptgen_insn *insn, uint64_t next);
/* End of trace at @cycle: flush pending TNT; with @ip != 0 (task still
 * traced) FUP + TIP.PGD. */
int sptd_ptgen_stream_finish(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip);
/* --power: one power packet the stream wrote (power.txt's lines). */
enum sptd_ptgen_pw {
	SPTD_PTGEN_PW_CBR,    /* a: ratio (written in a PSB+ when it changed) */
	SPTD_PTGEN_PW_MWAIT,  /* a: hints, b: extensions */
	SPTD_PTGEN_PW_PWRE,   /* a: resolved C-state code, b: sub-state */
	SPTD_PTGEN_PW_PWRX,   /* a: last, b: deepest C-state code, c: wake bits
	                       * (1 interrupt, 2 store, 4 autonomous) */
	SPTD_PTGEN_PW_PTW,    /* a: payload, b: bytes; ip: the instruction */
};
struct sptd_ptgen_power {
	enum sptd_ptgen_pw kind;
	uint64_t cycle;       /* its time: the TSC of the PSB+ before it */
	uint64_t a, b, c, ip;
};
/* The power packets so far, in stream order; borrowed. */
const struct sptd_ptgen_power *sptd_ptgen_stream_power(const struct sptd_ptgen_stream *s,
                                                       size_t *n);
/* The bytes so far; borrowed until the next call on @s. */
const uint8_t *sptd_ptgen_stream_data(const struct sptd_ptgen_stream *s, size_t *len);
/* Count of packets of each kind written (psb, tip, tnt, ...), for config.txt. */
struct sptd_ptgen_stream_stats {
	uint64_t psb, tnt, tip, fup, pge, pgd, tsc, mtc, cyc, pip, retcomp;
};
void sptd_ptgen_stream_stats(const struct sptd_ptgen_stream *s,
                             struct sptd_ptgen_stream_stats *out);

/* ---- truth.c: frames from the recorded execution ----------------------------- */

/* A new shadow stack for @task; @start_ns is the run's start, a lower bound:
 * the task's data start (where inferred frames begin) is its first traced
 * instruction.  -ENOMEM. */
int sptd_ptgen_truth_attach(struct sptd_ptgen_task *task, uint64_t start_ns);
/* The task executed @insn at @ip at @ns and went to @next. */
int sptd_ptgen_truth_insn(struct sptd_ptgen_task *task, uint64_t ns, uint64_t ip,
                          const struct sptd_ptgen_insn *insn, uint64_t next);
/* Close what is open at @end_ns (flag 2) and write "tid depth start end
 * flags name" lines of @task, sorted by (start, depth), to the FILE @f.
 * Adds the calls, returns and intervals seen to the counters. */
int sptd_ptgen_truth_write(struct sptd_ptgen_task *task, uint64_t end_ns, void *f,
                           uint64_t *calls, uint64_t *rets, uint64_t *frames);
/* Free the shadow stack.  Accepts a task without one. */
void sptd_ptgen_truth_detach(struct sptd_ptgen_task *task);

/* ---- verify.c: decode a stream with libipt and compare ----------------------- */

/* One image section for the decoder. */
struct sptd_ptgen_section {
	const char *file;   /* flat file holding the bytes */
	uint64_t vaddr;     /* load address */
	uint64_t size;      /* bytes */
	uint64_t cr3;       /* address space */
};

/* A rewrite of code during the run (--kpoke): @len bytes at @addr were
 * @old_bytes up to the @index-th instruction of the CPU's log, then
 * @new_bytes.  The sections hold the new bytes. */
struct sptd_ptgen_patch {
	uint64_t addr;            /* (kernel) address of the first byte */
	uint8_t old_bytes[16], new_bytes[16];
	size_t len;               /* bytes rewritten, at most 16 */
	size_t index;             /* instructions of this CPU before the rewrite */
};

/* Decode @pt[0..@len) of one CPU with libipt's instruction flow decoder over
 * @secs (with @patch, when not NULL, read as it was at each instruction)
 * and compare with the @n expected instruction addresses.  0 equal;
 * -EBADMSG a mismatch (detail in sptd_ptgen_err()). */
int sptd_ptgen_verify(const uint8_t *pt, size_t len, const struct sptd_ptgen_clock *clk,
                      const struct sptd_ptgen_section *secs, size_t nsecs,
                      const struct sptd_ptgen_patch *patch, const uint64_t *expect, size_t n,
                      int cpu);

/* The CPU ptgen claims to be (Skylake server 6/94/3, whose errata libipt knows). */
#define SPTD_PTGEN_CPU_FAMILY 6
#define SPTD_PTGEN_CPU_MODEL 94
#define SPTD_PTGEN_CPU_STEPPING 3

#endif /* SPTD_PTGEN_H */
