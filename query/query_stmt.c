/* query_stmt.c — SQL text before it runs: the output format names, the
 * one-statement check (statements are split by SQLite: store/'s
 * sptd_store_sql_next), and preparing with the error a user can act on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "query-local.h"
#include "sptd_store_text.h"

int sptd_query_format_parse(const char *name, enum sptd_query_format *fmt)
{
	if (!name || !fmt)
		return -EINVAL;
	if (strcmp(name, "table") == 0)
		*fmt = SPTD_QUERY_TABLE;
	else if (strcmp(name, "csv") == 0)
		*fmt = SPTD_QUERY_CSV;
	else if (strcmp(name, "json") == 0)
		*fmt = SPTD_QUERY_JSON;
	else
		return -EINVAL;
	return 0;
}

int sptd_query_check_single(const char *sql, char *err, size_t errlen)
{
	struct sptd_store_sql_span first, rest;
	int rc;

	rc = sptd_store_sql_next(sql, &first);
	if (rc == 0)
		return sptd_query_err(err, errlen, -EINVAL, "empty SQL statement");
	if (rc > 0)
		rc = sptd_store_sql_next(sql + first.used, &rest);
	if (rc > 0)
		return sptd_query_err(err, errlen, -EINVAL,
		                      "only one SQL statement at a time (more follows ';')");
	return rc < 0 ? sptd_query_err(err, errlen, rc, "%s", strerror(-rc)) : 0;
}

int sptd_query_prepare(struct sptd_store *st, const char *sql,
                       struct sptd_store_stmt **out, char *err, size_t errlen)
{
	const char *msg;
	int rc;

	*out = NULL;
	rc = sptd_store_prepare(st, sql, out);
	if (rc >= 0 && *out)
		return 0;
	msg = sptd_store_errmsg(st);
	if (!msg || !*msg)
		msg = rc < 0 ? strerror(-rc) : "no statement";
	if (rc >= 0)
		return sptd_query_err(err, errlen, -EINVAL, "empty SQL statement");
	if (rc == -EROFS)
		return sptd_query_err(err, errlen, -EROFS, "%s%s",
		                      strncmp(msg, "query is read-only", 18) == 0 ? "" :
		                      "query is read-only: ", msg);
	if (rc == -EINVAL)
		return sptd_query_err(err, errlen, -EINVAL, "bad SQL: %s", msg);
	if (rc == -EBADMSG)
		return sptd_query_err(err, errlen, rc, "incident file is corrupt: %s", msg);
	return sptd_query_err(err, errlen, rc, "cannot run the query: %s", msg);
}
