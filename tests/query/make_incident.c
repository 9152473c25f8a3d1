/* make_incident.c — `sptd_make_incident PATH sample|pt|empty`: writes one of
 * query_incident.c's synthetic incidents (known rows, real store API) for
 * the shell-level tests (tests/collector/test_cli_ux.sh, the install
 * test).  Exit 0, or 1 with the reason on stderr. */
#include <stdio.h>
#include <string.h>

#include "query_incident.c"

int main(int argc, char **argv);

int main(int argc, char **argv)
{
	enum tq_kind kind;

	if (argc != 3) {
		fprintf(stderr, "usage: sptd_make_incident PATH sample|pt|empty\n");
		return 1;
	}
	if (strcmp(argv[2], "sample") == 0)
		kind = TQ_SAMPLE;
	else if (strcmp(argv[2], "pt") == 0)
		kind = TQ_PT;
	else if (strcmp(argv[2], "empty") == 0)
		kind = TQ_EMPTY;
	else {
		fprintf(stderr, "sptd_make_incident: unknown kind '%s'\n", argv[2]);
		return 1;
	}
	return tq_make_incident(argv[1], kind) < 0;
}
