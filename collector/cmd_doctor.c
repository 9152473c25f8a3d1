/* cmd_doctor.c — `sysptd doctor`: what this machine supports, and what
 * `--source auto` will pick, each line naming what is missing and the fix.
 * Run by a normal user, a check that needs root to look says so ("skip":
 * what it could not check, and the permission it lacked) instead of
 * reporting the thing as missing. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sptd_col_perf.h"
#include "sptd_col_record.h"
#include "sptd_col.h"
#include "sptd_sched.h"


static int problems;   /* lines that say "no" for something recording needs */

static void line(const char *state, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void line(const char *state, const char *what, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	printf("%-5s %-22s %s\n", state, what, detail);
}

/* A check this user cannot make: what, and why (the permission). */
static void skip(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void skip(const char *what, const char *fmt, ...)
{
	char why[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	line("skip", what, "cannot check as uid %u: %s; run as root (sudo sysptd doctor)",
	     (unsigned)geteuid(), why);
}

static long read_long(const char *path, long fallback)
{
	char buf[64];

	if (sptd_col_sys.read_file(path, buf, sizeof(buf)) < 0)
		return fallback;
	return strtol(buf, NULL, 0);
}

static void check_pt(void)
{
	struct sptd_col_pt_pmu pmu;
	struct sptd_col_pt_request req = { .timing = SPTD_PT_TIMING_NORMAL, .window_ns = 10000000 };
	struct sptd_col_pt_setup setup;
	char err[512];
	int ret;

	if (!sptd_col_pt_available()) {
		char vendor[64] = "?";
		FILE *f = fopen("/proc/cpuinfo", "re");

		if (f) {
			char l[256];

			while (fgets(l, sizeof(l), f))
				if (sscanf(l, "vendor_id : %63s", vendor) == 1)
					break;
			fclose(f);
		}
		line("no", "intel_pt", "no intel_pt PMU (%s/bus/event_source/devices/intel_pt): this "
		     "CPU (vendor %s) or VM has no Intel PT; recording falls back to --source sample",
		     sptd_col_pt_sysfs_root(), vendor);
		return;
	}
	ret = sptd_col_pt_pmu_read(&pmu, err, sizeof(err));
	if (ret < 0) {
		line("no", "intel_pt", "%s", err);
		problems++;
		return;
	}
	line("ok", "intel_pt", "PMU type %u", pmu.type);
	line(pmu.cap_mtc ? "ok" : "no", "pt mtc", "%s (mtc_periods 0x%x)", pmu.cap_mtc ?
	     "MTC timing packets" : "no MTC: time only at TSC packets (coarse)", pmu.mtc_periods);
	line(pmu.cap_psb_cyc ? "ok" : "no", "pt cyc", "%s (cycle_thresholds 0x%x, psb_periods 0x%x)",
	     pmu.cap_psb_cyc ? "cycle-accurate CYC packets and PSB period" :
	     "no CYC: --timing normal/high add nothing", pmu.cyc_thresholds, pmu.psb_periods);
	line(pmu.topa_multiple ? "ok" : "warn", "pt topa", "%s", pmu.topa_multiple ?
	     "multiple ToPA entries: AUX rings of any power-of-two size" :
	     "single ToPA entry: AUX ring at most 4 MiB per CPU, one physically contiguous "
	     "allocation (halved until it fits where memory is fragmented)");
	line(pmu.max_nonturbo_ratio ? "ok" : "warn", "pt ratios",
	     "max_nonturbo_ratio %u, tsc_art_ratio %u:%u%s", pmu.max_nonturbo_ratio,
	     pmu.tsc_art_num, pmu.tsc_art_den, pmu.max_nonturbo_ratio ? "" :
	     " (CYC cannot be scaled to time)");
	line(pmu.noretcomp.present ? "ok" : "no", "pt noretcomp", "%s", pmu.noretcomp.present ?
	     "--timing high can time every return" : "no noretcomp term");
	line(pmu.power_event_trace && pmu.pwr_evt.present ? "ok" : "no", "pt power", "%s",
	     pmu.power_event_trace && pmu.pwr_evt.present
	     ? "--power records C-state entries and exits (cpu_idle)"
	     : "no power event trace (caps/power_event_trace): --power gives no cpu_idle; "
	       "cpu_freq (CBR) comes anyway");
	line(pmu.ptwrite && pmu.ptw.present ? "ok" : "no", "pt ptwrite", "%s",
	     pmu.ptwrite && pmu.ptw.present ? "--power records PTWRITE values (ptwrite)"
	                                    : "no PTWRITE (caps/ptwrite): --power gives no ptwrite rows");
	ret = sptd_col_pt_setup_build(&pmu, &req, &setup, err, sizeof(err));
	if (ret < 0) {
		line("no", "pt config", "%s", err);
		problems++;
	} else {
		line("ok", "pt config", "--timing normal: %s; AUX %llu KiB per CPU for a 10ms window",
		     setup.desc, (unsigned long long)(setup.aux_bytes / 1024));
	}
	if (geteuid() != 0) {
		skip("aux pause", "probing it opens a system-wide intel_pt event, which needs root");
		return;
	}
	ret = sptd_col_pt_aux_pause_probe(&pmu, 0);
	if (ret == 1)
		line("ok", "aux pause", "AUX pause/resume (Linux 6.13+): a perf-event trigger can pause "
		     "PT in the kernel on the CPU where it fired");
	else if (ret == 0)
		line("no", "aux pause", "kernel refuses aux_action (< 6.13): PT is frozen from user "
		     "space on a trigger (some microseconds later)");
	else
		line("warn", "aux pause", "cannot probe (%s)", strerror(-ret));
}

/* Is a tracefs mounted at @dir?  /proc/self/mountinfo says, whoever asks
 * (the directory itself is root's only on most systems). */
static int tracefs_mounted(const char *dir)
{
	char l[1024], mnt[512], type[64];
	int found = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (!found && fgets(l, sizeof(l), f)) {
		const char *sep = strstr(l, " - ");

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - TYPE SOURCE ... */
		if (sep && sscanf(l, "%*s %*s %*s %*s %511s", mnt) == 1 &&
		    sscanf(sep + 3, "%63s", type) == 1)
			found = strcmp(mnt, dir) == 0 && strcmp(type, "tracefs") == 0;
	}
	fclose(f);
	return found;
}

static void check_tracefs(void)
{
	static const char *const events[][2] = {
		{ "sched", "sched_switch" }, { "sched", "sched_waking" }, { "sched", "sched_wakeup_new" },
		{ "sched", "sched_process_fork" }, { "sched", "sched_process_exit" },
		{ "irq", "irq_handler_entry" }, { "irq", "irq_handler_exit" },
		{ "irq", "softirq_entry" }, { "irq", "softirq_exit" },
	};
	const char *dir = "/sys/kernel/tracing";
	int ret = geteuid() == 0 ? sptd_sched_tracefs_ensure() : 0;
	int mounted = tracefs_mounted(dir);

	if (access("/sys/kernel/tracing/events", F_OK) != 0) {
		int e = errno;

		if ((e == EACCES || e == EPERM) && mounted != 0) {
			/* there, but root's: say what could not be looked at */
			skip("tracefs", "%s is %s but not readable by this user (%s)", dir,
			     mounted > 0 ? "mounted" : "there", strerror(e));
			skip("tracepoints", "the sched and irq tracepoints sysptd records live under %s/events",
			     dir);
			skip("ftrace clocks", "%s/trace_clock is root's", dir);
			return;
		}
		line("no", "tracefs", "not mounted at %s%s", dir, ret < 0 ?
		     " and could not be mounted (kernel without CONFIG_FTRACE?)" :
		     geteuid() != 0 ? "; sysptd mounts it when run as root (or: mount -t tracefs "
		     "nodev /sys/kernel/tracing)" :
		     "; mount -t tracefs nodev /sys/kernel/tracing");
		problems++;
		return;
	}
	line("ok", "tracefs", "/sys/kernel/tracing");
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		int id;

		if (sptd_sched_event_exists(events[i][0], events[i][1], &id) != 1) {
			line("no", "tracepoint", "%s:%s missing: thread states / irq slices will lack it",
			     events[i][0], events[i][1]);
			problems++;
		}
	}
	line(access("/sys/kernel/tracing/trace_clock", F_OK) == 0 ? "ok" : "no", "ftrace clocks",
	     "mono (sampling) and x86-tsc (PT) are what sysptd uses");
}

/* Open @ev for this process only (what a normal user may do at
 * perf_event_paranoid <= 2): does the kind of event exist at all? */
static int open_self(struct sptd_col_perf_event *ev)
{
	ev->flags |= SPTD_PERF_EV_EXCLUDE_KERNEL | SPTD_PERF_EV_EXCLUDE_HV;
	return sptd_col_perf_event_open(ev, 0, -1, -1);
}

static void check_perf(void)
{
	struct sptd_col_perf_event clock = {
		.type = SPTD_PERF_TYPE_SOFTWARE,
		.config = { SPTD_PERF_COUNT_SW_CPU_CLOCK },
		.period = 1000,
		.flags = SPTD_PERF_EV_FREQ | SPTD_PERF_EV_DISABLED,
	};
	struct sptd_col_perf_event cycles = {
		.type = SPTD_PERF_TYPE_HARDWARE,
		.config = { SPTD_PERF_COUNT_HW_CPU_CYCLES },
		.flags = SPTD_PERF_EV_DISABLED,
	};
	long paranoid = read_long("/proc/sys/kernel/perf_event_paranoid", 99);
	long kptr = read_long("/proc/sys/kernel/kptr_restrict", -1);
	char lockdown[256] = "";
	int fd;

	line(paranoid <= 1 || geteuid() == 0 ? "ok" : "no", "perf_event_paranoid",
	     "%ld%s", paranoid, geteuid() == 0 ? " (root: not limited)" :
	     paranoid > 1 ? " (system-wide recording needs root, or paranoid <= -1)" : "");
	fd = sptd_col_perf_event_open(&clock, -1, 0, -1);
	if (fd >= 0) {
		line("ok", "cpu-clock sampling", "software events work: --source sample is available");
		close(fd);
	} else if ((fd == -EACCES || fd == -EPERM) && geteuid() != 0) {
		fd = open_self(&clock);
		skip("cpu-clock sampling", "system-wide sampling needs root (perf_event_paranoid %ld); "
		     "software events %s for this user's own processes", paranoid,
		     fd >= 0 ? "do work" : "do not work either");
		if (fd >= 0)
			close(fd);
	} else {
		line("no", "cpu-clock sampling", "perf_event_open: %s", strerror(-fd));
		problems++;
	}
	fd = sptd_col_perf_event_open(&cycles, -1, 0, -1);
	if ((fd == -EACCES || fd == -EPERM) && geteuid() != 0) {
		/* a user's own process tells whether the counters exist */
		fd = open_self(&cycles);
		if (fd == -EACCES || fd == -EPERM)
			skip("hardware PMU", "perf_event_open refused even this process's own counters "
			     "(perf_event_paranoid %ld)", paranoid);
		else
			line(fd >= 0 ? "ok" : "no", "hardware PMU", fd >= 0 ?
			     "cycles counter available (seen on this process; system-wide needs root)" :
			     "no hardware counters (a VM without PMU passthrough): sampling uses cpu-clock");
	} else {
		line(fd >= 0 ? "ok" : "no", "hardware PMU", fd >= 0 ? "cycles counter available" :
		     "no hardware counters (a VM without PMU passthrough): sampling uses cpu-clock");
	}
	if (fd >= 0)
		close(fd);
	line(access("/sys/bus/event_source/devices/breakpoint", F_OK) == 0 ? "ok" : "no",
	     "breakpoints", "hardware breakpoint PMU");
	line(access("/sys/bus/event_source/devices/uprobe", F_OK) == 0 ? "ok" : "no",
	     "uprobes", "uprobe PMU (uprobe triggers)");
	line(kptr == 0 || geteuid() == 0 ? "ok" : "warn", "kallsyms",
	     "kptr_restrict=%ld%s", kptr, kptr > 0 && geteuid() != 0 ?
	     " (kernel symbols hidden from non-root)" : "");
	if (access("/proc/kcore", R_OK) == 0)
		line("ok", "kcore", "/proc/kcore readable: kernel text as it runs can be captured");
	else if ((errno == EACCES || errno == EPERM) && geteuid() != 0)
		skip("kcore", "/proc/kcore (kernel text for PT decoding) is root's (%s)",
		     strerror(errno));
	else
		line("no", "kcore", "/proc/kcore unreadable (%s): PT kernel decode needs a vmlinux",
		     strerror(errno));
	fd = sptd_col_sys.read_file("/sys/kernel/security/lockdown", lockdown, sizeof(lockdown));
	if (fd >= 0) {
		lockdown[strcspn(lockdown, "\n")] = '\0';
		line(strstr(lockdown, "[none]") ? "ok" : "warn", "lockdown", "%s", lockdown);
	} else if ((fd == -EACCES || fd == -EPERM) && geteuid() != 0) {
		skip("lockdown", "/sys/kernel/security is root's (%s)", strerror(-fd));
	} else if (fd != -ENOENT) {
		line("warn", "lockdown", "cannot read /sys/kernel/security/lockdown: %s", strerror(-fd));
	}
}

/* ---- what recording costs here ----------------------------------------------- */

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of a fixed spin (about 0.08 s). */
static double spin_cost(void)
{
	volatile unsigned long x = 0;
	double t0 = thread_cpu_s();

	for (unsigned long i = 0; i < 200000000UL; i++)
		x += i;
	return thread_cpu_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* CPU seconds of @n getppid() calls, best of three. */
static double syscall_cost(long n)
{
	double best = 1e9;

	for (int r = 0; r < 3; r++) {
		double t0 = thread_cpu_s(), t;

		for (long i = 0; i < n; i++)
			(void)getppid();
		t = thread_cpu_s() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

/* Measured here, so a user can pick --freq (and judge the events) knowingly:
 * the CPU a cpu-clock sample with kernel+user call stacks takes (a spin
 * timed bare and under a 10 kHz sampler on this thread, as the service's
 * sampler takes it), and the CPU one ftrace event takes (getppid() timed
 * bare and with syscalls:sys_enter_getppid in an instance of its own). */
static void check_costs(void)
{
	struct sptd_col_perf_event clk = {
		.type = SPTD_PERF_TYPE_SOFTWARE,
		.config = { SPTD_PERF_COUNT_SW_CPU_CLOCK },
		.period = 100000,    /* ns of cpu-clock: 10 kHz, fixed (no frequency ramp) */
		.sample_type = SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME |
		               SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_CALLCHAIN,
		.flags = SPTD_PERF_EV_EXCLUDE_HV | SPTD_PERF_EV_WRITE_BACKWARD,
		.max_stack = 127,
	};
	struct sptd_sched_extra ev = { .system = "syscalls", .event = "sys_enter_getppid" };
	struct sptd_sched_config cfg = {
		.instance = SPTD_DOCTOR_INSTANCE, .buffer_kb = 1024, .clock = "mono",
		.extra = &ev, .nextra = 1,
	};
	struct sptd_col_perf_ring ring;
	struct sptd_sched_trace *tr = NULL;
	double bare, armed, per;
	const long calls = 200000;
	int fd, lock;

	if (geteuid() != 0) {
		skip("cost per sample", "measuring it opens a sampler and an ftrace instance");
		return;
	}
	memset(&ring, 0, sizeof(ring));
	clk.flags |= SPTD_PERF_EV_DISABLED;
	fd = sptd_col_perf_event_open(&clk, 0, -1, -1);
	if (fd >= 0 && sptd_col_perf_ring_map(&ring, fd, 64, 0) == 0) {
		/* rounds of bare and sampled spins, interleaved; the median of
		 * the per-round cost is what a VM's noise disturbs least */
		double per_round[7];

		for (int r = 0; r < 7; r++) {
			sptd_col_perf_event_disable(fd);
			bare = spin_cost();
			sptd_col_perf_event_enable(fd);
			armed = spin_cost();
			per_round[r] = armed > bare ? (armed - bare) / (armed * 10000.0) : 0;
		}
		sptd_col_perf_event_disable(fd);
		qsort(per_round, 7, sizeof(per_round[0]), cmp_double);
		per = per_round[3];
		line("info", "cost per sample", "about %.1f us of CPU per cpu-clock sample with call "
		     "stacks, median of 7 rounds (a CPU at 10 kHz: %.1f%%; at the default --freq "
		     "1000: %.2f%%)", per * 1e6,
		     per * 10000.0 * 100.0, per * 1000.0 * 100.0);
	} else {
		line("warn", "cost per sample", "cannot measure: %s", strerror(fd < 0 ? -fd : EIO));
	}
	sptd_col_perf_ring_unmap(&ring);
	if (fd >= 0)
		close(fd);
	if (sptd_sched_event_exists("syscalls", "sys_enter_getppid", NULL) != 1) {
		line("info", "cost per event", "not measured: no syscalls:sys_enter_getppid "
		     "tracepoint (CONFIG_FTRACE_SYSCALLS)");
		return;
	}
	/* one doctor at a time measures with the instance (another would
	 * remove it as stale, mid-measurement) */
	lock = sptd_col_doctor_lock();
	if (lock == -EBUSY) {
		line("warn", "cost per event", "not measured: another sysptd doctor held "
		     "%s/.doctor.lock for 10 s", sptd_col_rundir());
		return;
	}
	if (lock < 0) {
		line("warn", "cost per event", "cannot measure: cannot lock %s/.doctor.lock: %s",
		     sptd_col_rundir(), strerror(-lock));
		return;
	}
	bare = syscall_cost(calls);
	if (sptd_sched_trace_create(&cfg, &tr) == 0 && sptd_sched_trace_start(tr) == 0) {
		armed = syscall_cost(calls);
		per = armed > bare ? (armed - bare) / (double)calls : 0;
		line("info", "cost per event", "about %.3f us of CPU per ftrace event (100,000 context "
		     "switches a second, three events each: %.1f%% of a CPU)", per * 1e6,
		     per * 300000.0 * 100.0);
	} else {
		line("warn", "cost per event", "cannot measure: the ftrace instance did not start");
	}
	sptd_sched_trace_destroy(tr);
	close(lock);
}

int sptd_col_cmd_doctor(int argc, char **argv)
{
	int ret = sptd_col_args_none(argc, argv, "doctor");
	struct utsname u;

	if (ret > 0) {
		printf("Usage: sysptd doctor\n\nReport what this machine supports for recording: the PID\n"
		       "namespace (recording needs the host's), Intel PT and\n"
		       "its capabilities, AUX pause, tracefs and the tracepoints sysptd uses,\n"
		       "perf_event_paranoid, software and hardware perf events, breakpoints,\n"
		       "uprobes, kallsyms, kcore, lockdown, what --source auto picks, and (as\n"
		       "root) what a sample and an ftrace event cost on this machine.\n"
		       "Each line: ok, no (missing: what it costs), warn, info, or skip (this\n"
		       "user may not look: what could not be checked and which permission was\n"
		       "lacking; run as root to check it).\n\n"
		       "Options:\n  -h, --help  this text\n\n"
		       "Exit status 0 when recording can work (with some source), 1 when not\n"
		       "(including: not root).\n");
		return SPTD_EXIT_OK;
	}
	if (ret < 0)
		return SPTD_EXIT_USAGE;
	uname(&u);
	line("info", "kernel", "%s %s (%s)", u.sysname, u.release, u.machine);
	line(geteuid() == 0 ? "ok" : "no", "root", geteuid() == 0 ? "running as root" :
	     "not root: recording needs root (sudo sysptd ...); what only root may look at "
	     "says skip");
	if (geteuid() != 0)
		problems++;
	{
		unsigned long ino;
		int nested = sptd_col_pidns_nested(&ino);

		if (nested == 1) {
			line("no", "pid namespace", "pid:[%lu], not the host's: ftrace names tasks "
			     "by the machine's pids, perf and /proc by this namespace's; recording "
			     "refuses (run with the host's PID namespace: docker --pid=host, "
			     "Kubernetes hostPID: true)", ino);
			problems++;
		} else if (nested == 0) {
			line("ok", "pid namespace", "the host's: ftrace, perf and /proc agree on "
			     "every pid");
		} else {
			line("warn", "pid namespace", "cannot tell (/proc/self/ns/pid: %s)",
			     strerror(-nested));
		}
	}
	check_pt();
	check_tracefs();
	check_perf();
	check_costs();
	line("info", "--source auto", "%s", sptd_col_pt_available() ?
	     "picks pt (Intel PT on every CPU, sched/irq from ftrace on x86-tsc)" :
	     "picks sample (per-CPU cpu-clock sampling with kernel+user call stacks)");
	return problems ? SPTD_EXIT_FAIL : SPTD_EXIT_OK;
}
