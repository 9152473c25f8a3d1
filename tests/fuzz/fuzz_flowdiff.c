/* fuzz_flowdiff.c — the two flow decoders against each other (issue 33):
 * the same raw PT and image decoded through decode/'s session once with
 * libipt's block decoder and once with sysptd's own (qblk.c) must give the
 * same rows: every slice, gap (with its reason) and per-CPU figure
 * (instructions, calls, returns, decode errors, ...; decode_ns and
 * power_ns left out: they are times).
 *
 * Input: fuzz_rawpt's (so its corpus seeds this one): an 8-byte header,
 * then PT bytes:
 *   [0] image: 0 libxdc-foo (flat at 0x7ffff7819000), 1 libxdc-unzip (flat
 *       at 0x400000), 2 drpt2trace-hello (ELF), 3 none
 *   [1] flags: bit 0 no_timing, bit 1 TSC -> ns by mult/shift, bit 2 by
 *       tsc_hz, bit 3 two CPUs (split at the middle), bit 4 a context
 *       switch list
 *   [2] mtc_freq, [3] nom_freq, [4] cpu model (0 unknown, 1 6/94/3,
 *       2 6/85/4), [5] tsc shift, [6..7] tsc mult (u16)
 * A difference aborts, naming the first row that differs and both sides. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "sptd_dec.h"

#define HEADER 8
#define ROW 320               /* bytes of one row's text */

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

/* The rows of one run, as text, in the order the session gave them. */
struct rows {
	char *text;            /* n rows of ROW bytes each */
	size_t n, cap;
};

static struct rows runs[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sptd_fuzz_quiet_logs();
	for (size_t i = 0; i < NIMAGES; i++) {
		snprintf(images[i].path, sizeof(images[i].path), "%s/%s", sptd_fuzz_fixtures(),
		         images[i].rel);
		images[i].bytes = sptd_fuzz_read_file(images[i].path, &images[i].len);
	}
	return 0;
}

/* Room for one more row of @r. */
static char *row_new(struct rows *r)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		char *t = realloc(r->text, cap * ROW);

		FUZZ_CHECK(t != NULL, "out of memory for %zu rows", cap);
		r->text = t;
		r->cap = cap;
	}
	return r->text + ROW * r->n++;
}

static int on_slice(void *ctx, const struct sptd_dec_slice *sl)
{
	snprintf(row_new(ctx), ROW,
	         "slice id %" PRId64 " ts %" PRId64 " dur %" PRId64 " cpu %d tid %d depth %d "
	         "parent %" PRId64 " symbol %" PRId64 " kind %s flags %d",
	         sl->id, sl->ts, sl->dur, sl->cpu, sl->tid, sl->depth, sl->parent_id,
	         sl->symbol_id, sl->kind ? sl->kind : "-", sl->flags);
	return 0;
}

static int on_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	snprintf(row_new(ctx), ROW, "gap ts %" PRId64 " dur %" PRId64 " cpu %d: %s", ts, dur, cpu,
	         reason ? reason : "(null)");
	return 0;
}

static int on_stat(void *ctx, const char *name, int cpu, int64_t value)
{
	if (!strcmp(name, "decode_ns") || !strcmp(name, "power_ns"))
		return 0;
	snprintf(row_new(ctx), ROW, "stat %s cpu %d = %" PRId64, name, cpu, value);
	return 0;
}

/* Decode the input with flow decoder @decoder into @r; the session's
 * result. */
static int64_t decode(const uint8_t *data, size_t size, int decoder, struct rows *r)
{
	struct sptd_dec_sink sink = { .ctx = r, .slice = on_slice, .gap = on_gap, .stat = on_stat };
	struct sptd_dec_config cfg;
	struct sptd_dec_session *s = NULL;
	const uint8_t *pt = data + HEADER;
	size_t ptlen = size - HEADER, half;
	unsigned img;
	int64_t n;
	int ret;

	r->n = 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.decoder = decoder;
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
	sptd_dec_session_destroy(s);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t a, b;
	size_t i;

	if (size < HEADER + 1)
		return 0;
	a = decode(data, size, SPTD_DEC_DECODER_LIBIPT, &runs[0]);
	b = decode(data, size, SPTD_DEC_DECODER_SPTD, &runs[1]);
	FUZZ_CHECK(a == b, "session_run: libipt %" PRId64 ", sptd %" PRId64, a, b);
	for (i = 0; i < runs[0].n && i < runs[1].n; i++)
		FUZZ_CHECK(!strcmp(runs[0].text + ROW * i, runs[1].text + ROW * i),
		           "row %zu differs:\n  libipt: %s\n  sptd:   %s", i,
		           runs[0].text + ROW * i, runs[1].text + ROW * i);
	FUZZ_CHECK(runs[0].n == runs[1].n, "libipt gave %zu rows, sptd %zu", runs[0].n,
	           runs[1].n);
	return 0;
}
