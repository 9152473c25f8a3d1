/* tsc.c — the one conversion of TSC values to nanoseconds on the incident
 * clock.  PT timestamps (the decode session) and ftrace's x86-tsc clock
 * (collector/derive) go through it, and so does the recorder when it ties
 * the TSC to CLOCK_MONOTONIC, so that every table lands on one clock. */
#include <stdint.h>

#include "sptd_dec.h"

/* Every time on the incident clock lies within +-(2^62 - 1) ns (146 years
 * of the clock's zero): a span between two of them then always fits an
 * int64, whatever a hostile TSC or conversion says.  Real clocks (ns since
 * boot, a TSC since reset) are far inside. */
#define NS_LIMIT ((INT64_C(1) << 62) - 1)

/* @v as a time, NS_LIMIT when beyond it. */
static int64_t clamp_ns(unsigned __int128 v)
{
	return v > (unsigned __int128)NS_LIMIT ? NS_LIMIT : (int64_t)v;
}

static int64_t clamp_signed(int64_t ns)
{
	return ns > NS_LIMIT ? NS_LIMIT : ns < -NS_LIMIT ? -NS_LIMIT : ns;
}

/* The parameters come from incident files and perf.data headers, so any
 * value is possible: a shift of 128 or more leaves nothing, and a result
 * beyond +-NS_LIMIT saturates there instead of overflowing. */
int64_t sptd_dec_tsc_ns(const struct sptd_dec_tsc *conv, uint64_t tsc)
{
	int64_t ns;

	if (!conv)
		return clamp_ns(tsc);
	if (conv->mult) {
		unsigned __int128 v = (unsigned __int128)(tsc - conv->zero) * conv->mult;
		/* modulo 2^64, as perf does: a TSC just before the zero point
		 * gives a small negative time */
		int64_t scaled = (int64_t)(uint64_t)(conv->shift < 128 ? v >> conv->shift : 0);

		if (__builtin_add_overflow(conv->offset_ns, scaled, &ns))
			ns = scaled > 0 ? INT64_MAX : INT64_MIN;
		return clamp_signed(ns);
	}
	if (conv->hz)
		return clamp_ns((unsigned __int128)tsc * 1000000000u / conv->hz);
	return clamp_ns(tsc);
}
