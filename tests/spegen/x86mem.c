/* x86mem.c — the data memory operand of an x86-64 instruction, from its
 * bytes: legacy prefixes, REX, the one-byte and 0F opcode maps' common
 * integer and SSE moves and arithmetic, ModRM, SIB and displacement.
 *
 * Only what is known here is sampled: VEX/EVEX, string instructions,
 * stack pushes and pops, x87, 32-bit addressing (0x67) and every opcode
 * not in the tables below are left out (0), which is no error: the
 * generator samples the memory instructions it can name exactly.  The
 * address is checked against the tracee's memory by main.c. */
#include <string.h>

#include "spegen.h"

/* How an opcode uses its ModRM memory operand. */
enum use { U_NO, U_LOAD, U_STORE, U_RMW, U_XCHG, U_GRP1, U_GRP3, U_GRP5, U_MOVI };

static enum use one_byte(uint8_t op)
{
	if (op < 0x40 && (op & 7) < 4) {          /* ADD..CMP r/m forms */
		if ((op & 0xf8) == 0x38)
			return U_LOAD;                /* CMP */
		return (op & 7) < 2 ? U_RMW : U_LOAD;
	}
	switch (op) {
	case 0x63: case 0x69: case 0x6b: case 0x84: case 0x85: case 0x8a: case 0x8b:
		return U_LOAD;                        /* MOVSXD, IMUL, TEST, MOV r, r/m */
	case 0x88: case 0x89:
		return U_STORE;                       /* MOV r/m, r */
	case 0x86: case 0x87:
		return U_XCHG;
	case 0x80: case 0x81: case 0x83:
		return U_GRP1;
	case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		return U_RMW;                         /* shifts and rotates */
	case 0xc6: case 0xc7:
		return U_MOVI;
	case 0xf6: case 0xf7:
		return U_GRP3;
	case 0xfe: case 0xff:
		return U_GRP5;
	default:
		return U_NO;
	}
}

static enum use two_byte(uint8_t op)
{
	if (op >= 0x40 && op <= 0x4f)
		return U_LOAD;                        /* CMOVcc */
	if (op >= 0x51 && op <= 0x5f)
		return U_LOAD;                        /* SSE arithmetic, conversions */
	switch (op) {
	case 0x10: case 0x28: case 0x2e: case 0x2f: case 0x6f: case 0xaf: case 0xb6: case 0xb7:
	case 0xbe: case 0xbf:
		return U_LOAD;
	case 0x11: case 0x29: case 0x7f: case 0xd6:
		return U_STORE;
	case 0xb0: case 0xb1: case 0xc0: case 0xc1:
		return U_RMW;                         /* CMPXCHG, XADD */
	default:
		return U_NO;
	}
}

int spegen_x86_operand(const uint8_t *code, size_t avail, struct spegen_operand *op)
{
	const uint8_t *p = code, *end = code + (avail < 15 ? avail : 15);
	int lock = 0, seg = 0, rex = 0;
	enum use use;
	unsigned modrm, mod, reg, rm;

	memset(op, 0, sizeof(*op));
	op->base = op->index = -1;
	op->scale = 1;
	for (; p < end; p++) {
		if (*p == 0xf0)
			lock = 1;
		else if (*p == 0x64 || *p == 0x65)
			seg = *p == 0x64 ? 4 : 5;
		else if (*p == 0x67)
			return 0;                             /* 32-bit addressing */
		else if (*p != 0x66 && *p != 0xf2 && *p != 0xf3 && *p != 0x2e && *p != 0x36 &&
		         *p != 0x3e && *p != 0x26)
			break;
	}
	if (p < end && (*p & 0xf0) == 0x40)
		rex = *p++;
	if (p >= end)
		return 0;
	if (*p == 0x0f) {
		if (++p >= end)
			return 0;
		use = two_byte(*p);
	} else {
		use = one_byte(*p);
	}
	if (use == U_NO || ++p >= end)
		return 0;
	modrm = *p++;
	mod = modrm >> 6;
	reg = (modrm >> 3) & 7;
	rm = modrm & 7;
	if (mod == 3)
		return 0;
	switch (use) {
	case U_GRP1:
		use = reg == 7 ? U_LOAD : U_RMW;          /* CMP reads only */
		break;
	case U_GRP3:
		use = reg == 2 || reg == 3 ? U_RMW : reg == 1 ? U_NO : U_LOAD;
		break;
	case U_GRP5:
		use = reg <= 1 ? U_RMW : U_NO;            /* INC, DEC; not CALL/JMP/PUSH */
		break;
	case U_MOVI:
		use = reg == 0 ? U_STORE : U_NO;
		break;
	default:
		break;
	}
	if (use == U_NO)
		return 0;
	if (rm == 4) {                                    /* SIB */
		unsigned sib, idx, base;

		if (p >= end)
			return 0;
		sib = *p++;
		op->scale = 1 << (sib >> 6);
		idx = ((sib >> 3) & 7) | ((rex & 2) << 2);
		base = (sib & 7) | ((rex & 1) << 3);
		if (idx != 4)
			op->index = (int)idx;
		if ((sib & 7) == 5 && mod == 0) {
			if (end - p < 4)
				return 0;
			op->disp = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
			                     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
			p += 4;
		} else {
			op->base = (int)base;
		}
	} else if (rm == 5 && mod == 0) {
		op->rip_relative = 1;
		if (end - p < 4)
			return 0;
		op->disp = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		                     (uint32_t)p[3] << 24);
	} else {
		op->base = (int)(rm | ((rex & 1) << 3));
	}
	if (mod == 1) {
		if (p >= end)
			return 0;
		op->disp = (int8_t)*p;
	} else if (mod == 2) {
		if (end - p < 4)
			return 0;
		op->disp = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		                     (uint32_t)p[3] << 24);
	}
	op->seg = seg;
	if (use == U_XCHG || (lock && use == U_RMW))
		op->access = SPEGEN_ATOMIC;
	else
		op->access = use == U_LOAD ? SPEGEN_LOAD : SPEGEN_STORE;
	return 1;
}

static uint64_t reg_value(const struct user_regs_struct *r, int n)
{
	switch (n) {
	case 0: return r->rax;
	case 1: return r->rcx;
	case 2: return r->rdx;
	case 3: return r->rbx;
	case 4: return r->rsp;
	case 5: return r->rbp;
	case 6: return r->rsi;
	case 7: return r->rdi;
	case 8: return r->r8;
	case 9: return r->r9;
	case 10: return r->r10;
	case 11: return r->r11;
	case 12: return r->r12;
	case 13: return r->r13;
	case 14: return r->r14;
	default: return r->r15;
	}
}

uint64_t spegen_x86_address(const struct spegen_operand *op, const struct user_regs_struct *regs,
                            uint64_t next_rip)
{
	uint64_t a = (uint64_t)op->disp;

	if (op->rip_relative)
		a += next_rip;
	if (op->base >= 0)
		a += reg_value(regs, op->base);
	if (op->index >= 0)
		a += reg_value(regs, op->index) * (uint64_t)op->scale;
	if (op->seg == 4)
		a += regs->fs_base;
	else if (op->seg == 5)
		a += regs->gs_base;
	return a;
}
