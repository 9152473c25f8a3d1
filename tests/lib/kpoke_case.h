/* kpoke_case.h — a fake kernel text with a static-key site rewritten after
 * the trace ran, and its PT (libipt's encoder), for the tests of kernel
 * code decoded as it ran (decode/textpatch.c): test_dec_textpatch at the
 * decoder, test_derive_textpoke through an incident.
 *
 * While the trace ran, the site at KPOKE_SITE was `jmp slow` (slow calls
 * G); a TEXT_POKE then made it a 5-byte nop (the fast path calls H), and
 * the copy holds the nop.  Every pass through the text (call F, call G or
 * H, `jmp *%rax` out) is the same packets on both paths, so decoding with
 * the copy alone gives H where G ran, without any error. */
#ifndef SPTD_TEST_KPOKE_CASE_H
#define SPTD_TEST_KPOKE_CASE_H

#include <stddef.h>
#include <stdint.h>

#define KPOKE_TEXT 0xffffffff81000000ull       /* the text's first byte */
#define KPOKE_SITE (KPOKE_TEXT + 0x05)         /* the static-key site */
#define KPOKE_F (KPOKE_TEXT + 0x40)            /* called first on each pass */
#define KPOKE_H (KPOKE_TEXT + 0x60)            /* the fast path's callee */
#define KPOKE_G (KPOKE_TEXT + 0xa0)            /* the slow path's callee */
#define KPOKE_TEXT_LEN 4096

/* The site's bytes as the trace ran them (jmp slow) and as copied (nop). */
extern uint8_t kpoke_jmp_slow[5];
extern const uint8_t kpoke_nop5[5];

/* The text as copied into @text (KPOKE_TEXT_LEN bytes); also fills
 * kpoke_jmp_slow. */
void kpoke_text(uint8_t *text);
/* PSB+ (TSC @tscs[0]), then a pass through the text entered at each TSC
 * of @tscs[0..@n): its length in @buf, 0 when it does not fit. */
size_t kpoke_trace(uint8_t *buf, size_t cap, const uint64_t *tscs, int n);

#endif
