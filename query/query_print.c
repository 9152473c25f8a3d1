/* query_print.c — step a prepared statement and hand each row, rendered
 * column by column, to the printer of the chosen format. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query-local.h"

/* Per-column rendering state for the current row. */
struct print_row {
	int ncols;                      /* columns */
	struct sptd_query_value *vals;  /* values of the current row */
	struct sptd_query_buf *bufs;    /* one rendering buffer per column */
};

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

/* Render column @col of the current row of @stmt into @r. */
static int render_column(struct print_row *r, struct sptd_store_stmt *stmt, int col)
{
	struct sptd_query_value *v = &r->vals[col];
	struct sptd_query_buf *b = &r->bufs[col];
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
		snprintf(num, sizeof(num), "%" PRId64, sptd_store_column_int(stmt, col));
		sptd_query_buf_clear(b);
		rc = sptd_query_buf_add(b, num, strlen(num));
		break;
	case SPTD_STORE_FLOAT:
		rc = render_double(b, sptd_store_column_double(stmt, col));
		break;
	case SPTD_STORE_TEXT:
		text = sptd_store_column_text(stmt, col);
		/* borrowed until the next step: printers use it before then */
		v->text = text ? text : "";
		v->len = strlen(v->text);
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

int sptd_query_print_stmt(struct sptd_store *st, struct sptd_store_stmt *stmt,
                          enum sptd_query_format fmt, FILE *out,
                          unsigned flags, char *err, size_t errlen)
{
	struct sptd_query_table *table = NULL;
	struct print_row r = { 0 };
	const char **names = NULL;
	int64_t rows = 0;
	int i, rc, step;

	r.ncols = sptd_store_column_count(stmt);
	if (r.ncols < 0)
		return sptd_query_err(err, errlen, r.ncols, "cannot read the result columns");
	names = calloc((size_t)r.ncols + 1, sizeof(*names));
	r.vals = calloc((size_t)r.ncols + 1, sizeof(*r.vals));
	r.bufs = calloc((size_t)r.ncols + 1, sizeof(*r.bufs));
	if (!names || !r.vals || !r.bufs) {
		rc = sptd_query_err(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < r.ncols; i++) {
		names[i] = sptd_store_column_name(stmt, i);
		if (!names[i])
			names[i] = "?";
	}

	switch (fmt) {
	case SPTD_QUERY_TABLE:
		rc = sptd_query_table_create(out, flags, r.ncols, names, &table);
		break;
	case SPTD_QUERY_CSV:
		rc = sptd_query_csv_header(out, r.ncols, names);
		break;
	case SPTD_QUERY_JSON:
		rc = sptd_query_json_begin(out);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	if (rc < 0) {
		if (rc == -EINVAL)
			sptd_query_err(err, errlen, rc, "unknown output format %d", (int)fmt);
		else
			sptd_query_err(err, errlen, rc, "%s", rc == -ENOMEM ? "out of memory" :
			               "cannot write the output");
		goto out;
	}

	while ((step = sptd_store_step(stmt)) == 1) {
		for (i = 0; i < r.ncols; i++) {
			rc = render_column(&r, stmt, i);
			if (rc < 0) {
				rc = sptd_query_err(err, errlen, rc, "out of memory");
				goto out;
			}
		}
		if (fmt == SPTD_QUERY_TABLE)
			rc = sptd_query_table_row(table, r.vals);
		else if (fmt == SPTD_QUERY_CSV)
			rc = sptd_query_csv_row(out, r.ncols, r.vals);
		else
			rc = sptd_query_json_row(out, rows == 0, r.ncols, names, r.vals);
		if (rc < 0) {
			rc = sptd_query_err(err, errlen, rc, "%s", rc == -ENOMEM ?
			                    "out of memory" : "cannot write the output");
			goto out;
		}
		rows++;
	}
	if (step < 0) {
		const char *msg = sptd_store_errmsg(st);

		/* keep what was printed: close the table or array first */
		if (fmt == SPTD_QUERY_TABLE)
			sptd_query_table_finish(table);
		else if (fmt == SPTD_QUERY_JSON)
			sptd_query_json_end(out, rows);
		rc = sptd_query_err(err, errlen, step, "%s%s",
		                    step == -EBADMSG ? "incident file is corrupt: " : "query failed: ",
		                    msg && *msg ? msg : strerror(-step));
		goto out;
	}
	if (fmt == SPTD_QUERY_TABLE)
		rc = sptd_query_table_finish(table);
	else if (fmt == SPTD_QUERY_JSON)
		rc = sptd_query_json_end(out, rows);
	else
		rc = 0;
	if (rc == 0 && ferror(out))
		rc = -EIO;
	if (rc < 0) {
		rc = sptd_query_err(err, errlen, rc, "cannot write the output");
		goto out;
	}
	rc = rows > INT32_MAX ? INT32_MAX : (int)rows;
out:
	sptd_query_table_destroy(table);
	if (r.bufs)
		for (i = 0; i < r.ncols; i++)
			sptd_query_buf_fini(&r.bufs[i]);
	free(r.bufs);
	free(r.vals);
	free(names);
	return rc;
}
