/* store_tables.c — every incident table described once: its columns (name,
 * CREATE TABLE type, where the value sits in the table's row struct, what
 * is refused and what stores NULL).  The description makes the CREATE
 * TABLE text (store_schema.c), binds an INSERT from a row struct
 * (sptd_store_add, store_rows.c) and fills a row struct from a SELECT
 * (sptd_store_each, store_read.c); the slice page writer encodes its
 * records from it too (store_pages.c).
 *
 * Adding a column: one line in its table's list below (and a field in the
 * row struct of sptd_store.h, SPTD_STORE_SCHEMA_VERSION and docs/SCHEMA.md);
 * older files get it through store_migrate.c.
 *
 * Divisions: the columns of each table; the table list; the column text. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "store-local.h"
#include "sptd_store_mem.h"

/* A column of row struct S: field F stored as column N of type DECL. */
#define COL(S, N, DECL, T, F, FL) \
	{ N, DECL, SPTD_STORE_C_##T, FL, (uint16_t)offsetof(struct S, F), 0, NULL }
/* ... bytes or a chain: pointer field F, its length field L. */
#define COL2(S, N, DECL, T, F, L, FL) \
	{ N, DECL, SPTD_STORE_C_##T, FL, (uint16_t)offsetof(struct S, F), \
	  (uint16_t)offsetof(struct S, L), NULL }
/* ... text whose NULL stores D. */
#define COLD(S, N, DECL, F, D) \
	{ N, DECL, SPTD_STORE_C_TEXT, 0, (uint16_t)offsetof(struct S, F), 0, D }
/* The key SQLite assigns, and a column no add fills. */
#define AUTO_ID { "id", "INTEGER PRIMARY KEY", SPTD_STORE_C_AUTO, 0, 0, 0, NULL }
#define LATER(N, DECL) { N, DECL, SPTD_STORE_C_NONE, 0, 0, 0, NULL }

#define NN SPTD_STORE_F_NOT_NEG
#define NEGNULL SPTD_STORE_F_NEG_NULL
#define REQ SPTD_STORE_F_REQUIRED

/* ---- the columns of each table --------------------------------------------- */

#define R sptd_store_meta_row
static const struct sptd_store_col meta_cols[] = {
	COL(R, "key", "TEXT PRIMARY KEY", TEXT, key, REQ),
	COL(R, "value", "TEXT", TEXT, value, SPTD_STORE_F_NOT_NULL),
};
#undef R
#define R sptd_store_trigger_row
static const struct sptd_store_col trigger_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT", I32, cpu, NEGNULL),
	COL(R, "kind", "TEXT", TEXT, kind, REQ),
	COL(R, "detail", "TEXT", TEXT, detail, 0),
};
#undef R
#define R sptd_store_process_row
static const struct sptd_store_col process_cols[] = {
	COL(R, "upid", "INTEGER PRIMARY KEY", I64, upid, NN),
	COL(R, "pid", "INT", I32, pid, 0),
	COL(R, "name", "TEXT", TEXT, name, 0),
	COL(R, "cmdline", "TEXT", TEXT, cmdline, 0),
};
#undef R
#define R sptd_store_thread_row
static const struct sptd_store_col thread_cols[] = {
	COL(R, "utid", "INTEGER PRIMARY KEY", I64, utid, NN),
	COL(R, "tid", "INT", I32, tid, 0),
	COL(R, "upid", "INT NULL", I64, upid, NEGNULL),
	COL(R, "name", "TEXT", TEXT, name, 0),
};
#undef R
#define R sptd_store_sched_slice_row
static const struct sptd_store_col sched_slice_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "dur", "INT", I64, dur, NN),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "utid", "INT", I64, utid, 0),
	COL(R, "end_state", "TEXT NULL", TEXT, end_state, 0),
	COL(R, "priority", "INT", I32, priority, NEGNULL),
	COL(R, "flags", "INT", I32, flags, 0),
};
#undef R
#define R sptd_store_thread_state_row
static const struct sptd_store_col thread_state_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "dur", "INT", I64, dur, NN),
	COL(R, "utid", "INT", I64, utid, 0),
	COL(R, "state", "TEXT", TEXT, state, REQ),
	COL(R, "cpu", "INT NULL", I32, cpu, NEGNULL),
	COL(R, "waker_utid", "INT NULL", I64, waker_utid, NEGNULL),
	COL(R, "flags", "INT", I32, flags, 0),
	LATER("callsite_id", "INT NULL"),       /* sptd_store_thread_state_block */
	LATER("blocked_function", "TEXT NULL"),
};
#undef R
#define R sptd_store_irq_slice_row
static const struct sptd_store_col irq_slice_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "dur", "INT", I64, dur, NN),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "irq", "INT", I32, irq, 0),
	COL(R, "name", "TEXT", TEXT, name, 0),
	COL(R, "ret", "INT", I32, ret, 0),
	COL(R, "flags", "INT", I32, flags, 0),
};
#undef R
#define R sptd_store_softirq_slice_row
static const struct sptd_store_col softirq_slice_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "dur", "INT", I64, dur, NN),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "vec", "INT", I32, vec, 0),
	COL(R, "name", "TEXT", TEXT, name, 0),
	COL(R, "flags", "INT", I32, flags, 0),
};
#undef R
#define R sptd_store_slice_row
static const struct sptd_store_col slice_cols[] = {
	COL(R, "id", "INTEGER PRIMARY KEY", I64, id, NN),
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "dur", "INT", I64, dur, NN),
	COL(R, "cpu", "INT", I32, cpu, 0),
	COL(R, "utid", "INT", I64, utid, 0),
	COL(R, "depth", "INT", I32, depth, NN),
	COL(R, "parent_id", "INT NULL", I64, parent_id, NEGNULL),
	COL(R, "symbol_id", "INT NULL", I64, symbol_id, NEGNULL),
	COL(R, "kind", "TEXT", TEXT, kind, REQ),
	COL(R, "flags", "INT", I32, flags, 0),
#ifdef SPTD_STORE_TEST_SLICE_NOTE
	/* a test build's extra column (tests/store/test_store_pagecols.c) */
	COL(R, "note", "INT NULL", I64, note, NEGNULL),
#endif
};
#undef R
#define R sptd_store_symbol_row
static const struct sptd_store_col symbol_cols[] = {
	COL(R, "id", "INTEGER PRIMARY KEY", I64, id, NN),
	COL(R, "name", "TEXT", TEXT, name, REQ),
	COL(R, "dso_id", "INT", I64, dso_id, 0),
	COL(R, "addr", "INT", U64, addr, 0),
	COL(R, "size", "INT", U64, size, 0),
};
#undef R
#define R sptd_store_dso_row
static const struct sptd_store_col dso_cols[] = {
	COL(R, "id", "INTEGER PRIMARY KEY", I64, id, NN),
	COL(R, "path", "TEXT", TEXT, path, REQ),
	COL(R, "build_id", "TEXT NULL", TEXT, build_id, 0),
};
#undef R
#define R sptd_store_sample_row
static const struct sptd_store_col sample_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "utid", "INT", I64, utid, NEGNULL),
	COL(R, "callsite_id", "INT", I64, callsite_id, NEGNULL),
};
#undef R
#define R sptd_store_callsite_row
static const struct sptd_store_col callsite_cols[] = {
	COL(R, "id", "INTEGER PRIMARY KEY", I64, id, NN),
	COL(R, "parent_id", "INT NULL", I64, parent_id, NEGNULL),
	COL(R, "depth", "INT", I32, depth, NN),
	COL(R, "symbol_id", "INT NULL", I64, symbol_id, NEGNULL),
	COL(R, "addr", "INT", U64, addr, 0),
};
#undef R
#define R sptd_store_gap_row
static const struct sptd_store_col gap_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "dur", "INT", I64, dur, NN),
	COL(R, "cpu", "INT NULL", I32, cpu, NEGNULL),
	COL(R, "reason", "TEXT", TEXT, reason, REQ),
};
#undef R
#define R sptd_store_stat_row
static const struct sptd_store_col stats_cols[] = {
	COL(R, "name", "TEXT", TEXT, name, REQ),
	COL(R, "cpu", "INT NULL", I32, cpu, NEGNULL),
	COL(R, "value", "INT", I64, value, 0),
};
#undef R
/* raw_ftrace_page, raw_pt, raw_sideband: bytes of one CPU in order */
#define R sptd_store_chunk_row
static const struct sptd_store_col chunk_cols[] = {
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "seq", "INT", I32, seq, NN),
	COL2(R, "data", "BLOB", BYTES, data, len, SPTD_STORE_F_NOT_NULL),
};
#undef R
#define R sptd_store_ftrace_format_row
static const struct sptd_store_col ftrace_format_cols[] = {
	COL(R, "name", "TEXT PRIMARY KEY", TEXT, name, REQ),
	COL(R, "text", "TEXT", TEXT, text, SPTD_STORE_F_NOT_NULL),
};
#undef R
#define R sptd_store_raw_sample_row
static const struct sptd_store_col raw_sample_cols[] = {
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "pid", "INT", I32, pid, 0),
	COL(R, "tid", "INT", I32, tid, 0),
	COL2(R, "callchain", "BLOB", CHAIN, callchain, nr, SPTD_STORE_F_NOT_NULL),
	COL(R, "kind", "INT NULL", I32, kind, 0),
	COL2(R, "ustack", "BLOB NULL", BYTES, ustack, ustack_len, SPTD_STORE_F_ZERO_NULL),
};
#undef R
#define R sptd_store_raw_task_row
static const struct sptd_store_col raw_task_cols[] = {
	COL(R, "pid", "INT", I32, pid, 0),
	COL(R, "tid", "INT", I32, tid, 0),
	COL(R, "comm", "TEXT", TEXT, comm, 0),
	COL(R, "cmdline", "TEXT NULL", TEXT, cmdline, 0),
};
#undef R
#define R sptd_store_raw_mmap_row
static const struct sptd_store_col raw_mmap_cols[] = {
	COL(R, "pid", "INT", I32, pid, 0),
	COL(R, "start", "INT", U64, start, 0),
	COL(R, "end", "INT", U64, end, 0),
	COL(R, "pgoff", "INT", U64, pgoff, 0),
	COL(R, "dso_id", "INT", I64, dso_id, 0),
	COL(R, "bias", "INT", I64, bias, 0),
	COL(R, "until_ts", "INT NULL", I64, until_ts, SPTD_STORE_F_ZERO_NULL),
};
#undef R
#define R sptd_store_raw_image_row
static const struct sptd_store_col raw_image_cols[] = {
	COL(R, "dso_id", "INT", I64, dso_id, 0),
	COL(R, "addr", "INT", U64, addr, 0),
	COL2(R, "data", "BLOB", BYTES, data, len, SPTD_STORE_F_NOT_NULL),
};
#undef R
#define R sptd_store_raw_switch_row
static const struct sptd_store_col raw_switch_cols[] = {
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "prev_tid", "INT", I32, prev_tid, 0),
	COL(R, "next_tid", "INT", I32, next_tid, 0),
	COL(R, "next_comm", "TEXT", TEXT, next_comm, 0),
	COL(R, "prev_state", "TEXT NULL", TEXT, prev_state, 0),
};
#undef R
#define R sptd_store_ftrace_event_row
static const struct sptd_store_col ftrace_event_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "utid", "INT NULL", I64, utid, NEGNULL),
	COL(R, "name", "TEXT", TEXT, name, REQ),
	COLD(R, "args", "TEXT", args, "{}"),
};
#undef R
#define R sptd_store_cpu_freq_row
static const struct sptd_store_col cpu_freq_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "cbr", "INT", I32, cbr, NN),
	COL(R, "freq_khz", "INT NULL", I64, freq_khz, NEGNULL),
};
#undef R
#define R sptd_store_cpu_idle_row
static const struct sptd_store_col cpu_idle_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "dur", "INT", I64, dur, NN),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "state", "INT NULL", I32, state, NEGNULL),
	COL(R, "sub_state", "INT NULL", I32, sub_state, NEGNULL),
	COL(R, "requested", "INT NULL", I32, requested, NEGNULL),
	COL(R, "requested_sub", "INT NULL", I32, requested_sub, NEGNULL),
	COL(R, "last_state", "INT NULL", I32, last, NEGNULL),
	COL(R, "deepest_state", "INT NULL", I32, deepest, NEGNULL),
	COL(R, "wake", "TEXT NULL", TEXT, wake, 0),
	COL(R, "hw", "INT", I32, hw, 0),
	COL(R, "flags", "INT", I32, flags, 0),
};
#undef R
#define R sptd_store_ptwrite_row
static const struct sptd_store_col ptwrite_cols[] = {
	AUTO_ID,
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "utid", "INT NULL", I64, utid, NEGNULL),
	COL(R, "ip", "INT NULL", U64, ip, SPTD_STORE_F_ZERO_NULL),
	COL(R, "payload", "INT", U64, payload, 0),
	COL(R, "size", "INT", I32, size, NN),
};
#undef R
#define R sptd_store_watch_hit_row
static const struct sptd_store_col watch_hit_cols[] = {
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT", I32, cpu, NN),
	COL(R, "tid", "INT", I32, tid, 0),
	COL(R, "ip", "INT", U64, ip, 0),
	COL(R, "function", "TEXT NULL", TEXT, function, SPTD_STORE_F_EMPTY_NULL),
	COL(R, "old_value", "INT NULL", U64, old_value, 0),
	COL(R, "new_value", "INT NULL", U64, new_value, 0),
	COL(R, "silent", "INT NULL", I32, silent, 0),
	COLD(R, "trigger", "TEXT", trigger, ""),
};
#undef R

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

/* A mapping ends at or after its start. */
static const char *raw_mmap_check(const void *row, uint32_t *nulls)
{
	const struct sptd_store_raw_mmap_row *r = row;

	(void)nulls;
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

#define R sptd_store_mem_sample_row
static const struct sptd_store_col mem_sample_cols[] = {
	COL(R, "ts", "INT", I64, ts, 0),
	COL(R, "cpu", "INT NULL", I32, cpu, NEGNULL),
	COL(R, "utid", "INT NULL", I64, utid, NEGNULL),
	COL(R, "pc", "INT", U64, pc, 0),
	COL(R, "symbol_id", "INT NULL", I64, symbol_id, NEGNULL),
	COL(R, "vaddr", "INT NULL", U64, vaddr, SPTD_STORE_F_ZERO_NULL),
	COL(R, "paddr", "INT NULL", U64, paddr, SPTD_STORE_F_ZERO_NULL),
	COL(R, "op", "TEXT NULL", TEXT, op, 0),
	COL(R, "data_source", "INT NULL", I32, data_source, NEGNULL),
	COL(R, "lat_total", "INT NULL", I32, lat_total, NEGNULL),
	COL(R, "lat_issue", "INT NULL", I32, lat_issue, NEGNULL),
	COL(R, "lat_xlat", "INT NULL", I32, lat_xlat, NEGNULL),
	COL(R, "events", "INT NULL", I64, events, NEGNULL),
};
#undef R

/* ---- the table list ---------------------------------------------------------- */

#define N(cols) ((int)(sizeof(cols) / sizeof(cols[0])))

const struct sptd_store_table_def sptd_store_table_defs[SPTD_STORE_T_COUNT] = {
#define T(ID, name, cols, S, repl, clear, idc, what, order, check) \
	[SPTD_STORE_T_##ID] = { name, cols, N(cols), repl, clear, idc, what, order, \
	                        sizeof(struct S), check }
	T(META, "meta", meta_cols, sptd_store_meta_row, 1, 0, NULL,
	  "setting meta", NULL, NULL),
	T(TRIGGER, "trigger", trigger_cols, sptd_store_trigger_row, 0, 0, NULL,
	  "adding a trigger row", "ts", NULL),
	T(PROCESS, "process", process_cols, sptd_store_process_row, 0, 1, "upid",
	  "adding a process row", NULL, NULL),
	T(THREAD, "thread", thread_cols, sptd_store_thread_row, 0, 1, "utid",
	  "adding a thread row", NULL, NULL),
	T(SCHED_SLICE, "sched_slice", sched_slice_cols, sptd_store_sched_slice_row, 0, 1, NULL,
	  "adding a sched_slice row", NULL, NULL),
	T(THREAD_STATE, "thread_state", thread_state_cols, sptd_store_thread_state_row, 0, 1,
	  NULL, "adding a thread_state row", NULL, NULL),
	T(IRQ_SLICE, "irq_slice", irq_slice_cols, sptd_store_irq_slice_row, 0, 1, NULL,
	  "adding an irq_slice row", NULL, NULL),
	T(SOFTIRQ_SLICE, "softirq_slice", softirq_slice_cols, sptd_store_softirq_slice_row, 0,
	  1, NULL, "adding a softirq_slice row", NULL, NULL),
	T(SLICE, "slice", slice_cols, sptd_store_slice_row, 0, 1, "id",
	  "adding a slice row", NULL, slice_check),
	T(SYMBOL, "symbol", symbol_cols, sptd_store_symbol_row, 0, 0, "id",
	  "adding a symbol row", NULL, NULL),
	T(DSO, "dso", dso_cols, sptd_store_dso_row, 0, 0, "id",
	  "adding a dso row", "id", NULL),
	T(SAMPLE, "sample", sample_cols, sptd_store_sample_row, 0, 1, NULL,
	  "adding a sample row", NULL, NULL),
	T(CALLSITE, "callsite", callsite_cols, sptd_store_callsite_row, 0, 1, "id",
	  "adding a callsite row", NULL, NULL),
	T(GAP, "gap", gap_cols, sptd_store_gap_row, 0, 1, NULL,
	  "adding a gap row", NULL, NULL),
	T(STATS, "stats", stats_cols, sptd_store_stat_row, 0, 1, NULL,
	  "adding a stats row", NULL, NULL),
	T(RAW_FTRACE_PAGE, "raw_ftrace_page", chunk_cols, sptd_store_chunk_row, 0, 0, NULL,
	  "adding a raw_ftrace_page row", "cpu, seq", NULL),
	T(RAW_FTRACE_FORMAT, "raw_ftrace_format", ftrace_format_cols,
	  sptd_store_ftrace_format_row, 1, 0, NULL, "adding a raw_ftrace_format row", NULL, NULL),
	T(RAW_SAMPLE, "raw_sample", raw_sample_cols, sptd_store_raw_sample_row, 0, 0, NULL,
	  "adding a raw_sample row", "ts", NULL),
	T(RAW_TASK, "raw_task", raw_task_cols, sptd_store_raw_task_row, 0, 0, NULL,
	  "adding a raw_task row", NULL, NULL),
	T(RAW_MMAP, "raw_mmap", raw_mmap_cols, sptd_store_raw_mmap_row, 0, 0, NULL,
	  "adding a raw_mmap row", NULL, raw_mmap_check),
	T(RAW_PT, "raw_pt", chunk_cols, sptd_store_chunk_row, 0, 0, NULL,
	  "adding a raw_pt row", "cpu, seq", NULL),
	T(RAW_SIDEBAND, "raw_sideband", chunk_cols, sptd_store_chunk_row, 0, 0, NULL,
	  "adding a raw_sideband row", "cpu, seq", NULL),
	T(RAW_IMAGE, "raw_image", raw_image_cols, sptd_store_raw_image_row, 0, 0, NULL,
	  "adding a raw_image row", NULL, NULL),
	T(RAW_SWITCH, "raw_switch", raw_switch_cols, sptd_store_raw_switch_row, 0, 0, NULL,
	  "adding a raw_switch row", NULL, NULL),
	T(FTRACE_EVENT, "ftrace_event", ftrace_event_cols, sptd_store_ftrace_event_row, 0, 1,
	  NULL, "adding an ftrace_event row", NULL, NULL),
	T(CPU_FREQ, "cpu_freq", cpu_freq_cols, sptd_store_cpu_freq_row, 0, 1, NULL,
	  "adding a cpu_freq row", NULL, NULL),
	T(CPU_IDLE, "cpu_idle", cpu_idle_cols, sptd_store_cpu_idle_row, 0, 1, NULL,
	  "adding a cpu_idle row", NULL, NULL),
	T(PTWRITE, "ptwrite", ptwrite_cols, sptd_store_ptwrite_row, 0, 1, NULL,
	  "adding a ptwrite row", NULL, NULL),
	T(WATCH_HIT, "watch_hit", watch_hit_cols, sptd_store_watch_hit_row, 0, 0, NULL,
	  "adding a watch_hit row", NULL, watch_hit_check),
	T(MEM_SAMPLE, "mem_sample", mem_sample_cols, sptd_store_mem_sample_row, 0, 1, NULL,
	  "adding a mem_sample row", NULL, NULL),
	T(RAW_SPE, "raw_spe", chunk_cols, sptd_store_chunk_row, 0, 0, NULL,
	  "adding a raw_spe row", "cpu, seq", NULL),
#undef T
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
