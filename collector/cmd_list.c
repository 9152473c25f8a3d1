/* cmd_list.c — `sysptd list [DIR]`: the incidents in a directory, newest
 * last, with what fired and how much they hold. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sptd_col.h"
#include "sptd_store.h"

/* "kind: detail" of the first trigger into @arg (256 bytes); stops there. */
static int first_trigger(void *arg, const struct sptd_store_trigger_row *row)
{
	if (row->kind && row->detail)
		snprintf(arg, 256, "%s: %s", row->kind, row->detail);
	return 1;
}

static void list_one(const char *dir, const char *name)
{
	char path[4096], created[64] = "?", source[32] = "?", trig[256] = "?";
	struct sptd_store *st = NULL;
	int64_t window = 0, slices = 0, samples = 0, cslices = 0;
	struct stat sb;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &sb) < 0)
		return;
	ret = sptd_store_open(path, 0, &st);
	if (ret < 0) {
		printf("%-44s  unreadable: %s\n", name, sptd_store_errmsg(st)[0] ? sptd_store_errmsg(st) : strerror(-ret));
		sptd_store_destroy(st);
		return;
	}
	sptd_store_meta_get(st, "created", created, sizeof(created));
	sptd_store_meta_get(st, "source", source, sizeof(source));
	sptd_store_meta_get_int(st, "window_ns", &window);
	sptd_store_count(st, SPTD_STORE_T_SCHED_SLICE, &slices);
	sptd_store_count(st, SPTD_STORE_T_SAMPLE, &samples);
	sptd_store_count(st, SPTD_STORE_T_SLICE, &cslices);
	sptd_store_trigger_each(st, first_trigger, trig);
	printf("%-44s  %-20s  %-6s  %8.3f ms  %9" PRId64 "  %9" PRId64 "  %9" PRId64 "  %7.1f MiB  %s\n",
	       name, created, source, (double)window / 1e6, slices, samples, cslices,
	       (double)sb.st_size / (1024.0 * 1024.0), trig);
	sptd_store_destroy(st);
}

/* The DIR: 0, or SPTD_EXIT_USAGE with the message printed for a second
 * operand. */
static int operand(const char *arg, const char **dir)
{
	if (*dir) {
		fprintf(stderr, "sysptd list: unexpected argument '%s'\n", arg);
		return SPTD_EXIT_USAGE;
	}
	*dir = arg;
	return 0;
}

int sptd_col_cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *word;
	int c, ret;
	char **names = NULL;
	size_t n = 0;

	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:h", longopts, &word)) != -1) {
		switch (c) {
		case 1:
			if ((ret = operand(optarg, &dir)))
				return ret;
			break;
		case 'h':
			printf("Usage: sysptd list [DIR]\n\nList the incident files (*.db) in DIR (default "
			       SPTD_COL_DEFAULT_DIR "),\noldest first (the last one is what `latest` "
			       "names): when, source, window,\nsched slices, samples, call slices, size "
			       "and what triggered it.\n\nOptions:\n  -h, --help  this text\n");
			return SPTD_EXIT_OK;
		default:
			fprintf(stderr, "sysptd list: unknown option '%s' (see sysptd list --help)\n", word);
			return SPTD_EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++)   /* after "--": operands only */
		if ((ret = operand(argv[optind], &dir)))
			return ret;
	if (!dir)
		dir = SPTD_COL_DEFAULT_DIR;
	ret = sptd_col_incident_scan(dir, &names, &n);
	if (ret < 0) {
		fprintf(stderr, "sysptd list: cannot open %s: %s%s\n", dir, strerror(-ret),
		        ret == -EACCES ? " (incidents are root's: run with sudo)" : "");
		return ret == -ENOENT ? SPTD_EXIT_BADFILE : ret == -EACCES ? SPTD_EXIT_NOPERM :
		       SPTD_EXIT_FAIL;
	}
	if (n)
		printf("%-44s  %-20s  %-6s  %11s  %9s  %9s  %9s  %11s  %s\n", "incident", "created",
		       "source", "window", "sched", "samples", "slices", "size", "trigger");
	else
		printf("no incidents in %s\n", dir);
	for (size_t i = 0; i < n; i++) {
		list_one(dir, names[i]);
		free(names[i]);
	}
	free(names);
	return SPTD_EXIT_OK;
}
