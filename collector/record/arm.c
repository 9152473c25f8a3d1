/* arm.c — turning the service's sources on and off: choosing the source,
 * sizing every ring (the capture plan, plan.c), arming the ftrace
 * instance, PT or the sampler and the triggers; the kernel freeze (traceoff
 * triggers) on and off; re-arming after a capture; undoing what a hit that
 * did not fire froze; disarming.
 *
 * service.c runs the loop and calls in here; capture.c re-arms from here
 * once the window is copied.  Nothing here calls either. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "pt-local.h"
#include "record-local.h"
#include "symcache-local.h"
#include "sptd_sched.h"

/* ---- the source --------------------------------------------------------------- */

int sptd_col_record_choose_source(struct sptd_col_service *s)
{
	switch (s->o->source) {
	case SPTD_SOURCE_PT:
		if (!sptd_col_pt_available()) {
			sptd_col_log(LOG_ERR, "no intel_pt PMU (%s/bus/event_source/devices/intel_pt): "
			             "this CPU or VM has no Intel PT; use --source sample (or auto) "
			             "to record with per-CPU sampling instead", sptd_col_pt_sysfs_root());
			return -ENODEV;
		}
		break;
	case SPTD_SOURCE_AUTO:
		if (sptd_col_pt_available()) {
			sptd_col_log(LOG_NOTICE, "intel_pt found: recording Intel PT on every CPU");
			break;
		}
		sptd_col_log(LOG_NOTICE, "no intel_pt PMU on this machine: falling back to "
		             "--source sample (cpu-clock sampling with call stacks at %d Hz)",
		             s->o->freq);
		if (s->o->power)
			sptd_col_log(LOG_WARNING, "--power: C-states, frequency and PTWRITE come from "
			             "Intel PT, which this machine lacks: the incidents will have none");
		s->source = SPTD_SOURCE_SAMPLE;
		s->source_name = "sample";
		return 0;
	case SPTD_SOURCE_SAMPLE:
		if (s->o->power)
			sptd_col_log(LOG_WARNING, "--power: C-states, frequency and PTWRITE come from "
			             "Intel PT: --source sample records none");
		s->source = SPTD_SOURCE_SAMPLE;
		s->source_name = "sample";
		return 0;
	}
	s->source = SPTD_SOURCE_PT;
	s->source_name = "pt";
	return 0;
}

/* The plan for the chosen source; PT reads the PMU's limits for it. */
static int make_plan(struct sptd_col_service *s)
{
	struct sptd_col_pt_pmu pmu;
	char err[512];
	int ret;

	if (s->source == SPTD_SOURCE_PT) {
		ret = sptd_col_pt_pmu_read(&pmu, err, sizeof(err));
		if (ret < 0) {
			sptd_col_log(LOG_ERR, "cannot open Intel PT: %s", err);
			s->pt_failed = 1;
			return ret;
		}
	}
	ret = sptd_col_plan_compute(s->o, s->source, s->source == SPTD_SOURCE_PT ? &pmu : NULL,
	                            (size_t)sysconf(_SC_PAGESIZE), &s->plan);
	if (ret < 0)
		sptd_col_log(LOG_ERR, "cannot size the buffers: %s", strerror(-ret));
	return ret;
}

/* PT: the AUX and sideband rings as the plan says. */
static int arm_pt(struct sptd_col_service *s)
{
	struct sptd_col_pt_config cfg = {
		.req = { .timing = s->o->timing, .user_only = s->o->user_only, .power = s->o->power,
		         .aux_bytes = s->plan.aux.bytes, .window_ns = s->plan.span_ns },
		.cpus = s->cpus,
		.ncpus = s->ncpus,
		.sideband_pages = s->plan.sideband_pages,
	};
	const struct sptd_col_plan_aux *aux = &s->plan.aux;
	char err[512];
	int ret = sptd_col_pt_create(&cfg, &s->pt, err, sizeof(err));

	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot open Intel PT: %s", err);
		s->pt_failed = 1;
		return ret;
	}
	if (sptd_col_pt_setup(s->pt)->power_lacks[0])
		sptd_col_log(LOG_WARNING, "--power: this CPU's PT cannot give %s",
		             sptd_col_pt_setup(s->pt)->power_lacks);
	sptd_col_log(LOG_INFO, "intel_pt config %s; AUX ring %" PRIu64 " KiB per CPU holds about %"
	             PRId64 " us of a busy CPU (at %" PRIu64 " MB/s)%s", sptd_col_pt_setup(s->pt)->desc,
	             aux->bytes / 1024, aux->coverage_ns / 1000, aux->rate_bytes_s / 1000000,
	             aux->coverage_ns < s->plan.span_ns ? ": less than the window, raise --buffer" : "");
	return 0;
}

/* ---- ftrace frozen by the kernel ------------------------------------------------ */

/* The kernel freezes ftrace at the very event when nothing after it is
 * wanted (no --post): a one-shot traceoff event trigger on the trigger's
 * own tracepoint with its filter (tracepoint=), or on irq_handler_exit with
 * the IRQ numbers (irq= without min=, which fires when the handler
 * returns).  It is installed only while a hit may fire: a traceoff in
 * warm-up or cooldown would freeze the rings at a hit the service then
 * ignores, leaving an entry without its exit and a stretch nothing saw
 * (issue 11's phantom IRQs). */
void sptd_col_record_kfreeze_arm(struct sptd_col_service *s, int64_t now, int64_t not_before)
{
	char system[64], event[128], filter[512];
	int64_t since;

	if (!s->kfreeze_wanted || s->kfreeze_on || now < not_before || !s->trace)
		return;
	/* taken before the first trigger goes in: a hit while they are being
	 * installed may be the one that froze the rings, so it must be one
	 * the service may fire on (a hit it ignored would have frozen the
	 * record before the one it fires on) */
	since = sptd_col_now_ns();
	for (int i = 0; i < s->o->ntriggers; i++) {
		const struct sptd_col_trigger_spec *spec = &s->o->triggers[i];
		int ret;

		if (sptd_col_trigger_freeze_point(spec, system, sizeof(system), event, sizeof(event),
		                                  filter, sizeof(filter)) != 1)
			continue;
		ret = sptd_sched_trace_freeze_on(s->trace, system, event, filter[0] ? filter : NULL);
		if (ret < 0) {
			sptd_col_log(LOG_WARNING, "cannot install a traceoff trigger on %s:%s (%s%s%s); "
			             "freezing ftrace from user space instead", system, event,
			             strerror(-ret), sptd_sched_trace_error(s->trace)[0] ? ": " : "",
			             sptd_sched_trace_error(s->trace));
			sptd_sched_trace_freeze_off(s->trace);
			s->kfreeze_wanted = 0;
			return;
		}
	}
	s->kfreeze_on = 1;
	s->kfreeze_since = since;
}

void sptd_col_record_kfreeze_disarm(struct sptd_col_service *s)
{
	if (!s->kfreeze_on)
		return;
	if (sptd_sched_trace_freeze_off(s->trace) < 0)
		sptd_col_log(LOG_WARNING, "cannot remove the traceoff triggers: %s",
		             sptd_sched_trace_error(s->trace));
	s->kfreeze_on = 0;
}

/* Start ftrace with empty rings now, for @why. */
static int ftrace_restart(struct sptd_col_service *s, const char *why)
{
	int ret = sptd_sched_trace_reset(s->trace);

	s->ftrace_started = sptd_col_now_ns();
	s->ftrace_why = why;
	if (ret >= 0)
		ret = sptd_sched_trace_start(s->trace);
	sptd_col_seed_cpus(s->cpus, s->ncpus);
	return ret;
}

void sptd_col_record_unfreeze(struct sptd_col_service *s)
{
	if (s->aux_pause)
		sptd_col_pt_resume(s->pt);
	/* frozen without a capture: a traceoff hit between a capture's
	 * re-arm and the removal of the spent triggers.  Keeping what the
	 * rings hold would put a stretch nobody saw inside a later window,
	 * so they restart empty and the warm-up starts over. */
	if (s->trace && sptd_sched_trace_is_on(s->trace) == 0) {
		sptd_col_record_kfreeze_disarm(s);
		if (ftrace_restart(s, "restarted after a trigger hit froze it in the kernel "
		                   "while the service ignored hits (warm-up or cooldown)") < 0)
			sptd_col_log(LOG_ERR, "cannot restart the ftrace instance");
		else
			sptd_col_log(LOG_INFO, "ftrace was frozen by a hit the service ignored; "
			             "restarted with empty rings");
		s->armed_at = sptd_col_now_ns();
	}
}

/* ---- arming ---------------------------------------------------------------------- */

/* Every --trigger, joining the PT events (@pt_fds, NULL none) for AUX pause. */
static int arm_triggers(struct sptd_col_service *s, const int *pt_fds)
{
	char err[512];

	for (int i = 0; i < s->o->ntriggers; i++) {
		const struct sptd_col_trigger_spec *spec = &s->o->triggers[i];
		int refused = 0, ret;

		ret = sptd_col_trigger_create_aux(spec, s->cpus, s->ncpus, pt_fds,
		                                  sptd_col_pt_perf_offset(s->pt), &s->trig[s->ntrig],
		                                  err, sizeof(err));
		if (ret < 0) {
			sptd_col_log(LOG_ERR, "--trigger %s: %s", spec->text, err);
			return ret;
		}
		if (s->aux_pause && !sptd_col_trigger_aux_pause(s->trig[s->ntrig], &refused) &&
		    refused && !s->aux_refused_logged) {
			s->aux_refused_logged = 1;
			sptd_col_log(LOG_NOTICE, "the kernel refused AUX pause for --trigger %s (%s%s): "
			             "PT is frozen from user space when it fires", spec->text,
			             strerror(refused),
			             sptd_col_trigger_aux_why(s->trig[s->ntrig]) == SPTD_TRIG_AUX_NO_KERNEL ?
			             "; aux_action needs Linux 6.13+" :
			             "; the kernel would not group it with the PT event");
		}
		s->ntrig++;
		/* the kernel may freeze ftrace at the very event when nothing
		 * after it is wanted; installed once hits may fire */
		if (s->o->post_ns == 0) {
			char system[64], event[128], filter[512];

			if (sptd_col_trigger_freeze_point(spec, system, sizeof(system), event,
			                                  sizeof(event), filter, sizeof(filter)) == 1)
				s->kfreeze_wanted = 1;
		}
	}
	return 0;
}

/* Create the ftrace instance as the plan and the options say (tracing left
 * off); errors are logged. */
static int ftrace_create(struct sptd_col_service *s)
{
	static struct sptd_sched_extra extra[SPTD_MAX_EVENTS];
	char instance[64];
	struct sptd_sched_config cfg = {
		.instance = instance,
		.clock = s->source == SPTD_SOURCE_PT ? "x86-tsc" : "mono",
		.irq = 1,
		.softirq = 1,
	};
	int ret;

	sptd_col_instance_name(instance, sizeof(instance));
	for (int i = 0; i < s->o->nevents && i < SPTD_SCHED_MAX_EXTRA; i++) {
		memcpy(extra[i].system, s->o->events[i].system, sizeof(extra[i].system));
		memcpy(extra[i].event, s->o->events[i].event, sizeof(extra[i].event));
		memcpy(extra[i].filter, s->o->events[i].filter, sizeof(extra[i].filter));
	}
	cfg.extra = extra;
	cfg.nextra = s->o->nevents < SPTD_SCHED_MAX_EXTRA ? s->o->nevents : SPTD_SCHED_MAX_EXTRA;
	if (s->cpumask[0])
		cfg.cpumask = s->cpumask;
	s->ftrace_clock = cfg.clock;
	cfg.buffer_kb = (size_t)s->plan.ftrace_kb;
	ret = sptd_sched_trace_create(&cfg, &s->trace);
	if (ret == -ENOMEM) {
		sptd_col_log(LOG_ERR, "cannot set up the ftrace instance: the kernel could not give "
		             "%d CPUs an ftrace ring of %" PRId64 " KiB each (%.1f GiB in all); ask "
		             "for less: a shorter --window or a smaller --buffer", s->ncpus,
		             (int64_t)s->plan.ftrace_kb,
		             (double)s->plan.ftrace_kb * s->ncpus / (1024.0 * 1024.0));
		return ret;
	}
	if (ret < 0)
		sptd_col_log(LOG_ERR, "cannot set up the ftrace instance: %s%s", strerror(-ret),
		             ret == -ENODEV ? " (is tracefs available? mount -t tracefs nodev /sys/kernel/tracing)" : "");
	return ret;
}

int sptd_col_record_arm(struct sptd_col_service *s)
{
	int is_pt = s->source == SPTD_SOURCE_PT;
	static int pt_fds[SPTD_MAX_CPUS];
	char err[512], sizes[256];
	int ret = make_plan(s);

	if (ret < 0)
		return ret;
	ret = ftrace_create(s);
	if (ret < 0)
		return ret;
	s->ftrace_down[0] = '\0';   /* armed again (hotplug.c): recording */
	/* PT before the triggers: a trigger that is a perf event joins the PT
	 * event's group so the kernel pauses PT where it fired (AUX pause) */
	if (is_pt) {
		ret = arm_pt(s);
		if (ret < 0)
			return ret;
		ret = sptd_col_pt_resume_open(s->pt, err, sizeof(err));
		s->aux_pause = ret >= 0;
		if (ret < 0)
			snprintf(s->aux_pause_why, sizeof(s->aux_pause_why), "%.250s", err);
		if (ret >= 0)
			for (int i = 0; i < s->ncpus; i++)
				pt_fds[i] = sptd_col_pt_fd(s->pt, s->cpus[i]);
		else if (s->o->ntriggers > 0)
			sptd_col_log(LOG_NOTICE, "no AUX pause on this kernel (%s; needs Linux 6.13+): "
			             "PT is frozen from user space when a trigger fires", err);
	}
	ret = arm_triggers(s, s->aux_pause ? pt_fds : NULL);
	if (ret < 0)
		return ret;
	if (!is_pt) {
		struct sptd_col_sampler_config scfg = {
			.freq = s->o->freq,
			.ring_pages = s->plan.sample_pages,
			.use_clock = 1,
			.exclude_kernel = s->o->user_only,
			.max_stack = 127,
			.cpus = s->o->cpu_list[0] ? s->cpus : NULL,
			.ncpus = s->ncpus,
			.sideband_pages = SPTD_SAMPLER_SIDEBAND_PAGES,
			.stack_user = s->o->stack_user,
		};

		ret = sptd_col_sampler_create(&scfg, &s->sampler);
		if (ret < 0) {
			sptd_col_log(LOG_ERR, "cannot open the sampling events: %s", strerror(-ret));
			return ret;
		}
	}
	if (s->o->offcpu) {
		/* where threads wait: the stack of every task switched out, from
		 * a perf event on sched:sched_switch (it fires in the context of
		 * the task leaving the CPU), in overwrite rings like the sampler */
		int id = -1;
		struct sptd_col_sampler_config ocfg = {
			.freq = 1,
			.ring_pages = s->plan.sample_pages ? s->plan.sample_pages :
			              s->o->stack_user ? 8192 : 128,
			.use_clock = 1,
			.exclude_kernel = s->o->user_only,
			.max_stack = 127,
			.cpus = s->o->cpu_list[0] ? s->cpus : NULL,
			.ncpus = s->ncpus,
			.stack_user = s->o->stack_user,
		};

		ret = sptd_sched_event_exists("sched", "sched_switch", &id);
		if (ret != 1 || id <= 0) {
			sptd_col_log(LOG_ERR, "--offcpu: no sched:sched_switch tracepoint id");
			return ret < 0 ? ret : -ENOENT;
		}
		ocfg.tracepoint_id = id;
		ret = sptd_col_sampler_create(&ocfg, &s->offcpu);
		if (ret < 0) {
			sptd_col_log(LOG_ERR, "cannot open the off-CPU events (--offcpu): %s",
			             strerror(-ret));
			return ret;
		}
	}
	s->ftrace_started = sptd_col_now_ns();
	s->ftrace_why = "the service started then";
	ret = sptd_sched_trace_start(s->trace);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot start the ftrace instance: %s", strerror(-ret));
		return ret;
	}
	if (s->pt) {
		ret = sptd_col_pt_enable(s->pt);
		if (ret < 0)
			return ret;
		if (s->aux_pause)
			sptd_col_pt_resume(s->pt);
	}
	/* symbol tables (kallsyms now) are read before the first trigger, and
	 * kept across incidents */
	ret = sptd_col_symcache_create(-1, &s->symcache);
	if (ret < 0)
		return ret;
	sptd_col_seed_cpus(s->cpus, s->ncpus);
	s->armed_at = sptd_col_now_ns();
	sptd_col_plan_describe(&s->plan, sizes, sizeof(sizes));
	sptd_col_log(LOG_INFO, "armed: source %s (%d Hz if sampling) on %d CPUs; %s per CPU; "
	             "window %" PRId64 " us + post %" PRId64 " us; %d trigger(s) + manual; "
	             "incidents go to %s", s->source_name, s->o->freq, s->ncpus, sizes,
	             s->o->window_ns / 1000, s->o->post_ns / 1000, s->ntrig, s->o->output);
	return 0;
}

/* ---- the instance removed from outside ---------------------------------------- */

/* Another root program may remove the instance (an rmdir in
 * tracefs/instances: the kernel allows it while none of its files is open,
 * and the service opens them only at a capture); its rings, events and
 * tracing_on go with it, and every write after fails.  Looked for every
 * FTRACE_CHECK_NS and before each capture; made again at once, unless
 * another instance of the name is there (another program's: never taken
 * over, since two recorders would remove each other's); while that fails, tried again every FTRACE_RETRY_NS, and after FTRACE_GIVE_UP_NS the
 * service stops with exit status 1 (systemd's Restart=on-failure starts it
 * anew, and the start says what stops it). */
#define FTRACE_CHECK_NS 1000000000LL
#define FTRACE_RETRY_NS 5000000000LL

int sptd_col_record_ftrace_check(struct sptd_col_service *s, int64_t now, int force)
{
	char name[64];
	int ret;

	if (!force && now - s->ftrace_checked < (s->trace ? FTRACE_CHECK_NS : FTRACE_RETRY_NS))
		return 0;
	s->ftrace_checked = now;
	if (s->trace && sptd_sched_trace_present(s->trace) != 0)
		return 0;   /* there (or tracefs cannot tell: leave it be) */
	sptd_col_instance_name(name, sizeof(name));
	if (s->trace)
		sptd_col_log(LOG_WARNING, "the ftrace instance %s was removed by another program "
		             "(an rmdir in tracefs' instances/): making it again; the scheduling and "
		             "IRQ record before now is lost (the next incident has a gap for it)",
		             name);
	/* destroying the instance took the traceoff triggers with it; a
	 * handle left open on a name another may take would write into theirs */
	s->kfreeze_on = 0;
	sptd_sched_trace_destroy(s->trace);
	s->trace = NULL;
	/* one of the same name made since is another program's: left alone
	 * (taking it over would have two recorders remove each other's) */
	ret = sptd_sched_instance_exists(name) == 1 ? -EEXIST : ftrace_create(s);
	if (ret >= 0) {
		ret = sptd_sched_trace_start(s->trace);
		if (ret < 0) {
			sptd_sched_trace_destroy(s->trace);
			s->trace = NULL;
		}
	}
	if (ret < 0) {
		if (!s->ftrace_down[0]) {
			if (ret == -EEXIST)
				snprintf(s->ftrace_down, sizeof(s->ftrace_down), "the ftrace instance %s "
				         "was removed by another program, and one of that name is there "
				         "now, not sysptd's (remove it: rmdir %s/instances/%s)", name,
				         "/sys/kernel/tracing", name);
			else
				snprintf(s->ftrace_down, sizeof(s->ftrace_down), "the ftrace instance %s "
				         "was removed by another program and cannot be made again (%s)",
				         name, strerror(-ret));
			s->ftrace_down_since = now;
			sptd_col_log(LOG_ERR, "%s: incidents have no scheduling or IRQ record until it "
			             "can; trying again every %lld s, stopping with exit status 1 after "
			             "%lld s (`sysptd status` says so meanwhile)", s->ftrace_down,
			             FTRACE_RETRY_NS / 1000000000LL, SPTD_FTRACE_GIVE_UP_NS / 1000000000LL);
		}
		return ret;
	}
	s->ftrace_started = sptd_col_now_ns();
	s->ftrace_why = "the ftrace instance was made again then, after another program removed "
	                "it (what it held is lost)";
	s->ftrace_recreated = s->ftrace_started;
	s->ftrace_recreations++;
	if (s->ftrace_down[0])
		sptd_col_log(LOG_NOTICE, "made the ftrace instance %s again after %.1f s without "
		             "it: recording scheduling and IRQs again", name,
		             (double)(now - s->ftrace_down_since) / 1e9);
	else
		sptd_col_log(LOG_NOTICE, "made the ftrace instance %s again: recording", name);
	s->ftrace_down[0] = '\0';
	sptd_col_seed_cpus(s->cpus, s->ncpus);
	return 1;
}

void sptd_col_record_rearm(struct sptd_col_service *s)
{
	/* an instance removed meanwhile is made again (starting it) */
	int ret = sptd_col_record_ftrace_check(s, sptd_col_now_ns(), 1);

	if (ret == 0)
		ret = ftrace_restart(s, "re-armed after the previous incident");
	if (ret < 0 && s->trace)
		sptd_col_log(LOG_ERR, "cannot re-arm the ftrace instance: %s", strerror(-ret));
	if (s->sampler)
		sptd_col_sampler_pause(s->sampler, 0);
	if (s->offcpu)
		sptd_col_sampler_pause(s->offcpu, 0);
	if (s->pt)
		sptd_col_pt_enable(s->pt);
	for (int i = 0; i < s->ntrig; i++)
		sptd_col_trigger_drain(s->trig[i]);
	/* after the drain: hits during the capture paused PT again */
	if (s->pt && s->aux_pause)
		sptd_col_pt_resume(s->pt);
	s->armed_at = sptd_col_now_ns();
}

void sptd_col_record_disarm(struct sptd_col_service *s)
{
	s->kfreeze_on = 0;   /* destroying the instance removes the triggers */
	for (int i = 0; i < s->ntrig; i++)
		sptd_col_trigger_destroy(s->trig[i]);
	s->ntrig = 0;
	sptd_col_sampler_destroy(s->sampler);
	s->sampler = NULL;
	sptd_col_sampler_destroy(s->offcpu);
	s->offcpu = NULL;
	sptd_col_pt_destroy(s->pt);
	s->pt = NULL;
	sptd_sched_trace_destroy(s->trace);
	s->trace = NULL;
	sptd_col_symcache_destroy(s->symcache);
	s->symcache = NULL;
}
