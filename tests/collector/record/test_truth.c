/* test_truth.c — incidents you can trust (issue 11), for real: the built
 * sysptd records with `--trigger irq --count 3 --cooldown 1s` (the issue's
 * case) and with `--trigger irq,min=1us`, while this program makes disk
 * IRQs (writes + fdatasync), softirqs (loopback UDP, block completions,
 * timers) and context switches (a pipe ping-pong).  Every incident is then
 * checked against its own raw ftrace pages, parsed here independently of
 * the slice builder (sched/'s page parser: events with their irq/softirq
 * context from common_flags):
 *   - no irq slice contains an event of its CPU that proves the CPU was
 *     outside every hard irq handler (a switch, a softirq, any event in task
 *     or softirq context), flagged or not; the same for softirq slices;
 *   - every slice starts and ends at a recorded event of its CPU (an entry,
 *     an exit, the event that proved the handler over) or at the edge of
 *     what was seen (window, record start or stop), and one with both edges
 *     at its own entry and exit is unflagged;
 *   - every stretch the rings did not see (before a wrapped ring's oldest
 *     event, before recording started, after it stopped) is a gap row;
 *     automatic triggers fire only on a whole window: recording started
 *     before the window start;
 *   - wakeups: an unflagged runnable row starts at its sched_waking event; a
 *     flagged one starts at the window start;
 *   - a sched slice of a task holds no event of its CPU that ran in another
 *     task (an event's common_pid is the task current where it fired): this
 *     machine's kernel never records CPU 1's switches away from idle, and
 *     the builder once gave the idle time before each to the task switched
 *     in;
 *   - the trigger's own IRQ is an unflagged irq slice ending where the
 *     trigger fired, as long as the trigger measured (its perf events read
 *     the same tracepoints: a few microseconds of probe-order difference);
 *   - with an IRQ that only comes once the service is armed, the kernel
 *     freezes the record at the handler's return (ftrace_stopped_by
 *     "trigger"), and still all of the above.
 * With incident files as arguments, it only checks those (by hand).
 *
 * Needs root and tracefs; skips with the reason otherwise. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "sptd_sched.h"
#include "sptd_store.h"
#include "sptd_test.h"

#define MAX_CPUS 64
#define MAX_INCIDENTS 4
/* perf's and ftrace's probes on one tracepoint run one after the other */
#define PROBE_SLACK_NS 20000

static const char *bin;
/* the recorder's --name: an ftrace instance, lock and socket of its own */
static char recorder[32];
static char workdir[128];
static atomic_int stop_work;
static atomic_int io_paused;      /* 1: the io thread waits */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the workload --------------------------------------------------------- */

/* Disk IRQs and BLOCK softirqs: small synchronous writes. */
static void *io_main(void *arg)
{
	char path[256], block[4096];
	int fd;

	prctl(PR_SET_NAME, "sptd-io");
	snprintf(path, sizeof(path), "%s/io.dat", workdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	memset(block, 'x', sizeof(block));
	for (int i = 0; fd >= 0 && !atomic_load(&stop_work); i++) {
		if (atomic_load(&io_paused)) {
			usleep(1000);
			continue;
		}
		if (pwrite(fd, block, sizeof(block), (off_t)(i % 256) * 4096) < 0 || fdatasync(fd) < 0)
			break;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	return NULL;
}

/* Context switches: two threads handing a byte back and forth. */
static int ping[2], pong[2];

static void *pong_main(void *arg)
{
	char c;

	prctl(PR_SET_NAME, "sptd-pong");
	while (read(ping[0], &c, 1) == 1 && c != 'q')
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

static void *ping_main(void *arg)
{
	char c = 'p';
	struct timespec pause = { 0, 200000 };

	prctl(PR_SET_NAME, "sptd-ping");
	while (!atomic_load(&stop_work)) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			break;
		nanosleep(&pause, NULL);
	}
	c = 'q';
	(void)!write(ping[1], &c, 1);
	return NULL;
}

/* NET_RX softirqs: loopback UDP. */
static void *udp_main(void *arg)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	struct timespec pause = { 0, 500000 };
	char buf[64] = "sptd";
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	prctl(PR_SET_NAME, "sptd-udp");
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&addr, &len) < 0)
		goto out;
	while (!atomic_load(&stop_work)) {
		(void)!sendto(fd, buf, 4, 0, (struct sockaddr *)&addr, sizeof(addr));
		(void)!recv(fd, buf, sizeof(buf), 0);
		nanosleep(&pause, NULL);
	}
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ---- running sysptd -------------------------------------------------------- */

/* Run sysptd with @args until it exits (at most @timeout_s); the incident
 * paths it printed go to @paths.  Returns how many, -1 on failure. */
static int run_sysptd(const char *const *args, int timeout_s, char paths[][512], int max,
                      int resume_io_after_ms)
{
	const char *argv[32];
	int out[2], n = 0, npaths = 0, status = 0;
	int64_t deadline = now_ns() + (int64_t)timeout_s * 1000000000;
	pid_t pid;
	FILE *f;
	char line[512];

	argv[n++] = bin;
	argv[n++] = "--name";   /* beside the machine's own service */
	argv[n++] = recorder;
	for (int i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe(out) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	f = fdopen(out[0], "r");
	if (resume_io_after_ms > 0) {
		usleep((useconds_t)resume_io_after_ms * 1000);
		atomic_store(&io_paused, 0);
	}
	for (;;) {
		int done = waitpid(pid, &status, WNOHANG) == pid;

		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (npaths < max)
				snprintf(paths[npaths++], 512, "%s", line);
		}
		clearerr(f);
		if (done)
			break;
		if (now_ns() > deadline) {
			fprintf(stderr, "sysptd did not finish in %d s: stopping it\n", timeout_s);
			kill(pid, SIGTERM);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(20000);
	}
	fclose(f);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "sysptd exited with status %d\n", status);
		return -1;
	}
	return npaths;
}

/* ---- the incident's own raw events --------------------------------------------- */

struct cpu_events {
	struct sptd_sched_event *ev;   /* this CPU's events in ring order */
	size_t n, cap;
	int lost_first;                /* its first page said the ring wrapped */
	int64_t lost_ts;               /* ... from when it holds events */
	int lost_later;                /* a loss inside its record */
};

struct raw {
	struct sptd_sched_parser *parser;
	struct cpu_events cpu[MAX_CPUS];
	int bad_pages;
};

static int keep_event(void *ctx, const struct sptd_sched_event *ev)
{
	struct raw *r = ctx;
	struct cpu_events *c;

	if (ev->cpu < 0 || ev->cpu >= MAX_CPUS)
		return 0;
	c = &r->cpu[ev->cpu];
	if (ev->type == SPTD_SCHED_LOST) {
		if (c->n == 0 && !c->lost_first) {
			c->lost_first = 1;
			c->lost_ts = ev->ts;
		} else {
			c->lost_later++;
		}
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct sptd_sched_event *more = realloc(c->ev, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		c->ev = more;
		c->cap = cap;
	}
	c->ev[c->n++] = *ev;
	return 0;
}

static int on_format(void *ctx, const struct sptd_store_ftrace_format_row *row)
{
	struct raw *r = ctx;

	sptd_sched_parser_add_format(r->parser, row->name, row->text);
	return 0;
}

static int on_page(void *ctx, const struct sptd_store_chunk_row *row)
{
	struct raw *r = ctx;

	if (sptd_sched_parser_parse_page(r->parser, row->cpu, row->data, row->len, keep_event, r) < 0)
		r->bad_pages++;
	return 0;
}

static void raw_free(struct raw *r)
{
	for (int i = 0; i < MAX_CPUS; i++)
		free(r->cpu[i].ev);
	sptd_sched_parser_destroy(r->parser);
	memset(r, 0, sizeof(*r));
}

/* Outside every hard irq handler at this event (by type or context). */
static int not_hardirq(const struct sptd_sched_event *e)
{
	switch (e->type) {
	case SPTD_SCHED_SWITCH: case SPTD_SCHED_FORK: case SPTD_SCHED_EXIT:
	case SPTD_SCHED_WAKEUP_NEW: case SPTD_SCHED_SOFTIRQ_ENTRY: case SPTD_SCHED_SOFTIRQ_EXIT:
		return 1;
	default:
		return (e->context & SPTD_SCHED_CTX_KNOWN) &&
		       !(e->context & (SPTD_SCHED_CTX_HARDIRQ | SPTD_SCHED_CTX_NMI));
	}
}

/* Outside every softirq at this event. */
static int not_softirq(const struct sptd_sched_event *e)
{
	switch (e->type) {
	case SPTD_SCHED_SWITCH: case SPTD_SCHED_FORK: case SPTD_SCHED_EXIT:
	case SPTD_SCHED_WAKEUP_NEW:
		return 1;
	case SPTD_SCHED_SOFTIRQ_ENTRY: case SPTD_SCHED_SOFTIRQ_EXIT:
		return 0;
	default:
		return (e->context & SPTD_SCHED_CTX_KNOWN) && !(e->context & SPTD_SCHED_CTX_SOFTIRQ);
	}
}

/* An event of @c at exactly @ts (of @type when >= 0). */
static const struct sptd_sched_event *event_at(const struct cpu_events *c, int64_t ts, int type)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->ev[i].ts == ts && (type < 0 || (int)c->ev[i].type == type))
			return &c->ev[i];
	return NULL;
}

/* ---- the checks --------------------------------------------------------------- */

/* What one incident's meta says about when ftrace saw. */
struct span {
	int64_t ws, we, started, data_end;
	int kernel_stop;
};

/* The edges a truncated row may have on CPU @cpu besides events. */
static int is_edge(const struct span *sp, const struct cpu_events *c, int64_t ts)
{
	return ts == sp->ws || ts == sp->we || ts == sp->started || ts == sp->data_end ||
	       (c->lost_first && ts == c->lost_ts);
}

/* One irq or softirq table's rows against the raw events. */
static void check_handlers(struct sptd_store *st, struct raw *raw, const struct span *sp,
                           int soft, int *rows, int *flagged)
{
	struct sptd_store_stmt *q = NULL;
	const char *sql = soft ? "SELECT ts, dur, cpu, vec, flags FROM softirq_slice"
	                       : "SELECT ts, dur, cpu, irq, flags FROM irq_slice";
	int entry = soft ? SPTD_SCHED_SOFTIRQ_ENTRY : SPTD_SCHED_IRQ_ENTRY;
	int exit = soft ? SPTD_SCHED_SOFTIRQ_EXIT : SPTD_SCHED_IRQ_EXIT;

	CHECK_INT(sptd_store_prepare(st, sql, &q), 0);
	while (q && sptd_store_step(q) == 1) {
		int64_t ts = sptd_store_column_int(q, 0), end = ts + sptd_store_column_int(q, 1);
		int cpu = (int)sptd_store_column_int(q, 2), num = (int)sptd_store_column_int(q, 3);
		int flags = (int)sptd_store_column_int(q, 4), bad = 0;
		const struct cpu_events *c;
		const struct sptd_sched_event *s_ev, *e_ev;

		(*rows)++;
		*flagged += flags != 0;
		if (cpu < 0 || cpu >= MAX_CPUS) {
			CHECK(0);
			continue;
		}
		c = &raw->cpu[cpu];
		/* nothing inside proves the CPU was elsewhere */
		for (size_t i = 0; i < c->n; i++) {
			const struct sptd_sched_event *e = &c->ev[i];

			if (e->ts > ts && e->ts < end && (soft ? not_softirq(e) : not_hardirq(e))) {
				fprintf(stderr, "%s %d on cpu %d [%" PRId64 ", %" PRId64 "] flags %d "
				        "contains event type %d (context %u) at %" PRId64 "\n",
				        soft ? "softirq" : "irq", num, cpu, ts, end, flags, e->type,
				        e->context, e->ts);
				bad = 1;
				break;
			}
		}
		CHECK(!bad);
		/* both edges at recorded events, or at what was seen */
		s_ev = event_at(c, ts, -1);
		e_ev = event_at(c, end, -1);
		CHECK(s_ev || is_edge(sp, c, ts));
		CHECK(e_ev || is_edge(sp, c, end));
		if (!s_ev && !is_edge(sp, c, ts))
			fprintf(stderr, "%s %d on cpu %d starts at %" PRId64 ", at no event\n",
			        soft ? "softirq" : "irq", num, cpu, ts);
		if (!e_ev && !is_edge(sp, c, end))
			fprintf(stderr, "%s %d on cpu %d ends at %" PRId64 ", at no event\n",
			        soft ? "softirq" : "irq", num, cpu, end);
		/* unflagged: its own entry and exit */
		if (flags == 0) {
			CHECK(event_at(c, ts, entry) != NULL);
			CHECK(event_at(c, end, exit) != NULL);
		}
	}
	sptd_store_finalize(q);
}

/* Every stretch nothing saw is a gap of that CPU. */
static int gap_covers(struct sptd_store *st, int cpu, int64_t from, int64_t to)
{
	char sql[256];
	int64_t n = 0;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM gap WHERE (cpu = %d OR cpu IS NULL) AND "
	         "ts <= %" PRId64 " AND ts + dur >= %" PRId64 " AND reason LIKE 'sched: %%'", cpu,
	         from, to);
	return sptd_store_query_int(st, sql, &n) == 0 && n > 0;
}

/* Wakeups: unflagged runnable rows start at their sched_waking. */
static void check_wakeups(struct sptd_store *st, struct raw *raw, const struct span *sp,
                          int ncpus, int *clipped)
{
	struct sptd_store_stmt *q = NULL;

	CHECK_INT(sptd_store_prepare(st, "SELECT ts.ts, th.tid, ts.flags FROM thread_state ts "
	                                 "JOIN thread th USING (utid) WHERE ts.state = 'R' AND "
	                                 "ts.waker_utid IS NOT NULL", &q), 0);
	while (q && sptd_store_step(q) == 1) {
		int64_t ts = sptd_store_column_int(q, 0);
		int tid = (int)sptd_store_column_int(q, 1), flags = (int)sptd_store_column_int(q, 2);
		int found = 0;

		for (int c = 0; c < ncpus && !found; c++)
			for (size_t i = 0; i < raw->cpu[c].n && !found; i++) {
				const struct sptd_sched_event *e = &raw->cpu[c].ev[i];

				found = e->ts == ts && (e->type == SPTD_SCHED_WAKING ||
				                        e->type == SPTD_SCHED_WAKEUP_NEW) &&
				        e->u.wake.tid == tid;
			}
		if (flags & SPTD_SLICE_F_START_TRUNCATED) {
			(*clipped)++;
			CHECK_INT(ts, sp->ws);
		} else {
			CHECK(found);
		}
	}
	sptd_store_finalize(q);
}

/* Sched slices: every event strictly inside one, on its CPU, ran in its
 * task. */
static void check_slices(struct sptd_store *st, struct raw *raw, int ncpus, int *rows)
{
	struct sptd_store_stmt *q = NULL;
	int shown = 0;

	CHECK_INT(sptd_store_prepare(st, "SELECT ss.ts, ss.dur, ss.cpu, th.tid FROM sched_slice ss "
	                                 "JOIN thread th USING (utid)", &q), 0);
	while (q && sptd_store_step(q) == 1) {
		int64_t ts = sptd_store_column_int(q, 0), end = ts + sptd_store_column_int(q, 1);
		int cpu = (int)sptd_store_column_int(q, 2), tid = (int)sptd_store_column_int(q, 3);
		const struct cpu_events *c;

		(*rows)++;
		if (cpu < 0 || cpu >= ncpus)
			continue;
		c = &raw->cpu[cpu];
		for (size_t i = 0; i < c->n; i++) {
			const struct sptd_sched_event *e = &c->ev[i];

			if (e->ts <= ts || e->ts >= end || e->pid == tid)
				continue;
			CHECK_INT(e->pid, tid);
			if (shown++ < 5)
				fprintf(stderr, "  slice of tid %d on cpu %d [%" PRId64 ", %" PRId64
				        "] holds an event of tid %d at %" PRId64 " (type %d)\n", tid, cpu,
				        ts, end, e->pid, e->ts, (int)e->type);
			break;
		}
	}
	sptd_store_finalize(q);
}

/* The trigger's own IRQ: an unflagged slice ending at the trigger, as long
 * as the trigger measured. */
static void check_trigger_irq(struct sptd_store *st)
{
	struct sptd_store_stmt *q = NULL;
	int64_t tts = 0, took = -1, n = 0;
	int cpu = -1, irq = -1;
	char sql[512];

	CHECK_INT(sptd_store_prepare(st, "SELECT ts, cpu, detail FROM trigger", &q), 0);
	if (q && sptd_store_step(q) == 1) {
		const char *d = sptd_store_column_text(q, 2);
		const char *t = d ? strstr(d, "handler took ") : NULL;

		tts = sptd_store_column_int(q, 0);
		cpu = (int)sptd_store_column_int(q, 1);
		if (d && sscanf(d, "irq %d", &irq) == 1 && t)
			took = strtoll(t + 13, NULL, 10);
		fprintf(stderr, "trigger: %s\n", d ? d : "(null)");
	}
	sptd_store_finalize(q);
	CHECK(irq >= 0 && took >= 0);
	if (irq < 0 || took < 0)
		return;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM irq_slice WHERE cpu = %d AND irq = %d AND "
	         "flags = 0 AND abs(ts + dur - %" PRId64 ") < %d AND abs(dur - %" PRId64 ") < %d",
	         cpu, irq, tts, PROBE_SLACK_NS, took, PROBE_SLACK_NS);
	CHECK_INT(sptd_store_query_int(st, sql, &n), 0);
	/* at least one: a second handler of the same line may end within the
	 * slack too (virtio IRQs come microseconds apart under load) */
	CHECK(n >= 1);
	if (n != 1)
		fprintf(stderr, "  %" PRId64 " handlers of irq %d match the trigger within %d ns\n", n,
		        irq, PROBE_SLACK_NS);
	/* and never one handler twice */
	CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM (SELECT cpu, irq, ts FROM irq_slice "
	                                   "GROUP BY cpu, irq, ts HAVING count(*) > 1)", &n), 0);
	CHECK_INT(n, 0);
	snprintf(sql, sizeof(sql), "SELECT ts + dur - %" PRId64 " FROM irq_slice WHERE cpu = %d AND "
	         "irq = %d AND flags = 0 ORDER BY abs(ts + dur - %" PRId64 ") LIMIT 1", tts, cpu, irq,
	         tts);
	if (sptd_store_query_int(st, sql, &n) == 0)
		fprintf(stderr, "  its irq_slice ends %" PRId64 " ns from the trigger", n);
	snprintf(sql, sizeof(sql), "SELECT dur - %" PRId64 " FROM irq_slice WHERE cpu = %d AND "
	         "irq = %d AND flags = 0 ORDER BY abs(ts + dur - %" PRId64 ") LIMIT 1", took, cpu,
	         irq, tts);
	if (sptd_store_query_int(st, sql, &n) == 0)
		fprintf(stderr, " and lasts %" PRId64 " ns longer than the trigger measured\n", n);
}

/* The IRQ number the trigger row of @path names, -1 none. */
static int trigger_irq_of(const char *path)
{
	struct sptd_store *st = NULL;
	struct sptd_store_stmt *q = NULL;
	int irq = -1;

	if (sptd_store_open(path, 0, &st) < 0)
		return -1;
	if (sptd_store_prepare(st, "SELECT detail FROM trigger", &q) == 0 && sptd_store_step(q) == 1 &&
	    sptd_store_column_text(q, 0))
		sscanf(sptd_store_column_text(q, 0), "irq %d", &irq);
	sptd_store_finalize(q);
	sptd_store_destroy(st);
	return irq;
}

static void check_incident(const char *path, int automatic, const char *stopped_by)
{
	struct sptd_store *st = NULL;
	struct raw raw = { 0 };
	struct span sp = { 0 };
	char by[32] = "", clock[32] = "";
	int64_t ncpus = 0, v;
	int irq_rows = 0, irq_flagged = 0, soft_rows = 0, soft_flagged = 0, clipped = 0;
	int slice_rows = 0;

	fprintf(stderr, "incident %s\n", path);
	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	if (!st)
		return;
	sptd_store_meta_get_int(st, "window_start", &sp.ws);
	sptd_store_meta_get_int(st, "window_end", &sp.we);
	sptd_store_meta_get_int(st, "cpus", &ncpus);
	CHECK_INT(sptd_store_meta_get(st, "ftrace_clock", clock, sizeof(clock)) > 0, 1);
	CHECK_STR(clock, "mono");   /* sampling source: ftrace times are incident ns */
	CHECK_INT(sptd_store_meta_get_int(st, "ftrace_started", &sp.started), 0);
	CHECK(sptd_store_meta_get(st, "ftrace_stopped_by", by, sizeof(by)) > 0);
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	CHECK_INT(sptd_sched_parser_create(&raw.parser), 0);
	CHECK_INT(SPTD_STORE_EACH(st, raw_ftrace_format, on_format, &raw), 0);
	CHECK(SPTD_STORE_EACH(st, raw_ftrace_page, on_page, &raw) >= 0);
	CHECK_INT(raw.bad_pages, 0);
	/* where the record ends: the service stopped it after the window end,
	 * the kernel at the trigger's own event (the window end), or the
	 * kernel at another event, right after the record's last one */
	sp.data_end = sp.we;
	sp.kernel_stop = strcmp(by, "kernel") == 0;
	if (sp.kernel_stop) {
		int64_t last = INT64_MIN;

		for (int c = 0; c < ncpus; c++)
			if (raw.cpu[c].n && raw.cpu[c].ev[raw.cpu[c].n - 1].ts > last)
				last = raw.cpu[c].ev[raw.cpu[c].n - 1].ts;
		if (last < sp.we)
			sp.data_end = last;
	} else if (sptd_store_meta_get_int(st, "ftrace_stopped", &v) == 0) {
		CHECK(v >= sp.we);
	}
	/* an automatic trigger waits for a whole window of recording */
	if (automatic)
		CHECK(sp.started <= sp.ws);

	check_handlers(st, &raw, &sp, 0, &irq_rows, &irq_flagged);
	check_handlers(st, &raw, &sp, 1, &soft_rows, &soft_flagged);
	check_wakeups(st, &raw, &sp, (int)ncpus, &clipped);
	check_slices(st, &raw, (int)ncpus, &slice_rows);

	for (int c = 0; c < ncpus; c++) {
		struct cpu_events *ce = &raw.cpu[c];

		CHECK_INT(ce->lost_later, 0);
		if (ce->lost_first && ce->lost_ts > sp.ws)
			CHECK(gap_covers(st, c, sp.ws, ce->lost_ts < sp.we ? ce->lost_ts : sp.we));
		if (sp.started > sp.ws)
			CHECK(gap_covers(st, c, sp.ws, sp.started < sp.we ? sp.started : sp.we));
		if (sp.data_end < sp.we)
			CHECK(gap_covers(st, c, sp.data_end, sp.we));
		if (!ce->n)
			CHECK(gap_covers(st, c, sp.ws, sp.we));
	}
	if (stopped_by)
		CHECK_STR(by, stopped_by);
	fprintf(stderr, "  %d irq slices (%d flagged), %d softirq slices (%d flagged), %d clipped "
	        "wakeups, %d sched slices; stopped by %s%s\n", irq_rows, irq_flagged, soft_rows,
	        soft_flagged, clipped, slice_rows, by, sp.data_end < sp.we ? " before the window end" : "");
	CHECK(irq_rows > 0);
	CHECK(slice_rows > 0);
	check_trigger_irq(st);
	raw_free(&raw);
	sptd_store_destroy(st);
}

int main(int argc, char **argv)
{
	static char paths[MAX_INCIDENTS][512];
	pthread_t io, pi, po, udp;
	char out[256], run[256], spec[64];
	int n, disk_irq = -1;

	SPTD_REQUIRE_ROOT();
	if (argc > 1) {
		/* by hand: check incidents recorded elsewhere */
		for (int i = 1; i < argc; i++)
			check_incident(argv[i], 1, NULL);
		return SPTD_TEST_END();
	}
	bin = getenv("SPTD_BIN");
	snprintf(recorder, sizeof(recorder), "%s%d", "truth", (int)getpid());
	if (!bin || access(bin, X_OK) != 0)
		SPTD_SKIP("SPTD_BIN does not name the built sysptd");
	if (access("/sys/kernel/tracing/events", F_OK) != 0)
		SPTD_SKIP("no tracefs at /sys/kernel/tracing");
	snprintf(workdir, sizeof(workdir), "/var/tmp/sptd-truth-XXXXXX");
	if (!mkdtemp(workdir))
		SPTD_SKIP("cannot make a work directory in /var/tmp");
	snprintf(out, sizeof(out), "%s/out", workdir);
	snprintf(run, sizeof(run), "%s/run", workdir);
	setenv("SYSPTD_RUNDIR", run, 1);
	if (pipe(ping) < 0 || pipe(pong) < 0)
		SPTD_SKIP("no pipes");
	pthread_create(&io, NULL, io_main, NULL);
	pthread_create(&po, NULL, pong_main, NULL);
	pthread_create(&pi, NULL, ping_main, NULL);
	pthread_create(&udp, NULL, udp_main, NULL);

	/* the case: every IRQ, three incidents a second apart; IRQs
	 * come faster than the service re-arms, so hits fire from user space */
	{
		const char *args[] = { "--window", "10ms", "--trigger", "irq", "--count", "3",
		                       "--cooldown", "1s", "-q", "-o", out, NULL };

		n = run_sysptd(args, 60, paths, MAX_INCIDENTS, 0);
		CHECK_INT(n, 3);
		for (int i = 0; i < n; i++) {
			check_incident(paths[i], 1, NULL);
			if (trigger_irq_of(paths[i]) >= 0)
				disk_irq = trigger_irq_of(paths[i]);
		}
	}
	/* min=: the trigger measures the handler; no kernel freeze */
	{
		const char *args[] = { "--window", "10ms", "--trigger", "irq,min=1us", "--once",
		                       "-q", "-o", out, NULL };

		n = run_sysptd(args, 60, paths, MAX_INCIDENTS, 0);
		CHECK_INT(n, 1);
		for (int i = 0; i < n; i++)
			check_incident(paths[i], 1, "service");
	}
	/* an IRQ that only comes once the service is armed (the disk's, from
	 * the first run, with the io thread paused until then): the kernel
	 * freezes the record at the handler's return, the trigger's own event */
	CHECK(disk_irq >= 0);
	if (disk_irq >= 0) {
		const char *args[] = { "--window", "10ms", "--trigger", spec, "--once", "-q", "-o", out,
		                       NULL };

		snprintf(spec, sizeof(spec), "irq=%d", disk_irq);
		atomic_store(&io_paused, 1);
		usleep(20000);
		n = run_sysptd(args, 60, paths, MAX_INCIDENTS, 500);
		CHECK_INT(n, 1);
		for (int i = 0; i < n; i++)
			check_incident(paths[i], 1, "trigger");
	}

	atomic_store(&io_paused, 0);
	atomic_store(&stop_work, 1);
	pthread_join(io, NULL);
	pthread_join(pi, NULL);
	pthread_join(po, NULL);
	pthread_join(udp, NULL);
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workdir);
		(void)!system(cmd);
	}
	return SPTD_TEST_END();
}
