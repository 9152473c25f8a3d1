/* test_dec_sort.c — phase 2's event order (decode/flowsort.c) against a
 * plain stable sort of the same keys: random interleavings of many tasks
 * over several CPUs, duplicate keys, unknown tasks, already sorted runs. */
#include <errno.h>

#include "dec-local.h"
#include "sptd_dec.h"
#include "sptd_test.h"

/* The documented order: tid; CPU when tid < 0; ts; cpu; seq; then input
 * position (stable). */
static int reference_cmp(const void *a, const void *b)
{
	const struct sptd_dec_flow *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->tid < 0 && x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	/* input position, kept in @from for this test */
	return x->from < y->from ? -1 : x->from > y->from;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void one_case(size_t n, int ntasks, int ncpus, int64_t tsrange, int sorted_streams)
{
	struct sptd_dec_flow *ev = malloc(n * sizeof(*ev)), *ref = malloc(n * sizeof(*ref));
	uint64_t *seq = calloc((size_t)ncpus, sizeof(*seq));
	int64_t *clock = calloc((size_t)ncpus, sizeof(*clock));
	int same = 1;

	for (size_t i = 0; i < n; i++) {
		int cpu = (int)(next_rand() % (uint64_t)ncpus);

		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].cpu = cpu;
		ev[i].tid = (int)(next_rand() % (uint64_t)(ntasks + 1)) - 1; /* -1: unknown */
		if (sorted_streams) /* as phase 1 makes them: each CPU's stream in time order */
			clock[cpu] += (int64_t)(next_rand() % 3);
		ev[i].ts = sorted_streams ? clock[cpu] : (int64_t)(next_rand() % (uint64_t)tsrange);
		ev[i].seq = seq[cpu]++;
		ev[i].from = i;
	}
	memcpy(ref, ev, n * sizeof(*ev));
	qsort(ref, n, sizeof(*ref), reference_cmp);
	CHECK_INT(sptd_dec_flows_sort(&ev, n), 0);
	for (size_t i = 0; i < n && same; i++)
		same = ev[i].from == ref[i].from;
	CHECK(same);
	free(ev);
	free(ref);
	free(seq);
	free(clock);
}

int main(void)
{
	struct sptd_dec_flow *none = NULL;

	for (int round = 0; round < 200; round++)
		one_case(1 + next_rand() % 2000, 1 + (int)(next_rand() % 40), 1 + (int)(next_rand() % 8),
		         1 + (int64_t)(next_rand() % 50), round & 1);
	one_case(100000, 300, 4, 1000000, 1);   /* a big, realistic one */
	one_case(5000, 1, 1, 1, 0);             /* every key equal: stability alone */
	CHECK_INT(sptd_dec_flows_sort(&none, 0), 0);
	return SPTD_TEST_END();
}
