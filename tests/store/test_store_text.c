/* test_store_text.c — store_sqltext.c: SQL text cut into statements where
 * SQLite says one is complete.  Table-driven: each case is a text and the
 * statements (and their lines) it must give, including the cases a splitter
 * at every ';' outside quotes gets wrong (the BEGIN ... END of a trigger). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sptd_store_text.h"
#include "sptd_test.h"

/* One text: its statements as "LINE:TEXT" joined by '|', a last one that
 * no ';' ends marked "LINE:TEXT+" (more may follow). */
struct split_case {
	const char *sql;
	const char *want;
};

static const struct split_case split_cases[] = {
	{ "SELECT 1", "1:SELECT 1+" },
	{ "SELECT 1;", "1:SELECT 1" },
	{ "SELECT 1; SELECT 2;", "1:SELECT 1|1:SELECT 2" },
	{ "", "" },
	{ "  ;; \n -- only a comment\n/* and; another */ ;", "" },
	/* blanks and empty statements before one are not its text */
	{ ";\n\n  SELECT 1 ;  \nSELECT 2", "3:SELECT 1|4:SELECT 2+" },
	/* a ';' in a string, a quoted name, a comment does not end it */
	{ "SELECT ';' AS s; SELECT 2;", "1:SELECT ';' AS s|1:SELECT 2" },
	{ "SELECT 'it''s; here' AS s;", "1:SELECT 'it''s; here' AS s" },
	{ "SELECT 1 AS \"a;b\", 2 AS [c;d], 3 AS `e;f`; SELECT 4;",
	  "1:SELECT 1 AS \"a;b\", 2 AS [c;d], 3 AS `e;f`|1:SELECT 4" },
	{ "SELECT 1 -- no; end here\n, 2;\nSELECT 3;", "1:SELECT 1 -- no; end here\n, 2|3:SELECT 3" },
	{ "SELECT /* ; */ 1; /* x; */ SELECT 2;", "1:SELECT /* ; */ 1|1:SELECT 2" },
	/* the BEGIN ... END of a trigger holds ';' that do not end it */
	{ "CREATE TRIGGER t AFTER INSERT ON meta BEGIN\n  SELECT 1;\n  SELECT 2;\nEND;\n"
	  "SELECT 3;",
	  "1:CREATE TRIGGER t AFTER INSERT ON meta BEGIN\n  SELECT 1;\n  SELECT 2;\nEND|5:SELECT 3" },
	{ "CREATE TEMP TRIGGER t AFTER INSERT ON x BEGIN SELECT ';'; END; SELECT 4",
	  "1:CREATE TEMP TRIGGER t AFTER INSERT ON x BEGIN SELECT ';'; END|1:SELECT 4+" },
	/* a trigger not yet ended: one statement, incomplete */
	{ "CREATE TRIGGER t AFTER INSERT ON meta BEGIN SELECT 1;\n",
	  "1:CREATE TRIGGER t AFTER INSERT ON meta BEGIN SELECT 1;+" },
	/* a string that never closes runs to the end */
	{ "SELECT 'a;b", "1:SELECT 'a;b+" },
	/* a block comment that never closes is the end */
	{ "SELECT 1; /* open; ", "1:SELECT 1" },
};

/* Split @sql to the form of split_case.want. */
static void split_all(const char *sql, char *out, size_t cap)
{
	struct sptd_store_sql_span span;
	unsigned line = 1;
	size_t off = 0;
	int rc;

	out[0] = '\0';
	while ((rc = sptd_store_sql_next(sql, &span)) > 0) {
		CHECK(span.used > 0);
		off += (size_t)snprintf(out + off, cap - off, "%s%u:%.*s%s", off ? "|" : "",
		                        line + span.line - 1, (int)span.len, sql + span.start,
		                        span.complete ? "" : "+");
		if (off >= cap)
			break;
		line += span.lines_used;
		sql += span.used;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(strlen(sql), span.used);  /* what is left is used too */
}

static void test_split(void)
{
	for (size_t i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		char got[1024];

		split_all(split_cases[i].sql, got, sizeof(got));
		if (strcmp(got, split_cases[i].want) != 0)
			fprintf(stderr, "case %zu: %s\n", i, split_cases[i].sql);
		CHECK_STR(got, split_cases[i].want);
	}
}

static void test_split_args(void)
{
	struct sptd_store_sql_span span;

	CHECK_INT(sptd_store_sql_next(NULL, &span), -EINVAL);
	CHECK_INT(sptd_store_sql_next("SELECT 1", NULL), -EINVAL);
}

int main(void)
{
	test_split();
	test_split_args();
	return SPTD_TEST_END();
}
