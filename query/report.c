/* report.c — runs a canned report: for each section, decide (its "when"
 * SQL) whether to print rows, a note, or nothing; print a one-line title and
 * the rows through the statement printer.
 *
 * Layout per format:
 *   table: "== title ==", the table, a blank line between sections; a
 *          section with no rows prints "(none)"; durations (columns named
 *          *_ns) print as "20.000 ms" under the name without "_ns";
 *   csv:   "# title", header and records, a blank line between sections;
 *          a note is "# note"; durations stay integer ns;
 *   json:  {"report": NAME, ID: {"title": ..., "rows": [...]}, ...}, with
 *          "note" added and "rows" empty when the data is absent.
 * With an incident named (several incidents, one report each) the table
 * starts with "=== INCIDENT ===", the csv with "# incident: INCIDENT", and
 * the json object gets an "incident" key after "report".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query-local.h"

const char *const *sptd_query_report_names(void)
{
	return sptd_query_report_name_list;
}

static const struct sptd_query_report_def *report_find(const char *name)
{
	const struct sptd_query_report_def *r;

	for (r = sptd_query_reports; r->name; r++)
		if (strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

const char *sptd_query_report_describe(const char *name)
{
	const struct sptd_query_report_def *r = name ? report_find(name) : NULL;

	return r ? r->describe : NULL;
}

/* Evaluate a section's "when" SQL: 1 run, 0 skip, 2 note (copied to
 * @note).  Negative errno with a message in @err. */
static int section_when(struct sptd_store *st, const struct sptd_query_section *sec,
                        struct sptd_query_buf *note, char *err, size_t errlen)
{
	struct sptd_store_stmt *stmt = NULL;
	const char *text;
	int rc;

	if (!sec->when)
		return 1;
	rc = sptd_query_prepare(st, sec->when, &stmt, err, errlen);
	if (rc < 0)
		return rc;
	rc = sptd_store_step(stmt);
	if (rc < 0) {
		rc = sptd_query_err(err, errlen, rc, "report section %s: %s", sec->id,
		                    sptd_store_errmsg(st));
		goto out;
	}
	if (rc == 0) {
		rc = 1;
		goto out;
	}
	switch (sptd_store_column_type(stmt, 0)) {
	case SPTD_STORE_TEXT:
		text = sptd_store_column_text(stmt, 0);
		sptd_query_buf_clear(note);
		rc = sptd_query_buf_add(note, text ? text : "", text ? strlen(text) : 0);
		/* notes quote the file (its source): no control character of
		 * it reaches a terminal */
		if (rc >= 0)
			sptd_store_printable(note->data, note->len);
		if (rc < 0)
			rc = sptd_query_err(err, errlen, rc, "out of memory");
		else
			rc = 2;
		break;
	case SPTD_STORE_INT:
		rc = sptd_store_column_int(stmt, 0) != 0;
		break;
	default:
		rc = 1;
		break;
	}
out:
	sptd_store_finalize(stmt);
	return rc;
}

/* Print one section; returns 1 if it printed anything, 0 if skipped. */
static int section_run(struct sptd_store *st, const struct sptd_query_section *sec,
                       const struct sptd_query_print_opts *opts, FILE *out, int first,
                       char *err, size_t errlen)
{
	enum sptd_query_format fmt = opts->format;
	struct sptd_query_buf note = { 0 }, sql = { 0 };
	struct sptd_store_stmt *stmt = NULL;
	int rc, what;

	what = section_when(st, sec, &note, err, errlen);
	if (what <= 0) {
		rc = what;
		goto out;
	}
	if (!sec->sql) {
		rc = sec->build(st, &sql);
		if (rc < 0) {
			rc = sptd_query_err(err, errlen, rc, "report section %s: cannot build its SQL",
			                    sec->id);
			goto out;
		}
	}
	if (what == 1) {
		rc = sptd_query_prepare(st, sec->sql ? sec->sql : sql.data, &stmt, err, errlen);
		if (rc < 0)
			goto out;
	}

	if (fmt == SPTD_QUERY_TABLE) {
		if (fprintf(out, "%s== %s ==\n", first ? "" : "\n", sec->title) < 0)
			goto eio;
		if (what == 2 && fprintf(out, "%s\n", note.data) < 0)
			goto eio;
	} else if (fmt == SPTD_QUERY_CSV) {
		if (fprintf(out, "%s# %s\n", first ? "" : "\n", sec->title) < 0)
			goto eio;
		if (what == 2 && fprintf(out, "# %s\n", note.data) < 0)
			goto eio;
	} else {
		if (fprintf(out, ",\n") < 0 || sptd_query_json_string(out, sec->id, strlen(sec->id)) < 0 ||
		    fprintf(out, ": {\"title\": ") < 0 ||
		    sptd_query_json_string(out, sec->title, strlen(sec->title)) < 0)
			goto eio;
		if (what == 2 && (fprintf(out, ", \"note\": ") < 0 ||
		                  sptd_query_json_string(out, note.data, note.len) < 0 ||
		                  fprintf(out, ", \"rows\": []}") < 0))
			goto eio;
		if (what == 1 && fprintf(out, ", \"rows\": ") < 0)
			goto eio;
	}
	if (what == 1) {
		rc = sptd_query_print_stmt(st, stmt, fmt, out,
		                           fmt == SPTD_QUERY_TABLE ? SPTD_QUERY_PF_HUMAN : 0,
		                           opts->width, err, errlen);
		if (rc < 0)
			goto out;
		if (fmt == SPTD_QUERY_TABLE && rc == 0 && fprintf(out, "(none)\n") < 0)
			goto eio;
		if (fmt == SPTD_QUERY_JSON && fprintf(out, "}") < 0)
			goto eio;
	}
	rc = 1;
	goto out;
eio:
	rc = sptd_query_err(err, errlen, -EIO, "cannot write the output");
out:
	sptd_store_finalize(stmt);
	sptd_query_buf_fini(&sql);
	sptd_query_buf_fini(&note);
	return rc;
}

int sptd_query_report(struct sptd_store *st, const char *name,
                      enum sptd_query_format fmt, FILE *out,
                      char *err, size_t errlen)
{
	struct sptd_query_print_opts opts = { .format = fmt, .width = 0 };

	return sptd_query_report_opts(st, name, &opts, NULL, out, err, errlen);
}

int sptd_query_report_flags(struct sptd_store *st, const char *name, int flags,
                            enum sptd_query_format fmt, FILE *out, char *err, size_t errlen)
{
	struct sptd_query_print_opts opts = { .format = fmt, .width = 0, .report_flags = flags };

	return sptd_query_report_opts(st, name, &opts, NULL, out, err, errlen);
}

int sptd_query_report_opts(struct sptd_store *st, const char *name,
                           const struct sptd_query_print_opts *opts,
                           const char *incident, FILE *out,
                           char *err, size_t errlen)
{
	const struct sptd_query_report_def *r;
	const struct sptd_query_section *sec;
	enum sptd_query_format fmt;
	int rc, printed = 0, flags;

	if (err && errlen)
		err[0] = '\0';
	if (!st || !out || !opts)
		return sptd_query_err(err, errlen, -EINVAL, "%s",
		                      !st ? "no incident open" : !out ? "no output stream" :
		                      "no print options");
	fmt = opts->format;
	flags = opts->report_flags;
	if (fmt != SPTD_QUERY_TABLE && fmt != SPTD_QUERY_CSV && fmt != SPTD_QUERY_JSON)
		return sptd_query_err(err, errlen, -EINVAL, "unknown output format %d", (int)fmt);
	if (flags & ~(SPTD_QUERY_REPORT_CLIPPED | SPTD_QUERY_REPORT_ALL_TASKS))
		return sptd_query_err(err, errlen, -EINVAL, "unknown report option bits 0x%x",
		                      (unsigned int)flags);
	if (!name)
		name = "summary";
	r = report_find(name);
	if (!r) {
		char names[256] = "";
		const struct sptd_query_report_def *d;

		for (d = sptd_query_reports; d->name; d++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			         d == sptd_query_reports ? "" : ", ", d->name);
		return sptd_query_err(err, errlen, -EINVAL, "unknown report '%s' (reports: %s)",
		                      name, names);
	}
	{
		/* the reports clip to the window: one that ends before it
		 * starts (a damaged or forged file) would make every thread 0 %,
		 * said as if true */
		int64_t ws, we;

		if (sptd_store_meta_get_int(st, "window_start", &ws) == 0 &&
		    sptd_store_meta_get_int(st, "window_end", &we) == 0 && we < ws)
			return sptd_query_err(err, errlen, -EBADMSG, "the incident's window ends "
			                      "before it starts (meta window_start %lld, window_end "
			                      "%lld): the file was damaged or forged",
			                      (long long)ws, (long long)we);
	}
	if (fmt == SPTD_QUERY_JSON) {
		if (fprintf(out, "{\"report\": ") < 0 ||
		    sptd_query_json_string(out, r->name, strlen(r->name)) < 0)
			return sptd_query_err(err, errlen, -EIO, "cannot write the output");
		if (incident && (fprintf(out, ",\n\"incident\": ") < 0 ||
		                 sptd_query_json_string(out, incident, strlen(incident)) < 0))
			return sptd_query_err(err, errlen, -EIO, "cannot write the output");
	} else if (incident) {
		/* the file's name as given: no control character of it shown */
		fputs(fmt == SPTD_QUERY_TABLE ? "=== " : "# incident: ", out);
		sptd_query_put_shown(out, incident, 0);
		if (fputs(fmt == SPTD_QUERY_TABLE ? " ===\n" : "\n", out) == EOF)
			return sptd_query_err(err, errlen, -EIO, "cannot write the output");
	}
	sec = (flags & SPTD_QUERY_REPORT_CLIPPED) && r->sections_clipped ? r->sections_clipped
	                                                                 : r->sections;
	if ((flags & SPTD_QUERY_REPORT_ALL_TASKS) && r->sections_all)
		sec = r->sections_all;
	for (; sec->id; sec++) {
		rc = section_run(st, sec, opts, out, printed == 0, err, errlen);
		/* the reports' SQL is known good: SQLite refusing it on this file
		 * (an integer overflow in its rows, a table without a column)
		 * means the file is bad, not the caller's request */
		if (rc == -EINVAL) {
			char *hint = err ? strstr(err, SPTD_QUERY_OVERFLOW_HINT) : NULL;

			if (hint)   /* advice for SQL the user cannot change */
				*hint = '\0';
			return -EBADMSG;
		}
		if (rc < 0)
			return rc;
		printed += rc;
	}
	if (fmt == SPTD_QUERY_JSON && fprintf(out, "\n}\n") < 0)
		return sptd_query_err(err, errlen, -EIO, "cannot write the output");
	if (ferror(out))
		return sptd_query_err(err, errlen, -EIO, "cannot write the output");
	return printed;
}
