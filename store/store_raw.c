/* store_raw.c — the raw tables: the capture itself, from which decode
 * rebuilds the derived tables. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* The three "cpu, seq, bytes" tables. */
static int add_cpu_bytes(struct sptd_store *st, int table, const char *what, int cpu,
                         int seq, const void *data, size_t len)
{
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, cpu >= 0 && seq >= 0, what, "cpu or seq is negative");
	SPTD_STORE_REQUIRE(st, data || !len, what, "data is NULL");
	s = sptd_store_row_begin(st, table, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int(s, 1, cpu);
	sqlite3_bind_int(s, 2, seq);
	ret = sptd_store_bind_bytes(st, s, 3, data, len, what);
	if (ret < 0) {
		sqlite3_reset(s);
		return ret;
	}
	return sptd_store_row_end(st, s, what);
}

int sptd_store_raw_ftrace_page_add(struct sptd_store *st, int cpu, int seq,
                                   const void *page, size_t len)
{
	return add_cpu_bytes(st, SPTD_STORE_T_RAW_FTRACE_PAGE, "adding a raw_ftrace_page row",
	                     cpu, seq, page, len);
}

int sptd_store_raw_pt_add(struct sptd_store *st, int cpu, int seq,
                          const void *data, size_t len)
{
	return add_cpu_bytes(st, SPTD_STORE_T_RAW_PT, "adding a raw_pt row", cpu, seq,
	                     data, len);
}

int sptd_store_raw_sideband_add(struct sptd_store *st, int cpu, int seq,
                                const void *data, size_t len)
{
	return add_cpu_bytes(st, SPTD_STORE_T_RAW_SIDEBAND, "adding a raw_sideband row",
	                     cpu, seq, data, len);
}

int sptd_store_raw_ftrace_format_add(struct sptd_store *st, const char *name,
                                     const char *text)
{
	static const char what[] = "adding a raw_ftrace_format row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, name && *name && text, what, "name or text is NULL");
	s = sptd_store_row_begin(st, SPTD_STORE_T_RAW_FTRACE_FORMAT, what, &ret);
	if (!s)
		return ret;
	sptd_store_bind_str(s, 1, name);
	sptd_store_bind_str(s, 2, text);
	return sptd_store_row_end(st, s, what);
}

/* The callchain as little-endian bytes: the array itself on a
 * little-endian host, a swapped copy in st->le_buf otherwise. */
static const void *callchain_le(struct sptd_store *st, const uint64_t *chain, size_t nr)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	(void)st;
	(void)nr;
	return chain;
#else
	if (nr > st->le_cap) {
		uint64_t *buf = realloc(st->le_buf, nr * sizeof(*buf));

		if (!buf)
			return NULL;
		st->le_buf = buf;
		st->le_cap = nr;
	}
	for (size_t i = 0; i < nr; i++)
		st->le_buf[i] = __builtin_bswap64(chain[i]);
	return st->le_buf;
#endif
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
	static const char what[] = "adding a raw_sample row";
	const void *bytes = NULL;
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, cpu >= 0, what, "cpu is negative");
	SPTD_STORE_REQUIRE(st, callchain || !nr, what, "callchain is NULL");
	SPTD_STORE_REQUIRE(st, nr <= SIZE_MAX / sizeof(uint64_t), what, "callchain is too long");
	if (nr) {
		bytes = callchain_le(st, callchain, nr);
		if (!bytes)
			return sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
	}
	s = sptd_store_row_begin(st, SPTD_STORE_T_RAW_SAMPLE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, ts);
	sqlite3_bind_int(s, 2, cpu);
	sqlite3_bind_int(s, 3, pid);
	sqlite3_bind_int(s, 4, tid);
	ret = sptd_store_bind_bytes(st, s, 5, bytes, nr * sizeof(uint64_t), what);
	if (ret < 0) {
		sqlite3_reset(s);
		return ret;
	}
	sqlite3_bind_int(s, 6, kind);
	if (ustack) {
		ret = sptd_store_bind_bytes(st, s, 7, ustack, ustack_len, what);
		if (ret < 0) {
			sqlite3_reset(s);
			return ret;
		}
	} else {
		sqlite3_bind_null(s, 7);
	}
	return sptd_store_row_end(st, s, what);
}

int sptd_store_raw_task_add(struct sptd_store *st, int pid, int tid,
                            const char *comm, const char *cmdline)
{
	static const char what[] = "adding a raw_task row";
	sqlite3_stmt *s;
	int ret;

	s = sptd_store_row_begin(st, SPTD_STORE_T_RAW_TASK, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int(s, 1, pid);
	sqlite3_bind_int(s, 2, tid);
	sptd_store_bind_str(s, 3, comm);
	sptd_store_bind_str(s, 4, cmdline);
	return sptd_store_row_end(st, s, what);
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
	static const char what[] = "adding a raw_mmap row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, end >= start, what, "end is below start");
	s = sptd_store_row_begin(st, SPTD_STORE_T_RAW_MMAP, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int(s, 1, pid);
	sqlite3_bind_int64(s, 2, (int64_t)start);
	sqlite3_bind_int64(s, 3, (int64_t)end);
	sqlite3_bind_int64(s, 4, (int64_t)pgoff);
	sqlite3_bind_int64(s, 5, dso_id);
	sqlite3_bind_int64(s, 6, bias);
	sptd_store_bind_opt(s, 7, until_ts > 0 ? until_ts : -1);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_raw_image_add(struct sptd_store *st, int64_t dso_id, uint64_t addr,
                             const void *data, size_t len)
{
	static const char what[] = "adding a raw_image row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, data || !len, what, "data is NULL");
	s = sptd_store_row_begin(st, SPTD_STORE_T_RAW_IMAGE, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, dso_id);
	sqlite3_bind_int64(s, 2, (int64_t)addr);
	ret = sptd_store_bind_bytes(st, s, 3, data, len, what);
	if (ret < 0) {
		sqlite3_reset(s);
		return ret;
	}
	return sptd_store_row_end(st, s, what);
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
	static const char what[] = "adding a raw_switch row";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, cpu >= 0, what, "cpu is negative");
	s = sptd_store_row_begin(st, SPTD_STORE_T_RAW_SWITCH, what, &ret);
	if (!s)
		return ret;
	sqlite3_bind_int64(s, 1, ts);
	sqlite3_bind_int(s, 2, cpu);
	sqlite3_bind_int(s, 3, prev_tid);
	sqlite3_bind_int(s, 4, next_tid);
	sptd_store_bind_str(s, 5, next_comm);
	sptd_store_bind_str(s, 6, prev_state);
	return sptd_store_row_end(st, s, what);
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
