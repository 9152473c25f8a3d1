/* qblk-local.h — the flow decoder of sysptd's own (qblk.c, on libipt's
 * query layer, with the instruction length decoder ild.c) and the switch
 * between it and libipt's block decoder that phase 1 (flow.c, seam.c)
 * decodes through.  The own decoder hands out the blocks and events
 * libipt's block decoder would (end_on_call and end_on_jump set): same
 * boundaries, same query order, so the same trace offsets and times.  Only
 * decode/ (and its white-box tests) include it. */
#ifndef SPTD_QBLK_LOCAL_H
#define SPTD_QBLK_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

struct sptd_dec_session;
struct sptd_dec_wcache;
struct sptd_dec_aspace;

/* ---- instruction length decoder (ild.c) ------------------------------------- */

/* What the flow needs beyond the class. */
enum {
	SPTD_DEC_ILD_MOV_CR3 = 1,  /* mov to CR3: a PIP binds to it */
	SPTD_DEC_ILD_VMENTRY = 2,  /* vmlaunch / vmresume */
	SPTD_DEC_ILD_VMPTRLD = 3,  /* vmptrld: a VMCS packet binds to it */
};

/* One decoded instruction. */
struct sptd_dec_ild {
	uint8_t size;              /* bytes */
	uint8_t iclass;            /* enum pt_insn_class */
	uint8_t direct;            /* a direct (relative) near branch */
	uint8_t special;           /* SPTD_DEC_ILD_*; 0 none */
	int32_t disp;              /* its displacement, when direct */
};

/* Decode the instruction in the first @n bytes of @b (at most 15 are
 * looked at) in @mode.  0, or -pte_bad_insn when the bytes end before the
 * instruction does or @mode is unknown. */
int sptd_dec_ild_decode(const uint8_t *b, size_t n, enum pt_exec_mode mode,
                        struct sptd_dec_ild *out);

/* ---- the own block decoder (qblk.c) ----------------------------------------- */

struct sptd_dec_qblk;

/* A decoder of the PT @cfg describes (its flags as flow.c sets them).
 * 0, -ENOMEM or -EINVAL. */
int sptd_dec_qblk_create(const struct pt_config *cfg, struct sptd_dec_qblk **out);
/* Accepts NULL. */
void sptd_dec_qblk_destroy(struct sptd_dec_qblk *q);
/* Decode code from the images of @as in text epoch @epoch (as
 * sptd_dec_aspace_image_new puts them together) from now on.  0 or
 * -ENOMEM. */
int sptd_dec_qblk_set_aspace(struct sptd_dec_qblk *q, struct sptd_dec_session *s,
                             struct sptd_dec_wcache *wc, const struct sptd_dec_aspace *as,
                             int epoch);
/* As pt_blk_sync_forward, pt_blk_sync_set, pt_blk_next, pt_blk_event,
 * pt_blk_time, pt_blk_get_offset and pt_blk_get_sync_offset: libipt's
 * status flags and error codes. */
int sptd_dec_qblk_sync_forward(struct sptd_dec_qblk *q);
int sptd_dec_qblk_sync_set(struct sptd_dec_qblk *q, uint64_t offset);
int sptd_dec_qblk_next(struct sptd_dec_qblk *q, struct pt_block *b);
int sptd_dec_qblk_event(struct sptd_dec_qblk *q, struct pt_event *ev);
int sptd_dec_qblk_time(const struct sptd_dec_qblk *q, uint64_t *tsc, uint32_t *lost_mtc,
                       uint32_t *lost_cyc);
int sptd_dec_qblk_get_offset(const struct sptd_dec_qblk *q, uint64_t *off);
int sptd_dec_qblk_get_sync_offset(const struct sptd_dec_qblk *q, uint64_t *off);

/* 1 when the own decoder leaves the PT of @cfg to libipt's
 * (sptd_dec_qcode_unsupported), 0 when not. */
int sptd_dec_qblk_unsupported(const struct pt_config *cfg);

/* ---- which decoder phase 1 uses --------------------------------------------- */

/* One of the two decoders: exactly one of @lib and @own is set. */
struct sptd_dec_blkdec {
	struct pt_block_decoder *lib;  /* libipt's block decoder */
	struct sptd_dec_qblk *own;     /* the own one */
};

static inline int sptd_dec_blk_sync_forward(struct sptd_dec_blkdec *d)
{
	return d->own ? sptd_dec_qblk_sync_forward(d->own) : pt_blk_sync_forward(d->lib);
}

static inline int sptd_dec_blk_sync_set(struct sptd_dec_blkdec *d, uint64_t off)
{
	return d->own ? sptd_dec_qblk_sync_set(d->own, off) : pt_blk_sync_set(d->lib, off);
}

static inline int sptd_dec_blk_next(struct sptd_dec_blkdec *d, struct pt_block *b)
{
	return d->own ? sptd_dec_qblk_next(d->own, b) : pt_blk_next(d->lib, b, sizeof(*b));
}

static inline int sptd_dec_blk_event(struct sptd_dec_blkdec *d, struct pt_event *ev)
{
	return d->own ? sptd_dec_qblk_event(d->own, ev) : pt_blk_event(d->lib, ev, sizeof(*ev));
}

static inline int sptd_dec_blk_time(const struct sptd_dec_blkdec *d, uint64_t *tsc, uint32_t *lost_mtc,
                                    uint32_t *lost_cyc)
{
	return d->own ? sptd_dec_qblk_time(d->own, tsc, lost_mtc, lost_cyc)
	              : pt_blk_time(d->lib, tsc, lost_mtc, lost_cyc);
}

static inline int sptd_dec_blk_get_offset(const struct sptd_dec_blkdec *d, uint64_t *off)
{
	return d->own ? sptd_dec_qblk_get_offset(d->own, off) : pt_blk_get_offset(d->lib, off);
}

static inline int sptd_dec_blk_get_sync_offset(const struct sptd_dec_blkdec *d, uint64_t *off)
{
	return d->own ? sptd_dec_qblk_get_sync_offset(d->own, off)
	              : pt_blk_get_sync_offset(d->lib, off);
}

#endif /* SPTD_QBLK_LOCAL_H */
