/* parser.c — raw ring-buffer pages + format files -> struct sptd_sched_event.
 *
 * libtraceevent parses the format files (field offsets differ between
 * kernels); kbuffer walks a page.  kbuffer trusts the page, so every page is
 * first walked here with the same rules (commit size, record lengths) and
 * refused with -EBADMSG if any record would leave the committed data, and
 * every field read is bounds-checked against its record. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "sched-local.h"

/* Page header: u64 timestamp, then a long "commit" with flags on top. */
#define PAGE_COMMIT_MASK ((1u << 27) - 1)
#define PAGE_MISSING_EVENTS (1ull << 31)
#define PAGE_MISSING_STORED (1ull << 30)
/* common_flags bits (the kernel's enum trace_flag_type, stable since 2.6) */
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10
#define TRACE_FLAG_NMI     0x40
/* Zero bytes after a copied page, so kbuffer's header reads stay inside. */
#define PAGE_SLACK 32
#define PARSER_MAX_FIELDS 8
/* The JSON object of one SPTD_SCHED_OTHER record: fields beyond it are cut
 * (the object says so with "...": true). */
#define ARGS_CAP 4096

/* One event type this parser maps, with the fields it reads. */
struct parser_event {
	int id;                                   /* format ID; -1 until parsed */
	enum sptd_sched_event_type type;          /* what it becomes */
	struct tep_format_field *common_pid;      /* common_pid */
	struct tep_format_field *common_flags;    /* common_flags (irq/softirq context) */
	struct tep_format_field *f[PARSER_MAX_FIELDS]; /* see parser_known[] */
};

static const struct {
	const char *name;                         /* "system/event" */
	enum sptd_sched_event_type type;
	const char *fields[PARSER_MAX_FIELDS];    /* order used in parse_record() */
} parser_known[] = {
	{ "sched/sched_switch", SPTD_SCHED_SWITCH,
	  { "prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm",
	    "next_pid", "next_prio" } },
	{ "sched/sched_waking", SPTD_SCHED_WAKING, { "comm", "pid", "prio", "target_cpu" } },
	{ "sched/sched_wakeup", SPTD_SCHED_WAKING, { "comm", "pid", "prio", "target_cpu" } },
	{ "sched/sched_wakeup_new", SPTD_SCHED_WAKEUP_NEW,
	  { "comm", "pid", "prio", "target_cpu" } },
	{ "sched/sched_process_fork", SPTD_SCHED_FORK,
	  { "parent_pid", "child_pid", "child_comm" } },
	{ "sched/sched_process_exit", SPTD_SCHED_EXIT, { "pid", "comm" } },
	{ "irq/irq_handler_entry", SPTD_SCHED_IRQ_ENTRY, { "irq", "name" } },
	{ "irq/irq_handler_exit", SPTD_SCHED_IRQ_EXIT, { "irq", "ret" } },
	{ "irq/softirq_entry", SPTD_SCHED_SOFTIRQ_ENTRY, { "vec" } },
	{ "irq/softirq_exit", SPTD_SCHED_SOFTIRQ_EXIT, { "vec" } },
};
#define PARSER_NKNOWN ((int)(sizeof(parser_known) / sizeof(parser_known[0])))

struct sptd_sched_parser {
	struct tep_handle *tep;                   /* parsed formats */
	struct kbuffer *kbuf;                     /* page walker; made at first page */
	int long_size;                            /* from header_page's commit field */
	struct parser_event events[PARSER_NKNOWN]; /* indexed like parser_known[] */
	struct sptd_sched_state_map states;       /* prev_state letters */
	int want_other;                           /* deliver SPTD_SCHED_OTHER records */
	char *args;                               /* their JSON args (ARGS_CAP bytes) */
	unsigned char *page;                      /* copy of the page + PAGE_SLACK */
	size_t page_cap;                          /* bytes allocated at @page */
	char error[256];                          /* last failure detail */
};

int sptd_sched_parser_create(struct sptd_sched_parser **out)
{
	struct sptd_sched_parser *p;
	int i;

	if (!out)
		return -EINVAL;
	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->tep = tep_alloc();
	if (!p->tep) {
		free(p);
		return -ENOMEM;
	}
	p->long_size = (int)sizeof(long);
	tep_set_long_size(p->tep, p->long_size);
	tep_set_page_size(p->tep, getpagesize());
	for (i = 0; i < PARSER_NKNOWN; i++) {
		p->events[i].id = -1;
		p->events[i].type = parser_known[i].type;
	}
	sptd_sched_state_map_init(&p->states, NULL);
	*out = p;
	return 0;
}

void sptd_sched_parser_destroy(struct sptd_sched_parser *p)
{
	if (!p)
		return;
	kbuffer_free(p->kbuf);
	tep_free(p->tep);
	free(p->page);
	free(p->args);
	free(p);
}

const char *sptd_sched_parser_error(const struct sptd_sched_parser *p)
{
	return p ? p->error : "";
}

static int parser_fail(struct sptd_sched_parser *p, int ret, const char *what)
{
	snprintf(p->error, sizeof(p->error), "%s", what);
	return ret;
}

/* header_page: the commit field's size is the kernel's long size. */
static int parser_header_page(struct sptd_sched_parser *p, const char *text)
{
	const char *f = strstr(text, "commit;");
	char *fields = NULL;
	int size, ret, bad_line;

	if (!f || !(f = strstr(f, "size:")) || sscanf(f, "size:%d", &size) != 1 ||
	    (size != 4 && size != 8))
		return parser_fail(p, -EBADMSG, "header_page: no usable commit field");
	/* field lines only, as the kernel writes them (format_vet.c) */
	ret = sptd_sched_format_vet(text, 1, &fields, &bad_line);
	if (ret == -EBADMSG) {
		snprintf(p->error, sizeof(p->error), "header_page: line %d is not a field line",
		         bad_line);
		return ret;
	}
	if (ret < 0)
		return parser_fail(p, ret, "out of memory");
	ret = tep_parse_header_page(p->tep, fields, strlen(fields), size);
	free(fields);
	if (ret != 0)
		return parser_fail(p, -EBADMSG, "header_page: libtraceevent refused it");
	p->long_size = size;
	tep_set_long_size(p->tep, size);
	kbuffer_free(p->kbuf);
	p->kbuf = NULL;
	return 0;
}

int sptd_sched_parser_add_format(struct sptd_sched_parser *p, const char *name,
                                 const char *text)
{
	char sys[SPTD_SCHED_NAME_LEN], *fields;
	const char *slash;
	struct tep_event *ev;
	int i, k = -1, ret, bad_line;

	if (!p || !name || !text)
		return -EINVAL;
	p->error[0] = '\0';
	if (strcmp(name, "header_page") == 0)
		return parser_header_page(p, text);
	if (strcmp(name, "header_event") == 0) {
		/* kbuffer knows the compressed header; just check it is that one */
		if (!strstr(text, "type_len") || !strstr(text, "time_delta"))
			return parser_fail(p, -EBADMSG, "header_event: not the compressed header");
		return 0;
	}
	slash = strchr(name, '/');
	if (!slash || slash == name || (size_t)(slash - name) >= sizeof(sys) ||
	    !sptd_sched_name_ok(slash + 1))
		return parser_fail(p, -EINVAL, "format name is not SYSTEM/EVENT");
	memcpy(sys, name, (size_t)(slash - name));
	sys[slash - name] = '\0';
	/* libtraceevent only ever sees lines of the kernel's own shapes */
	ret = sptd_sched_format_vet(text, 0, &fields, &bad_line);
	if (ret == -EBADMSG) {
		snprintf(p->error, sizeof(p->error), "format of %s: line %d is not a line a "
		         "kernel writes", name, bad_line);
		return ret;
	}
	if (ret < 0)
		return parser_fail(p, ret, "out of memory");
	ret = tep_parse_event(p->tep, fields, strlen(fields), sys);
	free(fields);
	if (ret != 0) {
		/* TEP_ERRNO__MEM_ALLOC_FAILED is the only non-content failure */
		snprintf(p->error, sizeof(p->error), "format of %s: libtraceevent cannot parse it",
		         name);
		return -EBADMSG;
	}
	ev = tep_find_event_by_name(p->tep, sys, slash + 1);
	if (!ev)
		return parser_fail(p, -EBADMSG, "format parsed but event not found by name");
	for (i = 0; i < PARSER_NKNOWN; i++)
		if (strcmp(parser_known[i].name, name) == 0)
			k = i;
	if (k < 0)
		return 0;   /* parsed (it may share pages) but not mapped */
	p->events[k].id = ev->id;
	p->events[k].common_pid = tep_find_common_field(ev, "common_pid");
	p->events[k].common_flags = tep_find_common_field(ev, "common_flags");
	for (i = 0; i < PARSER_MAX_FIELDS && parser_known[k].fields[i]; i++)
		p->events[k].f[i] = tep_find_field(ev, parser_known[k].fields[i]);
	if (!p->events[k].common_pid || !p->events[k].f[0]) {
		p->events[k].id = -1;
		snprintf(p->error, sizeof(p->error), "format of %s lacks the fields sysptd reads",
		         name);
		return -EBADMSG;
	}
	if (parser_known[k].type == SPTD_SCHED_SWITCH &&
	    !sptd_sched_state_map_init(&p->states, text))
		sptd_sched_log(LOG_WARNING, "sched_switch format has no __print_flags for "
		               "prev_state; using the Linux 4.14+ bit layout");
	return 0;
}

/* ---- reading fields, bounds-checked -------------------------------------- */

/* Integer field @f of a record of @size bytes; @def if absent or outside. */
static long long field_num(const struct tep_format_field *f, const unsigned char *rec,
                           int size, long long def)
{
	unsigned long long v;

	if (!f || f->offset < 0 || f->size <= 0 || f->offset + f->size > size)
		return def;
	if (tep_read_number_field((struct tep_format_field *)f, rec, &v) != 0)
		return def;
	if (f->flags & TEP_FIELD_IS_SIGNED) {
		switch (f->size) {
		case 1: return (signed char)v;
		case 2: return (short)v;
		case 4: return (int)v;
		default: return (long long)v;
		}
	}
	return (long long)v;
}

/* String field (fixed char[N] or __data_loc) into @out, always terminated. */
static void field_str(const struct tep_format_field *f, const unsigned char *rec,
                      int size, char *out, size_t cap)
{
	long long off, len;
	size_t n;

	out[0] = '\0';
	if (!f || f->offset < 0 || f->size <= 0 || f->offset + f->size > size)
		return;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		unsigned int loc;

		if (f->size != 4)
			return;
		memcpy(&loc, rec + f->offset, 4);
		off = loc & 0xffff;
		len = loc >> 16;
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += f->offset + f->size;
	} else {
		off = f->offset;
		len = f->size;
	}
	if (off < 0 || len < 0 || off + len > size)
		return;
	n = strnlen((const char *)rec + off, (size_t)len);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, rec + off, n);
	out[n] = '\0';
}

/* Fill @ev from the record of known event @pe; 0, or -EBADMSG if the record
 * is too short for the fields that make it useful. */
static int parse_record(struct sptd_sched_parser *p, const struct parser_event *pe,
                        const unsigned char *rec, int size, struct sptd_sched_event *ev)
{
	struct tep_format_field *const *f = pe->f;

	ev->type = pe->type;
	ev->pid = (int)field_num(pe->common_pid, rec, size, -1);
	if (pe->common_flags) {
		long long fl = field_num(pe->common_flags, rec, size, -1);

		if (fl >= 0)
			ev->context = SPTD_SCHED_CTX_KNOWN |
			              (fl & TRACE_FLAG_HARDIRQ ? SPTD_SCHED_CTX_HARDIRQ : 0) |
			              (fl & TRACE_FLAG_SOFTIRQ ? SPTD_SCHED_CTX_SOFTIRQ : 0) |
			              (fl & TRACE_FLAG_NMI ? SPTD_SCHED_CTX_NMI : 0);
	}
	if (f[0]->offset + f[0]->size > size)
		return -EBADMSG;
	switch (pe->type) {
	case SPTD_SCHED_SWITCH:
		field_str(f[0], rec, size, ev->u.sw.prev_comm, sizeof(ev->u.sw.prev_comm));
		ev->u.sw.prev_tid = (int)field_num(f[1], rec, size, -1);
		ev->u.sw.prev_prio = (int)field_num(f[2], rec, size, -1);
		sptd_sched_state_format(&p->states,
		                        (uint64_t)field_num(f[3], rec, size, 0),
		                        ev->u.sw.prev_state);
		field_str(f[4], rec, size, ev->u.sw.next_comm, sizeof(ev->u.sw.next_comm));
		ev->u.sw.next_tid = (int)field_num(f[5], rec, size, -1);
		ev->u.sw.next_prio = (int)field_num(f[6], rec, size, -1);
		if (ev->u.sw.prev_tid < 0 || ev->u.sw.next_tid < 0)
			return -EBADMSG;
		break;
	case SPTD_SCHED_WAKING:
	case SPTD_SCHED_WAKEUP_NEW:
		field_str(f[0], rec, size, ev->u.wake.comm, sizeof(ev->u.wake.comm));
		ev->u.wake.tid = (int)field_num(f[1], rec, size, -1);
		ev->u.wake.prio = (int)field_num(f[2], rec, size, -1);
		ev->u.wake.target_cpu = (int)field_num(f[3], rec, size, -1);
		if (ev->u.wake.tid < 0)
			return -EBADMSG;
		break;
	case SPTD_SCHED_FORK:
		ev->u.fork.parent_tid = (int)field_num(f[0], rec, size, -1);
		ev->u.fork.child_tid = (int)field_num(f[1], rec, size, -1);
		field_str(f[2], rec, size, ev->u.fork.child_comm, sizeof(ev->u.fork.child_comm));
		break;
	case SPTD_SCHED_EXIT:
		ev->u.exit.tid = (int)field_num(f[0], rec, size, -1);
		field_str(f[1], rec, size, ev->u.exit.comm, sizeof(ev->u.exit.comm));
		break;
	case SPTD_SCHED_IRQ_ENTRY:
		ev->u.irq.irq = (int)field_num(f[0], rec, size, -1);
		ev->u.irq.ret = -1;
		field_str(f[1], rec, size, ev->u.irq.name, sizeof(ev->u.irq.name));
		break;
	case SPTD_SCHED_IRQ_EXIT:
		ev->u.irq.irq = (int)field_num(f[0], rec, size, -1);
		ev->u.irq.ret = (int)field_num(f[1], rec, size, -1);
		break;
	case SPTD_SCHED_SOFTIRQ_ENTRY:
	case SPTD_SCHED_SOFTIRQ_EXIT:
		ev->u.softirq.vec = (int)field_num(f[0], rec, size, -1);
		break;
	case SPTD_SCHED_LOST:   /* not a record type */
	case SPTD_SCHED_OTHER:  /* parse_other() */
		return -EBADMSG;
	}
	return 0;
}

/* ---- any other tracepoint (-e) ---------------------------------------------- */

void sptd_sched_parser_want_other(struct sptd_sched_parser *p, int want)
{
	if (p)
		p->want_other = want;
}

/* Bytes of the well-formed UTF-8 sequence at @s (NUL-terminated): 2 to 4,
 * or 0 when the byte there starts none (a stray continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, a sequence cut short). */
static int utf8_len(const unsigned char *s)
{
	/* the second byte's range for each lead byte (RFC 3629's table);
	 * later bytes are 0x80..0xBF */
	unsigned char lo = 0x80, hi = 0xbf;
	int n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* Append @s to @buf at *@off as the body of a JSON string (no quotes):
 * well-formed UTF-8 as it is; '"' and '\\' escaped; a control character,
 * and each byte that is not part of well-formed UTF-8, as \u00XX (so every
 * \u00XX stands for one byte of the field, docs/SCHEMA.md).
 * 0, or -ENOSPC when it does not fit (nothing of it kept then). */
static int json_str(char *buf, size_t cap, size_t *off, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = *off;

	while (*u) {
		int n = *u >= 0x80 ? utf8_len(u) : 1, w;

		if (n > 1) {
			if ((size_t)n >= cap - o)
				return -ENOSPC;
			memcpy(buf + o, u, (size_t)n);
			o += (size_t)n;
			u += n;
			continue;
		}
		if (*u == '"' || *u == '\\')
			w = snprintf(buf + o, cap - o, "\\%c", *u);
		else if (*u < 0x20 || *u >= 0x7f)
			w = snprintf(buf + o, cap - o, "\\u%04x", *u);
		else
			w = snprintf(buf + o, cap - o, "%c", *u);
		if (w < 0 || (size_t)w >= cap - o)
			return -ENOSPC;
		o += (size_t)w;
		u++;
	}
	*off = o;
	return 0;
}

/* The record's own fields (not common_*) as one JSON object in p->args:
 * numbers as numbers, char arrays and __data_loc strings as strings, other
 * arrays as their length ("<N bytes>").  Bounds as field_num/field_str. */
static void other_args(struct sptd_sched_parser *p, struct tep_event *ev,
                       const unsigned char *rec, int size)
{
	size_t off = 1, cap = ARGS_CAP - 16; /* room to close: ',"...":true}' */
	struct tep_format_field *f;
	char text[1024];
	int first = 1;

	p->args[0] = '{';
	for (f = ev->format.fields; f; f = f->next) {
		size_t mark = off;
		int n;

		n = snprintf(p->args + off, cap - off, "%s\"", first ? "" : ",");
		if (n < 0 || (size_t)n >= cap - off)
			goto cut;
		off += (size_t)n;
		if (json_str(p->args, cap, &off, f->name) < 0)
			goto cut_at;
		n = snprintf(p->args + off, cap - off, "\":");
		if (n < 0 || (size_t)n >= cap - off)
			goto cut_at;
		off += (size_t)n;
		if ((f->flags & TEP_FIELD_IS_STRING) ||
		    ((f->flags & TEP_FIELD_IS_ARRAY) && f->type && strstr(f->type, "char"))) {
			field_str(f, rec, size, text, sizeof(text));
			if (off + 1 >= cap)
				goto cut_at;
			p->args[off++] = '"';
			if (json_str(p->args, cap, &off, text) < 0 || off + 1 >= cap)
				goto cut_at;
			p->args[off++] = '"';
		} else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
			n = snprintf(p->args + off, cap - off, "\"<%d bytes>\"", f->size);
			if (n < 0 || (size_t)n >= cap - off)
				goto cut_at;
			off += (size_t)n;
		} else {
			long long v = field_num(f, rec, size, 0);

			n = (f->flags & TEP_FIELD_IS_SIGNED) ?
			    snprintf(p->args + off, cap - off, "%lld", v) :
			    snprintf(p->args + off, cap - off, "%llu", (unsigned long long)v);
			if (n < 0 || (size_t)n >= cap - off)
				goto cut_at;
			off += (size_t)n;
		}
		first = 0;
		continue;
cut_at:
		off = mark;
cut:
		snprintf(p->args + off, ARGS_CAP - off, "%s\"...\":true}", first ? "" : ",");
		return;
	}
	snprintf(p->args + off, ARGS_CAP - off, "}");
}

/* A record of a format no parser_known entry maps: SPTD_SCHED_OTHER with
 * its name and fields.  0 delivered (or nothing to deliver). */
static int parse_other(struct sptd_sched_parser *p, int id, const unsigned char *rec,
                       int size, struct sptd_sched_event *evt)
{
	struct tep_event *ev = tep_find_event(p->tep, id);
	struct tep_format_field *pid;

	if (!ev || !ev->system || !ev->name)
		return -ENOENT;
	if (!p->args && !(p->args = malloc(ARGS_CAP)))
		return -ENOMEM;
	evt->type = SPTD_SCHED_OTHER;
	snprintf(evt->u.other.name, sizeof(evt->u.other.name), "%s:%s", ev->system, ev->name);
	pid = tep_find_common_field(ev, "common_pid");
	evt->pid = (int)field_num(pid, rec, size, -1);
	other_args(p, ev, rec, size);
	evt->u.other.args = p->args;
	return 0;
}

/* ---- pages ---------------------------------------------------------------- */

static unsigned int page_u32(const unsigned char *at)
{
	unsigned int v;

	memcpy(&v, at, 4);
	return v;
}

/* Walk the record headers the way kbuffer will and refuse any record that
 * leaves [0, @size) of the data area or does not move forward.  @data has
 * PAGE_SLACK readable bytes past @size, as kbuffer may read a padding
 * header's length word there. */
static int page_check_records(const unsigned char *data, unsigned long long size)
{
	unsigned long long curr = 0;

	while (curr < size) {
		unsigned int hdr, type_len;
		long long length;
		unsigned long long index, next;

		if (curr + 4 > size)
			return -EBADMSG;
		hdr = page_u32(data + curr);
		type_len = hdr & 31;
		index = curr + 4;
		switch (type_len) {
		case 29:        /* padding: length in the next word */
			length = (int)page_u32(data + index);
			break;
		case 30:        /* time extend */
		case 31:        /* absolute time stamp */
			index += 4;
			length = 0;
			break;
		case 0:         /* big record: length word first */
			/* the word counts itself; an event holds at least its
			 * 8-byte common header */
			if (index + 4 > size || page_u32(data + index) < 4 + 8)
				return -EBADMSG;
			length = ((long long)page_u32(data + index) - 4 + 3) & ~3LL;
			index += 4;
			break;
		default:
			length = type_len * 4;
			break;
		}
		if (length < 0)
			return -EBADMSG;
		next = index + (unsigned long long)length;
		if (next <= curr || next > 0xffffffffull)
			return -EBADMSG;
		if (next > size) {
			if (type_len == 29)   /* padding to the end: kbuffer stops */
				break;
			return -EBADMSG;
		}
		curr = next;
	}
	return 0;
}

int sptd_sched_parser_parse_page(struct sptd_sched_parser *p, int cpu,
                                 const void *page, size_t len,
                                 sptd_sched_event_fn fn, void *ctx)
{
	unsigned long long commit, size, ts;
	size_t start;
	void *rec;
	int count = 0, ret = 0;

	if (!p || !page || cpu < 0 || len > (1u << 27))
		return -EINVAL;
	p->error[0] = '\0';
	start = 8 + (size_t)p->long_size;
	if (len < start)
		return parser_fail(p, -EBADMSG, "page shorter than its header");
	if (p->long_size == 8) {
		memcpy(&commit, (const unsigned char *)page + 8, 8);
	} else {
		unsigned int c4;

		memcpy(&c4, (const unsigned char *)page + 8, 4);
		commit = c4;
	}
	size = commit & PAGE_COMMIT_MASK;
	if (start + size > len ||
	    ((commit & PAGE_MISSING_EVENTS) && (commit & PAGE_MISSING_STORED) &&
	     start + size + (size_t)p->long_size > len))
		return parser_fail(p, -EBADMSG, "page commit size beyond the page");
	if (len + PAGE_SLACK > p->page_cap) {
		unsigned char *bigger = realloc(p->page, len + PAGE_SLACK);

		if (!bigger)
			return -ENOMEM;
		p->page = bigger;
		p->page_cap = len + PAGE_SLACK;
	}
	memcpy(p->page, page, len);
	memset(p->page + len, 0, PAGE_SLACK);
	if (page_check_records(p->page + start, size) < 0)
		return parser_fail(p, -EBADMSG, "record length runs past the committed data");
	if (!p->kbuf) {
		p->kbuf = kbuffer_alloc(p->long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
		                        KBUFFER_ENDIAN_SAME_AS_HOST);
		if (!p->kbuf)
			return -ENOMEM;
	}
	if (kbuffer_load_subbuffer(p->kbuf, p->page) != 0)
		return parser_fail(p, -EBADMSG, "kbuffer refused the page");
	if ((commit & PAGE_MISSING_EVENTS) && fn) {
		/* the kernel overwrote events of this CPU before this page */
		struct sptd_sched_event lost = { .type = SPTD_SCHED_LOST, .cpu = cpu, .pid = -1 };
		uint64_t page_ts;

		memcpy(&page_ts, p->page, 8);
		lost.ts = (int64_t)page_ts;
		lost.u.lost.reason = SPTD_SCHED_LOST_OVERWRITTEN;
		lost.u.lost.count = -1;
		if (commit & PAGE_MISSING_STORED) {
			if (p->long_size == 8) {
				uint64_t n;

				memcpy(&n, p->page + start + size, 8);
				lost.u.lost.count = n > INT64_MAX ? -1 : (int64_t)n;
			} else {
				uint32_t n;

				memcpy(&n, p->page + start + size, 4);
				lost.u.lost.count = n;
			}
		}
		ret = fn(ctx, &lost);
		if (ret < 0)
			return ret;
	}
	for (rec = kbuffer_read_event(p->kbuf, &ts); rec;
	     rec = kbuffer_next_event(p->kbuf, &ts)) {
		const unsigned char *r = rec;
		int rsize = kbuffer_event_size(p->kbuf);
		struct tep_record trec = { 0 };
		struct sptd_sched_event ev;
		const struct parser_event *pe = NULL;
		int id, i;

		if (r < p->page + start || rsize < 0 ||
		    (size_t)(r - p->page) + (size_t)rsize > start + size)
			return parser_fail(p, -EBADMSG, "record outside the committed data");
		if (rsize < 2)
			continue;
		trec.data = (void *)rec;
		trec.size = rsize;
		trec.cpu = cpu;
		trec.ts = ts;
		id = tep_data_type(p->tep, &trec);
		for (i = 0; i < PARSER_NKNOWN; i++)
			if (p->events[i].id >= 0 && p->events[i].id == id)
				pe = &p->events[i];
		if (!pe && !p->want_other)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.ts = (int64_t)ts;
		ev.cpu = cpu;
		if (!pe) {
			ret = parse_other(p, id, r, rsize, &ev);
			if (ret == -ENOENT)
				continue;   /* a type with no format: as before, skipped */
			if (ret < 0)
				return ret;
		} else if (parse_record(p, pe, r, rsize, &ev) < 0)
			return parser_fail(p, -EBADMSG, "record too short for its format");
		count++;
		if (fn) {
			ret = fn(ctx, &ev);
			if (ret < 0)
				return ret;
		}
	}
	return count;
}
