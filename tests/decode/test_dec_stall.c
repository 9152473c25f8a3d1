/* test_dec_stall.c — the decoder always ends: PT crafted with libipt's
 * encoder enables tracing on a `jmp .` that no packet ever leaves (libipt
 * follows direct jumps from the image alone, so pt_blk_next returns a block
 * at the same trace offset forever), followed by a second PSB segment that
 * decodes normally.  The stall must become a gap and the decoder must go
 * on with the next segment.  An alarm turns a hang into a failure. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "sptd_dec.h"
#include "sptd_test.h"

/* Code at IMG_ADDR: a `jmp .`, then main: call f; ret, and f: ret. */
#define IMG_ADDR 0x401000ull
static const uint8_t code[] = {
	0xeb, 0xfe,                         /* 0x401000: jmp 0x401000 */
	0xe8, 0x09, 0x00, 0x00, 0x00,       /* 0x401002: call 0x401010 */
	0xc3,                               /* 0x401007: ret */
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0xc3,                               /* 0x401010: ret */
};

/* What a run produced. */
struct result {
	int stall_gaps, other_gaps, slices, calls;
};

static int on_gap(void *ctx, int64_t ts, int64_t dur, int cpu, const char *reason)
{
	struct result *r = ctx;

	(void)ts;
	(void)dur;
	(void)cpu;
	fprintf(stderr, "gap: %s\n", reason);
	if (strstr(reason, "no progress"))
		r->stall_gaps++;
	else
		r->other_gaps++;
	return 0;
}

static int on_slice(void *ctx, const struct sptd_dec_slice *s)
{
	struct result *r = ctx;

	(void)s;
	r->slices++;
	return 0;
}

static int on_stat(void *ctx, const char *name, int cpu, int64_t value)
{
	struct result *r = ctx;

	(void)cpu;
	if (strcmp(name, "calls") == 0)
		r->calls += (int)value;
	return 0;
}

/* Append one packet; the new length, or -1. */
static int put(struct pt_encoder *enc, const struct pt_packet *p)
{
	return pt_enc_next(enc, p) < 0 ? -1 : 0;
}

static int put_ip(struct pt_encoder *enc, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload.ip.ipc = ip ? pt_ipc_sext_48 : pt_ipc_suppressed;
	p.payload.ip.ip = ip;
	return put(enc, &p);
}

/* PSB, PSBEND, MODE.Exec 64-bit, TIP.PGE at @ip. */
static int put_enable(struct pt_encoder *enc, uint64_t ip)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	if (put(enc, &p) < 0)
		return -1;
	p.type = ppt_psbend;
	if (put(enc, &p) < 0)
		return -1;
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	if (put(enc, &p) < 0)
		return -1;
	return put_ip(enc, ppt_tip_pge, ip);
}

/* The trace: a segment stuck on `jmp .`, then one running main. */
static size_t make_trace(uint8_t *buf, size_t cap)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	uint64_t off = 0;
	int bad = 0;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap;
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return 0;
	bad |= put_enable(enc, IMG_ADDR);
	/* a packet the stuck decoder never gets to */
	bad |= put_ip(enc, ppt_tip, IMG_ADDR + 7);
	bad |= put_enable(enc, IMG_ADDR + 2);
	bad |= put_ip(enc, ppt_tip, IMG_ADDR + 7);      /* f's ret */
	bad |= put_ip(enc, ppt_tip_pgd, 0);              /* main's ret leaves */
	if (!bad && pt_enc_get_offset(enc, &off) < 0)
		bad = 1;
	pt_free_encoder(enc);
	return bad ? 0 : (size_t)off;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "test_dec_stall: decoder hung (alarm)\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static void test_stall(void)
{
	struct sptd_dec_config cfg;
	struct sptd_dec_session *s = NULL;
	struct result r;
	struct sptd_dec_sink sink = { .ctx = &r, .gap = on_gap, .slice = on_slice,
	                              .stat = on_stat };
	uint8_t pt[256];
	size_t len = make_trace(pt, sizeof(pt));

	CHECK(len > 0);
	memset(&r, 0, sizeof(r));
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_timing = 1;
	cfg.jobs = 1;
	CHECK(sptd_dec_session_create(&cfg, &s) == 0);
	CHECK(sptd_dec_session_add_bytes(s, -1, "stall.img", code, sizeof(code), IMG_ADDR,
	                                 -1) == 0);
	CHECK(sptd_dec_session_add_pt(s, 0, pt, len) == 0);
	CHECK(sptd_dec_session_run(s, &sink) >= 0);
	sptd_dec_session_destroy(s);
	/* the stall is one gap, named; the second segment still decodes */
	CHECK(r.stall_gaps == 1);
	CHECK(r.calls == 1);
	CHECK(r.slices >= 1);
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	alarm(30);
	test_stall();
	return SPTD_TEST_END();
}
