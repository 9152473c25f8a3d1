/* sampling-local.h — insides of the sampling source (sampler.c):
 * per-CPU perf events; their rings are parsed in collector/perf. */
#ifndef SPTD_SAMPLING_LOCAL_H
#define SPTD_SAMPLING_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_col_base.h"
#include "sptd_col_perf.h"

/* ---- sampling source (sampler.c) --------------------------- */

/* Data pages of each CPU's sideband ring: 256 KiB holds the mappings,
 * comms and forks of a few hundred short-lived processes per CPU (one
 * such process writes about 1 KiB). */
#define SPTD_SAMPLER_SIDEBAND_PAGES 64

struct sptd_col_sampler_config {
	int freq;                /* samples per second per CPU (10000) */
	size_t ring_pages;       /* data pages per CPU ring, power of two */
	int use_clock;           /* attr.use_clockid with CLOCK_MONOTONIC */
	int exclude_kernel;      /* user-only */
	int max_stack;           /* callchain depth limit (127) */
	const int *cpus;         /* the CPUs to sample (-C); NULL every online one */
	int tracepoint_id;       /* > 0: a sample at every hit of this tracepoint
	                          * (--offcpu: sched_switch) instead of cpu-clock
	                          * at @freq */
	int ncpus;
	size_t sideband_pages;   /* 0: samples only; else data pages (a power
	                          * of two) of each CPU's sideband ring: the
	                          * mmap2, comm and fork/exit records that name
	                          * the code of processes gone by the capture */
	uint32_t stack_user;     /* --call-graph dwarf: bytes of user stack
	                          * and the user registers per sample; 0 none */
	int sideband_build_id;   /* 1: ask for build ids in MMAP2 records
	                          * (attr.build_id); 0: device and inode.  Off in
	                          * the service: Linux 6.18 then marks other
	                          * perf users' inode MMAP2 records as build-id
	                          * ones (a `perf record` beside sysptd cannot
	                          * read its own file) */
};


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
/* Gets one CPU's sideband records (@len bytes at @buf, oldest first, back
 * to back, laid out with sptd_col_pt_sideband_sample_type() and
 * sample_id_all); @buf is borrowed for the call only. */
typedef int (*sptd_col_sampler_sideband_fn)(void *ctx, int cpu, const void *buf, size_t len);
/* With output paused (as for sampler_read): every CPU's sideband ring, the
 * whole of it (a mapping made long before the window still names the
 * window's samples).  Returns the number of CPUs delivered (0 without a
 * sideband), -EINVAL, -ENOMEM, or @fn's error. */
int sptd_col_sampler_sideband(struct sptd_col_sampler *s, sptd_col_sampler_sideband_fn fn,
                              void *ctx);
/* Accepts NULL: unmaps and closes every CPU's event. */
void sptd_col_sampler_destroy(struct sptd_col_sampler *s);


/* One CPU's cpu-clock event and its overwrite ring, and the sideband
 * dummy event beside it. */
struct sptd_col_sampler_cpu {
	int cpu;                 /* CPU number as the kernel names it */
	int fd;                  /* perf event fd, -1 when not open */
	struct sptd_col_perf_ring ring; /* control page + data ring, read-only */
	int sb_fd;               /* sideband dummy event fd, -1 none */
	struct sptd_col_perf_ring sb_ring; /* its overwrite ring, read-only */
};

struct sptd_col_sampler {
	struct sptd_col_sampler_cpu *cpus; /* one per online CPU */
	int ncpus;               /* entries in @cpus */
	int paused;              /* output paused on every CPU */
	int user_stack;          /* 1: samples hold user registers and stack */
	int sideband_build_id;   /* 1: the sideband's MMAP2 records carry
	                          * build ids (attr.build_id accepted) */
};

#endif /* SPTD_SAMPLING_LOCAL_H */
