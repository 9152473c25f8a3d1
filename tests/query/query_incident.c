/* test_query_incident.c — synthetic incidents with known rows, written with
 * store/'s real API into real SQLite files.  #included by the test_query*
 * programs (not compiled on its own), hence static functions.
 *
 * Window 1,000,000 .. 11,000,000 ns (10 ms), 2 CPUs.
 *
 * threads: utid 0 swapper (tid 0, idle), 1 server (tid 100, pid 100),
 *          2 worker (tid 101, pid 100), 3 client (tid 200, pid 200)
 * sched_slice
 *   cpu 0: server  1.0..4.0 ms   swapper 4.0..5.0   worker 5.0..11.0
 *   cpu 1: client  0.5..3.0 (clipped to 1.0..3.0)   swapper 3.0..9.5
 *          server  9.5..11.0
 *   => cpu0 busy 9,000,000 (90%) idle 1,000,000 (10%)
 *      cpu1 busy 3,500,000 (35%) idle 6,500,000 (65%)
 *   per thread: worker 6,000,000 (1), server 4,500,000 (2),
 *               client 2,000,000 (1), swapper 7,500,000 (2)
 * irq_slice: eth0 (24) x3 total 60,000 max 30,000 (cpu0 40,000, cpu1 20,000);
 *            timer (1) x1 5,000 on cpu1
 * softirq:   NET_RX (3) 50,000 on cpu0; TIMER (1) 15,000 on cpu1
 * thread_state: server woken by client at 9,000,000, ran at 9,500,000 on
 *            cpu 1 (500,000, the worst); worker woken by server at 4,800,000,
 *            ran at 5,000,000 (200,000); client woken at 10,000,000 never ran
 *            (not a latency); a preempted R+ without waker (not a wakeup).
 * samples (sample incident): callsites 1 main <- 2 handle <- 3 parse <-
 *            4 handle (recursion), 5 = unresolved 0xdead under main;
 *            samples: cs3 x3, cs2 x2, cs4 x1, cs1 x1, cs5 x1 (8)
 *   => self: handle 3, parse 3, main 1, [unknown] 1;
 *      total: main 8, handle 6, parse 4, [unknown] 1 (reported as perf does: "[unknown]" in dso "[unknown]")
 * slices (pt incident): 1 main 1.0..2.0 ms > 2 handle (600 us) > 3 parse
 *            (300 us) > 4 handle (100 us); 5 parse (100 us) under main
 *   => self: handle 400,000, main 300,000, parse 300,000;
 *      total: main 1,000,000, handle 600,000, parse 400,000
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sptd_store.h"

#define TQ_TRY(expr)                                                             \
	do {                                                                     \
		int tq_rc_ = (expr);                                             \
		if (tq_rc_ < 0) {                                                \
			fprintf(stderr, "%s:%d: %s failed: %d (%s)\n", __FILE__, \
			        __LINE__, #expr, tq_rc_, sptd_store_errmsg(st)); \
			goto fail;                                               \
		}                                                                \
	} while (0)

enum tq_kind { TQ_SAMPLE, TQ_PT, TQ_EMPTY };

/* Not every including program uses every helper. */
#define TQ_UNUSED __attribute__((unused))

/* A fresh path under a private temporary directory. */
static char tq_dir[256];

static TQ_UNUSED const char *tq_path(const char *name)
{
	static char path[512];

	if (!tq_dir[0]) {
		snprintf(tq_dir, sizeof(tq_dir), "/tmp/sptd-test-query-XXXXXX");
		if (!mkdtemp(tq_dir)) {
			perror("mkdtemp");
			exit(1);
		}
		/* query reads -f FILE after giving up root (as nobody from a
		 * root login): the tests' files must be readable to it */
		chmod(tq_dir, 0755);
	}
	snprintf(path, sizeof(path), "%s/%s", tq_dir, name);
	return path;
}

/* Remove what tq_path handed out (files named by the tests). */
static TQ_UNUSED void tq_cleanup(const char *const *names)
{
	for (; *names; names++)
		unlink(tq_path(*names));
	if (tq_dir[0])
		rmdir(tq_dir);
}

static TQ_UNUSED int tq_make_incident(const char *path, enum tq_kind kind)
{
	struct sptd_store *st = NULL;

	unlink(path);
	TQ_TRY(sptd_store_create(path, &st));
	TQ_TRY(sptd_store_meta_set(st, "host", "testhost"));
	TQ_TRY(sptd_store_meta_set(st, "kernel", "6.1.0-test"));
	TQ_TRY(sptd_store_meta_set(st, "source", kind == TQ_PT ? "pt" : "sample"));
	TQ_TRY(sptd_store_meta_set(st, "clock", "monotonic"));
	TQ_TRY(sptd_store_meta_set_int(st, "cpus", 2));
	TQ_TRY(sptd_store_meta_set_int(st, "window_ns", 10000000));
	TQ_TRY(sptd_store_meta_set_int(st, "window_start", 1000000));
	TQ_TRY(sptd_store_meta_set_int(st, "window_end", 11000000));
	TQ_TRY(sptd_store_meta_set(st, "trigger_spec", "irq=24"));
	if (kind == TQ_EMPTY)
		goto commit;

	TQ_TRY(SPTD_STORE_ADD(st, trigger, 10500000, 1, "irq", "irq=24 name=eth0"));
	TQ_TRY(SPTD_STORE_ADD(st, process, 1, 100, "server", "server --port 80"));
	TQ_TRY(SPTD_STORE_ADD(st, process, 2, 200, "client", NULL));
	TQ_TRY(SPTD_STORE_ADD(st, thread, 0, 0, -1, "swapper"));
	TQ_TRY(SPTD_STORE_ADD(st, thread, 1, 100, 1, "server"));
	TQ_TRY(SPTD_STORE_ADD(st, thread, 2, 101, 1, "worker"));
	TQ_TRY(SPTD_STORE_ADD(st, thread, 3, 200, 2, "client"));
	TQ_TRY(SPTD_STORE_ADD(st, thread, 4, 102, 1, "late"));

	TQ_TRY(SPTD_STORE_ADD(st, sched_slice, 1000000, 3000000, 0, 1, "S", 120, 0));
	TQ_TRY(SPTD_STORE_ADD(st, sched_slice, 4000000, 1000000, 0, 0, "R", 120, 0));
	TQ_TRY(SPTD_STORE_ADD(st, sched_slice, 5000000, 6000000, 0, 2, NULL, 120, 0));
	TQ_TRY(SPTD_STORE_ADD(st, sched_slice, 500000, 2500000, 1, 3, "S", 120, 0));
	TQ_TRY(SPTD_STORE_ADD(st, sched_slice, 3000000, 6500000, 1, 0, "R", 120, 0));
	TQ_TRY(SPTD_STORE_ADD(st, sched_slice, 9500000, 1500000, 1, 1, NULL, 120, 0));

	TQ_TRY(SPTD_STORE_ADD(st, irq_slice, 2000000, 10000, 0, 24, "eth0", 1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, irq_slice, 6000000, 30000, 0, 24, "eth0", 1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, irq_slice, 4000000, 20000, 1, 24, "eth0", 1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, irq_slice, 5000000, 5000, 1, 1, "timer", 1, 0));
	/* an entry whose exit was not seen: its 900 us are a bound, not a max */
	TQ_TRY(SPTD_STORE_ADD(st, irq_slice, 7000000, 900000, 1, 24, "eth0", -1,
	                      SPTD_SLICE_F_END_TRUNCATED));
	TQ_TRY(SPTD_STORE_ADD(st, softirq_slice, 2010000, 50000, 0, 3, "NET_RX", 0));
	TQ_TRY(SPTD_STORE_ADD(st, softirq_slice, 5005000, 15000, 1, 1, "TIMER", 0));

	/* worker: sleeps, woken by server, runs */
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 1000000, 3800000, 2, "S", -1, -1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 4800000, 200000, 2, "R", 0, 1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 5000000, 6000000, 2, "Running", 0, -1, 0));
	/* server: runs, sleeps, woken by client, runs on cpu 1 */
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 1000000, 3000000, 1, "Running", 0, -1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 4000000, 5000000, 1, "S", -1, -1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 9000000, 500000, 1, "R", 1, 3, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 9500000, 1500000, 1, "Running", 1, -1, 0));
	/* client: runs, preempted (no waker), runs, sleeps, woken, never runs */
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 1000000, 1000000, 3, "Running", 1, -1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 2000000, 900000, 3, "R+", 1, -1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 2900000, 100000, 3, "Running", 1, -1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 3000000, 7000000, 3, "S", -1, -1, 0));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 10000000, 1000000, 3, "R", 1, 2, 0));
	/* late: runnable since before the window (clipped at its start), runs
	 * 1 ms into it: the true latency is longer than 1 ms */
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 1000000, 1000000, 4, "R", -1, 1,
	                      SPTD_SLICE_F_START_TRUNCATED));
	TQ_TRY(SPTD_STORE_ADD(st, thread_state, 2000000, 100000, 4, "Running", 0, -1, 0));

	TQ_TRY(SPTD_STORE_ADD(st, dso, 1, "/usr/bin/server", "abcdef"));
	TQ_TRY(SPTD_STORE_ADD(st, symbol, 1, "main", 1, 0x1000, 0x100));
	TQ_TRY(SPTD_STORE_ADD(st, symbol, 2, "handle", 1, 0x1100, 0x100));
	TQ_TRY(SPTD_STORE_ADD(st, symbol, 3, "parse", 1, 0x1200, 0x100));

	if (kind == TQ_SAMPLE) {
		TQ_TRY(SPTD_STORE_ADD(st, callsite, 1, -1, 0, 1, 0x1010));
		TQ_TRY(SPTD_STORE_ADD(st, callsite, 2, 1, 1, 2, 0x1110));
		TQ_TRY(SPTD_STORE_ADD(st, callsite, 3, 2, 2, 3, 0x1210));
		TQ_TRY(SPTD_STORE_ADD(st, callsite, 4, 3, 3, 2, 0x1120));
		TQ_TRY(SPTD_STORE_ADD(st, callsite, 5, 1, 1, -1, 0xdead));
		for (int i = 0; i < 3; i++)
			TQ_TRY(SPTD_STORE_ADD(st, sample, 1100000 + i * 100000, 0, 1, 3));
		for (int i = 0; i < 2; i++)
			TQ_TRY(SPTD_STORE_ADD(st, sample, 5100000 + i * 100000, 0, 2, 2));
		TQ_TRY(SPTD_STORE_ADD(st, sample, 5500000, 0, 2, 4));
		TQ_TRY(SPTD_STORE_ADD(st, sample, 5600000, 0, 2, 1));
		TQ_TRY(SPTD_STORE_ADD(st, sample, 5700000, 0, 2, 5));
		{
			/* a watchpoint hit by the second thread (tid 101) */
			struct sptd_store_watch_hit_row hit = {
				.ts = 5650000, .cpu = 0, .tid = 101, .ip = 0x1118,
				.function = "handle", .watch = 1, .old_value = 1,
				.new_value = 2, .silent = 0, .trigger = "watch=101:counter,w",
			};
			TQ_TRY(sptd_store_add(st, SPTD_STORE_T_WATCH_HIT, &hit));
		}
		TQ_TRY(SPTD_STORE_ADD(st, gap, 7000000, 1000, 0, "overflow"));
		TQ_TRY(SPTD_STORE_ADD(st, gap, 8000000, 2000, -1, "overflow"));
	} else {
		TQ_TRY(SPTD_STORE_ADD(st, slice, 1, 1000000, 1000000, 0, 1, 0, -1, 1,
		                      SPTD_SLICE_USER, 0));
		TQ_TRY(SPTD_STORE_ADD(st, slice, 2, 1100000, 600000, 0, 1, 1, 1, 2,
		                      SPTD_SLICE_USER, 0));
		TQ_TRY(SPTD_STORE_ADD(st, slice, 3, 1200000, 300000, 0, 1, 2, 2, 3,
		                      SPTD_SLICE_USER, 0));
		TQ_TRY(SPTD_STORE_ADD(st, slice, 4, 1250000, 100000, 0, 1, 3, 3, 2,
		                      SPTD_SLICE_USER, 0));
		TQ_TRY(SPTD_STORE_ADD(st, slice, 5, 1800000, 100000, 0, 1, 1, 1, 3,
		                      SPTD_SLICE_USER, 0));
	}
commit:
	TQ_TRY(sptd_store_commit(st));
	sptd_store_destroy(st);
	return 0;
fail:
	sptd_store_destroy(st);
	return -1;
}

/* Run @fn-like printing into memory: open a memstream, the caller prints
 * into *fp, then tq_mem_end returns the text (free it). */
struct tq_mem {
	FILE *fp;                /* stream the code under test writes */
	char *text;              /* what it wrote, after tq_mem_end */
	size_t len;              /* bytes in @text */
};

static TQ_UNUSED FILE *tq_mem_begin(struct tq_mem *m)
{
	memset(m, 0, sizeof(*m));
	m->fp = open_memstream(&m->text, &m->len);
	if (!m->fp) {
		perror("open_memstream");
		exit(1);
	}
	return m->fp;
}

static TQ_UNUSED char *tq_mem_end(struct tq_mem *m)
{
	fclose(m->fp);
	m->fp = NULL;
	return m->text;
}

/* Open @path read-only or die. */
static TQ_UNUSED struct sptd_store *tq_open(const char *path)
{
	struct sptd_store *st = NULL;
	int rc = sptd_store_open(path, 0, &st);

	if (rc < 0) {
		fprintf(stderr, "cannot open %s: %d %s\n", path, rc, sptd_store_errmsg(NULL));
		exit(1);
	}
	return st;
}
