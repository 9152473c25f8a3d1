/* seed.c — make every CPU's ftrace ring start with a sched_switch.
 *
 * A CPU that stays idle after the rings are (re)armed writes no event, and
 * then nobody can say what ran there.  Visiting each CPU once with the
 * service's own thread costs two context switches per CPU and puts a
 * switch at the start of every ring, from which the builder seeds each
 * CPU's state (as Perfetto seeds its tracks from the first switch). */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "record-local.h"

int sptd_col_seed_cpus(const int *cpus, int ncpus)
{
	cpu_set_t saved, one;
	int visited = 0;

	if (!cpus || ncpus < 0)
		return -EINVAL;
	if (sched_getaffinity(0, sizeof(saved), &saved) < 0)
		return -errno;
	for (int i = 0; i < ncpus; i++) {
		struct timespec nap = { 0, 1000 };

		if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpus[i], &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			continue; /* offline or forbidden by cpuset: nothing to seed */
		/* sleeping switches out on that CPU as well as in */
		nanosleep(&nap, NULL);
		visited++;
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	return visited;
}
