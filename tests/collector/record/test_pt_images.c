/* test_pt_images.c — images of mapped files for PT: build-ids (equal to
 * decode/'s reader), the content-addressed cache (copied once, checked),
 * embedding with --portable, the decode-time lookup order (incident, cache,
 * recorded path; a changed file is refused), file mappings of exited
 * processes rebuilt from MMAP2 sideband records, and kernel code (issue
 * 34: text, module text, BPF JIT and trampolines out of a fake kernel's
 * kcore, kallsyms and /proc/modules; a kernel whose kcore cannot be read).
 * Real files (a copy of this test's own ELF), real incidents; PT made
 * with libipt's encoder, decoded by decode/ from the incident's rows. */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-pt.h>

#include "fakepmu/fakepmu.h"
#include "fakepmu/fakepmu_kcore.h"
#include "pt_encode.h"
#include "pt-local.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"

static char root[] = "/tmp/sptd-ptimg-XXXXXX";

static int spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int same_file(const char *a, const void *data, size_t len)
{
	size_t n;
	unsigned char *b = sptd_test_slurp(a, &n);
	int same = b && n == len && memcmp(b, data, len) == 0;

	free(b);
	return same;
}

static int64_t q(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	return sptd_store_query_int(st, sql, &v) < 0 ? -1 : v;
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", root, name);
}

/* ---- kernel code ------------------------------------------------------------ */

/* The fake kernel: its text calls a module's function, then BPF JIT code,
 * then leaves by `jmp *%rax`.  Module sptdmod's /proc/modules size runs
 * past sptdmod2 and the BPF program (it counts data too). */
#define MOD_A (FAKEKERNEL_MODULES + 0x1000)
#define MOD_B (FAKEKERNEL_MODULES + 0x2000)
#define BPF_PROG (FAKEKERNEL_MODULES + 0x3000)
#define TRAMP (FAKEKERNEL_MODULES + 0x5000)
static const uint8_t mod_a_code[] = { 0x90, 0xc3 };         /* nop; ret */
static const uint8_t mod_b_code[] = { 0xc3 };
static const uint8_t bpf_code[] = { 0x90, 0x90, 0xc3 };
static const uint8_t tramp_code[] = { 0xc3 };
static const struct fakepmu_kcode kcode[] = {
	{ "sptdmod", NULL, MOD_A, 0x6000, mod_a_code, sizeof(mod_a_code) },
	{ "sptdmod2", NULL, MOD_B, 0x800, mod_b_code, sizeof(mod_b_code) },
	{ "bpf_prog_0123456789abcdef_sptd", "bpf", BPF_PROG, 0, bpf_code, sizeof(bpf_code) },
	{ "ftrace_trampoline", "__builtin__ftrace", TRAMP, 0, tramp_code, sizeof(tramp_code) },
};

static void kernel_text(uint8_t *text, size_t len)
{
	int32_t rel;

	memset(text, 0x90, len);
	text[0] = 0xe8;                                           /* call MOD_A */
	rel = (int32_t)(MOD_A - (FAKEKERNEL_TEXT + 5));
	memcpy(text + 1, &rel, 4);
	text[5] = 0xe8;                                           /* call BPF_PROG */
	rel = (int32_t)(BPF_PROG - (FAKEKERNEL_TEXT + 10));
	memcpy(text + 6, &rel, 4);
	text[10] = 0xff;                                          /* jmp *%rax */
	text[11] = 0xe0;
}

/* PSB, PSBEND, MODE.Exec 64-bit, TIP.PGE at the text, the two returns
 * (compressed: one TNT bit each), TIP.PGD at the indirect jump. */
static size_t kernel_trace(uint8_t *buf, size_t cap)
{
	struct pt_encoder *enc = sptd_test_encoder(buf, cap);
	struct pt_packet p;
	int bad = 0;

	if (!enc)
		return 0;
	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	bad |= sptd_test_encode(enc, &p);
	p.type = ppt_psbend;
	bad |= sptd_test_encode(enc, &p);
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	bad |= sptd_test_encode(enc, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tip_pge;
	p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = FAKEKERNEL_TEXT;
	bad |= sptd_test_encode(enc, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_8;
	p.payload.tnt.bit_size = 2;
	p.payload.tnt.payload = 3;
	bad |= sptd_test_encode(enc, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tip_pgd;
	p.payload.ip.ipc = pt_ipc_suppressed;
	bad |= sptd_test_encode(enc, &p);
	return sptd_test_encoder_end(enc, bad);
}

/* What decoding the kernel trace gave. */
struct kresult {
	int calls, decode_errors, gaps;
	char reason[256];             /* the first gap's */
};

static int k_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	struct kresult *r = ctx;

	(void)ts;
	(void)dur;
	(void)cpu;
	if (!r->gaps++)
		snprintf(r->reason, sizeof(r->reason), "%s", reason);
	return 0;
}

static int k_stat(void *ctx, const char *name, int cpu, int64_t value)
{
	struct kresult *r = ctx;

	(void)cpu;
	if (strcmp(name, "calls") == 0)
		r->calls += (int)value;
	else if (strcmp(name, "decode_errors") == 0)
		r->decode_errors += (int)value;
	return 0;
}

static int k_image(void *arg, const struct sptd_store_raw_image_row *row)
{
	return sptd_dec_session_add_bytes(arg, -1, row->path ? row->path : "image", row->data,
	                                  row->len, row->addr, row->dso_id);
}

/* Decode the kernel trace with the code @st holds, as derive does: every
 * raw_image row for every task, and meta pt_kernel_image's "none: WHY"
 * as the session's kernel note. */
static void kernel_decode(struct sptd_store *st, struct kresult *r)
{
	struct sptd_dec_config cfg = { .no_timing = 1, .jobs = 1 };
	struct sptd_dec_sink sink = { .ctx = r, .gap = k_gap, .stat = k_stat };
	struct sptd_dec_session *s = NULL;
	char image[512];
	uint8_t pt[256];
	size_t len = kernel_trace(pt, sizeof(pt));

	memset(r, 0, sizeof(*r));
	CHECK(len > 0);
	CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
	if (!s)
		return;
	CHECK(SPTD_STORE_EACH(st, raw_image_path, k_image, s) >= 0);
	if (sptd_store_meta_get(st, "pt_kernel_image", image, sizeof(image)) >= 0 &&
	    strncmp(image, "none: ", 6) == 0)
		CHECK_INT(sptd_dec_session_set_kernel_note(s, image + 6), 0);
	CHECK_INT(sptd_dec_session_add_pt(s, 0, pt, len), 0);
	CHECK(sptd_dec_session_run(s, &sink) >= 0);
	sptd_dec_session_destroy(s);
}

/* The bytes of the raw_image row of dso @path: its address and length
 * must be @addr and @len, its head @code. */
static void check_row(struct sptd_store *st, const char *path, uint64_t addr, size_t len,
                      const uint8_t *code, size_t clen)
{
	struct sptd_store_stmt *s = NULL;
	char sql[512];

	snprintf(sql, sizeof(sql), "SELECT i.addr, i.data FROM raw_image i JOIN dso d ON "
	         "d.id = i.dso_id WHERE d.path = '%s'", path);
	CHECK_INT(sptd_store_prepare(st, sql, &s), 0);
	if (s && sptd_store_step(s) == 1) {
		size_t n = 0;
		const uint8_t *blob = sptd_store_column_blob(s, 1, &n);

		CHECK_INT(sptd_store_column_int(s, 0), (int64_t)addr);
		CHECK_INT((int64_t)n, (int64_t)len);
		CHECK(blob && n >= clen && memcmp(blob, code, clen) == 0);
	} else {
		fprintf(stderr, "  no raw_image row for %s\n", path);
		CHECK(!"raw_image row missing");
	}
	sptd_store_finalize(s);
}

static void test_kernel(void)
{
	static uint8_t text[4096];
	char kroot[512], db[512], why[1024], buf[1024];
	struct sptd_store *st = NULL;
	struct kresult r;

	kernel_text(text, sizeof(text));
	path_of(kroot, sizeof(kroot), "kernel");
	CHECK_INT(fakepmu_kernel_write(kroot, text, sizeof(text), kcode, 4, 0), 0);

	/* text, both modules (sizes cut at the next code), the BPF program and
	 * the trampoline: the calls into them decode with no gap */
	path_of(db, sizeof(db), "k.db");
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_col_pt_images_kernel(st, kroot, NULL, why, sizeof(why)), 5);
	CHECK_STR(why, "");
	CHECK_INT(sptd_store_meta_get(st, "pt_kernel_image", buf, sizeof(buf)) >= 0, 1);
	CHECK_STR(buf, "kcore");
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_kernel_modules'"), 2);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_kernel_jit'"), 2);
	check_row(st, "[kernel.text]", FAKEKERNEL_TEXT, sizeof(text), text, sizeof(text));
	check_row(st, "[module:sptdmod]", MOD_A, MOD_B - MOD_A, mod_a_code, sizeof(mod_a_code));
	check_row(st, "[module:sptdmod2]", MOD_B, 0x800, mod_b_code, sizeof(mod_b_code));
	check_row(st, "[jit:bpf_prog_0123456789abcdef_sptd]", BPF_PROG, TRAMP - BPF_PROG, bpf_code,
	          sizeof(bpf_code));
	check_row(st, "[jit:ftrace_trampoline]", TRAMP, 64 << 10, tramp_code, sizeof(tramp_code));
	kernel_decode(st, &r);
	if (r.gaps)
		fprintf(stderr, "  gap: %s\n", r.reason);
	CHECK_INT(r.gaps, 0);
	CHECK_INT(r.decode_errors, 0);
	CHECK_INT(r.calls, 2);
	CHECK_INT(sptd_dec_session_set_kernel_note(NULL, "x"), -EINVAL);
	CHECK_INT(sptd_col_pt_images_kernel(NULL, kroot, NULL, why, sizeof(why)), -EINVAL);
	CHECK_INT(sptd_col_pt_images_kernel(st, kroot, NULL, NULL, 0), -EINVAL);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	st = NULL;

	/* kcore unreadable (issue 34 item 9): no kernel code, the incident goes
	 * on; meta and the warning say why, and so does the gap where the trace
	 * runs into the kernel */
	snprintf(buf, sizeof(buf), "%s/proc/kcore", kroot);
	CHECK_INT(truncate(buf, FAKEKERNEL_DATA_OFF + 16), 0);   /* reads come up short */
	path_of(db, sizeof(db), "k2.db");
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_col_pt_images_kernel(st, kroot, NULL, why, sizeof(why)), 0);
	CHECK(strstr(why, "kernel text not captured") && strstr(why, "/proc/kcore") &&
	      strstr(why, strerror(EIO)));
	CHECK_INT(sptd_store_meta_get(st, "pt_kernel_image", buf, sizeof(buf)) >= 0, 1);
	CHECK(strncmp(buf, "none: ", 6) == 0 && strstr(buf, strerror(EIO)));
	CHECK_INT(q(st, "SELECT count(*) FROM raw_image"), 0);
	kernel_decode(st, &r);
	CHECK_INT(r.gaps, 1);
	CHECK(strstr(r.reason, "kernel text not captured") && strstr(r.reason, strerror(EIO)));
	if (r.gaps)
		printf("  gap: %s\n", r.reason);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	st = NULL;

	/* addresses hidden (no CAP_SYSLOG): nothing copied, said */
	CHECK_INT(fakepmu_kernel_write(kroot, text, sizeof(text), kcode, 4, 1), 0);
	path_of(db, sizeof(db), "k3.db");
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		return;
	CHECK_INT(sptd_col_pt_images_kernel(st, kroot, NULL, why, sizeof(why)), 0);
	CHECK(strstr(why, "kernel addresses hidden") != NULL);
	CHECK_INT(q(st, "SELECT count(*) FROM raw_image"), 0);
	sptd_store_destroy(st);
}

int main(void)
{
	char prog[512], other[512], cache[512], cache2[512], db[512], bid[130], dbid[130];
	char expect[1024], sql[1024], junk[512];
	unsigned char *self, *otherbytes;
	size_t self_len, other_len;
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_store *st = NULL;
	struct sptd_col_pt_imgfind *f = NULL;
	const char *where = NULL;
	int ret;

	self = sptd_test_slurp("/proc/self/exe", &self_len);
	otherbytes = sptd_test_slurp("/bin/true", &other_len);
	if (!self || !otherbytes)
		SPTD_SKIP("cannot read /proc/self/exe or /bin/true");
	if (!mkdtemp(root))
		SPTD_SKIP("no temp dir");
	path_of(prog, sizeof(prog), "prog");
	path_of(other, sizeof(other), "true");
	path_of(cache, sizeof(cache), "cache");
	path_of(cache2, sizeof(cache2), "cache2");
	path_of(junk, sizeof(junk), "junk");
	CHECK_INT(spit(prog, self, self_len), 0);
	CHECK_INT(spit(other, otherbytes, other_len), 0);
	CHECK_INT(spit(junk, "not elf at all, just text", 25), 0);

	/* ---- build-ids: the same hex as decode/'s ELF reader -------------- */
	CHECK_INT(sptd_dec_build_id(prog, bid, sizeof(bid)), 0);
	CHECK_INT(sptd_dec_symfile_load_elf(prog, &sf), 0);
	if (sf && sptd_dec_symfile_build_id(sf))
		CHECK_STR(bid, sptd_dec_symfile_build_id(sf));
	else
		CHECK(!"decode/ found no build-id in this test binary");
	sptd_dec_symfile_destroy(sf);
	sf = NULL;
	CHECK_INT(sptd_dec_build_id(other, dbid, sizeof(dbid)), 0);
	CHECK(strcmp(bid, dbid) != 0);
	CHECK_INT(sptd_dec_build_id(junk, dbid, sizeof(dbid)), -EBADMSG);
	CHECK_INT(sptd_dec_build_id("/nonexistent/x", dbid, sizeof(dbid)), -ENOENT);
	CHECK_INT(sptd_dec_build_id(NULL, dbid, sizeof(dbid)), -EINVAL);
	CHECK_INT(sptd_dec_build_id(prog, dbid, 4), -ENAMETOOLONG);

	/* ---- the cache: DIR/<build-id>/<basename>, copied once, checked --- */
	CHECK_INT(sptd_col_pt_imgcache_path(cache, "xyz", prog, expect, sizeof(expect)), -EINVAL);
	CHECK_INT(sptd_col_pt_imgcache_path(cache, bid, prog, expect, sizeof(expect)), 0);
	{
		char want[1024], out[1024];
		struct stat a, b;

		snprintf(want, sizeof(want), "%s/%s/prog", cache, bid);
		CHECK_STR(expect, want);
		CHECK_INT(sptd_col_pt_imgcache_put(cache, prog, bid, out, sizeof(out)), 1);
		CHECK_STR(out, want);
		CHECK(same_file(out, self, self_len));
		CHECK_INT(stat(out, &a), 0);
		CHECK_INT(sptd_col_pt_imgcache_put(cache, prog, bid, out, sizeof(out)), 0);
		CHECK_INT(stat(out, &b), 0);
		CHECK(a.st_ino == b.st_ino && a.st_mtime == b.st_mtime);
		/* a file whose contents no longer have the build-id is refused */
		CHECK_INT(sptd_col_pt_imgcache_put(cache2, other, bid, out, sizeof(out)), -ESTALE);
		CHECK(access(out, F_OK) != 0);
		CHECK_INT(sptd_col_pt_imgcache_put(cache, "relative", bid, out, sizeof(out)), -EINVAL);
		CHECK_INT(sptd_col_pt_imgcache_put(cache, "/nonexistent/x", "abcd", out, sizeof(out)),
		          -ENOENT);
	}

	/* ---- capture with --portable: embedded bytes, missing files counted */
	path_of(db, sizeof(db), "a.db");
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		goto out;
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, prog, bid), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 2, "/nonexistent/libgone.so", "abcd"), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 3, "[vdso]", NULL), 0);
	CHECK_INT(SPTD_STORE_ADD(st, dso, 4, other, "00ff"), 0);   /* changed since */
	CHECK_INT(sptd_col_pt_images_files(st, cache2, 1), 3);
	CHECK_INT(q(st, "SELECT count(*) FROM raw_file"), 1);
	CHECK_INT(q(st, "SELECT dso_id FROM raw_file"), 1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_file WHERE build_id = '%s' AND "
	         "length(data) = %zu", bid, self_len);
	CHECK_INT(q(st, sql), 1);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_images_missing'"), 2);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_images_embedded'"), 1);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_portable'"), 1);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_images_cached'"), 1);
	CHECK_INT(sptd_store_raw_file_add(st, 1, bid, "x", 1), -EINVAL);  /* once per dso */
	CHECK_INT(sptd_store_raw_file_add(st, -1, bid, "x", 1), -EINVAL);
	CHECK_INT(sptd_store_raw_file_add(NULL, 5, bid, "x", 1), -EINVAL);
	CHECK_INT(sptd_col_pt_images_files(NULL, cache2, 1), -EINVAL);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	st = NULL;

	/* ---- decode-time lookup: the incident first ------------------------ */
	unlink(prog);   /* the recording machine's file is gone */
	CHECK_INT(setenv("SPTD_IMAGE_CACHE", "/nonexistent-cache", 1), 0);
	CHECK_INT(sptd_store_open(db, 0, &st), 0);
	if (!st)
		goto out;
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	ret = sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where);
	CHECK_INT(ret, SPTD_PT_IMAGE_EMBEDDED);
	if (ret == SPTD_PT_IMAGE_EMBEDDED) {
		struct sptd_dec_config cfg = { .jobs = 1 };
		struct sptd_dec_session *s = NULL;

		CHECK(same_file(where, self, self_len));
		CHECK(strcmp(strrchr(where, '/'), "/prog") == 0);
		snprintf(expect, sizeof(expect), "%s", where);
		/* the decoder loads it as it would the original */
		CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
		CHECK(sptd_dec_session_add_elf(s, 100, expect, 0, 1) >= 0);
		sptd_dec_session_destroy(s);
	}
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 2, "/nonexistent/libgone.so", "abcd", &where),
	          -ENOENT);
	CHECK(where == NULL);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 4, other, "00ff", &where), -ESTALE);
	CHECK_INT(sptd_col_pt_imgfind_lookup(NULL, 1, prog, bid, &where), -EINVAL);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, NULL, bid, &where), -EINVAL);
	sptd_col_pt_imgfind_destroy(f);
	f = NULL;
	CHECK(access(expect, F_OK) != 0);   /* unpacked files are removed */
	sptd_store_destroy(st);
	st = NULL;
	CHECK_INT(sptd_col_pt_imgfind_create(NULL, &f), -EINVAL);

	/* ---- then the cache (from meta), then the recorded path ------------ */
	unsetenv("SPTD_IMAGE_CACHE");
	CHECK_INT(spit(prog, self, self_len), 0);
	path_of(db, sizeof(db), "b.db");
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		goto out;
	CHECK_INT(SPTD_STORE_ADD(st, dso, 1, prog, bid), 0);
	CHECK_INT(sptd_col_pt_images_files(st, cache, 0), 1);
	CHECK_INT(q(st, "SELECT count(*) FROM sqlite_schema WHERE name = 'raw_file'"), 0);
	unlink(prog);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where), SPTD_PT_IMAGE_CACHED);
	snprintf(expect, sizeof(expect), "%s/%s/prog", cache, bid);
	CHECK(where && strcmp(where, expect) == 0);
	sptd_col_pt_imgfind_destroy(f);
	f = NULL;
	CHECK_INT(setenv("SPTD_IMAGE_CACHE", cache2, 1), 0);   /* overrides meta */
	CHECK_INT(spit(prog, self, self_len), 0);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	snprintf(expect, sizeof(expect), "%s/%s", cache2, bid);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where), SPTD_PT_IMAGE_CACHED);
	snprintf(sql, sizeof(sql), "%s/%s/prog", cache2, bid);
	CHECK(where && strcmp(where, sql) == 0);
	CHECK_INT(setenv("SPTD_IMAGE_CACHE", "/nonexistent-cache", 1), 0);
	sptd_col_pt_imgfind_destroy(f);
	CHECK_INT(sptd_col_pt_imgfind_create(st, &f), 0);
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where), SPTD_PT_IMAGE_ORIGINAL);
	/* the file checked, through a name keeping its basename (issue 28:
	 * never the user's path opened a second time) */
	CHECK(where && strcmp(strrchr(where, '/'), "/prog") == 0);
	CHECK(where && same_file(where, self, self_len));
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, NULL, &where), SPTD_PT_IMAGE_ORIGINAL);
	CHECK_INT(spit(prog, otherbytes, other_len), 0);   /* upgraded since */
	CHECK_INT(sptd_col_pt_imgfind_lookup(f, 1, prog, bid, &where), -ESTALE);
	sptd_col_pt_imgfind_destroy(f);
	f = NULL;
	sptd_col_pt_imgfind_destroy(NULL);
	unsetenv("SPTD_IMAGE_CACHE");

	/* ---- exited processes: mappings from MMAP2 records ----------------- */
	CHECK_INT(spit(prog, self, self_len), 0);
	{
		unsigned char rec[2048];
		size_t n = 0;
		int gone = 4194303, alive_elsewhere = 4194302;
		const uint64_t addr = 0x555555550000ull;
		int64_t bias = 0;
		uint64_t stype = sptd_col_pt_sideband_sample_type();

		if (kill(gone, 0) == 0)
			SPTD_SKIP("pid %d exists here", gone);
		n = fakepmu_rec_comm(rec, n, sizeof(rec), gone, gone, "prog", 100, 0);
		n = fakepmu_rec_mmap2(rec, n, sizeof(rec), gone, gone, addr, 0x4000, 0, prog, 110, 0);
		n = fakepmu_rec_mmap2(rec, n, sizeof(rec), gone, gone, addr + 0x10000, 0x1000, 0,
		                      "//anon", 111, 0);
		n = fakepmu_rec_mmap2(rec, n, sizeof(rec), alive_elsewhere, alive_elsewhere, addr,
		                      0x4000, 0, other, 112, 0);
		n = fakepmu_rec_mmap2(rec, n, sizeof(rec), gone, gone, 0x7f0000000000ull, 0x2000, 0,
		                      "/nonexistent/libgone.so", 113, 0);
		CHECK_INT(sptd_col_pt_mmaps_from_records(st, rec, n, stype, &gone, 1), 2);
		CHECK_INT(sptd_col_pt_mmaps_from_records(st, rec, n, stype, &gone, 1), 0); /* once */
		CHECK_INT(sptd_col_pt_mmaps_from_records(st, rec, n, stype, NULL, 1), -EINVAL);
		CHECK_INT(sptd_col_pt_mmaps_from_records(NULL, rec, n, stype, &gone, 1), -EINVAL);
		/* a cut-short tail keeps what came before */
		CHECK_INT(sptd_col_pt_mmaps_from_records(st, rec, n - 3, stype, &gone, 1), 0);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_mmap WHERE pid = %d", gone);
		CHECK_INT(q(st, sql), 2);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_mmap WHERE pid = %d",
		         alive_elsewhere);
		CHECK_INT(q(st, sql), 0);
		/* the file's dso row is shared (same path + build-id) */
		CHECK_INT(q(st, "SELECT count(*) FROM dso"), 2);
		snprintf(sql, sizeof(sql), "SELECT m.dso_id FROM raw_mmap m JOIN dso d ON "
		         "d.id = m.dso_id WHERE m.pid = %d AND m.start = %lld AND d.build_id = '%s'",
		         gone, (long long)addr, bid);
		CHECK_INT(q(st, sql), 1);
		CHECK_INT(q(st, "SELECT count(*) FROM dso WHERE path = '/nonexistent/libgone.so' "
		            "AND build_id IS NULL"), 1);
		CHECK_INT(sptd_dec_symfile_load_elf(prog, &sf), 0);
		if (sf)
			CHECK_INT(sptd_dec_symfile_bias(sf, addr, 0, &bias), 0);
		sptd_dec_symfile_destroy(sf);
		snprintf(sql, sizeof(sql), "SELECT bias FROM raw_mmap WHERE pid = %d AND start = %lld",
		         gone, (long long)addr);
		CHECK_INT(q(st, sql), bias);
		snprintf(sql, sizeof(sql), "SELECT bias FROM raw_mmap WHERE pid = %d AND start = %lld",
		         gone, (long long)0x7f0000000000ull);
		CHECK_INT(q(st, sql), 0x7f0000000000ll);
	}
	CHECK_INT(sptd_store_commit(st), 0);
	test_kernel();
out:
	sptd_col_pt_imgfind_destroy(f);
	sptd_store_destroy(st);
	snprintf(sql, sizeof(sql), "rm -rf '%s'", root);
	if (system(sql) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	free(self);
	free(otherbytes);
	return SPTD_TEST_END();
}
