/* test_record.c — the recording service end to end, for real: the built
 * sysptd binary arms a real ftrace instance and real perf events; this
 * program makes a known workload (a busy thread, a thread it blocks and
 * wakes, a child that exits, disk IRQs) and checks the incident file.
 *
 * Needs root and tracefs (CI has both); skips with the reason otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "sptd_store.h"
#include "sptd_test.h"

static const char *bin;           /* the sysptd under test */
/* the recorder's --name: an ftrace instance, lock and socket of its own */
static char recorder[32];
static char workdir[256];         /* output and run dir */
static atomic_int stop_busy;
static atomic_int sleeper_tid_pub;	/* the sleeper's tid, once it is named */
static int wake_pipe[2];
static pid_t main_tid;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* The function the samples must find: kept out of line and busy. */
__attribute__((noinline)) void sptd_test_busy_loop(void);
__attribute__((noinline)) void sptd_test_busy_loop(void)
{
	volatile uint64_t x = 0;

	while (!atomic_load(&stop_busy))
		for (int i = 0; i < 100000; i++)
			x += (uint64_t)i * 7;
}

static void *busy_main(void *arg)
{
	prctl(PR_SET_NAME, "sptd-busy");
	sptd_test_busy_loop();
	return NULL;
}

/* Time in the kernel the samples must find: reads of /dev/zero spend it in
 * the read syscall (vfs_read on every kernel sysptd supports), so every
 * window holds kernel frames of a known function, not only when an idle or
 * syscall sample happens to land in it. */
static void *kbusy_main(void *arg)
{
	static char buf[1 << 16];
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	prctl(PR_SET_NAME, "sptd-kbusy");
	while (fd >= 0 && !atomic_load(&stop_busy))
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *sleeper_main(void *arg)
{
	char c;

	prctl(PR_SET_NAME, "sptd-sleeper");
	atomic_store(&sleeper_tid_pub, (int)gettid());
	while (read(wake_pipe[0], &c, 1) == 1 && c != 'q')
		;
	return NULL;
}

/* A running service: its pid and a pipe from its stdout (incident paths). */
struct service {
	pid_t pid;
	FILE *out;
	int err_fd;
};

/* Start sysptd with @args (NULL-terminated) and wait until it says "armed".
 * Returns 0, or -1 with its stderr printed. */
static int service_start(struct service *s, const char *const *args)
{
	const char *argv[32];
	int out[2], err[2], n = 0;
	char buf[8192];
	size_t off = 0;
	int64_t deadline = now_ns() + 20000000000LL;

	argv[n++] = bin;
	argv[n++] = "--name";   /* beside the machine's own service */
	argv[n++] = recorder;
	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe(out) < 0 || pipe(err) < 0)
		return -1;
	s->pid = fork();
	if (s->pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	s->out = fdopen(out[0], "r");
	s->err_fd = err[0];
	fcntl(s->err_fd, F_SETFL, O_NONBLOCK);
	while (now_ns() < deadline) {
		ssize_t r = read(s->err_fd, buf + off, sizeof(buf) - 1 - off);

		if (r > 0) {
			off += (size_t)r;
			buf[off] = '\0';
			if (strstr(buf, "armed:") && strchr(strstr(buf, "armed:"), '\n')) {
				/* the plan's rings, each named for what it is: the
				 * ftrace ring sized from --window 40ms, then the
				 * source's own ring(s) */
				CHECK(strstr(buf, "; ftrace ring 2624 KiB + ") != NULL);
				return 0;
			}
		} else if (r == 0) {
			break;
		}
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			s->pid = -1;
			break;
		}
		sleep_ms(10);
	}
	buf[off] = '\0';
	fprintf(stderr, "sysptd did not arm; it said:\n%s\n", buf);
	return -1;
}

/* Read the incident path the service prints, waiting at most 30 s (then
 * it is stopped: a trigger that never fires fails the case, with the
 * service's log, instead of hanging the test); wait for it to exit. */
static int service_finish(struct service *s, char *path, size_t len, int *status)
{
	struct pollfd pfd = { .fd = fileno(s->out), .events = POLLIN };
	char buf[4096];
	ssize_t r;
	int reaped = 0;

	path[0] = '\0';
	if (poll(&pfd, 1, 30000) != 1) {
		fprintf(stderr, "no incident 30 s after the cause: stopping the service\n");
		kill(s->pid, SIGTERM);   /* it removes its ftrace instance */
		for (int i = 0; i < 50 && !reaped; i++) {
			reaped = waitpid(s->pid, status, WNOHANG) == s->pid;
			if (!reaped)
				sleep_ms(100);
		}
		if (!reaped)
			kill(s->pid, SIGKILL);
	} else if (!fgets(path, (int)len, s->out)) {
		path[0] = '\0';
	}
	path[strcspn(path, "\n")] = '\0';
	if (!reaped)
		waitpid(s->pid, status, 0);
	while ((r = read(s->err_fd, buf, sizeof(buf) - 1)) > 0) {
		buf[r] = '\0';
		fputs(buf, stderr); /* the service's log, for the test log */
	}
	fclose(s->out);
	close(s->err_fd);
	return path[0] ? 0 : -1;
}

static int64_t q_int(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	if (sptd_store_query_int(st, sql, &v) < 0)
		fprintf(stderr, "query failed: %s: %s\n", sql, sptd_store_errmsg(st));
	return v;
}

/* What every incident of this test must show. */
static void check_incident(const char *path, int64_t cause_lo, int64_t cause_hi, const char *kind,
                           pid_t sleeper_tid, int check_wakeup)
{
	struct sptd_store *st = NULL;
	int64_t ws = 0, we = 0, ncpu = 0, ts;
	char sql[512];

	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	if (!st)
		return;
	{
		struct stat sb;

		CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
	}
	sptd_store_meta_get_int(st, "window_start", &ws);
	sptd_store_meta_get_int(st, "window_end", &we);
	sptd_store_meta_get_int(st, "cpus", &ncpu);
	CHECK(we > ws);
	CHECK(ncpu >= 1);
	{
		int64_t ftrace_kb = 0;

		/* the ftrace ring as the plan sized it for --window 40ms */
		sptd_store_meta_get_int(st, "ftrace_buffer_kb", &ftrace_kb);
		CHECK_INT(ftrace_kb, 41 * 64);
	}

	/* the trigger row, near the cause */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM trigger WHERE kind = '%s'", kind);
	CHECK_INT(q_int(st, sql), 1);
	if (strncmp(kind, "irq=", 4) == 0) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM trigger WHERE detail LIKE 'irq %s %%'", kind + 4);
		CHECK_INT(q_int(st, sql), 1);
	}
	ts = q_int(st, "SELECT ts FROM trigger");
	CHECK(ts >= cause_lo && ts <= cause_hi);
	if (!(ts >= cause_lo && ts <= cause_hi))
		fprintf(stderr, "trigger at %lld, cause in [%lld, %lld]\n", (long long)ts,
		        (long long)cause_lo, (long long)cause_hi);

	/* sched slices on every online CPU, covering the whole window */
	CHECK_INT(q_int(st, "SELECT count(DISTINCT cpu) FROM sched_slice"), ncpu);
	for (int cpu = 0; cpu < ncpu; cpu++) {
		snprintf(sql, sizeof(sql), "SELECT min(ts) FROM sched_slice WHERE cpu = %d", cpu);
		CHECK_INT(q_int(st, sql), ws);
		snprintf(sql, sizeof(sql), "SELECT max(ts + dur) FROM sched_slice WHERE cpu = %d", cpu);
		CHECK_INT(q_int(st, sql), we);
		/* slices of a CPU do not overlap and leave no holes */
		snprintf(sql, sizeof(sql),
		         "SELECT count(*) FROM (SELECT ts, dur, lead(ts) OVER (ORDER BY ts) AS nts "
		         "FROM sched_slice WHERE cpu = %d) WHERE nts IS NOT NULL AND ts + dur != nts", cpu);
		CHECK_INT(q_int(st, sql), 0);
	}
	CHECK(q_int(st, "SELECT count(*) FROM sched_slice WHERE ts < " "(SELECT value FROM meta WHERE key='window_start')") == 0);

	/* our own process and its threads, by name */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM process WHERE pid = %d", (int)getpid());
	CHECK_INT(q_int(st, sql), 1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM thread JOIN process USING (upid) "
	         "WHERE thread.name = 'sptd-busy' AND process.pid = %d", (int)getpid());
	CHECK_INT(q_int(st, sql), 1);
	CHECK_INT(q_int(st, "SELECT count(*) FROM thread WHERE name = 'sptd-sleeper'"), 1);

	/* the sleeper was woken by the main thread: a runnable state whose
	 * waker is us, followed by running */
	if (check_wakeup) {
	snprintf(sql, sizeof(sql),
	         "SELECT count(*) FROM thread_state s JOIN thread t USING (utid) "
	         "JOIN thread w ON w.utid = s.waker_utid "
	         "WHERE t.tid = %d AND s.state = 'R' AND w.tid = %d", (int)sleeper_tid, (int)main_tid);
	CHECK(q_int(st, sql) >= 1);
	snprintf(sql, sizeof(sql),
	         "SELECT count(*) FROM thread_state s JOIN thread t USING (utid) "
	         "WHERE t.tid = %d AND s.state = 'S'", (int)sleeper_tid);
	CHECK(q_int(st, sql) >= 1);
	}

	/* samples of the busy thread name its function */
	CHECK(q_int(st, "SELECT count(*) FROM sample") > 0);
	CHECK(q_int(st, "SELECT count(*) FROM sample s JOIN thread t USING (utid) "
	                "JOIN callsite c ON c.id = s.callsite_id JOIN symbol y ON y.id = c.symbol_id "
	                "WHERE t.name = 'sptd-busy' AND y.name = 'sptd_test_busy_loop'") > 0);
	CHECK(q_int(st, "SELECT count(*) FROM sample WHERE ts < (SELECT value FROM meta WHERE key='window_start') "
	                "OR ts > (SELECT value FROM meta WHERE key='window_end')") == 0);
	/* kernel frames are symbolized too: the stacks of the thread reading
	 * /dev/zero pass through the read syscall's vfs_read / ksys_read */
	CHECK(q_int(st, "WITH RECURSIVE c(id, parent_id, symbol_id) AS ("
	                " SELECT cs.id, cs.parent_id, cs.symbol_id FROM sample s"
	                " JOIN thread t USING (utid) JOIN callsite cs ON cs.id = s.callsite_id"
	                " WHERE t.name = 'sptd-kbusy'"
	                " UNION SELECT p.id, p.parent_id, p.symbol_id FROM callsite p"
	                " JOIN c ON p.id = c.parent_id)"
	                " SELECT count(*) FROM c JOIN symbol y ON y.id = c.symbol_id"
	                " JOIN dso d ON d.id = y.dso_id WHERE d.path = '[kernel.kallsyms]'"
	                " AND y.name IN ('vfs_read', 'ksys_read')") > 0);
	sptd_store_destroy(st);
}

/* Run the workload, firing the cause with @cause between its phases. */
static void workload(void (*cause)(void), int64_t *lo, int64_t *hi)
{
	sleep_ms(80);  /* longer than the window: the rings then cover all of it */
	(void)!write(wake_pipe[1], "w", 1);   /* wake the sleeper: main is the waker */
	sleep_ms(5);
	*lo = now_ns();
	cause();
	*hi = now_ns();
}

static void cause_exit(void)
{
	pid_t child = fork();

	if (child == 0) {
		prctl(PR_SET_NAME, "sptd-trigger");
		_exit(0);
	}
	waitpid(child, NULL, 0);
}

static int disk_irq = -1;

static void cause_disk_irq(void)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "/var/tmp/sptd-irq-%d", (int)getpid());
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	for (int i = 0; i < 20 && fd >= 0; i++) {
		char block[4096];

		memset(block, i, sizeof(block));
		(void)!write(fd, block, sizeof(block));
		fsync(fd);
	}
	close(fd);
	unlink(path);
}

/* The IRQ that fsync on /var/tmp raises: the one whose count grows most. */
static int find_disk_irq(void)
{
	long before[4096] = { 0 }, after[4096] = { 0 };
	long *counts[2] = { before, after };
	int best = -1;
	long best_delta = 0;

	for (int pass = 0; pass < 2; pass++) {
		FILE *f = fopen("/proc/interrupts", "r");
		char line[4096];

		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f)) {
			char *p = line, *end;
			long irq = strtol(p, &end, 10), sum = 0;

			if (end == p || *end != ':' || irq < 0 || irq >= 4096)
				continue;
			p = end + 1;
			for (;;) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				sum += v;
				p = end;
			}
			counts[pass][irq] = sum;
		}
		fclose(f);
		if (pass == 0)
			cause_disk_irq();
	}
	for (int i = 0; i < 4096; i++)
		if (after[i] - before[i] > best_delta) {
			best_delta = after[i] - before[i];
			best = i;
		}
	return best_delta >= 5 ? best : -1;
}

/* @slack_ns: how long before the cause another hit of the same trigger may
 * come (other disk writers raise the same IRQ), 0 for a cause only we make;
 * only then is the wakeup (made just before the cause) sure to be inside. */
static void run_case(const char *trigger, const char *kind, void (*cause)(void), pid_t sleeper_tid,
                     int64_t slack_ns)
{
	const char *args[] = { "--window", "40ms", "--trigger", trigger, "--once", "--output",
			       workdir, NULL };
	struct service s = { .pid = -1 };
	char path[4096];
	int64_t lo, hi;
	int status = -1;

	fprintf(stderr, "--- case %s\n", trigger);
	if (service_start(&s, args) < 0) {
		CHECK(!"service armed");
		if (s.pid > 0) {
			kill(s.pid, SIGTERM);
			waitpid(s.pid, NULL, 0);
		}
		return;
	}
	workload(cause, &lo, &hi);
	CHECK_INT(service_finish(&s, path, sizeof(path), &status), 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (path[0])
		check_incident(path, lo - slack_ns, hi + 5000000, kind, sleeper_tid, slack_ns == 0);
}

int main(void)
{
	pthread_t busy, kbusy, sleeper;
	pid_t sleeper_tid;
	char irq_spec[64];

	SPTD_REQUIRE_ROOT();
	bin = getenv("SPTD_BIN");
	snprintf(recorder, sizeof(recorder), "%s%d", "record", (int)getpid());
	if (!bin || access(bin, X_OK) != 0)
		SPTD_SKIP("SPTD_BIN does not name the built sysptd");
	if (access("/sys/kernel/tracing/events", F_OK) != 0 && system("mount -t tracefs nodev /sys/kernel/tracing") != 0)
		SPTD_SKIP("no tracefs");
	snprintf(workdir, sizeof(workdir), "/tmp/sptd-record-XXXXXX");
	if (!mkdtemp(workdir))
		return 1;
	setenv("SYSPTD_RUNDIR", workdir, 1);
	main_tid = (pid_t)gettid();
	if (pipe(wake_pipe) < 0)
		return 1;
	pthread_create(&busy, NULL, busy_main, NULL);
	pthread_create(&kbusy, NULL, kbusy_main, NULL);
	pthread_create(&sleeper, NULL, sleeper_main, NULL);
	/* the sleeper names itself, then says its tid (thread ids need not
	 * follow the pid: they wrap around on a busy machine) */
	for (int i = 0; i < 2000 && atomic_load(&sleeper_tid_pub) == 0; i++)
		sleep_ms(1);
	sleeper_tid = (pid_t)atomic_load(&sleeper_tid_pub);
	sleep_ms(50);
	CHECK(sleeper_tid > 0);

	run_case("tracepoint=sched:sched_process_exit,filter=comm==\"sptd-trigger\"", "tracepoint=sched:sched_process_exit,filter=comm==\"sptd-trigger\"",
	         cause_exit, sleeper_tid, 0);
	disk_irq = find_disk_irq();
	if (disk_irq < 0) {
		SPTD_SKIP_PART("no IRQ follows fsync on /var/tmp here (tmpfs?): the irq case did not run");
	} else {
		snprintf(irq_spec, sizeof(irq_spec), "irq=%d", disk_irq);
		run_case(irq_spec, irq_spec, cause_disk_irq, sleeper_tid, 50000000);
	}

	atomic_store(&stop_busy, 1);
	(void)!write(wake_pipe[1], "q", 1);
	pthread_join(busy, NULL);
	pthread_join(kbusy, NULL);
	pthread_join(sleeper, NULL);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", workdir);
		(void)!system(cmd);
	}
	return SPTD_TEST_END();
}
