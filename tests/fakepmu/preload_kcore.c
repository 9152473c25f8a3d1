/* preload_kcore.c — the fake kernel's /proc/kcore failing, inside the
 * LD_PRELOAD fake (preload.c).  A read of /proc/kcore can fail: the kernel
 * returns an error where it cannot copy a range (fs/proc/kcore.c
 * read_kcore_iter), and the file is read with plain pread(2), by sysptd and
 * by libelf alike.
 *
 * Environment: SPTD_FAKEPMU_KCORE_EIO=1 makes every pread of a file whose
 * path ends in /proc/kcore (the fake kernel of fakepmu_kcore.h, under
 * $SPTD_KERNEL_ROOT) fail with EIO at file offsets at or past
 * FAKEKERNEL_DATA_OFF: its ELF headers read, its segments do not.
 * Unset: pread is the real call. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "fakepmu_kcore.h"

/* The interposers: exported, so no prototypes elsewhere. */
ssize_t pread(int fd, void *buf, size_t len, off_t off);
ssize_t pread64(int fd, void *buf, size_t len, off_t off);

static ssize_t (*libc_pread)(int, void *, size_t, off_t);

/* 1 when this read of @fd at @off must fail. */
static int kcore_fails(int fd, off_t off)
{
	static const char tail[] = "/proc/kcore";
	const char *eio = getenv("SPTD_FAKEPMU_KCORE_EIO");
	char link[64], path[4096];
	ssize_t n;

	if (!eio || strcmp(eio, "1") != 0 || off < FAKEKERNEL_DATA_OFF)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < (ssize_t)sizeof(tail) - 1)
		return 0;
	path[n] = '\0';
	return strcmp(path + n - (sizeof(tail) - 1), tail) == 0;
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	if (!libc_pread)
		libc_pread = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	if (kcore_fails(fd, off)) {
		errno = EIO;
		return -1;
	}
	return libc_pread(fd, buf, len, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off);
}
