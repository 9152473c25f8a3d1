/* sampling-local.h — insides of the sampling source (sampler.c,
 * sample_ring.c): per-CPU perf events and the parsing of their rings. */
#ifndef SPTD_SAMPLING_LOCAL_H
#define SPTD_SAMPLING_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_col.h"

/* One CPU's cpu-clock event and its overwrite ring. */
struct sptd_col_sampler_cpu {
	int cpu;                 /* CPU number as the kernel names it */
	int fd;                  /* perf event fd, -1 when not open */
	void *map;               /* control page + data ring, PROT_READ */
	size_t map_len;          /* bytes mapped at @map */
};

struct sptd_col_sampler {
	struct sptd_col_sampler_cpu *cpus; /* one per online CPU */
	int ncpus;               /* entries in @cpus */
	size_t page_size;        /* system page size: the control page's size */
	int paused;              /* output paused on every CPU */
};

/* Parse a sysfs CPU list ("0-3,5,7-8\n") into a malloc'd array (*cpus, freed
 * by the caller) of *n numbers.  -EINVAL on a malformed list. */
int sptd_col_sampler_parse_cpus(const char *text, int **cpus, int *n);

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

#endif /* SPTD_SAMPLING_LOCAL_H */
