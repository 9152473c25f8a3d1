/* query_print.c — results: step prepared statements and hand each row,
 * rendered column by column, to the printer of the chosen format, under one
 * header however many statements (incidents) add rows to it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query-local.h"

/* Shortest "%.Ng" that reads back as the same double, with ".0" added to
 * integral values so a float still looks like one. */
static int render_double(struct sptd_query_buf *b, double d)
{
	char text[40];
	int prec;

	for (prec = 15; prec <= 17; prec++) {
		snprintf(text, sizeof(text), "%.*g", prec, d);
		if (strtod(text, NULL) == d)
			break;
	}
	if (!strpbrk(text, ".eEnNiI"))
		strcat(text, ".0");
	sptd_query_buf_clear(b);
	return sptd_query_buf_add(b, text, strlen(text));
}

/* Lowercase hex of a blob. */
static int render_blob(struct sptd_query_buf *b, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;
	int rc;

	sptd_query_buf_clear(b);
	if (n > (SIZE_MAX - 1) / 2)
		return -ENOMEM;
	rc = sptd_query_buf_reserve(b, 2 * n);
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++) {
		b->data[2 * i] = digits[p[i] >> 4];
		b->data[2 * i + 1] = digits[p[i] & 15];
	}
	b->len = 2 * n;
	b->data[b->len] = '\0';
	return 0;
}

char *sptd_query_duration_text(int64_t ns, char *buf, size_t len)
{
	double mag = ns < 0 ? -(double)ns : (double)ns;

	if (mag < 1e3)
		snprintf(buf, len, "%" PRId64 " ns", ns);
	else if (mag < 1e6)
		snprintf(buf, len, "%.3f us", (double)ns / 1e3);
	else if (mag < 1e9)
		snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	return buf;
}

/* Render column @col of the current row of @stmt into value @v, using
 * buffer @b; @duration: a number of ns shown as "20.000 ms". */
static int render_column(struct sptd_query_value *v, struct sptd_query_buf *b,
                         struct sptd_store_stmt *stmt, int col, int duration)
{
	char num[32];
	const char *text;
	const void *blob;
	size_t len = 0;
	int rc;

	v->type = sptd_store_column_type(stmt, col);
	v->text = NULL;
	v->len = 0;
	switch (v->type) {
	case SPTD_STORE_INT:
		if (duration)
			sptd_query_duration_text(sptd_store_column_int(stmt, col), num, sizeof(num));
		else
			snprintf(num, sizeof(num), "%" PRId64, sptd_store_column_int(stmt, col));
		sptd_query_buf_clear(b);
		rc = sptd_query_buf_add(b, num, strlen(num));
		break;
	case SPTD_STORE_FLOAT:
		/* a REAL duration from the file beyond int64 (or NaN) is shown
		 * as the number it is, not cast (undefined: it came out as a
		 * negative duration) */
		if (duration && sptd_store_column_double(stmt, col) > -9.2e18 &&
		    sptd_store_column_double(stmt, col) < 9.2e18) {
			sptd_query_duration_text((int64_t)sptd_store_column_double(stmt, col), num,
			                         sizeof(num));
			sptd_query_buf_clear(b);
			rc = sptd_query_buf_add(b, num, strlen(num));
			break;
		}
		rc = render_double(b, sptd_store_column_double(stmt, col));
		break;
	case SPTD_STORE_TEXT:
		/* every byte, NULs too (the formats escape them); borrowed
		 * until the next step: printers use it before then */
		text = sptd_store_column_text_n(stmt, col, &len);
		v->text = text ? text : "";
		v->len = text ? len : 0;
		return 0;
	case SPTD_STORE_BLOB:
		blob = sptd_store_column_blob(stmt, col, &len);
		rc = render_blob(b, blob, blob ? len : 0);
		break;
	default:
		v->type = SPTD_STORE_NULL;
		return 0;
	}
	if (rc < 0)
		return rc;
	v->text = b->data;
	v->len = b->len;
	return 0;
}

/* ---- a result ---------------------------------------------------------- */

int sptd_query_result_init(struct sptd_query_result *r, enum sptd_query_format fmt,
                           FILE *out, unsigned flags, int width, const char *label_name)
{
	memset(r, 0, sizeof(*r));
	if (fmt != SPTD_QUERY_TABLE && fmt != SPTD_QUERY_CSV && fmt != SPTD_QUERY_JSON)
		return -EINVAL;
	r->fmt = fmt;
	r->out = out;
	r->flags = flags;
	r->width = width > 0 ? width : 0;
	if (label_name && !(r->label_name = strdup(label_name)))
		return -ENOMEM;
	return 0;
}

/* Learn the columns from the first statement and print what goes before
 * the rows (table: nothing until sized; csv: the header; json: "[").
 * -ENOMEM, -EIO. */
static int result_start(struct sptd_query_result *r, struct sptd_store_stmt *stmt)
{
	int label = r->label_name != NULL, i, rc;

	r->nstmt = sptd_store_column_count(stmt);
	if (r->nstmt < 0)
		return r->nstmt;
	r->ncols = r->nstmt + label;
	r->names = calloc((size_t)r->ncols + 1, sizeof(*r->names));
	r->dur_col = calloc((size_t)r->nstmt + 1, sizeof(*r->dur_col));
	r->vals = calloc((size_t)r->ncols + 1, sizeof(*r->vals));
	r->bufs = calloc((size_t)r->ncols + 1, sizeof(*r->bufs));
	if (!r->names || !r->dur_col || !r->vals || !r->bufs)
		return -ENOMEM;
	if (label && !(r->names[0] = strdup(r->label_name)))
		return -ENOMEM;
	for (i = 0; i < r->nstmt; i++) {
		const char *name = sptd_store_column_name(stmt, i);
		size_t n;

		name = name ? name : "?";
		n = strlen(name);
		/* a report's "busy_ns" shows as "busy" with a unit in every cell */
		if ((r->flags & SPTD_QUERY_PF_HUMAN) && n > 3 && strcmp(name + n - 3, "_ns") == 0) {
			r->dur_col[i] = 1;
			n -= 3;
		}
		r->names[label + i] = strndup(name, n);
		if (!r->names[label + i])
			return -ENOMEM;
	}
	r->kv_human = (r->flags & SPTD_QUERY_PF_HUMAN) && r->nstmt == 2 &&
	              strcmp(r->names[label], "key") == 0 && strcmp(r->names[label + 1], "value") == 0;
	r->started = 1;
	switch (r->fmt) {
	case SPTD_QUERY_TABLE:
		rc = sptd_query_table_create(r->out, r->flags, r->width, r->ncols,
		                             (const char *const *)r->names, &r->table);
		break;
	case SPTD_QUERY_CSV:
		rc = sptd_query_csv_header(r->out, r->ncols, (const char *const *)r->names);
		break;
	default:
		rc = sptd_query_json_begin(r->out);
		break;
	}
	return rc;
}

/* A report's key/value row "window_ns | 10000000" shows as "window |
 * 10.000 ms" (PF_HUMAN): the key loses "_ns" and the value becomes a
 * duration when it is an integer. */
static int result_kv_human(struct sptd_query_result *r)
{
	int k = r->label_name != NULL;
	struct sptd_query_value *key = &r->vals[k], *val = &r->vals[k + 1];
	char num[32], *end;
	long long ns;

	if (!key->text || key->len <= 3 || memcmp(key->text + key->len - 3, "_ns", 3) != 0 ||
	    !val->text || !val->len)
		return 0;
	errno = 0;
	ns = strtoll(val->text, &end, 10);
	if (errno || (size_t)(end - val->text) != val->len)
		return 0;
	key->len -= 3;
	sptd_query_duration_text(ns, num, sizeof(num));
	sptd_query_buf_clear(&r->bufs[k + 1]);
	if (sptd_query_buf_add(&r->bufs[k + 1], num, strlen(num)) < 0)
		return -ENOMEM;
	val->type = SPTD_STORE_TEXT;   /* a text column: stays left-aligned */
	val->text = r->bufs[k + 1].data;
	val->len = r->bufs[k + 1].len;
	return 0;
}

/* Hand the row in r->vals to the format's printer. */
static int result_row(struct sptd_query_result *r)
{
	const char *const *names = (const char *const *)r->names;

	if (r->fmt == SPTD_QUERY_TABLE)
		return sptd_query_table_row(r->table, r->vals);
	if (r->fmt == SPTD_QUERY_CSV)
		return sptd_query_csv_row(r->out, r->ncols, r->vals);
	return sptd_query_json_row(r->out, r->rows == 0, r->ncols, names, r->vals);
}

int sptd_query_result_stmt(struct sptd_query_result *r, struct sptd_store *st,
                           struct sptd_store_stmt *stmt, const char *label,
                           char *err, size_t errlen)
{
	int label_col = r->label_name != NULL, i, rc, step, n;
	int64_t added = 0;

	if (r->finished)
		return sptd_query_err(err, errlen, -EINVAL, "the result is already closed");
	if (!r->started) {
		rc = result_start(r, stmt);
		if (rc < 0)
			return sptd_query_err(err, errlen, rc, "%s", rc == -ENOMEM ? "out of memory" :
			                      "cannot write the output");
	}
	n = sptd_store_column_count(stmt);
	if (n != r->nstmt)
		return sptd_query_err(err, errlen, -EINVAL, "the statement gives %d column%s here "
		                      "and %d before: results cannot be printed together", n,
		                      n == 1 ? "" : "s", r->nstmt);
	if (label_col) {
		r->vals[0].type = SPTD_STORE_TEXT;
		r->vals[0].text = label ? label : "";
		r->vals[0].len = strlen(r->vals[0].text);
	}
	while ((step = sptd_store_step(stmt)) == 1) {
		for (i = 0; i < r->nstmt; i++) {
			rc = render_column(&r->vals[label_col + i], &r->bufs[label_col + i], stmt, i,
			                   r->dur_col[i]);
			if (rc < 0)
				return sptd_query_err(err, errlen, rc, "out of memory");
		}
		if (r->kv_human && result_kv_human(r) < 0)
			return sptd_query_err(err, errlen, -ENOMEM, "out of memory");
		rc = result_row(r);
		if (rc < 0)
			return sptd_query_err(err, errlen, rc, "%s", rc == -ENOMEM ?
			                      "out of memory" : "cannot write the output");
		r->rows++;
		added++;
	}
	if (step < 0) {
		const char *msg = sptd_store_errmsg(st);

		/* sum() of the file's values beyond int64 is the SQL's error
		 * (exit 2), with the way out named */
		int overflow = msg && strstr(msg, "integer overflow");

		return sptd_query_err(err, errlen, step, "%s%s%s",
		                      step == -EBADMSG ? "incident file is corrupt: " : "query failed: ",
		                      msg && *msg ? msg : strerror(-step),
		                      overflow ? SPTD_QUERY_OVERFLOW_HINT : "");
	}
	return added > INT32_MAX ? INT32_MAX : (int)added;
}

int sptd_query_result_close(struct sptd_query_result *r, char *err, size_t errlen)
{
	int rc = 0;

	if (r->finished || !r->started) {
		r->finished = 1;
		return 0;
	}
	r->finished = 1;
	if (r->fmt == SPTD_QUERY_TABLE)
		rc = sptd_query_table_finish(r->table);
	else if (r->fmt == SPTD_QUERY_JSON)
		rc = sptd_query_json_end(r->out, r->rows);
	if (rc == 0 && ferror(r->out))
		rc = -EIO;
	if (rc < 0)
		return sptd_query_err(err, errlen, rc, "cannot write the output");
	return r->rows > INT32_MAX ? INT32_MAX : (int)r->rows;
}

void sptd_query_result_fini(struct sptd_query_result *r)
{
	int i;

	if (!r)
		return;
	sptd_query_table_destroy(r->table);
	if (r->names)
		for (i = 0; i < r->ncols; i++)
			free(r->names[i]);
	if (r->bufs)
		for (i = 0; i < r->ncols; i++)
			sptd_query_buf_fini(&r->bufs[i]);
	free(r->names);
	free(r->dur_col);
	free(r->vals);
	free(r->bufs);
	free(r->label_name);
	memset(r, 0, sizeof(*r));
}

int sptd_query_print_stmt(struct sptd_store *st, struct sptd_store_stmt *stmt,
                          enum sptd_query_format fmt, FILE *out,
                          unsigned flags, int width, char *err, size_t errlen)
{
	struct sptd_query_result r;
	int rc, closed;

	rc = sptd_query_result_init(&r, fmt, out, flags, width, NULL);
	if (rc < 0) {
		if (rc == -EINVAL)
			rc = sptd_query_err(err, errlen, rc, "unknown output format %d", (int)fmt);
		else
			rc = sptd_query_err(err, errlen, rc, "out of memory");
		goto out;
	}
	rc = sptd_query_result_stmt(&r, st, stmt, NULL, err, errlen);
	if (rc < 0 && !r.started)
		goto out;
	/* keep what was printed: close the table or array even after a failure */
	closed = sptd_query_result_close(&r, rc < 0 ? NULL : err, errlen);
	if (rc >= 0)
		rc = closed;
out:
	sptd_query_result_fini(&r);
	return rc;
}

/* ---- the public result ----------------------------------------------- */

int sptd_query_result_create(const struct sptd_query_print_opts *opts, FILE *out,
                             const char *label_column, struct sptd_query_result **res)
{
	struct sptd_query_result *r;
	int rc;

	if (!res)
		return -EINVAL;
	*res = NULL;
	if (!opts || !out)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	rc = sptd_query_result_init(r, opts->format, out, SPTD_QUERY_PF_FOOTER, opts->width,
	                            label_column);
	if (rc < 0) {
		sptd_query_result_fini(r);
		free(r);
		return rc;
	}
	*res = r;
	return 0;
}

int sptd_query_result_add(struct sptd_query_result *res, struct sptd_store *st,
                          const char *label, const char *sql, char *err, size_t errlen)
{
	struct sptd_store_stmt *stmt = NULL;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!res || !st || !sql)
		return sptd_query_err(err, errlen, -EINVAL, "%s", !res ? "no result" :
		                      !st ? "no incident open" : "no SQL given");
	rc = sptd_query_check_single(sql, err, errlen);
	if (rc < 0)
		return rc;
	rc = sptd_query_prepare(st, sql, &stmt, err, errlen);
	if (rc < 0)
		return rc;
	rc = sptd_query_result_stmt(res, st, stmt, label, err, errlen);
	sptd_store_finalize(stmt);
	return rc;
}

int sptd_query_result_finish(struct sptd_query_result *res, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!res)
		return sptd_query_err(err, errlen, -EINVAL, "no result");
	return sptd_query_result_close(res, err, errlen);
}

void sptd_query_result_destroy(struct sptd_query_result *res)
{
	if (!res)
		return;
	sptd_query_result_fini(res);
	free(res);
}
