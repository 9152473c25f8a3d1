/* cmd_query.c — `sysptd query INCIDENT [SQL] [--report NAME] [--format F]`:
 * SQL or a canned report over one incident file, opened read-only. */
#include <errno.h>
#include <getopt.h>
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
"      --include-clipped  --report wakeup: also rank wakeups clipped at the\n"
"                       window start (the task was runnable before it, so the\n"
"                       true latency is longer), marked * in column clipped\n"
"  -t, --timeout DUR    stop a statement or report still running after DUR\n"
"                       (default 60s; 0: no limit); exit status 1\n"
"  -h, --help           this text\n"
"\n"
"Tables follow docs/SCHEMA.md: meta, trigger, process, thread, sched_slice,\n"
"thread_state, irq_slice, softirq_slice, slice, symbol, dso, sample, callsite,\n"
"gap, stats, and the raw_* capture tables.  ts and dur are nanoseconds;\n"
"flags bit 1 / 2: the row's start / end was not seen (cut at the window or\n"
"at what the record proves), so dur is a bound, not a measurement.\n"
"\n"
"Examples:\n"
"  sysptd query incident.db --report cpus\n"
"  sysptd query incident.db \"SELECT cpu, count(*) FROM sched_slice GROUP BY cpu\"\n"
"  sysptd query incident.db --report top --format csv\n"
"\n"
"Run as root, the incident is opened as root and read as the user who ran\n"
"sudo (else nobody): a crafted file cannot use root's privileges.\n"
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

/* The INCIDENT, then the SQL: 0, or SPTD_EXIT_USAGE with the message
 * printed for a third operand. */
static int operand(const char *arg, const char **path, const char **sql)
{
	if (!*path) {
		*path = arg;
	} else if (!*sql) {
		*sql = arg;
	} else {
		fprintf(stderr, "sysptd query: unexpected argument '%s' (quote the SQL as one "
		        "argument)\n", arg);
		return SPTD_EXIT_USAGE;
	}
	return 0;
}

/* What a query runs (sptd_col_parse_as_user). */
struct query_job {
	const char *path;            /* the incident */
	const char *sql, *report;    /* one of them, or neither (summary) */
	enum sptd_query_format fmt;  /* output format */
	int report_flags;            /* SPTD_QUERY_REPORT_* (--include-clipped) */
	int64_t timeout;             /* ns a statement may run, 0 no limit */
};

static int query_job_run(void *arg)
{
	const struct query_job *job = arg;
	const char *path = job->path, *sql = job->sql, *report = job->report;
	enum sptd_query_format fmt = job->fmt;
	struct sptd_store *st = NULL;
	char err[1024] = "";
	int ret, status, report_flags = job->report_flags;

	ret = sptd_col_incident_open("query", path, 0, &st);
	if (ret)
		return ret;
	sptd_store_set_time_limit(st, job->timeout);
	if (sptd_col_drop_root("query")) {
		sptd_store_destroy(st);
		return SPTD_EXIT_FAIL;
	}

	if (sql)
		ret = sptd_query_run(st, sql, fmt, stdout, err, sizeof(err));
	else
		ret = sptd_query_report_flags(st, report ? report : "summary", report_flags, fmt,
		                              stdout, err, sizeof(err));
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

int sptd_col_cmd_query(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "report", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ "include-clipped", no_argument, NULL, 'C' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *sql = NULL, *report = NULL, *fmt_name = "table", *word;
	enum sptd_query_format fmt = SPTD_QUERY_TABLE;
	int64_t timeout = QUERY_DEFAULT_TIMEOUT_NS;
	int c, ret, report_flags = 0;

	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:r:f:t:h", longopts, &word)) != -1) {
		switch (c) {
		case 1:
			if ((ret = operand(optarg, &path, &sql)))
				return ret;
			break;
		case 'h':
			fputs(query_usage, stdout);
			return SPTD_EXIT_OK;
		case 'r':
			report = optarg;
			break;
		case 'f':
			fmt_name = optarg;
			break;
		case 'C':
			report_flags |= SPTD_QUERY_REPORT_CLIPPED;
			break;
		case 't':
			if (strcmp(optarg, "0") == 0) {
				timeout = 0;
			} else if (sptd_col_parse_duration(optarg, &timeout) < 0) {
				fprintf(stderr, "sysptd query: %s needs a duration such as 30s or 500ms "
				        "(ns, us, ms, s; 0: no limit)\n", word);
				return SPTD_EXIT_USAGE;
			}
			break;
		case ':':
			if (optopt == 'r')
				fprintf(stderr, "sysptd query: %s needs a report name (try --report list)\n", word);
			else if (optopt == 't')
				fprintf(stderr, "sysptd query: %s needs a duration such as 30s or 500ms "
				        "(ns, us, ms, s; 0: no limit)\n", word);
			else
				fprintf(stderr, "sysptd query: %s needs table, csv or json\n", word);
			return SPTD_EXIT_USAGE;
		default:
			fprintf(stderr, "sysptd query: unknown option '%s' (see sysptd query --help)\n", word);
			return SPTD_EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++)   /* after "--": operands only */
		if ((ret = operand(argv[optind], &path, &sql)))
			return ret;
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
	if (report_flags && (!report || strcmp(report, "wakeup") != 0)) {
		fprintf(stderr, "sysptd query: --include-clipped goes with --report wakeup\n");
		return SPTD_EXIT_USAGE;
	}

	{
		struct query_job job = { .path = path, .sql = sql, .report = report, .fmt = fmt,
		                         .report_flags = report_flags, .timeout = timeout };

		/* opened as root, read as the invoking user (docs/SECURITY.md) */
		return sptd_col_parse_as_user("query", query_job_run, &job);
	}
}
