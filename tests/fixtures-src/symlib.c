/* symlib.c — the shared library of the symbolization tests: one exported
 * hot function (named through .dynsym even when the library is stripped)
 * and one static hot function (named only by .symtab or debug info: in the
 * stripped library it is a frame without a symbol, "[unknown]" in perf). */
#include <stdint.h>

uint64_t symlib_hot(uint64_t n, uint64_t seed);

/* A static function: absent from .dynsym. */
static __attribute__((noinline)) uint64_t symlib_hidden_spin(uint64_t n, uint64_t seed)
{
	volatile uint64_t x = seed;

	for (uint64_t i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

/* Exported: named through .dynsym. */
__attribute__((noinline)) uint64_t symlib_hot(uint64_t n, uint64_t seed)
{
	volatile uint64_t x = seed;

	for (uint64_t i = 0; i < n; i++)
		x ^= x << 13 ^ x >> 7 ^ i;
	/* the hidden spin gets 3/5 of this function's work, in its own frame */
	return x + symlib_hidden_spin(n * 3 / 2, seed);
}
