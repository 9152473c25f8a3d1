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
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "golden_cases.h"
#include "truth_compare.h"

#define MAX_ARGS 48

#ifndef SPTD_GOLDEN_CXX
#define SPTD_GOLDEN_CXX 1   /* CMake says whether ptprog-exc is built */
#endif
#ifndef SPTD_STRICT_TESTS
#define SPTD_STRICT_TESTS 0
#endif

static const struct golden_case *const cases = golden_cases;

/* The first program of case @c that is not built in @progs (its name in
 * @name, @len bytes): 1, or 0 when all are there. */
static int missing_program(const struct golden_case *c, const char *progs, char *name,
                           size_t len)
{
	char path[4200];

	for (int i = 0; c->args[i]; i++) {
		if (c->args[i][0] != '@')
			continue;
		snprintf(path, sizeof(path), "%s/%s", progs, c->args[i] + 1);
		if (access(path, X_OK) != 0) {
			snprintf(name, len, "%s", c->args[i] + 1);
			return 1;
		}
	}
	return 0;
}

/* A case whose program is not built.  Only ptprog-exc may be absent, and
 * only where CMake found no C++ compiler (SPTD_GOLDEN_CXX 0): then the case
 * cannot run here, an honest skip of that part (the binary reports 77, not
 * a pass).  In a strict build (CI) nothing may be left out, and any other
 * missing program is a broken build: both fail. */
static void not_built(const struct golden_case *c, const char *prog, const char *progs)
{
	if (!SPTD_STRICT_TESTS && !SPTD_GOLDEN_CXX && strcmp(prog, "ptprog-exc") == 0) {
		SPTD_SKIP_PART("case %s: %s is not built (no C++ compiler)", c->name, prog);
		return;
	}
	fprintf(stderr, "case %s FAILED: %s/%s is not built%s\n", c->name, progs, prog,
	        SPTD_STRICT_TESTS ? " (a strict build leaves no case out)" : "");
	CHECK(0);
}

/* Generate, import, compare one case; 77 when ptrace is not permitted. */
static int run_case(const struct golden_case *c, const char *ptgen, const char *progs,
                    const char *sysptd, const char *tmp)
{
	char dir[4096], log[4200], incident[4200], progpath[MAX_ARGS][4200], vdso[8][4200];
	char *argv[MAX_ARGS + 40], imp[TRUTH_IMPORT_ARGS][4200];
	struct frames truth = { 0 }, dec = { 0 };
	int argc = 0, np = 0, i, rc, ret = -1;

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
	rc = truth_run(argv, log, 1);
	if (rc == 77)
		return 77;
	if (rc != 0) {
		fprintf(stderr, "  %s: sptd-ptgen exit %d\n", c->name, rc);
		truth_show_log(log, 30);
		return -1;
	}

	/* the import: every file ptgen wrote, the vdso from its memory image */
	argc = 0;
	argv[argc++] = (char *)sysptd;
	argv[argc++] = "import";
	truth_import_args(dir, NULL, incident, imp, argv, &argc);
	/* the vdso, from its bytes in images.txt, per process */
	truth_vdso_args(dir, vdso, 8, argv, &argc);
	argv[argc] = NULL;
	rc = truth_run(argv, log, 1);
	if (rc != 0) {
		fprintf(stderr, "  %s: sysptd import exit %d\n", c->name, rc);
		truth_show_log(log, 30);
		goto out;
	}
	if (truth_read(dir, &truth) < 0 || truth_read_incident(incident, 0, &dec) < 0) {
		fprintf(stderr, "  %s: cannot read truth.txt or the incident\n", c->name);
		goto out;
	}
	ret = truth_compare(c->name, &truth, &dec, truth_tolerance_ns(dir));
out:
	free(truth.v);
	free(dec.v);
	return ret;
}

int main(int argc, char **argv)
{
	const char *sysptd = getenv("SPTD_BIN");
	char tmp[] = "/tmp/sptd-golden-XXXXXX", prog[256];
	size_t i;
	int skipped = 0, ran = 0;

	/* the generator's truth names what the binaries' own symbol tables
	 * name; separate debug files (libc6-dbg, where installed) would make
	 * the decoder see more function starts (a jump to one is a tail call),
	 * so the decode here uses the same symbols as the truth */
	setenv("SPTD_DEBUG_DIRS", "", 1);

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
	/* import reads --image, --maps, --tasks and --sched after giving up
	 * root (as nobody from a root login): they must be readable to it */
	chmod(tmp, 0755);
	for (i = 0; i < GOLDEN_NCASES; i++) {
		int k, want = argc == 3, rc;

		for (k = 3; k < argc && !want; k++)
			want = strcmp(argv[k], cases[i].name) == 0;
		if (!want)
			continue;
		if (missing_program(&cases[i], argv[2], prog, sizeof(prog))) {
			not_built(&cases[i], prog, argv[2]);
			continue;
		}
		rc = run_case(&cases[i], argv[1], argv[2], sysptd, tmp);
		if (rc == 77) {
			skipped++;
			continue;
		}
		ran++;
		CHECK(rc == 0);
		if (rc != 0)
			fprintf(stderr, "case %s FAILED (files in %s)\n", cases[i].name, tmp);
	}
	if (!ran && skipped)
		SPTD_SKIP("ptrace not permitted (kernel.yama.ptrace_scope)");
	if (skipped)
		SPTD_SKIP_PART("%d case(s): ptrace not permitted", skipped);
	truth_tmp_done(tmp, sptd_test_failed);
	return SPTD_TEST_END();
}
