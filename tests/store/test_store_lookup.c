/* test_store_lookup.c — counts, ids and lookups of store_lookup.c (and the
 * table names of store_schema.c) on real SQLite files: found and not found,
 * NULL matching, u64 addresses, the optional raw_file table before and
 * after it exists, read-only stores; every function's argument checks. */
#include <stdint.h>

#include "store_fixture.h"

static void test_table_names(void)
{
	const char *const *tables = sptd_store_tables();

	for (int i = 0; i < SPTD_STORE_T_COUNT; i++)
		CHECK_STR(sptd_store_table_name((enum sptd_store_table_id)i), tables[i]);
	CHECK_STR(sptd_store_table_name(SPTD_STORE_T_TRIGGER), "trigger");
	CHECK_STR(sptd_store_table_name(SPTD_STORE_T_RAW_SWITCH), "raw_switch");
	CHECK(sptd_store_table_name(SPTD_STORE_T_COUNT) == NULL);
	CHECK(sptd_store_table_name((enum sptd_store_table_id)-1) == NULL);
}

static void test_counts(void)
{
	struct sptd_store *st = fixture_create("count.db");
	int64_t n = -1;

	if (!st)
		return;
	for (int i = 0; i < SPTD_STORE_T_COUNT; i++) {
		n = -1;
		CHECK_INT(sptd_store_count(st, (enum sptd_store_table_id)i, &n), 0);
		/* meta holds schema_version from the start */
		CHECK_INT(n, i == SPTD_STORE_T_META ? 1 : 0);
	}
	CHECK_INT(SPTD_STORE_ADD(st, trigger, 1, 0, "irq", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 0, 1, 0, 1, "S", 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 1, 1, 0, 1, "S", 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 10, 0x1000, 0x2000, 0, 1, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 10, 0x3000, 0x4000, 0, 1, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, -1, 0xffffffff81000000ull, 0xffffffff82000000ull,
	                         0, 2, 0, 0), 0);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_TRIGGER, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SCHED_SLICE, &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(sptd_store_raw_mmap_count(st, 10, &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(sptd_store_raw_mmap_count(st, -1, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(sptd_store_raw_mmap_count(st, 11, &n), 0);
	CHECK_INT(n, 0);
	/* the cached statement sees rows added after its first use */
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 2, 1, 0, 1, "S", 120, 0), 0);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SCHED_SLICE, &n), 0);
	CHECK_INT(n, 3);
	st = fixture_reopen(st);
	if (!st)
		return;
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SCHED_SLICE, &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(sptd_store_raw_mmap_count(st, 10, &n), 0);
	CHECK_INT(n, 2);
	sptd_store_destroy(st);
}

static void test_next_id(void)
{
	static const enum sptd_store_table_id keyed[] = {
		SPTD_STORE_T_PROCESS, SPTD_STORE_T_THREAD, SPTD_STORE_T_SLICE,
		SPTD_STORE_T_SYMBOL, SPTD_STORE_T_DSO, SPTD_STORE_T_CALLSITE,
	};
	struct sptd_store *st = fixture_create("nextid.db");
	int64_t id = -1;

	if (!st)
		return;
	for (size_t i = 0; i < sizeof(keyed) / sizeof(keyed[0]); i++) {
		id = -1;
		CHECK_INT(sptd_store_next_id(st, keyed[i], &id), 0);
		CHECK_INT(id, 1);
	}
	CHECK_INT(SPTD_STORE_ADD(st, dso, 5, "/a", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 2, "/b", NULL), 0);
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_DSO, &id), 0);
	CHECK_INT(id, 6);
	CHECK_INT(SPTD_STORE_ADD(st, process, 41, 100, NULL, NULL), 0);
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_PROCESS, &id), 0);
	CHECK_INT(id, 42);
	CHECK_INT(SPTD_STORE_ADD(st, thread, 7, 100, 41, NULL), 0);
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_THREAD, &id), 0);
	CHECK_INT(id, 8);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 9, "f", 5, 0x10, 4), 0);
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_SYMBOL, &id), 0);
	CHECK_INT(id, 10);
	/* tables whose rows the store numbers */
	id = 77;
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_SCHED_SLICE, &id), -EINVAL);
	CHECK(fixture_has(sptd_store_errmsg(st), "sched_slice"));
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_META, &id), -EINVAL);
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_RAW_PT, &id), -EINVAL);
	CHECK_INT(id, 77);
	st = fixture_reopen(st);
	if (!st)
		return;
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_DSO, &id), 0);
	CHECK_INT(id, 6);
	sptd_store_destroy(st);
}

static void test_finds(void)
{
	struct sptd_store *st = fixture_create("find.db");
	int64_t id;

	if (!st)
		return;
	CHECK_INT(SPTD_STORE_ADD(st, dso, 3, "/bin/b", "bb"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 2, "/bin/a", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, "/bin/a", "aa"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 1, "main", 1, 0x401000, 0x10), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 2, "main", 2, 0x401000, 0x10), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 3, "schedule", -1, 0xffffffff81000000ull, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, -1, 0xffffffff81000000ull, 0xffffffff82000000ull,
	                         0, 3, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 10, 0x400000, 0x401000, 0, 1, 0, 0), 0);
	for (int pass = 0; pass < 2; pass++) {
		/* by path and build-id; NULL matches a row without one */
		id = -1;
		CHECK_INT(sptd_store_dso_find(st, "/bin/a", "aa", &id), 1);
		CHECK_INT(id, 1);
		CHECK_INT(sptd_store_dso_find(st, "/bin/a", NULL, &id), 1);
		CHECK_INT(id, 2);
		id = 77;
		CHECK_INT(sptd_store_dso_find(st, "/bin/a", "cc", &id), 0);
		CHECK_INT(sptd_store_dso_find(st, "/bin/b", NULL, &id), 0);
		CHECK_INT(sptd_store_dso_find(st, "/nope", "aa", &id), 0);
		CHECK_INT(id, 77);
		/* by path alone: the lowest id */
		CHECK_INT(sptd_store_dso_find_path(st, "/bin/a", &id), 1);
		CHECK_INT(id, 1);
		CHECK_INT(sptd_store_dso_find_path(st, "/bin/b", &id), 1);
		CHECK_INT(id, 3);
		id = 77;
		CHECK_INT(sptd_store_dso_find_path(st, "/bin", &id), 0);
		CHECK_INT(id, 77);
		/* symbols by dso, start and name; u64 addresses */
		CHECK_INT(sptd_store_symbol_find(st, 2, 0x401000, "main", &id), 1);
		CHECK_INT(id, 2);
		CHECK_INT(sptd_store_symbol_find(st, -1, 0xffffffff81000000ull, "schedule", &id), 1);
		CHECK_INT(id, 3);
		id = 77;
		CHECK_INT(sptd_store_symbol_find(st, 1, 0x401000, "other", &id), 0);
		CHECK_INT(sptd_store_symbol_find(st, 1, 0x401001, "main", &id), 0);
		CHECK_INT(sptd_store_symbol_find(st, 3, 0x401000, "main", &id), 0);
		CHECK_INT(id, 77);
		/* raw_mmap rows, exactly */
		CHECK_INT(sptd_store_raw_mmap_has(st, -1, 0xffffffff81000000ull,
		                                  0xffffffff82000000ull, 3), 1);
		CHECK_INT(sptd_store_raw_mmap_has(st, 10, 0x400000, 0x401000, 1), 1);
		CHECK_INT(sptd_store_raw_mmap_has(st, 10, 0x400000, 0x402000, 1), 0);
		CHECK_INT(sptd_store_raw_mmap_has(st, 11, 0x400000, 0x401000, 1), 0);
		CHECK_INT(sptd_store_raw_mmap_has(st, 10, 0x400000, 0x401000, 2), 0);
		/* the same answers from the file read-only */
		if (pass == 0) {
			st = fixture_reopen(st);
			if (!st)
				return;
		}
	}
	sptd_store_destroy(st);
}

/* What on_file saw. */
struct file_seen {
	struct fixture_text t;  /* the bytes, as hex */
	int calls;              /* times called */
	int ret;                /* what to return */
};

static int on_file(void *arg, const void *data, size_t len)
{
	struct file_seen *f = arg;

	f->calls++;
	fixture_put_bytes(&f->t, data, len);
	return f->ret;
}

static void test_raw_file(void)
{
	static const unsigned char elf[] = { 0x7f, 'E', 'L', 'F' };
	struct sptd_store *st = fixture_create("file.db");
	struct file_seen f = { .calls = 0 };

	if (!st)
		return;
	/* no raw_file table yet: nothing embedded, no error */
	CHECK_INT(sptd_store_raw_file_read(st, 4, on_file, &f), 0);
	CHECK_INT(f.calls, 0);
	CHECK_INT(sptd_store_raw_file_add(st, 4, "abcd", elf, sizeof(elf)), 0);
	CHECK_INT(sptd_store_raw_file_add(st, 6, NULL, NULL, 0), 0);
	/* the table made after the first lookup is found */
	CHECK_INT(sptd_store_raw_file_read(st, 4, on_file, &f), 1);
	CHECK_INT(f.calls, 1);
	CHECK_STR(f.t.buf, "x7f454c46");
	CHECK_INT(sptd_store_raw_file_read(st, 5, on_file, &f), 0);
	CHECK_INT(sptd_store_raw_file_read(st, 6, on_file, &f), 0); /* empty: none */
	CHECK_INT(f.calls, 1);
	f.ret = -EIO;
	CHECK_INT(sptd_store_raw_file_read(st, 4, on_file, &f), -EIO);
	f.ret = 5;
	CHECK_INT(sptd_store_raw_file_read(st, 4, on_file, &f), 1);
	st = fixture_reopen(st);
	if (!st)
		return;
	memset(&f, 0, sizeof(f));
	CHECK_INT(sptd_store_raw_file_read(st, 4, on_file, &f), 1);
	CHECK_STR(f.t.buf, "x7f454c46");
	sptd_store_destroy(st);
	/* an incident without embedded files, read-only */
	st = fixture_create("nofile.db");
	if (!st)
		return;
	st = fixture_reopen(st);
	if (!st)
		return;
	memset(&f, 0, sizeof(f));
	CHECK_INT(sptd_store_raw_file_read(st, 1, on_file, &f), 0);
	CHECK_INT(f.calls, 0);
	sptd_store_destroy(st);
}

static void test_invalid_args(void)
{
	struct sptd_store *st = fixture_create("inv.db");
	int64_t v = 0;

	CHECK_INT(sptd_store_count(NULL, SPTD_STORE_T_SLICE, &v), -EINVAL);
	CHECK_INT(sptd_store_raw_mmap_count(NULL, 1, &v), -EINVAL);
	CHECK_INT(sptd_store_next_id(NULL, SPTD_STORE_T_DSO, &v), -EINVAL);
	CHECK_INT(sptd_store_dso_find(NULL, "/a", NULL, &v), -EINVAL);
	CHECK_INT(sptd_store_dso_find_path(NULL, "/a", &v), -EINVAL);
	CHECK_INT(sptd_store_symbol_find(NULL, 1, 0, "f", &v), -EINVAL);
	CHECK_INT(sptd_store_raw_mmap_has(NULL, 1, 0, 1, 1), -EINVAL);
	CHECK_INT(sptd_store_raw_file_read(NULL, 1, on_file, NULL), -EINVAL);
	if (!st)
		return;
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SLICE, NULL), -EINVAL);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_COUNT, &v), -EINVAL);
	CHECK(fixture_has(sptd_store_errmsg(st), "no table"));
	CHECK_INT(sptd_store_count(st, (enum sptd_store_table_id)-1, &v), -EINVAL);
	CHECK_INT(sptd_store_raw_mmap_count(st, 1, NULL), -EINVAL);
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_DSO, NULL), -EINVAL);
	CHECK_INT(sptd_store_next_id(st, SPTD_STORE_T_COUNT, &v), -EINVAL);
	CHECK_INT(sptd_store_dso_find(st, NULL, NULL, &v), -EINVAL);
	CHECK_INT(sptd_store_dso_find(st, "/a", NULL, NULL), -EINVAL);
	CHECK_INT(sptd_store_dso_find_path(st, NULL, &v), -EINVAL);
	CHECK_INT(sptd_store_dso_find_path(st, "/a", NULL), -EINVAL);
	CHECK_INT(sptd_store_symbol_find(st, 1, 0, NULL, &v), -EINVAL);
	CHECK_INT(sptd_store_symbol_find(st, 1, 0, "f", NULL), -EINVAL);
	CHECK_INT(sptd_store_raw_file_read(st, 1, NULL, NULL), -EINVAL);
	CHECK(fixture_has(sptd_store_errmsg(st), "fn is NULL"));
	/* the store still works */
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_META, &v), 0);
	CHECK_INT(v, 1);
	sptd_store_destroy(st);
}

int main(void)
{
	fixture_begin();
	test_table_names();
	test_counts();
	test_next_id();
	test_finds();
	test_raw_file();
	test_invalid_args();
	fixture_end();
	return SPTD_TEST_END();
}
