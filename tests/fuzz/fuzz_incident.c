/* fuzz_incident.c — the incident reader on hostile files: `sysptd query`
 * (SQL and reports), `sysptd export` (Perfetto and JSON), `sysptd list` and
 * `sysptd decode`, run through sptd_col_main exactly as the program runs
 * them, on the bytes of a mutated incident.
 *
 * Input: the whole SQLite file (seeds: small real incidents).  Checked:
 * every command exits 0 or 6 ("bad or missing incident file", the README's
 * status for a corrupt incident), never 1, 2 or a crash; a failed export
 * leaves no file; a decode that failed leaves the file as it was.
 *
 * Commands print to stdout/stderr: scripts/fuzz.sh runs this harness with
 * -close_fd_mask=3 (libFuzzer keeps its own report stream). */
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "sptd_col.h"

static char dir[PATH_MAX], db[PATH_MAX + 32], out[PATH_MAX + 32];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/incidents", sptd_fuzz_scratch());
	mkdir(dir, 0700);
	snprintf(db, sizeof(db), "%s/incident-fuzz.db", dir);
	snprintf(out, sizeof(out), "%s/export.out", sptd_fuzz_scratch());
	return 0;
}

/* Run `sysptd ARGS...` (NULL-terminated); its exit status. */
static int run(const char *first, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;
	const char *a;

	argv[argc++] = (char *)"sysptd";
	va_start(ap, first);
	for (a = first; a && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	fflush(stdout);
	return sptd_col_main(argc, argv);
}

/* Remove the incident and whatever SQLite or a command left beside it. */
static void clean(void)
{
	char path[PATH_MAX + 64];

	unlink(db);
	snprintf(path, sizeof(path), "%s-journal", db);
	unlink(path);
	unlink(out);
	snprintf(path, sizeof(path), "%s.tmp", out);
	unlink(path);
}

#define CHECK_STATUS(rc, what) \
	FUZZ_CHECK((rc) == 0 || (rc) == 6, "%s exited %d on a corrupt incident", what, rc)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const reports[] = { "summary", "cpus", "top", "wakeup", "irq",
	                                       "threads" };
	const char *report = reports[size ? data[size / 2] % 6 : 0];
	int rc;

	clean();
	if (sptd_fuzz_write_file(db, data, size) < 0)
		return 0;
	rc = run("query", db, "--report", report, NULL);
	CHECK_STATUS(rc, "query --report");
	rc = run("query", db, "SELECT * FROM slice ORDER BY ts LIMIT 50", NULL);
	CHECK_STATUS(rc, "query SELECT");
	rc = run("query", db, "--format", "json", "SELECT * FROM meta", NULL);
	CHECK_STATUS(rc, "query --format json");
	rc = run("export", db, "-q", "-o", out, NULL);
	CHECK_STATUS(rc, "export");
	FUZZ_CHECK(rc == 0 || access(out, F_OK) != 0, "a failed export left %s", out);
	unlink(out);
	rc = run("export", db, "-q", "--format", "json", "-o", out, NULL);
	CHECK_STATUS(rc, "export --format json");
	rc = run("list", dir, NULL);
	CHECK_STATUS(rc, "list");
	rc = run("decode", db, "-j", "1", NULL);
	CHECK_STATUS(rc, "decode");
	if (rc == 0) {
		rc = run("query", db, "--report", "summary", NULL);
		CHECK_STATUS(rc, "summary after decode");
	}
	clean();
	return 0;
}
