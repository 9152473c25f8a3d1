/* test_ptgen2perf.c — the emulated-PT generator's cases as perf.data.
 *
 * For each case: sptd-ptgen runs real programs (ground truth in truth.txt),
 * sptd-ptgen2perf writes the perf.data perf record would have written, and
 *  1. the real `sysptd import FILE` (SPTD_BIN) decodes it into an incident
 *     whose call intervals equal truth.txt one for one: same thread, depth,
 *     flags and function, in the same preorder (the truth by start, the
 *     incident through its parent links), start and end within the
 *     timing mode's resolution.  The rules, and the code, are those of
 *     test_golden (the `import --pt` golden test; tests/lib/truth_compare.c):
 *     truth names demangled with sptd_dec_demangle, code without a symbol
 *     compared by address,
 *     "[irq]" slices (the decoder's view of a preemption in user code,
 *     which the truth does not model) left out; tolerance from config.txt:
 *     cyc 128 cycles, mtc one MTC period + 64 cycles, tsc one PSB period
 *     of instructions.  Its raw_switch has one row per sched.txt switch
 *     (an OUT and IN record pair is one switch), in order per CPU.
 *  2. Debian's perf (`perf script --itrace=cr -F +flags`) decodes the same
 *     file, with no --symfs: its call and return lines, counted per CPU,
 *     equal the incident's decode stats and, in all, the call and return
 *     instructions the generator executed (config.txt); per thread, the
 *     targets of perf's calls, in order, are the functions of the
 *     incident's call slices (neither inferred nor tail calls), in order.
 *     Without perf, or when perf decodes nothing, this part is skipped
 *     with a message.
 *
 * Usage: test_ptgen2perf PTGEN PTGEN2PERF PROGS_DIR   (sysptd from $SPTD_BIN)
 * Needs ptrace (root): exit 77 otherwise. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sptd_store.h"
#include "sptd_test.h"
#include "truth_compare.h"

/* A generated case. */
struct p2p_case {
	const char *name;
	int wrap_all;              /* sptd-ptgen2perf --wrap-all */
	const char *args[16];      /* ptgen options and programs; "@prog" in PROGS_DIR */
};

static const struct p2p_case cases[] = {
	{ "fib", 0, { "--timing", "cyc", "--", "@ptprog-fib", NULL } },
	{ "two-programs-2cpus", 0, { "--cpus", "2", "--slice-insns", "2000", "--timing", "mtc",
	                             "--", "@ptprog-fib", "--", "@ptprog-fptr", NULL } },
	{ "threads-2cpus", 0, { "--cpus", "2", "--slice-insns", "1000", "--timing", "cyc", "--",
	                        "@ptprog-threads", NULL } },
	{ "fib-pie-wrapped", 1, { "--timing", "cyc", "--", "@ptprog-fib-pie", NULL } },
};

static const char *ptgen, *p2p, *progs, *sysptd;
static char tmpdir[256];
static int perf_missing_said;

/* Part 1: the incident's intervals against truth.txt (tests/lib/truth_compare.c:
 * the rules of test_golden). */
static void compare_truth(const char *name, const char *dir, const char *db)
{
	struct frames truth = { 0 }, dec = { 0 };

	CHECK_INT(truth_read(dir, &truth), 0);
	CHECK_INT(truth_read_incident(db, 0, &dec), 0);
	CHECK_INT(dec.n, truth.n);
	CHECK(truth.n > 0);
	CHECK_INT(truth_compare(name, &truth, &dec, truth_tolerance_ns(dir)), 0);
	truth_frames_free(&truth);
	truth_frames_free(&dec);
}

/* One context switch: a sched.txt line or a raw_switch row. */
struct swrow {
	int64_t ts;
	int cpu, prev, next;
	size_t seq;          /* file line or row order */
};

static int swrow_cmp(const void *a, const void *b)
{
	const struct swrow *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Append @r to the list @v of *@n rows (*@cap allocated), its seq the
 * position; aborts when memory runs out. */
static void swrow_push(struct swrow **v, size_t *n, size_t *cap, struct swrow r)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		*v = realloc(*v, *cap * sizeof(**v));
		if (!*v)
			abort();
	}
	r.seq = *n;
	(*v)[(*n)++] = r;
}

/* The incident's raw_switch against sched.txt: one row per switch (the
 * OUT and IN records of a pair are one switch), per CPU in the same
 * order, with the same tasks, each at most the converter's switch slack
 * (a quarter of --switch-cycles) from the generator's time. */
static void compare_switches(const char *name, const char *dir, struct sptd_store *st)
{
	struct swrow *want = NULL, *got = NULL;
	size_t nwant = 0, ngot = 0, capwant = 0, capgot = 0, i, n, bad = 0;
	int64_t core_hz = truth_config_get(dir, "core_hz"), slack;
	struct sptd_store_stmt *stmt = NULL;
	char path[600], line[256];
	FILE *f;
	int ret;

	slack = core_hz > 0 ? truth_config_get(dir, "switch_cycles") * 1000000000 / core_hz / 4 : 0;
	snprintf(path, sizeof(path), "%s/sched.txt", dir);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		struct swrow r = { 0 };
		long long ts;

		if (sscanf(line, "%lld %d %d %d", &ts, &r.cpu, &r.prev, &r.next) != 4)
			continue;
		r.ts = ts;
		swrow_push(&want, &nwant, &capwant, r);
	}
	if (f)
		fclose(f);
	ret = sptd_store_prepare(st, "SELECT ts, cpu, prev_tid, next_tid FROM raw_switch "
	                             "ORDER BY cpu, ts, rowid", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		struct swrow r = { 0 };

		r.ts = sptd_store_column_int(stmt, 0);
		r.cpu = (int)sptd_store_column_int(stmt, 1);
		r.prev = (int)sptd_store_column_int(stmt, 2);
		r.next = (int)sptd_store_column_int(stmt, 3);
		swrow_push(&got, &ngot, &capgot, r);
	}
	sptd_store_finalize(stmt);
	CHECK_INT(ret, 0);
	if (nwant)
		qsort(want, nwant, sizeof(*want), swrow_cmp);
	if (ngot != nwant)
		fprintf(stderr, "  %s: raw_switch has %zu rows, sched.txt %zu switches\n", name, ngot,
		        nwant);
	CHECK(nwant > 0);
	CHECK_INT(ngot, nwant);
	n = ngot < nwant ? ngot : nwant;
	for (i = 0; i < n; i++) {
		const struct swrow *w = &want[i], *g = &got[i];

		if (w->cpu == g->cpu && w->prev == g->prev && w->next == g->next &&
		    llabs(w->ts - g->ts) <= slack)
			continue;
		if (bad++ < 5)
			fprintf(stderr, "  %s: switch %zu: sched.txt cpu %d %d->%d at %" PRId64
			        "; raw_switch cpu %d %d->%d at %" PRId64 "\n", name, i, w->cpu, w->prev,
			        w->next, w->ts, g->cpu, g->prev, g->next, g->ts);
	}
	CHECK_INT(bad, 0);
	printf("  %s: raw_switch: %zu rows for %zu switches, equal to sched.txt: %s\n", name, ngot,
	       nwant, bad || ngot != nwant ? "NO" : "yes");
	free(want);
	free(got);
}

/* One call or return line of perf script. */
struct pline {
	int tid, cpu, is_call;
	uint64_t to;
};

/* perf script --itrace=cr -F +flags: call and return lines (by the words
 * "call" / "return" among the flags, so "syscall" is neither). */
static size_t parse_perf(FILE *f, struct pline **out)
{
	char line[4096];
	size_t n = 0, cap = 0;

	*out = NULL;
	while (fgets(line, sizeof(line), f)) {
		char *br = strstr(line, "branches"), *arrow = strstr(line, "=>"), *p, word[64];
		struct pline pl = { 0 };
		int is_call = 0, is_ret = 0, k;

		if (!br || !arrow || sscanf(line, "%*s %d [%d]", &pl.tid, &pl.cpu) != 2)
			continue;
		p = strchr(br, ' ');
		while (p && p < arrow && sscanf(p, "%63s%n", word, &k) == 1) {
			if (strspn(word, "0123456789abcdef") == strlen(word))
				break;
			is_call |= strcmp(word, "call") == 0;
			is_ret |= strcmp(word, "return") == 0;
			p += k;
		}
		if (!is_call && !is_ret)
			continue;
		pl.is_call = is_call;
		pl.to = strtoull(arrow + 2, NULL, 16);
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			*out = realloc(*out, cap * sizeof(**out));
			if (!*out)
				abort();
		}
		(*out)[n++] = pl;
	}
	return n;
}

static int64_t stat_of(struct sptd_store *st, const char *name, int cpu)
{
	char sql[160];
	int64_t v = -1;

	snprintf(sql, sizeof(sql), "SELECT coalesce(sum(value), 0) FROM stats WHERE name = '%s'%s",
	         name, cpu >= 0 ? " AND cpu = " : "");
	if (cpu >= 0)
		snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), "%d", cpu);
	sptd_store_query_int(st, sql, &v);
	return v;
}

static int id_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Part 2: perf's decode of the same file against the incident and truth. */
static void compare_perf(const char *name, const char *dir, const char *data,
                         struct sptd_store *st)
{
	char cmd[1400];
	struct pline *pl = NULL;
	struct frames calls = { 0 };
	size_t n, i, j, calls_n = 0, rets_n = 0, bad = 0;
	int cpu, cpus = (int)truth_config_get(dir, "cpus");
	FILE *f;

	if (system("perf --version >/dev/null 2>&1") != 0) {
		if (!perf_missing_said++)
			SPTD_SKIP_PART("perf is not installed: perf's decode not compared");
		return;
	}
	snprintf(cmd, sizeof(cmd), "perf script -i '%s' --itrace=cr -F +flags 2>/dev/null", data);
	f = popen(cmd, "r");
	if (!f)
		return;
	n = parse_perf(f, &pl);
	pclose(f);
	if (!n) {
		/* perf is there and the file is ours: perf refusing it is a bug */
		printf("  %s: perf script decoded no calls or returns from our perf.data\n", name);
		CHECK(n > 0);
		free(pl);
		return;
	}
	for (i = 0; i < n; i++)
		pl[i].is_call ? calls_n++ : rets_n++;
	/* all calls and returns that ran, none more */
	CHECK_INT(calls_n, truth_config_get(dir, "calls"));
	CHECK_INT(rets_n, truth_config_get(dir, "returns"));
	/* per CPU: the same counts as sysptd's decode */
	for (cpu = 0; cpu < cpus; cpu++) {
		int64_t pc = 0, pr = 0;

		for (i = 0; i < n; i++)
			if (pl[i].cpu == cpu)
				pl[i].is_call ? pc++ : pr++;
		CHECK_INT(stat_of(st, "calls", cpu), pc);
		CHECK_INT(stat_of(st, "returns", cpu), pr);
	}
	/* per thread, in order: perf's call targets = the incident's called functions */
	CHECK_INT(truth_read_slices(st, "s.kind = 'user' AND (s.flags & 12) = 0", 0, &calls), 0);
	if (calls.n)
		qsort(calls.v, calls.n, sizeof(*calls.v), id_cmp);
	CHECK_INT(calls.n, calls_n);
	for (j = 0; j < calls.n; j++) {
		const struct frame *c = &calls.v[j];
		size_t k;

		/* the k-th perf call of this thread for the k-th slice */
		k = 0;
		for (size_t m = 0; m < j; m++)
			k += calls.v[m].tid == c->tid;
		for (i = 0; i < n; i++)
			if (pl[i].is_call && pl[i].tid == c->tid && k-- == 0)
				break;
		/* the target is the function's entry, or (a PLT stub, which the
		 * symbol before it covers) inside the symbol */
		if (i < n && (pl[i].to == c->addr || (c->addr && pl[i].to > c->addr &&
		                                      (!c->size || pl[i].to < c->addr + c->size))))
			continue;
		if (bad++ < 5)
			fprintf(stderr, "  %s: tid %d call #%zu: perf => %#" PRIx64 ", sysptd %s at %#"
			        PRIx64 "\n", name, c->tid, j, i < n ? pl[i].to : 0, c->name, c->addr);
	}
	CHECK_INT(bad, 0);
	printf("  %s: perf script: %zu calls, %zu returns; equal to the truth's counts, "
	       "sysptd's per CPU and sysptd's call targets per thread: %s\n", name, calls_n,
	       rets_n, bad || calls.n != calls_n ||
	       calls_n != (size_t)truth_config_get(dir, "calls") ? "NO" : "yes");
	truth_frames_free(&calls);
	free(pl);
}

/* Run one step of a case, which must succeed: its exit status (its log
 * shown when not 0). */
static int run_step(char *const argv[], const char *log)
{
	int rc = truth_run(argv, log, 0);

	CHECK_INT(rc, 0);
	if (rc != 0)
		truth_show_log(log, 20);
	return rc;
}

static int clip_checked;   /* check_window_clip ran (on the first case) */

static void check_window_clip(const char *name, const char *db, const char *log);

static void run_case(const struct p2p_case *c)
{
	char dir[400], data[420], db[420], log[420], progpath[16][400];
	char *argv[40];
	struct sptd_store *st = NULL;
	int n = 0, i, rc;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, c->name);
	snprintf(data, sizeof(data), "%s.perf.data", dir);
	snprintf(db, sizeof(db), "%s.incident", dir);
	snprintf(log, sizeof(log), "%s.log", dir);
	argv[n++] = (char *)ptgen;
	argv[n++] = (char *)"-o";
	argv[n++] = dir;
	for (i = 0; c->args[i]; i++) {
		if (c->args[i][0] == '@') {
			snprintf(progpath[i], sizeof(progpath[i]), "%s/%s", progs, c->args[i] + 1);
			argv[n++] = progpath[i];
		} else {
			argv[n++] = (char *)c->args[i];
		}
	}
	argv[n] = NULL;
	rc = truth_run(argv, log, 0);
	if (rc == 77)
		SPTD_SKIP("sptd-ptgen: ptrace not permitted here");
	if (rc != 0) {
		fprintf(stderr, "  %s: sptd-ptgen failed (%d)\n", c->name, rc);
		truth_show_log(log, 20);
		CHECK(0);
		return;
	}
	n = 0;
	argv[n++] = (char *)p2p;
	if (c->wrap_all)
		argv[n++] = (char *)"--wrap-all";
	argv[n++] = dir;
	argv[n++] = data;
	argv[n] = NULL;
	if (run_step(argv, log) != 0)
		return;
	n = 0;
	argv[n++] = (char *)sysptd;
	argv[n++] = (char *)"import";
	argv[n++] = data;
	argv[n++] = (char *)"-o";
	argv[n++] = db;
	argv[n] = NULL;
	if (run_step(argv, log) != 0)
		return;
	CHECK_INT(sptd_store_open(db, 0, &st), 0);
	if (!st)
		return;
	if (c->wrap_all)   /* every image came from a wrapper ELF */
		CHECK_INT(stat_of(st, "perf_images_missing", -1), 0);
	compare_truth(c->name, dir, db);
	compare_switches(c->name, dir, st);
	compare_perf(c->name, dir, data, st);
	sptd_store_destroy(st);
	if (!clip_checked) {
		clip_checked = 1;
		check_window_clip(c->name, db, log);
	}
}

/* PT from before an incident's window is not the incident's (an AUX ring
 * resumes over the previous incident's trace): with window_start moved to
 * mid-trace, `sysptd decode` drops the slices that ended before it and
 * starts those that cross it there, marked start-truncated. */
static void check_window_clip(const char *name, const char *db, const char *log)
{
	struct sptd_store *st = NULL;
	int64_t total = -1, mid = -1, untimed = -1;
	char sql[256], clipped[440];

	CHECK_INT(sptd_store_open(db, 0, &st), 0);
	if (!st)
		return;
	sptd_store_query_int(st, "SELECT count(*) FROM slice", &total);
	snprintf(sql, sizeof(sql), "SELECT ts FROM slice ORDER BY ts LIMIT 1 OFFSET %lld",
	         (long long)(total / 2));
	sptd_store_query_int(st, sql, &mid);
	sptd_store_query_int(st, "SELECT count(*) FROM slice WHERE flags & 16", &untimed);
	sptd_store_destroy(st);
	CHECK(total > 0 && mid > 0);
	CHECK_INT(untimed, 0);   /* timed: the clip applies */
	snprintf(clipped, sizeof(clipped), "%s.clipped", db);
	if (truth_decode_window(sysptd, db, clipped, mid, log) < 0) {
		CHECK(!"sysptd decode with window_start moved");
		return;
	}
	/* some slices ended before, the rest kept or cut at it */
	CHECK(truth_check_clip(name, db, clipped, mid) > 0);
}

/* Bad input: the converter says why and exits 1 or 2. */
static void test_bad_input(void)
{
	char log[400], missing[400];
	char *argv[6];

	snprintf(log, sizeof(log), "%s/bad.log", tmpdir);
	snprintf(missing, sizeof(missing), "%s/no-such-dir", tmpdir);
	argv[0] = (char *)p2p;
	argv[1] = missing;
	argv[2] = (char *)"/dev/null/x";
	argv[3] = NULL;
	CHECK_INT(truth_run(argv, log, 0), 1);
	argv[1] = (char *)"--bogus";
	CHECK_INT(truth_run(argv, log, 0), 2);
	argv[1] = tmpdir;  /* a directory without config.txt */
	CHECK_INT(truth_run(argv, log, 0), 1);
	{
		char line[512] = "";
		FILE *f = fopen(log, "r");

		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			fclose(f);
		}
		CHECK(strstr(line, "config.txt") != NULL);
	}
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 4) {
		fprintf(stderr, "usage: test_ptgen2perf PTGEN PTGEN2PERF PROGS_DIR\n");
		return 2;
	}
	ptgen = argv[1];
	p2p = argv[2];
	progs = argv[3];
	sysptd = getenv("SPTD_BIN");
	SPTD_REQUIRE_ROOT();
	if (!sysptd || access(sysptd, X_OK) != 0)
		SPTD_SKIP("SPTD_BIN (the sysptd binary) not set or not built");
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sptd-p2p-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* run as root, `sysptd import` parses as nobody (docs/SECURITY.md):
	 * the images it reads must be readable by that user, as they would
	 * be for a user importing their own recording */
	chmod(tmpdir, 0755);
	test_bad_input();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	truth_tmp_done(tmpdir, sptd_test_failed);
	return SPTD_TEST_END();
}
