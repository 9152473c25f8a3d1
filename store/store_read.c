/* store_read.c — the readers: raw and derived rows handed to a callback as
 * typed structs (sptd_store_raw_pt_each, ...).
 *
 * Each reader is one statement of store_named.c (prepared once per store)
 * and a row function that fills the struct from the columns, named by an
 * enum listed in the order of the statement's SELECT. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

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

/* Run named statement @q (text @sql) and hand its rows to @row. */
static int read_all(struct sptd_store *st, int q, const char *sql, const char *what,
                    int (*row)(sqlite3_stmt *s, void *arg), void *arg)
{
	sqlite3_stmt *s;
	int owned, ret;

	s = sptd_store_named_get(st, q, sql, what, &owned, &ret);
	if (!s)
		return ret;
	return sptd_store_named_each(st, s, owned, what, row, arg);
}

/* Argument check every reader starts with. */
#define READER_REQUIRE(st, fn, what)                                             \
	do {                                                                     \
		if (!(st))                                                       \
			return -EINVAL;                                          \
		if (!(fn))                                                       \
			return sptd_store_fail((st), -EINVAL, "%s: fn is NULL", (what)); \
	} while (0)

/* ---- raw_pt, raw_sideband, raw_ftrace_page: cpu, seq, bytes ------------------ */

enum { CHUNK_CPU, CHUNK_SEQ, CHUNK_DATA };

/* The caller's callback for chunk rows. */
struct chunk_each {
	int (*fn)(void *ctx, const struct sptd_store_chunk_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int chunk_row(sqlite3_stmt *s, void *arg)
{
	const struct chunk_each *e = arg;
	struct sptd_store_chunk_row r = {
		.cpu = sqlite3_column_int(s, CHUNK_CPU),
		.seq = sqlite3_column_int(s, CHUNK_SEQ),
	};

	r.data = column_bytes(s, CHUNK_DATA, &r.len);
	return e->fn(e->ctx, &r);
}

int sptd_store_raw_pt_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_chunk_row *row),
                           void *ctx)
{
	static const char what[] = "reading raw_pt";
	struct chunk_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_RAW_PT,
	                "SELECT cpu, seq, data FROM raw_pt ORDER BY cpu, seq", what,
	                chunk_row, &e);
}

int sptd_store_raw_sideband_each(struct sptd_store *st,
                                 int (*fn)(void *ctx, const struct sptd_store_chunk_row *row),
                                 void *ctx)
{
	static const char what[] = "reading raw_sideband";
	struct chunk_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_RAW_SIDEBAND,
	                "SELECT cpu, seq, data FROM raw_sideband ORDER BY cpu, seq", what,
	                chunk_row, &e);
}

int sptd_store_raw_ftrace_page_each(struct sptd_store *st,
                                    int (*fn)(void *ctx, const struct sptd_store_chunk_row *row),
                                    void *ctx)
{
	static const char what[] = "reading raw_ftrace_page";
	struct chunk_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_RAW_FTRACE_PAGE,
	                "SELECT cpu, seq, data FROM raw_ftrace_page ORDER BY cpu, seq", what,
	                chunk_row, &e);
}

/* ---- raw_ftrace_format --------------------------------------------------------- */

enum { FORMAT_NAME, FORMAT_TEXT };

/* The caller's callback for raw_ftrace_format rows. */
struct format_each {
	int (*fn)(void *ctx, const struct sptd_store_ftrace_format_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int format_row(sqlite3_stmt *s, void *arg)
{
	const struct format_each *e = arg;
	struct sptd_store_ftrace_format_row r = {
		.name = (const char *)sqlite3_column_text(s, FORMAT_NAME),
		.text = (const char *)sqlite3_column_text(s, FORMAT_TEXT),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_raw_ftrace_format_each(struct sptd_store *st,
                                      int (*fn)(void *ctx,
                                                const struct sptd_store_ftrace_format_row *row),
                                      void *ctx)
{
	static const char what[] = "reading raw_ftrace_format";
	struct format_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_RAW_FTRACE_FORMAT,
	                "SELECT name, text FROM raw_ftrace_format", what, format_row, &e);
}

/* ---- raw_task ------------------------------------------------------------------- */

enum { TASK_PID, TASK_TID, TASK_COMM, TASK_CMDLINE };

/* The caller's callback for raw_task rows. */
struct task_each {
	int (*fn)(void *ctx, const struct sptd_store_raw_task_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int task_row(sqlite3_stmt *s, void *arg)
{
	const struct task_each *e = arg;
	struct sptd_store_raw_task_row r = {
		.pid = sqlite3_column_int(s, TASK_PID),
		.tid = sqlite3_column_int(s, TASK_TID),
		.comm = (const char *)sqlite3_column_text(s, TASK_COMM),
		.cmdline = (const char *)sqlite3_column_text(s, TASK_CMDLINE),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_raw_task_each(struct sptd_store *st,
                             int (*fn)(void *ctx, const struct sptd_store_raw_task_row *row),
                             void *ctx)
{
	static const char what[] = "reading raw_task";
	struct task_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_RAW_TASK,
	                "SELECT pid, tid, comm, cmdline FROM raw_task", what, task_row, &e);
}

/* ---- raw_switch ----------------------------------------------------------------- */

enum { SWITCH_TS, SWITCH_CPU, SWITCH_PREV, SWITCH_NEXT, SWITCH_COMM };

/* The caller's callback for raw_switch rows. */
struct switch_each {
	int (*fn)(void *ctx, const struct sptd_store_raw_switch_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int switch_row(sqlite3_stmt *s, void *arg)
{
	const struct switch_each *e = arg;
	struct sptd_store_raw_switch_row r = {
		.ts = sqlite3_column_int64(s, SWITCH_TS),
		.cpu = sqlite3_column_int(s, SWITCH_CPU),
		.prev_tid = sqlite3_column_int(s, SWITCH_PREV),
		.next_tid = sqlite3_column_int(s, SWITCH_NEXT),
		.next_comm = (const char *)sqlite3_column_text(s, SWITCH_COMM),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_raw_switch_each(struct sptd_store *st, int by_time,
                               int (*fn)(void *ctx, const struct sptd_store_raw_switch_row *row),
                               void *ctx)
{
	static const char what[] = "reading raw_switch";
	struct switch_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	if (by_time)
		return read_all(st, SPTD_STORE_Q_RAW_SWITCH_BY_TS,
		                "SELECT ts, cpu, prev_tid, next_tid, next_comm FROM raw_switch "
		                "ORDER BY ts", what, switch_row, &e);
	return read_all(st, SPTD_STORE_Q_RAW_SWITCH,
	                "SELECT ts, cpu, prev_tid, next_tid, next_comm FROM raw_switch", what,
	                switch_row, &e);
}

/* ---- raw_sample ----------------------------------------------------------------- */

enum { SAMPLE_TS, SAMPLE_CPU, SAMPLE_PID, SAMPLE_TID, SAMPLE_CALLCHAIN };

/* The caller's callback for raw_sample rows, and the host-order chain. */
struct sample_each {
	int (*fn)(void *ctx, const struct sptd_store_raw_sample_row *row); /* the caller's */
	void *ctx;              /* its argument */
	uint64_t *chain;        /* the current row's chain, host order */
	size_t cap;             /* entries @chain holds; grows, never per row */
};

static int sample_row(sqlite3_stmt *s, void *arg)
{
	struct sample_each *e = arg;
	struct sptd_store_raw_sample_row r = {
		.ts = sqlite3_column_int64(s, SAMPLE_TS),
		.cpu = sqlite3_column_int(s, SAMPLE_CPU),
		.pid = sqlite3_column_int(s, SAMPLE_PID),
		.tid = sqlite3_column_int(s, SAMPLE_TID),
	};
	size_t len = 0;
	const unsigned char *bytes = column_bytes(s, SAMPLE_CALLCHAIN, &len);

	r.nr = len / sizeof(uint64_t);
	if (r.nr > e->cap) {
		uint64_t *more = realloc(e->chain, r.nr * sizeof(*more));

		if (!more)
			return -ENOMEM;
		e->chain = more;
		e->cap = r.nr;
	}
	/* stored little-endian (store_raw.c); the blob need not be aligned */
	if (r.nr)
		memcpy(e->chain, bytes, r.nr * sizeof(uint64_t));
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	for (size_t i = 0; i < r.nr; i++)
		e->chain[i] = __builtin_bswap64(e->chain[i]);
#endif
	r.callchain = e->chain;
	return e->fn(e->ctx, &r);
}

int sptd_store_raw_sample_each(struct sptd_store *st,
                               int (*fn)(void *ctx, const struct sptd_store_raw_sample_row *row),
                               void *ctx)
{
	static const char what[] = "reading raw_sample";
	struct sample_each e = { .fn = fn, .ctx = ctx };
	int ret;

	READER_REQUIRE(st, fn, what);
	ret = read_all(st, SPTD_STORE_Q_RAW_SAMPLE,
	               "SELECT ts, cpu, pid, tid, callchain FROM raw_sample ORDER BY ts", what,
	               sample_row, &e);
	if (ret == -ENOMEM)
		sptd_store_fail(st, ret, "%s: out of memory", what);
	free(e.chain);
	return ret;
}

/* ---- raw_mmap ------------------------------------------------------------------- */

enum { MMAP_PID, MMAP_START, MMAP_END, MMAP_PGOFF, MMAP_DSO_ID, MMAP_BIAS };

/* The caller's callback for raw_mmap rows. */
struct mmap_each {
	int (*fn)(void *ctx, const struct sptd_store_raw_mmap_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int mmap_row(sqlite3_stmt *s, void *arg)
{
	const struct mmap_each *e = arg;
	struct sptd_store_raw_mmap_row r = {
		.pid = sqlite3_column_int(s, MMAP_PID),
		.start = (uint64_t)sqlite3_column_int64(s, MMAP_START),
		.end = (uint64_t)sqlite3_column_int64(s, MMAP_END),
		.pgoff = (uint64_t)sqlite3_column_int64(s, MMAP_PGOFF),
		.dso_id = sqlite3_column_int64(s, MMAP_DSO_ID),
		.bias = sqlite3_column_int64(s, MMAP_BIAS),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_raw_mmap_each(struct sptd_store *st,
                             int (*fn)(void *ctx, const struct sptd_store_raw_mmap_row *row),
                             void *ctx)
{
	static const char what[] = "reading raw_mmap";
	struct mmap_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_RAW_MMAP,
	                "SELECT pid, start, end, pgoff, dso_id, bias FROM raw_mmap", what,
	                mmap_row, &e);
}

/* ---- raw_image with its dso's path ----------------------------------------------- */

enum { IMAGE_DSO_ID, IMAGE_ADDR, IMAGE_DATA, IMAGE_PATH };

/* The caller's callback for raw_image rows. */
struct image_each {
	int (*fn)(void *ctx, const struct sptd_store_raw_image_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int image_row(sqlite3_stmt *s, void *arg)
{
	const struct image_each *e = arg;
	struct sptd_store_raw_image_row r = {
		.dso_id = sqlite3_column_int64(s, IMAGE_DSO_ID),
		.addr = (uint64_t)sqlite3_column_int64(s, IMAGE_ADDR),
		.path = (const char *)sqlite3_column_text(s, IMAGE_PATH),
	};

	r.data = column_bytes(s, IMAGE_DATA, &r.len);
	return e->fn(e->ctx, &r);
}

int sptd_store_raw_image_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_raw_image_row *row),
                              void *ctx)
{
	static const char what[] = "reading raw_image";
	struct image_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_RAW_IMAGE,
	                "SELECT i.dso_id, i.addr, i.data, d.path FROM raw_image i "
	                "LEFT JOIN dso d ON d.id = i.dso_id", what, image_row, &e);
}

/* ---- mapped files: raw_mmap dsos without raw_image bytes ------------------------ */

enum { FILE_PID, FILE_DSO_ID, FILE_BIAS, FILE_PATH, FILE_BUILD_ID };

/* The caller's callback for mapped files. */
struct file_each {
	int (*fn)(void *ctx, const struct sptd_store_mapped_file_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int file_row(sqlite3_stmt *s, void *arg)
{
	const struct file_each *e = arg;
	struct sptd_store_mapped_file_row r = {
		.pid = sqlite3_column_int(s, FILE_PID),
		.dso_id = sqlite3_column_int64(s, FILE_DSO_ID),
		.bias = sqlite3_column_int64(s, FILE_BIAS),
		.path = (const char *)sqlite3_column_text(s, FILE_PATH),
		.build_id = (const char *)sqlite3_column_text(s, FILE_BUILD_ID),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_mapped_file_each(struct sptd_store *st,
                                int (*fn)(void *ctx,
                                          const struct sptd_store_mapped_file_row *row),
                                void *ctx)
{
	static const char what[] = "reading the mapped files";
	struct file_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_MAPPED_FILE,
	                "SELECT DISTINCT m.pid, m.dso_id, m.bias, d.path, d.build_id FROM raw_mmap m "
	                "JOIN dso d ON d.id = m.dso_id "
	                "WHERE m.dso_id NOT IN (SELECT dso_id FROM raw_image)", what, file_row, &e);
}

/* ---- symbol --------------------------------------------------------------------- */

enum { SYMBOL_ID, SYMBOL_NAME, SYMBOL_DSO_ID, SYMBOL_ADDR, SYMBOL_SIZE };

/* The caller's callback for symbol rows. */
struct symbol_each {
	int (*fn)(void *ctx, const struct sptd_store_symbol_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int symbol_row(sqlite3_stmt *s, void *arg)
{
	const struct symbol_each *e = arg;
	struct sptd_store_symbol_row r = {
		.id = sqlite3_column_int64(s, SYMBOL_ID),
		.name = (const char *)sqlite3_column_text(s, SYMBOL_NAME),
		.dso_id = sqlite3_column_int64(s, SYMBOL_DSO_ID),
		.addr = (uint64_t)sqlite3_column_int64(s, SYMBOL_ADDR),
		.size = (uint64_t)sqlite3_column_int64(s, SYMBOL_SIZE),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_symbol_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_symbol_row *row),
                           void *ctx)
{
	static const char what[] = "reading symbol";
	struct symbol_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_SYMBOL,
	                "SELECT id, name, dso_id, addr, size FROM symbol", what, symbol_row, &e);
}

/* ---- dso ------------------------------------------------------------------------ */

enum { DSO_ID, DSO_PATH, DSO_BUILD_ID };

/* The caller's callback for dso rows. */
struct dso_each {
	int (*fn)(void *ctx, const struct sptd_store_dso_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int dso_row(sqlite3_stmt *s, void *arg)
{
	const struct dso_each *e = arg;
	struct sptd_store_dso_row r = {
		.id = sqlite3_column_int64(s, DSO_ID),
		.path = (const char *)sqlite3_column_text(s, DSO_PATH),
		.build_id = (const char *)sqlite3_column_text(s, DSO_BUILD_ID),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_dso_each(struct sptd_store *st,
                        int (*fn)(void *ctx, const struct sptd_store_dso_row *row),
                        void *ctx)
{
	static const char what[] = "reading dso";
	struct dso_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_DSO,
	                "SELECT id, path, build_id FROM dso ORDER BY id", what, dso_row, &e);
}

/* ---- trigger -------------------------------------------------------------------- */

enum { TRIGGER_TS, TRIGGER_CPU, TRIGGER_KIND, TRIGGER_DETAIL };

/* The caller's callback for trigger rows. */
struct trigger_each {
	int (*fn)(void *ctx, const struct sptd_store_trigger_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int trigger_row(sqlite3_stmt *s, void *arg)
{
	const struct trigger_each *e = arg;
	struct sptd_store_trigger_row r = {
		.ts = sqlite3_column_int64(s, TRIGGER_TS),
		.cpu = column_opt_int(s, TRIGGER_CPU),
		.kind = (const char *)sqlite3_column_text(s, TRIGGER_KIND),
		.detail = (const char *)sqlite3_column_text(s, TRIGGER_DETAIL),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_trigger_each(struct sptd_store *st,
                            int (*fn)(void *ctx, const struct sptd_store_trigger_row *row),
                            void *ctx)
{
	static const char what[] = "reading trigger";
	struct trigger_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_TRIGGER,
	                "SELECT ts, cpu, kind, detail FROM \"trigger\" ORDER BY ts", what,
	                trigger_row, &e);
}

/* ---- stats ---------------------------------------------------------------------- */

enum { STAT_CPU, STAT_NAME, STAT_VALUE };

/* The caller's callback for stats rows. */
struct stat_each {
	int (*fn)(void *ctx, const struct sptd_store_stat_row *row); /* the caller's */
	void *ctx;              /* its argument */
};

static int stat_row(sqlite3_stmt *s, void *arg)
{
	const struct stat_each *e = arg;
	struct sptd_store_stat_row r = {
		.name = (const char *)sqlite3_column_text(s, STAT_NAME),
		.cpu = column_opt_int(s, STAT_CPU),
		.value = sqlite3_column_int64(s, STAT_VALUE),
	};

	return e->fn(e->ctx, &r);
}

int sptd_store_cpu_stats_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_stat_row *row),
                              void *ctx)
{
	static const char what[] = "reading stats";
	struct stat_each e = { fn, ctx };

	READER_REQUIRE(st, fn, what);
	return read_all(st, SPTD_STORE_Q_CPU_STATS,
	                "SELECT cpu, name, value FROM stats WHERE cpu IS NOT NULL ORDER BY cpu",
	                what, stat_row, &e);
}
