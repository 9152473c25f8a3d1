/* test_derive_textpoke.c — an incident whose kernel code was rewritten
 * between the trace and the kcore copy (issue 34 item 8): the TEXT_POKE
 * record kept in raw_sideband, on the perf clock, and meta
 * pt_kernel_copied_ns reach the decoder through sptd_col_derive_pt, so the
 * slices are the functions that ran (the static-key case of
 * tests/lib/kpoke_case.h: G), not those the copy would run (H). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "derive_harness.h"
#include "fakepmu/fakepmu.h"
#include "kpoke_case.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "store_rows.h"

/* The functions slices called, in time order. */
#define Q_CALLS                                                                  \
	"SELECT y.name FROM slice s JOIN symbol y ON y.id = s.symbol_id "        \
	"ORDER BY s.ts, s.depth"

/* An incident of one CPU: the copied text, the PT of passes at @tscs (the
 * incident clock is the TSC: no tsc meta), the sideband's TEXT_POKE at
 * perf time @poke_perf (0: none) with perf clock offset @offset, the copy
 * read at @copied (0: meta absent); then derive, and the calls. */
static void run(const char *name, const uint64_t *tscs, int n, uint64_t poke_perf,
                int64_t offset, int64_t copied, const char *want)
{
	static uint8_t text[KPOKE_TEXT_LEN];
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;
	unsigned char sb[256];
	uint8_t pt[512];
	size_t pt_len = kpoke_trace(pt, sizeof(pt), tscs, n), sb_len = 0;

	kpoke_text(text);
	CHECK(pt_len > 0);
	CHECK_INT(harness_case(name, &tasks, &st), 0);
	if (!tasks || !st)
		goto out;
	CHECK_INT(sptd_store_meta_set(st, "source", "pt"), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "cpus", 1), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "perf_clock_offset_ns", offset), 0);
	if (copied)
		CHECK_INT(sptd_store_meta_set_int(st, "pt_kernel_copied_ns", copied), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, "[kernel.text]", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_image, 1, KPOKE_TEXT, text, sizeof(text), NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_pt, 0, 0, pt, pt_len), 0);
	if (poke_perf) {
		sb_len = fakepmu_rec_text_poke(sb, 0, sizeof(sb), KPOKE_SITE, kpoke_jmp_slow, 5,
		                               kpoke_nop5, 5, poke_perf, 0);
		CHECK(sb_len > 0);
		CHECK_INT(SPTD_STORE_ADD(st, raw_sideband, 0, 2, sb, sb_len), 0);
	}
	CHECK_INT(sptd_col_derive_pt(st, tasks, 1), 0);
	CHECK_ROWS(st, Q_CALLS, want);
	CHECK_ROWS(st, "SELECT count(*) FROM gap WHERE reason LIKE 'pt: %'", "0\n");
out:
	harness_case_end(tasks, st);
}

int main(void)
{
	const uint64_t one[1] = { 1000 }, two[2] = { 1000, 3000 };

	if (harness_init("derive-textpoke") < 0)
		return 1;
	/* no rewrite known: the copy's flow */
	run("none", one, 1, 0, 0, 5000, "[kernel.text]+0x40\n[kernel.text]+0x60\n");
	/* rewritten at 2000 (perf 1500 + offset 500), copied at 5000: the
	 * trace at 1000 ran the jmp */
	run("after", one, 1, 1500, 500, 5000, "[kernel.text]+0x40\n[kernel.text]+0xa0\n");
	/* a trace across the rewrite: each pass on its side */
	run("across", two, 2, 1500, 500, 5000,
	    "[kernel.text]+0x40\n[kernel.text]+0xa0\n[kernel.text]+0x40\n[kernel.text]+0x60\n");
	/* the rewrite came after the copy was read: not in it */
	run("late", one, 1, 5500, 500, 5000, "[kernel.text]+0x40\n[kernel.text]+0x60\n");
	/* a capture from before pt_kernel_copied_ns: every rewrite is taken
	 * as copied */
	run("undated", one, 1, 1500, 500, 0, "[kernel.text]+0x40\n[kernel.text]+0xa0\n");
	harness_fini();
	return SPTD_TEST_END();
}
