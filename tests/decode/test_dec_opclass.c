/* test_dec_opclass.c — the opcode classifier (decode/opclass.c),
 * table-driven: every opcode that ends a block, prefixes and REX, the
 * ModRM forms of 0xff, and byte strings that end too early. */
#include <stdint.h>

#include "flow-local.h"
#include "sptd_test.h"

struct opclass_case {
	const char *what;             /* shown when a row fails */
	uint8_t bytes[16];            /* the instruction */
	size_t n;                     /* how many of them are given */
	enum pt_exec_mode mode;       /* execution mode */
	enum pt_insn_class want;      /* expected class */
};

#define M64 ptem_64bit
#define M32 ptem_32bit

static const struct opclass_case cases[] = {
	{ "call rel32", { 0xe8, 1, 2, 3, 4 }, 5, M64, ptic_call },
	{ "jmp rel32", { 0xe9, 1, 2, 3, 4 }, 5, M64, ptic_jump },
	{ "jmp rel8", { 0xeb, 0xfe }, 2, M64, ptic_jump },
	{ "ret", { 0xc3 }, 1, M64, ptic_return },
	{ "ret imm16", { 0xc2, 8, 0 }, 3, M64, ptic_return },
	{ "lret", { 0xcb }, 1, M64, ptic_far_return },
	{ "lret imm16", { 0xca, 8, 0 }, 3, M64, ptic_far_return },
	{ "iret", { 0xcf }, 1, M64, ptic_far_return },
	{ "int3", { 0xcc }, 1, M64, ptic_far_call },
	{ "int 0x80", { 0xcd, 0x80 }, 2, M32, ptic_far_call },
	{ "into", { 0xce }, 1, M32, ptic_far_call },
	{ "lcall ptr16:32", { 0x9a, 1, 2, 3, 4, 5, 6 }, 7, M32, ptic_far_call },
	{ "ljmp ptr16:32", { 0xea, 1, 2, 3, 4, 5, 6 }, 7, M32, ptic_far_jump },
	{ "syscall", { 0x0f, 0x05 }, 2, M64, ptic_far_call },
	{ "sysenter", { 0x0f, 0x34 }, 2, M32, ptic_far_call },
	{ "sysret", { 0x0f, 0x07 }, 2, M64, ptic_far_return },
	{ "sysexit", { 0x0f, 0x35 }, 2, M32, ptic_far_return },
	{ "jz rel32 (two-byte jcc)", { 0x0f, 0x84, 0, 0, 0, 0 }, 6, M64, ptic_other },
	{ "0x0f alone", { 0x0f }, 1, M64, ptic_error },
	{ "call *%rax", { 0xff, 0xd0 }, 2, M64, ptic_call },
	{ "call *(%rax)", { 0xff, 0x10 }, 2, M64, ptic_call },
	{ "lcall *(%rax)", { 0xff, 0x18 }, 2, M64, ptic_far_call },
	{ "jmp *%rax", { 0xff, 0xe0 }, 2, M64, ptic_jump },
	{ "ljmp *(%rax)", { 0xff, 0x28 }, 2, M64, ptic_far_jump },
	{ "inc (%rax)", { 0xff, 0x00 }, 2, M64, ptic_other },
	{ "push (%rax)", { 0xff, 0x30 }, 2, M64, ptic_other },
	{ "0xff alone", { 0xff }, 1, M64, ptic_error },
	{ "bnd call (f2)", { 0xf2, 0xe8, 1, 2, 3, 4 }, 6, M64, ptic_call },
	{ "rep ret (f3)", { 0xf3, 0xc3 }, 2, M64, ptic_return },
	{ "notrack jmp *%rax (3e)", { 0x3e, 0xff, 0xe0 }, 3, M64, ptic_jump },
	{ "segment and size prefixes", { 0x66, 0x2e, 0x65, 0x64, 0x26, 0x36, 0x67, 0xf0, 0xc3 },
	  9, M64, ptic_return },
	{ "REX call *%r11", { 0x41, 0xff, 0xd3 }, 3, M64, ptic_call },
	{ "REX.W jmp *%rax", { 0x48, 0xff, 0xe0 }, 3, M64, ptic_jump },
	{ "0x41 in 32-bit mode is inc %ecx", { 0x41, 0xff, 0xd3 }, 3, M32, ptic_other },
	{ "REX alone", { 0x48 }, 1, M64, ptic_error },
	{ "prefixes alone", { 0x66, 0x66, 0xf3 }, 3, M64, ptic_error },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, M64, ptic_other },
	{ "nop", { 0x90 }, 1, M64, ptic_other },
	{ "no bytes", { 0xc3 }, 0, M64, ptic_error },
	{ "only 16 bytes are looked at",
	  { 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
	    0x66, 0x66 }, 40, M64, ptic_error },
};

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum pt_insn_class got = sptd_dec_opclass(cases[i].bytes, cases[i].n, cases[i].mode);

		if (got != cases[i].want)
			fprintf(stderr, "row %zu (%s):\n", i, cases[i].what);
		CHECK_INT(got, cases[i].want);
	}
	CHECK_INT(sptd_dec_opclass(NULL, 1, M64), ptic_error);
	return SPTD_TEST_END();
}
