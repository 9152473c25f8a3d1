/* spegen.h — internals of sptd-spegen, the emulated-SPE generator.
 *
 * sptd-spegen single-steps a real program under ptrace (tests/ptgen's
 * tracer.c starts it at `main`), finds each executed instruction's memory
 * operand with a small x86-64 ModRM decoder and the registers before the
 * step, samples every Nth load, store and atomic with its real data
 * address (and physical address from /proc/PID/pagemap when readable),
 * and writes what `perf record -e arm_spe//` on an arm64 machine would
 * have written for those samples, plus the ground truth.
 *
 * Units: x86mem.c (memory operands), spepkt.c (SPE packets of one sample
 * and the cache model that gives its events, source and latencies),
 * perfout.c (the perf.data file), main.c (options, stepping, truth.csv).
 * Errors: >= 0 success, negative errno, a message in sptd_ptgen_err(). */
#ifndef SPTD_SPEGEN_H
#define SPTD_SPEGEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/* ---- x86mem.c ---------------------------------------------------------------- */

enum spegen_access {
	SPEGEN_NONE = 0,   /* no data memory operand this generator knows */
	SPEGEN_LOAD,       /* reads its memory operand */
	SPEGEN_STORE,      /* writes it (read-modify-write included) */
	SPEGEN_ATOMIC,     /* LOCK-prefixed read-modify-write, XCHG with memory */
};

/* A memory operand: effective address = base + index * scale + disp (+ the
 * FS/GS base), RIP-relative ones from the next instruction's address. */
struct spegen_operand {
	enum spegen_access access;
	int rip_relative;   /* 1: address = next RIP + disp */
	int64_t disp;
	int base, index;    /* register numbers 0..15 (rax..r15), -1 none */
	int scale;          /* 1, 2, 4, 8 */
	int seg;            /* 0 none, 4 FS, 5 GS */
};

/* Classify the instruction at @code[0..@avail): 1 and *@op when it
 * accesses memory in a way known here, 0 when not (or not known). */
int spegen_x86_operand(const uint8_t *code, size_t avail, struct spegen_operand *op);
/* The data address of @op with the registers @regs before the step and
 * @next_rip the instruction's successor. */
uint64_t spegen_x86_address(const struct spegen_operand *op, const struct user_regs_struct *regs,
                            uint64_t next_rip);

/* ---- spepkt.c ------------------------------------------------------------------ */

/* One sample as truth.csv and the packets state it. */
struct spegen_sample {
	uint64_t ts;          /* ns (the SPE timestamp: a 1 GHz generic timer) */
	int cpu, pid, tid;
	uint64_t pc, vaddr, paddr;   /* paddr 0: unknown (no packet) */
	enum spegen_access access;
	uint64_t events;      /* Events packet */
	uint16_t source;      /* Data Source packet (Neoverse encoding) */
	uint16_t lat_total, lat_issue, lat_xlat;
};

/* Fill @s's events, source and latencies from a small deterministic cache
 * model (64-byte lines, a 512-line L1D, a 64-page TLB, a 16384-line LLC):
 * what a first touch and a reuse would give. */
void spegen_cache_model(struct spegen_sample *s);
/* Append the SPE packets of @s to @buf (at most SPEGEN_PKT_MAX bytes). */
#define SPEGEN_PKT_MAX 128
size_t spegen_packets(const struct spegen_sample *s, uint8_t *buf);
/* "load", "store", "atomic" */
const char *spegen_access_name(enum spegen_access a);

/* ---- perfout.c ----------------------------------------------------------------- */

/* One executable mapping for the MMAP2 sideband. */
struct spegen_map {
	uint64_t start, end, pgoff;
	char path[4096];
};

/* What the perf.data describes. */
struct spegen_run {
	int pid, tid;
	char comm[16];
	struct spegen_map *maps;
	size_t nmaps;
	const uint8_t *aux;   /* SPE bytes of CPU 0 */
	size_t aux_len;
	uint64_t t_start, t_end; /* ns */
	uint64_t period;      /* sampling interval (attr sample_period) */
	const char *cmdline;  /* for the CMDLINE feature */
};

/* Write @run as perf.data @path.  -errno. */
int spegen_perf_write(const struct spegen_run *run, const char *path);

#endif /* SPTD_SPEGEN_H */
