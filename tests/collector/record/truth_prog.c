/* truth_prog.c — workloads of known behaviour for the truth tests, each
 * logging what it did on CLOCK_MONOTONIC (the incident's clock), so a test
 * can hold an incident against the program's own account.
 *
 *   truth_prog latency SECONDS   four sleepers (1 ms nanosleep loops), a
 *                                pipe ping-pong pair, and one CPU hog per
 *                                online CPU pinned to it (so wakeups wait);
 *                                prints "hog TID CPU" per hog
 *   truth_prog zombies N MS      N children that exit at once, each reaped
 *                                MS ms later (the parent sleeps before
 *                                waitpid: they are zombies meanwhile);
 *                                prints "child PID EXIT_NS REAPED_NS" */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *sleeper(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	(void)arg;
	while (!stop)
		nanosleep(&ms, NULL);
	return NULL;
}

/* One end of the ping-pong: read a byte, write it to the other. */
struct pong {
	int in, out;
	int serve;        /* 1: starts the rally */
};

static void *pingpong(void *arg)
{
	struct pong *p = arg;
	char c = 'x';

	if (p->serve && write(p->out, &c, 1) != 1)
		return NULL;
	while (!stop) {
		if (read(p->in, &c, 1) != 1)
			break;
		if (write(p->out, &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *hog(void *arg)
{
	long cpu = (long)arg;
	cpu_set_t set;
	volatile unsigned long n = 0;

	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	printf("hog %ld %ld\n", (long)syscall(SYS_gettid), cpu);
	fflush(stdout);
	while (!stop)
		n++;
	return NULL;
}

static int latency(double seconds)
{
	pthread_t th[64];
	int nth = 0, ab[2], ba[2];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct pong a, b;
	struct timespec total = { (time_t)seconds,
	                          (long)((seconds - (double)(time_t)seconds) * 1e9) };

	if (pipe(ab) < 0 || pipe(ba) < 0)
		return 1;
	a = (struct pong){ .in = ba[0], .out = ab[1], .serve = 1 };
	b = (struct pong){ .in = ab[0], .out = ba[1], .serve = 0 };
	for (int i = 0; i < 4; i++)
		pthread_create(&th[nth++], NULL, sleeper, NULL);
	pthread_create(&th[nth++], NULL, pingpong, &b);
	pthread_create(&th[nth++], NULL, pingpong, &a);
	for (long c = 0; c < ncpu && nth < 64; c++)
		pthread_create(&th[nth++], NULL, hog, (void *)c);
	nanosleep(&total, NULL);
	stop = 1;
	/* the ping-pong threads may be blocked in read: close to end them */
	close(ab[1]);
	close(ba[1]);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int zombies(int n, int ms)
{
	for (int i = 0; i < n; i++) {
		struct timespec wait = { ms / 1000, (long)(ms % 1000) * 1000000L };
		long long exited, reaped;
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(0);
		/* the child exits at once: by the time this sleep ends it has
		 * long been a zombie (its exit time is read from /proc below
		 * only approximately: the fork's return is its upper bound) */
		exited = now_ns();
		nanosleep(&wait, NULL);
		reaped = now_ns();
		if (waitpid(pid, NULL, 0) != pid)
			return 1;
		printf("child %d %lld %lld\n", (int)pid, exited, reaped);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "latency") == 0)
		return latency(atof(argv[2]));
	if (argc == 4 && strcmp(argv[1], "zombies") == 0)
		return zombies(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: truth_prog latency SECONDS | zombies N MS\n");
	return 2;
}
