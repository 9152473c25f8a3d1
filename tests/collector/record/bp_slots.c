/* bp_slots.c — what the kernel says of a thread's debug registers, for
 * test_bp_blind.sh (issue 28.3), which must tell whether sysptd armed a
 * breakpoint on a thread even where breakpoints never fire (some VMs).
 *
 *   sptd_bp_slots TID     how many more execute breakpoints thread TID can
 *                         take (perf_event_open on TID, cpu -1, until the
 *                         kernel refuses: x86 has 4 debug registers; one
 *                         sysptd holds on TID leaves one fewer)
 *   sptd_bp_slots --fires 1 when a breakpoint on a function of this
 *                         process counts its calls here, else 0
 * Prints the number. */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_TRY 8

static int bp_open(int tid, uint64_t addr)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_X;
	attr.bp_addr = addr;
	attr.bp_len = sizeof(long);
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, 0);
}

__attribute__((noinline)) void sptd_slots_target(void);
__attribute__((noinline)) void sptd_slots_target(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int fds[MAX_TRY], n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: sptd_bp_slots TID | --fires\n");
		return 2;
	}
	if (strcmp(argv[1], "--fires") == 0) {
		uint64_t count = 0;
		int fd = bp_open(0, (uint64_t)(uintptr_t)sptd_slots_target);

		if (fd < 0) {
			printf("0\n");
			return 0;
		}
		for (int i = 0; i < 3; i++)
			sptd_slots_target();
		if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
			count = 0;
		printf("%d\n", count == 3);
		return 0;
	}
	/* any user address: the kernel counts slots, not addresses */
	while (n < MAX_TRY) {
		fds[n] = bp_open(atoi(argv[1]), 0x400000 + 0x10 * (uint64_t)n);
		if (fds[n] < 0)
			break;
		n++;
	}
	if (n < MAX_TRY && errno != ENOSPC) {
		fprintf(stderr, "sptd_bp_slots: perf_event_open on %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("%d\n", n);
	return 0;
}
