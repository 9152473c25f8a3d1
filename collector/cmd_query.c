/* cmd_query.c — `sysptd query INCIDENT [SQL] [--report NAME] [--format F]`:
 * SQL or a canned report over one incident file, opened read-only. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sptd_col.h"
#include "sptd_query.h"
#include "sptd_store.h"

static const char query_usage[] =
"Usage: sysptd query INCIDENT [SQL] [--report NAME] [--format table|csv|json]\n"
"                    [--timeout DUR]\n"
"\n"
"Run one read-only SQL statement, or a canned report, on an incident file.\n"
"With neither, prints the summary report.\n"
"\n"
"Options:\n"
"  -r, --report NAME    summary, cpus, top, wakeup, irq, threads\n"
"                       (--report list shows them with a description)\n"
"  -f, --format FMT     table (default), csv or json\n"
"  -t, --timeout DUR    stop a statement or report still running after DUR\n"
"                       (default 60s; 0: no limit); exit status 1\n"
"  -h, --help           this text\n"
"\n"
"Tables follow docs/SCHEMA.md: meta, trigger, process, thread, sched_slice,\n"
"thread_state, irq_slice, softirq_slice, slice, symbol, dso, sample, callsite,\n"
"gap, stats, and the raw_* capture tables.  ts and dur are nanoseconds.\n"
"\n"
"Examples:\n"
"  sysptd query incident.db --report cpus\n"
"  sysptd query incident.db \"SELECT cpu, count(*) FROM sched_slice GROUP BY cpu\"\n"
"  sysptd query incident.db --report top --format csv\n"
"\n"
"Exit status: 0 success, 1 failure (including a query stopped by --timeout),\n"
"2 bad command line or SQL (including a statement that writes), 6 missing,\n"
"corrupt or not an incident file.\n";

/* How long a statement or report may run unless --timeout says otherwise:
 * long enough for any report on a large incident, short enough that a
 * runaway recursive CTE (or a planted view) does not run forever. */
#define QUERY_DEFAULT_TIMEOUT_NS (60 * 1000000000LL)

static int list_reports(void)
{
	const char *const *names = sptd_query_report_names();

	for (; *names; names++)
		printf("%-10s %s\n", *names, sptd_query_report_describe(*names));
	return SPTD_EXIT_OK;
}

int sptd_col_cmd_query(int argc, char **argv)
{
	const char *path = NULL, *sql = NULL, *report = NULL, *fmt_name = "table";
	enum sptd_query_format fmt = SPTD_QUERY_TABLE;
	struct sptd_store *st = NULL;
	char err[1024] = "";
	int64_t timeout = QUERY_DEFAULT_TIMEOUT_NS;
	int i, ret, status, only_args = 0;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (!only_args && strcmp(arg, "--") == 0) {
			only_args = 1;
		} else if (!only_args && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)) {
			fputs(query_usage, stdout);
			return SPTD_EXIT_OK;
		} else if (!only_args && (strcmp(arg, "-r") == 0 || strcmp(arg, "--report") == 0 ||
		                          strncmp(arg, "--report=", 9) == 0)) {
			report = sptd_col_option_value(argc, argv, &i, "--report");
			if (!report) {
				fprintf(stderr, "sysptd query: %s needs a report name (try --report list)\n", arg);
				return SPTD_EXIT_USAGE;
			}
		} else if (!only_args && (strcmp(arg, "-f") == 0 || strcmp(arg, "--format") == 0 ||
		                          strncmp(arg, "--format=", 9) == 0)) {
			fmt_name = sptd_col_option_value(argc, argv, &i, "--format");
			if (!fmt_name) {
				fprintf(stderr, "sysptd query: %s needs table, csv or json\n", arg);
				return SPTD_EXIT_USAGE;
			}
		} else if (!only_args && (strcmp(arg, "-t") == 0 || strcmp(arg, "--timeout") == 0 ||
		                          strncmp(arg, "--timeout=", 10) == 0)) {
			const char *v = sptd_col_option_value(argc, argv, &i, "--timeout");

			if (!v || (strcmp(v, "0") != 0 && sptd_col_parse_duration(v, &timeout) < 0)) {
				fprintf(stderr, "sysptd query: %s needs a duration such as 30s or 500ms "
				        "(ns, us, ms, s; 0: no limit)\n", arg);
				return SPTD_EXIT_USAGE;
			}
			if (strcmp(v, "0") == 0)
				timeout = 0;
		} else if (!only_args && arg[0] == '-' && arg[1] != '\0') {
			fprintf(stderr, "sysptd query: unknown option '%s' (see sysptd query --help)\n", arg);
			return SPTD_EXIT_USAGE;
		} else if (!path) {
			path = arg;
		} else if (!sql) {
			sql = arg;
		} else {
			fprintf(stderr, "sysptd query: unexpected argument '%s' (quote the SQL as one "
			        "argument)\n", arg);
			return SPTD_EXIT_USAGE;
		}
	}
	if (sptd_query_format_parse(fmt_name, &fmt) < 0) {
		fprintf(stderr, "sysptd query: unknown format '%s' (table, csv or json)\n", fmt_name);
		return SPTD_EXIT_USAGE;
	}
	if (report && strcmp(report, "list") == 0)
		return list_reports();
	if (report && !sptd_query_report_describe(report)) {
		fprintf(stderr, "sysptd query: unknown report '%s' (see --report list)\n", report);
		return SPTD_EXIT_USAGE;
	}
	if (!path) {
		fprintf(stderr, "sysptd query: which incident? (sysptd query INCIDENT [SQL])\n");
		return SPTD_EXIT_USAGE;
	}
	if (sql && report) {
		fprintf(stderr, "sysptd query: give SQL or --report, not both\n");
		return SPTD_EXIT_USAGE;
	}

	ret = sptd_col_incident_open("query", path, 0, &st);
	if (ret)
		return ret;
	sptd_store_set_time_limit(st, timeout);

	if (sql)
		ret = sptd_query_run(st, sql, fmt, stdout, err, sizeof(err));
	else
		ret = sptd_query_report(st, report ? report : "summary", fmt, stdout, err,
		                        sizeof(err));
	fflush(stdout);
	if (ret >= 0) {
		status = SPTD_EXIT_OK;
	} else {
		fprintf(stderr, "sysptd query: %s\n", err[0] ? err : strerror(-ret));
		if (ret == -EINVAL || ret == -EROFS)
			status = SPTD_EXIT_USAGE;
		else if (ret == -EBADMSG)
			status = SPTD_EXIT_BADFILE;
		else
			status = SPTD_EXIT_FAIL;
	}
	sptd_store_destroy(st);
	return status;
}
