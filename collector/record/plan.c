/* plan.c — the capture plan: how big every buffer must be for the window. */
#include <stdint.h>

#include "record-local.h"

uint64_t sptd_col_record_buffer_kb(const struct sptd_col_record_opts *o)
{
	/* A busy CPU writes ~30 MB/s of sched/irq events; keep twice the span
	 * so the window survives until the freeze lands. */
	uint64_t span_ms = (uint64_t)((o->window_ns + o->post_ns) / 1000000) + 1;
	uint64_t kb = o->buffer_bytes ? o->buffer_bytes / 1024 : span_ms * 64;

	if (!o->buffer_bytes) {
		if (kb < 1024)
			kb = 1024;
		if (kb > 262144)
			kb = 262144;
	}
	return kb;
}

