/* test_dec_parallel.c — one CPU's PT decoded in parallel segments (cut at
 * PSBs, stitched at seams; decode/flowseg.c, seam.c) gives exactly what
 * the serial decode gives: every symbol, slice (in order), gap and count
 * the sink receives, for the real captures in $SPTD_FIXTURES/real-pt
 * (raw PT), whole and damaged (flipped bytes near the cuts, a missing
 * image: decode errors at and around seams, seams that must be decoded
 * again), with 2 and 4 threads and segment sizes from a few PSBs to the
 * automatic one.  And that the parallel runs were parallel: more than one
 * segment (the decode_segments count). */
#include <errno.h>

#include "sptd_dec.h"
#include "sptd_test.h"

/* Everything a run handed to its sink, one line per call, in order. */
struct run {
	char **lines;              /* the calls, formatted */
	size_t n, cap;             /* used / allocated */
	int64_t segments;          /* decode_segments summed over CPUs */
	int64_t slices;            /* slices received */
};

static int push(struct run *r, const char *line)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		char **n = realloc(r->lines, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->lines = n;
		r->cap = cap;
	}
	r->lines[r->n] = strdup(line);
	return r->lines[r->n++] ? 0 : -ENOMEM;
}

static int on_symbol(void *ctx, const struct sptd_dec_symbol *s)
{
	char line[600];

	snprintf(line, sizeof(line), "symbol %" PRId64 " %s %" PRId64 " %" PRIx64 " %" PRIu64,
	         s->id, s->name, s->dso_id, s->addr, s->size);
	return push(ctx, line);
}

static int on_slice(void *ctx, const struct sptd_dec_slice *s)
{
	struct run *r = ctx;
	char line[300];

	r->slices++;
	snprintf(line, sizeof(line), "slice %" PRId64 " %" PRId64 " %" PRId64 " %d %d %d %" PRId64
	         " %" PRId64 " %s %d", s->id, s->ts, s->dur, s->cpu, s->tid, s->depth,
	         s->parent_id, s->symbol_id, s->kind, s->flags);
	return push(ctx, line);
}

static int on_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	char line[300];

	snprintf(line, sizeof(line), "gap %" PRId64 " %" PRId64 " %d %s", ts, dur, cpu, reason);
	return push(ctx, line);
}

static int on_stat(void *ctx, const char *name, int cpu, int64_t value)
{
	struct run *r = ctx;
	char line[200];

	if (strcmp(name, "decode_segments") == 0) {
		r->segments += value;
		return 0;
	}
	if (strcmp(name, "decode_ns") == 0)
		return 0;
	snprintf(line, sizeof(line), "stat %s %d %" PRId64, name, cpu, value);
	return push(ctx, line);
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->lines[i]);
	free(r->lines);
	memset(r, 0, sizeof(*r));
}

/* A raw capture: PT of one CPU and the code it ran. */
struct capture {
	const char *name;          /* fixture folder */
	const char *pt;            /* PT file in it */
	const char *image;         /* code file in it */
	uint64_t addr;             /* flat image address; 0: an ELF by its headers */
	int family, model, stepping; /* cpu, 0/0/0 unknown */
};

static const struct capture captures[] = {
	{ "libxdc-mruby", "trace.pt", "flat_400000.img", 0x400000, 0, 0, 0 },
	{ "libxdc-foo", "trace.pt", "flat_7ffff7819000.img", 0x7ffff7819000ull, 0, 0, 0 },
	{ "libxdc-unzip", "trace.pt", "flat_400000.img", 0x400000, 0, 0, 0 },
	{ "drpt2trace-hello", "pt.bin", "hello", 0, 6, 85, 4 },
};

/* Decode @pt with @jobs threads, segments of @seg bytes (0 automatic),
 * the image unless @no_image, into @out.  The slice count, or < 0. */
static int64_t decode(const char *dir, const struct capture *c, const uint8_t *pt, size_t len,
                      int jobs, size_t seg, int no_image, struct run *out)
{
	struct sptd_dec_config cfg = { .cpu_family = c->family, .cpu_model = c->model,
	                               .cpu_stepping = c->stepping, .jobs = jobs,
	                               .segment_bytes = seg };
	struct sptd_dec_sink sink = { .ctx = out, .symbol = on_symbol, .slice = on_slice,
	                              .gap = on_gap, .stat = on_stat };
	struct sptd_dec_session *s = NULL;
	char path[4200];
	int64_t ret;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%s/%s", dir, c->name, c->image);
	ret = sptd_dec_session_create(&cfg, &s);
	if (ret >= 0 && !no_image)
		ret = c->addr ? sptd_dec_session_add_flat(s, -1, path, c->addr, 1)
		              : sptd_dec_session_add_elf(s, -1, path, 0, 1);
	if (ret >= 0)
		ret = sptd_dec_session_add_pt(s, 0, pt, len);
	if (ret >= 0)
		ret = sptd_dec_session_run(s, &sink);
	sptd_dec_session_destroy(s);
	return ret;
}

/* Equal line for line; says where not. */
static int same(const char *what, const struct run *a, const struct run *b)
{
	size_t i;

	for (i = 0; i < a->n && i < b->n; i++) {
		if (strcmp(a->lines[i], b->lines[i]) != 0) {
			fprintf(stderr, "%s: call %zu differs:\n  serial:   %s\n  parallel: %s\n", what,
			        i, a->lines[i], b->lines[i]);
			return 0;
		}
	}
	if (a->n != b->n) {
		fprintf(stderr, "%s: %zu sink calls serially, %zu in parallel\n", what, a->n, b->n);
		return 0;
	}
	return 1;
}

/* One capture, possibly damaged: serial against every parallel setting. */
static void check_capture(const char *dir, const struct capture *c, const uint8_t *pt,
                          size_t len, const char *damage, int no_image)
{
	static const size_t segs[] = { 0, 1024, 4096, 32768 };
	static const int jobs[] = { 2, 4 };
	struct run serial, par;
	int64_t n;
	char what[300];

	n = decode(dir, c, pt, len, 1, 0, no_image, &serial);
	CHECK(n >= 0);
	CHECK_INT(serial.segments, 1);
	for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
		for (size_t k = 0; k < sizeof(segs) / sizeof(segs[0]); k++) {
			snprintf(what, sizeof(what), "%s%s -j%d, segments of %zu bytes", c->name,
			         damage, jobs[j], segs[k]);
			CHECK_INT(decode(dir, c, pt, len, jobs[j], segs[k], no_image, &par), n);
			CHECK(same(what, &serial, &par));
			/* small segments of a big trace: it really was cut */
			if (segs[k] && len >= 8 * segs[k])
				CHECK(par.segments > 1);
			printf("  %-58s %6" PRId64 " slices, %3" PRId64 " segments\n", what,
			       par.slices, par.segments);
			run_free(&par);
		}
	}
	run_free(&serial);
}

int main(void)
{
	const char *env = getenv("SPTD_FIXTURES");
	char dir[4096], path[4200];
	int tested = 0;

	if (!env)
		SPTD_SKIP("SPTD_FIXTURES is not set (ctest sets it)");
	snprintf(dir, sizeof(dir), "%s/real-pt", env);
	for (size_t i = 0; i < sizeof(captures) / sizeof(captures[0]); i++) {
		const struct capture *c = &captures[i];
		size_t len = 0;
		uint8_t *pt;

		snprintf(path, sizeof(path), "%s/%s/%s", dir, c->name, c->pt);
		pt = sptd_test_slurp(path, &len);
		if (!pt) {
			printf("  %s: no fixture at %s\n", c->name, path);
			continue;
		}
		tested++;
		check_capture(dir, c, pt, len, "", 0);
		if (len > 8192) {
			uint8_t *bad = malloc(len);

			/* a flipped byte every 3000 bytes: errors near many cuts */
			memcpy(bad, pt, len);
			for (size_t off = 1500; off < len; off += 3000)
				bad[off] ^= 0x5a;
			check_capture(dir, c, bad, len, " (damaged)", 0);
			free(bad);
			/* no code at all: every block a missing-image error */
			check_capture(dir, c, pt, len, " (no image)", 1);
		}
		free(pt);
	}
	if (!tested)
		SPTD_SKIP("no real-pt fixtures in %s (set SPTD_FIXTURES)", dir);
	return SPTD_TEST_END();
}
