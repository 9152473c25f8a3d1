/* flow-local.h — the units phase 1 (flow.c, the decode loop) is built from:
 * the opcode classifier (opclass.c), the branch-class cache (brcache.c),
 * time placement (flowtime.c), the PIP/CR3 cross-check (cr3check.c) and
 * the checkpoints at segment seams (seam.c, which reads the loop's state).
 * None of them calls back into flow.c.  Only decode/ (and its white-box
 * tests) include it. */
#ifndef SPTD_FLOW_LOCAL_H
#define SPTD_FLOW_LOCAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

#include "dec-local.h"
#include "qblk-local.h"

/* ---- opcode classifier (opclass.c) ------------------------------------------ */

/* The class of the x86 instruction whose first @n bytes (up to 16 are looked
 * at) are @insn, executed in @mode: legacy prefixes and (in 64-bit mode) REX
 * are skipped, and only the opcodes that end a block are told apart (call,
 * jump, return, far call/jump/return, syscall/sysenter, sysret/sysexit);
 * every other opcode is ptic_other.  ptic_error when @n is 0 or the bytes
 * end before the opcode does. */
enum pt_insn_class sptd_dec_opclass(const uint8_t *insn, size_t n, enum pt_exec_mode mode);

/* ---- branch-class cache (brcache.c) ----------------------------------------- */

/* Slots of the cache: a power of two. */
#define SPTD_DEC_BRCACHE_SLOTS 4096

/* One remembered branch class: code does not change under a section, so
 * (section, ip, mode) always gives the same answer. */
struct sptd_dec_brclass {
	uint64_t ip;                  /* end ip of the block */
	int isid;                     /* section it was read from; 0: empty slot */
	int mode;                     /* enum pt_exec_mode */
	int iclass;                   /* enum pt_insn_class */
};

/* Branch classes of the blocks libipt leaves unclassified (its block cache
 * leaves iclass at ptic_error for indirect and far branches: the caller is
 * to decode the instruction), direct-mapped by end ip.  One per decoder
 * thread. */
struct sptd_dec_brcache {
	struct sptd_dec_brclass *slots;          /* SPTD_DEC_BRCACHE_SLOTS; NULL: no cache */
	struct pt_image_section_cache *iscache;  /* where block bytes are read; borrowed */
};

/* An empty cache reading code from @iscache.  0 or -ENOMEM (then @bc is
 * still usable, uncached). */
int sptd_dec_brcache_init(struct sptd_dec_brcache *bc, struct pt_image_section_cache *iscache);
/* Accepts a zeroed or failed cache. */
void sptd_dec_brcache_fini(struct sptd_dec_brcache *bc);
/* The class of the branch ending @b, read from @iscache (or the block's raw
 * bytes when it is truncated) and classified, without the cache. */
enum pt_insn_class sptd_dec_block_class(struct pt_image_section_cache *iscache,
                                        const struct pt_block *b);
/* sptd_dec_block_class, remembered in @bc (the miss path of
 * sptd_dec_brcache_class). */
enum pt_insn_class sptd_dec_brcache_fill(struct sptd_dec_brcache *bc, const struct pt_block *b);

/* The slot of @bc that remembers the block ending at @ip. */
static inline struct sptd_dec_brclass *sptd_dec_brcache_slot(struct sptd_dec_brcache *bc,
                                                             uint64_t ip)
{
	return &bc->slots[(ip ^ (ip >> 12)) & (SPTD_DEC_BRCACHE_SLOTS - 1)];
}

/* The class of the branch ending @b, remembered per (section, ip, mode)
 * unless the block is truncated (its bytes span sections).  Inline: phase 1
 * asks for every block that ends in a return or indirect branch. */
static inline enum pt_insn_class sptd_dec_brcache_class(struct sptd_dec_brcache *bc,
                                                        const struct pt_block *b)
{
	const struct sptd_dec_brclass *c;

	if (b->truncated || b->isid <= 0 || !bc->slots)
		return sptd_dec_block_class(bc->iscache, b);
	c = sptd_dec_brcache_slot(bc, b->end_ip);
	if (c->isid == b->isid && c->ip == b->end_ip && c->mode == (int)b->mode)
		return (enum pt_insn_class)c->iclass;
	return sptd_dec_brcache_fill(bc, b);
}

/* ---- time placement (flowtime.c) -------------------------------------------- */

/* A stretch of constant decoder time: from the update to @ts on. */
struct sptd_dec_tseg {
	int64_t ts;                   /* the time (ns) from this update on */
	uint64_t pos;                 /* instructions decoded at the update */
	int stopped;                  /* tracing stopped within the stretch */
	uint64_t stop_pos;            /* instruction position of the first stop */
};

/* A stop of tracing, kept so that stitched segments can replay it. */
struct sptd_dec_tstop {
	uint64_t pos;                 /* instruction position */
	size_t nsegs;                 /* stretches that existed then */
};

/* One CPU's time updates and stops: what placing events between two times
 * needs (each event's position and stretch are in its flow record). */
struct sptd_dec_tplace {
	struct sptd_dec_tseg *segs;   /* every change of the decoder's time */
	size_t nsegs, capsegs;        /* used and allocated entries of segs */
	struct sptd_dec_tstop *stops; /* every stop, in order */
	size_t nstops, capstops;      /* used and allocated entries of stops */
};

/* Where placement is in a run over a CPU's records in order: the average
 * rate of the stopless stretches seen so far. */
struct sptd_dec_tplace_cursor {
	size_t k;                     /* stretches summed so far */
	int64_t rate_num;             /* their ns ... */
	uint64_t rate_den;            /* ... and instructions */
};

/* The decoder's time changed to @ts at instruction position @pos: a new
 * stretch.  0 or -ENOMEM. */
int sptd_dec_tplace_mark(struct sptd_dec_tplace *tp, int64_t ts, uint64_t pos);
/* Tracing stopped at instruction position @pos: the stretch it stopped in
 * keeps step times (see flowtime.c); the stop is logged for
 * sptd_dec_tplace_restop.  0 or -ENOMEM. */
int sptd_dec_tplace_stop(struct sptd_dec_tplace *tp, uint64_t pos);
/* Clear every stretch's stop and apply the logged stops again (after
 * stretches and stops of stitched segments were put together). */
void sptd_dec_tplace_restop(struct sptd_dec_tplace *tp);
/* Place records @rec[0..@n) (each stamped with its stretch's time)
 * between their stretch's time and the next one's, by instruction
 * position; @sw / @nsw are the CPU's context switches by time (they bound
 * stretches where tracing stopped).  Call it on a CPU's records in stream
 * order, span after span, with one zeroed @cur. */
void sptd_dec_tplace_apply(const struct sptd_dec_tplace *tp, struct sptd_dec_tplace_cursor *cur,
                           struct sptd_dec_flowrec *rec, size_t n,
                           const struct sptd_dec_switch *sw, size_t nsw);
/* Accepts a zeroed one. */
void sptd_dec_tplace_fini(struct sptd_dec_tplace *tp);
/* 1 when the trace @cfg describes holds a CYC packet (its times are
 * cycle-accurate: nothing to place), 0 when not, -ENOMEM. */
int sptd_dec_trace_has_cyc(const struct pt_config *cfg);
/* Records timed before the first timing packet (ts < 0) take @first, the
 * time of the CPU's first timed record; with no timing packet at all
 * (@saw_time 0) every record gets its order number and SPTD_DEC_F_NO_TIME. */
void sptd_dec_flows_fix_times(struct sptd_dec_flowrec *rec, size_t n, int saw_time,
                              int64_t first);

/* The current stretch of constant time, SIZE_MAX before the first. */
static inline size_t sptd_dec_tplace_seg_now(const struct sptd_dec_tplace *tp)
{
	return tp->nsegs ? tp->nsegs - 1 : SIZE_MAX;
}

/* ---- PIP/CR3 cross-check (cr3check.c) --------------------------------------- */

/* A CR3 a CPU has seen, and the process it was bound to. */
struct sptd_dec_cr3 {
	uint64_t cr3;                 /* page-table base from a PIP */
	int pid;                      /* process the timeline ran at its first PIP */
};

/* The CR3s of one CPU: the first CR3 seen while the timeline runs a process
 * binds it to that process (threads share one). */
struct sptd_dec_cr3check {
	struct sptd_dec_cr3 *cr3s;    /* CR3s learned */
	size_t n, cap;                /* used and allocated entries */
	size_t flagged;               /* 1 + switches applied at the last
	                               * reported mismatch; 0 none */
};

/* @cr3 was written while the timeline runs process @pid, @napplied of the
 * CPU's switches applied.  0: consistent (or newly bound); 1: a mismatch to
 * report (the first in this stretch between two switches), the process
 * @cr3 is bound to in *@bound_pid; -ENOMEM. */
int sptd_dec_cr3check_see(struct sptd_dec_cr3check *c, uint64_t cr3, int pid,
                          size_t napplied, int *bound_pid);
/* Accepts a zeroed one. */
void sptd_dec_cr3check_fini(struct sptd_dec_cr3check *c);

/* ---- the decode loop's state (flow.c) and seam checkpoints (seam.c) ---------- */

/* State of one CPU's (or segment's) decode (flow.c; seam.c reads it). */
struct sptd_dec_flowstate {
	struct sptd_dec_session *s;        /* the session decoded */
	struct sptd_dec_wcache *wc;        /* this thread's sections; NULL the session's */
	struct pt_image_section_cache *iscache; /* where code is read: wc's or the session's */
	struct sptd_dec_cpu_result *res;   /* where results go */
	struct sptd_dec_blkdec dec;        /* the block decoder (libipt's or own) */
	int cpu;                           /* the CPU decoded */
	const struct sptd_dec_segplan *plan; /* the segment decoded; NULL whole CPU */
	const struct sptd_dec_segplan *next; /* the one after it; NULL none */
	const struct sptd_dec_switch *sw;  /* this CPU's switches, by time */
	size_t nsw, swi;                   /* count, next to apply */
	int tid;                           /* task on the CPU now, -1 unknown */
	struct sptd_dec_aspace *as;        /* its address space */
	int epoch;                         /* text epoch of the images (textpatch.c) */
	struct pt_image **images;          /* this decoder's own libipt image of
	                                    * each address space (by index in
	                                    * s->aspaces), built on first use */
	int64_t now;                       /* latest time (ns), valid with has_time */
	uint64_t now_tsc;                  /* the decoder time @now was made from */
	int has_time;                      /* a timing packet has been seen */
	uint64_t seq;                      /* events so far: order and tie-break */
	uint64_t last_ip;                  /* last instruction decoded */
	uint64_t blk_ip;                   /* the last block's first instruction */
	uint32_t blk_ninsn;                /* ... its instruction count */
	int blk_isid;                      /* ... its section */
	int in_user;                       /* 1: decoding user code with tracing
	                                    * on (no switch can happen now) */
	/* the branch ending the previous block, waiting for its target */
	int pend_kind;                     /* SPTD_DEC_FLOW_*; 0: none */
	uint64_t pend_from;                /* its ip */
	int64_t pend_ts;                   /* its time (flow_ts) */
	int pend_tid;                      /* the task it ran in */
	uint64_t pend_pos;                 /* its instruction position */
	size_t pend_seg;                   /* its stretch of constant time */
	int peek_tid;                      /* task whose address space is peek_as */
	struct sptd_dec_aspace *peek_as;   /* for jump targets; NULL none yet */
	uint64_t pos;                      /* instructions decoded so far */
	struct sptd_dec_tplace *tp;        /* time updates, for placing events
	                                    * between them (flowtime.c); res's */
	uint64_t stall_off, stall_n;       /* trace offset of the last block and
	                                    * instructions decoded at it */
	int status_seen;                   /* the last event drain held PSB+
	                                    * status updates */
	uint64_t head_pos, tail_pos;       /* positions of the seam checkpoints'
	                                    * origins (segments) */
	int head_on, tail_on;              /* recording head / tail checkpoints */
	int head_done;                     /* the head's origin was decided */
	unsigned seam_polls;               /* loop tops that skipped the seam
	                                    * bookkeeping (seam.c) */
	struct sptd_dec_brcache br;        /* branch classes of blocks libipt
	                                    * left unclassified (brcache.c) */
	/* an open gap (after an error or overflow) */
	int gap_open;                      /* 1: a gap is open */
	int64_t gap_ts;                    /* where it began (time, or order) */
	int gap_ts_seq;                    /* gap_ts is an order number */
	char gap_reason[160];              /* why, "pt: ..." */
};


/* flowtime.c: an event libipt hands out carries the time of the last
 * timing packet before it, which may be earlier than the decoder's time
 * (it reads packets ahead): the stretch marked at this instruction
 * position is lowered to it (see flowtime.c). */
void sptd_dec_flow_event_time(struct sptd_dec_flowstate *fs, const struct pt_event *ev);

/* Segment bookkeeping at the top of the decode loop (no event pending,
 * libipt status @status): checkpoints from the segment's own PSB (its
 * head) and from the next segment's (its tail), each taken once that PSB's
 * status updates were read.  1 when the tail is long enough for the stitch
 * and decoding should end, 0 go on, -ENOMEM. */
int sptd_dec_seam_step(struct sptd_dec_flowstate *fs, int status);
/* Room for one more checkpoint in @c (c->n advanced), NULL when out of
 * memory. */
struct sptd_dec_ckpt *sptd_dec_ckpts_push(struct sptd_dec_ckpts *c);
/* 1 when two decoders at checkpoints @a and @b (each relative to the same
 * seam) are in the same state: decoding on, both give the same output. */
int sptd_dec_ckpt_same(const struct sptd_dec_ckpt *a, const struct sptd_dec_ckpt *b);

#endif /* SPTD_FLOW_LOCAL_H */
