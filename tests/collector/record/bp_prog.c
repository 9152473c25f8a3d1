/* bp_prog.c — a process for the break= and watch= triggers (test_bp.sh):
 * every PERIOD ms (default 50) it calls sptd_bump(i / 2), which stores its argument into
 * the global sptd_counter, so every other store leaves the value as it
 * was (a silent store).  Before each call it prints "call T V" (T:
 * CLOCK_MONOTONIC ns, V: the value stored): the ground truth the trigger
 * rows are checked against.  Prints its pid first; runs @secs seconds.
 *
 * Usage: sptd_bp_prog [SECONDS [PERIOD_MS]]
 *
 * The service reads a watched word's new value when it takes the hit, so a
 * store that comes before then shows in the earlier hit's value: a period
 * well above an incident's write time keeps the values exact. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile long sptd_counter;
long sptd_spare[8];    /* more watchable words, for the debug-register limit */

void sptd_bump(long v);

__attribute__((noinline)) void sptd_bump(long v)
{
	sptd_counter = v;
}

int main(int argc, char **argv)
{
	struct timespec pause = { 0, 50000000 }, now;
	long secs = argc > 1 ? atol(argv[1]) : 10;
	long period_ms = argc > 2 ? atol(argv[2]) : 50;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (period_ms < 1 || period_ms > 10000)
		period_ms = 50;
	pause.tv_sec = period_ms / 1000;
	pause.tv_nsec = period_ms % 1000 * 1000000;
	for (long i = 0; i < secs * 1000 / period_ms; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		printf("call %lld %ld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec, i / 2);
		fflush(stdout);
		sptd_bump(i / 2);
		nanosleep(&pause, NULL);
	}
	return 0;
}
