/* derive_pt.c — raw_pt (+ images, mappings, tasks, switches) -> slice,
 * symbol, gap and stats rows, through decode/'s session and sink.
 *
 * Owns the PT part of the derived tables: every slice row, the stats rows
 * named below and the gap rows whose reason starts with "pt: "; rows of
 * other producers are left alone.  Symbols already in the incident (written
 * at capture time) are reused by (dso, addr, name); new ones are added. */
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

struct pt_ctx {
	struct sptd_store *st;
	struct sptd_col_tasks *tasks;
	struct sptd_store_stmt *find_sym;  /* existing symbol by dso, addr, name */
	int64_t next_symbol_id;            /* for symbols not yet stored */
	int64_t *sym_map;                  /* session symbol id -> store symbol id */
	size_t nsym_map;
	int64_t *pseudo_utid;              /* per CPU, 0 unassigned */
	int npseudo;
	int64_t slices;
};

static int exec_sql(struct sptd_store *st, const char *sql)
{
	struct sptd_store_stmt *stmt = NULL;
	int ret = sptd_store_prepare(st, sql, &stmt);

	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1)
		;
	sptd_store_finalize(stmt);
	return ret < 0 ? ret : 0;
}

static int64_t meta_int(struct sptd_store *st, const char *key, int64_t dflt)
{
	int64_t v;

	return sptd_store_meta_get_int(st, key, &v) == 0 ? v : dflt;
}

/* The decode configuration from meta pt_* keys (and the tsc_* conversion
 * the recorder stores for the TSC clock). */
static void load_config(struct sptd_store *st, struct sptd_dec_config *cfg, int jobs)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpu_family = (int)meta_int(st, "pt_cpu_family", 0);
	cfg->cpu_model = (int)meta_int(st, "pt_cpu_model", 0);
	cfg->cpu_stepping = (int)meta_int(st, "pt_cpu_stepping", 0);
	cfg->mtc_freq = (int)meta_int(st, "pt_mtc_freq", 0);
	cfg->nom_freq = (int)meta_int(st, "pt_nom_freq", 0);
	cfg->cpuid15_eax = (uint32_t)meta_int(st, "pt_cpuid15_eax", 0);
	cfg->cpuid15_ebx = (uint32_t)meta_int(st, "pt_cpuid15_ebx", 0);
	cfg->tsc_hz = (uint64_t)meta_int(st, "pt_tsc_hz", 0);
	cfg->no_timing = meta_int(st, "pt_no_timing", 0) != 0;
	if (!cfg->tsc_hz && meta_int(st, "tsc_mult", 0) > 0) {
		cfg->tsc_mult = (uint32_t)meta_int(st, "tsc_mult", 0);
		cfg->tsc_shift = (int)meta_int(st, "tsc_shift", 0);
		cfg->tsc_zero = (uint64_t)meta_int(st, "tsc_zero", 0);
		cfg->tsc_offset_ns = meta_int(st, "tsc_offset_ns", 0);
	}
	cfg->jobs = jobs;
}

/* raw_image blobs as bytes; raw_mmap'd files without a blob as ELF files
 * (or, when not ELF, as flat images placed by the row's bias). */
/* The code of the incident: raw_image bytes, then every mapped file, read
 * from where @find says its recorded bytes are now (embedded copy, image
 * cache by build-id, or the original path if unchanged). */
static int load_images(struct sptd_store *st, struct sptd_dec_session *s,
                       struct sptd_col_pt_imgfind *find)
{
	struct sptd_store_stmt *stmt = NULL;
	int ret;

	ret = sptd_store_prepare(st,
		"SELECT i.dso_id, i.addr, i.data, d.path FROM raw_image i "
		"LEFT JOIN dso d ON d.id = i.dso_id", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		size_t len = 0;
		const void *data = sptd_store_column_blob(stmt, 2, &len);
		const char *path = sptd_store_column_text(stmt, 3);
		const char *name = path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

		if (!data || !len)
			continue;
		ret = sptd_dec_session_add_bytes(s, -1, name ? name : "image", data, len,
		                                 (uint64_t)sptd_store_column_int(stmt, 1),
		                                 sptd_store_column_int(stmt, 0));
	}
	sptd_store_finalize(stmt);
	if (ret < 0)
		return ret;
	stmt = NULL;
	ret = sptd_store_prepare(st,
		"SELECT DISTINCT m.pid, m.dso_id, m.bias, d.path, d.build_id FROM raw_mmap m "
		"JOIN dso d ON d.id = m.dso_id "
		"WHERE m.dso_id NOT IN (SELECT dso_id FROM raw_image)", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		const char *path = sptd_store_column_text(stmt, 3);
		const char *build_id = sptd_store_column_text(stmt, 4);
		const char *where = NULL;
		int64_t dso_id = sptd_store_column_int(stmt, 1);
		int pid = (int)sptd_store_column_int(stmt, 0);
		int err;

		if (!path || path[0] != '/')
			continue;   /* [vdso], [kernel.kallsyms]: no file to read */
		err = sptd_col_pt_imgfind_lookup(find, dso_id, path, build_id, &where);
		if (err < 0) {
			if (err == -ESTALE)
				sptd_col_log(LOG_WARNING, "pt decode: %s changed since recording "
				             "(build-id %s differs) and no copy of it is cached: its "
				             "code will show as gaps", path, build_id ? build_id : "?");
			else
				sptd_col_log(LOG_WARNING, "pt decode: no bytes for %s (%s): its "
				             "code will show as gaps", path, strerror(-err));
			continue;
		}
		err = sptd_dec_session_add_elf(s, pid < 0 ? -1 : pid, where,
		                               sptd_store_column_int(stmt, 2), dso_id);
		/* not ELF: a flat per-process image (import FILE@ADDR:PID),
		 * file offset + bias = address */
		if (err == -EBADMSG)
			err = sptd_dec_session_add_flat(s, pid < 0 ? -1 : pid, where,
			                                (uint64_t)sptd_store_column_int(stmt, 2),
			                                dso_id);
		if (err < 0)
			sptd_col_log(LOG_WARNING, "pt decode: cannot load %s (%s, from %s): its "
			             "code will show as gaps", path, strerror(-err), where);
	}
	sptd_store_finalize(stmt);
	return ret < 0 ? ret : 0;
}

static int load_timeline(struct sptd_store *st, struct sptd_dec_session *s)
{
	struct sptd_store_stmt *stmt = NULL;
	int ret;

	ret = sptd_store_prepare(st, "SELECT pid, tid FROM raw_task", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		int pid = (int)sptd_store_column_int(stmt, 0), tid = (int)sptd_store_column_int(stmt, 1);

		if (pid >= 0 && tid >= 0)
			ret = sptd_dec_session_add_task(s, tid, pid);
	}
	sptd_store_finalize(stmt);
	if (ret < 0)
		return ret;
	stmt = NULL;
	ret = sptd_store_prepare(st, "SELECT ts, cpu, prev_tid, next_tid FROM raw_switch", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		int err = sptd_dec_session_add_switch(s, sptd_store_column_int(stmt, 0),
		                                      (int)sptd_store_column_int(stmt, 1),
		                                      (int)sptd_store_column_int(stmt, 2),
		                                      (int)sptd_store_column_int(stmt, 3));
		if (err == -ENOMEM)
			ret = err;
	}
	sptd_store_finalize(stmt);
	return ret < 0 ? ret : 0;
}

static int load_pt(struct sptd_store *st, struct sptd_dec_session *s)
{
	struct sptd_store_stmt *stmt = NULL;
	int ret;

	ret = sptd_store_prepare(st, "SELECT cpu, data FROM raw_pt ORDER BY cpu, seq", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		size_t len = 0;
		const void *data = sptd_store_column_blob(stmt, 1, &len);

		if (data && len)
			ret = sptd_dec_session_add_pt(s, (int)sptd_store_column_int(stmt, 0), data, len);
	}
	sptd_store_finalize(stmt);
	return ret < 0 ? ret : 0;
}

/* ---- sink: decode/ -> store/ ----------------------------------------------- */

static int on_symbol(void *arg, const struct sptd_dec_symbol *sym)
{
	struct pt_ctx *ctx = arg;
	int64_t id = 0;
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
	sptd_store_reset(ctx->find_sym);
	sptd_store_bind_int(ctx->find_sym, 1, sym->dso_id);
	sptd_store_bind_int(ctx->find_sym, 2, (int64_t)sym->addr);
	sptd_store_bind_text(ctx->find_sym, 3, sym->name);
	ret = sptd_store_step(ctx->find_sym);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		id = sptd_store_column_int(ctx->find_sym, 0);
	} else {
		id = ctx->next_symbol_id++;
		ret = sptd_store_symbol_add(ctx->st, id, sym->name, sym->dso_id, sym->addr,
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

static int on_slice(void *arg, const struct sptd_dec_slice *sl)
{
	struct pt_ctx *ctx = arg;
	int64_t utid = utid_for(ctx, sl->tid, sl->cpu);
	int64_t sym = -1;

	if (utid < 0)
		return (int)utid;
	if (sl->symbol_id > 0 && (size_t)sl->symbol_id < ctx->nsym_map &&
	    ctx->sym_map[sl->symbol_id])
		sym = ctx->sym_map[sl->symbol_id];
	ctx->slices++;
	return sptd_store_slice_add(ctx->st, sl->id, sl->ts, sl->dur, sl->cpu, utid, sl->depth,
	                            sl->parent_id, sym, sl->kind, sl->flags);
}

static int on_gap(void *arg, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	struct pt_ctx *ctx = arg;

	return sptd_store_gap_add(ctx->st, ts, dur, cpu, reason);
}

static int on_stat(void *arg, const char *name, int cpu, int64_t value)
{
	struct pt_ctx *ctx = arg;

	return sptd_store_stat_add(ctx->st, name, cpu, value);
}

/* Remove what an earlier PT decode of this incident wrote. */
static int clear_previous(struct sptd_store *st)
{
	int ret = sptd_store_table_clear(st, "slice");

	if (ret >= 0)
		ret = exec_sql(st, "DELETE FROM gap WHERE reason LIKE 'pt: %'");
	if (ret >= 0)
		ret = exec_sql(st, "DELETE FROM stats WHERE name IN ('pt_bytes', "
		               "'instructions', 'calls', 'returns', 'far_calls', "
		               "'far_returns', 'interrupts', 'decode_errors', 'gaps', "
		               "'decode_ns', 'cr3_mismatches')");
	return ret;
}

int sptd_col_derive_pt(struct sptd_store *st, struct sptd_col_tasks *tasks, int jobs)
{
	struct sptd_dec_config cfg;
	struct sptd_dec_session *s = NULL;
	struct sptd_col_pt_imgfind *find = NULL;
	struct pt_ctx ctx;
	struct sptd_dec_sink sink = { .symbol = on_symbol, .slice = on_slice,
	                              .gap = on_gap, .stat = on_stat };
	int64_t n = 0, ret;
	char source[16];

	if (!st || !tasks || jobs < 0)
		return -EINVAL;
	memset(&ctx, 0, sizeof(ctx));
	ret = sptd_store_query_int(st, "SELECT count(*) FROM raw_pt", &n);
	if (ret < 0 || n == 0)
		return ret < 0 ? (int)ret : 0;
	load_config(st, &cfg, jobs);
	ret = sptd_dec_session_create(&cfg, &s);
	if (ret < 0)
		goto out;
	ret = sptd_col_pt_imgfind_create(st, &find);
	if (ret < 0)
		goto out;
	ret = load_images(st, s, find);
	if (ret >= 0)
		ret = load_timeline(st, s);
	if (ret >= 0)
		ret = load_pt(st, s);
	if (ret >= 0)
		ret = clear_previous(st);
	if (ret < 0)
		goto out;
	ctx.st = st;
	ctx.tasks = tasks;
	ret = sptd_store_query_int(st, "SELECT coalesce(max(id), 0) + 1 FROM symbol",
	                           &ctx.next_symbol_id);
	if (ret >= 0)
		ret = sptd_store_prepare(st, "SELECT id FROM symbol WHERE dso_id IS ? AND "
		                         "addr = ? AND name = ?", &ctx.find_sym);
	if (ret < 0)
		goto out;
	sink.ctx = &ctx;
	ret = sptd_dec_session_run(s, &sink);
	if (ret < 0)
		goto out;
	ret = sptd_store_meta_set(st, "pt_timing", sptd_dec_session_no_time(s) ? "none" : "tsc");
	/* an imported trace without timing: ts is order, and meta says so */
	if (ret >= 0 && sptd_dec_session_no_time(s) &&
	    sptd_store_meta_get(st, "source", source, sizeof(source)) >= 0 &&
	    strcmp(source, "pt") == 0)
		ret = sptd_store_meta_set(st, "clock", "order");
	if (ret >= 0)
		ret = 0;
out:
	sptd_store_finalize(ctx.find_sym);
	sptd_dec_session_destroy(s);
	/* after the session: libipt reads the (unpacked) files lazily */
	sptd_col_pt_imgfind_destroy(find);
	free(ctx.sym_map);
	free(ctx.pseudo_utid);
	return (int)ret;
}
