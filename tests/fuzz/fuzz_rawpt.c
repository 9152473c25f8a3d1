/* fuzz_rawpt.c — raw Intel PT decoded with a real image, through decode/'s
 * session (the entry `sysptd import --pt` and `sysptd decode` use: images,
 * PT per CPU, phase 1 with libipt, phase 2 shadow stacks, the sink).
 *
 * Input: an 8-byte header, then PT bytes (split in two CPUs when asked):
 * see sptd_fuzz_rawpt_session (fuzz.h).
 * The images are the shared fixtures' (real-pt/); without them the PT is
 * decoded with no code (every branch a gap), still a test of the decoder.
 * Checked: every slice and gap has dur >= 0 and ends at or before INT64_MAX,
 * slices nest (a child inside its parent), and the session never fails on
 * bad PT (decode errors are gaps). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "sptd_dec.h"

#define MAX_SLICES (1u << 20)

/* Slices seen in one run, to check nesting: id -> [ts, end]. */
struct seen {
	int64_t *ts, *end;      /* by slice id (ids below MAX_SLICES) */
	int64_t *parent;        /* by slice id: its parent_id */
	unsigned char *have;    /* by slice id: emitted */
	int64_t *ids;           /* the ids emitted, in order */
	size_t nids, cap;
};

static struct seen seen;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sptd_fuzz_quiet_logs();
	seen.cap = MAX_SLICES;
	seen.ts = calloc(seen.cap, sizeof(*seen.ts));
	seen.end = calloc(seen.cap, sizeof(*seen.end));
	seen.parent = calloc(seen.cap, sizeof(*seen.parent));
	seen.ids = calloc(seen.cap, sizeof(*seen.ids));
	seen.have = calloc(seen.cap, 1);
	if (!seen.ts || !seen.end || !seen.parent || !seen.ids || !seen.have)
		abort();
	return 0;
}

static int on_slice(void *ctx, const struct sptd_dec_slice *sl)
{
	FUZZ_CHECK(sl->dur >= 0, "slice %lld dur %lld", (long long)sl->id, (long long)sl->dur);
	FUZZ_CHECK(sl->ts < 0 || sl->dur <= INT64_MAX - sl->ts, "slice %lld ends past INT64_MAX",
	           (long long)sl->id);
	FUZZ_CHECK(sl->depth >= 0, "slice depth %d", sl->depth);
	FUZZ_CHECK(sl->kind != NULL, "slice without a kind");
	if (sl->id >= 0 && (size_t)sl->id < seen.cap) {
		FUZZ_CHECK(!seen.have[sl->id], "slice id %lld twice", (long long)sl->id);
		seen.have[sl->id] = 1;
		seen.ts[sl->id] = sl->ts;
		seen.end[sl->id] = sl->ts + sl->dur;
		seen.parent[sl->id] = sl->parent_id;
		seen.ids[seen.nids++] = sl->id;
	}
	return 0;
}

static int on_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	FUZZ_CHECK(dur >= 0 && dur != INT64_MAX, "gap at %lld dur %lld (%s)", (long long)ts, (long long)dur, reason);
	FUZZ_CHECK(ts < 0 || dur <= INT64_MAX - ts, "gap ends past INT64_MAX (%s)", reason);
	FUZZ_CHECK(reason && strncmp(reason, "pt: ", 4) == 0, "gap reason '%s'",
	           reason ? reason : "(null)");
	return 0;
}

static int on_symbol(void *ctx, const struct sptd_dec_symbol *sym)
{
	FUZZ_CHECK(sym->name && sym->name[0], "symbol %lld without a name", (long long)sym->id);
	return 0;
}

/* Every slice lies inside its parent; then forget this run's slices. */
static void check_nesting(void)
{
	size_t i;

	for (i = 0; i < seen.nids; i++) {
		int64_t id = seen.ids[i], p = seen.parent[id];

		if (p < 0 || (size_t)p >= seen.cap || !seen.have[p])
			continue;
		FUZZ_CHECK(seen.ts[id] >= seen.ts[p] && seen.end[id] <= seen.end[p],
		           "slice %lld [%lld, %lld] outside its parent %lld [%lld, %lld]",
		           (long long)id, (long long)seen.ts[id], (long long)seen.end[id],
		           (long long)p, (long long)seen.ts[p], (long long)seen.end[p]);
	}
	for (i = 0; i < seen.nids; i++)
		seen.have[seen.ids[i]] = 0;
	seen.nids = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sptd_dec_sink sink = { .slice = on_slice, .gap = on_gap, .symbol = on_symbol };
	struct sptd_dec_session *s;
	int64_t n;

	if (size < SPTD_FUZZ_RAWPT_HEADER + 1)
		return 0;
	s = sptd_fuzz_rawpt_session(data, size, SPTD_DEC_DECODER_LIBIPT);
	n = sptd_dec_session_run(s, &sink);
	FUZZ_CHECK(n >= 0 || n == -ENOMEM, "session_run failed on bad PT: %lld", (long long)n);
	check_nesting();
	sptd_dec_session_destroy(s);
	return 0;
}
