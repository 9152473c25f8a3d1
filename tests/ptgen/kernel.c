/* kernel.c — --kernel: kernel code in the trace, from a synthetic kernel
 * that the traced program carries (tests/progs/kernel.c).
 *
 * Real kernel code cannot be single-stepped from user space, so the
 * "kernel" is position-independent code of the program itself, linked in
 * the window [SPTD_PTGEN_KWIN_LO, SPTD_PTGEN_KWIN_HI) and run there, under
 * ptrace, as if it ran SPTD_PTGEN_KDELTA higher: every address it has in
 * the trace, the truth and the images is the kernel one.  A SYSCALL whose
 * real system call returned is followed by the kernel's entry
 * (SPTD_PTGEN_KENTRY) with the task's registers saved, stepped up to its
 * SYSRETQ, which is not executed: the registers go back as the real call
 * left them and the task goes on after its SYSCALL.  The trace has a TIP
 * at each of the two far transfers (user and kernel code are both
 * traced), TNT/TIP for the kernel's branches as for user code.
 *
 * --kpoke FUNC@N rewrites the kernel code while the program runs, as a
 * static key does: after the N-th return to user space, the 5-byte jmp at
 * FUNC's first byte becomes a 5-byte nop, in every traced process (one
 * kernel).  The images hold the code as it is at the end (what a copy of
 * kernel memory after the run holds); pokes.txt says what changed when. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "ptgen-out.h"

/* Kernel instructions one system call may run before it is taken for a
 * loop that never reaches its SYSRETQ. */
#define KERNEL_MAX_INSNS 100000

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static int in_window(const struct sptd_ptgen_map *m)
{
	return m->start >= SPTD_PTGEN_KWIN_LO && m->end <= SPTD_PTGEN_KWIN_HI;
}

/* User address of the function @name in @proc's kernel code; 0 none. */
static uint64_t kernel_func(struct sptd_ptgen_proc *proc, const char *name)
{
	for (size_t i = 0; i < proc->nmaps; i++) {
		struct sptd_ptgen_map *m = &proc->maps[i];
		struct sptd_ptgen_symtab *st = in_window(m) ? sptd_ptgen_map_syms(m) : NULL;
		uint64_t addr;

		if (st && sptd_ptgen_symtab_find(st, name, &addr) == 0 &&
		    addr + (uint64_t)m->bias >= m->start && addr + (uint64_t)m->bias < m->end)
			return addr + (uint64_t)m->bias;
	}
	return 0;
}

int sptd_ptgen_kernel_setup(struct sptd_ptgen_run *g, struct sptd_ptgen_proc *proc)
{
	if (!g->clk.kernel)
		return 0;
	proc->kentry = kernel_func(proc, SPTD_PTGEN_KENTRY);
	if (proc->kentry && g->kpoke_func && !kernel_func(proc, g->kpoke_func))
		return sptd_ptgen_fail(-ENOENT, "--kpoke: %s has no kernel function %s", proc->comm,
		                       g->kpoke_func);
	return 0;
}

int sptd_ptgen_kernel_ready(const struct sptd_ptgen_run *g)
{
	for (size_t i = 0; g->clk.kernel && i < g->nprocs; i++)
		if (g->procs[i]->kentry)
			return 0;
	if (!g->clk.kernel)
		return 0;
	return sptd_ptgen_fail(-ENOENT, "--kernel: no program has a function %s in code mapped at "
	                       "0x%llx..0x%llx (tests/progs/kernel.c links its .ktext there)",
	                       SPTD_PTGEN_KENTRY, SPTD_PTGEN_KWIN_LO, SPTD_PTGEN_KWIN_HI);
}

/* Write @len bytes at user address @addr of @pid's code (ptrace writes
 * through its read-only mapping). */
static int poke_text(pid_t pid, uint64_t addr, const uint8_t *bytes, size_t len)
{
	for (size_t done = 0; done < len;) {
		uint64_t at = addr + done, word;
		size_t k = len - done < 8 ? len - done : 8;

		errno = 0;
		word = (uint64_t)ptrace(PTRACE_PEEKDATA, pid, (void *)at, NULL);
		if (errno)
			return -errno;
		memcpy(&word, bytes + done, k);
		if (ptrace(PTRACE_POKEDATA, pid, (void *)at, (void *)word) < 0)
			return -errno;
		done += k;
	}
	return 0;
}

/* --kpoke: after the N-th return to user space, FUNC's jmp becomes a nop
 * in every process that carries the kernel. */
static int kpoke_maybe(struct sptd_ptgen_run *g)
{
	struct sptd_ptgen_patch p;

	if (!g->kpoke_func || g->kpoked || g->kreturns != g->kpoke_after)
		return 0;
	memset(&p, 0, sizeof(p));
	for (size_t i = 0; i < g->nprocs; i++) {
		struct sptd_ptgen_proc *proc = g->procs[i];
		uint64_t at = proc->kentry ? kernel_func(proc, g->kpoke_func) : 0;
		struct sptd_ptgen_map *m = at ? sptd_ptgen_proc_map(proc, at) : NULL;
		int err;

		if (!m || proc->pid <= 0)
			continue;
		if (at + sizeof(nop5) > m->end || m->bytes[at - m->start] != 0xe9)
			return sptd_ptgen_fail(-EINVAL, "--kpoke: %s does not start with a 5-byte jmp",
			                       g->kpoke_func);
		p.addr = sptd_ptgen_kaddr(at);
		p.len = sizeof(nop5);
		memcpy(p.old_bytes, m->bytes + (at - m->start), sizeof(nop5));
		memcpy(p.new_bytes, nop5, sizeof(nop5));
		err = poke_text(proc->pid, at, nop5, sizeof(nop5));
		if (err < 0)
			return sptd_ptgen_fail(err, "--kpoke: cannot write pid %d's code at 0x%" PRIx64,
			                       (int)proc->pid, at);
		memcpy(m->bytes + (at - m->start), nop5, sizeof(nop5));
	}
	g->kpatch = calloc((size_t)g->ncpus, sizeof(*g->kpatch));
	if (!g->kpatch)
		return -ENOMEM;
	for (int c = 0; c < g->ncpus; c++) {
		g->kpatch[c] = p;
		g->kpatch[c].index = g->logs[c].n;
	}
	g->kpoked = 1;
	g->kpoke_cycle = g->cycle;
	return 0;
}

/* The kernel's next instruction for @t, classified in @k: 1 when it is
 * the SYSRETQ that ends the call, 0 another, -errno (said). */
static int kernel_insn(struct sptd_ptgen_task *t, struct sptd_ptgen_insn *k)
{
	uint64_t uip = t->rip, kip = sptd_ptgen_kaddr(uip);
	struct sptd_ptgen_map *m = uip != kip ? sptd_ptgen_proc_map(t->proc, uip) : NULL;
	const uint8_t *code;
	int err;

	if (!m)
		return sptd_ptgen_fail(-EFAULT, "tid %d: kernel code went to 0x%" PRIx64
		                       ", outside the kernel's text", (int)t->tid, uip);
	m->touched = 1;
	code = m->bytes + (uip - m->start);
	err = sptd_ptgen_x86_classify(code, m->end - uip < 15 ? m->end - uip : 15, kip, k);
	if (err < 0)
		return sptd_ptgen_fail(err, "tid %d: cannot decode the kernel instruction at 0x%"
		                       PRIx64, (int)t->tid, kip);
	if (k->kind == SPTD_PTGEN_BR_FAR && k->len == 3 && code[0] == 0x48 && code[1] == 0x0f &&
	    code[2] == 0x07)
		return 1;
	if (k->kind == SPTD_PTGEN_BR_FAR || k->kind == SPTD_PTGEN_BR_SYSCALL)
		return sptd_ptgen_fail(-ENOTSUP, "tid %d: %s at 0x%" PRIx64 " in kernel code: only "
		                       "SYSRETQ leaves it", (int)t->tid, sptd_ptgen_br_name(k->kind), kip);
	return 0;
}

/* Account one instruction of @t that ran at @at and cost @extra cycles
 * more than one; trace it and feed the truth. */
static int kernel_done(struct sptd_ptgen_run *g, struct sptd_ptgen_task *t, int cpu, uint64_t at,
                       uint64_t extra, uint64_t ip, const struct sptd_ptgen_insn *insn,
                       uint64_t next)
{
	int err;

	g->cycle += 1 + extra;
	g->insns++;
	t->insns++;
	err = sptd_ptgen_stream_insn(g->streams[cpu], at, ip, insn, next);
	if (!err)
		err = sptd_ptgen_truth_insn(t, sptd_ptgen_ns(&g->clk, at), ip, insn, next);
	return err;
}

int sptd_ptgen_kernel_run(struct sptd_ptgen_run *g, struct sptd_ptgen_task *t, int cpu,
                          uint64_t ip, const struct sptd_ptgen_insn *insn, uint64_t at)
{
	struct sptd_ptgen_stream *s = g->streams[cpu];
	struct user_regs_struct saved, regs;
	uint64_t entry = t->proc->kentry, back = ip + insn->len;
	int err;

	if (!entry)
		return sptd_ptgen_fail(-EINVAL, "tid %d: no kernel entry", (int)t->tid);
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &saved) < 0)
		return sptd_ptgen_fail(-errno, "tid %d: PTRACE_GETREGS: %s", (int)t->tid,
		                       strerror(errno));
	regs = saved;
	regs.rip = entry;
	regs.rsp = (saved.rsp - 512) & ~15ull;   /* below the red zone */
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs) < 0)
		return sptd_ptgen_fail(-errno, "tid %d: PTRACE_SETREGS: %s", (int)t->tid,
		                       strerror(errno));
	t->rip = entry;
	err = kernel_done(g, t, cpu, at, 0, ip, insn, sptd_ptgen_kaddr(entry));
	for (uint64_t n = 0; !err; n++) {
		struct sptd_ptgen_insn k;
		uint64_t kip = sptd_ptgen_kaddr(t->rip), next;
		int sysret;

		if (n >= KERNEL_MAX_INSNS)
			return sptd_ptgen_fail(-ELOOP, "tid %d: %d kernel instructions without SYSRETQ",
			                       (int)t->tid, KERNEL_MAX_INSNS);
		sysret = kernel_insn(t, &k);
		if (sysret < 0)
			return sysret;
		at = g->cycle;
		err = sptd_ptgen_stream_before(s, at, kip, k.kind == SPTD_PTGEN_BR_NONE);
		if (!err)
			err = sptd_ptgen_log_add(&g->logs[cpu], kip);
		if (!err && sysret) {
			/* the real system call's cost is charged here */
			if (ptrace(PTRACE_SETREGS, t->tid, NULL, &saved) < 0)
				return sptd_ptgen_fail(-errno, "tid %d: PTRACE_SETREGS: %s", (int)t->tid,
				                       strerror(errno));
			t->rip = back;
			g->kreturns++;
			err = kernel_done(g, t, cpu, at, g->clk.syscall_cycles, kip, &k, back);
			return err < 0 ? err : kpoke_maybe(g);
		}
		if (!err)
			err = sptd_ptgen_step(g, t, 0);
		if (err < 0)
			return err;
		if (t->state != SPTD_PTGEN_TASK_STOPPED)
			return sptd_ptgen_fail(-ECHILD, "tid %d: gone in kernel code at 0x%" PRIx64,
			                       (int)t->tid, kip);
		next = sptd_ptgen_kaddr(t->rip);
		if ((k.kind == SPTD_PTGEN_BR_JMP || k.kind == SPTD_PTGEN_BR_CALL) && next != k.target)
			return sptd_ptgen_fail(-EBADMSG, "tid %d: %s at 0x%" PRIx64 " went to 0x%" PRIx64
			                       ", decoded target 0x%" PRIx64, (int)t->tid,
			                       sptd_ptgen_br_name(k.kind), kip, next, k.target);
		err = kernel_done(g, t, cpu, at, 0, kip, &k, next);
	}
	return err;
}

/* Write one kernel image (the bytes of @m now) as images/@name. */
static int write_image(const struct sptd_ptgen_run *g, const struct sptd_ptgen_map *m,
                       const char *name)
{
	char path[4200];
	size_t len = m->end - m->start;
	FILE *f;
	int bad;

	snprintf(path, sizeof(path), "%s/images/%s", g->outdir, name);
	f = fopen(path, "we");
	if (!f)
		return sptd_ptgen_fail(-errno, "cannot write %s: %s", path, strerror(errno));
	bad = fwrite(m->bytes, 1, len, f) != len;
	if (fclose(f) != 0 || bad)
		return sptd_ptgen_fail(-EIO, "error writing %s", path);
	return 0;
}

/* kernel.txt: "text ADDR LEN FILE", "module NAME ADDR LEN FILE", then
 * "sym ADDR TYPE NAME [MODULE]" per function, as kallsyms lists them. */
static int write_kernel_txt(struct sptd_ptgen_run *g, struct sptd_ptgen_proc *p, FILE *f)
{
	int err = 0;

	for (size_t i = 0; i < p->nmaps && !err; i++) {
		struct sptd_ptgen_map *m = &p->maps[i];
		uint64_t k = sptd_ptgen_kaddr(m->start);
		int module = k >= SPTD_PTGEN_KMODULES;
		char name[128];

		if (!in_window(m))
			continue;
		snprintf(name, sizeof(name), "kernel-%s.bin", module ? SPTD_PTGEN_KMODULE : "text");
		err = write_image(g, m, name);
		if (module)
			fprintf(f, "module %s 0x%" PRIx64 " 0x%" PRIx64 " images/%s\n", SPTD_PTGEN_KMODULE,
			        k, m->end - m->start, name);
		else
			fprintf(f, "text 0x%" PRIx64 " 0x%" PRIx64 " images/%s\n", k, m->end - m->start,
			        name);
	}
	for (size_t i = 0; i < p->nmaps && !err; i++) {
		struct sptd_ptgen_map *m = &p->maps[i];
		struct sptd_ptgen_symtab *st = in_window(m) ? sptd_ptgen_map_syms(m) : NULL;
		const char *name;
		uint64_t s, e;

		for (size_t j = 0; st && sptd_ptgen_symtab_get(st, j, &name, &s, &e) == 0; j++) {
			uint64_t u = s + (uint64_t)m->bias, k = sptd_ptgen_kaddr(u);

			if (u < m->start || u >= m->end)
				continue;
			if (k >= SPTD_PTGEN_KMODULES)
				fprintf(f, "sym 0x%" PRIx64 " t %s [%s]\n", k, name, SPTD_PTGEN_KMODULE);
			else
				fprintf(f, "sym 0x%" PRIx64 " T %s\n", k, name);
		}
	}
	return err;
}

int sptd_ptgen_kernel_write(struct sptd_ptgen_run *g)
{
	struct sptd_ptgen_proc *p = NULL;
	char path[4200];
	FILE *f;
	int err, bad;

	if (!g->clk.kernel)
		return 0;
	for (size_t i = 0; i < g->nprocs && !p; i++)
		if (g->procs[i]->kentry)
			p = g->procs[i];
	if (!p)
		return 0;
	snprintf(path, sizeof(path), "%s/kernel.txt", g->outdir);
	f = fopen(path, "we");
	if (!f)
		return sptd_ptgen_fail(-errno, "cannot write %s: %s", path, strerror(errno));
	err = write_kernel_txt(g, p, f);
	bad = ferror(f);
	if (fclose(f) != 0 || bad)
		err = err ? err : sptd_ptgen_fail(-EIO, "error writing %s", path);
	if (err < 0)
		return err;
	/* pokes.txt: "NS ADDR OLD NEW", the bytes in hex */
	snprintf(path, sizeof(path), "%s/pokes.txt", g->outdir);
	f = fopen(path, "we");
	if (!f)
		return sptd_ptgen_fail(-errno, "cannot write %s: %s", path, strerror(errno));
	if (g->kpoked) {
		const struct sptd_ptgen_patch *pa = &g->kpatch[0];

		fprintf(f, "%" PRIu64 " 0x%" PRIx64 " ", sptd_ptgen_ns(&g->clk, g->kpoke_cycle),
		        pa->addr);
		for (size_t i = 0; i < pa->len; i++)
			fprintf(f, "%02x", pa->old_bytes[i]);
		fputc(' ', f);
		for (size_t i = 0; i < pa->len; i++)
			fprintf(f, "%02x", pa->new_bytes[i]);
		fputc('\n', f);
	}
	bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return sptd_ptgen_fail(-EIO, "error writing %s", path);
	return 0;
}
