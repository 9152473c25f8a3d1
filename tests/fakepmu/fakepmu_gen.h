/* fakepmu_gen.h — what the fake intel_pt PMU serves for one output of the
 * emulated-PT generator (sptd-ptgen, docs/PTGEN.md): per CPU its PT byte
 * stream (cpuN.pt) and sideband records made from sched.txt, tasks.txt and
 * maps.txt (COMM and MMAP2 before anything runs, SWITCH_CPU_WIDE out/in at
 * every switch; sample_id TID|TIME|CPU), stamped in the generator's ns so
 * that a perf clock of ns = tsc * mult >> 31 (fakepmu_gen_mult) equals its
 * time exactly.  Used by the LD_PRELOAD fake (preload.c) and the tests. */
#ifndef SPTD_FAKEPMU_GEN_H
#define SPTD_FAKEPMU_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "fakepmu.h"

#define FAKEPMU_GEN_MAXCPU 8     /* virtual CPUs a generator output may have */
#define FAKEPMU_GEN_MAXTASK 64   /* tasks */
#define FAKEPMU_GEN_MAXSW 4096   /* switches */

/* One line of sched.txt: @prev left and @next entered @cpu at @ts. */
struct fakepmu_gen_switch {
	int64_t ts;                /* generator ns */
	int cpu, prev, next;       /* tids, 0 idle */
};

/* One line of tasks.txt. */
struct fakepmu_gen_task {
	int pid, tid;              /* as the generator's processes had them */
	char comm[64];             /* their comm */
};

#define FAKEPMU_GEN_MAXPOKE 4   /* rewrites of kernel code (pokes.txt) */

/* One line of pokes.txt: at @ts the kernel code at @addr changed. */
struct fakepmu_gen_poke {
	int64_t ts;                /* generator ns */
	uint64_t addr;
	uint8_t old_bytes[16], new_bytes[16];
	uint16_t len;
};

/* A loaded generator output. */
struct fakepmu_ptgen {
	char dir[4096];                            /* the output directory */
	int ncpus;                                 /* config.txt cpus */
	int64_t tsc_hz, start_ns, end_ns;          /* config.txt */
	unsigned char *pt[FAKEPMU_GEN_MAXCPU];     /* cpuN.pt */
	size_t pt_len[FAKEPMU_GEN_MAXCPU];
	unsigned char *sb[FAKEPMU_GEN_MAXCPU];     /* sideband records, oldest first */
	size_t sb_len[FAKEPMU_GEN_MAXCPU];
	struct fakepmu_script scripts[FAKEPMU_GEN_MAXCPU]; /* for fakepmu_serve/install */
	struct fakepmu_gen_task tasks[FAKEPMU_GEN_MAXTASK];
	int ntasks;
	struct fakepmu_gen_switch sws[FAKEPMU_GEN_MAXSW];  /* in time order */
	int nsw;
	struct fakepmu_gen_poke pokes[FAKEPMU_GEN_MAXPOKE]; /* --kpoke, in time order:
	                                           * TEXT_POKE records in the sideband
	                                           * of the CPU running then */
	int npokes;
};

/* Load @dir into *@out (scripts ready: no loss; end_tsc the generator's
 * TSC at end_ns).  0, or -errno with a
 * reason in @err (-EBADMSG: not a complete generator output). */
int fakepmu_gen_load(const char *dir, struct fakepmu_ptgen **out, char *err, size_t errlen);
/* Free what fakepmu_gen_load made; NULL is fine. */
void fakepmu_gen_free(struct fakepmu_ptgen *g);
/* Lose the first @len bytes of @cpu's stream (the AUX record says
 * TRUNCATED).  0 or -EINVAL. */
int fakepmu_gen_drop(struct fakepmu_ptgen *g, int cpu, size_t len);
/* time_mult of the fake's perf clock (time_shift 31, time_zero 0) that
 * makes perf ns equal the generator's ns = tsc * 10^9 / tsc_hz; 0 when no
 * exact 32-bit multiplier exists for its tsc_hz. */
uint32_t fakepmu_gen_mult(const struct fakepmu_ptgen *g);
/* A Skylake intel_pt sysfs tree under @root with PMU @type, its caps those
 * of the CPU the generator emulated (max_nonturbo_ratio, tsc_art_ratio,
 * mtc_periods).  0 or -errno. */
int fakepmu_gen_sysfs(const struct fakepmu_ptgen *g, const char *root, int type);
/* The task on @cpu at generator time @ts (0 idle) and since when
 * (*@since). */
int fakepmu_gen_running_at(const struct fakepmu_ptgen *g, int cpu, int64_t ts, int64_t *since);
/* Index of the task with @tid in g->tasks, or -1. */
int fakepmu_gen_task_index(const struct fakepmu_ptgen *g, int tid);
/* The whole file @path into a malloc'd *@buf (free it), *@len bytes.  0 or
 * -errno. */
int fakepmu_gen_read_file(const char *path, unsigned char **buf, size_t *len);
/* fakepmu_genk.c (with fakepmu_kcore.c): the fake kernel of a generator
 * output made with --kernel (kernel.txt: its text, its module, kallsyms'
 * functions), written under @root as fakepmu_kernel_write() lays it out,
 * kallsyms naming every function as the generator's truth does, the code
 * as it was at the run's end (after every poke).  0, -ENOENT (no
 * kernel.txt), -EBADMSG (not where the fake kernel puts code), -errno. */
int fakepmu_gen_kernel(const struct fakepmu_ptgen *g, const char *root);

#endif
