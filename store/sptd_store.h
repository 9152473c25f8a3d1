/* sptd_store.h — the incident file: one SQLite database per incident.
 *
 * Only store/ includes sqlite3.h, and every SQL statement on the incident's
 * tables is written here.  Everything else adds a row of any table with
 * SPTD_STORE_ADD, reads a table's rows as typed row structs with
 * SPTD_STORE_EACH (the structs: sptd_store_rows.h), and counts, allocates
 * ids, looks rows up and deletes a producer's rows through named functions.
 * The generic statement API at the end is for SQL a user wrote (query/)
 * and for tests.
 *
 * Writing: sptd_store_create() creates "PATH.tmp.<pid>.<random>" (O_CREAT |
 * O_EXCL | O_NOFOLLOW, mode 0600, flock()ed while it is written: see
 * store_tmp.c) and begins ONE transaction; sptd_store_commit() commits,
 * fsyncs and renames the file to PATH (never over an existing file).  A
 * crash, an error or sptd_store_destroy() before commit leaves no file at
 * PATH, so a half-written incident never exists; a crash leaves the
 * temporary file, which a cleaner recognises (sptd_col_newfile_stale).
 *
 * Opening (sptd_store_open) treats the file as untrusted: SQLite's
 * defensive mode, untrusted schema, no triggers, no fts3_tokenizer(), no
 * extension loading (store_guard.c).
 *
 * Updating (sysptd decode): sptd_store_open(path, 1, ...) copies the
 * incident into such a temporary file beside it (owner and mode kept) and
 * begins one transaction on the copy; derived tables are cleared
 * (sptd_store_derived_clear, sptd_store_table_clear) and refilled; commit
 * renames the copy over the incident.  destroy without commit, an error or
 * a kill leave the incident as it was, and no hot journal beside it.
 *
 * Units: ts and dur are int64 nanoseconds on the clock named in meta
 * "clock".  ids that other rows refer to (upid, utid, dso, symbol, callsite,
 * slice) are chosen by the caller, so streams can be written without
 * reading back.
 *
 * Errors: every int function returns >= 0 on success, or a negative errno:
 *   -EINVAL  a NULL or out-of-range argument (a caller's mistake)
 *   -ENOMEM  out of memory
 *   -EEXIST  create: PATH already exists
 *   -ENOENT  open: no such file; meta_get: no such key
 *   -EBADMSG open: not an incident file, or corrupt (see sptd_store_errmsg)
 *   -EPROTO  open: written by a newer sysptd (schema version too new)
 *   -ENOSPC  disk full (the transaction is rolled back on destroy)
 *   -EROFS   a write on a store opened read-only, or after commit
 *   -EBUSY   open(writable)/commit: another process holds the file's lock
 *   -ETIMEDOUT a statement ran past sptd_store_set_time_limit()
 *   -EIO     any other SQLite failure (see sptd_store_errmsg)
 * After a failure that ends the transaction (-ENOSPC, -EIO, -ENOMEM) every
 * later add and commit returns the same error: destroy the store.  A
 * rejected row (-EINVAL: bad argument, duplicate id) is not fatal.
 */
#ifndef SPTD_STORE_H
#define SPTD_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_store_rows.h" /* the row structs */

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every schema change; kept in meta "schema_version".  2: flags
 * of sched_slice, thread_state, irq_slice, softirq_slice.  3: table
 * ftrace_event.  4: tables cpu_freq, cpu_idle, ptwrite, watch_hit.
 * 5: raw_switch.prev_state.  6: raw_mmap.until_ts.  7: raw_sample.ustack.  8: mem_sample, raw_spe.
 * Older files are upgraded when opened for update and read as the current
 * schema (added columns NULL, added tables empty) when opened read-only. */
#define SPTD_STORE_SCHEMA_VERSION 8

struct sptd_store;
struct sptd_store_stmt;

/* The name of @table as in the schema ("sched_slice"); NULL when @table is
 * out of range.  Static storage. */
const char *sptd_store_table_name(enum sptd_store_table_id table);

/* --- lifetime ----------------------------------------------------------- */

/* Create a new incident at @path (see top of file).  *out is freed with
 * sptd_store_destroy(); on failure *out is NULL and the reason is in
 * sptd_store_errmsg(NULL).  Writes meta schema_version. */
int sptd_store_create(const char *path, struct sptd_store **out);

/* Open an existing incident: read-only (@writable 0: query, export) or for
 * update in one transaction on a private copy (@writable 1: decode; needs
 * room for the copy and write access to the incident's directory).  Checks
 * that the file is an incident of a schema this build understands (a FIFO
 * or device at @path is refused, never waited on); one of an older schema
 * gets the columns added since (for update: in the copy; read-only: as
 * NULL in views of the same names).  On failure *out is NULL and the
 * reason is in sptd_store_errmsg(NULL). */
int sptd_store_open(const char *path, int writable, struct sptd_store **out);
/* sptd_store_open(read-only) of the file open at @fd (duplicated: the
 * caller keeps @fd), named @label in messages: what a caller opened once
 * and looked at (its mode) is the file read, whatever is at its path by
 * then. */
int sptd_store_open_fd(int fd, const char *label, struct sptd_store **out);
/* sptd_store_open(@path, 1) in two steps, for a process that gives root
 * up in between: sptd_store_open_update checks the incident and makes the
 * private copy beside it (its owner and mode: root's work); then
 * sptd_store_open_finish lets SQLite open that copy through its
 * descriptor, checks it and starts the update (SQLite parses the file as
 * the user).  The store from _update is good only for _finish or
 * sptd_store_destroy; when _finish fails (the reason in
 * sptd_store_errmsg(NULL), as sptd_store_open), destroy it. */
int sptd_store_open_update(const char *path, struct sptd_store **out);
int sptd_store_open_finish(struct sptd_store *st);
/* Open the file at @path to read it later with sptd_store_open_fd, as
 * sptd_store_open would (never waiting on a FIFO or a terminal): the
 * descriptor (close-on-exec), or a negative errno with the reason in
 * sptd_store_errmsg(NULL).  A reader that must give up root opens the
 * file first, then gives root up, then lets SQLite read it. */
int sptd_store_open_source(const char *path);

/* Commit the transaction; for a created store also fsync and rename into
 * place (-EEXIST if PATH appeared meanwhile: nothing is replaced, destroy
 * removes the temporary file).  After commit only reads are allowed, and
 * other processes may read the file.  -EROFS on a read-only store, -EINVAL
 * when already committed. */
int sptd_store_commit(struct sptd_store *st);

/* Roll back whatever is uncommitted, remove a created store's temporary
 * file, close and free.  Accepts NULL.  Statements still prepared on @st
 * stop working (step returns -EINVAL) but must still be finalized. */
void sptd_store_destroy(struct sptd_store *st);

/* Hand-off of temporary files: when a command parses in a child that gave
 * up root, the parent (still root) renames the finished file.  @fn is
 * called with CREATED when a temporary file exists (@tmp, to become
 * @path), and with READY instead of the rename at commit (the file is
 * synced; @replace: over an existing file).  It returns 1 when it took the
 * file over (then the store neither renames nor removes it), 0 when the
 * store should rename it itself, negative to fail.  One per process; NULL
 * (the default) renames in the store. */
#define SPTD_STORE_HANDOFF_CREATED 1
#define SPTD_STORE_HANDOFF_READY   2
typedef int (*sptd_store_handoff_fn)(int what, const char *tmp, const char *path, int replace);
void sptd_store_set_handoff(sptd_store_handoff_fn fn);
/* Who opens the directory of a temporary file (@update 1: decode's copy,
 * 0: a new incident): the descriptor or -errno (it may refuse a user's link
 * or a directory the sudo user may not write).  NULL (default): open(2). */
typedef int (*sptd_store_dir_open_fn)(const char *dir, int update);
void sptd_store_set_dir_open(sptd_store_dir_open_fn fn);

/* Human-readable detail of the last failure on @st ("" if none); it names
 * what failed and the file.  Valid until the next call on @st.  With @st
 * NULL: the last failed sptd_store_create/open of the calling thread. */
const char *sptd_store_errmsg(const struct sptd_store *st);

/* A row of @st makes no sense: sptd_store_errmsg() then says "PATH is
 * damaged: <what>; take it again ...".  -EBADMSG (-EINVAL for NULL). */
int sptd_store_damaged(struct sptd_store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Raw rows decode cannot use, before any is decoded: a @table (raw_sample,
 * raw_pt, raw_ftrace_page) row whose cpu is no CPU number, and with
 * @max_chain a raw_sample chain longer or not of whole entries: 0, or
 * -EBADMSG as sptd_store_damaged; -EINVAL. */
int sptd_store_raw_check(struct sptd_store *st, const char *table, int max_chain);
/* The path the store will have (created) or has (opened). */
const char *sptd_store_path(const struct sptd_store *st);

/* --- meta ---------------------------------------------------------------- */

/* Set (or replace) @key.  "schema_version" belongs to the store: -EINVAL. */
int sptd_store_meta_set(struct sptd_store *st, const char *key, const char *value);
/* Set @key to @value in decimal. */
int sptd_store_meta_set_int(struct sptd_store *st, const char *key, int64_t value);
/* Copies the value into @buf (always NUL-terminated, truncated to @len);
 * returns its full length, -ENOENT if the key is absent. */
int sptd_store_meta_get(struct sptd_store *st, const char *key, char *buf, size_t len);
/* -ENOENT if absent, -EINVAL if the value is not a decimal integer. */
int sptd_store_meta_get_int(struct sptd_store *st, const char *key, int64_t *value);

/* --- rows: one struct per table, one add and one reader for all ---------- *
 *
 * Each table is described once in store/store_tables.c (its columns, how
 * each sits in the table's row struct, what add refuses and what
 * stores NULL); CREATE TABLE, the INSERT binding and the readers follow
 * that description.  A row struct has a field per column in column order,
 * less an id the store assigns.  Fields noted "< 0 NULL" store NULL for a
 * negative value and read back as -1; "0 NULL" likewise for 0.
 *
 * Readers run one statement the store prepares once and reuses, and call
 * @fn(@ctx, row) for every row in the order stated, with no allocation per
 * row.  Pointers in a row (text, bytes) are borrowed until @fn returns:
 * copy what must live longer.  NULL text stays NULL; bytes are NULL for a
 * NULL value and a valid pointer with len 0 for an empty blob.  @fn
 * returns 0 to go on, > 0 to stop (the reader returns that value), or a
 * negative errno to stop with it.  @fn may add rows, and call lookups and
 * other readers (a reader called from its own @fn gets a statement of its
 * own).  Readers work on read-only and committed stores.  They return 0
 * after the last row, @fn's value when it stopped, or: -EINVAL (NULL @st or
 * @fn, closed store), -ENOMEM, -EBADMSG (a corrupt file), -EIO. */

/* Add one row of @table from @row, the table's row struct (struct
 * sptd_store_<table>_row; the chunk tables raw_pt, raw_sideband and
 * raw_ftrace_page share struct sptd_store_chunk_row).  -EINVAL for a NULL
 * or out-of-range argument or a row its table refuses (the column named in
 * sptd_store_errmsg), or a store error (see the top of this file). */
int sptd_store_add(struct sptd_store *st, enum sptd_store_table_id table, const void *row);
/* Hand every row of @table, as its row struct, to @fn, in the table's
 * order: trigger and raw_sample by ts, dso by id, the chunk tables by cpu
 * then seq, the others as stored.  @table may also be a view
 * (SPTD_STORE_VIEW_LIST, sptd_store_rows.h): its rows in its order. */
int sptd_store_each(struct sptd_store *st, enum sptd_store_table_id table,
                    int (*fn)(void *ctx, const void *row), void *ctx);
/* The two for table (or view) T named in lower case (gap, raw_pt, ...),
 * typed: the row from its fields in column order, and @fn taking T's row
 * struct. */
#define SPTD_STORE_ADD(st, T, ...)                                                 \
	sptd_store_add((st), SPTD_STORE_T_OF_##T, &(const struct sptd_store_##T##_row){ __VA_ARGS__ })
#define SPTD_STORE_EACH(st, T, fn, ctx)                                            \
	sptd_store_each((st), SPTD_STORE_T_OF_##T, (int (*)(void *, const void *))(1 ? (fn) : \
	                (int (*)(void *, const struct sptd_store_##T##_row *))0), (ctx))
/* The row structs of tables that share one. */
#define sptd_store_raw_pt_row sptd_store_chunk_row
#define sptd_store_raw_spe_row sptd_store_chunk_row
#define sptd_store_raw_sideband_row sptd_store_chunk_row
#define sptd_store_raw_ftrace_page_row sptd_store_chunk_row
#define sptd_store_raw_ftrace_format_row sptd_store_ftrace_format_row
#define sptd_store_stats_row sptd_store_stat_row

/* The bytes of the file dso @dso_id names (an executable or library, as
 * the image cache holds it), embedded by --portable so the incident decodes
 * without the recording machine's files; @build_id hex or NULL.  The table
 * raw_file is created on first use (incidents without embedded files do not
 * have it).  -EINVAL also when @dso_id already has a file. */
int sptd_store_raw_file_add(struct sptd_store *st, int64_t dso_id, const char *build_id,
                            const void *data, size_t len);
/* Link the off-CPU stack @callsite_id of a switch at @at and the kernel
 * function it blocked in (the name of symbol @blocked_symbol_id; -1
 * unknown) to the thread_state row of @utid that starts nearest to @at
 * within [@from, @to], if that row is a blocking one (not runnable) not
 * linked yet.  1 linked, 0 no such row. */
int sptd_store_thread_state_block(struct sptd_store *st, int64_t utid, int64_t at, int64_t from,
                                  int64_t to, int64_t callsite_id, int64_t blocked_symbol_id);
/* The runnable row of @tid ending at @end, else nearest within @slack_ns:
 * its *@dur and *@flags.  1 found, 0 none, -EINVAL, or a store error. */
int sptd_store_thread_state_wait(struct sptd_store *st, int tid, int64_t end, int64_t slack_ns,
                                 int64_t *dur, int64_t *flags);

/* --- slices in bulk (store_bulk.c, store_writer.c) ----------------------- */

/* Add @n slice rows, checked one by one as sptd_store_add does, in as few
 * statements as possible (a prepared INSERT of many rows at once; rows in
 * id order are appended, the cheapest insert).  Returns 0, -EINVAL (the
 * first bad row, none added after it), or a store error. */
int sptd_store_slices_add(struct sptd_store *st, const struct sptd_store_slice_row *rows,
                          size_t n);
/* From now to the commit, keep the slice rows sptd_store_slices_add is
 * given in memory and write them at the commit as finished b-tree pages,
 * faster than SQL inserts and index builds (store_bulk.c).  Anything that
 * reads or edits slice before the commit through this API sees them
 * (they are inserted then).  SPTD_STORE_BULK=sql in the environment
 * keeps the SQL path.  0, or -EINVAL. */
int sptd_store_slices_defer(struct sptd_store *st);
/* The slice rows kept are complete (the decode is done): their pages
 * start building on other threads now, while the caller finishes the
 * incident; the commit uses them unless the rows changed since.  0, or
 * -EINVAL for a NULL @st; anything that stops it is left to the commit. */
int sptd_store_slices_ready(struct sptd_store *st);
/* Slice rows the last commit wrote as pages (0: none, or through SQL);
 * for tests and benchmarks. */
size_t sptd_store_slices_paged(const struct sptd_store *st);
/* ---- the bulk writer (store_writer.c) ----------------------------------------
 * A thread that owns the store's connection while it runs: rows queued
 * through it (copied, strings too) are inserted in order on that thread,
 * in batches, while the caller goes on producing more.  Between start and
 * finish the caller must not use @st directly.  After a failure the
 * writer drops what follows: every later call returns that error. */
struct sptd_store_writer;
/* Start a writer for the writable store @st.  -EINVAL, -EROFS, the sticky
 * error, -ENOMEM, -EAGAIN (no thread). */
int sptd_store_writer_start(struct sptd_store *st, struct sptd_store_writer **out);
/* Queue @n slice rows (kind must be one of SPTD_SLICE_*, static storage). */
int sptd_store_writer_slices(struct sptd_store_writer *w, const struct sptd_store_slice_row *rows,
                             size_t n);
/* Queue a symbol, gap or stats row: the fields of its row struct. */
int sptd_store_writer_symbol(struct sptd_store_writer *w, int64_t id, const char *name,
                             int64_t dso_id, uint64_t addr, uint64_t size);
int sptd_store_writer_gap(struct sptd_store_writer *w, int64_t ts, int64_t dur, int cpu,
                          const char *reason);
int sptd_store_writer_stat(struct sptd_store_writer *w, const char *name, int cpu,
                           int64_t value);
/* Wait until every queued row is in, stop the thread and free @w (NULL:
 * nothing).  0, or the first failure (the store's message says what). */
int sptd_store_writer_finish(struct sptd_store_writer *w);

/* Delete every row of @table, one of the derived tables (process, thread,
 * sched_slice, thread_state, irq_slice, softirq_slice, slice, sample,
 * callsite, gap, stats).  -EINVAL for any other name (raw tables, meta,
 * trigger, symbol, dso are never cleared). */
int sptd_store_table_clear(struct sptd_store *st, const char *table);

/* --- clearing what a producer wrote (store_schema.c, store_clear.c) ------ */

/* Empty every derived table (process, thread, sched_slice, thread_state,
 * irq_slice, softirq_slice, slice, sample, callsite, gap, stats), in schema
 * order: what `sysptd decode` does before rebuilding.  -EINVAL (NULL or
 * closed store), -EROFS (read-only or committed), the sticky error of a
 * failed transaction, -ENOSPC, -EIO. */
int sptd_store_derived_clear(struct sptd_store *st);
/* Delete the slice and sample rows of every thread whose process is not one
 * of @pids (sysptd -p; process and thread rows must be in).  -EINVAL for
 * no pid, a pid <= 0, or more than 256. */
int sptd_store_keep_pids(struct sptd_store *st, const int *pids, int n);
/* Delete the gap rows whose reason starts with @prefix (a producer's tag
 * such as "pt: "; ASCII letters match in either case, as SQL LIKE does).
 * Returns the number of rows deleted.  -EINVAL (NULL, empty @prefix),
 * -ENOMEM, -EROFS, the sticky error, -ENOSPC, -EIO. */
int sptd_store_gap_clear(struct sptd_store *st, const char *prefix);
/* Delete the stats rows named @names[0..@n) (every CPU's and the
 * whole-incident one).  Returns the number of rows deleted.  -EINVAL (NULL
 * store, @names NULL with @n > 0, a NULL name), -EROFS, the sticky error,
 * -ENOSPC, -EIO. */
int sptd_store_stats_clear(struct sptd_store *st, const char *const *names, size_t n);

/* --- counts, ids and lookups (store_lookup.c) ---------------------------- *
 *
 * Each runs one statement the store prepares once and reuses.  They work on
 * read-only and committed stores.  Errors besides those listed: -EBADMSG (a
 * corrupt file), -ENOMEM, -EIO. */

/* The number of rows of @table in *@n.  -EINVAL (NULL, @table out of
 * range, closed store). */
int sptd_store_count(struct sptd_store *st, enum sptd_store_table_id table, int64_t *n);
/* How many raw_mmap rows @pid (-1: the kernel) has in *@n; -EINVAL (NULL, closed). */
int sptd_store_raw_mmap_count(struct sptd_store *st, int pid, int64_t *n);
/* The next free caller-chosen id of @table (process.upid, thread.utid,
 * slice.id, symbol.id, dso.id, callsite.id): one above the largest stored,
 * 1 for an empty table, in *@id.  -EINVAL (NULL, closed store, @table out of
 * range or one whose ids the store assigns). */
int sptd_store_next_id(struct sptd_store *st, enum sptd_store_table_id table, int64_t *id);
/* The dso row of @path whose build-id is @build_id (hex; NULL matches a row
 * without one): 1 and its id in *@id, 0 when there is none (*@id
 * untouched).  -EINVAL (NULL @st, @path or @id, closed store). */
int sptd_store_dso_find(struct sptd_store *st, const char *path, const char *build_id,
                        int64_t *id);
/* The first dso row of @path (the lowest id), whatever its build-id: 1 and
 * its id in *@id, 0 none.  -EINVAL (NULL @st, @path or @id, closed store). */
int sptd_store_dso_find_path(struct sptd_store *st, const char *path, int64_t *id);
/* The symbol row of @dso_id with start @addr and @name: 1 and its id in
 * *@id, 0 none.  -EINVAL (NULL @st, @name or @id, closed store). */
int sptd_store_symbol_find(struct sptd_store *st, int64_t dso_id, uint64_t addr,
                           const char *name, int64_t *id);
/* A raw_mmap row of @pid for [@start, @end) of dso @dso_id: 1, 0 none, -EINVAL. */
int sptd_store_raw_mmap_has(struct sptd_store *st, int pid, uint64_t start, uint64_t end,
                            int64_t dso_id);
/* The embedded bytes of dso @dso_id (sptd_store_raw_file_add): calls
 * @fn(@ctx, data, len) once, with bytes borrowed until @fn returns, and
 * returns 1, or @fn's negative value.  0 without calling @fn when the
 * incident embeds no file for @dso_id (or no file at all, or an empty
 * one).  -EINVAL (NULL @st or @fn, closed store). */
int sptd_store_raw_file_read(struct sptd_store *st, int64_t dso_id,
                             int (*fn)(void *ctx, const void *data, size_t len), void *ctx);

/* --- user SQL: the generic statement API (query/, tests) ----------------- */

enum sptd_store_type {
	SPTD_STORE_NULL = 0,
	SPTD_STORE_INT,
	SPTD_STORE_FLOAT,
	SPTD_STORE_TEXT,
	SPTD_STORE_BLOB,
};

/* Compile one SQL statement.  On a read-only store only statements that do
 * not write are accepted (-EROFS otherwise, with the reason in errmsg);
 * a syntax error is -EINVAL with SQLite's message in errmsg.  More than one
 * statement, BEGIN/COMMIT/SAVEPOINT and ATTACH/DETACH are -EINVAL (the store
 * owns the transaction).  Free with sptd_store_finalize(). */
int sptd_store_prepare(struct sptd_store *st, const char *sql,
                       struct sptd_store_stmt **out);
/* Bind parameter @idx (1-based; -EINVAL out of range or while the statement
 * is running: reset it first).  Text is copied; NULL text binds NULL. */
int sptd_store_bind_int(struct sptd_store_stmt *stmt, int idx, int64_t value);
int sptd_store_bind_text(struct sptd_store_stmt *stmt, int idx, const char *value);
/* 1: a row is ready; 0: done; < 0: error (-EIO, -EBADMSG on corruption). */
int sptd_store_step(struct sptd_store_stmt *stmt);
int sptd_store_reset(struct sptd_store_stmt *stmt);
int sptd_store_column_count(struct sptd_store_stmt *stmt);
const char *sptd_store_column_name(struct sptd_store_stmt *stmt, int col);
enum sptd_store_type sptd_store_column_type(struct sptd_store_stmt *stmt, int col);
int64_t sptd_store_column_int(struct sptd_store_stmt *stmt, int col);
double sptd_store_column_double(struct sptd_store_stmt *stmt, int col);
/* Borrowed: valid until the next step/reset/finalize of @stmt.  NULL for
 * NULL.  A text with NUL bytes inside comes back whole, each NUL as '?'
 * (out of memory: cut at the first, as SQLite gives it). */
const char *sptd_store_column_text(struct sptd_store_stmt *stmt, int col);
/* The same text as SQLite keeps it, NUL bytes and all: *len bytes (0 for
 * NULL or a bad @col).  Borrowed like column_text. */
const char *sptd_store_column_text_n(struct sptd_store_stmt *stmt, int col, size_t *len);
/* Borrowed like column_text; NULL for NULL, a non-NULL pointer with *len 0
 * for an empty blob.  Column accessors return 0/NULL for a bad @col. */
const void *sptd_store_column_blob(struct sptd_store_stmt *stmt, int col, size_t *len);
/* Accepts NULL. */
void sptd_store_finalize(struct sptd_store_stmt *stmt);

/* Stop a statement of @st that runs longer than @limit_ns (0: no limit,
 * the default): the clock starts at this call and again at each
 * statement's first sptd_store_step.  A stopped
 * statement's step returns -ETIMEDOUT, with a message naming the limit.
 * For SQL a user wrote: a runaway recursive CTE ends instead of running
 * forever.  -EINVAL (NULL, closed, negative). */
int sptd_store_set_time_limit(struct sptd_store *st, int64_t limit_ns);

/* Text of a file (a value, a name) on its way to a terminal: each control
 * character of @s[0..@n) becomes '?', so that a newline or an escape in
 * a file cannot forge lines or drive the terminal. */
void sptd_store_printable(char *s, size_t n);

/* Convenience for one-value queries ("SELECT count(*) ..."): -ENOENT when
 * no row or the value is NULL. */
int sptd_store_query_int(struct sptd_store *st, const char *sql, int64_t *value);

/* List of the names of all incident tables in schema order (NULL-terminated),
 * for reports and tests.  Static storage. */
const char *const *sptd_store_tables(void);

#ifdef __cplusplus
}
#endif
#endif /* SPTD_STORE_H */
