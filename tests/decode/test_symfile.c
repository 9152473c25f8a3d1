/* test_symfile.c — ELF and kallsyms symbol tables, build-ids, mapping bias
 * and demangling, checked against nm/readelf and the test's own mappings. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sptd_dec.h"
#include "nm_addr.h"
#include "sptd_test.h"


/* The "Build ID:" line of `readelf -n @path`, "" when none. */
static void readelf_build_id(const char *path, char *out, size_t len)
{
	char cmd[PATH_MAX + 64], line[1024];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");

		if (b && !out[0]) {
			snprintf(out, len, "%s", b + 10);
			out[strcspn(out, " \n")] = '\0';
		}
	}
	pclose(p);
}

static void test_fixture(void)
{
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	char want[256];
	uint64_t a_static, a_global, a_main, a_method;

	CHECK_INT(sptd_dec_symfile_load_elf(SPTD_SYMFIX, &sf), 0);
	if (!sf)
		return;
	CHECK(sptd_dec_symfile_count(sf) >= 3);

	a_static = sptd_test_nm_addr(SPTD_SYMFIX, "symfix_static_helper");
	a_global = sptd_test_nm_addr(SPTD_SYMFIX, "symfix_global");
	a_main = sptd_test_nm_addr(SPTD_SYMFIX, "main");
	CHECK(a_static && a_global && a_main);

	CHECK_INT(sptd_dec_symfile_lookup(sf, a_static, &sym), 0);
	CHECK_STR(sym.name, "symfix_static_helper");
	CHECK_INT(sym.addr, a_static);
	CHECK(sym.size > 0);
	/* an address inside the function, not only its start */
	CHECK_INT(sptd_dec_symfile_lookup(sf, a_static + 1, &sym), 0);
	CHECK_STR(sym.name, "symfix_static_helper");
	CHECK_INT(sptd_dec_symfile_lookup(sf, a_global + 2, &sym), 0);
	CHECK_STR(sym.name, "symfix_global");
	CHECK_INT(sptd_dec_symfile_lookup(sf, a_main, &sym), 0);
	CHECK_STR(sym.name, "main");
	/* below every function, and far past them */
	CHECK_INT(sptd_dec_symfile_lookup(sf, 0x10, &sym), -ENOENT);
	CHECK_INT(sptd_dec_symfile_lookup(sf, UINT64_MAX - 1, &sym), -ENOENT);

	if (SPTD_SYMFIX_CXX) {
		a_method = sptd_test_nm_addr(SPTD_SYMFIX, "_ZN6sptdfx6Widget6methodEi");
		CHECK(a_method != 0);
		CHECK_INT(sptd_dec_symfile_lookup(sf, a_method + 1, &sym), 0);
		CHECK_STR(sym.name, "sptdfx::Widget::method(int)");
	}

	readelf_build_id(SPTD_SYMFIX, want, sizeof(want));
	CHECK(want[0] != '\0');
	CHECK_STR(sptd_dec_symfile_build_id(sf), want);
	sptd_dec_symfile_destroy(sf);
}

static __attribute__((noinline, used)) int symfile_test_marker(int x)
{
	return x * 5 + 3;
}

/* Find the mapping of this process that contains @addr: its path, start
 * and file offset. */
static int self_mapping(uint64_t addr, char *path, size_t len, uint64_t *start,
                        uint64_t *pgoff)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t s, e, off;
		int name_at = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n",
		           &s, &e, &off, &name_at) < 3 || name_at == 0)
			continue;
		if (addr < s || addr >= e)
			continue;
		snprintf(path, len, "%s", line + name_at);
		path[strcspn(path, "\n")] = '\0';
		*start = s;
		*pgoff = off;
		found = 1;
	}
	fclose(f);
	return found;
}

/* Bias of a real PIE mapping (this test) and a real shared object (libc):
 * runtime address - bias must land in the right function. */
static void test_bias(void)
{
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	char path[PATH_MAX];
	uint64_t start, pgoff, fn = (uint64_t)(uintptr_t)&symfile_test_marker;
	int64_t bias = 0;

	CHECK_INT(symfile_test_marker(1), 8);
	CHECK(self_mapping(fn, path, sizeof(path), &start, &pgoff));
	CHECK_INT(sptd_dec_symfile_load_elf(path, &sf), 0);
	if (sf) {
		CHECK_INT(sptd_dec_symfile_bias(sf, start, pgoff, &bias), 0);
		CHECK_INT(sptd_dec_symfile_lookup(sf, fn - (uint64_t)bias + 4, &sym), 0);
		CHECK_STR(sym.name, "symfile_test_marker");
		CHECK_INT(sym.addr + (uint64_t)bias, fn);
		/* an offset no PT_LOAD covers */
		CHECK_INT(sptd_dec_symfile_bias(sf, start, 1ull << 40, &bias), -ENOENT);
		CHECK_INT(sptd_dec_symfile_bias(sf, start, pgoff, NULL), -EINVAL);
	}
	sptd_dec_symfile_destroy(sf);
	sf = NULL;

	fn = (uint64_t)(uintptr_t)&getpid;
	CHECK(self_mapping(fn, path, sizeof(path), &start, &pgoff));
	CHECK_INT(sptd_dec_symfile_load_elf(path, &sf), 0);
	if (sf) {
		CHECK_INT(sptd_dec_symfile_bias(sf, start, pgoff, &bias), 0);
		CHECK_INT(sptd_dec_symfile_lookup(sf, fn - (uint64_t)bias, &sym), 0);
		CHECK(sym.name && strstr(sym.name, "getpid") != NULL);
		CHECK_INT(sym.addr + (uint64_t)bias, fn);
	}
	sptd_dec_symfile_destroy(sf);
}

static void test_elf_errors(void)
{
	struct sptd_dec_symfile *sf = (void *)1;
	char path[] = "/tmp/sptd-symfile-XXXXXX";
	int fd;

	CHECK_INT(sptd_dec_symfile_load_elf("/nonexistent/sptd", &sf), -ENOENT);
	CHECK(sf == NULL);
	CHECK_INT(sptd_dec_symfile_load_elf(NULL, &sf), -EINVAL);
	CHECK_INT(sptd_dec_symfile_load_elf(SPTD_SYMFIX, NULL), -EINVAL);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, "not an elf file at all\n", 23) == 23);
		close(fd);
		CHECK_INT(sptd_dec_symfile_load_elf(path, &sf), -EBADMSG);
		unlink(path);
	}
	CHECK_INT(sptd_dec_symfile_lookup(NULL, 0, NULL), -EINVAL);
	CHECK(sptd_dec_symfile_build_id(NULL) == NULL);
	CHECK_INT(sptd_dec_symfile_count(NULL), 0);
	sptd_dec_symfile_destroy(NULL);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void test_kallsyms_file(void)
{
	char path[] = "/tmp/sptd-kallsyms-XXXXXX";
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	int64_t bias = 1;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	CHECK_INT(write_file(path,
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 t alias_of_stext\n"
		"ffffffff81000100 T do_one\n"
		"ffffffff81000180 d some_data\n"
		"ffffffff81000200 t local_two\n"
		"ffffffff81000300 W weak_three\n"
		"garbage line\n"
		"ffffffff81000400 T _etext\n"
		"ffffffffc0001000 t mod_func\t[mymod]\n"
		"ffffffffc0001040 T mod_func2\t[mymod]\n"), 0);
	CHECK_INT(sptd_dec_symfile_load_kallsyms(path, &sf), 0);
	if (sf) {
		CHECK_INT(sptd_dec_symfile_count(sf), 7);
		CHECK(sptd_dec_symfile_build_id(sf) == NULL);
		CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffff81000000ull, &sym), 0);
		CHECK_STR(sym.name, "_stext");
		CHECK_INT(sym.size, 0x100);
		CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffff810001a0ull, &sym), 0);
		/* data symbols are not functions: do_one reaches local_two */
		CHECK_STR(sym.name, "do_one");
		CHECK_INT(sym.size, 0x100);
		CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffff810003ffull, &sym), 0);
		CHECK_STR(sym.name, "weak_three");
		CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffffc0001010ull, &sym), 0);
		CHECK_STR(sym.name, "mod_func");
		CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffffc0001041ull, &sym), 0);
		CHECK_STR(sym.name, "mod_func2");
		CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffff80000000ull, &sym), -ENOENT);
		CHECK_INT(sptd_dec_symfile_bias(sf, 0x1000, 0, &bias), 0);
		CHECK_INT(bias, 0);
	}
	sptd_dec_symfile_destroy(sf);
	sf = NULL;

	/* kptr_restrict: every address zero */
	CHECK_INT(write_file(path,
		"0000000000000000 T _stext\n"
		"0000000000000000 T do_one\n"), 0);
	CHECK_INT(sptd_dec_symfile_load_kallsyms(path, &sf), -EACCES);
	CHECK(sf == NULL);
	unlink(path);
	CHECK_INT(sptd_dec_symfile_load_kallsyms("/nonexistent/kallsyms", &sf), -ENOENT);
	CHECK_INT(sptd_dec_symfile_load_kallsyms(NULL, &sf), -EINVAL);
}

/* The running kernel's table: "schedule" must be found at the address
 * /proc/kallsyms gives it. */
static void test_proc_kallsyms(void)
{
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	char line[512], name[256], type;
	uint64_t addr, sched = 0;
	FILE *f;

	if (geteuid() != 0) {
		fprintf(stderr, "note: not root, /proc/kallsyms check skipped\n");
		return;
	}
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) == 3 &&
		    strcmp(name, "schedule") == 0)
			sched = addr;
	fclose(f);
	CHECK(sched != 0);
	CHECK_INT(sptd_dec_symfile_load_kallsyms("/proc/kallsyms", &sf), 0);
	if (!sf)
		return;
	CHECK(sptd_dec_symfile_count(sf) > 1000);
	CHECK_INT(sptd_dec_symfile_lookup(sf, sched + 1, &sym), 0);
	CHECK_INT(sym.addr, sched);
	CHECK_STR(sym.name, "schedule");
	sptd_dec_symfile_destroy(sf);
}

/* A symfile from a list (kernel functions an incident stored): sized
 * ones end where they say, size 0 reaches the next; kernel bytes of a
 * session are named by it, user bytes not. */
static void test_from_list(void)
{
	const struct sptd_dec_sym list[] = {
		{ "x64_sys_call", 0xffffffff81000027ull, 6 },
		{ "do_syscall_64", 0xffffffff81000018ull, 0 },
		{ NULL, 0xffffffff81000100ull, 4 },          /* no name: left out */
		{ "ptgen_mod_hook", 0xffffffffc0000010ull, 17 },
	};
	static const uint8_t code[64] = { 0xc3 };
	struct sptd_dec_config cfg = { .jobs = 1 };
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_session *s = NULL;
	struct sptd_dec_sym sym;

	CHECK_INT(sptd_dec_symfile_from_list(NULL, 1, &sf), -EINVAL);
	CHECK_INT(sptd_dec_symfile_from_list(list, 4, NULL), -EINVAL);
	CHECK_INT(sptd_dec_symfile_from_list(list, 0, &sf), 0);
	CHECK_INT(sptd_dec_symfile_count(sf), 0);
	sptd_dec_symfile_destroy(sf);
	CHECK_INT(sptd_dec_symfile_from_list(list, 4, &sf), 0);
	CHECK_INT(sptd_dec_symfile_count(sf), 3);
	CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffff81000026ull, &sym), 0);
	CHECK_STR(sym.name, "do_syscall_64");
	CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffff8100002cull, &sym), 0);
	CHECK_STR(sym.name, "x64_sys_call");
	CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffff8100002dull, &sym), -ENOENT);
	CHECK_INT(sptd_dec_symfile_lookup(sf, 0xffffffffc0000020ull, &sym), 0);
	CHECK_STR(sym.name, "ptgen_mod_hook");
	CHECK_INT(sptd_dec_session_kernel_syms(NULL, sf), -EINVAL);
	CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
	CHECK_INT(sptd_dec_session_kernel_syms(s, NULL), -EINVAL);
	CHECK_INT(sptd_dec_session_add_bytes(s, -1, "kernel.text", code, sizeof(code),
	                                     0xffffffff81000000ull, 1), 0);
	CHECK_INT(sptd_dec_session_add_bytes(s, 7, "anon", code, sizeof(code), 0x400000, 2), 0);
	CHECK_INT(sptd_dec_session_kernel_syms(s, sf), 1);    /* the kernel bytes only */
	CHECK_INT(sptd_dec_session_kernel_syms(s, sf), 0);    /* named already */
	sptd_dec_session_destroy(s);
	sptd_dec_symfile_destroy(sf);
}

static void test_demangle(void)
{
	char buf[256], small[8];

	CHECK_INT(sptd_dec_demangle("_ZN6sptdfx6Widget6methodEi", buf, sizeof(buf)),
	          (int)strlen("sptdfx::Widget::method(int)"));
	CHECK_STR(buf, "sptdfx::Widget::method(int)");
	CHECK(sptd_dec_demangle("_Z3foov.cold", buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "foo() [clone .cold]");
	/* Rust legacy: the hash goes, the escapes are undone */
	CHECK(sptd_dec_demangle("_ZN4core3fmt5write17h0123456789abcdefE", buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "core::fmt::write");
	CHECK(sptd_dec_demangle("_ZN66_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop"
	                        "..Drop$GT$4drop17h0123456789abcdefE", buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop");
	/* not mangled: a copy and -EINVAL */
	CHECK_INT(sptd_dec_demangle("main", buf, sizeof(buf)), -EINVAL);
	CHECK_STR(buf, "main");
	/* Rust v0, D and OCaml too, as perf prints them (Rust without the
	 * crate disambiguator c++filt adds: "mycrate[3c1c0]::foo") */
	CHECK_INT(sptd_dec_demangle("_RNvCs1234_7mycrate3foo", buf, sizeof(buf)),
	          (int)strlen("mycrate::foo"));
	CHECK_STR(buf, "mycrate::foo");
	CHECK(sptd_dec_demangle("_D3std5stdio7writelnFZv", buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "std.stdio.writeln()");
	CHECK(sptd_dec_demangle("camlStdlib__List__map_123", buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "Stdlib.List.map");
	/* C names that look a little like manglings stay as they are */
	CHECK_INT(sptd_dec_demangle("_Dmain_helper", buf, sizeof(buf)), -EINVAL);
	CHECK_INT(sptd_dec_demangle("caml_alloc", buf, sizeof(buf)), -EINVAL);
	CHECK_INT(sptd_dec_demangle("_R", buf, sizeof(buf)), -EINVAL);
	/* a name too long to trust the demangler's stack with stays mangled */
	{
		size_t n = 20000;
		char *big = malloc(n + 1), *out = malloc(n + 1);

		CHECK(big && out);
		if (big && out) {
			memcpy(big, "_ZN", 3);
			for (size_t i = 3; i + 4 < n; i += 4)
				memcpy(big + i, "1a1b", 4);
			big[n - 1] = 'E';
			big[n] = '\0';
			CHECK_INT(sptd_dec_demangle(big, out, n + 1), -EINVAL);
			CHECK(strcmp(out, big) == 0);
		}
		free(big);
		free(out);
	}
	/* broken mangling is not a crash */
	CHECK_INT(sptd_dec_demangle("_ZN3foo", buf, sizeof(buf)), -EINVAL);
	CHECK_STR(buf, "_ZN3foo");
	/* truncation keeps the buffer terminated and reports the full length */
	CHECK_INT(sptd_dec_demangle("_ZN6sptdfx6Widget6methodEi", small, sizeof(small)),
	          (int)strlen("sptdfx::Widget::method(int)"));
	CHECK_STR(small, "sptdfx:");
	CHECK_INT(sptd_dec_demangle(NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_INT(sptd_dec_demangle("main", NULL, 4), -EINVAL);
	CHECK_INT(sptd_dec_demangle("main", buf, 0), -EINVAL);
}

int main(void)
{
	test_fixture();
	test_bias();
	test_elf_errors();
	test_kallsyms_file();
	test_from_list();
	test_proc_kallsyms();
	test_demangle();
	return SPTD_TEST_END();
}
