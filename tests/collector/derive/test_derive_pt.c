/* test_derive_pt.c — sptd_col_derive_pt on the real captures of the
 * fixtures (../shared/fixtures/real-pt), written into an incident with
 * store/'s public API as a capture would: raw PT in chunks, the code as a
 * flat raw_image or as a mapped ELF file.  The stats rows must equal the
 * libipt figures of real-pt/MANIFEST.md; a second run replaces its own rows
 * and leaves other producers' alone.
 *
 * Without the fixtures directory only the invalid-argument and no-PT cases
 * run (the test then reports skip); a file missing from it fails. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <syslog.h>

#include "derive_harness.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "store_rows.h"

/* The stats one CPU's decode wrote, in a fixed order. */
#define Q_STATS(cpu)                                                             \
	"SELECT name, value FROM stats WHERE cpu = " #cpu " AND name IN ('pt_bytes', " \
	"'instructions', 'calls', 'returns', 'far_calls', 'decode_errors') ORDER BY name"

static void test_invalid(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("invalid", &tasks, &st), 0);
	CHECK_INT(sptd_col_derive_pt(NULL, tasks, 0), -EINVAL);
	CHECK_INT(sptd_col_derive_pt(st, NULL, 0), -EINVAL);
	CHECK_INT(sptd_col_derive_pt(st, tasks, -1), -EINVAL);
	/* no raw_pt: success, nothing written */
	CHECK_INT(sptd_col_derive_pt(st, tasks, 1), 0);
	CHECK_ROWS(st, "SELECT count(*) FROM slice", "0\n");
	CHECK_ROWS(st, "SELECT count(*) FROM stats", "0\n");
	CHECK_INT(sptd_store_meta_get(st, "pt_timing", harness_log, sizeof(harness_log)), -ENOENT);
	harness_case_end(tasks, st);
}

/* The fixture file @rel read whole into a new buffer (NULL with a failed
 * check when it is missing or unreadable). */
static void *fixture_bytes(const char *rel, size_t *len)
{
	char path[PATH_MAX];
	void *data;

	if (sptd_test_fixture(path, sizeof(path), rel) < 0)
		return NULL;
	data = sptd_test_slurp(path, len);
	CHECK(data != NULL);
	return data;
}

/* MANIFEST.md: 16,896 bytes, 149,576 instructions, 219 calls, 111 returns */
#define WANT_UNZIP                                                               \
	"calls|219\n"                                                            \
	"decode_errors|0\n"                                                      \
	"far_calls|0\n"                                                          \
	"instructions|149576\n"                                                  \
	"pt_bytes|16896\n"                                                       \
	"returns|111\n"

/* libxdc-unzip: raw PT of cpu 0 in two chunks (stored out of order: seq
 * decides), the code a flat image at 0x400000, no tasks or switches. */
static void test_unzip(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;
	size_t pt_len = 0, img_len = 0, half;
	unsigned char *pt = fixture_bytes("real-pt/libxdc-unzip/trace.pt", &pt_len);
	void *img = fixture_bytes("real-pt/libxdc-unzip/flat_400000.img", &img_len);
	char value[64], *n_slices = NULL, *n_symbols = NULL, *n_gaps = NULL;

	if (!pt || !img)
		goto out;
	CHECK_INT(harness_case("unzip", &tasks, &st), 0);
	if (!tasks || !st)
		goto out;
	CHECK_INT(sptd_store_meta_set(st, "source", "pt"), 0);
	CHECK_INT(sptd_store_meta_set(st, "clock", "tsc"), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "cpus", 1), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, "/fixtures/flat_400000.img", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_image, 1, 0x400000, img, img_len, NULL), 0);
	half = pt_len / 2 + 7;   /* mid-packet: the chunks must be joined */
	CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 0, 1, pt + half, pt_len - half), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 0, 0, pt, half), 0);
	/* rows of other producers, which a PT decode leaves alone */
	CHECK_INT(SPTD_STORE_ADD(st, gap, 0, 0, 0, "sched: keep"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "sched_events", -1, 5), 0);

	CHECK_INT(sptd_col_derive_pt(st, tasks, 1), 0);
	CHECK_ROWS(st, Q_STATS(0), WANT_UNZIP);
	n_slices = sptd_test_rows(st, "SELECT count(*) FROM slice");
	n_symbols = sptd_test_rows(st, "SELECT count(*) FROM symbol");
	n_gaps = sptd_test_rows(st, "SELECT count(*) FROM gap WHERE reason LIKE 'pt: %'");
	CHECK(n_slices && atoi(n_slices) >= 219);
	CHECK(n_symbols && atoi(n_symbols) > 0);
	/* code without a symbol is named by image and offset */
	CHECK_ROWS(st, "SELECT count(*) > 0 FROM symbol WHERE name LIKE 'flat_400000.img+0x%'",
	           "1\n");
	/* no task known: every slice on cpu 0's pseudo thread */
	CHECK_INT(sptd_col_tasks_store(tasks, st), 0);
	{
		char want[64];

		snprintf(want, sizeof(want), "[pt cpu0]|%d\n", n_slices ? atoi(n_slices) : -1);
		CHECK_ROWS(st, "SELECT t.name, count(*) FROM slice s JOIN thread t USING (utid) "
		           "GROUP BY t.name", want);
	}
	/* no timing packets: meta says so, and the clock becomes order */
	CHECK(sptd_store_meta_get(st, "pt_timing", value, sizeof(value)) > 0);
	CHECK_STR(value, "none");
	CHECK(sptd_store_meta_get(st, "clock", value, sizeof(value)) > 0);
	CHECK_STR(value, "order");

	/* again, on all cores: the same rows, its own replaced, others kept */
	CHECK_INT(sptd_col_derive_pt(st, tasks, 0), 0);
	CHECK_ROWS(st, Q_STATS(0), WANT_UNZIP);
	if (n_slices && n_symbols && n_gaps) {
		CHECK_ROWS(st, "SELECT count(*) FROM slice", n_slices);
		CHECK_ROWS(st, "SELECT count(*) FROM symbol", n_symbols);
		CHECK_ROWS(st, "SELECT count(*) FROM gap WHERE reason LIKE 'pt: %'", n_gaps);
	}
	CHECK_ROWS(st, "SELECT ts, dur, cpu, reason FROM gap WHERE reason NOT LIKE 'pt: %'",
	           "0|0|0|sched: keep\n");
	CHECK_ROWS(st, "SELECT name, cpu, value FROM stats WHERE name = 'sched_events'",
	           "sched_events|NULL|5\n");
out:
	free(n_slices);
	free(n_symbols);
	free(n_gaps);
	harness_case_end(tasks, st);
	free(pt);
	free(img);
}

/* drpt2trace-hello as a capture references it: an ELF mapped for every
 * task (pid -1), read from its recorded path.  @build_id NULL: any file
 * there will do; else it must be that build. */
static struct sptd_store *hello_incident(const char *name, const char *build_id)
{
	char rel_path[PATH_MAX], path[PATH_MAX];
	struct sptd_store *st = NULL;
	size_t pt_len = 0;
	void *pt = fixture_bytes("real-pt/drpt2trace-hello/pt.bin", &pt_len);

	if (!pt || sptd_test_fixture(rel_path, sizeof(rel_path), "real-pt/drpt2trace-hello/hello") < 0)
		goto out;
	/* dso paths are absolute (a relative one is never read) */
	CHECK(realpath(rel_path, path) != NULL);
	CHECK_INT(sptd_test_store_new(harness_dir, name, &st), 0);
	if (!st)
		goto out;
	CHECK_INT(sptd_store_meta_set_int(st, "pt_cpu_family", 6), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "pt_cpu_model", 85), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "pt_cpu_stepping", 4), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, path, build_id), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, -1, 0x400000, 0x401000, 0, 1, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 0, 0, pt, pt_len), 0);
out:
	free(pt);
	return st;
}

static void test_hello(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = hello_incident("hello", NULL);

	CHECK_INT(sptd_col_tasks_create(&tasks), 0);
	if (!st || !tasks)
		goto out;
	CHECK_INT(sptd_col_derive_pt(st, tasks, 1), 0);
	/* MANIFEST.md: 2,272 bytes, 8 instructions, 2 far calls (syscalls) */
	CHECK_ROWS(st, Q_STATS(0),
	           "calls|0\n"
	           "decode_errors|0\n"
	           "far_calls|2\n"
	           "instructions|8\n"
	           "pt_bytes|2272\n"
	           "returns|0\n");
	CHECK_ROWS(st, "SELECT s.kind, y.name FROM slice s JOIN symbol y ON y.id = s.symbol_id "
	           "WHERE s.kind = 'syscall' ORDER BY s.ts, s.id",
	           "syscall|[syscall]\nsyscall|[syscall]\n");
out:
	harness_case_end(tasks, st);
}

/* The file at the recorded path is another build: not read, its code
 * becomes missing-image gaps, and the log says why. */
static void test_hello_changed(void)
{
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = hello_incident("changed", "00112233445566778899aabbccddeeff00112233");
	char cache[PATH_MAX];

	/* an empty image cache: nothing there either */
	snprintf(cache, sizeof(cache), "%s/cache", harness_dir);
	CHECK_INT(setenv("SPTD_IMAGE_CACHE", cache, 1), 0);
	CHECK_INT(sptd_col_tasks_create(&tasks), 0);
	if (!st || !tasks)
		goto out;
	harness_log[0] = '\0';
	CHECK_INT(sptd_col_derive_pt(st, tasks, 1), 0);
	CHECK(strstr(harness_log, "changed since recording") != NULL);
	CHECK_ROWS(st, "SELECT value FROM stats WHERE cpu = 0 AND name = 'instructions'", "0\n");
	CHECK_ROWS(st, "SELECT count(*) > 0 FROM gap WHERE reason LIKE 'pt: %missing image%'",
	           "1\n");
out:
	unsetenv("SPTD_IMAGE_CACHE");
	harness_case_end(tasks, st);
}

int main(void)
{
	if (harness_init("dpt") < 0)
		return 1;
	test_invalid();
	if (sptd_test_fixtures_for("derive_pt on the real captures")) {
		test_unzip();
		test_hello();
		test_hello_changed();
	}
	harness_fini();
	return SPTD_TEST_END();
}
