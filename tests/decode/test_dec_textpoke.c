/* test_dec_textpoke.c — kernel code as it ran at a time, from the copy
 * taken after the freeze and the TEXT_POKE records of its rewrites
 * (decode/textpoke.c), table-driven: pokes before, inside and after the
 * (ts, copy] interval, several at one place, ties, pokes that straddle the
 * copied range, code added and dropped, and invalid arguments. */
#include <errno.h>
#include <string.h>

#include "sptd_dec.h"
#include "sptd_test.h"

#define BASE 0xffffffff81001000ull
#define COPY_TS 1000

/* The copy: 16 bytes 0x10..0x1f, as kcore gave them at COPY_TS. */
static void copy_init(uint8_t *code)
{
	for (int i = 0; i < 16; i++)
		code[i] = (uint8_t)(0x10 + i);
}

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const uint8_t jmp5[5] = { 0xe9, 0x11, 0x22, 0x33, 0x44 };
static const uint8_t int3[1] = { 0xcc };
static const uint8_t ab[2] = { 0xaa, 0xbb };

struct tp_case {
	const char *name;
	int64_t ts;                           /* the time asked for */
	struct sptd_dec_text_poke pokes[4];
	size_t npokes;
	int undone;                           /* return wanted */
	const char *want;                     /* "XX " per byte, "..": unchanged */
};

static const struct tp_case cases[] = {
	{ "no pokes", 500, { { 0 } }, 0, 0, ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
	{ "poke before ts: in the copy, and ran", 500,
	  { { 400, BASE + 2, nop5, jmp5, 5, 5 } }, 1, 0,
	  ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
	{ "poke at ts: ran already", 500, { { 500, BASE + 2, nop5, jmp5, 5, 5 } }, 1, 0,
	  ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
	{ "poke after ts: undone", 500, { { 600, BASE + 2, nop5, jmp5, 5, 5 } }, 1, 1,
	  ".. .. 0f 1f 44 00 00 .. .. .. .. .. .. .. .. .." },
	{ "poke at the copy: undone", 500, { { COPY_TS, BASE, nop5, jmp5, 5, 5 } }, 1, 1,
	  "0f 1f 44 00 00 .. .. .. .. .. .. .. .. .. .. .." },
	{ "poke after the copy: not in it", 500, { { COPY_TS + 1, BASE, nop5, jmp5, 5, 5 } }, 1,
	  0, ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
	/* a kprobe: int3 in, later out again; the copy has the restored byte */
	{ "two at one place, both after ts", 100,
	  { { 700, BASE + 4, int3, ab, 1, 1 }, { 300, BASE + 4, ab, int3, 1, 1 } }, 2, 2,
	  ".. .. .. .. aa .. .. .. .. .. .. .. .. .. .. .." },
	{ "two at one place, between them", 500,
	  { { 700, BASE + 4, int3, ab, 1, 1 }, { 300, BASE + 4, ab, int3, 1, 1 } }, 2, 1,
	  ".. .. .. .. cc .. .. .. .. .. .. .. .. .. .. .." },
	{ "same time: the later record is newer", 100,
	  { { 600, BASE, ab, int3, 1, 1 }, { 600, BASE, int3, jmp5, 1, 1 } }, 2, 2,
	  "aa .. .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
	{ "straddles the start", 500, { { 600, BASE - 3, nop5, jmp5, 5, 5 } }, 1, 1,
	  "00 00 .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
	{ "straddles the end", 500, { { 600, BASE + 14, nop5, jmp5, 5, 5 } }, 1, 1,
	  ".. .. .. .. .. .. .. .. .. .. .. .. .. .. 0f 1f" },
	{ "elsewhere", 500, { { 600, BASE + 16, nop5, jmp5, 5, 5 } }, 1, 0,
	  ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
	/* a trampoline written where nothing was: no old bytes to put back */
	{ "code added", 500, { { 600, BASE + 8, NULL, jmp5, 0, 5 } }, 1, 1,
	  ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
	{ "ts past the copy", COPY_TS + 5, { { 600, BASE, nop5, jmp5, 5, 5 } }, 1, 0,
	  ".. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .." },
};

static void run_case(const struct tp_case *c)
{
	uint8_t code[16], orig[16];
	int ret;

	copy_init(code);
	copy_init(orig);
	ret = sptd_dec_text_as_of(code, sizeof(code), BASE, COPY_TS, c->ts, c->pokes, c->npokes);
	if (ret != c->undone)
		fprintf(stderr, "  case '%s'\n", c->name);
	CHECK_INT(ret, c->undone);
	for (int i = 0; i < 16; i++) {
		const char *w = c->want + 3 * i;
		unsigned want;

		if (w[0] == '.')
			want = orig[i];
		else if (sscanf(w, "%2x", &want) != 1)
			want = 0x100;
		if (code[i] != want)
			fprintf(stderr, "  case '%s': byte %d is %02x, want %02x\n", c->name, i, code[i],
			        want);
		CHECK_INT(code[i], want);
	}
}

int main(void)
{
	uint8_t code[4] = { 0 };
	struct sptd_dec_text_poke bad = { 600, BASE, NULL, jmp5, 5, 5 };
	struct sptd_dec_text_poke top = { 600, UINT64_MAX - 2, nop5, jmp5, 5, 5 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	CHECK_INT(sptd_dec_text_as_of(NULL, 4, BASE, COPY_TS, 0, NULL, 0), -EINVAL);
	CHECK_INT(sptd_dec_text_as_of(code, 0, BASE, COPY_TS, 0, NULL, 0), -EINVAL);
	CHECK_INT(sptd_dec_text_as_of(code, 4, UINT64_MAX - 1, COPY_TS, 0, NULL, 0), -EINVAL);
	CHECK_INT(sptd_dec_text_as_of(code, 4, BASE, COPY_TS, 0, NULL, 1), -EINVAL);
	CHECK_INT(sptd_dec_text_as_of(code, 4, BASE, COPY_TS, 0, &bad, 1), -EINVAL);
	CHECK_INT(sptd_dec_text_as_of(code, 4, BASE, COPY_TS, 0, &top, 1), -EINVAL);
	return SPTD_TEST_END();
}
