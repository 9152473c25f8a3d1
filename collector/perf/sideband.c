/* sideband.c — perf sideband records (the PT event's and the dummy
 * event's data rings) from bytes.
 *
 * Layouts are perf_event_open(2)'s: a perf_event_header, the body of the
 * record type, then (sample_id_all) the sample_id trailer whose fields follow
 * sample_type bit order: TID (pid, tid), TIME, ID, STREAM_ID, CPU (cpu, res),
 * IDENTIFIER.  Nothing is trusted: every length is checked against the
 * record and the buffer. */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf-local.h"

uint64_t sptd_col_pt_sideband_sample_type(void)
{
	return PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
}

static size_t trailer_size(uint64_t st)
{
	size_t n = 0;

	n += (st & PERF_SAMPLE_TID) ? 8 : 0;
	n += (st & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (st & PERF_SAMPLE_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void parse_trailer(const unsigned char *p, uint64_t st, struct sptd_col_pt_record *r)
{
	r->has_id = 1;
	r->id_pid = r->id_tid = r->id_cpu = -1;
	if (st & PERF_SAMPLE_TID) {
		r->id_pid = (int)get32(p);
		r->id_tid = (int)get32(p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		r->time = get64(p);
		p += 8;
	}
	p += (st & PERF_SAMPLE_ID) ? 8 : 0;
	p += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	if (st & PERF_SAMPLE_CPU)
		r->id_cpu = (int)get32(p);
}

/* A NUL-terminated string inside [p, end); NULL when it is not. */
static const char *string_in(const unsigned char *p, const unsigned char *end)
{
	if (p >= end || !memchr(p, '\0', (size_t)(end - p)))
		return NULL;
	return (const char *)p;
}

/* Decode one record's body (@body .. @end, trailer excluded). */
static int parse_body(const unsigned char *body, const unsigned char *end,
                      struct sptd_col_pt_record *r)
{
	size_t n = (size_t)(end - body);

	switch (r->type) {
	case PERF_RECORD_MMAP2:
		/* pid tid addr len pgoff (maj min ino ino_gen | build id) prot flags name */
		if (n < 8 + 24 + 24 + 8 + 1)
			return -EBADMSG;
		r->pid = (int)get32(body);
		r->tid = (int)get32(body + 4);
		r->addr = get64(body + 8);
		r->len = get64(body + 16);
		r->pgoff = get64(body + 24);
		r->prot = get32(body + 56);
		r->flags = get32(body + 60);
		r->name = string_in(body + 64, end);
		return r->name ? 0 : -EBADMSG;
	case PERF_RECORD_COMM:
		if (n < 8 + 1)
			return -EBADMSG;
		r->pid = (int)get32(body);
		r->tid = (int)get32(body + 4);
		r->name = string_in(body + 8, end);
		return r->name ? 0 : -EBADMSG;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (n < 24)
			return -EBADMSG;
		r->pid = (int)get32(body);
		r->ppid = (int)get32(body + 4);
		r->tid = (int)get32(body + 8);
		r->ptid = (int)get32(body + 12);
		if (!r->time)
			r->time = get64(body + 16);
		return 0;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (n < 8)
			return -EBADMSG;
		r->other_pid = (int)get32(body);
		r->other_tid = (int)get32(body + 4);
		r->switch_out = (r->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
		return 0;
	case PERF_RECORD_SWITCH:
		r->switch_out = (r->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
		return 0;
	case PERF_RECORD_AUX:
		if (n < 24)
			return -EBADMSG;
		r->aux_offset = get64(body);
		r->aux_size = get64(body + 8);
		r->aux_flags = get64(body + 16);
		return 0;
	case PERF_RECORD_ITRACE_START:
		if (n < 8)
			return -EBADMSG;
		r->pid = (int)get32(body);
		r->tid = (int)get32(body + 4);
		return 0;
	case PERF_RECORD_LOST:
		if (n < 16)
			return -EBADMSG;
		r->lost = get64(body + 8);
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (n < 8)
			return -EBADMSG;
		r->lost = get64(body);
		return 0;
	default:
		return 0;   /* known to be a record; its body is not needed */
	}
}

int sptd_col_pt_sideband_parse(const void *buf, size_t len, uint64_t sample_type,
                               sptd_col_pt_record_fn fn, void *ctx)
{
	const unsigned char *p = buf;
	size_t off = 0, tsize = trailer_size(sample_type);
	int count = 0, ret;

	if ((!buf && len) || !fn)
		return -EINVAL;
	while (off < len) {
		struct perf_event_header hdr;
		struct sptd_col_pt_record r;
		const unsigned char *rec = p + off, *body_end;

		if (len - off < sizeof(hdr))
			return -EBADMSG;
		memcpy(&hdr, rec, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > len - off || hdr.type == 0)
			return -EBADMSG;
		memset(&r, 0, sizeof(r));
		r.type = hdr.type;
		r.misc = hdr.misc;
		r.pid = r.tid = r.id_pid = r.id_tid = r.id_cpu = -1;
		body_end = rec + hdr.size;
		/* Every record but SAMPLE carries the trailer; MMAP/MMAP2/COMM
		 * bodies end in a string, so the trailer is found from the end. */
		if (hdr.type != PERF_RECORD_SAMPLE && tsize) {
			if (hdr.size < sizeof(hdr) + tsize)
				return -EBADMSG;
			body_end -= tsize;
			parse_trailer(body_end, sample_type, &r);
		}
		if (hdr.type < PERF_RECORD_MAX &&
		    parse_body(rec + sizeof(hdr), body_end, &r) < 0)
			return -EBADMSG;
		ret = fn(ctx, &r);
		if (ret < 0)
			return ret;
		count++;
		off += hdr.size;
	}
	return count;
}
