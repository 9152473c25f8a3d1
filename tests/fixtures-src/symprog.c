/* symprog.c — the program of the symbolization tests: two hot functions of
 * its own (one static) and two of libsymlib.so (symlib.c), run in small
 * interleaved slices so any window holds them in the same proportions.
 * Built with -g; tests strip it and install its debug info elsewhere.
 *
 * Usage: sptd-symprog SECONDS    (busy for that long, then exits 0)
 * Iterations per round: main's static symprog_spin_a 4 units,
 * symprog_spin_b 2, symlib_hot 1.6 and its static helper
 * symlib_hidden_spin 2.4 (the loops differ, so time shares differ too: the
 * tests compare perf's and sysptd's shares, not these counts). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

uint64_t symlib_hot(uint64_t n, uint64_t seed);
uint64_t symprog_spin_b(uint64_t n, uint64_t seed);

static __attribute__((noinline)) uint64_t symprog_spin_a(uint64_t n, uint64_t seed)
{
	volatile uint64_t x = seed;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) uint64_t symprog_spin_b(uint64_t n, uint64_t seed)
{
	volatile uint64_t x = seed;

	for (uint64_t i = 0; i < n; i++)
		x = (x ^ (x >> 31)) * 0x7fb5d329728ea185ull;
	return x;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double until = now_s() + (argc > 1 ? atof(argv[1]) : 1.0);
	uint64_t sum = 0, unit = 2000;

	prctl(PR_SET_NAME, "sptd-symprog");
	while (now_s() < until) {
		for (int k = 0; k < 20; k++) {
			sum += symprog_spin_a(unit * 4, sum);
			sum += symprog_spin_b(unit * 2, sum);
			/* symlib_hot: 1.6 units itself + 2.4 in its hidden helper */
			sum += symlib_hot(unit * 16 / 10, sum);
		}
	}
	printf("%llu\n", (unsigned long long)(sum & 1));
	return 0;
}
