/* test_derive_sideband.c — sptd_col_derive_pt_sideband on raw_sideband
 * rows made of hand-built perf records (perf_event_open(2) layouts, with
 * the sample_id trailer): AUX records flagged truncated, partial or
 * collided, LOST and LOST_SAMPLES, trace (re)starts, records that make no
 * gap, and a malformed tail.  Every gap row is compared exactly, times
 * shifted by meta perf_clock_offset_ns. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>

#include "derive_harness.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "store_rows.h"

/* Records back to back, as one raw_sideband row holds them. */
struct records {
	unsigned char buf[4096];
	size_t len;
	uint64_t sample_type;   /* which trailer fields follow each body */
};

/* Append a record of @type with @body and the trailer (pid, tid, @time,
 * @cpu as far as sample_type has them). */
static void rec(struct records *r, uint32_t type, const void *body, size_t body_len,
                uint64_t time, uint32_t cpu)
{
	struct perf_event_header hdr = { .type = type, .misc = 0 };
	unsigned char trailer[24];
	size_t tlen = 0;
	uint32_t pid = 42, tid = 43, res = 0;

	if (r->sample_type & PERF_SAMPLE_TID) {
		memcpy(trailer + tlen, &pid, 4);
		memcpy(trailer + tlen + 4, &tid, 4);
		tlen += 8;
	}
	if (r->sample_type & PERF_SAMPLE_TIME) {
		memcpy(trailer + tlen, &time, 8);
		tlen += 8;
	}
	if (r->sample_type & PERF_SAMPLE_CPU) {
		memcpy(trailer + tlen, &cpu, 4);
		memcpy(trailer + tlen + 4, &res, 4);
		tlen += 8;
	}
	hdr.size = (uint16_t)(sizeof(hdr) + body_len + tlen);
	if (r->len + hdr.size > sizeof(r->buf)) {
		CHECK(0);   /* the test's own buffer is too small */
		return;
	}
	memcpy(r->buf + r->len, &hdr, sizeof(hdr));
	memcpy(r->buf + r->len + sizeof(hdr), body, body_len);
	memcpy(r->buf + r->len + sizeof(hdr) + body_len, trailer, tlen);
	r->len += hdr.size;
}

static void aux(struct records *r, uint64_t offset, uint64_t size, uint64_t flags,
                uint64_t time, uint32_t cpu)
{
	uint64_t body[3] = { offset, size, flags };

	rec(r, PERF_RECORD_AUX, body, sizeof(body), time, cpu);
}

static void lost(struct records *r, uint32_t type, uint64_t n, uint64_t time, uint32_t cpu)
{
	uint64_t body[2] = { 7 /* id */, n };

	if (type == PERF_RECORD_LOST)
		rec(r, type, body, sizeof(body), time, cpu);
	else
		rec(r, type, &n, sizeof(n), time, cpu);
}

static void itrace_start(struct records *r, uint32_t pid, uint32_t tid, uint64_t time,
                         uint32_t cpu)
{
	uint32_t body[2] = { pid, tid };

	rec(r, PERF_RECORD_ITRACE_START, body, sizeof(body), time, cpu);
}

static void comm(struct records *r, uint64_t time, uint32_t cpu)
{
	unsigned char body[16] = { 0 };
	uint32_t pid = 42, tid = 43;

	memcpy(body, &pid, 4);
	memcpy(body + 4, &tid, 4);
	memcpy(body + 8, "app", 4);
	rec(r, PERF_RECORD_COMM, body, sizeof(body), time, cpu);
}

#define Q_GAPS "SELECT ts, dur, cpu, reason FROM gap ORDER BY id"

/* sysptd's own sample_type (TID|TIME|CPU: what derive assumes when meta
 * does not say): each gap on the CPU its record names. */
static void test_gaps(void)
{
	static const char want[] =
		"5|0|0|pt: keep\n"
		"1001000|0|0|sideband: pt aux data truncated (4096 bytes at offset 0)\n"
		"1002000|0|3|sideband: pt aux data has gaps (100 bytes at offset 4096)\n"
		"1003000|0|0|sideband: pt aux data collided\n"
		"1004000|0|0|sideband: 5 sideband records lost\n"
		"1005000|0|0|sideband: 9 samples lost\n"
		"1006000|0|0|sideband: pt trace (re)started (pid 42 tid 44)\n"
		"1007000|0|1|sideband: pt trace (re)started (pid 42 tid 45)\n"
		"0|0|1|sideband: malformed records skipped\n";
	struct records r0 = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU };
	struct records r1 = r0;
	struct perf_event_header cut = { .type = PERF_RECORD_AUX, .size = 200 };
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_test_store_new(harness_dir, "gaps", &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_meta_set_int(st, "perf_clock_offset_ns", 1000000), 0);
	CHECK_INT(SPTD_STORE_ADD(st, gap, 5, 0, 0, "pt: keep"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, gap, 6, 0, 0, "sideband: from an earlier decode"), 0);
	aux(&r0, 0, 4096, PERF_AUX_FLAG_TRUNCATED, 1000, 0);
	aux(&r0, 4096, 100, PERF_AUX_FLAG_PARTIAL, 2000, 3);
	aux(&r0, 4196, 50, PERF_AUX_FLAG_COLLISION, 3000, 0);
	aux(&r0, 4246, 50, 0, 3500, 0);                          /* a clean copy */
	aux(&r0, 4296, 50, PERF_AUX_FLAG_OVERWRITE, 3600, 0);    /* snapshot mode */
	lost(&r0, PERF_RECORD_LOST, 5, 4000, 0);
	lost(&r0, PERF_RECORD_LOST_SAMPLES, 9, 5000, 0);
	itrace_start(&r0, 42, 44, 6000, 0);
	comm(&r0, 6500, 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 0, 0, r0.buf, r0.len), 0);
	/* cpu 1: one good record, then one whose size runs past the data */
	itrace_start(&r1, 42, 45, 7000, 1);
	memcpy(r1.buf + r1.len, &cut, sizeof(cut));
	CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 1, 0, r1.buf, r1.len + sizeof(cut)), 0);

	CHECK_INT(sptd_col_derive_pt_sideband(st), 8);
	CHECK_ROWS(st, Q_GAPS, want);
	/* again: its own rows replaced */
	CHECK_INT(sptd_col_derive_pt_sideband(st), 8);
	CHECK_ROWS(st, "SELECT count(*) FROM gap", "9\n");
	sptd_store_destroy(st);
}

/* A sample_type without CPU (meta says so): gaps go on the CPU whose ring
 * held the record; without a time the record sits at the offset. */
static void test_no_cpu_field(void)
{
	struct records r = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME };
	struct records bare = { .sample_type = 0 };
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_test_store_new(harness_dir, "nocpu", &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_meta_set_int(st, "pt_sideband_sample_type",
	                                  PERF_SAMPLE_TID | PERF_SAMPLE_TIME), 0);
	aux(&r, 0, 10, PERF_AUX_FLAG_TRUNCATED, 100, 0);
	lost(&r, PERF_RECORD_LOST, 2, 200, 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 2, 0, r.buf, r.len), 0);
	CHECK_INT(sptd_col_derive_pt_sideband(st), 2);
	CHECK_ROWS(st, Q_GAPS,
	           "100|0|2|sideband: pt aux data truncated (10 bytes at offset 0)\n"
	           "200|0|2|sideband: 2 sideband records lost\n");
	sptd_store_destroy(st);

	/* sample_type 0: no trailer at all */
	st = NULL;
	CHECK_INT(sptd_test_store_new(harness_dir, "bare", &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_meta_set_int(st, "pt_sideband_sample_type", 0), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "perf_clock_offset_ns", 50), 0);
	aux(&bare, 0, 10, PERF_AUX_FLAG_COLLISION, 0, 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 4, 0, bare.buf, bare.len), 0);
	CHECK_INT(sptd_col_derive_pt_sideband(st), 1);
	CHECK_ROWS(st, Q_GAPS, "50|0|4|sideband: pt aux data collided\n");
	sptd_store_destroy(st);
}

static void test_invalid(void)
{
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_col_derive_pt_sideband(NULL), -EINVAL);
	/* no sideband: no gaps, success */
	CHECK_INT(sptd_test_store_new(harness_dir, "empty", &st), 0);
	CHECK_INT(sptd_col_derive_pt_sideband(st), 0);
	CHECK_ROWS(st, Q_GAPS, "");
	sptd_store_destroy(st);
}

int main(void)
{
	if (harness_init("dsideband") < 0)
		return 1;
	test_invalid();
	test_gaps();
	test_no_cpu_field();
	harness_fini();
	return SPTD_TEST_END();
}
