/* cmd_export.c — `sysptd export INCIDENT -o FILE [--format proto|json|pprof]`:
 * the incident as a Perfetto trace (or Chrome JSON, or a pprof profile), written beside FILE
 * (sptd_col_newfile: O_EXCL|O_NOFOLLOW, random name) and renamed into
 * place, so a failed export never leaves half a file and never writes
 * through a symlink planted at FILE or at a temporary name; or to stdout
 * with `-o -`.  The format follows FILE's extension unless --format says
 * otherwise. */
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_query.h"
#include "sptd_store.h"

static const char export_usage[] =
"Usage: sysptd export INCIDENT -o FILE [--format proto|json|pprof]\n"
"       sysptd export INCIDENT -o - [--format proto|json|pprof] > FILE\n"
"\n"
"Write an incident as a trace for review on one timeline: every CPU's\n"
"scheduling (sched_switch/waking, so Perfetto shows thread states),\n"
"interrupts and softirqs, each thread's calls as nested slices (or its\n"
"samples with their call stacks), gaps in the data, and the trigger.\n"
"\n"
"INCIDENT is a file, or `latest`: the newest incident in --dir (default\n"
SPTD_COL_DEFAULT_DIR ").\n"
"\n"
"Options:\n"
"  -o, --output FILE    where to write (required; written beside FILE, then\n"
"                       renamed over it; as private as INCIDENT: mode 0600\n"
"                       for a root-only incident); '-' writes to stdout\n"
"  -f, --format FMT     proto: Perfetto protobuf, open it in\n"
"                       https://ui.perfetto.dev (Open trace file);\n"
"                       json: Chrome trace-event JSON for chrome://tracing\n"
"                       or speedscope; pprof: the samples as a gzipped\n"
"                       pprof profile (go tool pprof, Pyroscope, Parca):\n"
"                       a count per stack, thread and CPU, labels thread,\n"
"                       tid, pid, cpu, mappings with build-ids.  Default:\n"
"                       from FILE's extension, .pftrace, .perfetto-trace or\n"
"                       .pb -> proto, .json -> json, .pb.gz -> pprof; proto\n"
"                       for stdout\n"
"  -d, --dir DIR        where `latest` looks (default " SPTD_COL_DEFAULT_DIR ")\n"
"  -t, --timeout DUR    stop if one of the export's statements still runs\n"
"                       after DUR (default 0: no limit); exit status 1.  For\n"
"                       incidents from elsewhere: a crafted file can make a\n"
"                       statement slow\n"
"  -q, --quiet          no progress on the terminal\n"
"  -h, --help           this text\n"
"\n"
"Examples:\n"
"  sysptd export incident.db -o incident.pftrace\n"
"  sysptd export latest -o latest.json\n"
"  sysptd export incident.db -o profile.pb.gz && pprof -top profile.pb.gz\n"
"  sysptd export incident.db -o - | gzip > incident.pftrace.gz\n"
"\n"
"Run as root, the incident is opened as root and read as the user who ran\n"
"sudo (else nobody); FILE is then that user's.\n"
"\n"
"Exit status: 0 success, 1 failure (e.g. cannot write FILE, stopped by\n"
"--timeout), 2 bad command\n"
"line, 6 missing, corrupt or not an incident file.\n";

/* The format FILE's name asks for: 0 and *@fmt, or -EINVAL when its
 * extension names none. */
static int format_of_name(const char *file, enum sptd_query_export_format *fmt)
{
	static const struct {
		const char *ext;                      /* how the name ends */
		enum sptd_query_export_format fmt;    /* what it means */
	} exts[] = {
		{ ".pftrace", SPTD_QUERY_EXPORT_PROTO }, { ".perfetto-trace", SPTD_QUERY_EXPORT_PROTO },
		{ ".pb", SPTD_QUERY_EXPORT_PROTO }, { ".json", SPTD_QUERY_EXPORT_JSON },
		{ ".pb.gz", SPTD_QUERY_EXPORT_PPROF },
	};
	size_t len = strlen(file);

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t n = strlen(exts[i].ext);

		if (len > n && strcasecmp(file + len - n, exts[i].ext) == 0) {
			*fmt = exts[i].fmt;
			return 0;
		}
	}
	return -EINVAL;
}

/* The INCIDENT: 0, or SPTD_EXIT_USAGE with the message printed for a
 * second operand. */
static int operand(const char *arg, const char **path)
{
	if (*path) {
		fprintf(stderr, "sysptd export: unexpected argument '%s'\n", arg);
		return SPTD_EXIT_USAGE;
	}
	*path = arg;
	return 0;
}

/* What the export child does (sptd_col_parse_as_user). */
struct export_job {
	const char *path, *output;     /* incident; final name (for messages) */
	int fd;                        /* the temporary file, opened by the parent,
	                                * or stdout */
	int in_fd;                     /* the incident, opened by the parent (its
	                                * mode is the export's); -1: by path */
	struct sptd_query_export_options *opts; /* format, progress */
	int quiet;                     /* no summary line */
	int64_t timeout;               /* ns a statement may run, 0 no limit */
};

static int export_job_run(void *arg)
{
	struct export_job *job = arg;
	struct sptd_query_export_stats stats;
	struct sptd_col_progress prog;
	struct sptd_store *st = NULL;
	char err[1024] = "";
	FILE *out = NULL;
	int ret, fd, in_fd = job->in_fd, status = SPTD_EXIT_FAIL;

	/* the file opened as root (by the parent, or here to say why it
	 * cannot be), read by SQLite only once root is given up */
	if (in_fd < 0 && (ret = sptd_col_incident_fd("export", job->path, &in_fd)))
		return ret;
	if (sptd_col_drop_root("export")) {
		if (in_fd != job->in_fd)
			close(in_fd);
		return SPTD_EXIT_FAIL;
	}
	ret = sptd_col_incident_open_fd("export", in_fd, job->path, &st);
	if (in_fd != job->in_fd)
		close(in_fd);
	if (ret)
		return ret;
	if (job->timeout)
		sptd_store_set_time_limit(st, job->timeout);
	fd = dup(job->fd);
	out = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!out) {
		fprintf(stderr, "sysptd export: cannot write %s: %s\n", job->output, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	if (sptd_col_progress_init(&prog, "sysptd export", job->quiet)) {
		job->opts->progress = sptd_col_progress_show;
		job->opts->progress_ctx = &prog;
	}
	ret = sptd_query_export_opts(st, out, job->opts, &stats, err, sizeof(err));
	sptd_col_progress_end(&prog);
	if (fclose(out) != 0 && ret >= 0) {
		snprintf(err, sizeof(err), "writing %s failed: %s", job->output, strerror(errno));
		ret = -EIO;
	}
	if (ret < 0) {
		fprintf(stderr, "sysptd export: %s: %s\n", job->path, err[0] ? err : strerror(-ret));
		status = ret == -EBADMSG ? SPTD_EXIT_BADFILE : SPTD_EXIT_FAIL;
		goto out;
	}
	if (!job->quiet && job->opts->format == SPTD_QUERY_EXPORT_PPROF)
		fprintf(stderr, "sysptd export: wrote %s (%.1f MB): %llu samples in %llu stacks "
		        "(by thread and CPU)\n", job->output, (double)stats.bytes / 1e6,
		        (unsigned long long)stats.profile_samples,
		        (unsigned long long)stats.packets);
	else if (!job->quiet)
		fprintf(stderr, "sysptd export: wrote %s (%.1f MB): %llu sched switches, %llu irq "
		        "events, %llu ftrace events, %llu slices, %llu samples, %llu off-CPU stacks, "
		        "%llu power events, %llu ptwrites, %llu gaps, %llu triggers%s\n", job->output,
		        (double)stats.bytes / 1e6, (unsigned long long)stats.sched_switches,
		        (unsigned long long)stats.irq_events, (unsigned long long)stats.ftrace_events,
		        (unsigned long long)stats.slices,
		        (unsigned long long)stats.samples, (unsigned long long)stats.offcpu,
		        (unsigned long long)stats.power_events, (unsigned long long)stats.ptwrites,
		        (unsigned long long)stats.gaps,
		        (unsigned long long)stats.triggers,
		        job->opts->format == SPTD_QUERY_EXPORT_PROTO ?
		        "; open it in https://ui.perfetto.dev" : "");
	if (stats.stacks_cut)
		fprintf(stderr, "sysptd export: warning: %s: %llu stacks end in \"[stack cut]\": "
		        "deeper than 1024 frames, a parent missing or looping, or more frames than "
		        "128 per callsite row in all (a damaged or forged file)\n", job->path,
		        (unsigned long long)stats.stacks_cut);
	status = SPTD_EXIT_OK;
out:
	sptd_store_destroy(st);
	return status;
}

int sptd_col_cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "dir", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *arg = NULL, *output = NULL, *fmt_name = NULL, *dir = NULL, *word;
	int64_t timeout = 0;
	char path[4096];
	struct sptd_query_export_options opts;
	struct sptd_col_newfile nf;
	struct export_job job;
	struct sptd_col_user user;
	struct stat isb;
	int c, ret, status, quiet = 0, to_stdout;

	memset(&opts, 0, sizeof(opts));
	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:o:f:d:t:qh", longopts, &word)) != -1) {
		switch (c) {
		case 1:
			if ((ret = operand(optarg, &arg)))
				return ret;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			fputs(export_usage, stdout);
			return SPTD_EXIT_OK;
		case 'q':
			quiet = 1;
			break;
		case 'o':
			output = optarg;
			if (!*output) {
				fprintf(stderr, "sysptd export: %s needs a file name\n", word);
				return SPTD_EXIT_USAGE;
			}
			break;
		case 'f':
			fmt_name = optarg;
			break;
		case 't':
			if (sptd_col_parse_timeout("export", word, optarg, &timeout))
				return SPTD_EXIT_USAGE;
			break;
		case ':':
			if (optopt == 'o')
				fprintf(stderr, "sysptd export: %s needs a file name\n", word);
			else if (optopt == 't')
				fprintf(stderr, "sysptd export: %s needs a duration (e.g. 60s; 0: no "
				        "limit)\n", word);
			else if (optopt == 'd')
				fprintf(stderr, "sysptd export: %s needs a directory\n", word);
			else
				fprintf(stderr, "sysptd export: %s needs proto or json\n", word);
			return SPTD_EXIT_USAGE;
		default:
			fprintf(stderr, "sysptd export: unknown option '%s' (see sysptd export --help)\n",
			        word);
			return SPTD_EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++)   /* after "--": operands only */
		if ((ret = operand(argv[optind], &arg)))
			return ret;
	if (fmt_name && sptd_query_export_format_parse(fmt_name, &opts.format) < 0) {
		fprintf(stderr, "sysptd export: unknown format '%s' (proto, json or pprof)\n",
		        fmt_name);
		return SPTD_EXIT_USAGE;
	}
	if (!arg) {
		fprintf(stderr, "sysptd export: which incident? (sysptd export INCIDENT -o FILE)\n");
		return SPTD_EXIT_USAGE;
	}
	if (!output) {
		fprintf(stderr, "sysptd export: where to? add -o FILE (e.g. -o incident.%s; "
		        "-o - for stdout)\n", opts.format == SPTD_QUERY_EXPORT_JSON && fmt_name ?
		        "json" : "pftrace");
		return SPTD_EXIT_USAGE;
	}
	to_stdout = strcmp(output, "-") == 0;
	if (!fmt_name && !to_stdout && format_of_name(output, &opts.format) < 0) {
		fprintf(stderr, "sysptd export: cannot tell the format from the name '%s': end it "
		        "in .pftrace, .perfetto-trace or .pb (Perfetto protobuf), .json (Chrome "
		        "JSON) or .pb.gz (pprof), or say --format proto|json|pprof\n", output);
		return SPTD_EXIT_USAGE;
	}
	if (to_stdout && opts.format != SPTD_QUERY_EXPORT_JSON && isatty(1)) {
		fprintf(stderr, "sysptd export: not writing binary protobuf to a terminal: redirect "
		        "stdout (-o - > FILE) or use --format json\n");
		return SPTD_EXIT_USAGE;
	}
	ret = sptd_col_incident_resolve("export", arg, dir, path, sizeof(path));
	if (ret)
		return ret;
	job.path = path;
	job.in_fd = -1;
	job.opts = &opts;
	job.quiet = quiet;
	job.timeout = timeout;
	if (to_stdout) {
		/* no temporary file: a failure leaves what was written, and the
		 * reader sees the exit status */
		job.output = "stdout";
		job.fd = STDOUT_FILENO;
		return sptd_col_parse_as_user("export", export_job_run, &job);
	}
	/* The export is created here, while root, beside its final name:
	 * O_EXCL|O_NOFOLLOW, random name, never through a planted symlink;
	 * as private as the incident (0600 for a root-only incident).  The
	 * incident is read in a child that gives up root; the file is
	 * renamed into place here once the child succeeded. */
	/* the incident opened once, here: its mode makes the export's, and
	 * the child reads that very file (a link swapped between a stat and
	 * the child's open gave a root-only incident's rows a 0644 file) */
	job.in_fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	/* what a killed export of the same name left (its writer gone) */
	ret = sptd_col_newfile_sweep(output, 0);
	if (ret > 0)
		fprintf(stderr, "sysptd export: removed %d temporary file(s) beside %s, left by an "
		        "export that was killed\n", ret, output);
	ret = sptd_col_newfile_open(&nf, AT_FDCWD, output,
	                            job.in_fd >= 0 && fstat(job.in_fd, &isb) == 0 &&
	                            S_ISREG(isb.st_mode) ? isb.st_mode & 0666 : 0600);
	if (ret < 0) {
		fprintf(stderr, "sysptd export: cannot write %s: %s\n", output, strerror(-ret));
		if (job.in_fd >= 0)
			close(job.in_fd);
		return ret == -EACCES || ret == -EPERM ? SPTD_EXIT_NOPERM : SPTD_EXIT_FAIL;
	}
	/* run with sudo: the export is the user's, as if they had written it */
	if (geteuid() == 0 && sptd_col_privs_target(&user) == 0 && user.from_sudo &&
	    fchown(nf.fd, user.uid, user.gid) < 0)
		fprintf(stderr, "sysptd export: warning: cannot give %s to uid %u: %s\n", output,
		        (unsigned)user.uid, strerror(errno));
	job.output = output;
	job.fd = nf.fd;
	status = sptd_col_parse_as_user("export", export_job_run, &job);
	if (status == SPTD_EXIT_OK) {
		ret = sptd_col_newfile_commit(&nf, 0);
		if (ret < 0) {
			fprintf(stderr, "sysptd export: cannot write %s: %s\n", output,
			        ret == -ENOSPC ? "disk full" : strerror(-ret));
			status = SPTD_EXIT_FAIL;
		}
	}
	sptd_col_newfile_fini(&nf);
	if (job.in_fd >= 0)
		close(job.in_fd);
	return status;
}
