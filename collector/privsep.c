/* privsep.c — how a command that parses files gives up root: it opens what
 * it needs as root, then parses in a child that has become the user who
 * ran sudo (else nobody); the parent, still root, renames what the child
 * finished (collector/base privs.c does the work; docs/SECURITY.md says
 * why).  The commands call this file; it calls none of them. */
#include <stdio.h>
#include <string.h>

#include "sptd_col.h"
#include "sptd_store.h"

int sptd_col_parse_as_user(const char *cmd, int (*fn)(void *ctx), void *ctx)
{
	int ret;

	/* new and updated incidents are renamed by the parent, still root */
	sptd_store_set_handoff(sptd_col_privs_handoff);
	ret = sptd_col_privs_child(fn, ctx);
	sptd_store_set_handoff(NULL);
	if (ret < 0) {
		fprintf(stderr, "sysptd %s: cannot start the process that reads the file: %s\n",
		        cmd, strerror(-ret));
		return SPTD_EXIT_FAIL;
	}
	return ret;
}

int sptd_col_drop_root(const char *cmd)
{
	char err[512];

	if (sptd_col_privs_drop_root(err, sizeof(err)) < 0) {
		fprintf(stderr, "sysptd %s: %s\n", cmd, err);
		return SPTD_EXIT_FAIL;
	}
	return 0;
}
