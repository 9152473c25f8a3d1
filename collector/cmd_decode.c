/* cmd_decode.c — `sysptd decode INCIDENT`: rebuild every derived table from
 * the raw ones, in one transaction (an error leaves the file as it was). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "sptd_col.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_sched.h"
#include "sptd_store.h"

static void log_stderr(void *ctx, int level, const char *msg)
{
	fprintf(stderr, "sysptd decode: %s%s\n", level <= LOG_ERR ? "error: " :
	        level == LOG_WARNING ? "warning: " : "", msg);
}

int sptd_col_cmd_decode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sptd_store *st = NULL;
	struct timespec t0, t1;
	int jobs = 0, c, ret;
	int64_t n;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			jobs = atoi(optarg);
			if (jobs < 0) {
				fprintf(stderr, "sysptd decode: bad -j '%s'\n", optarg);
				return SPTD_EXIT_USAGE;
			}
			break;
		case 'h':
			printf("Usage: sysptd decode INCIDENT [-j N]\n\n"
			       "Rebuild the derived tables of INCIDENT (sched_slice, thread_state, irq and\n"
			       "softirq slices, samples, call slices, gaps, stats, processes and threads)\n"
			       "from its raw tables, in one transaction: on any error the file is left as\n"
			       "it was.\n\n  -j, --jobs N   PT decode threads (default: number of CPUs)\n\n"
			       "Exit status: 0 success, 1 failure, 2 bad command line, 6 missing,\n"
			       "corrupt or not an incident file (left unchanged).\n");
			return SPTD_EXIT_OK;
		default:
			fprintf(stderr, "sysptd decode: unknown option '%s' (see sysptd decode --help)\n",
			        argv[optind - 1]);
			return SPTD_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "sysptd decode: need exactly one INCIDENT file (see sysptd decode --help)\n");
		return SPTD_EXIT_USAGE;
	}
	sptd_col_set_log(log_stderr, NULL);
	sptd_sched_set_log(log_stderr, NULL);
	sptd_dec_set_log(log_stderr, NULL);
	ret = sptd_col_incident_open("decode", argv[optind], 1, &st);
	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = sptd_col_derive_all(st, jobs);
	if (ret >= 0)
		ret = sptd_store_commit(st);
	if (ret < 0) {
		fprintf(stderr, "sysptd decode: %s: %s; the file is unchanged\n", argv[optind],
		        sptd_store_errmsg(st)[0] ? sptd_store_errmsg(st) : strerror(-ret));
		sptd_store_destroy(st);
		return ret == -EBADMSG ? SPTD_EXIT_BADFILE : SPTD_EXIT_FAIL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s decoded in %.3f s:", argv[optind],
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
