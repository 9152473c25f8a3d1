/* tsc.c — the one conversion of TSC values to nanoseconds on the incident
 * clock.  PT timestamps (the decode session) and ftrace's x86-tsc clock
 * (collector/derive) go through it, and so does the recorder when it ties
 * the TSC to CLOCK_MONOTONIC, so that every table lands on one clock. */
#include <stdint.h>

#include "sptd_dec.h"

/* @v as an int64, INT64_MAX when it does not fit. */
static int64_t clamp_ns(unsigned __int128 v)
{
	return v > (unsigned __int128)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The parameters come from incident files and perf.data headers, so any
 * value is possible: a shift of 128 or more leaves nothing, and a result
 * beyond the int64 range saturates instead of overflowing. */
int64_t sptd_dec_tsc_ns(const struct sptd_dec_tsc *conv, uint64_t tsc)
{
	int64_t ns;

	if (!conv)
		return (int64_t)tsc;
	if (conv->mult) {
		unsigned __int128 v = (unsigned __int128)(tsc - conv->zero) * conv->mult;
		/* modulo 2^64, as perf does: a TSC just before the zero point
		 * gives a small negative time */
		int64_t scaled = (int64_t)(uint64_t)(conv->shift < 128 ? v >> conv->shift : 0);

		if (__builtin_add_overflow(conv->offset_ns, scaled, &ns))
			ns = scaled > 0 ? INT64_MAX : INT64_MIN;
		return ns;
	}
	if (conv->hz)
		return clamp_ns((unsigned __int128)tsc * 1000000000u / conv->hz);
	return (int64_t)tsc;
}
