/* test_store_golden.c — same files out: an incident written through every
 * add function (good rows with edge values, and rows the store must
 * refuse) is dumped table by table, schema included, and compared with
 * tests/store/golden/rows.txt.
 *
 * That file was written by this test against the store as it was before
 * the store became table-driven (commit c011954 of main, hand-written add
 * functions): SPTD_GOLDEN_WRITE=FILE writes the dump to FILE instead of
 * comparing.  A change of the schema or of what a row stores changes the
 * dump: write it again only for a change meant to change the file, and
 * say so in the commit. */
#include <stdint.h>

#include "store_fixture.h"

#ifndef SPTD_GOLDEN_FILE
#error "SPTD_GOLDEN_FILE must name tests/store/golden/rows.txt"
#endif

/* The dump so far (big enough for every row below). */
static char dump[1 << 16];
static size_t dump_len;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void put(const char *fmt, ...)
{
	va_list ap;
	int w;

	if (dump_len >= sizeof(dump))
		return;
	va_start(ap, fmt);
	w = vsnprintf(dump + dump_len, sizeof(dump) - dump_len, fmt, ap);
	va_end(ap);
	if (w > 0)
		dump_len += (size_t)w < sizeof(dump) - dump_len ? (size_t)w : sizeof(dump) - dump_len;
}

/* One add: its label and what it returned (0, or the refusal). */
static void added(const char *label, int ret)
{
	put("add %s -> %d\n", label, ret);
}

/* Every value of @sql's rows, typed: N, I<int>, T'<text>' (non-printing
 * bytes as \xNN), X<hex>. */
static void dump_rows(struct sptd_store *st, const char *sql)
{
	struct sptd_store_stmt *q = NULL;
	int ret = sptd_store_prepare(st, sql, &q);

	CHECK_INT(ret, 0);
	while (ret >= 0 && (ret = sptd_store_step(q)) == 1) {
		int n = sptd_store_column_count(q);

		for (int c = 0; c < n; c++) {
			size_t len = 0;
			const unsigned char *p;

			put(c ? " " : "  ");
			switch (sptd_store_column_type(q, c)) {
			case SPTD_STORE_NULL:
				put("N");
				break;
			case SPTD_STORE_INT:
				put("I%" PRId64, sptd_store_column_int(q, c));
				break;
			case SPTD_STORE_FLOAT:
				put("F%.17g", sptd_store_column_double(q, c));
				break;
			case SPTD_STORE_TEXT:
				p = (const unsigned char *)sptd_store_column_text_n(q, c, &len);
				put("T'");
				for (size_t i = 0; i < len; i++)
					if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
						put("%c", p[i]);
					else
						put("\\x%02x", p[i]);
				put("'");
				break;
			case SPTD_STORE_BLOB:
				p = sptd_store_column_blob(q, c, &len);
				put("X");
				for (size_t i = 0; i < len; i++)
					put("%02x", p[i]);
				break;
			}
		}
		put("\n");
	}
	CHECK_INT(ret, 0);
	sptd_store_finalize(q);
}

/* The schema, then every table of sptd_store_tables() and raw_file. */
static void dump_store(struct sptd_store *st)
{
	const char *const *t = sptd_store_tables();
	char sql[160];

	put("schema\n");
	dump_rows(st, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name");
	for (; *t; t++) {
		put("table %s\n", *t);
		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\" ORDER BY rowid", *t);
		dump_rows(st, sql);
	}
	put("table raw_file\n");
	dump_rows(st, "SELECT * FROM raw_file ORDER BY rowid");
}

/* A long text (a symbol name as C++ makes them). */
static char long_text[3000];

static void write_rows(struct sptd_store *st)
{
	static const uint64_t chain[] = { 0xfffffffffffffe00ULL, 0xffffffff81000000ULL, 0x401000,
	                                  0 };
	static const uint8_t bytes[] = { 0x00, 0xff, 0x10, 0x02 };
	const struct sptd_store_cpu_idle_row idle[] = {
		{ 100, 50, 1, 6, 2, 6, 3, 6, 7, "interrupt,store", 1, 3 },
		{ 200, 0, 0, -1, -1, -1, -1, -1, -1, NULL, 0, 0 },
		{ 300, -1, 0, 1, 0, 1, 0, 1, 1, "x", 0, 0 },
	};
	const struct sptd_store_watch_hit_row hit[] = {
		{ 5, 1, 42, 0x401000, "main", 1, 7, 8, 0, "watch=x" },
		{ 6, 0, 43, 0xffffffffffffffffULL, "", 0, 7, 8, 1, NULL },
		{ 7, 2, 44, 0, NULL, 1, UINT64_MAX, 1, -1, "watch=y" },
		{ 8, -1, 44, 0, NULL, 1, 1, 1, 1, "bad" },
	};
	struct sptd_store_slice_row slices[3] = {
		{ 10, 1000, 5, 0, 1, 0, -1, 2, SPTD_SLICE_USER, 0 },
		{ 11, 1001, 2, 0, 1, 1, 10, -1, SPTD_SLICE_SYSCALL, SPTD_SLICE_F_INFERRED },
		{ 12, INT64_MIN, INT64_MAX, 3, INT64_MAX, 7, INT64_MAX, INT64_MAX,
		  SPTD_SLICE_IRQ, 0x1f },
	};

	memset(long_text, 'a', sizeof(long_text) - 1);
	added("meta", sptd_store_meta_set(st, "host", "golden"));
	added("meta int", sptd_store_meta_set_int(st, "window_ns", INT64_MIN));
	added("trigger", SPTD_STORE_ADD(st, trigger, 5, 1, "irq", "irq=1"));
	added("trigger nocpu", SPTD_STORE_ADD(st, trigger, -5, -1, "manual", NULL));
	added("trigger nokind", SPTD_STORE_ADD(st, trigger, 5, 1, "", NULL));
	added("process", SPTD_STORE_ADD(st, process, 1, 100, "proc", "/bin/proc -x"));
	added("process null", SPTD_STORE_ADD(st, process, 2, -1, NULL, NULL));
	added("process neg", SPTD_STORE_ADD(st, process, -1, 1, NULL, NULL));
	added("thread", SPTD_STORE_ADD(st, thread, 1, 100, 1, "main"));
	added("thread noproc", SPTD_STORE_ADD(st, thread, 2, 0, -1, NULL));
	added("thread neg", SPTD_STORE_ADD(st, thread, -2, 0, -1, NULL));
	added("sched", SPTD_STORE_ADD(st, sched_slice, 10, 20, 0, 1, "S", 120, 0));
	added("sched noprio", SPTD_STORE_ADD(st, sched_slice, 30, 0, 1, 2, NULL, -1, 0));
	added("sched flags", SPTD_STORE_ADD(st, sched_slice, 40, 1, 2, 1, "R+", 0, 3));
	added("sched negdur", SPTD_STORE_ADD(st, sched_slice, 40, -1, 2, 1, "R", 0, 0));
	added("sched negcpu", SPTD_STORE_ADD(st, sched_slice, 40, 1, -2, 1, "R", 0, 0));
	added("state", SPTD_STORE_ADD(st, thread_state, 10, 20, 1, "Running", 0, -1, 0));
	added("state waker", SPTD_STORE_ADD(st, thread_state, 30, 5, 1, "R", -1, 2, 0));
	added("state flags", SPTD_STORE_ADD(st, thread_state, 35, 5, 2, "D", 3, 1, 2));
	added("state nostate", SPTD_STORE_ADD(st, thread_state, 35, 5, 2, NULL, 3, 1, 0));
	added("state negdur", SPTD_STORE_ADD(st, thread_state, 35, -5, 2, "S", 3, 1, 0));
	added("irq", SPTD_STORE_ADD(st, irq_slice, 50, 3, 0, 24, "eth0", 1, 0));
	added("irq noexit", SPTD_STORE_ADD(st, irq_slice, 51, 3, 1, -1, NULL, -1, 0));
	added("irq flags", SPTD_STORE_ADD(st, irq_slice, 52, 3, 1, 0, "t", 0, 2));
	added("irq negcpu", SPTD_STORE_ADD(st, irq_slice, 52, 3, -1, 0, "t", 0, 0));
	added("softirq", SPTD_STORE_ADD(st, softirq_slice, 60, 4, 0, 3, "NET_RX", 0));
	added("softirq flags", SPTD_STORE_ADD(st, softirq_slice, 61, 4, 1, 9, NULL, 1));
	added("softirq negdur", SPTD_STORE_ADD(st, softirq_slice, 61, -4, 1, 9, NULL, 0));
	added("slice", SPTD_STORE_ADD(st, slice, 1, 100, 10, 0, 1, 0, -1, 1, SPTD_SLICE_USER, 0));
	added("slice parent", SPTD_STORE_ADD(st, slice, 2, 101, 9, 0, 1, 1, 1, -1,
	                                          SPTD_SLICE_KERNEL, SPTD_SLICE_F_END_TRUNCATED));
	added("slice badkind", SPTD_STORE_ADD(st, slice, 3, 101, 9, 0, 1, 1, 1, -1, "user2", 0));
	added("slice negid", SPTD_STORE_ADD(st, slice, -3, 101, 9, 0, 1, 1, 1, -1, "user", 0));
	added("slice negdepth", SPTD_STORE_ADD(st, slice, 3, 101, 9, 0, 1, -1, 1, -1, "user", 0));
	added("slices", sptd_store_slices_add(st, slices, 3));
	added("dso", SPTD_STORE_ADD(st, dso, 1, "/bin/proc", "0badc0de"));
	added("dso nobuild", SPTD_STORE_ADD(st, dso, 2, "[kernel.kallsyms]", NULL));
	added("dso nopath", SPTD_STORE_ADD(st, dso, 3, "", NULL));
	added("symbol", SPTD_STORE_ADD(st, symbol, 1, "main", 1, 0x401000, 64));
	added("symbol huge", SPTD_STORE_ADD(st, symbol, 2, long_text, 2, UINT64_MAX, 0));
	added("symbol noname", SPTD_STORE_ADD(st, symbol, 3, NULL, 2, 0, 0));
	added("ftrace", SPTD_STORE_ADD(st, ftrace_event, 70, 0, 1, "sched:sched_wakeup",
	                                           "{\"pid\":1}"));
	added("ftrace noargs", SPTD_STORE_ADD(st, ftrace_event, 71, 1, -1, "a:b", NULL));
	added("ftrace noname", SPTD_STORE_ADD(st, ftrace_event, 71, 1, -1, "", NULL));
	added("ftrace negcpu", SPTD_STORE_ADD(st, ftrace_event, 71, -1, -1, "a:b", NULL));
	added("sample", SPTD_STORE_ADD(st, sample, 80, 0, 1, 1));
	added("sample nulls", SPTD_STORE_ADD(st, sample, 81, 1, -1, -1));
	added("sample negcpu", SPTD_STORE_ADD(st, sample, 81, -1, -1, -1));
	added("freq", SPTD_STORE_ADD(st, cpu_freq, 90, 0, 40, 4000000));
	added("freq nokhz", SPTD_STORE_ADD(st, cpu_freq, 91, 1, 0, -1));
	added("freq negcbr", SPTD_STORE_ADD(st, cpu_freq, 91, 1, -1, -1));
	for (size_t i = 0; i < sizeof(idle) / sizeof(idle[0]); i++)
		added("idle", sptd_store_add(st, SPTD_STORE_T_CPU_IDLE, &idle[i]));
	added("idle null", sptd_store_add(st, SPTD_STORE_T_CPU_IDLE, NULL));
	added("ptwrite", SPTD_STORE_ADD(st, ptwrite, 95, 0, 1, 0x401000, UINT64_MAX, 8));
	added("ptwrite noip", SPTD_STORE_ADD(st, ptwrite, 96, 1, -1, 0, 0, 4));
	added("ptwrite negsize", SPTD_STORE_ADD(st, ptwrite, 96, 1, -1, 0, 0, -4));
	for (size_t i = 0; i < sizeof(hit) / sizeof(hit[0]); i++)
		added("watch", sptd_store_add(st, SPTD_STORE_T_WATCH_HIT, &hit[i]));
	added("watch null", sptd_store_add(st, SPTD_STORE_T_WATCH_HIT, NULL));
	added("callsite", SPTD_STORE_ADD(st, callsite, 1, -1, 0, 1, 0x401000));
	added("callsite child", SPTD_STORE_ADD(st, callsite, 2, 1, 1, -1, UINT64_MAX));
	added("callsite negdepth", SPTD_STORE_ADD(st, callsite, 3, 1, -1, -1, 0));
	added("gap", SPTD_STORE_ADD(st, gap, 97, 3, 0, "pt: overflow"));
	added("gap allcpu", SPTD_STORE_ADD(st, gap, 98, 0, -1, "lost"));
	added("gap noreason", SPTD_STORE_ADD(st, gap, 98, 0, -1, ""));
	added("gap negdur", SPTD_STORE_ADD(st, gap, 98, -1, -1, "x"));
	added("stat", SPTD_STORE_ADD(st, stats, "pt_bytes", 0, INT64_MAX));
	added("stat all", SPTD_STORE_ADD(st, stats, "decode_ns", -1, -7));
	added("stat noname", SPTD_STORE_ADD(st, stats, NULL, -1, 0));
	added("ftpage", SPTD_STORE_ADD(st, raw_ftrace_page, 0, 0, bytes, sizeof(bytes)));
	added("ftpage empty", SPTD_STORE_ADD(st, raw_ftrace_page, 1, 0, bytes, 0));
	added("ftpage negseq", SPTD_STORE_ADD(st, raw_ftrace_page, 1, -1, bytes, 1));
	added("ftpage nodata", SPTD_STORE_ADD(st, raw_ftrace_page, 1, 1, NULL, 1));
	added("format", SPTD_STORE_ADD(st, raw_ftrace_format, "header_page", "field: u64"));
	added("format again", SPTD_STORE_ADD(st, raw_ftrace_format, "header_page", "replaced"));
	added("format empty", SPTD_STORE_ADD(st, raw_ftrace_format, "sched/x", ""));
	added("format notext", SPTD_STORE_ADD(st, raw_ftrace_format, "sched/y", NULL));
	added("rsample", SPTD_STORE_ADD(st, raw_sample, 110, 0, 100, 101, chain, 4, SPTD_RAW_SAMPLE_CLOCK, NULL, 0));
	added("rsample nochain", SPTD_STORE_ADD(st, raw_sample, 111, 1, -1, -1, NULL, 0, SPTD_RAW_SAMPLE_CLOCK, NULL, 0));
	added("rsample kind", SPTD_STORE_ADD(st, raw_sample, 112, 1, 5, 6, chain, 1,
	                                                   SPTD_RAW_SAMPLE_OFFCPU, NULL, 0));
	added("rsample ustack", SPTD_STORE_ADD(st, raw_sample, 113, 1, 5, 6, chain, 1,
	                                                     SPTD_RAW_SAMPLE_CLOCK, "\1\2\3", 3));
	added("rsample negcpu", SPTD_STORE_ADD(st, raw_sample, 112, -1, 5, 6, chain, 1, SPTD_RAW_SAMPLE_CLOCK, NULL, 0));
	added("rsample nullchain", SPTD_STORE_ADD(st, raw_sample, 112, 1, 5, 6, NULL, 1, SPTD_RAW_SAMPLE_CLOCK, NULL, 0));
	added("task", SPTD_STORE_ADD(st, raw_task, 100, 101, "proc", "/bin/proc -x"));
	added("task nulls", SPTD_STORE_ADD(st, raw_task, -1, -1, NULL, NULL));
	added("mmap", SPTD_STORE_ADD(st, raw_mmap, 100, 0x400000, 0x402000, 0, 1, 0, 0));
	added("mmap kernel", SPTD_STORE_ADD(st, raw_mmap, -1, 0xffffffff81000000ULL, UINT64_MAX,
	                                    0x1000, 2, INT64_MIN, 0));
	added("mmap backwards", SPTD_STORE_ADD(st, raw_mmap, 1, 10, 9, 0, 1, 0, 0));
	added("mmap until", SPTD_STORE_ADD(st, raw_mmap, 100, 0x500000, 0x501000, 0, 1, 0,
	                                   123456789));
	added("mmap until neg", SPTD_STORE_ADD(st, raw_mmap, 100, 0x600000, 0x601000, 0, 1, 0,
	                                       -5));
	added("pt", SPTD_STORE_ADD(st, raw_pt, 0, 0, bytes, sizeof(bytes)));
	added("pt empty", SPTD_STORE_ADD(st, raw_pt, 0, 1, bytes, 0));
	added("pt negcpu", SPTD_STORE_ADD(st, raw_pt, -1, 1, bytes, 1));
	added("sideband", SPTD_STORE_ADD(st, raw_sideband, 1, 0, bytes, 3));
	added("image", SPTD_STORE_ADD(st, raw_image, 1, 0x401000, bytes, sizeof(bytes), NULL));
	added("image empty", SPTD_STORE_ADD(st, raw_image, 2, UINT64_MAX, NULL, 0, NULL));
	added("image nodata", SPTD_STORE_ADD(st, raw_image, 2, 0, NULL, 2, NULL));
	added("switch", SPTD_STORE_ADD(st, raw_switch, 120, 0, 100, 101, "proc", NULL));
	added("switch state", SPTD_STORE_ADD(st, raw_switch, 121, 1, 101, 0, NULL, "S"));
	added("switch negcpu", SPTD_STORE_ADD(st, raw_switch, 121, -1, 101, 0, NULL, NULL));
	added("file", sptd_store_raw_file_add(st, 1, "0badc0de", bytes, sizeof(bytes)));
	added("file again", sptd_store_raw_file_add(st, 1, NULL, bytes, 1));
	added("file empty", sptd_store_raw_file_add(st, 2, NULL, NULL, 0));
}

int main(void)
{
	const char *out = getenv("SPTD_GOLDEN_WRITE");
	struct sptd_store *st;

	fixture_begin();
	st = fixture_create("golden.db");
	if (st) {
		write_rows(st);
		st = fixture_reopen(st);
	}
	if (st)
		dump_store(st);
	sptd_store_destroy(st);
	CHECK(dump_len < sizeof(dump) - 1);
	if (out) {
		FILE *f = fopen(out, "w");

		CHECK(f && fwrite(dump, 1, dump_len, f) == dump_len);
		if (f)
			fclose(f);
	} else {
		size_t len = 0;
		char *want = sptd_test_slurp(SPTD_GOLDEN_FILE, &len);

		CHECK(want != NULL);
		if (want && (len != dump_len || memcmp(want, dump, len) != 0)) {
			/* the first line that differs, for the reader */
			size_t i = 0, line = 0;

			while (i < len && i < dump_len && want[i] == dump[i])
				if (dump[i++] == '\n')
					line = i;
			fprintf(stderr, "dump differs from %s at:\n  want: %.120s\n  got:  %.120s\n",
			        SPTD_GOLDEN_FILE, want + line, dump + line);
			CHECK(0);
		} else {
			CHECK(want != NULL);
		}
		free(want);
	}
	fixture_end();
	return SPTD_TEST_END();
}
