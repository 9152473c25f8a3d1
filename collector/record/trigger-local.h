/* trigger-local.h — trigger sources of the recording service. */
#ifndef SPTD_TRIGGER_LOCAL_H
#define SPTD_TRIGGER_LOCAL_H

#include <stdint.h>

#include "sptd_col_base.h"
#include "sptd_col_record.h"

/* A trigger that fired: what, where, when (CLOCK_MONOTONIC ns). */
struct sptd_col_fire {
	int64_t ts;
	int cpu;                    /* -1: not tied to a CPU (timer, manual) */
	const struct sptd_col_trigger_spec *spec;
	char detail[256];           /* e.g. "irq 36 virtio1-req.0 took 12us" */
};

/* One armed trigger: perf events per CPU or a timerfd. */
struct sptd_col_trigger;

/* Arm @spec on every CPU in @cpus (count @ncpus).  Tracepoints are resolved
 * and filters applied here, so a missing event or a bad filter fails now,
 * with @err saying which.  -ENOENT, -EINVAL, -EOPNOTSUPP (latency, uprobe:
 * not in this version), -EACCES. */
int sptd_col_trigger_create(const struct sptd_col_trigger_spec *spec,
                            const int *cpus, int ncpus,
                            struct sptd_col_trigger **out, char *err, size_t errlen);
/* As sptd_col_trigger_create, and where the trigger is a perf event that
 * fires on every hit (irq without min=, tracepoint, uprobe) and @pt_fds is
 * not NULL: each CPU's event joins the group of the intel_pt event
 * @pt_fds[i] (for @cpus[i]) with aux_pause set, so the kernel pauses PT on
 * the CPU where the trigger fired (AUX pause, Linux 6.13+).  A kernel that
 * refuses it gets plain events: see sptd_col_trigger_aux_pause().  @pt_fds
 * is only read during the call. */
int sptd_col_trigger_create_aux(const struct sptd_col_trigger_spec *spec, const int *cpus,
                                int ncpus, const int *pt_fds, struct sptd_col_trigger **out,
                                char *err, size_t errlen);
/* 1 when every CPU's event of @t pauses PT in the kernel; else 0, and
 * *@refused (may be NULL) is the errno the kernel refused it with (0: not
 * asked, or not a kind that can). */
int sptd_col_trigger_aux_pause(const struct sptd_col_trigger *t, int *refused);
/* The fds to poll for input (count returned, at most @max). */
int sptd_col_trigger_fds(const struct sptd_col_trigger *t, int *fds, int max);
/* Drain pending input; 1 and *fire filled when the trigger fired (the
 * earliest qualifying hit at or after @not_before, ns), 0 when not.  Hits
 * before @not_before (warm-up, cooldown) are consumed and ignored. */
int sptd_col_trigger_check(struct sptd_col_trigger *t, int64_t not_before,
                           struct sptd_col_fire *fire);
/* Throw away hits up to now (after a capture, so a storm during the
 * capture does not fire again at once). */
void sptd_col_trigger_drain(struct sptd_col_trigger *t);
void sptd_col_trigger_destroy(struct sptd_col_trigger *t);


#endif
