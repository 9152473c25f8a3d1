/* trigger_timer.c — timer=DUR: fires periodically (tests, demos).  A
 * timerfd on CLOCK_MONOTONIC, no perf events: it fires when the service
 * finds it expired, at that moment. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "trigger-kind-local.h"

static int timer_every_hit(const struct sptd_col_trigger_spec *spec)
{
	(void)spec;
	return 0;   /* not a perf event: nothing to pause PT with */
}

static int timer_arm(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                     size_t errlen)
{
	int64_t period = t->spec.period_ns;
	struct itimerspec its = {
		.it_interval = { period / 1000000000, period % 1000000000 },
		.it_value = { period / 1000000000, period % 1000000000 },
	};

	(void)cpus;
	(void)ncpus;
	t->own_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (t->own_fd < 0 || timerfd_settime(t->own_fd, 0, &its, NULL) < 0) {
		int ret = -errno;

		snprintf(err, errlen, "timerfd: %s", strerror(errno));
		return ret;
	}
	return 0;
}

static void timer_describe(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                           int64_t measure, char *buf, size_t len)
{
	(void)h;
	(void)measure;
	snprintf(buf, len, "timer every %" PRId64 " ns", t->spec.period_ns);
}

static int timer_tick(struct sptd_col_trigger *t, int64_t not_before, struct sptd_col_fire *fire)
{
	uint64_t expirations;
	int64_t now;

	if (t->own_fd < 0 ||
	    read(t->own_fd, &expirations, sizeof(expirations)) != (ssize_t)sizeof(expirations))
		return 0;
	now = sptd_col_now_ns();
	if (now < not_before)
		return 0;
	fire->ts = now;
	timer_describe(t, NULL, 0, fire->detail, sizeof(fire->detail));
	return 1;
}

const struct sptd_col_trigger_ops sptd_col_trigger_timer_ops = {
	.kind = SPTD_TRIG_TIMER,
	.every_hit = timer_every_hit,
	.arm = timer_arm,
	.describe = timer_describe,
	.tick = timer_tick,
};
