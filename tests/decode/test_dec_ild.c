/* test_dec_ild.c — the own decoder's instruction length decoder
 * (decode/ild.c), table-driven: lengths through prefixes, REX, ModRM, SIB,
 * displacements and immediates of each size, the 0F/0F38/0F3A maps, VEX
 * and EVEX, the branch classes with their displacements, and bytes that
 * end too early or a mode that is unknown (-pte_bad_insn).  The whole-flow
 * comparison with libipt is test_dec_qflow's. */
#include <stdint.h>

#include "qblk-local.h"
#include "sptd_test.h"

struct ild_case {
	const char *what;             /* shown when a row fails */
	uint8_t bytes[16];            /* the instruction */
	size_t n;                     /* how many of them are given */
	enum pt_exec_mode mode;       /* execution mode */
	int size;                     /* expected length; < 0: the error */
	enum pt_insn_class iclass;    /* expected class */
	int direct;                   /* a direct branch ... */
	int32_t disp;                 /* ... with this displacement */
};

#define M64 ptem_64bit
#define M32 ptem_32bit
#define M16 ptem_16bit
#define BAD (-pte_bad_insn)

static const struct ild_case cases[] = {
	{ "nop", { 0x90 }, 15, M64, 1, ptic_other, 0, 0 },
	{ "push rbp", { 0x55 }, 15, M64, 1, ptic_other, 0, 0 },
	{ "mov rbp,rsp (REX.W)", { 0x48, 0x89, 0xe5 }, 15, M64, 3, ptic_other, 0, 0 },
	{ "mov eax,[rip+d32]", { 0x8b, 0x05, 1, 2, 3, 4 }, 15, M64, 6, ptic_other, 0, 0 },
	{ "mov eax,[rsp+d8] (SIB)", { 0x8b, 0x44, 0x24, 8 }, 15, M64, 4, ptic_other, 0, 0 },
	{ "lea rax,[d32+rcx*8] (SIB base 5)", { 0x48, 0x8d, 0x04, 0xcd, 1, 2, 3, 4 }, 15, M64, 8,
	  ptic_other, 0, 0 },
	{ "add eax,imm32", { 0x05, 1, 2, 3, 4 }, 15, M64, 5, ptic_other, 0, 0 },
	{ "add ax,imm16 (66)", { 0x66, 0x05, 1, 2 }, 15, M64, 4, ptic_other, 0, 0 },
	{ "mov rax,imm64", { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 15, M64, 10, ptic_other, 0, 0 },
	{ "mov eax,moffs64", { 0xa1, 1, 2, 3, 4, 5, 6, 7, 8 }, 15, M64, 9, ptic_other, 0, 0 },
	{ "test byte [rax],imm8 (f6 /0)", { 0xf6, 0x00, 1 }, 15, M64, 3, ptic_other, 0, 0 },
	{ "not byte [rax] (f6 /2)", { 0xf6, 0x10 }, 15, M64, 2, ptic_other, 0, 0 },
	{ "enter imm16,imm8", { 0xc8, 1, 2, 3 }, 15, M64, 4, ptic_other, 0, 0 },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 15, M64, 4, ptic_other, 0, 0 },
	{ "pshufb (0f38)", { 0x66, 0x0f, 0x38, 0x00, 0xc1 }, 15, M64, 5, ptic_other, 0, 0 },
	{ "palignr (0f3a, imm8)", { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 8 }, 15, M64, 6, ptic_other, 0,
	  0 },
	{ "mov cr3,rax (mod ignored)", { 0x0f, 0x22, 0x18 }, 15, M64, 3, ptic_other, 0, 0 },
	{ "vzeroupper (VEX, no ModRM)", { 0xc5, 0xf8, 0x77 }, 15, M64, 3, ptic_other, 0, 0 },
	{ "vpxor (VEX c5)", { 0xc5, 0xf9, 0xef, 0xc0 }, 15, M64, 4, ptic_other, 0, 0 },
	{ "vpshufd (VEX, imm8)", { 0xc5, 0xf9, 0x70, 0xc0, 1 }, 15, M64, 5, ptic_other, 0, 0 },
	{ "vpermq (VEX c4 0f3a)", { 0xc4, 0xe3, 0xfd, 0x00, 0xc0, 1 }, 15, M64, 6, ptic_other,
	  0, 0 },
	{ "vmovdqu64 (EVEX, disp8)", { 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x40, 1 }, 15, M64, 7,
	  ptic_other, 0, 0 },
	{ "les (c4 in 32-bit, mod != 3)", { 0xc4, 0x00 }, 15, M32, 2, ptic_other, 0, 0 },
	{ "mov ax,[bx+si+d16] (16-bit)", { 0x8b, 0x80, 1, 2 }, 15, M16, 4, ptic_other, 0, 0 },
	{ "call rel32", { 0xe8, 0x10, 0, 0, 0 }, 15, M64, 5, ptic_call, 1, 16 },
	{ "call to next (PIC)", { 0xe8, 0, 0, 0, 0 }, 15, M64, 5, ptic_call, 1, 0 },
	{ "jmp rel8 back", { 0xeb, 0xfe }, 15, M64, 2, ptic_jump, 1, -2 },
	{ "jz rel8", { 0x74, 0x05 }, 15, M64, 2, ptic_cond_jump, 1, 5 },
	{ "jnz rel32", { 0x0f, 0x85, 0xf0, 0xff, 0xff, 0xff }, 15, M64, 6, ptic_cond_jump, 1,
	  -16 },
	{ "loop", { 0xe2, 0xfc }, 15, M64, 2, ptic_cond_jump, 1, -4 },
	{ "call rel16 (16-bit)", { 0xe8, 0x00, 0x01 }, 15, M16, 3, ptic_call, 1, 256 },
	{ "call *[rip+d32]", { 0xff, 0x15, 1, 2, 3, 4 }, 15, M64, 6, ptic_call, 0, 0 },
	{ "jmp *rax", { 0xff, 0xe0 }, 15, M64, 2, ptic_jump, 0, 0 },
	{ "ret", { 0xc3 }, 15, M64, 1, ptic_return, 0, 0 },
	{ "rep ret", { 0xf3, 0xc3 }, 15, M64, 2, ptic_return, 0, 0 },
	{ "ret imm16", { 0xc2, 8, 0 }, 15, M64, 3, ptic_return, 0, 0 },
	{ "syscall", { 0x0f, 0x05 }, 15, M64, 2, ptic_far_call, 0, 0 },
	{ "sysret (REX.W)", { 0x48, 0x0f, 0x07 }, 15, M64, 3, ptic_far_return, 0, 0 },
	{ "iretq", { 0x48, 0xcf }, 15, M64, 2, ptic_far_return, 0, 0 },
	{ "int 0x80", { 0xcd, 0x80 }, 15, M32, 2, ptic_far_call, 0, 0 },
	{ "ljmp *[rax] (ff /5)", { 0xff, 0x28 }, 15, M64, 2, ptic_far_jump, 0, 0 },
	{ "vmlaunch", { 0x0f, 0x01, 0xc2 }, 15, M64, 3, ptic_far_return, 0, 0 },
	{ "ptwrite eax", { 0xf3, 0x0f, 0xae, 0xe0 }, 15, M64, 4, ptic_ptwrite, 0, 0 },
	{ "REX then a prefix: REX dropped", { 0x48, 0x66, 0x05, 1, 2 }, 15, M64, 5, ptic_other, 0,
	  0 },
	{ "call rel32 cut short", { 0xe8, 1, 2 }, 3, M64, BAD, ptic_other, 0, 0 },
	{ "ModRM missing", { 0x89 }, 1, M64, BAD, ptic_other, 0, 0 },
	{ "prefixes only", { 0x66, 0x66, 0x66 }, 3, M64, BAD, ptic_other, 0, 0 },
	{ "no bytes", { 0x90 }, 0, M64, BAD, ptic_other, 0, 0 },
	{ "unknown mode", { 0x90 }, 15, ptem_unknown, BAD, ptic_other, 0, 0 },
	{ "16 prefixes: past 15 bytes", { 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
	  0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90 }, 16, M64, BAD, ptic_other, 0, 0 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ild_case *c = &cases[i];
		struct sptd_dec_ild out;
		int rc = sptd_dec_ild_decode(c->bytes, c->n, c->mode, &out);

		if (c->size < 0) {
			if (rc != c->size)
				fprintf(stderr, "  %s: rc %d\n", c->what, rc);
			CHECK_INT(rc, c->size);
			continue;
		}
		if (rc != 0 || out.size != c->size || out.iclass != c->iclass ||
		    out.direct != c->direct || (c->direct && out.disp != c->disp))
			fprintf(stderr, "  %s: rc %d size %d class %d direct %d disp %d\n", c->what, rc,
			        out.size, out.iclass, out.direct, out.disp);
		CHECK_INT(rc, 0);
		CHECK_INT(out.size, c->size);
		CHECK_INT(out.iclass, c->iclass);
		CHECK_INT(out.direct, c->direct);
		if (c->direct)
			CHECK_INT(out.disp, c->disp);
	}
	return SPTD_TEST_END();
}
