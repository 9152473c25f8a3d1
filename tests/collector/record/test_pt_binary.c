/* test_pt_binary.c — the real `sysptd --source pt --trigger ... --once`
 * recording the fake intel_pt PMU, proven against exact ground truth.
 *
 * sptd-ptgen (docs/PTGEN.md) runs real programs and writes the Intel PT
 * their execution makes, per virtual CPU, with every call interval as
 * truth.txt.  The sysptd binary runs with tests/fakepmu/preload.c preloaded
 * (SPTD_FAKEPMU_GEN: that output) and SPTD_SYSFS_ROOT at a fake intel_pt
 * tree with the generator's caps, SPTD_PT_CPU the generator's CPU: its
 * intel_pt and sideband events are the fake's, its tracepoint trigger and
 * ftrace real.  Once "armed:", a process named sptd-ptbin exits
 * (sched:sched_process_exit fires); the incident sysptd writes must hold
 * what each fake AUX ring kept, and decode (inside sysptd) to truth.txt.
 *
 * Usage: test_pt_binary PTGEN PROGS_DIR PRELOAD_SO [CASE...]; $SPTD_BIN.
 *
 * Cases (the 64 KiB AUX ring of --buffer 64K):
 *   one    ptprog-fib on 1 CPU, nothing lost: every interval equal.
 *   lossy  ptprog-fib 19 and 17 on 2 CPUs (migration, switches, CYC): CPU
 *          1's stream outgrows its ring, which wraps; CPU 0's AUX record is
 *          TRUNCATED, its first 3000 bytes lost.  Where data was lost the
 *          capture starts at the first PSB left: intervals of the task cut
 *          there that ended before are gone, those open across it start at
 *          the cut flagged INFERRED|START_TRUNCATED; gap rows say where.
 *   kcore  as one, with a fake kernel (SPTD_KERNEL_ROOT) whose /proc/kcore
 *          fails reads of its text with EIO (preload_kcore.c): the kernel
 *          text costs the incident nothing but itself — it is written,
 *          user code decodes to truth, meta and a warning name kcore.
 *   twice  two incidents in a row from one service (--count 2) of a trace
 *          ten times the window (two programs taking turns, 30 ms between
 *          slices, MTC every 164 us: 20 KB): each run of the fake ends at
 *          its freeze, so most of each incident's PT lies before its
 *          window.  Each incident holds
 *          its own run's bytes only, decodes (window moved back) to the
 *          truth exactly — nothing of the run before it — and, as
 *          recorded, no slice starts before its window_start: those that
 *          ended before it are dropped and counted, those crossing it
 *          start there (issue 34 item 6).
 *   kernel sptd-ptgen --kernel: ptprog-kernel's getpid calls enter its
 *          synthetic kernel (docs/PTGEN.md), whose do_syscall_64 calls a
 *          module function three times; after the third return to user
 *          space a static-key jmp in the module becomes a nop (--kpoke):
 *          the slow path ran before, the fast one after.  The fake kernel
 *          (SPTD_KERNEL_ROOT) serves that text and module in kcore, their
 *          functions in kallsyms, the module in /proc/modules, the code as
 *          it is after the poke; the sideband has the TEXT_POKE.  Decoded,
 *          every kernel and module frame is the truth's, named as there,
 *          with the user stack going on after each SYSRET; a decoder that
 *          ignored the poke would show the fast path all along.
 *          `sysptd decode` of the incident (no kallsyms then: the kernel
 *          symbols the capture stored) decodes to the same.
 *
 * The fake's PT has the generator's TSC; sysptd reads the TSC through its
 * syscall table, which the fake (fakepmu_tsc_follow) sets to the end of
 * each run at the run's freeze, so every incident's trace ends at its
 * freeze, as real PT's does. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakepmu/fakepmu_cut.h"
#include "fakepmu/fakepmu_gen.h"
#include "fakepmu/fakepmu_kcore.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "truth_compare.h"

#define PMU_TYPE 42
#define AUX_BYTES 65536
#define TSC_HZ "8000000000"  /* as test_pt_fakegold: perf ns = tsc * 2^28 >> 31 exactly */

/* One generated case and what the fake loses. */
struct pb_case {
	const char *name;
	const char *args[24];      /* ptgen options and programs, NULL-ended;
	                            * "@prog" is a program in PROGS_DIR */
	int wrap_cpu;              /* CPU whose stream must overflow its ring (-1 none) */
	int drop_cpu;              /* CPU that loses its first drop_len bytes (-1 none) */
	size_t drop_len;
	int kcore_eio;             /* 1: the fake kernel's kcore reads fail (EIO) */
	int twice;                 /* 1: two incidents in a row (--count 2) */
	int kernel;                /* 1: a --kernel output, its fake kernel served */
};

static const struct pb_case cases[] = {
	{ "one", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--", "@ptprog-fib", NULL }, -1, -1, 0, 0, 0,
	  0 },
	{ "lossy", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--cpus", "2", "--slice-insns", "72000",
	             "--psb-period", "256", "--", "@ptprog-fib", "19", "--", "@ptprog-fib", "17",
	             NULL },
	  1, 0, 3000, 0, 0, 0 },
	{ "kcore", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--", "@ptprog-fib", NULL }, -1, -1, 0,
	  1, 0, 0 },
	{ "twice", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--mtc-freq", "12", "--slice-insns", "3000",
	             "--switch-cycles", "30000000", "--", "@ptprog-fib", "--", "@ptprog-fib", NULL },
	  -1, -1, 0, 0, 1, 0 },
	{ "kernel", { "--timing", "cyc", "--tsc-hz", TSC_HZ, "--kernel", "--kpoke", "ptgen_mod_hook@3",
	              "--", "@ptprog-kernel", NULL }, -1, -1, 0, 0, 0, 1 },
};

/* What one case expects of the capture. */
struct pb_run {
	struct fakepmu_ptgen *g;   /* the generator output the fake serves */
	struct fakepmu_cuts k;     /* what each AUX ring keeps, where data starts again */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* 1 when the file @path contains @needle. */
static int file_has(const char *path, const char *needle)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return found;
}

static void dump(const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "    | %s", line);
	if (f)
		fclose(f);
}

/* Note the cut of @cpu's data (fakepmu_cuts_note), checking it is clean. */
static void note_cut(struct pb_run *r, int cpu)
{
	char why[256] = "";
	int ret = fakepmu_cuts_note(&r->k, r->g, cpu, why, sizeof(why));

	if (ret < 0)
		fprintf(stderr, "  %s\n", why);
	CHECK_INT(ret, 0);
}

static int64_t q(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	if (sptd_store_query_int(st, sql, &v) < 0)
		return -1;
	return v;
}

/* Lines in the file @path (0 when none). */
static int lines_in(const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n;
}

/* A process named sptd-ptbin exits: the trigger. */
static void trip(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, "sptd-ptbin", 0, 0, 0);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

#define MAX_INCIDENTS 2

/* Start sysptd under the fake, trip its trigger (once, or twice when the
 * case says so, the second time after the first incident is written),
 * wait for the incidents; their paths in @incident.  0, or -1 (logs
 * shown). */
static int record(const struct pb_case *c, const char *tmp, const char *preload, const char *gendir,
                  const char *sysroot, char incident[][4200])
{
	const char *bin = getenv("SPTD_BIN");
	char out[4200], errlog[4200], outdir[4200], cache[4200], drop[64], cpu[64], line[4200];
	char kernel[4200];
	char fms[3][32] = { "", "", "" };
	const char *keys[3] = { "cpu_family", "cpu_model", "cpu_stepping" };
	int64_t t0;
	pid_t pid;
	int status = 0, done = 0, want = c->twice ? 2 : 1;
	FILE *f;

	snprintf(out, sizeof(out), "%s/%s.out", tmp, c->name);
	snprintf(errlog, sizeof(errlog), "%s/%s.err", tmp, c->name);
	snprintf(outdir, sizeof(outdir), "%s/%s-incidents", tmp, c->name);
	snprintf(cache, sizeof(cache), "%s/%s-cache", tmp, c->name);
	snprintf(drop, sizeof(drop), "%d:%zu", c->drop_cpu, c->drop_len);
	snprintf(kernel, sizeof(kernel), "%s/%s-kernel", tmp, c->name);
	if (c->kcore_eio) {
		static const uint8_t text[4096] = { 0xc3 };

		CHECK_INT(fakepmu_kernel_write(kernel, text, sizeof(text), NULL, 0, 0), 0);
	}
	for (int i = 0; i < 3; i++)
		snprintf(fms[i], sizeof(fms[i]), "%" PRId64, truth_config_get(gendir, keys[i]));
	snprintf(cpu, sizeof(cpu), "%s/%s/%s", fms[0], fms[1], fms[2]);
	if (!bin || access(bin, X_OK) != 0) {
		fprintf(stderr, "  no sysptd binary (SPTD_BIN=%s)\n", bin ? bin : "unset");
		return -1;
	}
	/* Another sysptd on this machine (a concurrent test) holds the lock or
	 * the "sysptd" ftrace instance: wait for it, a few times. */
	for (int attempt = 0; attempt < 5; attempt++) {
		if (attempt) {
			printf("  sysptd could not arm (another sysptd running?): retrying\n");
			nap_ms(2000);
		}
		done = 0;
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			char name[32];
			char *argv[] = { (char *)bin, "--name", name, "--source", "pt", "--window", "20ms", "--buffer", "64K",
			                 "--trigger", "tracepoint=sched:sched_process_exit,filter=comm==\"sptd-ptbin\"",
			                 "--count", c->twice ? "2" : "1", "-o", outdir, "--image-cache", cache,
			                 "-j", "2", NULL };

			/* a recorder of its own, beside the machine's service */
			snprintf(name, sizeof(name), "ptbin%d", (int)getpid());
			if (!freopen(out, "w", stdout) || !freopen(errlog, "w", stderr))
				_exit(126);
			setenv("LD_PRELOAD", preload, 1);
			setenv("SPTD_SYSFS_ROOT", sysroot, 1);
			setenv("SPTD_FAKEPMU_GEN", gendir, 1);
			setenv("SPTD_PT_CPU", cpu, 1);
			if (c->drop_cpu >= 0)
				setenv("SPTD_FAKEPMU_DROP", drop, 1);
			if (c->kcore_eio || c->kernel)
				setenv("SPTD_KERNEL_ROOT", kernel, 1);
			if (c->kcore_eio)
				setenv("SPTD_FAKEPMU_KCORE_EIO", "1", 1);
			execv(bin, argv);
			_exit(127);
		}
		/* armed: the fake's events are open and enabled, the trigger too */
		for (t0 = mono_ms(); !file_has(errlog, "armed:") && mono_ms() - t0 < 30000;) {
			if (waitpid(pid, &status, WNOHANG) == pid) {
				done = 1;
				break;
			}
			nap_ms(20);
		}
		if (!done || !((WIFEXITED(status) && WEXITSTATUS(status) == 7) ||
		               file_has(errlog, "ftrace instance")))
			break;
	}
	CHECK(!done && file_has(errlog, "armed:"));
	if (!done && file_has(errlog, "armed:")) {
		nap_ms(200);   /* past sysptd's warm-up */
		trip();
	}
	if (want == 2) {
		/* the first incident written, the service re-armed; a trip it
		 * took for warm-up (a loaded machine) is made again */
		int64_t last = 0;

		for (t0 = mono_ms(); !done && lines_in(out) < 2 && mono_ms() - t0 < 60000; nap_ms(20)) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				done = 1;
			else if (lines_in(out) == 1 && mono_ms() - last > 3000) {
				if (!last)
					nap_ms(200);   /* past the re-armed window */
				trip();
				last = mono_ms();
			}
		}
	}
	for (t0 = mono_ms(); !done && mono_ms() - t0 < 60000; nap_ms(20))
		if (waitpid(pid, &status, WNOHANG) == pid)
			done = 1;
	if (!done) {
		fprintf(stderr, "  sysptd did not finish: stopping it\n");
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	CHECK(done && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the lost kernel text is said, naming the file and the error */
	if (c->kcore_eio)
		CHECK(file_has(errlog, "kernel text not captured") && file_has(errlog, "/proc/kcore") &&
		      file_has(errlog, strerror(EIO)));
	f = fopen(out, "r");
	for (int i = 0; i < want; i++) {
		incident[i][0] = '\0';
		if (f && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(incident[i], sizeof(incident[i]), "%s", line);
		}
		CHECK(incident[i][0] && access(incident[i], R_OK) == 0);
	}
	if (f)
		fclose(f);
	if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !incident[want - 1][0]) {
		fprintf(stderr, "  sysptd (SPTD_PT_CPU=%s) said:\n", cpu);
		dump(errlog);
		return -1;
	}
	if (getenv("SPTD_VERBOSE"))
		dump(errlog);
	return 0;
}

/* The incident holds the binary's capture of the fake: meta, the raw PT
 * each ring kept, the trigger. */
static int check_capture(const struct pb_run *r, const char *incident, int online, int64_t *offset)
{
	struct sptd_store *st = NULL;
	char buf[64] = "", sql[128];
	int ret = sptd_store_open(incident, 0, &st);

	CHECK_INT(ret, 0);
	if (ret < 0)
		return ret;
	CHECK_INT(sptd_store_meta_get(st, "source", buf, sizeof(buf)) >= 0, 1);
	CHECK(strcmp(buf, "pt") == 0);
	CHECK_INT(sptd_store_meta_get(st, "pt_time_source", buf, sizeof(buf)) >= 0, 1);
	CHECK(strcmp(buf, "perf") == 0);
	/* the fake refuses AUX pause groups: sysptd freezes from user space */
	CHECK_INT(sptd_store_meta_get(st, "pt_aux_pause", buf, sizeof(buf)) >= 0, 1);
	CHECK(strcmp(buf, "user") == 0);
	CHECK_INT(sptd_store_meta_get(st, "pt_cpu_vendor", buf, sizeof(buf)) >= 0, 1);
	CHECK(strcmp(buf, "GenuineIntel") == 0);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_cpu_model'"),
	          truth_config_get(r->g->dir, "cpu_model"));
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_aux_bytes'"), AUX_BYTES);
	CHECK_INT(q(st, "SELECT count(*) FROM trigger WHERE kind LIKE 'tracepoint=sched:sched_process_exit%'"), 1);
	CHECK_INT(sptd_store_meta_get_int(st, "perf_clock_offset_ns", offset), 0);
	CHECK(*offset + r->g->start_ns > 0);
	/* every online CPU was traced; those the generator had no stream for
	 * kept nothing */
	snprintf(sql, sizeof(sql), "SELECT count(DISTINCT cpu) FROM raw_pt WHERE cpu >= %d", r->g->ncpus);
	CHECK_INT(q(st, sql), 0);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'cpus'"), online);
	for (int c = 0; c < r->g->ncpus; c++) {
		struct sptd_store_stmt *s = NULL;

		snprintf(sql, sizeof(sql), "SELECT data FROM raw_pt WHERE cpu = %d", c);
		CHECK_INT(sptd_store_prepare(st, sql, &s), 0);
		if (s && sptd_store_step(s) == 1) {
			size_t len = 0;
			const void *blob = sptd_store_column_blob(s, 0, &len);

			CHECK_INT((int64_t)len, (int64_t)r->k.ring_len[c]);
			CHECK(blob && len == r->k.ring_len[c] && memcmp(blob, r->k.ring[c], len) == 0);
		} else {
			CHECK(!"raw_pt row missing");
		}
		sptd_store_finalize(s);
	}
	sptd_store_destroy(st);
	return 0;
}

/* The kernel text that could not be read is said in meta (which file,
 * which error) and costs nothing else: no kernel image row. */
static void check_kernel_lost(const char *incident)
{
	struct sptd_store *st = NULL;
	char buf[512] = "";

	CHECK_INT(sptd_store_open(incident, 0, &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_store_meta_get(st, "pt_kernel_image", buf, sizeof(buf)) >= 0, 1);
	if (strncmp(buf, "none", 4) != 0 || !strstr(buf, "/proc/kcore") || !strstr(buf, strerror(EIO)))
		fprintf(stderr, "  pt_kernel_image: %s\n", buf);
	CHECK(strncmp(buf, "none", 4) == 0 && strstr(buf, "/proc/kcore") && strstr(buf, strerror(EIO)));
	CHECK_INT(q(st, "SELECT count(*) FROM dso WHERE path = '[kernel.text]'"), 0);
	sptd_store_destroy(st);
}

/* How many intervals of @fs are named @name. */
static int named(const struct frames *fs, const char *name)
{
	int n = 0;

	for (size_t i = 0; i < fs->n; i++)
		n += strcmp(fs->v[i].name, name) == 0;
	return n;
}

/* The kernel case: the truth took both paths of the poked site (slow
 * before, fast after); the incident holds the poke, and its kernel and
 * [syscall] rows have their kinds. */
static void check_kernel(const struct frames *truth, const char *incident)
{
	struct sptd_store *st = NULL;
	int kframes = 0;

	for (size_t i = 0; i < truth->n; i++)
		kframes += strcmp(truth->v[i].name, "do_syscall_64") == 0 ||
		           strcmp(truth->v[i].name, "x64_sys_call") == 0 ||
		           strncmp(truth->v[i].name, "ptgen_mod_", 10) == 0;
	printf("  kernel: %d kernel and module intervals, %d slow path, %d fast path, %d "
	       "[syscall]\n", kframes, named(truth, "ptgen_mod_slow"), named(truth, "ptgen_mod_fast"),
	       named(truth, "[syscall]"));
	/* three calls per system call, three system calls before the poke */
	CHECK_INT(named(truth, "ptgen_mod_slow"), 9);
	CHECK(named(truth, "ptgen_mod_fast") >= 9);
	CHECK_INT(sptd_store_open(incident, 0, &st), 0);
	if (!st)
		return;
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_text_pokes'"), 1);
	CHECK_INT(q(st, "SELECT count(*) FROM slice s JOIN symbol y ON y.id = s.symbol_id "
	                "WHERE s.kind = 'kernel' AND (y.name IN ('do_syscall_64', 'x64_sys_call') "
	                "OR y.name GLOB 'ptgen_mod_*')"), kframes);
	CHECK_INT(q(st, "SELECT count(*) FROM slice s JOIN symbol y ON y.id = s.symbol_id "
	                "WHERE s.kind = 'syscall' AND y.name = '[syscall]'"),
	          named(truth, "[syscall]"));
	sptd_store_destroy(st);
}

/* The kernel case decoded again (`sysptd decode`, no kallsyms then): the
 * kernel symbols the capture stored name the kernel code as before. */
static void recheck_kernel(const char *incident, const struct frames *truth, int64_t offset,
                           int64_t tol, const char *log)
{
	struct sptd_store *st = NULL;
	struct frames dec = { 0 };
	char again[8500];
	int64_t wstart = 0;

	CHECK_INT(sptd_store_open(incident, 0, &st), 0);
	CHECK_INT(st ? sptd_store_meta_get_int(st, "window_start", &wstart) : -1, 0);
	sptd_store_destroy(st);
	snprintf(again, sizeof(again), "%s.again", incident);
	if (truth_decode_window(getenv("SPTD_BIN"), incident, again, wstart, log) < 0) {
		CHECK(!"sysptd decode");
		return;
	}
	CHECK_INT(truth_read_incident(again, offset, &dec), 0);
	CHECK_INT(truth_compare("kernel, decoded again", truth, &dec, tol), 0);
	truth_frames_free(&dec);
}

/* The twice case, incident @i of two: all but the window as one: its
 * capture, and its PT decoded with the window moved a second back is the
 * truth exactly (one run's trace, nothing of the run before); as recorded,
 * nothing before the window (truth_check_clip), something dropped. */
static void check_twice(const struct pb_run *r, const char *incident, int i, int online,
                        const struct frames *truth, int64_t tol, const char *log)
{
	const char *bin = getenv("SPTD_BIN");
	struct sptd_store *st = NULL;
	struct frames dec = { 0 };
	char whole[8500], name[32];
	int64_t offset = 0, wstart = 0;

	snprintf(name, sizeof(name), "twice #%d", i + 1);
	if (check_capture(r, incident, online, &offset) < 0)
		return;
	CHECK_INT(sptd_store_open(incident, 0, &st), 0);
	CHECK_INT(st ? sptd_store_meta_get_int(st, "window_start", &wstart) : -1, 0);
	sptd_store_destroy(st);
	snprintf(whole, sizeof(whole), "%s.whole", incident);
	if (truth_decode_window(bin, incident, whole, wstart - 1000000000, log) < 0) {
		CHECK(!"sysptd decode with the window moved back");
		return;
	}
	CHECK_INT(truth_read_incident(whole, offset, &dec), 0);
	CHECK_INT(truth_compare(name, truth, &dec, tol), 0);
	truth_frames_free(&dec);
	CHECK(truth_check_clip(name, whole, incident, wstart) > 0);
}

/* Generate, record through the binary, compare; 77 when it cannot run. */
static int run_case(const struct pb_case *c, const char *ptgen, const char *progs,
                    const char *preload, const char *tmp, int online)
{
	char gendir[4200], log[4200], sysroot[4200], incident[MAX_INCIDENTS][4200], err[512];
	struct pb_run r;
	struct frames truth = { 0 }, dec = { 0 };
	int rc, ret = -1;
	int64_t offset = 0, tol;

	memset(&r, 0, sizeof(r));
	snprintf(gendir, sizeof(gendir), "%s/%s", tmp, c->name);
	snprintf(log, sizeof(log), "%s/%s.ptgen.log", tmp, c->name);
	snprintf(sysroot, sizeof(sysroot), "%s/%s-sys", tmp, c->name);
	/* the generator's own TSC (from 1 ms): the fake's runs end at their
	 * freezes whatever TSC made them (fakepmu_tsc_follow) */
	rc = truth_run_ptgen(ptgen, progs, c->args, gendir, log);
	if (rc == 77)
		return 77;
	CHECK_INT(rc, 0);
	if (rc != 0)
		return -1;
	rc = fakepmu_gen_load(gendir, &r.g, err, sizeof(err));
	CHECK_INT(rc, 0);
	if (rc < 0) {
		fprintf(stderr, "  %s\n", err);
		return -1;
	}
	if (r.g->ncpus > online) {
		printf("  %s: needs %d CPUs, this machine has %d: not run\n", c->name, r.g->ncpus, online);
		fakepmu_gen_free(r.g);
		return 77;
	}
	if (c->drop_cpu >= 0)
		CHECK_INT(fakepmu_gen_drop(r.g, c->drop_cpu, c->drop_len), 0);
	fakepmu_cuts_rings(&r.k, r.g, c->drop_cpu, c->drop_len, AUX_BYTES);
	CHECK_INT(fakepmu_gen_sysfs(r.g, sysroot, PMU_TYPE), 0);
	if (c->kernel) {
		char kernel[4200];

		snprintf(kernel, sizeof(kernel), "%s/%s-kernel", tmp, c->name);
		CHECK_INT(fakepmu_gen_kernel(r.g, kernel), 0);
		CHECK_INT(r.g->npokes, 1);
	}
	if (record(c, tmp, preload, gendir, sysroot, incident) < 0)
		goto out;
	if (c->twice) {
		int failed = sptd_test_failed;

		CHECK_INT(truth_read(gendir, &truth), 0);
		for (int i = 0; i < 2; i++)
			check_twice(&r, incident[i], i, online, &truth, truth_tolerance_ns(gendir), log);
		ret = sptd_test_failed > failed ? -1 : 0;
		goto out;
	}
	if (check_capture(&r, incident[0], online, &offset) < 0)
		goto out;
	if (c->kcore_eio)
		check_kernel_lost(incident[0]);
	if (c->wrap_cpu >= 0) {
		CHECK(r.g->pt_len[c->wrap_cpu] > AUX_BYTES);
		note_cut(&r, c->wrap_cpu);
	}
	if (c->drop_cpu >= 0) {
		CHECK(r.g->pt_len[c->drop_cpu] - c->drop_len <= AUX_BYTES);
		note_cut(&r, c->drop_cpu);
	}
	CHECK_INT(truth_read(gendir, &truth), 0);
	CHECK_INT(truth_read_incident(incident[0], offset, &dec), 0);
	tol = truth_tolerance_ns(gendir);
	if (c->wrap_cpu >= 0 || c->drop_cpu >= 0) {
		int n = fakepmu_cuts_apply(&r.k, r.g, &truth, &dec, tol);

		printf("  %s: %d intervals open across a cut (start truncated)\n", c->name, n);
		CHECK(n > 0);
	}
	ret = truth_compare(c->name, &truth, &dec, tol);
	CHECK_INT(ret, 0);
	if (c->kernel) {
		check_kernel(&truth, incident[0]);
		recheck_kernel(incident[0], &truth, offset, tol, log);
	}
	/* the gaps: where the fake lost data, and only there */
	CHECK_INT(fakepmu_cuts_check_gaps(&r.k, r.g->ncpus, c->drop_cpu, incident[0], offset, tol), 0);
out:
	truth_frames_free(&truth);
	truth_frames_free(&dec);
	fakepmu_gen_free(r.g);
	return ret;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/sptd-ptbinary-XXXXXX";
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int skipped = 0, ran = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: test_pt_binary PTGEN PROGS_DIR PRELOAD_SO [CASE...]\n");
		return 2;
	}
	SPTD_REQUIRE_ROOT();
	if (access("/sys/kernel/tracing/events/sched/sched_process_exit", F_OK) != 0)
		SPTD_SKIP("no tracefs with sched:sched_process_exit (the trigger)");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int want = argc == 4, rc;

		for (int k = 4; k < argc && !want; k++)
			want = strcmp(argv[k], cases[i].name) == 0;
		if (!want)
			continue;
		rc = run_case(&cases[i], argv[1], argv[2], argv[3], tmp, (int)online);
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
		SPTD_SKIP("ptrace not permitted (kernel.yama.ptrace_scope) or too few CPUs");
	truth_tmp_done(tmp, sptd_test_failed);
	return SPTD_TEST_END();
}
