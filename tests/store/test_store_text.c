/* test_store_text.c — store_sqltext.c: SQL text cut into statements where
 * SQLite says one is complete.  Table-driven: each case is a text and the
 * statements (and their lines) it must give, including the cases a splitter
 * at every ';' outside quotes gets wrong (the BEGIN ... END of a trigger).
 * store_json.c: JSON objects' members read by SQLite, on a real incident
 * opened read-only (as export opens it). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sptd_store_text.h"
#include "store_fixture.h"

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

/* One member as "key=KIND:value" appended to the text in @arg. */
static int put_member(void *arg, const struct sptd_store_json_member *m)
{
	static const char *const kinds[] = { "text", "int", "uint", "true", "other" };

	fixture_put(arg, "%s=%s", m->key, kinds[m->kind]);
	if (m->kind == SPTD_STORE_JSON_TEXT)
		fixture_put(arg, ":%zu:%s", m->len, m->text);
	else if (m->kind == SPTD_STORE_JSON_INT)
		fixture_put(arg, ":%" PRId64, m->i);
	else if (m->kind == SPTD_STORE_JSON_UINT)
		fixture_put(arg, ":%" PRIu64, m->u);
	fixture_put(arg, ";");
	return 0;
}

static int stop_at_second(void *arg, const struct sptd_store_json_member *m)
{
	(void)m;
	return ++*(int *)arg == 2 ? 7 : 0;
}

static void test_json(void)
{
	static const struct { const char *json, *want; } cases[] = {
		/* what sched/ writes: numbers, strings (UTF-8 as it is, a stray
		 * byte as \u00XX), true */
		{ "{\"pid\":42,\"comm\":\"\xc3\xa9\\u00ff\\\"q\",\"...\":true}",
		  "pid=int:42;comm=text:6:\xc3\xa9\xc3\xbf\"q;...=true;" },
		/* integers past int64 exact (json_each rounds them) */
		{ "{\"a\":18446744073709551615,\"b\":9223372036854775808,\"c\":-9223372036854775808}",
		  "a=uint:18446744073709551615;b=uint:9223372036854775808;c=int:-9223372036854775808;" },
		{ "{\"big\":18446744073709551616,\"neg\":-9223372036854775809}",
		  "big=other;neg=other;" },
		{ "{\"f\":false,\"n\":null,\"r\":1.5,\"o\":{\"x\":1},\"l\":[1]}",
		  "f=other;n=other;r=other;o=other;l=other;" },
		{ "{}", "" },
		{ "{\"k.with dots\":1e0,\"z\":\"\\u0000\"}", "k.with dots=other;z=text:0:;" },
	};
	static const char *const not_objects[] = { "", "[1,2]", "\"s\"", "42", "{", "{\"a\":}",
	                                            "{\"a\":1}x", "not json" };
	struct sptd_store *st = fixture_reopen(fixture_create("json.db"));
	int n = 0;

	if (!st)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct fixture_text got;

		memset(&got, 0, sizeof(got));

		CHECK_INT(sptd_store_json_members(st, cases[i].json, put_member, &got), 0);
		if (strcmp(fixture_str(got.buf), cases[i].want) != 0)
			fprintf(stderr, "json case %zu: %s\n", i, cases[i].json);
		CHECK_STR(fixture_str(got.buf), cases[i].want);
	}
	for (size_t i = 0; i < sizeof(not_objects) / sizeof(not_objects[0]); i++)
		CHECK_INT(sptd_store_json_members(st, not_objects[i], put_member, NULL), -EBADMSG);
	/* a callback's result stops the walk and comes back */
	CHECK_INT(sptd_store_json_members(st, "{\"a\":1,\"b\":2,\"c\":3}", stop_at_second, &n), 7);
	CHECK_INT(n, 2);
	CHECK_INT(sptd_store_json_members(st, NULL, put_member, NULL), -EINVAL);
	CHECK_INT(sptd_store_json_members(st, "{}", NULL, NULL), -EINVAL);
	CHECK_INT(sptd_store_json_members(NULL, "{}", put_member, NULL), -EINVAL);
	sptd_store_destroy(st);
}

int main(void)
{
	fixture_begin();
	test_split();
	test_split_args();
	test_json();
	fixture_end();
	return SPTD_TEST_END();
}
