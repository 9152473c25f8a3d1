/* capture.c — hand out what parsing needs: the format files, then every raw
 * ring-buffer page of every CPU, oldest first.
 *
 * Pages are read from per_cpu/cpuN/trace_pipe_raw through tracefs_cpu_open /
 * tracefs_cpu_read in non-blocking mode: libtracefs knows the sub-buffer
 * size (buffer_subbuf_size_kb may be larger than a page on 6.x) and turns
 * "nothing left" (EAGAIN) into 0.  Reading consumes the pages; sysptd resets
 * and re-arms after every capture, so nothing else wanted them. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "sched-local.h"

/* Read a format file under the top-level events/ and hand it out. */
static int capture_format(const char *rel, const char *name, sptd_sched_raw_fn fn,
                          void *ctx)
{
	int size = 0, ret;
	char *text = tracefs_instance_file_read(NULL, rel, &size);

	if (!text) {
		sptd_sched_log(LOG_ERR, "cannot read %s/%s", tracefs_tracing_dir(), rel);
		return -EIO;
	}
	ret = fn(ctx, SPTD_SCHED_RAW_FORMAT, name, -1, 0, text, (size_t)size);
	free(text);
	return ret < 0 ? ret : 0;
}

/* Every page of one CPU; returns how many, or the callback's error. */
static int capture_cpu(struct sptd_sched_trace *tr, int cpu, sptd_sched_raw_fn fn,
                       void *ctx)
{
	struct tracefs_cpu *tcpu = tracefs_cpu_open(tr->inst, cpu, true);
	void *page = NULL;
	int size, n, seq = 0, ret = 0;

	if (!tcpu)   /* offline or absent CPU: no ring */
		return 0;
	size = tracefs_cpu_read_size(tcpu);
	if (size <= 0) {
		ret = -EIO;
		goto out;
	}
	page = malloc((size_t)size);
	if (!page) {
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		n = tracefs_cpu_read(tcpu, page, true);
		if (n < 0) {
			/* ENODEV: the CPU has no ring in this instance (it was
			 * offline when the instance was made): nothing to read */
			ret = errno == EAGAIN || errno == ENODEV ? 0 : -EIO;
			break;
		}
		if (n == 0)
			break;
		ret = fn(ctx, SPTD_SCHED_RAW_PAGE, NULL, cpu, seq, page, (size_t)n);
		if (ret < 0)
			break;
		seq++;
		ret = 0;
	}
	if (ret == 0)
		ret = seq;
out:
	free(page);
	tracefs_cpu_close(tcpu);
	return ret;
}

long sptd_sched_cpu_id_bound(const char *list_path)
{
	char buf[4096];
	long best = -1;
	size_t n;
	FILE *f = fopen(list_path ? list_path : "/sys/devices/system/cpu/possible", "re");

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		/* numbers only: the '-' of a range is no sign */
		for (char *p = buf, *end; *p; p = end) {
			long v;

			if (*p < '0' || *p > '9') {
				end = p + 1;
				continue;
			}
			v = strtol(p, &end, 10);
			if (v > best)
				best = v;
		}
	}
	if (best < 0)
		best = sysconf(_SC_NPROCESSORS_CONF) - 1;
	return best + 1;
}

int sptd_sched_trace_capture(struct sptd_sched_trace *tr, sptd_sched_raw_fn fn,
                             void *ctx)
{
	long ncpus = sptd_sched_cpu_id_bound(NULL);
	char rel[SPTD_SCHED_NAME_LEN + 32];
	int i, ret, pages = 0;

	if (!tr || !tr->inst || !fn)
		return -EINVAL;
	ret = capture_format("events/header_page", "header_page", fn, ctx);
	if (ret < 0)
		return ret;
	ret = capture_format("events/header_event", "header_event", fn, ctx);
	if (ret < 0)
		return ret;
	for (i = 0; i < tr->nr_events; i++) {
		snprintf(rel, sizeof(rel), "events/%s/format", tr->events[i]);
		ret = capture_format(rel, tr->events[i], fn, ctx);
		if (ret < 0)
			return ret;
	}
	if (ncpus < 1)
		ncpus = 1;
	for (i = 0; i < ncpus; i++) {
		ret = capture_cpu(tr, i, fn, ctx);
		if (ret < 0)
			return ret;
		pages += ret;
	}
	return pages;
}
