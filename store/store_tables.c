/* store_tables.c — every incident table described once: its columns (name,
 * CREATE TABLE type, where the value sits in the table's row struct, what
 * is refused and what stores NULL).  The description makes the CREATE
 * TABLE text (store_schema.c), binds an INSERT from a row struct
 * (sptd_store_add, store_rows.c) and fills a row struct from a SELECT
 * (sptd_store_each, store_read.c); the slice page writer encodes its
 * records from it too (store_pages.c).
 *
 * Adding a column: one entry in its table's list below (and a field in the
 * row struct of sptd_store_rows.h, SPTD_STORE_SCHEMA_VERSION and docs/SCHEMA.md);
 * older files get it through store_migrate.c.
 *
 * Divisions: the columns of each table; of each view (a join or selection
 * its reader serves like a table); the table list; the column text. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "store-local.h"
#include "sptd_store_mem.h"

/* Column F of table T: field F of T's row struct (struct sptd_store_T_row),
 * declared DECL, held as SPTD_STORE_C_TY, with flags FL. */
#define C(T, F, DECL, TY, FL) { #F, DECL, SPTD_STORE_C_##TY, FL, OFF(T, F), 0, NULL }
#define OFF(T, F) (uint16_t)offsetof(struct sptd_store_##T##_row, F)
/* ... named N in the table. */
#define CN(T, N, F, DECL, TY, FL) { N, DECL, SPTD_STORE_C_##TY, FL, OFF(T, F), 0, NULL }
/* ... bytes or a chain: pointer field F, its length field L. */
#define C2(T, F, L, DECL, TY, FL) { #F, DECL, SPTD_STORE_C_##TY, FL, OFF(T, F), OFF(T, L), NULL }
/* ... text whose NULL stores D. */
#define CD(T, F, DECL, D) { #F, DECL, SPTD_STORE_C_TEXT, 0, OFF(T, F), 0, D }
/* The key SQLite assigns, and a column no add fills. */
#define AUTO_ID { "id", "INTEGER PRIMARY KEY", SPTD_STORE_C_AUTO, 0, 0, 0, NULL }
#define LATER(N, DECL) { N, DECL, SPTD_STORE_C_NONE, 0, 0, 0, NULL }

#define NN SPTD_STORE_F_NOT_NEG
#define NEGNULL SPTD_STORE_F_NEG_NULL
#define ZERONULL SPTD_STORE_F_ZERO_NULL
#define EMPTYNULL SPTD_STORE_F_EMPTY_NULL
#define REQ SPTD_STORE_F_REQUIRED
#define NOTNULL SPTD_STORE_F_NOT_NULL

/* ---- the columns of each table --------------------------------------------- */

static const struct sptd_store_col meta_cols[] = {
	C(meta, key, "TEXT PRIMARY KEY", TEXT, REQ), C(meta, value, "TEXT", TEXT, NOTNULL),
};
static const struct sptd_store_col trigger_cols[] = {
	AUTO_ID, C(trigger, ts, "INT", I64, 0), C(trigger, cpu, "INT", I32, NEGNULL),
	C(trigger, kind, "TEXT", TEXT, REQ), C(trigger, detail, "TEXT", TEXT, 0),
};
static const struct sptd_store_col process_cols[] = {
	C(process, upid, "INTEGER PRIMARY KEY", I64, NN), C(process, pid, "INT", I32, 0),
	C(process, name, "TEXT", TEXT, 0), C(process, cmdline, "TEXT", TEXT, 0),
};
static const struct sptd_store_col thread_cols[] = {
	C(thread, utid, "INTEGER PRIMARY KEY", I64, NN), C(thread, tid, "INT", I32, 0),
	C(thread, upid, "INT NULL", I64, NEGNULL), C(thread, name, "TEXT", TEXT, 0),
};
static const struct sptd_store_col sched_slice_cols[] = {
	AUTO_ID, C(sched_slice, ts, "INT", I64, 0), C(sched_slice, dur, "INT", I64, NN),
	C(sched_slice, cpu, "INT", I32, NN), C(sched_slice, utid, "INT", I64, 0),
	C(sched_slice, end_state, "TEXT NULL", TEXT, 0),
	C(sched_slice, priority, "INT", I32, NEGNULL), C(sched_slice, flags, "INT", I32, 0),
};
static const struct sptd_store_col thread_state_cols[] = {
	AUTO_ID, C(thread_state, ts, "INT", I64, 0), C(thread_state, dur, "INT", I64, NN),
	C(thread_state, utid, "INT", I64, 0), C(thread_state, state, "TEXT", TEXT, REQ),
	C(thread_state, cpu, "INT NULL", I32, NEGNULL),
	C(thread_state, waker_utid, "INT NULL", I64, NEGNULL),
	C(thread_state, flags, "INT", I32, 0), LATER("callsite_id", "INT NULL"),
	LATER("blocked_function", "TEXT NULL"),
};
static const struct sptd_store_col irq_slice_cols[] = {
	AUTO_ID, C(irq_slice, ts, "INT", I64, 0), C(irq_slice, dur, "INT", I64, NN),
	C(irq_slice, cpu, "INT", I32, NN), C(irq_slice, irq, "INT", I32, 0),
	C(irq_slice, name, "TEXT", TEXT, 0), C(irq_slice, ret, "INT", I32, 0),
	C(irq_slice, flags, "INT", I32, 0),
};
static const struct sptd_store_col softirq_slice_cols[] = {
	AUTO_ID, C(softirq_slice, ts, "INT", I64, 0), C(softirq_slice, dur, "INT", I64, NN),
	C(softirq_slice, cpu, "INT", I32, NN), C(softirq_slice, vec, "INT", I32, 0),
	C(softirq_slice, name, "TEXT", TEXT, 0), C(softirq_slice, flags, "INT", I32, 0),
};
static const struct sptd_store_col slice_cols[] = {
	C(slice, id, "INTEGER PRIMARY KEY", I64, NN), C(slice, ts, "INT", I64, 0),
	C(slice, dur, "INT", I64, NN), C(slice, cpu, "INT", I32, 0), C(slice, utid, "INT", I64, 0),
	C(slice, depth, "INT", I32, NN), C(slice, parent_id, "INT NULL", I64, NEGNULL),
	C(slice, symbol_id, "INT NULL", I64, NEGNULL), C(slice, kind, "TEXT", TEXT, REQ),
	C(slice, flags, "INT", I32, 0),
#ifdef SPTD_STORE_TEST_SLICE_NOTE
	/* a test build's extra column (tests/store/test_store_pagecols.c) */
	C(slice, note, "INT NULL", I64, NEGNULL),
#endif
};
static const struct sptd_store_col symbol_cols[] = {
	C(symbol, id, "INTEGER PRIMARY KEY", I64, NN), C(symbol, name, "TEXT", TEXT, REQ),
	C(symbol, dso_id, "INT", I64, 0), C(symbol, addr, "INT", U64, 0),
	C(symbol, size, "INT", U64, 0),
};
static const struct sptd_store_col dso_cols[] = {
	C(dso, id, "INTEGER PRIMARY KEY", I64, NN), C(dso, path, "TEXT", TEXT, REQ),
	C(dso, build_id, "TEXT NULL", TEXT, 0),
};
static const struct sptd_store_col sample_cols[] = {
	AUTO_ID, C(sample, ts, "INT", I64, 0), C(sample, cpu, "INT", I32, NN),
	C(sample, utid, "INT", I64, NEGNULL), C(sample, callsite_id, "INT", I64, NEGNULL),
};
static const struct sptd_store_col callsite_cols[] = {
	C(callsite, id, "INTEGER PRIMARY KEY", I64, NN),
	C(callsite, parent_id, "INT NULL", I64, NEGNULL), C(callsite, depth, "INT", I32, NN),
	C(callsite, symbol_id, "INT NULL", I64, NEGNULL), C(callsite, addr, "INT", U64, 0),
};
static const struct sptd_store_col gap_cols[] = {
	AUTO_ID, C(gap, ts, "INT", I64, 0), C(gap, dur, "INT", I64, NN),
	C(gap, cpu, "INT NULL", I32, NEGNULL), C(gap, reason, "TEXT", TEXT, REQ),
};
static const struct sptd_store_col stats_cols[] = {
	C(stats, name, "TEXT", TEXT, REQ), C(stats, cpu, "INT NULL", I32, NEGNULL),
	C(stats, value, "INT", I64, 0),
};
/* raw_ftrace_page, raw_pt, raw_sideband: bytes of one CPU in order */
static const struct sptd_store_col chunk_cols[] = {
	C(raw_pt, cpu, "INT", I32, NN), C(raw_pt, seq, "INT", I32, NN),
	C2(raw_pt, data, len, "BLOB", BYTES, NOTNULL),
};
static const struct sptd_store_col ftrace_format_cols[] = {
	C(raw_ftrace_format, name, "TEXT PRIMARY KEY", TEXT, REQ),
	C(raw_ftrace_format, text, "TEXT", TEXT, NOTNULL),
};
static const struct sptd_store_col raw_sample_cols[] = {
	C(raw_sample, ts, "INT", I64, 0), C(raw_sample, cpu, "INT", I32, NN),
	C(raw_sample, pid, "INT", I32, 0), C(raw_sample, tid, "INT", I32, 0),
	C2(raw_sample, callchain, nr, "BLOB", CHAIN, NOTNULL),
	C(raw_sample, kind, "INT NULL", I32, 0),
	C2(raw_sample, ustack, ustack_len, "BLOB NULL", BYTES, ZERONULL),
};
static const struct sptd_store_col raw_task_cols[] = {
	C(raw_task, pid, "INT", I32, 0), C(raw_task, tid, "INT", I32, 0),
	C(raw_task, comm, "TEXT", TEXT, 0), C(raw_task, cmdline, "TEXT NULL", TEXT, 0),
};
static const struct sptd_store_col raw_mmap_cols[] = {
	C(raw_mmap, pid, "INT", I32, 0), C(raw_mmap, start, "INT", U64, 0),
	C(raw_mmap, end, "INT", U64, 0), C(raw_mmap, pgoff, "INT", U64, 0),
	C(raw_mmap, dso_id, "INT", I64, 0), C(raw_mmap, bias, "INT", I64, 0),
	C(raw_mmap, until_ts, "INT NULL", I64, ZERONULL),
};
static const struct sptd_store_col raw_image_cols[] = {
	C(raw_image, dso_id, "INT", I64, 0), C(raw_image, addr, "INT", U64, 0),
	C2(raw_image, data, len, "BLOB", BYTES, NOTNULL),
};
static const struct sptd_store_col raw_switch_cols[] = {
	C(raw_switch, ts, "INT", I64, 0), C(raw_switch, cpu, "INT", I32, NN),
	C(raw_switch, prev_tid, "INT", I32, 0), C(raw_switch, next_tid, "INT", I32, 0),
	C(raw_switch, next_comm, "TEXT", TEXT, 0), C(raw_switch, prev_state, "TEXT NULL", TEXT, 0),
};
static const struct sptd_store_col ftrace_event_cols[] = {
	AUTO_ID, C(ftrace_event, ts, "INT", I64, 0), C(ftrace_event, cpu, "INT", I32, NN),
	C(ftrace_event, utid, "INT NULL", I64, NEGNULL), C(ftrace_event, name, "TEXT", TEXT, REQ),
	CD(ftrace_event, args, "TEXT", "{}"),
};
static const struct sptd_store_col cpu_freq_cols[] = {
	AUTO_ID, C(cpu_freq, ts, "INT", I64, 0), C(cpu_freq, cpu, "INT", I32, NN),
	C(cpu_freq, cbr, "INT", I32, NN), C(cpu_freq, freq_khz, "INT NULL", I64, NEGNULL),
};
static const struct sptd_store_col cpu_idle_cols[] = {
	AUTO_ID, C(cpu_idle, ts, "INT", I64, 0), C(cpu_idle, dur, "INT", I64, NN),
	C(cpu_idle, cpu, "INT", I32, NN), C(cpu_idle, state, "INT NULL", I32, NEGNULL),
	C(cpu_idle, sub_state, "INT NULL", I32, NEGNULL),
	C(cpu_idle, requested, "INT NULL", I32, NEGNULL),
	C(cpu_idle, requested_sub, "INT NULL", I32, NEGNULL),
	CN(cpu_idle, "last_state", last, "INT NULL", I32, NEGNULL),
	CN(cpu_idle, "deepest_state", deepest, "INT NULL", I32, NEGNULL),
	C(cpu_idle, wake, "TEXT NULL", TEXT, 0), C(cpu_idle, hw, "INT", I32, 0),
	C(cpu_idle, flags, "INT", I32, 0),
};
static const struct sptd_store_col ptwrite_cols[] = {
	AUTO_ID, C(ptwrite, ts, "INT", I64, 0), C(ptwrite, cpu, "INT", I32, NN),
	C(ptwrite, utid, "INT NULL", I64, NEGNULL), C(ptwrite, ip, "INT NULL", U64, ZERONULL),
	C(ptwrite, payload, "INT", U64, 0), C(ptwrite, size, "INT", I32, NN),
};
static const struct sptd_store_col watch_hit_cols[] = {
	C(watch_hit, ts, "INT", I64, 0), C(watch_hit, cpu, "INT", I32, NN),
	C(watch_hit, tid, "INT", I32, 0), C(watch_hit, ip, "INT", U64, 0),
	C(watch_hit, function, "TEXT NULL", TEXT, EMPTYNULL),
	C(watch_hit, old_value, "INT NULL", U64, 0), C(watch_hit, new_value, "INT NULL", U64, 0),
	C(watch_hit, silent, "INT NULL", I32, 0), CD(watch_hit, trigger, "TEXT", ""),
};

/* ---- the columns of each view (their SELECT in the table list) ----------------- */

static const struct sptd_store_col raw_image_path_cols[] = {
	C(raw_image_path, dso_id, "", I64, 0), C(raw_image_path, addr, "", U64, 0),
	C2(raw_image_path, data, len, "", BYTES, 0), C(raw_image_path, path, "", TEXT, 0),
};
static const struct sptd_store_col mapped_file_cols[] = {
	C(mapped_file, pid, "", I32, 0), C(mapped_file, dso_id, "", I64, 0),
	C(mapped_file, bias, "", I64, 0), C(mapped_file, path, "", TEXT, 0),
	C(mapped_file, build_id, "", TEXT, 0),
};
static const struct sptd_store_col thread_exit_cols[] = {
	C(thread_exit, utid, "", I64, 0), C(thread_exit, ts, "", I64, 0),
};
static const struct sptd_store_col frame_cols[] = {
	C(frame, id, "", I64, 0), C(frame, parent_id, "", I64, 0), C(frame, depth, "", I64, 0),
	C(frame, symbol_id, "", I64, 0), C(frame, addr, "", U64, 0),
	C(frame, has_parent, "", I32, 0), C(frame, has_symbol, "", I32, 0),
};
static const struct sptd_store_col stack_cols[] = {
	C(sample_stack, ts, "", I64, 0), C(sample_stack, dur, "", I64, 0),
	C(sample_stack, utid, "", I64, NEGNULL), C(sample_stack, callsite_id, "", I64, NEGNULL),
	C(sample_stack, cpu, "", I32, NEGNULL), C(sample_stack, state, "", TEXT, 0),
};
static const struct sptd_store_col thread_info_cols[] = {
	C(thread_info, utid, "", I64, 0), C(thread_info, tid, "", I64, 0),
	C(thread_info, pid, "", I64, NEGNULL), C(thread_info, name, "", TEXT, 0),
	C(thread_info, process, "", TEXT, 0),
};
static const struct sptd_store_col watch_hit_thread_cols[] = {
	C(watch_hit_thread, hit.ts, "", I64, 0), C(watch_hit_thread, hit.cpu, "", I32, NEGNULL),
	C(watch_hit_thread, hit.tid, "", I32, 0), C(watch_hit_thread, hit.ip, "", U64, 0),
	C(watch_hit_thread, hit.function, "", TEXT, 0), C(watch_hit_thread, hit.watch, "", I32, 0),
	C(watch_hit_thread, hit.old_value, "", U64, 0),
	C(watch_hit_thread, hit.new_value, "", U64, 0),
	C(watch_hit_thread, hit.silent, "", I32, NEGNULL),
	C(watch_hit_thread, hit.trigger, "", TEXT, 0), C(watch_hit_thread, utid, "", I64, NEGNULL),
};

/* slice.kind values, by number (sptd_store_pages_kind) */
static const char *const slice_kinds[] = {
	SPTD_SLICE_USER, SPTD_SLICE_KERNEL, SPTD_SLICE_SYSCALL, SPTD_SLICE_IRQ,
};
#define N_KINDS (sizeof(slice_kinds) / sizeof(slice_kinds[0]))

const char *sptd_store_pages_kind(unsigned kind)
{
	return kind < N_KINDS ? slice_kinds[kind] : NULL;
}

int sptd_store_pages_kind_of(const char *name)
{
	for (unsigned k = 0; k < N_KINDS; k++)
		if (name && strcmp(slice_kinds[k], name) == 0)
			return (int)k;
	return -1;
}

/* slice.kind is one of the four kinds. */
static const char *slice_check(const void *row, uint32_t *nulls)
{
	const struct sptd_store_slice_row *r = row;

	(void)nulls;
	return sptd_store_pages_kind_of(r->kind) < 0 ?
	       "kind is not one of user, kernel, syscall, irq" : NULL;
}

/* A mapping ends at or after its start; an until_ts <= 0 stores NULL
 * (in force to the end). */
static const char *raw_mmap_check(const void *row, uint32_t *nulls)
{
	const struct sptd_store_raw_mmap_row *r = row;

	if (r->until_ts <= 0)
		*nulls |= 1u << 6;      /* until_ts */
	return r->end < r->start ? "end is below start" : NULL;
}

/* A break (@watch 0) or a watch of unknown values stores no values. */
static const char *watch_hit_check(const void *row, uint32_t *nulls)
{
	const struct sptd_store_watch_hit_row *r = row;

	if (!r->watch || r->silent < 0)
		*nulls |= 1u << 5 | 1u << 6 | 1u << 7;   /* old_value, new_value, silent */
	return NULL;
}

static const struct sptd_store_col mem_sample_cols[] = {
	C(mem_sample, ts, "INT", I64, 0), C(mem_sample, cpu, "INT NULL", I32, NEGNULL),
	C(mem_sample, utid, "INT NULL", I64, NEGNULL), C(mem_sample, pc, "INT", U64, 0),
	C(mem_sample, symbol_id, "INT NULL", I64, NEGNULL),
	C(mem_sample, vaddr, "INT NULL", U64, ZERONULL),
	C(mem_sample, paddr, "INT NULL", U64, ZERONULL), C(mem_sample, op, "TEXT NULL", TEXT, 0),
	C(mem_sample, data_source, "INT NULL", I32, NEGNULL),
	C(mem_sample, lat_total, "INT NULL", I32, NEGNULL),
	C(mem_sample, lat_issue, "INT NULL", I32, NEGNULL),
	C(mem_sample, lat_xlat, "INT NULL", I32, NEGNULL),
	C(mem_sample, events, "INT NULL", I64, NEGNULL),
};

/* ---- the table list ---------------------------------------------------------- */

#define N(cols) ((int)(sizeof(cols) / sizeof(cols[0])))

/* Table L (its name in lower case): its columns COLS; REPL: a keyed map
 * (INSERT OR REPLACE); CLEAR: a derived table decode empties; IDC: the key
 * column whose values the caller chooses; ORDER: its reader's ORDER BY;
 * CHECK: a row check beyond the columns' flags.  WHAT names add's work in
 * messages ("adding a gap row"; TN: "an"). */
#define TW(L, COLS, REPL, CLEAR, IDC, WHAT, ORDER, CHECK) \
	[SPTD_STORE_T_OF_##L] = { #L, COLS, N(COLS), REPL, CLEAR, IDC, WHAT, ORDER, \
	                          sizeof(struct sptd_store_##L##_row), CHECK, NULL }
#define T(L, COLS, REPL, CLEAR, IDC, ORDER, CHECK) \
	TW(L, COLS, REPL, CLEAR, IDC, "adding a " #L " row", ORDER, CHECK)
#define TN(L, COLS, REPL, CLEAR, IDC, ORDER, CHECK) \
	TW(L, COLS, REPL, CLEAR, IDC, "adding an " #L " row", ORDER, CHECK)

/* View L: its name in messages NAME, the columns COLS its SELECT gives. */
#define V(L, NAME, COLS, SELECT) \
	[SPTD_STORE_T_OF_##L] = { NAME, COLS, N(COLS), 0, 0, NULL, NULL, NULL, \
	                          sizeof(struct sptd_store_##L##_row), NULL, SELECT }
/* A cpu column as an int, NULL when it is none (as -1 in the row). */
#define CPU_OR_NULL "CASE WHEN cpu BETWEEN 0 AND 2147483647 THEN cpu END"

const struct sptd_store_table_def sptd_store_table_defs[SPTD_STORE_T_ALL] = {
	/* table, columns, repl, clear, idc, order, check */
	TW(meta, meta_cols, 1, 0, NULL, "setting meta", NULL, NULL),
	T(trigger, trigger_cols, 0, 0, NULL, "ts", NULL),
	T(process, process_cols, 0, 1, "upid", NULL, NULL),
	T(thread, thread_cols, 0, 1, "utid", NULL, NULL),
	T(sched_slice, sched_slice_cols, 0, 1, NULL, NULL, NULL),
	T(thread_state, thread_state_cols, 0, 1, NULL, NULL, NULL),
	TN(irq_slice, irq_slice_cols, 0, 1, NULL, NULL, NULL),
	T(softirq_slice, softirq_slice_cols, 0, 1, NULL, NULL, NULL),
	T(slice, slice_cols, 0, 1, "id", NULL, slice_check),
	T(symbol, symbol_cols, 0, 0, "id", NULL, NULL),
	T(dso, dso_cols, 0, 0, "id", "id", NULL),
	T(sample, sample_cols, 0, 1, NULL, NULL, NULL),
	T(callsite, callsite_cols, 0, 1, "id", NULL, NULL),
	T(gap, gap_cols, 0, 1, NULL, NULL, NULL),
	T(stats, stats_cols, 0, 1, NULL, NULL, NULL),
	T(raw_ftrace_page, chunk_cols, 0, 0, NULL, "cpu, seq", NULL),
	T(raw_ftrace_format, ftrace_format_cols, 1, 0, NULL, NULL, NULL),
	T(raw_sample, raw_sample_cols, 0, 0, NULL, "ts", NULL),
	T(raw_task, raw_task_cols, 0, 0, NULL, NULL, NULL),
	T(raw_mmap, raw_mmap_cols, 0, 0, NULL, NULL, raw_mmap_check),
	T(raw_pt, chunk_cols, 0, 0, NULL, "cpu, seq", NULL),
	T(raw_sideband, chunk_cols, 0, 0, NULL, "cpu, seq", NULL),
	T(raw_image, raw_image_cols, 0, 0, NULL, NULL, NULL),
	T(raw_switch, raw_switch_cols, 0, 0, NULL, NULL, NULL),
	TN(ftrace_event, ftrace_event_cols, 0, 1, NULL, NULL, NULL),
	T(cpu_freq, cpu_freq_cols, 0, 1, NULL, NULL, NULL),
	T(cpu_idle, cpu_idle_cols, 0, 1, NULL, NULL, NULL),
	T(ptwrite, ptwrite_cols, 0, 1, NULL, NULL, NULL),
	T(watch_hit, watch_hit_cols, 0, 0, NULL, NULL, watch_hit_check),
	T(mem_sample, mem_sample_cols, 0, 1, NULL, NULL, NULL),       /* schema 8 */
	T(raw_spe, chunk_cols, 0, 0, NULL, "cpu, seq", NULL),
	/* the views: view, name in messages, columns, SELECT */
	V(raw_switch_by_ts, "raw_switch", raw_switch_cols, "SELECT ts, cpu, prev_tid, next_tid, "
	  "next_comm, prev_state FROM raw_switch ORDER BY ts"),
	V(raw_image_path, "raw_image", raw_image_path_cols, "SELECT i.dso_id, i.addr, i.data, "
	  "d.path FROM raw_image i LEFT JOIN dso d ON d.id = i.dso_id"),
	V(mapped_file, "the mapped files", mapped_file_cols, "SELECT DISTINCT m.pid, m.dso_id, "
	  "m.bias, d.path, d.build_id FROM raw_mmap m JOIN dso d ON d.id = m.dso_id "
	  "WHERE m.dso_id NOT IN (SELECT dso_id FROM raw_image)"),
	V(cpu_stats, "stats", stats_cols, "SELECT name, cpu, value FROM stats "
	  "WHERE cpu IS NOT NULL ORDER BY cpu"),
	V(thread_exit, "the threads' exits", thread_exit_cols, "SELECT utid, ts + dur "
	  "FROM sched_slice WHERE substr(end_state, 1, 1) IN ('X', 'Z') AND (flags & 2) = 0 "
	  "ORDER BY ts"),
	V(frame, "callsite", frame_cols, "SELECT id, parent_id, depth, symbol_id, addr, "
	  "parent_id IS NOT NULL, symbol_id IS NOT NULL FROM callsite ORDER BY id"),
	V(sample_stack, "sample", stack_cols, "SELECT ts, 0, utid, callsite_id, " CPU_OR_NULL
	  ", NULL FROM sample ORDER BY ts, id"),
	V(offcpu_stack, "thread_state", stack_cols, "SELECT ts, dur, utid, callsite_id, "
	  CPU_OR_NULL ", state FROM thread_state WHERE callsite_id IS NOT NULL ORDER BY ts, id"),
	V(thread_info, "thread", thread_info_cols, "SELECT t.utid, t.tid, p.pid, t.name, "
	  "p.name FROM thread t LEFT JOIN process p ON p.upid = t.upid ORDER BY t.utid"),
	V(watch_hit_thread, "watch_hit", watch_hit_thread_cols, "SELECT w.ts, " CPU_OR_NULL
	  ", w.tid, w.ip, w.function, w.old_value IS NOT NULL AND w.new_value IS NOT NULL, "
	  "w.old_value, w.new_value, w.silent, w.trigger, "
	  "(SELECT max(t.utid) FROM thread t WHERE t.tid = w.tid) FROM watch_hit w "
	  "ORDER BY w.ts, w.rowid"),
#undef V
#undef TN
#undef T
#undef TW
};

/* ---- the column text ------------------------------------------------------------ */

/* Every table's column list, made once. */
static char columns_text[SPTD_STORE_T_COUNT][640];
static pthread_once_t columns_once = PTHREAD_ONCE_INIT;

static void columns_make(void)
{
	for (int t = 0; t < SPTD_STORE_T_COUNT; t++) {
		const struct sptd_store_table_def *d = &sptd_store_table_defs[t];
		size_t n = 0;

		for (int c = 0; c < d->ncols && n < sizeof(columns_text[t]); c++)
			n += (size_t)snprintf(columns_text[t] + n, sizeof(columns_text[t]) - n,
			                      "%s%s %s", c ? ", " : "", d->cols[c].name,
			                      d->cols[c].decl);
	}
}

const char *sptd_store_table_columns(const struct sptd_store_table_def *t)
{
	pthread_once(&columns_once, columns_make);
	return columns_text[t - sptd_store_table_defs];
}
