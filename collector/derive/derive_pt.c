/* derive_pt.c — raw_pt (+ images, mappings, tasks, switches) -> slice,
 * symbol, gap and stats rows, through decode/'s session and sink.
 *
 * Owns the PT part of the derived tables: every slice row, the stats rows
 * named below and the gap rows whose reason starts with "pt: "; rows of
 * other producers are left alone.  Symbols already in the incident (written
 * at capture time) are reused by (dso, addr, name); new ones are added.
 *
 * The rows go to the store's bulk writer (store_writer.c), whose thread
 * inserts them while this one decodes on. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "derive-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

/* Tasks a trace does not name (no sched info) get one pseudo thread per CPU,
 * above any real tid (pid_max is at most 2^22). */
#define PSEUDO_TID_BASE 4194304

/* A symbol row of the incident, for reusing it (sym_find). */
struct pt_sym {
	int64_t id;                        /* symbol.id; 0: empty slot */
	int64_t dso_id;                    /* its dso */
	uint64_t addr;                     /* its start */
	char *name;                        /* its name (owned) */
};

/* What the sink writes with: the decode runs on this thread, the rows go
 * to the store's bulk writer thread. */
struct pt_ctx {
	struct sptd_store_writer *w;       /* the store's bulk writer */
	struct sptd_col_tasks *tasks;      /* thread ids -> utid */
	int64_t next_symbol_id;            /* for symbols not yet stored */
	int64_t *sym_map;                  /* session symbol id -> store symbol id */
	size_t nsym_map;                   /* entries of sym_map */
	struct pt_sym *syms;               /* the incident's symbols by (dso, addr,
	                                    * name): open addressing */
	size_t symcap, symcount;           /* slots (a power of two) and used */
	int64_t *pseudo_utid;              /* per CPU, 0 unassigned */
	int npseudo;                       /* entries of pseudo_utid */
	int64_t slices;                    /* slices written */
	struct sptd_store_slice_row *rows; /* slices not yet queued */
	size_t nrows;                      /* entries of rows used */
	struct sptd_dec_power *power;      /* power events, stored after the writer */
	size_t npower, cappower;           /* used / allocated entries of power */
	int64_t window_start;              /* meta window_start: slices that end
	                                    * before it are dropped, those that
	                                    * cross it start there (INT64_MIN: none) */
	int64_t before_window;             /* slices dropped so */
};

/* Slices handed to the store at once: its bulk path is cheapest per row
 * when it gets many. */
#define PT_ROWS 4096

static int64_t meta_int(struct sptd_store *st, const char *key, int64_t dflt)
{
	int64_t v;

	return sptd_store_meta_get_int(st, key, &v) == 0 ? v : dflt;
}

/* SPTD_PT_SEGMENT_BYTES: how far apart the PSBs are at which each CPU's PT
 * is cut for parallel decoding (0 or unset: automatic).  The output does
 * not depend on it; tests set it small to put many seams in a small trace. */
/* SPTD_DECODER (set by --decoder too): which flow decoder phase 1 uses. */
static int flow_decoder(void)
{
	const char *v = getenv("SPTD_DECODER");

	if (!v || !*v || !strcmp(v, "libipt"))
		return SPTD_DEC_DECODER_LIBIPT;
	if (!strcmp(v, "sptd"))
		return SPTD_DEC_DECODER_SPTD;
	sptd_col_log(LOG_WARNING, "SPTD_DECODER=%s is not libipt or sptd: libipt used", v);
	return SPTD_DEC_DECODER_LIBIPT;
}

static size_t segment_bytes(void)
{
	const char *v = getenv("SPTD_PT_SEGMENT_BYTES");
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || *end || n > (1ull << 40)) {
		sptd_col_log(LOG_WARNING, "SPTD_PT_SEGMENT_BYTES=%s is not a byte count: ignored", v);
		return 0;
	}
	return (size_t)n;
}

/* meta @key when it lies in [@min, @max]; else (a damaged or forged file)
 * 0, "unknown", with the key named in @bad for a gap row. */
static int64_t meta_ranged(struct sptd_store *st, const char *key, int64_t min, int64_t max,
                           char *bad, size_t badlen)
{
	int64_t v = meta_int(st, key, 0);

	if (v >= min && v <= max)
		return v;
	sptd_col_log(LOG_WARNING, "pt decode: meta %s = %" PRId64 " is out of range (%" PRId64
	             "..%" PRId64 "): decoding as if unknown", key, v, min, max);
	if (!bad[0])
		snprintf(bad, badlen, "%s", key);
	return 0;
}

static sptd_dec_progress_fn derive_progress;
static void *derive_progress_ctx;

void sptd_col_derive_set_progress(void (*fn)(void *ctx, const char *phase, uint64_t done,
                                             uint64_t total), void *ctx)
{
	derive_progress = fn;
	derive_progress_ctx = ctx;
}

/* The decode configuration from meta pt_* keys (and the tsc_* conversion
 * the recorder stores for the TSC clock).  Values outside what the decoder
 * accepts are taken as unknown and the first such key is named in @bad. */
static void load_config(struct sptd_store *st, struct sptd_dec_config *cfg, int jobs,
                        char *bad, size_t badlen)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpu_family = (int)meta_ranged(st, "pt_cpu_family", 0, 255, bad, badlen);
	cfg->cpu_model = (int)meta_ranged(st, "pt_cpu_model", 0, 255, bad, badlen);
	cfg->cpu_stepping = (int)meta_ranged(st, "pt_cpu_stepping", 0, 255, bad, badlen);
	cfg->mtc_freq = (int)meta_ranged(st, "pt_mtc_freq", 0, 15, bad, badlen);
	cfg->nom_freq = (int)meta_ranged(st, "pt_nom_freq", 0, 255, bad, badlen);
	cfg->cpuid15_eax = (uint32_t)meta_int(st, "pt_cpuid15_eax", 0);
	cfg->cpuid15_ebx = (uint32_t)meta_int(st, "pt_cpuid15_ebx", 0);
	cfg->tsc_hz = (uint64_t)meta_int(st, "pt_tsc_hz", 0);
	cfg->no_timing = meta_int(st, "pt_no_timing", 0) != 0;
	if (!cfg->tsc_hz && meta_int(st, "tsc_mult", 0) > 0) {
		cfg->tsc_mult = (uint32_t)meta_int(st, "tsc_mult", 0);
		cfg->tsc_shift = (int)meta_ranged(st, "tsc_shift", 0, 63, bad, badlen);
		cfg->tsc_zero = (uint64_t)meta_int(st, "tsc_zero", 0);
		cfg->tsc_offset_ns = meta_int(st, "tsc_offset_ns", 0);
	}
	cfg->jobs = jobs;
	cfg->decoder = flow_decoder();
	cfg->segment_bytes = segment_bytes();
	cfg->progress = derive_progress;
	cfg->progress_ctx = derive_progress_ctx;
}

/* raw_image rows: code bytes placed at their address. */
static int on_image(void *arg, const struct sptd_store_raw_image_row *row)
{
	struct sptd_dec_session *s = arg;
	const char *name = row->path && strrchr(row->path, '/') ? strrchr(row->path, '/') + 1
	                                                        : row->path;

	if (!row->data || !row->len)
		return 0;
	return sptd_dec_session_add_bytes(s, -1, name ? name : "image", row->data, row->len,
	                                  row->addr, row->dso_id);
}

/* What load_images hands the mapped-file reader. */
struct files_ctx {
	struct sptd_dec_session *s;          /* where images go */
	struct sptd_col_pt_imgfind *find;    /* where their bytes are now */
};

/* A mapped file without raw_image bytes: read from where @find says its
 * recorded bytes are now; what cannot be loaded shows as gaps. */
static int on_mapped_file(void *arg, const struct sptd_store_mapped_file_row *row)
{
	struct files_ctx *fc = arg;
	const char *path = row->path, *build_id = row->build_id;
	const char *where = NULL;
	int pid = row->pid;
	int err;

	if (!path || path[0] != '/')
		return 0;   /* [vdso], [kernel.kallsyms]: no file to read */
	err = sptd_col_pt_imgfind_lookup(fc->find, row->dso_id, path, build_id, &where);
	if (err < 0) {
		if (err == -ESTALE)
			sptd_col_log(LOG_WARNING, "pt decode: %s changed since recording "
			             "(build-id %s differs) and no copy of it is cached: its "
			             "code will show as gaps", path, build_id ? build_id : "?");
		else
			sptd_col_log(LOG_WARNING, "pt decode: no bytes for %s (%s): its "
			             "code will show as gaps", path, strerror(-err));
		return 0;
	}
	err = sptd_dec_session_add_elf(fc->s, pid < 0 ? -1 : pid, where, row->bias, row->dso_id);
	/* not ELF: a flat per-process image (import FILE@ADDR:PID),
	 * file offset + bias = address */
	if (err == -EBADMSG)
		err = sptd_dec_session_add_flat(fc->s, pid < 0 ? -1 : pid, where,
		                                (uint64_t)row->bias, row->dso_id);
	if (err < 0)
		sptd_col_log(LOG_WARNING, "pt decode: cannot load %s (%s, from %s): its "
		             "code will show as gaps", path, strerror(-err), where);
	return 0;
}

/* The code of the incident: raw_image bytes, then every mapped file, read
 * from where @find says its recorded bytes are now (embedded copy, image
 * cache by build-id, or the original path if unchanged). */
static int load_images(struct sptd_store *st, struct sptd_dec_session *s,
                       struct sptd_col_pt_imgfind *find, struct sptd_dec_symfile **ksyms)
{
	struct files_ctx fc = { .s = s, .find = find };
	char kernel[512];
	int ret = SPTD_STORE_EACH(st, raw_image_path, on_image, s);

	/* kernel text the recorder could not copy: gaps in kernel code say so */
	if (ret >= 0 && sptd_store_meta_get(st, "pt_kernel_image", kernel, sizeof(kernel)) >= 0 &&
	    strncmp(kernel, "none: ", 6) == 0)
		ret = sptd_dec_session_set_kernel_note(s, kernel + 6);
	if (ret >= 0)
		ret = sptd_col_derive_kernel_names(st, s, ksyms);
	if (ret >= 0)
		ret = sptd_col_derive_text_pokes(st, s);
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, mapped_file, on_mapped_file, &fc);
	return ret < 0 ? ret : 0;
}

static int on_task(void *arg, const struct sptd_store_raw_task_row *row)
{
	if (row->pid >= 0 && row->tid >= 0)
		return sptd_dec_session_add_task(arg, row->tid, row->pid);
	return 0;
}

static int on_switch(void *arg, const struct sptd_store_raw_switch_row *row)
{
	int err = sptd_dec_session_add_switch(arg, row->ts, row->cpu, row->prev_tid,
	                                      row->next_tid);

	/* a switch the session rejects (bad cpu or tid) is left out */
	return err == -ENOMEM ? err : 0;
}

/* meta pt_aux_tids ("CPU:TID,..." from a perf.data import): the task each
 * CPU's trace belongs to when it has no timing.  A malformed entry (the
 * file's) is left out. */
static int load_untimed_tids(struct sptd_store *st, struct sptd_dec_session *s)
{
	char list[4096], *p, *end;
	int ret = 0;

	if (sptd_store_meta_get(st, "pt_aux_tids", list, sizeof(list)) < 0)
		return 0;
	for (p = list; *p && ret != -ENOMEM; p = *end ? end + 1 : end) {
		long cpu, tid;

		errno = 0;
		cpu = strtol(p, &end, 10);
		if (end == p || *end != ':' || errno)
			break;
		p = end + 1;
		tid = strtol(p, &end, 10);
		if (end == p || (*end && *end != ',') || errno)
			break;
		if (cpu >= 0 && cpu < 4096 && tid > 0 && tid <= INT32_MAX)
			ret = sptd_dec_session_set_untimed_tid(s, (int)cpu, (int)tid);
	}
	return ret == -ENOMEM ? ret : 0;
}

static int load_timeline(struct sptd_store *st, struct sptd_dec_session *s)
{
	int ret = load_untimed_tids(st, s);

	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, raw_task, on_task, s);

	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, raw_switch, on_switch, s);
	return ret < 0 ? ret : 0;
}

/* Tasks that ended in the window: the end of each scheduling slice that
 * left its thread dead (X or Z), from the tables derived just before
 * (ftrace's sched_switch; perf.data's switch and exit records).  Frames a
 * task still has open when it exits end there, not at the window's end. */
struct exits_ctx {
	struct sptd_col_tasks *tasks;
	struct sptd_dec_session *s;
};

static int on_exit_row(void *arg, const struct sptd_store_thread_exit_row *row)
{
	struct exits_ctx *x = arg;
	int tid = sptd_col_tasks_tid(x->tasks, row->utid);

	if (tid <= 0 || tid >= PSEUDO_TID_BASE)
		return 0;
	return sptd_dec_session_add_exit(x->s, tid, row->ts) == -ENOMEM ? -ENOMEM : 0;
}

static int load_exits(struct sptd_store *st, struct sptd_col_tasks *tasks,
                      struct sptd_dec_session *s)
{
	struct exits_ctx x = { .tasks = tasks, .s = s };
	int ret = SPTD_STORE_EACH(st, thread_exit, on_exit_row, &x);

	return ret < 0 ? ret : 0;
}

static int on_pt(void *arg, const struct sptd_store_chunk_row *row)
{
	if (!row->data || !row->len)
		return 0;
	return sptd_dec_session_add_pt(arg, row->cpu, row->data, row->len);
}

static int load_pt(struct sptd_store *st, struct sptd_dec_session *s)
{
	int ret = SPTD_STORE_EACH(st, raw_pt, on_pt, s);

	return ret < 0 ? ret : 0;
}

/* ---- sink: decode/ -> store/ ----------------------------------------------- */

static uint64_t sym_hash(int64_t dso_id, uint64_t addr, const char *name)
{
	uint64_t h = (uint64_t)dso_id * 0x9e3779b97f4a7c15ull ^ addr * 0xff51afd7ed558ccdull;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The slot of (@dso_id, @addr, @name) in ctx->syms: where it is, or the
 * empty slot where it goes. */
static struct pt_sym *sym_slot(struct pt_ctx *ctx, int64_t dso_id, uint64_t addr, const char *name)
{
	size_t h = (size_t)sym_hash(dso_id, addr, name) & (ctx->symcap - 1);

	while (ctx->syms[h].id && (ctx->syms[h].dso_id != dso_id || ctx->syms[h].addr != addr ||
	                           strcmp(ctx->syms[h].name, name) != 0))
		h = (h + 1) & (ctx->symcap - 1);
	return &ctx->syms[h];
}

/* Remember symbol @id; the first of equal ones stays (sptd_store_symbol_find
 * gives the one stored first).  0 or -ENOMEM. */
static int sym_remember(struct pt_ctx *ctx, int64_t id, int64_t dso_id, uint64_t addr,
                        const char *name)
{
	struct pt_sym *slot;

	if (2 * (ctx->symcount + 1) > ctx->symcap) {
		size_t cap = ctx->symcap ? ctx->symcap * 2 : 1024, i, old = ctx->symcap;
		struct pt_sym *prev = ctx->syms;

		ctx->syms = calloc(cap, sizeof(*ctx->syms));
		if (!ctx->syms) {
			ctx->syms = prev;
			return -ENOMEM;
		}
		ctx->symcap = cap;
		for (i = 0; i < old; i++)
			if (prev[i].id)
				*sym_slot(ctx, prev[i].dso_id, prev[i].addr, prev[i].name) = prev[i];
		free(prev);
	}
	slot = sym_slot(ctx, dso_id, addr, name);
	if (slot->id)
		return 0;
	slot->name = strdup(name);
	if (!slot->name)
		return -ENOMEM;
	slot->id = id;
	slot->dso_id = dso_id;
	slot->addr = addr;
	ctx->symcount++;
	return 0;
}

static int on_stored_symbol(void *arg, const struct sptd_store_symbol_row *row)
{
	if (!row->name)
		return 0;
	return sym_remember(arg, row->id, row->dso_id, row->addr, row->name);
}

static void syms_free(struct pt_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->symcap; i++)
		free(ctx->syms[i].name);
	free(ctx->syms);
}

static int on_symbol(void *arg, const struct sptd_dec_symbol *sym)
{
	struct pt_ctx *ctx = arg;
	struct pt_sym *known;
	int64_t id;
	int ret;

	if ((size_t)sym->id >= ctx->nsym_map) {
		size_t n = ((size_t)sym->id + 1) * 2;
		int64_t *m = realloc(ctx->sym_map, n * sizeof(*m));

		if (!m)
			return -ENOMEM;
		memset(m + ctx->nsym_map, 0, (n - ctx->nsym_map) * sizeof(*m));
		ctx->sym_map = m;
		ctx->nsym_map = n;
	}
	ret = sym_remember(ctx, ctx->next_symbol_id, sym->dso_id, sym->addr, sym->name);
	if (ret < 0)
		return ret;
	known = sym_slot(ctx, sym->dso_id, sym->addr, sym->name);
	id = known->id;
	if (id == ctx->next_symbol_id) {
		ctx->next_symbol_id++;
		ret = sptd_store_writer_symbol(ctx->w, id, sym->name, sym->dso_id, sym->addr,
		                               sym->size);
		if (ret < 0)
			return ret;
	}
	ctx->sym_map[sym->id] = id;
	return 0;
}

static int64_t utid_for(struct pt_ctx *ctx, int tid, int cpu)
{
	char comm[32];
	int64_t utid;

	if (tid >= 0)
		return sptd_col_tasks_utid(ctx->tasks, tid);
	if (cpu < 0 || cpu >= 1024)
		return -EINVAL;
	if (cpu >= ctx->npseudo) {
		int64_t *n = realloc(ctx->pseudo_utid, (size_t)(cpu + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		memset(n + ctx->npseudo, 0, (size_t)(cpu + 1 - ctx->npseudo) * sizeof(*n));
		ctx->pseudo_utid = n;
		ctx->npseudo = cpu + 1;
	}
	if (ctx->pseudo_utid[cpu])
		return ctx->pseudo_utid[cpu] - 1;
	snprintf(comm, sizeof(comm), "[pt cpu%d]", cpu);
	sptd_col_tasks_note(ctx->tasks, PSEUDO_TID_BASE + cpu, PSEUDO_TID_BASE + cpu, comm, NULL);
	utid = sptd_col_tasks_utid(ctx->tasks, PSEUDO_TID_BASE + cpu);
	if (utid >= 0)
		ctx->pseudo_utid[cpu] = utid + 1;
	return utid;
}

/* Queue the buffered slices. */
static int rows_flush(struct pt_ctx *ctx)
{
	int ret = sptd_store_writer_slices(ctx->w, ctx->rows, ctx->nrows);

	ctx->nrows = 0;
	return ret;
}

static int on_slice(void *arg, const struct sptd_dec_slice *sl)
{
	struct pt_ctx *ctx = arg;
	struct sptd_store_slice_row *r;
	int64_t utid = utid_for(ctx, sl->tid, sl->cpu);
	int64_t sym = -1;

	int64_t ts = sl->ts, dur = sl->dur;
	int flags = sl->flags;

	if (utid < 0)
		return (int)utid;
	/* An AUX ring may hold trace from before the window (an incident's
	 * ring resumes over the previous one's): none of it is this
	 * incident's.  Order numbers (no timing) cannot be compared. */
	if (!(flags & SPTD_DEC_F_NO_TIME) && ts < ctx->window_start) {
		if (dur >= 0 && ts + dur < ctx->window_start) {
			ctx->before_window++;
			return 0;
		}
		if (dur >= 0)
			dur -= ctx->window_start - ts;
		ts = ctx->window_start;
		flags |= SPTD_DEC_F_START_TRUNCATED;
	}
	if (sl->symbol_id > 0 && (size_t)sl->symbol_id < ctx->nsym_map &&
	    ctx->sym_map[sl->symbol_id])
		sym = ctx->sym_map[sl->symbol_id];
	ctx->slices++;
	r = &ctx->rows[ctx->nrows++];
	*r = (struct sptd_store_slice_row){
		.id = sl->id, .ts = ts, .dur = dur, .cpu = sl->cpu, .utid = utid,
		.depth = sl->depth, .parent_id = sl->parent_id, .symbol_id = sym,
		.kind = sl->kind, .flags = flags,
	};
	return ctx->nrows == PT_ROWS ? rows_flush(ctx) : 0;
}

static int on_gap(void *arg, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	struct pt_ctx *ctx = arg;

	return sptd_store_writer_gap(ctx->w, ts, dur, cpu, reason);
}

static int on_stat(void *arg, const char *name, int cpu, int64_t value)
{
	struct pt_ctx *ctx = arg;

	return sptd_store_writer_stat(ctx->w, name, cpu, value);
}

/* Power events arrive while the writer owns the store: kept until it is
 * done (there are few: a CBR change, a C-state, a PTWRITE). */
static int on_power(void *arg, const struct sptd_dec_power *ev)
{
	struct pt_ctx *ctx = arg;

	if (ctx->npower == ctx->cappower) {
		size_t cap = ctx->cappower ? ctx->cappower * 2 : 256;
		struct sptd_dec_power *n = realloc(ctx->power, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ctx->power = n;
		ctx->cappower = cap;
	}
	ctx->power[ctx->npower++] = *ev;
	return 0;
}

/* kHz of one unit of core:bus ratio: the TSC rate over the nominal ratio
 * when both are known, else Intel's 100 MHz. */
static int64_t bus_khz(const struct sptd_dec_config *cfg)
{
	double tsc_hz = (double)cfg->tsc_hz;

	if (!tsc_hz && cfg->tsc_mult)
		tsc_hz = 1e9 * (double)(1ull << cfg->tsc_shift) / cfg->tsc_mult;
	if (tsc_hz > 0 && cfg->nom_freq > 0)
		return (int64_t)(tsc_hz / cfg->nom_freq / 1000 + 0.5);
	return 100000;
}

static int store_power(struct sptd_store *st, struct pt_ctx *ctx, int64_t khz)
{
	int ret = 0;

	for (size_t i = 0; i < ctx->npower && ret >= 0; i++) {
		const struct sptd_dec_power *p = &ctx->power[i];
		char wake[40] = "";

		switch (p->kind) {
		case SPTD_DEC_POWER_FREQ:
			ret = SPTD_STORE_ADD(st, cpu_freq, p->ts, p->cpu, (int)p->cbr,
			                     (int64_t)p->cbr * khz);
			break;
		case SPTD_DEC_POWER_IDLE: {
			struct sptd_store_cpu_idle_row r = {
				.ts = p->ts, .dur = p->dur, .cpu = p->cpu, .state = p->cstate,
				.sub_state = p->sub_cstate, .requested = p->requested,
				.requested_sub = p->requested_sub, .last = p->last,
				.deepest = p->deepest, .hw = p->hw, .flags = p->flags,
			};

			snprintf(wake, sizeof(wake), "%s%s%s",
			         p->wake & SPTD_DEC_WAKE_INTERRUPT ? ",interrupt" : "",
			         p->wake & SPTD_DEC_WAKE_STORE ? ",store" : "",
			         p->wake & SPTD_DEC_WAKE_AUTONOMOUS ? ",autonomous" : "");
			r.wake = wake[0] ? wake + 1 : NULL;
			ret = sptd_store_add(st, SPTD_STORE_T_CPU_IDLE, &r);
			break;
		}
		case SPTD_DEC_POWER_PTWRITE: {
			int64_t utid = p->tid >= 0 ? sptd_col_tasks_utid(ctx->tasks, p->tid) : -1;

			ret = SPTD_STORE_ADD(st, ptwrite, p->ts, p->cpu, utid < 0 ? -1 : utid, p->ip,
			                     p->payload, p->size);
			break;
		}
		default:
			break;
		}
	}
	return ret;
}

/* Remove what an earlier PT decode of this incident wrote. */
static int clear_previous(struct sptd_store *st)
{
	static const char *const pt_stats[] = {
		"pt_bytes", "instructions", "calls", "returns", "far_calls", "far_returns",
		"interrupts", "decode_errors", "gaps", "decode_ns", "decode_segments",
		"cr3_mismatches", "power_ns", "slices_before_window",
	};
	static const char *const pt_tables[] = { "slice", "cpu_freq", "cpu_idle", "ptwrite" };
	int ret = 0;

	for (size_t i = 0; i < sizeof(pt_tables) / sizeof(pt_tables[0]) && ret >= 0; i++)
		ret = sptd_store_table_clear(st, pt_tables[i]);
	if (ret >= 0)
		ret = sptd_store_gap_clear(st, "pt: ");
	if (ret >= 0)
		ret = sptd_store_stats_clear(st, pt_stats, sizeof(pt_stats) / sizeof(pt_stats[0]));
	return ret < 0 ? ret : 0;
}

int sptd_col_derive_pt(struct sptd_store *st, struct sptd_col_tasks *tasks, int jobs)
{
	struct sptd_dec_config cfg;
	struct sptd_dec_session *s = NULL;
	struct sptd_col_pt_imgfind *find = NULL;
	struct sptd_dec_symfile *ksyms = NULL;
	struct pt_ctx ctx;
	struct sptd_dec_sink sink = { .symbol = on_symbol, .slice = on_slice,
	                              .gap = on_gap, .stat = on_stat, .power = on_power };
	int64_t n = 0, ret;
	char source[16], bad[64] = "";

	if (!st || !tasks || jobs < 0)
		return -EINVAL;
	memset(&ctx, 0, sizeof(ctx));
	ret = sptd_store_count(st, SPTD_STORE_T_RAW_PT, &n);
	if (ret < 0 || n == 0)
		return ret < 0 ? (int)ret : 0;
	ret = sptd_col_derive_check_cpus(st, "raw_pt");   /* damaged: exit 6 */
	if (ret < 0)
		return (int)ret;
	load_config(st, &cfg, jobs, bad, sizeof(bad));
	ret = sptd_dec_session_create(&cfg, &s);
	if (ret < 0)
		goto out;
	ret = sptd_col_pt_imgfind_create(st, &find);
	if (ret < 0)
		goto out;
	ret = load_images(st, s, find, &ksyms);
	if (ret >= 0)
		ret = load_timeline(st, s);
	if (ret >= 0)
		ret = load_exits(st, tasks, s);
	if (ret >= 0)
		ret = load_pt(st, s);
	if (ret >= 0)
		ret = clear_previous(st);
	if (ret < 0)
		goto out;
	ctx.tasks = tasks;
	ctx.window_start = meta_int(st, "window_start", INT64_MIN);
	ctx.rows = malloc(PT_ROWS * sizeof(*ctx.rows));
	if (!ctx.rows) {
		ret = -ENOMEM;
		goto out;
	}
	ret = sptd_store_next_id(st, SPTD_STORE_T_SYMBOL, &ctx.next_symbol_id);
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, symbol, on_stored_symbol, &ctx);
	if (ret < 0)
		goto out;
	/* slices go into the file as pages at the commit (store_bulk.c) */
	ret = sptd_store_slices_defer(st);
	/* from here to the writer's finish, the store is the writer's */
	if (ret >= 0)
		ret = sptd_store_writer_start(st, &ctx.w);
	if (ret < 0)
		goto out;
	sink.ctx = &ctx;
	if (bad[0]) {
		char reason[160];

		snprintf(reason, sizeof(reason), "pt: meta %s out of range: decoded as unknown "
		         "(the incident is damaged)", bad);
		ret = SPTD_STORE_ADD(st, gap, meta_int(st, "window_start", 0), 0, -1, reason);
		if (ret < 0)
			goto out;
	}
	ret = sptd_dec_session_run(s, &sink);
	if (ret >= 0)
		ret = rows_flush(&ctx);
	if (derive_progress)
		derive_progress(derive_progress_ctx, "writing rows", 0, 0);
	n = sptd_store_writer_finish(ctx.w);
	if (ret >= 0 && n < 0)
		ret = n;
	if (ret < 0)
		goto out;
	/* every slice is kept: their pages build while the incident is
	 * finished (sideband, tasks, the commit's other work) */
	ret = sptd_store_slices_ready(st);
	if (ret < 0)
		goto out;
	ret = store_power(st, &ctx, bus_khz(&cfg));
	if (ret >= 0 && ctx.before_window)
		ret = SPTD_STORE_ADD(st, stats, "slices_before_window", -1, ctx.before_window);
	if (ret >= 0)
		ret = sptd_store_meta_set(st, "pt_timing", sptd_dec_session_no_time(s) ? "none" : "tsc");
	/* an imported trace without timing: ts is order, and meta says so */
	if (ret >= 0 && sptd_dec_session_no_time(s) &&
	    sptd_store_meta_get(st, "source", source, sizeof(source)) >= 0 &&
	    strcmp(source, "pt") == 0)
		ret = sptd_store_meta_set(st, "clock", "order");
	if (ret >= 0)
		ret = 0;
out:
	sptd_dec_session_destroy(s);
	sptd_dec_symfile_destroy(ksyms);
	/* after the session: libipt reads the (unpacked) files lazily */
	sptd_col_pt_imgfind_destroy(find);
	free(ctx.sym_map);
	free(ctx.pseudo_utid);
	free(ctx.rows);
	free(ctx.power);
	syms_free(&ctx);
	return (int)ret;
}
