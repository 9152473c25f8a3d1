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

/* Most entries a --cpu or --tid list may name. */
#define SCRIPT_MAX_LIST 4096

/* "0,2-3" -> @out[0..*n) (ranges expanded; @max_value bounds each).
 * -EINVAL for anything else. */
static int parse_list(const char *text, int ranges, int64_t max_value, int *out, size_t *n)
{
	const char *p = text;

	*n = 0;
	if (!*p)
		return -EINVAL;
	while (*p) {
		int64_t a, b;
		char *end;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = b = strtoll(p, &end, 10);
		p = end;
		if (ranges && *p == '-') {
			if (!isdigit((unsigned char)p[1]))
				return -EINVAL;
			b = strtoll(p + 1, &end, 10);
			p = end;
		}
		if (a < 0 || b < a || b > max_value || (size_t)(b - a) >= SCRIPT_MAX_LIST - *n)
			return -EINVAL;
		for (int64_t v = a; v <= b; v++)
			out[(*n)++] = (int)v;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -EINVAL;
	}
	return 0;
}

/* "12.345678901" seconds -> ns, exactly (no float rounding). */
static int parse_seconds(const char *text, int64_t *ns)
{
	int64_t sec = 0, frac = 0, scale = 1000000000;
	const char *p = text;

	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (sec > (INT64_MAX / 1000000000 - 9) / 10)
			return -EINVAL;
		sec = sec * 10 + (*p - '0');
	}
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
	if (*p)
		return -EINVAL;
	*ns = sec * 1000000000 + frac;
	return 0;
}

/* One end of --time: SECONDS (absolute, on the clock of the printed
 * times), DUR with a unit (after the window start) or PCT% of the window.
 * @zero: what printed times are relative to (0 or the window start). */
static int parse_time(const char *text, int64_t ws, int64_t we, int64_t zero, int64_t *ns)
{
	size_t len = strlen(text);
	int64_t v;

	if (len > 1 && text[len - 1] == '%') {
		char num[32];
		char *end;
		double pct;

		if (len >= sizeof(num))
			return -EINVAL;
		memcpy(num, text, len - 1);
		num[len - 1] = '\0';
		pct = strtod(num, &end);
		if (*end || end == num || pct < 0 || pct > 100)
			return -EINVAL;
		/* the window comes from the file: any int64 pair, so in double
		 * and clipped, never a wrapped difference */
		{
			double t = (double)ws + ((double)we - (double)ws) * pct / 100.0;

			*ns = t >= 9.2233720368547748e18 ? INT64_MAX :
			      t <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)t;
		}
		return 0;
	}
	if (len && isalpha((unsigned char)text[len - 1])) {
		if (sptd_col_parse_duration(text, &v) < 0)
			return -EINVAL;
		if (__builtin_add_overflow(ws, v, ns))
			*ns = v < 0 ? INT64_MIN : INT64_MAX;
		return 0;
	}
	if (parse_seconds(text, &v) < 0)
		return -EINVAL;
	if (__builtin_add_overflow(zero, v, ns))
		*ns = v < 0 ? INT64_MIN : INT64_MAX;
	return 0;
}

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
	int cpus[SCRIPT_MAX_LIST];  /* --cpu */
	int tids[SCRIPT_MAX_LIST];  /* --tid */
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
			if (parse_list(optarg, 1, 1 << 20, a->cpus, &a->o.ncpus) < 0) {
				fprintf(stderr, "sysptd script: bad --cpu '%s' (CPU numbers and ranges: "
				        "0,2-3)\n", optarg);
				return SPTD_EXIT_USAGE;
			}
			a->o.cpus = a->cpus;
			break;
		case 'T':
			if (parse_list(optarg, 0, INT32_MAX, a->tids, &a->o.ntids) < 0) {
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

/* --time A,B against the incident's window.  SPTD_EXIT_USAGE (printed). */
static int resolve_time(struct script_args *a, struct sptd_store *st, const char *path)
{
	char start[64], end[64];
	const char *comma = strchr(a->time, ',');
	int64_t ws = 0, we = 0, zero;
	size_t n;
	int have;

	if (!comma || strchr(comma + 1, ',') || (size_t)(comma - a->time) >= sizeof(start) ||
	    strlen(comma + 1) >= sizeof(end)) {
		fprintf(stderr, "sysptd script: bad --time '%s': want START,END (either may be empty)\n",
		        a->time);
		return SPTD_EXIT_USAGE;
	}
	n = (size_t)(comma - a->time);
	memcpy(start, a->time, n);
	start[n] = '\0';
	snprintf(end, sizeof(end), "%s", comma + 1);
	have = sptd_store_meta_get_int(st, "window_start", &ws) == 0;
	have = sptd_store_meta_get_int(st, "window_end", &we) == 0 && have;
	if (have && we < ws) {
		/* as query's reports: the file's fault, not the request's */
		fprintf(stderr, "sysptd script: %s: the recording window ends before it starts "
		        "(window_start %lld, window_end %lld): the file was damaged or forged\n",
		        path, (long long)ws, (long long)we);
		return SPTD_EXIT_BADFILE;
	}
	zero = a->o.reltime ? ws : 0;
	if ((start[0] && parse_time(start, ws, we, zero, &a->o.start_ns) < 0) ||
	    (end[0] && parse_time(end, ws, we, zero, &a->o.end_ns) < 0)) {
		fprintf(stderr, "sysptd script: bad --time '%s': each end is SECONDS (12.5), a "
		        "duration after the window start (2ms) or a percentage (25%%)\n", a->time);
		return SPTD_EXIT_USAGE;
	}
	if (a->o.start_ns > a->o.end_ns) {
		fprintf(stderr, "sysptd script: --time '%s' ends before it starts\n", a->time);
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
	if (a->time && (status = resolve_time(a, st, job->path)))
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
