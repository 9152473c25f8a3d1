/* make_incident.c — `sptd_make_incident PATH sample|pt|full|empty`: writes
 * one of query_incident.c's synthetic incidents (known rows, real store API)
 * for the shell-level tests (tests/collector/test_cli_ux.sh, the install
 * and trace_processor tests); "full" is the pt incident plus two gaps (one
 * of cpu 0, one of every CPU) and a process without a cmdline whose name
 * has blanks, as the NVIDIA driver's kernel threads have ("UVM global
 * queu"): pid and tid 300, "sptd two words".  Exit 0, or 1 with the reason
 * on stderr. */
#include <stdio.h>
#include <string.h>

#include "query_incident.c"

int main(int argc, char **argv);

int main(int argc, char **argv)
{
	enum tq_kind kind;
	int full = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: sptd_make_incident PATH sample|pt|empty\n");
		return 1;
	}
	if (strcmp(argv[2], "sample") == 0)
		kind = TQ_SAMPLE;
	else if (strcmp(argv[2], "pt") == 0 || (full = strcmp(argv[2], "full") == 0))
		kind = TQ_PT;
	else if (strcmp(argv[2], "empty") == 0)
		kind = TQ_EMPTY;
	else {
		fprintf(stderr, "sptd_make_incident: unknown kind '%s'\n", argv[2]);
		return 1;
	}
	if (tq_make_incident(argv[1], kind) < 0)
		return 1;
	if (full) {
		struct sptd_store *st = NULL;

		if (sptd_store_open(argv[1], 1, &st) < 0 ||
		    SPTD_STORE_ADD(st, gap, 3000000, 4000, 0, "overflow") < 0 ||
		    SPTD_STORE_ADD(st, gap, 7000000, 2000, -1, "pt: lost sync") < 0 ||
		    SPTD_STORE_ADD(st, process, 3, 300, "sptd two words", NULL) < 0 ||
		    SPTD_STORE_ADD(st, thread, 5, 300, 3, "sptd two words") < 0 ||
		    sptd_store_commit(st) < 0) {
			fprintf(stderr, "sptd_make_incident: adding gaps and a process: %s\n", sptd_store_errmsg(st));
			sptd_store_destroy(st);
			return 1;
		}
		sptd_store_destroy(st);
	}
	return 0;
}
