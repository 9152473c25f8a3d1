/* derive_check.c — the raw rows decode cannot make sense of, found before
 * any is decoded: a row whose cpu is no CPU number, a call chain longer
 * than any kernel records.  Such a file is damaged (exit status 6, the row
 * named), never a runtime failure (1) with a message about something else,
 * and never an hour of work and gigabytes of memory.  The checks are SQL
 * over the raw tables: the cpu column comes before the blobs and length()
 * of a blob reads only its header, so they cost one pass over the rows'
 * first bytes. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "derive-local.h"
#include "sptd_store.h"

int sptd_col_derive_check_cpus(struct sptd_store *st, const char *table)
{
	char sql[256];
	int64_t rowid, cpu;
	int ret;

	if (!st || !table)
		return -EINVAL;
	/* not an integer (text, a float, a blob) is no CPU either; NULL is
	 * left to the readers, as before (it reads as 0) */
	snprintf(sql, sizeof(sql), "SELECT rowid FROM %s WHERE cpu < 0 OR cpu > 2147483647 OR "
	         "typeof(cpu) NOT IN ('integer', 'null') LIMIT 1", table);
	ret = sptd_store_query_int(st, sql, &rowid);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	snprintf(sql, sizeof(sql), "SELECT cpu FROM %s WHERE rowid = %" PRId64
	         " AND typeof(cpu) = 'integer'", table, rowid);
	if (sptd_store_query_int(st, sql, &cpu) == 0)
		return sptd_store_damaged(st, "%s row %" PRId64 " has cpu %" PRId64 ", which is "
		                          "no CPU number (0 to 2147483647)", table, rowid, cpu);
	return sptd_store_damaged(st, "%s row %" PRId64 " has a cpu that is not an integer",
	                          table, rowid);
}

int sptd_col_derive_check_chains(struct sptd_store *st)
{
	char sql[256];
	int64_t rowid, bytes;
	int ret;

	if (!st)
		return -EINVAL;
	snprintf(sql, sizeof(sql), "SELECT rowid FROM raw_sample WHERE length(callchain) > %d OR "
	         "length(callchain) %% 8 != 0 LIMIT 1", SPTD_DERIVE_MAX_CHAIN * 8);
	ret = sptd_store_query_int(st, sql, &rowid);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	snprintf(sql, sizeof(sql), "SELECT length(callchain) FROM raw_sample WHERE rowid = %"
	         PRId64, rowid);
	if (sptd_store_query_int(st, sql, &bytes) < 0)
		bytes = -1;
	if (bytes % 8 != 0)
		return sptd_store_damaged(st, "raw_sample row %" PRId64 " has a call chain of %"
		                          PRId64 " bytes, not whole 8-byte addresses", rowid, bytes);
	return sptd_store_damaged(st, "raw_sample row %" PRId64 " has a call chain of %" PRId64
	                          " entries, more than any kernel records (%d)", rowid,
	                          bytes / 8, SPTD_DERIVE_MAX_CHAIN);
}
