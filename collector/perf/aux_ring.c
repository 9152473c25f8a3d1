/* aux_ring.c — copying the history out of an AUX ring in overwrite
 * (snapshot) mode.
 *
 * In overwrite mode the PMU writes round and round; the kernel reports the
 * write position in aux_head.  Depending on the PMU that is a free-running
 * byte counter or the offset inside the ring (Intel PT's snapshot mode sets
 * it from the ToPA position), so the copy only trusts head modulo the size
 * and decides "wrapped" from the counter, or, below one ring size, from the
 * bytes after the head: the kernel allocates AUX pages zeroed, and PT never
 * leaves a run of zeroes... except PAD packets, which are 0x00 — so a ring
 * counts as not wrapped only when everything after the head is zero. */
#include <errno.h>
#include <string.h>

#include "perf-local.h"

static int all_zero(const unsigned char *p, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

int64_t sptd_col_pt_aux_copy(const void *base, uint64_t size, uint64_t head, void *dst)
{
	const unsigned char *ring = base;
	uint64_t pos, len;

	if (!base || !dst || size == 0 || (size & (size - 1)) != 0)
		return -EINVAL;
	pos = head & (size - 1);
	if (head >= size || !all_zero(ring + pos, size - pos))
		len = size;            /* wrapped: the oldest byte is at the head */
	else
		len = pos;             /* never wrapped: [0, head) */
	if (len)
		sptd_col_ring_copy(base, size, pos, len, dst);
	return (int64_t)len;
}

/* ---- since the re-arm ---------------------------------------------------------- */

/* On re-enable the kernel resumes an overwrite-mode AUX ring at the old
 * aux_head without clearing it (perf_aux_output_begin hands the PMU
 * rb->aux_head; Intel PT's snapshot mode restarts its ToPA output there:
 * pt_buffer_reset_offsets), so the ring holds the previous incidents' trace
 * behind the new one.  Intel PT's snapshot head is a position, which cannot
 * tell a ring gone round once from one barely written: perf keeps a
 * reference copy and compares (tools/perf/arch/x86/util/intel-pt.c,
 * intel_pt_find_snapshot), and so does this, with the bytes just before the
 * re-arm head: the PMU overwrites them last. */

int sptd_col_pt_aux_mark(const void *base, uint64_t size, uint64_t head,
                         struct sptd_col_pt_aux_mark *mark)
{
	uint64_t pos;

	if (!base || !mark || size == 0 || (size & (size - 1)) != 0)
		return -EINVAL;
	pos = head & (size - 1);
	mark->head = head;
	mark->ref_len = size < SPTD_COL_PT_AUX_REF ? size : SPTD_COL_PT_AUX_REF;
	sptd_col_ring_copy(base, size, pos, mark->ref_len, mark->ref);
	return 0;
}

/* 1 when the last @n bytes of @mark's reference are still in the ring
 * (@base, @size) just before the mark's head. */
static int ref_intact(const unsigned char *base, uint64_t size,
                      const struct sptd_col_pt_aux_mark *mark, uint64_t n)
{
	uint64_t arm = mark->head & (size - 1);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t at = (arm - n + i) & (size - 1);

		if (base[at] != mark->ref[mark->ref_len - n + i])
			return 0;
	}
	return 1;
}

int64_t sptd_col_pt_aux_copy_since(const void *base, uint64_t size, uint64_t head,
                                   const struct sptd_col_pt_aux_mark *mark, void *dst,
                                   int *wrapped)
{
	uint64_t pos, arm, written;
	int round;

	if (!base || !dst || !mark || size == 0 || (size & (size - 1)) != 0 ||
	    mark->ref_len > SPTD_COL_PT_AUX_REF || mark->ref_len > size)
		return -EINVAL;
	pos = head & (size - 1);
	arm = mark->head & (size - 1);
	written = (pos - arm) & (size - 1);
	if (head >= size || mark->head >= size) {
		/* a free-running counter says it outright */
		round = head < mark->head || head - mark->head >= size;
	} else {
		/* a position: the reference bytes not legitimately rewritten
		 * by @written bytes must be intact (all of them when the head
		 * is back where it was: nothing written, or a whole ring) */
		uint64_t check = written ? size - written : size;

		if (check > mark->ref_len)
			check = mark->ref_len;
		round = !ref_intact(base, size, mark, check);
	}
	if (round)
		written = size;
	if (wrapped)
		*wrapped = round;
	if (written)
		sptd_col_ring_copy(base, size, pos, written, dst);   /* ends at the head */
	return (int64_t)written;
}
