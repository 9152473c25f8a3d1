/* witness_prog.c — the witness suite's workload: behaviour of known shape,
 * and its own log of who it is, for test_witness.sh to hold both sysptd's
 * incident and perf's record of the same moment against.
 *
 *   sptd-witness LOG MS      run for MS milliseconds; LOG gets one line per
 *                            task: "process PID", "thread NAME TID PID",
 *                            "short PID" (each short-lived process)
 *   sptd-witness --short MS  (internal) a short-lived process: burn MS ms in
 *                            witness_short_hot, then exit
 *
 * The parts run at once, each in threads named wit_*:
 *   - wit_forker: spawns a short-lived process (this program, --short 20)
 *     every 40 ms and waits for it: processes that are gone long before
 *     the incident is written (issue 27, item 1);
 *   - wit_pool0..2: a pool burning CPU in witness_pool_hot, 5 ms at a time
 *     with a 1 ms sleep between;
 *   - wit_sleeper: 2 ms sleeps;
 *   - wit_ping, wit_pong: a pipe ping-pong (each wakes the other);
 *   - wit_timer: a 1 ms timerfd;
 *   - wit_disk: 4 KiB writes with fdatasync to a file beside LOG (disk
 *     interrupts);
 *   - wit_early: a thread that sleeps 50 ms and exits, started every
 *     200 ms: threads that exited before the incident was written
 *     (issue 27, item 3).
 * Built with frame pointers so that both samplers walk the same stacks. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile int stop;              /* set when MS have passed */
static FILE *log_file;                     /* the log, line-buffered */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char disk_path[4200];           /* the disk writer's file */
static char self_path[PATH_MAX];       /* this program, for the short ones */
static int ping_pipe[2], pong_pipe[2]; /* wit_ping -> wit_pong, and back */
volatile uint64_t witness_sink;        /* keeps the burn loops */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&log_lock);
	va_start(ap, fmt);
	vfprintf(log_file, fmt, ap);
	va_end(ap);
	fflush(log_file);
	pthread_mutex_unlock(&log_lock);
}

/* Name the calling thread and log it. */
static void named(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
	say("thread %s %ld %d\n", name, (long)syscall(SYS_gettid), getpid());
}

/* the hot functions each side must name (global: their names survive) */
void witness_short_hot(int64_t until);
void witness_pool_hot(int64_t until);

__attribute__((noinline)) void witness_short_hot(int64_t until)
{
	while (now_ns() < until)
		for (int i = 0; i < 1000; i++)
			witness_sink += (uint64_t)i * 2654435761u;
}

__attribute__((noinline)) void witness_pool_hot(int64_t until)
{
	while (now_ns() < until)
		for (int i = 0; i < 1000; i++)
			witness_sink ^= (uint64_t)i * 40503u;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static void *forker(void *arg)
{
	const char *self = arg;

	named("wit_forker");
	while (!stop) {
		char *args[] = { (char *)self, "--short", "20", NULL };
		pid_t pid;

		/* posix_spawn (clone with CLONE_VFORK, as system() and shells
		 * on glibc): the child runs no code of ours before its exec.
		 * A fork() from this busy many-threaded process spends long in
		 * copy-on-write faults before the exec, and samples there are
		 * of the parent's mappings: sysptd leaves those unnamed (issue
		 * 27, docs/WITNESS.md) */
		if (posix_spawn(&pid, self, NULL, NULL, args, environ) == 0) {
			say("short %d\n", pid);
			waitpid(pid, NULL, 0);
		}
		nap_us(20000);
	}
	return NULL;
}

static void *pool(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "wit_pool%d", (int)(intptr_t)arg);
	named(name);
	while (!stop) {
		witness_pool_hot(now_ns() + 5000000);
		nap_us(1000);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	named("wit_sleeper");
	while (!stop)
		nap_us(2000);
	return NULL;
}

static void *ping(void *arg)
{
	char c = 'x';

	(void)arg;
	named("wit_ping");
	while (!stop) {
		if (write(ping_pipe[1], &c, 1) != 1 || read(pong_pipe[0], &c, 1) != 1)
			break;
	}
	close(ping_pipe[1]);
	return NULL;
}

static void *pong(void *arg)
{
	char c;

	(void)arg;
	named("wit_pong");
	while (read(ping_pipe[0], &c, 1) == 1)
		if (write(pong_pipe[1], &c, 1) != 1)
			break;
	close(pong_pipe[1]);
	return NULL;
}

static void *timer(void *arg)
{
	struct itimerspec its = { { 0, 1000000 }, { 0, 1000000 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	uint64_t ticks;

	(void)arg;
	named("wit_timer");
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0)
		return NULL;
	while (!stop && read(fd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks))
		;
	close(fd);
	return NULL;
}

static void *disk(void *arg)
{
	char block[4096];
	int fd;

	(void)arg;
	named("wit_disk");
	memset(block, 'w', sizeof(block));
	fd = open(disk_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	while (!stop) {
		if (pwrite(fd, block, sizeof(block), 0) != (ssize_t)sizeof(block) ||
		    fdatasync(fd) < 0)
			break;
		nap_us(2000);
	}
	close(fd);
	unlink(disk_path);
	return NULL;
}

static void *early(void *arg)
{
	(void)arg;
	named("wit_early");
	nap_us(50000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[9];
	int n = 0, ms;
	int64_t end, next_early;

	if (argc == 3 && strcmp(argv[1], "--short") == 0) {
		witness_short_hot(now_ns() + atol(argv[2]) * 1000000);
		return 0;
	}
	if (argc != 3 || (ms = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: sptd-witness LOG MS\n");
		return 2;
	}
	if (!(log_file = fopen(argv[1], "w"))) {
		fprintf(stderr, "sptd-witness: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	snprintf(disk_path, sizeof(disk_path), "%s.disk", argv[1]);
	if (pipe(ping_pipe) < 0 || pipe(pong_pipe) < 0)
		return 1;
	say("process %d\n", getpid());
	/* exec'd by its real name, so that the short processes are named as
	 * the program (comm is the exec'd file's base name) */
	if (!realpath("/proc/self/exe", self_path))
		return 1;
	pthread_create(&t[n++], NULL, forker, self_path);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[n++], NULL, pool, (void *)(intptr_t)i);
	pthread_create(&t[n++], NULL, sleeper, NULL);
	pthread_create(&t[n++], NULL, ping, NULL);
	pthread_create(&t[n++], NULL, pong, NULL);
	pthread_create(&t[n++], NULL, timer, NULL);
	pthread_create(&t[n++], NULL, disk, NULL);
	end = now_ns() + (int64_t)ms * 1000000;
	next_early = now_ns();
	while (now_ns() < end) {
		if (now_ns() >= next_early) {
			pthread_t e;

			if (pthread_create(&e, NULL, early, NULL) == 0)
				pthread_detach(e);
			next_early += 200000000;
		}
		nap_us(10000);
	}
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	fclose(log_file);
	return 0;
}
