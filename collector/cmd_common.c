/* cmd_common.c — what several subcommands share: one way to scan options
 * (getopt_long, restartable within a process, quoting what the user typed),
 * the command line as text, and opening an incident with one clear message.
 * It calls no subcommand, so nothing here depends on cli.c or cmd_*.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sptd_col.h"
#include "sptd_store.h"

void sptd_col_getopt_start(void)
{
	optind = 0;
	opterr = 0;
}

int sptd_col_getopt_next(int argc, char **argv, const char *shortopts,
                         const struct option *longopts, const char **word)
{
	/* In command-line order ("-" first in shortopts) getopt never moves
	 * arguments, and optind stays on an argument until its last option
	 * letter is read: the argument about to be read is argv[optind]
	 * (optind 0 means "start", i.e. argv[1]). */
	int at = optind > 0 ? optind : 1;
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);

	if (word)
		*word = at < argc ? argv[at] : "";
	return c;
}

int sptd_col_args_none(int argc, char **argv, const char *cmd)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *word;
	int c;

	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:h", longopts, &word)) != -1) {
		if (c == 'h')
			return 1;
		fprintf(stderr, "sysptd %s: unexpected argument '%s'\n", cmd, word);
		return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "sysptd %s: unexpected argument '%s'\n", cmd, argv[optind]);
		return -EINVAL;
	}
	return 0;
}

char *sptd_col_command_text(int argc, char **argv, char *buf, size_t len)
{
	size_t used = 0;

	if (!buf || !len)
		return buf;
	buf[0] = '\0';
	for (int i = 0; i < argc && used + 1 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
	return buf;
}

int sptd_col_incident_open(const char *cmd, const char *path, int writable,
                           struct sptd_store **st)
{
	int ret = sptd_store_open(path, writable, st);
	const char *msg;

	if (ret >= 0)
		return 0;
	msg = sptd_store_errmsg(NULL);
	if (msg && *msg) {
		fprintf(stderr, "sysptd %s: %s\n", cmd, msg);
	} else {
		msg = ret == -ENOENT ? "no such file" :
		      ret == -EBADMSG ? "not a sysptd incident, or corrupt" :
		      ret == -EPROTO ? "written by a newer sysptd; upgrade to read it" : strerror(-ret);
		fprintf(stderr, "sysptd %s: %s: %s\n", cmd, path, msg);
	}
	if (ret == -ENOENT || ret == -EBADMSG || ret == -EPROTO || ret == -EISDIR ||
	    ret == -ENOTDIR)
		return SPTD_EXIT_BADFILE;
	if (ret == -EACCES || ret == -EPERM)
		return SPTD_EXIT_NOPERM;
	return SPTD_EXIT_FAIL;
}
