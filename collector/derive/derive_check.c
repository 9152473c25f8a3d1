/* derive_check.c — the raw rows decode cannot make sense of, found before
 * any is decoded: a row whose cpu is no CPU number, a call chain longer
 * than any kernel records.  Such a file is damaged (exit status 6, the row
 * named), never a runtime failure (1) with a message about something else,
 * and never an hour of work and gigabytes of memory.  store/ runs the
 * checks (sptd_store_raw_check). */
#include <errno.h>

#include "derive-local.h"
#include "sptd_store.h"

int sptd_col_derive_check_cpus(struct sptd_store *st, const char *table)
{
	return sptd_store_raw_check(st, table, 0);
}

int sptd_col_derive_check_chains(struct sptd_store *st)
{
	return sptd_store_raw_check(st, "raw_sample", SPTD_DERIVE_MAX_CHAIN);
}
