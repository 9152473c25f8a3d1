/* fuzz_rawpt.c — raw Intel PT decoded with a real image, through decode/'s
 * session (the entry `sysptd import --pt` and `sysptd decode` use: images,
 * PT per CPU, phase 1 with libipt, phase 2 shadow stacks, the sink).
 *
 * Input: an 8-byte header, then PT bytes (split in two CPUs when asked):
 *   [0] image: 0 libxdc-foo (flat at 0x7ffff7819000), 1 libxdc-unzip (flat
 *       at 0x400000), 2 drpt2trace-hello (ELF by its program headers),
 *       3 none
 *   [1] flags: bit 0 no_timing, bit 1 TSC -> ns by mult/shift, bit 2 by
 *       tsc_hz, bit 3 two CPUs (the PT split at its middle), bit 4 a
 *       context switch list (tid 1 then 2 on each CPU)
 *   [2] mtc_freq, [3] nom_freq, [4] cpu model (0 unknown, 1 6/94/3,
 *       2 6/85/4), [5] tsc shift, [6..7] tsc mult (u16)
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

#define HEADER 8
#define MAX_SLICES (1u << 20)

/* One fixture image. */
struct image {
	const char *rel;       /* path under the fixtures */
	uint64_t addr;         /* where a flat image goes; 0: ELF */
	void *bytes;           /* loaded at init; NULL: missing */
	size_t len;
	char path[4096];       /* full path (ELF images load from it) */
};

static struct image images[] = {
	{ "real-pt/libxdc-foo/flat_7ffff7819000.img", 0x7ffff7819000ull, NULL, 0, "" },
	{ "real-pt/libxdc-unzip/flat_400000.img", 0x400000ull, NULL, 0, "" },
	{ "real-pt/drpt2trace-hello/hello", 0, NULL, 0, "" },
};
#define NIMAGES (sizeof(images) / sizeof(images[0]))

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
	size_t i;

	(void)argc;
	(void)argv;
	sptd_fuzz_quiet_logs();
	for (i = 0; i < NIMAGES; i++) {
		snprintf(images[i].path, sizeof(images[i].path), "%s/%s", sptd_fuzz_fixtures(),
		         images[i].rel);
		images[i].bytes = sptd_fuzz_read_file(images[i].path, &images[i].len);
	}
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
	struct sptd_dec_config cfg;
	struct sptd_dec_session *s = NULL;
	const uint8_t *pt = data + HEADER;
	size_t ptlen, half;
	unsigned img;
	int64_t n;
	int ret;

	if (size < HEADER + 1)
		return 0;
	ptlen = size - HEADER;
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_timing = data[1] & 1;
	if (data[1] & 2) {
		cfg.tsc_mult = (uint32_t)(data[6] | data[7] << 8);
		cfg.tsc_shift = data[5] & 63;
	} else if (data[1] & 4) {
		cfg.tsc_hz = 1000000ull * (1 + data[5]);
	}
	cfg.mtc_freq = data[2] & 15;
	cfg.nom_freq = data[3];
	if (data[4] % 3 == 1) {
		cfg.cpu_family = 6, cfg.cpu_model = 94, cfg.cpu_stepping = 3;
	} else if (data[4] % 3 == 2) {
		cfg.cpu_family = 6, cfg.cpu_model = 85, cfg.cpu_stepping = 4;
	}
	cfg.jobs = 1;
	ret = sptd_dec_session_create(&cfg, &s);
	FUZZ_CHECK(ret == 0, "session_create: %d", ret);
	img = data[0] % 4;
	if (img < NIMAGES && images[img].bytes) {
		if (images[img].addr)
			ret = sptd_dec_session_add_bytes(s, -1, "image", images[img].bytes,
			                                 images[img].len, images[img].addr, 1);
		else
			ret = sptd_dec_session_add_elf(s, -1, images[img].path, 0, 1);
		FUZZ_CHECK(ret == 0, "image %u: %d", img, ret);
	}
	if (data[1] & 16) {
		sptd_dec_session_add_task(s, 1, 1);
		sptd_dec_session_add_task(s, 2, 2);
		sptd_dec_session_add_switch(s, 0, 0, 0, 1);
		sptd_dec_session_add_switch(s, 1000, 0, 1, 2);
		sptd_dec_session_add_switch(s, 0, 1, 0, 2);
	}
	half = (data[1] & 8) ? ptlen / 2 : ptlen;
	if (half)
		FUZZ_CHECK(sptd_dec_session_add_pt(s, 0, pt, half) == 0, "add_pt cpu 0");
	if (ptlen > half)
		FUZZ_CHECK(sptd_dec_session_add_pt(s, 1, pt + half, ptlen - half) == 0,
		           "add_pt cpu 1");
	n = sptd_dec_session_run(s, &sink);
	FUZZ_CHECK(n >= 0 || n == -ENOMEM, "session_run failed on bad PT: %lld", (long long)n);
	check_nesting();
	sptd_dec_session_destroy(s);
	return 0;
}
