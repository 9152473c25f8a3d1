/* test_pt_ring.c — AUX overwrite-ring copies at every wrap edge (head as a
 * counter and as a position), sideband records parsed from bytes (good,
 * cut short, malformed), and the rows they become in a real incident. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>

#include "fakepmu/fakepmu.h"
#include "pt-local.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "sptd_test.h"

#define RING 64

/* Stream @n bytes of @stream into a zeroed ring as the PMU would, copy
 * them back and compare with the stream's last min(n, RING) bytes. */
static int ring_case(const unsigned char *stream, size_t n, int counter)
{
	unsigned char ring[RING] = { 0 }, out[RING];
	size_t want = n < RING ? n : RING;
	int64_t got;

	for (size_t i = 0; i < n; i++)
		ring[i % RING] = stream[i];
	got = sptd_col_pt_aux_copy(ring, RING, counter ? n : n % RING, out);
	if (got != (int64_t)want) {
		fprintf(stderr, "n=%zu counter=%d: copied %lld, want %zu\n", n, counter,
		        (long long)got, want);
		return 0;
	}
	return memcmp(out, stream + n - want, want) == 0;
}

static void test_aux_copy(void)
{
	unsigned char stream[4 * RING], zeros_end[2 * RING], out[RING], ring[RING] = { 0 };

	for (size_t i = 0; i < sizeof(stream); i++)
		stream[i] = (unsigned char)(1 + i % 251);
	/* every length from empty to three times round, both head styles */
	for (size_t n = 0; n <= 3 * RING + 1; n++) {
		CHECK(ring_case(stream, n, 1));
		CHECK(ring_case(stream, n, 0));
	}
	/* PAD (0x00) bytes at the end of an unwrapped stream are kept */
	memcpy(zeros_end, stream, sizeof(zeros_end));
	memset(zeros_end + 20, 0, 10);
	CHECK(ring_case(zeros_end, 30, 0));
	CHECK(ring_case(zeros_end, 30, 1));
	/* wrapped with zeros after the head: a counter head still knows */
	memset(zeros_end + RING + 10, 0, RING - 10);
	CHECK(ring_case(zeros_end, 2 * RING - 5, 1));
	/* bad arguments */
	CHECK_INT(sptd_col_pt_aux_copy(NULL, RING, 0, out), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_copy(ring, 48, 0, out), -EINVAL);   /* not a power of two */
	CHECK_INT(sptd_col_pt_aux_copy(ring, 0, 0, out), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_copy(ring, RING, 0, NULL), -EINVAL);
}

/* Two runs into one ring, as the kernel does across a freeze: run 1 writes
 * @n1 bytes of one stream, the PMU stops, the mark is taken, run 2 writes
 * @n2 bytes of another at the same head without clearing.  The copy must
 * be run 2's last min(n2, RING) bytes and nothing of run 1, with @wrapped
 * said when run 2 went round (n2 >= RING). */
static int since_case(size_t n1, size_t n2, int counter)
{
	unsigned char ring[RING] = { 0 }, out[RING], run2[3 * RING];
	struct sptd_col_pt_aux_mark mark;
	size_t want = n2 < RING ? n2 : RING, head = 0;
	int64_t got;
	int wrapped = -1;

	for (size_t i = 0; i < n1; i++)
		ring[head++ % RING] = (unsigned char)(1 + i % 100);      /* 1..100 */
	if (sptd_col_pt_aux_mark(ring, RING, counter ? head : head % RING, &mark) < 0)
		return 0;
	for (size_t i = 0; i < n2; i++) {
		run2[i] = (unsigned char)(101 + (i * 13) % 100);        /* 101..200 */
		ring[head++ % RING] = run2[i];
	}
	got = sptd_col_pt_aux_copy_since(ring, RING, counter ? head : head % RING, &mark, out,
	                                 &wrapped);
	if (got != (int64_t)want || wrapped != (n2 >= RING)) {
		fprintf(stderr, "n1=%zu n2=%zu counter=%d: copied %lld wrapped %d, want %zu "
		        "wrapped %d\n", n1, n2, counter, (long long)got, wrapped, want, n2 >= RING);
		return 0;
	}
	return memcmp(out, run2 + n2 - want, want) == 0;
}

static void test_aux_copy_since(void)
{
	unsigned char ring[RING] = { 0 }, out[RING];
	struct sptd_col_pt_aux_mark mark;

	/* run 1 from empty to twice round, run 2 from nothing to twice round:
	 * not wrapped, exactly full (n2 == RING), wrapped, both head styles */
	for (size_t n1 = 0; n1 <= 2 * RING + 1; n1++)
		for (size_t n2 = 0; n2 <= 2 * RING + 1; n2++) {
			CHECK(since_case(n1, n2, 1));
			CHECK(since_case(n1, n2, 0));
		}
	/* a ring smaller than the reference keeps all of it */
	CHECK_INT(sptd_col_pt_aux_mark(ring, 16, 3, &mark), 0);
	CHECK_INT(mark.ref_len, 16);
	/* bad arguments */
	CHECK_INT(sptd_col_pt_aux_mark(NULL, RING, 0, &mark), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_mark(ring, 48, 0, &mark), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_mark(ring, RING, 0, NULL), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_mark(ring, RING, 0, &mark), 0);
	CHECK_INT(sptd_col_pt_aux_copy_since(NULL, RING, 0, &mark, out, NULL), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_copy_since(ring, 48, 0, &mark, out, NULL), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_copy_since(ring, RING, 0, NULL, out, NULL), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_copy_since(ring, RING, 0, &mark, NULL, NULL), -EINVAL);
	CHECK_INT(sptd_col_pt_aux_copy_since(ring, 32, 0, &mark, out, NULL), -EINVAL); /* ref > ring */
	CHECK_INT(sptd_col_pt_aux_copy_since(ring, RING, 0, &mark, out, NULL), 0);
}

struct seen {
	struct sptd_col_perf_record r[16];
	char names[16][64];
	int n;
};

static int on_rec(void *ctx, const struct sptd_col_perf_record *r)
{
	struct seen *s = ctx;

	if (s->n < 16) {
		s->r[s->n] = *r;
		if (r->name)
			snprintf(s->names[s->n], sizeof(s->names[0]), "%s", r->name);
		s->n++;
	}
	return 0;
}

static int stop_at_two(void *ctx, const struct sptd_col_perf_record *r)
{
	struct seen *s = ctx;

	(void)r;
	return ++s->n == 2 ? -ECANCELED : 0;
}

static size_t sample_records(unsigned char *buf, size_t cap)
{
	size_t len = 0;

	len = fakepmu_rec_comm(buf, len, cap, 100, 101, "worker", 5000, 1);
	len = fakepmu_rec_mmap2(buf, len, cap, 100, 100, 0x400000, 0x2000, 0x1000, "/usr/bin/x",
	                        5100, 1);
	/* the kernel's order: 7 out, (CR3 write), 101 in */
	len = fakepmu_rec_switch(buf, len, cap, 1, 7, 7, 100, 101, 6000, 1);   /* 7 out, next 101 */
	len = fakepmu_rec_switch(buf, len, cap, 0, 100, 101, 7, 7, 6400, 1);   /* 101 in, prev 7 */
	len = fakepmu_rec_aux(buf, len, cap, 4096, 8192, PERF_AUX_FLAG_TRUNCATED |
	                      PERF_AUX_FLAG_OVERWRITE, 7000, 1);
	len = fakepmu_rec_lost(buf, len, cap, 12, 7100, 1);
	len = fakepmu_rec_itrace(buf, len, cap, 100, 101, 7200, 1);
	len = fakepmu_rec_aux(buf, len, cap, 0, 100, PERF_AUX_FLAG_OVERWRITE, 7300, 1);
	return len;
}

static void test_parse(void)
{
	unsigned char buf[2048];
	uint64_t st = sptd_col_pt_sideband_sample_type();
	size_t len = sample_records(buf, sizeof(buf));
	struct seen s = { .n = 0 };

	CHECK_INT(sptd_col_pt_sideband_parse(buf, len, st, on_rec, &s), 8);
	CHECK_INT(s.r[0].type, PERF_RECORD_COMM);
	CHECK_INT(s.r[0].pid, 100);
	CHECK_INT(s.r[0].tid, 101);
	CHECK_STR(s.names[0], "worker");
	CHECK_INT(s.r[0].id.time, 5000);
	CHECK_INT(s.r[0].id.cpu, 1);
	CHECK_INT(s.r[1].type, PERF_RECORD_MMAP2);
	CHECK(s.r[1].addr == 0x400000 && s.r[1].len == 0x2000 && s.r[1].pgoff == 0x1000);
	CHECK_STR(s.names[1], "/usr/bin/x");
	CHECK_INT(s.r[1].prot & 4, 4);   /* PROT_EXEC */
	CHECK_INT(s.r[2].switch_out, 1);
	CHECK_INT(s.r[2].other_tid, 101);
	CHECK_INT(s.r[3].switch_out, 0);
	CHECK_INT(s.r[3].id.tid, 101);
	CHECK_INT(s.r[3].other_tid, 7);
	CHECK_INT(s.r[4].aux_offset, 4096);
	CHECK_INT(s.r[4].aux_size, 8192);
	CHECK_INT(s.r[4].aux_flags & PERF_AUX_FLAG_TRUNCATED, PERF_AUX_FLAG_TRUNCATED);
	CHECK_INT(s.r[5].lost, 12);
	CHECK_INT(s.r[6].type, PERF_RECORD_ITRACE_START);
	CHECK_INT(s.r[6].tid, 101);

	/* cut short anywhere inside the last record: the earlier ones arrive,
	 * then -EBADMSG */
	for (size_t cut = 1; cut < 40; cut++) {
		s.n = 0;
		CHECK_INT(sptd_col_pt_sideband_parse(buf, len - cut, st, on_rec, &s), -EBADMSG);
		CHECK_INT(s.n, 7);
	}
	/* a header claiming less than a header, or zero type */
	{
		unsigned char bad[64];
		struct perf_event_header h = { .type = PERF_RECORD_COMM, .misc = 0, .size = 4 };

		memset(bad, 0, sizeof(bad));
		memcpy(bad, &h, sizeof(h));
		CHECK_INT(sptd_col_pt_sideband_parse(bad, sizeof(bad), st, on_rec, &s), -EBADMSG);
		h.size = 16;   /* too short for the sample_id trailer */
		memcpy(bad, &h, sizeof(h));
		CHECK_INT(sptd_col_pt_sideband_parse(bad, sizeof(bad), st, on_rec, &s), -EBADMSG);
		h.type = 0;
		h.size = 32;
		memcpy(bad, &h, sizeof(h));
		CHECK_INT(sptd_col_pt_sideband_parse(bad, sizeof(bad), st, on_rec, &s), -EBADMSG);
		/* a COMM whose name has no NUL inside the record */
		len = fakepmu_rec_comm(bad, 0, sizeof(bad), 1, 1, "abcdefg", 1, 0);
		memset(bad + 16, 'x', 8);
		CHECK_INT(sptd_col_pt_sideband_parse(bad, len, st, on_rec, &s), -EBADMSG);
	}
	/* a callback's error stops the walk */
	len = sample_records(buf, sizeof(buf));
	s.n = 0;
	CHECK_INT(sptd_col_pt_sideband_parse(buf, len, st, stop_at_two, &s), -ECANCELED);
	CHECK_INT(sptd_col_pt_sideband_parse(NULL, 10, st, on_rec, &s), -EINVAL);
	CHECK_INT(sptd_col_pt_sideband_parse(buf, len, st, NULL, &s), -EINVAL);
	CHECK_INT(sptd_col_pt_sideband_parse(buf, 0, st, on_rec, &s), 0);
}

static void test_store(void)
{
	char path[] = "/tmp/sptd-ptring-XXXXXX", db[64];
	unsigned char buf[2048];
	struct sptd_store *st = NULL;
	size_t len = sample_records(buf, sizeof(buf));
	int64_t v = 0;
	struct sptd_store_stmt *q = NULL;

	if (!mkdtemp(path))
		return;
	snprintf(db, sizeof(db), "%s/i.db", path);
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_meta_set_int(st, "perf_clock_offset_ns", 1000000), 0);
	CHECK_INT(sptd_col_pt_sideband_store(st, 1, 0, buf, len, sptd_col_pt_sideband_sample_type(),
	                                     1000000), 8);
	/* one raw_switch per switch, at the switch-out (the CPU is the next
	 * task's from there: its CR3 is loaded before the switch-in record),
	 * on the incident clock */
	CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM raw_switch", &v), 0);
	CHECK_INT(v, 1);
	CHECK_INT(sptd_store_prepare(st, "SELECT ts, cpu, prev_tid, next_tid, next_comm FROM raw_switch",
	                             &q), 0);
	if (q && sptd_store_step(q) == 1) {
		CHECK_INT(sptd_store_column_int(q, 0), 1006000);
		CHECK_INT(sptd_store_column_int(q, 1), 1);
		CHECK_INT(sptd_store_column_int(q, 2), 7);
		CHECK_INT(sptd_store_column_int(q, 3), 101);
		CHECK_STR(sptd_store_column_text(q, 4), "worker");
	}
	sptd_store_finalize(q);
	q = NULL;
	CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM raw_task WHERE pid = 100 AND "
	                               "tid = 101 AND comm = 'worker'", &v), 0);
	CHECK_INT(v, 1);
	/* cpu 3's ring lost the switch-out of its oldest switch: that
	 * switch-in stands in for it; the next switch is stored once, at its
	 * switch-out */
	{
		unsigned char sw[512];
		size_t n = 0;

		n = fakepmu_rec_switch(sw, n, sizeof(sw), 0, 55, 55, 9, 9, 8000, 3);    /* 55 in */
		n = fakepmu_rec_switch(sw, n, sizeof(sw), 1, 55, 55, 0, 0, 9000, 3);    /* 55 out */
		n = fakepmu_rec_switch(sw, n, sizeof(sw), 0, 0, 0, 55, 55, 9300, 3);    /* 0 in */
		CHECK_INT(sptd_col_pt_sideband_store(st, 3, 0, sw, n,
		                                     sptd_col_pt_sideband_sample_type(), 0), 3);
		CHECK_INT(sptd_store_prepare(st, "SELECT ts, prev_tid, next_tid FROM raw_switch "
		                             "WHERE cpu = 3 ORDER BY ts", &q), 0);
		CHECK_INT(q && sptd_store_step(q) == 1, 1);
		CHECK_INT(sptd_store_column_int(q, 0), 8000);
		CHECK_INT(sptd_store_column_int(q, 1), 9);
		CHECK_INT(sptd_store_column_int(q, 2), 55);
		CHECK_INT(q && sptd_store_step(q) == 1, 1);
		CHECK_INT(sptd_store_column_int(q, 0), 9000);
		CHECK_INT(sptd_store_column_int(q, 1), 55);
		CHECK_INT(sptd_store_column_int(q, 2), 0);
		CHECK_INT(q && sptd_store_step(q) == 1, 0);
		sptd_store_finalize(q);
	}
	/* gaps: truncated AUX, LOST, ITRACE_START (not the clean AUX) */
	CHECK_INT(sptd_col_derive_pt_sideband(st), 3);
	CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM gap WHERE cpu = 1 AND "
	                               "reason LIKE 'sideband: pt aux data truncated%' AND ts = 1007000",
	                               &v), 0);
	CHECK_INT(v, 1);
	CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM gap WHERE reason = "
	                               "'sideband: 12 sideband records lost'", &v), 0);
	CHECK_INT(v, 1);
	/* rerunning replaces, not duplicates */
	CHECK_INT(sptd_col_derive_pt_sideband(st), 3);
	CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM gap", &v), 0);
	CHECK_INT(v, 3);
	/* a corrupt raw_sideband row becomes a gap, not a failure */
	CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 2, 0, "\x01\x00\x00\x00\x04\x00", 6), 0);
	CHECK_INT(sptd_col_derive_pt_sideband(st), 4);
	CHECK_INT(sptd_col_derive_pt_sideband(NULL), -EINVAL);
	CHECK_INT(sptd_col_pt_sideband_store(NULL, 0, 0, buf, len, 0, 0), -EINVAL);
	sptd_store_destroy(st);
	rmdir(path);
}

int main(void)
{
	test_aux_copy();
	test_aux_copy_since();
	test_parse();
	test_store();
	return SPTD_TEST_END();
}
