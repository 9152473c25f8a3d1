/* store_check.c — raw rows decode cannot make sense of, found before any is
 * decoded (sptd_store_raw_check): a row whose cpu is no CPU number, a call
 * chain longer than any kernel records.  The checks read the cpu column and
 * length() of the blobs, which reads only their headers: one pass over the
 * rows' first bytes, never the chains themselves. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store-local.h"

int sptd_store_raw_check(struct sptd_store *st, const char *table, int max_chain)
{
	char sql[256];
	int64_t rowid, v;
	int ret;

	if (!st || !table || (strcmp(table, "raw_sample") != 0 && strcmp(table, "raw_pt") != 0 &&
	                      strcmp(table, "raw_ftrace_page") != 0) || max_chain < 0)
		return -EINVAL;
	/* not an integer (text, a float, a blob) is no CPU either; NULL is
	 * left to the readers, as before (it reads as 0) */
	snprintf(sql, sizeof(sql), "SELECT rowid FROM %s WHERE cpu < 0 OR cpu > 2147483647 OR "
	         "typeof(cpu) NOT IN ('integer', 'null') LIMIT 1", table);
	ret = sptd_store_query_int(st, sql, &rowid);
	if (ret == 0) {
		snprintf(sql, sizeof(sql), "SELECT cpu FROM %s WHERE rowid = %" PRId64
		         " AND typeof(cpu) = 'integer'", table, rowid);
		if (sptd_store_query_int(st, sql, &v) == 0)
			return sptd_store_damaged(st, "%s row %" PRId64 " has cpu %" PRId64 ", which "
			                          "is no CPU number (0 to 2147483647)", table, rowid, v);
		return sptd_store_damaged(st, "%s row %" PRId64 " has a cpu that is not an "
		                          "integer", table, rowid);
	}
	if (ret != -ENOENT || !max_chain || strcmp(table, "raw_sample") != 0)
		return ret == -ENOENT ? 0 : ret;
	snprintf(sql, sizeof(sql), "SELECT rowid FROM raw_sample WHERE length(callchain) > %d OR "
	         "length(callchain) %% 8 != 0 LIMIT 1", max_chain * 8);
	ret = sptd_store_query_int(st, sql, &rowid);
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;
	snprintf(sql, sizeof(sql), "SELECT length(callchain) FROM raw_sample WHERE rowid = %"
	         PRId64, rowid);
	if (sptd_store_query_int(st, sql, &v) < 0)
		v = -1;
	if (v % 8 != 0)
		return sptd_store_damaged(st, "raw_sample row %" PRId64 " has a call chain of %"
		                          PRId64 " bytes, not whole 8-byte addresses", rowid, v);
	return sptd_store_damaged(st, "raw_sample row %" PRId64 " has a call chain of %" PRId64
	                          " entries, more than any kernel records (%d)", rowid, v / 8,
	                          max_chain);
}
