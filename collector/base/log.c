/* log.c — the one log hook of the program: library code reports through
 * sptd_col_log(), the program decides where it goes (stderr, syslog). */
#include <stdarg.h>
#include <stdio.h>

#include "sptd_col_base.h"

static sptd_log_fn log_fn;   /* NULL: messages are dropped */
static void *log_ctx;        /* handed back to log_fn */

void sptd_col_set_log(sptd_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

void sptd_col_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(log_ctx, level, msg);
}
