/* fuzz_perfdata.c — the perf.data reader (collector/import) on hostile
 * files: header, attrs and ids, feature sections, the record walk, every
 * record decoded with the layout of its event, feature strings, the
 * command line and the sched_switch format of TRACING_DATA.
 *
 * Input: the whole file.  Seeds: the perf.data captures of the shared
 * fixtures (real-pt/hase-*, libxdc-* repacked) and small files the tests
 * write.  fuzz_pdimport runs the whole import (store, decode) on the same
 * inputs; this one is the fast reader alone. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "perfdata-local.h"

static char input_path[PATH_MAX];

/* What the walk checks every record against. */
struct walk_ctx {
	struct sptd_col_perfdata *pd;
	int64_t records;
};

static int on_rec(void *arg, const struct sptd_col_perfdata_rec *rec)
{
	struct walk_ctx *w = arg;
	const struct sptd_col_perfdata_attr *attr = NULL;
	struct sptd_col_perf_record r;
	const uint8_t *lo = w->pd->map, *hi = w->pd->map + w->pd->size;

	w->records++;
	FUZZ_CHECK(rec->data >= lo && rec->size <= (size_t)(hi - rec->data),
	           "record at %llu outside the file", (unsigned long long)rec->offset);
	if (rec->payload)
		FUZZ_CHECK(rec->payload >= lo && rec->payload_len <= (uint64_t)(hi - rec->payload),
		           "AUXTRACE payload outside the file");
	if (rec->type < SPTD_PERF_RECORD_USER_START &&
	    sptd_col_perfdata_rec_parse(w->pd, rec, &r, &attr) == 0) {
		if (r.name)
			FUZZ_CHECK((const uint8_t *)r.name >= rec->data &&
			           (const uint8_t *)r.name < rec->data + rec->size, "name outside");
		if (r.sample.raw)
			FUZZ_CHECK((const uint8_t *)r.sample.raw >= rec->data &&
			           r.sample.raw_size <= rec->size, "raw outside");
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sptd_fuzz_quiet_logs();
	snprintf(input_path, sizeof(input_path), "%s/perf.data", sptd_fuzz_scratch());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sptd_col_perfdata *pd = NULL;
	struct sptd_col_pd_switch_fmt fmt;
	struct walk_ctx w = { 0 };
	char err[256], buf[1024];
	int feat;

	if (sptd_fuzz_write_file(input_path, data, size) < 0)
		return 0;
	if (sptd_col_perfdata_open(input_path, &pd, err, sizeof(err)) < 0) {
		FUZZ_CHECK(!pd, "open failed but handed out a file");
		FUZZ_CHECK(err[0], "open failed without a reason");
		return 0;
	}
	w.pd = pd;
	sptd_col_perfdata_walk(pd, on_rec, &w);
	for (feat = 1; feat < PD_FEAT_MAX; feat++) {
		size_t len = 0;
		const uint8_t *p = sptd_col_perfdata_feature(pd, feat, &len);

		if (p)
			FUZZ_CHECK(p >= pd->map && len <= pd->size - (size_t)(p - pd->map),
			           "feature %d outside the file", feat);
		if (sptd_col_perfdata_feature_string(pd, feat, buf, sizeof(buf)) >= 0)
			FUZZ_CHECK(strlen(buf) < sizeof(buf), "feature string");
	}
	sptd_col_perfdata_cmdline(pd, buf, sizeof(buf));
	sptd_col_perfdata_switch_fmt(pd, &fmt);
	if (fmt.found)
		FUZZ_CHECK(fmt.prev_state_size >= 0, "negative field size");
	if (fmt.states) {
		/* the letters of any prev_state value fit and are printable */
		char letters[4];

		sptd_sched_states_letters(fmt.states, ~0ull, letters);
		FUZZ_CHECK(strlen(letters) < sizeof(letters), "prev_state letters");
	}
	sptd_col_perfdata_switch_fmt_fini(&fmt);
	sptd_col_perfdata_close(pd);
	return 0;
}
