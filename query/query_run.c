/* query_run.c — sptd_query_run(): one read-only statement, printed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "query-local.h"

int sptd_query_run(struct sptd_store *st, const char *sql,
                   enum sptd_query_format fmt, FILE *out,
                   char *err, size_t errlen)
{
	struct sptd_store_stmt *stmt = NULL;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!st || !sql || !out)
		return sptd_query_err(err, errlen, -EINVAL, "%s",
		                      !st ? "no incident open" : !sql ? "no SQL given" :
		                      "no output stream");
	if (fmt != SPTD_QUERY_TABLE && fmt != SPTD_QUERY_CSV && fmt != SPTD_QUERY_JSON)
		return sptd_query_err(err, errlen, -EINVAL, "unknown output format %d", (int)fmt);
	rc = sptd_query_check_single(sql, err, errlen);
	if (rc < 0)
		return rc;
	rc = sptd_query_prepare(st, sql, &stmt, err, errlen);
	if (rc < 0)
		return rc;
	rc = sptd_query_print_stmt(st, stmt, fmt, out, SPTD_QUERY_PF_FOOTER, 0, err, errlen);
	sptd_store_finalize(stmt);
	return rc;
}
