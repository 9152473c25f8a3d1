/* format_csv.c — RFC 4180 CSV: a header record of column names, then one
 * record per row.  A field is quoted when it holds a comma, a double quote,
 * CR or LF; quotes inside are doubled.  NULL is an empty field, blobs are
 * hex.  Records end in '\n' (not CRLF) so that shell tools read them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "query-local.h"

int sptd_query_csv_field(FILE *out, const char *s, size_t n)
{
	size_t i;

	if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) &&
	    !memchr(s, '\r', n)) {
		if (n && fwrite(s, 1, n, out) != n)
			return -EIO;
		return 0;
	}
	if (fputc('"', out) == EOF)
		return -EIO;
	for (i = 0; i < n; i++) {
		if (s[i] == '"' && fputc('"', out) == EOF)
			return -EIO;
		if (fputc(s[i], out) == EOF)
			return -EIO;
	}
	if (fputc('"', out) == EOF)
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
