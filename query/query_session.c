/* query_session.c — statements and reports over a set of open incidents:
 * one result per statement however many incidents (an "incident" column
 * tells their rows apart), one report per incident.  The shell
 * (query_shell.c) runs on the same session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query-local.h"
#include "sptd_store_text.h"

int sptd_query_session_create(const struct sptd_query_print_opts *opts, FILE *out,
                              FILE *msg, const char *prefix,
                              struct sptd_query_session **s)
{
	struct sptd_query_session *q;

	if (!s)
		return -EINVAL;
	*s = NULL;
	if (!opts || !out || !msg)
		return -EINVAL;
	if (opts->format != SPTD_QUERY_TABLE && opts->format != SPTD_QUERY_CSV &&
	    opts->format != SPTD_QUERY_JSON)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->opts = *opts;
	q->out = out;
	q->msg = msg;
	q->prefix = strdup(prefix ? prefix : "");
	if (!q->prefix) {
		free(q);
		return -ENOMEM;
	}
	*s = q;
	return 0;
}

int sptd_query_session_add(struct sptd_query_session *s, struct sptd_store *st,
                           const char *label)
{
	struct sptd_query_incident *more;
	char *copy;

	if (!s || !st || !label)
		return -EINVAL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;

		more = realloc(s->inc, cap * sizeof(*more));
		if (!more)
			return -ENOMEM;
		s->inc = more;
		s->cap = cap;
	}
	copy = strdup(label);
	if (!copy)
		return -ENOMEM;
	s->inc[s->n].st = st;
	s->inc[s->n].label = copy;
	s->n++;
	return 0;
}

void sptd_query_session_destroy(struct sptd_query_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->inc[i].label);
	free(s->inc);
	free(s->prefix);
	free(s);
}

void sptd_query_session_error(struct sptd_query_session *s, const char *label,
                              const char *err, int rc)
{
	fflush(s->out);
	fprintf(s->msg, "%s%s%s%s%s%s\n", s->prefix, label ? label : "", label ? ": " : "",
	        s->where, *s->where ? ": " : "", err && *err ? err : strerror(-rc));
	fflush(s->msg);
}

/* A failure that every incident would give (the SQL itself is wrong). */
static int statement_error(int rc)
{
	return rc == -EINVAL || rc == -EROFS;
}

int sptd_query_session_statement(struct sptd_query_session *s, const char *sql)
{
	struct sptd_query_result r;
	char err[1024] = "";
	int rc, first = 0;

	if (!s->n) {
		sptd_query_session_error(s, NULL, "no incident to run the statement on", -EINVAL);
		return -EINVAL;
	}
	rc = sptd_query_check_single(sql, err, sizeof(err));
	if (rc < 0) {
		sptd_query_session_error(s, NULL, err, rc);
		return rc;
	}
	rc = sptd_query_result_init(&r, s->opts.format, s->out, SPTD_QUERY_PF_FOOTER,
	                            s->opts.width, s->n > 1 ? "incident" : NULL);
	if (rc < 0) {
		sptd_query_session_error(s, NULL, "out of memory", rc);
		return rc;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct sptd_store_stmt *stmt = NULL;

		rc = sptd_query_prepare(s->inc[i].st, sql, &stmt, err, sizeof(err));
		if (rc >= 0)
			rc = sptd_query_result_stmt(&r, s->inc[i].st, stmt, s->inc[i].label, err,
			                            sizeof(err));
		sptd_store_finalize(stmt);
		if (rc >= 0)
			continue;
		if (statement_error(rc) && (i == 0 || !r.started)) {
			/* the SQL is wrong: say it once, not per incident */
			sptd_query_session_error(s, NULL, err, rc);
			first = rc;
			break;
		}
		sptd_query_session_error(s, s->n > 1 ? s->inc[i].label : NULL, err, rc);
		if (!first)
			first = rc;
	}
	rc = sptd_query_result_close(&r, err, sizeof(err));
	if (rc < 0) {
		sptd_query_session_error(s, NULL, err, rc);
		if (!first)
			first = rc;
	}
	sptd_query_result_fini(&r);
	fflush(s->out);
	return first;
}

/* Name the statement of @span (the @nth of a text whose line @line its
 * text starts on) in its errors, when the text holds more than one. */
static void name_statement(struct sptd_query_session *s, const char *text,
                           const struct sptd_store_sql_span *span, unsigned nth,
                           unsigned line)
{
	struct sptd_store_sql_span next;

	if (nth == 1 && sptd_store_sql_next(text + span->used, &next) <= 0)
		s->where[0] = '\0';
	else
		snprintf(s->where, sizeof(s->where), "statement %u (line %u)", nth,
		         line + span->line - 1);
}

int sptd_query_session_sql(struct sptd_query_session *s, const char *text)
{
	struct sptd_store_sql_span span;
	char outer[sizeof(s->where)];
	unsigned line = 1, results = 0;
	int split, rc, first = 0;

	if (!s || !text)
		return -EINVAL;
	/* a .read inside the shell: the shell's own statement is named again
	 * after it */
	memcpy(outer, s->where, sizeof(outer));
	while ((split = sptd_store_sql_next(text, &span)) > 0) {
		char *sql = strndup(text + span.start, span.len);

		if (!sql) {
			split = -ENOMEM;
			break;
		}
		/* results of several statements: a blank line between tables */
		if (results++ && s->opts.format == SPTD_QUERY_TABLE)
			fputc('\n', s->out);
		name_statement(s, text, &span, results, line);
		rc = sptd_query_session_statement(s, sql);
		free(sql);
		if (rc < 0 && !first)
			first = rc;
		if (statement_error(rc))
			break;
		text += span.used;
		line += span.lines_used;
	}
	memcpy(s->where, outer, sizeof(outer));
	if (split < 0) {
		sptd_query_session_error(s, NULL, "out of memory", split);
		return split;
	}
	if (!results) {
		sptd_query_session_error(s, NULL, "empty SQL statement", -EINVAL);
		return -EINVAL;
	}
	return first;
}

int sptd_query_session_report(struct sptd_query_session *s, const char *name)
{
	char err[1024] = "";
	int rc, first = 0, json = 0;

	if (!s)
		return -EINVAL;
	if (!name)
		name = "summary";
	if (!sptd_query_report_describe(name)) {
		snprintf(err, sizeof(err), "unknown report '%s' (see --report list)", name);
		sptd_query_session_error(s, NULL, err, -EINVAL);
		return -EINVAL;
	}
	/* several incidents in json: an array of report objects */
	json = s->n > 1 && s->opts.format == SPTD_QUERY_JSON;
	if (json)
		fputs("[\n", s->out);
	for (size_t i = 0; i < s->n; i++) {
		if (i && !json)
			fputc('\n', s->out);
		if (i && json)
			fputs(",\n", s->out);
		rc = sptd_query_report_opts(s->inc[i].st, name, &s->opts,
		                            s->n > 1 ? s->inc[i].label : NULL, s->out, err,
		                            sizeof(err));
		if (rc < 0) {
			sptd_query_session_error(s, s->n > 1 ? s->inc[i].label : NULL, err, rc);
			if (!first)
				first = rc;
		}
	}
	if (json)
		fputs("]\n", s->out);
	fflush(s->out);
	if (ferror(s->out) && !first) {
		sptd_query_session_error(s, NULL, "cannot write the output", -EIO);
		first = -EIO;
	}
	return first;
}
