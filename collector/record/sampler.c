/* sampler.c — the sampling source: one software cpu-clock perf event per
 * online CPU, system-wide, with kernel+user call chains, each writing into
 * its own overwrite (write_backward, read-only mapped) ring that always
 * holds the most recent samples.  Freezing is PERF_EVENT_IOC_PAUSE_OUTPUT;
 * reading walks each paused ring (sample_ring.c).
 *
 * All syscalls go through sptd_col_sys so tests can make them fail. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "sampling-local.h"

#define SAMPLER_CPU_LIST "/sys/devices/system/cpu/online"

int sptd_col_sampler_parse_cpus(const char *text, int **cpus, int *n)
{
	const char *p = text;
	int *list = NULL, count = 0, cap = 0, ret = -EINVAL;

	if (!text || !cpus || !n)
		return -EINVAL;
	while (*p && *p != '\n') {
		char *end;
		long lo, hi;

		lo = strtol(p, &end, 10);
		if (end == p || lo < 0 || lo > 65535)
			goto fail;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi > 65535)
				goto fail;
			p = end;
		}
		for (long c = lo; c <= hi; c++) {
			if (count == cap) {
				int *grown;

				cap = cap ? cap * 2 : 16;
				grown = realloc(list, (size_t)cap * sizeof(*list));
				if (!grown) {
					ret = -ENOMEM;
					goto fail;
				}
				list = grown;
			}
			list[count++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto fail;
	}
	if (count == 0)
		goto fail;
	*cpus = list;
	*n = count;
	return 0;
fail:
	free(list);
	return ret;
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

static int sampler_open_cpu(struct sptd_col_sampler *s, struct sptd_col_sampler_cpu *c,
                            const struct sptd_col_sampler_config *cfg)
{
	struct perf_event_attr attr;
	size_t len = (cfg->ring_pages + 1) * s->page_size;
	void *map;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = (uint64_t)cfg->freq;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	                   PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
	attr.exclude_kernel = cfg->exclude_kernel ? 1 : 0;
	attr.exclude_callchain_kernel = cfg->exclude_kernel ? 1 : 0;
	attr.exclude_hv = 1;
	attr.sample_max_stack = (uint16_t)(cfg->max_stack ? cfg->max_stack : 127);
	if (cfg->use_clock) {
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
	}
	/* Overwrite mode: the ring keeps the newest samples and is only read
	 * after PAUSE_OUTPUT, so nobody ever moves data_tail. */
	attr.write_backward = 1;
	attr.disabled = 0;

	errno = 0;
	c->fd = sptd_col_sys.perf_event_open(&attr, -1, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->fd < 0) {
		err = errno ? errno : EIO;
		c->fd = -1;
		log_open_error(err, c->cpu, cfg);
		return -err;
	}
	errno = 0;
	map = sptd_col_sys.mmap(NULL, len, PROT_READ, MAP_SHARED, c->fd, 0);
	if (map == MAP_FAILED || !map) {
		err = errno ? errno : ENOMEM;
		sptd_col_log(LOG_ERR, "sampling: mapping the %zu KiB ring of cpu %d: %s%s",
		             len / 1024, c->cpu, strerror(err),
		             err == EPERM ? " (over kernel.perf_event_mlock_kb: use a "
		                            "smaller ring or raise the sysctl)" : "");
		return -err;
	}
	c->map = map;
	c->map_len = len;
	return 0;
}

int sptd_col_sampler_create(const struct sptd_col_sampler_config *cfg,
                            struct sptd_col_sampler **out)
{
	struct sptd_col_sampler *s = NULL;
	char online[4096];
	int *cpus = NULL, ncpus = 0, i, ret;
	long page = sysconf(_SC_PAGESIZE);
	ssize_t len;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg || cfg->freq <= 0 || cfg->ring_pages == 0 ||
	    (cfg->ring_pages & (cfg->ring_pages - 1)) != 0 ||
	    cfg->ring_pages > (1u << 20) || cfg->max_stack < 0 || cfg->max_stack > 65535) {
		sptd_col_log(LOG_ERR, "sampling: invalid configuration (frequency must be "
		             "> 0, ring pages a power of two, max stack 0..65535)");
		return -EINVAL;
	}
	len = sptd_col_sys.read_file(SAMPLER_CPU_LIST, online, sizeof(online));
	if (len < 0) {
		sptd_col_log(LOG_ERR, "sampling: cannot read %s: %s", SAMPLER_CPU_LIST,
		             strerror((int)-len));
		return (int)len;
	}
	ret = sptd_col_sampler_parse_cpus(online, &cpus, &ncpus);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "sampling: cannot parse %s: \"%s\"", SAMPLER_CPU_LIST,
		             online);
		return ret;
	}
	ret = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fail;
	s->cpus = calloc((size_t)ncpus, sizeof(*s->cpus));
	if (!s->cpus)
		goto fail;
	s->page_size = page > 0 ? (size_t)page : 4096;
	s->ncpus = ncpus;
	for (i = 0; i < ncpus; i++) {
		s->cpus[i].cpu = cpus[i];
		s->cpus[i].fd = -1;
	}
	for (i = 0; i < ncpus; i++) {
		ret = sampler_open_cpu(s, &s->cpus[i], cfg);
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
		errno = 0;
		if (sptd_col_sys.ioctl(s->cpus[i].fd, PERF_EVENT_IOC_PAUSE_OUTPUT,
		                       paused ? 1 : 0) < 0 && ret == 0) {
			ret = errno ? -errno : -EIO;
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
		const struct perf_event_mmap_page *mp = s->cpus[i].map;
		const unsigned char *data;
		uint64_t head, size, offset;

		offset = mp->data_offset ? mp->data_offset : s->page_size;
		size = mp->data_size ? mp->data_size : s->cpus[i].map_len - s->page_size;
		data = (const unsigned char *)s->cpus[i].map + offset;
		head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
		ret = sptd_col_sample_ring_read(data, size, head, from, to, fn, ctx);
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

void sptd_col_sampler_destroy(struct sptd_col_sampler *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->cpus && i < s->ncpus; i++) {
		if (s->cpus[i].map)
			sptd_col_sys.munmap(s->cpus[i].map, s->cpus[i].map_len);
		if (s->cpus[i].fd >= 0)
			sptd_col_sys.close(s->cpus[i].fd);
	}
	free(s->cpus);
	free(s);
}
