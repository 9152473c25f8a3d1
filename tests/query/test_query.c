/* test_query.c — query/: the statement printers (table, csv, json) and the
 * canned reports, on real incident files written with store/'s API.  The
 * expected numbers are derived by hand in test_query_incident.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_query.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "query_incident.c"

/* ---- a minimal JSON checker: proves the output parses ------------------- */

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *json_value(const char *p, int depth);

static const char *json_string(const char *p)
{
	if (*p != '"')
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_value(const char *p, int depth)
{
	char *end;

	if (depth > 64)
		return NULL;
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = json_string(json_ws(p));
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (strncmp(p, "null", 4) == 0 || strncmp(p, "true", 4) == 0)
		return p + 4;
	if (strncmp(p, "false", 5) == 0)
		return p + 5;
	strtod(p, &end);
	return end > p && (*p == '-' || (*p >= '0' && *p <= '9')) ? end : NULL;
}

static int json_valid(const char *text)
{
	const char *end = json_value(text, 0);

	return end && *json_ws(end) == '\0';
}

/* ---- helpers --------------------------------------------------------------- */

/* Run @sql, return what it printed (free it); *rc gets the return value. */
static char *run(struct sptd_store *st, const char *sql, enum sptd_query_format fmt,
                 int *rc, char *err, size_t errlen)
{
	struct tq_mem m;
	FILE *fp = tq_mem_begin(&m);

	*rc = sptd_query_run(st, sql, fmt, fp, err, errlen);
	return tq_mem_end(&m);
}

/* Run @sql as a table no wider than @width through the result API. */
static char *run_width(struct sptd_store *st, const char *sql, int width, int *rc)
{
	struct sptd_query_print_opts o = { .format = SPTD_QUERY_TABLE, .width = width };
	struct sptd_query_result *res = NULL;
	struct tq_mem m;
	FILE *fp = tq_mem_begin(&m);
	char err[256];

	*rc = sptd_query_result_create(&o, fp, NULL, &res);
	if (*rc == 0)
		*rc = sptd_query_result_add(res, st, NULL, sql, err, sizeof(err));
	if (*rc >= 0)
		*rc = sptd_query_result_finish(res, err, sizeof(err));
	sptd_query_result_destroy(res);
	return tq_mem_end(&m);
}

static char *report(struct sptd_store *st, const char *name, enum sptd_query_format fmt,
                    int *rc, char *err, size_t errlen)
{
	struct tq_mem m;
	FILE *fp = tq_mem_begin(&m);

	*rc = sptd_query_report(st, name, fmt, fp, err, errlen);
	return tq_mem_end(&m);
}

static char *report_flags(struct sptd_store *st, const char *name, int flags,
                          enum sptd_query_format fmt, int *rc, char *err, size_t errlen)
{
	struct tq_mem m;
	FILE *fp = tq_mem_begin(&m);

	*rc = sptd_query_report_flags(st, name, flags, fmt, fp, err, errlen);
	return tq_mem_end(&m);
}

/* The CSV block of a report section: from its "# title" line to the blank
 * line that ends it (title line excluded).  Static buffer. */
static const char *section(const char *text, const char *title)
{
	static char block[8192];
	char head[512];
	const char *p, *end;

	snprintf(head, sizeof(head), "# %s\n", title);
	p = strstr(text, head);
	if (!p)
		return "(section missing)";
	p += strlen(head);
	end = strstr(p, "\n\n");
	end = end ? end + 1 : p + strlen(p);
	snprintf(block, sizeof(block), "%.*s", (int)(end - p), p);
	return block;
}

/* ---- printers -------------------------------------------------------------- */

static void test_formats(struct sptd_store *st)
{
	char err[512], *out;
	int rc;
	const char *sql =
		"SELECT 'a,b' AS x, 'say \"hi\"' AS y, 'l1' || char(10) || 'l2' AS z, "
		"NULL AS n, 42 AS i, 1.5 AS f, x'00ff' AS b, -7 AS neg, 2.0 AS whole";

	out = run(st, sql, SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, "x,y,z,n,i,f,b,neg,whole\n"
	               "\"a,b\",\"say \"\"hi\"\"\",\"l1\nl2\",,42,1.5,00ff,-7,2.0\n");
	free(out);

	out = run(st, sql, SPTD_QUERY_JSON, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, "[\n{\"x\":\"a,b\",\"y\":\"say \\\"hi\\\"\",\"z\":\"l1\\nl2\",\"n\":null,"
	               "\"i\":42,\"f\":1.5,\"b\":\"00ff\",\"neg\":-7,\"whole\":2.0}\n]\n");
	CHECK(json_valid(out));
	free(out);

	/* JSON escaping of controls, backslash, tab, valid and invalid UTF-8 */
	out = run(st, "SELECT char(1) || '\\' || char(9) || 'é' || CAST(x'ff' AS TEXT) AS \"k\"\"q\"",
	          SPTD_QUERY_JSON, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, "[\n{\"k\\\"q\":\"\\u0001\\\\\\té\\ufffd\"}\n]\n");
	CHECK(json_valid(out));
	free(out);

	/* CSV: a header that needs quoting, CR inside a field */
	out = run(st, "SELECT 'a' || char(13) || 'b' AS \"c,d\"", SPTD_QUERY_CSV, &rc, err,
	          sizeof(err));
	CHECK_STR(out, "\"c,d\"\n\"a\rb\"\n");
	free(out);

	/* CSV: terminal controls shown as the table shows them, "\xNN" per
	 * byte (issue 28: a thread named ESC ] ... BEL drove the terminal):
	 * ESC, BEL, DEL, a C1 control (U+009B, CSI), a byte that is not
	 * UTF-8; TAB and UTF-8 kept, a quote still doubled */
	out = run(st, "SELECT char(27) || ']0;x' || char(7) || char(127) || char(155) || "
	          "CAST(x'ff' AS TEXT) || char(9) || 'é\"' AS c", SPTD_QUERY_CSV, &rc, err,
	          sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, "c\n\"\\x1b]0;x\\x07\\x7f\\xc2\\x9b\\xff\té\"\"\"\n");
	free(out);

	/* table: numbers right, text left, NULL empty, footer */
	out = run(st, "SELECT 1 AS n, 'ab' AS name UNION ALL SELECT 100, NULL",
	          SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_INT(rc, 2);
	CHECK_STR(out, "   n | name\n"
	               "-----+------\n"
	               "   1 | ab\n"
	               " 100 |\n"
	               "(2 rows)\n");
	free(out);

	/* table: an empty string is an empty cell (it printed heap bytes) */
	out = run(st, "SELECT '' AS e, 'x' AS f", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_STR(out, " e | f\n---+---\n   | x\n(1 row)\n");
	free(out);

	/* table: long text is never cut when no width is given (not a
	 * terminal), control chars escaped */
	out = run(st, "SELECT replace(hex(zeroblob(30)), '0', 'x') AS t, 'a' || char(10) || 'b' AS u",
	          SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	{
		char want[512];

		snprintf(want, sizeof(want), " t%*s | u\n%.62s+------\n %.60s | a\\nb\n(1 row)\n",
		         59, "", "------------------------------------------------------------------",
		         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		CHECK_STR(out, want);
	}
	free(out);
	/* ... and cut to fit a terminal's width: the widest text column gives
	 * way (here t: 30 columns = " t… " 24 + "| a\nb" 6) */
	out = run_width(st, "SELECT replace(hex(zeroblob(30)), '0', 'x') AS t, "
	                "'a' || char(10) || 'b' AS u", 30, &rc);
	CHECK_INT(rc, 1);
	{
		char want[512];

		snprintf(want, sizeof(want), " t%*s | u\n%.23s+------\n %.20s\xe2\x80\xa6 | a\\nb\n(1 row)\n",
		         20, "", "------------------------------------------------------------------",
		         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		CHECK_STR(out, want);
		/* every line fits */
		for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			int cols = 0;

			for (const char *c = l; *c && *c != '\n'; c++)
				cols += ((unsigned char)*c & 0xc0) != 0x80;
			CHECK(cols <= 30);
		}
	}
	free(out);
	/* numbers are never cut, however narrow the terminal */
	out = run_width(st, "SELECT 12345678901234 AS big, 'abcdefghijkl' AS t", 10, &rc);
	CHECK(out && strstr(out, " 12345678901234 | abcde\xe2\x80\xa6\n") != NULL);
	free(out);

	/* table: widths count code points; invalid UTF-8 shows as '?' */
	out = run(st, "SELECT 'héllo' AS w UNION ALL SELECT CAST(x'41ff42' AS TEXT)",
	          SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_STR(out, " w\n-------\n héllo\n A?B\n(2 rows)\n");
	free(out);

	/* table streaming: widths come from the first SPTD_QUERY_SIZE_ROWS rows;
	 * a longer value later is printed whole (not a terminal), or cut to
	 * that width on a terminal */
	out = run(st, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1500) "
	          "SELECT CASE WHEN x = 1200 THEN 'a much longer text' ELSE 't' || x END AS v FROM c",
	          SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_INT(rc, 1500);
	CHECK(out && strncmp(out, " v\n-------\n t1\n", 15) == 0);
	CHECK(out && strstr(out, "\n a much longer text\n"));
	CHECK(out && strstr(out, "\n t1500\n(1500 rows)\n"));
	free(out);
	out = run_width(st, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
	                "WHERE x < 1500) SELECT CASE WHEN x = 1200 THEN 'a much longer text' "
	                "ELSE 't' || x END AS v FROM c", 80, &rc);
	CHECK_INT(rc, 1500);
	CHECK(out && strstr(out, "\n a mu\xe2\x80\xa6\n"));
	free(out);

	/* empty results */
	out = run(st, "SELECT cpu, dur FROM sched_slice", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_INT(rc, 0);
	CHECK_STR(out, " cpu | dur\n-----+-----\n(0 rows)\n");
	free(out);
	out = run(st, "SELECT cpu, dur FROM sched_slice", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 0);
	CHECK_STR(out, "cpu,dur\n");
	free(out);
	out = run(st, "SELECT cpu, dur FROM sched_slice", SPTD_QUERY_JSON, &rc, err, sizeof(err));
	CHECK_INT(rc, 0);
	CHECK_STR(out, "[]\n");
	CHECK(json_valid(out));
	free(out);
}

static void test_errors(struct sptd_store *st)
{
	char err[512], *out, buf[64];
	int rc;

	out = run(st, "DELETE FROM meta", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_INT(rc, -EROFS);
	CHECK(strncmp(err, "query is read-only", 18) == 0);
	CHECK_STR(out, "");
	free(out);
	out = run(st, "CREATE TABLE t(a)", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, -EROFS);
	CHECK(strncmp(err, "query is read-only", 18) == 0);
	free(out);
	CHECK(sptd_store_meta_get(st, "host", buf, sizeof(buf)) >= 0);
	CHECK_STR(buf, "testhost");

	out = run(st, "SELEC 1", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_INT(rc, -EINVAL);
	CHECK(strstr(err, "syntax error") != NULL);
	free(out);
	out = run(st, "SELECT * FROM no_such_table", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK(rc < 0);
	CHECK(strstr(err, "no such table: no_such_table") != NULL);
	free(out);

	out = run(st, "SELECT 1; SELECT 2", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, -EINVAL);
	CHECK(strstr(err, "one SQL statement") != NULL);
	CHECK_STR(out, "");
	free(out);
	out = run(st, "SELECT ';' AS s; -- trailing comment", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, "s\n;\n");
	free(out);
	out = run(st, "  -- only a comment", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, -EINVAL);
	CHECK(strstr(err, "empty") != NULL);
	free(out);

	CHECK_INT(sptd_query_run(NULL, "SELECT 1", SPTD_QUERY_CSV, stdout, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_query_run(st, NULL, SPTD_QUERY_CSV, stdout, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_query_run(st, "SELECT 1", SPTD_QUERY_CSV, NULL, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_query_run(st, "SELECT 1", (enum sptd_query_format)99, stdout, err,
	                         sizeof(err)), -EINVAL);
	CHECK_INT(sptd_query_run(st, "SELEC", SPTD_QUERY_CSV, stdout, NULL, 0), -EINVAL);
	CHECK_INT(sptd_query_report(NULL, "summary", SPTD_QUERY_CSV, stdout, err, sizeof(err)),
	          -EINVAL);
	CHECK_INT(sptd_query_report(st, "nope", SPTD_QUERY_CSV, stdout, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "unknown report 'nope' (reports: summary, cpus, top, wakeup, irq, threads, offcpu, watch, power)");

	{
		enum sptd_query_format f = SPTD_QUERY_TABLE;

		CHECK_INT(sptd_query_format_parse("json", &f), 0);
		CHECK_INT(f, SPTD_QUERY_JSON);
		CHECK_INT(sptd_query_format_parse("csv", &f), 0);
		CHECK_INT(f, SPTD_QUERY_CSV);
		CHECK_INT(sptd_query_format_parse("table", &f), 0);
		CHECK_INT(f, SPTD_QUERY_TABLE);
		CHECK_INT(sptd_query_format_parse("xml", &f), -EINVAL);
		CHECK_INT(sptd_query_format_parse(NULL, &f), -EINVAL);
	}
	{
		const char *const *names = sptd_query_report_names();
		const char *want[] = { "summary", "cpus", "top", "wakeup", "irq", "threads", "offcpu",
		                       "watch", "power" };
		int i;

		for (i = 0; names[i] && i < 9; i++)
			CHECK_STR(names[i], want[i]);
		CHECK_INT(i, 9);
		CHECK(names[9] == NULL);
		CHECK(sptd_query_report_describe("cpus") != NULL);
		CHECK(sptd_query_report_describe("nope") == NULL);
	}
}

/* ---- reports --------------------------------------------------------------- */

static void test_reports_sample(struct sptd_store *st)
{
	char err[512], *out;
	int rc;

	out = report(st, "cpus", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(section(out, "per CPU: busy, idle, irq and softirq time over the window; top 3 tasks"),
	          "cpu,busy_ns,busy_pct,idle_ns,idle_pct,irq_ns,irq_pct,softirq_ns,softirq_pct,"
	          "top1,top1_time_ns,top2,top2_time_ns,top3,top3_time_ns\n"
	          "0,9000000,90.0,1000000,10.0,40000,0.4,50000,0.5,"
	          "worker[101],6000000,server[100],3000000,,\n"
	          "1,3500000,35.0,6500000,65.0,925000,9.25,15000,0.15,"
	          "client[200],2000000,server[100],1500000,,\n");
	free(out);

	out = report(st, "top", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 2);
	CHECK_STR(section(out, "hottest functions by samples (self = innermost frame, total = on the stack)"),
	          "function,dso,self,self_pct,total,total_pct\n"
	          "handle,/usr/bin/server,3,37.5,6,75.0\n"
	          "parse,/usr/bin/server,3,37.5,4,50.0\n"
	          "main,/usr/bin/server,1,12.5,8,100.0\n"
	          "[unknown],[unknown],1,12.5,1,12.5\n");
	CHECK_STR(section(out, "hottest functions by PT time (self = minus callees, total = whole calls)"),
	          "# no PT slices in this incident (source=sample)\n");
	free(out);

	/* the clipped wakeup (1 ms, longer in truth) is not ranked, and says so */
	out = report(st, "wakeup", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 2);
	CHECK_STR(section(out, "worst wakeup-to-run latencies"),
	          "latency_ns,clipped,ts,tid,task,waker_tid,waker,cpu\n"
	          "500000,,9000000,100,server,200,client,1\n"
	          "200000,,4800000,101,worker,100,server,0\n");
	CHECK(strstr(out, "# 1 wakeup(s) clipped at the window start are not ranked") != NULL);
	free(out);
	/* --include-clipped: ranked, marked */
	out = report_flags(st, "wakeup", SPTD_QUERY_REPORT_CLIPPED, SPTD_QUERY_CSV, &rc, err,
	                   sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(section(out, "worst wakeup-to-run latencies (* clipped at the window start: the "
	                       "true latency is longer)"),
	          "latency_ns,clipped,ts,tid,task,waker_tid,waker,cpu\n"
	          "1000000,*,1000000,102,late,100,server,0\n"
	          "500000,,9000000,100,server,200,client,1\n"
	          "200000,,4800000,101,worker,100,server,0\n");
	free(out);
	out = report_flags(st, "wakeup", 0x100, SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, -EINVAL);
	free(out);

	out = report(st, "irq", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 2);
	/* the truncated eth0 counts and adds its time, but sets no max */
	CHECK_STR(section(out, "hard IRQ handlers (max and avg of the handlers seen whole; "
	                       "truncated: entry or exit not seen, their time is a bound)"),
	          "irq,name,count,total_ns,max_ns,avg_ns,truncated,cpus\n"
	          "24,eth0,4,960000,30000,20000,1,2\n"
	          "1,timer,1,5000,5000,5000,0,1\n");
	CHECK_STR(section(out, "softirqs (max and avg of those seen whole; truncated: entry or "
	                       "exit not seen)"),
	          "vec,name,count,total_ns,max_ns,avg_ns,truncated,cpus\n"
	          "3,NET_RX,1,50000,50000,50000,0,1\n"
	          "1,TIMER,1,15000,15000,15000,0,1\n");
	free(out);

	/* every thread of this incident did something in the window (late:
	 * its runnable row ends, it runs 100 us; no sched slice) */
	out = report(st, "threads", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(section(out, "threads that did something in the window (ran, woke or were "
	                       "woken, changed state, were sampled; --all-tasks: every one): "
	                       "CPU time and sched slices"),
	          "utid,tid,thread,pid,process,cpu_ns,slices\n"
	          "0,0,swapper,,,7500000,2\n"
	          "2,101,worker,100,server,6000000,1\n"
	          "1,100,server,100,server,4500000,2\n"
	          "3,200,client,200,client,2000000,1\n"
	          "4,102,late,100,server,0,0\n");
	free(out);
	out = report_flags(st, "threads", SPTD_QUERY_REPORT_ALL_TASKS, SPTD_QUERY_CSV, &rc, err,
	                   sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(section(out, "every thread the incident names: CPU time in the window and "
	                       "sched slices"),
	          "utid,tid,thread,pid,process,cpu_ns,slices\n"
	          "0,0,swapper,,,7500000,2\n"
	          "2,101,worker,100,server,6000000,1\n"
	          "1,100,server,100,server,4500000,2\n"
	          "3,200,client,200,client,2000000,1\n"
	          "4,102,late,100,server,0,0\n");
	free(out);
	/* an unknown option bit is the caller's mistake */
	out = report_flags(st, "threads", 0x4, SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, -EINVAL);
	free(out);

	out = report(st, NULL, SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 7); /* the PT functions section is skipped */
	CHECK_STR(section(out, "incident"),
	          "key,value\nhost,testhost\nkernel,6.1.0-test\ncpus,2\nsource,sample\n"
	          "clock,monotonic\nwindow_ns,10000000\nwindow_start,1000000\n"
	          "window_end,11000000\ntrigger_spec,irq=24\n");
	CHECK(strstr(section(out, "rows per table"), "\nsched_slice,6\n") != NULL);
	CHECK(strstr(section(out, "rows per table"), "\nthread_state,14\n") != NULL);
	CHECK(strstr(section(out, "rows per table"), "\nsample,8\n") != NULL);
	CHECK(strstr(section(out, "rows per table"), "\nslice,0\n") != NULL);
	CHECK_STR(section(out, "trigger"),
	          "ts,at_ns,cpu,kind,detail\n10500000,9500000,1,irq,irq=24 name=eth0\n");
	CHECK_STR(section(out, "top 5 tasks by CPU time"),
	          "tid,thread,process,cpu_ns,cpu_pct,slices\n"
	          "101,worker,server,6000000,60.0,1\n"
	          "100,server,server,4500000,45.0,2\n"
	          "200,client,client,2000000,20.0,1\n");
	CHECK_STR(section(out, "top 5 functions by self samples"),
	          "function,dso,self,self_pct,total,total_pct\n"
	          "handle,/usr/bin/server,3,37.5,6,75.0\n"
	          "parse,/usr/bin/server,3,37.5,4,50.0\n"
	          "main,/usr/bin/server,1,12.5,8,100.0\n"
	          "[unknown],[unknown],1,12.5,1,12.5\n");
	CHECK(strstr(out, "# top 5 functions by self time (PT slices)") == NULL);
	CHECK_STR(section(out, "worst wakeup latency"),
	          "latency_ns,clipped,ts,tid,task,waker_tid,waker,cpu\n"
	          "500000,,9000000,100,server,200,client,1\n");
	CHECK_STR(section(out, "gaps (stretches with missing or undecodable data)"),
	          "gaps,total_ns,reasons\n2,3000,overflow\n");
	free(out);

	/* table and json renderings of every report */
	for (const char *const *n = sptd_query_report_names(); *n; n++) {
		out = report(st, *n, SPTD_QUERY_JSON, &rc, err, sizeof(err));
		CHECK(rc > 0);
		CHECK(out && json_valid(out));
		if (!json_valid(out))
			fprintf(stderr, "invalid json for report %s:\n%s\n", *n, out);
		free(out);
		out = report(st, *n, SPTD_QUERY_TABLE, &rc, err, sizeof(err));
		CHECK(rc > 0);
		CHECK(out && strncmp(out, "== ", 3) == 0);
		free(out);
	}
	/* tables: every duration in one human style, csv/json integer ns */
	out = report(st, "cpus", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK(strstr(out, "\n cpu |     busy | busy_pct |     idle | idle_pct |        irq |") != NULL);
	CHECK(strstr(out, "\n   0 | 9.000 ms |     90.0 | 1.000 ms |     10.0 |  40.000 us |     0.4 | "
	                  "50.000 us |         0.5 | worker[101] |  6.000 ms | server[100] |  3.000 ms |")
	      != NULL);
	free(out);
	out = report(st, "summary", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK(strstr(out, "\n window       | 10.000 ms\n") != NULL);
	CHECK(strstr(out, "\n       ts |       at | cpu | kind | detail\n") != NULL);
	CHECK(strstr(out, "\n 500.000 us |         | 9000000 | 100 | server |") != NULL);
	CHECK(strstr(out, "    2 | 3.000 us | overflow\n") != NULL);
	CHECK(strstr(out, "_ns") == NULL);
	free(out);
	out = report(st, "irq", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK(strstr(out, "\n  24 | eth0  |     4 | 960.000 us | 30.000 us | 20.000 us |         1 |    2\n") != NULL);
	free(out);
	out = report(st, "wakeup", SPTD_QUERY_JSON, &rc, err, sizeof(err));
	CHECK(strstr(out, "{\"latency_ns\":500000,\"clipped\":\"\",\"ts\":9000000,\"tid\":100,"
	                  "\"task\":\"server\",\"waker_tid\":200,\"waker\":\"client\",\"cpu\":1}")
	      != NULL);
	free(out);
}

static void test_reports_pt(struct sptd_store *st)
{
	char err[512], *out;
	int rc;

	out = report(st, "top", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 2);
	CHECK_STR(section(out, "hottest functions by samples (self = innermost frame, total = on the stack)"),
	          "# no samples in this incident (source=pt)\n");
	CHECK_STR(section(out, "hottest functions by PT time (self = minus callees, total = whole calls)"),
	          "function,dso,calls,self_ns,self_pct,total_ns,total_pct\n"
	          "handle,/usr/bin/server,2,400000,40.0,600000,60.0\n"
	          "main,/usr/bin/server,1,300000,30.0,1000000,100.0\n"
	          "parse,/usr/bin/server,2,300000,30.0,400000,40.0\n");
	free(out);

	out = report(st, "summary", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 7);
	CHECK_STR(section(out, "top 5 functions by self time (PT slices)"),
	          "function,dso,calls,self_ns,self_pct,total_ns,total_pct\n"
	          "handle,/usr/bin/server,2,400000,40.0,600000,60.0\n"
	          "main,/usr/bin/server,1,300000,30.0,1000000,100.0\n"
	          "parse,/usr/bin/server,2,300000,30.0,400000,40.0\n");
	CHECK(strstr(out, "# top 5 functions by self samples") == NULL);
	CHECK_STR(section(out, "gaps (stretches with missing or undecodable data)"),
	          "gaps,total_ns,reasons\n0,0,\n");
	free(out);

	out = report(st, "top", SPTD_QUERY_JSON, &rc, err, sizeof(err));
	CHECK(json_valid(out));
	CHECK(strstr(out, "\"note\": \"no samples in this incident (source=pt)\", \"rows\": []") != NULL);
	free(out);
}

static void test_reports_empty(struct sptd_store *st)
{
	char err[512], *out;
	int rc;

	for (const char *const *n = sptd_query_report_names(); *n; n++) {
		for (int f = SPTD_QUERY_TABLE; f <= SPTD_QUERY_JSON; f++) {
			out = report(st, *n, (enum sptd_query_format)f, &rc, err, sizeof(err));
			CHECK(rc > 0);
			if (rc <= 0)
				fprintf(stderr, "report %s format %d: %d %s\n", *n, f, rc, err);
			if (f == SPTD_QUERY_JSON)
				CHECK(out && json_valid(out));
			free(out);
		}
	}
	out = report(st, "summary", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK(strstr(out, "== top 5 functions by self samples ==\n"
	                  "no samples or PT slices in this incident (source=sample)\n") != NULL);
	CHECK(strstr(out, "== trigger ==\nno trigger row in this incident\n") != NULL);
	CHECK(strstr(out, "== worst wakeup latency ==\nno wakeups in this incident") != NULL);
	CHECK(strstr(out, "== gaps (stretches with missing or undecodable data) ==\n"
	                  " gaps | total | reasons\n"
	                  "------+-------+---------\n"
	                  "    0 |  0 ns |\n") != NULL);
	free(out);
	out = report(st, "cpus", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_STR(out, "# per CPU: busy, idle, irq and softirq time over the window; top 3 tasks\n"
	               "# no scheduler or interrupt data in this incident\n");
	free(out);
	out = report(st, "top", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK(strstr(out, "no samples in this incident (source=sample)\n") != NULL);
	CHECK(strstr(out, "no PT slices in this incident (source=sample)\n") != NULL);
	free(out);
}

/* SQL a user (or a hostile file) brings: empty cells print nothing, no
 * library pointer leaks, no extension loads, no statement runs forever. */
static void test_untrusted(struct sptd_store *st)
{
	char err[512], *out;
	int rc;

	/* an empty text cell was an unterminated buffer: heap bytes printed */
	out = run(st, "SELECT '' AS e, 'x' AS f", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, " e | f\n---+---\n   | x\n(1 row)\n");
	free(out);
	out = run(st, "SELECT ''", SPTD_QUERY_TABLE, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, " ''\n----\n\n(1 row)\n");
	free(out);

	/* fts3_tokenizer() handed out a pointer into the SQLite library */
	out = run(st, "SELECT fts3_tokenizer('simple') IS NULL AS hidden", SPTD_QUERY_CSV, &rc,
	          err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, "hidden\n1\n");
	free(out);
	out = run(st, "SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')", SPTD_QUERY_CSV,
	          &rc, err, sizeof(err));
	CHECK(rc < 0);
	free(out);

	/* a runaway recursive CTE stops at the time limit with -ETIMEDOUT */
	CHECK_INT(sptd_store_set_time_limit(st, 300 * 1000000LL), 0);
	out = run(st, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
	          "SELECT count(*) FROM c", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, -ETIMEDOUT);
	CHECK(strstr(err, "time limit") != NULL);
	free(out);
	CHECK_INT(sptd_store_set_time_limit(st, 0), 0);
	out = run(st, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
	          "SELECT count(*) AS n FROM c", SPTD_QUERY_CSV, &rc, err, sizeof(err));
	CHECK_INT(rc, 1);
	CHECK_STR(out, "n\n1000\n");
	free(out);
	CHECK_INT(sptd_store_set_time_limit(NULL, 1), -EINVAL);
	CHECK_INT(sptd_store_set_time_limit(st, -1), -EINVAL);
}

int main(void)
{
	static const char *const files[] = { "sample.db", "pt.db", "empty.db", NULL };
	struct sptd_store *st;

	if (tq_make_incident(tq_path("sample.db"), TQ_SAMPLE) < 0 ||
	    tq_make_incident(tq_path("pt.db"), TQ_PT) < 0 ||
	    tq_make_incident(tq_path("empty.db"), TQ_EMPTY) < 0) {
		fprintf(stderr, "cannot build the test incidents\n");
		tq_cleanup(files);
		return 1;
	}

	st = tq_open(tq_path("empty.db"));
	test_formats(st);
	test_reports_empty(st);
	sptd_store_destroy(st);

	st = tq_open(tq_path("sample.db"));
	test_errors(st);
	test_untrusted(st);
	test_reports_sample(st);
	sptd_store_destroy(st);

	st = tq_open(tq_path("pt.db"));
	test_reports_pt(st);
	sptd_store_destroy(st);

	tq_cleanup(files);
	return SPTD_TEST_END();
}
