/* freeze_scan.c — which event froze ftrace, when the kernel did.
 *
 * The kernel's one-shot traceoff acts on the first hit of the trigger's
 * event after it went in; the service learns of hits through perf samples
 * of the same tracepoint.  Those two can disagree: perf's tracepoint
 * samples miss events that ftrace records (seen on this project's VM for
 * IRQs taken from idle: ftrace held ~1600 virtio IRQs a second, perf
 * sampled a few hundred; on kernel 6.18, none of those taken from idle),
 * so the hit the service fires on can come after the one that froze the
 * rings, or never (the service then notices the freeze itself and fires
 * with no hit: service.c), and the incident would end before its own
 * trigger.  While the pages stream out of the rings this scan follows the
 * IRQ handlers in them; the latest handler return of the trigger's IRQs is
 * the event that froze the record, and the capture takes it as the
 * trigger. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record-local.h"
#include "freeze-local.h"

/* Whether the handler of @irq named @name is one @spec waits for. */
static int wanted(const struct sptd_col_trigger_spec *spec, int irq, const char *name)
{
	if (spec->irq_name[0])
		return name && strcmp(name, spec->irq_name) == 0;
	return spec->irq < 0 || spec->irq == irq;
}

/* A candidate for perf's hit at @ts: kept when nearer its time than the
 * one found before, inside the slack. */
static void match_found(struct sptd_col_freeze_scan *fs, int64_t ts, int64_t took,
                        const char *name)
{
	int64_t d = ts > fs->match_at ? ts - fs->match_at : fs->match_at - ts;
	int64_t best = fs->found_ts > fs->match_at ? fs->found_ts - fs->match_at
	                                           : fs->match_at - fs->found_ts;

	if (d > fs->match_slack || (fs->found_ts >= 0 && d >= best))
		return;
	fs->found_ts = ts;
	fs->found_took = took;
	snprintf(fs->found_name, sizeof(fs->found_name), "%s", name);
}

/* perf's hit in ftrace's record: events of its CPU only */
static void match_event(struct sptd_col_freeze_scan *fs, const struct sptd_sched_event *ev)
{
	if (ev->cpu != fs->match_cpu)
		return;
	if (fs->match == SPTD_TRIG_LATENCY) {
		if (ev->type == SPTD_SCHED_SWITCH && ev->u.sw.next_tid == fs->match_subject)
			match_found(fs, ev->ts, -1, "");
		return;
	}
	if (ev->type == SPTD_SCHED_IRQ_ENTRY) {
		fs->match_entry = ev->ts;
		fs->match_entry_irq = ev->u.irq.irq;
		snprintf(fs->match_entry_name, sizeof(fs->match_entry_name), "%s", ev->u.irq.name);
	} else if (ev->type == SPTD_SCHED_IRQ_EXIT) {
		int seen = fs->match_entry >= 0 && fs->match_entry_irq == ev->u.irq.irq &&
		           ev->ts >= fs->match_entry;

		if (ev->u.irq.irq == fs->match_subject)
			match_found(fs, ev->ts, seen ? ev->ts - fs->match_entry : -1,
			            seen ? fs->match_entry_name : "");
		fs->match_entry = -1;
	}
}

static int on_event(void *arg, const struct sptd_sched_event *ev)
{
	struct sptd_col_freeze_scan *fs = arg;
	int cpu = ev->cpu;

	if (cpu < 0 || cpu >= SPTD_MAX_CPUS)
		return 0;   /* the rings are per online CPU: not one of them */
	if (fs->match)
		match_event(fs, ev);
	if (ev->ts > fs->last_ts) {
		fs->last_ts = ev->ts;
		fs->last_cpu = cpu;
	}
	if (!fs->irq)
		return 0;
	if (ev->type == SPTD_SCHED_IRQ_ENTRY) {
		fs->entry_ts[cpu] = ev->ts;
		fs->entry_irq[cpu] = ev->u.irq.irq;
		snprintf(fs->entry_name[cpu], sizeof(fs->entry_name[cpu]), "%s", ev->u.irq.name);
		return 0;
	}
	if (ev->type != SPTD_SCHED_IRQ_EXIT)
		return 0;
	{
		int seen = fs->entry_ts[cpu] >= 0 && fs->entry_irq[cpu] == ev->u.irq.irq &&
		           ev->ts >= fs->entry_ts[cpu];
		const char *name = seen ? fs->entry_name[cpu] : NULL;

		/* a named trigger needs the name, which only the entry carries */
		if (wanted(fs->spec, ev->u.irq.irq, name) && ev->ts >= fs->exit_ts) {
			fs->exit_ts = ev->ts;
			fs->exit_cpu = cpu;
			fs->exit_irq = ev->u.irq.irq;
			fs->exit_took = seen ? ev->ts - fs->entry_ts[cpu] : -1;
			snprintf(fs->exit_name, sizeof(fs->exit_name), "%s", seen ? name : "");
		}
		fs->entry_ts[cpu] = -1;
	}
	return 0;
}

int sptd_col_freeze_scan_init(struct sptd_col_freeze_scan *fs,
                              const struct sptd_col_trigger_spec *spec)
{
	int ret;

	char system[64], event[128], filter[512];

	memset(fs, 0, sizeof(*fs));
	fs->exit_ts = -1;
	fs->exit_cpu = -1;
	fs->last_ts = -1;
	fs->last_cpu = -1;
	fs->match_entry = -1;
	fs->found_ts = -1;
	fs->found_took = -1;
	if (!spec || sptd_col_trigger_freeze_point(spec, system, sizeof(system), event,
	                                           sizeof(event), filter, sizeof(filter)) != 1)
		return 0;   /* the kernel does not freeze at this trigger's hits */
	fs->spec = spec;
	if (spec->kind != SPTD_TRIG_IRQ || spec->min_ns != 0)
		return sptd_sched_parser_create(&fs->parser);
	/* only the irq trigger freezes at a handler's return */
	fs->irq = 1;
	fs->entry_ts = malloc(SPTD_MAX_CPUS * sizeof(*fs->entry_ts));
	fs->entry_irq = malloc(SPTD_MAX_CPUS * sizeof(*fs->entry_irq));
	fs->entry_name = malloc(SPTD_MAX_CPUS * sizeof(*fs->entry_name));
	if (!fs->entry_ts || !fs->entry_irq || !fs->entry_name) {
		ret = -ENOMEM;
		goto fail;
	}
	for (int c = 0; c < SPTD_MAX_CPUS; c++)
		fs->entry_ts[c] = -1;
	ret = sptd_sched_parser_create(&fs->parser);
	if (ret < 0)
		goto fail;
	return 0;
fail:
	sptd_col_freeze_scan_fini(fs);
	return ret;
}

int sptd_col_freeze_scan_raw(struct sptd_col_freeze_scan *fs, enum sptd_sched_raw_kind kind,
                             const char *name, int cpu, const void *data, size_t len)
{
	int ret;

	if (!fs->parser)
		return 0;
	if (kind == SPTD_SCHED_RAW_FORMAT) {
		/* a format the parser cannot use only hides its events */
		sptd_sched_parser_add_format(fs->parser, name, data);
		return 0;
	}
	ret = sptd_sched_parser_parse_page(fs->parser, cpu, data, len, on_event, fs);
	return ret == -ENOMEM ? ret : 0;   /* a corrupt page is derive's to report */
}

int sptd_col_freeze_scan_apply(const struct sptd_col_freeze_scan *fs, int64_t slack_ns,
                               struct sptd_col_fire *fire)
{
	if (!fs->parser)
		return 0;
	if (fs->exit_ts < 0 || fs->exit_ts >= fire->ts - slack_ns) {
		if (!fire->unreported || fs->last_ts < 0 || fs->last_ts > fire->ts)
			return 0;
		snprintf(fire->detail, sizeof(fire->detail), "the kernel froze ftrace at a hit perf "
		         "did not report, after this last recorded event (cpu %d) and %.3f ms before "
		         "the service noticed", fs->last_cpu, (double)(fire->ts - fs->last_ts) / 1e6);
		fire->ts = fs->last_ts;
		fire->cpu = -1;
		return 2;
	}
	fire->ts = fs->exit_ts;
	fire->cpu = fs->exit_cpu;
	if (fs->exit_took >= 0)
		snprintf(fire->detail, sizeof(fire->detail), "irq %d%s%s handler took %" PRId64
		         " ns (the return that froze ftrace; perf did not sample it)", fs->exit_irq,
		         fs->exit_name[0] ? " " : "", fs->exit_name, fs->exit_took);
	else
		snprintf(fire->detail, sizeof(fire->detail), "irq %d handler returned (its entry was "
		         "not seen; the return that froze ftrace, perf did not sample it)",
		         fs->exit_irq);
	return 1;
}

int sptd_col_freeze_scan_match(struct sptd_col_freeze_scan *fs, const struct sptd_col_fire *fire,
                               int64_t slack_ns)
{
	if (!fire->measured || !fire->spec || fire->cpu < 0 ||
	    (fire->spec->kind != SPTD_TRIG_IRQ && fire->spec->kind != SPTD_TRIG_LATENCY))
		return 0;
	fs->match = fire->spec->kind;
	fs->match_cpu = fire->cpu;
	fs->match_subject = fire->subject;
	fs->match_at = fire->ts;
	fs->match_slack = slack_ns;
	return fs->parser ? 0 : sptd_sched_parser_create(&fs->parser);
}

int sptd_col_freeze_scan_matched(const struct sptd_col_freeze_scan *fs,
                                 struct sptd_col_fire *fire)
{
	if (!fs->match || fs->found_ts < 0)
		return 0;
	fire->ts = fs->found_ts;
	if (fs->match != SPTD_TRIG_IRQ)
		return 1;
	fire->measure = fs->found_took;
	if (fs->found_took >= 0)
		snprintf(fire->detail, sizeof(fire->detail), "irq %d%s%s handler took %" PRId64
		         " ns", fs->match_subject, fs->found_name[0] ? " " : "", fs->found_name,
		         fs->found_took);
	else
		snprintf(fire->detail, sizeof(fire->detail), "irq %d handler returned (its entry "
		         "was not seen)", fs->match_subject);
	return 1;
}

int sptd_col_freeze_scan_wait(struct sptd_store *st, struct sptd_col_fire *fire,
                              int64_t slack_ns)
{
	int64_t perf_wait = fire->measure, dur = 0, flags = 0;
	int ret;

	if (!fire->measured || !fire->spec || fire->spec->kind != SPTD_TRIG_LATENCY)
		return 0;
	/* the runnable row ending there, else the nearest within the slack
	 * (PT: its record is not matched to perf's time) */
	ret = sptd_store_thread_state_wait(st, fire->subject, fire->ts, slack_ns, &dur, &flags);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		fire->measure = -1;
		snprintf(fire->detail, sizeof(fire->detail), "pid %d switched in; no wait of it "
		         "ends here in the incident's record (perf paired it with a wakeup %" PRId64
		         " ns before: an event perf lost, which ftrace has): no wait claimed",
		         fire->subject, perf_wait);
		return 0;
	}
	fire->measure = dur;
	if (flags & SPTD_SCHED_F_START_CUT)
		snprintf(fire->detail, sizeof(fire->detail), "pid %d waited more than %" PRId64
		         " ns from wakeup to running (runnable since before the window start)",
		         fire->subject, dur);
	else if (dur < fire->spec->period_ns)
		snprintf(fire->detail, sizeof(fire->detail), "pid %d waited %" PRId64 " ns from "
		         "wakeup to running (perf paired it with an older wakeup, %" PRId64 " ns "
		         "before: the record shows the task ran between)", fire->subject, dur,
		         perf_wait);
	else
		snprintf(fire->detail, sizeof(fire->detail), "pid %d waited %" PRId64 " ns from "
		         "wakeup to running", fire->subject, dur);
	return 0;
}

void sptd_col_freeze_scan_fini(struct sptd_col_freeze_scan *fs)
{
	sptd_sched_parser_destroy(fs->parser);
	fs->parser = NULL;
	free(fs->entry_ts);
	free(fs->entry_irq);
	free(fs->entry_name);
	fs->entry_ts = NULL;
	fs->entry_irq = NULL;
	fs->entry_name = NULL;
}
