/* test_pt_clock.c — the PT source's clocks against a fake perf clock that
 * runs off CLOCK_MONOTONIC, as the kernel's does (issue 34, items 2 and 7).
 *
 * The kernel's perf clock (local_clock) is not slewed by NTP and
 * CLOCK_MONOTONIC is, so the two drift apart by up to 500 ppm; windows,
 * triggers and ftrace are CLOCK_MONOTONIC.  The fake PMU here offers a
 * perf clock 3 s ahead of CLOCK_MONOTONIC and 1000 ppm fast, and at each
 * freeze switches tasks on every CPU, stamping the SWITCH records with that
 * clock.  Several incidents are recorded from one PT source, 1 s apart, as
 * a service does; in each real SQLite incident:
 *   - the switch made at the freeze (raw_switch, sideband time + meta
 *     perf_clock_offset_ns) lies inside the freeze's CLOCK_MONOTONIC
 *     bracket, within TOL_NS;
 *   - PT's time conversion (meta tsc_*), applied to a TSC read at the
 *     freeze, gives the same CLOCK_MONOTONIC time within TOL_NS;
 *   - meta perf_clock_measured_ns is this freeze's.
 * Cases:
 *   drift  the page offers the TSC -> perf clock conversion
 *          (cap_user_time_zero 1): perf_clock_via "tsc".
 *   kvm    cap_user_time_zero 0 (a KVM guest on kvm-clock): PT goes to
 *          CLOCK_MONOTONIC by a measured TSC line, the sideband by a COMM
 *          record of sysptd's own (perf_clock_via "comm"); both must land
 *          on the one clock.
 *   kernel the COMM probe on this machine's real kernel (no fake): the
 *          offset it measures puts the kernel's SWITCH records of this
 *          thread sleeping 2 ms inside the CLOCK_MONOTONIC reads around
 *          the sleep. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "fakepmu/fakepmu.h"
#include "pt-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"

#define PMU_TYPE 43
#define NCPU 2
#define INCIDENTS 3
/* 1000 ppm over the 1 s between incidents is 1 ms of drift per incident */
#define GAP_NS 1000000000L
#define TOL_NS 250000
#define OFFSET_NS 3000000000LL
#define TID_OUT 4242
#define TID_IN 4343

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t meta(struct sptd_store *st, const char *key)
{
	int64_t v = INT64_MIN;

	if (sptd_store_meta_get_int(st, key, &v) < 0)
		fprintf(stderr, "  meta %s missing\n", key);
	return v;
}

/* The newest raw_switch time on @cpu, INT64_MIN when none. */
static int64_t newest_switch(struct sptd_store *st, int cpu)
{
	struct sptd_store_stmt *s = NULL;
	char sql[128];
	int64_t ts = INT64_MIN;

	snprintf(sql, sizeof(sql), "SELECT max(ts) FROM raw_switch WHERE cpu = %d", cpu);
	if (sptd_store_prepare(st, sql, &s) == 0 && sptd_store_step(s) == 1 &&
	    sptd_store_column_type(s, 0) == SPTD_STORE_INT)
		ts = sptd_store_column_int(s, 0);
	sptd_store_finalize(s);
	return ts;
}

static void run_case(const char *name, int no_time_zero, const char *dir)
{
	static const unsigned char psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	                                       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	struct fakepmu_script scripts[NCPU];
	int cpus[NCPU];
	struct sptd_col_pt_config cfg = { .cpus = cpus, .ncpus = NCPU };
	struct sptd_col_pt *pt = NULL;
	char err[512];
	int ret;

	printf("case %s\n", name);
	memset(scripts, 0, sizeof(scripts));
	for (int c = 0; c < NCPU; c++) {
		cpus[c] = c;
		scripts[c] = (struct fakepmu_script){ .pt = psb, .pt_len = sizeof(psb) };
	}
	cfg.req.timing = SPTD_PT_TIMING_NORMAL;
	cfg.req.window_ns = 1000;
	cfg.cpu_family = 6;
	cfg.cpu_model = 85;
	cfg.cpu_stepping = 4;
	fakepmu_install(PMU_TYPE, scripts, NCPU, 0);
	CHECK_INT(fakepmu_clock_drift(OFFSET_NS, 1000), 0);
	fakepmu_clock_no_time_zero(no_time_zero);
	fakepmu_clock_switches(TID_OUT, TID_IN);
	ret = sptd_col_pt_create(&cfg, &pt, err, sizeof(err));
	CHECK_INT(ret, 0);
	if (ret < 0) {
		fprintf(stderr, "  create: %s\n", err);
		goto out;
	}
	for (int k = 0; k < INCIDENTS; k++) {
		struct timespec gap = { GAP_NS / 1000000000L, GAP_NS % 1000000000L };
		struct sptd_store *st = NULL;
		char db[4200], via[16] = "";
		int64_t m0, m_tsc, m1, pt_ns;
		uint64_t tsc;

		CHECK_INT(sptd_col_pt_enable(pt), 0);
		nanosleep(&gap, NULL);
		m0 = mono();
		tsc = __rdtsc();
		m_tsc = mono();
		CHECK_INT(sptd_col_pt_freeze(pt), 0);
		m1 = mono();
		snprintf(db, sizeof(db), "%s/%s-%d.incident", dir, name, k);
		CHECK_INT(sptd_store_create(db, &st), 0);
		if (!st)
			break;
		CHECK_INT(sptd_store_meta_set(st, "source", "pt"), 0);
		CHECK_INT(sptd_store_meta_set_int(st, "window_start", m0 - 10000000), 0);
		CHECK_INT(sptd_store_meta_set_int(st, "window_end", m1), 0);
		CHECK(sptd_col_pt_write(pt, st) >= 0);
		{
			const struct sptd_dec_tsc conv = {
				.mult = (uint64_t)meta(st, "tsc_mult"),
				.shift = (unsigned int)meta(st, "tsc_shift"),
				.zero = (uint64_t)meta(st, "tsc_zero"),
				.offset_ns = meta(st, "tsc_offset_ns"),
			};

			pt_ns = sptd_dec_tsc_ns(&conv, tsc);
		}
		printf("  incident %d: PT at the freeze %+" PRId64 " ns, perf clock offset %" PRId64
		       " +- %" PRId64 " ns\n", k, pt_ns - m0, meta(st, "perf_clock_offset_ns"),
		       meta(st, "perf_clock_error_ns"));
		/* the TSC was read between m0 and m_tsc */
		CHECK(pt_ns > m0 - TOL_NS && pt_ns < m_tsc + TOL_NS);
		for (int c = 0; c < NCPU; c++) {
			int64_t ts = newest_switch(st, c);

			printf("  incident %d cpu %d: switch at the freeze %+" PRId64 " ns\n", k, c,
			       ts == INT64_MIN ? 0 : ts - m0);
			CHECK(ts != INT64_MIN);
			CHECK(ts >= m0 - TOL_NS && ts <= m1 + TOL_NS);
		}
		CHECK(meta(st, "perf_clock_measured_ns") >= m0 && meta(st, "perf_clock_measured_ns") <= m1);
		CHECK(meta(st, "perf_clock_error_ns") >= 0 && meta(st, "perf_clock_error_ns") < TOL_NS);
		CHECK(sptd_store_meta_get(st, "perf_clock_via", via, sizeof(via)) >= 0);
		CHECK_STR(via, no_time_zero ? "comm" : "tsc");
		CHECK_INT(sptd_store_commit(st), 0);
		sptd_store_destroy(st);
	}
out:
	sptd_col_pt_destroy(pt);
	CHECK_INT(fakepmu_open_count(), 0);
	fakepmu_uninstall();
}

struct switch_ctx {
	int64_t offset, lo, hi;  /* perf -> CLOCK_MONOTONIC; the bracket */
	int n, inside;           /* SWITCH records seen, inside the bracket */
	int64_t worst;           /* largest distance outside it */
};

static int on_switch(void *arg, const struct sptd_col_perf_record *r)
{
	struct switch_ctx *c = arg;
	int64_t t;

	if (r->type != SPTD_PERF_RECORD_SWITCH || !r->id.has_time)
		return 0;
	t = (int64_t)r->id.time + c->offset;
	c->n++;
	if (t >= c->lo && t <= c->hi)
		c->inside++;
	else if ((t < c->lo ? c->lo - t : t - c->hi) > c->worst)
		c->worst = t < c->lo ? c->lo - t : t - c->hi;
	return 0;
}

/* The COMM probe on this machine's real kernel: the offset it measures
 * puts the kernel's own SWITCH records of this thread (a 2 ms sleep,
 * switched out and in) inside the CLOCK_MONOTONIC reads around the sleep. */
static void run_kernel(void)
{
	uint64_t st = sptd_col_pt_sideband_sample_type();
	struct sptd_col_perf_event ev = {
		.type = SPTD_PERF_TYPE_SOFTWARE,
		.config = { SPTD_PERF_COUNT_SW_DUMMY },
		.period = 1,
		.sample_type = st,
		.flags = SPTD_PERF_EV_SAMPLE_ID_ALL | SPTD_PERF_EV_DISABLED |
		         SPTD_PERF_EV_CONTEXT_SWITCH,
	};
	struct sptd_col_perf_ring ring = { 0 };
	struct timespec nap = { 0, 2000000 };
	struct switch_ctx c = { 0 };
	static unsigned char buf[65536];
	int64_t err = 0, n;
	int fd, ret;

	printf("case kernel\n");
	ret = sptd_col_pt_perf_clock_probe(&c.offset, &err);
	if (ret == -EACCES || ret == -EPERM || ret == -ENOENT || ret == -ENOSYS) {
		printf("  SKIP: no perf events here (%s)\n", strerror(-ret));
		return;
	}
	CHECK_INT(ret, 0);
	CHECK(err >= 0 && err < TOL_NS);
	printf("  CLOCK_MONOTONIC - perf clock = %" PRId64 " ns (+- %" PRId64 " ns)\n", c.offset,
	       err);
	CHECK_INT(sptd_col_pt_perf_clock_probe(NULL, &err), -EINVAL);
	fd = sptd_col_perf_event_open(&ev, 0, -1, -1);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(sptd_col_perf_ring_map(&ring, fd, 8, 1), 0);
	/* every record of the enabled event falls between these reads */
	c.lo = mono() - err;
	CHECK_INT(sptd_col_perf_event_enable(fd), 0);
	nanosleep(&nap, NULL);
	CHECK_INT(sptd_col_perf_event_disable(fd), 0);
	c.hi = mono() + err;
	n = sptd_col_perf_ring_consume(&ring, buf, sizeof(buf));
	CHECK(n > 0);
	if (n > 0)
		sptd_col_pt_sideband_parse(buf, (size_t)n, st, on_switch, &c);
	printf("  %d SWITCH records of this thread, %d inside the sleep's bracket (worst %"
	       PRId64 " ns out)\n", c.n, c.inside, c.worst);
	CHECK(c.n >= 2);
	CHECK_INT(c.inside, c.n);
	sptd_col_perf_ring_unmap(&ring);
	sptd_col_sys.close(fd);
}

int main(void)
{
	char dir[] = "/tmp/sptd-ptclock-XXXXXX", sysroot[64], cmd[128];

	if (!mkdtemp(dir))
		SPTD_SKIP("cannot make a temp dir");
	snprintf(sysroot, sizeof(sysroot), "%s/sys", dir);
	CHECK_INT(fakepmu_sysfs(sysroot, FAKEPMU_SKYLAKE, PMU_TYPE), 0);
	sptd_col_pt_set_sysfs_root(sysroot);
	run_case("drift", 0, dir);
	run_case("kvm", 1, dir);
	run_kernel();
	if (!sptd_test_failed) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	} else {
		fprintf(stderr, "incidents left in %s\n", dir);
	}
	return SPTD_TEST_END();
}
