/* cmd_events.c — `sysptd list-events [GLOB...]`: the tracepoints `-e` can
 * add, one "SYSTEM:EVENT" per line, as `perf list tracepoint` and
 * `trace-cmd list -e` print them. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_sched.h"

static const char usage[] =
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

struct list_ctx {
	char **globs;   /* patterns, NULL: all */
	int nglobs;
	long shown;
};

static int show(void *arg, const char *system, const char *event)
{
	struct list_ctx *c = arg;
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
	struct list_ctx c = { 0 };
	const char *word;
	int opt, ret;

	sptd_col_getopt_start();
	while ((opt = sptd_col_getopt_next(argc, argv, ":h", longopts, &word)) != -1) {
		if (opt == 'h') {
			fputs(usage, stdout);
			return SPTD_EXIT_OK;
		}
		fprintf(stderr, "sysptd list-events: unknown option '%s' (see --help)\n", word);
		return SPTD_EXIT_USAGE;
	}
	c.globs = argv + optind;
	c.nglobs = argc - optind;
	if (geteuid() == 0 && sptd_sched_tracefs_ensure() < 0)
		return SPTD_EXIT_UNSUPP;
	ret = sptd_sched_events_each(show, &c);
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
