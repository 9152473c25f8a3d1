/* test_ring.c — perf ring arithmetic: sptd_col_ring_copy at every wrap edge,
 * sptd_col_ring_walk_backward and sptd_col_ring_copy_backward over
 * hand-built write_backward rings, sptd_col_ring_walk_forward over a forward
 * ring with records across its end. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>

#include "sptd_col_perf.h"
#include "sptd_test.h"

#define RING 256

/* ---- ring_copy ---------------------------------------------------------- */

static void fill_ring(unsigned char *ring, size_t size)
{
	for (size_t i = 0; i < size; i++)
		ring[i] = (unsigned char)i;
}

/* Expect dst to hold ring bytes start, start+1, ... (mod size) for len. */
static int copy_matches(const unsigned char *dst, uint64_t start, uint64_t len,
                        uint64_t size)
{
	for (uint64_t i = 0; i < len; i++)
		if (dst[i] != (unsigned char)((start + i) % size))
			return 0;
	return 1;
}

static void test_ring_copy(void)
{
	unsigned char ring[64], dst[80];

	fill_ring(ring, sizeof(ring));

	/* head at 0: the 16 bytes before it are the ring's last 16 */
	memset(dst, 0xee, sizeof(dst));
	sptd_col_ring_copy(ring, 64, 0, 16, dst);
	CHECK(copy_matches(dst, 48, 16, 64));
	CHECK_INT(dst[16], 0xee);

	/* head at size: the same bytes */
	memset(dst, 0xee, sizeof(dst));
	sptd_col_ring_copy(ring, 64, 64, 16, dst);
	CHECK(copy_matches(dst, 48, 16, 64));

	/* no wrap */
	memset(dst, 0xee, sizeof(dst));
	sptd_col_ring_copy(ring, 64, 40, 16, dst);
	CHECK(copy_matches(dst, 24, 16, 64));

	/* wraps: 6 bytes at the end, 10 at the start */
	memset(dst, 0xee, sizeof(dst));
	sptd_col_ring_copy(ring, 64, 10, 16, dst);
	CHECK(copy_matches(dst, 58, 16, 64));
	CHECK_INT(dst[5], 63);
	CHECK_INT(dst[6], 0);

	/* len 0 touches nothing */
	memset(dst, 0xee, sizeof(dst));
	sptd_col_ring_copy(ring, 64, 10, 0, dst);
	CHECK_INT(dst[0], 0xee);

	/* len == size: the whole ring, oldest byte (at head) first */
	memset(dst, 0xee, sizeof(dst));
	sptd_col_ring_copy(ring, 64, 10, 64, dst);
	CHECK(copy_matches(dst, 10, 64, 64));
	CHECK_INT(dst[64], 0xee);
	sptd_col_ring_copy(ring, 64, 0, 64, dst);
	CHECK(copy_matches(dst, 0, 64, 64));

	/* free-running u64 counters far beyond size */
	memset(dst, 0xee, sizeof(dst));
	sptd_col_ring_copy(ring, 64, (1ull << 40) + 5, 8, dst);
	CHECK(copy_matches(dst, 61, 8, 64));
	sptd_col_ring_copy(ring, 64, UINT64_MAX, 64, dst);
	CHECK(copy_matches(dst, 63, 64, 64));
	/* head at the exact end of the counter's range, len crosses 2^64 */
	sptd_col_ring_copy(ring, 64, 3, 7, dst);
	CHECK(copy_matches(dst, 60, 7, 64));

	/* tail end of the ring, no wrap, head just before size */
	sptd_col_ring_copy(ring, 64, 63, 1, dst);
	CHECK_INT(dst[0], 62);
	/* len > size is clamped, never overruns the ring */
	memset(dst, 0xee, sizeof(dst));
	sptd_col_ring_copy(ring, 64, 0, 70, dst);
	CHECK(copy_matches(dst, 0, 64, 64));
	CHECK_INT(dst[64], 0xee);
	/* NULL arguments are ignored, not a crash */
	sptd_col_ring_copy(NULL, 64, 0, 8, dst);
	sptd_col_ring_copy(ring, 64, 0, 8, NULL);
	sptd_col_ring_copy(ring, 0, 0, 8, dst);
}

/* ---- ring_walk_backward --------------------------------------------------- */

/* Write one record of @size bytes the way the kernel does: in
 * write_backward mode (@backward) move head down by the size, then store
 * the record at the new head; forward, store it at head and move head up.
 * Bytes wrap across the end one by one.  The payload is u64 @seq repeated. */
static void kernel_write(unsigned char *ring, uint64_t size, uint64_t *head, int backward,
                         uint32_t type, uint16_t rec_size, uint64_t seq)
{
	unsigned char rec[1024];
	struct perf_event_header hdr = { .type = type, .misc = 0, .size = rec_size };
	uint64_t at = backward ? *head - rec_size : *head;

	memcpy(rec, &hdr, sizeof(hdr));
	for (size_t off = sizeof(hdr); off + 8 <= rec_size; off += 8)
		memcpy(rec + off, &seq, 8);
	for (uint64_t i = 0; i < rec_size; i++)
		ring[(at + i) % size] = rec[i];
	*head = backward ? at : *head + rec_size;
}

static void kernel_write_backward(unsigned char *ring, uint64_t size, uint64_t *head,
                                  uint32_t type, uint16_t rec_size, uint64_t seq)
{
	kernel_write(ring, size, head, 1, type, rec_size, seq);
}

struct seen {
	int n;
	uint64_t seq[64];
	uint16_t size[64];
	uint32_t type[64];
	int bad_payload;
	int fail_at;            /* return -EIO on this record (0: never) */
};

static int collect(void *ctx, const void *rec, size_t len)
{
	struct seen *s = ctx;
	struct perf_event_header hdr;
	uint64_t seq = 0, v;

	memcpy(&hdr, rec, sizeof(hdr));
	if (hdr.size != len)
		s->bad_payload++;
	if (len >= 16)
		memcpy(&seq, (const unsigned char *)rec + 8, 8);
	for (size_t off = 8; off + 8 <= len; off += 8) {
		memcpy(&v, (const unsigned char *)rec + off, 8);
		if (v != seq)
			s->bad_payload++;
	}
	if (s->n < 64) {
		s->seq[s->n] = seq;
		s->size[s->n] = hdr.size;
		s->type[s->n] = hdr.type;
	}
	s->n++;
	if (s->fail_at && s->n == s->fail_at)
		return -EIO;
	return 0;
}

static void test_walk_empty_and_args(void)
{
	uint64_t ring[RING / 8] = { 0 };
	struct seen s = { 0 };

	CHECK_INT(sptd_col_ring_walk_backward(ring, RING, 0, collect, &s), 0);
	CHECK_INT(s.n, 0);
	CHECK_INT(sptd_col_ring_walk_backward(NULL, RING, 0, collect, &s), -EINVAL);
	CHECK_INT(sptd_col_ring_walk_backward(ring, RING, 0, NULL, &s), -EINVAL);
	CHECK_INT(sptd_col_ring_walk_backward(ring, 100, 0, collect, &s), -EINVAL);
	CHECK_INT(sptd_col_ring_walk_backward(ring, 0, 0, collect, &s), -EINVAL);
}

static void test_walk_unwrapped(void)
{
	uint64_t ring[RING / 8] = { 0 };
	unsigned char *r = (unsigned char *)ring;
	uint64_t head = 0;
	struct seen s = { 0 };
	struct perf_event_header stale = { .type = PERF_RECORD_LOST, .size = 8 };

	/* Stale but valid-looking bytes everywhere: only -head bytes count
	 * until the ring has wrapped once. */
	for (size_t off = 0; off < RING; off += 8)
		memcpy(r + off, &stale, sizeof(stale));
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 24, 1);
	kernel_write_backward(r, RING, &head, PERF_RECORD_LOST, 32, 2);
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 16, 3);
	CHECK_INT(head, (uint64_t)-72);
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), 3);
	CHECK_INT(s.n, 3);
	/* newest first */
	CHECK_INT(s.seq[0], 3);
	CHECK_INT(s.seq[1], 2);
	CHECK_INT(s.seq[2], 1);
	CHECK_INT(s.size[1], 32);
	CHECK_INT(s.type[1], PERF_RECORD_LOST);
	CHECK_INT(s.bad_payload, 0);
}

static void test_walk_wrapped_and_torn(void)
{
	uint64_t ring[RING / 8];
	unsigned char *r = (unsigned char *)ring;
	uint64_t head = 0;
	struct seen s = { 0 };
	uint64_t seq;

	memset(ring, 0, sizeof(ring));
	/* 40 records of 40 bytes = 1600 bytes through a 256-byte ring: the
	 * newest 6 (240 bytes) are whole, the 7th starts at offset 240 and
	 * would end at 280 > 256: torn, it must not be delivered. */
	for (seq = 1; seq <= 40; seq++)
		kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 40, seq);
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), 6);
	CHECK_INT(s.n, 6);
	for (int i = 0; i < 6 && i < s.n; i++)
		CHECK_INT(s.seq[i], 40 - i);
	CHECK_INT(s.bad_payload, 0);

	/* Exactly filling records: 8 x 32 bytes = the whole ring, none torn. */
	memset(ring, 0, sizeof(ring));
	memset(&s, 0, sizeof(s));
	head = 0;
	for (seq = 1; seq <= 20; seq++)
		kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 32, seq);
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), 8);
	CHECK_INT(s.seq[0], 20);
	CHECK_INT(s.seq[7], 13);
	CHECK_INT(s.bad_payload, 0);
}

static void test_walk_record_across_end(void)
{
	uint64_t ring[RING / 8];
	unsigned char *r = (unsigned char *)ring;
	uint64_t head;
	struct seen s = { 0 };

	/* Start the counter so that the second record straddles the ring end:
	 * head at 256*5 + 24: record 1 (16 bytes) at 8..24, record 2 (48
	 * bytes) at -40..8, i.e. 216..256 then 0..8. */
	memset(ring, 0, sizeof(ring));
	head = 256 * 5 + 24;
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 16, 7);
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 48, 8);
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 24, 9);
	CHECK_INT(head % RING, 192);
	/* The counter says far more than the ring was written: the walk
	 * ends at the zero bytes after the oldest record instead. */
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), 3);
	CHECK_INT(s.seq[0], 9);
	CHECK_INT(s.seq[1], 8);
	CHECK_INT(s.size[1], 48);
	CHECK_INT(s.seq[2], 7);
	CHECK_INT(s.bad_payload, 0);

	/* A header that itself wraps: an 8-byte record at 252..256 + 0..4,
	 * then a 16-byte one before it.  The counter wrapped long ago. */
	memset(ring, 0, sizeof(ring));
	memset(&s, 0, sizeof(s));
	head = (uint64_t)-(RING * 3) + 4;
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 8, 6);
	CHECK_INT(head % RING, 252);
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 16, 7);
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), 2);
	CHECK_INT(s.size[0], 16);
	CHECK_INT(s.seq[0], 7);
	CHECK_INT(s.size[1], 8);
	CHECK_INT(s.type[1], PERF_RECORD_SAMPLE);
}

static void test_walk_invalid_headers(void)
{
	uint64_t ring[RING / 8];
	unsigned char *r = (unsigned char *)ring;
	uint64_t head = (uint64_t)-(RING * 3); /* wrapped long ago */
	struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = 13 };
	struct seen s = { 0 };

	memset(ring, 0, sizeof(ring));
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 24, 1);
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 24, 2);
	/* zero header right after the two: stop there */
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), 2);

	/* a size that is not a multiple of 8: stop */
	memcpy(r + (head + 48) % RING, &bad, sizeof(bad));
	memset(&s, 0, sizeof(s));
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), 2);

	/* a size larger than the ring: stop */
	bad.size = 65528;
	memcpy(r + (head + 48) % RING, &bad, sizeof(bad));
	memset(&s, 0, sizeof(s));
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), 2);

	/* the callback's error stops the walk and is returned */
	memset(&s, 0, sizeof(s));
	s.fail_at = 1;
	CHECK_INT(sptd_col_ring_walk_backward(r, RING, head, collect, &s), -EIO);
	CHECK_INT(s.n, 1);
}

/* ---- copy_backward ---------------------------------------------------------- */

static void test_copy_backward(void)
{
	uint64_t ring[RING / 8];
	unsigned char *r = (unsigned char *)ring, *buf = NULL;
	uint64_t head = 256 * 5 + 24, seq;
	size_t cap = 0;
	struct seen s = { 0 };

	memset(ring, 0, sizeof(ring));
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 16, 7);
	kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 48, 8);   /* across the end */
	kernel_write_backward(r, RING, &head, PERF_RECORD_LOST, 24, 9);
	CHECK_INT(sptd_col_ring_copy_backward(r, RING, head, &buf, &cap), 88);
	CHECK(buf != NULL && cap >= 88);
	/* oldest first, back to back */
	for (size_t off = 0; buf && off < 88;) {
		struct perf_event_header h;

		memcpy(&h, buf + off, sizeof(h));
		collect(&s, buf + off, h.size);
		off += h.size;
	}
	CHECK_INT(s.n, 3);
	CHECK_INT(s.seq[0], 7);
	CHECK_INT(s.seq[1], 8);
	CHECK_INT(s.seq[2], 9);
	CHECK_INT(s.type[2], PERF_RECORD_LOST);
	CHECK_INT(s.bad_payload, 0);

	/* a wrapped ring with a torn oldest record: the whole ones, grown
	 * into the caller's buffer */
	memset(ring, 0, sizeof(ring));
	head = 0;
	for (seq = 1; seq <= 40; seq++)
		kernel_write_backward(r, RING, &head, PERF_RECORD_SAMPLE, 40, seq);
	CHECK_INT(sptd_col_ring_copy_backward(r, RING, head, &buf, &cap), 240);
	memcpy(&seq, buf + 8, 8);
	CHECK_INT(seq, 35);
	memcpy(&seq, buf + 200 + 8, 8);
	CHECK_INT(seq, 40);

	/* empty: nothing written, the buffer kept */
	memset(ring, 0, sizeof(ring));
	CHECK_INT(sptd_col_ring_copy_backward(r, RING, 0, &buf, &cap), 0);
	free(buf);
	buf = NULL;
	cap = 0;
	CHECK_INT(sptd_col_ring_copy_backward(NULL, RING, 0, &buf, &cap), -EINVAL);
	CHECK_INT(sptd_col_ring_copy_backward(r, RING, 0, NULL, &cap), -EINVAL);
	CHECK_INT(sptd_col_ring_copy_backward(r, RING, 0, &buf, NULL), -EINVAL);
	cap = 8;   /* a size without a buffer */
	CHECK_INT(sptd_col_ring_copy_backward(r, RING, 0, &buf, &cap), -EINVAL);
	cap = 0;
	CHECK_INT(sptd_col_ring_copy_backward(r, 100, 0, &buf, &cap), -EINVAL);
}

/* ---- walk_forward ------------------------------------------------------------ */

static void kernel_write_forward(unsigned char *ring, uint64_t size, uint64_t *head,
                                 uint32_t type, uint16_t rec_size, uint64_t seq)
{
	kernel_write(ring, size, head, 0, type, rec_size, seq);
}

static void test_walk_forward(void)
{
	uint64_t ring[RING / 8];
	unsigned char *r = (unsigned char *)ring;
	uint64_t tail = 256 * 3 + 200, head = tail;
	struct seen s = { 0 };

	memset(ring, 0, sizeof(ring));
	kernel_write_forward(r, RING, &head, PERF_RECORD_SAMPLE, 32, 1);
	kernel_write_forward(r, RING, &head, PERF_RECORD_SAMPLE, 40, 2);   /* across the end */
	kernel_write_forward(r, RING, &head, PERF_RECORD_LOST, 16, 3);
	CHECK_INT(sptd_col_ring_walk_forward(r, RING, tail, head, collect, &s), 3);
	CHECK_INT(s.seq[0], 1);
	CHECK_INT(s.seq[1], 2);
	CHECK_INT(s.size[1], 40);
	CHECK_INT(s.seq[2], 3);
	CHECK_INT(s.bad_payload, 0);

	/* a record the head has not reached yet ends the walk */
	memset(&s, 0, sizeof(s));
	CHECK_INT(sptd_col_ring_walk_forward(r, RING, tail, head - 8, collect, &s), 2);
	/* so does a header shorter than itself */
	memset(&s, 0, sizeof(s));
	{
		struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = 4 };

		memcpy(r + (tail + 32) % RING, &bad, sizeof(bad));
	}
	CHECK_INT(sptd_col_ring_walk_forward(r, RING, tail, head, collect, &s), 1);
	/* nothing new; a head more than a ring ahead of the tail */
	CHECK_INT(sptd_col_ring_walk_forward(r, RING, head, head, collect, &s), 0);
	CHECK_INT(sptd_col_ring_walk_forward(r, RING, tail, tail + 2 * RING, collect, &s), 0);
	/* the callback's error */
	memset(&s, 0, sizeof(s));
	s.fail_at = 1;
	CHECK_INT(sptd_col_ring_walk_forward(r, RING, tail, head, collect, &s), -EIO);
	CHECK_INT(sptd_col_ring_walk_forward(NULL, RING, 0, 8, collect, &s), -EINVAL);
	CHECK_INT(sptd_col_ring_walk_forward(r, RING, 0, 8, NULL, &s), -EINVAL);
	CHECK_INT(sptd_col_ring_walk_forward(r, 100, 0, 8, collect, &s), -EINVAL);
	CHECK_INT(sptd_col_ring_walk_forward(r, 4, 0, 8, collect, &s), -EINVAL);
}

int main(void)
{
	test_ring_copy();
	test_walk_empty_and_args();
	test_walk_unwrapped();
	test_walk_wrapped_and_torn();
	test_walk_record_across_end();
	test_walk_invalid_headers();
	test_copy_backward();
	test_walk_forward();
	return SPTD_TEST_END();
}
