/* cmd_flame.c — `sysptd flamegraph` (an interactive SVG or folded stacks
 * of an incident's samples, off-CPU waits or PT call time; a differential
 * one of two sets of incidents) and `sysptd diff` (what changed from A to
 * B per function, thread, IRQ and wakeup latency).  Both take incidents
 * as "A B" or "A1 A2 ... -- B1 B2 ...". */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_query.h"
#include "sptd_store.h"

/* The options both commands take, in both --help texts. */
#define FLAME_COMMON_OPTS \
"  -d, --dir DIR        where `latest` looks (default " SPTD_COL_DEFAULT_DIR ")\n" \
"      --timeout DUR    stop a statement still running after DUR (default 0:\n" \
"                       no limit); exit status 1\n" \
"  -h, --help           this text\n"

static const char flame_usage[] =
"Usage: sysptd flamegraph [OPTIONS] INCIDENT... [-o FILE.svg]\n"
"       sysptd flamegraph --diff [OPTIONS] A B\n"
"       sysptd flamegraph --diff [OPTIONS] A1 A2 ... -- B1 B2 ...\n"
"\n"
"Draw the stacks of an incident as a flame graph: a self-contained SVG that\n"
"any browser opens offline (click a frame to zoom, Search or Ctrl+F to\n"
"highlight, hover for its count and share), or folded stacks for\n"
"flamegraph.pl, inferno, speedscope and Pyroscope.  Each stack starts with\n"
"its thread's name.  Several incidents are added up.\n"
"\n"
"It weighs samples (one each; their counts add up to the incident's\n"
"samples), or with --offcpu the time threads were blocked (ns, record with\n"
"--offcpu), or with --pt the time of PT call slices (ns, each function's own\n"
"time).  By default: samples, else PT call time where the incident has only\n"
"that.\n"
"\n"
"With --diff, a differential flame graph: the widths are B's, each frame red\n"
"where its share grew from A to B and blue where it shrank (hover for both).\n"
"\n"
"Options:\n"
"  -o, --output FILE    write to FILE (default: standard output)\n"
"  -f, --format F       svg (default) or folded (\"a;b;c COUNT\"; with --diff\n"
"                       \"a;b;c A B\", as flamegraph.pl's difffolded)\n"
"      --offcpu         weigh blocked time\n"
"      --pt             weigh PT call time\n"
"      --samples        weigh samples\n"
"      --diff           a differential flame graph of A and B\n"
"  -C, --cpu LIST       only stacks on these CPUs: 0,2-3\n"
"      --tid LIST       only these threads' stacks: 1234,1240\n"
"      --time A,B       only from A to B (one incident): SECONDS as `sysptd\n"
"                       script` prints them, a duration after the window start\n"
"                       (2ms) or a percentage of the window (25%)\n"
"      --reltime        --time's SECONDS from the window start\n"
"      --title TEXT     the SVG's title\n"
FLAME_COMMON_OPTS
"\n"
"Examples:\n"
"  sysptd flamegraph latest -o flame.svg\n"
"  sysptd flamegraph latest --offcpu --tid 1234 -o waits.svg\n"
"  sysptd flamegraph latest -f folded | flamegraph.pl > flame.svg\n"
"  sysptd flamegraph --diff good.db bad.db -o diff.svg\n"
"\n"
"Exit status: 0 success, 1 failure (nothing of that weight in the incident,\n"
"cannot write), 2 bad command line, 6 missing, corrupt or forged incident\n"
"(more distinct stacks than a graph may hold).\n";

static const char diff_usage[] =
"Usage: sysptd diff [OPTIONS] A B\n"
"       sysptd diff [OPTIONS] A1 A2 ... -- B1 B2 ...\n"
"\n"
"What changed from incident A to incident B, ranked by the size of the\n"
"change, each row with both values and the signed change (B - A):\n"
"  functions  share of the samples (or of PT call time) with the function\n"
"             on top of the stack (self) and anywhere in it (total)\n"
"  threads    CPU time per thread name\n"
"  irqs       time in each hard IRQ and softirq\n"
"  wakeups    wakeup-to-run latency per thread name (mean and worst)\n"
"Several incidents on a side (a baseline of many against one): the\n"
"function shares come from all their samples together, times are the mean\n"
"per incident.  Incidents before \"--\" are A, after it B.\n"
"\n"
"Options:\n"
"  -f, --format F       table (default), csv or json\n"
"  -n, --limit N        rows per section (default 20; 0: all)\n"
FLAME_COMMON_OPTS
"\n"
"Examples:\n"
"  sysptd diff good.db bad.db\n"
"  sysptd diff base1.db base2.db base3.db -- bad.db --format csv\n"
"\n"
"Exit status: 0 success, 1 failure, 2 bad command line, 6 missing, corrupt\n"
"or forged incident.\n";

/* What the command line asked for (both commands). */
struct flame_args {
	const char *cmd;            /* "flamegraph" or "diff" */
	const char *operand[2][64]; /* incidents as typed: A, B */
	size_t n[2];
	int diff;                   /* two sides */
	const char *dir;            /* --dir */
	const char *output;         /* -o */
	const char *time;           /* --time, resolved on the incident */
	int reltime;
	int64_t timeout;            /* --timeout, ns */
	int limit;                  /* diff: rows per section */
	struct sptd_query_print_opts print; /* diff: format */
	int cpus[SPTD_COL_MAX_LIST], tids[SPTD_COL_MAX_LIST];
	struct sptd_query_flame_opts o;
	int out_fd;                 /* -o's temporary file (parent's), -1 stdout */
	char path[2][64][4096];     /* resolved paths */
};

static int operand_add(struct flame_args *a, int side, const char *arg)
{
	if (a->n[side] == 64) {
		fprintf(stderr, "sysptd %s: at most 64 incidents a side\n", a->cmd);
		return SPTD_EXIT_USAGE;
	}
	a->operand[side][a->n[side]++] = arg;
	return 0;
}

/* Options of flamegraph (flame 1) or diff (0) into @a; the incidents
 * after "--" at @boundary of @argv (argc: none) are B's. */
static int parse_args(int argc, char **argv, int boundary, struct flame_args *a, int flame)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "format", required_argument, NULL, 'f' },
		{ "offcpu", no_argument, NULL, 'B' }, { "pt", no_argument, NULL, 'P' },
		{ "samples", no_argument, NULL, 'S' }, { "diff", no_argument, NULL, 'D' },
		{ "cpu", required_argument, NULL, 'C' }, { "tid", required_argument, NULL, 'T' },
		{ "time", required_argument, NULL, 't' }, { "reltime", no_argument, NULL, 'R' },
		{ "title", required_argument, NULL, 'i' }, { "limit", required_argument, NULL, 'n' },
		{ "dir", required_argument, NULL, 'd' }, { "timeout", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *word, *bad = NULL;
	int c, rc;

	a->limit = 20;
	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:o:f:C:n:d:h", longopts, &word)) != -1) {
		/* the options of the other command are unknown here */
		if (!flame && strchr("oBPSDCTtRi", c))
			c = '?';
		if (flame && c == 'n')
			c = '?';
		switch (c) {
		case 1:
			if ((rc = operand_add(a, optind - 1 >= boundary, optarg)))
				return rc;
			break;
		case 'o': a->output = optarg; break;
		case 'f':
			if (flame && strcmp(optarg, "svg") == 0)
				a->o.format = SPTD_QUERY_FLAME_SVG;
			else if (flame && strcmp(optarg, "folded") == 0)
				a->o.format = SPTD_QUERY_FLAME_FOLDED;
			else if (flame || sptd_query_format_parse(optarg, &a->print.format) < 0)
				bad = flame ? "svg or folded" : "table, csv or json";
			break;
		case 'B': a->o.weight = SPTD_QUERY_FLAME_OFFCPU; break;
		case 'P': a->o.weight = SPTD_QUERY_FLAME_PT; break;
		case 'S': a->o.weight = SPTD_QUERY_FLAME_SAMPLES; break;
		case 'D': a->diff = 1; break;
		case 'C':
			if (sptd_col_parse_list(optarg, 1, 1 << 20, a->cpus, &a->o.ncpus) < 0)
				bad = "CPU numbers and ranges: 0,2-3";
			a->o.cpus = a->cpus;
			break;
		case 'T':
			if (sptd_col_parse_list(optarg, 0, INT32_MAX, a->tids, &a->o.ntids) < 0)
				bad = "thread ids: 1234,1240";
			a->o.tids = a->tids;
			break;
		case 't': a->time = optarg; break;
		case 'R': a->reltime = 1; break;
		case 'i': a->o.title = optarg; break;
		case 'n': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 0 || v > 1000000)
				bad = "a number of rows, 0 for all";
			a->limit = (int)v;
			break;
		}
		case 'd': a->dir = optarg; break;
		case 'O':
			if (sptd_col_parse_timeout(a->cmd, word, optarg, &a->timeout))
				return SPTD_EXIT_USAGE;
			break;
		case 'h':
			fputs(flame ? flame_usage : diff_usage, stdout);
			return -1;
		case ':':
			fprintf(stderr, "sysptd %s: option '%s' needs a value\n", a->cmd, word);
			return SPTD_EXIT_USAGE;
		default:
			fprintf(stderr, "sysptd %s: unknown option '%s' (see sysptd %s --help)\n",
			        a->cmd, word, a->cmd);
			return SPTD_EXIT_USAGE;
		}
		if (bad) {
			fprintf(stderr, "sysptd %s: bad %s '%s' (%s)\n", a->cmd, word, optarg, bad);
			return SPTD_EXIT_USAGE;
		}
	}
	if (!flame)
		a->diff = 1;
	if (a->diff && !a->n[1] && a->n[0] == 2) {
		a->operand[1][0] = a->operand[0][1];
		a->n[0] = a->n[1] = 1;
	}
	if (a->diff && (!a->n[0] || !a->n[1])) {
		fprintf(stderr, "sysptd %s: which incidents? (%s A B, or A1 A2 ... -- B1 B2 ...)\n",
		        a->cmd, flame ? "flamegraph --diff" : "diff");
		return SPTD_EXIT_USAGE;
	}
	if (!a->diff && (!a->n[0] || a->n[1])) {
		fprintf(stderr, "sysptd %s: %s (sysptd flamegraph INCIDENT...; --diff for two sides)\n",
		        a->cmd, a->n[0] ? "\"--\" separates the sides of --diff" : "which incident?");
		return SPTD_EXIT_USAGE;
	}
	if (a->time && (a->n[0] + a->n[1] > 1)) {
		fprintf(stderr, "sysptd %s: --time needs a single incident\n", a->cmd);
		return SPTD_EXIT_USAGE;
	}
	return 0;
}

/* Status for failure @rc of the library, message @err. */
static int fail(const struct flame_args *a, int rc, const char *err)
{
	fflush(stdout);
	fprintf(stderr, "sysptd %s: %s\n", a->cmd, err[0] ? err : strerror(-rc));
	return rc == -EBADMSG || rc == -E2BIG ? SPTD_EXIT_BADFILE : rc == -EINVAL ?
	       SPTD_EXIT_USAGE : SPTD_EXIT_FAIL;
}

/* The child that parses (sptd_col_parse_as_user): open every incident as
 * root, give root up, then read them and write. */
static int flame_job(void *arg)
{
	struct flame_args *a = arg;
	struct sptd_store *st[2][64] = { { NULL } };
	int fd[2][64], status = 0, rc = 0;
	char err[1024] = "";
	FILE *out = stdout;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < a->n[s]; i++)
			fd[s][i] = -1;
	for (int s = 0; s < 2 && !status; s++)
		for (size_t i = 0; i < a->n[s] && !status; i++)
			status = sptd_col_incident_fd(a->cmd, a->path[s][i], &fd[s][i]);
	if (!status && sptd_col_drop_root(a->cmd))
		status = SPTD_EXIT_FAIL;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < a->n[s]; i++) {
			if (!status && fd[s][i] >= 0)
				status = sptd_col_incident_open_fd(a->cmd, fd[s][i], a->path[s][i], &st[s][i]);
			if (fd[s][i] >= 0)
				close(fd[s][i]);
			if (!status && a->timeout)
				sptd_store_set_time_limit(st[s][i], a->timeout);
		}
	a->o.start_ns = INT64_MIN;
	a->o.end_ns = INT64_MAX;
	if (!status && a->time)
		status = sptd_col_time_range(a->cmd, a->time, st[0][0], a->path[0][0], a->reltime,
		                             &a->o.start_ns, &a->o.end_ns);
	a->o.has_time = a->time != NULL;
	/* a copy of the descriptor: run in this process (not root), the
	 * parent's still commits it */
	if (!status && a->out_fd >= 0) {
		int copy = dup(a->out_fd);

		out = copy >= 0 ? fdopen(copy, "w") : NULL;
		if (!out) {
			fprintf(stderr, "sysptd %s: cannot write %s: %s\n", a->cmd, a->output,
			        strerror(errno));
			if (copy >= 0)
				close(copy);
			status = SPTD_EXIT_FAIL;
		}
	}
	if (!status && strcmp(a->cmd, "diff") == 0)
		rc = sptd_query_diff(st[0], a->n[0], st[1], a->n[1], &a->print, a->limit, out,
		                     err, sizeof(err));
	else if (!status)
		rc = sptd_query_flame(st[0], a->n[0], a->diff ? st[1] : NULL, a->diff ? a->n[1] : 0,
		                      &a->o, out, NULL, err, sizeof(err));
	if (!status && rc < 0)
		status = fail(a, rc, err);
	if (out && out != stdout && fclose(out) != 0 && !status) {
		fprintf(stderr, "sysptd %s: writing %s: %s\n", a->cmd, a->output, strerror(errno));
		status = SPTD_EXIT_FAIL;
	}
	fflush(stdout);
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < a->n[s]; i++)
			sptd_store_destroy(st[s][i]);
	return status;
}

/* The mode of the output: what every incident allows (0600 for one the
 * service wrote). */
static mode_t incidents_mode(const struct flame_args *a)
{
	mode_t mode = 0666;
	struct stat sb;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < a->n[s]; i++)
			mode &= stat(a->path[s][i], &sb) == 0 ? sb.st_mode & 0666 : 0600;
	return mode;
}

static int flame_main(int argc, char **argv, int flame)
{
	struct flame_args *a = calloc(1, sizeof(*a));
	char **args = NULL;
	int status, boundary;

	if (!a) {
		fprintf(stderr, "sysptd %s: out of memory\n", flame ? "flamegraph" : "diff");
		return SPTD_EXIT_FAIL;
	}
	a->cmd = flame ? "flamegraph" : "diff";
	/* "--" splits A's incidents from B's; options may come on either side,
	 * so it is taken out and the operands after its place are B's */
	for (boundary = 1; boundary < argc && strcmp(argv[boundary], "--") != 0; boundary++)
		;
	args = malloc((size_t)(argc + 1) * sizeof(*args));
	if (!args) {
		free(a);
		return SPTD_EXIT_FAIL;
	}
	for (int i = 0, j = 0; i <= argc; i++)
		if (i != boundary || i == argc)
			args[j++] = argv[i];
	status = parse_args(argc - (boundary < argc), args, boundary, a, flame);
	if (status) {
		status = status < 0 ? SPTD_EXIT_OK : status;
		goto out;
	}
	for (int s = 0; s < 2 && !status; s++)
		for (size_t i = 0; i < a->n[s] && !status; i++)
			status = sptd_col_incident_resolve(a->cmd, a->operand[s][i], a->dir,
			                                   a->path[s][i], sizeof(a->path[s][i]));
	if (status)
		goto out;
	a->print.width = a->output ? 0 : sptd_col_term_width(STDOUT_FILENO);
	a->out_fd = -1;
	fflush(stdout);
	if (a->output && strcmp(a->output, "-") != 0) {
		struct sptd_col_newfile nf;

		/* made here, as root, as private as the incidents */
		status = sptd_col_output_open(a->cmd, a->output, incidents_mode(a), &nf);
		if (status)
			goto out;
		a->out_fd = nf.fd;
		status = sptd_col_parse_as_user(a->cmd, flame_job, a);
		if (!status)
			status = sptd_col_output_commit(a->cmd, a->output, &nf);
		sptd_col_newfile_fini(&nf);
	} else {
		status = sptd_col_parse_as_user(a->cmd, flame_job, a);
	}
out:
	free(args);
	free(a);
	return status;
}

int sptd_col_cmd_flamegraph(int argc, char **argv)
{
	return flame_main(argc, argv, 1);
}

int sptd_col_cmd_diff(int argc, char **argv)
{
	return flame_main(argc, argv, 0);
}
