/* perfdata_tracing.c — a perf.data's wakeup and interrupt tracepoints as
 * ftrace ring-buffer pages, so that `sysptd import` of `perf sched record`
 * (or `perf record -e 'irq:*'`) data reaches the scheduling tables through
 * the same parser and builder as the recorder's own ftrace pages: wakers,
 * wakeup latencies, interrupt context, IRQ slices.
 *
 * A tracepoint sample's RAW field is the very record the kernel writes
 * into an ftrace ring (common_type, common_flags, common_pid, fields), and
 * the file's TRACING_DATA feature holds the formats that describe it
 * (tools/perf/util/trace-event-info.c writes the layout trace-cmd.dat(5)
 * documents: magic, version, endianness, long size, page size,
 * header_page, header_event, ftrace formats, then per system its event
 * formats).  The records are sorted per CPU by time and packed into pages
 * as the kernel's ring buffer lays them out (kernel/trace/ring_buffer.c:
 * a u64 page time stamp, a long commit count, then events whose 32-bit
 * header holds type_len:5 and time_delta:27, with a TIME_EXTEND event
 * where a delta needs more bits).
 *
 * Context switches are not packed: the import already takes them from the
 * best source the file has (perfdata_switches.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata-local.h"
#include "sptd_store.h"

/* The tracepoints packed, as "SYSTEM/EVENT". */
static const char *const wanted[] = {
	"sched/sched_waking", "sched/sched_wakeup", "sched/sched_wakeup_new",
	"irq/irq_handler_entry", "irq/irq_handler_exit",
	"irq/softirq_entry", "irq/softirq_exit",
};
#define NWANTED (sizeof(wanted) / sizeof(wanted[0]))
#define W_WAKEUP 1                     /* index of sched_wakeup in wanted[] */
#define W_WAKING 0                     /* index of sched_waking */

/* ring_buffer.c's event types and sizes */
#define RB_TYPE_TIME_EXTEND 30
#define RB_MAX_SMALL_DATA   (28 * 4)   /* type_len 1..28: 4-byte units */
#define RB_DELTA_BITS       27
/* a record larger than this is not one of the wanted tracepoints */
#define TP_MAX_RECORD       1024

/* One kept tracepoint record. */
struct tp_rec {
	int64_t ts;          /* perf clock ns */
	int cpu;
	int which;           /* index in wanted[] */
	size_t seq;          /* file order: ties keep it */
	uint32_t len;        /* bytes at data */
	uint8_t *data;       /* heap copy of the RAW field */
};

struct sptd_col_pd_tracing {
	char *header_page, *header_event; /* format texts (heap), NULL absent */
	char *format[NWANTED];            /* each wanted event's format, NULL absent */
	uint64_t id[NWANTED];             /* its tracepoint id (attr.config) */
	int long_size;                    /* the file's "long" (4 or 8) */
	struct tp_rec *rec;
	size_t nrec, caprec;
	size_t per_kind[NWANTED];         /* records kept of each */
};

/* ---- TRACING_DATA ------------------------------------------------------------ */

/* A cursor over the feature's bytes; every read is bounds-checked. */
struct td_cur {
	const uint8_t *p, *end;
};

static int td_u32(struct td_cur *c, uint32_t *v)
{
	if (c->end - c->p < 4)
		return -EBADMSG;
	*v = sptd_col_pd_u32(c->p);
	c->p += 4;
	return 0;
}

static int td_u64(struct td_cur *c, uint64_t *v)
{
	if (c->end - c->p < 8)
		return -EBADMSG;
	*v = sptd_col_pd_u64(c->p);
	c->p += 8;
	return 0;
}

/* A NUL-terminated string at the cursor, borrowed. */
static int td_str(struct td_cur *c, const char **s)
{
	const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));

	if (!nul)
		return -EBADMSG;
	*s = (const char *)c->p;
	c->p = nul + 1;
	return 0;
}

/* A u64-sized text at the cursor, borrowed (not NUL-terminated). */
static int td_text(struct td_cur *c, const char **text, size_t *len)
{
	uint64_t n;

	if (td_u64(c, &n) < 0 || n > (uint64_t)(c->end - c->p))
		return -EBADMSG;
	*text = (const char *)c->p;
	*len = (size_t)n;
	c->p += n;
	return 0;
}

static char *dup_text(const char *text, size_t len)
{
	char *s = malloc(len + 1);

	if (s) {
		memcpy(s, text, len);
		s[len] = '\0';
	}
	return s;
}

/* The value after "@key" on a line of @text, e.g. "name: " or "ID: ". */
static int format_line(const char *text, size_t len, const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key), i = 0;

	while (i < len) {
		const char *line = text + i;
		const char *eol = memchr(line, '\n', len - i);
		size_t n = eol ? (size_t)(eol - line) : len - i;

		if (n > klen && memcmp(line, key, klen) == 0 && n - klen < outlen) {
			memcpy(out, line + klen, n - klen);
			out[n - klen] = '\0';
			return 0;
		}
		i += n + 1;
	}
	return -ENOENT;
}

/* Keep @text as the format of SYSTEM @sys's event if it is a wanted one. */
static int keep_format(struct sptd_col_pd_tracing *t, const char *sys, const char *text,
                       size_t len)
{
	char name[128], id[32], full[160], *end;
	unsigned long long v;

	if (format_line(text, len, "name: ", name, sizeof(name)) < 0 ||
	    format_line(text, len, "ID: ", id, sizeof(id)) < 0)
		return 0;
	snprintf(full, sizeof(full), "%s/%s", sys, name);
	errno = 0;
	v = strtoull(id, &end, 10);
	if (errno || end == id || *end)
		return 0;
	for (size_t i = 0; i < NWANTED; i++)
		if (strcmp(full, wanted[i]) == 0 && !t->format[i]) {
			if (!(t->format[i] = dup_text(text, len)))
				return -ENOMEM;
			t->id[i] = v;
		}
	return 0;
}

/* Read the feature: 0 (formats found or not), -ENOMEM, -EBADMSG. */
static int parse_tracing_data(struct sptd_col_pd_tracing *t, const uint8_t *td, size_t len)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct td_cur c = { td, td + len };
	const char *s, *text;
	size_t n;
	uint32_t count, nsys;
	uint64_t skip;

	if (len < sizeof(magic) || memcmp(td, magic, sizeof(magic)) != 0)
		return -EBADMSG;
	c.p += sizeof(magic);
	if (td_str(&c, &s) < 0 || c.end - c.p < 6)
		return -EBADMSG;
	if (c.p[0] != 0)                 /* big-endian: not read (perfdata-local.h) */
		return -EBADMSG;
	t->long_size = c.p[1];
	if (t->long_size != 4 && t->long_size != 8)
		return -EBADMSG;
	c.p += 2 + 4;                    /* endianness, long size, page size */
	if (td_str(&c, &s) < 0 || strcmp(s, "header_page") != 0 || td_text(&c, &text, &n) < 0)
		return -EBADMSG;
	if (!(t->header_page = dup_text(text, n)))
		return -ENOMEM;
	if (td_str(&c, &s) < 0 || strcmp(s, "header_event") != 0 || td_text(&c, &text, &n) < 0)
		return -EBADMSG;
	if (!(t->header_event = dup_text(text, n)))
		return -ENOMEM;
	if (td_u32(&c, &count) < 0)
		return -EBADMSG;
	for (uint32_t i = 0; i < count; i++)   /* ftrace's own formats */
		if (td_u64(&c, &skip) < 0 || skip > (uint64_t)(c.end - c.p))
			return -EBADMSG;
		else
			c.p += skip;
	if (td_u32(&c, &nsys) < 0)
		return -EBADMSG;
	for (uint32_t i = 0; i < nsys; i++) {
		const char *sys;

		if (td_str(&c, &sys) < 0 || td_u32(&c, &count) < 0)
			return -EBADMSG;
		for (uint32_t k = 0; k < count; k++) {
			int ret;

			if (td_text(&c, &text, &n) < 0)
				return -EBADMSG;
			if ((ret = keep_format(t, sys, text, n)) < 0)
				return ret;
		}
	}
	return 0;
}

void sptd_col_pd_tracing_destroy(struct sptd_col_pd_tracing *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrec; i++)
		free(t->rec[i].data);
	free(t->rec);
	for (size_t i = 0; i < NWANTED; i++)
		free(t->format[i]);
	free(t->header_page);
	free(t->header_event);
	free(t);
}

int sptd_col_pd_tracing_create(const struct sptd_col_perfdata *pd,
                               struct sptd_col_pd_tracing **out)
{
	struct sptd_col_pd_tracing *t;
	const uint8_t *td;
	size_t len = 0;
	int ret = 0;

	if (!pd || !out)
		return -EINVAL;
	*out = NULL;
	if (!(t = calloc(1, sizeof(*t))))
		return -ENOMEM;
	td = sptd_col_perfdata_feature(pd, PD_FEAT_TRACING_DATA, &len);
	if (td && len)
		ret = parse_tracing_data(t, td, len);
	if (ret == -ENOMEM) {
		sptd_col_pd_tracing_destroy(t);
		return ret;
	}
	if (ret < 0 || !t->header_page || !t->header_event) {
		/* formats that do not parse: no tracepoint is packed (the
		 * switches still come from their own path) */
		for (size_t i = 0; i < NWANTED; i++) {
			free(t->format[i]);
			t->format[i] = NULL;
		}
	}
	*out = t;
	return 0;
}

int sptd_col_pd_tracing_add(struct sptd_col_pd_tracing *t, uint64_t config, int64_t ts,
                            int cpu, const void *raw, uint32_t raw_size)
{
	struct tp_rec *r;
	size_t which;

	if (!t || (!raw && raw_size))
		return -EINVAL;
	for (which = 0; which < NWANTED; which++)
		if (t->format[which] && t->id[which] == config)
			break;
	/* the common fields (8 bytes) at least; a sane size; a CPU a page
	 * row can name */
	if (which == NWANTED || raw_size < 8 || raw_size > TP_MAX_RECORD || cpu < 0 ||
	    cpu >= PD_MAX_CPU || ts <= 0)
		return 0;
	if (t->nrec == t->caprec) {
		size_t ncap = t->caprec ? t->caprec * 2 : 256;
		struct tp_rec *n = realloc(t->rec, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->rec = n;
		t->caprec = ncap;
	}
	r = &t->rec[t->nrec];
	if (!(r->data = malloc(raw_size)))
		return -ENOMEM;
	memcpy(r->data, raw, raw_size);
	r->len = raw_size;
	r->ts = ts;
	r->cpu = cpu;
	r->which = (int)which;
	r->seq = t->nrec++;
	t->per_kind[which]++;
	return 1;
}

/* ---- pages ------------------------------------------------------------------- */

static int rec_cmp(const void *a, const void *b)
{
	const struct tp_rec *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);   /* little-endian host and file (perfdata-local.h) */
}

/* The page being filled for one CPU. */
struct page_out {
	struct sptd_store *st;
	uint8_t *page;       /* page_size bytes */
	size_t page_size;
	size_t hdr;          /* 8 + long size: where events start */
	size_t used;         /* event bytes written */
	int64_t last_ts;     /* time of the latest event written */
	int cpu, seq;        /* row of the page */
	int open;            /* 1: the page holds a time stamp */
};

static int page_flush(struct page_out *o)
{
	uint64_t commit = o->used;
	int ret;

	if (!o->open)
		return 0;
	memcpy(o->page + 8, &commit, o->hdr - 8);
	ret = SPTD_STORE_ADD(o->st, raw_ftrace_page, o->cpu, o->seq++, o->page, o->page_size);
	memset(o->page, 0, o->page_size);
	o->used = 0;
	o->open = 0;
	return ret < 0 ? ret : 0;
}

/* Append one record, opening a new page where it does not fit. */
static int page_add(struct page_out *o, const struct tp_rec *r)
{
	uint32_t padded = (r->len + 3) & ~3u;
	size_t body = padded <= RB_MAX_SMALL_DATA ? 4 + padded : 8 + padded;
	uint64_t delta;
	size_t need;
	uint8_t *e;
	int ret;

	for (;;) {
		delta = o->open ? (uint64_t)(r->ts - o->last_ts) : 0;
		need = body + (delta >> RB_DELTA_BITS ? 8 : 0);
		if (o->open && o->hdr + o->used + need > o->page_size) {
			if ((ret = page_flush(o)) < 0)
				return ret;
			continue;
		}
		break;
	}
	if (o->hdr + need > o->page_size)
		return 0;                /* cannot be, given TP_MAX_RECORD */
	if (!o->open) {
		uint64_t ts = (uint64_t)r->ts;

		memcpy(o->page, &ts, 8);
		o->open = 1;
	}
	e = o->page + o->hdr + o->used;
	if (delta >> RB_DELTA_BITS) {
		put_u32(e, (uint32_t)((delta & ((1u << RB_DELTA_BITS) - 1)) << 5) | RB_TYPE_TIME_EXTEND);
		put_u32(e + 4, (uint32_t)(delta >> RB_DELTA_BITS));
		e += 8;
		o->used += 8;
		delta = 0;
	}
	if (padded <= RB_MAX_SMALL_DATA) {
		put_u32(e, (uint32_t)(delta << 5) | (padded / 4));
		memcpy(e + 4, r->data, r->len);
	} else {
		/* type_len 0: array[0] is the length that follows the header */
		put_u32(e, (uint32_t)(delta << 5));
		put_u32(e + 4, padded + 4);
		memcpy(e + 8, r->data, r->len);
	}
	o->used += body;
	o->last_ts = r->ts;
	return 0;
}

int64_t sptd_col_pd_tracing_store(struct sptd_col_pd_tracing *t, struct sptd_store *st)
{
	struct page_out o = { .st = st, .cpu = -1 };
	long ps = sysconf(_SC_PAGESIZE);
	int64_t stored = 0;
	int ret = 0;

	if (!t || !st)
		return -EINVAL;
	if (!t->nrec)
		return 0;
	/* the ftrace recorder enables one of the pair; so does the import:
	 * sched_waking (at the waker, with its context) where the file has it */
	if (t->per_kind[W_WAKING])
		t->per_kind[W_WAKEUP] = 0;
	ret = SPTD_STORE_ADD(st, raw_ftrace_format, "header_page", t->header_page);
	if (ret >= 0)
		ret = SPTD_STORE_ADD(st, raw_ftrace_format, "header_event", t->header_event);
	for (size_t i = 0; i < NWANTED && ret >= 0; i++)
		if (t->per_kind[i])
			ret = SPTD_STORE_ADD(st, raw_ftrace_format, wanted[i], t->format[i]);
	if (ret < 0)
		return ret;
	o.page_size = ps > 0 ? (size_t)ps : 4096;
	o.hdr = 8 + (size_t)t->long_size;
	if (!(o.page = calloc(1, o.page_size)))
		return -ENOMEM;
	qsort(t->rec, t->nrec, sizeof(*t->rec), rec_cmp);
	for (size_t i = 0; i < t->nrec && ret >= 0; i++) {
		const struct tp_rec *r = &t->rec[i];

		if (!t->per_kind[r->which])
			continue;
		if (r->cpu != o.cpu) {
			if ((ret = page_flush(&o)) < 0)
				break;
			o.cpu = r->cpu;
			o.seq = 0;
		}
		if ((ret = page_add(&o, r)) >= 0)
			stored++;
	}
	if (ret >= 0)
		ret = page_flush(&o);
	free(o.page);
	return ret < 0 ? ret : stored;
}
