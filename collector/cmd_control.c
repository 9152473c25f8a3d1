/* cmd_control.c — `sysptd snapshot` and `sysptd status`: the two small
 * commands that talk to a running service over its control socket. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sptd_col_record.h"
#include "sptd_col.h"

static int control(const char *cmd, int argc, char **argv)
{
	char reply[8192];
	int ret;

	ret = sptd_col_args_none(argc, argv, cmd);
	if (ret > 0) {
		printf("Usage: sysptd %s\n\n%s\n", cmd,
		       strcmp(cmd, "snapshot") == 0
		               ? "Ask the running service to write an incident now (same as SIGUSR2);\n"
		                 "prints the incident's path.  Needs root."
		               : "Show the running service's source, window, triggers and incidents.\n"
		                 "Needs root.");
		return SPTD_EXIT_OK;
	}
	if (ret < 0)
		return SPTD_EXIT_USAGE;
	if (geteuid() != 0) {
		/* bin/sysptd reaches normal users: say what this one needs */
		fprintf(stderr, "sysptd %s: needs root (the service's control socket is root's): "
		        "sudo sysptd %s\n", cmd, cmd);
		return SPTD_EXIT_NOPERM;
	}
	ret = sptd_col_ctl_request(cmd, reply, sizeof(reply), 60000);
	if (ret == -ENOENT || ret == -ECONNREFUSED) {
		fprintf(stderr, "sysptd %s: no sysptd service is running (start one with `sysptd --trigger ...`)\n", cmd);
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
