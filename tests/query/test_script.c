/* test_script.c — `sysptd script` (query/query_script*.c): every event of
 * an incident in time order, one per line.
 *
 *  - exact lines for the synthetic incidents of query_incident.c, whose
 *    rows are known;
 *  - invariants: times never go back; each table gives as many events as it
 *    has rows (irq/softirq/call slices two each, sched slices one per
 *    switch); call/return pairs nest per thread like a stack;
 *  - the filters (--cpu, --tid, --time, kinds) keep exactly what they say;
 *  - bounded memory: `sysptd script` on an incident of 1,000,000 call
 *    slices and on one of 100,000 has about the same peak RSS (the binary
 *    from $SPTD_BIN, measured with wait4's rusage). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sptd_query.h"
#include "sptd_store.h"
#include "sptd_test.h"

#ifndef SPTD_SANITIZED
#define SPTD_SANITIZED 0   /* CMake says whether this is an ASan build */
#endif
#include "query_incident.c"

/* Run the script on @st with @o; returns the text (free it), *rc the
 * return value. */
static char *script(struct sptd_store *st, const struct sptd_query_script_opts *o, int *rc)
{
	struct tq_mem m;
	FILE *fp = tq_mem_begin(&m);
	char err[256];

	*rc = sptd_query_script(st, o, fp, err, sizeof(err));
	if (*rc < 0)
		fprintf(stderr, "script: %d %s\n", *rc, err);
	return tq_mem_end(&m);
}

static struct sptd_query_script_opts all(void)
{
	struct sptd_query_script_opts o;

	memset(&o, 0, sizeof(o));
	o.start_ns = INT64_MIN;
	o.end_ns = INT64_MAX;
	return o;
}

/* One parsed event line. */
struct ev {
	char comm[64];
	int tid;             /* -1 for "-" */
	int cpu;             /* -1 for "---" */
	int64_t ts;          /* ns */
	char name[64];       /* "sched:sched_switch", "call", ... */
	const char *rest;    /* after "NAME: " (points into the text) */
};

/* Parse the event line at @l (not a stack line); 0 or -1. */
static int parse_line(const char *l, struct ev *e)
{
	char tid[16], cpu[8], when[32];
	const char *p;
	int n = 0;
	unsigned long long sec, ns;

	if (sscanf(l, "%63s %15s [%7[^]]] %31[^:]: %n", e->comm, tid, cpu, when, &n) < 4 || !n)
		return -1;
	e->tid = strcmp(tid, "-") == 0 ? -1 : atoi(tid);
	e->cpu = strcmp(cpu, "---") == 0 ? -1 : atoi(cpu);
	if (sscanf(when, "%llu.%9llu", &sec, &ns) != 2)
		return -1;
	e->ts = (int64_t)(sec * 1000000000ull + ns);
	p = l + n;
	/* the event name ends at ": " or ":\n" ("sched:sched_switch: ...") */
	for (n = 0; p[n] && p[n] != '\n' && !(p[n] == ':' && (p[n + 1] == ' ' || p[n + 1] == '\n'));
	     n++)
		;
	if (p[n] != ':' || n >= (int)sizeof(e->name))
		return -1;
	memcpy(e->name, p, (size_t)n);
	e->name[n] = '\0';
	e->rest = p + n + (p[n + 1] == ' ' ? 2 : 1);
	return 0;
}

/* Walk the event lines of @text (stack lines start with a tab). */
#define FOR_EACH_LINE(text, l) \
	for (const char *l = (text); l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)

/* Times never go back; count events per name into @counts (names[i]). */
static void check_order(const char *text, const char *const *names, int *counts, int nnames)
{
	int64_t last = INT64_MIN;
	int bad = 0;

	for (int i = 0; i < nnames; i++)
		counts[i] = 0;
	FOR_EACH_LINE(text, l) {
		struct ev e;

		if (*l == '\t')
			continue;
		if (parse_line(l, &e) < 0) {
			fprintf(stderr, "unparsable line: %.80s\n", l);
			bad++;
			continue;
		}
		if (e.ts < last)
			bad++;
		last = e.ts;
		for (int i = 0; i < nnames; i++)
			if (strcmp(e.name, names[i]) == 0)
				counts[i]++;
	}
	CHECK_INT(bad, 0);
}

static void test_sample(struct sptd_store *st)
{
	static const char *const names[] = { "sched:sched_switch", "sched:sched_waking",
	                                     "irq:irq_handler_entry", "irq:irq_handler_exit",
	                                     "irq:softirq_entry", "irq:softirq_exit", "cpu-clock",
	                                     "gap", "trigger", "call", "return" };
	int counts[11], rc;
	struct sptd_query_script_opts o = all();
	char *out = script(st, &o, &rc);

	/* 6 sched slices, 2 CPUs: 4 switches; 3 wakeups with a waker (the
	 * fourth runnable row with one, late's, began before the window: cut
	 * at its start, it is no waking then, issue 27.7); 5 irq and 2
	 * softirq slices (entry + exit each); 8 samples; 2 gaps; 1 trigger */
	CHECK_INT(rc, 4 + 3 + 10 + 4 + 8 + 2 + 1);
	check_order(out, names, counts, 11);
	CHECK_INT(counts[0], 4);
	CHECK_INT(counts[1], 3);
	CHECK(strstr(out, "sched:sched_waking: comm=late pid=102") == NULL);
	CHECK_INT(counts[2], 5);
	CHECK_INT(counts[3], 5);
	CHECK_INT(counts[4], 2);
	CHECK_INT(counts[5], 2);
	CHECK_INT(counts[6], 8);
	CHECK_INT(counts[7], 2);
	CHECK_INT(counts[8], 1);
	CHECK_INT(counts[9] + counts[10], 0);
	/* exact lines: a switch (the task switching out is current), a
	 * wakeup (the waker is current; its CPU is the one it runs on), irq
	 * entry/exit with the interrupted task, a sample with its stack
	 * innermost first and perf's [unknown], a gap of all CPUs */
	CHECK(strstr(out, "          server    100 [000]     0.004000000: sched:sched_switch: "
	                  "prev_comm=server prev_pid=100 prev_prio=120 prev_state=S ==> "
	                  "next_comm=swapper next_pid=0 next_prio=120\n") != NULL);
	CHECK(strstr(out, "          client    200 [---]     0.009000000: sched:sched_waking: "
	                  "comm=server pid=100\n") != NULL);
	CHECK(strstr(out, "          worker    101 [000]     0.010000000: sched:sched_waking: "
	                  "comm=client pid=200\n") != NULL);
	CHECK(strstr(out, "         swapper      0 [001]     0.004000000: irq:irq_handler_entry: "
	                  "irq=24 name=eth0\n         swapper      0 [001]     0.004020000: "
	                  "irq:irq_handler_exit: irq=24 ret=handled (20.000 us)\n") != NULL);
	CHECK(strstr(out, "          server    100 [000]     0.002010000: irq:softirq_entry: "
	                  "vec=3 [action=NET_RX]\n") != NULL);
	CHECK(strstr(out, "          worker    101 [000]     0.005700000: cpu-clock:\n"
	                  "\t            dead [unknown] ([unknown])\n"
	                  "\t            1010 main (/usr/bin/server)\n") != NULL);
	CHECK(strstr(out, "          worker    101 [000]     0.005500000: cpu-clock:\n"
	                  "\t            1120 handle (/usr/bin/server)\n"
	                  "\t            1210 parse (/usr/bin/server)\n"
	                  "\t            1110 handle (/usr/bin/server)\n"
	                  "\t            1010 main (/usr/bin/server)\n") != NULL);
	CHECK(strstr(out, "               -      - [---]     0.008000000: gap: 2.000 us: overflow\n")
	      != NULL);
	CHECK(strstr(out, "          server    100 [001]     0.010500000: trigger: irq: "
	                  "irq=24 name=eth0\n") != NULL);
	free(out);

	/* --cpu 1: only [001], plus what belongs to no CPU (gap, trigger of
	 * all CPUs; wakeups of unknown CPU are left out) */
	{
		int cpus[] = { 1 };

		o.cpus = cpus;
		o.ncpus = 1;
		out = script(st, &o, &rc);
		FOR_EACH_LINE(out, l) {
			struct ev e;

			if (*l != '\t' && parse_line(l, &e) == 0)
				CHECK(e.cpu == 1 || (e.cpu == -1 && strcmp(e.name, "gap") == 0));
		}
		CHECK_INT(rc, 2 + 6 + 2 + 1 + 1);   /* switches, irq, softirq, gap, trigger */
		free(out);
		o = all();
	}
	/* --tid 101: its samples, the switch to it, the wakeup of it and by it */
	{
		int tids[] = { 101 };

		o.tids = tids;
		o.ntids = 1;
		o.no_stack = 1;
		out = script(st, &o, &rc);
		CHECK_INT(rc, 5 + 1 + 2 + 2);   /* samples, switch, 2 wakeups, irq in/out */
		CHECK(strstr(out, "\t") == NULL);    /* -G: no stacks */
		CHECK(strstr(out, "sched:sched_waking: comm=worker pid=101\n") != NULL);
		CHECK(strstr(out, "worker    101 [000]     0.010000000: sched:sched_waking: ") != NULL);
		free(out);
		o = all();
	}
	/* --time and kinds: [4 ms, 5 ms] on the incident's clock, sched only */
	o.start_ns = 4000000;
	o.end_ns = 5000000;
	o.kinds = SPTD_QUERY_EV_SCHED | SPTD_QUERY_EV_WAKEUP;
	out = script(st, &o, &rc);
	CHECK_INT(rc, 3);
	FOR_EACH_LINE(out, l) {
		struct ev e;

		CHECK(parse_line(l, &e) == 0 && e.ts >= 4000000 && e.ts <= 5000000 &&
		      strncmp(e.name, "sched:", 6) == 0);
	}
	free(out);
	/* reltime: the window starts at 1 ms */
	o = all();
	o.reltime = 1;
	o.kinds = SPTD_QUERY_EV_TRIGGER;
	out = script(st, &o, &rc);
	CHECK(out && strstr(out, "     0.009500000: trigger: ") != NULL);
	free(out);

	o = all();
	CHECK_INT(sptd_query_script(NULL, &o, stdout, NULL, 0), -EINVAL);
	CHECK_INT(sptd_query_script(st, NULL, stdout, NULL, 0), -EINVAL);
	CHECK_INT(sptd_query_script(st, &o, NULL, NULL, 0), -EINVAL);
	o.start_ns = 10;
	o.end_ns = 9;
	CHECK_INT(sptd_query_script(st, &o, stdout, NULL, 0), -EINVAL);
}

/* call/return of the PT incident: exact, and nested like a stack. */
static void test_pt(struct sptd_store *st)
{
	struct sptd_query_script_opts o = all();
	char *out, stack[64][64];
	int rc, depth = 0, bad = 0;

	o.kinds = SPTD_QUERY_EV_CALL;
	out = script(st, &o, &rc);
	CHECK_INT(rc, 10);
	CHECK_STR(out,
	          "          server    100 [000]     0.001000000: call: main (/usr/bin/server)\n"
	          "          server    100 [000]     0.001100000: call:   handle (/usr/bin/server)\n"
	          "          server    100 [000]     0.001200000: call:     parse (/usr/bin/server)\n"
	          "          server    100 [000]     0.001250000: call:       handle (/usr/bin/server)\n"
	          "          server    100 [000]     0.001350000: return:       handle (/usr/bin/server) (100.000 us)\n"
	          "          server    100 [000]     0.001500000: return:     parse (/usr/bin/server) (300.000 us)\n"
	          "          server    100 [000]     0.001700000: return:   handle (/usr/bin/server) (600.000 us)\n"
	          "          server    100 [000]     0.001800000: call:   parse (/usr/bin/server)\n"
	          "          server    100 [000]     0.001900000: return:   parse (/usr/bin/server) (100.000 us)\n"
	          "          server    100 [000]     0.002000000: return: main (/usr/bin/server) (1.000 ms)\n");
	FOR_EACH_LINE(out, l) {
		struct ev e;
		char fn[64];

		if (parse_line(l, &e) < 0 || sscanf(e.rest, "%63s", fn) != 1) {
			bad++;
			continue;
		}
		if (strcmp(e.name, "call") == 0 && depth < 64)
			snprintf(stack[depth++], sizeof(stack[0]), "%s", fn);
		else if (strcmp(e.name, "return") == 0 && (!depth || strcmp(stack[--depth], fn) != 0))
			bad++;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(depth, 0);
	free(out);
}

/* Calls and returns of one instant in the order they ran (the audit of
 * 2026-11-27 against perf script): a call of no length prints its return
 * right after it (before, every return of an instant came first, its own
 * too), and calls of an instant go in call order (ids), not by depth. */
static void test_ties(void)
{
	const char *path = tq_path("ties.db");
	struct sptd_query_script_opts o = all();
	struct sptd_store *st = NULL;
	char *out;
	int rc, ok = 1;

	unlink(path);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		return;
	ok &= SPTD_STORE_ADD(st, dso, 1, "/usr/bin/t", NULL) >= 0;
	ok &= SPTD_STORE_ADD(st, symbol, 1, "main", 1, 0x1000, 16) >= 0;
	ok &= SPTD_STORE_ADD(st, symbol, 2, "a", 1, 0x1010, 16) >= 0;
	ok &= SPTD_STORE_ADD(st, symbol, 3, "b", 1, 0x1020, 16) >= 0;
	ok &= SPTD_STORE_ADD(st, symbol, 4, "c", 1, 0x1030, 16) >= 0;
	ok &= SPTD_STORE_ADD(st, symbol, 5, "d", 1, 0x1040, 16) >= 0;
	ok &= SPTD_STORE_ADD(st, symbol, 6, "e", 1, 0x1050, 16) >= 0;
	ok &= SPTD_STORE_ADD(st, symbol, 7, "f", 1, 0x1060, 16) >= 0;
	ok &= SPTD_STORE_ADD(st, symbol, 8, "g", 1, 0x1070, 16) >= 0;
	ok &= SPTD_STORE_ADD(st, thread, 1, 100, -1, "t") >= 0;
	ok &= SPTD_STORE_ADD(st, thread, 2, 200, -1, "u") >= 0;
	/* main [1000, 2000): a (no length) then b at 1500; a (depth 2, in b)
	 * at 1500 too, after b's call; at b's end, 1600: d (no length,
	 * depth 2) still in b, then c (no length) after b, holding e (no
	 * length) holding f (no length).  Ids are call order, as a decode
	 * gives them.  Thread u on CPU 1: g (no length) at 1600, holding
	 * nothing of t's. */
	ok &= SPTD_STORE_ADD(st, slice, 1, 1000, 1000, 0, 1, 0, -1, 1, "user", 0) >= 0;
	ok &= SPTD_STORE_ADD(st, slice, 2, 1500, 0, 0, 1, 1, 1, 2, "user", 0) >= 0;
	ok &= SPTD_STORE_ADD(st, slice, 3, 1500, 100, 0, 1, 1, 1, 3, "user", 0) >= 0;
	ok &= SPTD_STORE_ADD(st, slice, 4, 1500, 50, 0, 1, 2, 3, 2, "user", 0) >= 0;
	ok &= SPTD_STORE_ADD(st, slice, 5, 1600, 0, 0, 1, 2, 3, 5, "user", 0) >= 0;
	ok &= SPTD_STORE_ADD(st, slice, 6, 1600, 0, 0, 1, 1, 1, 4, "user", 0) >= 0;
	ok &= SPTD_STORE_ADD(st, slice, 7, 1600, 0, 0, 1, 2, 6, 6, "user", 0) >= 0;
	ok &= SPTD_STORE_ADD(st, slice, 8, 1600, 0, 0, 1, 3, 7, 7, "user", 0) >= 0;
	ok &= SPTD_STORE_ADD(st, slice, 9, 1600, 0, 1, 2, 0, -1, 8, "user", 0) >= 0;
	CHECK(ok);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	st = tq_open(path);
	o.kinds = SPTD_QUERY_EV_CALL;
	out = script(st, &o, &rc);
	CHECK_INT(rc, 18);
	CHECK_STR(out,
	          "               t    100 [000]     0.000001000: call: main (/usr/bin/t)\n"
	          "               t    100 [000]     0.000001500: call:   a (/usr/bin/t)\n"
	          "               t    100 [000]     0.000001500: return:   a (/usr/bin/t) (0 ns)\n"
	          "               t    100 [000]     0.000001500: call:   b (/usr/bin/t)\n"
	          "               t    100 [000]     0.000001500: call:     a (/usr/bin/t)\n"
	          "               t    100 [000]     0.000001550: return:     a (/usr/bin/t) (50 ns)\n"
	          "               t    100 [000]     0.000001600: call:     d (/usr/bin/t)\n"
	          "               t    100 [000]     0.000001600: return:     d (/usr/bin/t) (0 ns)\n"
	          "               t    100 [000]     0.000001600: return:   b (/usr/bin/t) (100 ns)\n"
	          "               t    100 [000]     0.000001600: call:   c (/usr/bin/t)\n"
	          "               t    100 [000]     0.000001600: call:     e (/usr/bin/t)\n"
	          "               t    100 [000]     0.000001600: call:       f (/usr/bin/t)\n"
	          "               t    100 [000]     0.000001600: return:       f (/usr/bin/t) (0 ns)\n"
	          "               t    100 [000]     0.000001600: return:     e (/usr/bin/t) (0 ns)\n"
	          "               t    100 [000]     0.000001600: return:   c (/usr/bin/t) (0 ns)\n"
	          "               u    200 [001]     0.000001600: call: g (/usr/bin/t)\n"
	          "               u    200 [001]     0.000001600: return: g (/usr/bin/t) (0 ns)\n"
	          "               t    100 [000]     0.000002000: return: main (/usr/bin/t) (1.000 us)\n");
	free(out);
	sptd_store_destroy(st);
	unlink(path);
}

/* An incident of @groups * 5 call slices on 4 threads (as in
 * test_perfetto_big.c) plus sched slices.  0 or -1. */
static int make_big(const char *path, int groups)
{
	struct sptd_store *st = NULL;
	int64_t id = 1;
	int ok = 1;

	unlink(path);
	if (sptd_store_create(path, &st) < 0)
		return -1;
	sptd_store_meta_set_int(st, "window_start", 0);
	sptd_store_meta_set_int(st, "window_end", (int64_t)groups * 100);
	SPTD_STORE_ADD(st, dso, 1, "/usr/bin/big", NULL);
	for (int i = 0; i < 1000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "fn_%d", i);
		ok &= SPTD_STORE_ADD(st, symbol, i, name, 1, 0x1000 + (uint64_t)i * 16, 16) >= 0;
	}
	for (int th = 1; th <= 4; th++) {
		ok &= SPTD_STORE_ADD(st, thread, th, 1000 + th, -1, "worker") >= 0;
		for (int g = 0; g < groups / 4; g++) {
			int64_t root = id, c1 = id + 1, ts = (int64_t)g * 400 + th;

			ok &= SPTD_STORE_ADD(st, slice, id++, ts, 100, th % 2, th, 0, -1, g % 1000, "user", 0) >= 0;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts + 10, 30, th % 2, th, 1, root, (g + 1) % 1000, "user", 0) >= 0;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts + 15, 10, th % 2, th, 2, c1, (g + 2) % 1000, "kernel", 0) >= 0;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts + 50, 40, th % 2, th, 1, root, (g + 3) % 1000, "syscall", 0) >= 0;
			ok &= SPTD_STORE_ADD(st, slice, id++, ts + 90, 5, th % 2, th, 1, root, -1, "user", 0) >= 0;
		}
	}
	for (int i = 0; i < groups / 10; i++)
		ok &= SPTD_STORE_ADD(st, sched_slice, (int64_t)(i / 2) * 2000, 2000, i % 2,
		                     1 + (i % 4), "S", 120, 0) >= 0;
	if (!ok || sptd_store_commit(st) < 0) {
		sptd_store_destroy(st);
		return -1;
	}
	sptd_store_destroy(st);
	return 0;
}

/* Run `sysptd script @path`, counting its lines and checking their order
 * as they stream by; returns the child's peak RSS in KiB (-1 failure). */
static long script_rss(const char *bin, const char *path, long *events)
{
	struct rusage ru;
	int fds[2], status;
	pid_t pid;
	FILE *f;
	char line[512];
	int64_t last = INT64_MIN;
	long bad = 0;

	*events = 0;
	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(bin, bin, "script", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		struct ev e;

		if (parse_line(line, &e) < 0 || e.ts < last)
			bad++;
		last = e.ts;
		(*events)++;
	}
	if (f)
		fclose(f);
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || bad)
		return -1;
	return ru.ru_maxrss;
}

static void test_big(void)
{
	const char *bin = getenv("SPTD_BIN");
	char small[512], big[512];
	long rss_small, rss_big, n_small, n_big;

	if (!bin || access(bin, X_OK) != 0) {
		SPTD_SKIP_PART("no sysptd binary ($SPTD_BIN): the bounded-memory run");
		return;
	}
	snprintf(small, sizeof(small), "%s", tq_path("small.db"));
	snprintf(big, sizeof(big), "%s", tq_path("big.db"));
	CHECK_INT(make_big(small, 20000), 0);       /* 100,000 call slices */
	CHECK_INT(make_big(big, 200000), 0);        /* 1,000,000 call slices */
	rss_small = script_rss(bin, small, &n_small);
	rss_big = script_rss(bin, big, &n_big);
	printf("script: %ld events in %ld KiB peak RSS; %ld events in %ld KiB\n", n_small,
	       rss_small, n_big, rss_big);
	/* 2 events per call slice, 1 switch per sched slice after each
	 * CPU's first */
	CHECK_INT(n_small, 2 * 100000 + 2000 - 2);
	CHECK_INT(n_big, 2 * 1000000 + 20000 - 2);
	CHECK(rss_small > 0 && rss_big > 0);
	/* ten times the rows, not ten times the memory: the sorter spills */
	CHECK(rss_big < rss_small + 32 * 1024);
#if SPTD_SANITIZED
	/* ASan's shadow memory and quarantine are not the program's */
	SPTD_SKIP_PART("the absolute bound of 128 MiB (an ASan build's RSS is not the program's)");
#else
	CHECK(rss_big < 128 * 1024);
#endif
	unlink(small);
	unlink(big);
}

int main(void)
{
	static const char *const files[] = { "sample.db", "pt.db", NULL };
	struct sptd_store *st;

	if (tq_make_incident(tq_path("sample.db"), TQ_SAMPLE) < 0 ||
	    tq_make_incident(tq_path("pt.db"), TQ_PT) < 0) {
		fprintf(stderr, "cannot build the test incidents\n");
		tq_cleanup(files);
		return 1;
	}
	st = tq_open(tq_path("sample.db"));
	test_sample(st);
	sptd_store_destroy(st);
	st = tq_open(tq_path("pt.db"));
	test_pt(st);
	sptd_store_destroy(st);
	test_ties();
	test_big();
	tq_cleanup(files);
	return SPTD_TEST_END();
}
