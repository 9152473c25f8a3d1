/* log.c — the one place sched/ reports warnings: a hook the program sets. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sched-local.h"

static sptd_log_fn sched_log_fn;   /* NULL: stay silent */
static void *sched_log_ctx;        /* handed back to sched_log_fn */

void sptd_sched_set_log(sptd_log_fn fn, void *ctx)
{
	sched_log_fn = fn;
	sched_log_ctx = ctx;
}

void sptd_sched_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!sched_log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sched_log_fn(sched_log_ctx, level, msg);
}

int sptd_sched_name_ok(const char *s)
{
	size_t n;

	if (!s)
		return 0;
	n = strlen(s);
	if (n == 0 || n >= SPTD_SCHED_NAME_LEN / 2)
		return 0;
	if (strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	return 1;
}
