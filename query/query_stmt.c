/* query_stmt.c — SQL text before it runs: the output format names,
 * statements split at their ';' (comments and quotes respected), the
 * one-statement check, and preparing with the error a user can act on. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "query-local.h"

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

/* Skip a comment starting at @s[*i] if there is one; returns 1 if it did.
 * An unterminated block comment runs to the end (SQLite accepts that). */
static int skip_comment(const char *s, size_t *i)
{
	if (s[*i] == '-' && s[*i + 1] == '-') {
		while (s[*i] && s[*i] != '\n')
			(*i)++;
		return 1;
	}
	if (s[*i] == '/' && s[*i + 1] == '*') {
		*i += 2;
		while (s[*i] && !(s[*i] == '*' && s[*i + 1] == '/'))
			(*i)++;
		if (s[*i])
			*i += 2;
		return 1;
	}
	return 0;
}

size_t sptd_query_statement_next(const char *sql, size_t *start, size_t *len,
                                 int *complete)
{
	size_t i = 0, begin = 0, end = 0;
	int content = 0;

	*start = *len = 0;
	*complete = 0;
	if (!sql)
		return 0;
	while (sql[i]) {
		char c = sql[i], quote_end;

		if (isspace((unsigned char)c)) {
			i++;
			continue;
		}
		if (skip_comment(sql, &i))
			continue;
		if (c == ';') {
			i++;
			if (content) {
				*complete = 1;
				break;
			}
			continue;
		}
		if (!content)
			begin = i;
		content = 1;
		quote_end = c == '\'' ? '\'' : c == '"' ? '"' : c == '`' ? '`' : c == '[' ? ']' : 0;
		i++;
		if (quote_end) {
			/* a doubled quote inside reads as close-then-open: same result */
			while (sql[i] && sql[i] != quote_end)
				i++;
			if (sql[i])
				i++;
		}
		end = i;
	}
	if (!content)
		return 0;
	*start = begin;
	*len = end - begin;
	return i;
}

int sptd_query_check_single(const char *sql, char *err, size_t errlen)
{
	size_t start, len, used;
	int complete;

	used = sptd_query_statement_next(sql, &start, &len, &complete);
	if (!used)
		return sptd_query_err(err, errlen, -EINVAL, "empty SQL statement");
	if (sptd_query_statement_next(sql + used, &start, &len, &complete))
		return sptd_query_err(err, errlen, -EINVAL,
		                      "only one SQL statement at a time (more follows ';')");
	return 0;
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
