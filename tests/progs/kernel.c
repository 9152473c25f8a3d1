/* kernel.c — a program whose syscalls enter a synthetic kernel, for
 * sptd-ptgen --kernel (docs/PTGEN.md, "Kernel code").
 *
 * The "kernel" and its "module" are code of this program, in sections the
 * build links at fixed user addresses: .ktext at 0x41000000 and .mtext at
 * 0x80000000, which the generator runs as kernel text at 0xffffffff81000000
 * and module text at 0xffffffffc0000000 (one constant apart, so the
 * rel32 calls between them are the same bytes at both places).  Every
 * SYSCALL instruction runs entry_SYSCALL_64 (under ptrace, in user mode)
 * up to its SYSRETQ, which the generator takes as the return to user
 * space; the real getpid then runs there.
 *
 * entry_SYSCALL_64 -> do_syscall_64 -> x64_sys_call -> ptgen_mod_hook
 * (the module), whose first instruction is a static-key site: a 5-byte
 * `jmp` to the slow path (ptgen_mod_slow) until --kpoke rewrites it to a
 * 5-byte nop, after which the fast path (ptgen_mod_fast) runs. */
#include <unistd.h>

__asm__(".section .ktext,\"ax\",@progbits\n"
        ".fill 16, 1, 0xcc\n"                 /* _stext: no function starts there */
        ".globl entry_SYSCALL_64\n"
        ".type entry_SYSCALL_64, @function\n"
        "entry_SYSCALL_64:\n"
        "\tcall do_syscall_64\n"
        "\tsysretq\n"
        ".size entry_SYSCALL_64, .-entry_SYSCALL_64\n"
        ".globl do_syscall_64\n"
        ".type do_syscall_64, @function\n"
        "do_syscall_64:\n"
        "\tmovl $3, %ecx\n"
        "1:\tcall x64_sys_call\n"
        "\tdecl %ecx\n"
        "\tjnz 1b\n"
        "\tret\n"
        ".size do_syscall_64, .-do_syscall_64\n"
        ".globl x64_sys_call\n"
        ".type x64_sys_call, @function\n"
        "x64_sys_call:\n"
        "\tcall ptgen_mod_hook\n"
        "\tret\n"
        ".size x64_sys_call, .-x64_sys_call\n"
        ".section .mtext,\"ax\",@progbits\n"
        ".fill 16, 1, 0xcc\n"                 /* the module's base */
        ".globl ptgen_mod_hook\n"
        ".type ptgen_mod_hook, @function\n"
        "ptgen_mod_hook:\n"
        ".globl ptgen_static_key\n"
        "ptgen_static_key:\n"
        "\t.byte 0xe9\n"                      /* jmp 2f, rel32 whatever the assembler would pick */
        "\t.long 2f - (. + 4)\n"
        "\tcall ptgen_mod_fast\n"
        "\tret\n"
        "2:\tcall ptgen_mod_slow\n"
        "\tret\n"
        ".size ptgen_mod_hook, .-ptgen_mod_hook\n"
        ".globl ptgen_mod_fast\n"
        ".type ptgen_mod_fast, @function\n"
        "ptgen_mod_fast:\n"
        "\tret\n"
        ".size ptgen_mod_fast, .-ptgen_mod_fast\n"
        ".globl ptgen_mod_slow\n"
        ".type ptgen_mod_slow, @function\n"
        "ptgen_mod_slow:\n"
        "\tmovl $2, %edx\n"
        "3:\tdecl %edx\n"
        "\tjnz 3b\n"
        "\tret\n"
        ".size ptgen_mod_slow, .-ptgen_mod_slow\n"
        ".text\n");

__attribute__((noinline)) int ask(int i)
{
	return (int)getpid() + i;
}

int main(void)
{
	long acc = 0;

	for (int i = 0; i < 6; i++)
		acc += ask(i);
	return acc == 0;
}
