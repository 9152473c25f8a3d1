/* abi.c — the perf ABI under sysptd's names: every SPTD_PERF_* value of
 * sptd_col_perf.h is asserted here against linux/perf_event.h at build
 * time, so no other folder needs the kernel header; and the decoding of a
 * perf_event_attr as a file stores it (perf.data's attrs section).
 *
 * perf's own record types (>= 64) and the BUILD_ID feature's misc bit are
 * perf tool ABI, not the kernel's: they have no kernel value to assert. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <string.h>

#include "perf-local.h"

#define SAME(ours, kernels) _Static_assert((ours) == (kernels), #ours " != " #kernels)

SAME(SPTD_PERF_RECORD_MMAP, PERF_RECORD_MMAP);
SAME(SPTD_PERF_RECORD_LOST, PERF_RECORD_LOST);
SAME(SPTD_PERF_RECORD_COMM, PERF_RECORD_COMM);
SAME(SPTD_PERF_RECORD_EXIT, PERF_RECORD_EXIT);
SAME(SPTD_PERF_RECORD_THROTTLE, PERF_RECORD_THROTTLE);
SAME(SPTD_PERF_RECORD_UNTHROTTLE, PERF_RECORD_UNTHROTTLE);
SAME(SPTD_PERF_RECORD_FORK, PERF_RECORD_FORK);
SAME(SPTD_PERF_RECORD_READ, PERF_RECORD_READ);
SAME(SPTD_PERF_RECORD_SAMPLE, PERF_RECORD_SAMPLE);
SAME(SPTD_PERF_RECORD_MMAP2, PERF_RECORD_MMAP2);
SAME(SPTD_PERF_RECORD_AUX, PERF_RECORD_AUX);
SAME(SPTD_PERF_RECORD_ITRACE_START, PERF_RECORD_ITRACE_START);
SAME(SPTD_PERF_RECORD_LOST_SAMPLES, PERF_RECORD_LOST_SAMPLES);
SAME(SPTD_PERF_RECORD_SWITCH, PERF_RECORD_SWITCH);
SAME(SPTD_PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_SWITCH_CPU_WIDE);
_Static_assert(PERF_RECORD_MAX <= SPTD_PERF_RECORD_USER_START,
               "kernel record types run into perf's own");

SAME(SPTD_PERF_SAMPLE_IP, PERF_SAMPLE_IP);
SAME(SPTD_PERF_SAMPLE_TID, PERF_SAMPLE_TID);
SAME(SPTD_PERF_SAMPLE_TIME, PERF_SAMPLE_TIME);
SAME(SPTD_PERF_SAMPLE_ADDR, PERF_SAMPLE_ADDR);
SAME(SPTD_PERF_SAMPLE_READ, PERF_SAMPLE_READ);
SAME(SPTD_PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_CALLCHAIN);
SAME(SPTD_PERF_SAMPLE_ID, PERF_SAMPLE_ID);
SAME(SPTD_PERF_SAMPLE_CPU, PERF_SAMPLE_CPU);
SAME(SPTD_PERF_SAMPLE_PERIOD, PERF_SAMPLE_PERIOD);
SAME(SPTD_PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_STREAM_ID);
SAME(SPTD_PERF_SAMPLE_RAW, PERF_SAMPLE_RAW);
SAME(SPTD_PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IDENTIFIER);

SAME(SPTD_PERF_FORMAT_TOTAL_TIME_ENABLED, PERF_FORMAT_TOTAL_TIME_ENABLED);
SAME(SPTD_PERF_FORMAT_TOTAL_TIME_RUNNING, PERF_FORMAT_TOTAL_TIME_RUNNING);
SAME(SPTD_PERF_FORMAT_ID, PERF_FORMAT_ID);
SAME(SPTD_PERF_FORMAT_GROUP, PERF_FORMAT_GROUP);
SAME(SPTD_PERF_FORMAT_LOST, PERF_FORMAT_LOST);

SAME(SPTD_PERF_MISC_CPUMODE_MASK, PERF_RECORD_MISC_CPUMODE_MASK);
SAME(SPTD_PERF_MISC_KERNEL, PERF_RECORD_MISC_KERNEL);
SAME(SPTD_PERF_MISC_USER, PERF_RECORD_MISC_USER);
SAME(SPTD_PERF_MISC_MMAP_DATA, PERF_RECORD_MISC_MMAP_DATA);
SAME(SPTD_PERF_MISC_COMM_EXEC, PERF_RECORD_MISC_COMM_EXEC);
SAME(SPTD_PERF_MISC_SWITCH_OUT, PERF_RECORD_MISC_SWITCH_OUT);
SAME(SPTD_PERF_MISC_SWITCH_OUT_PREEMPT, PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
SAME(SPTD_PERF_MISC_MMAP_BUILD_ID, PERF_RECORD_MISC_MMAP_BUILD_ID);

SAME(SPTD_PERF_AUX_FLAG_TRUNCATED, PERF_AUX_FLAG_TRUNCATED);
SAME(SPTD_PERF_AUX_FLAG_OVERWRITE, PERF_AUX_FLAG_OVERWRITE);
SAME(SPTD_PERF_AUX_FLAG_PARTIAL, PERF_AUX_FLAG_PARTIAL);
SAME(SPTD_PERF_AUX_FLAG_COLLISION, PERF_AUX_FLAG_COLLISION);

SAME(SPTD_PERF_CONTEXT_HV, (uint64_t)PERF_CONTEXT_HV);
SAME(SPTD_PERF_CONTEXT_KERNEL, (uint64_t)PERF_CONTEXT_KERNEL);
SAME(SPTD_PERF_CONTEXT_USER, (uint64_t)PERF_CONTEXT_USER);
SAME(SPTD_PERF_CONTEXT_GUEST, (uint64_t)PERF_CONTEXT_GUEST);
SAME(SPTD_PERF_CONTEXT_GUEST_KERNEL, (uint64_t)PERF_CONTEXT_GUEST_KERNEL);
SAME(SPTD_PERF_CONTEXT_GUEST_USER, (uint64_t)PERF_CONTEXT_GUEST_USER);
SAME(SPTD_PERF_CONTEXT_MAX, (uint64_t)PERF_CONTEXT_MAX);

SAME(SPTD_PERF_TYPE_HARDWARE, PERF_TYPE_HARDWARE);
SAME(SPTD_PERF_TYPE_SOFTWARE, PERF_TYPE_SOFTWARE);
SAME(SPTD_PERF_TYPE_TRACEPOINT, PERF_TYPE_TRACEPOINT);
SAME(SPTD_PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_CPU_CYCLES);
SAME(SPTD_PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_CPU_CLOCK);
SAME(SPTD_PERF_COUNT_SW_DUMMY, PERF_COUNT_SW_DUMMY);

/* The header and the attr fields a file's attr is read from. */
_Static_assert(sizeof(struct perf_event_header) == 8, "perf_event_header is 8 bytes");
_Static_assert(offsetof(struct perf_event_attr, type) == 0, "attr.type at 0");
_Static_assert(offsetof(struct perf_event_attr, config) == 8, "attr.config at 8");
_Static_assert(offsetof(struct perf_event_attr, sample_type) == 24, "attr.sample_type at 24");
_Static_assert(offsetof(struct perf_event_attr, read_format) == 32, "attr.read_format at 32");
_Static_assert(PERF_ATTR_SIZE_VER0 == 64, "first attr version is 64 bytes");

/* The u64 of flag bits after read_format, and sample_id_all's bit in it:
 * perf_event_attr's bitfields in declaration order (disabled is bit 0). */
#define ATTR_FLAGS_OFFSET 40
#define ATTR_SAMPLE_ID_ALL_BIT 18

int sptd_col_perf_attr_decode(const void *buf, size_t len, struct sptd_col_perf_attr *attr)
{
	const unsigned char *p = buf;

	if (!buf || !attr)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	if (len < PERF_ATTR_SIZE_VER0)
		return -EBADMSG;
	memcpy(&attr->type, p, sizeof(attr->type));
	attr->config = sptd_col_perf_u64(p + 8, 0);
	attr->layout.sample_type = sptd_col_perf_u64(p + 24, 0);
	attr->layout.read_format = sptd_col_perf_u64(p + 32, 0);
	attr->layout.sample_id_all =
		(int)((sptd_col_perf_u64(p + ATTR_FLAGS_OFFSET, 0) >> ATTR_SAMPLE_ID_ALL_BIT) & 1);
	return 0;
}
