/* format_table.c — aligned columns for people, in psql's style:
 *
 *    cpu | name   | busy_ns
 *   -----+--------+---------
 *      0 | server | 3000000
 *
 * Numbers are right-aligned, text left-aligned; NULL prints empty.  Control
 * characters show as escapes ("\n") so one row stays one line, invalid UTF-8
 * bytes as '?'.  Widths count code points (wide CJK glyphs are not measured
 * as two).  Nothing is cut unless a line width is given (a terminal's):
 * then the widest text columns are narrowed, and their text cut with "…",
 * until a line fits; numbers never are.  The first SPTD_QUERY_SIZE_ROWS rows
 * are buffered to size the columns, the rest stream with those widths (cut
 * if wider and a width is given, else printed whole), so memory stays
 * bounded for any result size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query-local.h"

/* One rendered cell, ready to print. */
struct table_cell {
	char *text;              /* display form (escaped, valid UTF-8); NULL: SQL NULL */
	int width;               /* code points in @text */
	int numeric;             /* right-align, never cut */
};

struct sptd_query_table {
	FILE *out;               /* where rows go */
	unsigned flags;          /* SPTD_QUERY_PF_* */
	int width;               /* widest line, 0: no limit (never cut) */
	int ncols;               /* columns per row */
	struct table_cell *names; /* rendered column names */
	int *widths;             /* column widths once sized */
	int *numeric_col;        /* column holds only numbers: header right-aligned */
	struct table_cell *rows; /* buffered rows, ncols cells each */
	size_t nrows;            /* rows buffered */
	int sized;               /* header printed; rows now stream */
	int64_t printed;         /* rows printed so far */
};

/* Render @n bytes of @s for display into a new string; *width gets its
 * code point count.  NULL on out of memory. */
static char *table_render(const char *s, size_t n, int *width)
{
	struct sptd_query_buf b = { 0 };
	size_t i = 0;
	int w = 0, len, rc = 0;

	rc = sptd_query_buf_reserve(&b, n);
	if (rc == 0)
		b.data[0] = '\0';   /* an empty string is a cell too */
	while (rc == 0 && i < n) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c < 0x20 || c == 0x7f) {
			if (c == '\n')
				snprintf(esc, sizeof(esc), "\\n");
			else if (c == '\t')
				snprintf(esc, sizeof(esc), "\\t");
			else if (c == '\r')
				snprintf(esc, sizeof(esc), "\\r");
			else
				snprintf(esc, sizeof(esc), "\\x%02x", c);
			rc = sptd_query_buf_add(&b, esc, strlen(esc));
			w += (int)strlen(esc);
			i++;
			continue;
		}
		len = sptd_query_utf8_seq(s + i, n - i);
		if (len == 0) {
			rc = sptd_query_buf_add(&b, "?", 1);
			i++;
		} else {
			rc = sptd_query_buf_add(&b, s + i, (size_t)len);
			i += (size_t)len;
		}
		w++;
	}
	if (rc < 0) {
		sptd_query_buf_fini(&b);
		return NULL;
	}
	*width = w;
	return b.data;
}

/* Fill @cell from @v.  -ENOMEM. */
static int table_cell_set(struct table_cell *cell, const struct sptd_query_value *v)
{
	cell->numeric = v->type == SPTD_STORE_INT || v->type == SPTD_STORE_FLOAT;
	cell->text = NULL;
	cell->width = 0;
	if (v->type == SPTD_STORE_NULL || !v->text)
		return 0;
	cell->text = table_render(v->text, v->len, &cell->width);
	return cell->text ? 0 : -ENOMEM;
}

int sptd_query_table_create(FILE *out, unsigned flags, int width, int ncols,
                            const char *const *names,
                            struct sptd_query_table **tp)
{
	struct sptd_query_table *t;
	int i, rc = -ENOMEM;

	*tp = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->out = out;
	t->flags = flags;
	t->width = width > 0 ? width : 0;
	t->ncols = ncols;
	t->names = calloc((size_t)ncols + 1, sizeof(*t->names));
	t->widths = calloc((size_t)ncols + 1, sizeof(*t->widths));
	t->numeric_col = calloc((size_t)ncols + 1, sizeof(*t->numeric_col));
	t->rows = calloc((size_t)ncols * SPTD_QUERY_SIZE_ROWS + 1, sizeof(*t->rows));
	if (!t->names || !t->widths || !t->numeric_col || !t->rows)
		goto fail;
	for (i = 0; i < ncols; i++) {
		struct sptd_query_value v = { SPTD_STORE_TEXT, names[i], strlen(names[i]) };

		if (table_cell_set(&t->names[i], &v) < 0)
			goto fail;
	}
	*tp = t;
	return 0;
fail:
	sptd_query_table_destroy(t);
	return rc;
}

/* Write @cell padded to @width; @last drops trailing padding. */
static int table_put_cell(struct sptd_query_table *t, const struct table_cell *cell,
                          int width, int right, int last)
{
	const char *s = cell->text ? cell->text : "";
	int w = cell->width, pad, i;
	size_t n = strlen(s);

	if (w > width && !cell->numeric && t->width) {
		/* cut to width-1 code points and add the ellipsis */
		size_t off = 0;
		int keep = width > 1 ? width - 1 : 0;

		for (i = 0; i < keep && off < n; i++) {
			int len = sptd_query_utf8_seq(s + off, n - off);

			off += len > 0 ? (size_t)len : 1;
		}
		if (fputc(' ', t->out) == EOF || fwrite(s, 1, off, t->out) != off ||
		    fputs("\xe2\x80\xa6", t->out) == EOF)
			return -EIO;
		return (!last && fputc(' ', t->out) == EOF) ? -EIO : 0;
	}
	pad = width > w ? width - w : 0;
	if (last && !right && n == 0)
		return 0; /* no trailing blanks after an empty last cell */
	if (fputc(' ', t->out) == EOF)
		return -EIO;
	if (right)
		for (i = 0; i < pad; i++)
			if (fputc(' ', t->out) == EOF)
				return -EIO;
	if (n && fwrite(s, 1, n, t->out) != n)
		return -EIO;
	if (!right && !last)
		for (i = 0; i < pad; i++)
			if (fputc(' ', t->out) == EOF)
				return -EIO;
	if (!last && fputc(' ', t->out) == EOF)
		return -EIO;
	return 0;
}

/* Print one row of cells with the sized widths. */
static int table_put_row(struct sptd_query_table *t, const struct table_cell *cells)
{
	int i, rc;

	for (i = 0; i < t->ncols; i++) {
		if (i && fputc('|', t->out) == EOF)
			return -EIO;
		rc = table_put_cell(t, &cells[i], t->widths[i], cells[i].numeric,
		                    i == t->ncols - 1);
		if (rc < 0)
			return rc;
	}
	return fputc('\n', t->out) == EOF ? -EIO : 0;
}

/* Narrow the widest text columns, one code point at a time, until a line
 * (" a | b " per column, '|' between) fits t->width; a column keeps at
 * least TABLE_MIN_WIDTH, numeric columns keep their width. */
#define TABLE_MIN_WIDTH 6
static void table_fit(struct sptd_query_table *t)
{
	long line = -1;
	int i;

	for (i = 0; i < t->ncols; i++)
		line += t->widths[i] + 3;
	while (line > t->width) {
		int widest = -1;

		for (i = 0; i < t->ncols; i++)
			if (!t->numeric_col[i] && t->widths[i] > TABLE_MIN_WIDTH &&
			    (widest < 0 || t->widths[i] > t->widths[widest]))
				widest = i;
		if (widest < 0)
			break;   /* only numbers and narrow text left: let it wrap */
		t->widths[widest]--;
		line--;
	}
}

/* Size the columns from the names and buffered rows, print the header,
 * separator and buffered rows, and switch to streaming. */
static int table_flush(struct sptd_query_table *t)
{
	struct table_cell *row;
	size_t r;
	int i, j, rc;

	for (i = 0; i < t->ncols; i++) {
		int numbers = 0, texts = 0;

		t->widths[i] = t->names[i].width;
		for (r = 0; r < t->nrows; r++) {
			const struct table_cell *c = &t->rows[r * (size_t)t->ncols + (size_t)i];

			if (c->width > t->widths[i])
				t->widths[i] = c->width;
			if (c->numeric)
				numbers++;
			else if (c->text)
				texts++;
		}
		t->numeric_col[i] = numbers > 0 && texts == 0;
	}
	if (t->width)
		table_fit(t);
	for (i = 0; i < t->ncols; i++) {
		if (i && fputc('|', t->out) == EOF)
			return -EIO;
		rc = table_put_cell(t, &t->names[i], t->widths[i], t->numeric_col[i],
		                    i == t->ncols - 1);
		if (rc < 0)
			return rc;
	}
	if (fputc('\n', t->out) == EOF)
		return -EIO;
	for (i = 0; i < t->ncols; i++) {
		if (i && fputc('+', t->out) == EOF)
			return -EIO;
		for (j = 0; j < t->widths[i] + 2; j++)
			if (fputc('-', t->out) == EOF)
				return -EIO;
	}
	if (fputc('\n', t->out) == EOF)
		return -EIO;
	t->sized = 1;
	for (r = 0; r < t->nrows; r++) {
		row = &t->rows[r * (size_t)t->ncols];
		rc = table_put_row(t, row);
		for (i = 0; i < t->ncols; i++) {
			free(row[i].text);
			row[i].text = NULL;
		}
		if (rc < 0)
			return rc;
		t->printed++;
	}
	t->nrows = 0;
	return 0;
}

int sptd_query_table_row(struct sptd_query_table *t,
                         const struct sptd_query_value *vals)
{
	struct table_cell *row;
	int i, rc;

	if (!t->sized && t->nrows == SPTD_QUERY_SIZE_ROWS) {
		rc = table_flush(t);
		if (rc < 0)
			return rc;
	}
	if (t->sized) {
		/* streaming: render into the first buffered slot and print */
		row = t->rows;
		rc = 0;
		for (i = 0; i < t->ncols && rc == 0; i++)
			rc = table_cell_set(&row[i], &vals[i]);
		if (rc == 0)
			rc = table_put_row(t, row);
		for (i = 0; i < t->ncols; i++) {
			free(row[i].text);
			row[i].text = NULL;
		}
		if (rc == 0)
			t->printed++;
		return rc;
	}
	row = &t->rows[t->nrows * (size_t)t->ncols];
	for (i = 0; i < t->ncols; i++) {
		rc = table_cell_set(&row[i], &vals[i]);
		if (rc < 0) {
			while (i-- > 0) {
				free(row[i].text);
				row[i].text = NULL;
			}
			return rc;
		}
	}
	t->nrows++;
	return 0;
}

int sptd_query_table_finish(struct sptd_query_table *t)
{
	int rc = 0;

	if (!t->sized)
		rc = table_flush(t);
	if (rc < 0)
		return rc;
	if (t->flags & SPTD_QUERY_PF_FOOTER) {
		if (fprintf(t->out, "(%lld row%s)\n", (long long)t->printed,
		            t->printed == 1 ? "" : "s") < 0)
			return -EIO;
	}
	return 0;
}

void sptd_query_table_destroy(struct sptd_query_table *t)
{
	size_t r;
	int i;

	if (!t)
		return;
	if (t->rows)
		for (r = 0; r < t->nrows; r++)
			for (i = 0; i < t->ncols; i++)
				free(t->rows[r * (size_t)t->ncols + (size_t)i].text);
	if (t->names)
		for (i = 0; i < t->ncols; i++)
			free(t->names[i].text);
	free(t->rows);
	free(t->names);
	free(t->widths);
	free(t->numeric_col);
	free(t);
}
