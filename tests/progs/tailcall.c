/* tailcall.c — tail calls: at -O2 `return leaf(x + 1)` compiles to a jmp to
 * leaf; one more is written in assembly so it exists whatever the
 * compiler does. */
__attribute__((noinline)) int leaf(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2 + 1;
}

__attribute__((noinline)) int middle(int x)
{
	return leaf(x + 1); /* tail call */
}

/* asm_tail(x): jumps to leaf. */
int asm_tail(int x);
__asm__(".text\n"
        ".globl asm_tail\n"
        ".type asm_tail, @function\n"
        "asm_tail:\n"
        "\taddl $3, %edi\n"
        "\tjmp leaf\n"
        ".size asm_tail, .-asm_tail\n");

__attribute__((noinline)) int outer(int x)
{
	int r = middle(x);

	return r + asm_tail(r);
}

int main(int argc, char **argv)
{
	volatile int acc = 0;
	int i;

	(void)argv;
	for (i = 0; i < 50; i++)
		acc += outer(i + argc);
	return acc == -1;
}
