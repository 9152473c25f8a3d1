/* perfdata_sample.c — the variable parts of perf records: the sample_id
 * fields that sample_id_all appends to non-sample records, the fields of a
 * PERF_RECORD_SAMPLE up to its raw data, and where the sched:sched_switch
 * tracepoint keeps its fields (from the TRACING_DATA feature's format). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-local.h"

#define PD_FORMAT_TOTAL_TIME_ENABLED (1u << 0)
#define PD_FORMAT_TOTAL_TIME_RUNNING (1u << 1)
#define PD_FORMAT_ID                 (1u << 2)
#define PD_FORMAT_GROUP              (1u << 3)
#define PD_FORMAT_LOST               (1u << 4)

const struct sptd_col_perfdata_attr *
sptd_col_perfdata_attr_by_id(const struct sptd_col_perfdata *pd, uint64_t id)
{
	size_t i, j;

	if (!pd || !pd->nattrs)
		return NULL;
	if (pd->nattrs == 1)
		return &pd->attrs[0];
	for (i = 0; i < pd->nattrs; i++)
		for (j = 0; j < pd->attrs[i].nids; j++)
			if (sptd_col_pd_u64((const uint8_t *)&pd->attrs[i].ids[j]) == id)
				return &pd->attrs[i];
	return NULL;
}

int sptd_col_perfdata_rec_id(const struct sptd_col_perfdata *pd,
                             const struct sptd_col_perfdata_rec *rec,
                             struct sptd_col_perfdata_id *id)
{
	const struct sptd_col_perfdata_attr *a;
	uint64_t st;
	size_t n = 0;
	const uint8_t *p;

	memset(id, 0, sizeof(*id));
	id->pid = id->tid = id->cpu = -1;
	if (!pd || !pd->nattrs)
		return 0;
	/* every event of one file shares the sample_id layout (perf requires
	 * it to find the id); the first attr describes it */
	a = &pd->attrs[0];
	if (!a->sample_id_all)
		return 0;
	st = a->sample_type;
	n = 8 * (size_t)(!!(st & PD_SAMPLE_TID) + !!(st & PD_SAMPLE_TIME) +
	                 !!(st & PD_SAMPLE_ID) + !!(st & PD_SAMPLE_STREAM_ID) +
	                 !!(st & PD_SAMPLE_CPU) + !!(st & PD_SAMPLE_IDENTIFIER));
	if (rec->size < 8 + n)
		return -EBADMSG;
	p = rec->data + rec->size - n;
	if (st & PD_SAMPLE_TID) {
		id->pid = (int)sptd_col_pd_u32(p);
		id->tid = (int)sptd_col_pd_u32(p + 4);
		p += 8;
	}
	if (st & PD_SAMPLE_TIME) {
		id->time = sptd_col_pd_u64(p);
		id->has_time = 1;
		p += 8;
	}
	if (st & PD_SAMPLE_ID) {
		id->id = sptd_col_pd_u64(p);
		p += 8;
	}
	if (st & PD_SAMPLE_STREAM_ID)
		p += 8;
	if (st & PD_SAMPLE_CPU) {
		id->cpu = (int)sptd_col_pd_u32(p);
		p += 8;
	}
	if (st & PD_SAMPLE_IDENTIFIER)
		id->id = sptd_col_pd_u64(p);
	return 0;
}

/* Bytes of the PERF_SAMPLE_READ part for @rf at @p (@left bytes there). */
static int read_part_size(uint64_t rf, const uint8_t *p, size_t left, size_t *size)
{
	size_t per = 8 + ((rf & PD_FORMAT_ID) ? 8 : 0) + ((rf & PD_FORMAT_LOST) ? 8 : 0);
	size_t times = ((rf & PD_FORMAT_TOTAL_TIME_ENABLED) ? 8 : 0) +
	               ((rf & PD_FORMAT_TOTAL_TIME_RUNNING) ? 8 : 0);
	uint64_t nr;

	if (!(rf & PD_FORMAT_GROUP)) {
		*size = per + times;
		return 0;
	}
	if (left < 8)
		return -EBADMSG;
	nr = sptd_col_pd_u64(p);
	if (nr > 4096)
		return -EBADMSG;
	*size = 8 + times + (size_t)nr * per;
	return 0;
}

int sptd_col_perfdata_sample_parse(const struct sptd_col_perfdata *pd,
                                   const struct sptd_col_perfdata_rec *rec,
                                   struct sptd_col_perfdata_sample *s)
{
	const uint8_t *p, *end;
	uint64_t st, id = 0;
	size_t skip;

	if (!pd || !rec || !s || !pd->nattrs)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->id.pid = s->id.tid = s->id.cpu = -1;
	p = rec->data + 8;
	end = rec->data + rec->size;
	/* find the attr first: IDENTIFIER leads, else ID sits at a position
	 * that the (shared) leading sample_type bits fix */
	st = pd->attrs[0].sample_type;
	if (st & PD_SAMPLE_IDENTIFIER) {
		if (end - p < 8)
			return -EBADMSG;
		id = sptd_col_pd_u64(p);
	} else if (st & PD_SAMPLE_ID) {
		size_t at = 8 * (size_t)(!!(st & PD_SAMPLE_IP) + !!(st & PD_SAMPLE_TID) +
		                         !!(st & PD_SAMPLE_TIME) + !!(st & PD_SAMPLE_ADDR));

		if ((size_t)(end - p) < at + 8)
			return -EBADMSG;
		id = sptd_col_pd_u64(p + at);
	}
	s->attr = sptd_col_perfdata_attr_by_id(pd, id);
	if (!s->attr)
		return 0;
	st = s->attr->sample_type;
	s->id.id = id;
#define NEED(n) do { if ((size_t)(end - p) < (size_t)(n)) return -EBADMSG; } while (0)
	if (st & PD_SAMPLE_IDENTIFIER) {
		NEED(8);
		p += 8;
	}
	if (st & PD_SAMPLE_IP) {
		NEED(8);
		p += 8;
	}
	if (st & PD_SAMPLE_TID) {
		NEED(8);
		s->id.pid = (int)sptd_col_pd_u32(p);
		s->id.tid = (int)sptd_col_pd_u32(p + 4);
		p += 8;
	}
	if (st & PD_SAMPLE_TIME) {
		NEED(8);
		s->id.time = sptd_col_pd_u64(p);
		s->id.has_time = 1;
		p += 8;
	}
	if (st & PD_SAMPLE_ADDR) {
		NEED(8);
		p += 8;
	}
	if (st & PD_SAMPLE_ID) {
		NEED(8);
		p += 8;
	}
	if (st & PD_SAMPLE_STREAM_ID) {
		NEED(8);
		p += 8;
	}
	if (st & PD_SAMPLE_CPU) {
		NEED(8);
		s->id.cpu = (int)sptd_col_pd_u32(p);
		p += 8;
	}
	if (st & PD_SAMPLE_PERIOD) {
		NEED(8);
		p += 8;
	}
	if (st & PD_SAMPLE_READ) {
		if (read_part_size(s->attr->read_format, p, (size_t)(end - p), &skip) < 0)
			return -EBADMSG;
		NEED(skip);
		p += skip;
	}
	if (st & PD_SAMPLE_CALLCHAIN) {
		uint64_t nr;

		NEED(8);
		nr = sptd_col_pd_u64(p);
		p += 8;
		if (nr > (uint64_t)(end - p) / 8)
			return -EBADMSG;
		p += nr * 8;
	}
	if (st & PD_SAMPLE_RAW) {
		NEED(4);
		s->raw_size = sptd_col_pd_u32(p);
		p += 4;
		NEED(s->raw_size);
		s->raw = p;
	}
#undef NEED
	return 0;
}

/* The field @name's offset and size from format text lines
 * "\tfield:TYPE NAME[..];\toffset:N;\tsize:N;..." within [text, end). */
static int field_of(const char *text, const char *end, const char *name, int *off, int *size)
{
	size_t nlen = strlen(name);
	const char *p = text;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *semi, *o;

		if (!eol)
			eol = end;
		semi = memchr(p, ';', (size_t)(eol - p));
		if (semi && strncmp(p, "\tfield:", 7) == 0) {
			const char *q = semi;

			while (q > p && q[-1] == ']') {  /* strip an array suffix */
				while (q > p && *q != '[')
					q--;
			}
			if (q - p >= (long)nlen && memcmp(q - nlen, name, nlen) == 0 &&
			    (q - nlen == p || q[-(long)nlen - 1] == ' ' || q[-(long)nlen - 1] == '*') &&
			    (o = strstr(semi, "offset:")) && o < eol) {
				*off = atoi(o + 7);
				o = strstr(o, "size:");
				*size = o && o < eol ? atoi(o + 5) : 0;
				return 0;
			}
		}
		p = eol + 1;
	}
	return -ENOENT;
}

void sptd_col_perfdata_switch_fmt(const struct sptd_col_perfdata *pd,
                                  struct sptd_col_pd_switch_fmt *fmt)
{
	static const char key[] = "name: sched_switch\nID: ";
	size_t len = 0;
	const uint8_t *td = sptd_col_perfdata_feature(pd, PD_FEAT_TRACING_DATA, &len);
	const char *start = NULL, *end;
	int sz;

	/* the layout since Linux 4.x (prev_state is a long) */
	memset(fmt, 0, sizeof(*fmt));
	fmt->prev_comm = 8;
	fmt->prev_pid = 24;
	fmt->prev_prio = 28;
	fmt->prev_state = 32;
	fmt->prev_state_size = 8;
	fmt->next_comm = 40;
	fmt->next_pid = 56;
	fmt->next_prio = 60;
	if (td && len > sizeof(key))
		start = memmem(td, len, key, sizeof(key) - 1);
	if (!start)
		return;
	fmt->id = strtoull(start + sizeof(key) - 1, NULL, 10);
	end = memmem(start, len - (size_t)((const uint8_t *)start - td), "print fmt:", 10);
	if (!end)
		return;
	if (field_of(start, end, "prev_comm", &fmt->prev_comm, &sz) < 0 ||
	    field_of(start, end, "prev_pid", &fmt->prev_pid, &sz) < 0 ||
	    field_of(start, end, "prev_prio", &fmt->prev_prio, &sz) < 0 ||
	    field_of(start, end, "prev_state", &fmt->prev_state, &fmt->prev_state_size) < 0 ||
	    field_of(start, end, "next_comm", &fmt->next_comm, &sz) < 0 ||
	    field_of(start, end, "next_pid", &fmt->next_pid, &sz) < 0 ||
	    field_of(start, end, "next_prio", &fmt->next_prio, &sz) < 0)
		return;
	fmt->found = 1;
}
