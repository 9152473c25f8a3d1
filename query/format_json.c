/* format_json.c — JSON output: an array with one object per row, keys the
 * column names in order.  Integers and finite floats are numbers, text and
 * blobs (hex) are strings, NULL is null.  Strings are escaped per RFC 8259
 * and invalid UTF-8 is replaced by U+FFFD, so any incident prints as valid
 * JSON. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "query-local.h"

int sptd_query_json_string_counted(FILE *out, const char *s, size_t n, uint64_t *bytes)
{
	uint64_t written = 2;   /* the quotes */
	size_t i = 0;
	int len;

	if (fputc('"', out) == EOF)
		return -EIO;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;

		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		default: break;
		}
		if (esc) {
			if (fputs(esc, out) == EOF)
				return -EIO;
			written += 2;
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			if (fprintf(out, "\\u%04x", c) < 0)
				return -EIO;
			written += 6;
			i++;
			continue;
		}
		len = sptd_query_utf8_seq(s + i, n - i);
		if (len == 0) {
			if (fputs("\\ufffd", out) == EOF)
				return -EIO;
			written += 6;
			i++;
			continue;
		}
		if (fwrite(s + i, 1, (size_t)len, out) != (size_t)len)
			return -EIO;
		written += (uint64_t)len;
		i += (size_t)len;
	}
	if (fputc('"', out) == EOF)
		return -EIO;
	if (bytes)
		*bytes += written;
	return 0;
}

int sptd_query_json_string(FILE *out, const char *s, size_t n)
{
	return sptd_query_json_string_counted(out, s, n, NULL);
}

int sptd_query_json_begin(FILE *out)
{
	return fputc('[', out) == EOF ? -EIO : 0;
}

/* A float's rendering is a JSON number unless it is inf or nan. */
static int json_number_ok(const struct sptd_query_value *v)
{
	size_t i;

	for (i = 0; i < v->len; i++)
		if (v->text[i] == 'n' || v->text[i] == 'i' || v->text[i] == 'N' ||
		    v->text[i] == 'I')
			return 0;
	return v->len > 0;
}

int sptd_query_json_row(FILE *out, int first, int ncols,
                        const char *const *names,
                        const struct sptd_query_value *vals)
{
	int i, rc;

	if (fputs(first ? "\n{" : ",\n{", out) == EOF)
		return -EIO;
	for (i = 0; i < ncols; i++) {
		const struct sptd_query_value *v = &vals[i];

		if (i && fputc(',', out) == EOF)
			return -EIO;
		rc = sptd_query_json_string(out, names[i], strlen(names[i]));
		if (rc < 0)
			return rc;
		if (fputc(':', out) == EOF)
			return -EIO;
		switch (v->type) {
		case SPTD_STORE_INT:
		case SPTD_STORE_FLOAT:
			if (v->text && json_number_ok(v)) {
				if (fwrite(v->text, 1, v->len, out) != v->len)
					return -EIO;
			} else if (fputs("null", out) == EOF) {
				return -EIO;
			}
			break;
		case SPTD_STORE_TEXT:
		case SPTD_STORE_BLOB:
			rc = sptd_query_json_string(out, v->text ? v->text : "",
			                            v->text ? v->len : 0);
			if (rc < 0)
				return rc;
			break;
		default:
			if (fputs("null", out) == EOF)
				return -EIO;
			break;
		}
	}
	return fputc('}', out) == EOF ? -EIO : 0;
}

int sptd_query_json_end(FILE *out, int64_t rows)
{
	return fputs(rows ? "\n]\n" : "]\n", out) == EOF ? -EIO : 0;
}
