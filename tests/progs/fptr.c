/* fptr.c — indirect calls through a function-pointer table and an indirect
 * jump through a switch jump table. */
#include <stdlib.h>

typedef int (*op_fn)(int, int);

__attribute__((noinline)) int op_add(int a, int b) { return a + b; }
__attribute__((noinline)) int op_sub(int a, int b) { return a - b; }
__attribute__((noinline)) int op_mul(int a, int b) { return a * b; }
__attribute__((noinline)) int op_xor(int a, int b) { return a ^ b; }

static op_fn const ops[] = { op_add, op_sub, op_mul, op_xor };

/* Dense cases: gcc -O2 makes a jump table (an indirect jmp). */
__attribute__((noinline)) int classify(int v)
{
	switch (v & 7) {
	case 0: return v * 3;
	case 1: return v + 11;
	case 2: return v - 5;
	case 3: return v << 2;
	case 4: return v >> 1;
	case 5: return ~v;
	case 6: return v * v;
	default: return 42;
	}
}

__attribute__((noinline)) int apply(op_fn f, int a, int b)
{
	return f(a, b);
}

int main(int argc, char **argv)
{
	volatile int acc = argc;
	int i;

	(void)argv;
	for (i = 0; i < 200; i++) {
		acc = apply(ops[i & 3], acc, i);
		acc += classify(acc + i);
	}
	return acc == 0x7fffffff ? 1 : 0;
}
