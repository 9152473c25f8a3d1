/* event.c — opening perf events from sysptd's description of them, and
 * the ioctls sysptd uses on them, through the sptd_col_sys table.
 *
 * The attr is built here and nowhere else: struct sptd_col_perf_event
 * names the fields sysptd sets, and the flag bits map one to one onto
 * perf_event_attr's bitfields.  aux_action (Linux 6.13) is written by
 * offset, as the u32 after aux_sample_size, so that sysptd built against
 * older headers (__reserved_3 there) still asks for AUX pause. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf-local.h"

/* aux_action (6.13) is the u32 between aux_sample_size and sig_data. */
_Static_assert(offsetof(struct perf_event_attr, sig_data) ==
               offsetof(struct perf_event_attr, aux_sample_size) + 8,
               "perf_event_attr layout: aux_action must follow aux_sample_size");

void sptd_col_perf_attr_set_aux_action(struct perf_event_attr *attr, uint32_t bits)
{
	if (!attr)
		return;
	memcpy((char *)attr + offsetof(struct perf_event_attr, aux_sample_size) + 4, &bits,
	       sizeof(bits));
}

void sptd_col_perf_event_tracepoint(struct sptd_col_perf_event *ev, uint64_t id)
{
	if (!ev)
		return;
	memset(ev, 0, sizeof(*ev));
	ev->type = SPTD_PERF_TYPE_TRACEPOINT;
	ev->config[0] = id;
	ev->period = 1;
}

void sptd_col_perf_event_uprobe(struct sptd_col_perf_event *ev, uint32_t pmu_type,
                                const char *path, uint64_t offset)
{
	if (!ev)
		return;
	memset(ev, 0, sizeof(*ev));
	ev->type = pmu_type;
	ev->config[0] = 0;            /* entry, not a return probe */
	ev->config1_path = path;      /* uprobe_path */
	ev->config[2] = offset;       /* probe_offset */
	ev->period = 1;
}

/* @ev as the kernel's attr. */
static void attr_fill(const struct sptd_col_perf_event *ev, struct perf_event_attr *attr)
{
	uint32_t f = ev->flags;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = ev->type;
	attr->config = ev->config[0];
	attr->config1 = ev->config1_path ? (uint64_t)(uintptr_t)ev->config1_path : ev->config[1];
	attr->config2 = ev->config[2];
	attr->bp_type = ev->bp_type;
	if (f & SPTD_PERF_EV_FREQ) {
		attr->freq = 1;
		attr->sample_freq = ev->period;
	} else {
		attr->sample_period = ev->period;
	}
	attr->sample_type = ev->sample_type;
	attr->read_format = ev->read_format;
	attr->disabled = (f & SPTD_PERF_EV_DISABLED) != 0;
	attr->exclude_kernel = (f & SPTD_PERF_EV_EXCLUDE_KERNEL) != 0;
	attr->exclude_hv = (f & SPTD_PERF_EV_EXCLUDE_HV) != 0;
	attr->exclude_callchain_kernel = (f & SPTD_PERF_EV_EXCLUDE_CALLCHAIN_KERNEL) != 0;
	attr->sample_id_all = (f & SPTD_PERF_EV_SAMPLE_ID_ALL) != 0;
	attr->write_backward = (f & SPTD_PERF_EV_WRITE_BACKWARD) != 0;
	attr->mmap = (f & SPTD_PERF_EV_MMAP) != 0;
	attr->mmap2 = (f & SPTD_PERF_EV_MMAP2) != 0;
	attr->comm = (f & SPTD_PERF_EV_COMM) != 0;
	attr->comm_exec = (f & SPTD_PERF_EV_COMM_EXEC) != 0;
	attr->task = (f & SPTD_PERF_EV_TASK) != 0;
	attr->context_switch = (f & SPTD_PERF_EV_CONTEXT_SWITCH) != 0;
	attr->build_id = (f & SPTD_PERF_EV_BUILD_ID) != 0;
	attr->ksymbol = (f & SPTD_PERF_EV_KSYMBOL) != 0;
	attr->text_poke = (f & SPTD_PERF_EV_TEXT_POKE) != 0;
	if (f & SPTD_PERF_EV_WATERMARK) {
		attr->watermark = 1;
		attr->wakeup_watermark = ev->wakeup;
	} else {
		attr->wakeup_events = ev->wakeup;
	}
	if (f & SPTD_PERF_EV_USE_CLOCKID) {
		attr->use_clockid = 1;
		attr->clockid = ev->clockid;
	}
	attr->sample_max_stack = ev->max_stack;
	attr->sample_regs_user = ev->regs_user;
	attr->sample_stack_user = ev->stack_user;
	if (ev->aux_action)
		sptd_col_perf_attr_set_aux_action(attr, ev->aux_action);
}

void sptd_col_perf_event_breakpoint(struct sptd_col_perf_event *ev, uint32_t bp_type,
                                    uint64_t addr, uint64_t len)
{
	if (!ev)
		return;
	memset(ev, 0, sizeof(*ev));
	ev->type = SPTD_PERF_TYPE_BREAKPOINT;
	ev->bp_type = bp_type;
	ev->config[1] = addr;                        /* bp_addr */
	ev->config[2] = bp_type == SPTD_PERF_BP_X ? sizeof(long) : len; /* bp_len */
	ev->period = 1;
}

int sptd_col_perf_event_open(const struct sptd_col_perf_event *ev, pid_t pid, int cpu,
                             int group_fd)
{
	struct perf_event_attr attr;
	int fd;

	if (!ev)
		return -EINVAL;
	attr_fill(ev, &attr);
	errno = 0;
	fd = sptd_col_sys.perf_event_open(&attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno ? -errno : -EIO;
	return fd;
}

/* One ioctl: 0, or its -errno (-EIO when it set none). */
static int event_ioctl(int fd, unsigned long req, unsigned long arg)
{
	if (fd < 0)
		return -EBADF;
	errno = 0;
	if (sptd_col_sys.ioctl(fd, req, arg) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

int sptd_col_perf_event_enable(int fd)
{
	return event_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

int sptd_col_perf_event_disable(int fd)
{
	return event_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

int sptd_col_perf_event_refresh(int fd, int overflows)
{
	if (overflows <= 0)
		return -EINVAL;
	return event_ioctl(fd, PERF_EVENT_IOC_REFRESH, (unsigned long)overflows);
}

int sptd_col_perf_event_pause_output(int fd, int paused)
{
	return event_ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, paused ? 1 : 0);
}

int sptd_col_perf_event_set_filter(int fd, const char *filter)
{
	if (!filter)
		return -EINVAL;
	return event_ioctl(fd, PERF_EVENT_IOC_SET_FILTER, (unsigned long)(uintptr_t)filter);
}

int sptd_col_perf_pmu_type(const char *name)
{
	char path[256], buf[64], *end;
	unsigned long type;
	ssize_t n;

	if (!name || !name[0] || strchr(name, '/'))
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	n = sptd_col_sys.read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	errno = 0;
	type = strtoul(buf, &end, 10);
	if (end == buf || (*end && *end != '\n') || errno || type > 0x7fffffffu)
		return -EBADMSG;
	return (int)type;
}
