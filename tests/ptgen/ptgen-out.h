/* ptgen-out.h — the state of one sptd-ptgen run and the files it writes
 * (output.c). */
#ifndef SPTD_PTGEN_OUT_H
#define SPTD_PTGEN_OUT_H

#include <stdio.h>

#include "ptgen.h"

/* Instructions that ran on one CPU, in order: what libipt must decode. */
struct sptd_ptgen_cpu_log {
	uint64_t *ips;   /* heap */
	size_t n, cap;   /* used / allocated */
};

/* Everything one run holds. */
struct sptd_ptgen_run {
	struct sptd_ptgen_clock clk;          /* clock and PT configuration */
	const char *outdir;                   /* output directory (borrowed from argv) */
	int ncpus;                            /* virtual CPUs */
	uint64_t slice;                       /* instructions per slice */
	uint64_t max_insns;                   /* instruction budget */
	int verify;                           /* decode and compare at the end */
	struct sptd_ptgen_proc **procs;       /* traced processes */
	size_t nprocs;                        /* entries in @procs */
	struct sptd_ptgen_task **tasks;       /* traced threads, in order of appearance */
	size_t ntasks;                        /* entries in @tasks */
	struct sptd_ptgen_stream **streams;   /* one PT stream per CPU */
	struct sptd_ptgen_cpu_log *logs;      /* executed IPs per CPU */
	uint64_t start_cycle, end_cycle;      /* data start / end */
	uint64_t cycle;                       /* the synthetic clock now */
	uint64_t insns;                       /* instructions executed */
	uint64_t nslices;                     /* slices scheduled */
	FILE *sched;                          /* sched.txt, written as we go */
	const char *kpoke_func;               /* --kpoke FUNC@N: the function whose first
	                                       * 5 bytes (a jmp) become a nop; NULL none */
	uint64_t kpoke_after;                 /* ... after this many returns to user */
	uint64_t kreturns;                    /* SYSRETs so far */
	int kpoked;                           /* the rewrite was made */
	uint64_t kpoke_cycle;                 /* when */
	struct sptd_ptgen_patch *kpatch;      /* it, per CPU (index differs); NULL none */
};

/* Cycles to nanoseconds on the synthetic clock. */
static inline uint64_t sptd_ptgen_ns(const struct sptd_ptgen_clock *clk, uint64_t cycle)
{
	return (uint64_t)((unsigned __int128)cycle * 1000000000u / clk->core_hz);
}

/* main.c: append @ip to a CPU's log; single-step @t (@is_syscall: it may
 * block, then it is left BLOCKED).  0 or -errno. */
int sptd_ptgen_log_add(struct sptd_ptgen_cpu_log *l, uint64_t ip);
int sptd_ptgen_step(struct sptd_ptgen_run *g, struct sptd_ptgen_task *t, int is_syscall);

/* kernel.c.  --kernel: find the process's kernel entry (a program
 * without one makes its syscalls as without --kernel).  0 or -errno
 * (said). */
int sptd_ptgen_kernel_setup(struct sptd_ptgen_run *g, struct sptd_ptgen_proc *proc);
/* --kernel: some program carries a kernel.  0 or -ENOENT (said). */
int sptd_ptgen_kernel_ready(const struct sptd_ptgen_run *g);
/* The SYSCALL @insn at @ip of @t ran at @at on @cpu and returned (its
 * task stopped at the next instruction): run the kernel's code for it, as
 * traced from the SYSCALL to the SYSRET.  0 or -errno (said). */
int sptd_ptgen_kernel_run(struct sptd_ptgen_run *g, struct sptd_ptgen_task *t, int cpu,
                          uint64_t ip, const struct sptd_ptgen_insn *insn, uint64_t at);
/* kernel.txt and pokes.txt, the kernel images under images/.  0 or -errno. */
int sptd_ptgen_kernel_write(struct sptd_ptgen_run *g);

/* Open the files written during the run (sched.txt). */
int sptd_ptgen_out_open(struct sptd_ptgen_run *g);
/* A switch on @cpu at the current cycle from @prev to @next (NULL: idle). */
int sptd_ptgen_out_switch(struct sptd_ptgen_run *g, int cpu, const struct sptd_ptgen_task *prev,
                          const struct sptd_ptgen_task *next);
/* Write cpuN.pt, images, images.txt, maps.txt, tasks.txt, truth.txt and
 * config.txt. */
int sptd_ptgen_out_finish(struct sptd_ptgen_run *g);
/* Decode every CPU's PT with libipt over the written images and compare. */
int sptd_ptgen_out_verify(struct sptd_ptgen_run *g);
/* Close what out_open opened.  Safe to call twice. */
void sptd_ptgen_out_close(struct sptd_ptgen_run *g);

#endif /* SPTD_PTGEN_OUT_H */
