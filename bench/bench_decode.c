/* bench_decode.c — PT decode throughput on the real captures: sysptd's
 * session (block decoder, phase 1 + phase 2, slices to a counting sink),
 * single thread and -j 2 over two CPUs' worth of the same trace, next to a
 * baseline measured in the same run: libipt's instruction flow decoder
 * driven naively (pt_insn_next per instruction, counting calls/returns).
 *
 * Usage: bench_decode FIXTURES_DIR [ROUNDS]   (prints one table; no asserts) */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sptd_dec.h"

struct trace {
	const char *dir, *file, *image;
	uint64_t addr;
};

static const struct trace traces[] = {
	{ "libxdc-mruby", "trace.pt", "flat_400000.img", 0x400000 },
	{ "libxdc-foo", "trace.pt", "flat_7ffff7819000.img", 0x7ffff7819000ull },
	{ "libxdc-unzip", "trace.pt", "flat_400000.img", 0x400000 },
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Baseline: the instruction decoder, one call per instruction. */
static int64_t baseline_insn(uint8_t *pt, size_t len, const char *image, uint64_t addr)
{
	struct pt_config cfg;
	struct pt_insn_decoder *d;
	struct pt_image *img = pt_image_alloc("bench");
	int64_t insns = 0, calls = 0;
	int s;

	pt_config_init(&cfg);
	cfg.begin = pt;
	cfg.end = pt + len;
	pt_image_add_file(img, image, 0, UINT64_MAX, NULL, addr);
	d = pt_insn_alloc_decoder(&cfg);
	pt_insn_set_image(d, img);
	for (;;) {
		s = pt_insn_sync_forward(d);
		if (s < 0)
			break;
		for (;;) {
			struct pt_insn insn;

			while (s & pts_event_pending) {
				struct pt_event ev;

				s = pt_insn_event(d, &ev, sizeof(ev));
				if (s < 0)
					break;
			}
			if (s < 0)
				break;
			s = pt_insn_next(d, &insn, sizeof(insn));
			if (s < 0)
				break;
			insns++;
			calls += insn.iclass == ptic_call || insn.iclass == ptic_return;
		}
		if (s == -pte_eos)
			break;
	}
	pt_insn_free_decoder(d);
	pt_image_free(img);
	return insns + (calls & 0);
}

struct tally {
	int64_t insns, slices;
};

static int on_stat(void *ctx, const char *name, int cpu, int64_t value)
{
	struct tally *t = ctx;

	(void)cpu;
	if (strcmp(name, "instructions") == 0)
		t->insns += value;
	return 0;
}

static int on_slice(void *ctx, const struct sptd_dec_slice *s)
{
	struct tally *t = ctx;

	(void)s;
	t->slices++;
	return 0;
}

/* sysptd: @ncpus copies of the trace, @jobs threads. */
static int64_t run_session(uint8_t *pt, size_t len, const char *image, uint64_t addr,
                           int ncpus, int jobs, int64_t *slices)
{
	struct sptd_dec_config cfg = { .jobs = jobs };
	struct tally t = { 0, 0 };
	struct sptd_dec_sink sink = { .ctx = &t, .stat = on_stat, .slice = on_slice };
	struct sptd_dec_session *s = NULL;
	int cpu;

	if (sptd_dec_session_create(&cfg, &s) < 0)
		return -1;
	sptd_dec_session_add_flat(s, -1, image, addr, 1);
	for (cpu = 0; cpu < ncpus; cpu++)
		sptd_dec_session_add_pt(s, cpu, pt, len);
	if (sptd_dec_session_run(s, &sink) < 0)
		t.insns = -1;
	sptd_dec_session_destroy(s);
	*slices = t.slices;
	return t.insns;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR [ROUNDS]\n", argv[0]);
		return 2;
	}
	printf("%-14s %9s | %-22s | %-22s | %-22s | %s\n", "trace", "PT bytes",
	       "libipt insn (MB/s Mi/s)", "sysptd -j1 (MB/s Mi/s)", "sysptd 2 cpus -j1/-j2 s",
	       "ratios: sysptd/insn, j2 speedup");
	for (i = 0; i < sizeof(traces) / sizeof(traces[0]); i++) {
		char path[1024], image[1024];
		double best_base = 1e9, best_one = 1e9, best_two1 = 1e9, best_two2 = 1e9, t0;
		int64_t n_base = 0, n_one = 0, slices = 0;
		size_t len;
		uint8_t *pt;
		int r;

		snprintf(path, sizeof(path), "%s/real-pt/%s/%s", argv[1], traces[i].dir, traces[i].file);
		snprintf(image, sizeof(image), "%s/real-pt/%s/%s", argv[1], traces[i].dir, traces[i].image);
		pt = slurp(path, &len);
		if (!pt) {
			fprintf(stderr, "cannot read %s\n", path);
			return 1;
		}
		for (r = 0; r < rounds; r++) {
			t0 = now_s();
			n_base = baseline_insn(pt, len, image, traces[i].addr);
			if (now_s() - t0 < best_base)
				best_base = now_s() - t0;
			t0 = now_s();
			n_one = run_session(pt, len, image, traces[i].addr, 1, 1, &slices);
			if (now_s() - t0 < best_one)
				best_one = now_s() - t0;
			t0 = now_s();
			run_session(pt, len, image, traces[i].addr, 2, 1, &slices);
			if (now_s() - t0 < best_two1)
				best_two1 = now_s() - t0;
			t0 = now_s();
			run_session(pt, len, image, traces[i].addr, 2, 2, &slices);
			if (now_s() - t0 < best_two2)
				best_two2 = now_s() - t0;
		}
		printf("%-14s %9zu | %8.1f %8.1f      | %8.1f %8.1f      | %8.4f %8.4f     | %5.2fx  %5.2fx%s\n",
		       traces[i].dir, len, (double)len / best_base / 1e6,
		       (double)n_base / best_base / 1e6, (double)len / best_one / 1e6,
		       (double)n_one / best_one / 1e6, best_two1, best_two2,
		       best_base / best_one, best_two1 / best_two2,
		       n_base == n_one ? "" : "  (instruction counts differ!)");
		free(pt);
	}
	return 0;
}
