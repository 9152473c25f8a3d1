/* fuzz_flowdiff.c — the two flow decoders against each other (issue 33):
 * the same raw PT and image decoded through decode/'s session once with
 * libipt's block decoder and once with sysptd's own (qblk.c) must give the
 * same rows: every slice, gap (with its reason) and per-CPU figure
 * (instructions, calls, returns, decode errors, ...; decode_ns and
 * power_ns left out: they are times).
 *
 * Input: fuzz_rawpt's (so its corpus seeds this one): an 8-byte header,
 * then PT bytes, as sptd_fuzz_rawpt_session (fuzz.h) reads them.
 * A difference aborts, naming the first row that differs and both sides. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "sptd_dec.h"

#define ROW 320               /* bytes of one row's text */

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
	struct sptd_dec_session *s;
	int64_t n;

	r->n = 0;
	s = sptd_fuzz_rawpt_session(data, size, decoder);
	n = sptd_dec_session_run(s, &sink);
	sptd_dec_session_destroy(s);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t a, b;
	size_t i;

	if (size < SPTD_FUZZ_RAWPT_HEADER + 1)
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
