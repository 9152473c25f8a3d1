/* store_profile.c — the reader of watchpoint hits (sptd_store_profile.h):
 * each hit with the thread row of its tid, one named statement of
 * store_named.c and a row function filling the struct from the columns in
 * SELECT order (a hit's values are NULL together: the row says which). */
#include <errno.h>

#include "store-local.h"

/* The caller's row callback and its argument. */
struct profile_reader {
	int (*hit)(void *ctx, const struct sptd_store_watch_hit_row *row, int64_t utid);
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

	return e->hit(e->ctx, &r, column_or(s, WH_UTID, -1));
}

int sptd_store_watch_hit_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_watch_hit_row *row,
                                        int64_t utid),
                              void *ctx)
{
	struct profile_reader e = { .hit = fn, .ctx = ctx };

	/* the thread row of the tid: the newest one of that tid (a reused tid
	 * has several; the hit is the live one's) */
	return sptd_store_read_rows(st, fn != NULL, SPTD_STORE_Q_WATCH_HIT,
	                 "SELECT w.ts, w.cpu, w.tid, w.ip, w.function, w.old_value, w.new_value, "
	                 "w.silent, w.trigger, (SELECT max(t.utid) FROM thread t WHERE t.tid = w.tid) "
	                 "FROM watch_hit w ORDER BY w.ts, w.rowid",
	                 "reading watch_hit", hit_row, &e);
}
