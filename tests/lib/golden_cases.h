/* golden_cases.h — the generated cases of the golden decode test: what
 * sptd-ptgen runs for each (docs/PTGEN.md).  test_golden compares their
 * decode with the generator's truth; test_dec_identical compares their
 * serial and parallel decode.  Included by one test file each (static). */
#ifndef SPTD_GOLDEN_CASES_H
#define SPTD_GOLDEN_CASES_H

/* A generated case: what sptd-ptgen runs. */
struct golden_case {
	const char *name;          /* case name (selects it on the command line) */
	const char *args[24];      /* ptgen options and programs, NULL-ended;
	                            * "@prog" is a program in PROGS_DIR */
};

/* Every timing mode, return compression, PIE, C++ exceptions, threads,
 * syscalls and 1 to 3 CPUs. */
static const struct golden_case golden_cases[] = {
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

#define GOLDEN_NCASES (sizeof(golden_cases) / sizeof(golden_cases[0]))

#endif
