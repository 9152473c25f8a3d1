/* tsc.c — the one conversion of TSC values to nanoseconds on the incident
 * clock.  PT timestamps (the decode session) and ftrace's x86-tsc clock
 * (collector/derive) go through it, and so does the recorder when it ties
 * the TSC to CLOCK_MONOTONIC, so that every table lands on one clock. */
#include "sptd_dec.h"

int64_t sptd_dec_tsc_ns(const struct sptd_dec_tsc *conv, uint64_t tsc)
{
	if (!conv)
		return (int64_t)tsc;
	if (conv->mult) {
		unsigned __int128 v = (unsigned __int128)(tsc - conv->zero) * conv->mult;

		return conv->offset_ns + (int64_t)(v >> conv->shift);
	}
	if (conv->hz)
		return (int64_t)((unsigned __int128)tsc * 1000000000u / conv->hz);
	return (int64_t)tsc;
}
