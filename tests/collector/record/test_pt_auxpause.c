/* test_pt_auxpause.c — AUX pause through the fake intel_pt PMU, whose
 * groups are checked as the kernel checks them (one clock, one CPU): a
 * trigger that is a perf event (tracepoint, uprobe, irq without min=)
 * opens as a group sibling of the PT event of its CPU with aux_pause set,
 * on the PT event's clock; a hit stops that CPU's PT for good until the
 * service resumes it through the aux_resume siblings (cpu-clock,
 * PERF_EVENT_IOC_REFRESH), from a second thread held by a real cpuset
 * cgroup to CPU 0; a CPU that cannot be resumed becomes a gap row; a
 * kernel before 6.13 and a refused group are told apart, get plain events,
 * and nothing half-grouped stays open. */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fakepmu/fakepmu.h"
#include "pt-local.h"
#include "sptd_sched.h"
#include "sptd_store.h"
#include "trigger-local.h"
#include "sptd_test.h"

#define NCPU 2

static uint32_t aux_action(const struct perf_event_attr *a)
{
	uint32_t v;

	memcpy(&v, (const char *)a + offsetof(struct perf_event_attr, aux_sample_size) + 4,
	       sizeof(v));
	return v;
}

/* Index of the PT event of @cpu among the fake's events. */
static int pt_index(int cpu)
{
	for (int i = 0;; i++) {
		int c = -1;
		const struct perf_event_attr *a = fakepmu_attr(i, &c);

		if (!a)
			return -1;
		if (a->type == 42 && c == cpu)
			return i;
	}
}

/* A thread that resumes PT from a cpuset cgroup holding CPU 0 only (as a
 * service confined by its unit), where moving to CPU 1 is refused. */
struct resumer {
	struct sptd_col_pt *pt;      /* what to resume */
	int ret;                     /* sptd_col_pt_resume's return */
	int in_cpuset;               /* 1: it ran inside the cpuset */
	int tid;                     /* its thread id */
	char why[320];               /* why not in the cpuset */
};

static int put_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fputs(text, f) >= 0;
	ok = (fclose(f) == 0) && ok;
	return ok ? 0 : -EIO;
}

static void *resume_thread(void *arg)
{
	struct resumer *r = arg;
	char dir[128], path[192], tid[32];
	cpu_set_t one;
	int made = 0;

	r->tid = (int)syscall(SYS_gettid);
	snprintf(tid, sizeof(tid), "%d", r->tid);
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/cpuset/sptd-test-auxpause-%d", (int)getpid());
	if (mkdir(dir, 0755) == 0) {
		made = 1;
		snprintf(path, sizeof(path), "%s/cpuset.cpus", dir);
		if (put_text(path, "0") == 0) {
			snprintf(path, sizeof(path), "%s/cpuset.mems", dir);
			if (put_text(path, "0") == 0) {
				snprintf(path, sizeof(path), "%s/tasks", dir);
				r->in_cpuset = put_text(path, tid) == 0;
			}
		}
		if (!r->in_cpuset)
			snprintf(r->why, sizeof(r->why), "cannot set up %s", dir);
	} else {
		snprintf(r->why, sizeof(r->why), "mkdir %s: %s", dir, strerror(errno));
	}
	/* CPU 1 really is out of reach from here */
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	if (r->in_cpuset)
		CHECK(sched_setaffinity(0, sizeof(one), &one) < 0);
	r->ret = sptd_col_pt_resume(r->pt);
	if (r->in_cpuset && put_text("/sys/fs/cgroup/cpuset/tasks", tid) < 0)
		fprintf(stderr, "cannot move thread %s back to the root cpuset\n", tid);
	if (made && rmdir(dir) < 0)
		fprintf(stderr, "cannot remove %s: %s\n", dir, strerror(errno));
	return NULL;
}

int main(void)
{
	char root[] = "/tmp/sptd-ptaux-XXXXXX", err[512], cmd[128];
	int cpus[NCPU] = { 0, 1 }, pt_fds[NCPU], first, n;
	struct sptd_col_pt_config cfg = { .cpus = cpus, .ncpus = NCPU,
	                                  .req = { .window_ns = 1000 } };
	struct sptd_col_trigger_spec spec, irqmin;
	struct sptd_col_trigger *t = NULL;
	struct sptd_col_pt *pt = NULL;
	int refused = -1, pause_fds[NCPU];
	int64_t perf_offset = 0;

	if (geteuid() != 0)
		SPTD_SKIP("needs root (tracefs tracepoint ids)");
	if (sysconf(_SC_NPROCESSORS_ONLN) < NCPU)
		SPTD_SKIP("needs %d online CPUs", NCPU);
	sptd_sched_tracefs_ensure();
	if (!mkdtemp(root))
		SPTD_SKIP("no temp dir");
	CHECK_INT(fakepmu_sysfs(root, FAKEPMU_SKYLAKE, 42), 0);
	sptd_col_pt_set_sysfs_root(root);
	fakepmu_install(42, NULL, 0, 0);
	CHECK_INT(sptd_col_pt_create(&cfg, &pt, err, sizeof(err)), 0);
	if (!pt)
		goto out;
	for (int i = 0; i < NCPU; i++) {
		pt_fds[i] = sptd_col_pt_fd(pt, cpus[i]);
		CHECK_INT(pt_fds[i], fakepmu_event_fd(pt_index(cpus[i])));
		/* the PT event itself starts running, not paused */
		CHECK_INT(aux_action(fakepmu_attr(pt_index(cpus[i]), NULL)), 0);
	}
	CHECK_INT(sptd_col_pt_fd(pt, 77), -ENOENT);
	CHECK_INT(sptd_col_pt_fd(NULL, 0), -EINVAL);

	/* a kernel without AUX pause: the resume siblings are refused, and
	 * none stays open */
	n = fakepmu_open_count();
	fakepmu_fail_grouped(EINVAL);
	CHECK_INT(sptd_col_pt_resume_open(pt, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "aux_resume") != NULL);
	CHECK_INT(fakepmu_open_count(), n);
	fakepmu_fail_grouped(0);

	/* with AUX pause: one aux_resume sibling per CPU, a disabled sampling
	 * cpu-clock that REFRESH fires on its own CPU (no affinity needed) */
	first = n;
	for (int i = 0; fakepmu_attr(i, NULL); i++)
		first = i + 1;
	CHECK_INT(sptd_col_pt_resume_open(pt, err, sizeof(err)), 0);
	for (int i = 0; i < NCPU; i++) {
		int c = -1;
		const struct perf_event_attr *a = fakepmu_attr(first + i, &c);

		CHECK(a != NULL);
		if (!a)
			break;
		CHECK_INT(c, cpus[i]);
		CHECK_INT(a->type, PERF_TYPE_SOFTWARE);
		CHECK_INT(a->config, PERF_COUNT_SW_CPU_CLOCK);
		CHECK(a->sample_period > 0);
		CHECK_INT(a->disabled, 1);
		CHECK_INT(aux_action(a), SPTD_PERF_AUX_RESUME);
		CHECK_INT(fakepmu_group_fd(first + i), pt_fds[i]);
	}
	CHECK_INT(sptd_col_pt_resume(NULL), -EINVAL);

	/* a tracepoint trigger: grouped under PT with aux_pause, on the PT
	 * event's clock (the kernel groups one clock only) */
	CHECK_INT(sptd_col_parse_trigger("tracepoint=sched:sched_switch", &spec, err, sizeof(err)), 0);
	first = first + NCPU;
	CHECK_INT(sptd_col_trigger_create_aux(&spec, cpus, NCPU, pt_fds, &perf_offset, &t, err,
	                                      sizeof(err)), 0);
	CHECK_INT(sptd_col_trigger_aux_pause(t, &refused), 1);
	CHECK_INT(refused, 0);
	CHECK_INT(sptd_col_trigger_aux_why(t), SPTD_TRIG_AUX_OK);
	for (int i = 0; i < NCPU; i++) {
		int c = -1;
		const struct perf_event_attr *a = fakepmu_attr(first + i, &c);

		CHECK(a != NULL);
		if (!a)
			break;
		CHECK_INT(c, cpus[i]);
		CHECK_INT(a->type, PERF_TYPE_TRACEPOINT);
		CHECK_INT(aux_action(a), SPTD_PERF_AUX_PAUSE);
		CHECK_INT(a->use_clockid, 0);
		CHECK_INT(fakepmu_group_fd(first + i), pt_fds[i]);
		pause_fds[i] = fakepmu_event_fd(first + i);
	}
	{
		struct sptd_col_fire fire;

		/* the trigger still reads its (fake) rings */
		CHECK_INT(sptd_col_trigger_check(t, 0, &fire), 0);
		/* a hit is stamped on the perf clock (the group's); the trigger
		 * sees it on CLOCK_MONOTONIC through the PT source's offset,
		 * read at the hit */
		perf_offset = 5000000000ll;
		CHECK_INT(fakepmu_put_sample(pause_fds[1], 123456789, cpus[1]), 0);
		CHECK_INT(sptd_col_trigger_check(t, 0, &fire), 1);
		CHECK(fire.ts == 5000000000ll + 123456789);
		CHECK_INT(fire.cpu, cpus[1]);
		perf_offset = 0;
	}

	/* hits pause PT on both CPUs, for good across disable/enable ... */
	CHECK_INT(sptd_col_pt_enable(pt), 0);
	for (int i = 0; i < NCPU; i++) {
		CHECK_INT(fakepmu_fire(pause_fds[i]), 0);
		CHECK_INT(fakepmu_pt_paused(cpus[i]), 1);
	}
	CHECK_INT(sptd_col_pt_freeze(pt), 0);
	CHECK_INT(sptd_col_pt_enable(pt), 0);
	CHECK_INT(fakepmu_pt_paused(cpus[0]), 1);
	/* ... until the service resumes them: from a thread that is not the
	 * main one, held by a cpuset to CPU 0 only */
	{
		struct resumer r = { .pt = pt, .ret = -1 };
		pthread_t th;

		CHECK_INT(pthread_create(&th, NULL, resume_thread, &r), 0);
		pthread_join(th, NULL);
		if (!r.in_cpuset)
			fprintf(stderr, "note: no cpuset cgroup here (%s): resumed from a second "
			        "thread without one\n", r.why);
		if (r.ret != NCPU)
			fprintf(stderr, "resume from thread %d (cpuset %s): %d CPUs resumed, want %d\n",
			        r.tid, r.in_cpuset ? "{0}" : "none", r.ret, NCPU);
		CHECK_INT(r.ret, NCPU);
		for (int i = 0; i < NCPU; i++)
			CHECK_INT(fakepmu_pt_paused(cpus[i]), 0);
	}
	/* a CPU whose resume fails is said in the next incident */
	CHECK_INT(fakepmu_fire(pause_fds[1]), 0);
	fakepmu_fail_refresh(ENODEV);
	CHECK_INT(sptd_col_pt_resume(pt), 0);
	fakepmu_fail_refresh(0);
	CHECK_INT(sptd_col_pt_freeze(pt), 0);
	{
		char db[128];
		struct sptd_store *st = NULL;
		int64_t v = -1;

		snprintf(db, sizeof(db), "%s/incident.db", root);
		CHECK_INT(sptd_store_create(db, &st), 0);
		CHECK(sptd_col_pt_write(pt, st) >= 0);
		CHECK_INT(sptd_store_meta_get_int(st, "pt_resume_failed", &v), 0);
		CHECK_INT(v, NCPU);
		CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM gap WHERE cpu = 1 AND "
		                               "reason LIKE 'pt: AUX pause could not be undone%'", &v), 0);
		CHECK_INT(v, 1);
		CHECK_INT(sptd_store_commit(st), 0);
		sptd_store_destroy(st);
	}
	CHECK_INT(sptd_col_pt_enable(pt), 0);
	CHECK_INT(sptd_col_pt_resume(pt), NCPU);
	CHECK_INT(fakepmu_pt_paused(cpus[1]), 0);
	sptd_col_trigger_destroy(t);
	t = NULL;

	/* latency (like irq min=) is decided later, so not a kernel pause */
	CHECK_INT(sptd_col_parse_trigger("latency=1ms", &irqmin, err, sizeof(err)), 0);
	n = sptd_col_trigger_create_aux(&irqmin, cpus, NCPU, pt_fds, &perf_offset, &t, err,
	                                sizeof(err));
	if (n < 0)
		fprintf(stderr, "latency trigger: %s\n", err);
	CHECK_INT(n, 0);
	CHECK_INT(sptd_col_trigger_aux_pause(t, &refused), 0);
	CHECK_INT(refused, 0);
	sptd_col_trigger_destroy(t);
	t = NULL;

	/* a kernel before 6.13 refuses aux_pause (the bits were reserved):
	 * plain events, refusal reported as such */
	fakepmu_fail_grouped(EINVAL);
	n = fakepmu_open_count();
	CHECK_INT(sptd_col_trigger_create_aux(&spec, cpus, NCPU, pt_fds, &perf_offset, &t, err,
	                                      sizeof(err)), 0);
	CHECK_INT(sptd_col_trigger_aux_pause(t, &refused), 0);
	CHECK_INT(refused, EINVAL);
	CHECK_INT(sptd_col_trigger_aux_why(t), SPTD_TRIG_AUX_NO_KERNEL);
	CHECK_INT(fakepmu_open_count(), n);   /* real (ungrouped) events, not the fake's */
	{
		int fds[8];

		CHECK_INT(sptd_col_trigger_fds(t, fds, 8), NCPU);
	}
	sptd_col_trigger_destroy(t);
	t = NULL;
	fakepmu_fail_grouped(0);
	/* a group the kernel refuses (here: each CPU's event offered the
	 * other CPU's PT event) is told apart from an old kernel */
	{
		int swapped[NCPU] = { pt_fds[1], pt_fds[0] };

		CHECK_INT(sptd_col_trigger_create_aux(&spec, cpus, NCPU, swapped, &perf_offset, &t,
		                                      err, sizeof(err)), 0);
		CHECK_INT(sptd_col_trigger_aux_pause(t, &refused), 0);
		CHECK_INT(refused, EINVAL);
		CHECK_INT(sptd_col_trigger_aux_why(t), SPTD_TRIG_AUX_GROUP);
		sptd_col_trigger_destroy(t);
		t = NULL;
	}
	CHECK_INT(sptd_col_trigger_aux_pause(NULL, &refused), 0);
out:
	sptd_col_pt_destroy(pt);
	CHECK_INT(fakepmu_open_count(), 0);
	fakepmu_uninstall();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	return SPTD_TEST_END();
}
