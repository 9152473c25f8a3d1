/* cli.c — subcommand dispatch, top-level help, and the two small control
 * commands (snapshot, status) that talk to a running service. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sptd_col_record.h"
#include "sptd_col.h"
#include "sptd_store.h"

static const char main_usage[] =
"Usage: sysptd [COMMAND] [OPTIONS]\n"
"\n"
"A flight recorder for every CPU: Intel PT (or sampling where PT is absent)\n"
"plus scheduler and interrupt tracepoints, frozen into one SQLite incident\n"
"file when a trigger fires.\n"
"\n"
"Commands:\n"
"  record      (default) run the recording service; see sysptd record --help\n"
"  snapshot    make a running service write an incident now\n"
"  status      show what a running service is doing\n"
"  list        list incident files (default directory /var/lib/sysptd)\n"
"  query       run SQL or a report on an incident\n"
"  export      write an incident as a Perfetto trace (or Chrome JSON)\n"
"  decode      rebuild an incident's derived tables from its raw capture\n"
"  import      turn raw Intel PT (+ images) into a decoded incident\n"
"  doctor      report what this machine supports\n"
"\n"
"  sysptd COMMAND --help  shows each command's options.\n"
"\n"
"Examples:\n"
"  sysptd --window 10ms --trigger irq        keep 10 ms; freeze on the next IRQ\n"
"  sysptd query incident.db --report cpus     what every CPU did\n"
"  sysptd export incident.db -o x.pftrace     open in ui.perfetto.dev\n"
"\n"
"Exit status: 0 success, 1 failure, 2 bad command line, 4 needs root,\n"
"5 unsupported on this machine, 6 bad or missing incident file, 7 busy.\n";

const char *sptd_col_option_value(int argc, char **argv, int *i, const char *opt)
{
	const char *arg = argv[*i];
	size_t n = strlen(opt);

	if (strncmp(arg, opt, n) == 0 && arg[n] == '=')
		return arg + n + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
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

static int control(const char *cmd, int argc, char **argv)
{
	char reply[8192];
	int ret;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: sysptd %s\n\n%s\n", cmd,
		       strcmp(cmd, "snapshot") == 0
		               ? "Ask the running service to write an incident now (same as SIGUSR2);\n"
		                 "prints the incident's path.  Needs root."
		               : "Show the running service's source, window, triggers and incidents.\n"
		                 "Needs root.");
		return SPTD_EXIT_OK;
	}
	if (argc > 1) {
		fprintf(stderr, "sysptd %s: unexpected argument '%s'\n", cmd, argv[1]);
		return SPTD_EXIT_USAGE;
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

int sptd_col_main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} cmds[] = {
		{ "record", sptd_col_cmd_record }, { "snapshot", sptd_col_cmd_snapshot },
		{ "status", sptd_col_cmd_status }, { "list", sptd_col_cmd_list },
		{ "query", sptd_col_cmd_query }, { "export", sptd_col_cmd_export },
		{ "decode", sptd_col_cmd_decode }, { "import", sptd_col_cmd_import },
		{ "doctor", sptd_col_cmd_doctor },
	};

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	                 strcmp(argv[1], "help") == 0)) {
		fputs(main_usage, stdout);
		return SPTD_EXIT_OK;
	}
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("sysptd %s\n", SPTD_VERSION);
		return SPTD_EXIT_OK;
	}
	if (argc < 2 || argv[1][0] == '-')
		return sptd_col_cmd_record(argc, argv);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "sysptd: unknown command '%s' (see sysptd --help)\n", argv[1]);
	return SPTD_EXIT_USAGE;
}
