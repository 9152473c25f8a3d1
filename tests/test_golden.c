/* test_golden.c — golden end-to-end PT decode: the emulated-PT generator
 * (sptd-ptgen, docs/PTGEN.md) runs a real program, the real `sysptd import
 * --pt` decodes its PT into an incident, and every call interval read back
 * from the incident must equal truth.txt one for one: same thread, depth,
 * flags and function, in the same nesting order, with start and end within
 * the time resolution of the case's timing mode.
 *
 * Usage: test_golden PTGEN PROGS_DIR [CASE...]   (sysptd from $SPTD_BIN)
 *
 * Order: the truth is sorted by (thread, start, depth), its times being
 * exact; the incident is put in preorder through its parent links, since
 * with coarse timing (MTC, TSC) nested intervals may share a timestamp.
 *
 * Names: truth.txt holds mangled names, the incident demangled ones, so the
 * truth is demangled with sptd_dec_demangle before comparing; both sides
 * pick among aliases the same way (GLOBAL, WEAK, LOCAL, shorter, first
 * alphabetically; size-0 symbols end at their section's end), and code
 * without a symbol (PLT stubs: "0xADDR" in the truth, a "dso+0xOFF"
 * placeholder in the incident) is compared by address.
 *
 * "[irq]" slices stay in the decode and are left out here, by decision: a
 * user-only trace shows a preemption in user code (FUP + TIP.PGD, which the
 * generator emits at every end of a slice) as an interrupt frame, and the
 * generator's truth, made from the execution, has no interrupts. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"

#define MAX_ARGS 48

/* One call interval, from truth.txt or from the incident. */
struct frame {
	int tid, depth, flags;
	int64_t start, end;
	int64_t id;                /* incident: slice id; truth: line */
	int64_t parent;            /* incident: parent slice id, -1 none */
	size_t order;              /* incident: position in a preorder walk */
	uint64_t addr;             /* runtime address of the function (0 unknown) */
	char name[520];            /* demangled */
};

struct frames {
	struct frame *v;
	size_t n, cap;
};

/* A generated case: what sptd-ptgen runs. */
struct golden_case {
	const char *name;
	const char *args[24];      /* ptgen options and programs, NULL-ended;
	                            * "@prog" is a program in PROGS_DIR */
};

static const struct golden_case cases[] = {
	{ "fib", { "--timing", "cyc", "--", "@ptprog-fib", NULL } },
	{ "fib-pie", { "--timing", "cyc", "--", "@ptprog-fib-pie", NULL } },
	{ "fptr", { "--timing", "cyc", "--", "@ptprog-fptr", NULL } },
	{ "tailcall", { "--timing", "cyc", "--", "@ptprog-tailcall", NULL } },
	{ "syscalls", { "--timing", "cyc", "--", "@ptprog-syscalls", NULL } },
	{ "threads", { "--timing", "cyc", "--slice-insns", "2000", "--", "@ptprog-threads", NULL } },
	{ "exc", { "--timing", "cyc", "--", "@ptprog-exc", NULL } },
	{ "fib-mtc", { "--timing", "mtc", "--", "@ptprog-fib", NULL } },
	{ "fptr-tsc", { "--timing", "tsc", "--psb-period", "256", "--", "@ptprog-fptr", NULL } },
	{ "tailcall-retcomp", { "--timing", "cyc", "--retcomp", "--", "@ptprog-tailcall", NULL } },
	{ "fib-retcomp-mtc", { "--timing", "mtc", "--retcomp", "--", "@ptprog-fib", NULL } },
	{ "cpus2", { "--cpus", "2", "--slice-insns", "500", "--", "@ptprog-fib", "--",
	             "@ptprog-fptr", NULL } },
	{ "cpus3", { "--cpus", "3", "--slice-insns", "700", "--retcomp", "--",
	             "@ptprog-threads", "--", "@ptprog-tailcall", "--", "@ptprog-syscalls",
	             NULL } },
	{ "cpus2-exc-mtc", { "--cpus", "2", "--slice-insns", "3000", "--timing", "mtc", "--",
	                     "@ptprog-exc", "--", "@ptprog-fib-pie", NULL } },
};

static int frames_push(struct frames *fs, const struct frame *f)
{
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 1024;
		struct frame *n = realloc(fs->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		fs->v = n;
		fs->cap = cap;
	}
	fs->v[fs->n++] = *f;
	return 0;
}

/* Preorder: thread, start, depth, then the order frames were opened in. */
static int frame_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Siblings: thread, parent, start, then slice id (the decoder hands out
 * ids in the order it opens frames). */
static int sibling_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int order_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* First index in @fs (sorted by sibling_cmp) of the children of @parent in
 * thread @tid; fs->n when none. */
static size_t first_child(const struct frames *fs, int tid, int64_t parent)
{
	size_t lo = 0, hi = fs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct frame *m = &fs->v[mid];

		if (m->tid < tid || (m->tid == tid && m->parent < parent))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < fs->n && fs->v[lo].tid == tid && fs->v[lo].parent == parent ? lo : fs->n;
}

/* Put the incident's intervals in preorder by walking the parent links:
 * with coarse timing (MTC, TSC) many intervals share one timestamp, and
 * sorting by (start, depth) would not give the nesting order the truth's
 * exact times give.  A frame whose parent is not in the set (an [irq]
 * slice, left out) counts as a root. */
static int preorder(struct frames *fs)
{
	size_t *stack = NULL, n = 0, i, next = 0;
	int64_t *ids = NULL;
	int err = 0;

	qsort(fs->v, fs->n, sizeof(*fs->v), sibling_cmp);
	stack = malloc((fs->n + 1) * sizeof(*stack));
	ids = malloc((fs->n + 1) * sizeof(*ids));
	if (!stack || !ids) {
		free(stack);
		free(ids);
		return -ENOMEM;
	}
	for (i = 0; i < fs->n; i++) {
		fs->v[i].order = SIZE_MAX;
		ids[i] = fs->v[i].id;
	}
	qsort(ids, fs->n, sizeof(*ids), id_cmp);
	/* roots, in sibling order, pushed in reverse so the first pops first */
	for (i = fs->n; i-- > 0;) {
		const struct frame *f = &fs->v[i];

		if (f->parent < 0 || !bsearch(&f->parent, ids, fs->n, sizeof(*ids), id_cmp))
			stack[n++] = i;
	}
	while (n) {
		size_t k = stack[--n], c, end;

		fs->v[k].order = next++;
		c = first_child(fs, fs->v[k].tid, fs->v[k].id);
		for (end = c; end < fs->n && fs->v[end].tid == fs->v[k].tid &&
		              fs->v[end].parent == fs->v[k].id; end++)
			;
		while (end-- > c)
			stack[n++] = end;
	}
	for (i = 0; i < fs->n && !err; i++)
		if (fs->v[i].order == SIZE_MAX)
			err = -ELOOP;
	free(stack);
	free(ids);
	qsort(fs->v, fs->n, sizeof(*fs->v), order_cmp);
	return err;
}

/* Run @argv with stdout+stderr to @log; the exit status, or -1. */
static int run_cmd(char *const argv[], const char *log)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen(log, "a", stdout) || dup2(fileno(stdout), 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void show_log(const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f) && n++ < 30)
		fprintf(stderr, "    | %s", line);
	if (f)
		fclose(f);
}

/* config.txt value of @key, or -1. */
static int64_t config_get(const char *dir, const char *key)
{
	char path[4200], line[512];
	size_t klen = strlen(key);
	int64_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.txt", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == '=')
			v = strtoll(line + klen + 1, NULL, 0);
	if (f)
		fclose(f);
	return v;
}

static int read_truth(const char *dir, struct frames *out)
{
	char path[4200], line[1024], mangled[512];
	FILE *f;
	int lineno = 0, err = 0;

	snprintf(path, sizeof(path), "%s/truth.txt", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		struct frame fr;
		long long s, e;

		memset(&fr, 0, sizeof(fr));
		if (sscanf(line, "%d %d %lld %lld %d %511s", &fr.tid, &fr.depth, &s, &e, &fr.flags,
		           mangled) != 6) {
			err = -EBADMSG;
			break;
		}
		fr.start = s;
		fr.end = e;
		fr.id = ++lineno;
		if (strncmp(mangled, "0x", 2) == 0)
			fr.addr = strtoull(mangled, NULL, 16);
		if (sptd_dec_demangle(mangled, fr.name, sizeof(fr.name)) < 0)
			snprintf(fr.name, sizeof(fr.name), "%s", mangled);
		err = frames_push(out, &fr);
	}
	fclose(f);
	qsort(out->v, out->n, sizeof(*out->v), frame_cmp);
	return err;
}

/* The PT slices of the incident (all but [irq]), with thread ids, symbol
 * names and runtime addresses (symbol address + the mapping's bias). */
static int read_incident(const char *path, struct frames *out)
{
	static const char sql[] =
		"SELECT t.tid, s.depth, s.ts, s.ts + s.dur, s.flags, s.id, y.name, "
		"  y.addr + coalesce((SELECT m.bias FROM raw_mmap m WHERE m.dso_id = y.dso_id "
		"                     AND m.pid = t.upid_pid), 0), coalesce(s.parent_id, -1) "
		"FROM slice s JOIN (SELECT th.utid, th.tid, p.pid AS upid_pid FROM thread th "
		"                   LEFT JOIN process p ON p.upid = th.upid) t ON t.utid = s.utid "
		"LEFT JOIN symbol y ON y.id = s.symbol_id WHERE s.kind <> 'irq'";
	struct sptd_store *st = NULL;
	struct sptd_store_stmt *stmt = NULL;
	int ret;

	ret = sptd_store_open(path, 0, &st);
	if (ret >= 0)
		ret = sptd_store_prepare(st, sql, &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		struct frame fr;
		const char *name = sptd_store_column_text(stmt, 6);

		memset(&fr, 0, sizeof(fr));
		fr.tid = (int)sptd_store_column_int(stmt, 0);
		fr.depth = (int)sptd_store_column_int(stmt, 1);
		fr.start = sptd_store_column_int(stmt, 2);
		fr.end = sptd_store_column_int(stmt, 3);
		fr.flags = (int)sptd_store_column_int(stmt, 4);
		fr.id = sptd_store_column_int(stmt, 5);
		fr.addr = (uint64_t)sptd_store_column_int(stmt, 7);
		fr.parent = sptd_store_column_int(stmt, 8);
		snprintf(fr.name, sizeof(fr.name), "%s", name ? name : "(none)");
		ret = frames_push(out, &fr);
	}
	if (ret < 0 && st)
		fprintf(stderr, "  %s: %s\n", path, sptd_store_errmsg(st));
	sptd_store_finalize(stmt);
	sptd_store_destroy(st);
	if (ret >= 0)
		ret = preorder(out);
	return ret < 0 ? ret : 0;
}

/* Same function: by name, or by address for code without a symbol. */
static int same_function(const struct frame *truth, const struct frame *dec)
{
	if (truth->addr)
		return dec->addr == truth->addr &&
		       (strncmp(dec->name, "0x", 2) == 0 || strstr(dec->name, "+0x"));
	return strcmp(truth->name, dec->name) == 0;
}

/* How far a decoded time may be from the truth, from config.txt: the
 * decoder knows the time of the timing packets only, and libipt's time is
 * that of the last one read (it reads ahead to the next branch packet). */
static int64_t tolerance_ns(const char *dir)
{
	int64_t core_hz = config_get(dir, "core_hz"), mtc_freq = config_get(dir, "mtc_freq");
	int64_t psb = config_get(dir, "psb_period"), timing_cyc, ns_per_cycle;
	char path[4200], line[128], mode[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.txt", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "timing=%15s", mode) == 1)
			break;
	if (f)
		fclose(f);
	ns_per_cycle = core_hz > 0 ? 1000000000 / core_hz : 1;
	if (ns_per_cycle < 1)
		ns_per_cycle = 1;
	timing_cyc = strcmp(mode, "cyc") == 0;
	if (timing_cyc)
		/* CYC comes with every branch packet; a TNT packet carries up to
		 * 6 branches, so the time of an event without a packet of its
		 * own is known up to the instructions up to the next packet */
		return 128 * ns_per_cycle;
	if (strcmp(mode, "mtc") == 0)
		/* one MTC period: 2^mtc_freq ticks of the 25 MHz crystal */
		return ((int64_t)1 << mtc_freq) * 40 + 64 * ns_per_cycle;
	/* TSC only: time is known at PSB+ (every psb_period bytes) and at
	 * switches; between them the decoder places events by instruction
	 * count (decode/flow.c), so the bound is psb_period cycles (a PSB+
	 * interval holds more instructions than bytes: this bound needs that
	 * placement, libipt's step time alone misses it by about 2x) */
	return psb * ns_per_cycle;
}

static int compare(const char *casename, const struct frames *truth, const struct frames *dec,
                   int64_t tol)
{
	size_t i, n = truth->n < dec->n ? truth->n : dec->n, bad = 0;
	int64_t worst = 0;

	if (truth->n != dec->n)
		fprintf(stderr, "  %s: %zu decoded intervals, truth has %zu\n", casename, dec->n,
		        truth->n);
	for (i = 0; i < n; i++) {
		const struct frame *t = &truth->v[i], *d = &dec->v[i];
		int64_t ds = llabs(t->start - d->start), de = llabs(t->end - d->end);

		if (ds > worst)
			worst = ds;
		if (de > worst)
			worst = de;
		if (t->tid == d->tid && t->depth == d->depth && t->flags == d->flags &&
		    same_function(t, d) && ds <= tol && de <= tol)
			continue;
		if (bad++ < 5)
			fprintf(stderr, "  %s: interval %zu: truth tid %d depth %d [%" PRId64 ", %"
			        PRId64 "] flags %d %s; decoded tid %d depth %d [%" PRId64 ", %" PRId64
			        "] flags %d %s\n", casename, i, t->tid, t->depth, t->start, t->end,
			        t->flags, t->name, d->tid, d->depth, d->start, d->end, d->flags, d->name);
	}
	printf("  %s: %zu intervals, %zu differ, worst time error %" PRId64 " ns (tolerance %"
	       PRId64 ")\n", casename, truth->n, bad, worst, tol);
	return truth->n == dec->n && bad == 0 && truth->n > 0 ? 0 : -1;
}

/* Generate, import, compare one case; 77 when ptrace is not permitted. */
static int run_case(const struct golden_case *c, const char *ptgen, const char *progs,
                    const char *sysptd, const char *tmp)
{
	char dir[4096], log[4200], incident[4200], progpath[MAX_ARGS][4200], buf[MAX_ARGS][8400];
	char *argv[MAX_ARGS + 40];
	struct frames truth = { 0 }, dec = { 0 };
	int argc = 0, np = 0, i, rc, ret = -1;
	int64_t cpus;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%s", tmp, c->name);
	snprintf(log, sizeof(log), "%s.log", dir);
	snprintf(incident, sizeof(incident), "%s.incident", dir);
	argv[argc++] = (char *)ptgen;
	argv[argc++] = "-o";
	argv[argc++] = dir;
	for (i = 0; c->args[i]; i++) {
		if (c->args[i][0] == '@') {
			snprintf(progpath[np], sizeof(progpath[np]), "%s/%s", progs, c->args[i] + 1);
			argv[argc++] = progpath[np++];
		} else {
			argv[argc++] = (char *)c->args[i];
		}
	}
	argv[argc] = NULL;
	for (i = 0; i < np; i++) {
		if (access(progpath[i], X_OK) != 0) {
			printf("  %s: not run: %s not built (no C++ compiler?)\n", c->name,
			       progpath[i]);
			return 78;
		}
	}
	rc = run_cmd(argv, log);
	if (rc == 77)
		return 77;
	if (rc != 0) {
		fprintf(stderr, "  %s: sptd-ptgen exit %d\n", c->name, rc);
		show_log(log);
		return -1;
	}

	/* the import: every file ptgen wrote, the vdso from its memory image */
	cpus = config_get(dir, "cpus");
	argc = 0;
	argv[argc++] = (char *)sysptd;
	argv[argc++] = "import";
	for (i = 0; i < cpus && i < 8; i++) {
		snprintf(buf[i], sizeof(buf[i]), "--pt=%s/cpu%d.pt", dir, i);
		argv[argc++] = buf[i];
	}
	snprintf(buf[10], sizeof(buf[10]), "--maps=%s/maps.txt", dir);
	snprintf(buf[11], sizeof(buf[11]), "--tasks=%s/tasks.txt", dir);
	snprintf(buf[12], sizeof(buf[12]), "--sched=%s/sched.txt", dir);
	snprintf(buf[13], sizeof(buf[13]), "--cpu-id=%" PRId64 "/%" PRId64 "/%" PRId64,
	         config_get(dir, "cpu_family"), config_get(dir, "cpu_model"),
	         config_get(dir, "cpu_stepping"));
	snprintf(buf[14], sizeof(buf[14]), "--mtc-freq=%" PRId64, config_get(dir, "mtc_freq"));
	snprintf(buf[15], sizeof(buf[15]), "--nom-freq=%" PRId64, config_get(dir, "nom_freq"));
	snprintf(buf[16], sizeof(buf[16]), "--cpuid15=%" PRId64 "/%" PRId64,
	         config_get(dir, "cpuid15_eax"), config_get(dir, "cpuid15_ebx"));
	snprintf(buf[17], sizeof(buf[17]), "--tsc-hz=%" PRId64, config_get(dir, "tsc_hz"));
	snprintf(buf[18], sizeof(buf[18]), "-o%s", incident);
	for (i = 10; i <= 18; i++)
		argv[argc++] = buf[i];
	{
		/* [vdso] lines of maps.txt: bytes from images.txt, per process */
		char path[4200], line[4400], img[4096], mpath[4096];
		unsigned long long addr, cr3, start, end, pgoff;
		int pid, mpid, k = 20;

		snprintf(path, sizeof(path), "%s/images.txt", dir);
		f = fopen(path, "r");
		while (f && k < MAX_ARGS && fgets(line, sizeof(line), f)) {
			FILE *m;
			int vdso = 0;

			if (sscanf(line, "%llx %4095s %d %llx", &addr, img, &pid, &cr3) != 4)
				continue;
			snprintf(path, sizeof(path), "%s/maps.txt", dir);
			m = fopen(path, "r");
			while (m && fgets(line, sizeof(line), m))
				if (sscanf(line, "%d %llx %llx %llx %4095s", &mpid, &start, &end, &pgoff,
				           mpath) == 5 && mpid == pid && start == addr &&
				    strcmp(mpath, "[vdso]") == 0)
					vdso = 1;
			if (m)
				fclose(m);
			if (!vdso)
				continue;
			snprintf(buf[k], sizeof(buf[k]), "--image=%s/%s@0x%llx:%d", dir, img, addr, pid);
			argv[argc++] = buf[k++];
		}
		if (f)
			fclose(f);
	}
	argv[argc] = NULL;
	rc = run_cmd(argv, log);
	if (rc != 0) {
		fprintf(stderr, "  %s: sysptd import exit %d\n", c->name, rc);
		show_log(log);
		goto out;
	}
	if (read_truth(dir, &truth) < 0 || read_incident(incident, &dec) < 0) {
		fprintf(stderr, "  %s: cannot read truth.txt or the incident\n", c->name);
		goto out;
	}
	ret = compare(c->name, &truth, &dec, tolerance_ns(dir));
out:
	free(truth.v);
	free(dec.v);
	return ret;
}

int main(int argc, char **argv)
{
	const char *sysptd = getenv("SPTD_BIN");
	char tmp[] = "/tmp/sptd-golden-XXXXXX";
	size_t i;
	int skipped = 0, ran = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: test_golden PTGEN PROGS_DIR [CASE...]\n");
		return 2;
	}
	if (!sysptd || access(sysptd, X_OK) != 0)
		SPTD_SKIP("no sysptd binary (set SPTD_BIN)");
	SPTD_REQUIRE_ROOT();
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int k, want = argc == 3, rc;

		for (k = 3; k < argc && !want; k++)
			want = strcmp(argv[k], cases[i].name) == 0;
		if (!want)
			continue;
		rc = run_case(&cases[i], argv[1], argv[2], sysptd, tmp);
		if (rc == 77) {
			skipped++;
			continue;
		}
		if (rc == 78)
			continue;
		ran++;
		CHECK(rc == 0);
		if (rc != 0)
			fprintf(stderr, "case %s FAILED (files in %s)\n", cases[i].name, tmp);
	}
	if (!ran && skipped)
		SPTD_SKIP("ptrace not permitted (kernel.yama.ptrace_scope)");
	if (!sptd_test_failed && !getenv("SPTD_KEEP")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp);
	}
	return SPTD_TEST_END();
}
