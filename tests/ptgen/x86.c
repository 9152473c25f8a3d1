/* x86.c — a branch-only x86-64 instruction classifier.
 *
 * It only needs to tell branches from everything else and to know a
 * branch's length and direct target: the next RIP always comes from the real
 * execution, so a non-branch never needs its length. */
#include <errno.h>

#include "ptgen.h"

const char *sptd_ptgen_br_name(enum sptd_ptgen_br kind)
{
	switch (kind) {
	case SPTD_PTGEN_BR_NONE: return "other";
	case SPTD_PTGEN_BR_JCC: return "jcc";
	case SPTD_PTGEN_BR_JMP: return "jmp";
	case SPTD_PTGEN_BR_JMP_IND: return "jmp-indirect";
	case SPTD_PTGEN_BR_CALL: return "call";
	case SPTD_PTGEN_BR_CALL_IND: return "call-indirect";
	case SPTD_PTGEN_BR_RET: return "ret";
	case SPTD_PTGEN_BR_SYSCALL: return "syscall";
	case SPTD_PTGEN_BR_FAR: return "far";
	}
	return "?";
}

static int is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x66: case 0x67: case 0xf2: case 0xf3: case 0x2e: case 0x3e:
	case 0x26: case 0x64: case 0x65: case 0x36: case 0xf0:
		return 1;
	}
	return 0;
}

/* Bytes taken by a ModRM operand (ModRM, SIB, displacement) starting at
 * @p; 32- and 64-bit addressing share the encoding. */
static int modrm_len(const uint8_t *p, size_t avail)
{
	uint8_t mod, rm;
	int len = 1;

	if (avail < 1)
		return -ENODATA;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return -ENODATA;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4; /* RIP-relative disp32 */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

static int32_t rel32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	                 (uint32_t)p[3] << 24);
}

int sptd_ptgen_x86_classify(const uint8_t *code, size_t avail, uint64_t ip,
                            struct sptd_ptgen_insn *out)
{
	size_t n = 0;
	uint8_t op;
	int mlen;

	if (!code || !out)
		return -EINVAL;
	out->kind = SPTD_PTGEN_BR_NONE;
	out->len = 0;
	out->target = 0;
	/* Legacy prefixes and REX in any order (a REX not last is ignored by
	 * the CPU, and that does not change the class). */
	while (n < avail && n < 14 && (is_legacy_prefix(code[n]) || (code[n] & 0xf0) == 0x40))
		n++;
	if (n >= avail)
		return -ENODATA;
	op = code[n++];

	switch (op) {
	case 0x70: case 0x71: case 0x72: case 0x73: case 0x74: case 0x75: case 0x76: case 0x77:
	case 0x78: case 0x79: case 0x7a: case 0x7b: case 0x7c: case 0x7d: case 0x7e: case 0x7f:
	case 0xe0: case 0xe1: case 0xe2: case 0xe3: /* LOOPNE, LOOPE, LOOP, JrCXZ */
		if (n + 1 > avail)
			return -ENODATA;
		out->kind = SPTD_PTGEN_BR_JCC;
		out->len = (uint8_t)(n + 1);
		out->target = ip + out->len + (uint64_t)(int64_t)(int8_t)code[n];
		return 0;
	case 0xeb:
		if (n + 1 > avail)
			return -ENODATA;
		out->kind = SPTD_PTGEN_BR_JMP;
		out->len = (uint8_t)(n + 1);
		out->target = ip + out->len + (uint64_t)(int64_t)(int8_t)code[n];
		return 0;
	case 0xe8:
	case 0xe9:
		/* An operand-size prefix does not shorten these in 64-bit mode
		 * on Intel CPUs: rel32 always. */
		if (n + 4 > avail)
			return -ENODATA;
		out->kind = op == 0xe8 ? SPTD_PTGEN_BR_CALL : SPTD_PTGEN_BR_JMP;
		out->len = (uint8_t)(n + 4);
		out->target = ip + out->len + (uint64_t)(int64_t)rel32(code + n);
		return 0;
	case 0xc3:
		out->kind = SPTD_PTGEN_BR_RET;
		out->len = (uint8_t)n;
		return 0;
	case 0xc2:
		out->kind = SPTD_PTGEN_BR_RET;
		out->len = (uint8_t)(n + 2);
		return 0;
	case 0xca: case 0xcb: case 0xcf: /* far RET, IRET */
		out->kind = SPTD_PTGEN_BR_FAR;
		out->len = (uint8_t)(n + (op == 0xca ? 2 : 0));
		return 0;
	case 0xcc: case 0xce: /* INT3, INTO */
		out->kind = SPTD_PTGEN_BR_SYSCALL;
		out->len = (uint8_t)n;
		return 0;
	case 0xcd:
		out->kind = SPTD_PTGEN_BR_SYSCALL;
		out->len = (uint8_t)(n + 1);
		return 0;
	case 0xff:
		if (n >= avail)
			return -ENODATA;
		mlen = modrm_len(code + n, avail - n);
		if (mlen < 0)
			return mlen;
		switch ((code[n] >> 3) & 7) {
		case 2: out->kind = SPTD_PTGEN_BR_CALL_IND; break;
		case 4: out->kind = SPTD_PTGEN_BR_JMP_IND; break;
		case 3: case 5: out->kind = SPTD_PTGEN_BR_FAR; break;
		default: return 0; /* INC, DEC, PUSH */
		}
		out->len = (uint8_t)(n + (size_t)mlen);
		return 0;
	case 0x0f:
		if (n >= avail)
			return -ENODATA;
		op = code[n++];
		if (op >= 0x80 && op <= 0x8f) {
			if (n + 4 > avail)
				return -ENODATA;
			out->kind = SPTD_PTGEN_BR_JCC;
			out->len = (uint8_t)(n + 4);
			out->target = ip + out->len + (uint64_t)(int64_t)rel32(code + n);
			return 0;
		}
		if (op == 0x05 || op == 0x34) { /* SYSCALL, SYSENTER */
			out->kind = SPTD_PTGEN_BR_SYSCALL;
			out->len = (uint8_t)n;
			return 0;
		}
		if (op == 0x07 || op == 0x35) { /* SYSRET, SYSEXIT */
			out->kind = SPTD_PTGEN_BR_FAR;
			out->len = (uint8_t)n;
			return 0;
		}
		return 0;
	default:
		/* Everything else, VEX (C4/C5) and EVEX (62) included, does not
		 * branch. */
		return 0;
	}
}
