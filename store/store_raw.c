/* store_raw.c — raw_file, the one raw table outside the description
 * (store_tables.c): the files --portable embeds, made on first use.  The
 * other raw tables' rows go through sptd_store_add. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

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
