/* trigger_tracepoint.c — tracepoint=SYS:EVENT[,filter=EXPR]: that
 * tracepoint hit.  One event per CPU, filtered in the kernel with the
 * ftrace filter as given; every hit fires. */
#include <stdio.h>

#include "trigger-kind-local.h"

static int tracepoint_every_hit(const struct sptd_col_trigger_spec *spec)
{
	(void)spec;
	return 1;
}

static int tracepoint_arm(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                          size_t errlen)
{
	return sptd_col_trigger_events_tracepoint(t, t->spec.system, t->spec.event, t->spec.filter,
	                                          SPTD_TRIG_ROLE_HIT, SPTD_TRIG_EV_PAUSE, cpus,
	                                          ncpus, err, errlen);
}

static void tracepoint_describe(const struct sptd_col_trigger *t,
                                const struct sptd_col_trigger_hit *h, int64_t measure,
                                char *buf, size_t len)
{
	(void)h;
	(void)measure;
	snprintf(buf, len, "%s:%s", t->spec.system, t->spec.event);
}

/* The kernel can freeze ftrace at the tracepoint itself, with its filter. */
static int tracepoint_freeze_point(const struct sptd_col_trigger_spec *spec, char *system,
                                   size_t syslen, char *event, size_t evlen, char *filter,
                                   size_t filterlen)
{
	snprintf(system, syslen, "%s", spec->system);
	snprintf(event, evlen, "%s", spec->event);
	snprintf(filter, filterlen, "%s", spec->filter);
	return 1;
}

const struct sptd_col_trigger_ops sptd_col_trigger_tracepoint_ops = {
	.kind = SPTD_TRIG_TRACEPOINT,
	.every_hit = tracepoint_every_hit,
	.arm = tracepoint_arm,
	.describe = tracepoint_describe,
	.freeze_point = tracepoint_freeze_point,
};
