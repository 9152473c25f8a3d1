/* sys.c — the real system calls behind struct sptd_col_sys.
 *
 * Every perf syscall of collector/ goes through sptd_col_sys so that a test
 * can replace one member (make perf_event_open fail with EACCES, mmap with
 * ENOMEM) without touching the code under test; so does the TSC read that
 * relates PT's time to the other clocks (a fake PMU's trace has its own).
 * The real members return what the libc call returns; negative-errno
 * conversion happens in callers (they look at errno, as with the libc
 * functions). */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "perf-local.h"

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                               int group_fd, unsigned long flags)
{
	/* glibc has no wrapper for perf_event_open(2). */
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

static int sys_munmap(void *addr, size_t len)
{
	return munmap(addr, len);
}

static int sys_ioctl(int fd, unsigned long req, unsigned long arg)
{
	return ioctl(fd, req, arg);
}

static int sys_close(int fd)
{
	return close(fd);
}

/* Reads at most @len - 1 bytes: sysfs/procfs files are small and a short
 * read is the whole file only once read() returns 0. */
static ssize_t sys_read_file(const char *path, char *buf, size_t len)
{
	size_t used = 0;
	ssize_t ret;
	int fd;

	if (!path || !buf || len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (used + 1 < len) {
		ret = read(fd, buf + used, len - 1 - used);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			close(fd);
			buf[used] = '\0';
			return ret;
		}
		if (ret == 0)
			break;
		used += (size_t)ret;
	}
	buf[used] = '\0';
	close(fd);
	return (ssize_t)used;
}

static uint64_t sys_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

struct sptd_col_sys sptd_col_sys = {
	.perf_event_open = sys_perf_event_open,
	.mmap = sys_mmap,
	.munmap = sys_munmap,
	.ioctl = sys_ioctl,
	.close = sys_close,
	.read_file = sys_read_file,
	.tsc = sys_tsc,
};
