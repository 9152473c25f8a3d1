/* cmd_import.c — `sysptd import`: a perf.data recording (perf record -e
 * intel_pt//, --switch-events, -e sched:sched_switch; see perfdata_*.c), or
 * raw Intel PT recorded elsewhere (--pt: one file per CPU), its code images
 * and optionally a sched_switch list, written as a new incident and decoded.
 *
 * Images: FILE@ADDR (a flat image or memory dump, ELF or not) is embedded
 * as raw_image bytes placed at ADDR, so the incident is self-contained; an
 * ELF file without @ADDR is referenced by path (dso + raw_mmap, bias 0) and
 * loaded by its program headers at decode time, so its symbols name the
 * functions.  FILE@ADDR:PID places the image in the address space of
 * process PID only (two static programs share addresses): it becomes a
 * dso + raw_mmap row of that pid, read at decode time (raw_image has no pid).
 * --maps names each process's ELF mappings (code and symbols from the file,
 * as a live capture records them) and --tasks which thread is in which
 * process, so that each task decodes in its own address space. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "sptd_col_import.h"
#include "sptd_col.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_sched.h"
#include "sptd_store.h"

/* -q, and the progress line of a terminal run (the parsing child's) */
static int import_quiet;
static struct sptd_col_progress import_progress;

/* Show the decode's progress from now on when stderr is a terminal. */
static void progress_start(void)
{
	if (sptd_col_progress_init(&import_progress, "sysptd import", import_quiet))
		sptd_col_derive_set_progress(sptd_col_progress_show, &import_progress);
}


static void log_stderr(void *ctx, int level, const char *msg)
{
	(void)ctx;
	sptd_col_progress_end(&import_progress);
	fprintf(stderr, "sysptd import: %s%s\n", level <= LOG_ERR ? "error: " :
	        level == LOG_WARNING ? "warning: " : "", msg);
}

static void usage(FILE *f)
{
	fprintf(f,
	"Usage: sysptd import PERF.DATA [-o INCIDENT] [--symfs DIR] [--kcore DIR] [-j N]\n"
	"       sysptd import --pt FILE[,FILE...] --image FILE[@ADDR] ... -o INCIDENT\n"
	"                     [--cpu-id F/M/S] [--mtc-freq N] [--nom-freq N]\n"
	"                     [--cpuid15 EAX/EBX] [--tsc-hz N] [--sched FILE]\n"
	"                     [--maps FILE] [--tasks FILE] [-j N]\n\n"
	"Write a decoded incident from a perf.data recording (Intel PT, context\n"
	"switches, sched:sched_switch samples) or from raw Intel PT recorded elsewhere.\n\n"
	"perf.data mode:\n"
	"  --symfs DIR          look for recorded files under DIR first (as perf --symfs)\n"
	"  --kcore DIR          kernel code from a perf record --kcore directory\n"
	"                       (DIR/kcore); default PERF.DATA/kcore_dir when it exists\n"
	"  --debug-dir DIR      build-id cache (default ~/.debug)\n"
	"  -o FILE              default: ./BASENAME.db (perf.data -> perf.data.db,\n"
	"                       which `sysptd list .` shows)\n\n"
	"--pt mode:\n"
	"  --pt FILE[,FILE...]  raw PT, one file per CPU in CPU order (repeatable)\n"
	"  --image FILE[@ADDR[:PID]]\n"
	"                       code that ran: an ELF file without @ADDR is loaded by its\n"
	"                       program headers; a flat image, or an ELF with @ADDR, is\n"
	"                       placed at ADDR (repeatable); with :PID only process PID\n"
	"                       sees it (an ELF memory image, e.g. the vdso, then also\n"
	"                       names its functions)\n"
	"  --maps FILE          executable mappings per process, one per line:\n"
	"                       PID 0xSTART 0xEND 0xPGOFF PATH; an ELF PATH gives that\n"
	"                       process's code and symbols ([vdso] etc. are skipped: give\n"
	"                       their bytes with --image FILE@ADDR:PID)\n"
	"  --tasks FILE         threads, one per line: PID TID [0xCR3] COMM\n"
	"  --cpu-id F/M/S       CPU family/model/stepping of the recording machine\n"
	"                       (selects libipt's errata workarounds)\n"
	"  --mtc-freq N, --nom-freq N, --cpuid15 EAX/EBX\n"
	"                       timing configuration of the recording (MTC period,\n"
	"                       nominal ratio, CPUID 0x15 TSC/crystal ratio)\n"
	"  --tsc-hz N           TSC frequency: times become ns (default: TSC ticks; a\n"
	"                       trace without timing packets keeps order only)\n"
	"  --sched FILE         context switches, one per line:\n"
	"                       TS_NS CPU PREV_TID NEXT_TID NEXT_COMM  ('#' comments)\n"
	"  -j, --jobs N         decode threads (default: number of cores)\n"
	"  -o, --output FILE    the incident to write (must not exist)\n\n"
	"Both modes:\n"
	"  -q, --quiet          no progress line on the terminal (stderr)\n"
	"  --decoder libipt|sptd\n"
	"                       PT flow decoder: libipt's block decoder (default) or\n"
	"                       sysptd's own on libipt's packets (the same rows; also\n"
	"                       env SPTD_DECODER)\n\n"
	"Run as root, the input is opened (perf.data) or copied in (raw PT) as root,\n"
	"then parsed as the user who ran sudo (else nobody): images that user cannot\n"
	"read (--image, --symfs, --kcore, the build-id cache) show as gaps.\n\n"
	"The incident's path is printed on stdout once it is written; what was\n"
	"imported (records, PT or SPE bytes, calls per CPU) goes to stderr.\n\n"
	"Environment: SPTD_STORE_BULK=sql inserts the call slices through SQL instead\n"
	"of writing their finished b-tree pages at the commit (the same rows; slower;\n"
	"for comparison).\n\n"
	"Exit status: 0 success, 1 failure, 2 bad command line, 6 an input file that\n"
	"is missing, corrupt, truncated or not what it claims (nothing is written).\n");
}


/* --decoder NAME: the flow decoder, handed to the decode (derive_pt.c)
 * through SPTD_DECODER.  0 or -EINVAL (said on stderr). */
static int import_set_decoder(const char *name)
{
	if (strcmp(name, "libipt") && strcmp(name, "sptd")) {
		fprintf(stderr, "sysptd import: --decoder is libipt or sptd, not '%s'\n", name);
		return -EINVAL;
	}
	return setenv("SPTD_DECODER", name, 1) < 0 ? -EINVAL : 0;
}

static int parse_opts(int argc, char **argv, struct sptd_col_rawpt_opts *o)
{
	static const struct option longopts[] = {
		{ "pt", required_argument, NULL, 'p' },
		{ "image", required_argument, NULL, 'i' },
		{ "cpu-id", required_argument, NULL, 'c' },
		{ "mtc-freq", required_argument, NULL, 'm' },
		{ "nom-freq", required_argument, NULL, 'n' },
		{ "cpuid15", required_argument, NULL, 'r' },
		{ "tsc-hz", required_argument, NULL, 't' },
		{ "sched", required_argument, NULL, 's' },
		{ "maps", required_argument, NULL, 'M' },
		{ "tasks", required_argument, NULL, 'T' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "decoder", required_argument, NULL, 'Y' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *word, *extra = NULL;
	int c;
	int64_t v;

	memset(o, 0, sizeof(*o));
	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:j:o:qh", longopts, &word)) != -1) {
		switch (c) {
		case 1:
			if (!extra)
				extra = optarg;
			break;
		case 'p': {
			char *list = optarg, *tok, *save = NULL;

			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o->npt == SPTD_IMPORT_MAX) {
					fprintf(stderr, "sysptd import: at most %d PT files\n", SPTD_IMPORT_MAX);
					return -EINVAL;
				}
				o->pt[o->npt++] = tok;
			}
			break;
		}
		case 'i':
			if (o->nimage == SPTD_IMPORT_MAX) {
				fprintf(stderr, "sysptd import: at most %d images\n", SPTD_IMPORT_MAX);
				return -EINVAL;
			}
			o->image[o->nimage++] = optarg;
			break;
		case 'c':
			if (sscanf(optarg, "%d/%d/%d", &o->family, &o->model, &o->stepping) != 3 ||
			    o->family <= 0 || o->family > 255 || o->model < 0 || o->model > 255 ||
			    o->stepping < 0 || o->stepping > 255) {
				fprintf(stderr, "sysptd import: bad --cpu-id '%s': want FAMILY/MODEL/STEPPING, e.g. 6/85/4\n", optarg);
				return -EINVAL;
			}
			break;
		case 'm':
		case 'n':
			if (sptd_col_parse_int(optarg, 0, c == 'm' ? 15 : 255, &v) < 0) {
				fprintf(stderr, "sysptd import: bad --%s '%s'\n",
				        c == 'm' ? "mtc-freq (0..15)" : "nom-freq (0..255)", optarg);
				return -EINVAL;
			}
			*(c == 'm' ? &o->mtc_freq : &o->nom_freq) = (int)v;
			break;
		case 'r': {
			unsigned long long a, b;

			if (sscanf(optarg, "%llu/%llu", &a, &b) != 2 || a > UINT32_MAX || b > UINT32_MAX) {
				fprintf(stderr, "sysptd import: bad --cpuid15 '%s': want EAX/EBX\n", optarg);
				return -EINVAL;
			}
			o->cpuid15_eax = (int64_t)a;
			o->cpuid15_ebx = (int64_t)b;
			break;
		}
		case 't':
			if (sptd_col_parse_int(optarg, 1, INT64_MAX, &o->tsc_hz) < 0) {
				fprintf(stderr, "sysptd import: bad --tsc-hz '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 's':
			o->sched = optarg;
			break;
		case 'M':
			o->maps = optarg;
			break;
		case 'T':
			o->tasks = optarg;
			break;
		case 'j':
			if (sptd_col_parse_int(optarg, 0, 1024, &v) < 0) {
				fprintf(stderr, "sysptd import: bad -j '%s'\n", optarg);
				return -EINVAL;
			}
			o->jobs = (int)v;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'Y':
			if (import_set_decoder(optarg) < 0)
				return -EINVAL;
			break;
		case 'q':
			import_quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "sysptd import: option '%s' needs a value\n", word);
			return -EINVAL;
		default:
			fprintf(stderr, "sysptd import: unknown option '%s' (see sysptd import --help)\n",
			        word);
			return -EINVAL;
		}
	}
	if (!extra && optind < argc)   /* after "--" */
		extra = argv[optind];
	if (extra) {
		fprintf(stderr, "sysptd import: unexpected argument '%s'\n", extra);
		return -EINVAL;
	}
	if (!o->npt || !o->out) {
		fprintf(stderr, "sysptd import: need --pt FILE and -o INCIDENT (see sysptd import --help)\n");
		return -EINVAL;
	}
	return 0;
}

/* One per-CPU stats row of the summary (stderr); *@arg is the CPU printed
 * last. */
static int print_cpu_stat(void *arg, const struct sptd_store_stat_row *row)
{
	static const char *const names[] = { "instructions", "calls", "returns",
	                                     "far_calls", "decode_errors", "gaps" };
	int *last = arg;

	for (size_t i = 0; row->name && i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(row->name, names[i]) != 0)
			continue;
		if (row->cpu != *last)
			fprintf(stderr, "%scpu %d:", *last >= 0 ? "\n" : "", row->cpu);
		*last = row->cpu;
		fprintf(stderr, " %s %" PRId64, names[i], row->value);
	}
	return 0;
}

/* Per CPU: instructions, calls, returns, far calls, gaps; on stderr (stdout
 * holds only the incident's path). */
static void print_summary(struct sptd_store *st, const char *out)
{
	int64_t slices = 0;
	int last = -1;

	sptd_store_count(st, SPTD_STORE_T_SLICE, &slices);
	fprintf(stderr, "sysptd import: %s: %" PRId64 " call slices\n", out, slices);
	SPTD_STORE_EACH(st, cpu_stats, print_cpu_stat, &last);
	if (last >= 0)
		fprintf(stderr, "\n");
}

/* ---- perf.data mode --------------------------------------------------------- */

/* 1 when the command line is the perf.data form: no --pt, and an operand
 * (any argument that is not an option, as getopt_long sees them with only
 * --pt known). */
static int perfdata_mode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pt", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	int c, operand = 0;

	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:", longopts, NULL)) != -1) {
		if (c == 'p' || (c == ':' && optopt == 'p'))
			return 0;
		if (c == 1)
			operand = 1;
	}
	return operand || optind < argc;
}

/* The perf.data import, for its child. */
struct perfdata_job {
	const struct sptd_col_pd_import_opts *o; /* parsed options */
};

/* Remove what a killed import to @out left beside it (temporary files
 * whose writer is gone). */
static void clean_stale(const char *out)
{
	int n = sptd_col_newfile_sweep(out, 0);

	if (n > 0)
		fprintf(stderr, "sysptd import: removed %d temporary file(s) beside %s, left by an "
		        "import that was killed\n", n, out);
}

static int perfdata_job_run(void *arg);

/* sptd_col_pd_import_opts.opened: give up root before parsing. */
static int perfdata_opened(void *ctx)
{
	(void)ctx;
	return sptd_col_drop_root("import") ? -EPERM : 0;
}

static int import_perfdata(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "symfs", required_argument, NULL, 'S' },
		{ "kcore", required_argument, NULL, 'K' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "decoder", required_argument, NULL, 'Y' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sptd_col_pd_import_opts o;
	char out[PATH_MAX], kcore[PATH_MAX], cmd[2048];
	const char *word;
	int c, operands = 0;
	int64_t v;

	memset(&o, 0, sizeof(o));
	o.command = sptd_col_command_text(argc, argv, cmd, sizeof(cmd));
	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:j:o:qh", longopts, &word)) != -1) {
		switch (c) {
		case 1:
			o.input = optarg;
			operands++;
			break;
		case 'S':
			o.paths.symfs = optarg;
			break;
		case 'K':
			o.paths.kcore = optarg;
			break;
		case 'D':
			o.paths.debug_dir = optarg;
			break;
		case 'j':
			if (sptd_col_parse_int(optarg, 0, 1024, &v) < 0) {
				fprintf(stderr, "sysptd import: bad -j '%s'\n", optarg);
				return SPTD_EXIT_USAGE;
			}
			o.jobs = (int)v;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'Y':
			if (import_set_decoder(optarg) < 0)
				return -EINVAL;
			break;
		case 'q':
			import_quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return SPTD_EXIT_OK;
		case ':':
			fprintf(stderr, "sysptd import: option '%s' needs a value\n", word);
			return SPTD_EXIT_USAGE;
		default:
			fprintf(stderr, "sysptd import: unknown option '%s' (see sysptd import --help)\n",
			        word);
			return SPTD_EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++, operands++)   /* after "--": operands only */
		o.input = argv[optind];
	if (operands != 1) {
		fprintf(stderr, "sysptd import: want exactly one perf.data file (see sysptd import --help)\n");
		return SPTD_EXIT_USAGE;
	}
	if (!o.output) {
		const char *base = strrchr(o.input, '/') ? strrchr(o.input, '/') + 1 : o.input;

		snprintf(out, sizeof(out), "%s.db", base[0] ? base : "perf.data");
		o.output = out;
		if (access(out, F_OK) == 0) {
			fprintf(stderr, "sysptd import: %s already exists (from an earlier import?): "
			        "remove it or name another with -o FILE\n", out);
			return SPTD_EXIT_FAIL;
		}
	}
	if (!o.paths.kcore) {
		struct stat sb;

		/* perf record --kcore writes a directory: DIR/data + DIR/kcore_dir */
		snprintf(kcore, sizeof(kcore), "%s/kcore_dir", o.input);
		if (stat(kcore, &sb) == 0 && S_ISDIR(sb.st_mode))
			o.paths.kcore = kcore;
	}
	sptd_col_set_log(log_stderr, NULL);
	sptd_dec_set_log(log_stderr, NULL);
	sptd_sched_set_log(log_stderr, NULL);
	{
		struct perfdata_job job = { .o = &o };

		/* perf.data opened and the incident created as root, then parsed
		 * as the invoking user; this (root) process renames the result */
		o.opened = perfdata_opened;
		clean_stale(o.output);
		int status = sptd_col_parse_as_user("import", perfdata_job_run, &job);

		/* renamed into place by now: its path is the command's output */
		if (status == SPTD_EXIT_OK)
			printf("%s\n", o.output);
		return status;
	}
}

/* sptd_col_pd_import_opts.written: what the incident holds, from the open
 * store (the child that wrote it cannot reopen it by name). */
struct written_ctx {
	const struct sptd_col_pd_import_result *res; /* counts so far */
	const char *out;                              /* the incident's name */
};

static int perfdata_written(void *ctx, struct sptd_store *st)
{
	const struct written_ctx *w = ctx;
	const struct sptd_col_pd_import_result *res = w->res;
	const char *out = w->out;
	int64_t sched = 0;

	sptd_store_count(st, SPTD_STORE_T_SCHED_SLICE, &sched);
	sptd_col_progress_end(&import_progress);
	fprintf(stderr, "sysptd import: %s: %" PRId64 " records, %" PRId64 " %s bytes, %" PRId64
	        " context switches, %" PRId64 " wakeup and IRQ events, %" PRId64 " sched slices\n",
	        out, res->records, res->aux_bytes, res->has_spe ? "SPE" : "PT", res->switches,
	        res->tracepoints, sched);
	if (res->has_spe) {
		int64_t mem = 0;

		sptd_store_count(st, SPTD_STORE_T_MEM_SAMPLE, &mem);
		fprintf(stderr, "sysptd import: %s: %" PRId64 " memory samples (Arm SPE, table "
		        "mem_sample)\n", out, mem);
	}
	if (res->has_pt)
		print_summary(st, out);
	sptd_col_progress_show(&import_progress, "writing the incident", 0, 0);
	return 0;
}

/* The perf.data import child (sptd_col_parse_as_user). */
static int perfdata_job_run(void *arg)
{
	struct perfdata_job *job = arg;
	struct sptd_col_pd_import_opts o = *job->o;
	struct sptd_col_pd_import_result res;
	struct written_ctx w;
	char err[1024];
	int ret;

	w.res = &res;
	w.out = o.output;
	o.written = perfdata_written;
	o.opened_ctx = &w;
	progress_start();
	ret = sptd_col_perfdata_import(&o, &res, err, sizeof(err));
	sptd_col_progress_end(&import_progress);
	if (ret < 0) {
		fprintf(stderr, "sysptd import: %s\n", err[0] ? err : strerror(-ret));
		switch (ret) {
		case -EBADMSG: case -ENOTSUP: case -ENOENT: case -ENODATA: case -EACCES:
		case -EISDIR:
			return SPTD_EXIT_BADFILE;
		default:
			return SPTD_EXIT_FAIL;
		}
	}
	if (res.images_missing)
		fprintf(stderr, "sysptd import: warning: the code of %" PRId64 " mapping(s) was not "
		        "found (try --symfs DIR or --kcore DIR): it shows as gaps\n",
		        res.images_missing);
	return SPTD_EXIT_OK;
}

/* The raw PT import, for its child. */
struct rawpt_job {
	const struct sptd_col_rawpt_opts *o; /* parsed options */
};

static int rawpt_job_run(void *arg);

int sptd_col_cmd_import(int argc, char **argv)
{
	struct sptd_col_rawpt_opts o;
	char cmd[2048];
	int ret, i;

	if (perfdata_mode(argc, argv))
		return import_perfdata(argc, argv);
	/* before parsing: --pt's comma list is cut in place */
	sptd_col_command_text(argc, argv, cmd, sizeof(cmd));
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret > 0 ? SPTD_EXIT_OK : SPTD_EXIT_USAGE;
	o.command = cmd;
	sptd_col_set_log(log_stderr, NULL);
	sptd_dec_set_log(log_stderr, NULL);
	sptd_sched_set_log(log_stderr, NULL);
	for (i = 0; i < o.npt; i++) {
		if (access(o.pt[i], R_OK) != 0) {
			fprintf(stderr, "sysptd import: --pt %s: %s\n", o.pt[i], strerror(errno));
			return SPTD_EXIT_BADFILE;
		}
	}
	{
		struct rawpt_job job = { .o = &o };

		/* the raw files copied in as root, decoded as the invoking user;
		 * this (root) process renames the result */
		clean_stale(o.out);
		int status = sptd_col_parse_as_user("import", rawpt_job_run, &job);

		/* renamed into place by now: its path is the command's output */
		if (status == SPTD_EXIT_OK)
			printf("%s\n", o.out);
		return status;
	}
}

/* The raw PT import child (sptd_col_parse_as_user). */
static int rawpt_job_run(void *arg)
{
	struct rawpt_job *job = arg;
	struct sptd_col_rawpt_opts o = *job->o;
	struct sptd_store *st = NULL;
	int ret;

	ret = sptd_store_create(o.out, &st);
	if (ret < 0) {
		fprintf(stderr, "sysptd import: cannot create %s: %s\n", o.out,
		        ret == -EEXIST ? "it already exists" : st ? sptd_store_errmsg(st) : strerror(-ret));
		sptd_store_destroy(st);
		return SPTD_EXIT_FAIL;
	}
	/* root copies the PT in; the images, maps, tasks and schedule are
	 * the user's files: read and parsed (ELF, symbols, the demangler)
	 * after root is given up, with what that user may read */
	ret = sptd_col_rawpt_import_pt(st, &o);
	if (ret >= 0 && sptd_col_drop_root("import")) {
		sptd_store_destroy(st);
		return SPTD_EXIT_FAIL;
	}
	if (ret >= 0)
		ret = sptd_col_rawpt_import_inputs(st, &o);
	if (ret == -EINVAL || ret == -ENOENT || ret == -EBADMSG || ret == -EACCES) {
		sptd_store_destroy(st);
		/* unreadable by the user: missing, for this import */
		return ret == -EINVAL ? SPTD_EXIT_USAGE : SPTD_EXIT_BADFILE;
	}
	if (ret >= 0) {
		progress_start();
		ret = sptd_col_derive_all(st, o.jobs);
		sptd_col_progress_end(&import_progress);
	}
	if (ret >= 0) {
		print_summary(st, o.out);
		sptd_col_progress_show(&import_progress, "writing the incident", 0, 0);
		ret = sptd_store_commit(st);
		sptd_col_progress_end(&import_progress);
	}
	if (ret < 0) {
		fprintf(stderr, "sysptd import: %s: %s\n", o.out,
		        sptd_store_errmsg(st)[0] ? sptd_store_errmsg(st) : strerror(-ret));
		sptd_store_destroy(st);
		return ret == -EBADMSG ? SPTD_EXIT_BADFILE : SPTD_EXIT_FAIL;
	}
	sptd_store_destroy(st);
	return SPTD_EXIT_OK;
}
