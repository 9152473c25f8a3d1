/* privsep.c — how a command that parses files gives up root: it opens what
 * it needs as root, then parses in a child that has become the user who
 * ran sudo (else nobody); the parent, still root, renames what the child
 * finished (collector/base privs.c does the work; docs/SECURITY.md says
 * why).  The commands call this file; it calls none of them. */
#include <stdio.h>
#include <string.h>

#include "sptd_col.h"
#include "sptd_store.h"

/* sptd_store_dir_open_fn: the store's temporary files as newfile.c's. */
static int store_dir_open(const char *dir, int update)
{
	return sptd_col_newfile_dir_open(dir, update ? SPTD_COL_NEWFILE_DIR_UPDATE : 0);
}

int sptd_col_parse_as_user(const char *cmd, int (*fn)(void *ctx), void *ctx)
{
	int ret;

	/* new and updated incidents are renamed by the parent, still root,
	 * in a directory opened as sptd_col_newfile_dir_open decides (never
	 * through a user's symlink; through sudo, only one that user may
	 * write, for a new incident) */
	sptd_store_set_handoff(sptd_col_privs_handoff);
	sptd_store_set_dir_open(store_dir_open);
	ret = sptd_col_privs_child(fn, ctx);
	sptd_store_set_dir_open(NULL);
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
