/* kpoke_case.c — see kpoke_case.h. */
#include <string.h>

#include "kpoke_case.h"
#include "pt_encode.h"

#define SLOW (KPOKE_TEXT + 0x80)

uint8_t kpoke_jmp_slow[5];
const uint8_t kpoke_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static void rel32(uint8_t *at, uint64_t from_end, uint64_t to)
{
	int32_t rel = (int32_t)(to - from_end);

	memcpy(at, &rel, 4);
}

void kpoke_text(uint8_t *text)
{
	memset(text, 0xcc, KPOKE_TEXT_LEN);
	text[0x00] = 0xe8;                                /* call F */
	rel32(text + 0x01, KPOKE_TEXT + 0x05, KPOKE_F);
	memcpy(text + 0x05, kpoke_nop5, 5);               /* the site */
	text[0x0a] = 0xe8;                                /* call H */
	rel32(text + 0x0b, KPOKE_TEXT + 0x0f, KPOKE_H);
	text[0x0f] = 0xff;                                /* jmp *%rax */
	text[0x10] = 0xe0;
	text[0x40] = 0xc3;                                /* F: ret */
	text[0x60] = 0xc3;                                /* H: ret */
	text[0x80] = 0xe8;                                /* slow: call G */
	rel32(text + 0x81, KPOKE_TEXT + 0x85, KPOKE_G);
	text[0x85] = 0xff;                                /* jmp *%rax */
	text[0x86] = 0xe0;
	text[0xa0] = 0xc3;                                /* G: ret */
	kpoke_jmp_slow[0] = 0xe9;                         /* the site as it ran */
	rel32(kpoke_jmp_slow + 1, KPOKE_SITE + 5, SLOW);
}

/* One pass, entered at TSC @tsc: TIP.PGE at the text, two compressed
 * returns (one TNT bit each), TIP.PGD at the jmp *%rax. */
static int pass(struct pt_encoder *enc, uint64_t tsc)
{
	struct pt_packet p;
	int bad = 0;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = tsc;
	bad |= sptd_test_encode(enc, &p);
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	bad |= sptd_test_encode(enc, &p);
	p.type = ppt_tip_pge;
	p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = KPOKE_TEXT;
	bad |= sptd_test_encode(enc, &p);
	p.type = ppt_tnt_8;
	p.payload.tnt.bit_size = 2;
	p.payload.tnt.payload = 3;
	bad |= sptd_test_encode(enc, &p);
	p.type = ppt_tip_pgd;
	p.payload.ip.ipc = pt_ipc_suppressed;
	bad |= sptd_test_encode(enc, &p);
	return bad;
}

size_t kpoke_trace(uint8_t *buf, size_t cap, const uint64_t *tscs, int n)
{
	struct pt_encoder *enc = sptd_test_encoder(buf, cap);
	struct pt_packet p;
	int bad = 0;

	if (!enc)
		return 0;
	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	bad |= sptd_test_encode(enc, &p);
	p.type = ppt_tsc;
	p.payload.tsc.tsc = tscs[0];
	bad |= sptd_test_encode(enc, &p);
	p.type = ppt_psbend;
	bad |= sptd_test_encode(enc, &p);
	for (int i = 0; i < n; i++)
		bad |= pass(enc, tscs[i]);
	return sptd_test_encoder_end(enc, bad);
}
