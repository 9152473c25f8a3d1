/* test_pt_auxpause.c — AUX pause through the fake intel_pt PMU: a trigger
 * that is a perf event (tracepoint, uprobe, irq without min=) opens as a
 * group sibling of the PT event of its CPU with aux_pause set; the PT
 * events get aux_resume siblings (sched_yield tracepoint filtered to this
 * process); a kernel that refuses (fake EINVAL) gets plain events and the
 * refusal is reported, and nothing half-grouped stays open. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "fakepmu/fakepmu.h"
#include "pt-local.h"
#include "sptd_sched.h"
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

int main(void)
{
	char root[] = "/tmp/sptd-ptaux-XXXXXX", err[512], cmd[128];
	int cpus[NCPU] = { 0, 1 }, pt_fds[NCPU], first, n;
	struct sptd_col_pt_config cfg = { .cpus = cpus, .ncpus = NCPU,
	                                  .req = { .window_ns = 1000 } };
	struct sptd_col_trigger_spec spec, irqmin;
	struct sptd_col_trigger *t = NULL;
	struct sptd_col_pt *pt = NULL;
	int refused = -1, id = -1;

	if (geteuid() != 0)
		SPTD_SKIP("needs root (tracefs tracepoint ids)");
	if (sysconf(_SC_NPROCESSORS_ONLN) < NCPU)
		SPTD_SKIP("needs %d online CPUs", NCPU);
	sptd_sched_tracefs_ensure();
	if (sptd_sched_event_exists("syscalls", "sys_enter_sched_yield", &id) != 1)
		SPTD_SKIP("no syscalls:sys_enter_sched_yield tracepoint");
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

	/* with AUX pause: one aux_resume sibling per CPU */
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
		CHECK_INT(a->type, PERF_TYPE_TRACEPOINT);
		CHECK_INT(a->config, id);
		CHECK_INT(aux_action(a), SPTD_PERF_AUX_RESUME);
		CHECK_INT(fakepmu_group_fd(first + i), pt_fds[i]);
	}
	CHECK_INT(sptd_col_pt_resume(pt), NCPU);
	CHECK_INT(sptd_col_pt_resume(NULL), -EINVAL);

	/* a tracepoint trigger: grouped under PT with aux_pause */
	CHECK_INT(sptd_col_parse_trigger("tracepoint=sched:sched_switch", &spec, err, sizeof(err)), 0);
	first = first + NCPU;
	CHECK_INT(sptd_col_trigger_create_aux(&spec, cpus, NCPU, pt_fds, &t, err, sizeof(err)), 0);
	CHECK_INT(sptd_col_trigger_aux_pause(t, &refused), 1);
	CHECK_INT(refused, 0);
	for (int i = 0; i < NCPU; i++) {
		int c = -1;
		const struct perf_event_attr *a = fakepmu_attr(first + i, &c);

		CHECK(a != NULL);
		if (!a)
			break;
		CHECK_INT(c, cpus[i]);
		CHECK_INT(a->type, PERF_TYPE_TRACEPOINT);
		CHECK_INT(aux_action(a), SPTD_PERF_AUX_PAUSE);
		CHECK_INT(fakepmu_group_fd(first + i), pt_fds[i]);
	}
	{
		struct sptd_col_fire fire;

		/* the trigger still reads its (fake) rings */
		CHECK_INT(sptd_col_trigger_check(t, 0, &fire), 0);
	}
	sptd_col_trigger_destroy(t);
	t = NULL;

	/* latency (like irq min=) is decided later, so not a kernel pause */
	CHECK_INT(sptd_col_parse_trigger("latency=1ms", &irqmin, err, sizeof(err)), 0);
	n = sptd_col_trigger_create_aux(&irqmin, cpus, NCPU, pt_fds, &t, err, sizeof(err));
	if (n < 0)
		fprintf(stderr, "latency trigger: %s\n", err);
	CHECK_INT(n, 0);
	CHECK_INT(sptd_col_trigger_aux_pause(t, &refused), 0);
	CHECK_INT(refused, 0);
	sptd_col_trigger_destroy(t);
	t = NULL;

	/* the kernel refuses aux_pause: plain events, refusal reported */
	fakepmu_fail_grouped(EINVAL);
	n = fakepmu_open_count();
	CHECK_INT(sptd_col_trigger_create_aux(&spec, cpus, NCPU, pt_fds, &t, err, sizeof(err)), 0);
	CHECK_INT(sptd_col_trigger_aux_pause(t, &refused), 0);
	CHECK_INT(refused, EINVAL);
	CHECK_INT(fakepmu_open_count(), n);   /* real (ungrouped) events, not the fake's */
	{
		int fds[8];

		CHECK_INT(sptd_col_trigger_fds(t, fds, 8), NCPU);
	}
	sptd_col_trigger_destroy(t);
	t = NULL;
	fakepmu_fail_grouped(0);
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
