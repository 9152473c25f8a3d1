/* sideband.c — the PT sideband from bytes: the records of the PT event's
 * and the sideband dummy event's data rings, as stored back to back in
 * raw_sideband, walked and decoded by the one record parser (record.c)
 * with the layout sysptd opens those events with. */
#include <errno.h>
#include <string.h>

#include "perf-local.h"

uint64_t sptd_col_pt_sideband_sample_type(void)
{
	return SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU;
}

int sptd_col_pt_sideband_parse(const void *buf, size_t len, uint64_t sample_type,
                               sptd_col_perf_record_fn fn, void *ctx)
{
	const struct sptd_col_perf_layout layout = {
		.sample_type = sample_type,
		.sample_id_all = 1,
	};
	const unsigned char *p = buf;
	size_t off = 0;
	int count = 0, ret;

	if ((!buf && len) || !fn)
		return -EINVAL;
	while (off < len) {
		struct sptd_col_perf_record r;

		/* a zero type is no record: the rest is not sideband */
		if (sptd_col_perf_record_parse(p + off, len - off, &layout, &r) < 0 || r.type == 0)
			return -EBADMSG;
		ret = fn(ctx, &r);
		if (ret < 0)
			return ret;
		count++;
		off += r.size;
	}
	return count;
}
