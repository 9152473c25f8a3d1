/* ring.c — arithmetic on perf ring buffers: unwrapping copies (data and AUX
 * rings), walking the records of a write_backward (overwrite) data ring and
 * copying them out oldest first, and walking a forward ring's records from
 * data_tail to data_head.
 *
 * Heads are the kernel's free-running u64 byte counters: only their value
 * modulo the ring size is a position.  In write_backward mode the kernel
 * moves data_head DOWN before writing each record, so the newest record
 * starts at data_head and older records follow it at higher addresses; once
 * the ring has wrapped the oldest record may have lost its tail to the
 * newest one (it is "torn") and must be dropped. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perf-local.h"

void sptd_col_ring_copy(const void *base, uint64_t size, uint64_t head,
                        uint64_t len, void *dst)
{
	const unsigned char *ring = base;
	unsigned char *out = dst;
	uint64_t start, first;

	if (!base || !dst || size == 0 || len == 0)
		return;
	if (len > size)
		len = size;
	start = (head - len) % size;
	first = size - start;
	if (first > len)
		first = len;
	memcpy(out, ring + start, (size_t)first);
	if (len > first)
		memcpy(out + first, ring, (size_t)(len - first));
}

/* Copy @len bytes starting at ring position @pos (already reduced modulo
 * @size) into @dst, continuing at the ring's start when the end is hit. */
static void ring_read_at(const unsigned char *ring, uint64_t size, uint64_t pos,
                         size_t len, void *dst)
{
	uint64_t first = size - pos;

	if (first >= len) {
		memcpy(dst, ring + pos, len);
		return;
	}
	memcpy(dst, ring + pos, (size_t)first);
	memcpy((unsigned char *)dst + first, ring, len - (size_t)first);
}

/* Hand the @len-byte record at ring position @pos to @fn: in place when
 * it does not wrap, else unwrapped into *@bounce (allocated on first use;
 * perf records are at most 64 KiB, their size being a u16). */
static int deliver(const unsigned char *ring, uint64_t size, uint64_t pos, size_t len,
                   unsigned char **bounce, sptd_col_record_fn fn, void *ctx)
{
	if (pos + len <= size)
		return fn(ctx, ring + pos, len);
	if (!*bounce) {
		*bounce = malloc(1u << 16);
		if (!*bounce)
			return -ENOMEM;
	}
	ring_read_at(ring, size, pos, len, *bounce);
	return fn(ctx, *bounce, len);
}

int sptd_col_ring_walk_backward(const void *base, uint64_t size, uint64_t head,
                                sptd_col_record_fn fn, void *ctx)
{
	const unsigned char *ring = base;
	struct perf_event_header hdr;
	unsigned char *bounce = NULL;
	uint64_t limit, offset = 0;
	int count = 0, ret = 0;

	if (!base || !fn || size < sizeof(hdr) || (size & (size - 1)) != 0)
		return -EINVAL;
	/* The counter started at 0 and only went down: -head is how much was
	 * ever written; until the ring wraps only that much is valid. */
	limit = (uint64_t)0 - head;
	if (limit == 0)
		return 0;
	if (limit > size)
		limit = size;

	while (offset + sizeof(hdr) <= limit) {
		uint64_t pos = (head + offset) % size;

		ring_read_at(ring, size, pos, sizeof(hdr), &hdr);
		/* A zero or malformed header ends the valid data: the kernel
		 * writes records of whole u64s, at least a header long. */
		if (hdr.size < sizeof(hdr) || (hdr.size & 7) != 0 || hdr.type == 0)
			break;
		/* Torn: its tail was overwritten by the newest records. */
		if (offset + hdr.size > limit)
			break;
		ret = deliver(ring, size, pos, hdr.size, &bounce, fn, ctx);
		if (ret < 0)
			goto out;
		count++;
		offset += hdr.size;
	}
	ret = count;
out:
	free(bounce);
	return ret;
}

/* copy_backward's two passes: first the total, then each record placed so
 * that the oldest comes first. */
struct backward_copy {
	unsigned char *dst;      /* NULL: first pass, only sum */
	uint64_t total;          /* bytes of all records */
	uint64_t seen;           /* bytes walked so far (newest first) */
};

static int place_record(void *ctx, const void *rec, size_t len)
{
	struct backward_copy *b = ctx;

	b->seen += len;
	if (b->dst)
		memcpy(b->dst + (b->total - b->seen), rec, len);
	return 0;
}

int64_t sptd_col_ring_copy_backward(const void *base, uint64_t size, uint64_t head,
                                    unsigned char **buf, size_t *cap)
{
	struct backward_copy b = { 0 };
	int ret;

	if (!base || !buf || !cap || (*cap && !*buf))
		return -EINVAL;
	ret = sptd_col_ring_walk_backward(base, size, head, place_record, &b);
	if (ret < 0)
		return ret;
	b.total = b.seen;
	if (b.total > *cap) {
		size_t want = *cap ? *cap : 65536;
		unsigned char *more;

		while (want < b.total)
			want *= 2;
		more = realloc(*buf, want);
		if (!more)
			return -ENOMEM;
		*buf = more;
		*cap = want;
	}
	b.dst = *buf;
	b.seen = 0;
	ret = sptd_col_ring_walk_backward(base, size, head, place_record, &b);
	if (ret < 0)
		return ret;
	return (int64_t)b.total;
}

int sptd_col_ring_walk_forward(const void *base, uint64_t size, uint64_t tail,
                               uint64_t head, sptd_col_record_fn fn, void *ctx)
{
	const unsigned char *ring = base;
	struct perf_event_header hdr;
	unsigned char *bounce = NULL;
	int count = 0, ret = 0;

	if (!base || !fn || size < sizeof(hdr) || (size & (size - 1)) != 0)
		return -EINVAL;
	/* a forward ring with a reader never holds more than itself */
	if (head - tail > size)
		return 0;
	while (head - tail >= sizeof(hdr)) {
		uint64_t pos = tail % size;

		ring_read_at(ring, size, pos, sizeof(hdr), &hdr);
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			break;
		ret = deliver(ring, size, pos, hdr.size, &bounce, fn, ctx);
		if (ret < 0)
			goto out;
		count++;
		tail += hdr.size;
	}
	ret = count;
out:
	free(bounce);
	return ret;
}
