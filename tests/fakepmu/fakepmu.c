/* fakepmu.c — see fakepmu.h.  Written to perf_event_open(2)'s contract:
 * user page first (data_offset/data_size, time_* fields), data pages after;
 * the AUX ring is mapped at the user page's aux_offset with aux_size bytes;
 * a read-only AUX mapping means overwrite mode; write_backward rings grow
 * downwards from head 0.  The sysfs tree is in fakepmu_sysfs.c, the
 * record writers (fakepmu_rec_*) in fakepmu_rec.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <x86intrin.h>
#include <unistd.h>

#include "fakepmu.h"
#include "sptd_col_perf.h"

#define MAX_EVENTS 256

struct fake_event {
	int fd;                        /* real fd (of /dev/null) standing for it */
	int open;                      /* 1 until closed */
	int cpu;
	int is_pt;                     /* intel_pt, else the dummy or a group sibling */
	int is_dummy;                  /* the sideband dummy */
	int is_probe;                  /* a dummy on the caller's own thread (pid 0,
	                                * any CPU) with comm: see clock_probe_open */
	int group_fd;                  /* group leader's fd as passed (-1 none) */
	struct perf_event_attr attr;   /* as opened */
	unsigned char *base;           /* user page + data */
	size_t len;
	unsigned char *aux;            /* AUX ring */
	size_t aux_len;
	uint64_t aux_written;          /* bytes ever written to the AUX ring */
	int enabled, ran, paused;
	int aux_paused;                /* intel_pt: AUX pause in force (event->hw.aux_paused) */
	uint32_t aux_action;           /* SPTD_PERF_AUX_* bits it was opened with */
};

static struct fake_event events[MAX_EVENTS];
static int nevents;
static struct sptd_col_sys saved;
static int fake_type, fail_errno, counter_head, maps_bad, fail_grouped;
static int fail_refresh;             /* errno PERF_EVENT_IOC_REFRESH fails with, 0 none */
static int clock_set;                /* 1: clock_* below replace the default */
static uint64_t clock_zero;          /* time_zero offered */
static uint32_t clock_mult;          /* time_mult offered */
static uint16_t clock_shift;         /* time_shift offered */
static const struct fakepmu_script *scripts;
static int nscripts;
static int tsc_follow;               /* fakepmu_tsc_follow */
static uint64_t tsc_adjust;          /* offered TSC = real + this (mod 2^64) */

/* ---- a running perf clock (fakepmu_clock_*) ---------------------------------- */

/* The kernel's perf clock is local_clock: on a host with a stable TSC it
 * is the TSC through the page's conversion, which NTP does not slew,
 * while CLOCK_MONOTONIC is slewed; on a KVM guest on kvm-clock it is not
 * the TSC at all and the page offers no conversion (cap_user_time_zero 0,
 * arch_perf_update_userpage).  This fake clock runs off CLOCK_MONOTONIC
 * by a set rate and offset; records the fake makes at run time are
 * stamped with it. */
static int clock_live;               /* 1: fakepmu_clock_drift() set the clock */
static int clock_no_zero;            /* 1: pages offer no TSC conversion */
static uint64_t live_zero;           /* perf ns = live_zero + conv(tsc) */
static uint32_t live_mult;
static uint16_t live_shift;
static int live_switch_out = -1, live_switch_in = -1; /* tids switched at each freeze */

static void forward_put(struct fake_event *e, const unsigned char *rec, size_t len);
static void backward_put(struct fake_event *e, const unsigned char *rec, size_t len);

/* @tsc through mult/shift as the kernel's documentation of the page does
 * (quot/rem, no 64-bit overflow). */
static uint64_t clock_conv(uint64_t tsc, uint32_t mult, uint16_t shift)
{
	uint64_t quot = tsc >> shift, rem = tsc & ((1ull << shift) - 1);

	return quot * mult + ((rem * mult) >> shift);
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t fakepmu_clock_now(void)
{
	return live_zero + clock_conv(__rdtsc(), live_mult, live_shift);
}

int fakepmu_clock_drift(int64_t offset_ns, int ppm)
{
	struct timespec nap = { 0, 20000000 };
	uint64_t tsc0, tsc1;
	int64_t m0, m1;
	double ns_per_tsc, mult;

	/* this machine's TSC rate against CLOCK_MONOTONIC over 20 ms */
	tsc0 = __rdtsc();
	m0 = mono_ns();
	nanosleep(&nap, NULL);
	tsc1 = __rdtsc();
	m1 = mono_ns();
	if (tsc1 <= tsc0 || m1 <= m0)
		return -EIO;
	ns_per_tsc = (double)(m1 - m0) / (double)(tsc1 - tsc0) * (1.0 + ppm / 1e6);
	live_shift = 31;
	mult = ns_per_tsc * (double)(1ull << live_shift);
	while (mult >= 4294967295.0 && live_shift > 0) {
		live_shift--;
		mult /= 2;
	}
	live_mult = (uint32_t)mult;
	/* reads CLOCK_MONOTONIC + @offset_ns now, then runs @ppm fast */
	live_zero = (uint64_t)(m1 + offset_ns) - clock_conv(tsc1, live_mult, live_shift);
	clock_live = 1;
	fakepmu_set_clock(live_zero, live_mult, live_shift);
	return 0;
}

void fakepmu_clock_no_time_zero(int on)
{
	clock_no_zero = on;
}

void fakepmu_clock_switches(int tid_out, int tid_in)
{
	live_switch_out = tid_out;
	live_switch_in = tid_in;
}

/* A new user page: without conversion the kernel leaves cap_user_time,
 * cap_user_time_zero and the time fields 0. */
static void clock_page(struct perf_event_mmap_page *pg)
{
	if (!clock_no_zero)
		return;
	pg->cap_user_time = 0;
	pg->cap_user_time_zero = 0;
	pg->time_zero = 0;
	pg->time_mult = 0;
	pg->time_shift = 0;
}

/* A dummy on the caller's own thread with comm: what a COMM record of a
 * prctl(PR_SET_NAME) needs.  The fake cannot see the prctl, so it writes
 * that record when the event is disabled, stamped then; a reader that
 * brackets enable..disable with clock reads sees it inside the bracket,
 * as it would see the kernel's. */
static int clock_probe_open(const struct perf_event_attr *attr, int group_fd)
{
	struct fake_event *e;

	if (!attr->comm || !attr->sample_id_all || nevents == MAX_EVENTS) {
		errno = EINVAL;
		return -1;
	}
	e = &events[nevents];
	memset(e, 0, sizeof(*e));
	e->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -1;
	e->open = 1;
	e->cpu = -1;
	e->is_probe = 1;
	e->group_fd = group_fd;
	e->attr = *attr;
	nevents++;
	return e->fd;
}

static int record_wanted(const struct fake_event *e, uint32_t type);

/* On disable: a PT event's CPU switches tasks (written into that CPU's
 * running dummy ring), a probe gets its COMM record; both stamped now. */
static void clock_on_disable(struct fake_event *e)
{
	unsigned char rec[128];
	uint64_t now;
	size_t n;

	if (!clock_live)
		return;
	now = fakepmu_clock_now();
	if (e->is_probe && e->base) {
		char name[17] = "";
		int tid = (int)syscall(SYS_gettid);

		prctl(PR_GET_NAME, name, 0, 0, 0);
		n = fakepmu_rec_comm(rec, 0, sizeof(rec), getpid(), tid, name, now, 0);
		forward_put(e, rec, n);
		return;
	}
	if (live_switch_out < 0 || live_switch_in < 0)
		return;
	for (int i = 0; i < nevents; i++) {
		struct fake_event *d = &events[i];

		if (!d->open || !d->is_dummy || d->cpu != e->cpu || !d->enabled || d->paused ||
		    !d->base || !record_wanted(d, PERF_RECORD_SWITCH_CPU_WIDE))
			continue;
		n = fakepmu_rec_switch(rec, 0, sizeof(rec), 1, live_switch_out, live_switch_out,
		                       live_switch_in, live_switch_in, now, e->cpu);
		backward_put(d, rec, n);
		n = fakepmu_rec_switch(rec, 0, sizeof(rec), 0, live_switch_in, live_switch_in,
		                       live_switch_out, live_switch_out, now, e->cpu);
		backward_put(d, rec, n);
	}
}

/* ---- physically contiguous AUX rings (fakepmu_aux_contiguous) ----------------- */

/* Without multiple ToPA entries the kernel marks intel_pt
 * PERF_PMU_CAP_AUX_NO_SG, and rb_alloc_aux (kernel/events/ring_buffer.c)
 * then wants an overwrite AUX ring as one physically contiguous chunk:
 * -ENOMEM when the first allocation came back of a lower order.  0: no
 * limit (scatter-gather, or plenty of contiguous memory). */
static size_t aux_contig_max;

void fakepmu_aux_contiguous(size_t largest)
{
	aux_contig_max = largest;
}

static int aux_alloc_fails(size_t len, int prot)
{
	return aux_contig_max && !(prot & PROT_WRITE) && len > aux_contig_max;
}

/* ---- the fake calls ------------------------------------------------------------- */

/* 1: the fake is a kernel older than 5.9, which refuses attr.text_poke. */
static int no_text_poke;

void fakepmu_refuse_text_poke(int on)
{
	no_text_poke = on;
}

/* Whether the kernel would write a record of @type to @e's ring, as the
 * match functions of kernel/events/core.c decide: TEXT_POKE only to events
 * opened with attr.text_poke, KSYMBOL with attr.ksymbol, COMM with
 * attr.comm, MMAP/MMAP2 with attr.mmap, FORK/EXIT with any of comm, mmap,
 * mmap2, mmap_data, task (perf_event_task_match), switches with
 * attr.context_switch; the rest (AUX, ITRACE_START go to the PT event
 * itself) always. */
static int record_wanted(const struct fake_event *e, uint32_t type)
{
	const struct perf_event_attr *a = &e->attr;

	switch (type) {
	case PERF_RECORD_TEXT_POKE:
		return a->text_poke;
	case PERF_RECORD_KSYMBOL:
		return a->ksymbol;
	case PERF_RECORD_COMM:
		return a->comm;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return a->mmap || a->mmap2;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return a->comm || a->mmap || a->mmap2 || a->mmap_data || a->task;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return a->context_switch;
	default:
		/* a script's LOST (its ring's own) is the sideband dummy's,
		 * not a dummy's that asks only for kernel code changes */
		return !(a->text_poke || a->ksymbol) || a->comm || a->mmap || a->task ||
		       a->context_switch;
	}
}

static struct fake_event *by_fd(int fd)
{
	for (int i = 0; i < nevents; i++)
		if (events[i].open && events[i].fd == fd)
			return &events[i];
	return NULL;
}

/* The aux_action u32 after aux_sample_size (Linux 6.13), whatever the
 * installed header calls it. */
static uint32_t aux_action_of(const struct perf_event_attr *attr)
{
	uint32_t v;

	memcpy(&v, (const char *)attr + offsetof(struct perf_event_attr, aux_sample_size) + 4,
	       sizeof(v));
	return v;
}

/* The kernel's checks of an event joining @leader's group, as
 * kernel/events/core.c makes them (perf_event_open: the leader must lead
 * its own group, "All events in a group should have the same clock" (the
 * perf clock unless use_clockid, else that clockid), the same CPU;
 * perf_event_alloc: not aux_pause and aux_resume both; perf_get_aux_event:
 * aux_action only under an AUX event that can pause).  An errno, or 0.
 * fakepmu_fail_grouped() plays a kernel before 6.13: the aux_action bits
 * were reserved there, so only opens carrying them fail. */
static int group_refusal(const struct fake_event *leader, const struct perf_event_attr *attr,
                         int cpu)
{
	uint32_t action = aux_action_of(attr);

	if (fail_grouped && action)
		return fail_grouped;
	if (leader->group_fd != -1)
		return EINVAL;
	if (leader->attr.use_clockid != attr->use_clockid ||
	    (attr->use_clockid && leader->attr.clockid != attr->clockid))
		return EINVAL;
	if (leader->cpu != cpu)
		return EINVAL;
	if ((action & SPTD_PERF_AUX_PAUSE) && (action & SPTD_PERF_AUX_RESUME))
		return EINVAL;
	if ((action & (SPTD_PERF_AUX_PAUSE | SPTD_PERF_AUX_RESUME)) && !leader->is_pt)
		return EINVAL;
	return 0;
}

/* A sibling with aux_pause/aux_resume overflowed on its CPU: the kernel
 * pauses or resumes its leader's PT there (__perf_event_overflow ->
 * perf_event_aux_pause).  A pause stops the output where it is: the
 * hardware wrote its stream up to the hit.  Nothing but a resume clears
 * it, not disable/enable (hw.aux_paused is only written there). */
static void sibling_overflow(struct fake_event *e);

static int fake_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                     unsigned long flags)
{
	struct fake_event *e;
	int is_pt = (int)attr->type == fake_type;
	int is_dummy = attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_DUMMY;

	struct fake_event *leader = group_fd >= 0 ? by_fd(group_fd) : NULL;

	if (is_dummy && clock_live && pid == 0 && cpu == -1)
		return clock_probe_open(attr, group_fd);
	if (!is_pt && !is_dummy && !leader)
		return saved.perf_event_open(attr, pid, cpu, group_fd, flags);
	if (leader && group_refusal(leader, attr, cpu)) {
		errno = group_refusal(leader, attr, cpu);
		return -1;
	}
	/* perf_copy_attr: an attr bit the kernel does not know is reserved,
	 * and reserved bits set are EINVAL */
	if (no_text_poke && attr->text_poke) {
		errno = EINVAL;
		return -1;
	}
	if (is_pt && fail_errno) {
		errno = fail_errno;
		fail_errno = 0;
		return -1;
	}
	if (nevents == MAX_EVENTS || pid != -1 || cpu < 0) {
		errno = EINVAL;
		return -1;
	}
	e = &events[nevents];
	memset(e, 0, sizeof(*e));
	e->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -1;
	e->open = 1;
	e->cpu = cpu;
	e->is_pt = is_pt;
	e->is_dummy = is_dummy;
	e->group_fd = group_fd;
	e->attr = *attr;
	e->aux_action = aux_action_of(attr);
	e->aux_paused = is_pt && (e->aux_action & SPTD_PERF_AUX_START_PAUSED);
	nevents++;
	return e->fd;
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct fake_event *e = by_fd(fd);
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	if (!e)
		return saved.mmap(addr, len, prot, flags, fd, off);
	if (off == 0) {
		struct perf_event_mmap_page *pg;
		size_t pages = len / (size_t)page - 1;

		if (len % (size_t)page || (pages & (pages - 1)) || e->base) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (posix_memalign(&mem, (size_t)page, len))
			return MAP_FAILED;
		memset(mem, 0, len);
		pg = mem;
		pg->data_offset = (uint64_t)page;
		pg->data_size = len - (size_t)page;
		pg->cap_user_time_zero = 1;
		/* perf clock = time_zero + tsc / 2, with time_zero chosen so
		 * that it reads about CLOCK_MONOTONIC now, as on a real host */
		{
			struct timespec ts;
			uint64_t tsc = __rdtsc();

			clock_gettime(CLOCK_MONOTONIC, &ts);
			pg->time_zero = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - tsc / 2;
		}
		pg->time_mult = 1u << 30;
		pg->time_shift = 31;
		if (clock_set) {
			pg->time_zero = clock_zero;
			pg->time_mult = clock_mult;
			pg->time_shift = clock_shift;
		}
		clock_page(pg);
		if (e->is_dummy && (prot & PROT_WRITE))
			maps_bad = 1;   /* the sideband ring must be overwrite (read-only) */
		e->base = mem;
		e->len = len;
		return mem;
	}
	{
		struct perf_event_mmap_page *pg = (void *)e->base;
		size_t pages = len / (size_t)page;

		if (!e->is_pt || !pg || (uint64_t)off != pg->aux_offset || len != pg->aux_size ||
		    len % (size_t)page || (pages & (pages - 1)) || e->aux) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (prot & PROT_WRITE)
			maps_bad = 1;   /* sysptd wants overwrite (snapshot) mode */
		if (aux_alloc_fails(len, prot)) {
			errno = ENOMEM;
			return MAP_FAILED;
		}
		if (posix_memalign(&mem, (size_t)page, len))
			return MAP_FAILED;
		memset(mem, 0, len);
		e->aux = mem;
		e->aux_len = len;
		return mem;
	}
}

static int fake_munmap(void *addr, size_t len)
{
	for (int i = 0; i < nevents; i++) {
		if (events[i].base == addr) {
			free(events[i].base);
			events[i].base = NULL;
			return 0;
		}
		if (events[i].aux == addr) {
			free(events[i].aux);
			events[i].aux = NULL;
			return 0;
		}
	}
	return saved.munmap(addr, len);
}

/* Append one record to a forward data ring. */
static void forward_put(struct fake_event *e, const unsigned char *rec, size_t len)
{
	struct perf_event_mmap_page *pg = (void *)e->base;
	uint64_t size = pg->data_size;

	for (size_t i = 0; i < len; i++)
		e->base[pg->data_offset + (pg->data_head + i) % size] = rec[i];
	__atomic_store_n(&pg->data_head, pg->data_head + len, __ATOMIC_RELEASE);
}

/* Write @len record bytes into a backward ring: head moves down first. */
static void backward_put(struct fake_event *e, const unsigned char *rec, size_t len)
{
	struct perf_event_mmap_page *pg = (void *)e->base;
	uint64_t size = pg->data_size, head = pg->data_head - len;

	for (size_t i = 0; i < len; i++)
		e->base[pg->data_offset + (head + i) % size] = rec[i];
	__atomic_store_n(&pg->data_head, head, __ATOMIC_RELEASE);
}

/* The hardware ran: stream the script's PT into the AUX ring, then (as the
 * kernel does on stop) publish aux_head and an AUX record. */
static void pt_run(struct fake_event *e)
{
	const struct fakepmu_script *s = e->cpu < nscripts ? &scripts[e->cpu] : NULL;
	struct perf_event_mmap_page *pg = (void *)e->base;
	unsigned char rec[64];
	uint64_t start = e->aux_written, flags = PERF_AUX_FLAG_OVERWRITE;
	size_t n;

	if (!s || !e->aux || e->aux_paused)
		return;
	for (size_t i = 0; i < s->pt_len; i++) {
		if (s->drop_len && i >= s->drop_at && i < s->drop_at + s->drop_len)
			continue;
		e->aux[e->aux_written % e->aux_len] = s->pt[i];
		e->aux_written++;
	}
	if (s->drop_len)
		flags |= PERF_AUX_FLAG_TRUNCATED;
	/* the run ends now: the TSC reads its end */
	if (tsc_follow && s->end_tsc)
		tsc_adjust = s->end_tsc - saved.tsc();
	pg->aux_head = counter_head ? e->aux_written : e->aux_written % e->aux_len;
	n = fakepmu_rec_aux(rec, 0, sizeof(rec), start % e->aux_len, e->aux_written - start,
	                    flags, s->aux_time, e->cpu);
	forward_put(e, rec, n);
}

/* The TSC sptd_col_sys.tsc reads: see fakepmu_tsc_follow. */
static uint64_t fake_tsc(void)
{
	return saved.tsc() + tsc_adjust;
}

void fakepmu_tsc_follow(int on)
{
	tsc_follow = on;
	tsc_adjust = 0;
}

/* Enabled again after a freeze: the hardware runs the script once more,
 * into the same AUX ring at the head the kernel left (perf_aux_output_begin
 * starts at rb->aux_head; pt_buffer_reset_offsets keeps the snapshot
 * position), over the old bytes, which nothing clears.  A test that wants
 * each incident's PT told apart changes its script between freezes. */
static void pt_rearm(struct fake_event *e)
{
	e->ran = 0;
}

static void sideband_run(struct fake_event *e)
{
	const struct fakepmu_script *s = e->cpu < nscripts ? &scripts[e->cpu] : NULL;
	size_t off = 0;

	if (!s || !s->sb)
		return;
	while (off + sizeof(struct perf_event_header) <= s->sb_len) {
		struct perf_event_header h;

		memcpy(&h, s->sb + off, sizeof(h));
		if (h.size == 0)
			break;
		if (record_wanted(e, h.type))
			backward_put(e, s->sb + off, h.size);
		off += h.size;
	}
}

static int fake_ioctl(int fd, unsigned long req, unsigned long arg)
{
	struct fake_event *e = by_fd(fd);

	if (!e)
		return saved.ioctl(fd, req, arg);
	switch (req) {
	case PERF_EVENT_IOC_ENABLE:
		if (!e->enabled && e->is_pt)
			pt_rearm(e);
		if (!e->enabled && !e->ran && e->is_dummy && !e->paused && e->base)
			sideband_run(e);
		if (e->is_dummy)
			e->ran = 1;
		e->enabled = 1;
		return 0;
	case PERF_EVENT_IOC_DISABLE:
		if (e->enabled && (e->is_pt || e->is_probe))
			clock_on_disable(e);
		if (e->enabled && e->is_pt && !e->ran) {
			pt_run(e);
			e->ran = 1;
		}
		e->enabled = 0;
		return 0;
	case PERF_EVENT_IOC_REFRESH:
		/* enabled for @arg overflows; a sampling sibling overflows at
		 * once, on its own CPU, whichever thread asked */
		if (!e->attr.sample_period || arg == 0 || fail_refresh) {
			errno = fail_refresh ? fail_refresh : EINVAL;
			return -1;
		}
		sibling_overflow(e);
		return 0;
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
		e->paused = arg != 0;
		return 0;
	case PERF_EVENT_IOC_SET_FILTER:
		return 0;
	default:
		errno = ENOTTY;
		return -1;
	}
}

static void sibling_overflow(struct fake_event *e)
{
	struct fake_event *leader = e->group_fd >= 0 ? by_fd(e->group_fd) : NULL;

	if (!leader || !leader->is_pt)
		return;
	if ((e->aux_action & SPTD_PERF_AUX_PAUSE) && !leader->aux_paused) {
		if (leader->enabled && !leader->ran) {
			pt_run(leader);
			leader->ran = 1;
		}
		leader->aux_paused = 1;
	} else if (e->aux_action & SPTD_PERF_AUX_RESUME) {
		leader->aux_paused = 0;
	}
}

int fakepmu_fire(int fd)
{
	struct fake_event *e = by_fd(fd);

	if (!e || e->group_fd < 0)
		return -EINVAL;
	sibling_overflow(e);
	return 0;
}

int fakepmu_put_sample(int fd, uint64_t time, int cpu)
{
	struct fake_event *e = by_fd(fd);
	unsigned char rec[64];
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 0 };
	uint32_t cpus[2] = { (uint32_t)cpu, 0 }, raw_size = 4;
	size_t n = sizeof(h);

	if (!e || !e->base ||
	    (e->attr.sample_type & ~(uint64_t)(PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)))
		return -EINVAL;
	memset(rec, 0, sizeof(rec));
	if (e->attr.sample_type & PERF_SAMPLE_TIME) {
		memcpy(rec + n, &time, 8);
		n += 8;
	}
	if (e->attr.sample_type & PERF_SAMPLE_CPU) {
		memcpy(rec + n, cpus, 8);
		n += 8;
	}
	if (e->attr.sample_type & PERF_SAMPLE_RAW) {
		memcpy(rec + n, &raw_size, 4);   /* u32 size, then 4 zero bytes */
		n += 8;
	}
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	forward_put(e, rec, n);
	return 0;
}

int fakepmu_pt_paused(int cpu)
{
	for (int i = nevents; i-- > 0;)
		if (events[i].open && events[i].is_pt && events[i].cpu == cpu)
			return events[i].aux_paused;
	return -1;
}

static int fake_close(int fd)
{
	struct fake_event *e = by_fd(fd);

	if (!e)
		return saved.close(fd);
	e->open = 0;
	return close(fd);
}

void fakepmu_serve(int type, const struct fakepmu_script *s, int n, int head_is_counter,
                   const struct sptd_col_sys *real, struct sptd_col_sys *fake)
{
	saved = *real;
	fake_type = type;
	scripts = s;
	nscripts = n;
	counter_head = head_is_counter;
	nevents = 0;
	fail_grouped = 0;
	fail_refresh = 0;
	maps_bad = 0;
	clock_set = 0;
	clock_live = 0;
	clock_no_zero = 0;
	aux_contig_max = 0;
	live_switch_out = live_switch_in = -1;
	tsc_follow = 0;
	tsc_adjust = 0;
	*fake = *real;
	fake->tsc = fake_tsc;
	fake->perf_event_open = fake_open;
	fake->mmap = fake_mmap;
	fake->munmap = fake_munmap;
	fake->ioctl = fake_ioctl;
	fake->close = fake_close;
}

void fakepmu_set_clock(uint64_t time_zero, uint32_t mult, uint16_t shift)
{
	clock_set = 1;
	clock_zero = time_zero;
	clock_mult = mult;
	clock_shift = shift;
}

/* The preload (FAKEPMU_PRELOAD) serves the calls without sptd_col, whose
 * table it cannot reach inside another program. */
#ifndef FAKEPMU_PRELOAD
static int installed;                /* 1: sptd_col_sys holds the fake */

void fakepmu_install(int type, const struct fakepmu_script *s, int n, int head_is_counter)
{
	struct sptd_col_sys real = installed ? saved : sptd_col_sys;

	installed = 1;
	fakepmu_serve(type, s, n, head_is_counter, &real, &sptd_col_sys);
}

void fakepmu_uninstall(void)
{
	for (int i = 0; i < nevents; i++) {
		free(events[i].base);
		free(events[i].aux);
		if (events[i].open)
			close(events[i].fd);
	}
	nevents = 0;
	if (installed)
		sptd_col_sys = saved;
	installed = 0;
}
#endif

void fakepmu_fail_open(int err)
{
	fail_errno = err;
}

void fakepmu_fail_grouped(int err)
{
	fail_grouped = err;
}

void fakepmu_fail_refresh(int err)
{
	fail_refresh = err;
}

int fakepmu_group_fd(int i)
{
	return i < 0 || i >= nevents ? -1 : events[i].group_fd;
}

int fakepmu_event_fd(int i)
{
	return i < 0 || i >= nevents ? -1 : events[i].fd;
}

const struct perf_event_attr *fakepmu_attr(int i, int *cpu)
{
	if (i < 0 || i >= nevents)
		return NULL;
	if (cpu)
		*cpu = events[i].cpu;
	return &events[i].attr;
}

int fakepmu_open_count(void)
{
	int n = 0;

	for (int i = 0; i < nevents; i++)
		n += events[i].open;
	return n;
}

int fakepmu_maps_ok(void)
{
	return !maps_bad;
}

int fakepmu_put_text_poke(int cpu, uint64_t time, uint64_t addr, const uint8_t *old_bytes,
                          const uint8_t *new_bytes, uint16_t len)
{
	unsigned char rec[256];
	size_t n;
	int rings = 0;

	if (len > 64)
		return -EINVAL;
	n = fakepmu_rec_text_poke(rec, 0, sizeof(rec), addr, old_bytes, len, new_bytes, len,
	                          time, cpu);
	for (int i = 0; i < nevents && n; i++) {
		struct fake_event *d = &events[i];

		/* perf_event_text_poke: every event of the poking CPU that asked,
		 * unless its output is paused (the record is lost there) */
		if (!d->open || !d->is_dummy || d->cpu != cpu || !d->enabled || d->paused ||
		    !d->base || !record_wanted(d, PERF_RECORD_TEXT_POKE))
			continue;
		backward_put(d, rec, n);
		rings++;
	}
	return rings;
}
