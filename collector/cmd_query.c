/* cmd_query.c — `sysptd query INCIDENT... [SQL | - | -f FILE | --report
 * NAME]`: SQL or a canned report over one or more incident files, opened
 * read-only; with nothing to run and a terminal on stdin, a shell.
 *
 * Several incidents: a statement prints one result whose first column
 * "incident" names each row's file (so rows can be compared, sorted and
 * written as one CSV), a report prints once per incident under its name.
 * The files are all opened before anything runs, then read. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_dec.h"
#include "sptd_query.h"
#include "sptd_store.h"

static const char query_usage[] =
"Usage: sysptd query [OPTIONS] INCIDENT... [SQL | -]\n"
"       sysptd query [OPTIONS] INCIDENT... -f FILE\n"
"       sysptd query [OPTIONS] INCIDENT... --report NAME\n"
"\n"
"Run read-only SQL, or a canned report, on one or more incident files.\n"
"SQL is the last argument (it has a blank; several statements may be\n"
"separated by ';'), comes from FILE with -f, or from stdin with '-'.\n"
"Statements end where SQLite says one is complete (a ';' in a string, a\n"
"comment or a trigger's BEGIN ... END does not end one); with several, an\n"
"error names the statement and its line.\n"
"Given no SQL, no -f and no --report: an interactive shell when stdin is a\n"
"terminal (like sqlite3: statements end with ';', .help lists the dot\n"
"commands), else the summary report.\n"
"\n"
"INCIDENT is a file, or `latest`: the newest incident in the directory\n"
"(--dir, default " SPTD_COL_DEFAULT_DIR ").  With several incidents a\n"
"statement prints one result with a first column `incident`; a report\n"
"prints once per incident, headed by its name.\n"
"\n"
"Options:\n"
"  -r, --report NAME    summary, cpus, top, wakeup, irq, threads\n"
"                       (--report list shows them with a description)\n"
"  -f, --file FILE      read the SQL statements from FILE ('-': stdin)\n"
"      --format FMT     table (default), csv or json; tables show durations\n"
"                       in reports as \"20.000 ms\", csv and json as integer ns\n"
"      --include-clipped  --report wakeup: also rank wakeups clipped at the\n"
"                       window start (the task was runnable before it, so the\n"
"                       true latency is longer), marked * in column clipped\n"
"      --all-tasks      --report threads: list every thread the incident names\n"
"                       (by default only those that did something in the\n"
"                       window: ran, woke or were woken, changed state, or\n"
"                       were sampled)\n"
"  -t, --timeout DUR    stop a statement or report still running after DUR\n"
"                       (default 60s; 0: no limit); exit status 1\n"
"  -w, --width N        cut table text so lines fit N columns (default: the\n"
"                       terminal's width; 0, or output not a terminal: never)\n"
"  -d, --dir DIR        where `latest` looks (default " SPTD_COL_DEFAULT_DIR ")\n"
"  -h, --help           this text\n"
"\n"
"Tables follow docs/SCHEMA.md: meta, trigger, process, thread, sched_slice,\n"
"thread_state, irq_slice, softirq_slice, slice, symbol, dso, sample, callsite,\n"
"gap, stats, cpu_freq, cpu_idle, ptwrite, and the raw_* capture tables.  ts and\n"
"dur are nanoseconds; flags bit 1 / 2: the row's start / end was not seen\n"
"(cut at the window or at what the record proves), so dur is a bound, not a\n"
"measurement.\n"
"\n"
"Examples:\n"
"  sysptd query latest --report cpus\n"
"  sysptd query /var/lib/sysptd/incident-*.db --report cpus\n"
"  sysptd query incident.db \"SELECT cpu, count(*) FROM sched_slice GROUP BY cpu\"\n"
"  sysptd query a.db b.db \"SELECT count(*) AS switches FROM sched_slice\"\n"
"  sysptd query incident.db -f checks.sql --format csv\n"
"  echo \"SELECT * FROM trigger;\" | sysptd query incident.db -\n"
"\n"
"Run as root, the incidents are opened as root and read as the user who ran\n"
"sudo (else nobody): a crafted file cannot use root's privileges.\n"
"\n"
"Exit status: 0 success, 1 failure (including a query stopped by --timeout),\n"
"2 bad command line or SQL (including a statement that writes), 4 an\n"
"incident is not readable by this user, 6 missing, corrupt or not an\n"
"incident file (the others are still read).\n";

/* How long a statement or report may run unless --timeout says otherwise:
 * long enough for any report on a large incident, short enough that a
 * runaway recursive CTE (or a planted view) does not run forever. */
#define QUERY_DEFAULT_TIMEOUT_NS (60 * 1000000000LL)

/* Largest SQL text read from a file or stdin. */
#define QUERY_MAX_SQL (64u << 20)

/* What the command line asked for. */
struct query_args {
	const char **operands;       /* incidents, then perhaps the SQL */
	int noperands;               /* entries of @operands */
	const char *sql;             /* SQL text given as an argument, or NULL */
	int sql_stdin;               /* the SQL operand was "-" */
	const char *file;            /* -f FILE, or NULL */
	const char *report;          /* --report NAME, or NULL */
	const char *dir;             /* --dir, or NULL (default) */
	struct sptd_query_print_opts print; /* format, width, report flags */
	int64_t timeout;             /* ns a statement may run, 0 no limit */
};

static int list_reports(void)
{
	const char *const *names = sptd_query_report_names();

	for (; *names; names++)
		printf("%-10s %s\n", *names, sptd_query_report_describe(*names));
	return SPTD_EXIT_OK;
}

/* Is operand @arg SQL rather than an incident?  "-", a keyword and a
 * blank, or text that names no file and has a blank or starts like a
 * query. */
static int looks_like_sql(const char *arg)
{
	static const char *const words[] = { "select", "with", "values", "pragma", "explain" };
	struct stat sb;

	if (strcmp(arg, "-") == 0)
		return 1;
	/* a keyword and a blank is SQL even where a file of that name
	 * exists: a file planted in the current directory as "select
	 * count(*) from thread" was queried instead (audit of 2026-11-27) */
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i]);

		if (strncasecmp(arg, words[i], n) == 0 && isspace((unsigned char)arg[n]))
			return 1;
	}
	if (strcmp(arg, "latest") == 0 || stat(arg, &sb) == 0)
		return 0;
	for (const char *p = arg; *p; p++)
		if (isspace((unsigned char)*p))
			return 1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i]);

		if (strncasecmp(arg, words[i], n) == 0 && !isalnum((unsigned char)arg[n]) &&
		    arg[n] != '_' && arg[n] != '.')
			return 1;
	}
	return 0;
}

/* Split the operands into incidents and the SQL (the last one, when it
 * looks like SQL).  SPTD_EXIT_USAGE with the message printed. */
static int split_operands(struct query_args *a)
{
	for (int i = 0; i < a->noperands; i++) {
		if (!looks_like_sql(a->operands[i]))
			continue;
		if (i != a->noperands - 1) {
			fprintf(stderr, "sysptd query: unexpected argument '%s' after the SQL (quote the "
			        "SQL as one argument; incidents come before it)\n", a->operands[i + 1]);
			return SPTD_EXIT_USAGE;
		}
		if (strcmp(a->operands[i], "-") == 0)
			a->sql_stdin = 1;
		else
			a->sql = a->operands[i];
		a->noperands--;
	}
	if (!a->noperands) {
		fprintf(stderr, "sysptd query: which incident? (sysptd query INCIDENT [SQL]; "
		        "`latest` is the newest)\n");
		return SPTD_EXIT_USAGE;
	}
	if ((a->sql || a->sql_stdin) + (a->file != NULL) + (a->report != NULL) > 1) {
		fprintf(stderr, "sysptd query: give one of SQL, -f FILE or --report NAME\n");
		return SPTD_EXIT_USAGE;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct query_args *a)
{
	static const struct option longopts[] = {
		{ "report", required_argument, NULL, 'r' },
		{ "file", required_argument, NULL, 'f' },
		{ "format", required_argument, NULL, 'F' },
		{ "width", required_argument, NULL, 'w' },
		{ "dir", required_argument, NULL, 'd' },
		{ "include-clipped", no_argument, NULL, 'C' },
		{ "all-tasks", no_argument, NULL, 'A' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fmt_name = "table", *width = NULL, *word;
	int c;

	memset(a, 0, sizeof(*a));
	a->timeout = QUERY_DEFAULT_TIMEOUT_NS;
	a->operands = calloc((size_t)argc + 1, sizeof(*a->operands));
	if (!a->operands) {
		fprintf(stderr, "sysptd query: out of memory\n");
		return SPTD_EXIT_FAIL;
	}
	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:r:f:w:d:t:h", longopts, &word)) != -1) {
		switch (c) {
		case 1:
			a->operands[a->noperands++] = optarg;
			break;
		case 'h':
			fputs(query_usage, stdout);
			return -1;
		case 'r':
			a->report = optarg;
			break;
		case 'f':
			a->file = optarg;
			break;
		case 'F':
			fmt_name = optarg;
			break;
		case 'w':
			width = optarg;
			break;
		case 'd':
			a->dir = optarg;
			break;
		case 'C':
			a->print.report_flags |= SPTD_QUERY_REPORT_CLIPPED;
			break;
		case 'A':
			a->print.report_flags |= SPTD_QUERY_REPORT_ALL_TASKS;
			break;
		case 't':
			if (sptd_col_parse_timeout("query", word, optarg, &a->timeout))
				return SPTD_EXIT_USAGE;
			break;
		case ':':
			if (optopt == 'r')
				fprintf(stderr, "sysptd query: %s needs a report name (try --report list)\n", word);
			else if (optopt == 'F')
				fprintf(stderr, "sysptd query: %s needs table, csv or json\n", word);
			else if (optopt == 'f')
				fprintf(stderr, "sysptd query: %s needs a FILE of SQL ('-': stdin)\n", word);
			else if (optopt == 't')
				fprintf(stderr, "sysptd query: %s needs a duration: " SPTD_DURATION_HELP
				        " (0: no limit)\n", word);
			else
				fprintf(stderr, "sysptd query: option '%s' needs a value\n", word);
			return SPTD_EXIT_USAGE;
		default:
			fprintf(stderr, "sysptd query: unknown option '%s' (see sysptd query --help)\n", word);
			return SPTD_EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++)   /* after "--": operands only */
		a->operands[a->noperands++] = argv[optind];
	if (sptd_query_format_parse(fmt_name, &a->print.format) < 0) {
		fprintf(stderr, "sysptd query: unknown format '%s' (table, csv or json)\n", fmt_name);
		return SPTD_EXIT_USAGE;
	}
	a->print.width = sptd_col_term_width(1);
	if (width) {
		int64_t v;

		if (sptd_col_parse_int(width, 0, 100000, &v) < 0) {
			fprintf(stderr, "sysptd query: bad --width '%s' (columns, 0: never cut)\n", width);
			return SPTD_EXIT_USAGE;
		}
		a->print.width = (int)v;
	}
	if (a->report && strcmp(a->report, "list") == 0)
		return list_reports() == SPTD_EXIT_OK ? -1 : SPTD_EXIT_FAIL;
	if (a->report && !sptd_query_report_describe(a->report)) {
		fprintf(stderr, "sysptd query: unknown report '%s' (see --report list)\n", a->report);
		return SPTD_EXIT_USAGE;
	}
	if ((a->print.report_flags & SPTD_QUERY_REPORT_CLIPPED) &&
	    (!a->report || strcmp(a->report, "wakeup") != 0)) {
		fprintf(stderr, "sysptd query: --include-clipped goes with --report wakeup\n");
		return SPTD_EXIT_USAGE;
	}
	if ((a->print.report_flags & SPTD_QUERY_REPORT_ALL_TASKS) &&
	    (!a->report || strcmp(a->report, "threads") != 0)) {
		fprintf(stderr, "sysptd query: --all-tasks goes with --report threads\n");
		return SPTD_EXIT_USAGE;
	}
	return split_operands(a);
}

/* @path opened for reading SQL as every file a user controls is
 * (sptd_dec_file_open: a FIFO never blocks, only a regular file); NULL
 * and errno (ENXIO: not a regular file). */
static FILE *open_sql(const char *path)
{
	int fd = sptd_dec_file_open(path, SPTD_DEC_OPEN_ANY_SIZE, NULL);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* The whole of @path ("-": stdin) as text in *@text (free it).  Exit
 * status with the message printed, or 0. */
static int read_sql(const char *path, char **text)
{
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : open_sql(path);
	size_t len = 0, cap = 0, n;
	char *buf = NULL;
	int status = 0;

	*text = NULL;
	if (!f) {
		int e = errno;
		enum sptd_query_format fmt;

		fprintf(stderr, "sysptd query: -f %s: %s\n", path, sptd_dec_file_strerror(-e));
		/* the old meaning of -f was --format */
		if (e == ENOENT && sptd_query_format_parse(path, &fmt) == 0)
			fprintf(stderr, "sysptd query: -f reads SQL from a FILE; for the output format "
			        "write --format %s\n", path);
		return e == ENOENT && sptd_query_format_parse(path, &fmt) == 0 ? SPTD_EXIT_USAGE :
		       e == EACCES ? SPTD_EXIT_NOPERM : SPTD_EXIT_BADFILE;
	}
	do {
		if (cap - len < 65536) {
			char *more = len + 65537 > QUERY_MAX_SQL ? NULL : realloc(buf, cap + 65537);

			if (!more) {
				fprintf(stderr, "sysptd query: %s: more SQL than %u MiB\n",
				        is_stdin ? "stdin" : path, QUERY_MAX_SQL >> 20);
				status = SPTD_EXIT_USAGE;
				break;
			}
			buf = more;
			cap += 65536;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (!status && ferror(f)) {
		fprintf(stderr, "sysptd query: reading %s: %s\n", is_stdin ? "stdin" : path,
		        strerror(errno));
		status = SPTD_EXIT_FAIL;
	}
	if (!status) {
		buf[len] = '\0';
		if (strlen(buf) != len) {
			fprintf(stderr, "sysptd query: %s is not SQL text (it holds a NUL byte)\n",
			        is_stdin ? "stdin" : path);
			status = SPTD_EXIT_USAGE;
		}
	}
	if (!is_stdin)
		fclose(f);
	if (status)
		free(buf);
	else
		*text = buf;
	return status;
}

/* A negative errno of the session -> the exit status. */
static int status_of(int rc)
{
	if (rc >= 0)
		return SPTD_EXIT_OK;
	if (rc == -EINVAL || rc == -EROFS)
		return SPTD_EXIT_USAGE;
	if (rc == -EBADMSG)
		return SPTD_EXIT_BADFILE;
	return SPTD_EXIT_FAIL;
}

/* Ctrl+C in the shell: getline() returns EINTR and the line starts over. */
static void on_sigint(int sig)
{
	(void)sig;
}

/* Run what @a asks on the open incidents @st[0..@n) named @labels. */
static int query_run(const struct query_args *a, struct sptd_store **st,
                     char **labels, int n, const char *sql)
{
	struct sptd_query_session *s = NULL;
	int rc, i;

	rc = sptd_query_session_create(&a->print, stdout, stderr, "sysptd query: ", &s);
	for (i = 0; rc >= 0 && i < n; i++)
		rc = sptd_query_session_add(s, st[i], labels[i]);
	if (rc < 0) {
		fprintf(stderr, "sysptd query: %s\n", strerror(-rc));
		sptd_query_session_destroy(s);
		return SPTD_EXIT_FAIL;
	}
	if (sql) {
		rc = sptd_query_session_sql(s, sql);
	} else if (a->report || !isatty(0)) {
		rc = sptd_query_session_report(s, a->report);
	} else {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigint;   /* no SA_RESTART: interrupts getline */
		sigaction(SIGINT, &sa, NULL);
		rc = sptd_query_session_shell(s, stdin, 1);
		if (rc < 0)
			fprintf(stderr, "sysptd query: reading stdin: %s\n", strerror(-rc));
	}
	sptd_query_session_destroy(s);
	return status_of(rc);
}

/* What the query child does (sptd_col_parse_as_user): open every
 * incident's file and read the SQL as root, give root up, then let SQLite
 * read the files (it parses them as the user, never as root) and run it. */
static int query_job_run(void *arg)
{
	const struct query_args *a = arg;
	struct sptd_store **st = NULL;
	char **labels = NULL, *text = NULL, path[4096];
	int status = SPTD_EXIT_OK, open_status = 0, n = 0, nfd = 0, i, *fds = NULL;

	st = calloc((size_t)a->noperands, sizeof(*st));
	labels = calloc((size_t)a->noperands, sizeof(*labels));
	fds = calloc((size_t)a->noperands, sizeof(*fds));
	if (!st || !labels || !fds) {
		fprintf(stderr, "sysptd query: out of memory\n");
		status = SPTD_EXIT_FAIL;
		goto out;
	}
	/* every incident is opened before any is read; one that does not open
	 * is reported and the others are still read (as grep does) */
	for (i = 0; i < a->noperands; i++) {
		int ret = sptd_col_incident_resolve("query", a->operands[i], a->dir, path,
		                                    sizeof(path));

		if (!ret)
			ret = sptd_col_incident_fd("query", path, &fds[nfd]);
		if (ret) {
			if (!open_status || ret == SPTD_EXIT_BADFILE)
				open_status = ret;
			continue;
		}
		if (!(labels[nfd] = strdup(path))) {
			close(fds[nfd]);
			fprintf(stderr, "sysptd query: out of memory\n");
			status = SPTD_EXIT_FAIL;
			goto out;
		}
		nfd++;
	}
	/* standard input is the caller's; a -f FILE is read after the drop,
	 * as that user may read it (a link planted there to /etc/shadow was
	 * read as root and echoed in the syntax error), never a FIFO */
	if (a->sql_stdin && !a->file) {
		status = read_sql("-", &text);
		if (status)
			goto out;
	}
	if (sptd_col_drop_root("query")) {
		status = SPTD_EXIT_FAIL;
		goto out;
	}
	if (a->file) {
		status = read_sql(a->file, &text);
		if (status)
			goto out;
	}
	/* the files, read now: what is not an incident is reported here */
	for (i = 0; i < nfd; i++) {
		char *label = labels[i];
		int ret;

		labels[i] = NULL;   /* back at n if it opens (n <= i) */
		ret = sptd_col_incident_open_fd("query", fds[i], label, &st[n]);
		if (ret) {
			if (!open_status || ret == SPTD_EXIT_BADFILE)
				open_status = ret;
			free(label);
			continue;
		}
		sptd_store_set_time_limit(st[n], a->timeout);
		labels[n++] = label;
	}
	if (!n) {
		status = open_status;
		goto out;
	}
	status = query_run(a, st, labels, n, text ? text : a->sql);
	if (open_status && (status == SPTD_EXIT_OK || open_status == SPTD_EXIT_BADFILE))
		status = open_status;
out:
	for (i = 0; i < n; i++)
		sptd_store_destroy(st[i]);
	for (i = 0; labels && i < a->noperands; i++)
		free(labels[i]);
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	free(fds);
	free(st);
	free(labels);
	free(text);
	return status;
}

int sptd_col_cmd_query(int argc, char **argv)
{
	struct query_args a;
	int status;

	status = parse_args(argc, argv, &a);
	if (status)
		status = status < 0 ? SPTD_EXIT_OK : status;
	else   /* opened as root, read as the invoking user (docs/SECURITY.md) */
		status = sptd_col_parse_as_user("query", query_job_run, &a);
	free(a.operands);
	return status;
}
