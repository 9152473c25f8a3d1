/* pt_clock.c — the Intel PT source's clocks: TSC -> perf clock ->
 * CLOCK_MONOTONIC, set up when the source is created and measured again at
 * every freeze (pt_source.c calls in), and the perf-clock probe for
 * machines whose perf page offers no TSC conversion.
 *
 * Measuring the perf clock (the scheduler's local_clock) against
 * CLOCK_MONOTONIC, on which windows, triggers and ftrace lie.  The
 * relation drifts: NTP slews CLOCK_MONOTONIC (up to 500 ppm) and not the
 * perf clock, so it is measured again at every freeze and written with
 * each incident (tsc_*, perf_clock_offset_ns, perf_clock_measured_ns,
 * perf_clock_error_ns).
 *
 * With cap_user_time_zero (the page's TSC -> perf conversion; the kernel
 * sets it only while sched_clock is the stable native TSC one,
 * arch/x86/events/core.c arch_perf_update_userpage) a TSC read between
 * two CLOCK_MONOTONIC reads gives the offset.  Without it (a KVM guest on
 * kvm-clock) PT's TSC is mapped straight onto CLOCK_MONOTONIC by a line
 * measured here, and the sideband's perf-clock times need the offset
 * found another way: prctl(PR_SET_NAME) makes the kernel write a COMM
 * record of this thread stamped with the perf clock (sample_id_all TIME,
 * as perf's "perf time to TSC" test uses it), between two CLOCK_MONOTONIC
 * reads. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pt-local.h"

/* Through the syscall table: a fake PMU serving recorded trace keeps the
 * TSC it stamped that trace with. */
static uint64_t read_tsc(void)
{
	return sptd_col_sys.tsc();
}

/* Tries of each measurement; the narrowest bracket wins. */
#define CLOCK_TRIES 5

struct probe_ctx {
	int tid;                 /* this thread */
	uint64_t time;           /* perf time of its newest COMM record */
	int found;
};

static int on_probe_record(void *arg, const struct sptd_col_perf_record *r)
{
	struct probe_ctx *p = arg;

	if (r->type == SPTD_PERF_RECORD_COMM && r->tid == p->tid && r->id.present &&
	    r->id.has_time) {
		p->time = r->id.time;
		p->found = 1;
	}
	return 0;
}

int sptd_col_pt_perf_clock_probe(int64_t *offset_ns, int64_t *err_ns)
{
	uint64_t st = sptd_col_pt_sideband_sample_type();
	struct sptd_col_perf_event ev = {
		.type = SPTD_PERF_TYPE_SOFTWARE,
		.config = { SPTD_PERF_COUNT_SW_DUMMY },
		.period = 1,
		.sample_type = st,
		.flags = SPTD_PERF_EV_SAMPLE_ID_ALL | SPTD_PERF_EV_DISABLED | SPTD_PERF_EV_COMM,
	};
	struct sptd_col_perf_ring ring = { 0 };
	unsigned char buf[4096];
	char name[17] = "";
	int64_t best = INT64_MAX;
	int fd, ret;

	if (!offset_ns || !err_ns)
		return -EINVAL;
	fd = sptd_col_perf_event_open(&ev, 0, -1, -1);
	if (fd < 0)
		return fd;
	ret = sptd_col_perf_ring_map(&ring, fd, 1, 1);
	if (ret < 0)
		goto out;
	if (prctl(PR_GET_NAME, name, 0, 0, 0) < 0) {
		ret = -errno;
		goto out;
	}
	ret = -ENODATA;
	for (int i = 0; i < CLOCK_TRIES; i++) {
		struct probe_ctx p = { .tid = (int)syscall(SYS_gettid) };
		int64_t a, b, n;

		a = sptd_col_now_ns();
		sptd_col_perf_event_enable(fd);
		prctl(PR_SET_NAME, name, 0, 0, 0);   /* the same name: a COMM record */
		sptd_col_perf_event_disable(fd);
		b = sptd_col_now_ns();
		n = sptd_col_perf_ring_consume(&ring, buf, sizeof(buf));
		if (n > 0)
			sptd_col_pt_sideband_parse(buf, (size_t)n, st, on_probe_record, &p);
		if (p.found && b - a < best) {
			best = b - a;
			*offset_ns = a + (b - a) / 2 - (int64_t)p.time;
			*err_ns = (b - a + 1) / 2;
			ret = 0;
		}
	}
out:
	sptd_col_perf_ring_unmap(&ring);
	sptd_col_sys.close(fd);
	return ret;
}

/* A TSC read and the CLOCK_MONOTONIC instant it was taken at: of
 * CLOCK_TRIES (monotonic, TSC, monotonic) reads, the narrowest bracket's
 * TSC in *@tsc and middle in *@mono_ns.  Returns that bracket's width (ns). */
static int64_t tsc_mono_pair(uint64_t *tsc, int64_t *mono_ns)
{
	int64_t best = INT64_MAX;

	for (int i = 0; i < CLOCK_TRIES; i++) {
		int64_t a = sptd_col_now_ns();
		uint64_t x = read_tsc();
		int64_t b = sptd_col_now_ns();

		if (b - a < best) {
			best = b - a;
			*tsc = x;
			*mono_ns = a + (b - a) / 2;
		}
	}
	return best;
}

/* The TSC -> CLOCK_MONOTONIC line without the page's conversion: through
 * the pair read at create (@base_*, which every later TSC of the trace
 * follows: the conversion subtracts it) and a pair read now, so it is
 * exact at the freeze, where the window ends. */
static void tsc_line(struct sptd_col_pt_time *t)
{
	uint64_t best_tsc = 0, dtsc;
	int64_t best_ns = 0;
	unsigned __int128 m = 0;

	tsc_mono_pair(&best_tsc, &best_ns);
	t->zero_tsc = t->base_tsc;
	t->zero_ns = t->base_ns;
	/* the finest shift whose multiplier fits 32 bits */
	dtsc = best_tsc > t->base_tsc ? best_tsc - t->base_tsc : 0;
	for (t->shift = 31; dtsc && best_ns > t->base_ns && t->shift >= 0; t->shift--) {
		m = ((unsigned __int128)(uint64_t)(best_ns - t->base_ns) << t->shift) / dtsc;
		if (m <= UINT32_MAX)
			break;
	}
	if (!m || m > UINT32_MAX || t->shift < 0) {
		t->shift = 24;
		m = 1u << 24;   /* no usable pair: 1 ns per tick */
	}
	t->mult = (uint32_t)m;
}

/* Measure again: called at create and at every freeze (pt_source.c);
 * @ring is CPU 0's PT event ring, whose page has the conversion. */
void sptd_col_pt_time_measure(struct sptd_col_pt_time *t, const struct sptd_col_perf_ring *ring)
{
	int64_t width, mono_ns = 0;
	uint64_t tsc = 0;

	t->measured_ns = sptd_col_now_ns();
	if (!t->from_perf) {
		tsc_line(t);
		t->perf_clock_probe = 1;
		if (sptd_col_pt_perf_clock_probe(&t->mono_offset_ns, &t->offset_err_ns) < 0) {
			/* the sideband keeps its raw times: say so in meta */
			t->mono_offset_ns = 0;
			t->offset_err_ns = -1;
		}
		return;
	}
	{
		/* the kernel may rewrite the conversion (TSC rate recalibrated) */
		struct sptd_col_perf_clock clock = { 0 };

		if (sptd_col_perf_ring_clock(ring, &clock) == 0 &&
		    clock.cap_user_time_zero && clock.time_shift <= 63) {
			t->mult = clock.time_mult;
			t->shift = clock.time_shift;
			t->zero_ns = (int64_t)clock.time_zero;
		}
	}
	width = tsc_mono_pair(&tsc, &mono_ns);
	t->mono_offset_ns = mono_ns - sptd_col_pt_time_ns(t, tsc);
	t->offset_err_ns = (width + 1) / 2;
}

/* TSC -> perf clock from the PT event's control page (or, without one,
 * the start of a measured TSC line), then the first measurement; called
 * by sptd_col_pt_create (pt_source.c) with CPU 0's PT event ring. */
void sptd_col_pt_time_setup(struct sptd_col_pt_time *t, const struct sptd_col_perf_ring *ring)
{
	struct sptd_col_perf_clock clock = { 0 };

	memset(t, 0, sizeof(*t));
	sptd_col_perf_ring_clock(ring, &clock);
	t->from_perf = clock.cap_user_time_zero;
	t->mult = clock.time_mult;
	t->shift = clock.time_shift;
	t->zero_ns = (int64_t)clock.time_zero;
	if (!t->from_perf || t->shift > 63) {
		/* No conversion offered: PT's TSC goes straight to
		 * CLOCK_MONOTONIC by a measured line; a first 5 ms baseline
		 * gives its rate until freezes lengthen it. */
		struct timespec nap = { 0, 5000000 };

		t->from_perf = 0;
		t->base_tsc = read_tsc();
		t->base_ns = sptd_col_now_ns();
		nanosleep(&nap, NULL);
	}
	sptd_col_pt_time_measure(t, ring);
}
