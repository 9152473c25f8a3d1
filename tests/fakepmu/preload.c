/* preload.c — the fake intel_pt PMU inside another program (LD_PRELOAD),
 * so the real `sysptd record --source pt` runs against it.
 *
 * Environment (read once, at load):
 *   SPTD_FAKEPMU_GEN   a sptd-ptgen output directory: what the fake's
 *                      "hardware" produced (fakepmu_gen.h).  Unset: the
 *                      library does nothing but pass every call through.
 *   SPTD_SYSFS_ROOT    the fake sysfs tree (fakepmu_gen_sysfs); its
 *                      intel_pt/type is the PMU type served here (sysptd
 *                      reads the same tree).
 *   SPTD_FAKEPMU_DROP  CPU:LEN — that CPU loses the first LEN bytes of its
 *                      stream (AUX record flagged TRUNCATED).
 * Interposed: syscall(SYS_perf_event_open) (glibc has no wrapper), mmap,
 * munmap, ioctl, close.  Events of the intel_pt type and sideband dummies
 * are the fake's; everything else (tracepoint triggers, ftrace, files) is
 * the real call.  Opens with aux_action bits into a fake event's group fail
 * with EINVAL, as on a kernel without AUX pause, so sysptd's triggers stay
 * real events.  The
 * fake's perf clock is ns = tsc * mult >> 31 with the generator's exact
 * multiplier (fakepmu_gen_mult): perf time is generator time.  The TSC
 * sysptd reads to relate that clock to CLOCK_MONOTONIC is the fake's too
 * (fakepmu_tsc_follow, through sysptd's exported sptd_col_sys): at each
 * freeze it reads the generator's end, so every incident's trace ends at
 * its freeze, inside its window, as real PT's does.
 *
 * sysptd opens and maps its PT events from one thread; the fake's table is
 * not locked. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include "fakepmu_gen.h"
#include "sptd_col_perf.h"

/* The interposers: exported, so no prototypes elsewhere. */
long syscall(long number, ...);
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int munmap(void *addr, size_t len);
int ioctl(int fd, unsigned long req, ...);
int close(int fd);

static struct sptd_col_sys real;     /* libc's calls */
static struct sptd_col_sys fake;     /* the fake's, falling through to real */
static long (*real_syscall)(long, ...);
static struct fakepmu_ptgen *gen;      /* what is served; NULL: inactive */

static int real_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                                unsigned long flags)
{
	return (int)real_syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* libc's own entry points, looked up once. */
static void *(*libc_mmap)(void *, size_t, int, int, int, off_t);
static int (*libc_munmap)(void *, size_t);
static int (*libc_ioctl)(int, unsigned long, ...);
static int (*libc_close)(int);

static void libc_lookup(void)
{
	if (libc_close)
		return;
	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	libc_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	libc_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	libc_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	libc_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
}

static void *real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	libc_lookup();
	return libc_mmap(addr, len, prot, flags, fd, off);
}

static int real_munmap(void *addr, size_t len)
{
	libc_lookup();
	return libc_munmap(addr, len);
}

static int real_ioctl(int fd, unsigned long req, unsigned long arg)
{
	libc_lookup();
	return libc_ioctl(fd, req, arg);
}

static int real_close(int fd)
{
	libc_lookup();
	return libc_close(fd);
}

static uint64_t real_tsc(void)
{
	return __rdtsc();
}

static int pmu_type(const char *root)
{
	char path[4200];
	FILE *f;
	int type = -1;

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/type", root);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	return type;
}

__attribute__((constructor)) static void fakepmu_preload_init(void)
{
	const char *dir = getenv("SPTD_FAKEPMU_GEN"), *root = getenv("SPTD_SYSFS_ROOT");
	const char *drop = getenv("SPTD_FAKEPMU_DROP");
	char err[512];
	struct sptd_col_sys *host;
	uint32_t mult;
	int type, ret;

	libc_lookup();
	real = (struct sptd_col_sys){ .perf_event_open = real_perf_event_open, .mmap = real_mmap,
	                              .munmap = real_munmap, .ioctl = real_ioctl,
	                              .close = real_close, .tsc = real_tsc };
	fake = real;
	if (!dir || !dir[0])
		return;
	type = root ? pmu_type(root) : -1;
	if (type < 0) {
		fprintf(stderr, "fakepmu: no intel_pt/type under SPTD_SYSFS_ROOT (%s): inactive\n",
		        root ? root : "unset");
		return;
	}
	ret = fakepmu_gen_load(dir, &gen, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "fakepmu: %s: inactive\n", err);
		return;
	}
	if (drop && drop[0]) {
		int cpu;
		size_t len;

		if (sscanf(drop, "%d:%zu", &cpu, &len) != 2 || fakepmu_gen_drop(gen, cpu, len) < 0)
			fprintf(stderr, "fakepmu: bad SPTD_FAKEPMU_DROP '%s' (CPU:LEN): ignored\n", drop);
	}
	mult = fakepmu_gen_mult(gen);
	if (!mult) {
		fprintf(stderr, "fakepmu: tsc_hz %lld has no exact perf clock multiplier: inactive\n",
		        (long long)gen->tsc_hz);
		fakepmu_gen_free(gen);
		gen = NULL;
		return;
	}
	fakepmu_serve(type, gen->scripts, gen->ncpus, 0, &real, &fake);
	fakepmu_set_clock(0, mult, 31);
	fakepmu_fail_grouped(EINVAL);
	/* sysptd's TSC reads: the hardware's that made the trace */
	host = dlsym(RTLD_DEFAULT, "sptd_col_sys");
	if (host) {
		fakepmu_tsc_follow(1);
		host->tsc = fake.tsc;
	} else {
		fprintf(stderr, "fakepmu: the program exports no sptd_col_sys: its TSC is this "
		        "machine's, the served trace lies where the generator made it\n");
	}
}

/* syscall(2) takes six argument registers whatever the call; so must its
 * stand-in, though the caller passed fewer: not a bug for ASan to report. */
__attribute__((no_sanitize_address))
long syscall(long number, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	libc_lookup();
	if (number == SYS_perf_event_open && gen)
		return fake.perf_event_open((struct perf_event_attr *)a[0], (pid_t)a[1], (int)a[2],
		                            (int)a[3], (unsigned long)a[4]);
	return real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return gen ? fake.mmap(addr, len, prot, flags, fd, off) : real_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	return gen ? fake.munmap(addr, len) : real_munmap(addr, len);
}

int ioctl(int fd, unsigned long req, ...)
{
	unsigned long arg;
	va_list ap;

	va_start(ap, req);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	return gen ? fake.ioctl(fd, req, arg) : real_ioctl(fd, req, arg);
}

int close(int fd)
{
	return gen ? fake.close(fd) : real_close(fd);
}
