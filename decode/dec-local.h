/* dec-local.h — private structures of the PT decoder (session, images,
 * address spaces, phase 1 and phase 2) and the interfaces between its
 * units; phase 1's own parts are in flow-local.h, the ELF handle in
 * elf-local.h.  Only decode/ includes it. */
#ifndef SPTD_DEC_LOCAL_H
#define SPTD_DEC_LOCAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sptd_dec.h"

struct pt_image;
struct pt_image_section_cache;
struct sptd_dec_tplace;

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
	struct sptd_dec_symfile *symfile; /* shared by an ELF's segments, owned by
	                           * its kept file; NULL none */
	int epoch_lo, epoch_hi;    /* decoded with in text epochs [lo, hi)
	                           * (textpatch.c): 0, INT_MAX for every image
	                           * added; a patch of kernel code as it was
	                           * before a TEXT_POKE spans fewer */
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
	int untimed_tid;           /* the task of a trace without timing; 0 none */
};

/* Key -> symbol id, for giving every function one id per run. */
struct sptd_dec_symkey {
	uint64_t key;              /* hash input: image index and function start */
	int64_t id;                /* 0: empty slot */
};

/* One address phase 2 resolved, in one address space: what
 * sptd_dec_func_resolve answered (a call target or return site recurs). */
struct sptd_dec_resolved {
	const struct sptd_dec_aspace *as; /* NULL: empty slot */
	uint64_t addr;
	struct sptd_dec_func f;    /* with its symbol id */
};

/* Slots of the session's resolved-address cache (a power of two). */
#define SPTD_DEC_RESOLVED_SLOTS 4096

/* The slot of @addr in that cache. */
static inline size_t sptd_dec_resolved_slot(uint64_t addr)
{
	return (size_t)((addr ^ addr >> 12) & (SPTD_DEC_RESOLVED_SLOTS - 1));
}

/* A user's file kept open for the session (image.c): libipt reads it as
 * "/proc/self/fd/FD", never by its path. */
struct sptd_dec_imgfile {
	dev_t dev;                 /* st_dev of the file */
	ino_t ino;                 /* st_ino: one descriptor per file */
	int fd;                    /* open for reading (sptd_dec_file_open) */
	struct sptd_dec_symfile *sf; /* its symbols, read once for every
	                              * process that maps it (owned here) */
	int sf_read;               /* sf was read (NULL: it has none) */
};

/* A decode session: its inputs, and what a run builds from them. */
struct sptd_dec_session {
	struct sptd_dec_config cfg;        /* as given */
	struct sptd_dec_tsc tsc;           /* cfg's TSC -> ns conversion */
	struct pt_image_section_cache *iscache; /* every image's section; phase-1
	                                    * threads read through their own
	                                    * (struct sptd_dec_wcache) */
	struct sptd_dec_image *images;     /* every placement added (image.c) */
	size_t nimages, capimages;         /* used and allocated entries */
	int *task_pid;                     /* tid -> pid pairs, flattened */
	size_t ntasks, captasks;           /* used and allocated pairs */
	struct sptd_dec_switch *switches;  /* sorted at run time */
	size_t nswitches, capswitches;     /* used and allocated entries */
	struct sptd_dec_switch *exits;     /* tasks' ends: ts and prev_tid only */
	size_t nexits, capexits;           /* used and allocated entries */
	struct sptd_dec_cpu *cpus;         /* indexed by cpu */
	int ncpus;                         /* entries of cpus */
	int *memfds;                       /* fds behind add_bytes images */
	size_t nmemfds;                    /* entries of memfds */
	struct sptd_dec_imgfile *files;    /* files behind add_elf/add_flat images */
	size_t nfiles;                     /* entries of files */
	char *kernel_note;                 /* why kernel code has no image (heap);
	                                    * NULL: nothing known */
	struct sptd_dec_text_poke *pokes;  /* TEXT_POKE records (bytes owned) */
	size_t npokes, cappokes;           /* used and allocated entries */
	int64_t text_copied;               /* when the kernel code was copied */
	/* built by run (textpatch.c): the times at which kernel code changed */
	int64_t *text_times;               /* distinct poke times, ascending: text
	                                    * epoch k runs from text_times[k-1]
	                                    * to text_times[k] */
	size_t ntext_times;                /* entries (epochs: one more) */
	size_t text_unpatched;             /* poked ranges left as copied (over
	                                    * textpatch.c's budget) */
	/* built by run */
	struct sptd_dec_aspace *aspaces;   /* [0] is the default (aspace.c) */
	size_t naspaces;                   /* entries of aspaces */
	struct sptd_dec_symkey *symtab;    /* open addressing, power-of-two size */
	size_t symcap, symcount;           /* slots and used slots of symtab */
	int64_t next_symbol_id;            /* last symbol id given out */
	int resolve_tid;                   /* task of the last phase-2 resolve */
	struct sptd_dec_aspace *resolve_as; /* its address space; NULL none yet */
	struct sptd_dec_resolved *resolved; /* SPTD_DEC_RESOLVED_SLOTS, direct
	                                    * mapped by address; NULL none yet;
	                                    * freed with the address spaces */
	const struct sptd_dec_sink *sink;  /* during run */
	int saw_time;                      /* some event had a timestamp */
	int no_time;                       /* result of the last run */
};

/* image.c: placements in the section cache (the public add_elf, add_flat
 * and add_bytes place through it). */
/* Add [offset, offset+size) of @path at @addr to the cache and record it
 * with symbols @sf (not owned).  0, -ENOMEM, -EIO. */
int sptd_dec_image_place(struct sptd_dec_session *s, int pid, const char *path,
                         const char *name, uint64_t offset, uint64_t size,
                         uint64_t addr, int64_t bias, int64_t dso_id,
                         struct sptd_dec_symfile *sf);
/* Free every placement and close the memfds behind copied bytes and the
 * files behind file images. */
void sptd_dec_images_free(struct sptd_dec_session *s);

/* Put @len bytes of @data in a memfd kept for the session, named
 * "/proc/self/fd/N" in @path (what libipt reads).  0 or -errno. */
int sptd_dec_image_memfd(struct sptd_dec_session *s, const void *data, size_t len,
                         char *path, size_t pathlen);

/* textpatch.c: kernel code as it ran between TEXT_POKEs. */
/* Place, as images shown only in their epochs, the bytes of every poked
 * range of kernel code as they were before each poke (the session's
 * pokes, applied to the add_bytes copies).  Run once per run, after every
 * image is added.  0, -ENOMEM, -EIO. */
int sptd_dec_text_patches_build(struct sptd_dec_session *s);
/* The text epoch of time @ts: how many of s->text_times are <= @ts. */
int sptd_dec_text_epoch(const struct sptd_dec_session *s, int64_t ts);
/* Free the pokes and the epochs' times. */
void sptd_dec_text_pokes_free(struct sptd_dec_session *s);

/* aspace.c: address spaces, tasks' processes, functions and symbol ids. */
/* Build one address space per process that has images (plus [0], the
 * default).  0 or -ENOMEM. */
int sptd_dec_aspaces_build(struct sptd_dec_session *s);
/* Free what sptd_dec_aspaces_build made; accepts a session without any. */
void sptd_dec_aspaces_free(struct sptd_dec_session *s);
/* The process of task @tid (as added; default: pid = tid). */
int sptd_dec_task_pid(const struct sptd_dec_session *s, int tid);
/* One decoder thread's own section cache.  libipt locks a section, and
 * its cache's LRU list, every time it reads an instruction outside its
 * block cache (each instruction up to a TIP.PGD: every call leaving an
 * IP filter); two threads sharing those locks and the block caches ran
 * slower together than one alone.  A session image's section is added
 * when an image of this thread first maps it; blocks decoded through it
 * carry this cache's isids, so the thread reads code back through it. */
struct sptd_dec_wcache {
	struct pt_image_section_cache *iscache; /* this thread's */
	int *isid;                 /* per session image: its id in iscache, 0 none yet */
	size_t n;                  /* entries of isid (the session's nimages) */
};

/* An empty cache for one thread decoding @s.  0 or -ENOMEM. */
int sptd_dec_wcache_init(struct sptd_dec_wcache *wc, const struct sptd_dec_session *s);
/* Accepts a zeroed cache. */
void sptd_dec_wcache_fini(struct sptd_dec_wcache *wc);

/* A new libipt image of @as in text epoch @epoch (its patches over the
 * kernel code, textpatch.c), for one decoder (thread) alone: pt_image_find
 * moves the section it finds to the front of the image's list, so two
 * threads decoding with one pt_image corrupt it (sections lost: "no
 * image" gaps; a cycle: pt_blk_next never returns).  Sections come from
 * @wc, the thread's own cache (NULL: the session's, which is thread-safe).
 * Freed with pt_image_free().  0, -EINVAL, -ENOMEM or -EIO. */
int sptd_dec_aspace_image_new(struct sptd_dec_session *s, struct sptd_dec_wcache *wc,
                              const struct sptd_dec_aspace *as, int epoch,
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

/* flow.c: phase 1 for one CPU, or one segment of it (its parts:
 * flow-local.h; segments and their stitching: flowseg.c). */
/* One flow event as phase 1 records it: the event, and where in its CPU's
 * instruction stream it happened (what time placement needs). */
struct sptd_dec_flowrec {
	struct sptd_dec_flow ev;    /* the event */
	uint64_t pos;               /* instructions decoded before it */
	size_t seg;                 /* its stretch of constant time (flowtime.c),
	                             * SIZE_MAX before the first */
};
/* Records per chunk of a flowbuf: 4096 * 64 bytes. */
#define SPTD_DEC_FLOW_CHUNK 4096
/* A CPU's (or segment's) flow records in stream order, in fixed-size chunks:
 * appending never copies or moves what is stored (no realloc of megabytes,
 * no page faults on copies). */
struct sptd_dec_flowbuf {
	struct sptd_dec_flowrec **chunks; /* SPTD_DEC_FLOW_CHUNK records each */
	size_t nchunks, capchunks;  /* used and allocated chunk pointers */
	size_t n;                   /* records stored */
};
/* Record @i of @fb (i < fb->n). */
static inline struct sptd_dec_flowrec *sptd_dec_flowbuf_at(const struct sptd_dec_flowbuf *fb,
                                                           size_t i)
{
	return &fb->chunks[i / SPTD_DEC_FLOW_CHUNK][i % SPTD_DEC_FLOW_CHUNK];
}
/* Room for one more record: its address (fb->n is not advanced), NULL
 * when out of memory. */
struct sptd_dec_flowrec *sptd_dec_flowbuf_slot(struct sptd_dec_flowbuf *fb);
/* Free the chunks; accepts a zeroed one. */
void sptd_dec_flowbuf_fini(struct sptd_dec_flowbuf *fb);
/* A run of consecutive records of one flowbuf chunk. */
struct sptd_dec_span {
	struct sptd_dec_flowrec *rec; /* first record */
	size_t n;                   /* records */
};
/* The records of one CPU after its segments are stitched, in stream
 * order, as spans into the segments' flowbufs (nothing copied). */
struct sptd_dec_cpu_flows {
	struct sptd_dec_span *spans; /* in order */
	size_t nspans, capspans;    /* used and allocated entries */
	size_t n;                   /* records in all spans */
};
/* Append records [@from, @to) of @fb to @cf as spans.  0 or -ENOMEM. */
int sptd_dec_cpu_flows_add(struct sptd_dec_cpu_flows *cf, const struct sptd_dec_flowbuf *fb,
                           size_t from, size_t to);
/* Free the span list (not the records); accepts a zeroed one. */
void sptd_dec_cpu_flows_fini(struct sptd_dec_cpu_flows *cf);

/* What phase 1 counts per CPU (the sink's stat names). */
struct sptd_dec_cpu_stats {
	int64_t instructions;       /* instructions decoded */
	int64_t calls, returns;     /* near calls and returns */
	int64_t far_calls, far_returns; /* syscalls, interrupts, iret, sysret ... */
	int64_t interrupts;         /* asynchronous branches */
	int64_t decode_errors;      /* libipt errors and stalls */
	int64_t gaps;               /* gaps recorded */
	int64_t decode_ns;          /* time this CPU's phase 1 took, all its
	                             * segments' threads together */
	int64_t segments;           /* pieces it was decoded in (1: whole) */
	int64_t cr3_mismatches;     /* PIPs naming another process than the
	                             * sched timeline's (cr3check.c) */
	int saw_time;               /* a timing packet was seen */
};
/* A gap found by phase 1, kept until the sink can be called safely; or a
 * PIP to check against the timeline, which becomes a gap only if the
 * check (run over the whole CPU in order, after stitching) finds a
 * mismatch. */
struct sptd_dec_gaprec {
	int64_t ts, end;            /* where it begins and ends (ns, or order) */
	int ts_seq, end_seq;        /* ts / end is an event order number (no
	                             * time yet): a stitch shifts it */
	int cr3_check;              /* 1: a PIP check, not yet a gap */
	uint64_t cr3;               /* cr3_check: the CR3 written */
	int pid;                    /* cr3_check: process the timeline runs */
	size_t napplied;            /* cr3_check: CPU switches applied then */
	char reason[160];           /* "pt: ..." (not for cr3_check) */
};

/* ---- segments (flowseg.c) ---- */

/* One CPU's PT cut at a PSB, decoded by one worker.  A segment decodes
 * from its PSB on, past the next segment's PSB until the two decoders'
 * states provably agree (see flowseg.c), recording checkpoints so the
 * stitch can find where they do. */
struct sptd_dec_segplan {
	int cpu;                    /* the CPU */
	int index;                  /* 0, 1, ... within the CPU */
	int last;                   /* 1: runs to the end of the CPU's PT */
	uint64_t start;             /* offset of the PSB it syncs at (first
	                             * segment: 0, synced forward as a whole
	                             * CPU would be) */
	uint64_t start_win;         /* the PSB after @start: its PSB+'s
	                             * status events come before it */
	uint64_t conv;              /* with CYC timing, decoders agree only
	                             * after this offset (an MTC recalibrating
	                             * both; UINT64_MAX none found); without
	                             * CYC, from the PSB on */
};
/* A decoder's state at the top of its loop (no event pending): what must
 * be equal in two decoders for the rest of their output to be. */
struct sptd_dec_ckpt {
	/* compared */
	uint64_t rel;               /* instructions since the seam's PSB */
	uint64_t offset;            /* libipt: trace offset */
	uint64_t tsc;               /* libipt: time, and its state */
	uint32_t lost_mtc, lost_cyc;
	int time_rc;                /* pt_blk_time's result */
	int status;                 /* libipt status bits at the loop top */
	int tid;                    /* task on the CPU */
	size_t swi;                 /* switches applied */
	const void *as;             /* address space decoded with */
	int in_user, has_time;      /* flow state */
	int64_t now;                /* time (ns) with has_time */
	uint64_t now_tsc;           /* the decoder time @now came from */
	uint64_t last_ip;           /* last instruction decoded */
	int pend_kind;              /* pending branch (kind 0: none) */
	uint64_t pend_from;
	int64_t pend_ts;
	int pend_tid;
	int64_t pend_rel;           /* its position, relative like @rel */
	uint64_t stall_off, stall_n; /* the stall detector */
	int usable;                 /* 0: no cut here (a gap open, or a pending
	                             * branch from an older stretch of time) */
	/* what the stitch cuts at (not compared) */
	uint64_t pos, seq;          /* instruction position and event count */
	size_t nflows, ngaps;       /* records and gap records so far */
	size_t nsegs, nstops;       /* time stretches and stops so far */
	size_t underflows;          /* return-stack underflows so far */
	struct sptd_dec_cpu_stats stats; /* counts so far */
};
/* Checkpoints one decoder recorded. */
struct sptd_dec_ckpts {
	struct sptd_dec_ckpt *v;    /* in stream order */
	size_t n, cap;              /* used and allocated */
};
/* Checkpoints recorded at the head (from a segment's own PSB) and at the
 * tail (from the next segment's PSB) of a segment. */
#define SPTD_DEC_SEAM_CKPTS 48

/* Everything phase 1 found in one CPU or one segment. */
struct sptd_dec_cpu_result {
	struct sptd_dec_flowbuf flows; /* flow records */
	struct sptd_dec_gaprec *gaps;  /* gaps (and PIP checks), in the order found */
	size_t ngaps, capgaps;      /* used and allocated entries of gaps */
	struct sptd_dec_cpu_stats stats; /* counts */
	int err;                    /* < 0: phase 1 failed (not a decode error) */
	int64_t last_ts;            /* time of the last timing packet, -1 none:
	                             * the data reach past the last branch */
	struct sptd_dec_tplace *tplace; /* its time stretches (flowtime.c) */
	int has_cyc;                /* its stretch of PT holds a CYC packet */
	size_t underflows;          /* compressed returns libipt found no call
	                             * for: a segment's decoder knows no call
	                             * made before its PSB, which a decoder
	                             * coming from earlier data does */
	struct sptd_dec_ckpts head; /* from its own PSB (not the first segment) */
	int head_ok;                /* the head began at that PSB's status events */
	struct sptd_dec_ckpts tail; /* from the next segment's PSB (not the last) */
	int tail_ok;                /* the tail began at that PSB's status events */
};
/* Decode what @plan says of CPU @cpu's PT of @s (its address spaces
 * built) into @res (zeroed by the caller, freed with
 * sptd_dec_cpu_result_fini); @plan NULL: the whole CPU.  @next is the
 * segment after @plan (NULL: none).  @wc: the calling thread's section
 * cache (NULL: the session's).  Decode errors are gaps, not failures:
 * < 0 only for -ENOMEM, -EINVAL, -EIO. */
int sptd_dec_flow_cpu(struct sptd_dec_session *s, struct sptd_dec_wcache *wc, int cpu,
                      const struct sptd_dec_segplan *plan, const struct sptd_dec_segplan *next,
                      struct sptd_dec_cpu_result *res);
/* Free what phase 1 put in @res; accepts NULL. */
void sptd_dec_cpu_result_fini(struct sptd_dec_cpu_result *res);
struct pt_config;
/* libipt's configuration for CPU data @c of @s: the CPU and its errata,
 * timing parameters, blocks ending at calls and jumps.  0. */
int sptd_dec_flow_config(const struct sptd_dec_session *s, const struct sptd_dec_cpu *c,
                         struct pt_config *cfg);

/* CLOCK_MONOTONIC in ns: what the decode times itself with (decode_ns,
 * power_ns). */
static inline int64_t sptd_dec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* power.c: the power events and PTWRITEs of one CPU. */
struct sptd_dec_power_buf {
	struct sptd_dec_power *ev;  /* in time order */
	size_t n, cap;              /* used / allocated entries */
	int err;                    /* < 0: collecting failed (-ENOMEM) */
	int64_t ns;                 /* how long reading them took (stat power_ns) */
};
/* Read CPU @cpu's PT of @s for them into @out (zeroed by the caller): safe
 * beside other threads once the switches are sorted.  0 or -ENOMEM;
 * decode errors only skip to the next PSB. */
int sptd_dec_power_collect(const struct sptd_dec_session *s, int cpu,
                           struct sptd_dec_power_buf *out);
/* Hand @bufs[0..@n) (by CPU) to s->sink->power from the calling thread and
 * free them.  0, a collect error, or the sink's. */
int sptd_dec_power_emit(struct sptd_dec_session *s, struct sptd_dec_power_buf *bufs, int n);

/* flowseg.c: cutting a CPU's PT into segments and stitching them back. */
/* Up to @max segments of about @bytes each for the @len bytes of PT at
 * @data, cut at PSBs, into @plans (at least 1 entry: a trace too short to
 * cut is one segment).  Returns the count, or -ENOMEM. */
int sptd_dec_seg_plan(const struct sptd_dec_session *s, int cpu, const uint8_t *data,
                      size_t len, size_t bytes, int max, struct sptd_dec_segplan *plans);
/* The stitched result of one CPU. */
struct sptd_dec_stitched {
	struct sptd_dec_cpu_flows flows; /* records in stream order */
	struct sptd_dec_gaprec *gaps; /* gaps in order (PIP checks resolved) */
	size_t ngaps;               /* entries of gaps */
	struct sptd_dec_cpu_stats stats; /* summed counts */
	struct sptd_dec_tplace *tplace; /* the time stretches of all segments */
	int64_t last_ts;            /* as in a result */
	int seams, met;             /* seams between segments, and how many met */
};
/* Stitch the @n results @res of one CPU's consecutive segments @plans
 * (decoded in parallel) into @out: 0; 1 when the seam between segments
 * *@bad - 1 and *@bad has no point where both decoders agree (then decode
 * those two again as one segment and stitch again); or -ENOMEM.  Events
 * are edited in place (positions, order numbers, stretches) only once
 * every seam met; @out's spans point into the results, which must outlive
 * it. */
int sptd_dec_seg_stitch(struct sptd_dec_session *s, const struct sptd_dec_segplan *const *plans,
                        struct sptd_dec_cpu_result *const *res, size_t n,
                        struct sptd_dec_stitched *out, size_t *bad);
/* After stitching (or for one whole-CPU result): place events in time,
 * fix early and untimed times, and check the PIPs against the timeline
 * (their mismatches become gaps).  0 or -ENOMEM. */
int sptd_dec_seg_finish(struct sptd_dec_session *s, int cpu, struct sptd_dec_stitched *st,
                        int has_cyc);
/* Free what stitching allocated (not the results). */
void sptd_dec_stitched_fini(struct sptd_dec_stitched *st);

/* flowsort.c: phase 2's order (tid; CPU when tid < 0; ts; cpu; seq; then
 * input order). */
/* Pointers to the events of @ncpus CPUs' records @cpus (input order: CPU by
 * CPU, each in stream order) in phase 2's order: *@out (malloc'ed, the
 * caller frees it) of *@nout entries.  0 or -ENOMEM. */
int sptd_dec_flows_order(const struct sptd_dec_cpu_flows *cpus, int ncpus,
                         struct sptd_dec_flow ***out, size_t *nout);
/* Sort @nev events of *@evp (malloc'ed) into phase 2's order, stably.
 * *@evp is replaced by a new array of exactly @nev entries.  0, or
 * -ENOMEM: then *@evp stays as it was. */
int sptd_dec_flows_sort(struct sptd_dec_flow **evp, size_t nev);

/* stack.c: phase 2 over the events of a decode session, in place. */
/* As sptd_dec_stacks_run, over the records of @ncpus CPUs @cpus (not
 * copied: their events are read where phase 1 put them) instead of the
 * queue. */
int64_t sptd_dec_stacks_run_cpus(struct sptd_dec_stacks *st, const struct sptd_dec_cpu_flows *cpus,
                                 int ncpus, int64_t start, int64_t end);
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
