/* sampler.c — the sampling source: one software cpu-clock perf event per
 * online CPU, system-wide, with kernel+user call chains, each writing into
 * its own overwrite (write_backward, read-only mapped) ring that always
 * holds the most recent samples.  Freezing pauses ring output; reading
 * walks each paused ring (perf/sample_ring.c).
 *
 * Beside each, when asked (sideband_pages), a dummy event whose overwrite
 * ring keeps the sideband the PT source keeps too: MMAP2 (device, inode
 * and generation; the build id when asked and the kernel gives it), COMM
 * and FORK/EXIT records, laid out as
 * the PT sideband is, so the same parser and store code read them.  A
 * process that ran in the window and exited before the capture is named
 * from them (its /proc is gone by then).
 *
 * Events, rings and ioctls go through collector/perf's API, whose syscalls
 * go through sptd_col_sys, so tests can make them fail. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "sampling-local.h"

#define SAMPLER_CPU_LIST "/sys/devices/system/cpu/online"

/* The online CPUs as a malloc'd array (*@cpus, freed by the caller) of
 * *@n numbers, through the one CPU-list parser.  -errno of the read,
 * -EINVAL for a malformed or empty list, -ENOMEM; logged. */
static int online_cpus(int **cpus, int *n)
{
	char online[4096];
	int count, *list;
	ssize_t len;

	len = sptd_col_sys.read_file(SAMPLER_CPU_LIST, online, sizeof(online));
	if (len < 0) {
		sptd_col_log(LOG_ERR, "sampling: cannot read %s: %s", SAMPLER_CPU_LIST,
		             strerror((int)-len));
		return (int)len;
	}
	count = sptd_col_cpus_parse(online, NULL, 0);
	if (count <= 0) {
		sptd_col_log(LOG_ERR, "sampling: cannot parse %s: \"%s\"", SAMPLER_CPU_LIST,
		             online);
		return -EINVAL;
	}
	list = calloc((size_t)count, sizeof(*list));
	if (!list)
		return -ENOMEM;
	*n = sptd_col_cpus_parse(online, list, count);
	*cpus = list;
	return 0;
}

/* Say why perf_event_open failed, and what to do about it. */
static void log_open_error(int err, int cpu, const struct sptd_col_sampler_config *cfg)
{
	char paranoid[32] = "?";

	switch (err) {
	case EACCES:
	case EPERM:
		if (sptd_col_sys.read_file("/proc/sys/kernel/perf_event_paranoid",
		                           paranoid, sizeof(paranoid)) > 0)
			paranoid[strcspn(paranoid, "\n")] = '\0';
		sptd_col_log(LOG_ERR, "sampling: perf_event_open on cpu %d: permission "
		             "denied (kernel.perf_event_paranoid=%s): run sysptd as root "
		             "or with CAP_PERFMON, or lower the sysctl to -1", cpu, paranoid);
		break;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		sptd_col_log(LOG_ERR, "sampling: perf_event_open on cpu %d: this kernel "
		             "has no software cpu-clock event (%s)", cpu, strerror(err));
		break;
	case EMFILE:
	case ENFILE:
		sptd_col_log(LOG_ERR, "sampling: perf_event_open on cpu %d: out of file "
		             "descriptors: raise the limit (ulimit -n)", cpu);
		break;
	case EOVERFLOW:
		sptd_col_log(LOG_ERR, "sampling: call-chain depth %d exceeds "
		             "kernel.perf_event_max_stack", cfg->max_stack);
		break;
	case EINVAL:
		sptd_col_log(LOG_ERR, "sampling: perf_event_open on cpu %d: invalid "
		             "attributes (frequency %d above kernel.perf_event_max_sample_rate? "
		             "kernel without write_backward or use_clockid?)", cpu, cfg->freq);
		break;
	default:
		sptd_col_log(LOG_ERR, "sampling: perf_event_open on cpu %d: %s",
		             cpu, strerror(err));
		break;
	}
}

static int sampler_open_cpu(struct sptd_col_sampler_cpu *c,
                            const struct sptd_col_sampler_config *cfg)
{
	struct sptd_col_perf_event ev = {
		.type = cfg->tracepoint_id > 0 ? SPTD_PERF_TYPE_TRACEPOINT : SPTD_PERF_TYPE_SOFTWARE,
		.config = { cfg->tracepoint_id > 0 ? (uint64_t)cfg->tracepoint_id :
		            SPTD_PERF_COUNT_SW_CPU_CLOCK },
		.period = cfg->tracepoint_id > 0 ? 1 : (uint64_t)cfg->freq,
		.sample_type = sptd_col_sampler_sample_type_as(cfg->stack_user != 0),
		.regs_user = cfg->stack_user ? SPTD_COL_SAMPLER_REGS_USER : 0,
		.stack_user = cfg->stack_user,
		/* Overwrite mode: the ring keeps the newest samples and is
		 * only read after PAUSE_OUTPUT, so nobody moves data_tail. */
		.flags = (cfg->tracepoint_id > 0 ? 0 : SPTD_PERF_EV_FREQ) |
		         SPTD_PERF_EV_EXCLUDE_HV | SPTD_PERF_EV_WRITE_BACKWARD |
		         (cfg->exclude_kernel ? SPTD_PERF_EV_EXCLUDE_KERNEL |
		                                SPTD_PERF_EV_EXCLUDE_CALLCHAIN_KERNEL : 0) |
		         (cfg->use_clock ? SPTD_PERF_EV_USE_CLOCKID : 0),
		.clockid = CLOCK_MONOTONIC,
		.max_stack = (uint16_t)(cfg->max_stack ? cfg->max_stack : 127),
	};
	int ret;

	c->fd = sptd_col_perf_event_open(&ev, -1, c->cpu, -1);
	if (c->fd < 0) {
		ret = c->fd;
		c->fd = -1;
		log_open_error(-ret, c->cpu, cfg);
		return ret;
	}
	ret = sptd_col_perf_ring_map(&c->ring, c->fd, cfg->ring_pages, 0);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "sampling: mapping the %zu KiB ring of cpu %d: %s%s",
		             (cfg->ring_pages + 1) * (size_t)sysconf(_SC_PAGESIZE) / 1024, c->cpu,
		             strerror(-ret), ret == -EPERM ? " (over kernel.perf_event_mlock_kb: use a "
		                                             "smaller ring or raise the sysctl)" : "");
		return ret;
	}
	return 0;
}

/* The sideband dummy event of one CPU and its ring: build ids in MMAP2
 * records where the kernel has attr.build_id (5.12+), device and inode
 * otherwise (then @s->sideband_build_id is 0). */
static int sampler_open_sideband(struct sptd_col_sampler *s, struct sptd_col_sampler_cpu *c,
                                 const struct sptd_col_sampler_config *cfg)
{
	struct sptd_col_perf_event ev = {
		.type = SPTD_PERF_TYPE_SOFTWARE,
		.config = { SPTD_PERF_COUNT_SW_DUMMY },
		.period = 1,
		.sample_type = sptd_col_pt_sideband_sample_type(),
		.flags = SPTD_PERF_EV_SAMPLE_ID_ALL | SPTD_PERF_EV_EXCLUDE_HV | SPTD_PERF_EV_MMAP |
		         SPTD_PERF_EV_MMAP2 | SPTD_PERF_EV_COMM | SPTD_PERF_EV_COMM_EXEC |
		         SPTD_PERF_EV_TASK | SPTD_PERF_EV_WRITE_BACKWARD |
		         (s->sideband_build_id ? SPTD_PERF_EV_BUILD_ID : 0) |
		         (cfg->use_clock ? SPTD_PERF_EV_USE_CLOCKID : 0),
		.clockid = CLOCK_MONOTONIC,
	};
	int ret;

	c->sb_fd = sptd_col_perf_event_open(&ev, -1, c->cpu, -1);
	if (c->sb_fd == -EINVAL && s->sideband_build_id) {
		/* a kernel before 5.12: inodes, checked against the files */
		s->sideband_build_id = 0;
		ev.flags &= ~SPTD_PERF_EV_BUILD_ID;
		c->sb_fd = sptd_col_perf_event_open(&ev, -1, c->cpu, -1);
	}
	if (c->sb_fd < 0) {
		ret = c->sb_fd;
		c->sb_fd = -1;
		sptd_col_log(LOG_ERR, "sampling: the sideband event (mappings, comms, forks) on "
		             "cpu %d: %s", c->cpu, strerror(-ret));
		return ret;
	}
	ret = sptd_col_perf_ring_map(&c->sb_ring, c->sb_fd, cfg->sideband_pages, 0);
	if (ret < 0)
		sptd_col_log(LOG_ERR, "sampling: mapping the %zu KiB sideband ring of cpu %d: %s%s",
		             (cfg->sideband_pages + 1) * (size_t)sysconf(_SC_PAGESIZE) / 1024,
		             c->cpu, strerror(-ret),
		             ret == -EPERM ? " (over kernel.perf_event_mlock_kb: raise the sysctl)" : "");
	return ret;
}

int sptd_col_sampler_create(const struct sptd_col_sampler_config *cfg,
                            struct sptd_col_sampler **out)
{
	struct sptd_col_sampler *s = NULL;
	int *cpus = NULL, ncpus = 0, i, ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg || cfg->freq <= 0 || cfg->ring_pages == 0 ||
	    (cfg->ring_pages & (cfg->ring_pages - 1)) != 0 ||
	    cfg->ring_pages > (1u << 20) || cfg->max_stack < 0 || cfg->max_stack > 65535 ||
	    (cfg->sideband_pages & (cfg->sideband_pages - 1)) != 0 ||
	    cfg->sideband_pages > (1u << 20) || cfg->stack_user % 8 ||
	    cfg->stack_user > SPTD_CALL_GRAPH_STACK_MAX) {
		sptd_col_log(LOG_ERR, "sampling: invalid configuration (frequency must be "
		             "> 0, ring and sideband pages a power of two, max stack 0..65535, "
		             "user stack a multiple of 8 up to %u)", SPTD_CALL_GRAPH_STACK_MAX);
		return -EINVAL;
	}
	if (cfg->cpus && cfg->ncpus > 0) {
		cpus = calloc((size_t)cfg->ncpus, sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
		memcpy(cpus, cfg->cpus, (size_t)cfg->ncpus * sizeof(*cpus));
		ncpus = cfg->ncpus;
	} else {
		ret = online_cpus(&cpus, &ncpus);
		if (ret < 0)
			return ret;
	}
	ret = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fail;
	s->cpus = calloc((size_t)ncpus, sizeof(*s->cpus));
	if (!s->cpus)
		goto fail;
	s->ncpus = ncpus;
	s->sideband_build_id = cfg->sideband_build_id ? 1 : 0;
	s->user_stack = cfg->stack_user != 0;
	for (i = 0; i < ncpus; i++) {
		s->cpus[i].cpu = cpus[i];
		s->cpus[i].fd = -1;
		s->cpus[i].sb_fd = -1;
	}
	for (i = 0; i < ncpus; i++) {
		ret = sampler_open_cpu(&s->cpus[i], cfg);
		if (ret >= 0 && cfg->sideband_pages)
			ret = sampler_open_sideband(s, &s->cpus[i], cfg);
		if (ret < 0)
			goto fail;
	}
	free(cpus);
	*out = s;
	return 0;
fail:
	free(cpus);
	sptd_col_sampler_destroy(s);
	return ret;
}

int sptd_col_sampler_pause(struct sptd_col_sampler *s, int paused)
{
	int i, ret = 0;

	if (!s)
		return -EINVAL;
	for (i = 0; i < s->ncpus; i++) {
		int r = sptd_col_perf_event_pause_output(s->cpus[i].fd, paused);

		if (r >= 0 && s->cpus[i].sb_fd >= 0)
			r = sptd_col_perf_event_pause_output(s->cpus[i].sb_fd, paused);

		if (r < 0 && ret == 0) {
			ret = r;
			sptd_col_log(LOG_ERR, "sampling: %s output of cpu %d: %s",
			             paused ? "pausing" : "resuming", s->cpus[i].cpu,
			             strerror(-ret));
		}
	}
	if (ret == 0)
		s->paused = paused ? 1 : 0;
	return ret;
}

int sptd_col_sampler_read(struct sptd_col_sampler *s, int64_t from, int64_t to,
                          sptd_col_sample_fn fn, void *ctx)
{
	int i, ret, total = 0, was_paused;

	if (!s || !fn || from > to)
		return -EINVAL;
	/* Reading a ring the kernel is writing would race; pause around the
	 * read if the caller has not. */
	was_paused = s->paused;
	if (!was_paused) {
		ret = sptd_col_sampler_pause(s, 1);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < s->ncpus; i++) {
		const struct sptd_col_perf_ring *ring = &s->cpus[i].ring;
		uint64_t size;
		const void *data = sptd_col_perf_ring_data(ring, &size);

		ret = sptd_col_sample_ring_read_as(data, size, sptd_col_perf_ring_head(ring),
		                                   s->user_stack, from, to, fn, ctx);
		if (ret < 0)
			goto out;
		total += ret;
	}
	ret = total;
out:
	if (!was_paused)
		sptd_col_sampler_pause(s, 0);
	return ret;
}

int sptd_col_sampler_sideband(struct sptd_col_sampler *s, sptd_col_sampler_sideband_fn fn,
                              void *ctx)
{
	unsigned char *recs = NULL;
	size_t cap = 0;
	int i, ret = 0, was_paused, count = 0;

	if (!s || !fn)
		return -EINVAL;
	was_paused = s->paused;
	if (!was_paused) {
		ret = sptd_col_sampler_pause(s, 1);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < s->ncpus && ret >= 0; i++) {
		const struct sptd_col_perf_ring *ring = &s->cpus[i].sb_ring;
		uint64_t size;
		const void *data;
		int64_t len;

		if (s->cpus[i].sb_fd < 0)
			continue;
		data = sptd_col_perf_ring_data(ring, &size);
		/* copied out: a record may wrap, and the ring is newest first */
		len = sptd_col_ring_copy_backward(data, size, sptd_col_perf_ring_head(ring), &recs,
		                                  &cap);
		if (len < 0) {
			ret = (int)len;
			break;
		}
		ret = fn(ctx, s->cpus[i].cpu, recs, (size_t)len);
		count++;
	}
	free(recs);
	if (!was_paused)
		sptd_col_sampler_pause(s, 0);
	return ret < 0 ? ret : count;
}

void sptd_col_sampler_destroy(struct sptd_col_sampler *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->cpus && i < s->ncpus; i++) {
		sptd_col_perf_ring_unmap(&s->cpus[i].ring);
		if (s->cpus[i].fd >= 0)
			sptd_col_sys.close(s->cpus[i].fd);
		sptd_col_perf_ring_unmap(&s->cpus[i].sb_ring);
		if (s->cpus[i].sb_fd >= 0)
			sptd_col_sys.close(s->cpus[i].sb_fd);
	}
	free(s->cpus);
	free(s);
}
