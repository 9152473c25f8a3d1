/* test_pt_attr.c — intel_pt config bits from the format/ and caps/ files of
 * several CPU generations (fake sysfs trees in a temp dir), format-term
 * parsing, AUX sizing, and bad input. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakepmu/fakepmu.h"
#include "plan-local.h"
#include "pt-local.h"
#include "sptd_test.h"

static char root[256];

static int build(enum fakepmu_gen gen, enum sptd_col_pt_timing timing, int user_only,
                 uint64_t aux_bytes, int64_t window_ns, struct sptd_col_pt_pmu *pmu,
                 struct sptd_col_pt_setup *setup)
{
	struct sptd_col_pt_request req = { .timing = timing, .user_only = user_only,
	                                   .aux_bytes = aux_bytes, .window_ns = window_ns };
	char dir[300], err[256], cmd[400];
	int ret;

	snprintf(dir, sizeof(dir), "%s/gen%d", root, (int)gen);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return -EIO;
	if (fakepmu_sysfs(dir, gen, 9 + (int)gen) < 0)
		return -EIO;
	sptd_col_pt_set_sysfs_root(dir);
	ret = sptd_col_pt_pmu_read(pmu, err, sizeof(err));
	if (ret < 0)
		return ret;
	ret = sptd_col_pt_setup_build(pmu, &req, setup, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "setup: %s\n", err);
	return ret;
}

#define BIT(n) (1ull << (n))

static void test_generations(void)
{
	struct sptd_col_pt_pmu pmu;
	struct sptd_col_pt_setup s;

	/* Skylake, normal: tsc, branch, mtc + mtc_period 3 (perf's default),
	 * cyc + cyc_thresh 1 (caps/cycle_thresholds), psb_period 3, pt; no
	 * noretcomp */
	CHECK_INT(build(FAKEPMU_SKYLAKE, SPTD_PT_TIMING_NORMAL, 0, 0, 10000000, &pmu, &s), 0);
	CHECK_INT(s.type, 9 + FAKEPMU_SKYLAKE);
	CHECK(s.config[0] == (BIT(0) | BIT(1) | BIT(9) | BIT(10) | BIT(13) | (3ull << 14) |
	                      (1ull << 19) | (3ull << 24)));
	CHECK_INT(s.config[1], 0);
	CHECK_INT(s.mtc_period, 3);
	CHECK_INT(s.cyc_thresh, 1);
	CHECK_INT(s.psb_period, 3);
	CHECK_INT(s.exclude_kernel, 0);
	CHECK_STR(s.desc, "tsc,branch,mtc,mtc_period=3,cyc,cyc_thresh=1,psb_period=3");
	CHECK_INT(pmu.max_nonturbo_ratio, 34);
	CHECK_INT(pmu.tsc_art_num, 284);
	CHECK_INT(pmu.tsc_art_den, 2);
	CHECK_INT(pmu.mtc_periods, 0x249);
	/* 10 ms at 600 MB/s (kernel + user with CYC), twice: 12 MB -> 16 MiB */
	CHECK_INT(s.rate_bytes_s, 600000000);
	CHECK_INT(s.aux_bytes, 16 << 20);
	CHECK(s.coverage_ns > 27000000 && s.coverage_ns < 29000000);

	/* Skylake, high: + noretcomp (bit 11); user-only */
	CHECK_INT(build(FAKEPMU_SKYLAKE, SPTD_PT_TIMING_HIGH, 1, 0, 10000000, &pmu, &s), 0);
	CHECK(s.config[0] == (BIT(0) | BIT(1) | BIT(9) | BIT(10) | BIT(11) | BIT(13) | (3ull << 14) |
	                      (1ull << 19) | (3ull << 24)));
	CHECK_INT(s.exclude_kernel, 1);
	CHECK_INT(s.noretcomp, 1);

	/* Skylake, low: mtc_period 3, no cyc */
	CHECK_INT(build(FAKEPMU_SKYLAKE, SPTD_PT_TIMING_LOW, 0, 0, 1000000, &pmu, &s), 0);
	CHECK(s.config[0] == (BIT(0) | BIT(9) | BIT(10) | BIT(13) | (3ull << 14) | (3ull << 24)));
	CHECK_INT(s.cyc, 0);
	CHECK_INT(s.cyc_thresh, -1);

	/* Broadwell: MTC but no CYC and no psb_period (psb_cyc 0) */
	CHECK_INT(build(FAKEPMU_BROADWELL, SPTD_PT_TIMING_HIGH, 0, 0, 10000000, &pmu, &s), 0);
	CHECK(s.config[0] == (BIT(0) | BIT(9) | BIT(10) | BIT(11) | BIT(13) | (3ull << 14)));
	CHECK_INT(s.cyc, 0);
	CHECK_INT(s.psb_period, -1);
	CHECK_INT(s.mtc_period, 3);
	/* no CPUID 0x15, ratio not said: 0 */
	CHECK_INT(pmu.max_nonturbo_ratio, 0);
	CHECK_INT(pmu.tsc_art_num, 0);

	/* Haswell: tsc and branch only; single ToPA entry caps AUX at 4 MiB */
	CHECK_INT(build(FAKEPMU_HASWELL, SPTD_PT_TIMING_NORMAL, 0, 64 << 20, 10000000, &pmu, &s), 0);
	CHECK(s.config[0] == (BIT(0) | BIT(10) | BIT(13)));
	CHECK_INT(s.mtc, 0);
	CHECK_INT(s.aux_bytes, 4 << 20);
	CHECK_STR(s.desc, "tsc,branch");

	/* moved and split bits: parsed, not assumed */
	CHECK_INT(build(FAKEPMU_ODD, SPTD_PT_TIMING_LOW, 0, 100000, 0, &pmu, &s), 0);
	/* mtc_period 3 = 0b011 over config1 bits 3, 8, 9, 10: bits 3 and 8 */
	CHECK(s.config[1] == (BIT(3) | BIT(8)));
	CHECK(s.config[0] == (BIT(0) | BIT(2) | BIT(7) | BIT(40) | (3ull << 50)));
	CHECK_INT(s.config[2], 0);
	/* 100000 bytes -> 128 KiB (power of two pages) */
	CHECK_INT(s.aux_bytes, 128 << 10);
	CHECK_INT(build(FAKEPMU_ODD, SPTD_PT_TIMING_HIGH, 0, 0, 0, &pmu, &s), 0);
	CHECK(s.config[2] == 1);          /* cyc_thresh 1 in config2:0-3 */
	CHECK(s.config[1] & BIT(63));     /* noretcomp */
	CHECK_INT(s.aux_bytes, 64 << 10); /* the minimum: 16 pages */

	/* no tsc term: refused with a reason */
	CHECK_INT(build(FAKEPMU_NOTSC, SPTD_PT_TIMING_LOW, 0, 0, 0, &pmu, &s), -ENOTSUP);
}

/* The kernel's caps/ names (arch/x86/events/intel/pt.c, pt_caps[]): the
 * fake must have exactly these, and the timing attributes at the root. */
static void test_sysfs_layout(void)
{
	static const char *const names[] = {
		"max_subleaf", "cr3_filtering", "psb_cyc", "ip_filtering", "mtc", "ptwrite",
		"power_event_trace", "event_trace", "tnt_disable", "topa_output",
		"topa_multiple_entries", "single_range_output", "output_subsys", "payloads_lip",
		"num_address_ranges", "mtc_periods", "cycle_thresholds", "psb_periods",
	};
	char dir[300], path[600];
	struct sptd_col_pt_pmu pmu;
	struct sptd_col_pt_setup s;
	struct dirent *de;
	DIR *d;
	int n = 0;

	CHECK_INT(build(FAKEPMU_SKYLAKE, SPTD_PT_TIMING_NORMAL, 0, 0, 1000000, &pmu, &s), 0);
	snprintf(dir, sizeof(dir), "%s/gen%d", root, (int)FAKEPMU_SKYLAKE);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/caps", dir);
	d = opendir(path);
	CHECK(d != NULL);
	while (d && (de = readdir(d)) != NULL) {
		int known = 0;

		if (de->d_name[0] == '.')
			continue;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			known |= strcmp(names[i], de->d_name) == 0;
		if (!known)
			fprintf(stderr, "  caps/%s: pt.c has no such cap\n", de->d_name);
		CHECK(known);
		n++;
	}
	if (d)
		closedir(d);
	CHECK_INT(n, (int)(sizeof(names) / sizeof(names[0])));
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/max_nonturbo_ratio", dir);
	CHECK_INT(access(path, R_OK), 0);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/tsc_art_ratio", dir);
	CHECK_INT(access(path, R_OK), 0);
	CHECK_INT(fakepmu_sysfs_cap(dir, "max_nonturbo_ratio", "1"), -ENOENT);
	CHECK_INT(fakepmu_sysfs_cap(dir, "cyc_thresholds", "1"), -ENOENT);
	CHECK_INT(fakepmu_sysfs_timing(dir, "mtc", "1"), -ENOENT);

	/* what the kernel prints is read: cycle_thresholds in hex (0x4: only
	 * threshold 2), max_nonturbo_ratio in decimal, tsc_art_ratio num:den,
	 * and the threshold is used */
	CHECK_INT(fakepmu_sysfs_cap(dir, "cycle_thresholds", "4"), 0);
	CHECK_INT(fakepmu_sysfs_cap(dir, "psb_periods", "10"), 0);   /* only 4 */
	CHECK_INT(fakepmu_sysfs_timing(dir, "max_nonturbo_ratio", "40"), 0);
	CHECK_INT(fakepmu_sysfs_timing(dir, "tsc_art_ratio", "168:2"), 0);
	sptd_col_pt_set_sysfs_root(dir);
	CHECK_INT(sptd_col_pt_pmu_read(&pmu, NULL, 0), 0);
	CHECK_INT(pmu.cyc_thresholds, 4);
	CHECK_INT(pmu.psb_periods, 0x10);
	CHECK_INT(pmu.max_nonturbo_ratio, 40);
	CHECK_INT(pmu.tsc_art_num, 168);
	CHECK_INT(pmu.tsc_art_den, 2);
	{
		struct sptd_col_pt_request req = { .timing = SPTD_PT_TIMING_NORMAL, .window_ns = 1000 };

		CHECK_INT(sptd_col_pt_setup_build(&pmu, &req, &s, NULL, 0), 0);
		CHECK_INT(s.cyc_thresh, 2);
		CHECK_INT(s.psb_period, 4);
		CHECK_STR(s.desc, "tsc,branch,mtc,mtc_period=3,cyc,cyc_thresh=2,psb_period=4");
	}
	/* malformed timing attributes: not guessed at */
	CHECK_INT(fakepmu_sysfs_timing(dir, "max_nonturbo_ratio", "0x22"), 0);
	CHECK_INT(fakepmu_sysfs_timing(dir, "tsc_art_ratio", "168"), 0);
	CHECK_INT(sptd_col_pt_pmu_read(&pmu, NULL, 0), 0);
	CHECK_INT(pmu.max_nonturbo_ratio, 0);
	CHECK_INT(pmu.tsc_art_num, 0);
}

/* Without multiple ToPA entries (Haswell here: caps/topa_multiple_entries
 * 0) an overwrite AUX ring is one physically contiguous allocation
 * (kernel/events/ring_buffer.c rb_alloc_aux): on a fragmented machine,
 * whose largest free block the fake sets, a 4 MiB ring fails with ENOMEM.
 * The source takes the largest power of two that fits, and the setup
 * (meta pt_aux_bytes, pt_coverage_ns) says what it got; when nothing fits
 * the error names the cause, not perf_event_mlock_kb. */
static void test_aux_contiguous(void)
{
	struct sptd_col_pt_pmu pmu;
	struct sptd_col_pt_setup s;
	int cpus[2] = { 0, 1 };
	struct sptd_col_pt_config cfg = { .cpus = cpus, .ncpus = 2 };
	struct sptd_col_pt *pt = NULL;
	char err[512] = "";
	int ret;

	CHECK_INT(build(FAKEPMU_HASWELL, SPTD_PT_TIMING_NORMAL, 0, 4 << 20, 10000000, &pmu, &s), 0);
	CHECK_INT(pmu.topa_multiple, 0);
	CHECK_INT(s.aux_bytes, 4 << 20);
	cfg.req = (struct sptd_col_pt_request){ .timing = SPTD_PT_TIMING_NORMAL,
	                                        .aux_bytes = 4 << 20, .window_ns = 10000000 };
	fakepmu_install(9 + (int)FAKEPMU_HASWELL, NULL, 0, 0);
	fakepmu_aux_contiguous(1 << 20);
	ret = sptd_col_pt_create(&cfg, &pt, err, sizeof(err));
	CHECK_INT(ret, 0);
	if (ret < 0)
		fprintf(stderr, "  create: %s\n", err);
	if (pt) {
		CHECK_INT(sptd_col_pt_setup(pt)->aux_bytes, 1 << 20);
		CHECK_INT(sptd_col_pt_setup(pt)->coverage_ns,
		          sptd_col_plan_coverage_ns(1 << 20, s.rate_bytes_s));
	}
	sptd_col_pt_destroy(pt);
	pt = NULL;
	CHECK_INT(fakepmu_open_count(), 0);
	fakepmu_uninstall();

	/* not even the smallest ring (16 pages) fits */
	fakepmu_install(9 + (int)FAKEPMU_HASWELL, NULL, 0, 0);
	fakepmu_aux_contiguous(32 << 10);
	ret = sptd_col_pt_create(&cfg, &pt, err, sizeof(err));
	CHECK_INT(ret, -ENOMEM);
	CHECK(pt == NULL);
	CHECK(strstr(err, "contiguous") != NULL);
	CHECK(strstr(err, "topa_multiple_entries 0") != NULL);
	CHECK(strstr(err, "perf_event_mlock_kb") == NULL);
	if (ret != -ENOMEM || !strstr(err, "contiguous"))
		fprintf(stderr, "  create: %s\n", err);
	CHECK_INT(fakepmu_open_count(), 0);
	fakepmu_uninstall();
}

static void test_terms(void)
{
	static const struct { const char *text; int ok, word, n, lo0, hi0; } cases[] = {
		{ "config:0", 1, 0, 1, 0, 0 },
		{ "config:14-17", 1, 0, 1, 14, 17 },
		{ "config1:3,8-10", 1, 1, 2, 3, 3 },
		{ "config2:63", 1, 2, 1, 63, 63 },
		{ "config:0-63", 1, 0, 1, 0, 63 },
		{ "config3:1", 0, 0, 0, 0, 0 },
		{ "config:64", 0, 0, 0, 0, 0 },
		{ "config:5-2", 0, 0, 0, 0, 0 },
		{ "config:", 0, 0, 0, 0, 0 },
		{ "config:1,", 0, 0, 0, 0, 0 },
		{ "event:1", 0, 0, 0, 0, 0 },
		{ "config:1-", 0, 0, 0, 0, 0 },
		{ "config:1x", 0, 0, 0, 0, 0 },
		{ "", 0, 0, 0, 0, 0 },
	};
	struct sptd_col_pt_term t;
	uint64_t cfg[3] = { 0, 0, 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = sptd_col_pt_term_parse(cases[i].text, &t);

		if (cases[i].ok) {
			CHECK_INT(ret, 0);
			CHECK_INT(t.word, cases[i].word);
			CHECK_INT(t.nranges, cases[i].n);
			CHECK_INT(t.lo[0], cases[i].lo0);
			CHECK_INT(t.hi[0], cases[i].hi0);
		} else {
			if (ret != -EBADMSG)
				fprintf(stderr, "term '%s' accepted\n", cases[i].text);
			CHECK_INT(ret, -EBADMSG);
		}
	}
	CHECK_INT(sptd_col_pt_term_parse(NULL, &t), -EINVAL);
	CHECK_INT(sptd_col_pt_term_parse("config:14-17", &t), 0);
	CHECK_INT(sptd_col_pt_term_set(&t, 15, cfg), 0);
	CHECK(cfg[0] == (15ull << 14));
	CHECK_INT(sptd_col_pt_term_set(&t, 16, cfg), -EINVAL);   /* does not fit 4 bits */
	CHECK_INT(sptd_col_pt_term_set(&t, 5, cfg), 0);           /* replaces, not ORs */
	CHECK(cfg[0] == (5ull << 14));
	memset(&t, 0, sizeof(t));
	CHECK_INT(sptd_col_pt_term_set(&t, 1, cfg), -EINVAL);     /* absent term */
	CHECK_INT(sptd_col_pt_term_set(NULL, 1, cfg), -EINVAL);
}

static void test_misc(void)
{
	enum sptd_col_pt_timing tm;
	struct sptd_col_pt_pmu pmu;
	struct sptd_col_pt_setup s;
	struct sptd_col_pt_request req = { 0 };
	char err[256], dir[300];

	CHECK_INT(sptd_col_pt_timing_parse("low", &tm), 0);
	CHECK_INT(tm, SPTD_PT_TIMING_LOW);
	CHECK_INT(sptd_col_pt_timing_parse("high", &tm), 0);
	CHECK_INT(tm, SPTD_PT_TIMING_HIGH);
	CHECK_INT(sptd_col_pt_timing_parse("normal", &tm), 0);
	CHECK_INT(tm, SPTD_PT_TIMING_NORMAL);
	CHECK_INT(sptd_col_pt_timing_parse("fast", &tm), -EINVAL);
	CHECK_INT(sptd_col_pt_timing_parse(NULL, &tm), -EINVAL);

	/* no PMU under the root: -ENODEV with a reason */
	snprintf(dir, sizeof(dir), "%s/empty", root);
	sptd_col_pt_set_sysfs_root(dir);
	CHECK_INT(sptd_col_pt_available(), 0);
	CHECK_INT(sptd_col_pt_pmu_read(&pmu, err, sizeof(err)), -ENODEV);
	CHECK(strstr(err, "no intel_pt PMU") != NULL);
	CHECK_INT(sptd_col_pt_pmu_read(NULL, err, sizeof(err)), -EINVAL);

	/* a type that is not a number, a format that does not parse */
	snprintf(dir, sizeof(dir), "%s/bad", root);
	CHECK_INT(fakepmu_sysfs(dir, FAKEPMU_SKYLAKE, 8), 0);
	sptd_col_pt_set_sysfs_root(dir);
	CHECK_INT(sptd_col_pt_available(), 1);
	{
		char path[400];
		FILE *f;

		snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/format/mtc_period", dir);
		f = fopen(path, "w");
		fputs("config:banana\n", f);
		fclose(f);
		CHECK_INT(sptd_col_pt_pmu_read(&pmu, err, sizeof(err)), -EBADMSG);
		CHECK(strstr(err, "mtc_period") != NULL);
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/type", dir);
		f = fopen(path, "w");
		fputs("x8\n", f);
		fclose(f);
		CHECK_INT(sptd_col_pt_pmu_read(&pmu, err, sizeof(err)), -EBADMSG);
	}
	CHECK_INT(sptd_col_pt_setup_build(NULL, &req, &s, err, sizeof(err)), -EINVAL);
	memset(&pmu, 0, sizeof(pmu));
	req.timing = (enum sptd_col_pt_timing)7;
	CHECK_INT(sptd_col_pt_setup_build(&pmu, &req, &s, err, sizeof(err)), -EINVAL);

	/* the default root follows $SPTD_SYSFS_ROOT */
	setenv("SPTD_SYSFS_ROOT", "/nonexistent-sysfs", 1);
	sptd_col_pt_set_sysfs_root(NULL);
	CHECK_STR(sptd_col_pt_sysfs_root(), "/nonexistent-sysfs");
	unsetenv("SPTD_SYSFS_ROOT");
	sptd_col_pt_set_sysfs_root(NULL);
	CHECK_STR(sptd_col_pt_sysfs_root(), "/sys");
}

/* --power on a Skylake PMU with @pet / @ptw as caps/power_event_trace and
 * caps/ptwrite. */
static int build_power(int power, const char *pet, const char *ptw,
                       struct sptd_col_pt_setup *setup)
{
	struct sptd_col_pt_request req = { .timing = SPTD_PT_TIMING_NORMAL, .power = power,
	                                   .window_ns = 10000000 };
	struct sptd_col_pt_pmu pmu;
	char dir[300], err[256], cmd[400];

	snprintf(dir, sizeof(dir), "%s/power", root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0 || fakepmu_sysfs(dir, FAKEPMU_SKYLAKE, 9) < 0 ||
	    fakepmu_sysfs_cap(dir, "power_event_trace", pet) < 0 ||
	    fakepmu_sysfs_cap(dir, "ptwrite", ptw) < 0)
		return -EIO;
	sptd_col_pt_set_sysfs_root(dir);
	if (sptd_col_pt_pmu_read(&pmu, err, sizeof(err)) < 0)
		return -EIO;
	return sptd_col_pt_setup_build(&pmu, &req, setup, err, sizeof(err));
}

static void test_power(void)
{
	const uint64_t base = BIT(0) | BIT(1) | BIT(9) | BIT(10) | BIT(13) | (3ull << 14) |
	                      (1ull << 19) | (3ull << 24);
	struct sptd_col_pt_setup s;

	/* both caps: pwr_evt (bit 4), ptw (12), fup_on_ptw (5), as the kernel's
	 * format/ says */
	CHECK_INT(build_power(1, "1", "1", &s), 0);
	CHECK(s.config[0] == (base | BIT(4) | BIT(5) | BIT(12)));
	CHECK_INT(s.pwr_evt, 1);
	CHECK_INT(s.ptw, 1);
	CHECK_STR(s.power_lacks, "");
	CHECK(strstr(s.desc, "pwr_evt,ptw,fup_on_ptw") != NULL);
	/* a CPU without them (Skylake has no PTWRITE): not set, and said */
	CHECK_INT(build_power(1, "1", "0", &s), 0);
	CHECK(s.config[0] == (base | BIT(4)));
	CHECK_INT(s.ptw, 0);
	CHECK(strstr(s.power_lacks, "PTWRITE (caps/ptwrite is 0)") != NULL);
	CHECK_INT(build_power(1, "0", "0", &s), 0);
	CHECK(s.config[0] == base);
	CHECK(strstr(s.power_lacks, "C-state events (caps/power_event_trace is 0)") != NULL);
	/* without --power nothing changes, whatever the caps */
	CHECK_INT(build_power(0, "1", "1", &s), 0);
	CHECK(s.config[0] == base);
	CHECK_STR(s.power_lacks, "");
}

int main(void)
{
	char cmd[300];

	snprintf(root, sizeof(root), "/tmp/sptd-ptattr-XXXXXX");
	if (!mkdtemp(root))
		SPTD_SKIP("cannot make a temp dir");
	test_generations();
	test_sysfs_layout();
	test_aux_contiguous();
	test_terms();
	test_misc();
	test_power();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return SPTD_TEST_END();
}
