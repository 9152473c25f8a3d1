/* test_sched_trace.c — the ftrace instance on the real tracefs (root):
 * stale-instance replacement, settings, freeze triggers (missing event, bad
 * filter, a filtered trigger that really stops the ring), destroy, and
 * argument checks of every function. */
#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sptd_sched.h"
#include "sptd_test.h"

#define TRACEFS "/sys/kernel/tracing"

static char inst_dir[256];

/* Contents of a file under the instance, trailing newline cut; "" on error. */
static const char *inst_read(const char *file)
{
	static char buf[4096];
	char path[512];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", inst_dir, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

static int inst_write(const char *file, const char *text)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", inst_dir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* 1 if the trigger file @file of the instance has an armed trigger
 * containing @what (the "# Available triggers" header does not count). */
static int has_trigger(const char *file, const char *what)
{
	const char *text = inst_read(file), *line;

	for (line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *nl = strchr(line, '\n');
		const char *hit = strstr(line, what);

		if (line[0] != '#' && hit && (!nl || hit < nl))
			return 1;
	}
	return 0;
}

/* Run a child that renames itself to @comm and exits at once. */
static void run_exiting(const char *comm)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_NAME, comm, 0, 0, 0);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static char last_log[1024];

static void keep_log(void *ctx, int level, const char *msg)
{
	if (strstr(msg, "stale"))
		snprintf(last_log, sizeof(last_log), "%s", msg);
}

static int drop_raw(void *ctx, enum sptd_sched_raw_kind kind, const char *name, int cpu,
                    int seq, const void *data, size_t len)
{
	return 0;
}

static void check_args(struct sptd_sched_trace *tr)
{
	struct sptd_sched_config cfg = { .instance = "sptd_args", .buffer_kb = 64 };
	struct sptd_sched_trace *bad = (struct sptd_sched_trace *)1;
	int id = -1;

	CHECK_INT(sptd_sched_trace_create(NULL, &bad), -EINVAL);
	CHECK(bad == NULL);
	CHECK_INT(sptd_sched_trace_create(&cfg, NULL), -EINVAL);
	cfg.instance = NULL;
	CHECK_INT(sptd_sched_trace_create(&cfg, &bad), -EINVAL);
	cfg.instance = "";
	CHECK_INT(sptd_sched_trace_create(&cfg, &bad), -EINVAL);
	cfg.instance = "../escape";
	CHECK_INT(sptd_sched_trace_create(&cfg, &bad), -EINVAL);
	cfg.instance = "..";
	CHECK_INT(sptd_sched_trace_create(&cfg, &bad), -EINVAL);
	cfg.instance = "sptd_args";
	cfg.clock = "no such clock";
	CHECK_INT(sptd_sched_trace_create(&cfg, &bad), -EINVAL);
	cfg.clock = "nosuchclock";   /* well-formed, refused by the kernel */
	CHECK_INT(sptd_sched_trace_create(&cfg, &bad), -EINVAL);
	CHECK(bad == NULL);
	CHECK(access(TRACEFS "/instances/sptd_args", F_OK) != 0);

	CHECK_INT(sptd_sched_trace_freeze_on(NULL, "sched", "sched_switch", NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_freeze_on(tr, NULL, "sched_switch", NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", NULL, NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", "../../x", NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", "sched_switch", ""), -EINVAL);
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", "sched_switch", "a\nb"), -EINVAL);
	CHECK_INT(sptd_sched_trace_start(NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_stop(NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_is_on(NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_reset(NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_present(NULL), -EINVAL);
	CHECK_INT(sptd_sched_instance_exists(NULL), -EINVAL);
	CHECK_INT(sptd_sched_instance_exists("../x"), -EINVAL);
	CHECK_INT(sptd_sched_trace_capture(NULL, drop_raw, NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_capture(tr, NULL, NULL), -EINVAL);
	CHECK_STR(sptd_sched_trace_error(NULL), "");
	sptd_sched_trace_destroy(NULL);

	CHECK_INT(sptd_sched_event_exists(NULL, "sched_switch", NULL), -EINVAL);
	CHECK_INT(sptd_sched_event_exists("sched", NULL, NULL), -EINVAL);
	CHECK_INT(sptd_sched_event_exists("sched/..", "x", NULL), -EINVAL);
	CHECK_INT(sptd_sched_event_exists("sched", "sched_switch", &id), 1);
	CHECK(id > 0);
	CHECK_INT(sptd_sched_event_exists("sched", "no_such_event", NULL), 0);
	CHECK_INT(sptd_sched_event_exists("no_such_system", "x", NULL), 0);
}

int main(void)
{
	char name[64];
	struct sptd_sched_config cfg = { .buffer_kb = 256, .clock = "mono", .irq = 1,
	                                 .softirq = 1 };
	struct sptd_sched_trace *tr = NULL;
	int i, on = -1;

	SPTD_REQUIRE_ROOT();
	if (sptd_sched_tracefs_ensure() < 0)
		SPTD_SKIP("no tracefs at " TRACEFS " and it cannot be mounted");
	snprintf(name, sizeof(name), "sptd_test_trace_%d", (int)getpid());
	snprintf(inst_dir, sizeof(inst_dir), TRACEFS "/instances/%s", name);
	cfg.instance = name;

	/* a stale instance, as a killed run leaves it: tracing, an event on,
	 * a trigger armed */
	CHECK_INT(mkdir(inst_dir, 0755), 0);
	CHECK_INT(inst_write("events/sched/sched_switch/enable", "1"), 0);
	CHECK_INT(inst_write("events/sched/sched_wakeup/trigger", "traceoff if pid == 1"), 0);
	CHECK(has_trigger("events/sched/sched_wakeup/trigger", "traceoff"));
	/* and a one-shot one, as freeze_on installs them */
	CHECK_INT(inst_write("events/sched/sched_process_fork/trigger", "traceoff:1 if parent_pid == 1"), 0);
	CHECK(has_trigger("events/sched/sched_process_fork/trigger", "traceoff"));

	sptd_sched_set_log(keep_log, NULL);
	CHECK_INT(sptd_sched_trace_create(&cfg, &tr), 0);
	CHECK(strstr(last_log, "removed stale ftrace instance") != NULL);
	if (!tr)
		SPTD_SKIP("cannot create an ftrace instance: %s", strerror(errno));
	CHECK(access(inst_dir, F_OK) == 0);
	CHECK(!has_trigger("events/sched/sched_wakeup/trigger", "traceoff"));
	CHECK(!has_trigger("events/sched/sched_process_fork/trigger", "traceoff"));
	CHECK_STR(inst_read("tracing_on"), "0");
	CHECK_STR(inst_read("options/overwrite"), "1");
	CHECK(atoi(inst_read("buffer_size_kb")) >= 256);   /* rounded up to pages */
	CHECK(strstr(inst_read("trace_clock"), "[mono]") != NULL);
	CHECK_STR(inst_read("events/sched/sched_switch/enable"), "1");
	CHECK_STR(inst_read("events/sched/sched_waking/enable"), "1");
	CHECK_STR(inst_read("events/sched/sched_process_exit/enable"), "1");
	CHECK_STR(inst_read("events/irq/irq_handler_entry/enable"), "1");
	CHECK_STR(inst_read("events/irq/softirq_exit/enable"), "1");
	CHECK_INT(sptd_sched_trace_is_on(tr), 0);

	check_args(tr);

	/* freeze triggers */
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", "no_such_event", NULL), -ENOENT);
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "no_such_sys", "x", NULL), -ENOENT);
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", "sched_process_exit",
	                                     "no_such_field == 1"), -EINVAL);
	CHECK(strlen(sptd_sched_trace_error(tr)) > 0);
	CHECK(!has_trigger("events/sched/sched_process_exit/trigger", "traceoff"));
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", "sched_process_exit",
	                                     "comm == \"sptd_other\""), 0);
	/* a second freeze_on replaces the first (the kernel allows one) */
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", "sched_process_exit",
	                                     "comm == \"sptd_freeze\""), 0);
	CHECK(has_trigger("events/sched/sched_process_exit/trigger", "sptd_freeze"));
	CHECK(!has_trigger("events/sched/sched_process_exit/trigger", "sptd_other"));

	CHECK_INT(sptd_sched_trace_start(tr), 0);
	CHECK_INT(sptd_sched_trace_is_on(tr), 1);
	run_exiting("sptd_other");       /* does not match the filter */
	usleep(20000);
	CHECK_INT(sptd_sched_trace_is_on(tr), 1);
	run_exiting("sptd_freeze");      /* matches: the kernel turns tracing off */
	for (i = 0; i < 100 && (on = sptd_sched_trace_is_on(tr)) == 1; i++)
		usleep(10000);
	CHECK_INT(on, 0);
	CHECK_STR(inst_read("tracing_on"), "0");

	/* one shot: after the freeze it is spent, a second match does nothing */
	CHECK(has_trigger("events/sched/sched_process_exit/trigger", "count=0"));
	CHECK_INT(sptd_sched_trace_start(tr), 0);
	run_exiting("sptd_freeze");
	usleep(20000);
	CHECK_INT(sptd_sched_trace_is_on(tr), 1);
	/* off: removed from the kernel; on again: armed again */
	CHECK_INT(sptd_sched_trace_freeze_off(tr), 0);
	CHECK(!has_trigger("events/sched/sched_process_exit/trigger", "traceoff"));
	CHECK_INT(sptd_sched_trace_freeze_off(tr), 0);
	CHECK_INT(sptd_sched_trace_freeze_off(NULL), -EINVAL);
	CHECK_INT(sptd_sched_trace_freeze_on(tr, "sched", "sched_process_exit",
	                                     "comm == \"sptd_freeze\""), 0);
	CHECK(has_trigger("events/sched/sched_process_exit/trigger", "count=1"));
	run_exiting("sptd_freeze");
	for (i = 0; i < 100 && (on = sptd_sched_trace_is_on(tr)) == 1; i++)
		usleep(10000);
	CHECK_INT(on, 0);

	/* re-arm after a freeze; stop; reset empties the rings */
	CHECK_INT(sptd_sched_trace_start(tr), 0);
	CHECK_INT(sptd_sched_trace_is_on(tr), 1);
	usleep(10000);
	CHECK_INT(sptd_sched_trace_stop(tr), 0);
	CHECK_INT(sptd_sched_trace_is_on(tr), 0);
	CHECK_INT(sptd_sched_trace_reset(tr), 0);
	CHECK_INT(sptd_sched_trace_capture(tr, drop_raw, NULL), 0);
	CHECK_INT(sptd_sched_trace_present(tr), 1);

	/* issue 28.9: another root program removes the instance (the kernel
	 * lets it while none of its files is open), then makes one of its
	 * own under the same name: neither is ours, and destroying ours
	 * leaves theirs alone */
	CHECK_INT(rmdir(inst_dir), 0);
	CHECK_INT(sptd_sched_trace_present(tr), 0);
	CHECK(sptd_sched_trace_reset(tr) < 0);
	CHECK_INT(sptd_sched_instance_exists(name), 0);
	CHECK_INT(mkdir(inst_dir, 0755), 0);
	CHECK_INT(sptd_sched_trace_present(tr), 0);
	CHECK_INT(sptd_sched_instance_exists(name), 1);
	last_log[0] = '\0';
	sptd_sched_trace_destroy(tr);
	CHECK(access(inst_dir, F_OK) == 0);
	CHECK_INT(last_log[0], '\0');
	CHECK_INT(rmdir(inst_dir), 0);

	/* and one created again is present (what the service does then) */
	CHECK_INT(sptd_sched_trace_create(&cfg, &tr), 0);
	CHECK_INT(sptd_sched_trace_present(tr), 1);
	sptd_sched_trace_destroy(tr);
	CHECK(access(inst_dir, F_OK) != 0);
	return SPTD_TEST_END();
}
