/* store_profile.c — the profile readers (sptd_store_profile.h): callsite
 * chains, samples, off-CPU stacks, threads with their processes, and
 * watchpoint hits, each one named statement of store_named.c and a row
 * function filling the struct from the columns in SELECT order. */
#include <errno.h>

#include "store-local.h"

/* The caller's row callback, typed by its row, and its argument. */
struct profile_reader {
	union {
		int (*callsite)(void *ctx, const struct sptd_store_frame_row *row);
		int (*stack)(void *ctx, const struct sptd_store_stack_row *row);
		int (*thread)(void *ctx, const struct sptd_store_thread_info_row *row);
		int (*hit)(void *ctx, const struct sptd_store_watch_hit_row *row, int64_t utid);
	} fn;                   /* the member the row function calls */
	void *ctx;              /* the caller's argument */
};

static int is_null(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL;
}

/* Column @col as an int64, @none for NULL. */
static int64_t column_or(sqlite3_stmt *s, int col, int64_t none)
{
	return is_null(s, col) ? none : sqlite3_column_int64(s, col);
}

enum { CS_ID, CS_PARENT, CS_DEPTH, CS_SYMBOL, CS_ADDR };

static int callsite_row(sqlite3_stmt *s, void *arg)
{
	const struct profile_reader *e = arg;
	struct sptd_store_frame_row r = {
		.id = sqlite3_column_int64(s, CS_ID),
		.parent_id = sqlite3_column_int64(s, CS_PARENT),
		.depth = sqlite3_column_int64(s, CS_DEPTH),
		.symbol_id = sqlite3_column_int64(s, CS_SYMBOL),
		.addr = (uint64_t)sqlite3_column_int64(s, CS_ADDR),
		.has_parent = !is_null(s, CS_PARENT),
		.has_symbol = !is_null(s, CS_SYMBOL),
	};

	return e->fn.callsite(e->ctx, &r);
}

int sptd_store_callsite_each(struct sptd_store *st,
                             int (*fn)(void *ctx, const struct sptd_store_frame_row *row),
                             void *ctx)
{
	struct profile_reader e = { .fn.callsite = fn, .ctx = ctx };

	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_CALLSITE,
	                 "SELECT id, parent_id, depth, symbol_id, addr FROM callsite ORDER BY id",
	                 "reading callsite", callsite_row, &e);
}

enum { STK_TS, STK_DUR, STK_UTID, STK_CALLSITE, STK_CPU, STK_STATE };

static int stack_row(sqlite3_stmt *s, void *arg)
{
	const struct profile_reader *e = arg;
	int64_t cpu = column_or(s, STK_CPU, -1);
	struct sptd_store_stack_row r = {
		.ts = sqlite3_column_int64(s, STK_TS),
		.dur = sqlite3_column_int64(s, STK_DUR),
		.utid = column_or(s, STK_UTID, -1),
		.callsite_id = column_or(s, STK_CALLSITE, -1),
		.cpu = cpu >= 0 && cpu <= INT32_MAX ? (int)cpu : -1,
		.state = (const char *)sqlite3_column_text(s, STK_STATE),
	};

	return e->fn.stack(e->ctx, &r);
}

int sptd_store_sample_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_stack_row *row),
                           void *ctx)
{
	struct profile_reader e = { .fn.stack = fn, .ctx = ctx };

	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_SAMPLE,
	                 "SELECT ts, 0, utid, callsite_id, cpu, NULL FROM sample ORDER BY ts, id",
	                 "reading sample", stack_row, &e);
}

int sptd_store_offcpu_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_stack_row *row),
                           void *ctx)
{
	struct profile_reader e = { .fn.stack = fn, .ctx = ctx };

	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_OFFCPU,
	                 "SELECT ts, dur, utid, callsite_id, cpu, state FROM thread_state "
	                 "WHERE callsite_id IS NOT NULL ORDER BY ts, id",
	                 "reading thread_state", stack_row, &e);
}

enum { TH_UTID, TH_TID, TH_PID, TH_NAME, TH_PROCESS };

static int thread_row(sqlite3_stmt *s, void *arg)
{
	const struct profile_reader *e = arg;
	struct sptd_store_thread_info_row r = {
		.utid = sqlite3_column_int64(s, TH_UTID),
		.tid = sqlite3_column_int64(s, TH_TID),
		.pid = column_or(s, TH_PID, -1),
		.name = (const char *)sqlite3_column_text(s, TH_NAME),
		.process = (const char *)sqlite3_column_text(s, TH_PROCESS),
	};

	return e->fn.thread(e->ctx, &r);
}

int sptd_store_thread_each(struct sptd_store *st,
                           int (*fn)(void *ctx, const struct sptd_store_thread_info_row *row),
                           void *ctx)
{
	struct profile_reader e = { .fn.thread = fn, .ctx = ctx };

	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_THREAD,
	                 "SELECT t.utid, t.tid, p.pid, t.name, p.name FROM thread t "
	                 "LEFT JOIN process p ON p.upid = t.upid ORDER BY t.utid",
	                 "reading thread", thread_row, &e);
}

enum { WH_TS, WH_CPU, WH_TID, WH_IP, WH_FUNCTION, WH_OLD, WH_NEW, WH_SILENT,
       WH_TRIGGER, WH_UTID };

static int hit_row(sqlite3_stmt *s, void *arg)
{
	const struct profile_reader *e = arg;
	int64_t cpu = column_or(s, WH_CPU, -1);
	struct sptd_store_watch_hit_row r = {
		.ts = sqlite3_column_int64(s, WH_TS),
		.cpu = cpu >= 0 && cpu <= INT32_MAX ? (int)cpu : -1,
		.tid = sqlite3_column_int(s, WH_TID),
		.ip = (uint64_t)sqlite3_column_int64(s, WH_IP),
		.function = (const char *)sqlite3_column_text(s, WH_FUNCTION),
		.watch = !is_null(s, WH_OLD) && !is_null(s, WH_NEW),
		.old_value = (uint64_t)sqlite3_column_int64(s, WH_OLD),
		.new_value = (uint64_t)sqlite3_column_int64(s, WH_NEW),
		.silent = (int)column_or(s, WH_SILENT, -1),
		.trigger = (const char *)sqlite3_column_text(s, WH_TRIGGER),
	};

	return e->fn.hit(e->ctx, &r, column_or(s, WH_UTID, -1));
}

int sptd_store_watch_hit_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_watch_hit_row *row,
                                        int64_t utid),
                              void *ctx)
{
	struct profile_reader e = { .fn.hit = fn, .ctx = ctx };

	/* the thread row of the tid: the newest one of that tid (a reused tid
	 * has several; the hit is the live one's) */
	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_WATCH_HIT,
	                 "SELECT w.ts, w.cpu, w.tid, w.ip, w.function, w.old_value, w.new_value, "
	                 "w.silent, w.trigger, (SELECT max(t.utid) FROM thread t WHERE t.tid = w.tid) "
	                 "FROM watch_hit w ORDER BY w.ts, w.rowid",
	                 "reading watch_hit", hit_row, &e);
}
