/* service.c — the recording service: arm, loop, disarm.
 *
 * Divisions: state · arming (lock, ftrace instance, source, triggers,
 * socket) · the loop (signals, control socket, trigger fds) · entry.
 * Options are parsed in collector/cmd_record.c, freezing and writing an incident in
 * capture.c, --keep in retention.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ctl-local.h"
#include "pt-local.h"
#include "record-local.h"
#include "sptd_sched.h"
#include "sptd_store.h"

/* ---- state ----------------------------------------------------------------- */


static void log_stderr(void *ctx, int level, const char *msg)
{
	const struct sptd_col_record_opts *o = ctx;

	if (o && o->quiet && level > LOG_WARNING)
		return;
	fprintf(stderr, "sysptd: %s%s\n", level <= LOG_ERR ? "error: " :
	        level == LOG_WARNING ? "warning: " : "", msg);
}

/* ---- arming ----------------------------------------------------------------- */

static int choose_source(struct sptd_col_service *s)
{
	switch (s->o->source) {
	case SPTD_SOURCE_PT:
		if (!sptd_col_pt_available()) {
			sptd_col_log(LOG_ERR, "no intel_pt PMU (%s/bus/event_source/devices/intel_pt): "
			             "this CPU or VM has no Intel PT; use --source sample (or auto) "
			             "to record with per-CPU sampling instead", sptd_col_pt_sysfs_root());
			return -ENODEV;
		}
		s->source_name = "pt";
		return 0;
	case SPTD_SOURCE_AUTO:
		if (sptd_col_pt_available()) {
			sptd_col_log(LOG_NOTICE, "intel_pt found: recording Intel PT on every CPU");
			s->source_name = "pt";
			return 0;
		}
		sptd_col_log(LOG_NOTICE, "no intel_pt PMU on this machine: falling back to "
		             "--source sample (cpu-clock sampling with call stacks at %d Hz)",
		             s->o->freq);
		break;
	case SPTD_SOURCE_SAMPLE:
		break;
	}
	s->source_name = "sample";
	return 0;
}

int sptd_col_record_is_pt(const struct sptd_col_service *s)
{
	return s->source_name && strcmp(s->source_name, "pt") == 0;
}

/* PT: the AUX ring from --buffer/--window; the ftrace ring from the window. */
static int arm_pt(struct sptd_col_service *s)
{
	struct sptd_col_pt_config cfg = {
		.req = { .timing = s->o->timing, .user_only = s->o->user_only,
		         .aux_bytes = s->o->buffer_bytes, .window_ns = s->o->window_ns + s->o->post_ns },
		.cpus = s->cpus,
		.ncpus = s->ncpus,
	};
	const struct sptd_col_pt_setup *setup;
	char err[512];
	int ret = sptd_col_pt_create(&cfg, &s->pt, err, sizeof(err));

	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot open Intel PT: %s", err);
		s->pt_failed = 1;
		return ret;
	}
	setup = sptd_col_pt_setup(s->pt);
	sptd_col_log(LOG_INFO, "intel_pt config %s; AUX ring %" PRIu64 " KiB per CPU holds about %"
	             PRId64 " us of a busy CPU (at %" PRIu64 " MB/s)%s", setup->desc,
	             setup->aux_bytes / 1024, setup->coverage_ns / 1000, setup->rate_bytes_s / 1000000,
	             setup->coverage_ns < s->o->window_ns + s->o->post_ns ?
	             ": less than the window, raise --buffer" : "");
	return 0;
}

static size_t sample_ring_pages(const struct sptd_col_record_opts *o)
{
	/* ~1 KiB per sample with a deep call chain; twice the span. */
	double span_s = (double)(o->window_ns + o->post_ns) / 1e9;
	uint64_t bytes = (uint64_t)(span_s * o->freq * 1024.0 * 2) + 65536;
	size_t pages = 16;

	while ((uint64_t)pages * 4096 < bytes && pages < 8192)
		pages *= 2;
	return pages;
}

/* Let the kernel freeze ftrace at the very event when nothing after it is
 * wanted: a traceoff event trigger on the trigger's own tracepoint, with
 * its filter (tracepoint=) or the IRQ numbers (irq= without min=, which is
 * only known at the handler's exit).  Hits the service then ignores
 * (warm-up, cooldown) are undone by restart_frozen_ftrace(). */
static void install_kernel_freeze(struct sptd_col_service *s, const struct sptd_col_trigger_spec *spec)
{
	char system[64], event[128], filter[512];
	int ret;

	if (sptd_col_trigger_freeze_point(spec, system, sizeof(system), event, sizeof(event),
	                                  filter, sizeof(filter)) != 1)
		return;
	ret = sptd_sched_trace_freeze_on(s->trace, system, event, filter[0] ? filter : NULL);
	if (ret < 0)
		sptd_col_log(LOG_WARNING, "cannot install a traceoff trigger on %s:%s (%s); "
		             "freezing from user space instead", system, event, strerror(-ret));
	else
		s->kernel_freeze = 1;
}

/* A traceoff trigger fired for a hit the service ignored: tracing on again,
 * so the next incident's window is not stale. */
static void restart_frozen_ftrace(struct sptd_col_service *s)
{
	if (s->kernel_freeze && s->trace && sptd_sched_trace_is_on(s->trace) == 0) {
		sptd_sched_trace_start(s->trace);
		sptd_col_seed_cpus(s->cpus, s->ncpus);
	}
}

static int arm(struct sptd_col_service *s)
{
	struct sptd_sched_config cfg = {
		.instance = "sysptd",
		.buffer_kb = (size_t)sptd_col_record_buffer_kb(s->o),
		.clock = sptd_col_record_is_pt(s) ? "x86-tsc" : "mono",
		.irq = 1,
		.softirq = 1,
	};
	struct sptd_col_sampler_config scfg = {
		.freq = s->o->freq,
		.ring_pages = sample_ring_pages(s->o),
		.use_clock = 1,
		.exclude_kernel = s->o->user_only,
		.max_stack = 127,
	};
	struct sptd_col_record_opts window_only = *s->o;
	static int pt_fds[SPTD_MAX_CPUS];
	char err[512];
	int ret;

	/* with PT, --buffer sizes the AUX ring, not the ftrace ring */
	window_only.buffer_bytes = 0;
	if (sptd_col_record_is_pt(s))
		cfg.buffer_kb = (size_t)sptd_col_record_buffer_kb(&window_only);
	ret = sptd_sched_trace_create(&cfg, &s->trace);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot set up the ftrace instance: %s%s", strerror(-ret),
		             ret == -ENODEV ? " (is tracefs available? mount -t tracefs nodev /sys/kernel/tracing)" : "");
		return ret;
	}
	/* PT before the triggers: a trigger that is a perf event joins the PT
	 * event's group so the kernel pauses PT where it fired (AUX pause) */
	if (sptd_col_record_is_pt(s)) {
		ret = arm_pt(s);
		if (ret < 0)
			return ret;
		ret = sptd_col_pt_resume_open(s->pt, err, sizeof(err));
		s->aux_pause = ret >= 0;
		if (ret >= 0)
			for (int i = 0; i < s->ncpus; i++)
				pt_fds[i] = sptd_col_pt_fd(s->pt, s->cpus[i]);
		else if (s->o->ntriggers > 0)
			sptd_col_log(LOG_NOTICE, "no AUX pause on this kernel (%s; needs Linux 6.13+): "
			             "PT is frozen from user space when a trigger fires", err);
	}
	for (int i = 0; i < s->o->ntriggers; i++) {
		const struct sptd_col_trigger_spec *spec = &s->o->triggers[i];
		int refused = 0;

		ret = sptd_col_trigger_create_aux(spec, s->cpus, s->ncpus, s->aux_pause ? pt_fds : NULL,
		                                  &s->trig[s->ntrig], err, sizeof(err));
		if (ret < 0) {
			sptd_col_log(LOG_ERR, "--trigger %s: %s", spec->text, err);
			return ret;
		}
		if (s->aux_pause && !sptd_col_trigger_aux_pause(s->trig[s->ntrig], &refused) &&
		    refused && !s->aux_refused_logged) {
			s->aux_refused_logged = 1;
			sptd_col_log(LOG_NOTICE, "the kernel refused AUX pause for --trigger %s (%s): "
			             "PT is frozen from user space when it fires", spec->text,
			             strerror(refused));
		}
		s->ntrig++;
		/* Let the kernel freeze ftrace at the very event when nothing
		 * after it is wanted. */
		if (s->o->post_ns == 0)
			install_kernel_freeze(s, spec);
	}
	if (!sptd_col_record_is_pt(s)) {
		ret = sptd_col_sampler_create(&scfg, &s->sampler);
		if (ret < 0) {
			sptd_col_log(LOG_ERR, "cannot open the sampling events: %s", strerror(-ret));
			return ret;
		}
	}
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
	sptd_col_seed_cpus(s->cpus, s->ncpus);
	s->armed_at = sptd_col_now_ns();
	sptd_col_log(LOG_INFO, "armed: source %s (%d Hz if sampling) on %d CPUs; ftrace ring %" PRIu64
	             " KiB per CPU; window %" PRId64 " us + post %" PRId64 " us; %d trigger(s) + manual; "
	             "incidents go to %s", s->source_name, s->o->freq, s->ncpus,
	             sptd_col_record_buffer_kb(s->o), s->o->window_ns / 1000, s->o->post_ns / 1000,
	             s->ntrig, s->o->output);
	return 0;
}

static void disarm(struct sptd_col_service *s)
{
	for (int i = 0; i < s->ntrig; i++)
		sptd_col_trigger_destroy(s->trig[i]);
	s->ntrig = 0;
	sptd_col_sampler_destroy(s->sampler);
	s->sampler = NULL;
	sptd_col_pt_destroy(s->pt);
	s->pt = NULL;
	sptd_sched_trace_destroy(s->trace);
	s->trace = NULL;
}

/* ---- the loop ------------------------------------------------------------------ */

static void reply_status(struct sptd_col_service *s, int fd)
{
	char buf[8192];
	int n = snprintf(buf, sizeof(buf),
	                 "pid %d\nsource %s\ncpus %d\nwindow_ns %" PRId64 "\npost_ns %" PRId64
	                 "\ntriggers %d\nincidents %d\nlast %s\noutput %s\n",
	                 (int)getpid(), s->source_name, s->ncpus, s->o->window_ns, s->o->post_ns,
	                 s->o->ntriggers, s->incidents, s->last_path[0] ? s->last_path : "-",
	                 s->o->output);

	(void)!write(fd, buf, (size_t)n);
}

static int run_loop(struct sptd_col_service *s)
{
	struct pollfd pfds[SPTD_MAX_TRIGGERS * SPTD_MAX_CPUS * 2 + 2];
	int stop = 0;

	while (!stop && (s->o->count == 0 || s->incidents < s->o->count)) {
		struct sptd_col_fire fire, best = { .ts = INT64_MAX };
		int nfds = 0, fired = 0, ctl_client = -1;
		int64_t not_before;

		pfds[nfds++] = (struct pollfd){ .fd = s->sig_fd, .events = POLLIN };
		pfds[nfds++] = (struct pollfd){ .fd = s->ctl_fd, .events = POLLIN };
		for (int i = 0; i < s->ntrig; i++) {
			int fds[SPTD_MAX_CPUS * 2 + 1];
			int n = sptd_col_trigger_fds(s->trig[i], fds, SPTD_MAX_CPUS * 2 + 1);

			for (int k = 0; k < n; k++)
				pfds[nfds++] = (struct pollfd){ .fd = fds[k], .events = POLLIN };
		}
		if (poll(pfds, (nfds_t)nfds, 1000) < 0 && errno != EINTR) {
			sptd_col_log(LOG_ERR, "poll: %s", strerror(errno));
			return -errno;
		}
		if (pfds[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(s->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGUSR2) {
					fired = 1;
					best.ts = sptd_col_now_ns();
					best.cpu = -1;
					best.spec = &s->manual;
					snprintf(best.detail, sizeof(best.detail), "SIGUSR2 from pid %u", si.ssi_pid);
				} else {
					sptd_col_log(LOG_INFO, "stopping on signal %u", si.ssi_signo);
					stop = 1;
					continue;
				}
			}
		}
		if (pfds[1].revents & POLLIN) {
			char cmd[256];
			int fd = sptd_col_ctl_accept(s->ctl_fd, cmd, sizeof(cmd));

			if (fd >= 0) {
				if (strcmp(cmd, "snapshot") == 0) {
					fired = 1;
					best.ts = sptd_col_now_ns();
					best.cpu = -1;
					best.spec = &s->manual;
					snprintf(best.detail, sizeof(best.detail), "sysptd snapshot");
					ctl_client = fd;
				} else if (strcmp(cmd, "status") == 0) {
					reply_status(s, fd);
					close(fd);
				} else {
					static const char msg[] = "error: unknown command (snapshot, status)\n";

					(void)!write(fd, msg, sizeof(msg) - 1);
					close(fd);
				}
			}
		}
		/* automatic triggers wait for a whole window and the cooldown;
		 * a manual one always acts, and what is missing becomes a gap */
		not_before = sptd_col_trigger_not_before(s->armed_at, s->o->window_ns,
		                                         s->last_capture, s->o->cooldown_ns);
		for (int i = 0; i < s->ntrig; i++)
			if (sptd_col_trigger_check(s->trig[i], not_before, &fire) == 1 && fire.ts < best.ts) {
				best = fire;
				fired = 1;
			}
		if (!fired) {
			/* a hit that did not fire (warm-up, cooldown) paused PT
			 * and may have frozen ftrace in the kernel */
			for (int k = 2; k < nfds; k++)
				if (pfds[k].revents & POLLIN) {
					if (s->aux_pause)
						sptd_col_pt_resume(s->pt);
					restart_frozen_ftrace(s);
					break;
				}
			continue;
		}
		{
			int ret = sptd_col_record_capture(s, &best);

			if (ctl_client >= 0) {
				char reply[4200];
				int n = ret < 0 ? snprintf(reply, sizeof(reply), "error: %s\n", strerror(-ret))
				                : snprintf(reply, sizeof(reply), "ok %s\n", s->last_path);

				(void)!write(ctl_client, reply, (size_t)n);
				close(ctl_client);
			}
		}
	}
	return 0;
}

/* ---- entry ---------------------------------------------------------------------- */

int sptd_col_record_run(struct sptd_col_record_opts *opts)
{
	struct sptd_col_record_opts o = *opts;
	struct sptd_col_service s;
	sigset_t mask;
	int holder = 0, ret, status = SPTD_EXIT_FAIL;
	struct stat sb;

	memset(&s, 0, sizeof(s));
	s.o = &o;
	s.lock_fd = s.ctl_fd = s.sig_fd = -1;
	s.manual.kind = SPTD_TRIG_MANUAL;
	strcpy(s.manual.text, "manual");
	sptd_col_set_log(log_stderr, &o);
	sptd_sched_set_log(log_stderr, &o);

	if (geteuid() != 0) {
		fprintf(stderr, "sysptd: recording needs root (ftrace and system-wide perf events); "
		        "run it with sudo\n");
		return SPTD_EXIT_NOPERM;
	}
	if (mkdir(o.output, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "sysptd: cannot create output directory %s: %s\n", o.output, strerror(errno));
		return SPTD_EXIT_FAIL;
	}
	if (stat(o.output, &sb) < 0 || !S_ISDIR(sb.st_mode) || access(o.output, W_OK) < 0) {
		fprintf(stderr, "sysptd: --output %s is not a writable directory\n", o.output);
		return SPTD_EXIT_FAIL;
	}
	s.lock_fd = sptd_col_lock_take(&holder);
	if (s.lock_fd == -EBUSY) {
		fprintf(stderr, "sysptd: another sysptd is already recording (pid %d); stop it first, "
		        "or use `sysptd snapshot` to trigger it\n", holder);
		return SPTD_EXIT_BUSY;
	}
	if (s.lock_fd < 0) {
		fprintf(stderr, "sysptd: cannot take the lock in %s: %s\n", sptd_col_rundir(),
		        strerror(-s.lock_fd));
		return SPTD_EXIT_FAIL;
	}
	s.ncpus = sptd_col_cpus_online(s.cpus, SPTD_MAX_CPUS);
	if (s.ncpus <= 0) {
		fprintf(stderr, "sysptd: cannot read the online CPUs\n");
		goto out;
	}
	ret = choose_source(&s);
	if (ret < 0) {
		status = SPTD_EXIT_UNSUPP;
		goto out;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s.sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	s.ctl_fd = sptd_col_ctl_listen();
	if (s.sig_fd < 0 || s.ctl_fd < 0) {
		fprintf(stderr, "sysptd: cannot set up signals / the control socket in %s: %s\n",
		        sptd_col_rundir(), strerror(s.ctl_fd < 0 ? -s.ctl_fd : errno));
		goto out;
	}
	ret = arm(&s);
	if (ret < 0) {
		status = ret == -EACCES || ret == -EPERM ? SPTD_EXIT_NOPERM :
		         s.pt_failed ? SPTD_EXIT_FAIL :
		         ret == -ENOENT || ret == -EINVAL || ret == -EOPNOTSUPP ? SPTD_EXIT_USAGE :
		         SPTD_EXIT_FAIL;
		goto out;
	}
	ret = run_loop(&s);
	status = ret < 0 ? SPTD_EXIT_FAIL : SPTD_EXIT_OK;
out:
	disarm(&s);
	if (s.ctl_fd >= 0) {
		char sock[300];

		snprintf(sock, sizeof(sock), "%s/control", sptd_col_rundir());
		unlink(sock);
		close(s.ctl_fd);
	}
	if (s.sig_fd >= 0)
		close(s.sig_fd);
	if (s.lock_fd >= 0)
		close(s.lock_fd);
	return status;
}
