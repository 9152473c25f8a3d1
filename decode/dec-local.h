/* dec-local.h — private structures of the PT decoder (session, images,
 * address spaces, phase 1 and phase 2) and the interfaces between its
 * units; phase 1's own parts are in flow-local.h, the ELF handle in
 * elf-local.h.  Only decode/ includes it. */
#ifndef SPTD_DEC_LOCAL_H
#define SPTD_DEC_LOCAL_H

#include <pthread.h>
#include <stdint.h>

#include "sptd_dec.h"

struct pt_image;
struct pt_image_section_cache;

/* Placement of one image (a file range or copied bytes) in an address space. */
struct sptd_dec_image {
	int pid;                   /* owning process, -1 every task */
	char *path;                /* file the bytes come from (memfd path for copies) */
	char *name;                /* what placeholders are called ("libc.so.6") */
	uint64_t offset;           /* file offset of the first byte */
	uint64_t size;             /* bytes mapped */
	uint64_t addr;             /* runtime address of the first byte */
	int64_t bias;              /* runtime = symbol-file address + bias */
	int64_t dso_id;            /* caller's dso id, -1 none */
	int isid;                  /* id in the section cache */
	struct sptd_dec_symfile *symfile; /* shared by an ELF's segments; NULL none */
	int owns_symfile;          /* the first segment frees it */
};

/* An address space: the images one process sees.  Shared read-only by the
 * phase-1 threads; each of them builds its own libipt image of it
 * (sptd_dec_aspace_image_new), since a pt_image is not thread-safe. */
struct sptd_dec_aspace {
	int pid;                   /* -1: the default (global images only) */
	struct sptd_dec_image **by_addr; /* images sorted by addr, for lookups */
	size_t count;              /* entries of by_addr */
};

/* A context switch on one CPU. */
struct sptd_dec_switch {
	int64_t ts;                /* ns */
	int cpu;                   /* where it happened */
	int prev_tid, next_tid;    /* the task leaving, the task entering */
};

/* Raw PT of one CPU. */
struct sptd_dec_cpu {
	uint8_t *data;             /* concatenated chunks */
	size_t len, cap;           /* used and allocated bytes */
};

/* Key -> symbol id, for giving every function one id per run. */
struct sptd_dec_symkey {
	uint64_t key;              /* hash input: image index and function start */
	int64_t id;                /* 0: empty slot */
};

/* A decode session: its inputs, and what a run builds from them. */
struct sptd_dec_session {
	struct sptd_dec_config cfg;        /* as given */
	struct sptd_dec_tsc tsc;           /* cfg's TSC -> ns conversion */
	struct pt_image_section_cache *iscache; /* shared by all decoders */
	struct sptd_dec_image *images;     /* every placement added (image.c) */
	size_t nimages, capimages;         /* used and allocated entries */
	int *task_pid;                     /* tid -> pid pairs, flattened */
	size_t ntasks, captasks;           /* used and allocated pairs */
	struct sptd_dec_switch *switches;  /* sorted at run time */
	size_t nswitches, capswitches;     /* used and allocated entries */
	struct sptd_dec_cpu *cpus;         /* indexed by cpu */
	int ncpus;                         /* entries of cpus */
	int *memfds;                       /* fds behind add_bytes images */
	size_t nmemfds;                    /* entries of memfds */
	/* built by run */
	struct sptd_dec_aspace *aspaces;   /* [0] is the default (aspace.c) */
	size_t naspaces;                   /* entries of aspaces */
	struct sptd_dec_symkey *symtab;    /* open addressing, power-of-two size */
	size_t symcap, symcount;           /* slots and used slots of symtab */
	int64_t next_symbol_id;            /* last symbol id given out */
	int resolve_tid;                   /* task of the last phase-2 resolve */
	struct sptd_dec_aspace *resolve_as; /* its address space; NULL none yet */
	const struct sptd_dec_sink *sink;  /* during run */
	int saw_time;                      /* some event had a timestamp */
	int no_time;                       /* result of the last run */
};

/* image.c: placements in the section cache (the public add_elf, add_flat
 * and add_bytes place through it). */
/* Add [offset, offset+size) of @path at @addr to the cache and record it;
 * with @owns_sf the image frees @sf.  0, -ENOMEM, -EIO. */
int sptd_dec_image_place(struct sptd_dec_session *s, int pid, const char *path,
                         const char *name, uint64_t offset, uint64_t size,
                         uint64_t addr, int64_t bias, int64_t dso_id,
                         struct sptd_dec_symfile *sf, int owns_sf);
/* Free every placement and close the memfds behind copied bytes. */
void sptd_dec_images_free(struct sptd_dec_session *s);

/* aspace.c: address spaces, tasks' processes, functions and symbol ids. */
/* Build one address space per process that has images (plus [0], the
 * default).  0 or -ENOMEM. */
int sptd_dec_aspaces_build(struct sptd_dec_session *s);
/* Free what sptd_dec_aspaces_build made; accepts a session without any. */
void sptd_dec_aspaces_free(struct sptd_dec_session *s);
/* The process of task @tid (as added; default: pid = tid). */
int sptd_dec_task_pid(const struct sptd_dec_session *s, int tid);
/* A new libipt image of @as, for one decoder (thread) alone: pt_image_find
 * moves the section it finds to the front of the image's list, so two
 * threads decoding with one pt_image corrupt it (sections lost: "no
 * image" gaps; a cycle: pt_blk_next never returns).  Sections come from the
 * session's section cache, which is thread-safe.  Freed with
 * pt_image_free().  0, -EINVAL, -ENOMEM or -EIO. */
int sptd_dec_aspace_image_new(struct sptd_dec_session *s, const struct sptd_dec_aspace *as,
                              struct pt_image **out);
/* The address space task @tid decodes with (never NULL after build). */
struct sptd_dec_aspace *sptd_dec_aspace_of(struct sptd_dec_session *s, int tid);
/* Function containing @addr for @tid without assigning ids (thread-safe). */
int sptd_dec_func_peek(struct sptd_dec_session *s, int tid, uint64_t addr,
                       struct sptd_dec_func *f);
/* As peek, in address space @as (see sptd_dec_aspace_of). */
int sptd_dec_func_peek_as(const struct sptd_dec_aspace *as, uint64_t addr,
                          struct sptd_dec_func *f);
/* The phase-2 resolver: as peek, plus a symbol id reported to the sink. */
int sptd_dec_func_resolve(void *ctx, int tid, uint64_t addr, struct sptd_dec_func *f);

/* flow.c: phase 1 for one CPU (its parts: flow-local.h). */
/* A CPU's flow events, in stream order. */
struct sptd_dec_flowbuf {
	struct sptd_dec_flow *ev;   /* the events */
	size_t n, cap;              /* used and allocated entries */
};
/* What phase 1 counts per CPU (the sink's stat names). */
struct sptd_dec_cpu_stats {
	int64_t instructions;       /* instructions decoded */
	int64_t calls, returns;     /* near calls and returns */
	int64_t far_calls, far_returns; /* syscalls, interrupts, iret, sysret ... */
	int64_t interrupts;         /* asynchronous branches */
	int64_t decode_errors;      /* libipt errors and stalls */
	int64_t gaps;               /* gaps recorded */
	int64_t decode_ns;          /* wall time of this CPU's phase 1 */
	int64_t cr3_mismatches;     /* PIPs naming another process than the
	                             * sched timeline's (cr3check.c) */
	int saw_time;               /* a timing packet was seen */
};
/* A gap found by phase 1, kept until the sink can be called safely. */
struct sptd_dec_gaprec {
	int64_t ts, dur;            /* where and how long (ns, or order) */
	char reason[160];           /* "pt: ..." */
};
/* Everything phase 1 found on one CPU. */
struct sptd_dec_cpu_result {
	struct sptd_dec_flowbuf flows; /* flow events */
	struct sptd_dec_gaprec *gaps;  /* gaps, in the order found */
	size_t ngaps, capgaps;      /* used and allocated entries of gaps */
	struct sptd_dec_cpu_stats stats; /* counts */
	int err;                    /* < 0: phase 1 failed (not a decode error) */
	int64_t last_ts;            /* time of the last timing packet, -1 none:
	                             * the data reach past the last branch */
};
/* Decode CPU @cpu's PT of @s (its address spaces built) into @res (zeroed
 * by the caller, freed with sptd_dec_cpu_result_fini).  Decode errors are
 * gaps, not failures: < 0 only for -ENOMEM, -EINVAL, -EIO. */
int sptd_dec_flow_cpu(struct sptd_dec_session *s, int cpu,
                      struct sptd_dec_cpu_result *res);
/* Free what phase 1 put in @res; accepts NULL. */
void sptd_dec_cpu_result_fini(struct sptd_dec_cpu_result *res);

/* flowsort.c: sort @nev events of *@evp (malloc'ed) into phase 2's order
 * (tid; CPU when tid < 0; ts; cpu; seq), stably.  *@evp is replaced by a
 * new array of exactly @nev entries.  0, or -ENOMEM: then *@evp stays
 * but its entries are undefined (the caller drops the queue). */
int sptd_dec_flows_sort(struct sptd_dec_flow **evp, size_t nev);

/* @end - @start without overflow: times come from a trace's own timing
 * packets and conversion, so any pair is possible.  0 when @end is not
 * after @start, at most INT64_MAX. */
static inline int64_t sptd_dec_span(int64_t start, int64_t end)
{
	uint64_t d;

	if (end <= start)
		return 0;
	d = (uint64_t)end - (uint64_t)start;
	return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

#endif /* SPTD_DEC_LOCAL_H */
