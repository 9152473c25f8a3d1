/* symnames.c — functions whose symbol names are manglings of several
 * languages (asm labels), so a test can load a real symbol table holding
 * them and compare the names sysptd shows with c++filt's. */
#define NAMED(fn, sym) \
	int fn(int x) __asm__(sym); \
	__attribute__((noinline, used)) int fn(int x) { return x * __LINE__; }

NAMED(sn_rust_v0, "_RNvNtCs1234_7mycrate6module4func")
NAMED(sn_rust_v0_generic, "_RINvCs1234_7mycrate7genericlEB2_")
NAMED(sn_rust_legacy, "_ZN4core3fmt5write17h0123456789abcdefE")
NAMED(sn_cxx_method, "_ZN6sptdfx6Widget6methodEi")
NAMED(sn_cxx_template, "_ZNSt6vectorIiSaIiEE9push_backERKi")
NAMED(sn_d, "_D3std5stdio7writelnFZv")
NAMED(sn_ocaml, "camlStdlib__List__map_123")
NAMED(sn_plain_c, "plain_c_function")

int main(void)
{
	return sn_plain_c(0);
}
