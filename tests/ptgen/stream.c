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
 * equal the MTC period exactly and libipt calibrates to the true ratio.
 *
 * With clk->power (--power, --timing tsc only), the CPU also reports power
 * as PwrEvtEn and PTWEn would: the gap between two slices is a C-state (a
 * PSB+ at the switch-out gives its time, then MWAIT and PWRE; the next
 * switch-in's PSB+ is followed by PWRX), each switch-in may change the
 * core:bus ratio (the CBR in its PSB+), and the first plain instruction of
 * each slice is preceded by a PTWRITE of a known value with its FUP.  Each
 * such packet lands right after a PSB+ whose TSC is its exact time, and the
 * stream keeps a record of each (sptd_ptgen_stream_power) for power.txt. */
#include <errno.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "ptgen.h"

#define RETSTACK_MAX 64 /* hardware's return-compression stack depth */
#define SPTD_PTGEN_MWAIT_IP 0xffffffff81e01234ull /* where --power's MWAITs run */

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
	/* --power */
	uint8_t cbr;                       /* ratio the next PSB+ says */
	uint8_t said_cbr;                  /* ratio the last PSB+ said, 0 none */
	uint64_t psb_cycle;                /* cycle of the last PSB+ (its TSC) */
	uint64_t power_seq;                /* switch-ins so far: picks states */
	int idle_open;                     /* a PWRE was written, its PWRX not */
	uint8_t idle_state, idle_sub;      /* ... its resolved C-state (hint code) */
	int ptw_due;                       /* a PTWRITE goes before the next
	                                    * plain instruction */
	struct sptd_ptgen_power *pw;       /* power packets written (heap) */
	size_t npw, cappw;                 /* used / allocated entries of @pw */
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

/* Remember a power packet written at @cycle (its time: the last PSB+'s). */
static int power_rec(struct sptd_ptgen_stream *s, enum sptd_ptgen_pw kind, uint64_t cycle,
                     uint64_t a, uint64_t b, uint64_t c, uint64_t ip)
{
	struct sptd_ptgen_power *r;

	if (s->npw == s->cappw) {
		size_t cap = s->cappw ? s->cappw * 2 : 64;
		struct sptd_ptgen_power *n = realloc(s->pw, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->pw = n;
		s->cappw = cap;
	}
	r = &s->pw[s->npw++];
	r->kind = kind;
	r->cycle = cycle;
	r->a = a;
	r->b = b;
	r->c = c;
	r->ip = ip;
	return 0;
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
	s->psb_cycle = cycle;
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
		pkt.payload.cbr.ratio = s->clk->power ? s->cbr : s->clk->cbr;
		err = emit(s, &pkt);
		if (err < 0)
			return err;
		if (s->clk->power && s->cbr != s->said_cbr) {
			err = power_rec(s, SPTD_PTGEN_PW_CBR, cycle, s->cbr, 0, 0, 0);
			if (err < 0)
				return err;
			s->said_cbr = s->cbr;
		}
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
	s->cbr = clk->cbr;
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
	free(s->pw);
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
	if (s->clk->power) {
		/* the ratio steps down and back up: base, base-1, base-2 */
		s->power_seq++;
		s->cbr = (uint8_t)(s->clk->cbr > 2 ? s->clk->cbr - s->power_seq % 3 : s->clk->cbr);
	}
	err = psb_plus(s, cycle, 0);
	if (err < 0)
		return err;
	if (s->clk->power && s->idle_open) {
		/* woken by an interrupt from the C-state it entered */
		struct pt_packet pkt;

		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_pwrx;
		pkt.payload.pwrx.last = s->idle_state;
		pkt.payload.pwrx.deepest = s->idle_state;
		pkt.payload.pwrx.interrupt = 1;
		err = emit(s, &pkt);
		if (!err)
			err = power_rec(s, SPTD_PTGEN_PW_PWRX, cycle, s->idle_state, s->idle_state,
			                1, 0);
		if (err < 0)
			return err;
		s->idle_open = 0;
	}
	s->ptw_due = s->clk->power;
	return enable(s, cycle, ip);
}

/* The C-state of the gap after a slice: the MWAIT hint code (C-state - 1 in
 * bits 7:4, sub-state in 3:0) cycles through C1, C6.2 and C3 by switch-in. */
static int enter_idle(struct sptd_ptgen_stream *s, uint64_t cycle)
{
	static const uint8_t states[3][2] = { { 0, 0 }, { 5, 2 }, { 2, 0 } };
	const uint8_t *st = states[s->power_seq % 3];
	struct pt_packet pkt;
	int err;

	/* the task is switched out: the PSB+ of the idle CPU carries no PIP
	 * of it (the next switch-in's PSB+ names the next task's CR3) */
	s->cr3 = 0;
	err = psb_plus(s, cycle, 0);   /* tracing is off: no FUP in it */
	if (err < 0)
		return err;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mwait;
	pkt.payload.mwait.hints = (uint32_t)(st[0] << 4 | st[1]);
	pkt.payload.mwait.ext = 1;     /* interrupts wake it even when masked */
	err = emit(s, &pkt);
	if (!err)
		err = power_rec(s, SPTD_PTGEN_PW_MWAIT, cycle, (uint64_t)(st[0] << 4 | st[1]), 1, 0,
		                0);
	if (err < 0)
		return err;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_pwre;
	pkt.payload.pwre.state = st[0];
	pkt.payload.pwre.sub_state = st[1];
	err = emit(s, &pkt);
	if (!err)
		err = power_rec(s, SPTD_PTGEN_PW_PWRE, cycle, st[0], st[1], 0, 0);
	if (err < 0)
		return err;
	/* execution stops at the MWAIT: EXSTOP and the FUP with its IP (a
	 * kernel idle loop's, made up), which also binds the MWAIT */
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_exstop;
	pkt.payload.exstop.ip = 1;
	err = emit(s, &pkt);
	if (!err)
		err = emit_ip(s, ppt_fup, SPTD_PTGEN_MWAIT_IP, 0);
	if (err < 0)
		return err;
	s->idle_open = 1;
	s->idle_state = st[0];
	s->idle_sub = st[1];
	return 0;
}

static int leave(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip, int idle);

int sptd_ptgen_stream_switch_out(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip)
{
	return leave(s, cycle, ip, 1);
}

/* Tracing of the task stops at @cycle; with @idle and --power, the CPU
 * then enters a C-state. */
static int leave(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip, int idle)
{
	int err;

	if (!s)
		return -EINVAL;
	err = catch_up(s, cycle);
	if (err < 0)
		return err;
	s->ptw_due = 0;
	if (!s->enabled)
		return idle && s->clk->power && s->started ? enter_idle(s, cycle) : 0;
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
	if (!err && idle && s->clk->power)
		err = enter_idle(s, cycle);
	return err;
}

int sptd_ptgen_stream_before(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip,
                             int plain)
{
	struct pt_packet pkt;
	int err;

	if (!s)
		return -EINVAL;
	err = catch_up(s, cycle);
	if (err < 0)
		return err;
	if (!s->enabled)
		err = enable(s, cycle, ip);
	else if (s->len - s->psb_at >= s->clk->psb_period)
		err = psb_plus(s, cycle, ip);
	if (err < 0 || !s->ptw_due || !plain)
		return err;
	/* a PTWRITE of a value that says where it came from (CPU, switch-in
	 * number), its FUP naming this instruction: libipt binds it there.
	 * Its time is the last PSB+'s: the switch-in's unless one came since. */
	err = flush_tnt(s, cycle);     /* branches before it come first */
	if (err < 0)
		return err;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_ptw;
	pkt.payload.ptw.plc = 1;       /* 8 bytes */
	pkt.payload.ptw.ip = 1;        /* a FUP follows */
	pkt.payload.ptw.payload = (uint64_t)s->cpu << 48 | 0xC0DE00000000ull | s->power_seq;
	err = emit(s, &pkt);
	if (!err)
		err = emit_ip(s, ppt_fup, ip, 0);
	if (!err)
		err = power_rec(s, SPTD_PTGEN_PW_PTW, s->psb_cycle, pkt.payload.ptw.payload, 8, 0, ip);
	s->ptw_due = 0;
	return err;
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
		if (s->clk->kernel && sptd_ptgen_is_kernel(next))
			goto far_tip;
		/* A far transfer into the kernel clears ContextEn: TIP.PGD with
		 * the (kernel) target suppressed. */
		err = flush_tnt(s, cycle);
		if (!err)
			err = emit_cyc(s, cycle);
		s->enabled = 0;
		s->st.pgd++;
		return err ? err : emit_ip(s, ppt_tip_pgd, 0, 1);
	case SPTD_PTGEN_BR_FAR:
		if (!s->clk->kernel || !sptd_ptgen_is_kernel(ip) || sptd_ptgen_is_kernel(next))
			return sptd_ptgen_fail(-ENOTSUP, "far transfer at 0x%llx to 0x%llx: unsupported",
			                       (unsigned long long)ip, (unsigned long long)next);
	far_tip:
		/* --kernel: both sides traced, a far transfer is one TIP with
		 * its target (the decoder knows the instruction) */
		err = flush_tnt(s, cycle);
		if (!err)
			err = emit_cyc(s, cycle);
		s->st.tip++;
		return err ? err : emit_ip(s, ppt_tip, next, 0);
	}
	return 0;
}

int sptd_ptgen_stream_finish(struct sptd_ptgen_stream *s, uint64_t cycle, uint64_t ip)
{
	if (!s)
		return -EINVAL;
	if (!s->started)
		return 0;
	return leave(s, cycle, ip, 0);
}

const struct sptd_ptgen_power *sptd_ptgen_stream_power(const struct sptd_ptgen_stream *s,
                                                       size_t *n)
{
	*n = s ? s->npw : 0;
	return s ? s->pw : NULL;
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
