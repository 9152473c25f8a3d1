/* fuzz_perfrec.c — collector/perf's record parser and ring walkers on
 * hostile bytes.
 *
 * Input: 24 bytes of layout (sample_type, read_format, then one u64 whose
 * bits pick sample_id_all and the ring head), then the bytes of records
 * back to back, as perf.data files, raw_sideband rows and rings hold them.
 * Each record goes through sptd_col_perf_record_parse (every field it
 * hands out must lie inside the record), the SAMPLE id finder, the
 * sampler's sample parser, the attr decoder and the PT sideband walker;
 * the bytes as a whole also go through the backward/forward ring walks and
 * the AUX copy with a head taken from the input. */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "sptd_col_perf.h"

/* The record the checks are looking at. */
struct span {
	const uint8_t *lo, *hi;   /* the record's bytes */
};

static int inside(const struct span *s, const void *p, size_t len)
{
	const uint8_t *b = p;

	return b >= s->lo && b <= s->hi && len <= (size_t)(s->hi - b);
}

/* What the parser handed out must be inside the record it parsed. */
static void check_record(const struct sptd_col_perf_record *r, const uint8_t *rec, size_t len)
{
	struct span s = { rec, rec + len };

	FUZZ_CHECK(r->size <= len, "size %u > %zu", r->size, len);
	if (r->name) {
		size_t n = strnlen(r->name, (size_t)(s.hi - (const uint8_t *)r->name));

		FUZZ_CHECK(inside(&s, r->name, n + 1), "name not NUL-terminated inside");
	}
	if (r->sample.callchain)
		FUZZ_CHECK(r->sample.nr <= len / 8 &&
		           inside(&s, r->sample.callchain, (size_t)r->sample.nr * 8),
		           "callchain of %llu outside", (unsigned long long)r->sample.nr);
	if (r->sample.raw)
		FUZZ_CHECK(inside(&s, r->sample.raw, r->sample.raw_size), "raw outside");
	if (r->sample.read.group)
		FUZZ_CHECK(r->sample.read.nr <= len &&
		           inside(&s, r->sample.read.group,
		                  (size_t)r->sample.read.nr * r->sample.read.stride),
		           "read group outside");
	FUZZ_CHECK(r->build_id_size <= sizeof(r->build_id), "build id %u", r->build_id_size);
}

/* Walk callback: parse each record again the way the sideband does. */
static int on_walk(void *ctx, const void *rec, size_t len)
{
	const struct sptd_col_perf_layout *layout = ctx;
	struct sptd_col_perf_record r;

	if (sptd_col_perf_record_parse(rec, len, layout, &r) == 0)
		check_record(&r, rec, len);
	return 0;
}

static int on_sideband(void *ctx, const struct sptd_col_perf_record *r)
{
	(void)ctx;
	FUZZ_CHECK(r->size >= 8, "sideband record of %u bytes", r->size);
	return 0;
}

static int on_sample(void *ctx, const struct sptd_col_sample *s)
{
	const int64_t *range = ctx;

	FUZZ_CHECK(s->ts >= range[0] && s->ts <= range[1], "sample ts %lld outside",
	           (long long)s->ts);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sptd_col_perf_layout layout;
	struct sptd_col_perf_record r;
	struct sptd_col_perf_attr attr;
	struct sptd_col_sample smp;
	uint64_t bits, id, ring_size, head;
	const uint8_t *recs;
	uint8_t *aligned;
	size_t len, off;
	unsigned char *copy = NULL;
	size_t cap = 0;
	int64_t range[2];

	if (size < 24)
		return 0;
	memset(&layout, 0, sizeof(layout));
	memcpy(&layout.sample_type, data, 8);
	memcpy(&layout.read_format, data + 8, 8);
	memcpy(&bits, data + 16, 8);
	layout.sample_id_all = (int)(bits & 1);
	recs = data + 24;
	len = size - 24;

	/* records back to back, as a perf.data data section */
	for (off = 0; off + 8 <= len;) {
		uint16_t rsize;
		int ret = sptd_col_perf_record_parse(recs + off, len - off, &layout, &r);

		if (ret == 0)
			check_record(&r, recs + off, len - off);
		sptd_col_perf_sample_event_id(recs + off, len - off, layout.sample_type, &id);
		memcpy(&rsize, recs + off + 6, 2);
		if (rsize < 8)
			break;
		off += rsize;
	}
	/* the sampler's parser wants 8-byte alignment, as its rings give */
	aligned = malloc(len + 8);
	if (!aligned)
		return 0;
	memcpy(aligned, recs, len);
	if (sptd_col_sample_parse(aligned, len, &smp) == 0)
		FUZZ_CHECK(smp.nr <= len / 8, "sample callchain %llu", (unsigned long long)smp.nr);
	sptd_col_perf_attr_decode(recs, len, &attr);
	sptd_col_pt_sideband_parse(recs, len, layout.sample_type, on_sideband, NULL);

	/* the same bytes as a ring: the largest power of two that fits */
	for (ring_size = 8; ring_size * 2 <= len; ring_size *= 2)
		;
	if (len >= 8) {
		head = bits >> 1;
		sptd_col_ring_walk_backward(aligned, ring_size, head, on_walk, &layout);
		sptd_col_ring_walk_forward(aligned, ring_size, head >> 20, head, on_walk, &layout);
		if (sptd_col_ring_copy_backward(aligned, ring_size, head, &copy, &cap) >= 0)
			FUZZ_CHECK(cap == 0 || copy, "copy buffer");
		range[0] = (int64_t)(bits >> 8) - 1000000;
		range[1] = (int64_t)(bits >> 8) + 1000000;
		sptd_col_sample_ring_read(aligned, ring_size, head, range[0], range[1], on_sample,
		                          range);
		{
			unsigned char *dst = malloc(ring_size);

			if (dst) {
				int64_t n = sptd_col_pt_aux_copy(aligned, ring_size, head, dst);

				FUZZ_CHECK(n <= (int64_t)ring_size, "aux copy %lld", (long long)n);
				free(dst);
			}
		}
	}
	free(copy);
	free(aligned);
	return 0;
}
