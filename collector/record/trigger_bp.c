/* trigger_bp.c — break=PID:SYMBOL and watch=PID:SYMBOL[+OFF]|PID:0xADDR:
 * hardware breakpoints (x86 debug registers, perf's breakpoint PMU), the
 * triggers of magic-trace (a function executes, no code patched) and of
 * WITCH (a variable is written).
 *
 * The address is the process's own: the symbol is looked up in the ELF
 * files it maps (read through /proc/PID/map_files, the bytes that ran) and
 * moved by the mapping's load bias.  The events are per CPU and
 * system-wide, so a hit of another process at the same address is
 * dropped here (decide).  A watchpoint fires after the writing
 * instruction: the value after is read from /proc/PID/mem when the hit is
 * decided (microseconds to a millisecond later), the value before is the
 * one read at the previous hit (or when armed); equal values are a silent
 * store, counted as WITCH counts them.  The hits are decided in batches
 * (each check drains the rings): a hit with a later hit of the process in
 * the same batch was stored over before it could be read (a busy machine,
 * or the service writing an incident for longer than the stores are
 * apart), and so was one when a hit came into the rings while its word
 * was read; their values are unknown, and so is the value before the next
 * one; such hits say so and are not counted.  (Left: a store whose trap
 * has not written its sample 0.5 ms after the word was read.)
 * Every hit of the process is also logged (the last HIT_LOG), so that an
 * incident lists each one its window holds, not only the one that fired.
 *
 * break=/PATH:SYMBOL (every process mapping a file, per-thread events) is
 * trigger_bp_path.c; its hits go through the same decision, log and rows. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sptd_col_perf.h"
#include "sptd_dec.h"
#include "trigger-bp-local.h"
#include "trigger-kind-local.h"

#define HIT_LOG 1024

/* What a break/watch trigger keeps between hits. */
struct bp_state {
	struct {
		int64_t ts;
		int cpu, tid, silent;
		uint64_t ip, old_value, new_value;
	} log[HIT_LOG];           /* the process's latest hits, a ring by time */
	uint64_t nlog;            /* hits logged so far */
	uint64_t addr;            /* the address armed */
	int mem_fd;               /* watch: /proc/PID/mem, -1 none */
	uint64_t shadow;          /* watch: the value last read */
	int have_shadow;
	uint64_t old_value, new_value; /* watch: of the hit last decided */
	int silent;               /* ... 1 when they are equal, -1 unknown */
	const char *unknown_why;  /* ... why they are unknown */
	int64_t hits, silents;    /* watch: hits of the process with values
	                           * known, silent ones */
	int64_t unknowns;         /* watch: hits with values unknown */
	/* the call chains of the latest hits of the process, by time: what
	 * fill() gives the hit that fired */
	struct {
		int64_t ts;
		int n;
		uint64_t ips[SPTD_FIRE_MAX_CHAIN];
	} chains[8];
	unsigned next_chain;
	uint64_t named_ip;        /* the address @named was looked up for */
	char named[160];          /* "func+0x7" there, "" unknown (name_at) */
	struct bp_path *path;     /* break=PATH:SYMBOL; NULL break=PID:SYMBOL */
};

static int bp_every_hit(const struct sptd_col_trigger_spec *spec)
{
	(void)spec;
	return 0;   /* other processes' hits are dropped after the event */
}

static int bp_init(struct sptd_col_trigger *t)
{
	struct bp_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->mem_fd = -1;
	t->kind_state = s;
	return 0;
}

static void bp_fini(struct sptd_col_trigger *t)
{
	struct bp_state *s = t->kind_state;

	if (s && s->mem_fd >= 0)
		close(s->mem_fd);
	if (s)
		sptd_col_bp_path_free(s->path);
	free(s);
	t->kind_state = NULL;
}


/* Looking a symbol up in a process's files. */
struct bp_lookup {
	int pid;
	const char *symbol;      /* the name */
	int data;                /* 1: a variable (watch), 0: a function */
	uint64_t addr;           /* found: the runtime address */
	char file[512];          /* ... in this file */
};

static int lookup_in(void *ctx, const struct bp_map *m)
{
	struct bp_lookup *l = ctx;
	struct sptd_dec_symfile *sf = NULL;
	char mf[96];
	uint64_t vaddr = 0, size = 0;
	int64_t bias = 0;
	int ret;

	/* the bytes that ran, whatever is at the path now */
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, l->pid, m->start, m->end);
	if (sptd_dec_symfile_load_elf(mf, &sf) < 0)
		return 0;
	if (l->data) {
		ret = sptd_dec_data_symbol(mf, l->symbol, &vaddr, &size);
	} else {
		struct sptd_dec_sym sym;

		ret = sptd_dec_symfile_find(sf, l->symbol, &sym);
		vaddr = sym.addr;
	}
	if (ret == 0)
		ret = sptd_dec_symfile_bias(sf, m->start, m->pgoff, &bias);
	sptd_dec_symfile_destroy(sf);
	if (ret < 0)
		return 0;
	l->addr = vaddr + (uint64_t)bias;
	snprintf(l->file, sizeof(l->file), "%s", m->path);
	return 1;
}

/* The runtime address of @spec's symbol (plus its offset) in its process. */
static int bp_resolve(const struct sptd_col_trigger_spec *spec, uint64_t *addr, char *err,
                      size_t errlen)
{
	struct bp_lookup l = { .pid = spec->pid, .symbol = spec->symbol,
	                       .data = spec->kind == SPTD_TRIG_WATCH };
	int ret;

	if (spec->kind == SPTD_TRIG_WATCH && !spec->symbol[0]) {
		*addr = spec->addr;
		return 0;
	}
	ret = sptd_col_bp_each_exec_map(spec->pid, lookup_in, &l);
	if (ret == -ESRCH) {
		snprintf(err, errlen, "no process %d", spec->pid);
		return -ENOENT;
	}
	if (ret < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/maps: %s", spec->pid, strerror(-ret));
		return ret;
	}
	if (ret == 0) {
		snprintf(err, errlen, "no %s '%s' in the files process %d maps (stripped? see nm)",
		         l.data ? "variable" : "function", spec->symbol, spec->pid);
		return -ENOENT;
	}
	*addr = l.addr + spec->offset;
	return 0;
}

/* The value at the watched address now, through /proc/PID/mem.  0 or -errno. */
static int watch_read(const struct sptd_col_trigger *t, uint64_t *value)
{
	const struct bp_state *s = t->kind_state;
	uint64_t v = 0;
	ssize_t n;

	if (s->mem_fd < 0)
		return -EBADF;
	n = pread(s->mem_fd, &v, (size_t)t->spec.bp_len, (off_t)s->addr);
	if (n != t->spec.bp_len)
		return n < 0 ? -errno : -EIO;
	*value = v;   /* little-endian x86: the low bytes hold the value */
	return 0;
}

/* break=/PATH: new processes and threads, exited threads (trigger_bp_path.c) */
static int bp_tick(struct sptd_col_trigger *t, int64_t not_before, struct sptd_col_fire *fire)
{
	struct bp_state *s = t->kind_state;

	(void)not_before;
	(void)fire;
	if (s->path)
		sptd_col_bp_path_tick(t, s->path);
	return 0;
}

static int bp_arm_pid(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                      size_t errlen);

static int bp_arm(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                  size_t errlen)
{
	if (t->spec.kind == SPTD_TRIG_BREAK && t->spec.pid < 0)
		return sptd_col_bp_path_arm(t, &((struct bp_state *)t->kind_state)->path, err,
		                            errlen);
	return bp_arm_pid(t, cpus, ncpus, err, errlen);
}

/* break=PID:SYMBOL, watch=: per-CPU events at the process's address. */
static int bp_arm_pid(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                      size_t errlen)
{
	struct bp_state *s = t->kind_state;
	const struct sptd_col_trigger_spec *spec = &t->spec;
	int ret = bp_resolve(spec, &s->addr, err, errlen);

	if (ret < 0)
		return ret;
	if (spec->kind == SPTD_TRIG_WATCH) {
		char mem[64];

		if (s->addr % (uint64_t)spec->bp_len) {
			snprintf(err, errlen, "0x%" PRIx64 " is not aligned to len=%d (the debug "
			         "registers watch aligned 1, 2, 4 or 8 bytes)", s->addr, spec->bp_len);
			return -EINVAL;
		}
		snprintf(mem, sizeof(mem), "/proc/%d/mem", spec->pid);
		s->mem_fd = open(mem, O_RDONLY | O_CLOEXEC);
		if (s->mem_fd >= 0 && watch_read(t, &s->shadow) == 0)
			s->have_shadow = 1;
		else if (s->mem_fd >= 0) {
			snprintf(err, errlen, "0x%" PRIx64 " is not mapped in process %d", s->addr,
			         spec->pid);
			return -EINVAL;
		}
	}
	return sptd_col_trigger_events_breakpoint(t, spec->kind == SPTD_TRIG_WATCH ?
	                                          (spec->bp_rw ? SPTD_PERF_BP_RW : SPTD_PERF_BP_W) :
	                                          SPTD_PERF_BP_X, s->addr,
	                                          (uint64_t)spec->bp_len, cpus, ncpus, err, errlen);
}

/* A store is visible before its trap has written the sample (the #DB
 * handler runs right after the store, on the task's CPU; in a VM that can
 * take tens of microseconds, seen once in ~10 sanitizer runs): give such a
 * sample time to land before the rings are looked at again. */
#define WATCH_SETTLE_NS 500000

static void settle(void)
{
	struct timespec d = { 0, WATCH_SETTLE_NS };

	while (nanosleep(&d, &d) < 0 && errno == EINTR)
		;
}

/* Whether a later hit of the same process is in @h's batch: then the word
 * already holds what that store left. */
static int stored_again(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h)
{
	const struct sptd_col_trigger_hit *end = t->hits + t->nhits;

	if (!t->hits || h < t->hits || h >= end)
		return 0;
	for (const struct sptd_col_trigger_hit *n = h + 1; n < end; n++)
		if (n->task_pid == h->task_pid && n->ts > h->ts)
			return 1;
	return 0;
}

static int bp_decide(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                     int64_t *measure)
{
	struct bp_state *s = t->kind_state;
	uint64_t v = 0;

	*measure = 0;
	if (s->path ? !sptd_col_bp_path_has(s->path, h->task_pid) : h->task_pid != t->spec.pid)
		return 0;   /* another process at the same address */
	if (t->spec.kind == SPTD_TRIG_WATCH) {
		s->old_value = s->new_value = 0;
		s->silent = -1;
		if (stored_again(t, h)) {
			s->unknown_why = "stored again before it was read";
			s->have_shadow = 0;
		} else if (watch_read(t, &v) < 0) {
			s->unknown_why = "process gone";
		} else if (settle(), sptd_col_trigger_events_unread(t)) {
			/* a hit came in since the drain: the word read may be
			 * that later store's */
			s->unknown_why = "stored again before it was read";
			s->have_shadow = 0;
		} else if (!s->have_shadow) {
			s->unknown_why = "the value before is not known";
			s->shadow = v;
			s->have_shadow = 1;
		} else {
			s->old_value = s->shadow;
			s->new_value = v;
			s->silent = v == s->shadow;
			s->silents += s->silent;
			s->hits++;
			s->shadow = v;
		}
		if (s->silent < 0)
			s->unknowns++;
	}
	{
		unsigned slot = (unsigned)(s->nlog++ % HIT_LOG);

		s->log[slot].ts = h->ts;
		s->log[slot].cpu = h->cpu;
		s->log[slot].tid = h->task_tid;
		s->log[slot].ip = h->ip;
		s->log[slot].old_value = s->old_value;
		s->log[slot].new_value = s->new_value;
		s->log[slot].silent = s->silent;
	}
	return 1;
}

/* Naming the function an address of a process is in. */
struct bp_where {
	int pid;
	uint64_t ip;
	char name[160];          /* "func+0x7", "" not found */
};

static int where_in(void *ctx, const struct bp_map *m)
{
	struct bp_where *w = ctx;
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	char mf[96];
	int64_t bias = 0;

	if (w->ip < m->start || w->ip >= m->end)
		return 0;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, w->pid, m->start, m->end);
	if (sptd_dec_symfile_load_elf(mf, &sf) < 0)
		return 1;
	if (sptd_dec_symfile_bias(sf, m->start, m->pgoff, &bias) == 0 &&
	    sptd_dec_symfile_lookup(sf, w->ip - (uint64_t)bias, &sym) == 0)
		snprintf(w->name, sizeof(w->name), "%.120s+0x%" PRIx64, sym.name,
		         w->ip - (uint64_t)bias - sym.addr);
	sptd_dec_symfile_destroy(sf);
	return 1;
}

/* "func+0xOFF" at @ip in the process, through its ELF files; the last
 * answer is kept, since describe and fill ask for the same hit in turn. */
static const char *name_at(const struct sptd_col_trigger *t, uint64_t ip)
{
	struct bp_state *s = t->kind_state;
	struct bp_where w = { .pid = t->spec.pid, .ip = ip };

	if (s->named_ip != ip || !ip) {
		sptd_col_bp_each_exec_map(t->spec.pid, where_in, &w);
		snprintf(s->named, sizeof(s->named), "%s", w.name);
		s->named_ip = ip;
	}
	return s->named;
}

/* The function of a hit at @ip: a break's own (break=/PATH names it;
 * a break=PID hit is at the function's start), a watch's writer. */
static const char *hit_function(const struct sptd_col_trigger *t, uint64_t ip)
{
	const struct bp_state *s = t->kind_state;

	if (s->path)
		return t->spec.symbol;
	return name_at(t, t->spec.kind == SPTD_TRIG_BREAK ? s->addr : ip);
}

static void bp_describe(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                        int64_t measure, char *buf, size_t len)
{
	const struct bp_state *s = t->kind_state;
	const struct sptd_col_trigger_spec *spec = &t->spec;

	(void)measure;
	if (spec->kind == SPTD_TRIG_BREAK && s->path) {
		snprintf(buf, len, "break %.120s:%.100s (0x%" PRIx64 " in pid %d) hit by tid %d",
		         spec->path, spec->symbol, h->ip, h->task_pid, h->task_tid);
		return;
	}
	if (spec->kind == SPTD_TRIG_BREAK) {
		snprintf(buf, len, "break %d:%.100s (0x%" PRIx64 ") hit by tid %d", spec->pid,
		         spec->symbol, s->addr, h->task_tid);
		return;
	}
	{
		const char *fn = name_at(t, h->ip);

		if (s->silent < 0)
			snprintf(buf, len, "watch 0x%" PRIx64 " len %d %s by tid %d at 0x%" PRIx64 " %s: "
			         "values unknown (%s)", s->addr, spec->bp_len,
			         spec->bp_rw ? "accessed" : "written", h->task_tid, h->ip,
			         fn[0] ? fn : "[unknown]", s->unknown_why ? s->unknown_why : "?");
		else
			snprintf(buf, len, "watch 0x%" PRIx64 " len %d %s by tid %d at 0x%" PRIx64 " %s: "
			         "%" PRIu64 " -> %" PRIu64 "%s (%" PRId64 " silent of %" PRId64 " hits%s)",
			         s->addr, spec->bp_len, spec->bp_rw ? "accessed" : "written", h->task_tid,
			         h->ip, fn[0] ? fn : "[unknown]", s->old_value, s->new_value,
			         s->silent ? ", silent store" : "", s->silents, s->hits,
			         s->unknowns ? "; more with values unknown" : "");
	}
}

/* Keep the call chain of each hit of the process (a small ring by time). */
static void bp_record(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                      const struct sptd_col_perf_record *r)
{
	struct bp_state *s = t->kind_state;
	unsigned slot;
	uint64_t n;

	if ((s->path ? !sptd_col_bp_path_has(s->path, h->task_pid) : h->task_pid != t->spec.pid) ||
	    !r->sample.callchain)
		return;
	slot = s->next_chain++ % (sizeof(s->chains) / sizeof(s->chains[0]));
	n = r->sample.nr < SPTD_FIRE_MAX_CHAIN ? r->sample.nr : SPTD_FIRE_MAX_CHAIN;
	s->chains[slot].ts = h->ts;
	s->chains[slot].n = (int)n;
	for (uint64_t i = 0; i < n; i++)
		s->chains[slot].ips[i] = sptd_col_perf_u64(r->sample.callchain, (size_t)i);
}

static void bp_fill(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                    struct sptd_col_fire *fire)
{
	const struct bp_state *s = t->kind_state;

	fire->tid = h->task_tid;
	fire->pid = s->path ? h->task_pid : t->spec.pid;
	fire->ip = h->ip;
	fire->nchain = 0;
	for (size_t i = 0; i < sizeof(s->chains) / sizeof(s->chains[0]); i++)
		if (s->chains[i].n && s->chains[i].ts == h->ts) {
			memcpy(fire->chain, s->chains[i].ips, (size_t)s->chains[i].n * sizeof(uint64_t));
			fire->nchain = s->chains[i].n;
		}
	/* a break's function at its own start (h->ip is that address too) */
	snprintf(fire->function, sizeof(fire->function), "%s", hit_function(t, h->ip));
	if (t->spec.kind != SPTD_TRIG_WATCH || s->silent < 0)
		return;
	fire->watch = 1;
	fire->watch_addr = s->addr;
	fire->old_value = s->old_value;
	fire->new_value = s->new_value;
	fire->silent = s->silent;
	fire->watch_hits = s->hits;
	fire->watch_silent = s->silents;
}

static int bp_hits(const struct sptd_col_trigger *t, int64_t from, int64_t to,
                   sptd_col_trigger_hit_fn fn, void *ctx)
{
	const struct bp_state *s = t->kind_state;
	uint64_t first = s->nlog > HIT_LOG ? s->nlog - HIT_LOG : 0;
	int ret = 0;

	for (uint64_t i = first; i < s->nlog && ret >= 0; i++) {
		unsigned slot = (unsigned)(i % HIT_LOG);
		struct sptd_col_logged_hit h = {
			.ts = s->log[slot].ts, .cpu = s->log[slot].cpu, .tid = s->log[slot].tid,
			.ip = s->log[slot].ip, .watch = t->spec.kind == SPTD_TRIG_WATCH,
			.old_value = s->log[slot].old_value, .new_value = s->log[slot].new_value,
			.silent = s->log[slot].silent,
		};

		if (h.ts < from || h.ts > to)
			continue;
		h.function = hit_function(t, h.ip);
		ret = fn(ctx, &h);
	}
	return ret;
}

int64_t sptd_col_bp_unwatched(struct sptd_col_trigger *const *trig, int n)
{
	int64_t sum = -1;

	for (int i = 0; i < n; i++) {
		const struct bp_state *s = trig[i] ? trig[i]->kind_state : NULL;

		if (!s || trig[i]->ops != &sptd_col_trigger_break_ops || !s->path)
			continue;
		sum = (sum < 0 ? 0 : sum) + (int64_t)sptd_col_bp_path_unwatched(s->path);
	}
	return sum;
}

/* break= and watch= differ in what they arm and say, not in their ops. */
#define BP_OPS(KIND) {                 \
	.kind = KIND,                      \
	.every_hit = bp_every_hit,         \
	.init = bp_init,                   \
	.arm = bp_arm,                     \
	.decide = bp_decide,               \
	.describe = bp_describe,           \
	.record = bp_record,               \
	.fill = bp_fill,                   \
	.hits = bp_hits,                   \
	.tick = bp_tick,                   \
	.fini = bp_fini,                   \
}

const struct sptd_col_trigger_ops sptd_col_trigger_break_ops = BP_OPS(SPTD_TRIG_BREAK);
const struct sptd_col_trigger_ops sptd_col_trigger_watch_ops = BP_OPS(SPTD_TRIG_WATCH);
