/* ild.c — an x86 instruction length decoder for the own flow decoder
 * (qblk.c): from an instruction's bytes its length, its branch class as
 * libipt names it (enum pt_insn_class) and, for a direct branch, its
 * displacement.  libipt 2.0 exports no instruction decoder, so the decoder
 * walking code must have its own; it follows the SDM's encoding rules
 * (legacy prefixes, REX, VEX, EVEX, opcode maps 0F / 0F38 / 0F3A / 3DNow!,
 * ModRM, SIB, displacement, immediate) and tells apart only what the flow
 * needs.  The differential tests (test_qflow, fuzz_flowdiff) hold it to
 * libipt's decoder on every instruction a trace reaches. */
#include <string.h>

#include "qblk-local.h"

/* Most bytes an instruction may have. */
#define ILD_MAX 15

/* What one decode has learnt so far. */
struct ild_state {
	const uint8_t *b;         /* the bytes */
	size_t n;                 /* how many of them may be read */
	enum pt_exec_mode mode;   /* execution mode */
	int osz, asz, rexw, f3;   /* operand/address size prefix, REX.W, F3 */
	int vex;                  /* a VEX or EVEX prefix was seen */
	int map;                  /* 0: one byte, 1: 0F, 2: 0F38, 3: 0F3A, 4: 3DNow!, 5: none */
	uint8_t op;               /* the opcode byte */
	uint8_t modrm;            /* the ModRM byte, when there is one */
	int has_modrm;            /* ... there is one */
	unsigned disp_at, disp_n; /* where the displacement is and its bytes */
};

/* 1: the one-byte opcode @op has a ModRM byte. */
static int map0_modrm(uint8_t op)
{
	if (op < 0x40)
		return (op & 7) < 4;
	switch (op) {
	case 0x62: case 0x63: case 0x69: case 0x6b: case 0xc0: case 0xc1: case 0xc4:
	case 0xc5: case 0xc6: case 0xc7: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
	case 0xf6: case 0xf7: case 0xfe: case 0xff:
		return 1;
	default:
		return (op >= 0x80 && op <= 0x8f) || (op >= 0xd8 && op <= 0xdf);
	}
}

/* 1: the 0F-map opcode @op has a ModRM byte; 2: one whose mod is ignored
 * (MOV to/from control and debug registers). */
static int map1_modrm(uint8_t op)
{
	if (op >= 0x20 && op <= 0x27)
		return op == 0x25 || op == 0x27 ? 0 : 2;
	if (op >= 0x80 && op <= 0x8f)
		return 0;
	if (op >= 0xc8 && op <= 0xcf)
		return 0;
	switch (op) {
	case 0x04: case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0a:
	case 0x0b: case 0x0c: case 0x0e: case 0x30: case 0x31: case 0x32: case 0x33:
	case 0x34: case 0x35: case 0x36: case 0x37: case 0x39: case 0x3b: case 0x3c:
	case 0x3d: case 0x3e: case 0x3f: case 0x77: case 0xa0: case 0xa1: case 0xa2:
	case 0xa6: case 0xa7: case 0xa8: case 0xa9: case 0xaa:
		return 0;
	default:
		return 1;
	}
}

/* The bytes of an operand of size z (16 or 32 bits), of size v (16, 32 or
 * 64), and of an address. */
static unsigned size_z(const struct ild_state *s)
{
	if (s->mode == ptem_16bit)
		return s->osz ? 4 : 2;
	if (s->mode == ptem_64bit && s->rexw)
		return 4;
	return s->osz ? 2 : 4;
}

static unsigned size_v(const struct ild_state *s)
{
	return s->mode == ptem_64bit && s->rexw ? 8 : size_z(s);
}

static unsigned size_addr(const struct ild_state *s)
{
	if (s->mode == ptem_64bit)
		return s->asz ? 4 : 8;
	if (s->mode == ptem_32bit)
		return s->asz ? 2 : 4;
	return s->asz ? 4 : 2;
}

/* Immediate bytes of the opcode decoded; the branch displacement of a
 * direct branch is its disp (disp_n set here). */
static unsigned imm_bytes(struct ild_state *s, unsigned at)
{
	uint8_t op = s->op, reg = (uint8_t)((s->modrm >> 3) & 7);

	if (s->map == 4 || s->map == 3)
		return 1;
	if (s->map == 2 || s->map == 5)
		return 0;
	if (s->map == 1) {
		if (op >= 0x80 && op <= 0x8f) {
			s->disp_at = at;
			s->disp_n = s->mode == ptem_64bit ? 4 : size_z(s);
			return 0;
		}
		switch (op) {
		case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac:
		case 0xba: case 0xc2: case 0xc4: case 0xc5: case 0xc6:
			return 1;
		default:
			return 0;
		}
	}
	if (s->vex)
		return 0;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3) || op == 0xeb) {
		s->disp_at = at;
		s->disp_n = 1;
		return 0;
	}
	if (op == 0xe8 || op == 0xe9) {
		s->disp_at = at;
		s->disp_n = s->mode == ptem_64bit ? 4 : size_z(s);
		return 0;
	}
	if (op < 0x40 && (op & 7) == 4)
		return 1;
	if (op < 0x40 && (op & 7) == 5)
		return size_z(s);
	if (op >= 0xb0 && op <= 0xb7)
		return 1;
	if (op >= 0xb8 && op <= 0xbf)
		return size_v(s);
	if (op >= 0xa0 && op <= 0xa3)
		return size_addr(s);
	switch (op) {
	case 0x6a: case 0x6b: case 0x80: case 0x82: case 0x83: case 0xa8: case 0xc0: case 0xc1:
	case 0xc6: case 0xcd: case 0xd4: case 0xd5: case 0xe4: case 0xe5: case 0xe6: case 0xe7:
		return 1;
	case 0x68: case 0x69: case 0x81: case 0xa9: case 0xc7:
		return size_z(s);
	case 0xc2: case 0xca:
		return 2;
	case 0xc8:
		return 3;
	case 0x9a: case 0xea:
		return size_z(s) + 2;
	case 0xf6:
		return reg < 2 ? 1 : 0;
	case 0xf7:
		return reg < 2 ? size_z(s) : 0;
	default:
		return 0;
	}
}

/* From the opcode at @at on: ModRM, SIB, displacement, immediate.  The
 * length, or -pte_bad_insn when the bytes end first. */
static int ild_rest(struct ild_state *s, unsigned at)
{
	unsigned imm;
	int modrm;

	if (at >= s->n)
		return -pte_bad_insn;
	s->op = s->b[at++];
	if (s->map == 0)
		modrm = map0_modrm(s->op);
	else if (s->map == 1)
		modrm = map1_modrm(s->op);
	else
		modrm = 1;
	if (modrm) {
		uint8_t mod, rm;

		if (at >= s->n)
			return -pte_bad_insn;
		s->modrm = s->b[at++];
		s->has_modrm = 1;
		mod = (uint8_t)(s->modrm >> 6);
		rm = s->modrm & 7;
		if (modrm == 1 && mod != 3) {
			unsigned disp = 0;

			if (size_addr(s) == 2) {
				disp = mod == 1 ? 1 : mod == 2 || rm == 6 ? 2 : 0;
			} else {
				if (rm == 4) {
					if (at >= s->n)
						return -pte_bad_insn;
					if (mod == 0 && (s->b[at] & 7) == 5)
						disp = 4;
					at++;
				}
				if (mod == 1)
					disp = 1;
				else if (mod == 2 || (mod == 0 && rm == 5))
					disp = 4;
			}
			at += disp;
		}
	}
	imm = imm_bytes(s, at);
	at += s->disp_n + imm;
	return at > s->n ? -pte_bad_insn : (int)at;
}

/* The VEX (@len 2 or 3) or EVEX (@len 4) prefix at @at, map @map. */
static int ild_vex(struct ild_state *s, unsigned at, unsigned len, int map)
{
	if (at + len >= s->n)
		return -pte_bad_insn;
	s->vex = 1;
	if (len == 3 && (s->b[at + 2] & 0x80))
		s->rexw = 1;
	if (len == 4 && (s->b[at + 2] & 0x80))
		s->rexw = 1;
	s->map = map;
	return ild_rest(s, at + len);
}

/* The opcode and what follows, from the first byte after the prefixes. */
static int ild_opcode(struct ild_state *s, unsigned at)
{
	uint8_t b = s->b[at], p1;

	if ((b == 0xc4 || b == 0xc5 || b == 0x62) && at + 1 < s->n) {
		p1 = s->b[at + 1];
		if (s->mode == ptem_64bit || (p1 & 0xc0) == 0xc0) {
			if (b == 0xc5)
				return ild_vex(s, at, 2, 1);
			if (b == 0xc4)
				return (p1 & 0x1f) >= 4 ? -pte_bad_insn : ild_vex(s, at, 3, p1 & 0x1f);
			return ild_vex(s, at, 4, p1 & 3);
		}
	} else if (b == 0xc4 || b == 0xc5 || b == 0x62) {
		return -pte_bad_insn;
	}
	if (b != 0x0f) {
		s->map = 0;
		return ild_rest(s, at);
	}
	if (++at >= s->n)
		return -pte_bad_insn;
	b = s->b[at];
	if (b == 0x38 || b == 0x3a) {
		s->map = b == 0x38 ? 2 : 3;
		return ild_rest(s, at + 1);
	}
	if ((b & 0xf8) == 0x38) {
		s->map = 5;
		return ild_rest(s, at + 1);
	}
	if (b == 0x0f) {
		s->map = 4;
		s->op = 0x0f;
		/* ModRM as in map 1, then the real opcode as an immediate */
		s->map = 1;
		{
			int len = ild_rest(s, at);

			s->map = 4;
			if (len < 0 || (unsigned)len >= s->n)
				return -pte_bad_insn;
			return len + 1;
		}
	}
	s->map = 1;
	return ild_rest(s, at);
}

/* The branch class of the decoded instruction. */
static void ild_classify(const struct ild_state *s, struct sptd_dec_ild *out)
{
	uint8_t op = s->op, reg = (uint8_t)((s->modrm >> 3) & 7);

	out->iclass = ptic_other;
	if (s->map == 0 && !s->vex) {
		if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3))
			out->iclass = ptic_cond_jump;
		else if (op == 0xe8)
			out->iclass = ptic_call;
		else if (op == 0xe9 || op == 0xeb)
			out->iclass = ptic_jump;
		else if (op == 0x9a || op == 0xcc || op == 0xcd || op == 0xce || op == 0xf1)
			out->iclass = ptic_far_call;
		else if (op == 0xea)
			out->iclass = ptic_far_jump;
		else if (op == 0xc2 || op == 0xc3)
			out->iclass = ptic_return;
		else if (op == 0xca || op == 0xcb || op == 0xcf)
			out->iclass = ptic_far_return;
		else if (op == 0xff && reg >= 2 && reg <= 5)
			out->iclass = reg == 2 ? ptic_call : reg == 3 ? ptic_far_call
			              : reg == 4 ? ptic_jump : ptic_far_jump;
	} else if (s->map == 1 && !s->vex) {
		if (op >= 0x80 && op <= 0x8f)
			out->iclass = ptic_cond_jump;
		else if (op == 0x05 || op == 0x34)
			out->iclass = ptic_far_call;
		else if (op == 0x07 || op == 0x35)
			out->iclass = ptic_far_return;
		else if (op == 0x22 && reg == 3)
			out->special = SPTD_DEC_ILD_MOV_CR3;
		else if (op == 0x01 && s->modrm == 0xc1)
			out->iclass = ptic_far_call;
		else if (op == 0x01 && (s->modrm == 0xc2 || s->modrm == 0xc3)) {
			out->iclass = ptic_far_return;
			out->special = SPTD_DEC_ILD_VMENTRY;
		} else if (op == 0x01 && s->modrm == 0xec)
			out->iclass = ptic_far_return;
		else if (op == 0xc7 && (s->modrm >> 6) != 3 && reg == 6)
			out->special = SPTD_DEC_ILD_VMPTRLD;
		else if (op == 0xae && s->f3 && !s->osz && reg == 4)
			out->iclass = ptic_ptwrite;
	}
}

int sptd_dec_ild_decode(const uint8_t *b, size_t n, enum pt_exec_mode mode,
                        struct sptd_dec_ild *out)
{
	struct ild_state s;
	unsigned at = 0;
	int len;

	memset(out, 0, sizeof(*out));
	if (mode != ptem_16bit && mode != ptem_32bit && mode != ptem_64bit)
		return -pte_bad_insn;
	memset(&s, 0, sizeof(s));
	s.b = b;
	s.n = n < ILD_MAX ? n : ILD_MAX;
	s.mode = mode;
	for (;; at++) {
		uint8_t p;

		if (at >= s.n)
			return -pte_bad_insn;
		p = b[at];
		if (p == 0x66)
			s.osz = 1;
		else if (p == 0x67)
			s.asz = 1;
		else if (p == 0xf3)
			s.f3 = 1;
		else if (p == 0xf2 || p == 0xf0 || p == 0x2e || p == 0x36 || p == 0x3e ||
		         p == 0x26 || p == 0x64 || p == 0x65)
			;
		else if (mode == ptem_64bit && (p & 0xf0) == 0x40) {
			/* REX counts only right before the opcode */
			if (at + 1 >= s.n)
				return -pte_bad_insn;
			s.rexw = (p & 8) != 0;
			p = b[at + 1];
			if (p == 0x66 || p == 0x67 || p == 0xf3 || p == 0xf2 || p == 0xf0 ||
			    p == 0x2e || p == 0x36 || p == 0x3e || p == 0x26 || p == 0x64 ||
			    p == 0x65 || (p & 0xf0) == 0x40) {
				s.rexw = 0;
				continue;
			}
			at++;
			break;
		} else
			break;
	}
	len = ild_opcode(&s, at);
	if (len < 0)
		return len;
	out->size = (uint8_t)len;
	ild_classify(&s, out);
	if (s.disp_n && (out->iclass == ptic_call || out->iclass == ptic_jump ||
	                 out->iclass == ptic_cond_jump)) {
		out->direct = 1;
		if (s.disp_n == 1)
			out->disp = (int8_t)b[s.disp_at];
		else if (s.disp_n == 2)
			out->disp = (int16_t)(b[s.disp_at] | b[s.disp_at + 1] << 8);
		else
			out->disp = (int32_t)((uint32_t)b[s.disp_at] | (uint32_t)b[s.disp_at + 1] << 8 |
			                      (uint32_t)b[s.disp_at + 2] << 16 |
			                      (uint32_t)b[s.disp_at + 3] << 24);
	}
	return 0;
}
