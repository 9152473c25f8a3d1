/* offcpu_prog.c — threads that wait where test_offcpu.sh can check it: one
 * blocked in read() on a pipe (sptd_wait_pipe), one in nanosleep
 * (sptd_wait_sleep), each for about @ms.  While they wait, the main thread
 * reads each one's wchan (the kernel's own word for where it sleeps) and
 * prints "pipe TID WCHAN" and "sleep TID WCHAN": the independent answer
 * the incident's blocked_function is compared with.  Built with frame
 * pointers so perf's user call chains reach the thread functions
 * (sptd_pipe_thread, sptd_sleep_thread; the sptd_wait_* frame just above
 * libc's syscall wrapper is lost to frame-pointer unwinding, as in perf).
 *
 * Usage: sptd_offcpu_prog [MS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static long ms = 300;
static volatile pid_t tids[2];

void sptd_wait_pipe(void);
void sptd_wait_sleep(void);

__attribute__((noinline)) void sptd_wait_pipe(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		perror("read");
}

__attribute__((noinline)) void sptd_wait_sleep(void)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

void *sptd_pipe_thread(void *arg);
void *sptd_sleep_thread(void *arg);

__attribute__((noinline)) void *sptd_pipe_thread(void *arg)
{
	(void)arg;
	tids[0] = (pid_t)syscall(SYS_gettid);
	sptd_wait_pipe();
	return NULL;
}

__attribute__((noinline)) void *sptd_sleep_thread(void *arg)
{
	(void)arg;
	tids[1] = (pid_t)syscall(SYS_gettid);
	sptd_wait_sleep();
	return NULL;
}

static void print_wchan(const char *what, pid_t tid)
{
	char path[64], wchan[128] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(wchan, sizeof(wchan), f))
			wchan[0] = '\0';
		fclose(f);
	}
	wchan[strcspn(wchan, "\n")] = '\0';
	printf("%s %d %s\n", what, (int)tid, wchan[0] ? wchan : "?");
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	struct timespec half;

	if (argc > 1)
		ms = atol(argv[1]);
	if (ms < 20 || pipe(fds) < 0)
		return 2;
	pthread_create(&a, NULL, sptd_pipe_thread, NULL);
	pthread_create(&b, NULL, sptd_sleep_thread, NULL);
	half.tv_sec = ms / 2000;
	half.tv_nsec = (ms / 2 % 1000) * 1000000L;
	nanosleep(&half, NULL);
	print_wchan("pipe", tids[0]);
	print_wchan("sleep", tids[1]);
	fflush(stdout);
	nanosleep(&half, NULL);
	if (write(fds[1], "x", 1) != 1)
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
