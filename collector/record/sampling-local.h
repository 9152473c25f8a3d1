/* sampling-local.h — insides of the sampling source (sampler.c):
 * per-CPU perf events; their rings are parsed in collector/perf. */
#ifndef SPTD_SAMPLING_LOCAL_H
#define SPTD_SAMPLING_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_col_base.h"
#include "sptd_col_perf.h"

/* ---- sampling source (sampler.c) --------------------------- */

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
/* Accepts NULL: unmaps and closes every CPU's event. */
void sptd_col_sampler_destroy(struct sptd_col_sampler *s);


/* One CPU's cpu-clock event and its overwrite ring. */
struct sptd_col_sampler_cpu {
	int cpu;                 /* CPU number as the kernel names it */
	int fd;                  /* perf event fd, -1 when not open */
	struct sptd_col_perf_ring ring; /* control page + data ring, read-only */
};

struct sptd_col_sampler {
	struct sptd_col_sampler_cpu *cpus; /* one per online CPU */
	int ncpus;               /* entries in @cpus */
	int paused;              /* output paused on every CPU */
};

#endif /* SPTD_SAMPLING_LOCAL_H */
