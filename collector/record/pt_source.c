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
 * Freeze: disable every PT event (the PMU stops and publishes aux_head),
 * pause output of every sideband ring, then the copies; enable undoes both.
 * The AUX copy holds only what the PMU wrote since the last enable: the
 * kernel resumes at the old head over the previous incident's trace. 
 *
 * The clocks (TSC -> perf clock -> CLOCK_MONOTONIC, measured at create and
 * at every freeze) are in pt_clock.c.
 *
 * Events and rings go through collector/perf's API, whose syscalls go
 * through sptd_col_sys, so tests run this file against a fake PMU. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <syslog.h>
#include <unistd.h>

#include "plan-local.h"
#include "pt-local.h"
#include "sptd_store.h"

/* Data pages of the PT event's own ring: it only holds AUX/ITRACE_START
 * records between two freezes. */
#define PT_DATA_PAGES 8
#define SB_DEFAULT_PAGES 64
/* The kernel-code change ring: TEXT_POKE and KSYMBOL records only (a few
 * dozen bytes each), the newest kept. */
#define POKE_PAGES 8

/* One CPU's events, mappings and last copy. */
struct pt_cpu {
	int cpu;                 /* CPU number */
	int pt_fd, sb_fd;        /* intel_pt event, sideband dummy (-1: none) */
	int resume_fd;           /* AUX pause: aux_resume sibling of pt_fd (-1: none) */
	int resume_err;          /* errno of the last resume that failed here, 0 none */
	struct sptd_col_perf_ring pt_ring; /* user page + PT_DATA_PAGES data
	                          * pages (read-write) + the AUX ring (read-only,
	                          * setup.aux_bytes) */
	struct sptd_col_perf_ring sb_ring; /* sideband user page + data pages */
	struct sptd_col_pt_aux_mark aux_mark; /* the AUX ring at the last enable:
	                          * a freeze keeps only what came after */
	unsigned char *aux_copy; /* last freeze: PT bytes, oldest first */
	size_t aux_copy_len;     /* valid bytes in aux_copy */
	unsigned char *sb_copy;  /* last freeze: sideband records, oldest first */
	size_t sb_copy_len, sb_copy_cap; /* used / allocated */
	unsigned char *ptr_copy; /* last freeze: the PT event's own records */
	size_t ptr_copy_len;     /* valid bytes in ptr_copy */
	int poke_fd;             /* dummy asking TEXT_POKE and KSYMBOL, never
	                          * paused by a freeze (-1: none) */
	struct sptd_col_perf_ring poke_ring; /* its backward ring */
	unsigned char *poke_copy; /* after the last kcore copy: its records */
	size_t poke_copy_len, poke_copy_cap; /* used / allocated */
};

struct sptd_col_pt {
	struct sptd_col_pt_pmu pmu;      /* what sysfs said */
	struct sptd_col_pt_setup setup;  /* config in use (aux_bytes: the smallest
	                                  * ring any CPU got) */
	uint64_t aux_planned;            /* the AUX ring the plan asked for */
	struct sptd_col_pt_cpu cpuid;    /* CPU identity for decode */
	struct sptd_col_pt_time time;    /* TSC -> perf -> monotonic */
	struct pt_cpu *cpus;             /* per traced CPU */
	int ncpus;                       /* entries in cpus */
	size_t sb_pages;                 /* sideband data pages */
	int frozen;                      /* 1 between freeze and enable */
	int text_poke;                   /* 1: a poke event per CPU asks for TEXT_POKE
	                                  * and KSYMBOL records; 0: user only, or the
	                                  * kernel refused (older than 5.9) */
};

int sptd_col_pt_aux_pause_probe(const struct sptd_col_pt_pmu *pmu, int cpu)
{
	struct sptd_col_perf_event ev = {
		.flags = SPTD_PERF_EV_DISABLED | SPTD_PERF_EV_EXCLUDE_HV,
		/* a kernel that does not know aux_action rejects the
		 * non-zero reserved bits with EINVAL */
		.aux_action = SPTD_PERF_AUX_START_PAUSED,
	};
	int fd;

	if (!pmu)
		return -EINVAL;
	ev.type = pmu->type;
	if (pmu->tsc.present)
		sptd_col_pt_term_set(&pmu->tsc, 1, ev.config);
	fd = sptd_col_perf_event_open(&ev, -1, cpu, -1);
	if (fd >= 0) {
		sptd_col_sys.close(fd);
		return 1;
	}
	return fd == -EINVAL || fd == -EOPNOTSUPP ? 0 : fd;
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

/* Map @c's AUX ring read-only: overwrite (snapshot) mode.
 *
 * Without multiple ToPA entries (caps/topa_multiple_entries 0, which makes
 * the kernel give intel_pt PERF_PMU_CAP_AUX_NO_SG) an overwrite ring must
 * be one physically contiguous allocation of the whole size
 * (kernel/events/ring_buffer.c rb_alloc_aux: "the entire buffer has to be
 * one contiguous chunk", else -ENOMEM), which a machine whose memory is
 * fragmented may not have even with plenty free.  perf reports the ENOMEM
 * and stops; here the ring is halved until it fits (16 pages at least), a
 * warning says what was obtained, and the setup's aux_bytes and coverage
 * become the smallest ring of any CPU. */
static int map_aux(struct sptd_col_pt *pt, struct pt_cpu *c, char *err, size_t errlen)
{
	size_t want = (size_t)pt->setup.aux_bytes, bytes = want;
	size_t floor = 16 * (c->pt_ring.page ? c->pt_ring.page : 4096);
	int ret;

	for (;;) {
		ret = sptd_col_perf_ring_map_aux(&c->pt_ring, c->pt_fd, bytes, 0);
		if (ret != -ENOMEM || pt->pmu.topa_multiple || bytes / 2 < floor)
			break;
		bytes /= 2;
	}
	if (ret == 0 && bytes < want) {
		pt->setup.aux_bytes = bytes;
		pt->setup.coverage_ns = sptd_col_plan_coverage_ns(bytes, pt->setup.rate_bytes_s);
		sptd_col_log(LOG_WARNING, "cpu %d: no %zu KiB of physically contiguous memory for its "
		             "AUX ring (this CPU's PT has a single ToPA entry, "
		             "caps/topa_multiple_entries 0, so the ring is one allocation; memory "
		             "is fragmented): using %zu KiB, about %" PRId64 " ms of PT per CPU "
		             "(compact memory with 'echo 1 > /proc/sys/vm/compact_memory' and "
		             "restart for more)", c->cpu, want / 1024, bytes / 1024,
		             pt->setup.coverage_ns / 1000000);
	}
	if (ret == -ENOMEM && !pt->pmu.topa_multiple)
		snprintf(err, errlen, "mmap of a %zu KiB AUX ring on cpu %d: %s (no physically "
		         "contiguous memory even for %zu KiB: this CPU's PT has a single ToPA entry, "
		         "caps/topa_multiple_entries 0, so the ring is one allocation; compact memory "
		         "with 'echo 1 > /proc/sys/vm/compact_memory' or use --source sample)",
		         want / 1024, c->cpu, strerror(-ret), bytes / 1024);
	else if (ret == -ENOMEM)
		snprintf(err, errlen, "mmap of a %zu KiB AUX ring on cpu %d: %s (the kernel is out of "
		         "memory for it: try a smaller --buffer)", want / 1024, c->cpu, strerror(-ret));
	else if (ret == -EPERM)
		snprintf(err, errlen, "mmap of a %zu KiB AUX ring on cpu %d: %s (over "
		         "/proc/sys/kernel/perf_event_mlock_kb without CAP_IPC_LOCK: raise it, or "
		         "try a smaller --buffer)", want / 1024, c->cpu, strerror(-ret));
	else if (ret < 0)
		snprintf(err, errlen, "mmap of a %zu KiB AUX ring on cpu %d: %s", want / 1024, c->cpu,
		         strerror(-ret));
	return ret;
}

/* Kernel text rewritten while PT runs (static keys, ftrace, kprobes:
 * arch/x86/kernel/alternative.c text_poke_bp) and kernel code made or
 * dropped (BPF JIT, trampolines): the kcore copy is taken after the freeze
 * and the re-arm, so decoding needs every rewrite up to the copy's end, as
 * perf record --kcore pairs the copy with attr.text_poke and
 * attr.ksymbol.  A dummy of their own asks for them: the freeze pauses the
 * sideband rings, and a rewrite made while they are paused, or after the
 * re-arm but before the copy, would be in neither ring nor record.  This
 * one stays on through freeze, re-arm and copy (sptd_col_pt_pokes_store
 * reads it after the copy).  A kernel older than 5.9 refuses the bits it
 * does not know (EINVAL): then no poke event. */
static int open_poke(struct sptd_col_pt *pt, struct pt_cpu *c, char *err, size_t errlen)
{
	struct sptd_col_perf_event ev = {
		.type = SPTD_PERF_TYPE_SOFTWARE,
		.config = { SPTD_PERF_COUNT_SW_DUMMY },
		.period = 1,
		.sample_type = sptd_col_pt_sideband_sample_type(),
		.flags = SPTD_PERF_EV_SAMPLE_ID_ALL | SPTD_PERF_EV_DISABLED | SPTD_PERF_EV_TEXT_POKE |
		         SPTD_PERF_EV_KSYMBOL | SPTD_PERF_EV_WRITE_BACKWARD,
	};
	int ret;

	c->poke_fd = sptd_col_perf_event_open(&ev, -1, c->cpu, -1);
	if (c->poke_fd == -EINVAL) {
		pt->text_poke = 0;
		c->poke_fd = -1;
		return 0;
	}
	if (c->poke_fd < 0) {
		ret = c->poke_fd;
		c->poke_fd = -1;
		return open_error(-ret, "text poke dummy", c->cpu, err, errlen);
	}
	ret = sptd_col_perf_ring_map(&c->poke_ring, c->poke_fd, POKE_PAGES, 0);
	if (ret < 0)
		snprintf(err, errlen, "mmap of the text poke ring on cpu %d: %s", c->cpu,
		         strerror(-ret));
	return ret;
}

static int open_cpu(struct sptd_col_pt *pt, struct pt_cpu *c, char *err, size_t errlen)
{
	uint64_t st = sptd_col_pt_sideband_sample_type();
	struct sptd_col_perf_event pt_ev = {
		.type = pt->setup.type,
		.config = { pt->setup.config[0], pt->setup.config[1], pt->setup.config[2] },
		.period = 1,
		.sample_type = st,
		.flags = SPTD_PERF_EV_SAMPLE_ID_ALL | SPTD_PERF_EV_DISABLED | SPTD_PERF_EV_EXCLUDE_HV |
		         (pt->setup.exclude_kernel ? SPTD_PERF_EV_EXCLUDE_KERNEL : 0),
	};
	struct sptd_col_perf_event sb_ev = {
		.type = SPTD_PERF_TYPE_SOFTWARE,
		.config = { SPTD_PERF_COUNT_SW_DUMMY },
		.period = 1,
		.sample_type = st,
		.flags = SPTD_PERF_EV_SAMPLE_ID_ALL | SPTD_PERF_EV_DISABLED | SPTD_PERF_EV_MMAP |
		         SPTD_PERF_EV_MMAP2 | SPTD_PERF_EV_COMM | SPTD_PERF_EV_COMM_EXEC |
		         SPTD_PERF_EV_TASK | SPTD_PERF_EV_CONTEXT_SWITCH | SPTD_PERF_EV_WRITE_BACKWARD,
	};
	int ret;

	c->pt_fd = sptd_col_perf_event_open(&pt_ev, -1, c->cpu, -1);
	if (c->pt_fd < 0) {
		ret = c->pt_fd;
		c->pt_fd = -1;
		return open_error(-ret, "intel_pt", c->cpu, err, errlen);
	}
	/* read-write: sysptd consumes the AUX/ITRACE_START records */
	ret = sptd_col_perf_ring_map(&c->pt_ring, c->pt_fd, PT_DATA_PAGES, 1);
	if (ret < 0) {
		snprintf(err, errlen, "mmap of the intel_pt data ring on cpu %d: %s", c->cpu,
		         strerror(-ret));
		return ret;
	}
	ret = map_aux(pt, c, err, errlen);
	if (ret < 0)
		return ret;
	c->aux_copy = malloc(c->pt_ring.aux_len);
	if (!c->aux_copy) {
		snprintf(err, errlen, "out of memory for the AUX copy");
		return -ENOMEM;
	}

	c->sb_fd = sptd_col_perf_event_open(&sb_ev, -1, c->cpu, -1);
	if (c->sb_fd < 0) {
		ret = c->sb_fd;
		c->sb_fd = -1;
		return open_error(-ret, "sideband dummy", c->cpu, err, errlen);
	}
	ret = sptd_col_perf_ring_map(&c->sb_ring, c->sb_fd, pt->sb_pages, 0);
	if (ret < 0) {
		snprintf(err, errlen, "mmap of the sideband ring on cpu %d: %s", c->cpu,
		         strerror(-ret));
		return ret;
	}
	return pt->text_poke && !pt->setup.exclude_kernel ? open_poke(pt, c, err, errlen) : 0;
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
	pt->sb_pages = cfg->sideband_pages ? cfg->sideband_pages : SB_DEFAULT_PAGES;
	pt->text_poke = 1;
	ret = sptd_col_pt_pmu_read(&pt->pmu, err, errlen);
	if (ret < 0)
		goto fail;
	ret = sptd_col_pt_setup_build(&pt->pmu, &cfg->req, &pt->setup, err, errlen);
	if (ret < 0)
		goto fail;
	pt->aux_planned = pt->setup.aux_bytes;
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
		pt->cpus[i].poke_fd = -1;
	}
	pt->ncpus = cfg->ncpus;
	for (int i = 0; i < pt->ncpus; i++) {
		ret = open_cpu(pt, &pt->cpus[i], err, errlen);
		if (ret < 0)
			goto fail;
	}
	sptd_col_pt_time_setup(&pt->time, &pt->cpus[0].pt_ring);
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
		int r = pt->frozen ? sptd_col_perf_event_pause_output(c->sb_fd, 0) : 0;

		if (r < 0)
			ret = r;
		r = sptd_col_perf_event_enable(c->sb_fd);
		if (r >= 0 && c->poke_fd >= 0)
			r = sptd_col_perf_event_enable(c->poke_fd);   /* on already after the first */
		if (r < 0)
			ret = r;
	}
	for (int i = 0; i < pt->ncpus; i++) {
		struct pt_cpu *c = &pt->cpus[i];
		int r;

		/* the PMU is stopped: it resumes at this head over the old
		 * trace, which the next freeze must not take */
		if (c->pt_ring.aux)
			sptd_col_pt_aux_mark(c->pt_ring.aux, c->pt_ring.aux_len,
			                     sptd_col_perf_ring_aux_head(&c->pt_ring), &c->aux_mark);
		r = sptd_col_perf_event_enable(c->pt_fd);

		if (r < 0)
			ret = r;
	}
	if (ret < 0)
		sptd_col_log(LOG_ERR, "cannot enable the PT events: %s", strerror(-ret));
	pt->frozen = 0;
	return ret;
}

/* A paused write_backward ring's records, oldest first, into *@copy. */
static int copy_backward(struct sptd_col_perf_ring *ring, unsigned char **copy, size_t *len,
                         size_t *cap)
{
	uint64_t size;
	const void *data = sptd_col_perf_ring_data(ring, &size);
	int64_t n;

	*len = 0;
	n = sptd_col_ring_copy_backward(data, size, sptd_col_perf_ring_head(ring), copy, cap);
	if (n < 0)
		return (int)n;
	*len = (size_t)n;
	return 0;
}

/* The sideband ring (paused, write_backward): its records oldest first. */
static int copy_sideband(struct pt_cpu *c)
{
	return copy_backward(&c->sb_ring, &c->sb_copy, &c->sb_copy_len, &c->sb_copy_cap);
}

int sptd_col_pt_pokes_read(struct sptd_col_pt *pt)
{
	int ret = 0;

	if (!pt)
		return -EINVAL;
	/* each ring is paused only while it is copied */
	for (int i = 0; i < pt->ncpus && ret >= 0; i++) {
		struct pt_cpu *c = &pt->cpus[i];

		c->poke_copy_len = 0;
		if (c->poke_fd < 0)
			continue;
		ret = sptd_col_perf_event_pause_output(c->poke_fd, 1);
		if (ret >= 0)
			ret = copy_backward(&c->poke_ring, &c->poke_copy, &c->poke_copy_len,
			                    &c->poke_copy_cap);
		sptd_col_perf_event_pause_output(c->poke_fd, 0);
	}
	return ret < 0 ? ret : 0;
}

int sptd_col_pt_pokes_store(struct sptd_col_pt *pt, struct sptd_store *st)
{
	int ret;

	if (!pt || !st)
		return -EINVAL;
	/* the copy has ended: what the rings hold now covers it */
	ret = sptd_col_pt_pokes_read(pt);
	for (int i = 0; i < pt->ncpus && ret >= 0; i++) {
		struct pt_cpu *c = &pt->cpus[i];

		if (c->poke_fd >= 0)
			ret = sptd_col_pt_sideband_store(st, c->cpu, 2, c->poke_copy, c->poke_copy_len,
			                                 sptd_col_pt_sideband_sample_type(),
			                                 pt->time.mono_offset_ns);
	}
	return ret < 0 ? ret : 0;
}

/* The PT event's forward ring: everything from data_tail to data_head,
 * consumed (the kernel may reuse the space). */
static int copy_pt_records(struct pt_cpu *c)
{
	uint64_t len = sptd_col_perf_ring_unread(&c->pt_ring);
	unsigned char *copy;
	int64_t n;

	c->ptr_copy_len = 0;
	if (!len)
		return 0;
	copy = realloc(c->ptr_copy, (size_t)len);
	if (!copy)
		return -ENOMEM;
	c->ptr_copy = copy;
	n = sptd_col_perf_ring_consume(&c->pt_ring, copy, len);
	if (n < 0)
		return (int)n;
	c->ptr_copy_len = (size_t)n;
	return 0;
}

int sptd_col_pt_freeze(struct sptd_col_pt *pt)
{
	int ret = 0;

	if (!pt)
		return -EINVAL;
	/* Stop the PMUs first, as close together as possible: everything
	 * after is copying. */
	for (int i = 0; i < pt->ncpus; i++) {
		int r = sptd_col_perf_event_disable(pt->cpus[i].pt_fd);

		if (r < 0)
			ret = r;
	}
	for (int i = 0; i < pt->ncpus; i++) {
		int r = sptd_col_perf_event_pause_output(pt->cpus[i].sb_fd, 1);

		if (r < 0)
			ret = r;
	}
	pt->frozen = 1;
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot stop the PT events: %s", strerror(-ret));
		return ret;
	}
	for (int i = 0; i < pt->ncpus && ret >= 0; i++) {
		struct pt_cpu *c = &pt->cpus[i];
		int64_t n = sptd_col_pt_aux_copy_since(c->pt_ring.aux, c->pt_ring.aux_len,
		                                       sptd_col_perf_ring_aux_head(&c->pt_ring),
		                                       &c->aux_mark, c->aux_copy, NULL);

		c->aux_copy_len = n > 0 ? (size_t)n : 0;
		c->poke_copy_len = 0;   /* read after this incident's kcore copy */
		ret = copy_sideband(c);
		if (ret >= 0)
			ret = copy_pt_records(c);
	}
	/* the clocks as they relate now, for this incident */
	sptd_col_pt_time_measure(&pt->time, &pt->cpus[0].pt_ring);
	return ret;
}

/* ---- writing ------------------------------------------------------------------- */

/* CPUs whose PT the last resume could not restart after an AUX pause:
 * their trace stops at a trigger hit before this window.  A gap row each,
 * and meta pt_resume_failed (how many). */
static int resume_failures_write(const struct sptd_col_pt *pt, struct sptd_store *st)
{
	int64_t from = 0;
	int n = 0, ret = 0;

	sptd_store_meta_get_int(st, "window_start", &from);
	for (int i = 0; i < pt->ncpus && ret >= 0; i++) {
		char reason[160];

		if (!pt->cpus[i].resume_err)
			continue;
		snprintf(reason, sizeof(reason), "pt: AUX pause could not be undone on this cpu "
		         "(%s): its trace stops at an earlier trigger hit",
		         strerror(pt->cpus[i].resume_err));
		ret = SPTD_STORE_ADD(st, gap, from, 0, pt->cpus[i].cpu, reason);
		n++;
	}
	if (ret >= 0 && n)
		ret = sptd_store_meta_set_int(st, "pt_resume_failed", n);
	return ret;
}

int64_t sptd_col_pt_write(struct sptd_col_pt *pt, struct sptd_store *st)
{
	uint64_t sample_type = sptd_col_pt_sideband_sample_type();
	int64_t bytes = 0;
	int ret;

	if (!pt || !st)
		return -EINVAL;
	ret = sptd_col_pt_meta_write(st, &pt->pmu, &pt->setup, &pt->cpuid, &pt->time);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_aux_bytes_planned", (int64_t)pt->aux_planned);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_text_poke",
		                              pt->text_poke && !pt->setup.exclude_kernel);
	if (ret >= 0)
		ret = resume_failures_write(pt, st);
	for (int i = 0; i < pt->ncpus && ret >= 0; i++) {
		struct pt_cpu *c = &pt->cpus[i];

		if (c->aux_copy_len) {
			ret = SPTD_STORE_ADD(st, raw_pt, c->cpu, 0, c->aux_copy, c->aux_copy_len);
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

static int on_pid(void *arg, const struct sptd_col_perf_record *r)
{
	struct pid_ctx *p = arg;

	if (r->pid > 0)
		pid_note(p, r->pid);
	if (r->id.present && r->id.pid > 0)
		pid_note(p, r->id.pid);
	if (r->type == SPTD_PERF_RECORD_SWITCH_CPU_WIDE && r->other_pid > 0)
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

/* A trigger that pauses PT in the kernel leaves it paused: the pause is
 * sticky (event->hw.aux_paused is only cleared by a resume, not by
 * disable/enable), and only a group sibling with aux_resume clears it, from
 * its overflow on its own CPU (kernel/events/core.c, __perf_event_overflow
 * -> perf_event_aux_pause).  sysptd's is a cpu-clock event per CPU, kept
 * disabled; PERF_EVENT_IOC_REFRESH arms it for one overflow: its hrtimer
 * fires on that CPU a period later, resumes PT there and the kernel
 * disables it again (event_limit).  An ioctl works from any thread, on
 * every CPU, without moving the caller there (a CPU outside the service's
 * cpuset could not be reached by sched_setaffinity). */
#define RESUME_PERIOD_NS 10000   /* cpu-clock: 10 us after the refresh */

int sptd_col_pt_resume_open(struct sptd_col_pt *pt, char *err, size_t errlen)
{
	int ret = 0;

	if (!pt || !err)
		return -EINVAL;
	for (int i = 0; i < pt->ncpus; i++) {
		struct pt_cpu *c = &pt->cpus[i];
		struct sptd_col_perf_event ev = {
			.type = SPTD_PERF_TYPE_SOFTWARE,
			.config = { SPTD_PERF_COUNT_SW_CPU_CLOCK },
			.period = RESUME_PERIOD_NS,
			.flags = SPTD_PERF_EV_DISABLED,
			.aux_action = SPTD_PERF_AUX_RESUME,
		};

		c->resume_fd = sptd_col_perf_event_open(&ev, -1, c->cpu, c->pt_fd);
		if (c->resume_fd < 0) {
			ret = c->resume_fd;
			c->resume_fd = -1;
			snprintf(err, errlen, "perf_event_open(aux_resume sibling, cpu %d): %s%s", c->cpu,
			         strerror(-ret), ret == -EINVAL || ret == -EOPNOTSUPP ?
			         " (AUX pause needs Linux 6.13+)" : "");
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
	int n = 0;

	if (!pt)
		return -EINVAL;
	for (int i = 0; i < pt->ncpus; i++) {
		struct pt_cpu *c = &pt->cpus[i];
		int r;

		if (c->resume_fd < 0)
			continue;
		r = sptd_col_perf_event_refresh(c->resume_fd, 1);
		if (r < 0) {
			if (!c->resume_err)
				sptd_col_log(LOG_WARNING, "cannot resume PT on cpu %d after an AUX "
				             "pause (%s): its trace stops at the last trigger hit "
				             "until a resume succeeds", c->cpu, strerror(-r));
			c->resume_err = -r;
			continue;
		}
		c->resume_err = 0;
		n++;
	}
	return n;
}

int sptd_col_pt_records(const struct sptd_col_pt *pt, sptd_col_perf_record_fn fn, void *ctx)
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
		n = sptd_col_pt_sideband_parse(c->poke_copy, c->poke_copy_len, st, fn, ctx);
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

const int64_t *sptd_col_pt_perf_offset(const struct sptd_col_pt *pt)
{
	return pt ? &pt->time.mono_offset_ns : NULL;
}

void sptd_col_pt_destroy(struct sptd_col_pt *pt)
{
	if (!pt)
		return;
	for (int i = 0; i < pt->ncpus; i++) {
		struct pt_cpu *c = &pt->cpus[i];

		if (c->pt_fd >= 0)
			sptd_col_perf_event_disable(c->pt_fd);
		if (c->sb_fd >= 0)
			sptd_col_perf_event_disable(c->sb_fd);
		if (c->poke_fd >= 0)
			sptd_col_perf_event_disable(c->poke_fd);
		sptd_col_perf_ring_unmap(&c->pt_ring);
		sptd_col_perf_ring_unmap(&c->sb_ring);
		sptd_col_perf_ring_unmap(&c->poke_ring);
		if (c->poke_fd >= 0)
			sptd_col_sys.close(c->poke_fd);
		if (c->resume_fd >= 0)
			sptd_col_sys.close(c->resume_fd);
		if (c->pt_fd >= 0)
			sptd_col_sys.close(c->pt_fd);
		if (c->sb_fd >= 0)
			sptd_col_sys.close(c->sb_fd);
		free(c->aux_copy);
		free(c->sb_copy);
		free(c->ptr_copy);
		free(c->poke_copy);
	}
	free(pt->cpus);
	free(pt);
}
