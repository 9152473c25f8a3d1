/* store_raw.c — the raw tables: the capture itself, from which decode
 * rebuilds the derived tables. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* Add a row of table T, struct S, from its fields in column order. */
#define ADD(T, S, ...) sptd_store_add(st, SPTD_STORE_T_##T, &(const struct S){ __VA_ARGS__ })

int sptd_store_raw_ftrace_page_add(struct sptd_store *st, int cpu, int seq,
                                   const void *page, size_t len)
{
	return ADD(RAW_FTRACE_PAGE, sptd_store_chunk_row, cpu, seq, page, len);
}

int sptd_store_raw_pt_add(struct sptd_store *st, int cpu, int seq,
                          const void *data, size_t len)
{
	return ADD(RAW_PT, sptd_store_chunk_row, cpu, seq, data, len);
}

int sptd_store_raw_sideband_add(struct sptd_store *st, int cpu, int seq,
                                const void *data, size_t len)
{
	return ADD(RAW_SIDEBAND, sptd_store_chunk_row, cpu, seq, data, len);
}

int sptd_store_raw_ftrace_format_add(struct sptd_store *st, const char *name,
                                     const char *text)
{
	return ADD(RAW_FTRACE_FORMAT, sptd_store_ftrace_format_row, name, text);
}

int sptd_store_raw_sample_add(struct sptd_store *st, int64_t ts, int cpu, int pid,
                              int tid, const uint64_t *callchain, size_t nr)
{
	return sptd_store_raw_sample_add_kind(st, ts, cpu, pid, tid, callchain, nr,
	                                      SPTD_RAW_SAMPLE_CLOCK, NULL, 0);
}

int sptd_store_raw_sample_add_kind(struct sptd_store *st, int64_t ts, int cpu, int pid,
                                   int tid, const uint64_t *callchain, size_t nr, int kind,
                                   const void *ustack, size_t ustack_len)
{
	return ADD(RAW_SAMPLE, sptd_store_raw_sample_row, ts, cpu, pid, tid, callchain, nr,
	                                                  kind, ustack, ustack_len);
}

int sptd_store_raw_task_add(struct sptd_store *st, int pid, int tid,
                            const char *comm, const char *cmdline)
{
	return ADD(RAW_TASK, sptd_store_raw_task_row, pid, tid, comm, cmdline);
}

int sptd_store_raw_mmap_add(struct sptd_store *st, int pid, uint64_t start,
                            uint64_t end, uint64_t pgoff, int64_t dso_id,
                            int64_t bias)
{
	return sptd_store_raw_mmap_add_until(st, pid, start, end, pgoff, dso_id, bias, 0);
}

int sptd_store_raw_mmap_add_until(struct sptd_store *st, int pid, uint64_t start,
                                  uint64_t end, uint64_t pgoff, int64_t dso_id,
                                  int64_t bias, int64_t until_ts)
{
	return ADD(RAW_MMAP, sptd_store_raw_mmap_row, pid, start, end, pgoff, dso_id, bias,
	                                             until_ts > 0 ? until_ts : 0);
}

int sptd_store_raw_image_add(struct sptd_store *st, int64_t dso_id, uint64_t addr,
                             const void *data, size_t len)
{
	return ADD(RAW_IMAGE, sptd_store_raw_image_row, dso_id, addr, data, len, NULL);
}

int sptd_store_raw_switch_add(struct sptd_store *st, int64_t ts, int cpu,
                              int prev_tid, int next_tid, const char *next_comm)
{
	return sptd_store_raw_switch_add_state(st, ts, cpu, prev_tid, next_tid, next_comm, NULL);
}

int sptd_store_raw_switch_add_state(struct sptd_store *st, int64_t ts, int cpu, int prev_tid,
                                    int next_tid, const char *next_comm,
                                    const char *prev_state)
{
	return ADD(RAW_SWITCH, sptd_store_raw_switch_row, ts, cpu, prev_tid, next_tid,
	                                                  next_comm, prev_state);
}

/* raw_file is optional: only incidents recorded with --portable have it, so
 * the table is made on first use and files without it stay valid. */
int sptd_store_raw_file_add(struct sptd_store *st, int64_t dso_id, const char *build_id,
                            const void *data, size_t len)
{
	static const char what[] = "adding a raw_file row";
	sqlite3_stmt *s = NULL;
	int ret, rc;

	SPTD_STORE_REQUIRE(st, dso_id >= 0, what, "dso_id is negative");
	SPTD_STORE_REQUIRE(st, data || !len, what, "data is NULL");
	ret = sptd_store_writable_check(st, what);
	if (ret < 0)
		return ret;
	ret = sptd_store_exec(st, "CREATE TABLE IF NOT EXISTS raw_file (dso_id INTEGER "
	                      "PRIMARY KEY, build_id TEXT NULL, data BLOB)", what);
	if (ret < 0)
		return ret;
	rc = sqlite3_prepare_v2(st->db, "INSERT INTO raw_file (dso_id, build_id, data) "
	                        "VALUES (?, ?, ?)", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sptd_store_fail_sqlite(st, rc, what);
	sqlite3_bind_int64(s, 1, dso_id);
	sptd_store_bind_str(s, 2, build_id);
	ret = sptd_store_bind_bytes(st, s, 3, data, len, what);
	if (ret >= 0) {
		rc = sqlite3_step(s);
		ret = rc == SQLITE_DONE ? 0 :
		      (rc & 0xff) == SQLITE_CONSTRAINT ? sptd_store_fail(st, -EINVAL, "%s: dso %" PRId64
		                                                " already has a file", what, dso_id) :
		      sptd_store_fail_sqlite(st, rc, what);
	}
	sqlite3_finalize(s);
	return ret;
}
