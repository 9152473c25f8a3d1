/* test_dec_tplace.c — time placement of flow events (decode/flowtime.c):
 * events between two timing packets by instruction position, stretches
 * where tracing stopped (average rate, clipped at the stop, bounded by the
 * next time and the next context switch), events before the first time,
 * traces without time, logged stops replayed (as after a stitch), and the
 * CYC probe on crafted PT. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "flow-local.h"
#include "sptd_test.h"

/* Add event @i, stamped like phase 1 does: its stretch's time. */
static void event(struct sptd_dec_tplace *tp, struct sptd_dec_flowrec *ev, size_t i,
                  uint64_t pos)
{
	size_t seg = sptd_dec_tplace_seg_now(tp);

	memset(&ev[i], 0, sizeof(ev[i]));
	ev[i].ev.seq = i;
	ev[i].ev.ts = seg == SIZE_MAX ? -1 : tp->segs[seg].ts;
	ev[i].pos = pos;
	ev[i].seg = seg;
}

/* Place @n events in one run. */
static void place(const struct sptd_dec_tplace *tp, struct sptd_dec_flowrec *ev, size_t n,
                  const struct sptd_dec_switch *sw, size_t nsw)
{
	struct sptd_dec_tplace_cursor cur = { 0 };

	sptd_dec_tplace_apply(tp, &cur, ev, n, sw, nsw);
}

/* Two times, no stop: proportional to the instructions. */
static void test_between(void)
{
	struct sptd_dec_tplace tp = { 0 };
	struct sptd_dec_flowrec ev[4];

	CHECK(sptd_dec_tplace_seg_now(&tp) == SIZE_MAX);
	CHECK_INT(sptd_dec_tplace_mark(&tp, 1000, 0), 0);
	event(&tp, ev, 0, 0);
	event(&tp, ev, 1, 25);
	event(&tp, ev, 2, 50);
	CHECK_INT(sptd_dec_tplace_mark(&tp, 2000, 100), 0);
	event(&tp, ev, 3, 100);
	place(&tp, ev, 4, NULL, 0);
	CHECK_INT(ev[0].ev.ts, 1000);
	CHECK_INT(ev[1].ev.ts, 1250);
	CHECK_INT(ev[2].ev.ts, 1500);
	CHECK_INT(ev[3].ev.ts, 2000);
	sptd_dec_tplace_fini(&tp);
	CHECK(tp.segs == NULL && tp.stops == NULL && tp.capsegs == 0);
}

/* A stop inside a stretch: the rate of the stretches before, clipped at the
 * stop position, bounded by the next switch. */
static void test_stopped(void)
{
	struct sptd_dec_tplace tp = { 0 };
	struct sptd_dec_flowrec ev[3];
	struct sptd_dec_switch sw[2] = {
		{ .ts = 500, .cpu = 0 }, { .ts = 2300, .cpu = 0 },
	};

	CHECK_INT(sptd_dec_tplace_mark(&tp, 0, 0), 0);
	CHECK_INT(sptd_dec_tplace_mark(&tp, 1000, 100), 0);   /* 10 ns per instruction */
	CHECK_INT(sptd_dec_tplace_mark(&tp, 2000, 200), 0);
	event(&tp, ev, 0, 220);
	event(&tp, ev, 1, 260);
	CHECK_INT(sptd_dec_tplace_stop(&tp, 250), 0);
	event(&tp, ev, 2, 270);
	CHECK_INT(sptd_dec_tplace_mark(&tp, 5000, 300), 0);
	CHECK(tp.segs[2].stopped && tp.segs[2].stop_pos == 250);
	CHECK(!tp.segs[1].stopped);

	/* no switch: bounded by the next time only */
	place(&tp, ev, 3, NULL, 0);
	CHECK_INT(ev[0].ev.ts, 2200);
	CHECK_INT(ev[1].ev.ts, 2500);      /* clipped at the stop */
	CHECK_INT(ev[2].ev.ts, 2500);
	/* the next switch after the stretch's time bounds it */
	ev[0].ev.ts = ev[1].ev.ts = ev[2].ev.ts = 2000;
	place(&tp, ev, 3, sw, 2);
	CHECK_INT(ev[0].ev.ts, 2200);
	CHECK_INT(ev[1].ev.ts, 2300);
	CHECK_INT(ev[2].ev.ts, 2300);
	/* events not stamped with their stretch's time are left alone */
	ev[0].ev.ts = 1999;
	place(&tp, ev, 1, NULL, 0);
	CHECK_INT(ev[0].ev.ts, 1999);
	sptd_dec_tplace_fini(&tp);
}

/* A stop in the first stretch: no rate known yet, the step time stays. A
 * stop at a stretch's start marks the stretch before too. */
static void test_no_rate(void)
{
	struct sptd_dec_tplace tp = { 0 };
	struct sptd_dec_flowrec ev[1];

	CHECK_INT(sptd_dec_tplace_mark(&tp, 100, 0), 0);
	event(&tp, ev, 0, 40);
	CHECK_INT(sptd_dec_tplace_stop(&tp, 50), 0);
	CHECK_INT(sptd_dec_tplace_mark(&tp, 900, 80), 0);
	place(&tp, ev, 1, NULL, 0);
	CHECK_INT(ev[0].ev.ts, 100);
	/* a stretch beginning exactly at the stop position: both marked */
	CHECK_INT(sptd_dec_tplace_mark(&tp, 1000, 120), 0);
	CHECK_INT(sptd_dec_tplace_stop(&tp, 80), 0);
	CHECK(tp.segs[2].stopped && tp.segs[2].stop_pos == 80);
	CHECK(tp.segs[1].stopped && tp.segs[1].stop_pos == 80);
	CHECK(tp.segs[0].stop_pos == 50);
	sptd_dec_tplace_fini(&tp);
	sptd_dec_tplace_fini(NULL);
}

/* Stops are logged: clearing every stretch's stop state and replaying the
 * log (what a stitch of segments does) gives what applying them as they
 * came gave, also for stops that reach back over several stretches. */
static void test_restop(void)
{
	struct sptd_dec_tplace tp = { 0 };
	struct sptd_dec_tseg before[8];
	size_t i, same = 1;

	CHECK_INT(sptd_dec_tplace_mark(&tp, 100, 0), 0);
	CHECK_INT(sptd_dec_tplace_stop(&tp, 30), 0);
	CHECK_INT(sptd_dec_tplace_mark(&tp, 200, 50), 0);
	CHECK_INT(sptd_dec_tplace_mark(&tp, 300, 60), 0);
	CHECK_INT(sptd_dec_tplace_mark(&tp, 400, 60), 0);
	CHECK_INT(sptd_dec_tplace_stop(&tp, 60), 0);    /* back over two stretches */
	CHECK_INT(sptd_dec_tplace_mark(&tp, 500, 90), 0);
	CHECK_INT(sptd_dec_tplace_stop(&tp, 95), 0);
	CHECK_INT(sptd_dec_tplace_stop(&tp, 91), 0);    /* an earlier stop position wins */
	CHECK_INT(tp.nstops, 4);
	memcpy(before, tp.segs, tp.nsegs * sizeof(*before));
	for (i = 0; i < tp.nsegs; i++)
		tp.segs[i].stopped = (int)(i & 1);
	sptd_dec_tplace_restop(&tp);
	for (i = 0; i < tp.nsegs; i++)
		same &= tp.segs[i].stopped == before[i].stopped &&
		        (!before[i].stopped || tp.segs[i].stop_pos == before[i].stop_pos);
	CHECK(same);
	CHECK(tp.segs[0].stopped && tp.segs[0].stop_pos == 30);
	CHECK(tp.segs[1].stopped && tp.segs[1].stop_pos == 60); /* the stretch 60 lies in */
	CHECK(tp.segs[2].stopped && tp.segs[3].stopped && tp.segs[3].stop_pos == 60);
	CHECK(tp.segs[4].stopped && tp.segs[4].stop_pos == 91);
	sptd_dec_tplace_fini(&tp);
}

static void test_fix_times(void)
{
	struct sptd_dec_flowrec ev[3];
	size_t i;

	memset(ev, 0, sizeof(ev));
	for (i = 0; i < 3; i++)
		ev[i].ev.seq = 10 + i;
	ev[0].ev.ts = -1;
	ev[1].ev.ts = 700;
	ev[2].ev.ts = 800;
	sptd_dec_flows_fix_times(ev, 3, 1, 700);
	CHECK_INT(ev[0].ev.ts, 700);
	CHECK_INT(ev[0].ev.flags, 0);
	CHECK_INT(ev[2].ev.ts, 800);
	/* no timing packet at all: order numbers */
	sptd_dec_flows_fix_times(ev, 3, 0, -1);
	CHECK_INT(ev[0].ev.ts, 10);
	CHECK_INT(ev[2].ev.ts, 12);
	CHECK_INT(ev[1].ev.flags, SPTD_DEC_F_NO_TIME);
}

/* PT of one PSB+, with or without a CYC packet after it. */
static int has_cyc(int with_cyc)
{
	uint8_t buf[256];
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet p;
	uint64_t off = 0;
	int bad = 0, ret;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return -ENOMEM;
	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	bad |= pt_enc_next(enc, &p) < 0;
	p.type = ppt_psbend;
	bad |= pt_enc_next(enc, &p) < 0;
	if (with_cyc) {
		p.type = ppt_cyc;
		p.payload.cyc.value = 5;
		bad |= pt_enc_next(enc, &p) < 0;
	}
	p.type = ppt_pad;
	bad |= pt_enc_next(enc, &p) < 0;
	bad |= pt_enc_get_offset(enc, &off) < 0;
	pt_free_encoder(enc);
	if (bad)
		return -EIO;
	cfg.end = buf + off;
	ret = sptd_dec_trace_has_cyc(&cfg);
	return ret;
}

int main(void)
{
	test_between();
	test_stopped();
	test_no_rate();
	test_restop();
	test_fix_times();
	CHECK_INT(has_cyc(0), 0);
	CHECK_INT(has_cyc(1), 1);
	return SPTD_TEST_END();
}
