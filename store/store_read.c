/* store_read.c — the readers: raw and derived rows handed to a callback as
 * typed structs (sptd_store_raw_pt_each, ...).
 *
 * Each reader is one statement of store_named.c (prepared once per store)
 * and a row function that fills the struct from the columns, named by an
 * enum listed in the order of the statement's SELECT. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* The caller's row callback, typed by the row it takes, and its argument. */
struct reader {
	union {
		int (*chunk)(void *ctx, const struct sptd_store_chunk_row *row);
		int (*format)(void *ctx, const struct sptd_store_ftrace_format_row *row);
		int (*task)(void *ctx, const struct sptd_store_raw_task_row *row);
		int (*sw)(void *ctx, const struct sptd_store_raw_switch_row *row);
		int (*sample)(void *ctx, const struct sptd_store_raw_sample_row *row);
		int (*mmap)(void *ctx, const struct sptd_store_raw_mmap_row *row);
		int (*image)(void *ctx, const struct sptd_store_raw_image_row *row);
		int (*file)(void *ctx, const struct sptd_store_mapped_file_row *row);
		int (*symbol)(void *ctx, const struct sptd_store_symbol_row *row);
		int (*dso)(void *ctx, const struct sptd_store_dso_row *row);
		int (*trigger)(void *ctx, const struct sptd_store_trigger_row *row);
		int (*stat)(void *ctx, const struct sptd_store_stat_row *row);
		int (*exit)(void *ctx, int64_t utid, int64_t ts);
	} fn;                   /* the member the reader's row function calls */
	void *ctx;              /* the caller's argument */
};

/* Run named statement @q (text @sql) and hand its rows to @row(s, @arg);
 * @has_fn 0: the caller gave no callback (-EINVAL). */
static int read_all(struct sptd_store *st, int has_fn, int q, const char *sql,
                    const char *what, int (*row)(sqlite3_stmt *s, void *arg), void *arg)
{
	sqlite3_stmt *s;
	int owned, ret;

	SPTD_STORE_REQUIRE(st, has_fn, what, "fn is NULL");
	s = sptd_store_named_get(st, q, sql, what, &owned, &ret);
	if (!s)
		return ret;
	return sptd_store_named_each(st, s, owned, what, row, arg);
}

/* Bytes of column @col: NULL for NULL, a valid pointer for an empty blob. */
static const void *column_bytes(sqlite3_stmt *s, int col, size_t *len)
{
	const void *data;

	*len = 0;
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return NULL;
	data = sqlite3_column_blob(s, col);
	*len = (size_t)sqlite3_column_bytes(s, col);
	/* A zero-length blob has no pointer in SQLite; give a valid one. */
	return data ? data : "";
}

/* Column @col as an int where NULL means "none" (-1). */
static int column_opt_int(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL ? -1 : sqlite3_column_int(s, col);
}

/* Column @col as text, NULL for NULL. */
static const char *column_str(sqlite3_stmt *s, int col)
{
	return (const char *)sqlite3_column_text(s, col);
}

/* ---- raw_pt, raw_sideband, raw_ftrace_page: cpu, seq, bytes ------------------ */

enum { CHUNK_CPU, CHUNK_SEQ, CHUNK_DATA };

static int chunk_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_chunk_row r = {
		.cpu = sqlite3_column_int(s, CHUNK_CPU),
		.seq = sqlite3_column_int(s, CHUNK_SEQ),
	};

	r.data = column_bytes(s, CHUNK_DATA, &r.len);
	return e->fn.chunk(e->ctx, &r);
}

/* The rows of chunk table @table in (cpu, seq) order.  The order is taken
 * over rowids alone, then each row is read by its rowid: ordering the rows
 * themselves would copy every chunk through SQLite's sorter twice (a
 * perf.data import holds a CPU's whole PT in one chunk). */
static int chunks_each(struct sptd_store *st, const char *table, int q_order, int q_row,
                       const char *what, struct reader *e)
{
	char order_sql[96], row_sql[96];
	sqlite3_stmt *o, *r;
	int o_owned, r_owned, ret = 0, rc;

	SPTD_STORE_REQUIRE(st, e->fn.chunk != NULL, what, "fn is NULL");
	snprintf(order_sql, sizeof(order_sql), "SELECT rowid FROM %s ORDER BY cpu, seq", table);
	snprintf(row_sql, sizeof(row_sql), "SELECT cpu, seq, data FROM %s WHERE rowid = ?1",
	         table);
	o = sptd_store_named_get(st, q_order, order_sql, what, &o_owned, &ret);
	if (!o)
		return ret;
	r = sptd_store_named_get(st, q_row, row_sql, what, &r_owned, &ret);
	if (!r) {
		sptd_store_named_done(o, o_owned);
		return ret;
	}
	while (ret == 0 && (rc = sqlite3_step(o)) == SQLITE_ROW) {
		int rrc;

		sqlite3_bind_int64(r, 1, sqlite3_column_int64(o, 0));
		rrc = sqlite3_step(r);
		if (rrc == SQLITE_ROW)
			ret = chunk_row(r, e);
		else if (rrc != SQLITE_DONE)
			ret = sptd_store_fail_sqlite(st, rrc, what);
		sqlite3_reset(r);
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = sptd_store_fail_sqlite(st, rc, what);
	sptd_store_named_done(r, r_owned);
	sptd_store_named_done(o, o_owned);
	return ret;
}

int sptd_store_raw_pt_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_chunk_row *row),
                           void *ctx)
{
	struct reader e = { .fn.chunk = fn, .ctx = ctx };

	return chunks_each(st, "raw_pt", SPTD_STORE_Q_RAW_PT, SPTD_STORE_Q_RAW_PT_ROW,
	                   "reading raw_pt", &e);
}

int sptd_store_raw_sideband_each(struct sptd_store *st,
                                 int (*fn)(void *ctx, const struct sptd_store_chunk_row *row),
                                 void *ctx)
{
	struct reader e = { .fn.chunk = fn, .ctx = ctx };

	return chunks_each(st, "raw_sideband", SPTD_STORE_Q_RAW_SIDEBAND,
	                   SPTD_STORE_Q_RAW_SIDEBAND_ROW, "reading raw_sideband", &e);
}

int sptd_store_raw_ftrace_page_each(struct sptd_store *st,
                                    int (*fn)(void *ctx, const struct sptd_store_chunk_row *row),
                                    void *ctx)
{
	struct reader e = { .fn.chunk = fn, .ctx = ctx };

	return chunks_each(st, "raw_ftrace_page", SPTD_STORE_Q_RAW_FTRACE_PAGE,
	                   SPTD_STORE_Q_RAW_FTRACE_PAGE_ROW, "reading raw_ftrace_page", &e);
}

/* ---- raw_ftrace_format, raw_task, raw_switch ------------------------------------ */

enum { FORMAT_NAME, FORMAT_TEXT };

static int format_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_ftrace_format_row r = {
		.name = column_str(s, FORMAT_NAME),
		.text = column_str(s, FORMAT_TEXT),
	};

	return e->fn.format(e->ctx, &r);
}

int sptd_store_raw_ftrace_format_each(struct sptd_store *st,
                                      int (*fn)(void *ctx,
                                                const struct sptd_store_ftrace_format_row *row),
                                      void *ctx)
{
	struct reader e = { .fn.format = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_RAW_FTRACE_FORMAT,
	                "SELECT name, text FROM raw_ftrace_format",
	                "reading raw_ftrace_format", format_row, &e);
}

enum { TASK_PID, TASK_TID, TASK_COMM, TASK_CMDLINE };

static int task_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_raw_task_row r = {
		.pid = sqlite3_column_int(s, TASK_PID),
		.tid = sqlite3_column_int(s, TASK_TID),
		.comm = column_str(s, TASK_COMM),
		.cmdline = column_str(s, TASK_CMDLINE),
	};

	return e->fn.task(e->ctx, &r);
}

int sptd_store_raw_task_each(struct sptd_store *st,
                             int (*fn)(void *ctx, const struct sptd_store_raw_task_row *row),
                             void *ctx)
{
	struct reader e = { .fn.task = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_RAW_TASK,
	                "SELECT pid, tid, comm, cmdline FROM raw_task",
	                "reading raw_task", task_row, &e);
}

enum { SWITCH_TS, SWITCH_CPU, SWITCH_PREV, SWITCH_NEXT, SWITCH_COMM, SWITCH_STATE };

static int switch_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_raw_switch_row r = {
		.ts = sqlite3_column_int64(s, SWITCH_TS),
		.cpu = sqlite3_column_int(s, SWITCH_CPU),
		.prev_tid = sqlite3_column_int(s, SWITCH_PREV),
		.next_tid = sqlite3_column_int(s, SWITCH_NEXT),
		.next_comm = column_str(s, SWITCH_COMM),
		.prev_state = column_str(s, SWITCH_STATE),
	};

	return e->fn.sw(e->ctx, &r);
}

int sptd_store_raw_switch_each(struct sptd_store *st, int by_time,
                               int (*fn)(void *ctx, const struct sptd_store_raw_switch_row *row),
                               void *ctx)
{
	struct reader e = { .fn.sw = fn, .ctx = ctx };

	if (by_time)
		return read_all(st, fn != NULL, SPTD_STORE_Q_RAW_SWITCH_BY_TS,
		                "SELECT ts, cpu, prev_tid, next_tid, next_comm, prev_state FROM raw_switch "
		                "ORDER BY ts", "reading raw_switch", switch_row, &e);
	return read_all(st, fn != NULL, SPTD_STORE_Q_RAW_SWITCH,
	                "SELECT ts, cpu, prev_tid, next_tid, next_comm, prev_state FROM raw_switch",
	                "reading raw_switch", switch_row, &e);
}

/* ---- raw_sample ----------------------------------------------------------------- */

enum { SAMPLE_TS, SAMPLE_CPU, SAMPLE_PID, SAMPLE_TID, SAMPLE_CALLCHAIN, SAMPLE_KIND, SAMPLE_USTACK };

/* The caller's callback and the host-order chain buffer of one read. */
struct sample_reader {
	struct reader e;        /* the caller's callback */
	uint64_t *chain;        /* the current row's chain, host order */
	size_t cap;             /* entries @chain holds; grows, never per row */
	int nomem;              /* growing @chain failed */
};

static int sample_row(sqlite3_stmt *s, void *arg)
{
	struct sample_reader *sr = arg;
	struct sptd_store_raw_sample_row r = {
		.ts = sqlite3_column_int64(s, SAMPLE_TS),
		.cpu = sqlite3_column_int(s, SAMPLE_CPU),
		.pid = sqlite3_column_int(s, SAMPLE_PID),
		.tid = sqlite3_column_int(s, SAMPLE_TID),
		.kind = sqlite3_column_int(s, SAMPLE_KIND),
	};
	size_t len = 0;
	const unsigned char *bytes = column_bytes(s, SAMPLE_CALLCHAIN, &len);

	r.nr = len / sizeof(uint64_t);
	if (r.nr > sr->cap) {
		uint64_t *more = realloc(sr->chain, r.nr * sizeof(*more));

		if (!more) {
			sr->nomem = 1;
			return -ENOMEM;
		}
		sr->chain = more;
		sr->cap = r.nr;
	}
	/* stored little-endian (store_raw.c); the blob need not be aligned */
	if (r.nr)
		memcpy(sr->chain, bytes, r.nr * sizeof(uint64_t));
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	for (size_t i = 0; i < r.nr; i++)
		sr->chain[i] = __builtin_bswap64(sr->chain[i]);
#endif
	r.callchain = sr->chain;
	if (sqlite3_column_type(s, SAMPLE_USTACK) == SQLITE_BLOB)
		r.ustack = column_bytes(s, SAMPLE_USTACK, &r.ustack_len);
	return sr->e.fn.sample(sr->e.ctx, &r);
}

int sptd_store_raw_sample_each(struct sptd_store *st,
                               int (*fn)(void *ctx, const struct sptd_store_raw_sample_row *row),
                               void *ctx)
{
	static const char what[] = "reading raw_sample";
	struct sample_reader sr = { .e = { .fn.sample = fn, .ctx = ctx } };
	int ret;

	ret = read_all(st, fn != NULL, SPTD_STORE_Q_RAW_SAMPLE,
	               "SELECT ts, cpu, pid, tid, callchain, kind, ustack FROM raw_sample ORDER BY ts", what,
	               sample_row, &sr);
	if (sr.nomem)
		sptd_store_fail(st, ret, "%s: out of memory for a call chain", what);
	free(sr.chain);
	return ret;
}

/* ---- raw_mmap, raw_image, and the files mappings name ------------------------- */

enum { MMAP_PID, MMAP_START, MMAP_END, MMAP_PGOFF, MMAP_DSO_ID, MMAP_BIAS, MMAP_UNTIL };

static int mmap_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_raw_mmap_row r = {
		.pid = sqlite3_column_int(s, MMAP_PID),
		.start = (uint64_t)sqlite3_column_int64(s, MMAP_START),
		.end = (uint64_t)sqlite3_column_int64(s, MMAP_END),
		.pgoff = (uint64_t)sqlite3_column_int64(s, MMAP_PGOFF),
		.dso_id = sqlite3_column_int64(s, MMAP_DSO_ID),
		.bias = sqlite3_column_int64(s, MMAP_BIAS),
		.until_ts = sqlite3_column_int64(s, MMAP_UNTIL),   /* NULL reads 0 */
	};

	return e->fn.mmap(e->ctx, &r);
}

int sptd_store_raw_mmap_each(struct sptd_store *st,
                             int (*fn)(void *ctx, const struct sptd_store_raw_mmap_row *row),
                             void *ctx)
{
	struct reader e = { .fn.mmap = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_RAW_MMAP,
	                "SELECT pid, start, end, pgoff, dso_id, bias, until_ts FROM raw_mmap",
	                "reading raw_mmap", mmap_row, &e);
}

enum { IMAGE_DSO_ID, IMAGE_ADDR, IMAGE_DATA, IMAGE_PATH };

static int image_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_raw_image_row r = {
		.dso_id = sqlite3_column_int64(s, IMAGE_DSO_ID),
		.addr = (uint64_t)sqlite3_column_int64(s, IMAGE_ADDR),
		.path = column_str(s, IMAGE_PATH),
	};

	r.data = column_bytes(s, IMAGE_DATA, &r.len);
	return e->fn.image(e->ctx, &r);
}

int sptd_store_raw_image_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_raw_image_row *row),
                              void *ctx)
{
	struct reader e = { .fn.image = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_RAW_IMAGE,
	                "SELECT i.dso_id, i.addr, i.data, d.path FROM raw_image i "
	                "LEFT JOIN dso d ON d.id = i.dso_id", "reading raw_image", image_row, &e);
}

enum { FILE_PID, FILE_DSO_ID, FILE_BIAS, FILE_PATH, FILE_BUILD_ID };

static int file_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_mapped_file_row r = {
		.pid = sqlite3_column_int(s, FILE_PID),
		.dso_id = sqlite3_column_int64(s, FILE_DSO_ID),
		.bias = sqlite3_column_int64(s, FILE_BIAS),
		.path = column_str(s, FILE_PATH),
		.build_id = column_str(s, FILE_BUILD_ID),
	};

	return e->fn.file(e->ctx, &r);
}

int sptd_store_mapped_file_each(struct sptd_store *st,
                                int (*fn)(void *ctx,
                                          const struct sptd_store_mapped_file_row *row),
                                void *ctx)
{
	struct reader e = { .fn.file = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_MAPPED_FILE,
	                "SELECT DISTINCT m.pid, m.dso_id, m.bias, d.path, d.build_id FROM raw_mmap m "
	                "JOIN dso d ON d.id = m.dso_id "
	                "WHERE m.dso_id NOT IN (SELECT dso_id FROM raw_image)",
	                "reading the mapped files", file_row, &e);
}

/* ---- symbol, dso ---------------------------------------------------------------- */

enum { SYMBOL_ID, SYMBOL_NAME, SYMBOL_DSO_ID, SYMBOL_ADDR, SYMBOL_SIZE };

static int symbol_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_symbol_row r = {
		.id = sqlite3_column_int64(s, SYMBOL_ID),
		.name = column_str(s, SYMBOL_NAME),
		.dso_id = sqlite3_column_int64(s, SYMBOL_DSO_ID),
		.addr = (uint64_t)sqlite3_column_int64(s, SYMBOL_ADDR),
		.size = (uint64_t)sqlite3_column_int64(s, SYMBOL_SIZE),
	};

	return e->fn.symbol(e->ctx, &r);
}

int sptd_store_symbol_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_symbol_row *row),
                           void *ctx)
{
	struct reader e = { .fn.symbol = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_SYMBOL,
	                "SELECT id, name, dso_id, addr, size FROM symbol",
	                "reading symbol", symbol_row, &e);
}

enum { DSO_ID, DSO_PATH, DSO_BUILD_ID };

static int dso_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_dso_row r = {
		.id = sqlite3_column_int64(s, DSO_ID),
		.path = column_str(s, DSO_PATH),
		.build_id = column_str(s, DSO_BUILD_ID),
	};

	return e->fn.dso(e->ctx, &r);
}

int sptd_store_dso_each(struct sptd_store *st,
                        int (*fn)(void *ctx, const struct sptd_store_dso_row *row),
                        void *ctx)
{
	struct reader e = { .fn.dso = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_DSO,
	                "SELECT id, path, build_id FROM dso ORDER BY id",
	                "reading dso", dso_row, &e);
}

/* ---- trigger, stats ------------------------------------------------------------- */

enum { TRIGGER_TS, TRIGGER_CPU, TRIGGER_KIND, TRIGGER_DETAIL };

static int trigger_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_trigger_row r = {
		.ts = sqlite3_column_int64(s, TRIGGER_TS),
		.cpu = column_opt_int(s, TRIGGER_CPU),
		.kind = column_str(s, TRIGGER_KIND),
		.detail = column_str(s, TRIGGER_DETAIL),
	};

	return e->fn.trigger(e->ctx, &r);
}

int sptd_store_trigger_each(struct sptd_store *st,
                            int (*fn)(void *ctx, const struct sptd_store_trigger_row *row),
                            void *ctx)
{
	struct reader e = { .fn.trigger = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_TRIGGER,
	                "SELECT ts, cpu, kind, detail FROM \"trigger\" ORDER BY ts",
	                "reading trigger", trigger_row, &e);
}

enum { STAT_CPU, STAT_NAME, STAT_VALUE };

static int stat_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;
	struct sptd_store_stat_row r = {
		.name = column_str(s, STAT_NAME),
		.cpu = column_opt_int(s, STAT_CPU),
		.value = sqlite3_column_int64(s, STAT_VALUE),
	};

	return e->fn.stat(e->ctx, &r);
}

int sptd_store_cpu_stats_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_stat_row *row),
                              void *ctx)
{
	struct reader e = { .fn.stat = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_CPU_STATS,
	                "SELECT cpu, name, value FROM stats WHERE cpu IS NOT NULL ORDER BY cpu",
	                "reading stats", stat_row, &e);
}

static int exit_row(sqlite3_stmt *s, void *arg)
{
	const struct reader *e = arg;

	return e->fn.exit(e->ctx, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
}

int sptd_store_thread_exits_each(struct sptd_store *st,
                                 int (*fn)(void *ctx, int64_t utid, int64_t ts), void *ctx)
{
	struct reader e = { .fn.exit = fn, .ctx = ctx };

	return read_all(st, fn != NULL, SPTD_STORE_Q_THREAD_EXITS,
	                "SELECT utid, ts + dur FROM sched_slice WHERE substr(end_state, 1, 1) "
	                "IN ('X', 'Z') AND (flags & 2) = 0 ORDER BY ts",
	                "reading the threads' exits", exit_row, &e);
}
