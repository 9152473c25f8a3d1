/* exited_prog.c — short-lived workloads for test_exited.sh (issue 27
 * items 1 and 3): processes and threads that are gone before the capture.
 *
 *   exited_prog spin MS    burn MS ms in exitedprog_hot_spin, a function
 *                          no other program has, print its pid and exit
 *   exited_prog where      print "pid P hot ADDR" (getpid, where
 *                          exitedprog_hot_spin is mapped) and exit
 *   exited_prog prexec N MS
 *                          N times, one after another: fork a child that
 *                          burns MS ms in exitedprog_prexec_spin (the
 *                          parent's code, before any exec), then execs
 *                          "exited_prog spin 1"; print "prexec PID" for
 *                          each child (issue 27: a sample before the
 *                          exec is named by the parent's mappings)
 *   exited_prog thread     start a thread named "t_exitw" and one left
 *                          unnamed, each sleeping 6 ms and exiting; once
 *                          both are joined print "pid P named T1 unnamed
 *                          T2" (getpid, each thread's own gettid), then
 *                          exit */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void exitedprog_hot_spin(long long ms);
void exitedprog_prexec_spin(long long ms);

static volatile unsigned long sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Burn @ms ms in the calling function (inlined: the samples name it; the
 * clock is read once per ~100k iterations, so the vDSO is a sliver). */
static inline __attribute__((always_inline)) void burn(long long ms)
{
	long long end = now_ns() + ms * 1000000LL;
	unsigned long x = sink;

	while (now_ns() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

/* The hot function: nearly every sample of the process lands here. */
__attribute__((noinline)) void exitedprog_hot_spin(long long ms)
{
	burn(ms);
}

/* What a forked child burns before its exec: a function of its own, so
 * that its samples tell the time before the exec from the time after. */
__attribute__((noinline)) void exitedprog_prexec_spin(long long ms)
{
	burn(ms);
}

static int prexec(int n, long long ms)
{
	for (int i = 0; i < n; i++) {
		int status = 0;
		pid_t child;

		fflush(stdout);
		child = fork();
		if (child < 0)
			return 1;
		if (child == 0) {
			exitedprog_prexec_spin(ms);
			execl("/proc/self/exe", "exited_prog", "spin", "1", (char *)NULL);
			_exit(127);
		}
		printf("prexec %d\n", (int)child);
		if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	return 0;
}

/* A thread: named "t_exitw" when @arg is not NULL; its tid into *@arg or
 * unnamed_tid. */
static int named_tid, unnamed_tid;

static void *worker(void *arg)
{
	if (arg)
		prctl(PR_SET_NAME, "t_exitw", 0, 0, 0);
	*(arg ? (int *)arg : &unnamed_tid) = (int)syscall(SYS_gettid);
	/* asleep, not burning CPU: a thread the samples never see (what
	 * gives a sampled thread its process already) */
	for (int i = 0; i < 3; i++)
		usleep(2000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t, u;

	if (argc == 3 && strcmp(argv[1], "spin") == 0) {
		exitedprog_hot_spin(atoll(argv[2]));
		printf("%d\n", (int)getpid());
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "prexec") == 0)
		return prexec(atoi(argv[2]), atoll(argv[3]));
	if (argc == 2 && strcmp(argv[1], "where") == 0) {
		printf("pid %d hot %p\n", (int)getpid(), (void *)exitedprog_hot_spin);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "thread") == 0) {
		if (pthread_create(&t, NULL, worker, &named_tid) != 0 ||
		    pthread_join(t, NULL) != 0 || pthread_create(&u, NULL, worker, NULL) != 0 ||
		    pthread_join(u, NULL) != 0) {
			fprintf(stderr, "exited_prog: cannot run the threads\n");
			return 1;
		}
		printf("pid %d named %d unnamed %d\n", (int)getpid(), named_tid, unnamed_tid);
		return 0;
	}
	fprintf(stderr, "usage: exited_prog spin MS | prexec N MS | where | thread\n");
	return 2;
}
