/* record.c — the one parser of perf records: the header, the bodies of the
 * record types sysptd meets, the sample_id trailer and SAMPLE, for any
 * sample_type / read_format an attr gives.  The sampler's rings, the PT
 * sideband and perf.data files are all read through it.
 *
 * Layouts are perf_event_open(2)'s.  A SAMPLE's fields follow sample_type
 * bit order: IDENTIFIER, IP, TID (pid, tid), TIME, ADDR, ID, STREAM_ID,
 * CPU (cpu, res), PERIOD, READ, CALLCHAIN (nr, ips), RAW (size, bytes),
 * REGS_USER (abi, regs) and STACK_USER (size, bytes, dyn_size).
 * The trailer other records end in (sample_id_all) holds TID, TIME, ID,
 * STREAM_ID, CPU, IDENTIFIER in that order; as MMAP and COMM bodies end in
 * a string of any length, the trailer is found from the record's end.
 *
 * Nothing is trusted — these bytes come from files users send each other:
 * every field is read only after checking that it lies inside the record,
 * with counts checked by division so that no sum can overflow. */
#include <errno.h>
#include <string.h>

#include "perf-local.h"

#define HEADER_SIZE 8

uint64_t sptd_col_perf_u64(const void *p, size_t i)
{
	uint64_t v;

	memcpy(&v, (const unsigned char *)p + i * sizeof(v), sizeof(v));
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

size_t sptd_col_perf_id_size(uint64_t st)
{
	static const uint64_t bits[] = {
		SPTD_PERF_SAMPLE_TID, SPTD_PERF_SAMPLE_TIME, SPTD_PERF_SAMPLE_ID,
		SPTD_PERF_SAMPLE_STREAM_ID, SPTD_PERF_SAMPLE_CPU, SPTD_PERF_SAMPLE_IDENTIFIER,
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		n += (st & bits[i]) ? 8 : 0;
	return n;
}

/* A cursor over [p, end): each take checks that @n bytes are left. */
struct cursor {
	const unsigned char *p;   /* next unread byte */
	const unsigned char *end; /* one past the last byte */
};

static size_t left(const struct cursor *c)
{
	return (size_t)(c->end - c->p);
}

/* The next @n bytes, or NULL (cursor unmoved) when fewer are left. */
static const unsigned char *take(struct cursor *c, size_t n)
{
	const unsigned char *at = c->p;

	if (left(c) < n)
		return NULL;
	c->p += n;
	return at;
}

static int take64(struct cursor *c, uint64_t *v)
{
	const unsigned char *at = take(c, 8);

	if (!at)
		return -EBADMSG;
	*v = sptd_col_perf_u64(at, 0);
	return 0;
}

/* Two u32s (pid/tid, cpu/res) as ints. */
static int take_pair(struct cursor *c, int *a, int *b)
{
	const unsigned char *at = take(c, 8);

	if (!at)
		return -EBADMSG;
	*a = (int)get32(at);
	if (b)
		*b = (int)get32(at + 4);
	return 0;
}

/* The trailer's fields at @c (exactly its size), in trailer order. */
static int parse_trailer(struct cursor *c, uint64_t st, struct sptd_col_perf_id *id)
{
	int ret = 0;

	id->present = 1;
	if (st & SPTD_PERF_SAMPLE_TID)
		ret |= take_pair(c, &id->pid, &id->tid);
	if (st & SPTD_PERF_SAMPLE_TIME) {
		ret |= take64(c, &id->time);
		id->has_time = 1;
	}
	if (st & SPTD_PERF_SAMPLE_ID)
		ret |= take64(c, &id->id);
	if (st & SPTD_PERF_SAMPLE_STREAM_ID)
		ret |= take64(c, &id->stream_id);
	if (st & SPTD_PERF_SAMPLE_CPU)
		ret |= take_pair(c, &id->cpu, NULL);
	if (st & SPTD_PERF_SAMPLE_IDENTIFIER)
		ret |= take64(c, &id->id);
	return ret ? -EBADMSG : 0;
}

/* A string that starts at @c and has its NUL before the end. */
static const char *take_string(struct cursor *c)
{
	if (!left(c) || !memchr(c->p, '\0', left(c)))
		return NULL;
	return (const char *)c->p;
}

/* MMAP: pid tid addr len pgoff filename.
 * MMAP2: pid tid addr len pgoff {maj min ino ino_generation | build_id_size
 * pad[3] build_id[20]} prot flags filename. */
static int parse_mmap(struct cursor *c, struct sptd_col_perf_record *r)
{
	if (left(c) < 8 + 24 + (r->type == SPTD_PERF_RECORD_MMAP2 ? 32 : 0) + 1)
		return -EBADMSG;
	take_pair(c, &r->pid, &r->tid);
	take64(c, &r->addr);
	take64(c, &r->len);
	take64(c, &r->pgoff);
	if (r->type == SPTD_PERF_RECORD_MMAP2) {
		const unsigned char *dev = take(c, 24), *pf = take(c, 8);

		if (r->misc & SPTD_PERF_MISC_MMAP_BUILD_ID) {
			r->build_id_size = dev[0] > sizeof(r->build_id) ? sizeof(r->build_id) : dev[0];
			memcpy(r->build_id, dev + 4, r->build_id_size);
		} else {
			r->maj = get32(dev);
			r->min = get32(dev + 4);
			r->ino = sptd_col_perf_u64(dev + 8, 0);
			r->ino_generation = sptd_col_perf_u64(dev + 16, 0);
		}
		r->prot = get32(pf);
		r->flags = get32(pf + 4);
	}
	r->name = take_string(c);
	return r->name ? 0 : -EBADMSG;
}

/* KSYMBOL (include/uapi/linux/perf_event.h): addr, u32 len, u16 ksym_type,
 * u16 flags, name (NUL, padded to 8). */
static int parse_ksymbol(struct cursor *c, struct sptd_col_perf_record *r)
{
	const unsigned char *at;

	if (take64(c, &r->addr) < 0 || !(at = take(c, 8)))
		return -EBADMSG;
	r->len = get32(at);
	memcpy(&r->ksym_type, at + 4, 2);
	memcpy(&r->ksym_flags, at + 6, 2);
	r->name = take_string(c);
	return r->name ? 0 : -EBADMSG;
}

/* TEXT_POKE (Linux 5.9, kernel/events/core.c perf_event_text_poke_output):
 * addr, u16 old_len, u16 new_len, the old bytes then the new, padded to 8. */
static int parse_text_poke(struct cursor *c, struct sptd_col_perf_record *r)
{
	const unsigned char *at;
	size_t n;

	if (take64(c, &r->addr) < 0 || !(at = take(c, 4)))
		return -EBADMSG;
	memcpy(&r->poke_old_len, at, 2);
	memcpy(&r->poke_new_len, at + 2, 2);
	n = (size_t)r->poke_old_len + r->poke_new_len;
	/* the kernel pads lengths and bytes to 8: a shorter body is cut */
	r->poke_old = take(c, n);
	if (!r->poke_old || !take(c, (8 - (4 + n) % 8) % 8))
		return -EBADMSG;
	r->poke_new = r->poke_old + r->poke_old_len;
	return 0;
}

/* The body of a non-SAMPLE record, trailer excluded. */
static int parse_body(struct cursor *c, struct sptd_col_perf_record *r)
{
	switch (r->type) {
	case SPTD_PERF_RECORD_MMAP:
	case SPTD_PERF_RECORD_MMAP2:
		return parse_mmap(c, r);
	case SPTD_PERF_RECORD_COMM:
		if (take_pair(c, &r->pid, &r->tid) < 0)
			return -EBADMSG;
		r->name = take_string(c);
		return r->name ? 0 : -EBADMSG;
	case SPTD_PERF_RECORD_FORK:
	case SPTD_PERF_RECORD_EXIT:
		if (left(c) < 24)
			return -EBADMSG;
		take_pair(c, &r->pid, &r->ppid);
		take_pair(c, &r->tid, &r->ptid);
		return take64(c, &r->task_time);
	case SPTD_PERF_RECORD_SWITCH_CPU_WIDE:
		if (take_pair(c, &r->other_pid, &r->other_tid) < 0)
			return -EBADMSG;
		/* fall through */
	case SPTD_PERF_RECORD_SWITCH:
		r->switch_out = (r->misc & SPTD_PERF_MISC_SWITCH_OUT) != 0;
		r->switch_preempt = r->switch_out &&
		                    (r->misc & SPTD_PERF_MISC_SWITCH_OUT_PREEMPT) != 0;
		return 0;
	case SPTD_PERF_RECORD_AUX:
		if (left(c) < 24)
			return -EBADMSG;
		take64(c, &r->aux_offset);
		take64(c, &r->aux_size);
		return take64(c, &r->aux_flags);
	case SPTD_PERF_RECORD_ITRACE_START:
		return take_pair(c, &r->pid, &r->tid);
	case SPTD_PERF_RECORD_LOST:
		if (left(c) < 16)
			return -EBADMSG;
		take64(c, &r->lost_id);
		return take64(c, &r->lost);
	case SPTD_PERF_RECORD_LOST_SAMPLES:
		return take64(c, &r->lost);
	case SPTD_PERF_RECORD_KSYMBOL:
		return parse_ksymbol(c, r);
	case SPTD_PERF_RECORD_TEXT_POKE:
		return parse_text_poke(c, r);
	default:
		return 0;   /* a record sysptd has no use for the body of */
	}
}

/* READ: {value, [te], [tr], [id], [lost]} or, with GROUP, {nr, [te],
 * [tr], {value, [id], [lost]} * nr}. */
static int parse_read(struct cursor *c, uint64_t rf, struct sptd_col_perf_read *rd)
{
	int ret = 0;

	rd->stride = 8 + ((rf & SPTD_PERF_FORMAT_ID) ? 8 : 0) + ((rf & SPTD_PERF_FORMAT_LOST) ? 8 : 0);
	rd->nr = 1;
	ret |= take64(c, (rf & SPTD_PERF_FORMAT_GROUP) ? &rd->nr : &rd->value);
	if (rf & SPTD_PERF_FORMAT_TOTAL_TIME_ENABLED)
		ret |= take64(c, &rd->time_enabled);
	if (rf & SPTD_PERF_FORMAT_TOTAL_TIME_RUNNING)
		ret |= take64(c, &rd->time_running);
	if (ret)
		return -EBADMSG;
	if (rf & SPTD_PERF_FORMAT_GROUP) {
		if (rd->nr > left(c) / rd->stride)
			return -EBADMSG;
		rd->group = take(c, (size_t)rd->nr * rd->stride);
		if (!rd->nr)
			return 0;
		/* the first member's fields, as for a single counter */
		rd->value = sptd_col_perf_u64(rd->group, 0);
		if (rf & SPTD_PERF_FORMAT_ID)
			rd->id = sptd_col_perf_u64(rd->group, 1);
		if (rf & SPTD_PERF_FORMAT_LOST)
			rd->lost = sptd_col_perf_u64(rd->group, (rf & SPTD_PERF_FORMAT_ID) ? 2 : 1);
		return 0;
	}
	if (rf & SPTD_PERF_FORMAT_ID)
		ret |= take64(c, &rd->id);
	if (rf & SPTD_PERF_FORMAT_LOST)
		ret |= take64(c, &rd->lost);
	return ret ? -EBADMSG : 0;
}

/* A SAMPLE's REGS_USER and STACK_USER parts (what DWARF unwinding needs). */
static int parse_user_stack(struct cursor *c, const struct sptd_col_perf_layout *lay,
                            struct sptd_col_perf_sample *s)
{
	uint64_t st = lay->sample_type;

	if (st & SPTD_PERF_SAMPLE_REGS_USER) {
		if (take64(c, &s->regs_abi) < 0)
			return -EBADMSG;
		if (s->regs_abi) {
			s->nregs = (uint32_t)__builtin_popcountll(lay->regs_user);
			s->regs = take(c, (size_t)s->nregs * 8);
			if (!s->regs)
				return -EBADMSG;
		}
	}
	if (st & SPTD_PERF_SAMPLE_STACK_USER) {
		if (take64(c, &s->stack_size) < 0 || s->stack_size > left(c))
			return -EBADMSG;
		if (s->stack_size) {
			s->stack = take(c, (size_t)s->stack_size);
			if (take64(c, &s->stack_dyn) < 0 || s->stack_dyn > s->stack_size)
				return -EBADMSG;
		}
	}
	return 0;
}

/* A SAMPLE's fields, in sample_type order, up to STACK_USER. */
static int parse_sample(struct cursor *c, const struct sptd_col_perf_layout *lay,
                        struct sptd_col_perf_record *r)
{
	struct sptd_col_perf_sample *s = &r->sample;
	uint64_t st = lay->sample_type;
	int ret = 0;

	r->id.present = (st & (SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_ID |
	                       SPTD_PERF_SAMPLE_STREAM_ID | SPTD_PERF_SAMPLE_CPU |
	                       SPTD_PERF_SAMPLE_IDENTIFIER)) != 0;
	if (st & SPTD_PERF_SAMPLE_IDENTIFIER)
		ret |= take64(c, &r->id.id);
	if (st & SPTD_PERF_SAMPLE_IP)
		ret |= take64(c, &s->ip);
	if (st & SPTD_PERF_SAMPLE_TID)
		ret |= take_pair(c, &r->id.pid, &r->id.tid);
	if (st & SPTD_PERF_SAMPLE_TIME) {
		ret |= take64(c, &r->id.time);
		r->id.has_time = ret == 0;
	}
	if (st & SPTD_PERF_SAMPLE_ADDR)
		ret |= take64(c, &s->addr);
	if (st & SPTD_PERF_SAMPLE_ID)
		ret |= take64(c, &r->id.id);
	if (st & SPTD_PERF_SAMPLE_STREAM_ID)
		ret |= take64(c, &r->id.stream_id);
	if (st & SPTD_PERF_SAMPLE_CPU)
		ret |= take_pair(c, &r->id.cpu, NULL);
	if (st & SPTD_PERF_SAMPLE_PERIOD)
		ret |= take64(c, &s->period);
	if (ret)
		return -EBADMSG;
	if ((st & SPTD_PERF_SAMPLE_READ) && parse_read(c, lay->read_format, &s->read) < 0)
		return -EBADMSG;
	if (st & SPTD_PERF_SAMPLE_CALLCHAIN) {
		if (take64(c, &s->nr) < 0 || s->nr > left(c) / 8)
			return -EBADMSG;
		s->callchain = take(c, (size_t)s->nr * 8);
	}
	if (st & SPTD_PERF_SAMPLE_RAW) {
		const unsigned char *size = take(c, 4);

		if (!size)
			return -EBADMSG;
		s->raw_size = get32(size);
		s->raw = take(c, s->raw_size);
		if (!s->raw)
			return -EBADMSG;
	}
	if (st & SPTD_PERF_SAMPLE_BRANCH_STACK)
		return 0;
	return parse_user_stack(c, lay, s);
}

int sptd_col_perf_record_parse(const void *buf, size_t len,
                               const struct sptd_col_perf_layout *layout,
                               struct sptd_col_perf_record *r)
{
	const unsigned char *rec = buf;
	struct cursor body;
	uint16_t size;

	if (!buf || !layout || !r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->pid = r->tid = r->ppid = r->ptid = r->other_pid = r->other_tid = -1;
	r->id.pid = r->id.tid = r->id.cpu = -1;
	if (len < HEADER_SIZE)
		return -EBADMSG;
	r->type = get32(rec);
	memcpy(&r->misc, rec + 4, sizeof(r->misc));
	memcpy(&size, rec + 6, sizeof(size));
	r->size = size;
	if (size < HEADER_SIZE || size > len)
		return -EBADMSG;
	body.p = rec + HEADER_SIZE;
	body.end = rec + size;
	if (r->type == SPTD_PERF_RECORD_SAMPLE)
		return parse_sample(&body, layout, r);
	if (r->type >= SPTD_PERF_RECORD_USER_START)
		return 0;   /* perf's own: no trailer, body for the reader */
	if (layout->sample_id_all) {
		size_t tsize = sptd_col_perf_id_size(layout->sample_type);
		struct cursor trailer;

		if (left(&body) < tsize)
			return -EBADMSG;
		body.end -= tsize;
		trailer.p = body.end;
		trailer.end = rec + size;
		if (tsize && parse_trailer(&trailer, layout->sample_type, &r->id) < 0)
			return -EBADMSG;
	}
	return parse_body(&body, r);
}

int sptd_col_perf_sample_event_id(const void *buf, size_t len, uint64_t st, uint64_t *id)
{
	const unsigned char *rec = buf;
	size_t at;
	uint16_t size;

	if (!buf || !id)
		return -EINVAL;
	*id = 0;
	if (len < HEADER_SIZE)
		return -EBADMSG;
	memcpy(&size, rec + 6, sizeof(size));
	if (size < HEADER_SIZE || size > len)
		return -EBADMSG;
	if (st & SPTD_PERF_SAMPLE_IDENTIFIER) {
		at = 0;
	} else if (st & SPTD_PERF_SAMPLE_ID) {
		at = 8 * (size_t)(!!(st & SPTD_PERF_SAMPLE_IP) + !!(st & SPTD_PERF_SAMPLE_TID) +
		                  !!(st & SPTD_PERF_SAMPLE_TIME) + !!(st & SPTD_PERF_SAMPLE_ADDR));
	} else {
		return 0;
	}
	if ((size_t)size - HEADER_SIZE < at + 8)
		return -EBADMSG;
	*id = sptd_col_perf_u64(rec + HEADER_SIZE + at, 0);
	return 1;
}
