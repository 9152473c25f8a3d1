/* trigger_events.c — every perf event of the triggers: tracepoints (irq,
 * tracepoint, latency) and the uprobe PMU (uprobe), opened per CPU with a
 * small forward ring, optionally as AUX pause siblings of the PT event, and
 * their sample records (TIME | CPU [| RAW]) read back.
 *
 * The one file of the triggers that speaks perf_event_attr and the ring's
 * control page; the kinds ask for events by what they are. */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pt-local.h"
#include "sptd_sched.h"
#include "trigger-kind-local.h"

#define TRIG_RING_PAGES 8      /* rare events: irq, tracepoint, uprobe */
#define TRIG_BUSY_PAGES 64     /* latency: every switch and waking */

/* ---- opening ------------------------------------------------------------------ */

/* A new event slot of @t with its defaults; NULL out of memory. */
static struct sptd_col_trigger_event *new_event(struct sptd_col_trigger *t,
                                                enum sptd_col_trigger_role role, size_t pages)
{
	struct sptd_col_trigger_event *ev;

	if (t->nevents == t->events_cap) {
		int cap = t->events_cap ? t->events_cap * 2 : 16;
		struct sptd_col_trigger_event *more = realloc(t->events, (size_t)cap * sizeof(*more));

		if (!more)
			return NULL;
		t->events = more;
		t->events_cap = cap;
	}
	ev = &t->events[t->nevents++];
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	ev->role = role;
	ev->data_pages = pages;
	return ev;
}

/* Open @attr on @cpu into @ev with its ring, apply @filter, enable.  With
 * AUX pause wanted (@leader >= 0: the PT event of that CPU) the event joins
 * the PT event's group with aux_pause set, so the kernel pauses PT on the
 * CPU where it fired; a kernel that refuses (EINVAL/EOPNOTSUPP: no
 * aux_action before 6.13) gets the plain event and t->aux_refused. */
static int open_event(struct sptd_col_trigger *t, struct perf_event_attr *attr, int cpu,
                      int leader, const char *filter, struct sptd_col_trigger_event *ev)
{
	long page = sysconf(_SC_PAGESIZE);

	attr->size = sizeof(*attr);
	attr->sample_period = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->disabled = 1;
	ev->cpu = cpu;
	ev->has_raw = (attr->sample_type & PERF_SAMPLE_RAW) != 0;
	ev->fd = -1;
	if (leader >= 0 && t->aux_pausing) {
		sptd_col_pt_attr_set_aux_action(attr, SPTD_PT_AUX_PAUSE);
		ev->fd = sptd_col_sys.perf_event_open(attr, -1, cpu, leader, PERF_FLAG_FD_CLOEXEC);
		sptd_col_pt_attr_set_aux_action(attr, 0);
		if (ev->fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP)) {
			t->aux_refused = errno;
			t->aux_pausing = 0;
		} else if (ev->fd < 0) {
			return -errno;
		}
	}
	if (ev->fd < 0)
		ev->fd = sptd_col_sys.perf_event_open(attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0)
		return -errno;
	if (filter && *filter &&
	    sptd_col_sys.ioctl(ev->fd, PERF_EVENT_IOC_SET_FILTER, (unsigned long)filter) < 0)
		return -EINVAL;
	ev->ring_len = (size_t)page * (1 + ev->data_pages);
	ev->ring = sptd_col_sys.mmap(NULL, ev->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, 0);
	if (ev->ring == MAP_FAILED) {
		ev->ring = NULL;
		return -errno;
	}
	return sptd_col_sys.ioctl(ev->fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
}

int sptd_col_trigger_events_tracepoint(struct sptd_col_trigger *t, const char *system,
                                       const char *event, const char *filter,
                                       enum sptd_col_trigger_role role, int flags,
                                       const int *cpus, int ncpus, char *err, size_t errlen)
{
	int id = -1, ret = sptd_sched_event_exists(system, event, &id);
	int busy = (flags & SPTD_TRIG_EV_BUSY) != 0;

	if (ret == 0) {
		snprintf(err, errlen, "no tracepoint %s:%s on this kernel (see /sys/kernel/tracing/available_events)",
		         system, event);
		return -ENOENT;
	}
	if (ret < 0) {
		snprintf(err, errlen, "cannot look up tracepoint %s:%s: %s", system, event, strerror(-ret));
		return ret;
	}
	for (int i = 0; i < ncpus; i++) {
		struct sptd_col_trigger_event *ev = new_event(t, role, busy ? TRIG_BUSY_PAGES : TRIG_RING_PAGES);
		int leader = (flags & SPTD_TRIG_EV_PAUSE) && t->leaders ? t->leaders[i] : -1;
		struct perf_event_attr attr;

		if (!ev)
			return -ENOMEM;
		memset(&attr, 0, sizeof(attr));
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = (uint64_t)id;
		attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
		if (busy) {
			/* every switch: wake the service per half ring, not per event */
			attr.watermark = 1;
			attr.wakeup_watermark = (uint32_t)(TRIG_BUSY_PAGES * sysconf(_SC_PAGESIZE) / 2);
		} else {
			attr.wakeup_events = 1;
		}
		ret = open_event(t, &attr, cpus[i], leader, filter, ev);
		if (ret == -EINVAL && filter && *filter) {
			snprintf(err, errlen, "the kernel rejected filter '%s' for %s:%s (ftrace filter syntax, fields in events/%s/%s/format)",
			         filter, system, event, system, event);
			return ret;
		}
		if (ret < 0) {
			snprintf(err, errlen, "perf_event_open(%s:%s, cpu %d): %s%s", system, event, cpus[i],
			         strerror(-ret), ret == -EACCES ? " (run as root)" : "");
			return ret;
		}
	}
	return 0;
}

int sptd_col_trigger_events_uprobe(struct sptd_col_trigger *t, uint32_t type, const char *path,
                                   const char *symbol, uint64_t offset, const int *cpus,
                                   int ncpus, char *err, size_t errlen)
{
	for (int i = 0; i < ncpus; i++) {
		struct sptd_col_trigger_event *ev = new_event(t, SPTD_TRIG_ROLE_HIT, TRIG_RING_PAGES);
		struct perf_event_attr attr;
		int ret;

		if (!ev)
			return -ENOMEM;
		memset(&attr, 0, sizeof(attr));
		attr.type = type;
		attr.config = 0;                                  /* entry, not retprobe */
		attr.config1 = (uint64_t)(uintptr_t)path;         /* uprobe_path */
		attr.config2 = offset;                            /* probe_offset */
		attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
		attr.wakeup_events = 1;
		ret = open_event(t, &attr, cpus[i], t->leaders ? t->leaders[i] : -1, NULL, ev);
		if (ret < 0) {
			snprintf(err, errlen, "perf_event_open(uprobe %s:%s at offset 0x%" PRIx64 ", cpu %d): %s",
			         path, symbol, offset, cpus[i], strerror(-ret));
			return ret;
		}
	}
	return 0;
}

void sptd_col_trigger_events_close(struct sptd_col_trigger *t)
{
	for (int i = 0; i < t->nevents; i++) {
		if (t->events[i].ring)
			sptd_col_sys.munmap(t->events[i].ring, t->events[i].ring_len);
		if (t->events[i].fd >= 0)
			sptd_col_sys.close(t->events[i].fd);
	}
	t->nevents = 0;
}

/* ---- tracepoint fields ---------------------------------------------------------- */

int sptd_col_trigger_events_field(const char *system, const char *event, const char *name,
                                  int *offset, char *err, size_t errlen)
{
	int size, ret = sptd_sched_event_field(system, event, name, offset, &size);

	if (ret < 0)
		snprintf(err, errlen, "tracepoint %s:%s has no field '%s' on this kernel", system, event, name);
	return ret;
}

int32_t sptd_col_trigger_raw_i32(const unsigned char *raw, uint32_t size, int off)
{
	int32_t v = -1;

	if (off >= 0 && (uint32_t)off + 4 <= size)
		memcpy(&v, raw + off, 4);
	return v;
}

/* ---- reading the rings ------------------------------------------------------------ */

int sptd_col_trigger_events_drain(struct sptd_col_trigger_event *ev,
                                  sptd_col_trigger_sample_fn fn, void *ctx)
{
	struct perf_event_mmap_page *meta = ev->ring;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *data = (unsigned char *)ev->ring + page;
	uint64_t size = (uint64_t)page * ev->data_pages;
	uint64_t head, tail;
	int ret = 0;

	if (!meta)
		return 0;
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail < head && ret >= 0) {
		unsigned char rec[1024];
		struct perf_event_header hdr;

		sptd_col_ring_copy(data, size, tail + sizeof(hdr), sizeof(hdr), &hdr);
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;
		if (hdr.type == PERF_RECORD_SAMPLE && hdr.size <= sizeof(rec) && hdr.size >= 24) {
			const unsigned char *raw = NULL;
			uint64_t time;
			uint32_t cpu_res[2], raw_size = 0;

			sptd_col_ring_copy(data, size, tail + hdr.size, hdr.size, rec);
			/* TIME, CPU, [RAW] in sample_type bit order */
			memcpy(&time, rec + 8, 8);
			memcpy(cpu_res, rec + 16, 8);
			if (ev->has_raw && hdr.size >= 28) {
				memcpy(&raw_size, rec + 24, 4);
				if (28 + (size_t)raw_size <= hdr.size)
					raw = rec + 28;
			}
			ret = fn(ctx, ev, (int64_t)time, (int)cpu_res[0], raw, raw ? raw_size : 0);
		}
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return ret;
}
