/* cmd_control.c — `sysptd snapshot` and `sysptd status`: the two small
 * commands that talk to a running service over its control socket. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sptd_col_record.h"
#include "sptd_col.h"

/* [--name NAME]: 1 help printed, 0 go on, -EINVAL (said). */
static int parse(const char *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *word;
	int c;

	sptd_col_set_service_name(NULL);
	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:hN:", longopts, &word)) != -1) {
		if (c == 'h') {
			printf("Usage: sysptd %s [--name NAME]\n\n%s\n\n"
			       "  --name NAME   the recorder started with --name NAME (default: the\n"
			       "                service, started without one)\n"
			       "  -h, --help    this text\n", cmd,
			       strcmp(cmd, "snapshot") == 0
			               ? "Ask the running service to write an incident now (same as SIGUSR2);\n"
			                 "prints the incident's path.  Needs root."
			               : "Show the running service's source, window, triggers and incidents.\n"
			                 "Exits 1 when the service runs but is not recording (the line\n"
			                 "'state not recording: WHY'; see docs/SECURITY.md).  Needs root.");
			return 1;
		}
		if (c == 'N') {
			if (sptd_col_set_service_name(optarg) < 0) {
				fprintf(stderr, "sysptd %s: bad --name '%s'\n", cmd, optarg);
				return -EINVAL;
			}
			continue;
		}
		if (c == ':')
			fprintf(stderr, "sysptd %s: option '%s' needs a value\n", cmd, word);
		else
			fprintf(stderr, "sysptd %s: unexpected argument '%s'\n", cmd, word);
		return -EINVAL;
	}
	return 0;
}

static int control(const char *cmd, int argc, char **argv)
{
	const char *name;
	char reply[8192];
	int ret;

	ret = parse(cmd, argc, argv);
	if (ret > 0)
		return SPTD_EXIT_OK;
	if (ret < 0)
		return SPTD_EXIT_USAGE;
	name = sptd_col_service_name();
	if (geteuid() != 0) {
		/* bin/sysptd reaches normal users: say what this one needs */
		fprintf(stderr, "sysptd %s: needs root (the service's control socket is root's): "
		        "sudo sysptd %s\n", cmd, cmd);
		return SPTD_EXIT_NOPERM;
	}
	ret = sptd_col_ctl_request(cmd, reply, sizeof(reply), 60000);
	if (ret == -ENOENT || ret == -ECONNREFUSED) {
		if (name[0])
			fprintf(stderr, "sysptd %s: no sysptd named '%s' is running (start one with "
			        "`sysptd --name %s ...`)\n", cmd, name, name);
		else
			fprintf(stderr, "sysptd %s: no sysptd service is running (start one with "
			        "`sysptd --trigger ...`; a named one: --name NAME)\n", cmd);
		return SPTD_EXIT_FAIL;
	}
	if (ret == -EACCES || ret == -EPERM) {
		fprintf(stderr, "sysptd %s: the control socket is for root; run with sudo\n", cmd);
		return SPTD_EXIT_NOPERM;
	}
	if (ret < 0) {
		fprintf(stderr, "sysptd %s: %s\n", cmd, strerror(-ret));
		return SPTD_EXIT_FAIL;
	}
	if (strncmp(reply, "error:", 6) == 0) {
		fprintf(stderr, "sysptd %s: %s", cmd, reply + 7);
		return SPTD_EXIT_FAIL;
	}
	fputs(strncmp(reply, "ok ", 3) == 0 ? reply + 3 : reply, stdout);
	/* a service that runs without recording (its ftrace instance gone):
	 * a line of its own, and a status a script or systemd can check */
	{
		const char *down = strstr(reply, "\nstate not recording");

		if (strcmp(cmd, "status") == 0 && down) {
			down += strlen("\nstate ");
			fprintf(stderr, "sysptd status: the service is running but %.*s\n",
			        (int)strcspn(down, "\n"), down);
			return SPTD_EXIT_FAIL;
		}
	}
	return SPTD_EXIT_OK;
}

int sptd_col_cmd_snapshot(int argc, char **argv)
{
	return control("snapshot", argc, argv);
}

int sptd_col_cmd_status(int argc, char **argv)
{
	return control("status", argc, argv);
}
