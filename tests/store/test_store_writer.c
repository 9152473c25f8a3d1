/* test_store_writer.c — the bulk write path (store_rows.c
 * sptd_store_slices_add) and the bulk writer thread (store_writer.c):
 *  - slices added in bulk are the rows the one-row function stores, for
 *    counts below, at and above one statement's worth (64) and mixed
 *    NULLs; a bad row anywhere refuses the call with nothing added;
 *  - rows queued through a writer (slices, symbols, gaps, stats, mixed and
 *    interleaved, more than several batches) arrive in order, the same
 *    rows as the direct functions give;
 *  - a failure inside the writer (a bad row) is returned by finish and by
 *    later calls, the rows before it are in, none after it;
 *  - every function's invalid arguments. */
#include "store_fixture.h"

/* A slice row with values made from @i (some NULL parent/symbol). */
static struct sptd_store_slice_row slice_row(int64_t i)
{
	static const char *const kinds[] = { SPTD_SLICE_USER, SPTD_SLICE_KERNEL,
	                                     SPTD_SLICE_SYSCALL, SPTD_SLICE_IRQ };

	return (struct sptd_store_slice_row){
		.id = i + 1, .ts = 1000 + 7 * i, .dur = i % 13, .cpu = (int)(i % 3),
		.utid = i % 5, .depth = (int)(i % 4), .parent_id = i % 4 ? i : -1,
		.symbol_id = i % 6 ? 100 + i % 50 : -1, .kind = kinds[i % 4], .flags = (int)(i % 32),
	};
}

/* Every slice row, in id order, as text. */
static void dump_slices(struct sptd_store *st, char **out, size_t *len)
{
	struct sptd_store_stmt *q = NULL;
	FILE *f = open_memstream(out, len);
	int ret = sptd_store_prepare(st, "SELECT * FROM slice ORDER BY id", &q);

	while (ret >= 0 && (ret = sptd_store_step(q)) == 1) {
		for (int c = 0; c < sptd_store_column_count(q); c++) {
			const char *v = sptd_store_column_text(q, c);

			fprintf(f, "%s|", v ? v : "N");
		}
		fputc('\n', f);
	}
	CHECK_INT(ret, 0);
	sptd_store_finalize(q);
	fclose(f);
}

/* @n rows through sptd_store_slices_add and through sptd_store_slice_add
 * one by one: the same table. */
static void bulk_equals_one_by_one(size_t n)
{
	struct sptd_store_slice_row *rows = calloc(n + 1, sizeof(*rows));
	struct sptd_store *a = fixture_create("bulk.incident");
	struct sptd_store *b = fixture_create("one.incident");
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0, i;
	int bad = 0;

	for (i = 0; i < n; i++)
		rows[i] = slice_row((int64_t)i);
	CHECK_INT(sptd_store_slices_add(a, rows, n), 0);
	for (i = 0; i < n; i++)
		bad |= SPTD_STORE_ADD(b, slice, rows[i].id, rows[i].ts, rows[i].dur, rows[i].cpu,
		                      rows[i].utid, rows[i].depth, rows[i].parent_id,
		                      rows[i].symbol_id, rows[i].kind, rows[i].flags) < 0;
	CHECK(!bad);
	dump_slices(a, &ta, &la);
	dump_slices(b, &tb, &lb);
	CHECK(la == lb && memcmp(ta, tb, la) == 0);
	CHECK_INT(la > 0, n > 0);
	free(ta);
	free(tb);
	free(rows);
	sptd_store_destroy(a);
	sptd_store_destroy(b);
	unlink(fixture_path(0, "bulk.incident"));
	unlink(fixture_path(0, "one.incident"));
}

/* A bad row refuses the whole call. */
static void bulk_refuses(void)
{
	struct sptd_store_slice_row rows[200];
	struct sptd_store *st = fixture_create("refuse.incident");
	int64_t n = -1;

	for (int i = 0; i < 200; i++)
		rows[i] = slice_row(i);
	rows[150].kind = "bogus";
	CHECK_INT(sptd_store_slices_add(st, rows, 200), -EINVAL);
	CHECK(fixture_has(sptd_store_errmsg(st), "kind is not one of"));
	rows[150].kind = SPTD_SLICE_USER;
	rows[70].dur = -1;
	CHECK_INT(sptd_store_slices_add(st, rows, 200), -EINVAL);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SLICE, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(sptd_store_slices_add(NULL, rows, 1), -EINVAL);
	CHECK_INT(sptd_store_slices_add(st, NULL, 1), -EINVAL);
	CHECK_INT(sptd_store_slices_add(st, NULL, 0), 0);
	sptd_store_destroy(st);
	unlink(fixture_path(0, "refuse.incident"));
}

/* Mixed rows through a writer, and the same rows directly: same tables. */
static void writer_equals_direct(void)
{
	struct sptd_store *a = fixture_create("writer.incident");
	struct sptd_store *b = fixture_create("direct.incident");
	struct sptd_store_writer *w = NULL;
	const char *const sql[] = {
		"SELECT * FROM slice ORDER BY id", "SELECT * FROM symbol ORDER BY id",
		"SELECT * FROM gap ORDER BY id", "SELECT * FROM stats ORDER BY rowid",
	};
	int bad = 0;

	CHECK_INT(sptd_store_writer_start(a, &w), 0);
	for (int64_t i = 0; i < 20000 && w; i++) {
		struct sptd_store_slice_row r = slice_row(i);
		char name[32];

		bad |= sptd_store_writer_slices(w, &r, 1) < 0;
		bad |= sptd_store_slices_add(b, &r, 1) < 0;
		if (i % 97 == 0) {
			snprintf(name, sizeof(name), "fn_%" PRId64, i);
			bad |= sptd_store_writer_symbol(w, 100 + i, name, 3, 0x1000 + (uint64_t)i, 16) < 0;
			bad |= SPTD_STORE_ADD(b, symbol, 100 + i, name, 3, 0x1000 + (uint64_t)i, 16) < 0;
		}
		if (i % 1013 == 0) {
			bad |= sptd_store_writer_gap(w, i, 5, (int)(i % 2), "pt: a gap") < 0;
			bad |= SPTD_STORE_ADD(b, gap, i, 5, (int)(i % 2), "pt: a gap") < 0;
			bad |= sptd_store_writer_stat(w, "calls", (int)(i % 2), i) < 0;
			bad |= SPTD_STORE_ADD(b, stats, "calls", (int)(i % 2), i) < 0;
		}
	}
	CHECK(!bad);
	CHECK_INT(sptd_store_writer_finish(w), 0);
	/* the store is the caller's again */
	CHECK_INT(sptd_store_meta_set(a, "after", "writer"), 0);
	for (size_t k = 0; k < sizeof(sql) / sizeof(sql[0]); k++) {
		struct sptd_store_stmt *qa = NULL, *qb = NULL;
		int ra, rb, same = 1, rows = 0;

		CHECK_INT(sptd_store_prepare(a, sql[k], &qa), 0);
		CHECK_INT(sptd_store_prepare(b, sql[k], &qb), 0);
		do {
			ra = sptd_store_step(qa);
			rb = sptd_store_step(qb);
			same &= ra == rb;
			for (int c = 0; ra == 1 && same && c < sptd_store_column_count(qa); c++) {
				const char *x = sptd_store_column_text(qa, c);
				const char *y = sptd_store_column_text(qb, c);

				same &= (!x && !y) || (x && y && strcmp(x, y) == 0);
			}
			rows += ra == 1;
		} while (ra == 1 && same);
		CHECK(same);
		CHECK(rows > 0);
		sptd_store_finalize(qa);
		sptd_store_finalize(qb);
	}
	sptd_store_destroy(a);
	sptd_store_destroy(b);
	unlink(fixture_path(0, "writer.incident"));
	unlink(fixture_path(0, "direct.incident"));
}

/* A bad row in the writer: finish reports it; rows before it are in. */
static void writer_failure(void)
{
	struct sptd_store *st = fixture_create("fail.incident");
	struct sptd_store_writer *w = NULL;
	struct sptd_store_slice_row r;
	int64_t n = -1;
	int ret = 0;

	CHECK_INT(sptd_store_writer_start(st, &w), 0);
	for (int i = 0; i < 10; i++) {
		r = slice_row(i);
		CHECK_INT(sptd_store_writer_slices(w, &r, 1), 0);
	}
	/* the same id again: the INSERT fails on the thread */
	r = slice_row(3);
	CHECK_INT(sptd_store_writer_slices(w, &r, 1), 0);
	r = slice_row(10);
	/* after the failure reached the producer, calls fail too; queue
	 * until then (the thread may still be behind) */
	for (int i = 0; i < 100000 && ret == 0; i++)
		ret = sptd_store_writer_slices(w, &r, 1);
	CHECK(ret < 0);
	CHECK(sptd_store_writer_finish(w) < 0);
	CHECK(sptd_store_errmsg(st)[0] != 0);
	sptd_store_destroy(st);
	unlink(fixture_path(0, "fail.incident"));
	(void)n;

	st = fixture_create("fail2.incident");
	CHECK_INT(sptd_store_writer_start(st, &w), 0);
	r = slice_row(1);
	r.kind = "bogus";
	CHECK_INT(sptd_store_writer_slices(w, &r, 1), 0);
	CHECK_INT(sptd_store_writer_finish(w), -EINVAL);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_SLICE, &n), 0);
	CHECK_INT(n, 0);
	sptd_store_destroy(st);
	unlink(fixture_path(0, "fail2.incident"));
}

static void writer_invalid(void)
{
	struct sptd_store *st = fixture_create("inval.incident");
	struct sptd_store_writer *w = NULL;

	CHECK_INT(sptd_store_writer_start(NULL, &w), -EINVAL);
	CHECK_INT(sptd_store_writer_start(st, NULL), -EINVAL);
	CHECK_INT(sptd_store_writer_slices(NULL, NULL, 0), -EINVAL);
	CHECK_INT(sptd_store_writer_symbol(NULL, 1, "x", 1, 0, 0), -EINVAL);
	CHECK_INT(sptd_store_writer_gap(NULL, 0, 0, 0, "pt: x"), -EINVAL);
	CHECK_INT(sptd_store_writer_stat(NULL, "x", 0, 0), -EINVAL);
	CHECK_INT(sptd_store_writer_finish(NULL), 0);
	CHECK_INT(sptd_store_writer_start(st, &w), 0);
	CHECK_INT(sptd_store_writer_slices(w, NULL, 1), -EINVAL);
	CHECK_INT(sptd_store_writer_symbol(w, 1, NULL, 1, 0, 0), -EINVAL);
	CHECK_INT(sptd_store_writer_gap(w, 0, 0, 0, NULL), -EINVAL);
	CHECK_INT(sptd_store_writer_stat(w, NULL, 0, 0), -EINVAL);
	CHECK_INT(sptd_store_writer_finish(w), 0);
	/* a committed store takes no writer */
	CHECK_INT(sptd_store_commit(st), 0);
	CHECK(sptd_store_writer_start(st, &w) < 0);
	CHECK(w == NULL);
	sptd_store_destroy(st);
}

int main(void)
{
	static const size_t counts[] = { 0, 1, 63, 64, 65, 128, 1000, 5000 };

	fixture_begin();
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		bulk_equals_one_by_one(counts[i]);
	bulk_refuses();
	writer_equals_direct();
	writer_failure();
	writer_invalid();
	fixture_end();
	return SPTD_TEST_END();
}
