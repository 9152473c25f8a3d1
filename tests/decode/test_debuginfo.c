/* test_debuginfo.c — a stripped file's functions named from its separate
 * debug info, found the way gdb and perf find it.
 *
 * The test copies sptd-symprog (built with -g) and libsptdsym.so into a
 * temporary directory, strips them (objcopy --strip-all: no .symtab, so
 * their static functions have no name of their own) and installs the debug
 * info (objcopy --only-keep-debug) each way in turn:
 *   - under a build-id path in temporary debug roots ($SPTD_DEBUG_DIRS);
 *   - by .gnu_debuglink: beside the file, in .debug/ beside it, under
 *     ROOT + the file's directory; a link whose CRC does not match, a FIFO
 *     in its place, and SPTD_DEBUG_DIRS="" turn it off;
 *   - MiniDebugInfo (.gnu_debugdata, xz), and a corrupt one;
 *   - as root, in /usr/lib/debug itself (the default root), removed after;
 *   - libc6-dbg's real debug file for libc.so.6 where it is installed.
 * Names are checked against nm on the unstripped copies.
 *
 * Usage: test_debuginfo SYMPROG LIBSPTDSYM */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sptd_dec.h"
#include "nm_addr.h"
#include "sptd_test.h"

static char tmp[PATH_MAX];

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run a shell command; its exit status (-1 when it could not run). */
static int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st != 0)
		fprintf(stderr, "command failed (%d): %s\n", st, cmd);
	return st;
}


/* The name @path's symbols give @addr ("" none); the symfile's origin bits
 * in *@origin and its debug file in @debug (may be NULL). */
static void name_at(const char *path, uint64_t addr, char *name, size_t len, int *origin,
                    char *debug, size_t dlen)
{
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	char abs[2 * PATH_MAX];

	name[0] = '\0';
	*origin = 0;
	if (debug)
		debug[0] = '\0';
	/* absolute, as /proc/PID/maps gives them (a debuglink is looked for in
	 * the file's directory) */
	snprintf(abs, sizeof(abs), "%s/%s", tmp, path);
	CHECK_INT(sptd_dec_symfile_load_elf(abs, &sf), 0);
	if (!sf)
		return;
	*origin = sptd_dec_symfile_origin(sf);
	if (debug && sptd_dec_symfile_debug_path(sf))
		snprintf(debug, dlen, "%s", sptd_dec_symfile_debug_path(sf));
	if (sptd_dec_symfile_lookup(sf, addr, &sym) == 0)
		snprintf(name, len, "%s", sym.name);
	sptd_dec_symfile_destroy(sf);
}

/* Expect @path to name @addr @want (through @how), or not to name it so
 * (@how 0). */
static void expect(const char *what, const char *path, uint64_t addr, const char *want,
                   int how)
{
	char name[512], debug[PATH_MAX];
	int origin;

	name_at(path, addr, name, sizeof(name), &origin, debug, sizeof(debug));
	if (how) {
		CHECK_STR(name, want);
		CHECK_INT(origin & ~SPTD_DEC_SYMS_FILE, how);
	} else {
		CHECK(strcmp(name, want) != 0);
		CHECK_INT(origin & ~SPTD_DEC_SYMS_FILE, 0);
		CHECK(debug[0] == '\0');
	}
	if ((how != 0) != (strcmp(name, want) == 0))
		fprintf(stderr, "  case: %s (name \"%s\", origin %d, debug %s)\n", what, name, origin,
		        debug[0] ? debug : "-");
}

/* The GNU build-id of @path (readelf -n), "" none. */
static void build_id_of(const char *path, char *out, size_t len)
{
	CHECK_INT(sptd_dec_build_id(path, out, len), 0);
}

static void test_build_id(const char *prog, uint64_t spin_a, uint64_t spin_b)
{
	char bid[130], dir[PATH_MAX + 64], roots[3 * PATH_MAX];

	build_id_of(prog, bid, sizeof(bid));
	/* none installed: the stripped program has no name for them */
	snprintf(roots, sizeof(roots), "%s/none", tmp);
	setenv("SPTD_DEBUG_DIRS", roots, 1);
	expect("stripped, no debug info", "stripped/prog", spin_a, "symprog_spin_a", 0);
	/* a build-id path in the second of two roots */
	snprintf(dir, sizeof(dir), "%s/root1/.build-id/%.2s", tmp, bid);
	CHECK_INT(run("mkdir -p '%s' && cp '%s/prog.debug' '%s/%s.debug'", dir, tmp, dir, bid + 2), 0);
	snprintf(roots, sizeof(roots), "%s/none:%s/root1", tmp, tmp);
	setenv("SPTD_DEBUG_DIRS", roots, 1);
	expect("build-id root", "stripped/prog", spin_a, "symprog_spin_a", SPTD_DEC_SYMS_BUILD_ID);
	expect("build-id root, global", "stripped/prog", spin_b, "symprog_spin_b",
	       SPTD_DEC_SYMS_BUILD_ID);
	{
		char name[256], debug[PATH_MAX], want[PATH_MAX + 200];
		int origin;

		name_at("stripped/prog", spin_a, name, sizeof(name), &origin, debug, sizeof(debug));
		snprintf(want, sizeof(want), "%s/%s.debug", dir, bid + 2);
		CHECK_STR(debug, want);
	}
	/* a file at the build-id path whose own build-id differs is not used */
	CHECK_INT(run("cp '%s/lib.debug' '%s/%s.debug'", tmp, dir, bid + 2), 0);
	expect("build-id path, wrong file", "stripped/prog", spin_a, "symprog_spin_a", 0);
	CHECK_INT(run("rm -rf '%s/root1'", tmp), 0);
}

static void test_debuglink(const char *prog, uint64_t spin_a)
{
	char roots[PATH_MAX + 64], dl[PATH_MAX + 64];

	snprintf(roots, sizeof(roots), "%s/none", tmp);
	setenv("SPTD_DEBUG_DIRS", roots, 1);
	snprintf(dl, sizeof(dl), "%s/dl", tmp);
	CHECK_INT(run("mkdir -p '%s' && cp '%s/prog.debug' '%s/' && cd '%s' && "
	              "objcopy --strip-all --add-gnu-debuglink=prog.debug '%s/%s' prog",
	              dl, tmp, dl, dl, tmp, prog), 0);
	expect("debuglink beside", "dl/prog", spin_a, "symprog_spin_a", SPTD_DEC_SYMS_DEBUGLINK);
	/* SPTD_DEBUG_DIRS set and empty: no separate debug files at all */
	setenv("SPTD_DEBUG_DIRS", "", 1);
	expect("debug dirs off", "dl/prog", spin_a, "symprog_spin_a", 0);
	setenv("SPTD_DEBUG_DIRS", roots, 1);
	/* .debug/ beside it */
	CHECK_INT(run("mkdir -p '%s/.debug' && mv '%s/prog.debug' '%s/.debug/'", dl, dl, dl), 0);
	expect("debuglink in .debug/", "dl/prog", spin_a, "symprog_spin_a",
	       SPTD_DEC_SYMS_DEBUGLINK);
	/* ROOT + the file's directory */
	CHECK_INT(run("mkdir -p '%s/root2%s' && mv '%s/.debug/prog.debug' '%s/root2%s/'", tmp, dl,
	              dl, tmp, dl), 0);
	expect("debuglink not found", "dl/prog", spin_a, "symprog_spin_a", 0);
	snprintf(roots, sizeof(roots), "%s/root2", tmp);
	setenv("SPTD_DEBUG_DIRS", roots, 1);
	expect("debuglink under root+dir", "dl/prog", spin_a, "symprog_spin_a",
	       SPTD_DEC_SYMS_DEBUGLINK);
	/* the CRC must match: one byte more and the file is not the one */
	CHECK_INT(run("printf x >> '%s/root2%s/prog.debug'", tmp, dl), 0);
	expect("debuglink, CRC differs", "dl/prog", spin_a, "symprog_spin_a", 0);
	/* a FIFO in its place is skipped without blocking (alarm: fail, not hang) */
	CHECK_INT(run("rm -f '%s/root2%s/prog.debug' && mkfifo '%s/dl/prog.debug'", tmp, dl, tmp), 0);
	alarm(20);
	expect("debuglink names a FIFO", "dl/prog", spin_a, "symprog_spin_a", 0);
	alarm(0);
}

static void test_minidebuginfo(const char *prog, uint64_t spin_a)
{
	char roots[PATH_MAX + 64];

	snprintf(roots, sizeof(roots), "%s/none", tmp);
	setenv("SPTD_DEBUG_DIRS", roots, 1);
	if (system("xz --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "note: no xz: MiniDebugInfo not tested\n");
		return;
	}
	/* as Fedora builds it: the symbol table without DWARF, xz'd into
	 * .gnu_debugdata of the stripped file */
	CHECK_INT(run("cd '%s' && objcopy --only-keep-debug '%s' mini && "
	              "objcopy --strip-debug --remove-section=.comment mini && "
	              "xz -f mini && objcopy --strip-all --add-section .gnu_debugdata=mini.xz "
	              "'%s' prog.mini", tmp, prog, prog), 0);
	expect("MiniDebugInfo", "prog.mini", spin_a, "symprog_spin_a", SPTD_DEC_SYMS_MINIDEBUGINFO);
	/* corrupt: not xz at all, and a truncated stream */
	CHECK_INT(run("cd '%s' && head -c 4096 /dev/urandom > junk && "
	              "objcopy --strip-all --add-section .gnu_debugdata=junk '%s' prog.junk && "
	              "head -c 300 mini.xz > short.xz && "
	              "objcopy --strip-all --add-section .gnu_debugdata=short.xz '%s' prog.short",
	              tmp, prog, prog), 0);
	expect("MiniDebugInfo not xz", "prog.junk", spin_a, "symprog_spin_a", 0);
	expect("MiniDebugInfo truncated", "prog.short", spin_a, "symprog_spin_a", 0);
}

static void test_library(const char *lib)
{
	uint64_t hot = sptd_test_nm_addr(lib, "symlib_hot");
	uint64_t hidden = sptd_test_nm_addr(lib, "symlib_hidden_spin");
	char bid[130], roots[PATH_MAX + 64];

	CHECK(hot && hidden);
	snprintf(roots, sizeof(roots), "%s/none", tmp);
	setenv("SPTD_DEBUG_DIRS", roots, 1);
	/* stripped: the exported function is named by .dynsym, the static one
	 * not at all (a frame there is "[unknown]" in its dso) */
	{
		char name[256];
		int origin;

		name_at("stripped/libsptdsym.so", hot + 4, name, sizeof(name), &origin, NULL, 0);
		CHECK_STR(name, "symlib_hot");
		CHECK_INT(origin, SPTD_DEC_SYMS_FILE);
		name_at("stripped/libsptdsym.so", hidden + 4, name, sizeof(name), &origin, NULL, 0);
		CHECK(strcmp(name, "symlib_hidden_spin") != 0);
	}
	build_id_of(lib, bid, sizeof(bid));
	CHECK_INT(run("mkdir -p '%s/root3/.build-id/%.2s' && cp '%s/lib.debug' "
	              "'%s/root3/.build-id/%.2s/%s.debug'", tmp, bid, tmp, tmp, bid, bid + 2), 0);
	snprintf(roots, sizeof(roots), "%s/root3", tmp);
	setenv("SPTD_DEBUG_DIRS", roots, 1);
	expect("library, build-id root", "stripped/libsptdsym.so", hidden + 4,
	       "symlib_hidden_spin", SPTD_DEC_SYMS_BUILD_ID);
}

/* As root: /usr/lib/debug itself, the default root (no SPTD_DEBUG_DIRS). */
static void test_default_root(const char *prog, uint64_t spin_a)
{
	char bid[130], dir[PATH_MAX], file[PATH_MAX + 200];
	struct stat sb;
	int made_dir;

	if (geteuid() != 0) {
		fprintf(stderr, "note: not root: /usr/lib/debug (the default root) not tested\n");
		return;
	}
	build_id_of(prog, bid, sizeof(bid));
	snprintf(dir, sizeof(dir), "/usr/lib/debug/.build-id/%.2s", bid);
	snprintf(file, sizeof(file), "%s/%s.debug", dir, bid + 2);
	if (stat(file, &sb) == 0) {
		fprintf(stderr, "note: %s exists already: left alone, not tested\n", file);
		return;
	}
	made_dir = stat(dir, &sb) != 0;
	CHECK_INT(run("mkdir -p '%s' && cp '%s/prog.debug' '%s'", dir, tmp, file), 0);
	unsetenv("SPTD_DEBUG_DIRS");
	expect("/usr/lib/debug build-id path", "stripped/prog", spin_a, "symprog_spin_a",
	       SPTD_DEC_SYMS_BUILD_ID);
	CHECK_INT(unlink(file), 0);
	if (made_dir)
		rmdir(dir);
}

/* libc6-dbg, where installed: perf names _int_malloc from it, so must we. */
static void test_libc_dbg(void)
{
	char line[PATH_MAX + 128], libc[PATH_MAX] = "", bid[130], dbg[PATH_MAX + 200];
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	FILE *maps = fopen("/proc/self/maps", "r");

	while (maps && fgets(line, sizeof(line), maps)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			snprintf(libc, sizeof(libc), "%s", p);
			libc[strcspn(libc, "\n")] = '\0';
		}
	}
	if (maps)
		fclose(maps);
	if (!libc[0] || sptd_dec_build_id(libc, bid, sizeof(bid)) < 0) {
		fprintf(stderr, "note: no libc.so.6 with a build-id mapped\n");
		return;
	}
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", bid, bid + 2);
	if (access(dbg, R_OK) != 0) {
		fprintf(stderr, "note: no libc6-dbg for %s (%s): not tested\n", libc, dbg);
		return;
	}
	unsetenv("SPTD_DEBUG_DIRS");
	CHECK_INT(sptd_dec_symfile_load_elf(libc, &sf), 0);
	CHECK(sptd_dec_symfile_origin(sf) & SPTD_DEC_SYMS_BUILD_ID);
	CHECK_INT(sptd_dec_symfile_find(sf, "_int_malloc", &sym), 0);
	CHECK_STR(sym.name, "_int_malloc");
	sptd_dec_symfile_destroy(sf);
}

int main(int argc, char **argv)
{
	char prog[PATH_MAX], lib[PATH_MAX];
	uint64_t spin_a, spin_b;

	if (argc < 3 || !realpath(argv[1], prog) || !realpath(argv[2], lib))
		SPTD_SKIP("usage: test_debuginfo SYMPROG LIBSPTDSYM (existing files)");
	if (system("objcopy --version >/dev/null 2>&1") != 0)
		SPTD_SKIP("objcopy (binutils) is needed to strip the test program");
	snprintf(tmp, sizeof(tmp), "%s/sptd-debuginfo-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		SPTD_SKIP("cannot make a temporary directory");
	CHECK_INT(chdir(tmp), 0);
	CHECK_INT(run("mkdir stripped && cp '%s' prog && cp '%s' libsptdsym.so && "
	              "objcopy --only-keep-debug prog prog.debug && "
	              "objcopy --only-keep-debug libsptdsym.so lib.debug && "
	              "objcopy --strip-all prog stripped/prog && "
	              "objcopy --strip-all libsptdsym.so stripped/libsptdsym.so",
	              prog, lib), 0);
	spin_a = sptd_test_nm_addr("prog", "symprog_spin_a");
	spin_b = sptd_test_nm_addr("prog", "symprog_spin_b");
	CHECK(spin_a && spin_b);
	spin_a += 2;
	spin_b += 2;

	test_build_id("prog", spin_a, spin_b);
	test_debuglink("prog", spin_a);
	test_minidebuginfo("prog", spin_a);
	test_library("libsptdsym.so");
	test_default_root("prog", spin_a);
	test_libc_dbg();
	CHECK_INT(sptd_dec_symfile_origin(NULL), 0);
	CHECK(sptd_dec_symfile_debug_path(NULL) == NULL);
	CHECK_INT(sptd_dec_symfile_load_elf_head(NULL, NULL), -EINVAL);

	CHECK_INT(chdir("/"), 0);
	run("rm -rf '%s'", tmp);
	return SPTD_TEST_END();
}
