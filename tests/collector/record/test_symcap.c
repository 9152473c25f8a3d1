/* test_symcap.c — capture-time snapshot of this test's own process into a
 * real SQLite incident (raw_task, raw_mmap, dso, symbol rows), the kernel
 * through /proc/kallsyms (root), and sample/callsite derivation from
 * hand-written raw_sample rows resolved through those rows. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>

#include "record-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"

static __attribute__((noinline, used)) int symcap_test_marker(int x)
{
	return x * 7 + 1;
}

static __attribute__((noinline, used)) int symcap_test_other(int x)
{
	return symcap_test_marker(x) - 3;
}

static int64_t q_int(struct sptd_store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One integer from a formatted query; -999 on failure. */
static int64_t q_int(struct sptd_store *st, const char *fmt, ...)
{
	char sql[1024];
	int64_t v = -999;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	if (sptd_store_query_int(st, sql, &v) < 0) {
		fprintf(stderr, "query failed: %s: %s\n", sql, sptd_store_errmsg(st));
		return -999;
	}
	return v;
}

static uint64_t kallsyms_addr(const char *want)
{
	char line[512], name[256], type;
	uint64_t addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) == 3 &&
		    strcmp(name, want) == 0)
			found = addr;
	fclose(f);
	return found;
}

static void test_snapshot(struct sptd_store *st, struct sptd_col_symcap *c, int root)
{
	char exe[PATH_MAX];
	struct sptd_dec_symfile *sf = NULL;
	int pid = getpid(), tid = gettid();
	uint64_t a = (uint64_t)(uintptr_t)&symcap_test_marker, sched;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int64_t tasks;

	CHECK(n > 0);
	exe[n > 0 ? n : 0] = '\0';
	CHECK_INT(sptd_col_symcap_task(c, pid), 0);
	CHECK_INT(q_int(st, "SELECT count(*) FROM raw_task WHERE pid = %d AND tid = %d "
	                "AND comm = 'test_symcap' AND cmdline LIKE '%%test_symcap%%'",
	                pid, tid), 1);
	tasks = q_int(st, "SELECT count(*) FROM raw_task");
	CHECK(tasks >= 1);
	/* our executable: one dso row with its build-id, mapped for our pid */
	CHECK_INT(q_int(st, "SELECT count(*) FROM dso WHERE path = '%s'", exe), 1);
	CHECK(q_int(st, "SELECT count(*) FROM raw_mmap m JOIN dso d ON d.id = m.dso_id "
	            "WHERE m.pid = %d AND d.path = '%s' AND m.start <= %" PRId64
	            " AND m.end > %" PRId64, pid, exe, (int64_t)a, (int64_t)a) == 1);
	CHECK_INT(sptd_dec_symfile_load_elf(exe, &sf), 0);
	if (sf && sptd_dec_symfile_build_id(sf))
		CHECK_INT(q_int(st, "SELECT count(*) FROM dso WHERE path = '%s' AND "
		                "build_id = '%s'", exe, sptd_dec_symfile_build_id(sf)), 1);
	sptd_dec_symfile_destroy(sf);
	CHECK_INT(q_int(st, "SELECT count(*) FROM dso WHERE path = '[vdso]'"), 1);
	CHECK(q_int(st, "SELECT count(*) FROM dso WHERE path LIKE '%%libc%%'") >= 1);
	/* a second snapshot of the same process adds nothing */
	CHECK_INT(sptd_col_symcap_task(c, pid), 0);
	CHECK_INT(q_int(st, "SELECT count(*) FROM raw_task"), tasks);

	/* symbols: added once per function */
	CHECK_INT(sptd_col_symcap_addr(c, pid, a + 2, 0), 1);
	CHECK_INT(sptd_col_symcap_addr(c, pid, a, 0), 1);
	CHECK_INT(sptd_col_symcap_addr(c, pid, (uint64_t)(uintptr_t)&symcap_test_other + 1, 0), 1);
	CHECK_INT(q_int(st, "SELECT count(*) FROM symbol s JOIN dso d ON d.id = s.dso_id "
	                "WHERE s.name = 'symcap_test_marker' AND d.path = '%s'", exe), 1);
	CHECK_INT(q_int(st, "SELECT count(*) FROM symbol"), 2);
	/* an address nothing is mapped at: nothing added */
	CHECK_INT(sptd_col_symcap_addr(c, pid, 0x1000, 0), 0);
	/* pid 0 (idle) has no user mappings: nothing, and no error */
	CHECK_INT(sptd_col_symcap_addr(c, 0, 0x400000, 0), 0);
	CHECK_INT(q_int(st, "SELECT count(*) FROM symbol"), 2);

	if (!root)
		return;
	sched = kallsyms_addr("schedule");
	CHECK(sched != 0);
	CHECK_INT(sptd_col_symcap_addr(c, -1, sched + 4, 0), 1);
	CHECK_INT(sptd_col_symcap_addr(c, pid, sched + 8, 0), 1);
	CHECK_INT(q_int(st, "SELECT count(*) FROM symbol s JOIN dso d ON d.id = s.dso_id "
	                "WHERE s.name = 'schedule' AND d.path = '[kernel.kallsyms]' "
	                "AND s.addr = %" PRId64, (int64_t)sched), 1);
	CHECK_INT(q_int(st, "SELECT count(*) FROM raw_mmap WHERE pid = -1"), 1);
}

static void add_chain(struct sptd_store *st, int64_t ts, const uint64_t *chain, size_t nr)
{
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, ts, 1, getpid(), gettid(), chain, nr, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
}

static void test_derive(struct sptd_store *st, int root)
{
	struct sptd_col_tasks *tasks = NULL;
	uint64_t a = (uint64_t)(uintptr_t)&symcap_test_marker;
	uint64_t b = (uint64_t)(uintptr_t)&symcap_test_other;
	uint64_t sched = root ? kallsyms_addr("schedule") : 0xffffffff81234560ull;
	const uint64_t s1[] = { PERF_CONTEXT_KERNEL, sched + 4, PERF_CONTEXT_USER, a + 2, b + 1 };
	const uint64_t s2[] = { PERF_CONTEXT_USER, a + 5, b + 3 };
	const uint64_t s3[] = { PERF_CONTEXT_USER, 0x1234, b + 1 };
	const uint64_t s4[] = { PERF_CONTEXT_USER, 0x1234, b + 2 };
	int64_t utid;

	CHECK_INT(symcap_test_other(1), 5);
	add_chain(st, 200, s1, 5);
	add_chain(st, 100, s2, 3);
	add_chain(st, 300, s3, 3);
	add_chain(st, 400, s4, 3);
	CHECK_INT(sptd_col_tasks_create(&tasks), 0);
	if (!tasks)
		return;
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	utid = sptd_col_tasks_utid(tasks, gettid());

	/* b, a under b, schedule under a, 0x1234 under b */
	CHECK_INT(q_int(st, "SELECT count(*) FROM callsite"), 4);
	CHECK_INT(q_int(st, "SELECT count(*) FROM sample"), 4);
	CHECK_INT(q_int(st, "SELECT count(*) FROM sample WHERE utid = %" PRId64
	                " AND cpu = 1", utid), 4);
	/* the kernel frame is innermost, at depth 2, called from a, from b */
	CHECK_INT(q_int(st, "SELECT c.depth FROM sample s JOIN callsite c ON c.id = s.callsite_id "
	                "WHERE s.ts = 200"), 2);
	if (root)
		CHECK_INT(q_int(st, "SELECT count(*) FROM sample s JOIN callsite c ON "
		                "c.id = s.callsite_id JOIN symbol y ON y.id = c.symbol_id "
		                "WHERE s.ts = 200 AND y.name = 'schedule'"), 1);
	CHECK_INT(q_int(st, "SELECT count(*) FROM sample s JOIN callsite c ON c.id = s.callsite_id "
	                "JOIN callsite p ON p.id = c.parent_id JOIN symbol y ON y.id = p.symbol_id "
	                "JOIN callsite g ON g.id = p.parent_id JOIN symbol z ON z.id = g.symbol_id "
	                "WHERE s.ts = 200 AND y.name = 'symcap_test_marker' AND p.depth = 1 "
	                "AND z.name = 'symcap_test_other' AND g.depth = 0 AND g.parent_id IS NULL"),
	          1);
	/* the same stack at other addresses in the same functions shares nodes */
	CHECK_INT(q_int(st, "SELECT s2.callsite_id = c1.parent_id FROM sample s1 "
	                "JOIN callsite c1 ON c1.id = s1.callsite_id, sample s2 "
	                "WHERE s1.ts = 200 AND s2.ts = 100"), 1);
	/* an unresolved frame: interned by address, no symbol */
	CHECK_INT(q_int(st, "SELECT count(DISTINCT callsite_id) FROM sample WHERE ts >= 300"), 1);
	CHECK_INT(q_int(st, "SELECT count(*) FROM sample s JOIN callsite c ON c.id = s.callsite_id "
	                "WHERE s.ts = 300 AND c.symbol_id IS NULL AND c.addr = 4660 "
	                "AND c.depth = 1"), 1);
	/* rerunning replaces, never duplicates */
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	CHECK_INT(q_int(st, "SELECT count(*) FROM callsite"), 4);
	CHECK_INT(q_int(st, "SELECT count(*) FROM sample"), 4);
	/* a sample of a task past exit: perf says pid/tid -1; it is kept,
	 * with no thread, and does not fail the derivation */
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 500, 0, -1, -1, s2, 3, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	CHECK_INT(q_int(st, "SELECT count(*) FROM sample"), 5);
	CHECK_INT(q_int(st, "SELECT count(*) FROM sample WHERE ts = 500 AND utid IS NULL "
	                "AND callsite_id IS NOT NULL"), 1);
	CHECK_INT(sptd_col_derive_samples(NULL, tasks), -EINVAL);
	CHECK_INT(sptd_col_derive_samples(st, NULL), -EINVAL);
	sptd_col_tasks_destroy(tasks);
}

int main(void)
{
	char dir[] = "/tmp/sptd-symcap-XXXXXX", path[64];
	struct sptd_store *st = NULL;
	struct sptd_col_symcap *c = NULL;
	int root = geteuid() == 0;

	if (!root)
		fprintf(stderr, "note: not root, kernel symbol checks skipped\n");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/incident.db", dir);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		return SPTD_TEST_END();
	CHECK_INT(sptd_col_symcap_create(NULL, NULL, &c), -EINVAL);
	CHECK_INT(sptd_col_symcap_create(st, NULL, NULL), -EINVAL);
	CHECK_INT(sptd_col_symcap_create(st, NULL, &c), 0);
	if (c) {
		CHECK_INT(sptd_col_symcap_task(c, 0), -EINVAL);
		CHECK_INT(sptd_col_symcap_task(c, 0x3ffffff0), -ENOENT);
		CHECK_INT(sptd_col_symcap_addr(NULL, 1, 0, 0), -EINVAL);
		CHECK_INT(sptd_col_symcap_task(NULL, 1), -EINVAL);
		test_snapshot(st, c, root);
		CHECK_INT(sptd_col_symcap_finish(c), 0);
		test_derive(st, root);
	}
	sptd_col_symcap_destroy(c);
	sptd_col_symcap_destroy(NULL);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	unlink(path);
	rmdir(dir);
	return SPTD_TEST_END();
}
