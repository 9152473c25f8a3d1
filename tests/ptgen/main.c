/* main.c — sptd-ptgen: options, the virtual-CPU scheduler that single-steps
 * every traced task, and the run's end (outputs, --verify).
 *
 * Scheduling model: one task runs at a time on one global synthetic clock;
 * tasks take turns round-robin, a slice of --slice-insns instructions each,
 * and each slice of a task runs on the CPU after the one its previous slice
 * ran on, so with --cpus >= 2 every task migrates.  A CPU with no task is
 * idle (its trace keeps its timing packets).  A task whose syscall has not
 * returned is left blocked and polled; the others go on. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptgen.h"
#include "ptgen-out.h"

int sptd_ptgen_log_add(struct sptd_ptgen_cpu_log *l, uint64_t ip)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 1 << 14;
		uint64_t *ni = realloc(l->ips, ncap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		l->ips = ni;
		l->cap = ncap;
	}
	l->ips[l->n++] = ip;
	return 0;
}

static struct sptd_ptgen_task *find_task(struct sptd_ptgen_run *g, pid_t tid)
{
	size_t i;

	for (i = 0; i < g->ntasks; i++)
		if (g->tasks[i]->tid == tid)
			return g->tasks[i];
	return NULL;
}

static int add_task(struct sptd_ptgen_run *g, pid_t tid, struct sptd_ptgen_proc *proc,
                    struct sptd_ptgen_task **out)
{
	struct sptd_ptgen_task *t, **nt;
	int err;

	nt = realloc(g->tasks, (g->ntasks + 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	g->tasks = nt;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->tid = tid;
	t->proc = proc;
	t->state = SPTD_PTGEN_TASK_NEW;
	t->last_cpu = -1;
	err = sptd_ptgen_truth_attach(t, sptd_ptgen_ns(&g->clk, g->start_cycle));
	if (err < 0) {
		free(t);
		return err;
	}
	g->tasks[g->ntasks++] = t;
	*out = t;
	return 0;
}

static int read_rip(struct sptd_ptgen_task *t)
{
	long rip;

	errno = 0;
	rip = ptrace(PTRACE_PEEKUSER, t->tid, (void *)offsetof(struct user_regs_struct, rip), NULL);
	if (errno)
		return sptd_ptgen_fail(-errno, "tid %d: cannot read rip", (int)t->tid);
	t->rip = (uint64_t)rip;
	return 0;
}

/* Apply one wait status to its task. */
static int handle_status(struct sptd_ptgen_run *g, pid_t tid, int status)
{
	struct sptd_ptgen_task *t = find_task(g, tid), *child;
	unsigned long msg = 0;
	int err, sig;

	if (!t) {
		/* A new thread's first stop can come before its clone event. */
		err = add_task(g, tid, NULL, &t);
		if (err < 0)
			return err;
		t->early_stop = 1;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			t->state = SPTD_PTGEN_TASK_EXITED;
		return 0;
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		t->state = SPTD_PTGEN_TASK_EXITED;
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	sig = WSTOPSIG(status);
	if (sig == SIGTRAP && (status >> 16) == PTRACE_EVENT_CLONE) {
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) < 0)
			return sptd_ptgen_fail(-errno, "tid %d: PTRACE_GETEVENTMSG failed", (int)tid);
		child = find_task(g, (pid_t)msg);
		if (!child) {
			err = add_task(g, (pid_t)msg, t->proc, &child);
			if (err < 0)
				return err;
		}
		child->proc = t->proc;
		if (child->early_stop && child->state == SPTD_PTGEN_TASK_NEW) {
			err = read_rip(child);
			if (err < 0)
				return err;
			child->state = SPTD_PTGEN_TASK_STOPPED;
		}
		/* The clone syscall itself goes on under the step. */
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0)
			return sptd_ptgen_fail(-errno, "tid %d: cannot resume after clone", (int)tid);
		return 0;
	}
	if (t->state == SPTD_PTGEN_TASK_NEW) {
		if (!t->proc) {
			t->early_stop = 1;
			return 0;
		}
		err = read_rip(t);
		if (err < 0)
			return err;
		t->state = SPTD_PTGEN_TASK_STOPPED;
		return 0;
	}
	if (sig != SIGTRAP)
		return sptd_ptgen_fail(-EINTR, "tid %d (%s) got signal %d (%s) at 0x%" PRIx64
		                       ": the program crashed or uses signals (unsupported)",
		                       (int)tid, t->proc ? t->proc->comm : "?", sig, strsignal(sig),
		                       t->rip);
	err = read_rip(t);
	if (err < 0)
		return err;
	t->state = SPTD_PTGEN_TASK_STOPPED;
	return 0;
}

/* Collect every status that is ready, without blocking. */
static int poll_tasks(struct sptd_ptgen_run *g)
{
	int status, err;
	pid_t r;

	while ((r = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
		err = handle_status(g, r, status);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Single-step @t.  A syscall may block: it is polled for a short while and
 * then left running (the task stays BLOCKED). */
int sptd_ptgen_step(struct sptd_ptgen_run *g, struct sptd_ptgen_task *t, int is_syscall)
{
	struct timespec nap = { 0, 20000 };
	int status, err, i;
	pid_t r;

	t->state = SPTD_PTGEN_TASK_BLOCKED;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0) {
		/* Killed under us (another thread's exit_group): reap it. */
		if (errno == ESRCH) {
			if (waitpid(t->tid, &status, __WALL) == t->tid)
				return handle_status(g, t->tid, status);
			t->state = SPTD_PTGEN_TASK_EXITED;
			return 0;
		}
		return sptd_ptgen_fail(-errno, "tid %d: PTRACE_SINGLESTEP: %s", (int)t->tid,
		                       strerror(errno));
	}
	if (!is_syscall) {
		while (t->state == SPTD_PTGEN_TASK_BLOCKED) {
			r = waitpid(t->tid, &status, __WALL);
			if (r < 0)
				return sptd_ptgen_fail(-errno, "tid %d: waitpid: %s", (int)t->tid,
				                       strerror(errno));
			err = handle_status(g, r, status);
			if (err < 0)
				return err;
		}
		return 0;
	}
	for (i = 0; i < 400 && t->state == SPTD_PTGEN_TASK_BLOCKED; i++) {
		err = poll_tasks(g);
		if (err < 0)
			return err;
		if (t->state == SPTD_PTGEN_TASK_BLOCKED)
			nanosleep(&nap, NULL);
	}
	return 0;
}

/* Execute the next instruction of @t on @cpu. */
static int run_one(struct sptd_ptgen_run *g, struct sptd_ptgen_task *t, int cpu)
{
	struct sptd_ptgen_stream *s = g->streams[cpu];
	struct sptd_ptgen_insn insn;
	struct sptd_ptgen_map *m;
	uint64_t ip = t->rip, at = g->cycle, next;
	int err;

	m = sptd_ptgen_proc_map(t->proc, ip);
	if (!m)
		return sptd_ptgen_fail(-EFAULT, "tid %d: no executable mapping at 0x%" PRIx64,
		                       (int)t->tid, ip);
	m->touched = 1;
	err = sptd_ptgen_x86_classify(m->bytes + (ip - m->start), m->end - ip < 15 ? m->end - ip : 15,
	                              ip, &insn);
	if (err < 0)
		return sptd_ptgen_fail(err, "tid %d: cannot decode the instruction at 0x%" PRIx64,
		                       (int)t->tid, ip);
	err = sptd_ptgen_stream_before(s, at, ip, insn.kind == SPTD_PTGEN_BR_NONE);
	if (!err)
		err = sptd_ptgen_log_add(&g->logs[cpu], ip);
	if (!err)
		err = sptd_ptgen_step(g, t, insn.kind == SPTD_PTGEN_BR_SYSCALL);
	if (err < 0)
		return err;
	/* A REP string instruction traps after every iteration: it is still
	 * one instruction (one cycle per iteration). */
	while (insn.kind == SPTD_PTGEN_BR_NONE && t->state == SPTD_PTGEN_TASK_STOPPED &&
	       t->rip == ip) {
		g->cycle++;
		err = sptd_ptgen_step(g, t, 0);
		if (err < 0)
			return err;
	}
	/* --kernel: a SYSCALL that returned runs the kernel's code (one that
	 * blocked or exited is traced as without it: TIP.PGD) */
	if (insn.kind == SPTD_PTGEN_BR_SYSCALL && t->proc->kentry && insn.len == 2 &&
	    m->bytes[ip - m->start] == 0x0f && m->bytes[ip - m->start + 1] == 0x05 &&
	    t->state == SPTD_PTGEN_TASK_STOPPED && t->rip == ip + insn.len)
		return sptd_ptgen_kernel_run(g, t, cpu, ip, &insn, at);
	g->cycle += 1 + (insn.kind == SPTD_PTGEN_BR_SYSCALL ? g->clk.syscall_cycles : 0);
	g->insns++;
	t->insns++;
	if (insn.kind != SPTD_PTGEN_BR_SYSCALL && t->state != SPTD_PTGEN_TASK_STOPPED)
		return 0; /* gone mid-instruction: nothing more to record */
	next = t->state == SPTD_PTGEN_TASK_STOPPED ? t->rip : 0;
	if (insn.kind != SPTD_PTGEN_BR_NONE && insn.kind != SPTD_PTGEN_BR_SYSCALL &&
	    insn.kind != SPTD_PTGEN_BR_JCC && insn.kind != SPTD_PTGEN_BR_RET &&
	    insn.kind != SPTD_PTGEN_BR_JMP_IND && insn.kind != SPTD_PTGEN_BR_CALL_IND &&
	    next != insn.target)
		return sptd_ptgen_fail(-EBADMSG, "tid %d: %s at 0x%" PRIx64 " went to 0x%" PRIx64
		                       ", decoded target 0x%" PRIx64, (int)t->tid,
		                       sptd_ptgen_br_name(insn.kind), ip, next, insn.target);
	if (insn.kind == SPTD_PTGEN_BR_JCC && next != insn.target && next != ip + insn.len)
		return sptd_ptgen_fail(-EBADMSG, "tid %d: jcc at 0x%" PRIx64 " went to 0x%" PRIx64,
		                       (int)t->tid, ip, next);
	err = sptd_ptgen_stream_insn(s, at, ip, &insn, next);
	if (!err)
		err = sptd_ptgen_truth_insn(t, sptd_ptgen_ns(&g->clk, at), ip, &insn, next);
	return err;
}

static int all_done(const struct sptd_ptgen_run *g)
{
	size_t i;

	for (i = 0; i < g->ntasks; i++)
		if (g->tasks[i]->state != SPTD_PTGEN_TASK_EXITED)
			return 0;
	return 1;
}

static int schedule(struct sptd_ptgen_run *g)
{
	size_t cur = 0, i;
	int err, status;

	while (!all_done(g) && g->insns < g->max_insns) {
		struct sptd_ptgen_task *t = NULL;
		uint64_t k;
		int cpu;

		err = poll_tasks(g);
		if (err < 0)
			return err;
		for (i = 0; i < g->ntasks; i++) {
			struct sptd_ptgen_task *c = g->tasks[(cur + i) % g->ntasks];

			if (c->state == SPTD_PTGEN_TASK_STOPPED && c->proc) {
				t = c;
				cur = (cur + i) % g->ntasks + 1;
				break;
			}
		}
		if (!t) {
			pid_t r = waitpid(-1, &status, __WALL);

			if (r < 0)
				return sptd_ptgen_fail(-errno, "waiting for traced tasks: %s",
				                       strerror(errno));
			err = handle_status(g, r, status);
			if (err < 0)
				return err;
			continue;
		}
		cpu = t->last_cpu < 0 ? (int)(g->nslices % (uint64_t)g->ncpus)
		                      : (t->last_cpu + 1) % g->ncpus;
		g->nslices++;
		err = sptd_ptgen_out_switch(g, cpu, 0, t);
		if (!err)
			err = sptd_ptgen_stream_switch_in(g->streams[cpu], g->cycle, t->proc->cr3, t->rip);
		for (k = 0; !err && k < g->slice && t->state == SPTD_PTGEN_TASK_STOPPED &&
		            g->insns < g->max_insns; k++)
			err = run_one(g, t, cpu);
		if (err < 0)
			return err;
		if (t->state == SPTD_PTGEN_TASK_STOPPED)
			err = sptd_ptgen_stream_switch_out(g->streams[cpu], g->cycle, t->rip);
		else
			err = sptd_ptgen_stream_switch_out(g->streams[cpu], g->cycle, 0);
		if (!err)
			err = sptd_ptgen_out_switch(g, cpu, t, NULL);
		if (err < 0)
			return err;
		t->last_cpu = cpu;
		g->end_cycle = g->cycle;
		g->cycle += g->clk.switch_cycles;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: sptd-ptgen -o DIR [options] -- PROG [ARGS...] [-- PROG2 [ARGS...]]...\n"
	        "Run programs under ptrace from main, single-stepping every instruction, and\n"
	        "write the Intel PT a user-only trace of it would hold plus the ground truth.\n"
	        "  -o, --out DIR          output directory (created)\n"
	        "      --cpus N           virtual CPUs (default 1)\n"
	        "      --slice-insns K    instructions per scheduling slice (default 10000)\n"
	        "      --max-insns N      stop after N instructions (default 2000000)\n"
	        "      --psb-period B     bytes between PSB+ (default 4096)\n"
	        "      --timing MODE      none|tsc|mtc|cyc (default cyc)\n"
	        "      --retcomp          compress returns (default: every RET gets a TIP)\n"
	        "      --core-hz HZ       core clock, multiple of 100 MHz (default 1000000000)\n"
	        "      --tsc-hz HZ        TSC rate, multiple of core clock (default 2000000000)\n"
	        "      --mtc-freq F       MTC every 2^F crystal ticks (default 3)\n"
	        "      --start-tsc T      TSC at the first instruction (default: 1000000 core\n"
	        "                         cycles); tests pass this machine's TSC, so that times\n"
	        "                         its TSC -> CLOCK_MONOTONIC offset converts are recent\n"
	        "      --syscall-cycles C extra cycles per syscall (default 200)\n"
	        "      --switch-cycles C  cycles between slices (default 1000)\n"
	        "      --power            C-states between slices (MWAIT, PWRE, PWRX), CBR changes at\n"
	        "                         switch-ins and a PTWRITE per slice, in power.txt (--timing tsc)\n"
	        "      --kernel           trace kernel code too: each program's synthetic kernel\n"
	        "                         (tests/progs/kernel.c) runs at each SYSCALL that returns\n"
	        "      --kpoke FUNC@N     --kernel: after the N-th return to user space, the 5-byte\n"
	        "                         jmp at kernel function FUNC becomes a nop (pokes.txt)\n"
	        "      --verify           decode the PT with libipt and compare (fails on a difference)\n"
	        "Exit: 0 ok, 1 error, 2 usage, 77 ptrace not permitted here.\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -EINVAL : 0;
}

static int check_clock(struct sptd_ptgen_clock *c)
{
	uint64_t per_ctc;

	if (!c->core_hz || c->core_hz % 100000000 || c->core_hz / 100000000 > 255)
		return sptd_ptgen_fail(-EINVAL, "--core-hz must be a multiple of 100 MHz up to 25.5 GHz");
	if (!c->tsc_hz || c->tsc_hz % c->core_hz || c->tsc_hz / 100000000 > 255)
		return sptd_ptgen_fail(-EINVAL, "--tsc-hz must be a multiple of --core-hz up to 25.5 GHz");
	if (c->mtc_freq > 15)
		return sptd_ptgen_fail(-EINVAL, "--mtc-freq must be 0..15");
	c->tsc_per_cycle = c->tsc_hz / c->core_hz;
	c->cbr = (uint8_t)(c->core_hz / 100000000);
	c->nom_freq = (uint8_t)(c->tsc_hz / 100000000);
	/* A 25 MHz crystal: TSC/CTC = tsc_hz / 25 MHz, as CPUID 0x15 eax=2 ebx=2*ratio. */
	per_ctc = c->tsc_hz / 25000000;
	c->cpuid15_eax = 2;
	c->cpuid15_ebx = (uint32_t)(2 * per_ctc);
	if (c->tsc_hz % 25000000 || per_ctc >= 512 ||
	    (per_ctc << c->mtc_freq) % c->tsc_per_cycle)
		return sptd_ptgen_fail(-EINVAL, "--tsc-hz/--mtc-freq give no exact MTC period in cycles");
	return 0;
}

enum { OPT_CPUS = 256, OPT_SLICE, OPT_MAX, OPT_PSB, OPT_TIMING, OPT_RETCOMP, OPT_CORE,
       OPT_TSC, OPT_MTC, OPT_SYSCALL, OPT_SWITCH, OPT_VERIFY, OPT_POWER,
       OPT_START_TSC, OPT_KERNEL, OPT_KPOKE };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "slice-insns", required_argument, NULL, OPT_SLICE },
		{ "max-insns", required_argument, NULL, OPT_MAX },
		{ "psb-period", required_argument, NULL, OPT_PSB },
		{ "timing", required_argument, NULL, OPT_TIMING },
		{ "retcomp", no_argument, NULL, OPT_RETCOMP },
		{ "core-hz", required_argument, NULL, OPT_CORE },
		{ "tsc-hz", required_argument, NULL, OPT_TSC },
		{ "mtc-freq", required_argument, NULL, OPT_MTC },
		{ "start-tsc", required_argument, NULL, OPT_START_TSC },
		{ "syscall-cycles", required_argument, NULL, OPT_SYSCALL },
		{ "power", no_argument, NULL, OPT_POWER },
		{ "switch-cycles", required_argument, NULL, OPT_SWITCH },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "kpoke", required_argument, NULL, OPT_KPOKE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sptd_ptgen_run g;
	uint64_t v, start_tsc = 0;
	int c, err = 0, i, first, cpus = 1;

	memset(&g, 0, sizeof(g));
	g.slice = 10000;
	g.max_insns = 2000000;
	g.clk.psb_period = 4096;
	g.clk.timing = SPTD_PTGEN_TIMING_CYC;
	g.clk.core_hz = 1000000000;
	g.clk.tsc_hz = 2000000000;
	g.clk.mtc_freq = 3;
	g.clk.syscall_cycles = 200;
	g.clk.switch_cycles = 1000;
	g.clk.start_cycle = 1000000;
	while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
		v = 0;
		if (optarg && c != 'o' && c != OPT_TIMING && c != OPT_KPOKE &&
		    parse_u64(optarg, &v) < 0) {
			fprintf(stderr, "sptd-ptgen: bad number '%s'\n", optarg);
			return 2;
		}
		switch (c) {
		case 'o': g.outdir = optarg; break;
		case OPT_CPUS: cpus = (int)v; break;
		case OPT_SLICE: g.slice = v; break;
		case OPT_MAX: g.max_insns = v; break;
		case OPT_PSB: g.clk.psb_period = (size_t)v; break;
		case OPT_RETCOMP: g.clk.retcomp = 1; break;
		case OPT_CORE: g.clk.core_hz = v; break;
		case OPT_TSC: g.clk.tsc_hz = v; break;
		case OPT_MTC: g.clk.mtc_freq = (uint8_t)(v > 255 ? 255 : v); break;
		case OPT_START_TSC: start_tsc = v; break;
		case OPT_SYSCALL: g.clk.syscall_cycles = v; break;
		case OPT_SWITCH: g.clk.switch_cycles = v; break;
		case OPT_VERIFY: g.verify = 1; break;
		case OPT_POWER: g.clk.power = 1; break;
		case OPT_KERNEL: g.clk.kernel = 1; break;
		case OPT_KPOKE: {
			char *at = strrchr(optarg, '@');

			if (!at || at == optarg || parse_u64(at + 1, &v) < 0 || !v) {
				fprintf(stderr, "sptd-ptgen: --kpoke needs FUNC@N, N >= 1\n");
				return 2;
			}
			*at = '\0';
			g.kpoke_func = optarg;
			g.kpoke_after = v;
			break;
		}
		case OPT_TIMING:
			if (strcmp(optarg, "none") == 0)
				g.clk.timing = SPTD_PTGEN_TIMING_NONE;
			else if (strcmp(optarg, "tsc") == 0)
				g.clk.timing = SPTD_PTGEN_TIMING_TSC;
			else if (strcmp(optarg, "mtc") == 0)
				g.clk.timing = SPTD_PTGEN_TIMING_MTC;
			else if (strcmp(optarg, "cyc") == 0)
				g.clk.timing = SPTD_PTGEN_TIMING_CYC;
			else {
				fprintf(stderr, "sptd-ptgen: --timing must be none, tsc, mtc or cyc\n");
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!g.outdir || optind >= argc || cpus < 1 || cpus > 64 || !g.slice || !g.max_insns ||
	    g.clk.psb_period < 256) {
		fprintf(stderr, "sptd-ptgen: need -o DIR and a program; --cpus 1..64, "
		                "--slice-insns and --max-insns > 0, --psb-period >= 256\n");
		usage(stderr);
		return 2;
	}
	g.ncpus = cpus;
	if (g.kpoke_func && !g.clk.kernel) {
		fprintf(stderr, "sptd-ptgen: --kpoke needs --kernel\n");
		return 2;
	}
	if (g.clk.power && g.clk.timing != SPTD_PTGEN_TIMING_TSC) {
		/* each power packet's time is then its PSB+'s TSC exactly; MTC
		 * and CYC would place it between two of their own packets */
		fprintf(stderr, "sptd-ptgen: --power needs --timing tsc\n");
		return 2;
	}
	if (check_clock(&g.clk) < 0) {
		fprintf(stderr, "sptd-ptgen: %s\n", sptd_ptgen_err());
		return 2;
	}
	if (start_tsc) {
		/* a TSC packet holds 56 bits; keep a year of room above the start */
		if (start_tsc >> 55) {
			fprintf(stderr, "sptd-ptgen: --start-tsc must be below 2^55\n");
			return 2;
		}
		g.clk.start_cycle = start_tsc / g.clk.tsc_per_cycle;
	}
	g.start_cycle = g.clk.start_cycle;
	g.cycle = g.start_cycle;
	if (mkdir(g.outdir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "sptd-ptgen: cannot create %s: %s\n", g.outdir, strerror(errno));
		return 1;
	}
	g.streams = calloc((size_t)cpus, sizeof(*g.streams));
	g.logs = calloc((size_t)cpus, sizeof(*g.logs));
	if (!g.streams || !g.logs) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < cpus; i++) {
		err = sptd_ptgen_stream_create(i, &g.clk, &g.streams[i]);
		if (err < 0)
			goto out;
	}
	err = sptd_ptgen_out_open(&g);
	if (err < 0)
		goto out;
	/* Start every program and run it to main. */
	for (i = optind, first = optind; i <= argc; i++) {
		if (i < argc && strcmp(argv[i], "--") != 0)
			continue;
		if (i > first) {
			struct sptd_ptgen_proc *proc, **np;
			struct sptd_ptgen_task *t;
			uint64_t main_ip;
			char *saved = argv[i < argc ? i : argc];

			if (i < argc)
				argv[i] = NULL;
			err = sptd_ptgen_proc_launch(argv + first, &proc, &main_ip);
			if (i < argc)
				argv[i] = saved;
			if (err < 0)
				goto out;
			np = realloc(g.procs, (g.nprocs + 1) * sizeof(*np));
			if (!np) {
				sptd_ptgen_proc_destroy(proc);
				err = -ENOMEM;
				goto out;
			}
			g.procs = np;
			g.procs[g.nprocs++] = proc;
			err = sptd_ptgen_kernel_setup(&g, proc);
			if (err < 0)
				goto out;
			err = add_task(&g, proc->pid, proc, &t);
			if (err < 0)
				goto out;
			t->rip = main_ip;
			t->state = SPTD_PTGEN_TASK_STOPPED;
		}
		first = i + 1;
	}
	if (!g.nprocs) {
		fprintf(stderr, "sptd-ptgen: no program given\n");
		err = -EINVAL;
		goto out;
	}
	err = sptd_ptgen_kernel_ready(&g);
	if (err < 0)
		goto out;
	err = schedule(&g);
	if (err < 0)
		goto out;
	err = sptd_ptgen_out_finish(&g);
	if (err >= 0)
		err = sptd_ptgen_kernel_write(&g);
	if (err < 0)
		goto out;
	if (g.verify) {
		err = sptd_ptgen_out_verify(&g);
		if (err < 0)
			goto out;
	}
out:
	if (err < 0)
		fprintf(stderr, "sptd-ptgen: %s\n", *sptd_ptgen_err() ? sptd_ptgen_err() : strerror(-err));
	for (i = 0; i < (int)g.nprocs; i++)
		sptd_ptgen_proc_destroy(g.procs[i]);
	for (i = 0; i < (int)g.ntasks; i++) {
		sptd_ptgen_truth_detach(g.tasks[i]);
		free(g.tasks[i]);
	}
	for (i = 0; g.streams && i < cpus; i++)
		sptd_ptgen_stream_destroy(g.streams[i]);
	for (i = 0; g.logs && i < cpus; i++)
		free(g.logs[i].ips);
	sptd_ptgen_out_close(&g);
	free(g.streams);
	free(g.logs);
	free(g.tasks);
	free(g.procs);
	free(g.kpatch);
	if (err == -EPERM)
		return 77;
	return err < 0 ? 1 : 0;
}
