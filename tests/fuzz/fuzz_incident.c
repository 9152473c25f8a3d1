/* fuzz_incident.c — the incident reader on hostile files, through the
 * library calls behind `sysptd query`, `export`, `list` and `decode`: open
 * read-only, every canned report, a user query, the Perfetto and JSON
 * exports, the row counts `list` prints, then open for update, re-derive
 * every table and commit, and a report on the result.
 *
 * Input: the whole SQLite file (seeds: small real incidents).  Checked:
 * every call succeeds or fails with -EBADMSG ("corrupt incident": the
 * commands turn it into exit status 6, which test_badinput.sh checks on the
 * real binary) — never -EINVAL (a row the store refuses: decode made an
 * invalid value from the file), -EIO or a crash; a failed decode leaves the
 * file as it was.  The libraries are called directly (not sptd_col_main) so
 * that nothing forks or drops privileges under the fuzzer. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "sptd_col_derive.h"
#include "sptd_query.h"
#include "sptd_store.h"

static char db[PATH_MAX];
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sptd_fuzz_quiet_logs();
	snprintf(db, sizeof(db), "%s/incident.db", sptd_fuzz_scratch());
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

/* An outcome the commands may report for a damaged file. */
#define CHECK_RC(rc, what, st)                                                        \
	FUZZ_CHECK((rc) >= 0 || (rc) == -EBADMSG, "%s: %d (%s): %s", what, (int)(rc),     \
	           strerror(-(int)(rc)), sptd_store_errmsg(st))

/* What query, export and list read. */
static void read_all(struct sptd_store *st)
{
	const char *const *name;
	char err[512];
	int64_t n;
	int rc, t;

	for (name = sptd_query_report_names(); *name; name++) {
		rc = sptd_query_report(st, *name, SPTD_QUERY_TABLE, devnull, err, sizeof(err));
		CHECK_RC(rc, *name, st);
	}
	rc = sptd_query_run(st, "SELECT * FROM slice ORDER BY ts LIMIT 100", SPTD_QUERY_CSV,
	                    devnull, err, sizeof(err));
	CHECK_RC(rc, "query", st);
	rc = sptd_query_export(st, devnull, SPTD_QUERY_EXPORT_PROTO, NULL, err, sizeof(err));
	CHECK_RC(rc, "export proto", st);
	rc = sptd_query_export(st, devnull, SPTD_QUERY_EXPORT_JSON, NULL, err, sizeof(err));
	CHECK_RC(rc, "export json", st);
	for (t = 0; t < SPTD_STORE_T_COUNT; t++) {
		rc = sptd_store_count(st, (enum sptd_store_table_id)t, &n);
		CHECK_RC(rc, "count", st);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sptd_store *st = NULL;
	char journal[PATH_MAX + 16];
	size_t len = 0;
	void *before;
	int rc;

	snprintf(journal, sizeof(journal), "%s-journal", db);
	unlink(journal);
	if (sptd_fuzz_write_file(db, data, size) < 0)
		return 0;
	rc = sptd_store_open(db, 0, &st);
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG || rc == -EPROTO, "open: %d: %s", rc,
	           sptd_store_errmsg(NULL));
	if (rc < 0)
		return 0;
	read_all(st);
	sptd_store_destroy(st);

	/* decode: everything derived again, in one transaction */
	rc = sptd_store_open(db, 1, &st);
	CHECK_RC(rc, "open for decode", (struct sptd_store *)NULL);
	if (rc < 0)
		return 0;
	rc = sptd_col_derive_all(st, 1);
	CHECK_RC(rc, "decode", st);
	if (rc >= 0) {
		rc = sptd_store_commit(st);
		CHECK_RC(rc, "commit", st);
	}
	sptd_store_destroy(st);
	if (rc < 0) {
		before = sptd_fuzz_read_file(db, &len);
		FUZZ_CHECK(before && len == size && memcmp(before, data, size) == 0,
		           "a failed decode changed the file");
		free(before);
		return 0;
	}
	rc = sptd_store_open(db, 0, &st);
	CHECK_RC(rc, "open after decode", (struct sptd_store *)NULL);
	if (rc == 0)
		read_all(st);
	sptd_store_destroy(st);
	return 0;
}
