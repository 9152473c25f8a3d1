/* stream.c — the Intel PT packet stream of one virtual CPU.
 *
 * The stream plays the part of the PT hardware of a CPU that traces user
 * space only (CPL3): it turns "instruction X at IP went to Y at cycle C"
 * into packets the way the SDM describes: TNT bits for conditional branches
 * (and compressed returns), TIP for indirect branches and returns, TIP.PGD
 * when a syscall or a context switch leaves user space and TIP.PGE when the
 * task comes back, IP compression against the last IP, PSB+ every
 * psb_period bytes, and TSC/TMA/CBR/MTC/CYC on the synthetic clock.
 *
 * Timing packets run whenever the CPU's trace is on (from its first switch
 * in), also while control flow is filtered out (kernel, idle), as with
 * TraceEn=1: a CYC precedes every MTC so that CYC sums between two MTCs
 * equal the MTC period exactly and libipt calibrates to the true ratio. */
#include <errno.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "ptgen.h"

#define RETSTACK_MAX 64 /* hardware's return-compression stack depth */

struct sptd_ptgen_stream {
	int cpu;                           /* virtual CPU number */
	const struct sptd_ptgen_clock *clk; /* shared configuration */
	struct pt_encoder *enc;            /* libipt encoder over @scratch */
	uint8_t scratch[64];               /* one packet at a time */
	uint8_t *data;                     /* packets so far (heap) */
	size_t len, cap;                   /* bytes used / allocated in @data */
	size_t psb_at;                     /* @len at the last PSB */
	int started;                       /* the first PSB+ was written */
	int enabled;                       /* PacketEn: user code is being traced */
	uint64_t cr3;                      /* address space of the current task */
	uint64_t last_ip;                  /* IP-compression reference */
	uint64_t tnt_bits;                 /* pending TNT bits, oldest highest */
	int tnt_n;                         /* number of pending bits */
	uint64_t cyc_ref;                  /* cycle of the last CYC (or of the PSB) */
	uint64_t next_mtc;                 /* cycle of the next MTC boundary */
	uint64_t retstack[RETSTACK_MAX];   /* return addresses for compression */
	int rs_top, rs_n;                  /* ring position and fill of @retstack */
	struct sptd_ptgen_stream_stats st; /* packet counts */
};

static int emit(struct sptd_ptgen_stream *s, const struct pt_packet *pkt)
{
	int n;

	if (pt_enc_sync_set(s->enc, 0) < 0)
		return sptd_ptgen_fail(-EIO, "cpu%d: encoder reset failed", s->cpu);
	n = pt_enc_next(s->enc, pkt);
	if (n < 0)
		return sptd_ptgen_fail(-EIO, "cpu%d: pt_enc_next(type %d): %s", s->cpu,
		                       (int)pkt->type, pt_errstr(pt_errcode(n)));
	if (s->len + (size_t)n > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 1 << 16;
		uint8_t *nd = realloc(s->data, ncap);

		if (!nd)
			return -ENOMEM;
		s->data = nd;
		s->cap = ncap;
	}
	memcpy(s->data + s->len, s->scratch, (size_t)n);
	s->len += (size_t)n;
	return 0;
}

static int emit_simple(struct sptd_ptgen_stream *s, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	return emit(s, &pkt);
}

/* IP compression as the hardware does it: the fewest bytes that, combined
 * with the last IP, give @ip. */
static int emit_ip(struct sptd_ptgen_stream *s, enum pt_packet_type type, uint64_t ip,
                   int suppressed)
{
	struct pt_packet pkt;
	uint64_t last = s->last_ip;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	if (suppressed) {
		pkt.payload.ip.ipc = pt_ipc_suppressed;
	} else {
		if ((ip >> 16) == (last >> 16))
			pkt.payload.ip.ipc = pt_ipc_update_16;
		else if ((ip >> 32) == (last >> 32))
			pkt.payload.ip.ipc = pt_ipc_update_32;
		else if ((uint64_t)((int64_t)(ip << 16) >> 16) == ip)
			pkt.payload.ip.ipc = pt_ipc_sext_48;
		else if ((ip >> 48) == (last >> 48))
			pkt.payload.ip.ipc = pt_ipc_update_48;
		else
			pkt.payload.ip.ipc = pt_ipc_full;
		pkt.payload.ip.ip = ip;
		s->last_ip = ip;
	}
	return emit(s, &pkt);
}

static int emit_cyc(struct sptd_ptgen_stream *s, uint64_t cycle)
{
	struct pt_packet pkt;

	if (s->clk->timing != SPTD_PTGEN_TIMING_CYC || cycle <= s->cyc_ref)
		return 0;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_cyc;
	pkt.payload.cyc.value = cycle - s->cyc_ref;
	s->cyc_ref = cycle;
	s->st.cyc++;
	return emit(s, &pkt);
}

static uint64_t tsc_of(const struct sptd_ptgen_stream *s, uint64_t cycle)
{
	return cycle * s->clk->tsc_per_cycle;
}

/* CTC ticks elapsed at TSC @tsc (the crystal clock runs in lock-step). */
static uint64_t ctc_of(const struct sptd_ptgen_stream *s, uint64_t tsc)
{
	return tsc * s->clk->cpuid15_eax / s->clk->cpuid15_ebx;
}

/* First MTC boundary strictly after @cycle, in cycles. */
static uint64_t mtc_after(const struct sptd_ptgen_stream *s, uint64_t cycle)
{
	uint64_t period = 1ull << s->clk->mtc_freq;
	uint64_t ctc = ctc_of(s, tsc_of(s, cycle));
	uint64_t next = (ctc / period + 1) * period;
	uint64_t tsc = next * s->clk->cpuid15_ebx / s->clk->cpuid15_eax;

	return (tsc + s->clk->tsc_per_cycle - 1) / s->clk->tsc_per_cycle;
}

/* MTCs for every CTC boundary up to @cycle. */
static int catch_up(struct sptd_ptgen_stream *s, uint64_t cycle)
{
	struct pt_packet pkt;
	int err;

	if (!s->started || s->clk->timing < SPTD_PTGEN_TIMING_MTC)
		return 0;
	while (s->next_mtc <= cycle) {
		uint64_t ctc = ctc_of(s, tsc_of(s, s->next_mtc));

		err = emit_cyc(s, s->next_mtc);
		if (err < 0)
			return err;
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_mtc;
		pkt.payload.mtc.ctc = (uint8_t)(ctc >> s->clk->mtc_freq);
		err = emit(s, &pkt);
		if (err < 0)
			return err;
		s->st.mtc++;
		s->next_mtc = mtc_after(s, s->next_mtc);
	}
	return 0;
}

static int flush_tnt(struct sptd_ptgen_stream *s, uint64_t cycle)
{
	struct pt_packet pkt;
	int err;

	if (!s->tnt_n)
		return 0;
	err = emit_cyc(s, cycle);
	if (err < 0)
		return err;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tnt_8;
	pkt.payload.tnt.bit_size = (uint8_t)s->tnt_n;
	pkt.payload.tnt.payload = s->tnt_bits;
	s->tnt_n = 0;
	s->tnt_bits = 0;
	s->st.tnt++;
	return emit(s, &pkt);
}

static int add_tnt(struct sptd_ptgen_stream *s, uint64_t cycle, int taken)
{
	s->tnt_bits = (s->tnt_bits << 1) | (taken ? 1 : 0);
	s->tnt_n++;
	return s->tnt_n == 6 ? flush_tnt(s, cycle) : 0;
}

/* PSB+ at @cycle; with tracing on, MODE.Exec and FUP give the IP @ip. */
static int psb_plus(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip)
{
	struct pt_packet pkt;
	uint64_t tsc = tsc_of(s, cycle);
	int err;

	err = flush_tnt(s, cycle);
	if (!err)
		err = emit_cyc(s, cycle); /* keeps CYC sums equal to elapsed cycles */
	if (err < 0)
		return err;
	s->psb_at = s->len;
	err = emit_simple(s, ppt_psb);
	if (err < 0)
		return err;
	s->st.psb++;
	s->last_ip = 0;
	s->rs_n = 0;
	if (s->clk->timing != SPTD_PTGEN_TIMING_NONE) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_tsc;
		pkt.payload.tsc.tsc = tsc;
		err = emit(s, &pkt);
		if (err < 0)
			return err;
		s->st.tsc++;
		if (s->clk->timing >= SPTD_PTGEN_TIMING_MTC) {
			uint64_t ctc = ctc_of(s, tsc);

			memset(&pkt, 0, sizeof(pkt));
			pkt.type = ppt_tma;
			pkt.payload.tma.ctc = (uint16_t)ctc;
			pkt.payload.tma.fc = (uint16_t)(tsc - ctc * s->clk->cpuid15_ebx /
			                                            s->clk->cpuid15_eax);
			err = emit(s, &pkt);
			if (err < 0)
				return err;
		}
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_cbr;
		pkt.payload.cbr.ratio = s->clk->cbr;
		err = emit(s, &pkt);
		if (err < 0)
			return err;
		s->cyc_ref = cycle;
		s->next_mtc = mtc_after(s, cycle);
	}
	if (s->cr3) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_pip;
		pkt.payload.pip.cr3 = s->cr3;
		err = emit(s, &pkt);
		if (err < 0)
			return err;
		s->st.pip++;
	}
	if (s->enabled) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_mode;
		pkt.payload.mode.leaf = pt_mol_exec;
		pkt.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
		err = emit(s, &pkt);
		if (err < 0)
			return err;
		err = emit_ip(s, ppt_fup, ip, 0);
		if (err < 0)
			return err;
	}
	s->started = 1;
	return emit_simple(s, ppt_psbend);
}

static int enable(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip)
{
	struct pt_packet pkt;
	int err;

	err = emit_cyc(s, cycle);
	if (err < 0)
		return err;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	err = emit(s, &pkt);
	if (err < 0)
		return err;
	s->enabled = 1;
	s->rs_n = 0;
	s->st.pge++;
	return emit_ip(s, ppt_tip_pge, ip, 0);
}

int sptd_ptgen_stream_create(int cpu, const struct sptd_ptgen_clock *clk,
                             struct sptd_ptgen_stream **out)
{
	struct sptd_ptgen_stream *s;
	struct pt_config cfg;

	if (!clk || !out || cpu < 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cpu = cpu;
	s->clk = clk;
	pt_config_init(&cfg);
	cfg.begin = s->scratch;
	cfg.end = s->scratch + sizeof(s->scratch);
	cfg.cpu.vendor = pcv_intel;
	cfg.cpu.family = SPTD_PTGEN_CPU_FAMILY;
	cfg.cpu.model = SPTD_PTGEN_CPU_MODEL;
	cfg.cpu.stepping = SPTD_PTGEN_CPU_STEPPING;
	cfg.mtc_freq = clk->mtc_freq;
	cfg.nom_freq = clk->nom_freq;
	cfg.cpuid_0x15_eax = clk->cpuid15_eax;
	cfg.cpuid_0x15_ebx = clk->cpuid15_ebx;
	s->enc = pt_alloc_encoder(&cfg);
	if (!s->enc) {
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void sptd_ptgen_stream_destroy(struct sptd_ptgen_stream *s)
{
	if (!s)
		return;
	pt_free_encoder(s->enc);
	free(s->data);
	free(s);
}

int sptd_ptgen_stream_switch_in(struct sptd_ptgen_stream *s, uint64_t cycle,
                                uint64_t cr3, uint64_t ip)
{
	int err;

	if (!s)
		return -EINVAL;
	err = catch_up(s, cycle);
	if (err < 0)
		return err;
	s->cr3 = cr3;
	s->enabled = 0;
	err = psb_plus(s, cycle, 0);
	if (err < 0)
		return err;
	return enable(s, cycle, ip);
}

int sptd_ptgen_stream_switch_out(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip)
{
	int err;

	if (!s)
		return -EINVAL;
	err = catch_up(s, cycle);
	if (err < 0)
		return err;
	if (!s->enabled)
		return 0;
	/* An interrupt took the CPU to the kernel before @ip ran. */
	err = flush_tnt(s, cycle);
	if (!err)
		err = emit_cyc(s, cycle);
	if (!err)
		err = emit_ip(s, ppt_fup, ip, 0);
	if (!err)
		err = emit_ip(s, ppt_tip_pgd, 0, 1);
	s->st.fup++;
	s->st.pgd++;
	s->enabled = 0;
	return err;
}

int sptd_ptgen_stream_before(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip)
{
	int err;

	if (!s)
		return -EINVAL;
	err = catch_up(s, cycle);
	if (err < 0)
		return err;
	if (!s->enabled)
		return enable(s, cycle, ip);
	if (s->len - s->psb_at >= s->clk->psb_period)
		return psb_plus(s, cycle, ip);
	return 0;
}

int sptd_ptgen_stream_insn(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip,
                           const struct sptd_ptgen_insn *insn, uint64_t next)
{
	int err = 0;

	if (!s || !insn)
		return -EINVAL;
	switch (insn->kind) {
	case SPTD_PTGEN_BR_NONE:
	case SPTD_PTGEN_BR_JMP:
		return 0;
	case SPTD_PTGEN_BR_JCC:
		return add_tnt(s, cycle, next == insn->target);
	case SPTD_PTGEN_BR_CALL:
	case SPTD_PTGEN_BR_CALL_IND:
		/* libipt's decoder keeps the same stack: it pushes every call
		 * but a call to the next instruction (the PIC idiom) and pops
		 * only on a compressed return. */
		if (s->clk->retcomp && !(insn->kind == SPTD_PTGEN_BR_CALL &&
		                         insn->target == ip + insn->len)) {
			s->rs_top = (s->rs_top + 1) % RETSTACK_MAX;
			s->retstack[s->rs_top] = ip + insn->len;
			if (s->rs_n < RETSTACK_MAX)
				s->rs_n++;
		}
		if (insn->kind == SPTD_PTGEN_BR_CALL)
			return 0;
		/* fall through */
	case SPTD_PTGEN_BR_JMP_IND:
		err = flush_tnt(s, cycle);
		if (!err)
			err = emit_cyc(s, cycle);
		s->st.tip++;
		return err ? err : emit_ip(s, ppt_tip, next, 0);
	case SPTD_PTGEN_BR_RET:
		if (s->clk->retcomp && s->rs_n && s->retstack[s->rs_top] == next) {
			s->rs_top = (s->rs_top + RETSTACK_MAX - 1) % RETSTACK_MAX;
			s->rs_n--;
			s->st.retcomp++;
			return add_tnt(s, cycle, 1);
		}
		err = flush_tnt(s, cycle);
		if (!err)
			err = emit_cyc(s, cycle);
		s->st.tip++;
		return err ? err : emit_ip(s, ppt_tip, next, 0);
	case SPTD_PTGEN_BR_SYSCALL:
		/* A far transfer into the kernel clears ContextEn: TIP.PGD with
		 * the (kernel) target suppressed. */
		err = flush_tnt(s, cycle);
		if (!err)
			err = emit_cyc(s, cycle);
		s->enabled = 0;
		s->st.pgd++;
		return err ? err : emit_ip(s, ppt_tip_pgd, 0, 1);
	case SPTD_PTGEN_BR_FAR:
		return sptd_ptgen_fail(-ENOTSUP, "far transfer at 0x%llx in user code: unsupported",
		                       (unsigned long long)ip);
	}
	return 0;
}

int sptd_ptgen_stream_finish(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip)
{
	if (!s)
		return -EINVAL;
	if (!s->started)
		return 0;
	return sptd_ptgen_stream_switch_out(s, cycle, ip);
}

const uint8_t *sptd_ptgen_stream_data(const struct sptd_ptgen_stream *s, size_t *len)
{
	*len = s ? s->len : 0;
	return s ? s->data : NULL;
}

void sptd_ptgen_stream_stats(const struct sptd_ptgen_stream *s,
                             struct sptd_ptgen_stream_stats *out)
{
	if (s && out)
		*out = s->st;
}
