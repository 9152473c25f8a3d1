/* sptd_store.h — the incident file: one SQLite database per incident.
 *
 * Only store/ includes sqlite3.h.  Everything else writes rows through the
 * typed add functions below and reads through the small statement API at
 * the end of this header.
 *
 * Writing: sptd_store_create() opens "PATH.tmp.<pid>" and begins ONE
 * transaction; sptd_store_commit() commits, fsyncs and renames the file to
 * PATH with mode 0600.  A crash, an error or sptd_store_destroy() before
 * commit leaves no file at PATH, so a half-written incident never exists.
 *
 * Updating (sysptd decode): sptd_store_open(path, 1, ...) begins one
 * transaction on the existing file; derived tables are cleared with
 * sptd_store_table_clear() and refilled; sptd_store_commit() makes it
 * visible.  destroy without commit rolls back: nothing is lost.
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
 *   -EIO     any other SQLite failure (see sptd_store_errmsg)
 * After a failure that ends the transaction (-ENOSPC, -EIO, -ENOMEM) every
 * later add and commit returns the same error: destroy the store.  A
 * rejected row (-EINVAL: bad argument, duplicate id) is not fatal.
 *
 * Arguments: ts may be any int64; dur must be >= 0 (-EINVAL otherwise: a
 * slice open at the end is closed at the window end and flagged); a cpu
 * column that is not nullable rejects cpu < 0.  Name-like strings (process,
 * thread, irq, softirq names, trigger detail, comm) may be NULL and store
 * NULL; identifying strings (meta key/value, trigger kind, state, slice
 * kind, dso path, symbol name, gap reason, stat name, format name/text) may
 * not.  uint64 values (addresses, sizes) are stored as their int64 two's
 * complement: read them back with sptd_store_column_int and cast.
 */
#ifndef SPTD_STORE_H
#define SPTD_STORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every incompatible schema change; kept in meta "schema_version". */
#define SPTD_STORE_SCHEMA_VERSION 1

struct sptd_store;
struct sptd_store_stmt;

/* --- lifetime ----------------------------------------------------------- */

/* Create a new incident at @path (see top of file).  *out is freed with
 * sptd_store_destroy(); on failure *out is NULL and the reason is in
 * sptd_store_errmsg(NULL).  Writes meta schema_version. */
int sptd_store_create(const char *path, struct sptd_store **out);

/* Open an existing incident: read-only (@writable 0: query, export) or for
 * update in one transaction (@writable 1: decode).  Checks that the file is
 * an incident of a schema this build understands.  On failure *out is NULL
 * and the reason is in sptd_store_errmsg(NULL). */
int sptd_store_open(const char *path, int writable, struct sptd_store **out);

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

/* Human-readable detail of the last failure on @st ("" if none); it names
 * what failed and the file.  Valid until the next call on @st.  With @st
 * NULL: the last failed sptd_store_create/open of the calling thread. */
const char *sptd_store_errmsg(const struct sptd_store *st);

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

/* --- derived tables ------------------------------------------------------ */

/* @cpu < 0 stores NULL (not tied to a CPU); @detail may be NULL. */
int sptd_store_trigger_add(struct sptd_store *st, int64_t ts, int cpu,
                           const char *kind, const char *detail);
/* @upid >= 0 (caller-chosen key); @name and @cmdline may be NULL. */
int sptd_store_process_add(struct sptd_store *st, int64_t upid, int pid,
                           const char *name, const char *cmdline);
/* @utid >= 0 (caller-chosen key); @upid < 0 stores NULL (process
 * unknown); @name may be NULL. */
int sptd_store_thread_add(struct sptd_store *st, int64_t utid, int tid,
                          int64_t upid, const char *name);
/* @end_state: kernel letter(s) as ftrace prints prev_state ("R", "R+", "S",
 * "D", ...), NULL while still running at the window end. */
int sptd_store_sched_slice_add(struct sptd_store *st, int64_t ts, int64_t dur,
                               int cpu, int64_t utid, const char *end_state,
                               int priority);
/* @state: "Running", "R" (runnable), "R+" (preempted), "S", "D", ...; @cpu < 0
 * and @waker_utid < 0 store NULL. */
int sptd_store_thread_state_add(struct sptd_store *st, int64_t ts, int64_t dur,
                                int64_t utid, const char *state, int cpu,
                                int64_t waker_utid);
int sptd_store_irq_slice_add(struct sptd_store *st, int64_t ts, int64_t dur,
                             int cpu, int irq, const char *name, int ret);
int sptd_store_softirq_slice_add(struct sptd_store *st, int64_t ts, int64_t dur,
                                 int cpu, int vec, const char *name);

/* slice.kind */
#define SPTD_SLICE_USER     "user"
#define SPTD_SLICE_KERNEL   "kernel"
#define SPTD_SLICE_SYSCALL  "syscall"
#define SPTD_SLICE_IRQ      "irq"
/* slice.flags bits */
#define SPTD_SLICE_F_START_TRUNCATED 0x1 /* began before the data: starts at window/data start */
#define SPTD_SLICE_F_END_TRUNCATED   0x2 /* still open at the end: ends at window/data end */
#define SPTD_SLICE_F_INFERRED        0x4 /* frame created for a return on an empty stack */
#define SPTD_SLICE_F_TAILCALL        0x8 /* entered by a jump that replaced the caller's frame */
#define SPTD_SLICE_F_NO_TIME        0x10 /* trace had no timing packets: ts is order, not time */

/* @id, @depth >= 0; @kind one of SPTD_SLICE_* (-EINVAL otherwise);
 * @parent_id < 0 and @symbol_id < 0 store NULL. */
int sptd_store_slice_add(struct sptd_store *st, int64_t id, int64_t ts, int64_t dur,
                         int cpu, int64_t utid, int depth, int64_t parent_id,
                         int64_t symbol_id, const char *kind, int flags);
/* @build_id: hex string or NULL. */
int sptd_store_dso_add(struct sptd_store *st, int64_t id, const char *path,
                       const char *build_id);
/* @addr: start of the symbol in the dso's own address space (ELF vaddr for
 * files, kernel virtual address for the kernel). */
int sptd_store_symbol_add(struct sptd_store *st, int64_t id, const char *name,
                          int64_t dso_id, uint64_t addr, uint64_t size);
/* @callsite_id < 0 stores NULL (no stack). */
/* @utid < 0 stores NULL: the kernel names no task for a sample taken
 * while a task was past exit (perf reports pid/tid -1). */
int sptd_store_sample_add(struct sptd_store *st, int64_t ts, int cpu,
                          int64_t utid, int64_t callsite_id);
/* One frame of a call stack; @parent_id < 0 for a root frame (outermost
 * caller); @symbol_id < 0 for an unresolved address. */
int sptd_store_callsite_add(struct sptd_store *st, int64_t id, int64_t parent_id,
                            int depth, int64_t symbol_id, uint64_t addr);
/* @cpu < 0 stores NULL (applies to all CPUs). */
int sptd_store_gap_add(struct sptd_store *st, int64_t ts, int64_t dur, int cpu,
                       const char *reason);
/* @cpu < 0 stores NULL (whole-incident figure). */
int sptd_store_stat_add(struct sptd_store *st, const char *name, int cpu, int64_t value);

/* --- raw tables: the capture itself, from which decode rebuilds --------- */

/* One ftrace ring-buffer page of @cpu, in capture order @seq. */
int sptd_store_raw_ftrace_page_add(struct sptd_store *st, int cpu, int seq,
                                   const void *page, size_t len);
/* A format file needed to parse the pages: @name is "header_page",
 * "header_event", "SYSTEM/EVENT" or "kallsyms-less" helper data. */
int sptd_store_raw_ftrace_format_add(struct sptd_store *st, const char *name,
                                     const char *text);
/* One perf sample: @callchain is the kernel's u64 array (PERF_CONTEXT_*
 * markers included), @nr entries. */
int sptd_store_raw_sample_add(struct sptd_store *st, int64_t ts, int cpu, int pid,
                              int tid, const uint64_t *callchain, size_t nr);
/* A task alive at capture time (from /proc) or named by the trace. */
int sptd_store_raw_task_add(struct sptd_store *st, int pid, int tid,
                            const char *comm, const char *cmdline);
/* An executable mapping of @pid (-1: the kernel) at capture time: runtime
 * address = dso address + @bias. */
int sptd_store_raw_mmap_add(struct sptd_store *st, int pid, uint64_t start,
                            uint64_t end, uint64_t pgoff, int64_t dso_id,
                            int64_t bias);
/* A chunk of raw PT of @cpu in capture order @seq. */
int sptd_store_raw_pt_add(struct sptd_store *st, int cpu, int seq,
                          const void *data, size_t len);
/* Perf sideband records of @cpu (the bytes of the data ring, records whole). */
int sptd_store_raw_sideband_add(struct sptd_store *st, int cpu, int seq,
                                const void *data, size_t len);
/* Code bytes mapped at @addr (a flat image; ELF files are referenced by dso
 * path/build-id instead unless embedded with --portable). */
int sptd_store_raw_image_add(struct sptd_store *st, int64_t dso_id, uint64_t addr,
                             const void *data, size_t len);
/* The bytes of the file dso @dso_id names (an executable or library, as
 * the image cache holds it), embedded by --portable so the incident decodes
 * without the recording machine's files; @build_id hex or NULL.  The table
 * raw_file is created on first use (incidents without embedded files do not
 * have it).  -EINVAL also when @dso_id already has a file. */
int sptd_store_raw_file_add(struct sptd_store *st, int64_t dso_id, const char *build_id,
                            const void *data, size_t len);
/* A context switch known from outside ftrace (import --sched, perf SWITCH
 * records): on @cpu at @ts, @prev_tid stopped and @next_tid started. */
int sptd_store_raw_switch_add(struct sptd_store *st, int64_t ts, int cpu,
                              int prev_tid, int next_tid, const char *next_comm);

/* Delete every row of @table, one of the derived tables (process, thread,
 * sched_slice, thread_state, irq_slice, softirq_slice, slice, sample,
 * callsite, gap, stats).  -EINVAL for any other name (raw tables, meta,
 * trigger, symbol, dso are never cleared). */
int sptd_store_table_clear(struct sptd_store *st, const char *table);

/* --- reading ------------------------------------------------------------- */

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
/* Borrowed: valid until the next step/reset/finalize of @stmt.  NULL for NULL. */
const char *sptd_store_column_text(struct sptd_store_stmt *stmt, int col);
/* Borrowed like column_text; NULL for NULL, a non-NULL pointer with *len 0
 * for an empty blob.  Column accessors return 0/NULL for a bad @col. */
const void *sptd_store_column_blob(struct sptd_store_stmt *stmt, int col, size_t *len);
/* Accepts NULL. */
void sptd_store_finalize(struct sptd_store_stmt *stmt);

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
