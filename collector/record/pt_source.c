/* pt_source.c — the Intel PT recording source: per CPU one intel_pt event
 * in AUX overwrite (snapshot) mode and one sideband dummy event; freeze,
 * copy, resume; and writing a freeze into an incident.
 *
 * Per CPU (perf_event_open(2), perf-intel-pt.txt):
 *   PT event     pid -1, cpu N, disabled, sample_id_all TID|TIME|CPU.  Its
 *                data ring (forward, read-write: we set aux_offset/aux_size
 *                in its user page and consume it at each freeze) receives
 *                the AUX, ITRACE_START and LOST records; its AUX ring is
 *                mapped read-only, which puts the AUX in overwrite mode.
 *   sideband     PERF_COUNT_SW_DUMMY with mmap2, comm, comm_exec, task,
 *                context_switch; a read-only write_backward ring keeps the
 *                newest records (overwrite), walked with ring.c at freeze.
 * Freeze: PERF_EVENT_IOC_DISABLE on every PT event (the PMU stops and
 * publishes aux_head), PERF_EVENT_IOC_PAUSE_OUTPUT on every sideband ring,
 * then the copies; enable undoes both.
 *
 * All syscalls go through sptd_col_sys, so tests run this file against a
 * fake PMU. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "pt-local.h"
#include "sptd_sched.h"
#include "sptd_store.h"

/* Data pages of the PT event's own ring: it only holds AUX/ITRACE_START
 * records between two freezes. */
#define PT_DATA_PAGES 8
#define SB_DEFAULT_PAGES 64

/* aux_action (6.13) is the u32 between aux_sample_size and sig_data. */
_Static_assert(offsetof(struct perf_event_attr, sig_data) ==
               offsetof(struct perf_event_attr, aux_sample_size) + 8,
               "perf_event_attr layout: aux_action must follow aux_sample_size");

/* One CPU's events, mappings and last copy. */
struct pt_cpu {
	int cpu;                 /* CPU number */
	int pt_fd, sb_fd;        /* intel_pt event, sideband dummy (-1: none) */
	int resume_fd;           /* AUX pause: aux_resume sibling of pt_fd (-1: none) */
	void *pt_base;           /* user page + PT_DATA_PAGES data pages */
	size_t pt_len;           /* bytes mapped at pt_base */
	void *aux_base;          /* AUX ring, read-only */
	size_t aux_len;          /* its size (setup.aux_bytes) */
	void *sb_base;           /* sideband user page + data pages */
	size_t sb_len;           /* bytes mapped at sb_base */
	unsigned char *aux_copy; /* last freeze: PT bytes, oldest first */
	size_t aux_copy_len;     /* valid bytes in aux_copy */
	unsigned char *sb_copy;  /* last freeze: sideband records, oldest first */
	size_t sb_copy_len, sb_copy_cap; /* used / allocated */
	unsigned char *ptr_copy; /* last freeze: the PT event's own records */
	size_t ptr_copy_len;     /* valid bytes in ptr_copy */
};

struct sptd_col_pt {
	struct sptd_col_pt_pmu pmu;      /* what sysfs said */
	struct sptd_col_pt_setup setup;  /* config in use */
	struct sptd_col_pt_cpu cpuid;    /* CPU identity for decode */
	struct sptd_col_pt_time time;    /* TSC -> perf -> monotonic */
	struct pt_cpu *cpus;             /* per traced CPU */
	int ncpus;                       /* entries in cpus */
	size_t page;                     /* page size */
	size_t sb_pages;                 /* sideband data pages */
	int frozen;                      /* 1 between freeze and enable */
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t read_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return (uint64_t)mono_ns();
#endif
}

void sptd_col_pt_attr_set_aux_action(struct perf_event_attr *attr, uint32_t bits)
{
	memcpy((char *)attr + offsetof(struct perf_event_attr, aux_sample_size) + 4, &bits,
	       sizeof(bits));
}

int sptd_col_pt_aux_pause_probe(const struct sptd_col_pt_pmu *pmu, int cpu)
{
	struct perf_event_attr attr;
	int fd, e;

	if (!pmu)
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pmu->type;
	attr.disabled = 1;
	attr.exclude_hv = 1;
	if (pmu->tsc.present) {
		uint64_t cfg[3] = { 0, 0, 0 };

		sptd_col_pt_term_set(&pmu->tsc, 1, cfg);
		attr.config = cfg[0];
		attr.config1 = cfg[1];
		attr.config2 = cfg[2];
	}
	/* a kernel that does not know aux_action rejects the non-zero
	 * reserved bits with EINVAL */
	sptd_col_pt_attr_set_aux_action(&attr, SPTD_PT_AUX_START_PAUSED);
	fd = sptd_col_sys.perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		sptd_col_sys.close(fd);
		return 1;
	}
	e = errno;
	return e == EINVAL || e == EOPNOTSUPP ? 0 : -e;
}

/* ---- time ------------------------------------------------------------------- */

/* TSC -> perf clock from the mmap page (seqlock-read), then perf clock ->
 * CLOCK_MONOTONIC by reading both clocks together a few times. */
static void time_setup(struct sptd_col_pt *pt, const struct perf_event_mmap_page *pg)
{
	struct sptd_col_pt_time *t = &pt->time;
	int64_t best = INT64_MAX;
	uint32_t seq;

	memset(t, 0, sizeof(*t));
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		t->from_perf = pg->cap_user_time_zero;
		t->mult = pg->time_mult;
		t->shift = pg->time_shift;
		t->zero_ns = (int64_t)pg->time_zero;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE) != seq);
	if (!t->from_perf || t->shift > 63) {
		/* No conversion offered: measure the TSC against the monotonic
		 * clock over 5 ms and let the incident clock be that line. */
		uint64_t tsc0 = read_tsc(), tsc1;
		int64_t m0 = mono_ns(), m1;
		struct timespec nap = { 0, 5000000 };

		nanosleep(&nap, NULL);
		tsc1 = read_tsc();
		m1 = mono_ns();
		t->from_perf = 0;
		t->shift = 24;
		t->mult = tsc1 > tsc0 ? (uint32_t)(((unsigned __int128)(m1 - m0) << 24) / (tsc1 - tsc0)) : 1u << 24;
		t->zero_tsc = tsc0;
		t->zero_ns = m0;
		t->mono_offset_ns = 0;
		return;
	}
	for (int i = 0; i < 5; i++) {
		int64_t a = mono_ns();
		uint64_t tsc = read_tsc();
		int64_t b = mono_ns();

		if (b - a < best) {
			best = b - a;
			t->mono_offset_ns = a + (b - a) / 2 - sptd_col_pt_time_ns(t, tsc);
		}
	}
}

/* ---- opening ------------------------------------------------------------------ */

static int open_error(int err, const char *what, int cpu, char *msg, size_t len)
{
	snprintf(msg, len, "perf_event_open(%s, cpu %d): %s%s", what, cpu, strerror(err),
	         err == EACCES || err == EPERM ? " (system-wide PT needs root or CAP_PERFMON)" :
	         err == EBUSY ? " (another user of intel_pt holds the PMU: stop perf/magic-trace)" :
	         err == EINVAL ? " (the kernel refused the config: see sysptd doctor)" : "");
	return -err;
}

static int open_cpu(struct sptd_col_pt *pt, struct pt_cpu *c, char *err, size_t errlen)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	uint64_t st = sptd_col_pt_sideband_sample_type();

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pt->setup.type;
	attr.config = pt->setup.config[0];
	attr.config1 = pt->setup.config[1];
	attr.config2 = pt->setup.config[2];
	attr.sample_period = 1;
	attr.sample_type = st;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	attr.exclude_kernel = (uint64_t)pt->setup.exclude_kernel;
	attr.exclude_hv = 1;
	c->pt_fd = sptd_col_sys.perf_event_open(&attr, -1, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->pt_fd < 0) {
		c->pt_fd = -1;
		return open_error(errno, "intel_pt", c->cpu, err, errlen);
	}
	c->pt_len = (1 + PT_DATA_PAGES) * pt->page;
	c->pt_base = sptd_col_sys.mmap(NULL, c->pt_len, PROT_READ | PROT_WRITE, MAP_SHARED,
	                               c->pt_fd, 0);
	if (c->pt_base == MAP_FAILED) {
		c->pt_base = NULL;
		snprintf(err, errlen, "mmap of the intel_pt data ring on cpu %d: %s", c->cpu,
		         strerror(errno));
		return -errno;
	}
	pg = c->pt_base;
	pg->aux_offset = c->pt_len;
	pg->aux_size = pt->setup.aux_bytes;
	c->aux_len = (size_t)pt->setup.aux_bytes;
	/* read-only: overwrite (snapshot) mode */
	c->aux_base = sptd_col_sys.mmap(NULL, c->aux_len, PROT_READ, MAP_SHARED, c->pt_fd,
	                                (off_t)c->pt_len);
	if (c->aux_base == MAP_FAILED) {
		int e = errno;

		c->aux_base = NULL;
		snprintf(err, errlen, "mmap of a %zu KiB AUX ring on cpu %d: %s%s", c->aux_len / 1024,
		         c->cpu, strerror(e), e == ENOMEM || e == EPERM ?
		         " (try a smaller --buffer, or raise /proc/sys/kernel/perf_event_mlock_kb)" : "");
		return -e;
	}
	c->aux_copy = malloc(c->aux_len);
	if (!c->aux_copy) {
		snprintf(err, errlen, "out of memory for the AUX copy");
		return -ENOMEM;
	}

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_period = 1;
	attr.sample_type = st;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	attr.context_switch = 1;
	attr.write_backward = 1;
	c->sb_fd = sptd_col_sys.perf_event_open(&attr, -1, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->sb_fd < 0) {
		c->sb_fd = -1;
		return open_error(errno, "sideband dummy", c->cpu, err, errlen);
	}
	c->sb_len = (1 + pt->sb_pages) * pt->page;
	c->sb_base = sptd_col_sys.mmap(NULL, c->sb_len, PROT_READ, MAP_SHARED, c->sb_fd, 0);
	if (c->sb_base == MAP_FAILED) {
		c->sb_base = NULL;
		snprintf(err, errlen, "mmap of the sideband ring on cpu %d: %s", c->cpu, strerror(errno));
		return -errno;
	}
	return 0;
}

int sptd_col_pt_create(const struct sptd_col_pt_config *cfg, struct sptd_col_pt **out,
                       char *err, size_t errlen)
{
	struct sptd_col_pt *pt = NULL;
	char scratch[8];
	int ret;

	if (!err) {
		err = scratch;
		errlen = sizeof(scratch);
	}
	err[0] = '\0';
	if (!out || !cfg || !cfg->cpus || cfg->ncpus <= 0 ||
	    (cfg->sideband_pages & (cfg->sideband_pages - 1)) != 0) {
		snprintf(err, errlen, "bad PT source configuration");
		return -EINVAL;
	}
	*out = NULL;
	pt = calloc(1, sizeof(*pt));
	if (!pt)
		return -ENOMEM;
	pt->page = (size_t)sysconf(_SC_PAGESIZE);
	pt->sb_pages = cfg->sideband_pages ? cfg->sideband_pages : SB_DEFAULT_PAGES;
	ret = sptd_col_pt_pmu_read(&pt->pmu, err, errlen);
	if (ret < 0)
		goto fail;
	ret = sptd_col_pt_setup_build(&pt->pmu, &cfg->req, &pt->setup, err, errlen);
	if (ret < 0)
		goto fail;
	sptd_col_pt_cpu_identify(&pt->cpuid);
	if (cfg->cpu_family > 0) {
		pt->cpuid.family = cfg->cpu_family;
		pt->cpuid.model = cfg->cpu_model;
		pt->cpuid.stepping = cfg->cpu_stepping;
	} else if (strcmp(pt->cpuid.vendor, "GenuineIntel") != 0) {
		pt->cpuid.family = pt->cpuid.model = pt->cpuid.stepping = 0;
	}
	pt->cpus = calloc((size_t)cfg->ncpus, sizeof(*pt->cpus));
	if (!pt->cpus) {
		ret = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < cfg->ncpus; i++) {
		pt->cpus[i].cpu = cfg->cpus[i];
		pt->cpus[i].pt_fd = pt->cpus[i].sb_fd = pt->cpus[i].resume_fd = -1;
	}
	pt->ncpus = cfg->ncpus;
	for (int i = 0; i < pt->ncpus; i++) {
		ret = open_cpu(pt, &pt->cpus[i], err, errlen);
		if (ret < 0)
			goto fail;
	}
	time_setup(pt, pt->cpus[0].pt_base);
	*out = pt;
	return 0;
fail:
	sptd_col_pt_destroy(pt);
	return ret;
}

const struct sptd_col_pt_setup *sptd_col_pt_setup(const struct sptd_col_pt *pt)
{
	return pt ? &pt->setup : NULL;
}

/* ---- enable / freeze ---------------------------------------------------------- */

int sptd_col_pt_enable(struct sptd_col_pt *pt)
{
	int ret = 0;

	if (!pt)
		return -EINVAL;
	for (int i = 0; i < pt->ncpus; i++) {
		struct pt_cpu *c = &pt->cpus[i];

		if (pt->frozen && sptd_col_sys.ioctl(c->sb_fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0) < 0)
			ret = -errno;
		if (sptd_col_sys.ioctl(c->sb_fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			ret = -errno;
	}
	for (int i = 0; i < pt->ncpus; i++)
		if (sptd_col_sys.ioctl(pt->cpus[i].pt_fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			ret = -errno;
	if (ret < 0)
		sptd_col_log(LOG_ERR, "cannot enable the PT events: %s", strerror(-ret));
	pt->frozen = 0;
	return ret;
}

static int sb_grow(struct pt_cpu *c, size_t need)
{
	if (c->sb_copy_len + need <= c->sb_copy_cap)
		return 0;
	{
		size_t cap = c->sb_copy_cap ? c->sb_copy_cap : 65536;
		unsigned char *more;

		while (cap < c->sb_copy_len + need)
			cap *= 2;
		more = realloc(c->sb_copy, cap);
		if (!more)
			return -ENOMEM;
		c->sb_copy = more;
		c->sb_copy_cap = cap;
	}
	return 0;
}

/* Records of a backward ring come newest first: gather them, then reverse
 * record by record into sb_copy. */
struct walk_ctx {
	unsigned char *buf;      /* records newest first */
	size_t len, cap;         /* used / allocated */
	size_t *offs;            /* start of each record in buf */
	size_t n, ocap;          /* records / allocated */
};

static int on_backward(void *arg, const void *rec, size_t len)
{
	struct walk_ctx *w = arg;

	if (w->len + len > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 65536;
		unsigned char *more;

		while (cap < w->len + len)
			cap *= 2;
		more = realloc(w->buf, cap);
		if (!more)
			return -ENOMEM;
		w->buf = more;
		w->cap = cap;
	}
	if (w->n == w->ocap) {
		size_t cap = w->ocap ? w->ocap * 2 : 256;
		size_t *more = realloc(w->offs, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		w->offs = more;
		w->ocap = cap;
	}
	memcpy(w->buf + w->len, rec, len);
	w->offs[w->n++] = w->len;
	w->len += len;
	return 0;
}

static int copy_sideband(struct pt_cpu *c, size_t page)
{
	const struct perf_event_mmap_page *pg = c->sb_base;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	struct walk_ctx w = { 0 };
	int ret;

	c->sb_copy_len = 0;
	ret = sptd_col_ring_walk_backward((const unsigned char *)c->sb_base + page,
	                                  c->sb_len - page, head, on_backward, &w);
	if (ret >= 0)
		ret = sb_grow(c, w.len);
	for (size_t i = w.n; ret >= 0 && i-- > 0;) {
		size_t end = i + 1 < w.n ? w.offs[i + 1] : w.len;

		memcpy(c->sb_copy + c->sb_copy_len, w.buf + w.offs[i], end - w.offs[i]);
		c->sb_copy_len += end - w.offs[i];
	}
	free(w.buf);
	free(w.offs);
	return ret < 0 ? ret : 0;
}

/* The PT event's forward ring: everything from data_tail to data_head,
 * then tell the kernel it was consumed. */
static int copy_pt_records(struct pt_cpu *c, size_t page)
{
	struct perf_event_mmap_page *pg = c->pt_base;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail, size = c->pt_len - page, len = head - tail;
	unsigned char *copy;

	c->ptr_copy_len = 0;
	if (len > size)
		len = size;   /* cannot happen with a consumer; be safe */
	if (!len)
		return 0;
	copy = realloc(c->ptr_copy, (size_t)len);
	if (!copy)
		return -ENOMEM;
	c->ptr_copy = copy;
	sptd_col_ring_copy((const unsigned char *)c->pt_base + page, size, head, len, copy);
	c->ptr_copy_len = (size_t)len;
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	return 0;
}

int sptd_col_pt_freeze(struct sptd_col_pt *pt)
{
	int ret = 0;

	if (!pt)
		return -EINVAL;
	/* Stop the PMUs first, as close together as possible: everything
	 * after is copying. */
	for (int i = 0; i < pt->ncpus; i++)
		if (sptd_col_sys.ioctl(pt->cpus[i].pt_fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
			ret = -errno;
	for (int i = 0; i < pt->ncpus; i++)
		if (sptd_col_sys.ioctl(pt->cpus[i].sb_fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0)
			ret = -errno;
	pt->frozen = 1;
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot stop the PT events: %s", strerror(-ret));
		return ret;
	}
	for (int i = 0; i < pt->ncpus && ret >= 0; i++) {
		struct pt_cpu *c = &pt->cpus[i];
		const struct perf_event_mmap_page *pg = c->pt_base;
		uint64_t aux_head = __atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE);
		int64_t n = sptd_col_pt_aux_copy(c->aux_base, c->aux_len, aux_head, c->aux_copy);

		c->aux_copy_len = n > 0 ? (size_t)n : 0;
		ret = copy_sideband(c, pt->page);
		if (ret >= 0)
			ret = copy_pt_records(c, pt->page);
	}
	return ret;
}

/* ---- writing ------------------------------------------------------------------- */

int64_t sptd_col_pt_write(struct sptd_col_pt *pt, struct sptd_store *st)
{
	uint64_t sample_type = sptd_col_pt_sideband_sample_type();
	int64_t bytes = 0;
	int ret;

	if (!pt || !st)
		return -EINVAL;
	ret = sptd_col_pt_meta_write(st, &pt->pmu, &pt->setup, &pt->cpuid, &pt->time);
	for (int i = 0; i < pt->ncpus && ret >= 0; i++) {
		struct pt_cpu *c = &pt->cpus[i];

		if (c->aux_copy_len) {
			ret = sptd_store_raw_pt_add(st, c->cpu, 0, c->aux_copy, c->aux_copy_len);
			bytes += (int64_t)c->aux_copy_len;
		}
		if (ret >= 0)
			ret = sptd_col_pt_sideband_store(st, c->cpu, 0, c->sb_copy, c->sb_copy_len,
			                                 sample_type, pt->time.mono_offset_ns);
		if (ret >= 0)
			ret = sptd_col_pt_sideband_store(st, c->cpu, 1, c->ptr_copy, c->ptr_copy_len,
			                                 sample_type, pt->time.mono_offset_ns);
	}
	return ret < 0 ? ret : bytes;
}

struct pid_ctx {
	int *pids;
	int max, n;
};

static void pid_note(struct pid_ctx *p, int pid)
{
	for (int i = 0; i < p->n && i < p->max; i++)
		if (p->pids[i] == pid)
			return;
	if (p->n < p->max)
		p->pids[p->n] = pid;
	p->n++;
}

static int on_pid(void *arg, const struct sptd_col_pt_record *r)
{
	struct pid_ctx *p = arg;

	if (r->pid > 0)
		pid_note(p, r->pid);
	if (r->has_id && r->id_pid > 0)
		pid_note(p, r->id_pid);
	if (r->type == PERF_RECORD_SWITCH_CPU_WIDE && r->other_pid > 0)
		pid_note(p, r->other_pid);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int sptd_col_pt_pids(const struct sptd_col_pt *pt, int *pids, int max)
{
	struct pid_ctx p = { .pids = pids, .max = max };
	uint64_t st = sptd_col_pt_sideband_sample_type();

	if (!pt || (!pids && max > 0) || max < 0)
		return -EINVAL;
	for (int i = 0; i < pt->ncpus; i++) {
		sptd_col_pt_sideband_parse(pt->cpus[i].sb_copy, pt->cpus[i].sb_copy_len, st, on_pid, &p);
		sptd_col_pt_sideband_parse(pt->cpus[i].ptr_copy, pt->cpus[i].ptr_copy_len, st,
		                           on_pid, &p);
	}
	qsort(pids, (size_t)(p.n < max ? p.n : max), sizeof(int), cmp_int);
	return p.n;
}

/* ---- AUX pause: resuming ------------------------------------------------------ */

/* A trigger that pauses PT in the kernel leaves it paused (the pause is
 * sticky: disable/enable does not clear it).  Only a group sibling with
 * aux_resume can resume it, on its own CPU; sysptd's is a sched_yield
 * syscall tracepoint filtered to sysptd itself, fired by yielding once on
 * each CPU. */
int sptd_col_pt_resume_open(struct sptd_col_pt *pt, char *err, size_t errlen)
{
	char filter[64];
	int id = -1, ret;

	if (!pt || !err)
		return -EINVAL;
	ret = sptd_sched_event_exists("syscalls", "sys_enter_sched_yield", &id);
	if (ret <= 0) {
		snprintf(err, errlen, "no syscalls:sys_enter_sched_yield tracepoint to resume PT with");
		return ret < 0 ? ret : -ENOENT;
	}
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
	for (int i = 0; i < pt->ncpus; i++) {
		struct pt_cpu *c = &pt->cpus[i];
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = (uint64_t)id;
		attr.sample_period = 1;
		sptd_col_pt_attr_set_aux_action(&attr, SPTD_PT_AUX_RESUME);
		c->resume_fd = sptd_col_sys.perf_event_open(&attr, -1, c->cpu, c->pt_fd,
		                                            PERF_FLAG_FD_CLOEXEC);
		if (c->resume_fd < 0) {
			ret = -errno;
			c->resume_fd = -1;
			snprintf(err, errlen, "perf_event_open(aux_resume sibling, cpu %d): %s", c->cpu,
			         strerror(-ret));
			goto fail;
		}
		if (sptd_col_sys.ioctl(c->resume_fd, PERF_EVENT_IOC_SET_FILTER,
		                       (unsigned long)filter) < 0 ||
		    sptd_col_sys.ioctl(c->resume_fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
			ret = -errno;
			snprintf(err, errlen, "setting up the aux_resume sibling on cpu %d: %s", c->cpu,
			         strerror(-ret));
			goto fail;
		}
	}
	return 0;
fail:
	for (int i = 0; i < pt->ncpus; i++) {
		if (pt->cpus[i].resume_fd >= 0)
			sptd_col_sys.close(pt->cpus[i].resume_fd);
		pt->cpus[i].resume_fd = -1;
	}
	return ret;
}

int sptd_col_pt_resume(struct sptd_col_pt *pt)
{
	cpu_set_t saved, one;
	int n = 0;

	if (!pt)
		return -EINVAL;
	if (sched_getaffinity(0, sizeof(saved), &saved) < 0)
		return -errno;
	for (int i = 0; i < pt->ncpus; i++) {
		if (pt->cpus[i].resume_fd < 0 || pt->cpus[i].cpu >= CPU_SETSIZE)
			continue;
		CPU_ZERO(&one);
		CPU_SET(pt->cpus[i].cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			continue;   /* offline meanwhile */
		syscall(SYS_sched_yield);
		n++;
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	return n;
}

int sptd_col_pt_records(const struct sptd_col_pt *pt, sptd_col_pt_record_fn fn, void *ctx)
{
	uint64_t st = sptd_col_pt_sideband_sample_type();
	int total = 0;

	if (!pt || !fn)
		return -EINVAL;
	for (int i = 0; i < pt->ncpus; i++) {
		const struct pt_cpu *c = &pt->cpus[i];
		int n = sptd_col_pt_sideband_parse(c->sb_copy, c->sb_copy_len, st, fn, ctx);

		/* a malformed tail loses what follows it, not the rest */
		if (n < 0 && n != -EBADMSG)
			return n;
		total += n > 0 ? n : 0;
		n = sptd_col_pt_sideband_parse(c->ptr_copy, c->ptr_copy_len, st, fn, ctx);
		if (n < 0 && n != -EBADMSG)
			return n;
		total += n > 0 ? n : 0;
	}
	return total;
}

int sptd_col_pt_fd(const struct sptd_col_pt *pt, int cpu)
{
	if (!pt)
		return -EINVAL;
	for (int i = 0; i < pt->ncpus; i++)
		if (pt->cpus[i].cpu == cpu)
			return pt->cpus[i].pt_fd;
	return -ENOENT;
}

void sptd_col_pt_destroy(struct sptd_col_pt *pt)
{
	if (!pt)
		return;
	for (int i = 0; i < pt->ncpus; i++) {
		struct pt_cpu *c = &pt->cpus[i];

		if (c->pt_fd >= 0)
			sptd_col_sys.ioctl(c->pt_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (c->sb_fd >= 0)
			sptd_col_sys.ioctl(c->sb_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (c->aux_base)
			sptd_col_sys.munmap(c->aux_base, c->aux_len);
		if (c->pt_base)
			sptd_col_sys.munmap(c->pt_base, c->pt_len);
		if (c->sb_base)
			sptd_col_sys.munmap(c->sb_base, c->sb_len);
		if (c->resume_fd >= 0)
			sptd_col_sys.close(c->resume_fd);
		if (c->pt_fd >= 0)
			sptd_col_sys.close(c->pt_fd);
		if (c->sb_fd >= 0)
			sptd_col_sys.close(c->sb_fd);
		free(c->aux_copy);
		free(c->sb_copy);
		free(c->ptr_copy);
	}
	free(pt->cpus);
	free(pt);
}
