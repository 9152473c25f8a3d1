/* memprog.c — loads, stores and atomics for sptd-spegen: an array filled
 * and summed through pointers, a global struct updated field by field,
 * thread-local counters (FS-relative), and LOCK-prefixed adds and XCHG. */
#include <stdlib.h>

struct counters {
	long hits, misses;
	int flags[8];
};

struct counters global_counters;
static __thread long tls_count;
static long shared_word;

__attribute__((noinline)) static void fill(long *a, int n)
{
	for (int i = 0; i < n; i++)
		a[i] = i * 3;
}

__attribute__((noinline)) static long sum(const long *a, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += a[i];
	return s;
}

__attribute__((noinline)) static void count(struct counters *c, long v)
{
	if (v & 1)
		c->hits++;
	else
		c->misses++;
	c->flags[v & 7] = (int)v;
	tls_count += v;
	__atomic_fetch_add(&shared_word, v, __ATOMIC_SEQ_CST);
	__atomic_exchange_n(&shared_word, v, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300;
	long *a = malloc((size_t)n * sizeof(*a)), s;

	if (!a)
		return 1;
	fill(a, n);
	s = sum(a, n);
	for (int i = 0; i < n / 4; i++)
		count(&global_counters, a[i]);
	free(a);
	return s == 3L * n * (n - 1) / 2 && tls_count > 0 ? 0 : 1;
}
