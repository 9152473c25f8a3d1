/* store_sqltext.c — SQL text a user wrote (a -f file, stdin, the shell's
 * lines), cut into statements where SQLite itself says one is complete:
 * sqlite3_complete(), the test SQLite's own shell makes, knows its strings,
 * quoted names, comments and the BEGIN ... END of triggers.  Only where a
 * statement starts is found here: after blanks and comments. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"
#include "sptd_store_text.h"

/* SQLite's blanks (sqlite3Isspace): space, \t, \n, \v, \f, \r. */
static int blank(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Where the first token at or after @s[@i] begins: blanks, comments and
 * empty statements (';') skipped.  A block comment that does not end runs
 * to the end of the text, as SQLite reads it. */
static size_t first_token(const char *s, size_t i)
{
	for (;;) {
		if (blank(s[i]) || s[i] == ';') {
			i++;
		} else if (s[i] == '-' && s[i + 1] == '-') {
			i += strcspn(s + i, "\n");
		} else if (s[i] == '/' && s[i + 1] == '*') {
			const char *end = strstr(s + i + 2, "*/");

			i = end ? (size_t)(end - s) + 2 : i + strlen(s + i);
		} else {
			return i;
		}
	}
}

static unsigned newlines(const char *s, size_t n)
{
	unsigned count = 0;
	const char *p = s, *end = s + n;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		count++;
		p++;
	}
	return count;
}

int sptd_store_sql_next(const char *sql, struct sptd_store_sql_span *span)
{
	char *copy = NULL;
	size_t start, at, copied = 0, cap = 0, end;
	int ret = 0;

	if (!sql || !span)
		return -EINVAL;
	memset(span, 0, sizeof(*span));
	start = first_token(sql, 0);
	span->line = 1 + newlines(sql, start);
	if (!sql[start]) {
		span->used = start;
		span->lines_used = span->line - 1;
		return 0;
	}
	/* Each ';' from the first token on might end the statement: ask SQLite
	 * about the text up to it.  The copy (sqlite3_complete wants a
	 * NUL-terminated text) grows with the scan, so the bytes are copied
	 * once. */
	at = start;
	end = start + strlen(sql + start);
	for (;;) {
		const char *semi = memchr(sql + at, ';', end - at);
		size_t need;

		if (!semi)
			break;
		at = (size_t)(semi - sql) + 1;
		need = at - start + 1;
		if (need > cap) {
			size_t more = cap ? cap * 2 : 256;
			char *grown;

			while (more < need)
				more *= 2;
			grown = realloc(copy, more);
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			copy = grown;
			cap = more;
		}
		memcpy(copy + copied, sql + start + copied, at - start - copied);
		copied = at - start;
		copy[copied] = '\0';
		if (sqlite3_complete(copy)) {
			span->complete = 1;
			break;
		}
	}
	span->used = span->complete ? at : end;
	span->start = start;
	span->len = span->used - start - (size_t)span->complete;
	while (span->len && blank(sql[start + span->len - 1]))
		span->len--;
	span->lines_used = newlines(sql, span->used);
	ret = 1;
out:
	free(copy);
	return ret;
}
