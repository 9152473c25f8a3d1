/* derive_sched.c — raw ftrace pages (and outside switch lists) -> the
 * scheduling tables, and derive_all(): the whole of `sysptd decode`.
 *
 * The same code runs right after a capture and when a user re-decodes an
 * incident, so what is stored is always what decode makes of the raw data. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "derive-local.h"
#include "sptd_dec.h"
#include "sptd_sched.h"
#include "sptd_store.h"

#define MAX_CPUS 65536   /* the builder's limit */

/* Converts trace-clock values to incident nanoseconds. */
struct clock_conv {
	int tsc;                  /* 1: values are TSC ticks */
	struct sptd_dec_tsc conv; /* their conversion (decode/'s, as for PT) */
};

/* Most CPUs whose unreadable pages are remembered (a break of their record). */
#define DERIVE_MAX_CPUS 4096

struct sched_ctx {
	struct sptd_store *st;            /* the incident */
	struct sptd_col_tasks *tasks;     /* tid -> utid */
	struct sptd_sched_builder *builder; /* events -> rows */
	struct clock_conv conv;           /* trace clock -> incident ns */
	int64_t events, bad_pages;        /* counts for stats and the log */
	int64_t bad_events;               /* refused by the builder (CPU, tid out of range) */
	int64_t last_ts[DERIVE_MAX_CPUS]; /* latest event per CPU (ns) */
	int64_t max_ts;                   /* latest ftrace event of all (ns), INT64_MIN none */
	int64_t fed, fed_min, fed_max;    /* events the builder took, and their span (ns) */
	char broken[DERIVE_MAX_CPUS];     /* 1: a page of this CPU was unreadable
	                                   * since its last event */
	int have_window;                  /* wstart/wend bound the ftrace_event rows */
	int64_t wstart, wend;
	int64_t others;                   /* ftrace_event rows written (-e) */
};

/* Feed one event to the builder: 1 taken; 0 refused (a CPU or tid out of
 * range in a corrupt page or row: counted, not fatal); or an error. */
static int feed(struct sched_ctx *ctx, const struct sptd_sched_event *ev)
{
	int ret = sptd_sched_builder_add(ctx->builder, ev);

	if (ret == -EINVAL) {
		ctx->bad_events++;
		return 0;
	}
	if (ret < 0)
		return ret;
	if (!ctx->fed || ev->ts < ctx->fed_min)
		ctx->fed_min = ev->ts;
	if (!ctx->fed || ev->ts > ctx->fed_max)
		ctx->fed_max = ev->ts;
	ctx->fed++;
	if (ev->type != SPTD_SCHED_LOST)
		ctx->events++;
	return 1;
}

/* The record of @cpu breaks before @ts: an unreadable page was skipped. */
static int add_break(struct sched_ctx *ctx, int cpu, int64_t ts)
{
	struct sptd_sched_event lost = { .type = SPTD_SCHED_LOST, .cpu = cpu, .ts = ts, .pid = -1 };
	int ret;

	lost.u.lost.reason = SPTD_SCHED_LOST_CORRUPT;
	lost.u.lost.count = -1;
	ctx->broken[cpu] = 0;
	ret = feed(ctx, &lost);
	return ret < 0 ? ret : 0;
}

static int64_t conv_ns(const struct clock_conv *c, int64_t raw)
{
	return c->tsc ? sptd_dec_tsc_ns(&c->conv, (uint64_t)raw) : raw;
}

static int64_t utid_of(struct sched_ctx *ctx, int tid);

static int on_event(void *arg, const struct sptd_sched_event *ev)
{
	struct sched_ctx *ctx = arg;
	struct sptd_sched_event e = *ev;
	int ret = 0;

	e.ts = conv_ns(&ctx->conv, ev->ts);
	if (e.type == SPTD_SCHED_OTHER) {
		/* an added tracepoint (-e): a row of its own, inside the window */
		int64_t utid = -1;

		if (e.cpu < 0 || (ctx->have_window && (e.ts < ctx->wstart || e.ts > ctx->wend)))
			return 0;
		if (e.pid >= 0 && (utid = utid_of(ctx, e.pid)) < 0)
			return (int)utid;
		ret = SPTD_STORE_ADD(ctx->st, ftrace_event, e.ts, e.cpu, utid, e.u.other.name,
		                     e.u.other.args);
		if (ret >= 0)
			ctx->others++;
		return ret < 0 ? ret : 0;
	}
	if (e.cpu >= 0 && e.cpu < DERIVE_MAX_CPUS) {
		if (ctx->broken[e.cpu])
			ret = add_break(ctx, e.cpu, e.ts);
		ctx->last_ts[e.cpu] = e.ts;
	}
	if (ret >= 0)
		ret = feed(ctx, &e);
	if (ret > 0 && e.type != SPTD_SCHED_LOST && e.ts > ctx->max_ts)
		ctx->max_ts = e.ts;
	return ret < 0 ? ret : 0;
}

static int64_t utid_of(struct sched_ctx *ctx, int tid)
{
	return sptd_col_tasks_utid(ctx->tasks, tid);
}

static int sink_thread(void *arg, int tid, const char *comm)
{
	struct sched_ctx *ctx = arg;

	return sptd_col_tasks_note(ctx->tasks, tid, -1, comm, NULL);
}

/* The builder's flags are slice.flags' truncation bits. */
_Static_assert(SPTD_SCHED_F_START_CUT == SPTD_SLICE_F_START_TRUNCATED &&
               SPTD_SCHED_F_END_CUT == SPTD_SLICE_F_END_TRUNCATED,
               "sched row flags and slice.flags share their truncation bits");

static int sink_sched_slice(void *arg, int64_t ts, int64_t dur, int cpu, int tid,
                            const char *end_state, int prio, int flags)
{
	struct sched_ctx *ctx = arg;
	int64_t utid = utid_of(ctx, tid);

	if (utid < 0)
		return (int)utid;
	return SPTD_STORE_ADD(ctx->st, sched_slice, ts, dur, cpu, utid, end_state, prio,
	                      flags);
}

static int sink_thread_state(void *arg, int64_t ts, int64_t dur, int tid,
                             const char *state, int cpu, int waker_tid, int flags)
{
	struct sched_ctx *ctx = arg;
	int64_t utid = utid_of(ctx, tid);
	int64_t waker = waker_tid >= 0 ? utid_of(ctx, waker_tid) : -1;

	if (utid < 0)
		return (int)utid;
	return SPTD_STORE_ADD(ctx->st, thread_state, ts, dur, utid, state, cpu, waker, flags);
}

static int sink_irq(void *arg, int64_t ts, int64_t dur, int cpu, int irq,
                    const char *name, int ret, int flags)
{
	struct sched_ctx *ctx = arg;

	return SPTD_STORE_ADD(ctx->st, irq_slice, ts, dur, cpu, irq, name, ret, flags);
}

static int sink_softirq(void *arg, int64_t ts, int64_t dur, int cpu, int vec,
                        const char *name, int flags)
{
	struct sched_ctx *ctx = arg;

	return SPTD_STORE_ADD(ctx->st, softirq_slice, ts, dur, cpu, vec, name, flags);
}

static int sink_gap(void *arg, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	struct sched_ctx *ctx = arg;
	char text[256];

	snprintf(text, sizeof(text), "sched: %s", reason);
	return SPTD_STORE_ADD(ctx->st, gap, ts, dur, cpu, text);
}

static int load_clock(struct sptd_store *st, struct clock_conv *c)
{
	char clock[32];
	int64_t v;

	memset(c, 0, sizeof(*c));
	if (sptd_store_meta_get(st, "ftrace_clock", clock, sizeof(clock)) < 0 ||
	    strcmp(clock, "x86-tsc") != 0)
		return 0;
	c->tsc = 1;
	if (sptd_store_meta_get_int(st, "tsc_mult", &v) < 0)
		return -EBADMSG;
	c->conv.mult = (uint64_t)v;
	if (sptd_store_meta_get_int(st, "tsc_shift", &v) < 0)
		return -EBADMSG;
	c->conv.shift = (unsigned int)v;
	if (sptd_store_meta_get_int(st, "tsc_zero", &v) < 0)
		return -EBADMSG;
	c->conv.zero = (uint64_t)v;
	if (sptd_store_meta_get_int(st, "tsc_offset_ns", &v) == 0)
		c->conv.offset_ns = v;
	return 0;
}

/* What the recorder wrote of when ftrace was recording (meta
 * ftrace_started[_why], ftrace_stopped_by, ftrace_stopped; absent in
 * imports and older files: then the builder judges by the events alone).
 * Frozen by the kernel at another event than the trigger's own (a
 * traceoff trigger: "kernel"), the rings stopped right after their latest
 * event, @last_ts; at the trigger's own ("trigger") or by the service after
 * the window end, the record runs to the window end. */
static int recording_span(struct sptd_store *st, struct sptd_sched_builder *b, int64_t last_ts)
{
	char started_why[160] = "", by[32] = "";
	const char *stopped_why = NULL;
	int64_t started = INT64_MIN, stopped = INT64_MAX;

	if (sptd_store_meta_get_int(st, "ftrace_started", &started) < 0)
		started = INT64_MIN;
	sptd_store_meta_get(st, "ftrace_started_why", started_why, sizeof(started_why));
	sptd_store_meta_get(st, "ftrace_stopped_by", by, sizeof(by));
	if (strcmp(by, "kernel") == 0 && last_ts != INT64_MIN) {
		stopped = last_ts;
		stopped_why = "frozen in the kernel by a traceoff trigger (at its last event)";
	} else if (sptd_store_meta_get_int(st, "ftrace_stopped", &stopped) < 0) {
		stopped = INT64_MAX;
	} else {
		stopped_why = "stopped by the service";
	}
	if (started > stopped) {
		sptd_col_log(LOG_WARNING, "meta ftrace_started is after ftrace stopped: ignoring both");
		return 0;
	}
	return sptd_sched_builder_set_recording(b, started, started_why, stopped, stopped_why);
}

static int on_format(void *arg, const struct sptd_store_ftrace_format_row *row)
{
	struct sptd_sched_parser *parser = arg;

	if (row->name && row->text && sptd_sched_parser_add_format(parser, row->name, row->text) < 0)
		sptd_col_log(LOG_WARNING, "cannot parse ftrace format '%s'", row->name);
	return 0;
}

/* What the page reader hands the parser. */
struct pages_ctx {
	struct sched_ctx *ctx;                /* events go to its builder */
	struct sptd_sched_parser *parser;     /* formats loaded */
	int *ncpus;                           /* raised to every CPU seen */
};

static int on_page(void *arg, const struct sptd_store_chunk_row *row)
{
	struct pages_ctx *pc = arg;
	int n;

	if (row->cpu >= 0 && row->cpu < INT_MAX && row->cpu + 1 > *pc->ncpus)
		*pc->ncpus = row->cpu + 1;
	n = sptd_sched_parser_parse_page(pc->parser, row->cpu, row->data, row->len, on_event,
	                                 pc->ctx);
	if (n == -EBADMSG) {
		/* a stretch of this CPU is missing: the builder gets a break
		 * before its next event (or at the end), which becomes a gap */
		pc->ctx->bad_pages++;
		if (row->cpu >= 0 && row->cpu < DERIVE_MAX_CPUS)
			pc->ctx->broken[row->cpu] = 1;
		return 0;
	}
	return n < 0 ? n : 0;
}

/* Unreadable last pages: the CPU's record breaks after its last event. */
static int trailing_breaks(struct sched_ctx *ctx, int ncpus, int64_t wend)
{
	int ret = 0;

	for (int cpu = 0; cpu < ncpus && cpu < DERIVE_MAX_CPUS && ret >= 0; cpu++)
		if (ctx->broken[cpu])
			ret = add_break(ctx, cpu, ctx->last_ts[cpu] > wend ? ctx->last_ts[cpu] : wend);
	return ret;
}

/* Feed the parser every stored format, then every page in capture order. */
static int feed_ftrace(struct sched_ctx *ctx, int *ncpus)
{
	struct pages_ctx pc = { .ctx = ctx, .ncpus = ncpus };
	int ret;

	ret = sptd_col_derive_check_cpus(ctx->st, "raw_ftrace_page");   /* damaged: exit 6 */
	if (ret >= 0)
		ret = sptd_sched_parser_create(&pc.parser);
	if (ret >= 0) {
		sptd_sched_parser_want_other(pc.parser, 1);
		ret = SPTD_STORE_EACH(ctx->st, raw_ftrace_format, on_format, pc.parser);
	}
	if (ret >= 0)
		ret = SPTD_STORE_EACH(ctx->st, raw_ftrace_page, on_page, &pc);
	sptd_sched_parser_destroy(pc.parser);
	return ret < 0 ? ret : 0;
}

static int on_switch(void *arg, const struct sptd_store_raw_switch_row *row)
{
	struct sptd_sched_event ev;
	struct pages_ctx *pc = arg;
	int ret;

	memset(&ev, 0, sizeof(ev));
	ev.type = SPTD_SCHED_SWITCH;
	ev.ts = row->ts;
	ev.cpu = row->cpu;
	ev.u.sw.prev_tid = row->prev_tid;
	ev.u.sw.next_tid = row->next_tid;
	ev.pid = ev.u.sw.prev_tid;
	/* without the state (perf's SWITCH records, import --sched lists)
	 * the task is taken as still runnable */
	snprintf(ev.u.sw.prev_state, sizeof(ev.u.sw.prev_state), "%s",
	         row->prev_state && row->prev_state[0] ? row->prev_state : "R");
	if (row->next_comm)
		snprintf(ev.u.sw.next_comm, sizeof(ev.u.sw.next_comm), "%s", row->next_comm);
	if (ev.cpu >= 0 && ev.cpu < INT_MAX && ev.cpu + 1 > *pc->ncpus)
		*pc->ncpus = ev.cpu + 1;
	ret = feed(pc->ctx, &ev);
	return ret < 0 ? ret : 0;
}

/* Switches known from outside ftrace (import --sched, perf SWITCH records). */
static int feed_switches(struct sched_ctx *ctx, int *ncpus)
{
	struct pages_ctx pc = { .ctx = ctx, .ncpus = ncpus };
	int ret = SPTD_STORE_EACH(ctx->st, raw_switch_by_ts, on_switch, &pc);

	return ret < 0 ? ret : 0;
}

/* The incident window from meta into *@start and *@end: 1 when both keys are
 * there and make a window rows can be clipped to (end >= start, length an
 * int64); 0 when absent (imports) or unusable (a corrupt file: logged). */
static int window_from_meta(struct sptd_store *st, int64_t *start, int64_t *end)
{
	int has_start = sptd_store_meta_get_int(st, "window_start", start) == 0;
	int has_end = sptd_store_meta_get_int(st, "window_end", end) == 0;

	if (!has_start && !has_end)
		return 0;
	if (has_start && has_end && *end >= *start &&
	    !(*start < 0 && *end > INT64_MAX + *start))
		return 1;
	sptd_col_log(LOG_WARNING, "meta window_start/window_end do not make a window "
	             "(%" PRId64 ", %" PRId64 "): scheduling rows are clipped to the "
	             "events' own span", has_start ? *start : 0, has_end ? *end : 0);
	*start = *end = 0;
	return 0;
}

/* meta cpu_list (sysptd -C): the CPUs not in it were not recorded, and no
 * gap says they lack events.  A list that does not parse is ignored (every
 * CPU then counts as recorded: nothing is hidden). */
static void exclude_unrecorded(struct sptd_store *st, struct sptd_sched_builder *b, int ncpus)
{
	char list[512];
	int *cpus, n;

	if (ncpus <= 0 || sptd_store_meta_get(st, "cpu_list", list, sizeof(list)) < 0)
		return;
	n = sptd_col_cpus_parse(list, NULL, 0);
	if (n <= 0 || !(cpus = calloc((size_t)n, sizeof(*cpus))))
		return;
	if (sptd_col_cpus_parse(list, cpus, n) == n)
		for (int c = 0; c < ncpus; c++) {
			int listed = 0;

			for (int i = 0; i < n && !listed; i++)
				listed = cpus[i] == c;
			if (!listed)
				sptd_sched_builder_exclude_cpu(b, c);
		}
	free(cpus);
}

int sptd_col_derive_sched(struct sptd_store *st, struct sptd_col_tasks *tasks)
{
	static const struct sptd_sched_sink sink_template = {
		.thread = sink_thread,
		.sched_slice = sink_sched_slice,
		.thread_state = sink_thread_state,
		.irq_slice = sink_irq,
		.softirq_slice = sink_softirq,
		.gap = sink_gap,
	};
	struct sched_ctx ctx = { .st = st, .tasks = tasks, .max_ts = INT64_MIN };
	struct sptd_sched_sink sink = sink_template;
	int64_t wstart = 0, wend = 0, cpus = 0;
	int ncpus = 0, ret, have_window;

	if (!st || !tasks)
		return -EINVAL;
	have_window = window_from_meta(st, &wstart, &wend);
	ctx.have_window = have_window;
	ctx.wstart = wstart;
	ctx.wend = wend;
	if (sptd_store_meta_get_int(st, "cpus", &cpus) == 0 && cpus > 0 && cpus <= MAX_CPUS)
		ncpus = (int)cpus;
	ret = load_clock(st, &ctx.conv);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "incident says ftrace used x86-tsc but has no TSC conversion in meta");
		return ret;
	}
	/* The builder sorts; it needs the CPU count only for gaps, so give it
	 * the largest we can know before feeding. */
	ret = sptd_sched_builder_create(wstart, wend, ncpus > 0 ? ncpus : 1, &ctx.builder);
	if (ret < 0)
		return ret;
	exclude_unrecorded(st, ctx.builder, ncpus);
	ret = feed_ftrace(&ctx, &ncpus);
	if (ret >= 0)
		ret = trailing_breaks(&ctx, ncpus, wend);
	if (ret >= 0)
		ret = recording_span(st, ctx.builder, ctx.max_ts);
	if (ret >= 0)
		ret = feed_switches(&ctx, &ncpus);
	/* without a window in meta (an import), the data's own span is the
	 * window; with no events at all there is nothing to build: no gaps
	 * for CPUs that never had an ftrace ring */
	if (ret >= 0 && !have_window && ctx.fed) {
		wstart = ctx.fed_min;
		wend = ctx.fed_min < 0 && ctx.fed_max > INT64_MAX + ctx.fed_min ?
		       INT64_MAX + ctx.fed_min : ctx.fed_max;
		ret = sptd_sched_builder_set_window(ctx.builder, wstart, wend);
	}
	if (ret >= 0 && (have_window || ctx.fed)) {
		sink.ctx = &ctx;
		ret = sptd_sched_builder_finish(ctx.builder, &sink);
	}
	if (ret >= 0 && ctx.bad_pages) {
		sptd_col_log(LOG_WARNING, "%" PRId64 " unreadable ftrace pages skipped (gaps "
		             "\"sched: unreadable ftrace page skipped\")", ctx.bad_pages);
		ret = SPTD_STORE_ADD(st, stats, "ftrace_bad_pages", -1, ctx.bad_pages);
	}
	if (ret >= 0 && ctx.bad_events) {
		sptd_col_log(LOG_WARNING, "%" PRId64 " scheduling events with a CPU or task out "
		             "of range skipped", ctx.bad_events);
		ret = SPTD_STORE_ADD(st, gap, wstart, 0, -1, "sched: events with a CPU or task "
		                     "out of range skipped");
	}
	if (ret >= 0)
		ret = SPTD_STORE_ADD(st, stats, "sched_events", -1, ctx.events);
	sptd_sched_builder_destroy(ctx.builder);
	return ret < 0 ? ret : 0;
}

static int on_task(void *arg, const struct sptd_store_raw_task_row *row)
{
	int ret;

	if (row->tid < 0)
		return 0;   /* a damaged row names no task */
	ret = sptd_col_tasks_note(arg, row->tid, row->pid, row->comm, row->cmdline);

	return ret < 0 ? ret : 0;
}

/* Tasks as /proc showed them at capture time: best names and processes. */
static int load_tasks(struct sptd_store *st, struct sptd_col_tasks *tasks)
{
	int ret = SPTD_STORE_EACH(st, raw_task, on_task, tasks);

	return ret < 0 ? ret : 0;
}

/* meta pid_filter (sysptd -p): only those processes' samples and calls are
 * kept; scheduling, IRQs and gaps stay whole.  Applied after everything is
 * derived, so PT (which traces whole CPUs) and samples are limited alike.
 * The list comes from a file: only numbers reach the SQL. */
static int apply_pid_filter(struct sptd_store *st)
{
	char list[512];
	int pids[256], n = 0;
	const char *p = list;

	if (sptd_store_meta_get(st, "pid_filter", list, sizeof(list)) < 0 || !list[0])
		return 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v <= 0 || v > INT_MAX || (*end && *end != ',') || n == 256) {
			sptd_col_log(LOG_WARNING, "meta pid_filter '%s' is not a list of process ids: "
			             "ignored (every process kept)", list);
			return 0;
		}
		pids[n++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return n ? sptd_store_keep_pids(st, pids, n) : 0;
}

int sptd_col_derive_all(struct sptd_store *st, int jobs)
{
	struct sptd_col_tasks *tasks = NULL;
	const char *stage = "clearing derived tables";
	int ret = 0;

	if (!st)
		return -EINVAL;
	ret = sptd_store_derived_clear(st);
	if (ret >= 0 && (ret = sptd_col_tasks_create(&tasks)) < 0)
		stage = "task table";
	if (ret >= 0 && (ret = load_tasks(st, tasks)) < 0)
		stage = "reading raw_task";
	if (ret >= 0 && (ret = sptd_col_derive_sideband_tasks(st, tasks)) < 0)
		stage = "threads of the sideband (fork, exit, comm)";
	if (ret >= 0 && (ret = sptd_col_derive_sched(st, tasks)) < 0)
		stage = "scheduling (ftrace pages, switches)";
	if (ret >= 0 && (ret = sptd_col_derive_samples(st, tasks)) < 0)
		stage = "samples";
	if (ret >= 0 && (ret = sptd_col_derive_spe(st, tasks)) < 0)
		stage = "memory samples (Arm SPE)";
	if (ret >= 0 && (ret = sptd_col_derive_pt(st, tasks, jobs)) < 0)
		stage = "Intel PT";
	if (ret >= 0 && (ret = sptd_col_derive_pt_sideband(st)) < 0)
		stage = "PT sideband";
	/* load_tasks again: /proc's view of processes outranks comms from
	 * the trace for names, since it was taken last. */
	if (ret >= 0 && (ret = load_tasks(st, tasks)) < 0)
		stage = "reading raw_task";
	if (ret >= 0 && (ret = sptd_col_tasks_store(tasks, st)) < 0)
		stage = "processes and threads";
	if (ret >= 0 && (ret = apply_pid_filter(st)) < 0)
		stage = "keeping only the processes of -p";
	if (ret < 0)
		sptd_col_log(LOG_ERR, "decoding %s failed: %s%s%s", stage, strerror(-ret),
		             sptd_store_errmsg(st)[0] ? ": " : "", sptd_store_errmsg(st));
	sptd_col_tasks_destroy(tasks);
	return ret;
}
