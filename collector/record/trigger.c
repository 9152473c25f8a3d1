/* trigger.c — trigger sources: perf events read from per-CPU rings
 * (tracepoints for irq, tracepoint and latency; the uprobe PMU for uprobe)
 * and timerfd timers.
 *
 * Divisions: CPU lists · opening events · arming each kind · reading the
 * rings (records -> hits) · deciding (hits -> a fire) · lifetime.
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

#include "pt-local.h"
#include "sptd_dec.h"
#include "sptd_sched.h"
#include "trigger-local.h"

#define TRIG_RING_PAGES 8      /* rare events: irq, tracepoint, uprobe */
#define TRIG_BUSY_PAGES 64     /* latency: every switch and waking */

/* What one perf event reports. */
enum trig_role {
	ROLE_HIT,            /* any record is a hit (tracepoint, uprobe, irq entry) */
	ROLE_IRQ_EXIT,       /* irq min=: closes an entry */
	ROLE_WAKING,         /* latency: sched_waking */
	ROLE_SWITCH,         /* latency: sched_switch */
};

/* One perf event of a trigger on one CPU. */
struct trig_event {
	int fd;
	int cpu;
	enum trig_role role;
	int has_raw;            /* PERF_SAMPLE_RAW follows TIME and CPU */
	void *ring;             /* metadata page + data pages */
	size_t ring_len;
	size_t data_pages;
};

/* A record of interest from a trigger ring. */
struct hit {
	int64_t ts;
	int cpu;
	enum trig_role role;
	int irq;           /* irq events */
	int pid;           /* waking: the woken task; switch: next task */
	int prev_pid;      /* switch: the task switched out */
	char name[64];     /* irq_handler_entry name */
};

/* latency=: when each woken task was woken, until it runs. */
struct pending_wake {
	int pid;           /* 0: empty slot */
	int64_t ts;
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
	/* raw field offsets (tracepoint formats) */
	int off_irq, off_irq_name;      /* irq_handler_entry/exit: irq, __data_loc name */
	int off_wake_pid;               /* sched_waking: pid */
	int off_next_pid, off_prev_pid; /* sched_switch */
	char uprobe_path[512];          /* kept alive for attr.config1 */
	struct hit *hits;               /* latency: one drain's hits, sorted */
	size_t nhits, hits_cap;
	struct pending_wake *wakes;     /* latency: open-addressed by pid */
	size_t nwake_slots;             /* power of two */
	const int *leaders;             /* AUX pause: PT event fd per CPU index, NULL none */
	int aux_pausing;                /* 1: hit events pause PT (group siblings) */
	int aux_refused;                /* errno the kernel refused AUX pause with, 0 none */
};

/* ---- opening events ---------------------------------------------------------- */

/* Open @attr on @cpu into @ev with its ring, apply @filter, enable.  With
 * AUX pause wanted (@leader >= 0: the PT event of that CPU) the event joins
 * the PT event's group with aux_pause set, so the kernel pauses PT on the
 * CPU where it fired; a kernel that refuses (EINVAL/EOPNOTSUPP: no
 * aux_action before 6.13) gets the plain event and t->aux_refused. */
static int open_event(struct sptd_col_trigger *t, struct perf_event_attr *attr, int cpu,
                      int leader, const char *filter, struct trig_event *ev)
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

/* A new event slot with its defaults. */
static struct trig_event *new_event(struct sptd_col_trigger *t, enum trig_role role, size_t pages)
{
	struct trig_event *ev = &t->events[t->nevents++];

	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	ev->role = role;
	ev->data_pages = pages;
	return ev;
}

static int arm_tracepoint(struct sptd_col_trigger *t, const char *system, const char *event,
                          const char *filter, enum trig_role role, const int *cpus, int ncpus,
                          char *err, size_t errlen)
{
	int id = -1, ret = sptd_sched_event_exists(system, event, &id);
	int busy = role == ROLE_WAKING || role == ROLE_SWITCH;

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
		struct trig_event *ev = new_event(t, role, busy ? TRIG_BUSY_PAGES : TRIG_RING_PAGES);
		struct perf_event_attr attr;

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
		ret = open_event(t, &attr, cpus[i], role == ROLE_HIT && t->leaders ? t->leaders[i] : -1,
		                 filter, ev);
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

static int field(const char *system, const char *event, const char *name, int *offset,
                 char *err, size_t errlen)
{
	int size, ret = sptd_sched_event_field(system, event, name, offset, &size);

	if (ret < 0)
		snprintf(err, errlen, "tracepoint %s:%s has no field '%s' on this kernel", system, event, name);
	return ret;
}

/* ---- arming each kind --------------------------------------------------------- */

/* The filter for irq=NUM / irq=NAME on irq_handler_entry/exit. */
static void irq_filter(const struct sptd_col_trigger *t, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < t->nirqs && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%sirq==%d", i ? " || " : "", t->irqs[i]);
}

static int arm_irq(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err, size_t errlen)
{
	const struct sptd_col_trigger_spec *spec = &t->spec;
	char filter[512];
	int ret;

	if (spec->irq_name[0]) {
		ret = sptd_col_irq_lookup("/proc/interrupts", spec->irq_name, t->irqs, 16);
		if (ret < 0) {
			snprintf(err, errlen, "no IRQ named '%s' in /proc/interrupts (use a name from its last column, or irq=NUMBER)",
			         spec->irq_name);
			return ret;
		}
		t->nirqs = ret;
	} else if (spec->irq >= 0) {
		t->irqs[0] = spec->irq;
		t->nirqs = 1;
	}
	if (field("irq", "irq_handler_entry", "irq", &t->off_irq, err, errlen) < 0 ||
	    field("irq", "irq_handler_entry", "name", &t->off_irq_name, err, errlen) < 0)
		return -ENOENT;
	irq_filter(t, filter, sizeof(filter));
	ret = arm_tracepoint(t, "irq", "irq_handler_entry", filter, ROLE_HIT, cpus, ncpus, err, errlen);
	if (ret < 0 || spec->min_ns <= 0)
		return ret;
	ret = arm_tracepoint(t, "irq", "irq_handler_exit", filter, ROLE_IRQ_EXIT, cpus, ncpus, err, errlen);
	t->entry_ts = malloc(sizeof(*t->entry_ts) * (size_t)(t->max_cpu + 1));
	t->entry_irq = malloc(sizeof(*t->entry_irq) * (size_t)(t->max_cpu + 1));
	if (!t->entry_ts || !t->entry_irq)
		return -ENOMEM;
	for (int c = 0; c <= t->max_cpu; c++)
		t->entry_ts[c] = -1;
	return ret;
}

static int arm_latency(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err, size_t errlen)
{
	int ret;

	if (field("sched", "sched_waking", "pid", &t->off_wake_pid, err, errlen) < 0 ||
	    field("sched", "sched_switch", "next_pid", &t->off_next_pid, err, errlen) < 0 ||
	    field("sched", "sched_switch", "prev_pid", &t->off_prev_pid, err, errlen) < 0)
		return -ENOENT;
	t->nwake_slots = 4096;
	t->wakes = calloc(t->nwake_slots, sizeof(*t->wakes));
	if (!t->wakes)
		return -ENOMEM;
	ret = arm_tracepoint(t, "sched", "sched_waking", NULL, ROLE_WAKING, cpus, ncpus, err, errlen);
	if (ret >= 0)
		ret = arm_tracepoint(t, "sched", "sched_switch", NULL, ROLE_SWITCH, cpus, ncpus, err, errlen);
	return ret;
}

/* uprobe=PATH:SYMBOL through the uprobe PMU: the kernel places the probe by
 * file offset, which the ELF's symbols and program headers give. */
static int arm_uprobe(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err, size_t errlen)
{
	const struct sptd_col_trigger_spec *spec = &t->spec;
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	uint64_t offset = 0;
	char buf[64];
	int type, ret;

	if (sptd_col_sys.read_file("/sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf)) < 0) {
		snprintf(err, errlen, "this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)");
		return -EOPNOTSUPP;
	}
	type = atoi(buf);
	ret = sptd_dec_symfile_load_elf(spec->path, &sf);
	if (ret < 0) {
		snprintf(err, errlen, "cannot read ELF symbols of %s: %s", spec->path,
		         ret == -ENOENT ? "no such file" : ret == -EBADMSG ? "not an ELF file" : strerror(-ret));
		return ret == -EBADMSG ? -EINVAL : ret;
	}
	ret = sptd_dec_symfile_find(sf, spec->symbol, &sym);
	if (ret == 0)
		ret = sptd_dec_symfile_offset(sf, sym.addr, &offset);
	sptd_dec_symfile_destroy(sf);
	if (ret < 0) {
		snprintf(err, errlen, ret == -ENOTUNIQ ? "several functions named '%s' in %s" :
		         "no function '%s' in the symbols of %s (stripped? see nm -D)", spec->symbol, spec->path);
		return ret == -ENOTUNIQ ? -EINVAL : -ENOENT;
	}
	snprintf(t->uprobe_path, sizeof(t->uprobe_path), "%s", spec->path);
	for (int i = 0; i < ncpus; i++) {
		struct trig_event *ev = new_event(t, ROLE_HIT, TRIG_RING_PAGES);
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.type = (uint32_t)type;
		attr.config = 0;                                  /* entry, not retprobe */
		attr.config1 = (uint64_t)(uintptr_t)t->uprobe_path; /* uprobe_path */
		attr.config2 = offset;                             /* probe_offset */
		attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
		attr.wakeup_events = 1;
		ret = open_event(t, &attr, cpus[i], t->leaders ? t->leaders[i] : -1, NULL, ev);
		if (ret < 0) {
			snprintf(err, errlen, "perf_event_open(uprobe %s:%s at offset 0x%" PRIx64 ", cpu %d): %s",
			         spec->path, spec->symbol, offset, cpus[i], strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int sptd_col_trigger_create(const struct sptd_col_trigger_spec *spec, const int *cpus, int ncpus,
                            struct sptd_col_trigger **out, char *err, size_t errlen)
{
	return sptd_col_trigger_create_aux(spec, cpus, ncpus, NULL, out, err, errlen);
}

int sptd_col_trigger_create_aux(const struct sptd_col_trigger_spec *spec, const int *cpus,
                                int ncpus, const int *pt_fds, struct sptd_col_trigger **out,
                                char *err, size_t errlen)
{
	struct sptd_col_trigger *t;
	int ret = 0;

	if (!spec || !cpus || ncpus <= 0 || !out || !err)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->spec = *spec;
	/* each hit fires: irq without min=, tracepoint, uprobe (irq min= and
	 * latency decide later, so a kernel pause at the event would be wrong) */
	if (pt_fds && ((spec->kind == SPTD_TRIG_IRQ && spec->min_ns <= 0) ||
	               spec->kind == SPTD_TRIG_TRACEPOINT || spec->kind == SPTD_TRIG_UPROBE)) {
		t->leaders = pt_fds;
		t->aux_pausing = 1;
	}
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
		ret = arm_irq(t, cpus, ncpus, err, errlen);
		break;
	case SPTD_TRIG_TRACEPOINT:
		ret = arm_tracepoint(t, spec->system, spec->event, spec->filter, ROLE_HIT, cpus, ncpus,
		                     err, errlen);
		break;
	case SPTD_TRIG_LATENCY:
		ret = arm_latency(t, cpus, ncpus, err, errlen);
		break;
	case SPTD_TRIG_UPROBE:
		ret = arm_uprobe(t, cpus, ncpus, err, errlen);
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
	default:
		snprintf(err, errlen, "unknown trigger kind");
		ret = -EINVAL;
	}
	if (ret < 0)
		goto fail;
	t->leaders = NULL;   /* borrowed for the opening only */
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

/* ---- reading the rings --------------------------------------------------------- */

static int32_t raw_i32(const unsigned char *raw, uint32_t size, int off)
{
	int32_t v = -1;

	if (off >= 0 && (uint32_t)off + 4 <= size)
		memcpy(&v, raw + off, 4);
	return v;
}

/* Fill the event-specific parts of @h from the tracepoint's raw record. */
static void parse_raw(const struct sptd_col_trigger *t, const unsigned char *raw, uint32_t size,
                      struct hit *h)
{
	switch (h->role) {
	case ROLE_HIT:
		if (t->spec.kind != SPTD_TRIG_IRQ)
			return;
		h->irq = raw_i32(raw, size, t->off_irq);
		{
			uint32_t loc = (uint32_t)raw_i32(raw, size, t->off_irq_name);
			uint32_t off = loc & 0xffff, len = loc >> 16;

			if (off < size && len && off + len <= size) {
				size_t n = len < sizeof(h->name) ? len : sizeof(h->name) - 1;

				memcpy(h->name, raw + off, n);
				h->name[n] = '\0';
			}
		}
		return;
	case ROLE_IRQ_EXIT:
		h->irq = raw_i32(raw, size, t->off_irq);
		return;
	case ROLE_WAKING:
		h->pid = raw_i32(raw, size, t->off_wake_pid);
		return;
	case ROLE_SWITCH:
		h->pid = raw_i32(raw, size, t->off_next_pid);
		h->prev_pid = raw_i32(raw, size, t->off_prev_pid);
		return;
	}
}

static int add_hit(struct sptd_col_trigger *t, const struct hit *h)
{
	if (t->nhits == t->hits_cap) {
		size_t cap = t->hits_cap ? t->hits_cap * 2 : 1024;
		struct hit *more = realloc(t->hits, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		t->hits = more;
		t->hits_cap = cap;
	}
	t->hits[t->nhits++] = *h;
	return 0;
}

/* Every new sample record of @ev's ring becomes a hit. */
static int drain_ring(struct sptd_col_trigger *t, struct trig_event *ev)
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
			struct hit h = { .irq = -1, .pid = -1, .prev_pid = -1, .role = ev->role };
			uint64_t time;
			uint32_t cpu_res[2], raw_size;

			sptd_col_ring_copy(data, size, tail + hdr.size, hdr.size, rec);
			/* TIME, CPU, [RAW] in sample_type bit order */
			memcpy(&time, rec + 8, 8);
			memcpy(cpu_res, rec + 16, 8);
			h.ts = (int64_t)time;
			h.cpu = (int)cpu_res[0];
			if (ev->has_raw && hdr.size >= 28) {
				memcpy(&raw_size, rec + 24, 4);
				if (28 + (size_t)raw_size <= hdr.size)
					parse_raw(t, rec + 28, raw_size, &h);
			}
			ret = add_hit(t, &h);
		}
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return ret;
}

/* ---- deciding ------------------------------------------------------------------ */

static int cmp_hits(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static struct pending_wake *wake_slot(struct sptd_col_trigger *t, int pid, int insert)
{
	size_t mask = t->nwake_slots - 1, s = ((uint32_t)pid * 2654435761u) & mask;

	for (size_t probes = 0; probes < t->nwake_slots; probes++, s = (s + 1) & mask) {
		if (t->wakes[s].pid == pid)
			return &t->wakes[s];
		if (t->wakes[s].pid == 0)
			return insert ? &t->wakes[s] : NULL;
	}
	return NULL; /* full: forget this wakeup rather than grow without bound */
}

static void wake_forget(struct sptd_col_trigger *t, struct pending_wake *w)
{
	size_t mask = t->nwake_slots - 1, s = (size_t)(w - t->wakes);

	/* backward-shift deletion keeps probe chains intact */
	w->pid = 0;
	for (size_t n = (s + 1) & mask; t->wakes[n].pid; n = (n + 1) & mask) {
		struct pending_wake moved = t->wakes[n];

		t->wakes[n].pid = 0;
		*wake_slot(t, moved.pid, 1) = moved;
	}
}

static void fire_at(struct sptd_col_fire *fire, int *fired, const struct hit *h, int64_t not_before)
{
	if (h->ts < not_before || (*fired && h->ts >= fire->ts))
		return;
	*fired = 1;
	fire->ts = h->ts;
	fire->cpu = h->cpu;
}

/* Walk this drain's hits in time order and pick the earliest that fires. */
static void decide(struct sptd_col_trigger *t, int64_t not_before, struct sptd_col_fire *fire,
                   int *fired)
{
	const struct sptd_col_trigger_spec *spec = &t->spec;

	qsort(t->hits, t->nhits, sizeof(*t->hits), cmp_hits);
	for (size_t i = 0; i < t->nhits; i++) {
		const struct hit *h = &t->hits[i];
		int64_t before = *fired ? fire->ts : INT64_MAX;

		switch (spec->kind) {
		case SPTD_TRIG_IRQ:
			if (spec->min_ns <= 0) {
				fire_at(fire, fired, h, not_before);
				if (*fired && fire->ts != before)
					snprintf(fire->detail, sizeof(fire->detail), "irq %d %s", h->irq, h->name);
			} else if (h->cpu >= 0 && h->cpu <= t->max_cpu) {
				if (h->role == ROLE_HIT) {
					t->entry_ts[h->cpu] = h->ts;
					t->entry_irq[h->cpu] = h->irq;
				} else if (t->entry_ts[h->cpu] >= 0) {
					int64_t took = h->ts - t->entry_ts[h->cpu];

					t->entry_ts[h->cpu] = -1;
					if (took >= spec->min_ns) {
						fire_at(fire, fired, h, not_before);
						if (*fired && fire->ts != before)
							snprintf(fire->detail, sizeof(fire->detail),
							         "irq %d handler took %" PRId64 " ns", h->irq, took);
					}
				}
			}
			break;
		case SPTD_TRIG_LATENCY:
			if (h->role == ROLE_WAKING && h->pid > 0) {
				struct pending_wake *w = wake_slot(t, h->pid, 1);

				if (w && w->pid == 0)
					*w = (struct pending_wake){ .pid = h->pid, .ts = h->ts };
			} else if (h->role == ROLE_SWITCH) {
				struct pending_wake *w;

				/* switched out: any earlier waking of it was not a wait */
				if (h->prev_pid > 0 && (w = wake_slot(t, h->prev_pid, 0)))
					wake_forget(t, w);
				if (h->pid > 0 && (w = wake_slot(t, h->pid, 0))) {
					int64_t waited = h->ts - w->ts;

					wake_forget(t, w);
					if (waited >= spec->period_ns) {
						fire_at(fire, fired, h, not_before);
						if (*fired && fire->ts != before)
							snprintf(fire->detail, sizeof(fire->detail),
							         "pid %d waited %" PRId64 " ns from wakeup to running",
							         h->pid, waited);
					}
				}
			}
			break;
		case SPTD_TRIG_UPROBE:
			fire_at(fire, fired, h, not_before);
			if (*fired && fire->ts != before)
				snprintf(fire->detail, sizeof(fire->detail), "uprobe %.180s:%.60s", spec->path,
				         spec->symbol);
			break;
		default:
			fire_at(fire, fired, h, not_before);
			if (*fired && fire->ts != before)
				snprintf(fire->detail, sizeof(fire->detail), "%s:%s", spec->system, spec->event);
			break;
		}
	}
	t->nhits = 0;
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
		if (drain_ring(t, &t->events[i]) < 0)
			break; /* out of memory: decide on what we have */
	decide(t, not_before, fire, &fired);
	return fired;
}

int sptd_col_trigger_aux_pause(const struct sptd_col_trigger *t, int *refused)
{
	if (refused)
		*refused = t ? t->aux_refused : 0;
	return t && t->aux_pausing ? 1 : 0;
}

void sptd_col_trigger_drain(struct sptd_col_trigger *t)
{
	struct sptd_col_fire ignored;

	if (t)
		sptd_col_trigger_check(t, INT64_MAX, &ignored);
}

/* ---- lifetime -------------------------------------------------------------------- */

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
	free(t->hits);
	free(t->wakes);
	free(t);
}
