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
