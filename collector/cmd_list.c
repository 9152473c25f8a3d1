/* cmd_list.c — `sysptd list [DIR]`: the incidents in a directory, newest
 * last, with what fired and how much they hold. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sptd_col.h"
#include "sptd_store.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "kind: detail" of the first trigger into @arg (256 bytes); stops there. */
static int first_trigger(void *arg, const struct sptd_store_trigger_row *row)
{
	if (row->kind && row->detail)
		snprintf(arg, 256, "%s: %s", row->kind, row->detail);
	return 1;
}

/* One line for incident @name of @dir; 1 when it is unreadable or corrupt
 * (the line says so), else 0. */
static int list_one(const char *dir, const char *name)
{
	char path[4096], created[64] = "?", source[32] = "?", trig[256] = "?";
	struct sptd_store *st = NULL;
	int64_t window = 0, slices = 0, samples = 0, cslices = 0;
	struct stat sb;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &sb) < 0)
		return 0;   /* gone since readdir */
	ret = sptd_store_open(path, 0, &st);
	if (ret < 0) {
		printf("%-44s  unreadable: %s\n", name, sptd_store_errmsg(st)[0] ? sptd_store_errmsg(st) : strerror(-ret));
		sptd_store_destroy(st);
		return 1;
	}
	sptd_store_meta_get(st, "created", created, sizeof(created));
	sptd_store_meta_get(st, "source", source, sizeof(source));
	sptd_store_meta_get_int(st, "window_ns", &window);
	ret = sptd_store_count(st, SPTD_STORE_T_SCHED_SLICE, &slices);
	if (ret >= 0)
		ret = sptd_store_count(st, SPTD_STORE_T_SAMPLE, &samples);
	if (ret >= 0)
		ret = sptd_store_count(st, SPTD_STORE_T_SLICE, &cslices);
	if (ret >= 0)
		ret = sptd_store_trigger_each(st, first_trigger, trig);
	if (ret < 0) {
		printf("%-44s  corrupt: %s\n", name, sptd_store_errmsg(st));
		sptd_store_destroy(st);
		return 1;
	}
	printf("%-44s  %-20s  %-6s  %8.3f ms  %9" PRId64 "  %9" PRId64 "  %9" PRId64 "  %7.1f MiB  %s\n",
	       name, created, source, (double)window / 1e6, slices, samples, cslices,
	       (double)sb.st_size / (1024.0 * 1024.0), trig);
	sptd_store_destroy(st);
	return 0;
}

int sptd_col_cmd_list(int argc, char **argv)
{
	const char *dir = "/var/lib/sysptd";
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int bad = 0;
	DIR *d;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: sysptd list [DIR]\n\nList the incident files in DIR (default /var/lib/sysptd),\n"
		       "oldest first: when, source, window, sched slices, samples, call slices,\n"
		       "size and what triggered it.  An unreadable or corrupt incident is\n"
		       "listed as such and makes the exit status 6.\n");
		return SPTD_EXIT_OK;
	}
	if (argc > 2) {
		fprintf(stderr, "sysptd list: unexpected argument '%s'\n", argv[2]);
		return SPTD_EXIT_USAGE;
	}
	if (argc == 2)
		dir = argv[1];
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "sysptd list: cannot open %s: %s\n", dir, strerror(errno));
		return errno == ENOENT ? SPTD_EXIT_BADFILE : SPTD_EXIT_FAIL;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 4 || strcmp(e->d_name + len - 3, ".db") != 0)
			continue;
		if (n == cap) {
			char **more = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));

			if (!more)
				break;
			names = more;
		}
		if ((names[n] = strdup(e->d_name)))
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	if (n)
		printf("%-44s  %-20s  %-6s  %11s  %9s  %9s  %9s  %11s  %s\n", "incident", "created",
		       "source", "window", "sched", "samples", "slices", "size", "trigger");
	else
		printf("no incidents in %s\n", dir);
	for (size_t i = 0; i < n; i++) {
		bad += list_one(dir, names[i]);
		free(names[i]);
	}
	free(names);
	/* like ls: every incident is listed, and the status says some were bad */
	return bad ? SPTD_EXIT_BADFILE : SPTD_EXIT_OK;
}
