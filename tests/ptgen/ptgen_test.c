/* ptgen_test.c — runs sptd-ptgen --verify on the test programs (1 and
 * several virtual CPUs) and checks what truth.txt, sched.txt and config.txt
 * say about the executions.
 *
 * usage: test_ptgen PATH/sptd-ptgen PROGS_DIR */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sptd_test.h"

static const char *gen, *progs;

struct iv {
	long tid;
	int depth;
	uint64_t start, end;
	int flags;
	char name[256];
};

struct truth {
	struct iv *iv;
	size_t n;
};

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* Run the generator with @args (NULL-terminated, after the options) into
 * @dir; returns its exit status. */
static int run_gen(const char *dir, const char *const *args)
{
	char *argv[64];
	int n = 0, status;
	pid_t pid;

	argv[n++] = (char *)gen;
	argv[n++] = (char *)"-o";
	argv[n++] = (char *)dir;
	while (*args && n < 62)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(gen, argv);
		_exit(126);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static char *prog(const char *name)
{
	static char buf[16][1024];
	static int next;
	char *b = buf[next++ % 16];

	snprintf(b, sizeof(buf[0]), "%s/%s", progs, name);
	return b;
}

static int load_truth(const char *dir, struct truth *t)
{
	char path[1100], line[512];
	size_t cap = 0;
	FILE *f;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/truth.txt", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct iv v;

		if (sscanf(line, "%ld %d %" SCNu64 " %" SCNu64 " %d %255s", &v.tid, &v.depth, &v.start,
		           &v.end, &v.flags, v.name) != 6) {
			fclose(f);
			return -1;
		}
		if (t->n == cap) {
			cap = cap ? cap * 2 : 1024;
			t->iv = realloc(t->iv, cap * sizeof(*t->iv));
			if (!t->iv) {
				fclose(f);
				return -1;
			}
		}
		t->iv[t->n++] = v;
	}
	fclose(f);
	return 0;
}

static long config_value(const char *dir, const char *key)
{
	char path[1100], line[512];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.txt", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == '=')
			v = strtol(line + kl + 1, NULL, 0);
	fclose(f);
	return v;
}

/* Intervals are well formed: inside the data, sorted, and every frame
 * below depth 0 nested in an enclosing frame one level up of its task. */
static void check_structure(const char *dir, const struct truth *t)
{
	long start = config_value(dir, "start_ns"), end = config_value(dir, "end_ns");
	size_t i, bad_range = 0, bad_nest = 0, bad_order = 0;

	CHECK(t->n > 0);
	for (i = 0; i < t->n; i++) {
		const struct iv *v = &t->iv[i];
		size_t j;
		int found = v->depth == 0;

		if (v->start > v->end || v->start < (uint64_t)start || v->end > (uint64_t)end)
			bad_range++;
		if (i && t->iv[i - 1].tid == v->tid &&
		    (t->iv[i - 1].start > v->start ||
		     (t->iv[i - 1].start == v->start && t->iv[i - 1].depth > v->depth)))
			bad_order++;
		for (j = i; !found && j-- > 0 && t->iv[j].tid == v->tid;)
			if (t->iv[j].depth == v->depth - 1 && t->iv[j].start <= v->start &&
			    t->iv[j].end >= v->end)
				found = 1;
		if (!found)
			bad_nest++;
	}
	CHECK_INT(bad_range, 0);
	CHECK_INT(bad_order, 0);
	CHECK_INT(bad_nest, 0);
}

static const struct iv *find(const struct truth *t, const char *name, int min_depth, int flags)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->iv[i].name, name) == 0 && t->iv[i].depth >= min_depth &&
		    (t->iv[i].flags & flags) == flags)
			return &t->iv[i];
	return NULL;
}

static size_t count(const struct truth *t, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < t->n; i++)
		n += strcmp(t->iv[i].name, name) == 0;
	return n;
}

/* Instructions per CPU add up, and every CPU saw some when asked for. */
static void check_config(const char *dir, int cpus)
{
	long sum = 0;
	int c;

	CHECK_INT(config_value(dir, "cpus"), cpus);
	CHECK_INT(config_value(dir, "truncated"), 0);
	for (c = 0; c < cpus; c++) {
		char key[32];
		long v;

		snprintf(key, sizeof(key), "insns_cpu%d", c);
		v = config_value(dir, key);
		CHECK(v > 0);
		sum += v;
	}
	CHECK_INT(sum, config_value(dir, "instructions"));
	CHECK(config_value(dir, "calls") > 0);
}

static void test_fib(const char *dir)
{
	const char *args[] = { "--verify", "--", prog("ptprog-fib"), NULL };
	struct truth t;

	CHECK_INT(run_gen(dir, args), 0);
	CHECK_INT(load_truth(dir, &t), 0);
	check_structure(dir, &t);
	check_config(dir, 1);
	CHECK(find(&t, "fib", 10, 0) != NULL);
	CHECK(find(&t, "main", 0, 4 | 1) != NULL); /* returned from: inferred */
	CHECK(count(&t, "fib") == 1219);           /* calls of fib(14) */
	free(t.iv);
}

static void test_small(const char *dir)
{
	const char *tail[] = { "--verify", "--timing", "tsc", "--", prog("ptprog-tailcall"), NULL };
	const char *sys[] = { "--verify", "--", prog("ptprog-syscalls"), NULL };
	const char *fptr[] = { "--verify", "--timing", "none", "--", prog("ptprog-fptr"), NULL };
	const struct iv *w;
	struct truth t;

	CHECK_INT(run_gen(dir, tail), 0);
	CHECK_INT(load_truth(dir, &t), 0);
	check_structure(dir, &t);
	CHECK(find(&t, "leaf", 1, 8) != NULL);     /* middle -> leaf tail call */
	CHECK(count(&t, "asm_tail") == 50);
	free(t.iv);

	CHECK_INT(run_gen(dir, sys), 0);
	CHECK_INT(load_truth(dir, &t), 0);
	check_structure(dir, &t);
	CHECK(count(&t, "[syscall]") >= 40);       /* 20 writes, 20 getpids */
	w = find(&t, "work", 1, 0);
	CHECK(w != NULL);
	/* A syscall costs its extra cycles (200 ns at 1 GHz). */
	CHECK(find(&t, "[syscall]", 1, 0) && find(&t, "[syscall]", 1, 0)->end -
	                                         find(&t, "[syscall]", 1, 0)->start >= 200);
	free(t.iv);

	CHECK_INT(run_gen(dir, fptr), 0);
	CHECK_INT(load_truth(dir, &t), 0);
	check_structure(dir, &t);
	CHECK(count(&t, "op_add") == 50 && count(&t, "op_sub") == 50);
	CHECK(count(&t, "op_mul") == 50 && count(&t, "op_xor") == 50);
	CHECK(count(&t, "classify") == 200);
	free(t.iv);
}

/* Threads, a C++ exception and a PIE on 2 CPUs: tasks migrate. */
static void test_multi(const char *dir)
{
	const char *args[] = { "--verify", "--cpus", "2", "--slice-insns", "500", "--",
		               prog("ptprog-threads"), "--", prog("ptprog-exc"), "--",
		               prog("ptprog-fib-pie"), NULL };
	const struct iv *thr, *l1, *l2, *cat;
	char path[1100], line[256];
	long tids[16], cpu_mask[16];
	size_t i, ntids = 0, workers = 0;
	struct truth t;
	FILE *f;

	CHECK_INT(run_gen(dir, args), 0);
	CHECK_INT(load_truth(dir, &t), 0);
	check_structure(dir, &t);
	check_config(dir, 2);
	CHECK_INT(config_value(dir, "tasks"), 5); /* 3 threads + 2 processes */

	/* Both workers ran their calls. */
	for (i = 0; i < t.n; i++)
		if (strcmp(t.iv[i].name, "worker") == 0)
			workers++;
	CHECK_INT(workers, 2);
	CHECK(count(&t, "square") == 600);

	/* The exception unwound thrower, level2 and level1 at once; catcher
	 * went on after that and returned normally. */
	thr = find(&t, "_Z7throweri", 0, 0);
	l2 = find(&t, "_Z6level2i", 0, 0);
	l1 = find(&t, "_Z6level1i", 0, 0);
	cat = find(&t, "_Z7catcheri", 0, 0);
	CHECK(thr && l2 && l1 && cat);
	if (thr && l2 && l1 && cat) {
		CHECK(thr->end == l2->end && l2->end == l1->end);
		CHECK(cat->end > l1->end);
		CHECK(!(thr->flags & 2) && !(cat->flags & 2));
		CHECK(l2->depth == l1->depth + 1 && thr->depth == l2->depth + 1);
	}
	CHECK(find(&t, "fib", 10, 0) != NULL);

	/* Every task that ran more than one slice ran on both CPUs. */
	snprintf(path, sizeof(path), "%s/sched.txt", dir);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		long ts, cpu, prev, next;
		size_t k;

		if (sscanf(line, "%ld %ld %ld %ld", &ts, &cpu, &prev, &next) != 4 || !next)
			continue;
		for (k = 0; k < ntids && tids[k] != next; k++)
			;
		if (k == ntids && ntids < 16) {
			tids[ntids] = next;
			cpu_mask[ntids++] = 0;
		}
		if (k < 16)
			cpu_mask[k] |= 1l << cpu;
	}
	if (f)
		fclose(f);
	CHECK_INT(ntids, 5);
	for (i = 0; i < ntids; i++)
		CHECK_INT(cpu_mask[i], 3);
	free(t.iv);
}

/* Return compression and MTC timing on 3 CPUs. */
static void test_retcomp(const char *dir)
{
	const char *args[] = { "--verify", "--retcomp", "--timing", "mtc", "--cpus", "3",
		               "--slice-insns", "300", "--", prog("ptprog-fptr"), "--",
		               prog("ptprog-syscalls"), NULL };
	char path[1100], line[512];
	long comp = 0;
	struct truth t;
	FILE *f;

	CHECK_INT(run_gen(dir, args), 0);
	CHECK_INT(load_truth(dir, &t), 0);
	check_structure(dir, &t);
	check_config(dir, 3);
	snprintf(path, sizeof(path), "%s/config.txt", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "retcomp:");

		if (p)
			comp += strtol(p + 8, NULL, 10);
	}
	if (f)
		fclose(f);
	CHECK(comp > 100);
	free(t.iv);
}

/* --kernel (docs/PTGEN.md): every getpid enters the synthetic kernel,
 * nested under [syscall]; --kpoke switches the module from its slow path
 * to its fast one after the third return; --verify reads the rewritten
 * bytes as they were.  On 2 CPUs beside fib, with return compression. */
static void test_kernel(const char *dir)
{
	const char *args[] = { "--verify", "--kernel", "--kpoke", "ptgen_mod_hook@3", "--",
		               prog("ptprog-kernel"), NULL };
	const char *two[] = { "--verify", "--kernel", "--retcomp", "--cpus", "2", "--slice-insns",
		              "300", "--psb-period", "256", "--", prog("ptprog-kernel"), "--",
		              prog("ptprog-fib"), NULL };
	const char *nokernel[] = { "--kernel", "--", prog("ptprog-fib"), NULL };
	const char *nopoke[] = { "--kpoke", "ptgen_mod_hook@1", "--", prog("ptprog-kernel"), NULL };
	const struct iv *sys, *mod;
	char path[1100];
	struct truth t;

	CHECK_INT(run_gen(dir, args), 0);
	CHECK_INT(load_truth(dir, &t), 0);
	check_structure(dir, &t);
	CHECK_INT(config_value(dir, "kernel"), 1);
	/* 6 getpids, 3 module calls each: 3 slow before the poke, 3 fast after */
	CHECK_INT(count(&t, "do_syscall_64"), 6);
	CHECK_INT(count(&t, "x64_sys_call"), 18);
	CHECK_INT(count(&t, "ptgen_mod_hook"), 18);
	CHECK_INT(count(&t, "ptgen_mod_slow"), 9);
	CHECK_INT(count(&t, "ptgen_mod_fast"), 9);
	CHECK(count(&t, "entry_SYSCALL_64") == 0);   /* entered, not called */
	/* ask -> [syscall] -> do_syscall_64 -> x64_sys_call -> hook -> path */
	sys = find(&t, "[syscall]", 2, 0);
	mod = find(&t, "ptgen_mod_slow", 6, 0);
	CHECK(sys && mod && mod->start > sys->start && mod->end <= sys->end);
	snprintf(path, sizeof(path), "%s/pokes.txt", dir);
	CHECK(access(path, R_OK) == 0);
	free(t.iv);

	CHECK_INT(run_gen(dir, two), 0);
	CHECK_INT(load_truth(dir, &t), 0);
	check_structure(dir, &t);
	CHECK_INT(count(&t, "ptgen_mod_slow"), 18);
	CHECK_INT(count(&t, "fib"), 1219);
	free(t.iv);

	CHECK_INT(run_gen(dir, nokernel), 1);        /* no entry_SYSCALL_64 */
	CHECK_INT(run_gen(dir, nopoke), 2);          /* --kpoke without --kernel */
}

static void test_bad_usage(const char *dir)
{
	const char *noprog[] = { "--verify", NULL };
	const char *badtiming[] = { "--timing", "fast", "--", prog("ptprog-fib"), NULL };
	const char *missing[] = { "--", prog("no-such-program"), NULL };
	const char *badclock[] = { "--core-hz", "123", "--", prog("ptprog-fib"), NULL };

	CHECK_INT(run_gen(dir, noprog), 2);
	CHECK_INT(run_gen(dir, badtiming), 2);
	CHECK_INT(run_gen(dir, missing), 1);
	CHECK_INT(run_gen(dir, badclock), 2);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/sptd-ptgen-test.XXXXXX";
	const char *probe[] = { "--", NULL, NULL };
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SPTD-PTGEN PROGS_DIR\n", argv[0]);
		return 2;
	}
	gen = argv[1];
	progs = argv[2];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	probe[1] = prog("ptprog-tailcall");
	rc = run_gen(dir, probe);
	if (rc == 77) {
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		SPTD_SKIP("ptrace is not permitted here (sptd-ptgen exit 77)");
	}
	CHECK_INT(rc, 0);
	test_fib(dir);
	test_small(dir);
	test_multi(dir);
	test_retcomp(dir);
	test_kernel(dir);
	test_bad_usage(dir);
	if (!sptd_test_failed)
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	else
		fprintf(stderr, "outputs kept in %s\n", dir);
	return SPTD_TEST_END();
}
