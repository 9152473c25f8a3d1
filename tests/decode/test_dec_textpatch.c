/* test_dec_textpatch.c — kernel code decoded as it ran at each packet's
 * time (decode/textpatch.c), not as the kcore copy has it: the static-key
 * case of tests/lib/kpoke_case.h, whose copy alone decodes H where G ran,
 * without any error.  The expected calls are what the code as it ran
 * executes. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kpoke_case.h"
#include "sptd_dec.h"
#include "sptd_test.h"

#define K KPOKE_TEXT
#define F KPOKE_F
#define G KPOKE_G
#define H KPOKE_H

/* What the decode gave: the functions called, in order, and the gaps. */
struct got {
	int64_t sym_id[64];
	uint64_t sym_addr[64];
	int nsyms;
	char calls[256];              /* "F G ..." by function address */
	int gaps;
	char reason[256];             /* the last gap's */
};

static int on_symbol(void *ctx, const struct sptd_dec_symbol *sym)
{
	struct got *g = ctx;

	if (g->nsyms < 64) {
		g->sym_id[g->nsyms] = sym->id;
		g->sym_addr[g->nsyms++] = sym->addr;
	}
	return 0;
}

/* Symbols of copied bytes are offsets into them (their dso's addresses). */
static const char *fname(uint64_t addr)
{
	return addr == F - K ? "F" : addr == G - K ? "G" : addr == H - K ? "H" : "?";
}

/* Slices come per task in time order: depth-0 calls are what we look at. */
static int on_slice(void *ctx, const struct sptd_dec_slice *sl)
{
	struct got *g = ctx;
	uint64_t addr = 0;
	size_t n = strlen(g->calls);

	for (int i = 0; i < g->nsyms; i++)
		if (g->sym_id[i] == sl->symbol_id)
			addr = g->sym_addr[i];
	if (sl->depth == 0 && n + 4 < sizeof(g->calls))
		snprintf(g->calls + n, sizeof(g->calls) - n, "%s%s", n ? " " : "", fname(addr));
	return 0;
}

static int on_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	struct got *g = ctx;

	(void)ts;
	(void)dur;
	(void)cpu;
	snprintf(g->reason, sizeof(g->reason), "%s", reason);
	g->gaps++;
	return 0;
}

/* Decode @n passes at @tscs with the copy and @np pokes; copy read at
 * @copied (0: not said). */
static void decode(const uint64_t *tscs, int n, const struct sptd_dec_text_poke *pokes,
                   int np, int64_t copied, struct got *g)
{
	struct sptd_dec_config cfg = { .jobs = 1 };
	struct sptd_dec_sink sink = { .ctx = g, .symbol = on_symbol, .slice = on_slice,
	                              .gap = on_gap };
	struct sptd_dec_session *s = NULL;
	static uint8_t text[KPOKE_TEXT_LEN];
	uint8_t pt[512];
	size_t len = kpoke_trace(pt, sizeof(pt), tscs, n);

	memset(g, 0, sizeof(*g));
	kpoke_text(text);
	CHECK(len > 0);
	CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
	if (!s)
		return;
	CHECK_INT(sptd_dec_session_add_bytes(s, -1, "kernel", text, sizeof(text), K, 1), 0);
	for (int i = 0; i < np; i++)
		CHECK_INT(sptd_dec_session_add_text_poke(s, &pokes[i]), 0);
	if (copied)
		CHECK_INT(sptd_dec_session_set_text_copied(s, copied), 0);
	CHECK_INT(sptd_dec_session_add_pt(s, 0, pt, len), 0);
	CHECK(sptd_dec_session_run(s, &sink) >= 0);
	/* a second run decodes the same (patches are made again; symbols,
	 * named once per session, are kept) */
	memset(g->calls, 0, sizeof(g->calls));
	g->gaps = 0;
	CHECK(sptd_dec_session_run(s, &sink) >= 0);
	sptd_dec_session_destroy(s);
}

int main(void)
{
	struct sptd_dec_text_poke poke;
	struct got g;
	uint64_t one[1] = { 1000 }, two[2] = { 1000, 3000 };

	kpoke_text((uint8_t[KPOKE_TEXT_LEN]){ 0 });   /* fills kpoke_jmp_slow */
	poke = (struct sptd_dec_text_poke){ .ts = 2000, .addr = KPOKE_SITE,
	                                    .old_bytes = kpoke_jmp_slow, .new_bytes = kpoke_nop5,
	                                    .old_len = 5, .new_len = 5 };

	/* no poke known: the copy's flow (what decode did before) */
	decode(one, 1, NULL, 0, 0, &g);
	CHECK_STR(g.calls, "F H");
	/* the site was rewritten at 2000, after the trace: it ran jmp slow */
	decode(one, 1, &poke, 1, 5000, &g);
	CHECK_STR(g.calls, "F G");
	CHECK_INT(g.gaps, 0);
	/* the copy date unknown: every poke counts as copied */
	decode(one, 1, &poke, 1, 0, &g);
	CHECK_STR(g.calls, "F G");
	/* a trace across the rewrite: slow path before it, fast after */
	decode(two, 2, &poke, 1, 5000, &g);
	CHECK_STR(g.calls, "F G F H");
	/* the rewrite before the trace: it ran the new bytes */
	poke.ts = 500;
	decode(two, 2, &poke, 1, 5000, &g);
	CHECK_STR(g.calls, "F H F H");
	/* a rewrite after the copy was read is not in it: nothing to undo */
	poke.ts = 6000;
	decode(one, 1, &poke, 1, 5000, &g);
	CHECK_STR(g.calls, "F H");
	/* ftrace-like: made a jmp at 1500 (the copy has it), and back to a
	 * nop at 2500 after the copy: before 1500 nop, then jmp */
	{
		struct sptd_dec_text_poke two_pokes[2] = {
			{ .ts = 1500, .addr = KPOKE_SITE, .old_bytes = kpoke_nop5,
			  .new_bytes = kpoke_jmp_slow, .old_len = 5, .new_len = 5 },
			{ .ts = 2500, .addr = KPOKE_SITE, .old_bytes = kpoke_jmp_slow,
			  .new_bytes = kpoke_nop5, .old_len = 5, .new_len = 5 },
		};
		uint64_t at[2] = { 1000, 2000 };

		decode(at, 2, two_pokes, 2, 3000, &g);
		CHECK_STR(g.calls, "F H F G");
	}

	/* a forged sideband: so many rewrites of one site that undoing them
	 * would cost more than the decode (9000^2 > 2^26): the site decodes
	 * as copied, and a gap says so */
	{
		static struct sptd_dec_text_poke many[9000];

		for (int i = 0; i < 9000; i++)
			many[i] = (struct sptd_dec_text_poke){
				.ts = 1500 + i, .addr = KPOKE_SITE, .old_len = 5, .new_len = 5,
				.old_bytes = i % 2 ? kpoke_nop5 : kpoke_jmp_slow,
				.new_bytes = i % 2 ? kpoke_jmp_slow : kpoke_nop5,
			};
		decode(one, 1, many, 9000, 20000, &g);
		CHECK_STR(g.calls, "F H");
		CHECK_INT(g.gaps, 1);
		CHECK(strstr(g.reason, "decode as copied") != NULL);
	}

	/* invalid arguments */
	CHECK_INT(sptd_dec_session_add_text_poke(NULL, &poke), -EINVAL);
	CHECK_INT(sptd_dec_session_set_text_copied(NULL, 0), -EINVAL);
	{
		struct sptd_dec_config cfg = { .jobs = 1 };
		struct sptd_dec_session *s = NULL;
		struct sptd_dec_text_poke bad = poke;

		CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
		CHECK_INT(sptd_dec_session_add_text_poke(s, NULL), -EINVAL);
		bad.old_bytes = NULL;
		CHECK_INT(sptd_dec_session_add_text_poke(s, &bad), -EINVAL);
		bad = poke;
		bad.new_bytes = NULL;
		CHECK_INT(sptd_dec_session_add_text_poke(s, &bad), -EINVAL);
		bad = poke;
		bad.addr = UINT64_MAX - 2;
		CHECK_INT(sptd_dec_session_add_text_poke(s, &bad), -EINVAL);
		sptd_dec_session_destroy(s);
	}
	return SPTD_TEST_END();
}
