/* trigger.c — trigger sources: perf tracepoint events (irq, tracepoint) read
 * from per-CPU rings, and timerfd timers.
 *
 * The kernel freezes ftrace itself where it can (a traceoff event trigger
 * installed by the service); these events tell the service that, and when,
 * a trigger fired, with the CPU and a CLOCK_MONOTONIC timestamp. */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "sptd_sched.h"
#include "trigger-local.h"

#define TRIG_RING_PAGES 8   /* data pages per CPU: hits are rare and small */

/* One perf event of a trigger on one CPU. */
struct trig_event {
	int fd;
	int cpu;
	int is_exit;            /* irq min=: irq_handler_exit */
	void *ring;             /* metadata page + data pages */
	size_t ring_len;
};

struct sptd_col_trigger {
	struct sptd_col_trigger_spec spec;
	struct trig_event *events;
	int nevents;
	int timer_fd;                   /* timer triggers, else -1 */
	int irqs[16], nirqs;            /* irq=NAME resolved; irq=NUM as one */
	int64_t *entry_ts;              /* irq min=: open handler entry per CPU, -1 none */
	int *entry_irq;
	int max_cpu;
};

int sptd_col_cpus_parse(const char *text, int *cpus, int max)
{
	int n = 0;
	const char *p = text;

	if (!text || !cpus || max <= 0)
		return -EINVAL;
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -E2BIG;
			cpus[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n;
}

int sptd_col_cpus_online(int *cpus, int max)
{
	char buf[4096];
	ssize_t len = sptd_col_sys.read_file("/sys/devices/system/cpu/online", buf, sizeof(buf));

	if (len < 0)
		return (int)len;
	return sptd_col_cpus_parse(buf, cpus, max);
}

static int open_tracepoint(int id, int cpu, const char *filter, struct trig_event *ev)
{
	struct perf_event_attr attr;
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	attr.wakeup_events = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.disabled = 1;
	ev->cpu = cpu;
	ev->fd = sptd_col_sys.perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0)
		return -errno;
	if (filter && *filter &&
	    sptd_col_sys.ioctl(ev->fd, PERF_EVENT_IOC_SET_FILTER, (unsigned long)filter) < 0)
		return -EINVAL;
	ev->ring_len = (size_t)page * (1 + TRIG_RING_PAGES);
	ev->ring = sptd_col_sys.mmap(NULL, ev->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, 0);
	if (ev->ring == MAP_FAILED) {
		ev->ring = NULL;
		return -errno;
	}
	ret = sptd_col_sys.ioctl(ev->fd, PERF_EVENT_IOC_ENABLE, 0);
	return ret < 0 ? -errno : 0;
}

/* The filter for irq=NUM / irq=NAME on irq_handler_entry/exit. */
static void irq_filter(const struct sptd_col_trigger *t, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < t->nirqs && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%sirq==%d", i ? " || " : "", t->irqs[i]);
}

static int arm_tracepoint(struct sptd_col_trigger *t, const char *system, const char *event,
                          const char *filter, int is_exit, const int *cpus, int ncpus,
                          char *err, size_t errlen)
{
	int id = -1, ret = sptd_sched_event_exists(system, event, &id);

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
		struct trig_event *ev = &t->events[t->nevents];

		memset(ev, 0, sizeof(*ev));
		ev->fd = -1;
		ev->is_exit = is_exit;
		t->nevents++;
		ret = open_tracepoint(id, cpus[i], filter, ev);
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

int sptd_col_trigger_create(const struct sptd_col_trigger_spec *spec, const int *cpus, int ncpus,
                            struct sptd_col_trigger **out, char *err, size_t errlen)
{
	struct sptd_col_trigger *t;
	char filter[512];
	int ret = 0;

	if (!spec || !cpus || ncpus <= 0 || !out || !err)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->spec = *spec;
	t->timer_fd = -1;
	for (int i = 0; i < ncpus; i++)
		if (cpus[i] > t->max_cpu)
			t->max_cpu = cpus[i];
	t->events = calloc((size_t)ncpus * 2, sizeof(*t->events));
	if (!t->events) {
		ret = -ENOMEM;
		goto fail;
	}
	switch (spec->kind) {
	case SPTD_TRIG_IRQ:
		if (spec->irq_name[0]) {
			ret = sptd_col_irq_lookup("/proc/interrupts", spec->irq_name, t->irqs, 16);
			if (ret < 0) {
				snprintf(err, errlen, "no IRQ named '%s' in /proc/interrupts (use a name from its last column, or irq=NUMBER)",
				         spec->irq_name);
				goto fail;
			}
			t->nirqs = ret;
		} else if (spec->irq >= 0) {
			t->irqs[0] = spec->irq;
			t->nirqs = 1;
		}
		irq_filter(t, filter, sizeof(filter));
		ret = arm_tracepoint(t, "irq", "irq_handler_entry", filter, 0, cpus, ncpus, err, errlen);
		if (ret >= 0 && spec->min_ns > 0) {
			ret = arm_tracepoint(t, "irq", "irq_handler_exit", filter, 1, cpus, ncpus, err, errlen);
			t->entry_ts = malloc(sizeof(*t->entry_ts) * (size_t)(t->max_cpu + 1));
			t->entry_irq = malloc(sizeof(*t->entry_irq) * (size_t)(t->max_cpu + 1));
			if (!t->entry_ts || !t->entry_irq)
				ret = -ENOMEM;
			else
				for (int c = 0; c <= t->max_cpu; c++)
					t->entry_ts[c] = -1;
		}
		break;
	case SPTD_TRIG_TRACEPOINT:
		ret = arm_tracepoint(t, spec->system, spec->event, spec->filter, 0, cpus, ncpus, err, errlen);
		break;
	case SPTD_TRIG_TIMER: {
		struct itimerspec its = {
			.it_interval = { spec->period_ns / 1000000000, spec->period_ns % 1000000000 },
			.it_value = { spec->period_ns / 1000000000, spec->period_ns % 1000000000 },
		};

		t->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (t->timer_fd < 0 || timerfd_settime(t->timer_fd, 0, &its, NULL) < 0) {
			ret = -errno;
			snprintf(err, errlen, "timerfd: %s", strerror(errno));
		}
		break;
	}
	case SPTD_TRIG_LATENCY:
	case SPTD_TRIG_UPROBE:
		snprintf(err, errlen, "trigger '%s' is not supported by this version of sysptd (use irq, tracepoint or timer)",
		         spec->text);
		ret = -EOPNOTSUPP;
		break;
	default:
		snprintf(err, errlen, "unknown trigger kind");
		ret = -EINVAL;
	}
	if (ret < 0)
		goto fail;
	*out = t;
	return 0;
fail:
	sptd_col_trigger_destroy(t);
	return ret;
}

int sptd_col_trigger_fds(const struct sptd_col_trigger *t, int *fds, int max)
{
	int n = 0;

	if (!t || !fds)
		return -EINVAL;
	if (t->timer_fd >= 0 && n < max)
		fds[n++] = t->timer_fd;
	for (int i = 0; i < t->nevents && n < max; i++)
		if (t->events[i].fd >= 0)
			fds[n++] = t->events[i].fd;
	return n;
}

/* A record of interest from a trigger ring. */
struct hit {
	int64_t ts;
	int cpu;
	int irq;           /* from the raw tracepoint data when the event has it */
	char name[64];     /* irq_handler_entry name */
};

/* Raw irq_handler_entry: common header (8 bytes), int irq, __data_loc name.
 * irq_handler_exit: header, int irq, int ret. */
static void parse_irq_raw(const unsigned char *raw, uint32_t size, struct hit *h, int entry)
{
	int32_t irq;

	if (size < 12)
		return;
	memcpy(&irq, raw + 8, 4);
	h->irq = irq;
	if (entry && size >= 16) {
		uint32_t loc, off, len;

		memcpy(&loc, raw + 12, 4);
		off = loc & 0xffff;
		len = loc >> 16;
		if (off < size && len && off + len <= size) {
			size_t n = len < sizeof(h->name) ? len : sizeof(h->name) - 1;

			memcpy(h->name, raw + off, n);
			h->name[n] = '\0';
		}
	}
}

/* Read every new record of @ev's ring, calling back for samples. */
static int drain_ring(struct sptd_col_trigger *t, struct trig_event *ev, int64_t not_before,
                      struct sptd_col_fire *fire, int *fired)
{
	struct perf_event_mmap_page *meta = ev->ring;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *data = (unsigned char *)ev->ring + page;
	uint64_t size = (uint64_t)page * TRIG_RING_PAGES;
	uint64_t head, tail;

	if (!meta)
		return 0;
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail < head) {
		unsigned char rec[1024];
		struct perf_event_header hdr;

		sptd_col_ring_copy(data, size, tail + sizeof(hdr), sizeof(hdr), &hdr);
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;
		if (hdr.type == PERF_RECORD_SAMPLE && hdr.size <= sizeof(rec)) {
			struct hit h = { .irq = -1 };
			uint64_t time;
			uint32_t cpu_res[2], raw_size;

			sptd_col_ring_copy(data, size, tail + hdr.size, hdr.size, rec);
			/* TIME, CPU, RAW in that order (sample_type bit order) */
			memcpy(&time, rec + 8, 8);
			memcpy(cpu_res, rec + 16, 8);
			memcpy(&raw_size, rec + 24, 4);
			h.ts = (int64_t)time;
			h.cpu = (int)cpu_res[0];
			if (28 + (size_t)raw_size <= hdr.size && t->spec.kind == SPTD_TRIG_IRQ)
				parse_irq_raw(rec + 28, raw_size, &h, !ev->is_exit);
			if (t->spec.kind == SPTD_TRIG_IRQ && t->spec.min_ns > 0) {
				/* fire at exit when entry->exit on this CPU took long enough */
				if (h.cpu >= 0 && h.cpu <= t->max_cpu) {
					if (!ev->is_exit) {
						t->entry_ts[h.cpu] = h.ts;
						t->entry_irq[h.cpu] = h.irq;
					} else if (t->entry_ts[h.cpu] >= 0) {
						int64_t took = h.ts - t->entry_ts[h.cpu];

						t->entry_ts[h.cpu] = -1;
						if (took >= t->spec.min_ns && h.ts >= not_before &&
						    (!*fired || h.ts < fire->ts)) {
							*fired = 1;
							fire->ts = h.ts;
							fire->cpu = h.cpu;
							snprintf(fire->detail, sizeof(fire->detail),
							         "irq %d handler took %" PRId64 " ns", h.irq, took);
						}
					}
				}
			} else if (h.ts >= not_before && (!*fired || h.ts < fire->ts)) {
				*fired = 1;
				fire->ts = h.ts;
				fire->cpu = h.cpu;
				if (t->spec.kind == SPTD_TRIG_IRQ)
					snprintf(fire->detail, sizeof(fire->detail), "irq %d %s", h.irq, h.name);
				else
					snprintf(fire->detail, sizeof(fire->detail), "%s:%s",
					         t->spec.system, t->spec.event);
			}
		}
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return 0;
}

int sptd_col_trigger_check(struct sptd_col_trigger *t, int64_t not_before,
                           struct sptd_col_fire *fire)
{
	int fired = 0;

	if (!t || !fire)
		return -EINVAL;
	memset(fire, 0, sizeof(*fire));
	fire->spec = &t->spec;
	fire->cpu = -1;
	if (t->timer_fd >= 0) {
		uint64_t expirations;
		struct timespec now;

		if (read(t->timer_fd, &expirations, sizeof(expirations)) == (ssize_t)sizeof(expirations) &&
		    clock_gettime(CLOCK_MONOTONIC, &now) == 0 &&
		    (int64_t)now.tv_sec * 1000000000 + now.tv_nsec >= not_before) {
			fired = 1;
			fire->ts = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
			snprintf(fire->detail, sizeof(fire->detail), "timer every %" PRId64 " ns",
			         t->spec.period_ns);
		}
	}
	for (int i = 0; i < t->nevents; i++)
		drain_ring(t, &t->events[i], not_before, fire, &fired);
	return fired;
}

void sptd_col_trigger_drain(struct sptd_col_trigger *t)
{
	struct sptd_col_fire ignored;

	if (t)
		sptd_col_trigger_check(t, INT64_MAX, &ignored);
}

void sptd_col_trigger_destroy(struct sptd_col_trigger *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nevents; i++) {
		if (t->events[i].ring)
			sptd_col_sys.munmap(t->events[i].ring, t->events[i].ring_len);
		if (t->events[i].fd >= 0)
			sptd_col_sys.close(t->events[i].fd);
	}
	if (t->timer_fd >= 0)
		close(t->timer_fd);
	free(t->events);
	free(t->entry_ts);
	free(t->entry_irq);
	free(t);
}
