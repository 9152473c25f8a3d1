/* sample_ring.c — samples out of one write_backward perf ring of the
 * sampling source: the ring's records copied out oldest first, each
 * PERF_RECORD_SAMPLE parsed by the one record parser (record.c) with the
 * sampler's layout, those in the time window handed over in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf-local.h"

uint64_t sptd_col_sampler_sample_type(void)
{
	return SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME |
	       SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_CALLCHAIN;
}

uint64_t sptd_col_sampler_sample_type_as(int user_stack)
{
	return sptd_col_sampler_sample_type() |
	       (user_stack ? SPTD_PERF_SAMPLE_REGS_USER | SPTD_PERF_SAMPLE_STACK_USER : 0);
}

int sptd_col_sample_parse(const void *rec, size_t len, struct sptd_col_sample *s)
{
	return sptd_col_sample_parse_as(rec, len, 0, s);
}

int sptd_col_sample_parse_as(const void *rec, size_t len, int user_stack,
                             struct sptd_col_sample *s)
{
	const struct sptd_col_perf_layout layout = {
		.sample_type = sptd_col_sampler_sample_type_as(user_stack),
		.regs_user = SPTD_COL_SAMPLER_REGS_USER,
	};
	struct sptd_col_perf_record r;
	uint32_t type;

	if (!rec || !s || len < 8)
		return -EINVAL;
	memcpy(&type, rec, sizeof(type));
	if (type != SPTD_PERF_RECORD_SAMPLE)
		return -ENOMSG;
	if (sptd_col_perf_record_parse(rec, len, &layout, &r) < 0)
		return -EBADMSG;
	s->ts = (int64_t)r.id.time;
	s->cpu = r.id.cpu;
	s->pid = r.id.pid;
	s->tid = r.id.tid;
	s->nr = r.sample.nr;
	/* records are whole u64s at an aligned start: so is the chain */
	s->ips = r.sample.callchain;
	/* so are the registers and the stack copy: whole u64s after the chain */
	s->nregs = r.sample.regs_abi ? r.sample.nregs : 0;
	s->regs = s->nregs ? r.sample.regs : NULL;
	s->stack_len = r.sample.stack ? r.sample.stack_dyn : 0;
	s->stack = s->stack_len ? r.sample.stack : NULL;
	return 0;
}

int sptd_col_sample_ring_read(const void *base, uint64_t size, uint64_t head,
                              int64_t from, int64_t to, sptd_col_sample_fn fn,
                              void *ctx)
{
	return sptd_col_sample_ring_read_as(base, size, head, 0, from, to, fn, ctx);
}

int sptd_col_sample_ring_read_as(const void *base, uint64_t size, uint64_t head,
                                 int user_stack, int64_t from, int64_t to,
                                 sptd_col_sample_fn fn, void *ctx)
{
	unsigned char *recs = NULL;
	size_t cap = 0, off = 0;
	int64_t len;
	int ret = 0;

	if (!base || !fn)
		return -EINVAL;
	/* copied out: a record may wrap, and the ring is walked newest first */
	len = sptd_col_ring_copy_backward(base, size, head, &recs, &cap);
	if (len < 0) {
		ret = (int)len;
		goto out;
	}
	while (off < (size_t)len) {
		struct sptd_col_sample s;
		uint16_t rec_size;
		int r;

		memcpy(&rec_size, recs + off + 6, sizeof(rec_size));
		/* other record types, or a damaged sample: skip */
		if (sptd_col_sample_parse_as(recs + off, (size_t)len - off, user_stack, &s) == 0 &&
		    s.ts >= from && s.ts <= to) {
			r = fn(ctx, &s);
			if (r < 0) {
				ret = r;
				goto out;
			}
			ret++;
		}
		off += rec_size;
	}
out:
	free(recs);
	return ret;
}
