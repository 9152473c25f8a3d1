/* trigger_parse.c — the --trigger SPEC language: one grammar and one set of
 * messages for every kind (what each kind does once armed is in
 * trigger_<kind>.c; IRQ names become numbers in trigger_irq.c).
 *
 * Table-driven tests in tests/collector/test_parse.c cover every accepted form and the
 * rejections. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trigger-local.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Copy @len bytes of @src into the fixed field @dst of @size; -EINVAL if it
 * does not fit. */
static int copy_field(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		return -EINVAL;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

/* irq[=NUM|NAME][,min=DUR] — the part after "irq" is in @rest. */
static int parse_irq(const char *rest, struct sptd_col_trigger_spec *spec,
                     char *err, size_t errlen)
{
	const char *comma;
	size_t len;

	spec->kind = SPTD_TRIG_IRQ;
	spec->irq = -1;
	if (*rest == '=') {
		rest++;
		comma = strchr(rest, ',');
		len = comma ? (size_t)(comma - rest) : strlen(rest);
		if (!len)
			return fail(err, errlen, "irq= needs a number or a name as in /proc/interrupts");
		if (strspn(rest, "0123456789") == len) {
			char *end;
			long v = strtol(rest, &end, 10);

			if (v < 0 || v > INT_MAX)
				return fail(err, errlen, "irq number out of range");
			spec->irq = (int)v;
		} else if (copy_field(spec->irq_name, sizeof(spec->irq_name), rest, len)) {
			return fail(err, errlen, "irq name too long");
		}
		rest += len;
	}
	if (*rest == ',') {
		rest++;
		if (strncmp(rest, "min=", 4) != 0)
			return fail(err, errlen, "unknown irq option '%s' (expected min=DUR)", rest);
		if (sptd_col_parse_duration(rest + 4, &spec->min_ns) < 0)
			return fail(err, errlen, "bad duration '%s' in min=: " SPTD_DURATION_HELP, rest + 4);
		return 0;
	}
	if (*rest)
		return fail(err, errlen, "unexpected '%s' after irq (expected irq[=NUM|NAME][,min=DUR])", rest);
	return 0;
}

/* tracepoint=SYS:EVENT[,filter=EXPR] — the filter runs to the end. */
static int parse_tracepoint(const char *rest, struct sptd_col_trigger_spec *spec,
                            char *err, size_t errlen)
{
	const char *colon = strchr(rest, ':');
	const char *comma = strchr(rest, ',');
	size_t evlen;

	spec->kind = SPTD_TRIG_TRACEPOINT;
	if (!colon || (comma && comma < colon) || colon == rest)
		return fail(err, errlen, "tracepoint needs SYS:EVENT, e.g. tracepoint=sched:sched_process_exec");
	if (copy_field(spec->system, sizeof(spec->system), rest, (size_t)(colon - rest)))
		return fail(err, errlen, "tracepoint system name too long");
	evlen = comma ? (size_t)(comma - colon - 1) : strlen(colon + 1);
	if (!evlen || copy_field(spec->event, sizeof(spec->event), colon + 1, evlen))
		return fail(err, errlen, "tracepoint event name missing or too long");
	if (strspn(spec->system, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(spec->system) ||
	    strspn(spec->event, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(spec->event))
		return fail(err, errlen, "tracepoint names are letters, digits and _ only");
	if (comma) {
		if (strncmp(comma + 1, "filter=", 7) != 0)
			return fail(err, errlen, "unknown tracepoint option '%s' (expected filter=EXPR)", comma + 1);
		if (!comma[8] || copy_field(spec->filter, sizeof(spec->filter), comma + 8, strlen(comma + 8)))
			return fail(err, errlen, "filter= is empty or too long");
	}
	return 0;
}

/* break=PID:SYMBOL, watch=PID:SYMBOL[+OFF]|PID:0xADDR[,w|rw][,len=N]: the
 * part after '=' in @rest. */
static int parse_bp(const char *rest, int watch, struct sptd_col_trigger_spec *spec,
                    char *err, size_t errlen)
{
	const char *colon = strchr(rest, ':'), *comma, *what = watch ? "watch" : "break";
	char *end;
	long pid;
	size_t len;

	spec->kind = watch ? SPTD_TRIG_WATCH : SPTD_TRIG_BREAK;
	spec->bp_len = 8;
	if (!watch && rest[0] == '/') {
		/* break=PATH:SYMBOL: the ':' after the file name (a C++ symbol
		 * may hold "::" itself) */
		const char *sep = strchr(strrchr(rest, '/'), ':');

		if (!sep || !sep[1])
			return fail(err, errlen, "break=PATH:SYMBOL needs a symbol after the file, "
			            "e.g. break=/usr/lib/libfoo.so:foo_flush");
		if (copy_field(spec->path, sizeof(spec->path), rest, (size_t)(sep - rest)))
			return fail(err, errlen, "break: path too long");
		if (strchr(sep + 1, ','))
			return fail(err, errlen, "unexpected '%s' after break=PATH:SYMBOL",
			            strchr(sep + 1, ','));
		if (copy_field(spec->symbol, sizeof(spec->symbol), sep + 1, strlen(sep + 1)))
			return fail(err, errlen, "break: symbol too long");
		spec->pid = -1;   /* every process that maps PATH */
		return 0;
	}
	errno = 0;
	pid = strtol(rest, &end, 10);
	if (!colon || end != colon || colon == rest) {
		return fail(err, errlen, watch ? "watch needs PID:SYMBOL[+OFF] or PID:0xADDR, e.g. "
		            "watch=1234:counter,w,len=4" : "break needs PID:SYMBOL or /PATH:SYMBOL, e.g. "
		            "break=1234:main or break=/usr/lib/libfoo.so:foo_flush");
	}
	if (errno || pid <= 0 || pid > INT_MAX)
		return fail(err, errlen, "%s: bad process id", what);
	spec->pid = (int)pid;
	rest = colon + 1;
	comma = strchr(rest, ',');
	len = comma ? (size_t)(comma - rest) : strlen(rest);
	if (!len)
		return fail(err, errlen, "%s: nothing after PID:", what);
	if (watch && strncmp(rest, "0x", 2) == 0) {
		unsigned long long a = strtoull(rest, &end, 16);

		if (end != rest + len || a == 0)
			return fail(err, errlen, "watch: bad address '%.*s'", (int)len, rest);
		spec->addr = a;
	} else {
		const char *plus = watch ? memchr(rest, '+', len) : NULL;
		size_t nlen = plus ? (size_t)(plus - rest) : len;

		if (copy_field(spec->symbol, sizeof(spec->symbol), rest, nlen) || !nlen)
			return fail(err, errlen, "%s: symbol empty or too long", what);
		if (plus) {
			unsigned long long off = strtoull(plus + 1, &end, 0);

			if (end != rest + len || plus + 1 == end)
				return fail(err, errlen, "watch: bad offset '%.*s'", (int)(rest + len - plus - 1),
				            plus + 1);
			spec->offset = off;
		}
	}
	if (!comma)
		return 0;
	if (!watch)
		return fail(err, errlen, "unexpected '%s' after break=PID:SYMBOL", comma);
	for (const char *opt = comma + 1; *opt;) {
		const char *next = strchr(opt, ',');
		size_t olen = next ? (size_t)(next - opt) : strlen(opt);

		if (olen == 1 && *opt == 'w')
			spec->bp_rw = 0;
		else if (olen == 2 && strncmp(opt, "rw", 2) == 0)
			spec->bp_rw = 1;
		else if (olen == 5 && strncmp(opt, "len=", 4) == 0 && strchr("1248", opt[4]))
			spec->bp_len = opt[4] - '0';
		else
			return fail(err, errlen, "watch: unknown option '%.*s' (w, rw, len=1|2|4|8)",
			            (int)olen, opt);
		opt = next ? next + 1 : opt + olen;
	}
	return 0;
}

int sptd_col_parse_trigger(const char *text, struct sptd_col_trigger_spec *spec,
                           char *err, size_t errlen)
{
	if (!text || !spec)
		return fail(err, errlen, "no trigger given");
	memset(spec, 0, sizeof(*spec));
	spec->irq = -1;
	if (copy_field(spec->text, sizeof(spec->text), text, strlen(text)))
		return fail(err, errlen, "trigger spec too long");
	if (strncmp(text, "irq", 3) == 0 && (text[3] == '\0' || text[3] == '=' || text[3] == ','))
		return parse_irq(text + 3, spec, err, errlen);
	if (strncmp(text, "tracepoint=", 11) == 0)
		return parse_tracepoint(text + 11, spec, err, errlen);
	if (strncmp(text, "timer=", 6) == 0 || strncmp(text, "latency=", 8) == 0) {
		int timer = text[0] == 't';
		const char *v = text + (timer ? 6 : 8);

		spec->kind = timer ? SPTD_TRIG_TIMER : SPTD_TRIG_LATENCY;
		if (sptd_col_parse_duration(v, &spec->period_ns) < 0 || spec->period_ns <= 0)
			return fail(err, errlen, "bad duration '%s': " SPTD_DURATION_HELP, v);
		return 0;
	}
	if (strncmp(text, "break=", 6) == 0)
		return parse_bp(text + 6, 0, spec, err, errlen);
	if (strncmp(text, "watch=", 6) == 0)
		return parse_bp(text + 6, 1, spec, err, errlen);
	if (strncmp(text, "uprobe=", 7) == 0) {
		const char *colon = strrchr(text + 7, ':');

		spec->kind = SPTD_TRIG_UPROBE;
		if (!colon || colon == text + 7 || !colon[1])
			return fail(err, errlen, "uprobe needs PATH:SYMBOL, e.g. uprobe=/usr/bin/foo:main");
		if (copy_field(spec->path, sizeof(spec->path), text + 7, (size_t)(colon - text - 7)) ||
		    copy_field(spec->symbol, sizeof(spec->symbol), colon + 1, strlen(colon + 1)))
			return fail(err, errlen, "uprobe path or symbol too long");
		return 0;
	}
	return fail(err, errlen,
	            "unknown trigger '%s' (expected irq[=NUM|NAME][,min=DUR], "
	            "tracepoint=SYS:EVENT[,filter=EXPR], timer=DUR, latency=DUR, uprobe=PATH:SYMBOL, "
	            "break=PID:SYMBOL or watch=PID:SYMBOL[+OFF]|PID:0xADDR[,w|rw][,len=N])",
	            text);
}

int sptd_col_parse_event(const char *text, struct sptd_col_event_spec *ev, char *err,
                         size_t errlen)
{
	const char *colon, *comma, *end;
	size_t slen, elen;

	if (!text || !ev)
		return -EINVAL;
	memset(ev, 0, sizeof(*ev));
	colon = strchr(text, ':');
	comma = strchr(text, ',');
	end = comma ? comma : text + strlen(text);
	if (!colon || colon > end || colon == text || colon + 1 == end)
		return fail(err, errlen, "expected SYS:EVENT[,filter=EXPR] (e.g. "
		            "sched:sched_process_exec; `sysptd list-events` lists them)");
	slen = (size_t)(colon - text);
	elen = (size_t)(end - colon - 1);
	if (slen >= sizeof(ev->system) || elen >= sizeof(ev->event))
		return fail(err, errlen, "event name too long");
	memcpy(ev->system, text, slen);
	memcpy(ev->event, colon + 1, elen);
	for (const char *p = text; p < end; p++)
		if (p != colon && !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		                    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
			return fail(err, errlen, "'%.*s' is not an event name (letters, digits, '_')",
			            (int)(end - text), text);
	if (comma) {
		if (strncmp(comma + 1, "filter=", 7) != 0 || !comma[8])
			return fail(err, errlen, "unexpected '%s' after the event (expected ,filter=EXPR)",
			            comma);
		if (strlen(comma + 8) >= sizeof(ev->filter))
			return fail(err, errlen, "filter too long");
		snprintf(ev->filter, sizeof(ev->filter), "%s", comma + 8);
	}
	return 0;
}
