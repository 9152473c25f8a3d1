/* test_dec_fixtures.c — decode the real Intel PT captures in
 * $SPTD_FIXTURES/real-pt and compare with MANIFEST.md's libipt figures;
 * then damage them (truncation, flipped bytes, a missing image, an injected
 * overflow) and check that each damage becomes gaps while the rest decodes.
 * Skips without the fixtures directory; a file missing from it fails. */
#include <errno.h>
#include <intel-pt.h>

#include "sptd_dec.h"
#include "sptd_test.h"

/* What a run produced, summed over CPUs. */
struct counts {
	int64_t pt_bytes, instructions, calls, returns, far_calls, far_returns;
	int64_t interrupts, decode_errors, gaps, slices, symbols, gap_rows;
	int64_t syscall_slices, bad_slices;
	char first_gap[200];
	int overflow_gaps, nomap_gaps, stop_gaps;
};

static int sink_stat(void *ctx, const char *name, int cpu, int64_t value)
{
	struct counts *c = ctx;

	(void)cpu;
#define STAT(n) if (strcmp(name, #n) == 0) c->n += value
	STAT(pt_bytes);
	STAT(instructions);
	STAT(calls);
	STAT(returns);
	STAT(far_calls);
	STAT(far_returns);
	STAT(interrupts);
	STAT(decode_errors);
	STAT(gaps);
#undef STAT
	return 0;
}

static int sink_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	struct counts *c = ctx;

	(void)ts;
	(void)cpu;
	if (!c->gap_rows)
		snprintf(c->first_gap, sizeof(c->first_gap), "%s", reason);
	c->gap_rows++;
	if (dur < 0 || strncmp(reason, "pt: ", 4) != 0)
		c->bad_slices++;
	if (strstr(reason, "overflow"))
		c->overflow_gaps++;
	if (strstr(reason, "TraceStop"))
		c->stop_gaps++;
	if (strstr(reason, "missing image"))
		c->nomap_gaps++;
	return 0;
}

static int sink_slice(void *ctx, const struct sptd_dec_slice *s)
{
	struct counts *c = ctx;

	c->slices++;
	if (strcmp(s->kind, SPTD_DEC_KIND_SYSCALL) == 0)
		c->syscall_slices++;
	if (s->dur < 0 || s->depth < 0 || (s->depth == 0) != (s->parent_id < 0))
		c->bad_slices++;
	return 0;
}

static int sink_symbol(void *ctx, const struct sptd_dec_symbol *sym)
{
	struct counts *c = ctx;

	c->symbols++;
	if (!sym->name || !sym->name[0])
		c->bad_slices++;
	return 0;
}

enum image_kind { IMG_FLAT, IMG_ELF, IMG_HALF, IMG_NONE };

/* Decode @pt (len bytes) with one image; returns the run's result. */
static int64_t decode(const uint8_t *pt, size_t len, const char *image, uint64_t addr,
                      enum image_kind kind, int family, int model, int stepping,
                      int jobs, struct counts *c)
{
	struct sptd_dec_config cfg = { .cpu_family = family, .cpu_model = model,
	                               .cpu_stepping = stepping, .jobs = jobs };
	struct sptd_dec_sink sink = { .ctx = c, .symbol = sink_symbol, .slice = sink_slice,
	                              .gap = sink_gap, .stat = sink_stat };
	struct sptd_dec_session *s = NULL;
	int64_t ret;

	memset(c, 0, sizeof(*c));
	ret = sptd_dec_session_create(&cfg, &s);
	if (ret < 0)
		return ret;
	if (kind == IMG_FLAT)
		ret = sptd_dec_session_add_flat(s, -1, image, addr, 1);
	else if (kind == IMG_ELF)
		ret = sptd_dec_session_add_elf(s, -1, image, 0, 1);
	else if (kind == IMG_HALF) {
		size_t ilen;
		uint8_t *bytes = sptd_test_slurp(image, &ilen);

		ret = bytes ? sptd_dec_session_add_bytes(s, -1, "half.img", bytes, ilen / 2,
		                                         addr, 1) : -ENOENT;
		free(bytes);
	}
	if (ret >= 0)
		ret = sptd_dec_session_add_pt(s, 0, pt, len);
	if (ret >= 0)
		ret = sptd_dec_session_run(s, &sink);
	sptd_dec_session_destroy(s);
	return ret;
}

struct fixture {
	const char *dir, *trace, *image;
	uint64_t addr;
	enum image_kind kind;
	int family, model, stepping;
	int64_t bytes, insns, calls, returns, far_calls;
};

/* MANIFEST.md's reference figures (libipt 2.0.5 instruction decoder). */
static const struct fixture fixtures_tab[] = {
	{ "libxdc-mruby", "trace.pt", "flat_400000.img", 0x400000, IMG_FLAT, 0, 0, 0,
	  713168, 6334131, 45446, 31164, 0 },
	{ "libxdc-foo", "trace.pt", "flat_7ffff7819000.img", 0x7ffff7819000ull, IMG_FLAT, 0, 0, 0,
	  29344, 117967, 2840, 2164, 0 },
	{ "libxdc-unzip", "trace.pt", "flat_400000.img", 0x400000, IMG_FLAT, 0, 0, 0,
	  16896, 149576, 219, 111, 0 },
	{ "drpt2trace-hello", "pt.bin", "hello", 0, IMG_ELF, 6, 85, 4,
	  2272, 8, 0, 0, 2 },
};

/* The trace of @fx read whole (NULL, with a failed check naming the file,
 * when it or its image is missing); the image's path in @image. */
static uint8_t *load_trace(const struct fixture *fx, size_t *len, char *image, size_t ilen)
{
	char path[1024], rel[256];

	snprintf(rel, sizeof(rel), "real-pt/%s/%s", fx->dir, fx->image);
	if (sptd_test_fixture(image, ilen, rel) < 0)
		return NULL;
	snprintf(rel, sizeof(rel), "real-pt/%s/%s", fx->dir, fx->trace);
	if (sptd_test_fixture(path, sizeof(path), rel) < 0)
		return NULL;
	return sptd_test_slurp(path, len);
}

static void test_reference_counts(void)
{
	size_t i;

	for (i = 0; i < sizeof(fixtures_tab) / sizeof(fixtures_tab[0]); i++) {
		const struct fixture *fx = &fixtures_tab[i];
		struct counts c;
		char image[1024];
		size_t len;
		uint8_t *pt = load_trace(fx, &len, image, sizeof(image));
		int64_t ret;

		CHECK(pt != NULL);
		if (!pt)
			continue;
		ret = decode(pt, len, image, fx->addr, fx->kind, fx->family, fx->model,
		             fx->stepping, 1, &c);
		fprintf(stderr, "%s: %lld insns %lld calls %lld returns %lld far, %lld slices\n",
		        fx->dir, (long long)c.instructions, (long long)c.calls,
		        (long long)c.returns, (long long)c.far_calls, (long long)c.slices);
		CHECK(ret >= 0);
		CHECK_INT(c.pt_bytes, fx->bytes);
		CHECK_INT(c.instructions, fx->insns);
		CHECK_INT(c.calls, fx->calls);
		CHECK_INT(c.returns, fx->returns);
		CHECK_INT(c.far_calls, fx->far_calls);
		CHECK_INT(c.decode_errors, 0);
		CHECK_INT(c.bad_slices, 0);
		CHECK_INT(c.slices, ret);
		/* every call opens a frame, and every syscall one too */
		CHECK(c.slices >= fx->calls + fx->far_calls);
		CHECK_INT(c.syscall_slices, fx->far_calls);
		free(pt);
	}
}

/* -j 2 on two CPUs gives the sum of one-CPU runs. */
static void test_two_cpus(void)
{
	const struct fixture *a = &fixtures_tab[1];
	struct sptd_dec_config cfg = { .jobs = 2 };
	struct counts c;
	struct sptd_dec_sink sink = { .ctx = &c, .slice = sink_slice, .gap = sink_gap,
	                              .stat = sink_stat };
	struct sptd_dec_session *s = NULL;
	char image[1024];
	size_t len;
	uint8_t *pt = load_trace(a, &len, image, sizeof(image));

	memset(&c, 0, sizeof(c));
	CHECK(pt != NULL);
	if (!pt)
		return;
	CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
	CHECK_INT(sptd_dec_session_add_flat(s, -1, image, a->addr, 1), 0);
	CHECK_INT(sptd_dec_session_add_pt(s, 0, pt, len), 0);
	CHECK_INT(sptd_dec_session_add_pt(s, 1, pt, len / 2), 0);
	CHECK_INT(sptd_dec_session_add_pt(s, 1, pt + len / 2, len - len / 2), 0);
	CHECK(sptd_dec_session_run(s, &sink) > 0);
	CHECK_INT(c.instructions, 2 * a->insns);
	CHECK_INT(c.calls, 2 * a->calls);
	CHECK_INT(c.returns, 2 * a->returns);
	CHECK_INT(c.pt_bytes, 2 * a->bytes);
	/* libxdc traces carry no timing packets */
	CHECK_INT(sptd_dec_session_no_time(s), 1);
	sptd_dec_session_destroy(s);
	free(pt);
}

/* ---- damage ----------------------------------------------------------------- */

/* Offsets of the PSBs in @pt (up to @max). */
static int psb_offsets(const uint8_t *pt, size_t len, uint64_t *off, int max)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	int n = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)pt;
	cfg.end = (uint8_t *)pt + len;
	d = pt_pkt_alloc_decoder(&cfg);
	while (d && n < max && pt_pkt_sync_forward(d) >= 0)
		pt_pkt_get_sync_offset(d, &off[n++]);
	pt_pkt_free_decoder(d);
	return n;
}

static void test_truncated(void)
{
	const struct fixture *fx = &fixtures_tab[2];
	struct counts c;
	char image[1024];
	size_t len;
	uint8_t *pt = load_trace(fx, &len, image, sizeof(image));

	if (!pt) {
		CHECK(0);
		return;
	}
	/* the head cut off: the bytes up to the next PSB are a gap */
	CHECK(len > 4000);
	CHECK(decode(pt + 3000, len - 3000, image, fx->addr, IMG_FLAT, 0, 0, 0, 1, &c) >= 0);
	CHECK(c.gap_rows >= 1);
	CHECK(strstr(c.first_gap, "before the first PSB") != NULL);
	CHECK(c.instructions > 0 && c.instructions < fx->insns);
	/* the tail cut mid-packet: decodes up to there */
	CHECK(decode(pt, len - 333, image, fx->addr, IMG_FLAT, 0, 0, 0, 1, &c) >= 0);
	CHECK(c.instructions > 0 && c.instructions <= fx->insns);
	/* nothing but garbage: one gap, no instructions, no failure */
	memset(pt, 0x55, 4096);
	CHECK(decode(pt, 4096, image, fx->addr, IMG_FLAT, 0, 0, 0, 1, &c) >= 0);
	CHECK_INT(c.instructions, 0);
	CHECK_INT(c.gap_rows, 1);
	free(pt);
}

static void test_flipped(void)
{
	const struct fixture *fx = &fixtures_tab[0];
	struct counts c;
	char image[1024];
	size_t len, i;
	uint8_t *pt = load_trace(fx, &len, image, sizeof(image));

	if (!pt) {
		CHECK(0);
		return;
	}
	for (i = len / 2; i < len / 2 + 64; i++)
		pt[i] ^= 0xa5;
	CHECK(decode(pt, len, image, fx->addr, IMG_FLAT, 0, 0, 0, 1, &c) >= 0);
	fprintf(stderr, "flipped: %lld errors, %lld gaps, first: %s\n",
	        (long long)c.decode_errors, (long long)c.gap_rows, c.first_gap);
	CHECK(c.decode_errors >= 1);
	CHECK(c.gap_rows >= 1);
	CHECK_INT(c.gaps, c.gap_rows);
	CHECK(strncmp(c.first_gap, "pt: ", 4) == 0);
	/* most of the trace still decodes */
	CHECK(c.instructions > fx->insns / 2);
	CHECK(c.calls > fx->calls / 2);
	CHECK_INT(c.bad_slices, 0);
	free(pt);
}

static void test_missing_image(void)
{
	const struct fixture *fx = &fixtures_tab[0];
	struct counts c;
	char image[1024];
	size_t len;
	uint8_t *pt = load_trace(fx, &len, image, sizeof(image));

	if (!pt) {
		CHECK(0);
		return;
	}
	/* no image at all: every sync point is a missing-image gap */
	CHECK(decode(pt, len, image, fx->addr, IMG_NONE, 0, 0, 0, 1, &c) >= 0);
	CHECK_INT(c.instructions, 0);
	CHECK(c.nomap_gaps >= 1);
	/* half the image: what lies in the other half is a gap, the rest decodes */
	CHECK(decode(pt, len, image, fx->addr, IMG_HALF, 0, 0, 0, 1, &c) >= 0);
	fprintf(stderr, "half image: %lld insns, %d nomap gaps\n",
	        (long long)c.instructions, c.nomap_gaps);
	CHECK(c.nomap_gaps >= 1);
	CHECK(c.instructions > 0);
	CHECK(c.instructions < fx->insns);
	free(pt);
}

/* Decode fixture 1 with the packet @type (libipt's encoder) inserted just
 * before its third PSB into @c.  0, or -1 when it could not be made. */
static int decode_inserted(enum pt_packet_type type, struct counts *c)
{
	const struct fixture *fx = &fixtures_tab[1];
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet p = { .type = type };
	uint8_t pkt[16], *damaged;
	uint64_t psb[4];
	char image[1024];
	size_t len;
	uint8_t *pt = load_trace(fx, &len, image, sizeof(image));
	int n, plen, ret = -1;

	if (!pt)
		return -1;
	pt_config_init(&cfg);
	cfg.begin = pkt;
	cfg.end = pkt + sizeof(pkt);
	enc = pt_alloc_encoder(&cfg);
	plen = pt_enc_next(enc, &p);
	pt_free_encoder(enc);
	n = psb_offsets(pt, len, psb, 4);
	if (plen == 2 && n >= 3 && (damaged = malloc(len + (size_t)plen))) {
		memcpy(damaged, pt, psb[2]);
		memcpy(damaged + psb[2], pkt, (size_t)plen);
		memcpy(damaged + psb[2] + plen, pt + psb[2], len - psb[2]);
		ret = decode(damaged, len + (size_t)plen, image, fx->addr, IMG_FLAT, 0, 0, 0, 1, c);
		free(damaged);
	}
	free(pt);
	return ret < 0 ? -1 : 0;
}

/* An OVF packet: the CPU lost trace there; a gap, the rest decodes. */
static void test_overflow(void)
{
	struct counts c;

	CHECK_INT(decode_inserted(ppt_ovf, &c), 0);
	fprintf(stderr, "overflow: %lld insns, %d overflow gaps, first: %s\n",
	        (long long)c.instructions, c.overflow_gaps, c.first_gap);
	CHECK(c.overflow_gaps >= 1);
	CHECK(c.instructions > fixtures_tab[1].insns / 2);
}

/* A TraceStop packet (issue 13.3): a gap saying the CPU stopped tracing,
 * and the rest still decodes. */
static void test_tracestop(void)
{
	struct counts c;

	CHECK_INT(decode_inserted(ppt_stop, &c), 0);
	fprintf(stderr, "TraceStop: %lld insns, %d TraceStop gaps, first gap: %s\n",
	        (long long)c.instructions, c.stop_gaps, c.first_gap);
	CHECK(c.stop_gaps >= 1);
	CHECK(c.instructions > fixtures_tab[1].insns / 2);
}

int main(void)
{
	SPTD_REQUIRE_FIXTURES();
	test_reference_counts();
	test_two_cpus();
	test_truncated();
	test_flipped();
	test_missing_image();
	test_overflow();
	test_tracestop();
	return SPTD_TEST_END();
}
