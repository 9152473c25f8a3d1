/* test_dec_resolve.c — phase 2's resolver (decode/aspace.c,
 * sptd_dec_func_resolve) and its cache of resolved addresses: every answer
 * equals the uncached lookup (sptd_dec_func_peek), in two processes that
 * map different code at the same addresses, for addresses that share a
 * cache slot, and after the address spaces are built again; each symbol id
 * stands for one function of one process and is reported to the sink once.
 * (Addresses outside every image share one placeholder across processes:
 * they are left out.) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dec-local.h"
#include "sptd_dec.h"
#include "sptd_test.h"

#define BASE 0x400000ull
#define SPAN 0x10000ull           /* the range resolved */
#define MAXID 100000

struct seen {
	int reported[MAXID];         /* symbol callbacks per id */
	uint64_t start[MAXID];       /* the function (runtime start) of each id */
	int pid[MAXID];              /* ... in which process */
	int known[MAXID];            /* ... named by a symbol */
	int64_t last;                /* highest id seen */
};

static int on_symbol(void *ctx, const struct sptd_dec_symbol *sym)
{
	struct seen *sn = ctx;

	if (sym->id <= 0 || sym->id >= MAXID)
		return -ERANGE;
	sn->reported[sym->id]++;
	return 0;
}

/* Resolve @addr for @tid (process @pid) and check it against peek. */
static void one(struct sptd_dec_session *s, struct seen *sn, int tid, int pid, uint64_t addr)
{
	struct sptd_dec_func want, got;

	CHECK_INT(sptd_dec_func_peek(s, tid, addr, &want), 0);
	CHECK_INT(sptd_dec_func_resolve(s, tid, addr, &got), 0);
	CHECK(got.start == want.start && got.size == want.size && got.known == want.known);
	if (!(got.start == want.start && got.size == want.size && got.known == want.known))
		fprintf(stderr, "tid %d 0x%llx: resolve start 0x%llx size %llu known %d, peek 0x%llx "
		        "%llu %d\n", tid, (unsigned long long)addr, (unsigned long long)got.start,
		        (unsigned long long)got.size, got.known, (unsigned long long)want.start,
		        (unsigned long long)want.size, want.known);
	CHECK(got.symbol_id > 0 && got.symbol_id < MAXID);
	if (got.symbol_id <= 0 || got.symbol_id >= MAXID)
		return;
	if (got.symbol_id > sn->last) {
		/* a new id: the function it stands for */
		CHECK_INT(got.symbol_id, sn->last + 1);
		sn->last = got.symbol_id;
		sn->start[got.symbol_id] = got.start;
		sn->pid[got.symbol_id] = pid;
		sn->known[got.symbol_id] = got.known;
	} else {
		/* an old id: the same function of the same process */
		CHECK(sn->start[got.symbol_id] == got.start && sn->pid[got.symbol_id] == pid);
	}
}

int main(void)
{
	static struct seen sn;
	static uint8_t blob[SPAN];
	struct sptd_dec_config cfg;
	struct sptd_dec_sink sink;
	struct sptd_dec_session *s = NULL;
	uint64_t a, b, rng = 0x9e3779b97f4a7c15ull;
	int pass, named = 0;

	memset(&cfg, 0, sizeof(cfg));
	memset(&sink, 0, sizeof(sink));
	sink.ctx = &sn;
	sink.symbol = on_symbol;
	CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
	if (!s)
		return SPTD_TEST_END();
	/* process 100: symfix (a small PIE: its code in its first 64 KiB) at
	 * BASE, with its symbols; process 200: 64 KiB of bytes at the same
	 * place, without */
	CHECK_INT(sptd_dec_session_add_elf(s, 100, SPTD_SYMFIX, (int64_t)BASE, 1), 0);
	CHECK_INT(sptd_dec_session_add_bytes(s, 200, "blob", blob, sizeof(blob), BASE, 2), 0);
	CHECK_INT(sptd_dec_session_add_task(s, 101, 100), 0);
	CHECK_INT(sptd_dec_session_add_task(s, 201, 200), 0);
	CHECK_INT(sptd_dec_aspaces_build(s), 0);
	s->sink = &sink;

	for (pass = 0; pass < 2; pass++) {
		/* every 16th byte, both processes in turn, twice (the second
		 * time from the cache), then random addresses */
		for (int rep = 0; rep < 2; rep++)
			for (a = BASE; a < BASE + SPAN; a += 16) {
				one(s, &sn, 101, 100, a);
				one(s, &sn, 201, 200, a);
			}
		for (int i = 0; i < 20000; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			a = BASE + rng % SPAN;
			one(s, &sn, (rng >> 40) & 1 ? 101 : 201, (rng >> 40) & 1 ? 100 : 200, a);
		}
		/* two addresses of one cache slot, in turn */
		a = BASE + 0x1234;
		for (b = a + 1; b < BASE + SPAN && sptd_dec_resolved_slot(b) != sptd_dec_resolved_slot(a); b++)
			;
		CHECK(b < BASE + SPAN);
		for (int i = 0; i < 8; i++) {
			one(s, &sn, 101, 100, i & 1 ? b : a);
			one(s, &sn, 201, 200, i & 1 ? a : b);
		}
		/* the address spaces built again: the cache goes with them */
		sptd_dec_aspaces_free(s);
		CHECK(s->resolved == NULL);
		s->resolve_as = NULL;
		CHECK_INT(sptd_dec_aspaces_build(s), 0);
	}
	/* each id reported once; the program's symbols named some */
	CHECK(sn.last > 2);
	for (int64_t id = 1; id <= sn.last; id++) {
		CHECK_INT(sn.reported[id], 1);
		if (sn.pid[id] == 100 && sn.known[id])
			named++;
	}
	CHECK(named > 0);
	s->sink = NULL;
	sptd_dec_session_destroy(s);
	return SPTD_TEST_END();
}
