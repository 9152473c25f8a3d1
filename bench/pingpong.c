/* pingpong.c — a context-switch-heavy workload: two processes bounce a byte
 * over two pipes; prints round trips per second.  Used by
 * bench/bench-overhead.sh to measure what an armed sysptd costs. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv);

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000;
	int ab[2], ba[2];
	struct timespec t0, t1;
	char c = 'x';
	pid_t child;

	if (rounds <= 0 || pipe(ab) < 0 || pipe(ba) < 0)
		return 2;
	child = fork();
	if (child == 0) {
		for (long i = 0; i < rounds; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waitpid(child, NULL, 0);
	printf("%.0f\n", (double)rounds /
	       ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9));
	return 0;
}
