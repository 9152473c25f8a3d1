/* qcode-local.h — the code the own flow decoder walks (qcode.c): sections
 * of one address space as libipt's image has them, and a cache of decoded
 * instructions.  Only qblk.c and tests include it. */
#ifndef SPTD_QCODE_LOCAL_H
#define SPTD_QCODE_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

#include "qblk-local.h"

/* One section placed in an address space. */
struct sptd_dec_qsec {
	uint64_t addr, end;                        /* where it is mapped: [addr, end) */
	struct pt_image_section_cache *iscache;    /* where its bytes are read; borrowed */
	int isid;                                  /* its id there */
};

/* The code of one address space in one text epoch: sections in the order
 * libipt's image got them (a later one hides what it overlaps). */
struct sptd_dec_qmap {
	const struct sptd_dec_aspace *as;          /* whose */
	int epoch;                                 /* which text epoch */
	uint32_t id;                               /* cache key, unique per decoder */
	struct sptd_dec_qsec *secs;                /* sections, in order added */
	size_t n;                                  /* their count */
};

/* One decoded instruction and where its bytes came from. */
struct sptd_dec_qinsn {
	struct sptd_dec_ild ild;                   /* length, class, target */
	int isid;                                  /* section of its first byte */
	int truncated;                             /* its bytes span sections */
	uint8_t raw[15];                           /* its bytes (valid on a slow decode) */
};

/* Slots of the instruction cache: a power of two. */
#define SPTD_DEC_QCACHE_SLOTS (1u << 16)

/* One remembered instruction (never a truncated one). */
struct sptd_dec_qslot {
	uint64_t ip;                               /* its address */
	uint32_t mapid;                            /* the map it was read from; 0 empty */
	uint8_t mode;                              /* enum pt_exec_mode */
	int isid;                                  /* its section */
	struct sptd_dec_ild ild;                   /* the decode */
};

/* Decoded instructions and runs, direct-mapped by address.  One per
 * decoder. */
struct sptd_dec_qcache {
	struct sptd_dec_qslot *slots;              /* SPTD_DEC_QCACHE_SLOTS */
	struct sptd_dec_qrun *runs;                /* SPTD_DEC_QRUN_SLOTS */
};

/* Straight-line code from one address: instructions that need neither
 * trace nor a branch (ptic_other, ptic_ptwrite) in one section, then the
 * branch that ends them, when it is in that section too. */
struct sptd_dec_qrun {
	uint64_t ip;                               /* first instruction */
	uint32_t mapid;                            /* map it was read from; 0 empty */
	uint8_t mode;                              /* enum pt_exec_mode */
	uint8_t has_term;                          /* 1: @term ends it; 0: it stops
	                                            * before a section change, an
	                                            * instruction that does not
	                                            * decode, or after many */
	uint8_t last_class;                        /* without @term: the class of
	                                            * its last instruction */
	uint16_t n;                                /* straight-line instructions */
	int isid;                                  /* their section */
	uint64_t last_ip;                          /* the last of them (n > 0) */
	uint64_t next_ip;                          /* where they end: @term's ip,
	                                            * or the next instruction */
	struct sptd_dec_ild term;                  /* the branch, with has_term */
};

/* Slots of the run cache: a power of two. */
#define SPTD_DEC_QRUN_SLOTS (1u << 14)

/* Most straight-line instructions one run holds. */
#define SPTD_DEC_QRUN_MAX 4096

/* Put together the code of @as in @epoch into @m (its id left 0).  0 or
 * -ENOMEM. */
int sptd_dec_qcode_build(struct sptd_dec_session *s, struct sptd_dec_wcache *wc,
                         const struct sptd_dec_aspace *as, int epoch, struct sptd_dec_qmap *m);
/* Accepts a zeroed one. */
void sptd_dec_qcode_fini(struct sptd_dec_qmap *m);
/* Decode the instruction at @ip of @m (NULL: no code) in @mode, as libipt's
 * pt_insn_decode does: -pte_nomap, -pte_bad_insn or 0. */
int sptd_dec_qcode_decode_slow(const struct sptd_dec_qmap *m, uint64_t ip, enum pt_exec_mode mode,
                               struct sptd_dec_qinsn *out);
/* An empty cache: 0 or -ENOMEM. */
int sptd_dec_qcode_cache_init(struct sptd_dec_qcache *c);
/* Accepts a zeroed one. */
void sptd_dec_qcode_cache_fini(struct sptd_dec_qcache *c);
/* The miss path of sptd_dec_qcode_decode: decode and remember. */
int sptd_dec_qcode_decode_fill(struct sptd_dec_qcache *c, const struct sptd_dec_qmap *m,
                               uint32_t mapid, uint64_t ip, enum pt_exec_mode mode,
                               struct sptd_dec_qinsn *out);

/* The miss path of sptd_dec_qcode_run: walk and remember; NULL when the
 * first instruction does not decode (the caller walks it singly). */
const struct sptd_dec_qrun *sptd_dec_qcode_run_fill(struct sptd_dec_qcache *c,
                                                    const struct sptd_dec_qmap *m, uint64_t ip,
                                                    enum pt_exec_mode mode);

/* 1 when the PT of @cfg (a CPU's) holds a packet the own decoder leaves to
 * libipt (PTWRITE), 0 when not; then
 * that CPU (each of its segments: the decode of one runs on into the next)
 * is decoded with libipt's block decoder. */
int sptd_dec_qcode_unsupported(const struct pt_config *cfg);

static inline struct sptd_dec_qrun *sptd_dec_qrun_slot(struct sptd_dec_qcache *c, uint64_t ip)
{
	return &c->runs[(ip ^ (ip >> 14)) & (SPTD_DEC_QRUN_SLOTS - 1)];
}

/* The run from @ip of @m in @mode, from the cache when it is there. */
static inline const struct sptd_dec_qrun *sptd_dec_qcode_run(struct sptd_dec_qcache *c,
                                                             const struct sptd_dec_qmap *m,
                                                             uint64_t ip, enum pt_exec_mode mode)
{
	const struct sptd_dec_qrun *r;

	if (!m)
		return NULL;
	r = sptd_dec_qrun_slot(c, ip);
	if (r->ip == ip && r->mapid == m->id && r->mode == (uint8_t)mode)
		return r;
	return sptd_dec_qcode_run_fill(c, m, ip, mode);
}

static inline struct sptd_dec_qslot *sptd_dec_qcache_slot(struct sptd_dec_qcache *c, uint64_t ip)
{
	return &c->slots[(ip ^ (ip >> 16)) & (SPTD_DEC_QCACHE_SLOTS - 1)];
}

/* The instruction at @ip of @m in @mode, from the cache when it is there
 * (then raw is not filled). */
static inline int sptd_dec_qcode_decode(struct sptd_dec_qcache *c, const struct sptd_dec_qmap *m,
                                        uint64_t ip, enum pt_exec_mode mode,
                                        struct sptd_dec_qinsn *out)
{
	const struct sptd_dec_qslot *sl;

	if (m && c->slots) {
		sl = sptd_dec_qcache_slot(c, ip);
		if (sl->ip == ip && sl->mapid == m->id && sl->mode == (uint8_t)mode) {
			out->ild = sl->ild;
			out->isid = sl->isid;
			out->truncated = 0;
			return 0;
		}
	}
	return sptd_dec_qcode_decode_fill(c, m, m ? m->id : 0, ip, mode, out);
}

/* Entries of the return stack: as libipt's. */
#define SPTD_DEC_QRET_SIZE 64

/* Return addresses of the calls decoded, for compressed returns: a ring
 * that forgets the oldest when full, as libipt's. */
struct sptd_dec_qretstack {
	uint64_t stack[SPTD_DEC_QRET_SIZE + 1];    /* the ring */
	uint8_t top, bottom;                       /* its ends; equal: empty */
};

static inline void sptd_dec_qret_push(struct sptd_dec_qretstack *r, uint64_t ip)
{
	r->stack[r->top] = ip;
	r->top = r->top == SPTD_DEC_QRET_SIZE ? 0 : (uint8_t)(r->top + 1);
	if (r->top == r->bottom)
		r->bottom = r->bottom == SPTD_DEC_QRET_SIZE ? 0 : (uint8_t)(r->bottom + 1);
}

/* The latest return address into *@ip: 0, or -pte_retstack_empty. */
static inline int sptd_dec_qret_pop(struct sptd_dec_qretstack *r, uint64_t *ip)
{
	if (r->top == r->bottom)
		return -pte_retstack_empty;
	r->top = r->top ? (uint8_t)(r->top - 1) : SPTD_DEC_QRET_SIZE;
	*ip = r->stack[r->top];
	return 0;
}

#endif /* SPTD_QCODE_LOCAL_H */
