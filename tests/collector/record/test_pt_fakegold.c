/* test_pt_fakegold.c — the PT capture path proven against exact ground
 * truth: sptd-ptgen (docs/PTGEN.md) runs real programs and writes the Intel
 * PT their execution makes, per virtual CPU, with every call interval as
 * truth.txt; the fake intel_pt PMU (tests/fakepmu/) serves that PT in its
 * AUX rings and perf sideband records made from the generator's
 * sched.txt/tasks.txt/maps.txt (COMM, MMAP2 with pgoff, SWITCH_CPU_WIDE;
 * sample_id TID|TIME|CPU), with a perf clock whose TSC conversion makes
 * perf time equal the generator's ns.  The capture runs as `sysptd record`
 * runs it (create, enable, freeze, write, mappings of the exited tasks from
 * MMAP2, derive_all) into a real SQLite incident, whose slices must equal
 * truth.txt (tests/lib/truth_compare.c) where data survived.
 *
 * Usage: test_pt_fakegold PTGEN PROGS_DIR
 *
 * Cases:
 *   one    ptprog-fib on 1 CPU, nothing lost: every interval equal.
 *   lossy  ptprog-fib 19 and ptprog-fib 17 on 2 CPUs (migration, switches,
 *          CYC timing): CPU 1's stream is larger than its AUX ring, which
 *          wraps; CPU 0's AUX record is TRUNCATED, its first bytes lost.
 *          The data left on each such CPU starts at its first PSB: the
 *          task running there has a clean cut (nothing of it survives
 *          before).  Its intervals that ended before the cut are gone; those
 *          open across it start at the task's data start with flags
 *          INFERRED|START_TRUNCATED, at their true depth; the rest equal the
 *          truth.  The gaps show where the fake lost data.
 *   power  sptd-ptgen --power on 2 CPUs (C-states, CBR changes, PTWRITEs),
 *          recorded with --power on a PMU whose caps/ have power event
 *          trace and PTWRITE: the config bits are set, and the incident's
 *          cpu_freq, cpu_idle and ptwrite rows are the generator's
 *          power.txt, at the incident's times (the recording path, meta
 *          included, end to end). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakepmu/fakepmu.h"
#include "fakepmu/fakepmu_cut.h"
#include "fakepmu/fakepmu_gen.h"
#include "pt-local.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "truth_compare.h"

#define PMU_TYPE 42
/* The generator's TSC rate: ns = tsc * 10^9 / TSC_HZ = tsc * 2^28 >> 31
 * exactly.  sysptd relates the perf clock to CLOCK_MONOTONIC by reading
 * this machine's TSC through that conversion; the generator starts at this
 * machine's TSC (truth_run_ptgen_now) and a TSC faster than the real one keeps the
 * incident's times (perf ns + that offset) positive, as CLOCK_MONOTONIC
 * times are, whatever the TSC counted before this machine booted. */
#define TSC_HZ "8000000000"

/* One generated case and what the fake does with it. */
struct fg_case {
	const char *name;
	const char *args[24];      /* ptgen options and programs, NULL-ended;
	                            * "@prog" is a program in PROGS_DIR */
	int wrap_cpu;              /* CPU whose stream must overflow its ring (-1 none) */
	int drop_cpu;              /* CPU that loses its first drop_len bytes (-1 none) */
	size_t drop_len;
	int power;                 /* record with --power; check power.txt */
};

static const struct fg_case cases[] = {
	{ "one", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--", "@ptprog-fib", NULL }, -1, -1, 0, 0 },
	{ "lossy", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--cpus", "2", "--slice-insns", "72000", "--psb-period",
	             "256", "--", "@ptprog-fib", "19", "--", "@ptprog-fib", "17", NULL },
	  1, 0, 3000, 0 },
	{ "power", { "--timing", "tsc", "--tsc-hz", TSC_HZ, "--power", "--cpus", "2", "--slice-insns",
	             "700", "--", "@ptprog-fib", "--", "@ptprog-fptr", NULL }, -1, -1, 0, 1 },
};

/* Everything one case reads and builds. */
struct fg_run {
	struct fakepmu_ptgen *g;   /* the generator output the fake serves */
	struct fakepmu_cuts k;     /* what each AUX ring keeps, where data starts again */
	int wrap_cpu, drop_cpu;    /* as in the case */
	size_t drop_len;
	int power;
};

/* Note the cut of @cpu's data (fakepmu_cuts_note), checking it is clean. */
static int note_cut(struct fg_run *r, int cpu)
{
	char why[256] = "";
	int ret = fakepmu_cuts_note(&r->k, r->g, cpu, why, sizeof(why));

	if (ret < 0)
		fprintf(stderr, "  %s\n", why);
	return ret;
}

/* Capture through the fake PMU into @incident, as cmd_record does. */
static int capture(struct fg_run *r, const char *sysroot, const char *incident, int64_t *offset)
{
	const struct fakepmu_ptgen *g = r->g;
	int cpus[FAKEPMU_GEN_MAXCPU], pids[64], gone[64], npids, ngone = 0, ret;
	struct sptd_col_pt_config cfg = { .cpus = cpus, .ncpus = g->ncpus };
	struct sptd_col_pt *pt = NULL;
	struct sptd_store *st = NULL;
	/* perf ns = tsc * mult >> 31, exactly the generator's ns = tsc * 1e9 / tsc_hz */
	uint32_t mult = fakepmu_gen_mult(g);
	char err[512];

	for (int c = 0; c < g->ncpus; c++)
		cpus[c] = c;
	CHECK(mult != 0);
	cfg.req.timing = SPTD_PT_TIMING_NORMAL;
	cfg.req.power = r->power;
	cfg.req.window_ns = 1000;      /* the minimum AUX ring, 64 KiB */
	cfg.cpu_family = (int)truth_config_get(g->dir, "cpu_family");
	cfg.cpu_model = (int)truth_config_get(g->dir, "cpu_model");
	cfg.cpu_stepping = (int)truth_config_get(g->dir, "cpu_stepping");
	if (r->drop_cpu >= 0)
		CHECK_INT(fakepmu_gen_drop(r->g, r->drop_cpu, r->drop_len), 0);
	fakepmu_install(PMU_TYPE, g->scripts, g->ncpus, 0);
	fakepmu_set_clock(0, mult, 31);
	ret = sptd_col_pt_create(&cfg, &pt, err, sizeof(err));
	CHECK_INT(ret, 0);
	if (ret < 0) {
		fprintf(stderr, "  create: %s\n", err);
		goto out;
	}
	fakepmu_cuts_rings(&r->k, g, r->drop_cpu, r->drop_len,
	                   (size_t)sptd_col_pt_setup(pt)->aux_bytes);
	/* --power: pwr_evt, ptw and fup_on_ptw where caps/ say so (the power
	 * case's PMU has both) */
	CHECK_INT(sptd_col_pt_setup(pt)->pwr_evt, r->power);
	CHECK_INT(sptd_col_pt_setup(pt)->ptw, r->power);
	CHECK_INT(sptd_col_pt_enable(pt), 0);
	CHECK_INT(sptd_col_pt_freeze(pt), 0);
	npids = sptd_col_pt_pids(pt, pids, 64);
	CHECK(npids >= 1 && npids <= 64);
	/* the generator's processes are gone: their mappings come from MMAP2 */
	for (int i = 0; i < npids && i < 64; i++) {
		char proc[64];

		snprintf(proc, sizeof(proc), "/proc/%d", pids[i]);
		if (access(proc, F_OK) != 0)
			gone[ngone++] = pids[i];
	}
	CHECK_INT(ngone, g->ntasks);
	ret = sptd_store_create(incident, &st);
	CHECK_INT(ret, 0);
	if (ret < 0)
		goto out;
	CHECK_INT(sptd_store_meta_set(st, "source", "pt"), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "cpus", g->ncpus), 0);
	{
		int64_t w = sptd_col_pt_write(pt, st), expect = 0;

		for (int c = 0; c < g->ncpus; c++)
			expect += (int64_t)r->k.ring_len[c];
		CHECK_INT(w, expect);
	}
	CHECK_INT(sptd_store_meta_get_int(st, "perf_clock_offset_ns", offset), 0);
	if (*offset + truth_config_get(g->dir, "start_ns") <= 0)
		fprintf(stderr, "  this machine's TSC runs faster than the fake's %s Hz: the "
		        "incident's times would be negative\n", TSC_HZ);
	CHECK(*offset + truth_config_get(g->dir, "start_ns") > 0);
	CHECK_INT(sptd_store_meta_set_int(st, "window_start",
	                                  truth_config_get(g->dir, "start_ns") + *offset - 1000000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "window_end",
	                                  truth_config_get(g->dir, "end_ns") + *offset + 1000000), 0);
	ret = sptd_col_pt_mmaps_exited(pt, st, gone, ngone);
	CHECK(ret >= ngone);
	CHECK_INT(sptd_col_pt_images_anon(st, pids, npids), 0);
	CHECK_INT(sptd_col_pt_images_files(st, NULL, 0) >= 0, 1);
	ret = sptd_col_derive_all(st, 1);
	CHECK_INT(ret, 0);
	/* the raw capture is what each ring kept */
	for (int c = 0; c < g->ncpus; c++) {
		struct sptd_store_stmt *s = NULL;
		char sql[96];

		snprintf(sql, sizeof(sql), "SELECT data FROM raw_pt WHERE cpu = %d", c);
		CHECK_INT(sptd_store_prepare(st, sql, &s), 0);
		if (s && sptd_store_step(s) == 1) {
			size_t len = 0;
			const void *blob = sptd_store_column_blob(s, 0, &len);

			CHECK(blob && len == r->k.ring_len[c] && memcmp(blob, r->k.ring[c], len) == 0);
		} else {
			CHECK(!"raw_pt row missing");
		}
		sptd_store_finalize(s);
	}
	CHECK_INT(sptd_store_commit(st), 0);
out:
	sptd_store_destroy(st);
	sptd_col_pt_destroy(pt);
	CHECK_INT(fakepmu_open_count(), 0);
	fakepmu_uninstall();
	(void)sysroot;
	return ret < 0 ? ret : 0;
}

/* How many rows @sql (with ?1..?n bound to @v) counts in @st; -1 failed. */
static int64_t count_rows(struct sptd_store *st, const char *sql, const int64_t *v, int n)
{
	struct sptd_store_stmt *s = NULL;
	int64_t c = -1;

	if (sptd_store_prepare(st, sql, &s) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		sptd_store_bind_int(s, i + 1, v[i]);
	if (sptd_store_step(s) == 1)
		c = sptd_store_column_int(s, 0);
	sptd_store_finalize(s);
	return c;
}

/* The power case: every line of power.txt is its row in @incident (times
 * + @offset), and there are no others. */
static void check_power(const char *dir, const char *incident, int64_t offset)
{
	struct sptd_store *st = NULL;
	char path[4200], kind[16];
	unsigned long long ns, a, b, c, ip;
	int64_t open_ts[64] = { 0 }, open_state[64], nfreq = 0, nidle = 0, nptw = 0;
	int cpu, have_open[64] = { 0 }, mismatches = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/power.txt", dir);
	f = fopen(path, "r");
	CHECK(f != NULL);
	CHECK_INT(sptd_store_open(incident, 0, &st), 0);
	while (f && st && fscanf(f, "%15s %d %llu %llu %llu %llu %llx", kind, &cpu, &ns, &a, &b, &c,
	                         &ip) == 7) {
		int64_t t = (int64_t)ns + offset, n = -1;

		if (cpu < 0 || cpu >= 64)
			continue;
		if (strcmp(kind, "cbr") == 0) {
			int64_t v[] = { t, cpu, (int64_t)a, (int64_t)a * 100000 };

			nfreq++;
			n = count_rows(st, "SELECT count(*) FROM cpu_freq WHERE ts = ?1 AND cpu = ?2 AND "
			               "cbr = ?3 AND freq_khz = ?4", v, 4);
		} else if (strcmp(kind, "pwre") == 0) {
			have_open[cpu] = 1;
			open_ts[cpu] = t;
			open_state[cpu] = (int64_t)((a + 1) & 15);
			continue;
		} else if (strcmp(kind, "pwrx") == 0 && have_open[cpu]) {
			int64_t v[] = { open_ts[cpu], t - open_ts[cpu], cpu, open_state[cpu],
			                (int64_t)((a + 1) & 15) };

			have_open[cpu] = 0;
			nidle++;
			n = count_rows(st, "SELECT count(*) FROM cpu_idle WHERE ts = ?1 AND dur = ?2 AND "
			               "cpu = ?3 AND state = ?4 AND last_state = ?5 AND "
			               "wake = 'interrupt' AND flags = 0", v, 5);
		} else if (strcmp(kind, "ptw") == 0) {
			int64_t v[] = { t, cpu, (int64_t)a, (int64_t)ip };

			nptw++;
			n = count_rows(st, "SELECT count(*) FROM ptwrite WHERE ts = ?1 AND cpu = ?2 AND "
			               "payload = ?3 AND ip = ?4 AND size = 8 AND utid IS NOT NULL", v, 4);
		} else {
			continue;
		}
		if (n != 1 && mismatches++ < 5)
			fprintf(stderr, "  power: %s cpu %d at %llu: %" PRId64 " rows\n", kind, cpu, ns, n);
	}
	CHECK_INT(mismatches, 0);
	CHECK(nfreq > 0 && nidle > 0 && nptw > 0);
	/* nothing more: the open C-states at the end are the only other rows */
	for (int k = 0; k < 64; k++)
		nidle += have_open[k];
	CHECK_INT(count_rows(st, "SELECT count(*) FROM cpu_freq", NULL, 0), nfreq);
	CHECK_INT(count_rows(st, "SELECT count(*) FROM cpu_idle", NULL, 0), nidle);
	CHECK_INT(count_rows(st, "SELECT count(*) FROM ptwrite", NULL, 0), nptw);
	printf("  power: %" PRId64 " ratio changes, %" PRId64 " C-states, %" PRId64 " PTWRITEs as "
	       "power.txt says\n", nfreq, nidle, nptw);
	sptd_store_destroy(st);
	if (f)
		fclose(f);
}

/* Generate, capture, compare one case; 77 when ptrace is not permitted. */
static int run_case(const struct fg_case *c, const char *ptgen, const char *progs,
                    const char *tmp, const char *sysroot)
{
	char dir[4096], log[4200], incident[4200], err[512];
	struct fg_run *r = calloc(1, sizeof(*r));
	struct frames truth = { 0 }, dec = { 0 };
	int rc, ret = -1, trunc_seen = 0;
	int64_t offset = 0, tol;

	if (!r)
		return -1;
	snprintf(dir, sizeof(dir), "%s/%s", tmp, c->name);
	snprintf(log, sizeof(log), "%s.log", dir);
	snprintf(incident, sizeof(incident), "%s.incident", dir);
	rc = truth_run_ptgen_now(ptgen, progs, c->args, dir, log);
	if (rc == 77) {
		free(r);
		return 77;
	}
	CHECK_INT(rc, 0);
	if (rc != 0)
		goto out;
	rc = fakepmu_gen_load(dir, &r->g, err, sizeof(err));
	CHECK_INT(rc, 0);
	if (rc < 0) {
		fprintf(stderr, "  %s\n", err);
		goto out;
	}
	r->wrap_cpu = c->wrap_cpu;
	r->drop_cpu = c->drop_cpu;
	r->drop_len = c->drop_len;
	r->power = c->power;
	/* the fake PMU describes the CPU the trace came from */
	CHECK_INT(fakepmu_gen_sysfs(r->g, sysroot, PMU_TYPE), 0);
	CHECK_INT(fakepmu_sysfs_cap(sysroot, "power_event_trace", c->power ? "1" : "0"), 0);
	CHECK_INT(fakepmu_sysfs_cap(sysroot, "ptwrite", c->power ? "1" : "0"), 0);
	if (capture(r, sysroot, incident, &offset) < 0)
		goto out;
	if (r->wrap_cpu >= 0) {
		/* the case is built so that this CPU's ring wrapped, the others not */
		CHECK(r->g->pt_len[r->wrap_cpu] > r->k.ring_len[r->wrap_cpu]);
		CHECK_INT(note_cut(r, r->wrap_cpu), 0);
	}
	if (r->drop_cpu >= 0) {
		CHECK(r->g->pt_len[r->drop_cpu] - r->drop_len == r->k.ring_len[r->drop_cpu]);
		CHECK_INT(note_cut(r, r->drop_cpu), 0);
	}
	CHECK_INT(truth_read(dir, &truth), 0);
	CHECK_INT(truth_read_incident(incident, offset, &dec), 0);
	tol = truth_tolerance_ns(dir);
	trunc_seen = fakepmu_cuts_apply(&r->k, r->g, &truth, &dec, tol);
	if (r->wrap_cpu >= 0 || r->drop_cpu >= 0) {
		printf("  %s: %d intervals open across a cut (start truncated)\n", c->name, trunc_seen);
		CHECK(trunc_seen > 0);
	}
	ret = truth_compare(c->name, &truth, &dec, tol);
	CHECK_INT(ret, 0);
	if (c->power)
		check_power(dir, incident, offset);

	/* the gaps: where the fake lost data, and only there */
	{
		struct sptd_store *st = NULL;

		CHECK_INT(fakepmu_cuts_check_gaps(&r->k, r->g->ncpus, r->drop_cpu, incident, offset,
		                                  tol), 0);
		if (getenv("SPTD_VERBOSE"))
			CHECK_INT(sptd_store_open(incident, 0, &st), 0);
		if (st) {
			struct sptd_store_stmt *s = NULL;

			sptd_store_prepare(st, "SELECT cpu, ts, dur, reason FROM gap ORDER BY cpu, ts", &s);
			while (s && sptd_store_step(s) == 1)
				printf("  gap cpu %" PRId64 " ts %" PRId64 " dur %" PRId64 ": %s\n",
				       sptd_store_column_int(s, 0), sptd_store_column_int(s, 1) - offset,
				       sptd_store_column_int(s, 2), sptd_store_column_text(s, 3));
			sptd_store_finalize(s);
		}
		sptd_store_destroy(st);
	}
	/* the switch timeline runs from each switch-out (before the CR3
	 * write) while the fake stamps switch-in after the PIP: each CR3
	 * binds to the task the switch put on the CPU, never a mismatch */
	{
		struct sptd_store *st = NULL;
		int64_t mismatches = -1;

		CHECK_INT(sptd_store_open(incident, 0, &st), 0);
		if (st)
			CHECK_INT(sptd_store_query_int(st, "SELECT coalesce(sum(value), 0) FROM stats "
			                               "WHERE name = 'cr3_mismatches'", &mismatches), 0);
		if (mismatches != 0)
			printf("  %s: %" PRId64 " CR3 mismatches, want 0\n", c->name, mismatches);
		CHECK_INT(mismatches, 0);
		sptd_store_destroy(st);
	}
out:
	truth_frames_free(&truth);
	truth_frames_free(&dec);
	fakepmu_gen_free(r->g);
	free(r);
	return ret;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/sptd-fakegold-XXXXXX", sysroot[4200];
	int skipped = 0, ran = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: test_pt_fakegold PTGEN PROGS_DIR [CASE...]\n");
		return 2;
	}
	SPTD_REQUIRE_ROOT();
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sysroot, sizeof(sysroot), "%s/sys", tmp);
	CHECK_INT(fakepmu_sysfs(sysroot, FAKEPMU_SKYLAKE, PMU_TYPE), 0);
	sptd_col_pt_set_sysfs_root(sysroot);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int want = argc == 3, rc;

		for (int k = 3; k < argc && !want; k++)
			want = strcmp(argv[k], cases[i].name) == 0;
		if (!want)
			continue;
		rc = run_case(&cases[i], argv[1], argv[2], tmp, sysroot);
		if (rc == 77) {
			skipped++;
			continue;
		}
		ran++;
		CHECK_INT(rc, 0);
		if (rc != 0)
			fprintf(stderr, "case %s FAILED (files in %s)\n", cases[i].name, tmp);
	}
	if (!ran && skipped)
		SPTD_SKIP("ptrace not permitted (kernel.yama.ptrace_scope)");
	truth_tmp_done(tmp, sptd_test_failed);
	return SPTD_TEST_END();
}
