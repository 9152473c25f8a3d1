/* query_text.c — small text helpers for query/: error messages, UTF-8
 * validation, a growable buffer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query-local.h"

int sptd_query_verr(char *err, size_t errlen, int rc, const char *fmt, va_list ap)
{
	char local[1024], *tmp = local;

	if (!err || errlen == 0)
		return rc;
	/* formatted aside first: an argument may be @err itself (a message
	 * put in front of the one already there), and vsnprintf into its
	 * own argument is undefined (it garbled the message) */
	if (errlen > sizeof(local) && !(tmp = malloc(errlen))) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	vsnprintf(tmp, errlen, fmt, ap);
	memcpy(err, tmp, strlen(tmp) + 1);
	if (tmp != local)
		free(tmp);
	return rc;
}

int sptd_query_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rc = sptd_query_verr(err, errlen, rc, fmt, ap);
	va_end(ap);
	return rc;
}

int sptd_query_utf8_seq(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned int cp, min;
	int len, i;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if ((size_t)len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int sptd_query_buf_reserve(struct sptd_query_buf *b, size_t extra)
{
	size_t need, cap;
	char *data;

	if (extra > SIZE_MAX - b->len - 1)
		return -ENOMEM;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	data = realloc(b->data, cap);
	if (!data)
		return -ENOMEM;
	/* a buffer only reserved is the empty string, never unterminated
	 * bytes (an empty cell of `select ''` printed heap contents) */
	data[b->len] = '\0';
	b->data = data;
	b->cap = cap;
	return 0;
}

int sptd_query_buf_add(struct sptd_query_buf *b, const char *s, size_t n)
{
	int rc = sptd_query_buf_reserve(b, n);

	if (rc < 0)
		return rc;
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

void sptd_query_buf_clear(struct sptd_query_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void sptd_query_buf_fini(struct sptd_query_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void sptd_query_put_shown(FILE *out, const char *text, int keep_lines)
{
	for (const unsigned char *p = (const unsigned char *)text; p && *p; p++) {
		int c = *p;

		if ((c < 0x20 && !(keep_lines && (c == '\n' || c == '\t'))) || c == 0x7f)
			c = '?';
		fputc(c, out);
	}
}
