/* cmd_script.c — `sysptd script INCIDENT`: every event of an incident in
 * time order, one per line, as `perf script` and `trace-cmd report` print
 * theirs; perf's filters (-C/--cpu, --tid, --time, -G, --reltime). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_query.h"
#include "sptd_store.h"

static const char script_usage[] =
"Usage: sysptd script [OPTIONS] INCIDENT\n"
"\n"
"Print every event of an incident in time order, one per line, as perf\n"
"script and trace-cmd report do:\n"
"    COMM  TID [CPU] SECONDS: EVENT: DETAILS\n"
"sched switches and wakeups, irq and softirq entry/exit (exits with their\n"
"duration), samples with their call stacks (indented lines, innermost\n"
"first), call/return of PT call slices (indented by depth), gaps in the\n"
"data, and the trigger.  COMM/TID is the task on that CPU then (the one\n"
"switching out; the waker), \"-\" when none is known.\n"
"\n"
"INCIDENT is a file, or `latest`: the newest incident in --dir (default\n"
SPTD_COL_DEFAULT_DIR ").\n"
"\n"
"Options:\n"
"  -C, --cpu LIST       only events on these CPUs: 0,2-3 (gaps and triggers\n"
"                       of no one CPU are kept)\n"
"      --tid LIST       only events of these threads (a switch or wakeup\n"
"                       matches either task): 1234,1240\n"
"      --time A,B       only events from A to B (either may be empty); each\n"
"                       is SECONDS as this command prints them (12.5), a\n"
"                       duration after the window start (2ms, 500us), or a\n"
"                       percentage of the window (25%)\n"
"  -e, --event LIST     only these kinds: sched, wakeup, irq, softirq, sample,\n"
"                       call, gap, trigger, ftrace (an incident's extra\n"
"                       tracepoints)\n"
"      --reltime        times from the window start, not the clock's zero\n"
"  -G, --hide-call-graph  samples without their stacks\n"
"  -d, --dir DIR        where `latest` looks (default " SPTD_COL_DEFAULT_DIR ")\n"
"      --timeout DUR    stop if one of the script's statements still runs\n"
"                       after DUR (default 0: no limit); exit status 1.  For\n"
"                       incidents from elsewhere: a crafted file can make a\n"
"                       statement slow\n"
"  -h, --help           this text\n"
"\n"
"Examples:\n"
"  sysptd script latest | less\n"
"  sysptd script incident.db --cpu 0 --time 2ms,3ms\n"
"  sysptd script incident.db --tid 1234 -e sched,wakeup\n"
"\n"
"Exit status: 0 success, 1 failure (e.g. cannot write, stopped by --timeout),\n"
"2 bad command line,\n"
"6 missing, corrupt or not an incident file.\n";

/* --event LIST -> SPTD_QUERY_EV_* bits. */
static int parse_kinds(const char *text, unsigned *kinds)
{
	static const struct {
		const char *name;       /* as typed */
		unsigned bit;           /* what it selects */
	} names[] = {
		{ "sched", SPTD_QUERY_EV_SCHED }, { "wakeup", SPTD_QUERY_EV_WAKEUP },
		{ "irq", SPTD_QUERY_EV_IRQ }, { "softirq", SPTD_QUERY_EV_SOFTIRQ },
		{ "sample", SPTD_QUERY_EV_SAMPLE }, { "call", SPTD_QUERY_EV_CALL },
		{ "gap", SPTD_QUERY_EV_GAP }, { "trigger", SPTD_QUERY_EV_TRIGGER },
		{ "ftrace", SPTD_QUERY_EV_FTRACE },
	};
	const char *p = text;

	*kinds = 0;
	while (*p) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		*kinds |= names[i].bit;
		p += n;
		if (*p == ',')
			p++;
	}
	return *kinds ? 0 : -EINVAL;
}

/* What the command line asked for. */
struct script_args {
	const char *arg;            /* INCIDENT as typed */
	const char *dir;            /* --dir, NULL: default */
	const char *time;           /* --time A,B, resolved once the incident is open */
	int64_t timeout;            /* --timeout: ns a statement may run, 0 no limit */
	int cpus[SPTD_COL_MAX_LIST];  /* --cpu */
	int tids[SPTD_COL_MAX_LIST];  /* --tid */
	struct sptd_query_script_opts o; /* the rest */
};

static int parse_args(int argc, char **argv, struct script_args *a)
{
	static const struct option longopts[] = {
		{ "cpu", required_argument, NULL, 'C' },
		{ "tid", required_argument, NULL, 'T' },
		{ "time", required_argument, NULL, 't' },
		{ "event", required_argument, NULL, 'e' },
		{ "reltime", no_argument, NULL, 'R' },
		{ "hide-call-graph", no_argument, NULL, 'G' },
		{ "dir", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *word;
	int c, operands = 0;

	a->o.start_ns = INT64_MIN;
	a->o.end_ns = INT64_MAX;
	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:C:e:Gd:h", longopts, &word)) != -1) {
		switch (c) {
		case 1:
			a->arg = optarg;
			operands++;
			break;
		case 'C':
			if (sptd_col_parse_list(optarg, 1, 1 << 20, a->cpus, &a->o.ncpus) < 0) {
				fprintf(stderr, "sysptd script: bad --cpu '%s' (CPU numbers and ranges: "
				        "0,2-3)\n", optarg);
				return SPTD_EXIT_USAGE;
			}
			a->o.cpus = a->cpus;
			break;
		case 'T':
			if (sptd_col_parse_list(optarg, 0, INT32_MAX, a->tids, &a->o.ntids) < 0) {
				fprintf(stderr, "sysptd script: bad --tid '%s' (thread ids: 1234,1240)\n",
				        optarg);
				return SPTD_EXIT_USAGE;
			}
			a->o.tids = a->tids;
			break;
		case 't':
			a->time = optarg;
			break;
		case 'e':
			if (parse_kinds(optarg, &a->o.kinds) < 0) {
				fprintf(stderr, "sysptd script: bad --event '%s' (sched, wakeup, irq, softirq, "
				        "sample, call, gap, trigger, ftrace)\n", optarg);
				return SPTD_EXIT_USAGE;
			}
			break;
		case 'R':
			a->o.reltime = 1;
			break;
		case 'G':
			a->o.no_stack = 1;
			break;
		case 'd':
			a->dir = optarg;
			break;
		case 'O':
			if (sptd_col_parse_timeout("script", word, optarg, &a->timeout))
				return SPTD_EXIT_USAGE;
			break;
		case 'h':
			fputs(script_usage, stdout);
			return -1;
		case ':':
			fprintf(stderr, "sysptd script: option '%s' needs a value\n", word);
			return SPTD_EXIT_USAGE;
		default:
			fprintf(stderr, "sysptd script: unknown option '%s' (see sysptd script --help)\n",
			        word);
			return SPTD_EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++, operands++)   /* after "--": operands only */
		a->arg = argv[optind];
	if (operands != 1) {
		fprintf(stderr, "sysptd script: %s (sysptd script INCIDENT)\n",
		        operands ? "one incident at a time" : "which incident?");
		return SPTD_EXIT_USAGE;
	}
	return 0;
}

/* What the script child does (sptd_col_parse_as_user): open the
 * incident's file while root, give root up, then let SQLite read it and
 * print. */
struct script_job {
	struct script_args *a;
	const char *path;
};

static int script_job_run(void *arg)
{
	struct script_job *job = arg;
	struct script_args *a = job->a;
	struct sptd_store *st = NULL;
	char err[1024] = "";
	int status, rc, fd;

	status = sptd_col_incident_fd("script", job->path, &fd);
	if (status)
		return status;
	if (sptd_col_drop_root("script")) {
		close(fd);
		return SPTD_EXIT_FAIL;
	}
	status = sptd_col_incident_open_fd("script", fd, job->path, &st);
	close(fd);
	if (status)
		return status;
	if (a->timeout)
		sptd_store_set_time_limit(st, a->timeout);
	if (a->time && (status = sptd_col_time_range("script", a->time, st, job->path,
	                                              a->o.reltime, &a->o.start_ns, &a->o.end_ns)))
		goto out;
	rc = sptd_query_script(st, &a->o, stdout, err, sizeof(err));
	if (rc < 0) {
		fflush(stdout);
		fprintf(stderr, "sysptd script: %s: %s\n", job->path, err[0] ? err : strerror(-rc));
		status = rc == -EBADMSG ? SPTD_EXIT_BADFILE : rc == -EINVAL ? SPTD_EXIT_USAGE :
		         SPTD_EXIT_FAIL;
	}
out:
	fflush(stdout);
	sptd_store_destroy(st);
	return status;
}

int sptd_col_cmd_script(int argc, char **argv)
{
	struct script_args *a = calloc(1, sizeof(*a));
	struct script_job job;
	char path[4096];
	int status;

	if (!a) {
		fprintf(stderr, "sysptd script: out of memory\n");
		return SPTD_EXIT_FAIL;
	}
	status = parse_args(argc, argv, a);
	if (status) {
		status = status < 0 ? SPTD_EXIT_OK : status;
		goto out;
	}
	status = sptd_col_incident_resolve("script", a->arg, a->dir, path, sizeof(path));
	if (status)
		goto out;
	/* the file is parsed by a child that gave root up, as query's is */
	fflush(stdout);
	job.a = a;
	job.path = path;
	status = sptd_col_parse_as_user("script", script_job_run, &job);
out:
	free(a);
	return status;
}
