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
	return SPTD_TEST_END();
}
