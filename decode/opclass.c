/* opclass.c — the opcode classifier: which kind of branch an x86
 * instruction is, from its bytes alone.  Phase 1 needs it for the blocks
 * whose class libipt leaves open; only the opcodes that can end a block
 * (with end_on_call and end_on_jump) are told apart. */
#include "flow-local.h"

/* 1 for a legacy prefix byte (operand/address size, rep/lock, segment). */
static int is_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf2 || b == 0xf3 || b == 0xf0 || b == 0x2e ||
	       b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

enum pt_insn_class sptd_dec_opclass(const uint8_t *insn, size_t n, enum pt_exec_mode mode)
{
	const uint8_t *p = insn, *end;

	if (!insn || n == 0)
		return ptic_error;
	end = insn + (n < 16 ? n : 16);
	while (p < end && is_prefix(*p))
		p++;
	if (p < end && (*p & 0xf0) == 0x40 && mode == ptem_64bit)
		p++;                                   /* REX */
	if (p >= end)
		return ptic_error;
	switch (*p) {
	case 0xe8:
		return ptic_call;
	case 0xe9: case 0xeb:
		return ptic_jump;
	case 0xc2: case 0xc3:
		return ptic_return;
	case 0xca: case 0xcb: case 0xcf:
		return ptic_far_return;
	case 0xcc: case 0xcd: case 0xce:
		return ptic_far_call;
	case 0x9a:
		return ptic_far_call;
	case 0xea:
		return ptic_far_jump;
	case 0x0f:
		if (p + 1 >= end)
			return ptic_error;
		if (p[1] == 0x05 || p[1] == 0x34)
			return ptic_far_call;        /* syscall, sysenter */
		if (p[1] == 0x07 || p[1] == 0x35)
			return ptic_far_return;      /* sysret, sysexit */
		return ptic_other;
	case 0xff:
		if (p + 1 >= end)
			return ptic_error;
		switch ((p[1] >> 3) & 7) {
		case 2:
			return ptic_call;
		case 3:
			return ptic_far_call;
		case 4:
			return ptic_jump;
		case 5:
			return ptic_far_jump;
		default:
			return ptic_other;
		}
	default:
		return ptic_other;
	}
}
