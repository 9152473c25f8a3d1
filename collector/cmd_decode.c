/* cmd_decode.c — `sysptd decode INCIDENT`: rebuild every derived table from
 * the raw ones, in a copy of the incident that replaces it once complete
 * (an error or a kill leaves the file as it was, and no journal beside it). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_sched.h"
#include "sptd_store.h"

/* the progress line of a terminal run (the decoding child's) */
static struct sptd_col_progress decode_progress;

static void log_stderr(void *ctx, int level, const char *msg)
{
	sptd_col_progress_end(&decode_progress);
	fprintf(stderr, "sysptd decode: %s%s\n", level <= LOG_ERR ? "error: " :
	        level == LOG_WARNING ? "warning: " : "", msg);
}

/* Remove the copies a killed `sysptd decode` of @path left beside it
 * ("NAME.tmp.PID.XXXXXX" whose writer is gone; a live one's are kept). */
static void clean_stale(const char *path)
{
	int n = sptd_col_newfile_sweep(path, SPTD_COL_NEWFILE_DIR_UPDATE);

	if (n > 0)
		fprintf(stderr, "sysptd decode: removed %d temporary file(s) beside %s, left by a "
		        "decode that was killed\n", n, path);
}

/* What the decode child does (sptd_col_parse_as_user). */
struct decode_job {
	const char *path;        /* the incident */
	int jobs;                /* -j */
	int quiet;               /* -q: no progress line */
};

static int decode_job_run(void *arg)
{
	const struct decode_job *job = arg;
	struct sptd_col_progress *prog = &decode_progress;
	struct sptd_store *st = NULL;
	struct timespec t0, t1;
	int64_t n;
	int ret;

	/* root makes the private copy beside the incident; SQLite opens it
	 * (through its descriptor) only once root is given up */
	ret = sptd_col_incident_update("decode", job->path, &st);
	if (ret)
		return ret;
	if (sptd_col_drop_root("decode")) {
		sptd_store_destroy(st);
		return SPTD_EXIT_FAIL;
	}
	ret = sptd_col_incident_update_finish("decode", job->path, st);
	if (ret) {
		sptd_store_destroy(st);
		return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (sptd_col_progress_init(prog, "sysptd decode", job->quiet))
		sptd_col_derive_set_progress(sptd_col_progress_show, prog);
	/* decode unwinds stored user stacks again, with the files it finds
	 * now, though the capture did (capture.c's unwind_meta) */
	ret = sptd_store_meta_set_int(st, "dwarf_unwind_done", 0);
	if (ret >= 0)
		ret = sptd_col_derive_all(st, job->jobs);
	sptd_col_progress_end(prog);
	if (ret >= 0) {
		sptd_col_progress_show(prog, "writing the incident", 0, 0);
		ret = sptd_store_commit(st);
	}
	sptd_col_progress_end(prog);
	if (ret < 0) {
		fprintf(stderr, "sysptd decode: %s: %s; the file is unchanged\n", job->path,
		        sptd_store_errmsg(st)[0] ? sptd_store_errmsg(st) : strerror(-ret));
		sptd_store_destroy(st);
		return ret == -EBADMSG ? SPTD_EXIT_BADFILE : SPTD_EXIT_FAIL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s decoded in %.3f s:", job->path,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	{
		static const enum sptd_store_table_id tables[] = {
			SPTD_STORE_T_SCHED_SLICE, SPTD_STORE_T_THREAD_STATE, SPTD_STORE_T_IRQ_SLICE,
			SPTD_STORE_T_SOFTIRQ_SLICE, SPTD_STORE_T_SAMPLE, SPTD_STORE_T_SLICE,
			SPTD_STORE_T_GAP, SPTD_STORE_T_THREAD,
		};
		size_t ntables = sizeof(tables) / sizeof(tables[0]);

		for (size_t i = 0; i < ntables; i++)
			if (sptd_store_count(st, tables[i], &n) == 0)
				printf(" %s %" PRId64 "%s", sptd_store_table_name(tables[i]), n,
				       i + 1 < ntables ? "," : "\n");
	}
	sptd_store_destroy(st);
	return SPTD_EXIT_OK;
}

int sptd_col_cmd_decode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *word;
	int jobs = 0, quiet = 0, operands = 0, c;
	int64_t v;

	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:j:qh", longopts, &word)) != -1) {
		switch (c) {
		case 1:
			path = optarg;
			operands++;
			break;
		case 'j':
			if (sptd_col_parse_int(optarg, 0, 1024, &v) < 0) {
				fprintf(stderr, "sysptd decode: bad -j '%s'\n", optarg);
				return SPTD_EXIT_USAGE;
			}
			jobs = (int)v;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			printf("Usage: sysptd decode INCIDENT [-j N] [-q]\n\n"
			       "Rebuild the derived tables of INCIDENT (sched_slice, thread_state, irq and\n"
			       "softirq slices, samples, call slices, gaps, stats, processes and threads)\n"
			       "from its raw tables, in a copy beside it that replaces it once complete:\n"
			       "on any error, or when killed, the file is left as it was.  Needs room\n"
			       "for the copy and write access to the incident's directory.  Run as root,\n"
			       "it reads the incident as the user who ran sudo (or nobody).  Copied\n"
			       "user stacks (--call-graph dwarf) are unwound again, with files only\n"
			       "where proven the recorded ones (SPTD_DECODE_UNWIND=0: as stored).\n\n"
			       "  -j, --jobs N   PT decode threads (default: number of CPUs)\n"
			       "  -q, --quiet    no progress line on the terminal (stderr)\n\n"
			       "Exit status: 0 success, 1 failure, 2 bad command line, 4 as root,\n"
			       "INCIDENT reached through a link root does not own, 6 missing,\n"
			       "corrupt, damaged or not an incident file (left unchanged).\n");
			return SPTD_EXIT_OK;
		case ':':
			fprintf(stderr, "sysptd decode: option '%s' needs a value\n", word);
			return SPTD_EXIT_USAGE;
		default:
			fprintf(stderr, "sysptd decode: unknown option '%s' (see sysptd decode --help)\n",
			        word);
			return SPTD_EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++, operands++)   /* after "--": operands only */
		path = argv[optind];
	if (operands != 1) {
		fprintf(stderr, "sysptd decode: need exactly one INCIDENT file (see sysptd decode --help)\n");
		return SPTD_EXIT_USAGE;
	}
	sptd_col_set_log(log_stderr, NULL);
	sptd_sched_set_log(log_stderr, NULL);
	sptd_dec_set_log(log_stderr, NULL);
	/* the incident is replaced by root: never one reached through a link
	 * a user could have pointed at root's files */
	if (sptd_col_newfile_links_ok(path) == -EPERM) {
		fprintf(stderr, "sysptd decode: %s: not decoded (name the incident by a path "
		        "without such a link)\n", path);
		return SPTD_EXIT_NOPERM;
	}
	clean_stale(path);
	{
		struct decode_job job = { .path = path, .jobs = jobs, .quiet = quiet };

		/* the copy is made as root, decoded as the invoking user, and
		 * renamed over the incident by this (root) process */
		return sptd_col_parse_as_user("decode", decode_job_run, &job);
	}
}
