/* fib.c — recursion: fib(N) nests N frames deep (N from argv, default 14). */
#include <stdlib.h>

__attribute__((noinline)) int fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 14;

	return fib(n) == 377 ? 0 : 1;
}
