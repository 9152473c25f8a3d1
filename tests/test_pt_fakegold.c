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
 * truth.txt (tests/truth_compare.c) where data survived.
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
 *          truth.  The gaps show where the fake lost data. */
#include <errno.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakepmu/fakepmu.h"
#include "pt-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "truth_compare.h"

#define MAXCPU 4
#define MAXTASK 16
#define MAXSW 1024
#define PMU_TYPE 42
#define SB_CAP (256 * 1024)
/* The generator's TSC rate: ns = tsc * 10^9 / TSC_HZ = tsc * 2^28 >> 31
 * exactly.  sysptd relates the perf clock to CLOCK_MONOTONIC by reading
 * this machine's TSC through that conversion; a TSC faster than the real
 * one keeps the incident's times (perf ns + that offset) positive, as
 * CLOCK_MONOTONIC times are. */
#define TSC_HZ "8000000000"

/* One line of sched.txt. */
struct sw {
	int64_t ts;                /* ns */
	int cpu, prev, next;       /* tids, 0 idle */
};

/* A task of tasks.txt. */
struct task {
	int pid, tid;
	char comm[64];
};

/* One generated case and what the fake does with it. */
struct fg_case {
	const char *name;
	const char *args[24];      /* ptgen options and programs, NULL-ended;
	                            * "@prog" is a program in PROGS_DIR */
	int wrap_cpu;              /* CPU whose stream must overflow its ring (-1 none) */
	int drop_cpu;              /* CPU that loses its first drop_len bytes (-1 none) */
	size_t drop_len;
};

static const struct fg_case cases[] = {
	{ "one", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--", "@ptprog-fib", NULL }, -1, -1, 0 },
	{ "lossy", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--cpus", "2", "--slice-insns", "72000", "--psb-period",
	             "256", "--", "@ptprog-fib", "19", "--", "@ptprog-fib", "17", NULL },
	  1, 0, 3000 },
};

/* Everything one case reads and builds. */
struct fg_run {
	char dir[4096];            /* generator output */
	int ncpus;
	unsigned char *pt[MAXCPU]; /* cpuN.pt */
	size_t pt_len[MAXCPU];
	const unsigned char *ring[MAXCPU]; /* what the AUX ring keeps, oldest first */
	size_t ring_len[MAXCPU];
	unsigned char *sb[MAXCPU]; /* sideband records */
	size_t sb_len[MAXCPU];
	struct task tasks[MAXTASK];
	int ntasks;
	struct sw sws[MAXSW];
	int nsw;
	int64_t cut_ts[MAXTASK];   /* per task: data start after a loss (0: none) */
	int64_t cut_cpu_ts[MAXCPU]; /* per CPU: time its data starts after a loss */
	uint64_t cut_skip[MAXCPU]; /* per CPU: bytes before its first PSB then */
	int wrap_cpu, drop_cpu;    /* as in the case */
	size_t drop_len;
};

static int task_pid(const struct fg_run *r, int tid)
{
	for (int i = 0; i < r->ntasks; i++)
		if (r->tasks[i].tid == tid)
			return r->tasks[i].pid;
	return tid;
}

static int task_index(const struct fg_run *r, int tid)
{
	for (int i = 0; i < r->ntasks; i++)
		if (r->tasks[i].tid == tid)
			return i;
	return -1;
}

static int read_text(struct fg_run *r)
{
	char path[4200], line[4400], file[4096], comm[64];
	unsigned long long a, b, pgoff;
	long long ts;
	int pid, tid, cpu, prev, next;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tasks.txt", r->dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && r->ntasks < MAXTASK)
		if (sscanf(line, "%d %d %llx %63s", &pid, &tid, &a, comm) == 4) {
			r->tasks[r->ntasks].pid = pid;
			r->tasks[r->ntasks].tid = tid;
			snprintf(r->tasks[r->ntasks].comm, sizeof(comm), "%s", comm);
			r->ntasks++;
		}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/sched.txt", r->dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && r->nsw < MAXSW)
		if (sscanf(line, "%lld %d %d %d", &ts, &cpu, &prev, &next) == 4 && cpu >= 0 &&
		    cpu < r->ncpus)
			r->sws[r->nsw++] = (struct sw){ ts, cpu, prev, next };
	if (f)
		fclose(f);
	if (r->ntasks == 0 || r->nsw == 0)
		return -EBADMSG;

	/* before anything runs: every task's COMM and its MMAP2s, on the CPU
	 * it first runs on (times just before the generator's first ns) */
	{
		int64_t t0 = r->sws[0].ts - 10000;

		for (int i = 0; i < r->ntasks; i++) {
			int cc = 0;

			for (int k = 0; k < r->nsw; k++)
				if (r->sws[k].next == r->tasks[i].tid) {
					cc = r->sws[k].cpu;
					break;
				}
			r->sb_len[cc] = fakepmu_rec_comm(r->sb[cc], r->sb_len[cc], SB_CAP, r->tasks[i].pid,
			                                r->tasks[i].tid, r->tasks[i].comm,
			                                (uint64_t)t0 + (uint64_t)i, cc);
			snprintf(path, sizeof(path), "%s/maps.txt", r->dir);
			f = fopen(path, "r");
			while (f && fgets(line, sizeof(line), f))
				if (sscanf(line, "%d %llx %llx %llx %4095s", &pid, &a, &b, &pgoff, file) == 5 &&
				    pid == r->tasks[i].pid && r->tasks[i].pid == r->tasks[i].tid &&
				    file[0] == '/')
					r->sb_len[cc] = fakepmu_rec_mmap2(r->sb[cc], r->sb_len[cc], SB_CAP, pid,
					                                 pid, a, b - a, pgoff, file,
					                                 (uint64_t)t0 + 100, cc);
			if (f)
				fclose(f);
		}
	}
	/* each switch: OUT on the previous task's side, IN on the next's */
	for (int k = 0; k < r->nsw; k++) {
		const struct sw *s = &r->sws[k];
		int c = s->cpu;

		r->sb_len[c] = fakepmu_rec_switch(r->sb[c], r->sb_len[c], SB_CAP, 1, task_pid(r, s->prev),
		                                  s->prev, task_pid(r, s->next), s->next,
		                                  (uint64_t)s->ts, c);
		r->sb_len[c] = fakepmu_rec_switch(r->sb[c], r->sb_len[c], SB_CAP, 0, task_pid(r, s->next),
		                                  s->next, task_pid(r, s->prev), s->prev,
		                                  (uint64_t)s->ts, c);
	}
	return 0;
}

/* TSC of the first PSB+ in @buf (libipt's packet decoder), its offset in
 * *@at; 0 when none. */
static uint64_t first_psb_tsc(const unsigned char *buf, size_t len, uint64_t *at)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet pkt;
	uint64_t tsc = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return 0;
	*at = 0;
	if (pt_pkt_sync_forward(d) >= 0) {
		pt_pkt_get_sync_offset(d, at);
		while (pt_pkt_next(d, &pkt, sizeof(pkt)) >= 0) {
			if (pkt.type == ppt_tsc) {
				tsc = pkt.payload.tsc.tsc;
				break;
			}
			if (pkt.type == ppt_psbend)
				break;
		}
	}
	pt_pkt_free_decoder(d);
	return tsc;
}

/* The task running on @cpu at @ts per sched.txt (0 idle), and when it
 * was switched in there. */
static int running_at(const struct fg_run *r, int cpu, int64_t ts, int64_t *since)
{
	int tid = 0;

	*since = 0;
	for (int k = 0; k < r->nsw && r->sws[k].ts <= ts; k++)
		if (r->sws[k].cpu == cpu) {
			tid = r->sws[k].next;
			*since = r->sws[k].ts;
		}
	return tid;
}

/* A loss at the start of @cpu's data: the surviving bytes begin at a PSB
 * whose time is the cut.  Checks that the cut is clean (the first run of
 * that CPU, the task's first run anywhere) and notes it for the task. */
static int note_cut(struct fg_run *r, int cpu, int64_t tsc_hz)
{
	uint64_t tsc = first_psb_tsc(r->ring[cpu], r->ring_len[cpu], &r->cut_skip[cpu]);
	int64_t cut = (int64_t)((unsigned __int128)tsc * 1000000000u / (uint64_t)tsc_hz), since;
	int tid, idx, first_run = -1;

	CHECK(tsc != 0);
	tid = running_at(r, cpu, cut, &since);
	idx = task_index(r, tid);
	printf("  cpu %d: data from the first PSB left, %" PRId64 " ns (tid %d)\n", cpu, cut, tid);
	CHECK(idx >= 0);
	if (idx < 0 || !tsc)
		return -1;
	/* a clean cut: nothing of that task, and nothing on that CPU, before */
	for (int k = 0; k < r->nsw; k++) {
		if (r->sws[k].next == tid && first_run < 0)
			first_run = k;
		if (r->sws[k].cpu == cpu && r->sws[k].next != 0 && r->sws[k].ts < since)
			CHECK(!"the lost data of this CPU held another run");
	}
	CHECK(first_run >= 0 && r->sws[first_run].ts == since && r->sws[first_run].cpu == cpu);
	r->cut_ts[idx] = cut;
	r->cut_cpu_ts[cpu] = cut;
	return 0;
}

/* What the decode can know after the cuts: intervals of a cut task that
 * ended before the cut (+ tolerance) are gone from both sides; those open
 * across it start at the cut and are flagged INFERRED|START_TRUNCATED. */
static void apply_cuts(const struct fg_run *r, struct frames *truth, struct frames *dec, int64_t tol,
                       int *trunc_seen)
{
	size_t i, n;

	*trunc_seen = 0;
	for (int t = 0; t < r->ntasks; t++) {
		int64_t cut = r->cut_ts[t];
		int tid = r->tasks[t].tid;

		if (!cut)
			continue;
		for (i = n = 0; i < truth->n; i++) {
			struct frame *f = &truth->v[i];

			if (f->tid == tid && f->end < cut + tol)
				continue;
			if (f->tid == tid && f->start < cut) {
				f->start = cut;
				f->flags |= SPTD_DEC_F_INFERRED | SPTD_DEC_F_START_TRUNCATED;
				(*trunc_seen)++;
			}
			truth->v[n++] = *f;
		}
		truth->n = n;
		for (i = n = 0; i < dec->n; i++)
			if (dec->v[i].tid != tid || dec->v[i].end >= cut + tol)
				dec->v[n++] = dec->v[i];
		dec->n = n;
	}
	truth_sort(truth);
}

static int64_t q(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	if (sptd_store_query_int(st, sql, &v) < 0)
		return -1;
	return v;
}

/* Capture through the fake PMU into @incident, as cmd_record does. */
static int capture(struct fg_run *r, const char *sysroot, const char *incident, int64_t *offset)
{
	struct fakepmu_script scripts[MAXCPU];
	int cpus[MAXCPU], pids[64], gone[64], npids, ngone = 0, ret;
	struct sptd_col_pt_config cfg = { .cpus = cpus, .ncpus = r->ncpus };
	struct sptd_col_pt *pt = NULL;
	struct sptd_store *st = NULL;
	int64_t tsc_hz = truth_config_get(r->dir, "tsc_hz");
	uint64_t mult;
	char err[512];

	memset(scripts, 0, sizeof(scripts));
	for (int c = 0; c < r->ncpus; c++) {
		cpus[c] = c;
		scripts[c] = (struct fakepmu_script){ .pt = r->pt[c], .pt_len = r->pt_len[c],
		                                      .sb = r->sb[c], .sb_len = r->sb_len[c],
		                                      .aux_time = (uint64_t)truth_config_get(r->dir,
		                                                                             "end_ns") };
	}
	/* perf ns = tsc * mult >> 31, exactly the generator's ns = tsc * 1e9 / tsc_hz */
	mult = (1000000000ull << 31) / (uint64_t)tsc_hz;
	CHECK(mult * (uint64_t)tsc_hz == 1000000000ull << 31);
	cfg.req.timing = SPTD_PT_TIMING_NORMAL;
	cfg.req.window_ns = 1000;      /* the minimum AUX ring, 64 KiB */
	cfg.cpu_family = (int)truth_config_get(r->dir, "cpu_family");
	cfg.cpu_model = (int)truth_config_get(r->dir, "cpu_model");
	cfg.cpu_stepping = (int)truth_config_get(r->dir, "cpu_stepping");
	for (int c = 0; c < r->ncpus; c++) {
		if (c == r->drop_cpu) {
			scripts[c].drop_at = 0;
			scripts[c].drop_len = r->drop_len;
		}
	}
	fakepmu_install(PMU_TYPE, scripts, r->ncpus, 0);
	fakepmu_set_clock(0, (uint32_t)mult, 31);
	ret = sptd_col_pt_create(&cfg, &pt, err, sizeof(err));
	CHECK_INT(ret, 0);
	if (ret < 0) {
		fprintf(stderr, "  create: %s\n", err);
		goto out;
	}
	for (int c = 0; c < r->ncpus; c++) {
		size_t kept = r->pt_len[c] - (c == r->drop_cpu ? r->drop_len : 0);
		size_t aux = (size_t)sptd_col_pt_setup(pt)->aux_bytes;

		r->ring[c] = r->pt[c] + (r->pt_len[c] - (kept > aux ? aux : kept));
		r->ring_len[c] = kept > aux ? aux : kept;
	}
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
	CHECK_INT(ngone, r->ntasks);
	ret = sptd_store_create(incident, &st);
	CHECK_INT(ret, 0);
	if (ret < 0)
		goto out;
	CHECK_INT(sptd_store_meta_set(st, "source", "pt"), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "cpus", r->ncpus), 0);
	{
		int64_t w = sptd_col_pt_write(pt, st), expect = 0;

		for (int c = 0; c < r->ncpus; c++)
			expect += (int64_t)r->ring_len[c];
		CHECK_INT(w, expect);
	}
	CHECK_INT(sptd_store_meta_get_int(st, "perf_clock_offset_ns", offset), 0);
	if (*offset + truth_config_get(r->dir, "start_ns") <= 0)
		fprintf(stderr, "  this machine's TSC runs faster than the fake's %s Hz: the "
		        "incident's times would be negative\n", TSC_HZ);
	CHECK(*offset + truth_config_get(r->dir, "start_ns") > 0);
	CHECK_INT(sptd_store_meta_set_int(st, "window_start",
	                                  truth_config_get(r->dir, "start_ns") + *offset - 1000000), 0);
	CHECK_INT(sptd_store_meta_set_int(st, "window_end",
	                                  truth_config_get(r->dir, "end_ns") + *offset + 1000000), 0);
	ret = sptd_col_pt_mmaps_exited(pt, st, gone, ngone);
	CHECK(ret >= ngone);
	CHECK_INT(sptd_col_pt_images_anon(st, pids, npids), 0);
	CHECK_INT(sptd_col_pt_images_files(st, NULL, 0) >= 0, 1);
	ret = sptd_col_derive_all(st, 1);
	CHECK_INT(ret, 0);
	/* the raw capture is what each ring kept */
	for (int c = 0; c < r->ncpus; c++) {
		struct sptd_store_stmt *s = NULL;
		char sql[96];

		snprintf(sql, sizeof(sql), "SELECT data FROM raw_pt WHERE cpu = %d", c);
		CHECK_INT(sptd_store_prepare(st, sql, &s), 0);
		if (s && sptd_store_step(s) == 1) {
			size_t len = 0;
			const void *blob = sptd_store_column_blob(s, 0, &len);

			CHECK(blob && len == r->ring_len[c] && memcmp(blob, r->ring[c], len) == 0);
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

/* Generate, capture, compare one case; 77 when ptrace is not permitted. */
static int run_case(const struct fg_case *c, const char *ptgen, const char *progs,
                    const char *tmp, const char *sysroot)
{
	char progpath[8][4200], log[4200], incident[4200], path[4200];
	char *argv[40];
	struct fg_run *r = calloc(1, sizeof(*r));
	struct frames truth = { 0 }, dec = { 0 };
	int argc = 0, np = 0, rc, ret = -1, trunc_seen = 0;
	int64_t offset = 0, tol, tsc_hz;

	if (!r)
		return -1;
	snprintf(r->dir, sizeof(r->dir), "%s/%s", tmp, c->name);
	snprintf(log, sizeof(log), "%s.log", r->dir);
	snprintf(incident, sizeof(incident), "%s.incident", r->dir);
	argv[argc++] = (char *)ptgen;
	argv[argc++] = "-o";
	argv[argc++] = r->dir;
	for (int i = 0; c->args[i] && argc < 38; i++) {
		if (c->args[i][0] == '@') {
			snprintf(progpath[np], sizeof(progpath[np]), "%s/%s", progs, c->args[i] + 1);
			argv[argc++] = progpath[np++];
		} else {
			argv[argc++] = (char *)c->args[i];
		}
	}
	argv[argc] = NULL;
	rc = truth_run(argv, log, 1);
	if (rc == 77) {
		free(r);
		return 77;
	}
	CHECK_INT(rc, 0);
	if (rc != 0)
		goto out;
	r->ncpus = (int)truth_config_get(r->dir, "cpus");
	tsc_hz = truth_config_get(r->dir, "tsc_hz");
	CHECK(r->ncpus >= 1 && r->ncpus <= MAXCPU && tsc_hz > 0);
	if (r->ncpus < 1 || r->ncpus > MAXCPU || tsc_hz <= 0)
		goto out;
	for (int i = 0; i < r->ncpus; i++) {
		snprintf(path, sizeof(path), "%s/cpu%d.pt", r->dir, i);
		r->pt[i] = sptd_test_slurp(path, &r->pt_len[i]);
		r->sb[i] = calloc(1, SB_CAP);
		CHECK(r->pt[i] != NULL && r->sb[i] != NULL);
		if (!r->pt[i] || !r->sb[i])
			goto out;
	}
	r->wrap_cpu = c->wrap_cpu;
	r->drop_cpu = c->drop_cpu;
	r->drop_len = c->drop_len;
	CHECK_INT(read_text(r), 0);

	/* the fake PMU describes the CPU the trace came from */
	{
		char buf[64];

		snprintf(buf, sizeof(buf), "%" PRId64, truth_config_get(r->dir, "nom_freq"));
		CHECK_INT(fakepmu_sysfs_cap(sysroot, "max_nonturbo_ratio", buf), 0);
		snprintf(buf, sizeof(buf), "%" PRId64 ":%" PRId64, truth_config_get(r->dir, "cpuid15_ebx"),
		         truth_config_get(r->dir, "cpuid15_eax"));
		CHECK_INT(fakepmu_sysfs_cap(sysroot, "tsc_art_ratio", buf), 0);
		snprintf(buf, sizeof(buf), "%x", 1u << truth_config_get(r->dir, "mtc_freq"));
		CHECK_INT(fakepmu_sysfs_cap(sysroot, "mtc_periods", buf), 0);
	}
	if (capture(r, sysroot, incident, &offset) < 0)
		goto out;
	if (r->wrap_cpu >= 0) {
		/* the case is built so that this CPU's ring wrapped, the others not */
		CHECK(r->pt_len[r->wrap_cpu] > r->ring_len[r->wrap_cpu]);
		CHECK_INT(note_cut(r, r->wrap_cpu, tsc_hz), 0);
	}
	if (r->drop_cpu >= 0) {
		CHECK(r->pt_len[r->drop_cpu] - r->drop_len == r->ring_len[r->drop_cpu]);
		CHECK_INT(note_cut(r, r->drop_cpu, tsc_hz), 0);
	}
	CHECK_INT(truth_read(r->dir, &truth), 0);
	CHECK_INT(truth_read_incident(incident, offset, &dec), 0);
	tol = truth_tolerance_ns(r->dir);
	apply_cuts(r, &truth, &dec, tol, &trunc_seen);
	if (r->wrap_cpu >= 0 || r->drop_cpu >= 0) {
		printf("  %s: %d intervals open across a cut (start truncated)\n", c->name, trunc_seen);
		CHECK(trunc_seen > 0);
	}
	ret = truth_compare(c->name, &truth, &dec, tol);
	CHECK_INT(ret, 0);

	/* the gaps: where the fake lost data, and only there */
	{
		struct sptd_store *st = NULL;
		char sql[256];

		CHECK_INT(sptd_store_open(incident, 0, &st), 0);
		for (int cpu = 0; st && cpu < r->ncpus; cpu++) {
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM gap WHERE cpu = %d AND reason "
			         "LIKE 'sideband: pt aux data truncated%%'", cpu);
			CHECK_INT(q(st, sql), cpu == r->drop_cpu ? 1 : 0);
			/* no decode error anywhere: what survived decodes whole */
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM gap WHERE cpu = %d AND reason "
			         "LIKE 'pt: %%' AND reason NOT LIKE 'pt: %% bytes before the first PSB %%'",
			         cpu);
			CHECK_INT(q(st, sql), 0);
			/* a lossy CPU says where its data starts again: at the cut, after
			 * the bytes before the first PSB that survived */
			if (r->cut_cpu_ts[cpu]) {
				snprintf(sql, sizeof(sql), "SELECT count(*) FROM gap WHERE cpu = %d AND reason = "
				         "'pt: %" PRIu64 " bytes before the first PSB not decodable' AND "
				         "abs(ts - %" PRId64 ") <= %" PRId64, cpu, r->cut_skip[cpu],
				         r->cut_cpu_ts[cpu] + offset, tol);
				CHECK_INT(q(st, sql), 1);
			}
		}
		if (getenv("SPTD_VERBOSE") && st) {
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
out:
	truth_frames_free(&truth);
	truth_frames_free(&dec);
	for (int i = 0; i < MAXCPU; i++) {
		free(r->pt[i]);
		free(r->sb[i]);
	}
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
