/* perfdata_sample.c — the records of a perf.data file decoded by
 * collector/perf's one record parser, each with the layout of the event
 * that wrote it (a SAMPLE names its event by id; every other record has
 * the layout all events of a file share), and where the
 * sched:sched_switch tracepoint keeps its fields (from the TRACING_DATA
 * feature's format). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-local.h"

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

int sptd_col_perfdata_rec_parse(const struct sptd_col_perfdata *pd,
                                const struct sptd_col_perfdata_rec *rec,
                                struct sptd_col_perf_record *r,
                                const struct sptd_col_perfdata_attr **attr)
{
	const struct sptd_col_perfdata_attr *a;
	/* the header alone: for a SAMPLE of an event the file does not name */
	static const struct sptd_col_perf_layout bare;
	uint64_t id = 0;

	if (!pd || !rec || !rec->data || !r || !attr || !pd->nattrs)
		return -EINVAL;
	*attr = NULL;
	if (rec->type >= SPTD_PERF_RECORD_USER_START)
		return -EINVAL;
	a = &pd->attrs[0];
	if (rec->type == SPTD_PERF_RECORD_SAMPLE) {
		/* the attr first: where the id sits is fixed by the leading
		 * sample_type bits, which a file's events share */
		if (sptd_col_perf_sample_event_id(rec->data, rec->size, a->event.layout.sample_type,
		                                  &id) < 0)
			return -EBADMSG;
		a = sptd_col_perfdata_attr_by_id(pd, id);
		if (!a) {
			sptd_col_perf_record_parse(rec->data, rec->size, &bare, r);
			return 0;
		}
	}
	*attr = a;
	return sptd_col_perf_record_parse(rec->data, rec->size, &a->event.layout, r);
}

/* The decimal number at @p, read no further than @end (the file's bytes
 * are not NUL-terminated); at most 2^31 - 1, so a field offset stays an
 * int.  0 when none. */
static int64_t number_at(const char *p, const char *end)
{
	int64_t v = 0;

	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (*p++ - '0');
		if (v > INT32_MAX)
			return INT32_MAX;
	}
	return v;
}

/* The field @name's offset and size from format text lines
 * "\tfield:TYPE NAME[..];\toffset:N;\tsize:N;..." within [text, end):
 * every read stays inside that range. */
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
		if (semi && eol - p >= 7 && memcmp(p, "\tfield:", 7) == 0) {
			const char *q = semi;

			while (q > p && q[-1] == ']') {  /* strip an array suffix */
				while (q > p && *q != '[')
					q--;
			}
			if (q - p >= (long)nlen && memcmp(q - nlen, name, nlen) == 0 &&
			    (q - nlen == p || q[-(long)nlen - 1] == ' ' || q[-(long)nlen - 1] == '*') &&
			    (o = memmem(semi, (size_t)(eol - semi), "offset:", 7)) != NULL) {
				*off = (int)number_at(o + 7, eol);
				o = memmem(o, (size_t)(eol - o), "size:", 5);
				*size = o ? (int)number_at(o + 5, eol) : 0;
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
	if (!start) {
		sptd_sched_states_create(NULL, &fmt->states);
		return;
	}
	fmt->id = (uint64_t)number_at(start + sizeof(key) - 1, (const char *)td + len);
	end = memmem(start, len - (size_t)((const uint8_t *)start - td), "print fmt:", 10);
	if (!end) {
		sptd_sched_states_create(NULL, &fmt->states);
		return;
	}
	{
		/* the print fmt line, NUL-terminated, for its __print_flags */
		const char *stop = (const char *)td + len;
		const char *eol = memchr(end, '\n', (size_t)(stop - end));
		size_t n = (size_t)((eol ? eol : stop) - end);
		char *line = malloc(n + 1);

		if (line) {
			memcpy(line, end, n);
			line[n] = '\0';
		}
		sptd_sched_states_create(line, &fmt->states);
		free(line);
	}
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

void sptd_col_perfdata_switch_fmt_fini(struct sptd_col_pd_switch_fmt *fmt)
{
	sptd_sched_states_destroy(fmt->states);
	fmt->states = NULL;
}

/* 1 if @len bytes at offset @off lie inside a record of @size bytes. */
static int field_in(int off, uint32_t len, uint32_t size)
{
	return off >= 0 && len <= size && (uint32_t)off <= size - len;
}

int sptd_col_pd_switch_read(const struct sptd_col_pd_switch_fmt *f, const uint8_t *raw,
                            uint32_t raw_size, struct sptd_col_pd_sw_fields *out)
{
	if (!f || !raw || !out || (!f->id && raw_size < 64))
		return 0;
	/* the offsets come from the file's format text: every field read must
	 * lie inside the raw record */
	if (!field_in(f->prev_pid, 4, raw_size) || !field_in(f->next_pid, 4, raw_size) ||
	    !field_in(f->next_prio, 4, raw_size) || !field_in(f->prev_comm, 16, raw_size) ||
	    !field_in(f->next_comm, 16, raw_size))
		return 0;
	out->prev = (int)sptd_col_pd_u32(raw + f->prev_pid);
	out->next = (int)sptd_col_pd_u32(raw + f->next_pid);
	snprintf(out->prev_comm, sizeof(out->prev_comm), "%.16s", (const char *)raw + f->prev_comm);
	snprintf(out->next_comm, sizeof(out->next_comm), "%.16s", (const char *)raw + f->next_comm);
	out->state[0] = '\0';
	if (f->states && (f->prev_state_size == 4 || f->prev_state_size == 8) &&
	    field_in(f->prev_state, (uint32_t)f->prev_state_size, raw_size))
		sptd_sched_states_letters(f->states, f->prev_state_size == 8 ?
		                          sptd_col_pd_u64(raw + f->prev_state) :
		                          sptd_col_pd_u32(raw + f->prev_state), out->state);
	return 1;
}
