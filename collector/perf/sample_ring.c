/* sample_ring.c — samples out of one write_backward perf ring: parse each
 * PERF_RECORD_SAMPLE, keep those in the time window, and hand them over
 * oldest first (the ring is walked newest first, so they are collected and
 * then delivered in reverse). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perf-local.h"

/* Fixed part of the sample layout the sampler requests. */
struct sample_fixed {
	struct perf_event_header header;
	uint64_t ip;             /* PERF_SAMPLE_IP */
	uint32_t pid, tid;       /* PERF_SAMPLE_TID */
	uint64_t time;           /* PERF_SAMPLE_TIME */
	uint32_t cpu, res;       /* PERF_SAMPLE_CPU */
	uint64_t nr;             /* PERF_SAMPLE_CALLCHAIN: entries that follow */
};

int sptd_col_sample_parse(const void *rec, size_t len, struct sptd_col_sample *s)
{
	struct sample_fixed f;

	if (!rec || !s || len < sizeof(struct perf_event_header))
		return -EINVAL;
	memcpy(&f.header, rec, sizeof(f.header));
	if (f.header.type != PERF_RECORD_SAMPLE)
		return -ENOMSG;
	if (len < sizeof(f))
		return -EBADMSG;
	memcpy(&f, rec, sizeof(f));
	if (f.nr > (len - sizeof(f)) / sizeof(uint64_t))
		return -EBADMSG;
	s->ts = (int64_t)f.time;
	s->cpu = (int)f.cpu;
	s->pid = (int)f.pid;
	s->tid = (int)f.tid;
	s->nr = f.nr;
	s->ips = (const uint64_t *)((const unsigned char *)rec + sizeof(f));
	return 0;
}

/* Samples kept from one ring, newest first, call chains copied out (a
 * record may sit in the walker's bounce buffer only for the callback). */
struct ring_collect {
	struct sptd_col_sample *samples; /* ips holds an index into chain until delivery */
	size_t count, cap;       /* used and allocated samples */
	uint64_t *chain;         /* all call chains back to back */
	size_t chain_len, chain_cap; /* used and allocated u64s */
	int64_t from, to;        /* window, inclusive */
};

static int collect_sample(void *ctx, const void *rec, size_t len)
{
	struct ring_collect *c = ctx;
	struct sptd_col_sample s;

	if (sptd_col_sample_parse(rec, len, &s) < 0)
		return 0; /* other record types, or a damaged one: skip */
	if (s.ts < c->from || s.ts > c->to)
		return 0;
	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct sptd_col_sample *n = realloc(c->samples, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->samples = n;
		c->cap = cap;
	}
	if (c->chain_len + s.nr > c->chain_cap) {
		size_t cap = c->chain_cap ? c->chain_cap * 2 : 4096;
		uint64_t *n;

		while (cap < c->chain_len + s.nr)
			cap *= 2;
		n = realloc(c->chain, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->chain = n;
		c->chain_cap = cap;
	}
	if (s.nr)
		memcpy(c->chain + c->chain_len, s.ips, s.nr * sizeof(uint64_t));
	/* the chain may move on realloc: remember its index for now */
	s.ips = (const uint64_t *)(uintptr_t)c->chain_len;
	c->chain_len += s.nr;
	c->samples[c->count++] = s;
	return 0;
}

int sptd_col_sample_ring_read(const void *base, uint64_t size, uint64_t head,
                              int64_t from, int64_t to, sptd_col_sample_fn fn,
                              void *ctx)
{
	struct ring_collect c = { .from = from, .to = to };
	size_t i;
	int ret;

	if (!base || !fn)
		return -EINVAL;
	ret = sptd_col_ring_walk_backward(base, size, head, collect_sample, &c);
	if (ret < 0)
		goto out;
	ret = 0;
	for (i = c.count; i > 0; i--) {
		struct sptd_col_sample s = c.samples[i - 1];
		int r;

		s.ips = c.chain ? c.chain + (uintptr_t)s.ips : NULL;
		r = fn(ctx, &s);
		if (r < 0) {
			ret = r;
			goto out;
		}
		ret++;
	}
out:
	free(c.samples);
	free(c.chain);
	return ret;
}
