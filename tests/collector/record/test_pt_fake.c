/* test_pt_fake.c — the PT source end to end against the fake intel_pt PMU:
 * three CPUs whose "hardware" writes real captured PT (libxdc-unzip) into
 * their AUX rings — one that never wraps, one that wraps several times, one
 * that loses bytes (AUX record flagged TRUNCATED) — plus sideband records.
 * The source opens, enables, freezes and writes into a real incident; the
 * code image comes out of this process's /proc/self/mem (an anonymous
 * executable mapping, as JIT code would be); derive_all decodes it.  The
 * per-CPU stats and the slice count must equal a direct decode of the same
 * bytes, and the lost bytes must show as gaps. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fakepmu/fakepmu.h"
#include "fakepmu/fakepmu_kcore.h"
#include "pt-local.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"

/* BPF code in the fake kernel's module area (test_ksyms) */
#define BPF_LISTED (FAKEKERNEL_MODULES + 0x3000)
#define BPF_NEW (FAKEKERNEL_MODULES + 0x4000)
#define BPF_GONE (FAKEKERNEL_MODULES + 0x6000)

#define IMG_ADDR 0x400000ull
#define NCPU 3
#define STATS 5
static const char *const stat_names[STATS] = { "instructions", "calls", "returns",
                                               "decode_errors", "pt_bytes" };

struct direct {
	int64_t stats[NCPU][STATS];
	int64_t slices, gaps[NCPU];
};

static int d_stat(void *ctx, const char *name, int cpu, int64_t value)
{
	struct direct *d = ctx;

	for (int i = 0; i < STATS; i++)
		if (cpu >= 0 && cpu < NCPU && strcmp(name, stat_names[i]) == 0)
			d->stats[cpu][i] = value;
	return 0;
}

static int d_slice(void *ctx, const struct sptd_dec_slice *s)
{
	(void)s;
	((struct direct *)ctx)->slices++;
	return 0;
}

static int d_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	struct direct *d = ctx;

	(void)ts;
	(void)dur;
	(void)reason;
	if (cpu >= 0 && cpu < NCPU)
		d->gaps[cpu]++;
	return 0;
}

static int64_t meta(struct sptd_store *st, const char *key)
{
	int64_t v = 0;

	sptd_store_meta_get_int(st, key, &v);
	return v;
}

/* Decode @pt[cpu] directly with the configuration the incident recorded. */
static int direct_decode(struct sptd_store *st, const char *image, unsigned char *pt[NCPU],
                         const size_t len[NCPU], struct direct *d)
{
	struct sptd_dec_config cfg = {
		.cpu_family = (int)meta(st, "pt_cpu_family"), .cpu_model = (int)meta(st, "pt_cpu_model"),
		.cpu_stepping = (int)meta(st, "pt_cpu_stepping"), .mtc_freq = (int)meta(st, "pt_mtc_freq"),
		.nom_freq = (int)meta(st, "pt_nom_freq"),
		.cpuid15_eax = (uint32_t)meta(st, "pt_cpuid15_eax"),
		.cpuid15_ebx = (uint32_t)meta(st, "pt_cpuid15_ebx"),
		.tsc_mult = (uint32_t)meta(st, "tsc_mult"), .tsc_shift = (int)meta(st, "tsc_shift"),
		.tsc_zero = (uint64_t)meta(st, "tsc_zero"), .tsc_offset_ns = meta(st, "tsc_offset_ns"),
		.jobs = 1,
	};
	struct sptd_dec_sink sink = { .ctx = d, .slice = d_slice, .gap = d_gap, .stat = d_stat };
	struct sptd_dec_session *s = NULL;
	int64_t ret;

	memset(d, 0, sizeof(*d));
	ret = sptd_dec_session_create(&cfg, &s);
	if (ret >= 0)
		ret = sptd_dec_session_add_flat(s, -1, image, IMG_ADDR, 1);
	for (int c = 0; c < NCPU && ret >= 0; c++)
		ret = sptd_dec_session_add_pt(s, c, pt[c], len[c]);
	if (ret >= 0)
		ret = sptd_dec_session_run(s, &sink);
	sptd_dec_session_destroy(s);
	return ret < 0 ? (int)ret : 0;
}

static int on_poke(void *ctx, const struct sptd_col_perf_record *r)
{
	if (r->type == SPTD_PERF_RECORD_TEXT_POKE && r->addr == 0xffffffff81001000ull &&
	    r->poke_old_len == 5 && r->poke_new_len == 5 && r->poke_old[0] == 0x0f &&
	    r->poke_new[0] == 0xe9 && r->id.time == 2100)
		(*(int *)ctx)++;
	return 0;
}

/* TEXT_POKE records in @cpu's stored sideband. */
static int count_text_pokes(struct sptd_store *st, int cpu)
{
	struct sptd_store_stmt *s = NULL;
	char sql[128];
	int n = 0;

	snprintf(sql, sizeof(sql), "SELECT data FROM raw_sideband WHERE cpu = %d", cpu);
	if (sptd_store_prepare(st, sql, &s) < 0)
		return -1;
	while (sptd_store_step(s) == 1) {
		size_t len = 0;
		const void *blob = sptd_store_column_blob(s, 0, &len);

		if (sptd_col_pt_sideband_parse(blob, len, sptd_col_pt_sideband_sample_type(), on_poke,
		                               &n) < 0)
			n = -100;
	}
	sptd_store_finalize(s);
	return n;
}

static int64_t q(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	if (sptd_store_query_int(st, sql, &v) < 0)
		return -1;
	return v;
}

/* Freeze @pt into a fresh incident @root/@name and compare each CPU's raw_pt
 * with @expect (length 0: no row). */
static void check_incident(struct sptd_col_pt *pt, const char *root, const char *name,
                           const unsigned char *const expect[NCPU], const size_t expect_len[NCPU])
{
	struct sptd_store *st = NULL;
	char db[256], sql[128];

	CHECK_INT(sptd_col_pt_freeze(pt), 0);
	snprintf(db, sizeof(db), "%s/%s", root, name);
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		return;
	CHECK(sptd_col_pt_write(pt, st) == (int64_t)(expect_len[0] + expect_len[1] + expect_len[2]));
	for (int c = 0; c < NCPU; c++) {
		struct sptd_store_stmt *s = NULL;
		size_t len = 0;
		const void *blob = NULL;

		snprintf(sql, sizeof(sql), "SELECT data FROM raw_pt WHERE cpu = %d", c);
		CHECK_INT(sptd_store_prepare(st, sql, &s), 0);
		if (s && sptd_store_step(s) == 1)
			blob = sptd_store_column_blob(s, 0, &len);
		if (len != expect_len[c])
			fprintf(stderr, "%s cpu %d: %zu PT bytes, want %zu (only those written since "
			        "the re-arm)\n", name, c, len, expect_len[c]);
		CHECK_INT(len, expect_len[c]);
		CHECK(len == expect_len[c] && (!len || memcmp(blob, expect[c], len) == 0));
		sptd_store_finalize(s);
	}
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
}

/* The bytes of the raw_image row at @addr (-1: none). */
static int64_t image_len_at(struct sptd_store *st, uint64_t addr)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(length(data)), -1) FROM raw_image "
	         "WHERE addr = %lld", (long long)addr);
	return q(st, sql);
}

/* JIT code sized and named by the poke rings' KSYMBOL records (issue 34
 * item 8): a fake kernel whose kallsyms lists one BPF program without a
 * size (copied up to the next code, or the module area's end, without
 * them); one KSYMBOL names code kallsyms does not list; one program came
 * and went. */
static void test_ksyms(struct sptd_store *st, struct sptd_col_pt *pt, const char *root)
{
	static const uint8_t text[64] = { 0x90 }, bpf[3] = { 0x90, 0x90, 0xc3 };
	const struct fakepmu_kcode kc[] = {
		{ "bpf_prog_aa_sptd", "bpf", BPF_LISTED, 0, bpf, sizeof(bpf) },
	};
	char kroot[256], why[512];

	snprintf(kroot, sizeof(kroot), "%s/kernel", root);
	CHECK_INT(fakepmu_kernel_write(kroot, text, sizeof(text), kc, 1, 0), 0);
	CHECK_INT(sptd_col_pt_images_kernel(st, kroot, pt, why, sizeof(why)), 3);
	CHECK_INT(image_len_at(st, BPF_LISTED), 3);
	CHECK_INT(image_len_at(st, BPF_NEW), 2);
	CHECK_INT(image_len_at(st, BPF_GONE), -1);
	CHECK_INT(q(st, "SELECT count(*) FROM dso WHERE path IN ('[jit:bpf_prog_aa_sptd]', "
	            "'[jit:bpf_prog_bb_new]')"), 2);
	CHECK_INT(meta(st, "pt_kernel_ksyms"), 2);
	CHECK_INT(meta(st, "pt_kernel_jit"), 2);
}

int main(void)
{
	char trace_path[1024], image_path[1024], root[] = "/tmp/sptd-ptfake-XXXXXX", db[128], sql[256];
	unsigned char *trace, *image, *wrapped_stream, *expect[NCPU], sb[NCPU][1024], *marker = NULL;
	size_t trace_len, image_len, expect_len[NCPU], sb_len[NCPU] = { 0, 0, 0 };
	struct fakepmu_script scripts[NCPU];
	const size_t drop_at = 6000, drop_len = 3000, aux = 64 * 1024, repeats = 5;
	int cpus[NCPU] = { 0, 1, 2 }, pids[16], npids, me = getpid(), gone = 4194303;
	char self_exe[1024];
	struct sptd_col_pt_config cfg = { .cpus = cpus, .ncpus = NCPU };
	struct sptd_col_pt *pt = NULL;
	struct sptd_store *st = NULL;
	struct direct d;
	char err[512];
	void *map;
	int ret;

	/* no fixtures directory: skip; one without these files: fail */
	SPTD_REQUIRE_FIXTURES();
	if (sptd_test_fixture(trace_path, sizeof(trace_path), "real-pt/libxdc-unzip/trace.pt") < 0 ||
	    sptd_test_fixture(image_path, sizeof(image_path),
	                      "real-pt/libxdc-unzip/flat_400000.img") < 0)
		return SPTD_TEST_END();
	trace = sptd_test_slurp(trace_path, &trace_len);
	image = sptd_test_slurp(image_path, &image_len);
	CHECK(trace && image);
	if (!trace || !image)
		return SPTD_TEST_END();
	/* the code PT ran, as an anonymous executable mapping of this process */
	map = mmap((void *)IMG_ADDR, (image_len + 4095) & ~(size_t)4095, PROT_READ | PROT_WRITE,
	           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (map != (void *)IMG_ADDR)
		SPTD_SKIP("cannot map the test image at 0x400000 in this process");
	memcpy(map, image, image_len);
	mprotect(map, (image_len + 4095) & ~(size_t)4095, PROT_READ | PROT_EXEC);

	if (!mkdtemp(root))
		SPTD_SKIP("no temp dir");
	CHECK_INT(fakepmu_sysfs(root, FAKEPMU_SKYLAKE, 42), 0);
	sptd_col_pt_set_sysfs_root(root);

	/* cpu 0: the whole trace, ring never wraps; cpu 1: the trace five
	 * times over, the ring wraps; cpu 2: bytes lost in the middle */
	wrapped_stream = malloc(trace_len * repeats);
	for (size_t i = 0; i < repeats; i++)
		memcpy(wrapped_stream + i * trace_len, trace, trace_len);
	memset(scripts, 0, sizeof(scripts));
	scripts[0] = (struct fakepmu_script){ .pt = trace, .pt_len = trace_len, .aux_time = 3000 };
	scripts[1] = (struct fakepmu_script){ .pt = wrapped_stream, .pt_len = trace_len * repeats,
	                                      .aux_time = 3000 };
	scripts[2] = (struct fakepmu_script){ .pt = trace, .pt_len = trace_len, .drop_at = drop_at,
	                                      .drop_len = drop_len, .aux_time = 3000 };
	expect[0] = trace;
	expect_len[0] = trace_len;
	expect[1] = wrapped_stream + trace_len * repeats - aux;
	expect_len[1] = aux;
	expect[2] = malloc(trace_len - drop_len);
	memcpy(expect[2], trace, drop_at);
	memcpy(expect[2] + drop_at, trace + drop_at + drop_len, trace_len - drop_at - drop_len);
	expect_len[2] = trace_len - drop_len;

	sb_len[0] = fakepmu_rec_comm(sb[0], 0, sizeof(sb[0]), me, me, "unzip", 1000, 0);
	sb_len[0] = fakepmu_rec_mmap2(sb[0], sb_len[0], sizeof(sb[0]), me, me, IMG_ADDR,
	                              (uint64_t)image_len, 0, "//anon", 1100, 0);
	/* a process that exited before the capture: only its MMAP2 is left */
	{
		ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

		self_exe[n > 0 ? n : 0] = '\0';
	}
	sb_len[0] = fakepmu_rec_mmap2(sb[0], sb_len[0], sizeof(sb[0]), gone, gone, 0x560000000000ull,
	                              0x3000, 0, self_exe, 1200, 0);
	sb_len[1] = fakepmu_rec_switch(sb[1], 0, sizeof(sb[1]), 1, 0, 0, me, me, 1500, 1);
	sb_len[1] = fakepmu_rec_switch(sb[1], sb_len[1], sizeof(sb[1]), 0, me, me, 0, 0, 1501, 1);
	sb_len[2] = fakepmu_rec_lost(sb[2], 0, sizeof(sb[2]), 3, 2000, 2);
	/* a static key flipped while PT ran: a 5-byte NOP became a jmp (the
	 * kernel writes it only to an event that asked, attr.text_poke) */
	{
		static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
		static const uint8_t jmp5[5] = { 0xe9, 0x11, 0x22, 0x33, 0x44 };

		sb_len[2] = fakepmu_rec_text_poke(sb[2], sb_len[2], sizeof(sb[2]),
		                                  0xffffffff81001000ull, nop5, 5, jmp5, 5, 2100, 2);
	}
	/* BPF code came (a program kallsyms lists, one it does not) and went
	 * while PT ran; KSYMBOL only to an event that asked, attr.ksymbol */
	sb_len[0] = fakepmu_rec_ksymbol(sb[0], sb_len[0], sizeof(sb[0]), BPF_LISTED, 3, 0,
	                                "bpf_prog_aa_sptd", 1300, 0);
	sb_len[0] = fakepmu_rec_ksymbol(sb[0], sb_len[0], sizeof(sb[0]), BPF_NEW, 2, 0,
	                                "bpf_prog_bb_new", 1310, 0);
	sb_len[0] = fakepmu_rec_ksymbol(sb[0], sb_len[0], sizeof(sb[0]), BPF_GONE, 8, 0,
	                                "bpf_prog_cc_gone", 1320, 0);
	sb_len[0] = fakepmu_rec_ksymbol(sb[0], sb_len[0], sizeof(sb[0]), BPF_GONE, 8, 1,
	                                "bpf_prog_cc_gone", 1330, 0);
	for (int c = 0; c < NCPU; c++) {
		scripts[c].sb = sb[c];
		scripts[c].sb_len = sb_len[c];
	}
	fakepmu_install(42, scripts, NCPU, 0);

	/* a refused open is reported, and leaves nothing open */
	fakepmu_fail_open(EACCES);
	ret = sptd_col_pt_create(&cfg, &pt, err, sizeof(err));
	CHECK_INT(ret, -EACCES);
	CHECK(strstr(err, "intel_pt") && strstr(err, "root"));
	CHECK(pt == NULL);
	CHECK_INT(fakepmu_open_count(), 0);
	CHECK_INT(sptd_col_pt_create(NULL, &pt, err, sizeof(err)), -EINVAL);

	cfg.req.timing = SPTD_PT_TIMING_NORMAL;
	cfg.cpu_family = 6;        /* the machine the "hardware" claims to be */
	cfg.cpu_model = 85;
	cfg.cpu_stepping = 4;
	cfg.req.window_ns = 1000;   /* tiny: the minimum AUX ring, 64 KiB */
	/* a kernel older than 5.9 refuses attr.text_poke: the sideband opens
	 * without TEXT_POKE and KSYMBOL, and the capture goes on */
	fakepmu_refuse_text_poke(1);
	ret = sptd_col_pt_create(&cfg, &pt, err, sizeof(err));
	CHECK_INT(ret, 0);
	{
		const struct perf_event_attr *a = fakepmu_attr(1, NULL);

		CHECK(a && a->type == PERF_TYPE_SOFTWARE && !a->text_poke && !a->ksymbol);
		/* and no poke event is left open */
		CHECK_INT(fakepmu_open_count(), 2 * NCPU);
	}
	sptd_col_pt_destroy(pt);
	pt = NULL;
	fakepmu_refuse_text_poke(0);
	fakepmu_install(42, scripts, NCPU, 0);
	ret = sptd_col_pt_create(&cfg, &pt, err, sizeof(err));
	CHECK_INT(ret, 0);
	if (ret < 0) {
		fprintf(stderr, "create: %s\n", err);
		goto out;
	}
	CHECK_INT(sptd_col_pt_setup(pt)->aux_bytes, aux);
	/* what was opened: per CPU the PT event, the sideband dummy, and the
	 * dummy that asks for kernel code changes (on until the kcore copy) */
	CHECK_INT(fakepmu_open_count(), 3 * NCPU);
	for (int i = 0; i < 3 * NCPU; i++) {
		int cpu = -1;
		const struct perf_event_attr *a = fakepmu_attr(i, &cpu);

		CHECK(a != NULL);
		if (!a)
			break;
		CHECK_INT(cpu, i / 3);
		CHECK_INT(a->disabled, 1);
		CHECK_INT(a->sample_id_all, 1);
		CHECK(a->sample_type == (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU));
		if (i % 3 == 0) {
			CHECK_INT(a->type, 42);
			CHECK(a->config == sptd_col_pt_setup(pt)->config[0]);
			CHECK_INT(a->exclude_kernel, 0);
		} else if (i % 3 == 1) {
			CHECK(a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY);
			CHECK(a->mmap && a->mmap2 && a->comm && a->comm_exec && a->task &&
			      a->context_switch && a->write_backward);
			CHECK(!a->text_poke && !a->ksymbol);
		} else {
			/* kernel text changes and kernel code made at run time */
			CHECK(a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY);
			CHECK(a->text_poke && a->ksymbol && a->write_backward);
			CHECK(!a->mmap && !a->comm && !a->task && !a->context_switch);
		}
	}
	CHECK(fakepmu_maps_ok());
	CHECK_INT(sptd_col_pt_enable(pt), 0);
	CHECK_INT(sptd_col_pt_freeze(pt), 0);
	npids = sptd_col_pt_pids(pt, pids, 16);
	CHECK_INT(npids, 2);
	CHECK_INT(pids[0], me);
	CHECK_INT(pids[1], gone);

	snprintf(db, sizeof(db), "%s/incident.db", root);
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		goto out;
	CHECK_INT(sptd_store_meta_set(st, "source", "pt"), 0);
	{
		/* what cmd_record writes around a capture */
		struct timespec now;
		int64_t ns;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
		CHECK_INT(sptd_store_meta_set_int(st, "window_start", ns - 1000000000), 0);
		CHECK_INT(sptd_store_meta_set_int(st, "window_end", ns + 1000000000), 0);
		CHECK_INT(sptd_store_meta_set_int(st, "cpus", NCPU), 0);
	}
	CHECK(sptd_col_pt_write(pt, st) == (int64_t)(expect_len[0] + expect_len[1] + expect_len[2]));
	CHECK_INT(sptd_col_pt_images_anon(st, pids, npids) >= 1, 1);
	/* its file mapping comes back from the sideband, with the file's build-id */
	CHECK_INT(sptd_col_pt_mmaps_exited(pt, st, &gone, 1), 1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_mmap m JOIN dso d ON d.id = m.dso_id "
	         "WHERE m.pid = %d AND m.start = %lld AND d.build_id IS NOT NULL", gone,
	         0x560000000000ll);
	CHECK_INT(q(st, sql), 1);
	CHECK_INT(meta(st, "pt_exited_mmaps"), 1);
	CHECK_INT(sptd_col_pt_mmaps_exited(NULL, st, &gone, 1), -EINVAL);
	/* a rewrite after the freeze, before the kcore copy (issue 34 item
	 * 8): the sideband rings are paused, the poke ring is not, so it is
	 * kept; the poke rings are read once the copy has ended */
	{
		static const uint8_t int3[1] = { 0xcc }, push[1] = { 0x55 };

		CHECK_INT(fakepmu_put_text_poke(1, 2200, 0xffffffff81002000ull, push, int3, 1), 1);
	}
	CHECK_INT(count_text_pokes(st, 2), 0);
	/* the TEXT_POKE records are kept with the sideband, whole */
	CHECK_INT(meta(st, "pt_text_poke"), 1);
	CHECK_INT(sptd_col_pt_images_pokes(st, pt), 2);
	CHECK_INT(count_text_pokes(st, 2), 1);
	CHECK_INT(q(st, "SELECT count(*) FROM raw_sideband WHERE cpu = 1 AND seq = 2"), 1);
	CHECK_INT(meta(st, "pt_text_pokes"), 2);
	CHECK_INT(sptd_col_pt_images_pokes(NULL, pt), -EINVAL);
	test_ksyms(st, pt, root);
	CHECK_INT(sptd_col_pt_images_pokes(st, NULL), -EINVAL);
	CHECK_INT(sptd_col_derive_all(st, 1), 0);
	CHECK(sptd_col_derive_pt_sideband(st) >= 2);
	/* resume works and a second freeze sees no new bytes from the fake */
	CHECK_INT(sptd_col_pt_enable(pt), 0);

	/* the raw capture is the bytes the hardware left, oldest first */
	for (int c = 0; c < NCPU; c++) {
		struct sptd_store_stmt *s = NULL;

		snprintf(sql, sizeof(sql), "SELECT data FROM raw_pt WHERE cpu = %d", c);
		CHECK_INT(sptd_store_prepare(st, sql, &s), 0);
		if (s && sptd_store_step(s) == 1) {
			size_t len = 0;
			const void *blob = sptd_store_column_blob(s, 0, &len);

			CHECK_INT(len, expect_len[c]);
			CHECK(blob && len == expect_len[c] && memcmp(blob, expect[c], len) == 0);
		} else {
			CHECK(!"raw_pt row missing");
		}
		sptd_store_finalize(s);
	}
	/* decoded == a direct decode of the same bytes with the same config */
	CHECK_INT(direct_decode(st, image_path, expect, expect_len, &d), 0);
	for (int c = 0; c < NCPU; c++)
		for (int i = 0; i < STATS; i++) {
			snprintf(sql, sizeof(sql), "SELECT value FROM stats WHERE cpu = %d AND name = '%s'",
			         c, stat_names[i]);
			if (q(st, sql) != d.stats[c][i])
				fprintf(stderr, "cpu %d %s: incident %lld, direct %lld\n", c, stat_names[i],
				        (long long)q(st, sql), (long long)d.stats[c][i]);
			CHECK_INT(q(st, sql), d.stats[c][i]);
		}
	CHECK_INT(q(st, "SELECT count(*) FROM slice"), d.slices);
	/* the whole trace decodes to the reference figures (MANIFEST.md) */
	CHECK_INT(d.stats[0][0], 149576);
	CHECK_INT(d.stats[0][1], 219);
	CHECK_INT(d.stats[0][2], 111);
	CHECK(q(st, "SELECT count(*) FROM slice") > 100);
	/* gaps where the fake lost data: the truncated AUX record, a PT
	 * resync on cpu 2, the LOST record */
	CHECK_INT(q(st, "SELECT count(*) FROM gap WHERE cpu = 2 AND reason LIKE "
	            "'sideband: pt aux data truncated%'"), 1);
	CHECK(q(st, "SELECT count(*) FROM gap WHERE cpu = 2 AND reason LIKE 'pt: %'") >= 1);
	CHECK(d.gaps[2] >= 1);
	CHECK(d.stats[2][0] < d.stats[0][0]);
	CHECK_INT(q(st, "SELECT count(*) FROM gap WHERE cpu = 2 AND reason = "
	            "'sideband: 3 sideband records lost'"), 1);
	CHECK_INT(q(st, "SELECT count(*) FROM gap WHERE cpu = 0 AND reason LIKE 'sideband:%'"), 0);
	/* sideband became rows */
	CHECK_INT(q(st, "SELECT count(*) FROM raw_switch WHERE cpu = 1 AND prev_tid = 0"), 1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_task WHERE tid = %d AND comm = 'unzip'", me);
	CHECK(q(st, sql) >= 1);
	CHECK_INT(q(st, "SELECT count(*) FROM raw_image i JOIN dso d ON d.id = i.dso_id "
	            "WHERE i.addr = 4194304 AND d.path LIKE '[anon:%'"), 1);
	CHECK(q(st, "SELECT count(*) FROM raw_sideband") >= 3);
	CHECK_INT(meta(st, "pt_mtc_freq"), 3);   /* perf's default mtc_period */
	CHECK_INT(meta(st, "pt_cpu_family"), 6);
	CHECK_INT(meta(st, "pt_cpu_model"), 85);
	/* perf clock and CLOCK_MONOTONIC were related at the freeze: the
	 * fake made them agree to within scheduling noise */
	CHECK(llabs(meta(st, "perf_clock_offset_ns")) < 50000000);
	CHECK_INT(meta(st, "pt_nom_freq"), 34);
	CHECK_INT(meta(st, "pt_cpuid15_eax"), 2);
	CHECK_INT(meta(st, "pt_cpuid15_ebx"), 284);
	CHECK_INT(meta(st, "tsc_mult"), 1 << 30);
	CHECK_INT(meta(st, "tsc_shift"), 31);
	{
		char src[32] = "";

		sptd_store_meta_get(st, "pt_time_source", src, sizeof(src));
		CHECK_STR(src, "perf");
	}
	CHECK_INT(sptd_store_commit(st), 0);

	/* Incidents in a row: the kernel resumes each CPU's AUX ring at the
	 * old head over the old bytes; an incident holds only what its own
	 * run wrote.  cpu 0: a short marker after a ring never wrapped; cpu 1:
	 * exactly one ring's worth; cpu 2: more than a ring. */
	marker = malloc(2 * aux + 777);
	for (size_t i = 0; i < 2 * aux + 777; i++)
		marker[i] = (unsigned char)(1 + (i * 7 + 3) % 251);
	scripts[0] = (struct fakepmu_script){ .pt = marker, .pt_len = 5000, .aux_time = 4000 };
	scripts[1] = (struct fakepmu_script){ .pt = marker + 11, .pt_len = aux, .aux_time = 4000 };
	scripts[2] = (struct fakepmu_script){ .pt = marker + 5, .pt_len = aux + 777,
	                                      .aux_time = 4000 };
	{
		const unsigned char *want[NCPU] = { marker, marker + 11, marker + 5 + 777 };
		size_t want_len[NCPU] = { 5000, aux, aux };

		check_incident(pt, root, "incident2.db", want, want_len);
	}
	/* next: cpu 0 writes nothing, cpu 1 a little (its ring was full),
	 * cpu 2 half a ring */
	CHECK_INT(sptd_col_pt_enable(pt), 0);
	scripts[0] = (struct fakepmu_script){ .aux_time = 5000 };
	scripts[1] = (struct fakepmu_script){ .pt = marker + 100, .pt_len = 300, .aux_time = 5000 };
	scripts[2] = (struct fakepmu_script){ .pt = marker + 200, .pt_len = aux / 2,
	                                      .aux_time = 5000 };
	{
		const unsigned char *want[NCPU] = { NULL, marker + 100, marker + 200 };
		size_t want_len[NCPU] = { 0, 300, aux / 2 };

		check_incident(pt, root, "incident3.db", want, want_len);
	}
out:
	sptd_store_destroy(st);
	sptd_col_pt_destroy(pt);
	CHECK_INT(fakepmu_open_count(), 0);
	fakepmu_uninstall();
	snprintf(sql, sizeof(sql), "rm -rf '%s'", root);
	if (system(sql) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	free(trace);
	free(image);
	free(wrapped_stream);
	free(marker);
	free(expect[2]);
	return SPTD_TEST_END();
}
