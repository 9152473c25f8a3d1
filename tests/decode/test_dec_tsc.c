/* test_dec_tsc.c — the one TSC -> ns conversion (decode/tsc.c), table-driven:
 * perf's mult/shift form (with a zero point, an offset and products wider
 * than 64 bits), the frequency form, the identity, and which form wins. */
#include <stdint.h>

#include "sptd_dec.h"
#include "sptd_test.h"

struct tsc_case {
	const char *what;          /* shown when a row fails */
	struct sptd_dec_tsc conv;  /* the conversion */
	uint64_t tsc;              /* input */
	int64_t ns;                /* expected */
};

static const struct tsc_case cases[] = {
	{ "zeroed: ns = tsc", { 0 }, 123456789, 123456789 },
	{ "mult 1.0", { .mult = 1u << 24, .shift = 24 }, 987654321, 987654321 },
	{ "mult 1.5, zero, offset", { .mult = 3u << 23, .shift = 24, .zero = 1000, .offset_ns = 5 },
	  3000, 3005 },
	{ "perf page: zero 0, offset time_zero",
	  { .mult = 1u << 30, .shift = 31, .offset_ns = -1000 }, 4000, 1000 },
	{ "before the zero point: negative", { .mult = 1u << 24, .shift = 24, .zero = 10 }, 5, -5 },
	{ "128-bit product", { .mult = 0xffffffffu, .shift = 34 }, UINT64_MAX >> 2,
	  INT64_C(1152921504338411519) },
	{ "hz 2 GHz", { .hz = 2000000000u }, 3000000000u, 1500000000 },
	{ "hz 3 GHz, huge tsc", { .hz = 3000000000u }, UINT64_C(1) << 63,
	  INT64_C(3074457345618258602) },
	{ "mult wins over hz", { .mult = 1u << 24, .shift = 24, .hz = 1 }, 77, 77 },
	/* hostile parameters (a corrupt incident's meta): no UB, saturation at
	 * +-(2^62 - 1), so that any span between two times fits an int64 */
	{ "128-bit product past 2^62", { .mult = 0xffffffffu, .shift = 33 }, UINT64_MAX,
	  INT64_C(4611686018427387903) },
	{ "no conversion, TSC past 2^62", { 0 }, UINT64_MAX, INT64_C(4611686018427387903) },
	{ "modulo 2^64: far negative", { .mult = 1, .shift = 0 }, UINT64_C(1) << 63,
	  -INT64_C(4611686018427387903) },
	{ "shift 200: everything shifted out", { .mult = 5, .shift = 200, .offset_ns = 7 },
	  UINT64_MAX, 7 },
	{ "offset pushes past INT64_MAX", { .mult = 1, .offset_ns = INT64_MAX }, 10,
	  INT64_C(4611686018427387903) },
	{ "offset pushes below INT64_MIN", { .mult = 1, .offset_ns = INT64_MIN },
	  UINT64_MAX - 9, -INT64_C(4611686018427387903) },
	{ "hz 1 Hz: past INT64_MAX", { .hz = 1 }, UINT64_MAX, INT64_C(4611686018427387903) },
};

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t got = sptd_dec_tsc_ns(&cases[i].conv, cases[i].tsc);

		if (got != cases[i].ns)
			fprintf(stderr, "row %zu (%s):\n", i, cases[i].what);
		CHECK_INT(got, cases[i].ns);
	}
	/* no conversion given: the identity */
	CHECK_INT(sptd_dec_tsc_ns(NULL, 42), 42);
	return SPTD_TEST_END();
}
