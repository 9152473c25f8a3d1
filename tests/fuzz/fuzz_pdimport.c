/* fuzz_pdimport.c — `sysptd import perf.data` end to end on hostile files:
 * sptd_col_perfdata_import reads the file, writes the raw tables of a new
 * incident, decodes it (scheduling, PT with libipt) and commits.  Then the
 * incident is opened again and its rows checked against what the store
 * and the README promise: every dur >= 0 and no row ends past INT64_MAX,
 * no gap of INT64_MAX, and a failed import left no file behind.
 *
 * Input: the whole perf.data.  Images are looked up under the fixtures'
 * symfs directories, as `--symfs` would. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "sptd_col_import.h"
#include "sptd_store.h"

static char input_path[PATH_MAX], output_path[PATH_MAX], symfs[PATH_MAX];
static char debug_dir[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sptd_fuzz_quiet_logs();
	snprintf(input_path, sizeof(input_path), "%s/perf.data", sptd_fuzz_scratch());
	snprintf(output_path, sizeof(output_path), "%s/import.db", sptd_fuzz_scratch());
	snprintf(debug_dir, sizeof(debug_dir), "%s/no-debug", sptd_fuzz_scratch());
	snprintf(symfs, sizeof(symfs), "%s/real-pt/hase-control_flow/symfs",
	         sptd_fuzz_fixtures());
	return 0;
}

/* Every duration-carrying table: dur >= 0 and ts + dur representable. */
static void check_rows(struct sptd_store *st)
{
	static const char *const tables[] = { "sched_slice", "thread_state", "irq_slice",
	                                      "softirq_slice", "slice", "gap" };
	char sql[256];
	int64_t n;
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE dur < 0 OR "
		         "dur > 9223372036854775807 - ts", tables[i]);
		FUZZ_CHECK(sptd_store_query_int(st, sql, &n) == 0 && n == 0,
		           "%s: %lld rows with a negative or overflowing dur", tables[i],
		           (long long)n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sptd_col_pd_import_opts o;
	struct sptd_col_pd_import_result res;
	struct sptd_store *st = NULL;
	char err[512];
	int ret;

	unlink(output_path);
	if (sptd_fuzz_write_file(input_path, data, size) < 0)
		return 0;
	memset(&o, 0, sizeof(o));
	o.input = input_path;
	o.output = output_path;
	o.paths.symfs = symfs;
	o.paths.debug_dir = debug_dir;
	o.jobs = 1;
	o.command = "fuzz";
	ret = sptd_col_perfdata_import(&o, &res, err, sizeof(err));
	if (ret < 0) {
		/* a corrupt file is the input's fault: -EBADMSG, -ENOTSUP,
		 * -ENODATA; and then nothing is left at the output path */
		FUZZ_CHECK(ret == -EBADMSG || ret == -ENOTSUP || ret == -ENODATA || ret == -ENOMEM,
		           "import failed with %d (%s): %s", ret, strerror(-ret), err);
		FUZZ_CHECK(err[0], "failed import without a message");
		FUZZ_CHECK(access(output_path, F_OK) != 0, "a failed import left %s", output_path);
		return 0;
	}
	FUZZ_CHECK(sptd_store_open(output_path, 0, &st) == 0, "cannot reopen the import: %s",
	           sptd_store_errmsg(NULL));
	check_rows(st);
	sptd_store_destroy(st);
	unlink(output_path);
	return 0;
}
