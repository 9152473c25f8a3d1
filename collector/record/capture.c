/* capture.c — what the service does when a trigger fires: freeze
 * the sources, copy the window, re-arm, then symbolize, decode and write
 * one incident file.  Errors lose this incident only.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ctl-local.h"
#include "freeze-local.h"
#include "pt-local.h"
#include "record-local.h"
#include "sptd_dec.h"
#include "sptd_sched.h"
#include "sptd_store.h"
#include "symcache-local.h"

/* ---- capture ------------------------------------------------------------------ */

/* A handler return this much before the hit perf reported is another hit
 * (IRQs of one device come tens of microseconds apart at the least). */
#define FREEZE_SLACK_NS 20000

/* watch_hit rows of one trigger (write_meta). */
struct hit_rows {
	struct sptd_store *st;
	const char *trigger;
};

static int hit_row(void *ctx, const struct sptd_col_logged_hit *h)
{
	struct hit_rows *hr = ctx;
	struct sptd_store_watch_hit_row r = {
		.ts = h->ts, .cpu = h->cpu < 0 ? 0 : h->cpu, .tid = h->tid, .ip = h->ip,
		.function = h->function, .watch = h->watch, .old_value = h->old_value,
		.new_value = h->new_value, .silent = h->silent, .trigger = hr->trigger,
	};

	return sptd_store_add(hr->st, SPTD_STORE_T_WATCH_HIT, &r);
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* The recorded CPUs as ranges ("0-4,6-15") into @buf when they are not
 * simply 0 to N-1 (-C, or a CPU offline between online ones): 1; 0 when
 * they are (nothing to say), or when the list does not fit (then every
 * CPU counts as recorded: nothing is hidden). */
static int cpu_ranges(const struct sptd_col_service *s, char *buf, size_t len)
{
	int sorted[SPTD_MAX_CPUS], n = s->ncpus, contiguous = 1;
	size_t off = 0;

	if (n <= 0 || n > SPTD_MAX_CPUS)
		return 0;
	memcpy(sorted, s->cpus, (size_t)n * sizeof(int));
	qsort(sorted, (size_t)n, sizeof(int), int_cmp);
	for (int i = 0; i < n; i++)
		contiguous &= sorted[i] == i;
	if (contiguous && !s->o->cpu_list[0])
		return 0;
	buf[0] = '\0';
	for (int i = 0; i < n;) {
		int j = i;

		while (j + 1 < n && sorted[j + 1] <= sorted[j] + 1)
			j++;
		if (j > i)
			off += (size_t)snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "",
			                        sorted[i], sorted[j]);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "," : "",
			                        sorted[i]);
		if (off >= len)
			return 0;
		i = j + 1;
	}
	return 1;
}

/* Samples copied out of the rings before re-arming. */
struct sample_copy {
	int64_t ts;
	int cpu, pid, tid;
	uint64_t nr;
	uint64_t *ips;
	int kind;                   /* SPTD_RAW_SAMPLE_* */
	unsigned char *ustack;      /* --call-graph dwarf: the raw_sample.ustack
	                             * blob (registers + stack copy); NULL none */
	size_t ustack_len;          /* its bytes */
};

struct capture {
	const struct sptd_col_record_opts *o;
	struct sptd_store *st;
	struct sample_copy *samples;
	size_t nsamples, cap;
	int pages;
	struct sptd_col_freeze_scan freeze; /* the handler return that froze ftrace */
	int kind;                   /* SPTD_RAW_SAMPLE_* of the ring being read */
};

static int on_raw(void *arg, enum sptd_sched_raw_kind kind, const char *name, int cpu,
                  int seq, const void *data, size_t len)
{
	struct capture *c = arg;
	int ret = sptd_col_freeze_scan_raw(&c->freeze, kind, name, cpu, data, len);

	if (ret < 0)
		return ret;
	if (kind == SPTD_SCHED_RAW_FORMAT)
		return SPTD_STORE_ADD(c->st, raw_ftrace_format, name, data);
	c->pages++;
	return SPTD_STORE_ADD(c->st, raw_ftrace_page, cpu, seq, data, len);
}

/* The user registers and stack copy of @smp as a raw_sample.ustack blob. */
static int copy_ustack(struct sample_copy *copy, const struct sptd_col_sample *smp)
{
	struct sptd_dec_ustack us = { .stack = smp->stack, .stack_len = smp->stack_len };
	size_t len = sptd_dec_ustack_size(us.stack_len);
	int ret;

	memcpy(us.regs, smp->regs, sizeof(us.regs));
	copy->ustack = malloc(len);
	if (!copy->ustack)
		return -ENOMEM;
	ret = sptd_dec_ustack_encode(&us, copy->ustack, len);
	if (ret < 0)
		return ret;
	copy->ustack_len = len;
	return 0;
}

static int on_sample(void *arg, const struct sptd_col_sample *smp)
{
	struct capture *c = arg;
	struct sample_copy *copy;
	int wanted = !c->o || c->o->npids == 0;

	/* -p: only those processes' samples are kept */
	for (int i = 0; !wanted && i < c->o->npids; i++)
		wanted = smp->pid == c->o->pids[i];
	if (!wanted)
		return 0;

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
	copy->kind = c->kind;
	copy->ustack = NULL;
	copy->ustack_len = 0;
	c->nsamples++;
	if (smp->nregs == SPTD_DEC_USTACK_NREGS)
		return copy_ustack(copy, smp);
	return 0;
}

static void capture_fini(struct capture *c)
{
	for (size_t i = 0; i < c->nsamples; i++) {
		free(c->samples[i].ips);
		free(c->samples[i].ustack);
	}
	free(c->samples);
}

static int write_meta(struct sptd_col_service *s, struct sptd_store *st, const struct sptd_col_fire *fire,
                      int64_t wstart, int64_t wend)
{
	struct utsname u;
	char host[256] = "", created[64], model[256] = "", line[512], spec[2048] = "";
	char cpus_text[4096];
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
			{ "ftrace_clock", s->ftrace_clock }, { "trigger_spec", spec }, { "command", s->o->command },
			{ "trigger_kind", fire->spec ? fire->spec->text : "manual" },
		};
		const struct { const char *key; int64_t value; } ints[] = {
			{ "cpus", s->online_cpus }, { "window_ns", s->o->window_ns }, { "post_ns", s->o->post_ns },
			{ "window_start", wstart }, { "window_end", wend }, { "trigger_ts", fire->ts },
			{ "sample_freq", s->o->freq },
			{ "call_graph_stack_user", s->o->stack_user },
		};

		for (size_t i = 0; i < sizeof(text) / sizeof(text[0]) && ret >= 0; i++)
			ret = sptd_store_meta_set(st, text[i].key, text[i].value);
		for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]) && ret >= 0; i++)
			ret = sptd_store_meta_set_int(st, ints[i].key, ints[i].value);
	}
	/* --offcpu: the kernel's scheduling text (__sched functions), where
	 * every blocking stack passes and which wchan skips: derive does too */
	if (ret >= 0 && s->offcpu && s->symcache) {
		const struct sptd_dec_symfile *k = sptd_col_symcache_kernel(s->symcache);
		struct sptd_dec_sym a, b;

		if (k && sptd_dec_symfile_find(k, "__sched_text_start", &a) == 0 &&
		    sptd_dec_symfile_find(k, "__sched_text_end", &b) == 0 && b.addr > a.addr) {
			ret = sptd_store_meta_set_int(st, "kernel_sched_text_start", (int64_t)a.addr);
			if (ret >= 0)
				ret = sptd_store_meta_set_int(st, "kernel_sched_text_end", (int64_t)b.addr);
		}
	}
	/* break, watch: who hit, where, and what the store changed */
	if (ret >= 0 && fire->tid >= 0) {
		const struct { const char *key; int64_t value; int on; } hit[] = {
			{ "trigger_tid", fire->tid, 1 }, { "trigger_ip", (int64_t)fire->ip, 1 },
			{ "watch_addr", (int64_t)fire->watch_addr, fire->watch },
			{ "watch_old", (int64_t)fire->old_value, fire->watch },
			{ "watch_new", (int64_t)fire->new_value, fire->watch },
			{ "watch_silent", fire->silent, fire->watch },
			{ "watch_hits", fire->watch_hits, fire->watch },
			{ "watch_silent_hits", fire->watch_silent, fire->watch },
		};

		for (size_t i = 0; i < sizeof(hit) / sizeof(hit[0]) && ret >= 0; i++)
			if (hit[i].on)
				ret = sptd_store_meta_set_int(st, hit[i].key, hit[i].value);
		if (ret >= 0 && fire->function[0])
			ret = sptd_store_meta_set(st, "trigger_function", fire->function);
	}
	/* every break=/watch= hit the window holds, not only the one that fired */
	for (int i = 0; i < s->ntrig && ret >= 0; i++) {
		struct hit_rows hr = { .st = st, .trigger = sptd_col_trigger_text(s->trig[i]) };

		ret = sptd_col_trigger_hits(s->trig[i], wstart, wend, hit_row, &hr);
	}
	/* -C (or CPUs offline between online ones) and -p: what the incident
	 * was limited to (derive reads them: no gaps where nothing was
	 * recorded) */
	if (ret >= 0 && cpu_ranges(s, cpus_text, sizeof(cpus_text)) == 1)
		ret = sptd_store_meta_set(st, "cpu_list", cpus_text);
	if (ret >= 0 && s->o->npids) {
		off = 0;
		line[0] = '\0';
		for (int i = 0; i < s->o->npids && off < sizeof(line); i++)
			off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%d", i ? "," : "",
			                        s->o->pids[i]);
		ret = sptd_store_meta_set(st, "pid_filter", line);
	}
	if (ret >= 0)
		ret = sptd_col_plan_meta_write(&s->plan, st);
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
			ret = SPTD_STORE_ADD(st, raw_task, pid, tid, comm, NULL);
		}
		closedir(task);
	}
	closedir(proc);
	return ret;
}

/* How many samples carried a user stack copy, and how many of those DWARF
 * unwound deeper than the frame-pointer walk: meta (docs/SCHEMA.md). */
static int unwind_meta(const struct sptd_col_unwinders *uw, struct sptd_store *st)
{
	struct sptd_col_unwind_stats us;
	int ret;

	sptd_col_unwinders_stats(uw, &us);
	if (!us.samples)
		return 0;
	ret = sptd_store_meta_set_int(st, "dwarf_samples", (int64_t)us.samples);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "dwarf_unwound", (int64_t)us.unwound);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "dwarf_deeper", (int64_t)us.deeper);
	/* the derive that follows takes callchain as it is (decode clears it) */
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "dwarf_unwind_done", 1);
	return ret;
}

/* The unwinder's mappings at capture: the live processes' (the time
 * needs no choosing: their files are the ones mapped now). */
static int live_map(void *ctx, int pid, int64_t ts, uint64_t addr, struct sptd_dec_unwind_map *map)
{
	(void)ts;
	return sptd_col_symcap_unwind_map(ctx, pid, addr, map);
}

static int symbolize(struct sptd_col_service *s, struct sptd_store *st, struct capture *c)
{
	struct sptd_col_symcap *sc = NULL;
	struct sptd_col_unwinders *uw = NULL;
	int *pids = NULL, *gone = NULL;
	size_t npids = 0, ngone = 0;
	int ret;

	ret = sptd_col_symcap_create(st, s->symcache, &sc);
	if (ret < 0)
		return ret;
	pids = calloc(c->nsamples + 1, sizeof(*pids));
	gone = calloc(c->nsamples + 1, sizeof(*gone));
	if (!pids || !gone) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->nsamples; i++) {
		int pid = c->samples[i].pid;
		int64_t maps = 0;
		size_t j;

		for (j = 0; j < npids && pids[j] != pid; j++)
			;
		if (j < npids || pid <= 0)
			continue;
		pids[npids++] = pid;
		/* a process that exited since is not an error: the sideband
		 * remembers its mappings */
		if (sptd_col_symcap_task(sc, pid) < 0 ||
		    (sptd_store_raw_mmap_count(st, pid, &maps) >= 0 && maps == 0))
			gone[ngone++] = pid;
	}
	if (ngone) {
		ret = sptd_col_sample_exited_maps(sc, st, gone, (int)ngone);
		if (ret > 0)
			sptd_col_log(LOG_INFO, "%d mapping(s) of %zu exited process(es) rebuilt from "
			             "the sampling sideband", ret, ngone);
		if (ret < 0)
			goto out;
		ret = 0;
	}
	ret = sptd_col_unwinders_create(live_map, sc, &uw);
	for (size_t i = 0; i < c->nsamples && ret >= 0; i++) {
		struct sample_copy *smp = &c->samples[i];
		const uint64_t *chain;
		uint64_t nr;

		/* DWARF user frames while the process's files are there */
		ret = sptd_col_unwind_sample(uw, smp->pid, smp->ts, smp->ips, smp->nr, smp->ustack,
		                             smp->ustack_len, &chain, &nr);
		for (uint64_t k = 0; ret >= 0 && k < nr; k++) {
			if (chain[k] >= (uint64_t)-4095) /* PERF_CONTEXT_* markers */
				continue;
			ret = sptd_col_symcap_addr(sc, smp->pid, chain[k], smp->ts);
			if (ret == -ENOENT || ret == -ESRCH)
				ret = 0;
		}
		if (ret >= 0)
			ret = SPTD_STORE_ADD(st, raw_sample, smp->ts, smp->cpu, smp->pid, smp->tid,
			                     chain, (size_t)nr, smp->kind, smp->ustack,
			                     smp->ustack_len);
	}
	if (ret >= 0 && uw)
		ret = unwind_meta(uw, st);
	if (ret >= 0)
		ret = sptd_col_symcap_finish(sc);
out:
	free(pids);
	free(gone);
	sptd_col_unwinders_destroy(uw);
	sptd_col_symcap_destroy(sc);
	return ret;
}

/* PT: whether the kernel paused PT at the hit that fired this incident
 * (AUX pause) or the service froze it from user space, and why not: the
 * meta keys pt_aux_pause and pt_aux_pause_why. */
static int aux_pause_meta(struct sptd_col_service *s, struct sptd_store *st,
                          const struct sptd_col_fire *fire)
{
	const struct sptd_col_trigger *t = NULL;
	char why[512] = "";
	int refused = 0, ret;

	for (int i = 0; i < s->ntrig && fire->spec; i++)
		if (fire->spec->text == sptd_col_trigger_text(s->trig[i]))
			t = s->trig[i];
	if (!s->aux_pause)
		snprintf(why, sizeof(why), "%s", s->aux_pause_why[0] ? s->aux_pause_why :
		         "AUX pause not set up");
	else if (!t)
		snprintf(why, sizeof(why), "fired by %.200s, not by a trigger that is a perf event",
		         fire->spec ? fire->spec->text : "manual");
	else if (sptd_col_trigger_aux_pause(t, &refused))
		why[0] = '\0';
	else if (!refused)
		snprintf(why, sizeof(why), "--trigger %.200s is decided after the event (or is no perf "
		         "event): it cannot pause PT in the kernel", fire->spec->text);
	else if (sptd_col_trigger_aux_why(t) == SPTD_TRIG_AUX_NO_KERNEL)
		snprintf(why, sizeof(why), "the kernel has no AUX pause (aux_action needs Linux "
		         "6.13+): it refused the trigger with %s", strerror(refused));
	else
		snprintf(why, sizeof(why), "the kernel refused --trigger %.200s in the PT event's group "
		         "(%s)", fire->spec->text, strerror(refused));
	ret = sptd_store_meta_set(st, "pt_aux_pause", why[0] ? "user" : "kernel");
	if (ret >= 0 && why[0])
		ret = sptd_store_meta_set(st, "pt_aux_pause_why", why);
	return ret;
}

/* PT: the tasks the sideband names: their file mappings (symcap: dso +
 * raw_mmap rows; from the sideband's MMAP2 records for processes already
 * gone), anonymous/vDSO code (raw_image), the kernel text, and the mapped
 * files themselves (image cache, embedded with --portable). */
static int pt_images(struct sptd_col_service *s, struct sptd_store *st)
{
	struct sptd_col_symcap *sc = NULL;
	int pids[4096], gone[4096], npids, ngone = 0, ret;

	npids = sptd_col_pt_pids(s->pt, pids, 4096);
	if (npids > 4096)
		npids = 4096;
	ret = sptd_col_symcap_create(st, s->symcache, &sc);
	for (int i = 0; i < npids && ret >= 0; i++) {
		int r = sptd_col_symcap_task(sc, pids[i]);
		int64_t maps = 0;

		if (r == -ENOMEM || r == -ENOSPC || r == -EIO) {
			ret = r;
			break;
		}
		/* exited (or a zombie without maps): the sideband remembers */
		if (r < 0 || (sptd_store_raw_mmap_count(st, pids[i], &maps) >= 0 && maps == 0))
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
		/* kcore or kallsyms unreadable costs the kernel code, not the
		 * incident: only the store's own errors are fatal */
		char why[768];
		int k = sptd_col_pt_images_kernel(st, NULL, s->pt, why, sizeof(why));

		if (k >= 0 && why[0])
			sptd_col_log(LOG_WARNING, "%s", why);
		if (k >= 0)
			k = sptd_col_pt_images_pokes(st, s->pt);
		ret = k < 0 ? k : 0;
	}
	if (ret >= 0)
		ret = sptd_col_pt_images_files(st, s->o->image_cache, s->o->portable);
	return ret < 0 ? ret : 0;
}

/* When ftrace recorded what this incident holds (meta ftrace_*). */
struct ftrace_span {
	int64_t started;              /* ns: (re)started with empty rings */
	const char *started_why;      /* why it started then */
	const char *stopped_by;       /* "service", "trigger" or "kernel" */
	int64_t stopped;              /* ns: when the service stopped it */
	int64_t recreated;            /* ns: @started made the instance again
	                               * (another program removed it); 0 not */
	const char *missing;          /* NULL; else why there is no instance */
};

/* Stop ftrace (if the kernel has not) and note who stopped it: the service,
 * after the window end; the kernel, at the trigger's own event (the window
 * end: the one-shot traceoff acts on the first hit after it was installed,
 * which is the hit that fired when that came after the installation); or
 * the kernel at another hit, right after the record's last event
 * (derive_sched.c reads it there). */
static void ftrace_stop(struct sptd_col_service *s, const struct sptd_col_fire *fire,
                        struct ftrace_span *rec)
{
	char system[64], event[128], filter[512];
	int was_on = sptd_sched_trace_is_on(s->trace);

	sptd_sched_trace_stop(s->trace);
	rec->started = s->ftrace_started;
	rec->started_why = s->ftrace_why;
	rec->stopped = sptd_col_now_ns();
	rec->stopped_by = "service";
	rec->recreated = s->ftrace_recreated && s->ftrace_recreated == s->ftrace_started ?
	                 s->ftrace_recreated : 0;
	rec->missing = s->ftrace_down[0] ? s->ftrace_down : NULL;
	if (was_on != 0)
		return;
	rec->stopped_by = "kernel";
	/* a hit perf did not report froze it: when is not known yet (the
	 * freeze scan may find it) */
	if (s->kfreeze_on && fire->spec && !fire->unreported && fire->ts >= s->kfreeze_since &&
	    sptd_col_trigger_freeze_point(fire->spec, system, sizeof(system), event, sizeof(event),
	                                  filter, sizeof(filter)) == 1)
		rec->stopped_by = "trigger";
}

static int write_span(struct sptd_store *st, const struct ftrace_span *rec)
{
	int ret = sptd_store_meta_set_int(st, "ftrace_started", rec->started);

	if (ret >= 0)
		ret = sptd_store_meta_set(st, "ftrace_started_why", rec->started_why);
	if (ret >= 0)
		ret = sptd_store_meta_set(st, "ftrace_stopped_by", rec->stopped_by);
	if (ret >= 0 && strcmp(rec->stopped_by, "service") == 0)
		ret = sptd_store_meta_set_int(st, "ftrace_stopped", rec->stopped);
	if (ret >= 0 && rec->recreated)
		ret = sptd_store_meta_set_int(st, "ftrace_recreated", rec->recreated);
	if (ret >= 0 && rec->missing)
		ret = sptd_store_meta_set(st, "ftrace_missing", rec->missing);
	return ret;
}

static const char *store_reason(struct sptd_store *st, int ret)
{
	if (ret == -ENOSPC)
		return "disk full";
	return st && sptd_store_errmsg(st)[0] ? sptd_store_errmsg(st) : strerror(-ret);
}

/* Freeze, copy, re-arm, decode, write.  Errors here lose this incident only:
 * the service re-arms and goes on. */
int sptd_col_record_capture(struct sptd_col_service *s, const struct sptd_col_fire *hit)
{
	struct capture c = { .o = s->o };
	struct ftrace_span rec;
	struct sptd_col_fire fired = *hit, *fire = &fired;
	int64_t wstart = fire->ts - s->o->window_ns, wend = fire->ts + s->o->post_ns;
	int64_t t0 = sptd_col_now_ns(), slices = 0, nsamples;
	char path[4096];
	int ret, frozen_at = 0;

	if (s->o->post_ns > 0) {
		struct timespec until = { wend / 1000000000, wend % 1000000000 };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
			;
	}
	/* PT first: it is the fastest-filling ring */
	if (s->pt && sptd_col_pt_freeze(s->pt) < 0)
		sptd_col_log(LOG_WARNING, "freezing PT failed: this incident may lack PT");
	ftrace_stop(s, fire, &rec);
	if (s->sampler)
		sptd_col_sampler_pause(s->sampler, 1);
	if (s->offcpu)
		sptd_col_sampler_pause(s->offcpu, 1);

	/* a name of the directory's own sequence: unique for its life */
	ret = sptd_col_outdir_next(&s->outdir, path, sizeof(path));
	if (ret >= 0)
		ret = sptd_store_create(path, &c.st);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "cannot create %s: %s", path,
		             ret == -ENOSPC ? "disk full (free space in the --output directory)"
		                            : strerror(-ret));
		sptd_col_record_rearm(s);
		return ret;
	}
	/* frozen by the kernel: find the hit that did it (sampling source
	 * only: its rings' clock is the service's) */
	if (strcmp(rec.stopped_by, "service") != 0 && !s->pt)
		ret = sptd_col_freeze_scan_init(&c.freeze, fire->spec);
	else
		ret = sptd_col_freeze_scan_init(&c.freeze, NULL);
	/* and perf's hit in ftrace's record (same clock): the trigger is
	 * that event, as the incident's rows have it */
	if (ret >= 0 && !s->pt)
		ret = sptd_col_freeze_scan_match(&c.freeze, fire, FREEZE_SLACK_NS);
	/* no instance (removed, not made again yet: meta ftrace_missing) */
	if (ret >= 0 && s->trace) {
		ret = sptd_sched_trace_capture(s->trace, on_raw, &c);
		if (ret < 0)
			sptd_col_log(LOG_ERR, "reading the ftrace rings: %s", store_reason(c.st, ret));
	}
	/* perf did not sample the hit that froze the rings: that hit is the
	 * trigger (the one it fired on came after the record's end) */
	if (ret >= 0)
		frozen_at = sptd_col_freeze_scan_apply(&c.freeze, FREEZE_SLACK_NS, fire);
	if (frozen_at == 1 && hit->unreported)
		sptd_col_log(LOG_INFO, "ftrace froze at an IRQ perf did not report (the service "
		             "noticed %.3f ms later): the trigger is that IRQ",
		             (double)(hit->ts - fire->ts) / 1e6);
	else if (frozen_at == 1)
		sptd_col_log(LOG_INFO, "ftrace froze at an IRQ %.3f ms before the hit perf "
		             "reported: the trigger is that IRQ", (double)(hit->ts - fire->ts) / 1e6);
	else if (frozen_at == 2)
		sptd_col_log(LOG_INFO, "ftrace froze at a hit perf did not report: the trigger is "
		             "its last event, %.3f ms before the service noticed",
		             (double)(hit->ts - fire->ts) / 1e6);
	if (frozen_at == 0 && sptd_col_freeze_scan_matched(&c.freeze, fire) == 1) {
		wstart = fire->ts - s->o->window_ns;
		wend = fire->ts + s->o->post_ns;
	}
	if (frozen_at > 0) {
		fire->unreported = 0;
		rec.stopped_by = "trigger";
		wstart = fire->ts - s->o->window_ns;
		wend = fire->ts + s->o->post_ns;
	}
	if (ret >= 0)
		ret = write_meta(s, c.st, fire, wstart, wend);
	if (ret >= 0)
		ret = write_span(c.st, &rec);
	/* break=/PATH: threads it could not watch (trigger_bp.c) */
	if (ret >= 0 && sptd_col_bp_unwatched(s->trig, s->ntrig) >= 0)
		ret = sptd_store_meta_set_int(c.st, "break_unwatched",
		                              sptd_col_bp_unwatched(s->trig, s->ntrig));
	if (ret >= 0 && s->offcpu) {
		c.kind = SPTD_RAW_SAMPLE_OFFCPU;
		ret = sptd_col_sampler_read(s->offcpu, wstart, wend, on_sample, &c);
		c.kind = SPTD_RAW_SAMPLE_CLOCK;
		if (ret < 0)
			sptd_col_log(LOG_ERR, "reading the off-CPU rings: %s", strerror(-ret));
	}
	if (ret >= 0 && s->sampler) {
		ret = sptd_col_sampler_read(s->sampler, wstart, wend, on_sample, &c);
		if (ret < 0)
			sptd_col_log(LOG_ERR, "reading the sample rings: %s", strerror(-ret));
	}
	/* mappings, comms and forks: what names processes gone by now */
	if (ret >= 0 && s->sampler) {
		ret = sptd_col_sample_sideband_store(s->sampler, c.st);
		if (ret < 0)
			sptd_col_log(LOG_ERR, "reading the sampling sideband rings: %s",
			             store_reason(c.st, ret));
	}
	/* break=/watch=: the hit's own call chain, symbolized with the samples */
	if (ret >= 0 && s->sampler && fire->nchain > 0) {
		struct sptd_col_sample hs = {
			.ts = fire->ts, .cpu = fire->cpu >= 0 ? fire->cpu : 0, .pid = fire->pid,
			.tid = fire->tid, .nr = (uint64_t)fire->nchain, .ips = fire->chain,
		};
		const struct sptd_col_record_opts *o = c.o;

		c.o = NULL;   /* -p does not drop the trigger's own stack */
		c.kind = SPTD_RAW_SAMPLE_TRIGGER;
		ret = on_sample(&c, &hs);
		c.kind = SPTD_RAW_SAMPLE_CLOCK;
		c.o = o;
	}
	if (ret >= 0 && s->pt) {
		int64_t bytes = sptd_col_pt_write(s->pt, c.st);

		if (bytes >= 0) {
			int m = aux_pause_meta(s, c.st, fire);

			if (m < 0)
				bytes = m;
		}

		if (bytes < 0) {
			ret = (int)bytes;
			sptd_col_log(LOG_ERR, "writing the PT capture: %s", store_reason(c.st, ret));
		}
	}
	/* The raw window is copied: recording resumes before decoding. */
	sptd_col_record_rearm(s);
	if (ret >= 0)
		ret = snapshot_all_tasks(c.st);
	if (ret >= 0)
		ret = s->pt ? pt_images(s, c.st) : symbolize(s, c.st, &c);
	if (ret >= 0) {
		/* the kernel code PT entered is named from kallsyms as read now
		 * (only the functions it entered are stored) */
		sptd_col_derive_set_kernel_syms(s->pt && !s->o->user_only
		                                ? sptd_col_symcache_kernel(s->symcache) : NULL);
		ret = sptd_col_derive_all(c.st, s->o->jobs);
		sptd_col_derive_set_kernel_syms(NULL);
		if (ret < 0)
			sptd_col_log(LOG_ERR, "decoding the capture: %s", store_reason(c.st, ret));
	}
	/* the trigger row claims what the incident holds: a latency
	 * trigger's wait is its thread_state row */
	if (ret >= 0)
		ret = sptd_col_freeze_scan_wait(c.st, fire, FREEZE_SLACK_NS);
	if (ret >= 0)
		ret = SPTD_STORE_ADD(c.st, trigger, fire->ts, fire->cpu,
		                     fire->spec ? fire->spec->text : "manual", fire->detail);
	if (ret >= 0) {
		sptd_store_count(c.st, SPTD_STORE_T_SCHED_SLICE, &slices);
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
		             slices, nsamples, (sptd_col_now_ns() - t0) / 1000000);
		printf("%s\n", path);
		fflush(stdout);
		/* in the manifest; then --keep and --max-disk, on its entries only */
		sptd_col_retention_added(&s->outdir, path);
	}
	sptd_store_destroy(c.st);
	sptd_col_freeze_scan_fini(&c.freeze);
	capture_fini(&c);
	/* after the incident line: what the cache does next is off its path */
	sptd_col_symcache_end(s->symcache);
	s->last_capture = sptd_col_now_ns();
	/* the one-shot traceoff triggers are spent (or, when something else
	 * fired first, must not act in the cooldown): off until hits may
	 * fire again */
	sptd_col_record_kfreeze_disarm(s);
	return ret;
}

