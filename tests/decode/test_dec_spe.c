/* test_dec_spe.c — the Arm SPE packet decoder (decode/spe.c), table-driven:
 * each case is a byte string built from packets and the records (and
 * counts) it must give: every packet kind, extended headers, address
 * extension and tags, padding, bad bytes and resync, truncation. */
#include <errno.h>
#include <stdint.h>

#include "sptd_dec.h"
#include "sptd_test.h"

#define MAXB 256
#define MAXR 4

/* Packet builders (header byte, then a little-endian payload). */
#define B8(v) (uint8_t)((v) & 0xff), (uint8_t)(((v) >> 8) & 0xff), (uint8_t)(((v) >> 16) & 0xff), \
	(uint8_t)(((v) >> 24) & 0xff), (uint8_t)(((uint64_t)(v) >> 32) & 0xff),                 \
	(uint8_t)(((uint64_t)(v) >> 40) & 0xff), (uint8_t)(((uint64_t)(v) >> 48) & 0xff),        \
	(uint8_t)(((uint64_t)(v) >> 56) & 0xff)
#define ADDR(i, v) (uint8_t)(0xb0 | (i)), B8(v)
#define TS(v) 0x71, B8(v)
#define CNT(i, v) (uint8_t)(0x98 | (i)), (uint8_t)((v) & 0xff), (uint8_t)((v) >> 8)
#define EV2(v) 0x52, (uint8_t)((v) & 0xff), (uint8_t)((v) >> 8)
#define SRC2(v) 0x53, (uint8_t)((v) & 0xff), (uint8_t)((v) >> 8)
#define CTX(v) 0x64, (uint8_t)((v) & 0xff), (uint8_t)(((v) >> 8) & 0xff), \
	(uint8_t)(((v) >> 16) & 0xff), (uint8_t)(((v) >> 24) & 0xff)
#define OP(c, v) (uint8_t)(0x48 | (c)), (uint8_t)(v)
#define EL0 0ull
#define EL1 (1ull << 61)

struct want {
	uint32_t have;
	uint64_t pc, vaddr, paddr, ts, target, events;
	uint32_t context;
	enum sptd_dec_spe_op op;
	uint16_t source, lat_total, lat_issue, lat_xlat;
	int el;
};

struct spe_case {
	const char *what;
	uint8_t bytes[MAXB];
	size_t n;
	int nrec;                 /* records expected */
	struct want rec[MAXR];
	uint64_t bad, dropped, truncated, unknown;
};

#define H(x) SPTD_DEC_SPE_HAVE_##x
#define LOAD_BYTES ADDR(0, EL0 | 0x401234), CTX(77), OP(1, 0x00), EV2(0x020e), SRC2(0x0e), \
	CNT(0, 120), CNT(1, 7), CNT(2, 30), ADDR(2, 0x7ffd1000), ADDR(3, 0x8a000), TS(5000)
#define LOAD_LEN (9 + 5 + 2 + 3 + 3 + 3 + 3 + 3 + 9 + 9 + 9)
#define LOAD_WANT { H(PC) | H(CONTEXT) | H(EVENTS) | H(SOURCE) | H(LAT_TOTAL) | H(LAT_ISSUE) | \
	H(LAT_XLAT) | H(VADDR) | H(PADDR) | H(TS), 0x401234, 0x7ffd1000, 0x8a000, 5000, 0, \
	0x020e, 77, SPTD_DEC_SPE_OP_LOAD, 0x0e, 120, 7, 30, 0 }

static const struct spe_case cases[] = {
	{ "a load with every packet", { LOAD_BYTES }, LOAD_LEN, 1, { LOAD_WANT }, 0, 0, 0, 0 },
	{ "a store closed by End", { ADDR(0, 0x400000), OP(1, 0x01), ADDR(2, 0x1000), 0x01 },
	  9 + 2 + 9 + 1, 1,
	  { { H(PC) | H(VADDR), 0x400000, 0x1000, 0, 0, 0, 0, 0, SPTD_DEC_SPE_OP_STORE, 0, 0, 0, 0, 0 } },
	  0, 0, 0, 0 },
	{ "an atomic (AT subclass)", { OP(1, 0x07), TS(1) }, 2 + 9, 1,
	  { { H(TS), 0, 0, 0, 1, 0, 0, 0, SPTD_DEC_SPE_OP_ATOMIC, 0, 0, 0, 0, 0 } }, 0, 0, 0, 0 },
	{ "SIMD load is a load, not atomic", { OP(1, 0x04), TS(2) }, 2 + 9, 1,
	  { { H(TS), 0, 0, 0, 2, 0, 0, 0, SPTD_DEC_SPE_OP_LOAD, 0, 0, 0, 0, 0 } }, 0, 0, 0, 0 },
	{ "a branch with its target", { ADDR(0, 0x400010), OP(2, 0x01), ADDR(1, 0x400100), EV2(0x80),
	  TS(3) }, 9 + 2 + 9 + 3 + 9, 1,
	  { { H(PC) | H(TARGET) | H(EVENTS) | H(TS), 0x400010, 0, 0, 3, 0x400100, 0x80, 0,
	      SPTD_DEC_SPE_OP_BRANCH, 0, 0, 0, 0, 0 } }, 0, 0, 0, 0 },
	{ "kernel pc: bit 55 extends, EL read", { ADDR(0, EL1 | 0x00ff800010001000ull), TS(4) },
	  18, 1, { { H(PC) | H(TS), 0xffff800010001000ull, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1 } },
	  0, 0, 0, 0 },
	{ "tagged data address loses its tag", { ADDR(2, 0x5a00007f00001000ull), TS(5) }, 18, 1,
	  { { H(VADDR) | H(TS), 0, 0x7f00001000ull, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0 } }, 0, 0, 0, 0 },
	{ "extended header: address index 2", { 0x20, 0xb2, B8(0x2000), TS(6) }, 10 + 9, 1,
	  { { H(VADDR) | H(TS), 0, 0x2000, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0 } }, 0, 0, 0, 0 },
	{ "extended header: address index 10 unknown", { 0x21, 0xb2, B8(0x2000), TS(6) }, 10 + 9, 1,
	  { { H(TS), 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0 } }, 0, 0, 0, 1 },
	{ "padding between and inside records", { 0, 0, OP(1, 0), 0, TS(7), 0, 0 }, 2 + 2 + 1 + 9 + 2,
	  1, { { H(TS), 0, 0, 0, 7, 0, 0, 0, SPTD_DEC_SPE_OP_LOAD, 0, 0, 0, 0, 0 } }, 0, 0, 0, 0 },
	{ "unknown packets only, closed by End: no record", { 0x21, 0xb2, B8(0x2000), 0x01 }, 11, 0,
	  { { 0 } }, 0, 0, 0, 1 },
	{ "padding only: no record", { 0, 0, 0, 0 }, 4, 0, { { 0 } }, 0, 0, 0, 0 },
	{ "bad byte drops its record, the next decodes", { OP(1, 1), 0xff, TS(8), OP(1, 0), TS(9) },
	  2 + 1 + 9 + 2 + 9, 1,
	  { { H(TS), 0, 0, 0, 9, 0, 0, 0, SPTD_DEC_SPE_OP_LOAD, 0, 0, 0, 0, 0 } }, 1, 1, 0, 0 },
	{ "bad extended header: its second byte read as a timestamp", { 0x20, 0x71, OP(1, 0),
	  TS(10) }, 2 + 2 + 9, 0, { { 0 } }, 1, 1, 0, 0 },
	{ "buffer ends inside a timestamp", { OP(1, 0), 0x71, 1, 2, 3 }, 2 + 4, 0, { { 0 } }, 0, 1, 1,
	  0 },
	{ "buffer ends after an extended header byte", { 0x20 }, 1, 0, { { 0 } }, 0, 0, 1, 0 },
	{ "reserved op class 3 is skipped", { OP(3, 0), TS(11) }, 2 + 9, 1,
	  { { H(TS), 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0 } }, 0, 0, 0, 1 },
	{ "four-byte events and one-byte source", { 0x62, 0x00, 0x06, 0x00, 0x00, 0x43, 0x0b,
	  TS(12) }, 5 + 2 + 9, 1,
	  { { H(EVENTS) | H(SOURCE) | H(TS), 0, 0, 0, 12, 0, 0x600, 0, 0, 0x0b, 0, 0, 0, 0 } },
	  0, 0, 0, 0 },
	{ "two records back to back", { LOAD_BYTES, LOAD_BYTES }, 2 * LOAD_LEN, 2,
	  { LOAD_WANT, LOAD_WANT }, 0, 0, 0, 0 },
};

struct got {
	int n;
	struct sptd_dec_spe_record r[MAXR];
	int stop_after;           /* return -ECANCELED after this many (0 never) */
};

static int on_rec(void *ctx, const struct sptd_dec_spe_record *r)
{
	struct got *g = ctx;

	if (g->n < MAXR)
		g->r[g->n] = *r;
	g->n++;
	return g->stop_after && g->n >= g->stop_after ? -ECANCELED : 0;
}

static int same(const struct sptd_dec_spe_record *r, const struct want *w)
{
	return r->have == w->have && r->pc == w->pc && r->vaddr == w->vaddr &&
	       r->paddr == w->paddr && r->ts == w->ts && r->target == w->target &&
	       r->events == w->events && r->context == w->context && r->op == w->op &&
	       r->source == w->source && r->lat_total == w->lat_total &&
	       r->lat_issue == w->lat_issue && r->lat_xlat == w->lat_xlat && r->el == w->el;
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct spe_case *c = &cases[i];
		struct sptd_dec_spe_stats st = { 0 };
		struct got g = { 0 };
		int64_t n = sptd_dec_spe_decode(c->bytes, c->n, on_rec, &g, &st);
		int ok = n == c->nrec && g.n == c->nrec && st.records == (uint64_t)c->nrec &&
		         st.bad_bytes == c->bad && st.dropped == c->dropped &&
		         st.truncated == c->truncated && st.unknown == c->unknown;

		for (int k = 0; ok && k < c->nrec && k < MAXR; k++)
			ok = same(&g.r[k], &c->rec[k]);
		if (!ok)
			fprintf(stderr, "case '%s': n %" PRId64 " bad %" PRIu64 " dropped %" PRIu64
			        " truncated %" PRIu64 " unknown %" PRIu64 "\n", c->what, n,
			        st.bad_bytes, st.dropped, st.truncated, st.unknown);
		CHECK(ok);
	}

	/* every prefix of a record, and every single-byte corruption, decodes
	 * without reading outside the buffer (ASan builds check) and never
	 * delivers more records than were whole */
	{
		const uint8_t two[] = { LOAD_BYTES, LOAD_BYTES };
		uint8_t bad[sizeof(two)];

		for (size_t len = 0; len <= sizeof(two); len++) {
			struct got g = { 0 };
			int64_t n = sptd_dec_spe_decode(two, len, on_rec, &g, NULL);

			CHECK(n == (len >= 2 * LOAD_LEN ? 2 : len >= LOAD_LEN ? 1 : 0));
		}
		for (size_t at = 0; at < sizeof(two); at++) {
			struct got g = { 0 };

			memcpy(bad, two, sizeof(two));
			bad[at] ^= 0xa5;
			CHECK(sptd_dec_spe_decode(bad, sizeof(bad), on_rec, &g, NULL) <= 2);
		}
	}

	/* the callback's error stops the walk and is returned */
	{
		const uint8_t two[] = { LOAD_BYTES, LOAD_BYTES };
		struct got g = { .stop_after = 1 };

		CHECK(sptd_dec_spe_decode(two, sizeof(two), on_rec, &g, NULL) == -ECANCELED);
		CHECK(g.n == 1);
	}

	/* invalid arguments */
	{
		struct got g = { 0 };

		CHECK(sptd_dec_spe_decode(NULL, 4, on_rec, &g, NULL) == -EINVAL);
		CHECK(sptd_dec_spe_decode((const uint8_t *)"", 0, NULL, &g, NULL) == -EINVAL);
		CHECK(sptd_dec_spe_decode(NULL, 0, on_rec, &g, NULL) == 0);
	}
	CHECK(strcmp(sptd_dec_spe_op_name(SPTD_DEC_SPE_OP_ATOMIC), "atomic") == 0);
	CHECK(sptd_dec_spe_op_name(SPTD_DEC_SPE_OP_NONE) == NULL);
	return SPTD_TEST_END();
}
