/* test_store_read.c — the readers of store_read.c on real SQLite files:
 * every reader's rows, order and NULL/empty values; stopping early, errors
 * from the callback, a reader called from its own callback, rows added
 * while reading, reading read-only and committed stores; every reader's
 * argument checks. */
#include <stdint.h>

#include "store_fixture.h"

/* ---- row callbacks: each appends its row as one line -------------------------- */

static int put_chunk(void *arg, const struct sptd_store_chunk_row *row)
{
	struct fixture_text *t = arg;

	fixture_put(t, "%d|%d|", row->cpu, row->seq);
	fixture_put_bytes(t, row->data, row->len);
	fixture_put(t, "\n");
	t->rows++;
	return 0;
}

static int put_format(void *arg, const struct sptd_store_ftrace_format_row *row)
{
	fixture_put(arg, "%s|%s\n", fixture_str(row->name), fixture_str(row->text));
	return 0;
}

static int put_task(void *arg, const struct sptd_store_raw_task_row *row)
{
	fixture_put(arg, "%d|%d|%s|%s\n", row->pid, row->tid, fixture_str(row->comm),
	            fixture_str(row->cmdline));
	return 0;
}

static int put_switch(void *arg, const struct sptd_store_raw_switch_row *row)
{
	fixture_put(arg, "%" PRId64 "|%d|%d|%d|%s|%s\n", row->ts, row->cpu, row->prev_tid,
	            row->next_tid, fixture_str(row->next_comm), fixture_str(row->prev_state));
	return 0;
}

static int put_mmap(void *arg, const struct sptd_store_raw_mmap_row *row)
{
	fixture_put(arg, "%d|%" PRIx64 "|%" PRIx64 "|%" PRIx64 "|%" PRId64 "|%" PRId64 "|%" PRId64 "\n",
	            row->pid, row->start, row->end, row->pgoff, row->dso_id, row->bias, row->until_ts);
	return 0;
}

static int put_image(void *arg, const struct sptd_store_raw_image_row *row)
{
	fixture_put(arg, "%" PRId64 "|%" PRIx64 "|", row->dso_id, row->addr);
	fixture_put_bytes(arg, row->data, row->len);
	fixture_put(arg, "|%s\n", fixture_str(row->path));
	return 0;
}

static int put_file(void *arg, const struct sptd_store_mapped_file_row *row)
{
	fixture_put(arg, "%d|%" PRId64 "|%" PRId64 "|%s|%s\n", row->pid, row->dso_id, row->bias,
	            fixture_str(row->path), fixture_str(row->build_id));
	return 0;
}

static int put_symbol(void *arg, const struct sptd_store_symbol_row *row)
{
	fixture_put(arg, "%" PRId64 "|%s|%" PRId64 "|%" PRIx64 "|%" PRIu64 "\n", row->id,
	            fixture_str(row->name), row->dso_id, row->addr, row->size);
	return 0;
}

static int put_dso(void *arg, const struct sptd_store_dso_row *row)
{
	fixture_put(arg, "%" PRId64 "|%s|%s\n", row->id, fixture_str(row->path),
	            fixture_str(row->build_id));
	return 0;
}

static int put_trigger(void *arg, const struct sptd_store_trigger_row *row)
{
	fixture_put(arg, "%" PRId64 "|%d|%s|%s\n", row->ts, row->cpu, fixture_str(row->kind),
	            fixture_str(row->detail));
	return 0;
}

static int put_stat(void *arg, const struct sptd_store_stat_row *row)
{
	fixture_put(arg, "%d|%s|%" PRId64 "\n", row->cpu, fixture_str(row->name), row->value);
	return 0;
}

static int put_exit(void *arg, const struct sptd_store_thread_exit_row *row)
{
	fixture_put(arg, "%" PRId64 "|%" PRId64 "\n", row->utid, row->ts);
	return 0;
}

/* A row that a statement of the caller's writes (NULL bytes: not possible
 * through the add functions). */
static void exec_sql(struct sptd_store *st, const char *sql)
{
	struct sptd_store_stmt *q = NULL;

	CHECK_INT(sptd_store_prepare(st, sql, &q), 0);
	CHECK_INT(sptd_store_step(q), 0);
	sptd_store_finalize(q);
}

/* ---- the three cpu, seq, bytes tables -------------------------------------------- */

/* One of raw_pt, raw_sideband, raw_ftrace_page: its name and id. */
struct chunk_table {
	const char *name;
	enum sptd_store_table_id table; /* for sptd_store_add and sptd_store_each */
};

static const struct chunk_table chunk_tables[] = {
	{ "raw_pt", SPTD_STORE_T_RAW_PT },
	{ "raw_sideband", SPTD_STORE_T_RAW_SIDEBAND },
	{ "raw_ftrace_page", SPTD_STORE_T_RAW_FTRACE_PAGE },
};

/* Add a row of chunk table @c. */
static int chunk_add(struct sptd_store *st, const struct chunk_table *c, int cpu, int seq,
                     const void *data, size_t len)
{
	return sptd_store_add(st, c->table,
	                      &(const struct sptd_store_chunk_row){ cpu, seq, data, len });
}

/* put_chunk as sptd_store_each takes it. */
static int chunk_fn(void *ctx, const void *row)
{
	return put_chunk(ctx, row);
}

static void test_chunks(void)
{
	static const unsigned char ab[] = { 0xab }, cd[] = { 0xcd, 0xef }, one[] = { 0x01 };
	const char *expect = "0|0|x01\n0|1|xab\n1|0|x\n1|1|xcdef\n5|0|N\n";

	for (size_t i = 0; i < sizeof(chunk_tables) / sizeof(chunk_tables[0]); i++) {
		const struct chunk_table *c = &chunk_tables[i];
		struct sptd_store *st = fixture_create("chunks.db");
		struct fixture_text t = { .n = 0 };
		char sql[96];

		if (!st)
			return;
		/* out of order: the reader sorts by cpu, then seq */
		CHECK_INT(chunk_add(st, c, 1, 1, cd, sizeof(cd)), 0);
		CHECK_INT(chunk_add(st, c, 0, 1, ab, sizeof(ab)), 0);
		CHECK_INT(chunk_add(st, c, 1, 0, NULL, 0), 0);
		CHECK_INT(chunk_add(st, c, 0, 0, one, sizeof(one)), 0);
		snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (5, 0, NULL)", c->name);
		exec_sql(st, sql);
		/* before commit, on the writing connection */
		CHECK_INT(sptd_store_each(st, c->table, chunk_fn, &t), 0);
		CHECK_STR(t.buf, expect);
		st = fixture_reopen(st);
		if (!st)
			return;
		memset(&t, 0, sizeof(t));
		CHECK_INT(sptd_store_each(st, c->table, chunk_fn, &t), 0);
		CHECK_STR(t.buf, expect);
		CHECK_INT(t.rows, 5);
		sptd_store_destroy(st);
		remove(fixture_path(1, "chunks.db"));
	}
}

/* ---- stopping, errors, nesting, writing while reading ----------------------------- */

static int stop_at_second(void *arg, const struct sptd_store_chunk_row *row)
{
	struct fixture_text *t = arg;

	put_chunk(t, row);
	return t->rows == 2 ? 7 : 0;
}

static int fail_eio(void *arg, const struct sptd_store_chunk_row *row)
{
	(void)arg;
	(void)row;
	return -EIO;
}

/* What nested() counts. */
struct nest {
	struct sptd_store *st;  /* the store read twice at once */
	int outer, inner;       /* rows seen by the outer and the inner readers */
	int inner_ret;          /* the last inner reader's result */
};

static int count_inner(void *arg, const struct sptd_store_chunk_row *row)
{
	(void)row;
	((struct nest *)arg)->inner++;
	return 0;
}

static int nested(void *arg, const struct sptd_store_chunk_row *row)
{
	struct nest *n = arg;

	(void)row;
	n->outer++;
	n->inner_ret = SPTD_STORE_EACH(n->st, raw_pt, count_inner, n);
	return n->inner_ret < 0 ? n->inner_ret : 0;
}

/* Adds a gap row for each raw_pt row it is given. */
static int add_gap(void *arg, const struct sptd_store_chunk_row *row)
{
	return SPTD_STORE_ADD(arg, gap, row->seq, 0, row->cpu, "pt: test");
}

static void test_control(void)
{
	struct sptd_store *st = fixture_create("control.db");
	struct fixture_text t = { .n = 0 };
	struct nest n = { .st = st };
	int64_t gaps = -1;

	if (!st)
		return;
	for (int i = 0; i < 4; i++)
		CHECK_INT(SPTD_STORE_ADD(st, raw_pt, i % 2, i, "z", 1), 0);
	/* > 0 stops the reader, which returns it */
	CHECK_INT(SPTD_STORE_EACH(st, raw_pt, stop_at_second, &t), 7);
	CHECK_INT(t.rows, 2);
	/* the statement was reset: the next read starts at the first row */
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, raw_pt, put_chunk, &t), 0);
	CHECK_INT(t.rows, 4);
	CHECK_STR(t.buf, "0|0|x7a\n0|2|x7a\n1|1|x7a\n1|3|x7a\n");
	/* < 0 stops with that error */
	CHECK_INT(SPTD_STORE_EACH(st, raw_pt, fail_eio, NULL), -EIO);
	/* a reader called from its own callback gets a statement of its own */
	CHECK_INT(SPTD_STORE_EACH(st, raw_pt, nested, &n), 0);
	CHECK_INT(n.outer, 4);
	CHECK_INT(n.inner, 16);
	CHECK_INT(n.inner_ret, 0);
	/* rows added while reading */
	CHECK_INT(SPTD_STORE_EACH(st, raw_pt, add_gap, st), 0);
	CHECK_INT(sptd_store_count(st, SPTD_STORE_T_GAP, &gaps), 0);
	CHECK_INT(gaps, 4);
	/* after commit the readers still read */
	CHECK_INT(sptd_store_commit(st), 0);
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, raw_pt, put_chunk, &t), 0);
	CHECK_INT(t.rows, 4);
	sptd_store_destroy(st);
}

/* ---- the other raw tables ------------------------------------------------------- */

/* What check_samples saw. */
struct samples_seen {
	struct fixture_text t;  /* ts|cpu|pid|tid|nr per row */
	int chain_ok;           /* every long chain had the values written */
};

static int put_sample(void *arg, const struct sptd_store_raw_sample_row *row)
{
	struct samples_seen *s = arg;

	fixture_put(&s->t, "%" PRId64 "|%d|%d|%d|%zu", row->ts, row->cpu, row->pid, row->tid,
	            row->nr);
	/* raw_sample.ustack: NULL, or the bytes as written */
	if (row->ustack)
		fixture_put(&s->t, "|u%zu:%.*s", row->ustack_len, (int)row->ustack_len,
		            (const char *)row->ustack);
	for (size_t i = 0; i < row->nr && row->nr <= 4; i++)
		fixture_put(&s->t, "|%" PRIx64, row->callchain[i]);
	for (size_t i = 0; row->nr > 4 && i < row->nr; i++)
		if (row->callchain[i] != 0xffffffff81000000ull + i * 0x10001)
			s->chain_ok = 0;
	fixture_put(&s->t, "\n");
	return 0;
}

static void test_raw_rows(void)
{
	static const uint64_t chain[] = { 0xfffffffffffffe00ull, 0xffffffff81000010ull,
	                                  0xfffffffffffffe00ull - 0x180, 0x401234 };
	static uint64_t long_chain[1000];
	struct sptd_store *st = fixture_create("raw.db");
	struct samples_seen s = { .chain_ok = 1 };
	struct fixture_text t = { .n = 0 };

	if (!st)
		return;
	for (size_t i = 0; i < 1000; i++)
		long_chain[i] = 0xffffffff81000000ull + i * 0x10001;
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_format, "header_page", "a"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_ftrace_format, "sched/sched_switch", "b"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_task, 100, 101, "worker", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_task, 1, 1, NULL, "init"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 30, 1, 100, 0, "swapper/1", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 10, 0, 0, 100, NULL, NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_switch, 20, 2, 5, 6, "b", "S"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 70, 0, 100, 101, chain, 4, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 60, 1, -1, -1, NULL, 0, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 80, 2, 7, 8, long_chain, 1000, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 90, 2, 7, 8, long_chain, 3, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 95, 3, 7, 9, chain, 1, SPTD_RAW_SAMPLE_OFFCPU,
	                         "regs+stack", 10), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, -1, 0xffffffff81000000ull, 0xffffffff82000000ull,
	                         0, 2, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 10, 0x400000, 0x401000, 0x1000, 1, -4096, 0), 0);
	/* a child's mapping before its exec, and one whose end is not known */
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 11, 0x400000, 0x401000, 0, 1, 0, 123456789), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 11, 0x500000, 0x501000, 0, 1, 0, -5), 0);
	st = fixture_reopen(st);
	if (!st)
		return;
	CHECK_INT(SPTD_STORE_EACH(st, raw_ftrace_format, put_format, &t), 0);
	CHECK_STR(t.buf, "header_page|a\nsched/sched_switch|b\n");
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, raw_task, put_task, &t), 0);
	CHECK_STR(t.buf, "100|101|worker|N\n1|1|N|init\n");
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, raw_switch, put_switch, &t), 0);
	CHECK_STR(t.buf, "30|1|100|0|swapper/1|N\n10|0|0|100|N|N\n20|2|5|6|b|S\n");
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, raw_switch_by_ts, put_switch, &t), 0);
	CHECK_STR(t.buf, "10|0|0|100|N|N\n20|2|5|6|b|S\n30|1|100|0|swapper/1|N\n");
	/* by ts; chains in host order, markers included; the buffer grows */
	CHECK_INT(SPTD_STORE_EACH(st, raw_sample, put_sample, &s), 0);
	CHECK_STR(s.t.buf, "60|1|-1|-1|0\n"
	                   "70|0|100|101|4|fffffffffffffe00|ffffffff81000010|fffffffffffffc80|401234\n"
	                   "80|2|7|8|1000\n"
	                   "90|2|7|8|3|ffffffff81000000|ffffffff81010001|ffffffff81020002\n"
	                   "95|3|7|9|1|u10:regs+stack|fffffffffffffe00\n");
	CHECK(s.chain_ok);
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, raw_mmap, put_mmap, &t), 0);
	CHECK_STR(t.buf, "-1|ffffffff81000000|ffffffff82000000|0|2|0|0\n"
	                 "10|400000|401000|1000|1|-4096|0\n"
	                 "11|400000|401000|0|1|0|123456789\n"
	                 "11|500000|501000|0|1|0|0\n");
	sptd_store_destroy(st);
}

/* ---- images, mapped files, symbols, dsos ----------------------------------------- */

static void test_code_rows(void)
{
	static const unsigned char code[] = { 0x55, 0xc3 };
	struct sptd_store *st = fixture_create("code.db");
	struct fixture_text t = { .n = 0 };

	if (!st)
		return;
	CHECK_INT(SPTD_STORE_ADD(st, dso, 3, "/usr/lib/libc.so.6", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, "/usr/bin/app", "abcdef01"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 2, "[anon:jit]", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_image, 2, 0x7f0000001000ull, code, sizeof(code), NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_image, 9, 0xffffffff81000000ull, code, 1, NULL), 0);
	/* dso 1 twice (one row out), dso 2 has bytes, dso 9 no dso row */
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 10, 0x400000, 0x401000, 0, 1, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 10, 0x400000, 0x401000, 0, 1, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 10, 0x7f0000001000ull, 0x7f0000002000ull, 0, 2, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 11, 0x7f0000000000ull, 0x7f0000100000ull, 0, 3,
	                         0x7f0000000000ll, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_mmap, 12, 0x500000, 0x501000, 0, 9, 0, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 1, "main", 1, 0x401000, 0x40), 0);
	CHECK_INT(SPTD_STORE_ADD(st, symbol, 2, "schedule", 9, 0xffffffff81000000ull, 0), 0);
	st = fixture_reopen(st);
	if (!st)
		return;
	CHECK_INT(SPTD_STORE_EACH(st, raw_image_path, put_image, &t), 0);
	CHECK_STR(t.buf, "2|7f0000001000|x55c3|[anon:jit]\n9|ffffffff81000000|x55|N\n");
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, mapped_file, put_file, &t), 0);
	CHECK_STR(t.buf, "10|1|0|/usr/bin/app|abcdef01\n"
	                 "11|3|139637976727552|/usr/lib/libc.so.6|N\n");
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, symbol, put_symbol, &t), 0);
	CHECK_STR(t.buf, "1|main|1|401000|64\n2|schedule|9|ffffffff81000000|0\n");
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, dso, put_dso, &t), 0);
	CHECK_STR(t.buf, "1|/usr/bin/app|abcdef01\n2|[anon:jit]|N\n3|/usr/lib/libc.so.6|N\n");
	sptd_store_destroy(st);
}

/* ---- triggers and stats ---------------------------------------------------------- */

static int first_only(void *arg, const struct sptd_store_trigger_row *row)
{
	put_trigger(arg, row);
	return 1;
}

static void test_summary_rows(void)
{
	struct sptd_store *st = fixture_create("summary.db");
	struct fixture_text t = { .n = 0 };

	if (!st)
		return;
	CHECK_INT(SPTD_STORE_ADD(st, trigger, 50, -1, "manual", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, trigger, 10, 2, "irq", "irq=11"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "calls", 1, 5), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "total", -1, 9), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "calls", 0, 3), 0);
	CHECK_INT(SPTD_STORE_ADD(st, stats, "returns", 0, 2), 0);
	st = fixture_reopen(st);
	if (!st)
		return;
	CHECK_INT(SPTD_STORE_EACH(st, trigger, put_trigger, &t), 0);
	CHECK_STR(t.buf, "10|2|irq|irq=11\n50|-1|manual|N\n");
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, trigger, first_only, &t), 1);
	CHECK_STR(t.buf, "10|2|irq|irq=11\n");
	/* per CPU only, by cpu; a CPU's rows in the order they were added */
	memset(&t, 0, sizeof(t));
	CHECK_INT(SPTD_STORE_EACH(st, cpu_stats, put_stat, &t), 0);
	CHECK_STR(t.buf, "0|calls|3\n0|returns|2\n1|calls|5\n");
	sptd_store_destroy(st);
}

/* Threads' ends: the sched slices that left a thread X or Z with their end
 * seen, in time order; not R, S or a slice cut by the window. */
static void test_exits(void)
{
	struct sptd_store *st = fixture_create("exits.db");
	struct fixture_text t = { .n = 0 };

	if (!st)
		return;
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 500, 20, 1, 4, "Z", 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 100, 50, 0, 3, "X", 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 200, 50, 0, 5, "S", 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 300, 50, 0, 6, "R+", 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 400, 50, 0, 7, NULL, 120, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, sched_slice, 600, 50, 0, 8, "X", 120,
	                         SPTD_SLICE_F_END_TRUNCATED), 0);
	st = fixture_reopen(st);
	if (!st)
		return;
	CHECK_INT(SPTD_STORE_EACH(st, thread_exit, put_exit, &t), 0);
	CHECK_STR(t.buf, "3|150\n4|520\n");
	CHECK_INT(SPTD_STORE_EACH(st, thread_exit, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, thread_exit, put_exit, NULL), -EINVAL);
	sptd_store_destroy(st);
}

/* ---- argument checks ------------------------------------------------------------- */

static void test_invalid_args(void)
{
	struct sptd_store *st = fixture_create("inv.db");

	CHECK_INT(SPTD_STORE_EACH(NULL, raw_pt, put_chunk, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, raw_sideband, put_chunk, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, raw_ftrace_page, put_chunk, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, raw_ftrace_format, put_format, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, raw_task, put_task, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, raw_switch, put_switch, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, raw_sample, put_sample, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, raw_mmap, put_mmap, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, raw_image_path, put_image, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, mapped_file, put_file, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, symbol, put_symbol, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, dso, put_dso, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, trigger, put_trigger, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(NULL, cpu_stats, put_stat, NULL), -EINVAL);
	if (!st)
		return;
	CHECK_INT(SPTD_STORE_EACH(st, raw_pt, NULL, NULL), -EINVAL);
	CHECK(fixture_has(sptd_store_errmsg(st), "raw_pt"));
	CHECK_INT(SPTD_STORE_EACH(st, raw_sideband, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, raw_ftrace_page, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, raw_ftrace_format, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, raw_task, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, raw_switch_by_ts, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, raw_sample, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, raw_mmap, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, raw_image_path, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, mapped_file, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, symbol, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, dso, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, trigger, NULL, NULL), -EINVAL);
	CHECK_INT(SPTD_STORE_EACH(st, cpu_stats, NULL, NULL), -EINVAL);
	CHECK(fixture_has(sptd_store_errmsg(st), "fn is NULL"));
	/* a view is read, never added to; past the views there is nothing */
	CHECK_INT(sptd_store_add(st, SPTD_STORE_T_THREAD_EXIT,
	                         &(const struct sptd_store_thread_exit_row){ 1, 2 }), -EINVAL);
	CHECK_INT(sptd_store_each(st, SPTD_STORE_T_ALL, chunk_fn, NULL), -EINVAL);
	CHECK(sptd_store_table_name(SPTD_STORE_T_FRAME) == NULL);
	/* empty tables: no rows, success */
	CHECK_INT(SPTD_STORE_EACH(st, raw_sample, put_sample, NULL), 0);
	CHECK_INT(SPTD_STORE_EACH(st, mapped_file, put_file, NULL), 0);
	sptd_store_destroy(st);
}

int main(void)
{
	fixture_begin();
	test_chunks();
	test_control();
	test_raw_rows();
	test_code_rows();
	test_summary_rows();
	test_exits();
	test_invalid_args();
	fixture_end();
	return SPTD_TEST_END();
}
