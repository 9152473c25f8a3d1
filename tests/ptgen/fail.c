/* fail.c — the generator's last error message (sptd-ptgen's and
 * sptd-spegen's, which shares tracer.c and symtab.c), for main() to print. */
#include <stdarg.h>
#include <stdio.h>

#include "ptgen.h"

static char sptd_ptgen_msg[512];

int sptd_ptgen_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sptd_ptgen_msg, sizeof(sptd_ptgen_msg), fmt, ap);
	va_end(ap);
	return err;
}

const char *sptd_ptgen_err(void)
{
	return sptd_ptgen_msg;
}
