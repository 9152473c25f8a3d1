/* test_store.c — store/ on real SQLite files in a fresh temporary directory:
 * round trip of every table, atomic create/commit/destroy, rejecting bad
 * files, read-only enforcement, update mode, and every function's
 * argument checks. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <dirent.h>

#include "sptd_store.h"
#include "store_count.h"
#include "sptd_test.h"

static char dir[64];

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_dir(void)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A path inside the test directory (static buffer per slot). */
static const char *tpath(int slot, const char *name)
{
	static char paths[8][256];

	snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", dir, name);
	return paths[slot];
}

static int exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

/* Files in the test's directory whose name starts with @prefix. */
static int count_files(const char *prefix)
{
	return count_files_in(dir, prefix);
}

static int has(const char *msg, const char *needle)
{
	if (msg && strstr(msg, needle))
		return 1;
	fprintf(stderr, "message \"%s\" lacks \"%s\"\n", msg ? msg : "(null)", needle);
	return 0;
}

static const unsigned char page_bytes[] = { 0x01, 0x00, 0xff, 0x7f, 0x00, 0x80 };
static const uint64_t chain[] = { 0xfffffffffffffe00ull, 0xffffffff81000010ull,
                                  0xfffffffffffffe00ull - 0x180, 0x401234 };

/* Rows in every table, with NULL variants where the API allows. */
static void fill_all(struct sptd_store *st)
{
	CHECK_INT(sptd_store_meta_set(st, "clock", "monotonic"), 0);
	CHECK_INT(sptd_store_meta_set(st, "clock", "tsc"), 0); /* replaces */
	CHECK_INT(sptd_store_meta_set_int(st, "window_ns", -10000000), 0);
	CHECK_INT(SPTD_STORE_ADD(st, trigger, 1000, 2, "irq", "irq=11"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, process, 1, 100, "app", "app --x"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, process, 2, 200, NULL, NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, thread, 1, 100, 1, "app"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, thread, 2, 101, -1, NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 10, 5, 0, 1, "S", 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 15, 7, 0, 2, NULL, 100, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, thread_state, 10, 5, 1, "Running", 0, -1, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, thread_state, 15, 3, 1, "S", -1, 2, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, irq_slice, 20, 2, 1, 11, "eth0", 1, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, softirq_slice, 22, 4, 1, 3, "NET_RX", 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, "/usr/bin/app", "abcdef01"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 2, "[kernel.kallsyms]", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 1, "main", 1, 0x401000, 0x40), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 2, "schedule", 2, 0xffffffff81000000ull, 0x200), 0);
	CHECK_INT(SPTD_STORE_ADD(st, slice, 1, 30, 10, 0, 1, 0, -1, 1, SPTD_SLICE_USER,
	                         SPTD_SLICE_F_START_TRUNCATED), 0);
	CHECK_INT(SPTD_STORE_ADD(st, slice, 2, 32, 4, 0, 1, 1, 1, -1, SPTD_SLICE_KERNEL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, callsite, 1, -1, 0, 1, 0x401010), 0);
	CHECK_INT(SPTD_STORE_ADD(st, callsite, 2, 1, 1, -1, 0xffffffff81000010ull), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sample, 40, 3, 1, 2), 0);
	CHECK_INT(SPTD_STORE_ADD(st, gap, 50, 6, -1, "overflow"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, gap, 60, 1, 2, "lost sync"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "lost_samples", -1, 7), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "aux_bytes", 1, 4096), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_page, 1, 0, page_bytes, sizeof(page_bytes)), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_page, 1, 1, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_format, "header_page", "field: u64 timestamp;"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 70, 0, 100, 101, chain, 4, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_task, 100, 101, "worker", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, -1, 0xffffffff81000000ull, 0xffffffff82000000ull,
	                         0, 2, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, -1, 0, 4096, 0, 2, 0, 77), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 2, 0, page_bytes, 3), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 3, 5, page_bytes + 3, 3), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_image, 1, 0x401000, page_bytes, sizeof(page_bytes), NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 80, 1, 100, 0, "swapper/1", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 90, 0, 100, 7, "cat", "D"), 0);
}

/* Compare the rows of @sql with @expect: rows joined by '\n', columns by
 * '|', NULL as "N", blobs as hex. */
static void check_rows(struct sptd_store *st, const char *sql, const char *expect)
{
	struct sptd_store_stmt *q = NULL;
	char got[2048] = "";
	size_t n = 0;
	int ret;

	ret = sptd_store_prepare(st, sql, &q);
	CHECK_INT(ret, 0);
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", sql, sptd_store_errmsg(st));
		return;
	}
	while ((ret = sptd_store_step(q)) == 1) {
		for (int c = 0; c < sptd_store_column_count(q); c++) {
			const unsigned char *b;
			size_t len;

			if (c)
				n += snprintf(got + n, sizeof(got) - n, "|");
			switch (sptd_store_column_type(q, c)) {
			case SPTD_STORE_NULL:
				n += snprintf(got + n, sizeof(got) - n, "N");
				break;
			case SPTD_STORE_INT:
				n += snprintf(got + n, sizeof(got) - n, "%" PRId64,
				              sptd_store_column_int(q, c));
				break;
			case SPTD_STORE_FLOAT:
				n += snprintf(got + n, sizeof(got) - n, "%g",
				              sptd_store_column_double(q, c));
				break;
			case SPTD_STORE_TEXT:
				n += snprintf(got + n, sizeof(got) - n, "%s",
				              sptd_store_column_text(q, c));
				break;
			case SPTD_STORE_BLOB:
				b = sptd_store_column_blob(q, c, &len);
				n += snprintf(got + n, sizeof(got) - n, "x");
				for (size_t i = 0; i < len; i++)
					n += snprintf(got + n, sizeof(got) - n, "%02x", b[i]);
				break;
			}
		}
		n += snprintf(got + n, sizeof(got) - n, "\n");
	}
	CHECK_INT(ret, 0);
	sptd_store_finalize(q);
	if (strcmp(got, expect) != 0)
		fprintf(stderr, "%s:\n got:\n%s expected:\n%s", sql, got, expect);
	CHECK_STR(got, expect);
}

static void check_all(struct sptd_store *st)
{
	char buf[64];
	int64_t v;

	check_rows(st, "SELECT key, value FROM meta ORDER BY key",
	           "clock|tsc\nschema_version|8\nwindow_ns|-10000000\n");
	CHECK_INT(sptd_store_meta_get(st, "clock", buf, sizeof(buf)), 3);
	CHECK_STR(buf, "tsc");
	CHECK_INT(sptd_store_meta_get(st, "clock", buf, 2), 3); /* truncated */
	CHECK_STR(buf, "t");
	CHECK_INT(sptd_store_meta_get_int(st, "window_ns", &v), 0);
	CHECK_INT(v, -10000000);
	CHECK_INT(sptd_store_meta_get_int(st, "schema_version", &v), 0);
	CHECK_INT(v, SPTD_STORE_SCHEMA_VERSION);
	CHECK_INT(sptd_store_meta_get(st, "nope", buf, sizeof(buf)), -ENOENT);
	CHECK(has(sptd_store_errmsg(st), "nope"));
	CHECK_INT(sptd_store_meta_get_int(st, "clock", &v), -EINVAL);
	check_rows(st, "SELECT * FROM trigger", "1|1000|2|irq|irq=11\n");
	check_rows(st, "SELECT * FROM process ORDER BY upid", "1|100|app|app --x\n2|200|N|N\n");
	check_rows(st, "SELECT * FROM thread ORDER BY utid", "1|100|1|app\n2|101|N|N\n");
	check_rows(st, "SELECT * FROM sched_slice ORDER BY id",
	           "1|10|5|0|1|S|120|0\n2|15|7|0|2|N|100|0\n");
	check_rows(st, "SELECT * FROM thread_state ORDER BY id",
	           "1|10|5|1|Running|0|N|0|N|N\n2|15|3|1|S|N|2|0|N|N\n");
	check_rows(st, "SELECT * FROM irq_slice", "1|20|2|1|11|eth0|1|0\n");
	check_rows(st, "SELECT * FROM softirq_slice", "1|22|4|1|3|NET_RX|0\n");
	check_rows(st, "SELECT * FROM slice ORDER BY id",
	           "1|30|10|0|1|0|N|1|user|1\n2|32|4|0|1|1|1|N|kernel|0\n");
	check_rows(st, "SELECT * FROM dso ORDER BY id",
	           "1|/usr/bin/app|abcdef01\n2|[kernel.kallsyms]|N\n");
	/* u64 addresses are stored as their two's-complement int64 */
	check_rows(st, "SELECT * FROM symbol ORDER BY id",
	           "1|main|1|4198400|64\n2|schedule|2|-2130706432|512\n");
	check_rows(st, "SELECT * FROM callsite ORDER BY id",
	           "1|N|0|1|4198416\n2|1|1|N|-2130706416\n");
	check_rows(st, "SELECT * FROM sample", "1|40|3|1|2\n");
	check_rows(st, "SELECT * FROM gap ORDER BY id", "1|50|6|N|overflow\n2|60|1|2|lost sync\n");
	check_rows(st, "SELECT * FROM stats ORDER BY name",
	           "aux_bytes|1|4096\nlost_samples|N|7\n");
	check_rows(st, "SELECT cpu, seq, data, typeof(data) FROM raw_ftrace_page ORDER BY seq",
	           "1|0|x0100ff7f0080|blob\n1|1|x|blob\n");
	check_rows(st, "SELECT * FROM raw_ftrace_format", "header_page|field: u64 timestamp;\n");
	/* callchain: little-endian u64s */
	check_rows(st, "SELECT ts, cpu, pid, tid, callchain FROM raw_sample",
	           "70|0|100|101|x00feffffffffffff10000081ffffffff80fcffffffffffff3412400000000000\n");
	check_rows(st, "SELECT * FROM raw_task", "100|101|worker|N\n");
	check_rows(st, "SELECT * FROM raw_mmap", "-1|-2130706432|-2113929216|0|2|0|N\n"
	           "-1|0|4096|0|2|0|77\n");
	check_rows(st, "SELECT * FROM raw_pt", "2|0|x0100ff\n");
	check_rows(st, "SELECT * FROM raw_sideband", "3|5|x7f0080\n");
	check_rows(st, "SELECT * FROM raw_image", "1|4198400|x0100ff7f0080\n");
	check_rows(st, "SELECT ts, cpu, prev_tid, next_tid, next_comm, coalesce(prev_state, "
	           "'NULL') FROM raw_switch", "80|1|100|0|swapper/1|NULL\n90|0|100|7|cat|D\n");
}

static void test_roundtrip(void)
{
	const char *path = tpath(0, "a.db");
	const char *const *tables = sptd_store_tables();
	struct sptd_store *st = NULL;
	struct stat sb;
	mode_t old_umask;
	int n;

	old_umask = umask(0); /* the file must be 0600 whatever the umask */
	CHECK_INT(sptd_store_create(path, &st), 0);
	umask(old_umask);
	if (!st)
		return;
	CHECK_STR(sptd_store_path(st), path);
	CHECK_INT(count_files("a.db.tmp."), 1);
	CHECK(!exists(path));
	fill_all(st);
	/* readable before commit, on the same connection */
	CHECK_INT(count(st, "SELECT count(*) FROM slice"), 2);
	CHECK_INT(sptd_store_commit(st), 0);
	CHECK(exists(path));
	CHECK_INT(count_files("a.db.tmp."), 0);
	CHECK_INT(stat(path, &sb), 0);
	CHECK_INT(sb.st_mode & 0777, 0600);
	/* after commit: reads only; other readers are not locked out */
	CHECK_INT(count(st, "SELECT count(*) FROM gap"), 2);
	{
		struct sptd_store *other = NULL;

		CHECK_INT(sptd_store_open(path, 0, &other), 0);
		if (!other)
			fprintf(stderr, "%s\n", sptd_store_errmsg(NULL));
		CHECK_INT(count(other, "SELECT count(*) FROM raw_pt"), 1);
		sptd_store_destroy(other);
	}
	CHECK_INT(SPTD_STORE_ADD(st, gap, 1, 1, 0, "x"), -EROFS);
	CHECK(has(sptd_store_errmsg(st), "committed"));
	CHECK_INT(sptd_store_commit(st), -EINVAL);
	sptd_store_destroy(st);
	CHECK(exists(path));

	st = NULL;
	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	if (!st)
		return;
	check_all(st);
	for (n = 0; tables[n]; n++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_schema WHERE "
		         "type = 'table' AND name = '%s'", tables[n]);
		CHECK_INT(count(st, sql), 1);
	}
	CHECK_INT(n, 31);
	CHECK_STR(tables[0], "meta");
	CHECK_STR(tables[14], "stats");
	CHECK_STR(tables[15], "raw_ftrace_page");
	CHECK_STR(tables[23], "raw_switch");
	CHECK_STR(tables[24], "ftrace_event");
	CHECK_STR(tables[25], "cpu_freq");
	CHECK_STR(tables[26], "cpu_idle");
	CHECK_STR(tables[27], "ptwrite");
	CHECK_STR(tables[28], "watch_hit");
	CHECK_STR(tables[29], "mem_sample");
	CHECK_STR(tables[30], "raw_spe");
	CHECK_INT(count(st, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"), 31);
	CHECK_INT(count(st, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' "
	                    "AND sql IS NOT NULL"), 12);
	check_rows(st, "SELECT name FROM pragma_index_list('slice') ORDER BY name",
	           "slice_parent_id\nslice_utid_ts\n");
	sptd_store_destroy(st);
}

static void test_destroy_before_commit(void)
{
	const char *path = tpath(0, "b.db");
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_store_create(path, &st), 0);
	fill_all(st);
	CHECK_INT(count_files("b.db.tmp."), 1);
	sptd_store_destroy(st);
	CHECK(!exists(path));
	CHECK_INT(count_files("b.db"), 0);
}

static void test_exists(void)
{
	const char *path = tpath(0, "c.db");
	struct sptd_store *st = NULL;
	char buf[16] = "";
	int fd;

	fd = open(path, O_CREAT | O_WRONLY, 0644);
	CHECK(write(fd, "keep", 4) == 4);
	close(fd);
	CHECK_INT(sptd_store_create(path, &st), -EEXIST);
	CHECK(st == NULL);
	CHECK(has(sptd_store_errmsg(NULL), path));
	CHECK_INT(count_files("c.db.tmp."), 0);

	/* PATH appearing while the incident is written: commit refuses. */
	path = tpath(0, "d.db");
	CHECK_INT(sptd_store_create(path, &st), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "x", -1, 1), 0);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	CHECK(write(fd, "keep", 4) == 4);
	close(fd);
	CHECK_INT(sptd_store_commit(st), -EEXIST);
	CHECK(has(sptd_store_errmsg(st), "appeared"));
	sptd_store_destroy(st);
	CHECK_INT(count_files("d.db.tmp."), 0);
	fd = open(path, O_RDONLY);
	CHECK(read(fd, buf, sizeof(buf)) == 4);
	close(fd);
	CHECK_STR(buf, "keep");
}

/* Open @path read-only and expect @err with @needle in the message. */
static void expect_open_fails(const char *path, int writable, int err, const char *needle)
{
	struct sptd_store *st = (struct sptd_store *)&st; /* must be reset to NULL */

	CHECK_INT(sptd_store_open(path, writable, &st), err);
	CHECK(st == NULL);
	CHECK(has(sptd_store_errmsg(NULL), path));
	CHECK(has(sptd_store_errmsg(NULL), needle));
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);

	CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len);
	close(fd);
}

static void test_bad_files(void)
{
	const char *path = tpath(0, "bad.db");
	unsigned char junk[8192];
	struct sptd_store *st = NULL;
	sqlite3 *db = NULL;
	struct stat sb;

	expect_open_fails(tpath(1, "missing.db"), 0, -ENOENT, "no such file");

	srand(42);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rand();
	write_file(path, junk, sizeof(junk));
	expect_open_fails(path, 0, -EBADMSG, "not a sysptd incident");
	expect_open_fails(path, 1, -EBADMSG, "not a database");

	write_file(path, "", 0);
	expect_open_fails(path, 0, -EBADMSG, "empty");
	expect_open_fails(path, 1, -EBADMSG, "empty");

	/* SQLite's own header but garbage after it */
	memcpy(junk, "SQLite format 3", 16);
	write_file(path, junk, sizeof(junk));
	st = NULL;
	CHECK_INT(sptd_store_open(path, 0, &st), -EBADMSG);
	CHECK(has(sptd_store_errmsg(NULL), path));

	/* a real SQLite database that is not an incident */
	unlink(path);
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "CREATE TABLE foo (x); INSERT INTO foo VALUES (1)",
	                       NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	expect_open_fails(path, 0, -EBADMSG, "no meta table");
	expect_open_fails(path, 1, -EBADMSG, "no meta table");
	/* ... with a meta table but no version */
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
	                       NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	expect_open_fails(path, 0, -EBADMSG, "schema_version");

	/* a truncated incident */
	path = tpath(0, "trunc.db");
	CHECK_INT(sptd_store_create(path, &st), 0);
	for (int i = 0; i < 20000; i++)
		SPTD_STORE_ADD(st, slice, i, i * 10, 5, 0, 1, 0, -1, -1, SPTD_SLICE_USER, 0);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	CHECK_INT(stat(path, &sb), 0);
	/* damage in the middle: opens (the header is fine), queries fail */
	{
		unsigned char ff[4096];
		int64_t v = 0;
		int fd = open(path, O_WRONLY);

		memset(ff, 0xff, sizeof(ff));
		/* pages 1-4 (schema, meta, its index) stay; the start of every later
		 * 16 KiB (the page size) is overwritten */
		for (off_t off = 65536; off + (off_t)sizeof(ff) <= sb.st_size;
		     off += 16384)
			CHECK(pwrite(fd, ff, sizeof(ff), off) == (ssize_t)sizeof(ff));
		close(fd);
		st = NULL;
		CHECK_INT(sptd_store_open(path, 0, &st), 0);
		CHECK_INT(sptd_store_query_int(st, "SELECT sum(dur) FROM slice", &v), -EBADMSG);
		CHECK(has(sptd_store_errmsg(st), "malformed"));
		CHECK(has(sptd_store_errmsg(st), path));
		sptd_store_destroy(st);
	}
	CHECK_INT(truncate(path, sb.st_size / 2), 0);
	expect_open_fails(path, 0, -EBADMSG, "truncated");
	CHECK_INT(truncate(path, 50), 0);
	expect_open_fails(path, 0, -EBADMSG, "not a database");
}

static void test_newer_schema(void)
{
	const char *path = tpath(0, "new.db");
	struct sptd_store *st = NULL;
	struct sptd_store_stmt *q = NULL;
	char sql[128];

	CHECK_INT(sptd_store_create(path, &st), 0);
	CHECK_INT(sptd_store_meta_set(st, "schema_version", "2"), -EINVAL);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);

	CHECK_INT(sptd_store_open(path, 1, &st), 0);
	snprintf(sql, sizeof(sql), "UPDATE meta SET value = '%d' WHERE key = 'schema_version'",
	         SPTD_STORE_SCHEMA_VERSION + 1);
	CHECK_INT(sptd_store_prepare(st, sql, &q), 0);
	CHECK_INT(sptd_store_step(q), 0);
	sptd_store_finalize(q);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	expect_open_fails(path, 0, -EPROTO, "newer sysptd");
	expect_open_fails(path, 1, -EPROTO, "newer sysptd");
}

static void test_read_only(void)
{
	const char *path = tpath(0, "a.db");
	struct sptd_store *st = NULL;
	struct sptd_store_stmt *q = NULL;
	int64_t v = 0;

	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_prepare(st, "INSERT INTO gap (ts, dur, reason) VALUES (1, 2, 'x')",
	                             &q), -EROFS);
	CHECK(q == NULL);
	CHECK(has(sptd_store_errmsg(st), "query is read-only"));
	CHECK_INT(sptd_store_prepare(st, "DELETE FROM slice", &q), -EROFS);
	CHECK_INT(sptd_store_prepare(st, "DROP TABLE meta", &q), -EROFS);
	CHECK_INT(sptd_store_prepare(st, "SELEC 1", &q), -EINVAL);
	CHECK(has(sptd_store_errmsg(st), "syntax error"));
	CHECK_INT(sptd_store_prepare(st, "SELECT * FROM no_such_table", &q), -EINVAL);
	CHECK(has(sptd_store_errmsg(st), "no_such_table"));
	CHECK_INT(sptd_store_prepare(st, "BEGIN", &q), -EINVAL);
	CHECK_INT(sptd_store_prepare(st, "ATTACH 'x.db' AS x", &q), -EINVAL);
	CHECK_INT(sptd_store_prepare(st, "SELECT 1; SELECT 2", &q), -EINVAL);
	CHECK_INT(sptd_store_prepare(st, "  -- nothing\n", &q), -EINVAL);
	CHECK_INT(sptd_store_prepare(st, "SELECT 1; -- trailing comment\n", &q), 0);
	sptd_store_finalize(q);
	q = NULL;
	CHECK_INT(SPTD_STORE_ADD(st, gap, 1, 1, 0, "x"), -EROFS);
	CHECK(has(sptd_store_errmsg(st), "read-only"));
	CHECK_INT(sptd_store_meta_set(st, "k", "v"), -EROFS);
	CHECK_INT(sptd_store_table_clear(st, "slice"), -EROFS);
	CHECK_INT(sptd_store_commit(st), -EROFS);
	CHECK_INT(count(st, "SELECT count(*) FROM slice"), 2);

	/* bind, reset, rerun */
	CHECK_INT(sptd_store_prepare(st, "SELECT count(*) FROM slice WHERE kind = ?1 AND "
	                                 "depth >= ?2", &q), 0);
	CHECK_INT(sptd_store_bind_text(q, 1, "kernel"), 0);
	CHECK_INT(sptd_store_bind_int(q, 2, 1), 0);
	CHECK_INT(sptd_store_step(q), 1);
	CHECK_INT(sptd_store_column_int(q, 0), 1);
	CHECK_STR(sptd_store_column_name(q, 0), "count(*)");
	CHECK(sptd_store_column_name(q, 1) == NULL);
	CHECK_INT(sptd_store_column_type(q, 1), SPTD_STORE_NULL);
	CHECK_INT(sptd_store_column_int(q, 7), 0);
	CHECK(sptd_store_column_text(q, -1) == NULL);
	CHECK_INT(sptd_store_step(q), 0);
	CHECK_INT(sptd_store_reset(q), 0);
	CHECK_INT(sptd_store_bind_int(q, 2, 0), 0);
	CHECK_INT(sptd_store_bind_text(q, 1, NULL), 0);
	CHECK_INT(sptd_store_step(q), 1);
	CHECK_INT(sptd_store_column_int(q, 0), 0);
	CHECK_INT(sptd_store_bind_int(q, 1, 0), -EINVAL); /* still running */
	CHECK(has(sptd_store_errmsg(st), "reset"));
	CHECK_INT(sptd_store_reset(q), 0);
	CHECK_INT(sptd_store_bind_int(q, 3, 0), -EINVAL);
	CHECK(has(sptd_store_errmsg(st), "parameter 3"));
	{
		struct sptd_store_stmt *t = NULL;
		size_t n = 99;
		const char *a, *b;

		CHECK_INT(sptd_store_prepare(st, "SELECT 'ab' || char(0) || 'cd', char(0) || 'x', "
		                                 "'plain', NULL", &t), 0);
		CHECK_INT(sptd_store_step(t), 1);
		a = sptd_store_column_text(t, 0);
		b = sptd_store_column_text(t, 1);
		CHECK_STR(a, "ab?cd");
		CHECK_STR(b, "?x");
		CHECK_STR(sptd_store_column_text(t, 2), "plain");
		CHECK(sptd_store_column_text(t, 3) == NULL);
		a = sptd_store_column_text_n(t, 0, &n);
		CHECK_INT(n, 5);
		CHECK(a && memcmp(a, "ab\0cd", 5) == 0);
		CHECK(sptd_store_column_text_n(t, 3, &n) == NULL);
		CHECK_INT(n, 0);
		CHECK(sptd_store_column_text_n(t, 9, &n) == NULL);
		CHECK_INT(n, 0);
		sptd_store_finalize(t);
	}
	CHECK_INT(sptd_store_query_int(st, "SELECT max(ts) FROM slice WHERE 0", &v), -ENOENT);
	CHECK_INT(sptd_store_query_int(st, "SELECT 1 WHERE 0", &v), -ENOENT);
	CHECK_INT(sptd_store_query_int(st, "SELECT 2.5e0 * 4", &v), 0);
	CHECK_INT(v, 10);
	/* a statement that outlives its store fails cleanly */
	sptd_store_destroy(st);
	CHECK_INT(sptd_store_step(q), -EINVAL);
	CHECK_INT(sptd_store_column_count(q), -EINVAL);
	sptd_store_finalize(q);
}

static void test_table_clear_rules(void)
{
	const char *path = tpath(0, "clear.db");
	const char *bad[] = { "raw_pt", "raw_ftrace_page", "meta", "trigger", "symbol",
	                      "dso", "nope", "slice; DROP TABLE meta" };
	const char *good[] = { "process", "thread", "sched_slice", "thread_state",
	                       "irq_slice", "softirq_slice", "slice", "sample",
	                       "callsite", "gap", "stats" };
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_store_create(path, &st), 0);
	fill_all(st);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(sptd_store_table_clear(st, bad[i]), -EINVAL);
	CHECK(has(sptd_store_errmsg(st), "derived"));
	CHECK_INT(sptd_store_table_clear(st, NULL), -EINVAL);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK_INT(sptd_store_table_clear(st, good[i]), 0);
	CHECK_INT(count(st, "SELECT count(*) FROM slice"), 0);
	CHECK_INT(count(st, "SELECT count(*) FROM raw_pt"), 1);
	CHECK_INT(count(st, "SELECT count(*) FROM symbol"), 2);
	sptd_store_destroy(st);
}

static void test_update(void)
{
	const char *path = tpath(0, "a.db");
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_store_open(path, 1, &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_table_clear(st, "slice"), 0);
	CHECK_INT(count(st, "SELECT count(*) FROM slice"), 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT(SPTD_STORE_ADD(st, slice, 10 + i, 100 + i, 1, 0, 1, 0, -1, -1,
		                         SPTD_SLICE_SYSCALL, 0), 0);
	/* caller-chosen ids: a duplicate is the caller's mistake, not fatal */
	CHECK_INT(SPTD_STORE_ADD(st, slice, 10, 1, 1, 0, 1, 0, -1, -1, SPTD_SLICE_IRQ, 0),
	          -EINVAL);
	CHECK(has(sptd_store_errmsg(st), "slice.id"));
	CHECK_INT(sptd_store_meta_set(st, "decoded", "yes"), 0);
	CHECK_INT(sptd_store_commit(st), 0);
	CHECK_INT(SPTD_STORE_ADD(st, slice, 20, 1, 1, 0, 1, 0, -1, -1, SPTD_SLICE_IRQ, 0),
	          -EROFS);
	sptd_store_destroy(st);

	st = NULL;
	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	CHECK_INT(count(st, "SELECT count(*) FROM slice"), 3);
	CHECK_INT(count(st, "SELECT count(*) FROM slice WHERE kind = 'syscall'"), 3);
	CHECK_INT(count(st, "SELECT count(*) FROM pragma_index_list('slice')"), 2);
	CHECK_INT(count(st, "SELECT count(*) FROM raw_pt"), 1);
	sptd_store_destroy(st);

	/* destroy without commit rolls back */
	st = NULL;
	CHECK_INT(sptd_store_open(path, 1, &st), 0);
	CHECK_INT(sptd_store_table_clear(st, "slice"), 0);
	CHECK_INT(sptd_store_table_clear(st, "sched_slice"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 1, 1, 0, 1, "R", 1, 0), 0);
	sptd_store_destroy(st);
	st = NULL;
	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	CHECK_INT(count(st, "SELECT count(*) FROM slice"), 3);
	CHECK_INT(count(st, "SELECT count(*) FROM sched_slice"), 2);
	CHECK_INT(count(st, "SELECT count(*) FROM pragma_index_list('sched_slice')"), 2);
	sptd_store_destroy(st);
	CHECK_INT(count_files("a.db-journal"), 0);
}

/* Every public function with NULL or out-of-range arguments. */
static void test_invalid_args(void)
{
	const char *path = tpath(0, "inv.db");
	struct sptd_store *st = NULL;
	struct sptd_store_stmt *q = NULL;
	uint64_t one = 1;
	char buf[8];
	int64_t v;

	CHECK_INT(sptd_store_create(NULL, &st), -EINVAL);
	CHECK_INT(sptd_store_create("", &st), -EINVAL);
	CHECK_INT(sptd_store_create(path, NULL), -EINVAL);
	CHECK_INT(sptd_store_create(tpath(1, "no/such/dir.db"), &st), -ENOENT);
	CHECK(has(sptd_store_errmsg(NULL), "no/such/dir.db"));
	CHECK_INT(sptd_store_open(NULL, 0, &st), -EINVAL);
	CHECK_INT(sptd_store_open(path, 0, NULL), -EINVAL);
	CHECK_INT(sptd_store_open(path, 2, &st), -EINVAL);
	CHECK_INT(sptd_store_commit(NULL), -EINVAL);
	sptd_store_destroy(NULL);
	CHECK(sptd_store_errmsg(NULL) != NULL);
	CHECK(sptd_store_path(NULL) == NULL);
	CHECK_INT(sptd_store_meta_set(NULL, "k", "v"), -EINVAL);
	CHECK_INT(sptd_store_meta_set_int(NULL, "k", 1), -EINVAL);
	CHECK_INT(sptd_store_meta_get(NULL, "k", buf, sizeof(buf)), -EINVAL);
	CHECK_INT(sptd_store_meta_get_int(NULL, "k", &v), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, trigger, 0, 0, "irq", NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, process, 1, 1, "a", NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, thread, 1, 1, 1, "a"), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, sched_slice, 0, 0, 0, 0, NULL, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, thread_state, 0, 0, 0, "R", 0, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, irq_slice, 0, 0, 0, 0, "a", 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, softirq_slice, 0, 0, 0, 0, "a", 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, slice, 0, 0, 0, 0, 0, 0, -1, -1, "user", 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, dso, 0, "a", NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, symbol, 0, "a", 0, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, sample, 0, 0, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, callsite, 0, -1, 0, -1, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, gap, 0, 0, 0, "a"), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, stats, "a", 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_ftrace_page, 0, 0, buf, 1), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_ftrace_format, "a", "b"), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_sample, 0, 0, 0, 0, &one, 1, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_task, 0, 0, "a", NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_mmap, 0, 0, 1, 0, 0, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_mmap, 0, 0, 1, 0, 0, 0, 5), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_pt, 0, 0, buf, 1), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_sideband, 0, 0, buf, 1), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_image, 0, 0, buf, 1, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(NULL, raw_switch, 0, 0, 0, 0, "a", NULL), -EINVAL);
	CHECK_INT(sptd_store_table_clear(NULL, "slice"), -EINVAL);
	CHECK_INT(sptd_store_prepare(NULL, "SELECT 1", &q), -EINVAL);
	CHECK_INT(sptd_store_bind_int(NULL, 1, 0), -EINVAL);
	CHECK_INT(sptd_store_bind_text(NULL, 1, "a"), -EINVAL);
	CHECK_INT(sptd_store_step(NULL), -EINVAL);
	CHECK_INT(sptd_store_reset(NULL), -EINVAL);
	CHECK_INT(sptd_store_column_count(NULL), -EINVAL);
	CHECK(sptd_store_column_name(NULL, 0) == NULL);
	CHECK_INT(sptd_store_column_type(NULL, 0), SPTD_STORE_NULL);
	CHECK_INT(sptd_store_column_int(NULL, 0), 0);
	CHECK(sptd_store_column_double(NULL, 0) == 0.0);
	CHECK(sptd_store_column_text(NULL, 0) == NULL);
	CHECK(sptd_store_column_blob(NULL, 0, NULL) == NULL);
	sptd_store_finalize(NULL);
	CHECK_INT(sptd_store_query_int(NULL, "SELECT 1", &v), -EINVAL);

	/* out-of-range arguments on a live store: each names what failed */
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_meta_set(st, NULL, "v"), -EINVAL);
	CHECK_INT(sptd_store_meta_set(st, "k", NULL), -EINVAL);
	CHECK_INT(sptd_store_meta_set_int(st, "", 1), -EINVAL);
	CHECK_INT(sptd_store_meta_get(st, NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_INT(sptd_store_meta_get(st, "k", NULL, 1), -EINVAL);
	CHECK_INT(sptd_store_meta_get(st, "k", buf, 0), -EINVAL);
	CHECK_INT(sptd_store_meta_get_int(st, "k", NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, trigger, 0, 0, NULL, NULL), -EINVAL);
	CHECK(has(sptd_store_errmsg(st), "trigger"));
	CHECK_INT(SPTD_STORE_ADD(st, process, -1, 1, "a", NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, thread, -1, 1, 1, "a"), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 0, -1, 0, 0, NULL, 0, 0), -EINVAL);
	CHECK(has(sptd_store_errmsg(st), "sched_slice"));
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 0, 0, -1, 0, NULL, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, thread_state, 0, 0, 0, NULL, 0, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, thread_state, 0, -5, 0, "R", 0, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, irq_slice, 0, -1, 0, 0, "a", 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, softirq_slice, 0, 0, -1, 0, "a", 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, slice, 0, 0, 0, 0, 0, 0, -1, -1, "bogus", 0), -EINVAL);
	CHECK(has(sptd_store_errmsg(st), "kind"));
	CHECK_INT(SPTD_STORE_ADD(st, slice, 0, 0, 0, 0, 0, 0, -1, -1, NULL, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, slice, -1, 0, 0, 0, 0, 0, -1, -1, "user", 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, slice, 0, 0, 0, 0, 0, -1, -1, -1, "user", 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 0, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 0, NULL, 0, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, sample, 0, -1, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, callsite, -1, -1, 0, -1, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, gap, 0, 0, 0, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, stats, NULL, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_page, 0, 0, NULL, 4), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_page, -1, 0, buf, 1), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_format, NULL, "b"), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_format, "a", NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 0, 0, 0, 0, NULL, 3, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 0, 2, 1, 0, 0, 0, 0), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 0, 2, 1, 0, 0, 0, 5), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 0, -1, buf, 1), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 0, 0, NULL, 1), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_image, 0, 0, NULL, 1, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 0, -1, 0, 0, "a", NULL), -EINVAL);
	CHECK_INT(sptd_store_prepare(st, NULL, &q), -EINVAL);
	CHECK_INT(sptd_store_prepare(st, "SELECT 1", NULL), -EINVAL);
	CHECK_INT(sptd_store_query_int(st, NULL, &v), -EINVAL);
	CHECK_INT(sptd_store_query_int(st, "SELECT 1", NULL), -EINVAL);
	/* none of the rejected rows reached the file, and the store still works */
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 0, 0, 0, 0, NULL, 0, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(count(st, "SELECT count(*) FROM slice"), 0);
	CHECK_INT(count(st, "SELECT count(*) FROM meta"), 1);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/sptd-store-XXXXXX");
	if (!mkdtemp(dir))
		SPTD_SKIP("cannot make a temporary directory");
	test_roundtrip();
	test_destroy_before_commit();
	test_exists();
	test_bad_files();
	test_newer_schema();
	test_read_only();
	test_table_clear_rules();
	test_update();
	test_invalid_args();
	rm_dir();
	return SPTD_TEST_END();
}
