/* cli.c — argv[1] -> subcommand, the top-level help and the version
 * (--version, -V, `sysptd version`).  It only dispatches: the subcommands
 * (cmd_*.c) never call back into it. */
#include <stdio.h>
#include <string.h>

#include "sptd_col.h"

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
"  list        list incident files (default directory " SPTD_COL_DEFAULT_DIR ")\n"
"  query       run SQL or a report on incidents; a shell on a terminal\n"
"  script      print every event of an incident in time order, one per line\n"
"  export      write an incident as a Perfetto trace (or Chrome JSON)\n"
"  flamegraph  draw an incident's stacks as an interactive SVG (or folded)\n"
"  diff        what changed from one incident to another, ranked\n"
"  decode      rebuild an incident's derived tables from its raw capture\n"
"  import      turn perf.data or raw Intel PT (+ images) into an incident\n"
"  list-events list the tracepoints `record -e` can add (as perf list)\n"
"  doctor      report what this machine supports\n"
"  version     print the version (also --version, -V)\n"
"\n"
"  sysptd COMMAND --help  shows each command's options.  Recording,\n"
"  snapshot and status need root; list, query, script, export, flamegraph,\n"
"  diff, decode, import, doctor and version work for any user who can read\n"
"  the files.\n"
"\n"
"Examples:\n"
"  sysptd --window 10ms --trigger irq        keep 10 ms; freeze on the next IRQ\n"
"  sysptd query latest --report cpus          what every CPU did\n"
"  sysptd script latest --cpu 0               every event on CPU 0, in order\n"
"  sysptd export incident.db -o x.pftrace     open in ui.perfetto.dev\n"
"  sysptd flamegraph latest -o flame.svg      open in any browser\n"
"\n"
"Exit status: 0 success, 1 failure, 2 bad command line, 4 needs root,\n"
"5 unsupported on this machine, 6 bad or missing incident file, 7 busy.\n";

/* `sysptd version` (also --version, -V): one line, as perf and trace-cmd
 * print theirs. */
static int version(int argc, char **argv)
{
	int ret = sptd_col_args_none(argc, argv, "version");

	if (ret > 0) {
		printf("Usage: sysptd version\n       sysptd --version\n       sysptd -V\n\n"
		       "Print sysptd's version.\n\nOptions:\n  -h, --help  this text\n");
		return SPTD_EXIT_OK;
	}
	if (ret < 0)
		return SPTD_EXIT_USAGE;
	printf("sysptd %s\n", SPTD_VERSION);
	return SPTD_EXIT_OK;
}

int sptd_col_main(int argc, char **argv)
{
	static const struct {
		const char *name;                   /* argv[1] that selects it */
		int (*run)(int argc, char **argv);  /* gets argv from the name on */
	} cmds[] = {
		{ "record", sptd_col_cmd_record }, { "snapshot", sptd_col_cmd_snapshot },
		{ "status", sptd_col_cmd_status }, { "list", sptd_col_cmd_list },
		{ "query", sptd_col_cmd_query }, { "export", sptd_col_cmd_export },
		{ "decode", sptd_col_cmd_decode }, { "import", sptd_col_cmd_import },
		{ "doctor", sptd_col_cmd_doctor }, { "script", sptd_col_cmd_script },
		{ "version", version }, { "list-events", sptd_col_cmd_list_events },
		{ "flamegraph", sptd_col_cmd_flamegraph }, { "diff", sptd_col_cmd_diff },
	};

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	                 strcmp(argv[1], "help") == 0)) {
		fputs(main_usage, stdout);
		return SPTD_EXIT_OK;
	}
	if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0))
		return version(argc - 1, argv + 1);
	if (argc < 2 || argv[1][0] == '-')
		return sptd_col_cmd_record(argc, argv);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "sysptd: unknown command '%s' (see sysptd --help)\n", argv[1]);
	return SPTD_EXIT_USAGE;
}
