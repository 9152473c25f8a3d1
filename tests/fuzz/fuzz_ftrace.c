/* fuzz_ftrace.c — the ftrace page parser (sched/) and the slice builder
 * behind it on hostile pages, as `sysptd decode` meets them in an
 * incident's raw_ftrace_page rows.
 *
 * Input: a 32-byte header, then ring-buffer pages of 4096 bytes (the last
 * may be short), page i belonging to CPU i % ncpus:
 *   [0]      flags: bit 0 the trace clock is x86-tsc (convert with the
 *            mult/shift below, as derive does), else mono (ns already)
 *   [1]      ncpus (0 counts as 1)
 *   [8..15]  window_start, [16..23] window_end (int64, as meta holds them)
 *   [24..27] tsc mult, [28] tsc shift
 * The formats are this kernel's (tests/fuzz/data/ftrace-formats.txt).
 * Every row the builder emits must lie inside the window with dur >= 0. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "sptd_dec.h"
#include "sptd_sched.h"

#define PAGE 4096
#define HEADER 32

static struct sptd_sched_parser *parser;

/* What an input's events go through. */
struct run {
	struct sptd_sched_builder *builder;  /* NULL: parse only */
	struct sptd_dec_tsc conv;            /* used when @tsc */
	int tsc;                             /* x86-tsc clock */
	int64_t wstart, wend;                /* the builder's window */
};

/* Load the '@@ NAME' sections of the formats file into @p. */
static void load_formats(struct sptd_sched_parser *p, const char *path)
{
	size_t len = 0;
	char *text = sptd_fuzz_read_file(path, &len), *at, *next, *name;

	if (!text) {
		fprintf(stderr, "fuzz_ftrace: cannot read %s\n", path);
		abort();
	}
	text[len] = 0;
	at = strstr(text, "\n@@ ");
	while (at) {
		name = at + 4;
		at = strchr(name, '\n');
		if (!at)
			break;
		*at++ = 0;
		next = strstr(at, "\n@@ ");
		if (next)
			next[0] = 0;
		if (sptd_sched_parser_add_format(p, name, at) < 0) {
			fprintf(stderr, "fuzz_ftrace: format %s: %s\n", name,
			        sptd_sched_parser_error(p));
			abort();
		}
		if (next)
			next[0] = '\n';
		at = next;
	}
	free(text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sptd_fuzz_quiet_logs();
	if (sptd_sched_parser_create(&parser) < 0)
		abort();
	load_formats(parser, SPTD_FUZZ_DATA "/ftrace-formats.txt");
	return 0;
}

static int on_event(void *ctx, const struct sptd_sched_event *ev)
{
	struct run *r = ctx;
	struct sptd_sched_event e = *ev;

	if (r->tsc)
		e.ts = sptd_dec_tsc_ns(&r->conv, (uint64_t)ev->ts);
	if (r->builder)
		sptd_sched_builder_add(r->builder, &e);
	return 0;
}

static struct run *cur;

/* A row [ts, ts + dur) must be inside the window. */
static void check_row(const char *what, int64_t ts, int64_t dur)
{
	FUZZ_CHECK(dur >= 0, "%s with dur %lld", what, (long long)dur);
	FUZZ_CHECK(ts >= cur->wstart && ts <= cur->wend && dur <= cur->wend - ts,
	           "%s [%lld +%lld] outside the window [%lld, %lld]", what, (long long)ts,
	           (long long)dur, (long long)cur->wstart, (long long)cur->wend);
}

/* Only the builder's two truncation bits. */
static void check_flags(const char *what, int flags)
{
	FUZZ_CHECK((flags & ~(SPTD_SCHED_F_START_CUT | SPTD_SCHED_F_END_CUT)) == 0,
	           "%s with flags 0x%x", what, flags);
}

static int sink_slice(void *ctx, int64_t ts, int64_t dur, int cpu, int tid,
                      const char *end_state, int prio, int flags)
{
	check_row("sched slice", ts, dur);
	check_flags("sched slice", flags);
	FUZZ_CHECK(tid >= 0 && cpu >= 0, "slice tid %d cpu %d", tid, cpu);
	return 0;
}

static int sink_state(void *ctx, int64_t ts, int64_t dur, int tid, const char *state,
                      int cpu, int waker, int flags)
{
	int wake = flags & (SPTD_SCHED_F_WAKE_HARDIRQ | SPTD_SCHED_F_WAKE_SOFTIRQ);

	check_row("thread state", ts, dur);
	check_flags("thread state", flags & ~wake);
	FUZZ_CHECK(state && *state, "empty state");
	/* woken from an interrupt: one context, a runnable row, no waker */
	FUZZ_CHECK(!wake || (wake != (SPTD_SCHED_F_WAKE_HARDIRQ | SPTD_SCHED_F_WAKE_SOFTIRQ) &&
	                     strcmp(state, "R") == 0 && waker == -1),
	           "thread state %s flags 0x%x waker %d", state, flags, waker);
	return 0;
}

static int sink_irq(void *ctx, int64_t ts, int64_t dur, int cpu, int irq,
                    const char *name, int ret, int flags)
{
	check_row("irq slice", ts, dur);
	check_flags("irq slice", flags);
	return 0;
}

static int sink_softirq(void *ctx, int64_t ts, int64_t dur, int cpu, int vec,
                        const char *name, int flags)
{
	check_row("softirq slice", ts, dur);
	check_flags("softirq slice", flags);
	FUZZ_CHECK(name != NULL, "softirq without a name");
	return 0;
}

static int sink_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	check_row("gap", ts, dur);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sptd_sched_sink sink = {
		.sched_slice = sink_slice, .thread_state = sink_state, .irq_slice = sink_irq,
		.softirq_slice = sink_softirq, .gap = sink_gap,
	};
	struct run r;
	uint32_t mult;
	size_t off;
	int ncpus, page;

	if (size < HEADER)
		return 0;
	memset(&r, 0, sizeof(r));
	r.tsc = data[0] & 1;
	ncpus = data[1] ? data[1] : 1;
	memcpy(&r.wstart, data + 8, 8);
	memcpy(&r.wend, data + 16, 8);
	memcpy(&mult, data + 24, 4);
	r.conv.mult = mult;
	r.conv.shift = data[28];
	if (sptd_sched_builder_create(r.wstart, r.wend, ncpus, &r.builder) < 0) {
		/* refused window: what derive does with a bad meta window */
		r.wstart = 0;
		r.wend = INT64_MAX;
		FUZZ_CHECK(sptd_sched_builder_create(r.wstart, r.wend, ncpus, &r.builder) == 0,
		           "builder refused %d CPUs", ncpus);
	}
	for (off = HEADER, page = 0; off < size; off += PAGE, page++) {
		size_t len = size - off < PAGE ? size - off : PAGE;
		int n = sptd_sched_parser_parse_page(parser, page % ncpus, data + off, len,
		                                     on_event, &r);

		FUZZ_CHECK(n >= 0 || n == -EBADMSG || n == -ENOMEM, "page %d: %d", page, n);
		if (n == -EBADMSG)
			FUZZ_CHECK(sptd_sched_parser_error(parser)[0], "corrupt page without a reason");
	}
	cur = &r;
	sptd_sched_builder_finish(r.builder, &sink);
	cur = NULL;
	sptd_sched_builder_destroy(r.builder);
	return 0;
}
