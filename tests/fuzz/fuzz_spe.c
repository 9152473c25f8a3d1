/* fuzz_spe.c — decode/'s Arm SPE packet decoder on hostile bytes.
 *
 * Input: the bytes of an SPE buffer as an AUXTRACE record or raw_spe row
 * holds it.  Checked: the decoder never fails on bad input (bad bytes are
 * counted, not errors), every record it delivers was closed by a
 * Timestamp or End packet (at least 1 byte each, so no more records than
 * bytes), the counts add up (records delivered = the stats' records, bad
 * bytes no more than the input), and a record's fields are those its
 * "have" bits name (an address the record lacks is 0). */
#include <stdint.h>

#include "fuzz.h"
#include "sptd_dec.h"

struct seen {
	uint64_t n;
};

static int on_record(void *ctx, const struct sptd_dec_spe_record *r)
{
	struct seen *s = ctx;

	FUZZ_CHECK(r->have || r->op != SPTD_DEC_SPE_OP_NONE, "an empty record was delivered");
	FUZZ_CHECK((r->have & SPTD_DEC_SPE_HAVE_PC) || r->pc == 0, "pc without its packet");
	FUZZ_CHECK((r->have & SPTD_DEC_SPE_HAVE_VADDR) || r->vaddr == 0, "vaddr without its packet");
	FUZZ_CHECK((r->have & SPTD_DEC_SPE_HAVE_PADDR) || r->paddr == 0, "paddr without its packet");
	FUZZ_CHECK(r->paddr >> 56 == 0, "paddr 0x%llx wider than 56 bits",
	           (unsigned long long)r->paddr);
	FUZZ_CHECK(r->el >= 0 && r->el <= 3, "el %d", r->el);
	s->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sptd_dec_spe_stats st = { 0 };
	struct seen s = { 0 };
	int64_t n = sptd_dec_spe_decode(size ? data : NULL, size, on_record, &s, &st);

	FUZZ_CHECK(n >= 0, "decode failed with %lld on bad input", (long long)n);
	FUZZ_CHECK((uint64_t)n == s.n && s.n == st.records, "counts %lld %llu %llu", (long long)n,
	           (unsigned long long)s.n, (unsigned long long)st.records);
	FUZZ_CHECK(st.records <= size && st.bad_bytes <= size, "more records or bad bytes than bytes");
	FUZZ_CHECK(st.truncated <= 1, "truncated %llu", (unsigned long long)st.truncated);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}
