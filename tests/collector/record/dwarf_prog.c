/* dwarf_prog.c — a program of known call structure built without frame
 * pointers (-O2 -fomit-frame-pointer), for test_dwarf.sh: the main thread
 * runs main -> sptd_level1 -> sptd_level2 -> sptd_level3 (a hot loop);
 * other threads block through libc, again and again: read() on a pipe
 * (fed every 20 ms by the sleeper), nanosleep() for 20 ms, a futex wait
 * with a 20 ms timeout (syscall()), one spins inside qsort()'s
 * comparison callback and one calls clock_gettime() without pause (its
 * time is spent in the vDSO, which no file on disk holds).  It prints "ready PID" once every thread is in
 * place and then holds those states for the number of milliseconds given
 * (default 1500), so that a recorder and gdb see the same stacks. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile unsigned long sink;
static int pipefd[2];
static int futex_word;
static long hold_ms = 1500;
static volatile int in_place;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((noinline)) static void sptd_level3(long until)
{
	unsigned long x = sink;

	while (!stop) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink = x;
		if (now_ms() >= until)
			break;
	}
}

__attribute__((noinline)) static void sptd_level2(long until)
{
	sptd_level3(until);
	sink++;
}

__attribute__((noinline)) static void sptd_level1(long until)
{
	sptd_level2(until);
	sink++;
}

__attribute__((noinline)) static void *sptd_pipe_thread(void *arg)
{
	char c;
	ssize_t n;

	(void)arg;
	__atomic_add_fetch(&in_place, 1, __ATOMIC_SEQ_CST);
	do
		n = read(pipefd[0], &c, 1);
	while (n == 1 && c == 'x');
	sink += (unsigned long)n;
	return NULL;
}

__attribute__((noinline)) static void *sptd_sleep_thread(void *arg)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 20000000 };

	(void)arg;
	__atomic_add_fetch(&in_place, 1, __ATOMIC_SEQ_CST);
	while (!stop) {
		nanosleep(&ts, NULL);
		if (write(pipefd[1], "x", 1) != 1)
			break;
	}
	return NULL;
}

__attribute__((noinline)) static void *sptd_futex_thread(void *arg)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 20000000 };

	(void)arg;
	__atomic_add_fetch(&in_place, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST) == 0)
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	sink++;
	return NULL;
}

__attribute__((noinline)) static int sptd_compare(const void *a, const void *b)
{
	unsigned long x = sink;

	/* a slow comparison: the thread is found inside it */
	for (int i = 0; i < 2000; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

__attribute__((noinline)) static void *sptd_qsort_thread(void *arg)
{
	enum { N = 256 };
	static int v[N];

	(void)arg;
	__atomic_add_fetch(&in_place, 1, __ATOMIC_SEQ_CST);
	while (!stop) {
		for (int i = 0; i < N; i++)
			v[i] = (int)((i * 2654435761u) % 10007);
		qsort(v, N, sizeof(v[0]), sptd_compare);
	}
	return NULL;
}

__attribute__((noinline)) static void *sptd_vdso_thread(void *arg)
{
	struct timespec ts;

	(void)arg;
	__atomic_add_fetch(&in_place, 1, __ATOMIC_SEQ_CST);
	while (!stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (unsigned long)ts.tv_nsec;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { sptd_pipe_thread, sptd_sleep_thread, sptd_futex_thread,
	                           sptd_qsort_thread, sptd_vdso_thread };
	enum { NT = sizeof(fns) / sizeof(fns[0]) };
	pthread_t t[NT];

	if (argc > 1)
		hold_ms = atol(argv[1]);
	if (pipe(pipefd) < 0)
		return 1;
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL) != 0)
			return 1;
	while (__atomic_load_n(&in_place, __ATOMIC_SEQ_CST) < NT)
		usleep(1000);
	usleep(20000);  /* into read, nanosleep, the futex wait */
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sptd_level1(now_ms() + hold_ms);
	stop = 1;
	if (write(pipefd[1], "q", 1) != 1)
		return 1;
	__atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	return (int)(sink & 0);
}
