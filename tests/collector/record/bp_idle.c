/* bp_idle.c — what an unprivileged user needs to blind break=/PATH:SYMBOL
 * (issue 28.3, test_bp_blind.sh): map PATH executable, as any program
 * mapping a library does, and start NTHREADS threads that only sleep, so
 * that the trigger finds that many threads mapping the file.  Prints
 * "pid P" first (the test kills it by that pid), "ready N" once they all
 * run; exits after SECONDS.
 *
 * Usage: sptd_bp_idle PATH NTHREADS SECONDS */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	struct stat sb;
	long n, secs, started = 0;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: sptd_bp_idle PATH NTHREADS SECONDS\n");
		return 2;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	n = atol(argv[2]);
	secs = atol(argv[3]);
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0 ||
	    mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror(argv[1]);
		return 1;
	}
	close(fd);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, &attr, idle, NULL) != 0)
			break;
		started++;
	}
	printf("ready %ld\n", started);
	fflush(stdout);
	sleep((unsigned)secs);
	return started == n ? 0 : 1;
}
