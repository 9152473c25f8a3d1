/* symfix_nocxx.c — stands in for symfix_cxx.cpp where no C++ compiler is
 * found (test_symfile then skips its C++ checks). */
int symfix_cxx_entry(int x);

int symfix_cxx_entry(int x)
{
	return x;
}
