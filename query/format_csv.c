/* format_csv.c — RFC 4180 CSV: a header record of column names, then one
 * record per row.  A field is quoted when it holds a comma, a double quote,
 * CR or LF; quotes inside are doubled.  NULL is an empty field, blobs are
 * hex.  Records end in '\n' (not CRLF) so that shell tools read them.
 *
 * Like the table and JSON formats, CSV never passes a terminal control
 * through, whether stdout is a terminal or a file (a file is later `cat`):
 * a C0 control other than TAB, CR and LF (which RFC 4180 fields may hold),
 * DEL, a C1 control (U+0080..U+009F) and a byte that is not UTF-8 are
 * written as the table writes them, "\xNN" per byte.  A thread named
 * "\e]0;...\a\e[2J" cleared the terminal of whoever listed its samples. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "query-local.h"

/* The character at @s (@n bytes left): its length in bytes, and in *@esc
 * whether it is shown as "\xNN" per byte rather than as it is (a control
 * byte, a C1 control's two bytes, a byte that is not UTF-8). */
static size_t csv_char(const char *s, size_t n, int *esc)
{
	unsigned char c = (unsigned char)s[0];
	int len;

	*esc = 0;
	if (c < 0x80) {
		*esc = (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
		return 1;
	}
	len = sptd_query_utf8_seq(s, n);
	if (len == 0) {
		*esc = 1;
		return 1;
	}
	/* U+0080..U+009F: CSI, OSC, ST ... in one code point */
	*esc = len == 2 && c == 0xc2 && (unsigned char)s[1] < 0xa0;
	return (size_t)len;
}

int sptd_query_csv_field(FILE *out, const char *s, size_t n)
{
	int quote = memchr(s, ',', n) || memchr(s, '"', n) || memchr(s, '\n', n) ||
	            memchr(s, '\r', n);
	size_t i = 0, run = 0, len;
	int esc;

	if (quote && fputc('"', out) == EOF)
		return -EIO;
	/* plain runs written whole; a quote doubled, a control escaped */
	while (i < n) {
		len = csv_char(s + i, n - i, &esc);
		if (!esc && s[i] != '"') {
			i += len;
			continue;
		}
		if (i > run && fwrite(s + run, 1, i - run, out) != i - run)
			return -EIO;
		for (size_t k = 0; esc && k < len; k++)
			if (fprintf(out, "\\x%02x", (unsigned char)s[i + k]) < 0)
				return -EIO;
		if (!esc && fputs("\"\"", out) == EOF)
			return -EIO;
		i += len;
		run = i;
	}
	if (i > run && fwrite(s + run, 1, i - run, out) != i - run)
		return -EIO;
	if (quote && fputc('"', out) == EOF)
		return -EIO;
	return 0;
}

int sptd_query_csv_header(FILE *out, int ncols, const char *const *names)
{
	int i, rc;

	for (i = 0; i < ncols; i++) {
		if (i && fputc(',', out) == EOF)
			return -EIO;
		rc = sptd_query_csv_field(out, names[i], strlen(names[i]));
		if (rc < 0)
			return rc;
	}
	return fputc('\n', out) == EOF ? -EIO : 0;
}

int sptd_query_csv_row(FILE *out, int ncols, const struct sptd_query_value *vals)
{
	int i, rc;

	for (i = 0; i < ncols; i++) {
		if (i && fputc(',', out) == EOF)
			return -EIO;
		if (vals[i].type == SPTD_STORE_NULL || !vals[i].text)
			continue;
		rc = sptd_query_csv_field(out, vals[i].text, vals[i].len);
		if (rc < 0)
			return rc;
	}
	return fputc('\n', out) == EOF ? -EIO : 0;
}
