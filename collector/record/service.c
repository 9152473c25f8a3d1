/* service.c — the recording service: take the lock, arm, loop, disarm.
 *
 * Divisions: state · the loop (signals, control socket, trigger fds) ·
 * entry (lock, output directory, source, signals, socket).  Options are
 * parsed in collector/cmd_record.c, the sources armed and re-armed in
 * arm.c, an incident frozen and written in capture.c, --keep in
 * retention.c, `-- CMD` started and reaped in command.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "ctl-local.h"
#include "record-local.h"
#include "sptd_sched.h"

/* ---- state ----------------------------------------------------------------- */

static void log_stderr(void *ctx, int level, const char *msg)
{
	const struct sptd_col_record_opts *o = ctx;

	if (o && o->quiet && level > LOG_WARNING)
		return;
	fprintf(stderr, "sysptd: %s%s\n", level <= LOG_ERR ? "error: " :
	        level == LOG_WARNING ? "warning: " : "", msg);
}

/* ---- the loop ------------------------------------------------------------------ */

static void reply_status(struct sptd_col_service *s, int fd)
{
	char buf[8192];
	int n = snprintf(buf, sizeof(buf),
	                 "pid %d\nname %s\nsource %s\ncpus %d\nwindow_ns %" PRId64 "\npost_ns %" PRId64
	                 "\ntriggers %d\nincidents %d\nlast %s\noutput %s\n",
	                 (int)getpid(), s->o->name ? s->o->name : "-", s->source_name, s->ncpus, s->o->window_ns, s->o->post_ns,
	                 s->o->ntriggers, s->incidents, s->last_path[0] ? s->last_path : "-",
	                 s->o->output);

	/* what `sysptd status` exits non-zero for: a line of its own */
	if (n > 0 && (size_t)n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "ftrace_recreated %d\n%s%s\n",
		              s->ftrace_recreations,
		              s->ftrace_down[0] ? "state not recording: " : "state recording",
		              s->ftrace_down);
	/* break=/PATH: threads no slot was left for (trigger_bp.c) */
	if (n > 0 && (size_t)n < sizeof(buf) && sptd_col_bp_unwatched(s->trig, s->ntrig) >= 0)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "break_unwatched %" PRId64 "\n",
		              sptd_col_bp_unwatched(s->trig, s->ntrig));
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = (int)strlen(buf);

	(void)!write(fd, buf, (size_t)n);
}

static const char *sigabbrev(unsigned sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" :
	       "a signal";
}

/* --on-stop auto: save when this process runs in the foreground of a
 * terminal (its stdin is one and its process group owns it: Ctrl+C
 * reaches it), discard otherwise (a service: systemd, nohup, &). */
static int resolve_on_stop(int on_stop)
{
	pid_t fg;

	if (on_stop != SPTD_ON_STOP_AUTO)
		return on_stop == SPTD_ON_STOP_SAVE;
	if (!isatty(STDIN_FILENO))
		return 0;
	fg = tcgetpgrp(STDIN_FILENO);
	return fg > 0 && fg == getpgrp();
}

/* The earliest hit any trigger fires on (at or after @not_before) into
 * *@best when it is earlier than what *@best holds: 1, else 0. */
static int check_triggers(struct sptd_col_service *s, int64_t not_before,
                          struct sptd_col_fire *best)
{
	struct sptd_col_fire fire;
	int fired = 0;

	for (int i = 0; i < s->ntrig; i++)
		if (sptd_col_trigger_check(s->trig[i], not_before, &fire) == 1 && fire.ts < best->ts) {
			*best = fire;
			fired = 1;
		}
	return fired;
}

/* How often the service looks whether the kernel froze ftrace while the
 * traceoff triggers are in (ms), and how long it then waits for perf's
 * sample of the same hit (us). */
#define KFREEZE_CHECK_MS 20
#define KFREEZE_GRACE_US 2000

/* The kernel froze ftrace at a hit no perf sample reported: perf delivers
 * no tracepoint sample of an IRQ taken while its CPU idled (seen on a
 * 6.18 kernel: ftrace recorded every virtio IRQ, perf none of those that
 * came from idle), but the traceoff trigger acts on it.  Give perf a
 * moment; then fire the trigger that froze the rings (an irq one when
 * there is one: the capture finds its handler return in the rings), at
 * the time the service noticed.  1 with *@best set, 0 when perf's sample
 * came in after all (*@best is then that hit), -1 none to fire. */
static int unreported_freeze(struct sptd_col_service *s, int64_t not_before,
                             struct sptd_col_fire *best)
{
	char system[64], event[128], filter[512], what[200] = "";
	const struct sptd_col_trigger_spec *spec = NULL;

	usleep(KFREEZE_GRACE_US);
	if (check_triggers(s, not_before, best))
		return 0;
	for (int i = 0; i < s->o->ntriggers; i++) {
		const struct sptd_col_trigger_spec *t = &s->o->triggers[i];

		if (sptd_col_trigger_freeze_point(t, system, sizeof(system), event, sizeof(event),
		                                  filter, sizeof(filter)) != 1)
			continue;
		if (!spec || (t->kind == SPTD_TRIG_IRQ && spec->kind != SPTD_TRIG_IRQ)) {
			spec = t;
			snprintf(what, sizeof(what), "%.40s:%.60s", system, event);
		}
	}
	if (!spec)
		return -1;
	memset(best, 0, sizeof(*best));
	best->ts = sptd_col_now_ns();
	best->cpu = -1;
	best->tid = -1;
	best->pid = -1;
	best->spec = spec;
	best->unreported = 1;
	snprintf(best->detail, sizeof(best->detail), "the kernel froze ftrace at a %s hit perf "
	         "did not report (its time unknown: the service noticed it here)", what);
	return 1;
}

static int run_loop(struct sptd_col_service *s)
{
	struct pollfd pfds[SPTD_MAX_TRIGGERS * SPTD_MAX_CPUS * 2 + 2];
	int stop = 0, status = 0, hp;

	while (!stop && (s->o->count == 0 || s->incidents < s->o->count)) {
		struct sptd_col_fire best = { .ts = INT64_MAX, .tid = -1, .pid = -1 };
		int nfds = 0, fired = 0, ctl_client = -1, timeout_ms;
		int64_t not_before, now;

		/* a CPU went offline or came online: its perf events are gone
		 * or missing (hotplug.c) */
		if ((hp = sptd_col_record_hotplug(s, sptd_col_now_ns())) < 0) {
			sptd_col_log(LOG_ERR, "cannot arm again after the online CPUs changed: %s",
			             strerror(-hp));
			return hp;
		}
		/* another program removed the ftrace instance: made again
		 * (arm.c); a recorder that cannot for long stops, so that its
		 * exit status says it (systemd restarts it) */
		sptd_col_record_ftrace_check(s, sptd_col_now_ns(), 0);
		if (s->ftrace_down[0] &&
		    sptd_col_now_ns() - s->ftrace_down_since >= SPTD_FTRACE_GIVE_UP_NS) {
			sptd_col_log(LOG_ERR, "%s for %lld s: stopping with exit status 1",
			             s->ftrace_down, SPTD_FTRACE_GIVE_UP_NS / 1000000000LL);
			return -ENODEV;
		}
		pfds[nfds++] = (struct pollfd){ .fd = s->sig_fd, .events = POLLIN };
		pfds[nfds++] = (struct pollfd){ .fd = s->ctl_fd, .events = POLLIN };
		for (int i = 0; i < s->ntrig; i++) {
			int fds[SPTD_MAX_CPUS * 2 + 1];
			int n = sptd_col_trigger_fds(s->trig[i], fds, SPTD_MAX_CPUS * 2 + 1);

			for (int k = 0; k < n; k++)
				pfds[nfds++] = (struct pollfd){ .fd = fds[k], .events = POLLIN };
		}
		/* the kernel freeze goes on once hits may fire: wake for that */
		not_before = sptd_col_trigger_not_before(s->armed_at, s->o->window_ns,
		                                         s->last_capture, s->o->cooldown_ns);
		now = sptd_col_now_ns();
		sptd_col_record_kfreeze_arm(s, now, not_before);
		timeout_ms = s->kfreeze_on ? KFREEZE_CHECK_MS : 1000;
		if (s->kfreeze_wanted && !s->kfreeze_on && not_before - now < 1000000000LL)
			timeout_ms = (int)((not_before - now) / 1000000) + 1;
		if (poll(pfds, (nfds_t)nfds, timeout_ms) < 0 && errno != EINTR) {
			sptd_col_log(LOG_ERR, "poll: %s", strerror(errno));
			return -errno;
		}
		if (pfds[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(s->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD) {
					if (sptd_col_record_command_reap(s, best.detail, sizeof(best.detail))) {
						sptd_col_log(LOG_INFO, "%s: writing the last window", best.detail);
						fired = 1;
						stop = 1;
						best.ts = sptd_col_now_ns();
						best.cpu = -1;
						best.spec = &s->exit_spec;
					}
				} else if (si.ssi_signo != SIGUSR2 && s->child && s->stop_signals++ == 0) {
					/* CMD's exit writes the incident: a signal from
					 * the terminal reached it too, one sent to us is
					 * passed on; a second one stops at once */
					if (si.ssi_pid)
						kill(s->child, (int)si.ssi_signo);
					sptd_col_log(LOG_INFO, "%s: waiting for %s to exit (again: stop now)",
					             sigabbrev(si.ssi_signo), s->o->cmd_argv[0]);
				} else if (si.ssi_signo == SIGUSR2) {
					fired = 1;
					best.ts = sptd_col_now_ns();
					best.cpu = -1;
					best.spec = &s->manual;
					snprintf(best.detail, sizeof(best.detail), "SIGUSR2 from pid %u", si.ssi_pid);
				} else if (s->save_on_stop) {
					/* the last window first, then out (a manual
					 * trigger: it acts in warm-up too) */
					sptd_col_log(LOG_INFO, "stopping on %s: writing the last window "
					             "first (--on-stop discard: exit at once)",
					             sigabbrev(si.ssi_signo));
					fired = 1;
					stop = 1;
					best.ts = sptd_col_now_ns();
					best.cpu = -1;
					best.spec = &s->stop;
					if (si.ssi_pid)
						snprintf(best.detail, sizeof(best.detail), "%s from pid %u",
						         sigabbrev(si.ssi_signo), si.ssi_pid);
					else
						snprintf(best.detail, sizeof(best.detail), "%s from the terminal%s",
						         sigabbrev(si.ssi_signo),
						         si.ssi_signo == SIGINT ? " (Ctrl+C)" : "");
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
		/* automatic triggers wait for a whole window and the cooldown,
		 * and for the kernel freeze where there is one, so that the hit
		 * that fires is the one that froze the record; a manual one
		 * always acts, and what is missing becomes a gap */
		not_before = sptd_col_trigger_not_before(s->armed_at, s->o->window_ns,
		                                         s->last_capture, s->o->cooldown_ns);
		if (s->kfreeze_wanted)
			not_before = s->kfreeze_on && s->kfreeze_since > not_before ? s->kfreeze_since :
			             s->kfreeze_on ? not_before : INT64_MAX;
		fired |= check_triggers(s, not_before, &best);
		if (!fired && s->kfreeze_on && sptd_sched_trace_is_on(s->trace) == 0)
			fired = unreported_freeze(s, not_before, &best) >= 0;
		if (!fired) {
			/* a hit that did not fire (warm-up, cooldown) paused PT;
			 * one in the moment between a capture's re-arm and the
			 * removal of the spent traceoff triggers froze ftrace */
			for (int k = 2; k < nfds; k++)
				if (pfds[k].revents & POLLIN) {
					sptd_col_record_unfreeze(s);
					break;
				}
			continue;
		}
		{
			int ret;

			/* removed since the last look: what the rings held is
			 * gone, and the incident says so (a gap) */
			sptd_col_record_ftrace_check(s, sptd_col_now_ns(), 1);
			ret = sptd_col_record_capture(s, &best);

			if ((best.spec == &s->stop || best.spec == &s->exit_spec) && ret < 0)
				status = ret;
			/* CMD waited at its exit stop for this incident: let it go */
			if (best.spec == &s->exit_spec && s->child && s->child_exit_stop)
				ptrace(PTRACE_DETACH, s->child, NULL, NULL);

			if (ctl_client >= 0) {
				char reply[4200];
				int n = ret < 0 ? snprintf(reply, sizeof(reply), "error: %s\n", strerror(-ret))
				                : snprintf(reply, sizeof(reply), "ok %s\n", s->last_path);

				(void)!write(ctl_client, reply, (size_t)n);
				close(ctl_client);
			}
		}
	}
	return status;
}

/* ---- entry ---------------------------------------------------------------------- */

/* Once armed, keep only the capabilities recording still uses (measured:
 * docs/SECURITY.md): perf events (CAP_PERFMON; CAP_SYS_ADMIN on kernels
 * before 5.8), /proc/PID/{maps,mem,root} of other users' processes
 * (CAP_SYS_PTRACE), their files (CAP_DAC_READ_SEARCH: read, never write),
 * /proc/PID/map_files for the bytes that ran (CAP_CHECKPOINT_RESTORE;
 * CAP_SYS_ADMIN before 5.9), kernel addresses in /proc/kallsyms
 * (CAP_SYSLOG), perf rings beyond RLIMIT_MEMLOCK (CAP_IPC_LOCK), and for
 * PT /proc/kcore (CAP_SYS_RAWIO); with --unsafe-output, writing into a
 * directory root does not own (CAP_DAC_OVERRIDE).  Mounting tracefs, creating the ftrace
 * instance, the lock and the socket are done by then.  The uid stays 0:
 * the output directory, tracefs and the run directory are root's.
 * SYSPTD_KEEP_CAPS=1 skips this (for debugging a capability problem). */
static void limit_privileges(struct sptd_col_service *s)
{
	int keep[9], n = 0, last = 40, ret;
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	const char *env = getenv("SYSPTD_KEEP_CAPS");

	if (env && strcmp(env, "1") == 0) {
		sptd_col_log(LOG_WARNING, "SYSPTD_KEEP_CAPS=1: keeping every capability");
		return;
	}
	if (f) {
		if (fscanf(f, "%d", &last) != 1)
			last = 40;
		fclose(f);
	}
	keep[n++] = last >= CAP_PERFMON ? CAP_PERFMON : CAP_SYS_ADMIN;
	keep[n++] = CAP_SYS_PTRACE;
	keep[n++] = CAP_DAC_READ_SEARCH;
	keep[n++] = last >= CAP_CHECKPOINT_RESTORE ? CAP_CHECKPOINT_RESTORE : CAP_SYS_ADMIN;
	keep[n++] = CAP_SYSLOG;
	keep[n++] = CAP_IPC_LOCK;
	if (s->pt)
		keep[n++] = CAP_SYS_RAWIO;
	/* --unsafe-output may name a directory root does not own */
	if (s->o->unsafe_output)
		keep[n++] = CAP_DAC_OVERRIDE;
	ret = sptd_col_privs_limit_caps(keep, n);
	if (ret < 0)
		sptd_col_log(LOG_WARNING, "cannot drop the capabilities recording does not use: "
		             "%s (running with all of root's)", strerror(-ret));
}

/* Check and open --output (outdir.c), set its retention, say where
 * incidents go.  An exit status: OK, USAGE for a directory refused as
 * unsafe or not a directory, BUSY when another service writes there. */
static int open_output(struct sptd_col_service *s)
{
	const struct sptd_col_record_opts *o = s->o;
	char err[1024];
	int ret;

	/* a named recorder's default DIR/NAME sits in the default DIR */
	if (o->output_named_default) {
		char parent[256];
		char *slash;

		snprintf(parent, sizeof(parent), "%s", o->output);
		slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			if (mkdir(parent, 0700) < 0 && errno != EEXIST)
				sptd_col_log(LOG_WARNING, "cannot create %s: %s", parent, strerror(errno));
		}
	}
	ret = sptd_col_outdir_open(&s->outdir, o->output, o->unsafe_output, err, sizeof(err));

	if (ret < 0) {
		fprintf(stderr, "sysptd: %s\n", err);
		return ret == -EBUSY ? SPTD_EXIT_BUSY :
		       ret == -EPERM || ret == -ENOTDIR || ret == -ENAMETOOLONG ? SPTD_EXIT_USAGE :
		       SPTD_EXIT_FAIL;
	}
	s->outdir.keep = o->keep;
	s->outdir.max_disk = o->max_disk_set ? o->max_disk :
	                     sptd_col_retention_default_budget(s->outdir.dirfd);
	if (o->unsafe_output)
		sptd_col_log(LOG_WARNING, "--unsafe-output: %s is not checked; other users may "
		             "be able to replace or forge incidents there", o->output);
	if (s->outdir.max_disk)
		sptd_col_log(LOG_INFO, "incidents go to %s, %.1f MB at most in all (%s)", o->output,
		             (double)s->outdir.max_disk / 1e6, o->max_disk_set ? "--max-disk" :
		             "default: 10% of its filesystem, at most 4 GiB; --max-disk changes it");
	else
		sptd_col_log(LOG_INFO, "incidents go to %s (no disk limit)", o->output);
	/* a manifest written by an earlier run: apply today's limits to it */
	if (sptd_col_retention_apply(&s->outdir) > 0)
		sptd_col_outdir_save(&s->outdir);
	return SPTD_EXIT_OK;
}

/* The descriptors recording keeps open, at most: per CPU a sampling or PT
 * event (+ PT's sideband), --offcpu's event, up to two per trigger, and
 * the ftrace ring read at a capture; plus a fixed share (files, the
 * incident, tracefs, sockets). */
static rlim_t fds_needed(const struct sptd_col_service *s)
{
	rlim_t per_cpu = 2 + (s->o->offcpu ? 1 : 0) + (s->source == SPTD_SOURCE_PT ? 1 : 0) +
	                 2 * (rlim_t)s->o->ntriggers;

	return 64 + per_cpu * (rlim_t)s->ncpus;
}

/* RLIMIT_NOFILE's soft limit is often 1024, which a machine of a few
 * hundred CPUs exceeds: raise it to what recording needs, within the hard
 * limit (CMD gets the one sysptd started with).  An exit status. */
static int fd_budget(struct sptd_col_service *s)
{
	rlim_t need = fds_needed(s);
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &s->nofile) < 0)
		return SPTD_EXIT_OK;   /* unknown: perf_event_open says what it runs out of */
	if (s->nofile.rlim_cur == RLIM_INFINITY || s->nofile.rlim_cur >= need)
		return SPTD_EXIT_OK;
	if (s->nofile.rlim_max != RLIM_INFINITY && s->nofile.rlim_max < need) {
		fprintf(stderr, "sysptd: recording %d CPUs with these options needs up to %llu "
		        "open files, but this process may open %llu at most (RLIMIT_NOFILE's "
		        "hard limit): raise it (as root `ulimit -n %llu` before sysptd, or "
		        "LimitNOFILE=%llu in the service unit)\n", s->ncpus,
		        (unsigned long long)need, (unsigned long long)s->nofile.rlim_max,
		        (unsigned long long)need, (unsigned long long)need);
		return SPTD_EXIT_UNSUPP;
	}
	rl.rlim_cur = need;
	rl.rlim_max = s->nofile.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		fprintf(stderr, "sysptd: cannot raise the open-file limit from %llu to %llu: %s\n",
		        (unsigned long long)s->nofile.rlim_cur, (unsigned long long)need,
		        strerror(errno));
		return SPTD_EXIT_FAIL;
	}
	return SPTD_EXIT_OK;
}

/* -C LIST: record only those CPUs; each must be online.  An exit status. */
static int apply_cpu_list(struct sptd_col_service *s)
{
	static int want[SPTD_MAX_CPUS];
	int offline, kept = sptd_col_record_cpus_listed(s->o->cpu_list, s->cpus, s->ncpus, want,
	                                                &offline);

	if (kept < 0) {
		fprintf(stderr, "sysptd: bad CPU list '%s' for --cpu\n", s->o->cpu_list);
		return SPTD_EXIT_USAGE;
	}
	if (offline >= 0) {
		fprintf(stderr, "sysptd: --cpu %s: CPU %d is not online (see "
		        "/sys/devices/system/cpu/online)\n", s->o->cpu_list, offline);
		return SPTD_EXIT_USAGE;
	}
	memcpy(s->cpus, want, (size_t)kept * sizeof(int));
	s->ncpus = kept;
	if (sptd_col_cpumask_hex(s->cpus, s->ncpus, s->cpumask, sizeof(s->cpumask)) < 0) {
		fprintf(stderr, "sysptd: --cpu %s: too many CPUs for a mask\n", s->o->cpu_list);
		return SPTD_EXIT_USAGE;
	}
	return SPTD_EXIT_OK;
}

int sptd_col_record_run(struct sptd_col_record_opts *opts)
{
	struct sptd_col_record_opts o = *opts;
	struct sptd_col_service s;
	sigset_t mask;
	int holder = 0, ret, status = SPTD_EXIT_FAIL;

	memset(&s, 0, sizeof(s));
	s.o = &o;
	s.lock_fd = s.ctl_fd = s.sig_fd = -1;
	s.manual.kind = SPTD_TRIG_MANUAL;
	strcpy(s.manual.text, "manual");
	s.stop.kind = SPTD_TRIG_MANUAL;
	strcpy(s.stop.text, "stop");
	s.exit_spec.kind = SPTD_TRIG_MANUAL;
	strcpy(s.exit_spec.text, "exit");
	s.child_status = -1;
	s.save_on_stop = resolve_on_stop(o.on_stop);
	sptd_col_set_log(log_stderr, &o);
	sptd_sched_set_log(log_stderr, &o);

	if (geteuid() != 0) {
		fprintf(stderr, "sysptd: recording needs root (ftrace and system-wide perf events); "
		        "run it with sudo\n");
		return SPTD_EXIT_NOPERM;
	}
	{
		unsigned long ino;

		/* ftrace names tasks by the machine's pids, perf by this
		 * namespace's (0 for a task outside it), /proc (mostly) shows
		 * this namespace's: tasks would be mixed up or misnamed */
		if (sptd_col_pidns_nested(&ino) == 1) {
			fprintf(stderr, "sysptd: this process is in a PID namespace of its own (a "
			        "container: pid:[%lu]): ftrace would name tasks by the machine's "
			        "pids, perf and /proc by this namespace's, and the incident would "
			        "mix them up.  Record from the host's PID namespace (docker run "
			        "--pid=host, Kubernetes hostPID: true, or on the host)\n", ino);
			return SPTD_EXIT_UNSUPP;
		}
	}
	ret = open_output(&s);
	if (ret != SPTD_EXIT_OK)
		return ret;
	s.lock_fd = sptd_col_lock_take(&holder);
	if (s.lock_fd == -EBUSY) {
		if (o.name)
			fprintf(stderr, "sysptd: a sysptd named '%s' is already recording (pid %d); "
			        "stop it first, or choose another --name\n", o.name, holder);
		else
			fprintf(stderr, "sysptd: another sysptd is already recording (pid %d); stop it "
			        "first, use `sysptd snapshot` to trigger it, or run beside it with "
			        "--name NAME\n", holder);
		sptd_col_outdir_close(&s.outdir);
		return SPTD_EXIT_BUSY;
	}
	if (s.lock_fd < 0) {
		fprintf(stderr, "sysptd: cannot take the lock in %s: %s\n", sptd_col_rundir(),
		        strerror(-s.lock_fd));
		sptd_col_outdir_close(&s.outdir);
		return SPTD_EXIT_FAIL;
	}
	s.ncpus = sptd_col_cpus_online(s.cpus, SPTD_MAX_CPUS);
	if (s.ncpus <= 0) {
		fprintf(stderr, "sysptd: cannot read the online CPUs\n");
		goto out;
	}
	s.online_cpus = s.ncpus;
	if (o.cpu_list[0] && (status = apply_cpu_list(&s)) != SPTD_EXIT_OK)
		goto out;
	status = SPTD_EXIT_FAIL;
	ret = sptd_col_record_choose_source(&s);
	if (ret < 0) {
		status = SPTD_EXIT_UNSUPP;
		goto out;
	}
	if ((status = fd_budget(&s)) != SPTD_EXIT_OK)
		goto out;
	status = SPTD_EXIT_FAIL;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	if (o.cmd_argv)
		sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s.sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	s.ctl_fd = sptd_col_ctl_listen();
	if (s.ctl_fd == -EEXIST) {
		fprintf(stderr, "sysptd: %s/control is not a socket (a directory?): remove it; "
		        "sysptd keeps its control socket there\n", sptd_col_rundir());
		goto out;
	}
	if (s.sig_fd < 0 || s.ctl_fd < 0) {
		fprintf(stderr, "sysptd: cannot set up signals / the control socket in %s: %s\n",
		        sptd_col_rundir(), strerror(s.ctl_fd < 0 ? -s.ctl_fd : errno));
		goto out;
	}
	ret = sptd_col_record_arm(&s);
	if (ret < 0) {
		status = ret == -EACCES || ret == -EPERM ? SPTD_EXIT_NOPERM :
		         s.pt_failed ? SPTD_EXIT_FAIL :
		         ret == -ENOENT || ret == -EINVAL || ret == -EOPNOTSUPP ||
		         ret == -ENOSPC ? SPTD_EXIT_USAGE :
		         SPTD_EXIT_FAIL;
		goto out;
	}
	sptd_col_record_hotplug_note(&s);
	if (o.cmd_argv && (ret = sptd_col_record_command_start(&s)) != 0) {
		status = ret;
		goto out;
	}
	limit_privileges(&s);
	if (s.save_on_stop && !o.cmd_argv)
		sptd_col_log(LOG_INFO, "Ctrl+C (or SIGTERM) writes the last window as a final "
		             "incident, then exits");
	ret = run_loop(&s);
	status = ret < 0 ? SPTD_EXIT_FAIL : SPTD_EXIT_OK;
	/* ended without its ftrace instance: not a recorder that worked */
	if (s.ftrace_down[0]) {
		sptd_col_log(LOG_ERR, "%s: exit status 1", s.ftrace_down);
		if (!o.cmd_argv)
			status = SPTD_EXIT_FAIL;
	}
	if (s.child && s.stop_signals >= 2) {
		sptd_col_log(LOG_WARNING, "stopped on a second signal: %s (pid %d) is left running",
		             o.cmd_argv[0], s.child);
		s.child_status = SPTD_EXIT_FAIL;
		s.child = 0;
	}
	if (s.child) {
		/* stopped before CMD ended (--count): its status is still ours */
		int wst;

		sptd_col_record_disarm(&s);
		sptd_col_log(LOG_INFO, "recording stopped; waiting for %s (pid %d) to exit",
		             o.cmd_argv[0], s.child);
		if (waitpid(s.child, &wst, 0) == s.child)
			s.child_status = WIFSIGNALED(wst) ? 128 + WTERMSIG(wst) : WEXITSTATUS(wst);
		s.child = 0;
	}
	if (s.child_status >= 0 && status == SPTD_EXIT_OK)
		status = s.child_status;
	else if (s.child_status >= 0)
		sptd_col_log(LOG_ERR, "%s exited with status %d, but its incident could not be "
		             "written (exit status %d)", o.cmd_argv[0], s.child_status, status);
out:
	sptd_col_record_disarm(&s);
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
	sptd_col_outdir_close(&s.outdir);
	return status;
}
