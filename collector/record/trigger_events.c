/* trigger_events.c — every perf event of the triggers: tracepoints (irq,
 * tracepoint, latency) and the uprobe PMU (uprobe), opened per CPU with a
 * small forward ring, optionally as AUX pause siblings of the PT event, and
 * their sample records (TIME | CPU [| RAW]) read back.
 *
 * The one file of the triggers that opens perf events (through
 * collector/perf's event API) and reads their rings; the kinds ask for
 * events by what they are. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Open @pe on @cpu into @ev with its ring, apply @filter, enable.  With
 * AUX pause wanted (@leader >= 0: the PT event of that CPU) the event joins
 * the PT event's group with aux_pause set, so the kernel pauses PT on the
 * CPU where it fired; a kernel that refuses gets the plain event and
 * t->aux_refused, t->aux_why. */
static int open_event_task(struct sptd_col_trigger *t, struct sptd_col_perf_event *pe, int pid,
                           int cpu, int leader, const char *filter,
                           struct sptd_col_trigger_event *ev);

/* @pe as an aux_pause sibling of the PT event @leader: an fd, or -errno.
 * It stays on the perf clock, the PT event's: the kernel refuses a group
 * whose events use different clocks (kernel/events/core.c, perf_event_open:
 * "All events in a group should have the same clock" -> EINVAL).
 *
 * Refused with EINVAL/EOPNOTSUPP, the cause is told apart by opening the
 * same event into the group without aux_action: a kernel before 6.13 knows
 * no aux_action (the bits were reserved: EINVAL) but groups the event;
 * where that fails too the group itself is refused.  Either way the trigger
 * goes on as a plain event (t->aux_pausing 0) with the cause in
 * t->aux_refused and t->aux_why. */
static int open_pausing(struct sptd_col_trigger *t, struct sptd_col_perf_event *pe, int pid,
                        int cpu, int leader)
{
	int fd, probe;

	pe->flags &= ~SPTD_PERF_EV_USE_CLOCKID;
	pe->clockid = 0;
	pe->aux_action = SPTD_PERF_AUX_PAUSE;
	fd = sptd_col_perf_event_open(pe, pid, cpu, leader);
	pe->aux_action = 0;
	if (fd != -EINVAL && fd != -EOPNOTSUPP)
		return fd;
	probe = sptd_col_perf_event_open(pe, pid, cpu, leader);
	if (probe >= 0)
		sptd_col_sys.close(probe);
	t->aux_refused = -fd;
	t->aux_why = probe >= 0 ? SPTD_TRIG_AUX_NO_KERNEL : SPTD_TRIG_AUX_GROUP;
	t->aux_pausing = 0;
	return fd;
}

static int open_event(struct sptd_col_trigger *t, struct sptd_col_perf_event *pe, int cpu,
                      int leader, const char *filter, struct sptd_col_trigger_event *ev)
{
	return open_event_task(t, pe, -1, cpu, leader, filter, ev);
}

/* The same for task @pid (-1: every task of @cpu; @cpu -1: wherever @pid
 * runs). */
static int open_event_task(struct sptd_col_trigger *t, struct sptd_col_perf_event *pe, int pid,
                           int cpu, int leader, const char *filter,
                           struct sptd_col_trigger_event *ev)
{
	int ret;

	pe->period = 1;
	pe->flags |= SPTD_PERF_EV_DISABLED;
	ev->cpu = cpu;
	ev->layout.sample_type = pe->sample_type;
	ev->fd = -1;
	if (leader >= 0 && t->aux_pausing) {
		ret = open_pausing(t, pe, pid, cpu, leader);
		if (ret >= 0) {
			ev->fd = ret;
			ev->perf_clock = 1;
			ev->perf_offset_ns = t->perf_offset_ns;
		} else if (ret != -EINVAL && ret != -EOPNOTSUPP) {
			return ret;
		}
	}
	if (ev->fd < 0) {
		pe->flags |= SPTD_PERF_EV_USE_CLOCKID;
		pe->clockid = CLOCK_MONOTONIC;
		ev->fd = sptd_col_perf_event_open(pe, pid, cpu, -1);
	}
	if (ev->fd < 0) {
		ret = ev->fd;
		ev->fd = -1;
		return ret;
	}
	if (filter && *filter && sptd_col_perf_event_set_filter(ev->fd, filter) < 0)
		return -EINVAL;
	ret = sptd_col_perf_ring_map(&ev->ring, ev->fd, ev->data_pages, 1);
	if (ret < 0)
		return ret;
	return sptd_col_perf_event_enable(ev->fd);
}

/* One event like @tmpl on each of @cpus, in @role with rings of @pages
 * (each in the CPU's PT pause group with @leaders).  0, or the first
 * failure with *@failed_cpu set to the CPU it was on. */
static int open_per_cpu(struct sptd_col_trigger *t, const struct sptd_col_perf_event *tmpl,
                        enum sptd_col_trigger_role role, size_t pages, int leaders,
                        const char *filter, const int *cpus, int ncpus, int *failed_cpu)
{
	for (int i = 0; i < ncpus; i++) {
		struct sptd_col_trigger_event *ev = new_event(t, role, pages);
		struct sptd_col_perf_event pe = *tmpl;
		int ret;

		if (!ev)
			return -ENOMEM;
		ret = open_event(t, &pe, cpus[i], leaders && t->leaders ? t->leaders[i] : -1, filter,
		                 ev);
		if (ret < 0) {
			*failed_cpu = cpus[i];
			return ret;
		}
	}
	return 0;
}

int sptd_col_trigger_events_tracepoint(struct sptd_col_trigger *t, const char *system,
                                       const char *event, const char *filter,
                                       enum sptd_col_trigger_role role, int flags,
                                       const int *cpus, int ncpus, char *err, size_t errlen)
{
	int id = -1, ret = sptd_sched_event_exists(system, event, &id), cpu = -1;
	int busy = (flags & SPTD_TRIG_EV_BUSY) != 0;
	struct sptd_col_perf_event pe;

	if (ret == 0) {
		snprintf(err, errlen, "no tracepoint %s:%s on this kernel (see /sys/kernel/tracing/available_events)",
		         system, event);
		return -ENOENT;
	}
	if (ret < 0) {
		snprintf(err, errlen, "cannot look up tracepoint %s:%s: %s", system, event, strerror(-ret));
		return ret;
	}
	sptd_col_perf_event_tracepoint(&pe, (uint64_t)id);
	pe.sample_type = SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_RAW;
	if (busy) {
		/* every switch: wake the service per half ring, not per event */
		pe.flags |= SPTD_PERF_EV_WATERMARK;
		pe.wakeup = (uint32_t)(TRIG_BUSY_PAGES * sysconf(_SC_PAGESIZE) / 2);
	} else {
		pe.wakeup = 1;
	}
	ret = open_per_cpu(t, &pe, role, busy ? TRIG_BUSY_PAGES : TRIG_RING_PAGES,
	                   (flags & SPTD_TRIG_EV_PAUSE) != 0, filter, cpus, ncpus, &cpu);
	if (ret == -EINVAL && filter && *filter)
		snprintf(err, errlen, "the kernel rejected filter '%s' for %s:%s (ftrace filter syntax, fields in events/%s/%s/format)",
		         filter, system, event, system, event);
	else if (ret < 0 && cpu >= 0)
		snprintf(err, errlen, "perf_event_open(%s:%s, cpu %d): %s%s", system, event, cpu,
		         strerror(-ret), ret == -EACCES ? " (run as root)" : "");
	return ret;
}

int sptd_col_trigger_events_uprobe(struct sptd_col_trigger *t, uint32_t type, const char *path,
                                   const char *symbol, uint64_t offset, const int *cpus,
                                   int ncpus, char *err, size_t errlen)
{
	struct sptd_col_perf_event pe;
	int ret, cpu = -1;

	sptd_col_perf_event_uprobe(&pe, type, path, offset);   /* entry, not retprobe */
	pe.sample_type = SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU;
	pe.wakeup = 1;
	ret = open_per_cpu(t, &pe, SPTD_TRIG_ROLE_HIT, TRIG_RING_PAGES, 1, NULL, cpus, ncpus, &cpu);
	if (ret < 0 && cpu >= 0)
		snprintf(err, errlen, "perf_event_open(uprobe %s:%s at offset 0x%" PRIx64 ", cpu %d): %s",
		         path, symbol, offset, cpu, strerror(-ret));
	return ret;
}

/* A hardware breakpoint event at @addr: who hit it, where, when, on which
 * CPU, with its call chain; a wakeup per hit. */
static void bp_event(struct sptd_col_perf_event *pe, uint32_t bp_type, uint64_t addr,
                     uint64_t len)
{
	sptd_col_perf_event_breakpoint(pe, bp_type, addr, len);
	pe->sample_type = SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME |
	                  SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_CALLCHAIN;
	pe->max_stack = 127;
	pe->wakeup = 1;
}

int sptd_col_trigger_events_breakpoint(struct sptd_col_trigger *t, uint32_t bp_type,
                                       uint64_t addr, uint64_t len, const int *cpus, int ncpus,
                                       char *err, size_t errlen)
{
	struct sptd_col_perf_event pe;
	int ret, cpu = -1;

	bp_event(&pe, bp_type, addr, len);
	ret = open_per_cpu(t, &pe, SPTD_TRIG_ROLE_HIT, TRIG_RING_PAGES, 0, NULL, cpus, ncpus, &cpu);
	if (ret == -ENOSPC)
		snprintf(err, errlen, "no debug register left on cpu %d for the breakpoint at "
		         "0x%" PRIx64 " (x86 has 4 per CPU, shared with debuggers and other "
		         "break/watch triggers)", cpu, addr);
	else if (ret < 0 && cpu >= 0)
		snprintf(err, errlen, "perf_event_open(breakpoint at 0x%" PRIx64 ", cpu %d): %s",
		         addr, cpu, strerror(-ret));
	return ret;
}

int sptd_col_trigger_events_breakpoint_task(struct sptd_col_trigger *t, uint32_t bp_type,
                                            uint64_t addr, uint64_t len, int tid, char *err,
                                            size_t errlen)
{
	struct sptd_col_trigger_event *ev = new_event(t, SPTD_TRIG_ROLE_HIT, TRIG_RING_PAGES);
	struct sptd_col_perf_event pe;
	int ret;

	if (!ev)
		return -ENOMEM;
	bp_event(&pe, bp_type, addr, len);
	ret = open_event_task(t, &pe, tid, -1, -1, NULL, ev);
	if (ret < 0) {
		/* the slot stays, closed: the caller goes on with other threads */
		sptd_col_trigger_events_close_one(ev);
		snprintf(err, errlen, "perf_event_open(breakpoint at 0x%" PRIx64 ", thread %d): %s",
		         addr, tid, strerror(-ret));
	}
	return ret;
}

void sptd_col_trigger_events_close_one(struct sptd_col_trigger_event *ev)
{
	sptd_col_perf_ring_unmap(&ev->ring);
	if (ev->fd >= 0)
		sptd_col_sys.close(ev->fd);
	ev->fd = -1;
}

void sptd_col_trigger_events_close(struct sptd_col_trigger *t)
{
	for (int i = 0; i < t->nevents; i++) {
		sptd_col_perf_ring_unmap(&t->events[i].ring);
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

struct drain_ctx {
	struct sptd_col_trigger_event *ev;  /* the event drained */
	sptd_col_trigger_sample_fn fn;      /* gets each sample */
	void *ctx;                          /* handed back to @fn */
};

static int on_record(void *arg, const void *rec, size_t len)
{
	struct drain_ctx *d = arg;
	struct sptd_col_perf_record r;
	int64_t ts;

	/* a record the parser refuses is skipped: the kernel wrote it, so it
	 * can only be one this layout does not describe */
	if (sptd_col_perf_record_parse(rec, len, &d->ev->layout, &r) < 0 ||
	    r.type != SPTD_PERF_RECORD_SAMPLE)
		return 0;
	ts = (int64_t)r.id.time;
	if (d->ev->perf_clock && d->ev->perf_offset_ns)
		ts += *d->ev->perf_offset_ns;
	return d->fn(d->ctx, d->ev, ts, r.id.cpu, r.sample.raw, r.sample.raw_size, &r);
}

int sptd_col_trigger_events_unread(const struct sptd_col_trigger *t)
{
	for (int i = 0; i < t->nevents; i++)
		if (t->events[i].ring.base && sptd_col_perf_ring_unread(&t->events[i].ring))
			return 1;
	return 0;
}

int sptd_col_trigger_events_drain(struct sptd_col_trigger_event *ev,
                                  sptd_col_trigger_sample_fn fn, void *ctx)
{
	struct drain_ctx d = { ev, fn, ctx };
	int ret;

	if (!ev->ring.base)
		return 0;
	ret = sptd_col_perf_ring_drain(&ev->ring, on_record, &d);
	return ret < 0 ? ret : 0;
}
