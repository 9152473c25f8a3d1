/* symfix.c — a tiny program whose symbols test_symfile looks up: a static
 * function, a global one, and (from symfix_cxx.cpp) a C++ method. */
#include <stdio.h>
#include <stdlib.h>

int symfix_global(int x);
int symfix_cxx_entry(int x);

static __attribute__((noinline, used)) int symfix_static_helper(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int symfix_global(int x)
{
	return symfix_static_helper(x) + 2;
}

int main(int argc, char **argv)
{
	int x = argc > 1 ? atoi(argv[1]) : 1;

	printf("%d\n", symfix_global(x) + symfix_cxx_entry(x));
	return 0;
}
