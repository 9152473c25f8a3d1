/* cmd_record.c — `sysptd [record]`: the recording service.
 *
 * Divisions:
 *   options      command line -> struct sptd_col_record_opts
 *   arming       lock, ftrace instance, sampling source, triggers, socket
 *   the loop     poll: signals, control socket, trigger fds
 *   capture      freeze, copy the window, re-arm, then decode and write
 *   retention    --keep
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ctl-local.h"
#include "pt-local.h"
#include "record-local.h"
#include "sptd_sched.h"
#include "sptd_store.h"

/* ---- options ---------------------------------------------------------------- */

static const char record_usage[] =
"Usage: sysptd [record] [OPTIONS]\n"
"\n"
"Keep a rolling record of what every CPU did and, when a trigger fires,\n"
"freeze the last --window of it into one incident file (SQLite).\n"
"Needs root.\n"
"\n"
"Options:\n"
"  -w, --window DUR       history kept before the trigger (default 10ms)\n"
"      --post DUR         history kept after the trigger (default 0)\n"
"  -t, --trigger SPEC     fire on SPEC (repeatable; any one fires):\n"
"                           irq[=NUM|NAME][,min=DUR]  a hard IRQ handler ran\n"
"                             (NAME as in /proc/interrupts; min: entry->exit >= DUR)\n"
"                           tracepoint=SYS:EVENT[,filter=EXPR]  that tracepoint hit\n"
"                             (EXPR in ftrace filter syntax)\n"
"                           latency=DUR  a task waited DUR or more between its\n"
"                             wakeup and running (sched_waking -> sched_switch)\n"
"                           uprobe=PATH:SYMBOL  any process ran that function\n"
"                           timer=DUR  periodically\n"
"                         Manual triggers are always armed: `sysptd snapshot`\n"
"                         or SIGUSR2.\n"
"  -s, --source SRC       auto (default), pt, or sample.  auto picks pt when\n"
"                         /sys/bus/event_source/devices/intel_pt exists, else\n"
"                         sample (per-CPU cpu-clock sampling with call stacks)\n"
"  -F, --freq HZ          sampling frequency per CPU (default 10000)\n"
"  -b, --buffer SIZE      ftrace ring per CPU (default: sized from --window);\n"
"                         with --source pt: the AUX (PT) ring per CPU instead\n"
"      --timing LEVEL     PT timing: low (TSC+MTC), normal (+CYC, default) or\n"
"                         high (+noretcomp: every return timed)\n"
"      --user-only        leave kernel code out of samples/trace\n"
"      --image-cache DIR  PT: copy every mapped executable and library into\n"
"                         DIR/<build-id>/<name> once (default\n"
"                         /var/lib/sysptd/images), so incidents decode after\n"
"                         the files change\n"
"      --portable         PT: also embed those files in the incident, so it\n"
"                         decodes on another machine\n"
"  -n, --count N          exit after N incidents (default: run until stopped)\n"
"      --once             same as --count 1\n"
"      --cooldown DUR     ignore triggers for DUR after an incident (default 0)\n"
"  -o, --output DIR       where incident files go (default /var/lib/sysptd)\n"
"      --keep N           keep only the newest N incidents in DIR (default all)\n"
"  -j, --jobs N           decode threads (default: number of CPUs)\n"
"  -q, --quiet            print only errors and incident paths\n"
"  -h, --help             this text\n"
"\n"
"DUR is a number with ns, us, ms or s (\"10ms\", \"1.5s\"); SIZE takes K, M, G.\n"
"Each incident's path is printed on stdout when it is written.\n"
"\n"
"Exit status: 0 done (--count reached or stopped by SIGINT/SIGTERM), 1 runtime\n"
"failure, 2 bad command line, 4 not root, 5 this machine lacks what was asked\n"
"(e.g. --source pt without Intel PT), 7 another sysptd is running.\n";

int sptd_col_record_parse(int argc, char **argv, struct sptd_col_record_opts *o)
{
	static const struct option longopts[] = {
		{ "window", required_argument, NULL, 'w' },
		{ "post", required_argument, NULL, 'P' },
		{ "trigger", required_argument, NULL, 't' },
		{ "source", required_argument, NULL, 's' },
		{ "freq", required_argument, NULL, 'F' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "user-only", no_argument, NULL, 'U' },
		{ "timing", required_argument, NULL, 'T' },
		{ "image-cache", required_argument, NULL, 'I' },
		{ "portable", no_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "once", no_argument, NULL, '1' },
		{ "cooldown", required_argument, NULL, 'C' },
		{ "output", required_argument, NULL, 'o' },
		{ "keep", required_argument, NULL, 'K' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512];
	size_t off = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->window_ns = 10000000;
	o->freq = 10000;
	o->timing = SPTD_PT_TIMING_NORMAL;
	o->output = "/var/lib/sysptd";
	o->image_cache = sptd_col_pt_imgcache_default();
	for (int i = 0; i < argc && off < sizeof(o->command); i++)
		off += (size_t)snprintf(o->command + off, sizeof(o->command) - off, "%s%s",
		                        i ? " " : "", argv[i]);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:t:s:F:b:n:o:j:qh", longopts, NULL)) != -1) {
		char *end;
		long v;

		switch (c) {
		case 'w':
		case 'P':
		case 'C': {
			int64_t ns;

			if (sptd_col_parse_duration(optarg, &ns) < 0 || (c == 'w' && ns <= 0)) {
				fprintf(stderr, "sysptd: bad duration '%s' for --%s (use e.g. 10ms, 500us, 2s)\n",
				        optarg, c == 'w' ? "window" : c == 'P' ? "post" : "cooldown");
				return -EINVAL;
			}
			*(c == 'w' ? &o->window_ns : c == 'P' ? &o->post_ns : &o->cooldown_ns) = ns;
			break;
		}
		case 't':
			if (o->ntriggers == SPTD_MAX_TRIGGERS) {
				fprintf(stderr, "sysptd: at most %d --trigger options\n", SPTD_MAX_TRIGGERS);
				return -EINVAL;
			}
			if (sptd_col_parse_trigger(optarg, &o->triggers[o->ntriggers], err, sizeof(err)) < 0) {
				fprintf(stderr, "sysptd: --trigger %s: %s\n", optarg, err);
				return -EINVAL;
			}
			o->ntriggers++;
			break;
		case 's':
			if (strcmp(optarg, "auto") == 0)
				o->source = SPTD_SOURCE_AUTO;
			else if (strcmp(optarg, "sample") == 0)
				o->source = SPTD_SOURCE_SAMPLE;
			else if (strcmp(optarg, "pt") == 0)
				o->source = SPTD_SOURCE_PT;
			else {
				fprintf(stderr, "sysptd: unknown --source '%s' (auto, pt or sample)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'F':
		case 'n':
		case 'K':
		case 'j':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < (c == 'F' ? 1 : 0) ||
			    v > (c == 'F' ? 100000 : 1000000)) {
				fprintf(stderr, "sysptd: bad number '%s' for -%c\n", optarg, c == 'K' ? 'k' : c);
				return -EINVAL;
			}
			*(c == 'F' ? &o->freq : c == 'n' ? &o->count : c == 'K' ? &o->keep : &o->jobs) = (int)v;
			break;
		case '1':
			o->count = 1;
			break;
		case 'b':
			if (sptd_col_parse_size(optarg, &o->buffer_bytes) < 0 || o->buffer_bytes < 4096) {
				fprintf(stderr, "sysptd: bad size '%s' for --buffer (use e.g. 4M; at least 4K)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'U':
			o->user_only = 1;
			break;
		case 'T':
			if (sptd_col_pt_timing_parse(optarg, &o->timing) < 0) {
				fprintf(stderr, "sysptd: unknown --timing '%s' (low, normal or high)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'I':
			if (!optarg[0]) {
				fprintf(stderr, "sysptd: --image-cache needs a directory\n");
				return -EINVAL;
			}
			o->image_cache = optarg;
			break;
		case 'p':
			o->portable = 1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 1;
		case ':':
			fprintf(stderr, "sysptd: option '%s' needs a value (see sysptd --help)\n", argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, "sysptd: unknown option '%s' (see sysptd --help)\n", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sysptd: unexpected argument '%s' (see sysptd --help)\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

uint64_t sptd_col_record_buffer_kb(const struct sptd_col_record_opts *o)
{
	/* A busy CPU writes ~30 MB/s of sched/irq events; keep twice the span
	 * so the window survives until the freeze lands. */
	uint64_t span_ms = (uint64_t)((o->window_ns + o->post_ns) / 1000000) + 1;
	uint64_t kb = o->buffer_bytes ? o->buffer_bytes / 1024 : span_ms * 64;

	if (!o->buffer_bytes) {
		if (kb < 1024)
			kb = 1024;
		if (kb > 262144)
			kb = 262144;
	}
	return kb;
}

/* ---- state ----------------------------------------------------------------- */

struct service {
	struct sptd_col_record_opts *o;
	int cpus[SPTD_MAX_CPUS], ncpus;
	struct sptd_sched_trace *trace;
	struct sptd_col_sampler *sampler;
	struct sptd_col_pt *pt;     /* the PT source (source "pt"), else NULL */
	struct sptd_col_trigger *trig[SPTD_MAX_TRIGGERS];
	int ntrig;
	struct sptd_col_trigger_spec manual;
	int lock_fd, ctl_fd, sig_fd;
	int incidents;             /* written so far */
	int64_t last_capture;      /* ns, for --cooldown */
	int64_t armed_at;          /* ns when the rings last started filling */
	char last_path[4096];
	const char *source_name;
	int pt_failed;             /* opening PT failed: a runtime failure, not usage */
	int aux_pause;             /* 1: triggers pause PT in the kernel (AUX pause) */
	int kernel_freeze;         /* traceoff event triggers installed in ftrace */
	int aux_refused_logged;    /* the kernel's refusal was said once */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void log_stderr(void *ctx, int level, const char *msg)
{
	const struct sptd_col_record_opts *o = ctx;

	if (o && o->quiet && level > LOG_WARNING)
		return;
	fprintf(stderr, "sysptd: %s%s\n", level <= LOG_ERR ? "error: " :
	        level == LOG_WARNING ? "warning: " : "", msg);
}

/* ---- arming ----------------------------------------------------------------- */

static int choose_source(struct service *s)
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

static int is_pt(const struct service *s)
{
	return s->source_name && strcmp(s->source_name, "pt") == 0;
}

/* PT: the AUX ring from --buffer/--window; the ftrace ring from the window. */
static int arm_pt(struct service *s)
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
static void install_kernel_freeze(struct service *s, const struct sptd_col_trigger_spec *spec)
{
	char filter[512] = "";
	const char *system = spec->system, *event = spec->event;
	int ret;

	if (spec->kind == SPTD_TRIG_TRACEPOINT) {
		snprintf(filter, sizeof(filter), "%s", spec->filter);
	} else if (spec->kind == SPTD_TRIG_IRQ && spec->min_ns == 0) {
		int irqs[16], n = 0;
		size_t off = 0;

		system = "irq";
		event = "irq_handler_entry";
		if (spec->irq_name[0])
			n = sptd_col_irq_lookup("/proc/interrupts", spec->irq_name, irqs, 16);
		else if (spec->irq >= 0)
			irqs[n++] = spec->irq;
		for (int i = 0; i < n && off < sizeof(filter); i++)
			off += (size_t)snprintf(filter + off, sizeof(filter) - off, "%sirq==%d",
			                        i ? " || " : "", irqs[i]);
	} else {
		return;
	}
	ret = sptd_sched_trace_freeze_on(s->trace, system, event, filter[0] ? filter : NULL);
	if (ret < 0)
		sptd_col_log(LOG_WARNING, "cannot install a traceoff trigger on %s:%s (%s); "
		             "freezing from user space instead", system, event, strerror(-ret));
	else
		s->kernel_freeze = 1;
}

/* A traceoff trigger fired for a hit the service ignored: tracing on again,
 * so the next incident's window is not stale. */
static void restart_frozen_ftrace(struct service *s)
{
	if (s->kernel_freeze && s->trace && sptd_sched_trace_is_on(s->trace) == 0) {
		sptd_sched_trace_start(s->trace);
		sptd_col_seed_cpus(s->cpus, s->ncpus);
	}
}

static int arm(struct service *s)
{
	struct sptd_sched_config cfg = {
		.instance = "sysptd",
		.buffer_kb = (size_t)sptd_col_record_buffer_kb(s->o),
		.clock = is_pt(s) ? "x86-tsc" : "mono",
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
	if (is_pt(s))
		cfg.buffer_kb = (size_t)sptd_col_record_buffer_kb(&window_only);
	ret = sptd_sched_trace_create(&cfg, &s->trace);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot set up the ftrace instance: %s%s", strerror(-ret),
		             ret == -ENODEV ? " (is tracefs available? mount -t tracefs nodev /sys/kernel/tracing)" : "");
		return ret;
	}
	/* PT before the triggers: a trigger that is a perf event joins the PT
	 * event's group so the kernel pauses PT where it fired (AUX pause) */
	if (is_pt(s)) {
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
	if (!is_pt(s)) {
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
	s->armed_at = now_ns();
	sptd_col_log(LOG_INFO, "armed: source %s (%d Hz if sampling) on %d CPUs; ftrace ring %" PRIu64
	             " KiB per CPU; window %" PRId64 " us + post %" PRId64 " us; %d trigger(s) + manual; "
	             "incidents go to %s", s->source_name, s->o->freq, s->ncpus,
	             sptd_col_record_buffer_kb(s->o), s->o->window_ns / 1000, s->o->post_ns / 1000,
	             s->ntrig, s->o->output);
	return 0;
}

static void disarm(struct service *s)
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

/* ---- capture ------------------------------------------------------------------ */

/* Samples copied out of the rings before re-arming. */
struct sample_copy {
	int64_t ts;
	int cpu, pid, tid;
	uint64_t nr;
	uint64_t *ips;
};

struct capture {
	struct sptd_store *st;
	struct sample_copy *samples;
	size_t nsamples, cap;
	int pages;
};

static int on_raw(void *arg, enum sptd_sched_raw_kind kind, const char *name, int cpu,
                  int seq, const void *data, size_t len)
{
	struct capture *c = arg;

	if (kind == SPTD_SCHED_RAW_FORMAT)
		return sptd_store_raw_ftrace_format_add(c->st, name, data);
	c->pages++;
	return sptd_store_raw_ftrace_page_add(c->st, cpu, seq, data, len);
}

static int on_sample(void *arg, const struct sptd_col_sample *smp)
{
	struct capture *c = arg;
	struct sample_copy *copy;

	if (c->nsamples == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct sample_copy *more = realloc(c->samples, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		c->samples = more;
		c->cap = cap;
	}
	copy = &c->samples[c->nsamples];
	copy->ips = malloc(smp->nr * sizeof(uint64_t) + 1);
	if (!copy->ips)
		return -ENOMEM;
	memcpy(copy->ips, smp->ips, smp->nr * sizeof(uint64_t));
	copy->ts = smp->ts;
	copy->cpu = smp->cpu;
	copy->pid = smp->pid;
	copy->tid = smp->tid;
	copy->nr = smp->nr;
	c->nsamples++;
	return 0;
}

static void capture_fini(struct capture *c)
{
	for (size_t i = 0; i < c->nsamples; i++)
		free(c->samples[i].ips);
	free(c->samples);
}

static int write_meta(struct service *s, struct sptd_store *st, const struct sptd_col_fire *fire,
                      int64_t wstart, int64_t wend)
{
	struct utsname u;
	char host[256] = "", created[64], model[256] = "", line[512], spec[2048] = "";
	time_t t = time(NULL);
	struct tm tm;
	size_t off = 0;
	FILE *f;
	int ret = 0;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	gmtime_r(&t, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	f = fopen("/proc/cpuinfo", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "model name", 10) == 0) {
				char *colon = strchr(line, ':');

				if (colon)
					snprintf(model, sizeof(model), "%s", colon + 2);
				model[strcspn(model, "\n")] = '\0';
				break;
			}
		fclose(f);
	}
	for (int i = 0; i < s->o->ntriggers && off < sizeof(spec); i++)
		off += (size_t)snprintf(spec + off, sizeof(spec) - off, "%s%s", i ? " " : "",
		                        s->o->triggers[i].text);
	{
		const struct { const char *key, *value; } text[] = {
			{ "sysptd_version", SPTD_VERSION }, { "created", created }, { "host", host },
			{ "kernel", u.release }, { "kernel_version", u.version }, { "machine", u.machine },
			{ "cpu_model", model }, { "source", s->source_name }, { "clock", "monotonic" },
			{ "ftrace_clock", is_pt(s) ? "x86-tsc" : "mono" }, { "trigger_spec", spec }, { "command", s->o->command },
			{ "trigger_kind", fire->spec ? fire->spec->text : "manual" },
		};
		const struct { const char *key; int64_t value; } ints[] = {
			{ "cpus", s->ncpus }, { "window_ns", s->o->window_ns }, { "post_ns", s->o->post_ns },
			{ "window_start", wstart }, { "window_end", wend }, { "trigger_ts", fire->ts },
			{ "sample_freq", s->o->freq },
			{ "ftrace_buffer_kb", (int64_t)sptd_col_record_buffer_kb(s->o) },
		};

		for (size_t i = 0; i < sizeof(text) / sizeof(text[0]) && ret >= 0; i++)
			ret = sptd_store_meta_set(st, text[i].key, text[i].value);
		for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]) && ret >= 0; i++)
			ret = sptd_store_meta_set_int(st, ints[i].key, ints[i].value);
	}
	return ret;
}

/* Every task on the machine, light: tid, tgid, comm (no maps).  Gives
 * threads their process even when they were never sampled. */
static int snapshot_all_tasks(struct sptd_store *st)
{
	DIR *proc = opendir("/proc");
	struct dirent *pe;
	int ret = 0;

	if (!proc)
		return -errno;
	while (ret >= 0 && (pe = readdir(proc))) {
		char path[300], comm[64];
		int pid = atoi(pe->d_name);
		DIR *task;
		struct dirent *te;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		task = opendir(path);
		if (!task)
			continue; /* exited meanwhile */
		while (ret >= 0 && (te = readdir(task))) {
			int tid = atoi(te->d_name);
			ssize_t n;

			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
			n = sptd_col_sys.read_file(path, comm, sizeof(comm));
			if (n < 0)
				continue;
			comm[strcspn(comm, "\n")] = '\0';
			ret = sptd_store_raw_task_add(st, pid, tid, comm, NULL);
		}
		closedir(task);
	}
	closedir(proc);
	return ret;
}

static int symbolize(struct sptd_store *st, struct capture *c)
{
	struct sptd_col_symcap *sc = NULL;
	int *pids = NULL;
	size_t npids = 0;
	int ret;

	ret = sptd_col_symcap_create(st, &sc);
	if (ret < 0)
		return ret;
	pids = calloc(c->nsamples + 1, sizeof(*pids));
	if (!pids) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->nsamples; i++) {
		size_t j;

		for (j = 0; j < npids && pids[j] != c->samples[i].pid; j++)
			;
		if (j == npids && c->samples[i].pid > 0) {
			pids[npids++] = c->samples[i].pid;
			/* a process that exited since is not an error */
			sptd_col_symcap_task(sc, c->samples[i].pid);
		}
	}
	for (size_t i = 0; i < c->nsamples && ret >= 0; i++) {
		struct sample_copy *smp = &c->samples[i];

		for (uint64_t k = 0; k < smp->nr; k++) {
			if (smp->ips[k] >= (uint64_t)-4095) /* PERF_CONTEXT_* markers */
				continue;
			ret = sptd_col_symcap_addr(sc, smp->pid, smp->ips[k]);
			if (ret == -ENOENT || ret == -ESRCH)
				ret = 0;
			if (ret < 0)
				break;
		}
		if (ret >= 0)
			ret = sptd_store_raw_sample_add(st, smp->ts, smp->cpu, smp->pid, smp->tid,
			                                smp->ips, (size_t)smp->nr);
	}
	if (ret >= 0)
		ret = sptd_col_symcap_finish(sc);
out:
	free(pids);
	sptd_col_symcap_destroy(sc);
	return ret;
}

/* PT: the tasks the sideband names: their file mappings (symcap: dso +
 * raw_mmap rows; from the sideband's MMAP2 records for processes already
 * gone), anonymous/vDSO code (raw_image), the kernel text, and the mapped
 * files themselves (image cache, embedded with --portable). */
static int pt_images(struct service *s, struct sptd_store *st)
{
	struct sptd_col_symcap *sc = NULL;
	int pids[4096], gone[4096], npids, ngone = 0, ret;

	npids = sptd_col_pt_pids(s->pt, pids, 4096);
	if (npids > 4096)
		npids = 4096;
	ret = sptd_col_symcap_create(st, &sc);
	for (int i = 0; i < npids && ret >= 0; i++) {
		int r = sptd_col_symcap_task(sc, pids[i]);
		char sql[96];
		int64_t maps = 0;

		if (r == -ENOMEM || r == -ENOSPC || r == -EIO) {
			ret = r;
			break;
		}
		/* exited (or a zombie without maps): the sideband remembers */
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_mmap WHERE pid = %d", pids[i]);
		if (r < 0 || (sptd_store_query_int(st, sql, &maps) >= 0 && maps == 0))
			gone[ngone++] = pids[i];
	}
	if (ret >= 0)
		ret = sptd_col_symcap_finish(sc);
	sptd_col_symcap_destroy(sc);
	if (ret >= 0) {
		ret = sptd_col_pt_mmaps_exited(s->pt, st, gone, ngone);
		if (ret > 0)
			sptd_col_log(LOG_INFO, "%d mapping(s) of %d exited process(es) rebuilt from "
			             "the sideband", ret, ngone);
	}
	if (ret >= 0)
		ret = sptd_col_pt_images_anon(st, pids, npids);
	if (ret >= 0 && !s->o->user_only) {
		int k = sptd_col_pt_images_kernel(st, NULL);

		if (k < 0 && k != -EIO)
			sptd_col_log(LOG_WARNING, "kernel text not captured (%s): kernel code may "
			             "show as gaps or misdecode", strerror(-k));
		ret = k == -EIO ? k : 0;
	}
	if (ret >= 0)
		ret = sptd_col_pt_images_files(st, s->o->image_cache, s->o->portable);
	return ret < 0 ? ret : 0;
}

static void rearm(struct service *s)
{
	int ret = sptd_sched_trace_reset(s->trace);

	if (ret >= 0)
		ret = sptd_sched_trace_start(s->trace);
	if (ret < 0)
		sptd_col_log(LOG_ERR, "cannot re-arm the ftrace instance: %s", strerror(-ret));
	sptd_col_seed_cpus(s->cpus, s->ncpus);
	if (s->sampler)
		sptd_col_sampler_pause(s->sampler, 0);
	if (s->pt)
		sptd_col_pt_enable(s->pt);
	for (int i = 0; i < s->ntrig; i++)
		sptd_col_trigger_drain(s->trig[i]);
	/* after the drain: hits during the capture paused PT again */
	if (s->pt && s->aux_pause)
		sptd_col_pt_resume(s->pt);
	s->armed_at = now_ns();
}

static void incident_path(struct service *s, char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	char stamp[32];

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (int seq = 0;; seq++) {
		snprintf(buf, len, "%s/incident-%s-%d.db", s->o->output, stamp, seq);
		if (access(buf, F_OK) != 0)
			return;
	}
}

static const char *store_reason(struct sptd_store *st, int ret)
{
	if (ret == -ENOSPC)
		return "disk full";
	return st && sptd_store_errmsg(st)[0] ? sptd_store_errmsg(st) : strerror(-ret);
}

/* Freeze, copy, re-arm, decode, write.  Errors here lose this incident only:
 * the service re-arms and goes on. */
static int capture(struct service *s, const struct sptd_col_fire *fire)
{
	struct capture c = { 0 };
	int64_t wstart = fire->ts - s->o->window_ns, wend = fire->ts + s->o->post_ns;
	int64_t t0 = now_ns(), slices = 0, nsamples;
	char path[4096];
	int ret;

	if (s->o->post_ns > 0) {
		struct timespec until = { wend / 1000000000, wend % 1000000000 };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
			;
	}
	/* PT first: it is the fastest-filling ring */
	if (s->pt && sptd_col_pt_freeze(s->pt) < 0)
		sptd_col_log(LOG_WARNING, "freezing PT failed: this incident may lack PT");
	sptd_sched_trace_stop(s->trace);
	if (s->sampler)
		sptd_col_sampler_pause(s->sampler, 1);

	incident_path(s, path, sizeof(path));
	ret = sptd_store_create(path, &c.st);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot create %s: %s", path,
		             ret == -ENOSPC ? "disk full (free space in the --output directory)"
		                            : strerror(-ret));
		rearm(s);
		return ret;
	}
	ret = write_meta(s, c.st, fire, wstart, wend);
	if (ret >= 0)
		ret = sptd_store_trigger_add(c.st, fire->ts, fire->cpu,
		                             fire->spec ? fire->spec->text : "manual", fire->detail);
	if (ret >= 0) {
		ret = sptd_sched_trace_capture(s->trace, on_raw, &c);
		if (ret < 0)
			sptd_col_log(LOG_ERR, "reading the ftrace rings: %s", store_reason(c.st, ret));
	}
	if (ret >= 0 && s->sampler) {
		ret = sptd_col_sampler_read(s->sampler, wstart, wend, on_sample, &c);
		if (ret < 0)
			sptd_col_log(LOG_ERR, "reading the sample rings: %s", strerror(-ret));
	}
	if (ret >= 0 && s->pt) {
		int64_t bytes = sptd_col_pt_write(s->pt, c.st);

		if (bytes >= 0) {
			int m = sptd_store_meta_set(c.st, "pt_aux_pause", s->aux_pause ? "kernel" : "user");

			if (m < 0)
				bytes = m;
		}

		if (bytes < 0) {
			ret = (int)bytes;
			sptd_col_log(LOG_ERR, "writing the PT capture: %s", store_reason(c.st, ret));
		}
	}
	/* The raw window is copied: recording resumes before decoding. */
	rearm(s);
	if (ret >= 0)
		ret = snapshot_all_tasks(c.st);
	if (ret >= 0)
		ret = s->pt ? pt_images(s, c.st) : symbolize(c.st, &c);
	if (ret >= 0) {
		ret = sptd_col_derive_all(c.st, s->o->jobs);
		if (ret < 0)
			sptd_col_log(LOG_ERR, "decoding the capture: %s", store_reason(c.st, ret));
	}
	if (ret >= 0) {
		sptd_store_query_int(c.st, "SELECT count(*) FROM sched_slice", &slices);
		ret = sptd_store_commit(c.st);
	}
	nsamples = (int64_t)c.nsamples;
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "incident not written (%s): %s; nothing was left at %s%s",
		             fire->detail, store_reason(c.st, ret), path,
		             ret == -ENOSPC ? "; free space in the --output directory" : "");
	} else {
		s->incidents++;
		snprintf(s->last_path, sizeof(s->last_path), "%s", path);
		sptd_col_log(LOG_INFO, "trigger %s (%s) on cpu %d: %d ftrace pages, %" PRId64
		             " sched slices, %" PRId64 " samples; written in %" PRId64 " ms",
		             fire->spec ? fire->spec->text : "manual", fire->detail, fire->cpu, c.pages,
		             slices, nsamples, (now_ns() - t0) / 1000000);
		printf("%s\n", path);
		fflush(stdout);
		if (s->o->keep > 0)
			sptd_col_retention(s->o->output, s->o->keep);
	}
	sptd_store_destroy(c.st);
	capture_fini(&c);
	s->last_capture = now_ns();
	return ret;
}

/* ---- retention ---------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sptd_col_retention(const char *dir, int keep)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int removed = 0;

	if (!dir || keep < 0)
		return -EINVAL;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, "incident-", 9) != 0 || len < 4 ||
		    strcmp(e->d_name + len - 3, ".db") != 0)
			continue;
		if (n == cap) {
			char **more = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));

			if (!more)
				break;
			names = more;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	/* names carry a UTC stamp and a sequence: name order is age order */
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i + (size_t)keep < n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (unlink(path) == 0)
			removed++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return removed;
}

/* ---- the loop ------------------------------------------------------------------ */

static void reply_status(struct service *s, int fd)
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

static int run_loop(struct service *s)
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
					best.ts = now_ns();
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
					best.ts = now_ns();
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
		/* An automatic trigger acts only once the rings hold a whole
		 * window (right after start or a capture they do not yet) and
		 * the cooldown is over; a manual one always acts, and what is
		 * missing becomes a gap. */
		not_before = s->armed_at + s->o->window_ns;
		if (s->o->cooldown_ns && s->last_capture &&
		    s->last_capture + s->o->cooldown_ns > not_before)
			not_before = s->last_capture + s->o->cooldown_ns;
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
			int ret = capture(s, &best);

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

int sptd_col_cmd_record(int argc, char **argv)
{
	struct sptd_col_record_opts o;
	struct service s;
	sigset_t mask;
	int holder = 0, ret, status = SPTD_EXIT_FAIL;
	struct stat sb;

	ret = sptd_col_record_parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? SPTD_EXIT_OK : SPTD_EXIT_USAGE;
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
