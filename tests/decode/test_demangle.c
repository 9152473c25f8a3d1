/* test_demangle.c — symbol names as perf and c++filt show them, from a real
 * symbol table: sptd-symnames (tests/fixtures-src/symnames.c) has functions
 * named by Rust v0 and legacy, C++, D and OCaml manglings.  Each is looked
 * up by address (nm) and its name compared with an expected string and with
 * `c++filt -i` (no verbose details: Rust without hash and crate
 * disambiguator, as perf prints it; D in the dlang style).
 *
 * Usage: test_demangle SYMNAMES */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_dec.h"
#include "nm_addr.h"
#include "sptd_test.h"


/* `c++filt -i [-s STYLE] MANGLED` into @out; "" when c++filt is missing. */
static void cxxfilt(const char *style, const char *mangled, char *out, size_t len)
{
	char cmd[1024];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "c++filt -i %s%s '%s' 2>/dev/null", style ? "-s " : "",
	         style ? style : "", mangled);
	p = popen(cmd, "r");
	if (!p)
		return;
	if (!fgets(out, (int)len, p))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

static const struct {
	const char *mangled;     /* the symbol in the table */
	const char *want;        /* the name sysptd must show */
	const char *style;       /* c++filt style to compare with; NULL auto, "" none */
} names[] = {
	{ "_RNvNtCs1234_7mycrate6module4func", "mycrate::module::func", NULL },
	{ "_RINvCs1234_7mycrate7genericlEB2_", "mycrate::generic::<i32>", NULL },
	{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write", NULL },
	{ "_ZN6sptdfx6Widget6methodEi", "sptdfx::Widget::method(int)", NULL },
	{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
	  "std::vector<int, std::allocator<int> >::push_back(int const&)", NULL },
	{ "_D3std5stdio7writelnFZv", "std.stdio.writeln()", "dlang" },
	/* perf's OCaml rule; c++filt does not know OCaml */
	{ "camlStdlib__List__map_123", "Stdlib.List.map", "" },
	{ "plain_c_function", "plain_c_function", NULL },
};

/* "_Z1f1aIS_S_E" + @groups of "1aI<S>S>E", each naming the previous
 * template id twice: the demangled text doubles with every group. */
static void doubling_name(int groups, char *out, size_t len)
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t n = (size_t)snprintf(out, len, "_Z1f1aIS_S_E");

	for (int k = 1; k <= groups && n < len; k++) {
		int id = 2 * k - 2;   /* S<id in base 36>_ names substitution id + 1 */
		char sub[16];

		if (id < 36)
			snprintf(sub, sizeof(sub), "S%c_", digits[id]);
		else
			snprintf(sub, sizeof(sub), "S%c%c_", digits[id / 36], digits[id % 36]);
		n += (size_t)snprintf(out + n, len - n, "1aI%s%sE", sub, sub);
	}
}

/* A hostile symbol table's name whose demangled text is 2^40 times its
 * own: before, the demangler ran until killed (gigabytes and growing);
 * now a text past 64 KiB is left mangled at once (a hang here is ctest's
 * timeout).  Ten groups (26 KB) still demangle, as c++filt does. */
static void test_doubling(int have_cxxfilt)
{
	static char name[32768], filt[32768];
	char mangled[1024];

	doubling_name(40, mangled, sizeof(mangled));
	CHECK_INT(sptd_dec_demangle(mangled, name, sizeof(name)), -EINVAL);
	CHECK_STR(name, mangled);
	doubling_name(10, mangled, sizeof(mangled));
	CHECK(sptd_dec_demangle(mangled, name, sizeof(name)) > 0);
	CHECK_INT(strlen(name), 26568);
	if (have_cxxfilt) {
		cxxfilt(NULL, mangled, filt, sizeof(filt));
		CHECK_STR(name, filt);
	}
}

int main(int argc, char **argv)
{
	struct sptd_dec_symfile *sf = NULL;
	int have_cxxfilt = system("c++filt --version >/dev/null 2>&1") == 0;

	if (argc < 2)
		SPTD_SKIP("usage: test_demangle SYMNAMES");
	CHECK_INT(sptd_dec_symfile_load_elf(argv[1], &sf), 0);
	if (!sf)
		return SPTD_TEST_END();
	if (!have_cxxfilt)
		fprintf(stderr, "note: no c++filt: names compared with the expected strings only\n");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t addr = sptd_test_nm_addr(argv[1], names[i].mangled);
		struct sptd_dec_sym sym;
		char filt[1024];

		CHECK(addr != 0);
		CHECK_INT(sptd_dec_symfile_lookup(sf, addr + 1, &sym), 0);
		CHECK_INT(sym.addr, addr);
		CHECK_STR(sym.name, names[i].want);
		if (have_cxxfilt && !(names[i].style && !names[i].style[0])) {
			cxxfilt(names[i].style, names[i].mangled, filt, sizeof(filt));
			CHECK_STR(sym.name, filt);
		}
		/* found by its shown name too (what uprobe=PATH:SYMBOL uses) */
		CHECK_INT(sptd_dec_symfile_find(sf, names[i].want, &sym), 0);
		CHECK_INT(sym.addr, addr);
	}
	sptd_dec_symfile_destroy(sf);
	test_doubling(have_cxxfilt);
	return SPTD_TEST_END();
}
