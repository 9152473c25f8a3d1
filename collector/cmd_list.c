/* cmd_list.c — `sysptd list [DIR]`: the incidents in a directory, newest
 * last, with what fired and how much they hold; and `sysptd list-events
 * [GLOB...]`: the tracepoints `record -e` can add, one "SYSTEM:EVENT" per
 * line, as `perf list tracepoint` and `trace-cmd list -e` print them. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_sched.h"
#include "sptd_store.h"

/* Control characters of @s (text of a file, or a file's name) as '?': a
 * listing goes to a terminal. */
static void printable(char *s)
{
	sptd_store_printable(s, strlen(s));
}

/* "kind: detail" of the first trigger into @arg (256 bytes); stops there. */
static int first_trigger(void *arg, const struct sptd_store_trigger_row *row)
{
	if (row->kind && row->detail)
		snprintf(arg, 256, "%s: %s", row->kind, row->detail);
	return 1;
}

/* One incident: its file opened while root (list_open), read by SQLite
 * after the drop (list_read), printed. */
struct list_item {
	char *name;                /* file name in the directory */
	int fd;                    /* the file, opened as root; -1 none */
	struct sptd_store *st;     /* open incident, NULL when unreadable */
	char why[512];             /* why it is unreadable */
	uint64_t bytes;            /* its size */
};

static void list_why(struct list_item *it, int ret)
{
	snprintf(it->why, sizeof(it->why), "%s", sptd_store_errmsg(NULL)[0] ?
	         sptd_store_errmsg(NULL) : strerror(-ret));
}

static void list_open(const char *dir, struct list_item *it)
{
	char path[4096];
	struct stat sb;
	int ret;

	it->fd = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, it->name);
	if (stat(path, &sb) < 0) {
		snprintf(it->why, sizeof(it->why), "%s", strerror(errno));
		return;
	}
	it->bytes = (uint64_t)sb.st_size;
	ret = sptd_store_open_source(path);
	if (ret < 0)
		list_why(it, ret);
	else
		it->fd = ret;
}

/* After the drop: SQLite reads the file list_open opened. */
static void list_read(const char *dir, struct list_item *it)
{
	char path[4096];
	int ret;

	if (it->fd < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, it->name);
	ret = sptd_store_open_fd(it->fd, path, &it->st);
	if (ret < 0)
		list_why(it, ret);
	close(it->fd);
	it->fd = -1;
}

/* One line for @it; 1 when it is unreadable or corrupt (the line says
 * so), else 0. */
static int list_print(const struct list_item *it)
{
	char created[64] = "?", source[32] = "?", trig[256] = "?", name[256];
	struct sptd_store *st = it->st;
	int64_t window = 0, slices = 0, samples = 0, cslices = 0;
	int ret;

	snprintf(name, sizeof(name), "%s", it->name);
	printable(name);
	if (!st) {
		char why[sizeof(it->why)];

		snprintf(why, sizeof(why), "%s", it->why);
		printable(why);   /* it names the file, as given */
		printf("%-44s  unreadable: %s\n", name, why);
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
		ret = SPTD_STORE_EACH(st, trigger, first_trigger, trig);
	if (ret < 0) {
		printf("%-44s  corrupt: %s\n", name, sptd_store_errmsg(st));
		return 1;
	}
	printable(created);
	printable(source);
	printable(trig);
	printf("%-44s  %-20s  %-6s  %8.3f ms  %9" PRId64 "  %9" PRId64 "  %9" PRId64 "  %7.1f MiB  %s\n",
	       name, created, source, (double)window / 1e6, slices, samples, cslices,
	       (double)it->bytes / (1024.0 * 1024.0), trig);
	return 0;
}

/* What the list child does (sptd_col_parse_as_user). */
struct list_job {
	const char *dir;           /* the directory */
	struct list_item *items;   /* its incidents, oldest first */
	size_t n;                  /* entries of items */
};

/* Every incident's file is opened while root, then read as the invoking
 * user. */
static int list_job_run(void *arg)
{
	struct list_job *job = arg;
	int status = SPTD_EXIT_OK;
	size_t bad = 0;
	struct rlimit rl;

	/* one descriptor per incident until the drop: as many as allowed */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (size_t i = 0; i < job->n; i++)
		list_open(job->dir, &job->items[i]);
	if (sptd_col_drop_root("list"))
		status = SPTD_EXIT_FAIL;
	for (size_t i = 0; i < job->n; i++) {
		if (status == SPTD_EXIT_OK)
			list_read(job->dir, &job->items[i]);
		else if (job->items[i].fd >= 0)
			close(job->items[i].fd);
	}
	if (status == SPTD_EXIT_OK && job->n)
		printf("%-44s  %-20s  %-6s  %11s  %9s  %9s  %9s  %11s  %s\n", "incident", "created",
		       "source", "window", "sched", "samples", "slices", "size", "trigger");
	else if (status == SPTD_EXIT_OK)
		printf("no incidents in %s\n", job->dir);
	for (size_t i = 0; i < job->n; i++) {
		if (status == SPTD_EXIT_OK)
			bad += (size_t)list_print(&job->items[i]);
		sptd_store_destroy(job->items[i].st);
		job->items[i].st = NULL;
	}
	/* like ls: every incident is listed, and the status says some were bad */
	return status == SPTD_EXIT_OK && bad ? SPTD_EXIT_BADFILE : status;
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
			       "and what triggered it.  An unreadable or corrupt\nincident is listed as "
			       "such and makes the exit status 6.  Run as root, the\nfiles are opened as "
			       "root and read as the user who ran sudo (else nobody).\n\nOptions:\n"
			       "  -h, --help  this text\n");
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
	{
		struct list_job job = { .dir = dir, .n = n };
		int status;

		job.items = calloc(n ? n : 1, sizeof(*job.items));
		if (!job.items) {
			fprintf(stderr, "sysptd list: out of memory\n");
			status = SPTD_EXIT_FAIL;
		} else {
			for (size_t i = 0; i < n; i++)
				job.items[i].name = names[i];
			status = sptd_col_parse_as_user("list", list_job_run, &job);
		}
		sptd_col_names_free(names, n);
		free(job.items);
		return status;
	}
}

/* ---- list-events ---------------------------------------------------------- */

static const char events_usage[] =
"Usage: sysptd list-events [GLOB...]\n"
"\n"
"List the tracepoints of this kernel that `sysptd record -e SYS:EVENT` can\n"
"add, one SYSTEM:EVENT per line.  With GLOBs, only those matching one\n"
"(shell patterns on SYSTEM:EVENT or on EVENT alone: 'sched:*', '*exec*').\n"
"Reads tracefs, which is root's: run it with sudo.\n"
"\n"
"Options:\n"
"  -h, --help  this text\n"
"\n"
"Exit status: 0 listed (also when nothing matched), 2 bad command line,\n"
"4 tracefs not readable (not root), 5 no tracefs on this machine.\n";

struct events_ctx {
	char **globs;   /* patterns, NULL: all */
	int nglobs;
	long shown;
};

static int event_show(void *arg, const char *system, const char *event)
{
	struct events_ctx *c = arg;
	char full[512];
	int match = c->nglobs == 0;

	snprintf(full, sizeof(full), "%s:%s", system, event);
	for (int i = 0; i < c->nglobs && !match; i++)
		match = fnmatch(c->globs[i], full, 0) == 0 || fnmatch(c->globs[i], event, 0) == 0;
	if (!match)
		return 0;
	c->shown++;
	return puts(full) < 0 ? -EIO : 0;
}

int sptd_col_cmd_list_events(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct events_ctx c = { 0 };
	const char *word;
	int opt, ret;

	sptd_col_getopt_start();
	while ((opt = sptd_col_getopt_next(argc, argv, ":h", longopts, &word)) != -1) {
		if (opt == 'h') {
			fputs(events_usage, stdout);
			return SPTD_EXIT_OK;
		}
		fprintf(stderr, "sysptd list-events: unknown option '%s' (see --help)\n", word);
		return SPTD_EXIT_USAGE;
	}
	c.globs = argv + optind;
	c.nglobs = argc - optind;
	if (geteuid() == 0 && sptd_sched_tracefs_ensure() < 0)
		return SPTD_EXIT_UNSUPP;
	ret = sptd_sched_events_each(event_show, &c);
	if (ret == -EACCES || ret == -EPERM) {
		fprintf(stderr, "sysptd list-events: tracefs is root's: run sudo sysptd list-events\n");
		return SPTD_EXIT_NOPERM;
	}
	if (ret == -ENODEV || ret == -ENOENT) {
		fprintf(stderr, "sysptd list-events: no tracefs on this machine (mount -t tracefs "
		        "nodev /sys/kernel/tracing)\n");
		return geteuid() == 0 ? SPTD_EXIT_UNSUPP : SPTD_EXIT_NOPERM;
	}
	if (ret < 0) {
		fprintf(stderr, "sysptd list-events: %s\n", strerror(-ret));
		return SPTD_EXIT_FAIL;
	}
	if (c.shown == 0 && c.nglobs)
		fprintf(stderr, "sysptd list-events: no tracepoint matches\n");
	return SPTD_EXIT_OK;
}
