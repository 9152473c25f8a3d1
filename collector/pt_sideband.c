/* pt_sideband.c — perf sideband records (the PT event's and the dummy
 * event's data rings) from bytes: parsing, raw_switch/raw_task rows at
 * capture, and gap rows at decode.
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

#include "pt-local.h"
#include "sptd_store.h"

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

/* ---- capture: switches and task names -------------------------------------- */

struct store_ctx {
	struct sptd_store *st;
	int cpu;
	int64_t offset_ns;
	/* last comm per tid seen in this buffer, for raw_switch.next_comm */
	struct { int tid; char comm[16]; } *comms;
	size_t ncomms, cap;
};

static const char *comm_of(struct store_ctx *c, int tid)
{
	for (size_t i = c->ncomms; i-- > 0;)
		if (c->comms[i].tid == tid)
			return c->comms[i].comm;
	return NULL;
}

static int on_store_record(void *arg, const struct sptd_col_pt_record *r)
{
	struct store_ctx *c = arg;
	int64_t ts = (int64_t)r->time + c->offset_ns;

	if (r->type == PERF_RECORD_COMM && r->name) {
		if (c->ncomms == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			void *more = realloc(c->comms, cap * sizeof(*c->comms));

			if (!more)
				return -ENOMEM;
			c->comms = more;
			c->cap = cap;
		}
		c->comms[c->ncomms].tid = r->tid;
		snprintf(c->comms[c->ncomms].comm, sizeof(c->comms[0].comm), "%s", r->name);
		c->ncomms++;
		return sptd_store_raw_task_add(c->st, r->pid, r->tid, r->name, NULL);
	}
	/* Each switch makes two records (out on the old task's side, in on the
	 * new one's); the switch-in names both and is kept. */
	if (r->type == PERF_RECORD_SWITCH_CPU_WIDE && !r->switch_out && r->has_id &&
	    r->id_tid >= 0 && r->other_tid >= 0)
		return sptd_store_raw_switch_add(c->st, ts, r->id_cpu >= 0 ? r->id_cpu : c->cpu,
		                                 r->other_tid, r->id_tid, comm_of(c, r->id_tid));
	return 0;
}

int sptd_col_pt_sideband_store(struct sptd_store *st, int cpu, int seq, const void *buf,
                               size_t len, uint64_t sample_type, int64_t offset_ns)
{
	struct store_ctx c = { .st = st, .cpu = cpu, .offset_ns = offset_ns };
	int ret;

	if (!st || cpu < 0)
		return -EINVAL;
	if (!len)
		return 0;
	ret = sptd_store_raw_sideband_add(st, cpu, seq, buf, len);
	if (ret >= 0)
		ret = sptd_col_pt_sideband_parse(buf, len, sample_type, on_store_record, &c);
	free(c.comms);
	return ret;
}

/* ---- decode: gap rows -------------------------------------------------------- */

struct gap_ctx {
	struct sptd_store *st;
	int cpu;
	int64_t offset_ns;
	int rows;
};

static int on_gap_record(void *arg, const struct sptd_col_pt_record *r)
{
	struct gap_ctx *g = arg;
	int64_t ts = (int64_t)r->time + g->offset_ns;
	char reason[160];
	int ret;

	reason[0] = '\0';
	if (r->type == PERF_RECORD_AUX) {
		if (r->aux_flags & PERF_AUX_FLAG_TRUNCATED)
			snprintf(reason, sizeof(reason), "sideband: pt aux data truncated "
			         "(%" PRIu64 " bytes at offset %" PRIu64 ")", r->aux_size, r->aux_offset);
		else if (r->aux_flags & PERF_AUX_FLAG_PARTIAL)
			snprintf(reason, sizeof(reason), "sideband: pt aux data has gaps "
			         "(%" PRIu64 " bytes at offset %" PRIu64 ")", r->aux_size, r->aux_offset);
		else if (r->aux_flags & PERF_AUX_FLAG_COLLISION)
			snprintf(reason, sizeof(reason), "sideband: pt aux data collided");
	} else if (r->type == PERF_RECORD_LOST) {
		snprintf(reason, sizeof(reason), "sideband: %" PRIu64 " sideband records lost",
		         r->lost);
	} else if (r->type == PERF_RECORD_LOST_SAMPLES) {
		snprintf(reason, sizeof(reason), "sideband: %" PRIu64 " samples lost", r->lost);
	} else if (r->type == PERF_RECORD_ITRACE_START) {
		snprintf(reason, sizeof(reason), "sideband: pt trace (re)started (pid %d tid %d)",
		         r->pid, r->tid);
	}
	if (!reason[0])
		return 0;
	ret = sptd_store_gap_add(g->st, ts, 0, r->id_cpu >= 0 ? r->id_cpu : g->cpu, reason);
	if (ret >= 0)
		g->rows++;
	return ret;
}

int sptd_col_derive_pt_sideband(struct sptd_store *st)
{
	struct sptd_store_stmt *stmt = NULL, *del = NULL;
	struct gap_ctx g = { .st = st };
	int64_t sample_type = (int64_t)sptd_col_pt_sideband_sample_type();
	int ret;

	if (!st)
		return -EINVAL;
	sptd_store_meta_get_int(st, "perf_clock_offset_ns", &g.offset_ns);
	sptd_store_meta_get_int(st, "pt_sideband_sample_type", &sample_type);
	ret = sptd_store_prepare(st, "DELETE FROM gap WHERE reason LIKE 'sideband: %'", &del);
	while (ret >= 0 && (ret = sptd_store_step(del)) == 1)
		;
	sptd_store_finalize(del);
	if (ret < 0)
		return ret;
	ret = sptd_store_prepare(st, "SELECT cpu, data FROM raw_sideband ORDER BY cpu, seq", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		size_t len = 0;
		const void *data = sptd_store_column_blob(stmt, 1, &len);
		int n;

		g.cpu = (int)sptd_store_column_int(stmt, 0);
		if (!data || !len)
			continue;
		n = sptd_col_pt_sideband_parse(data, len, (uint64_t)sample_type, on_gap_record, &g);
		if (n == -EBADMSG) {
			/* what parsed is in; the rest is itself a gap */
			n = sptd_store_gap_add(st, 0, 0, g.cpu, "sideband: malformed records skipped");
			if (n >= 0)
				g.rows++;
		}
		if (n < 0)
			ret = n;
	}
	sptd_store_finalize(stmt);
	return ret < 0 ? ret : g.rows;
}
