/* main.c — sptd-spegen: options, single-stepping one program from `main`,
 * sampling every Nth memory instruction, and writing DIR/perf.data,
 * DIR/spe.bin (the SPE bytes alone) and DIR/truth.csv (docs/SPEGEN.md).
 *
 * Clock: the first instruction after `main` runs at 1 s, each instruction
 * takes 1 ns; a sample's time is its instruction's.  One CPU (0). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptgen.h"
#include "spegen.h"

#define T_START 1000000000ull

struct gen {
	struct sptd_ptgen_proc *proc;
	int pid;                  /* the program (proc->pid is 0 once it is reaped) */
	uint64_t period, max_insns;
	uint64_t insns, mem_insns, samples;
	uint64_t countdown;       /* memory instructions until the next sample */
	uint64_t jitter;          /* xorshift state: SPE's interval jitter */
	uint8_t *aux;
	size_t aux_len, aux_cap;
	FILE *truth;
	int mem_fd, pagemap_fd;   /* /proc/PID/mem and pagemap, -1 unreadable */
	uint64_t t_end;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: sptd-spegen -o DIR [--period N] [--max-insns N] -- PROGRAM [ARGS...]\n"
	           "  -o, --out DIR      output directory (created)\n"
	           "      --period N     sample every Nth to (N + N/2)th load/store/atomic (default 3)\n"
	           "      --max-insns N  stop after N instructions (default 2000000)\n");
}

/* The physical address of @va from pagemap; 0 when not readable (not root). */
static uint64_t phys_addr(struct gen *g, uint64_t va)
{
	uint64_t ent = 0;

	if (g->pagemap_fd < 0 ||
	    pread(g->pagemap_fd, &ent, 8, (off_t)((va >> 12) * 8)) != 8 || !(ent >> 63))
		return 0;
	ent &= (1ull << 55) - 1;
	return ent ? ent << 12 | (va & 0xfff) : 0;
}

static int aux_add(struct gen *g, const struct spegen_sample *s)
{
	if (g->aux_len + SPEGEN_PKT_MAX > g->aux_cap) {
		size_t ncap = g->aux_cap ? g->aux_cap * 2 : 1 << 16;
		uint8_t *np = realloc(g->aux, ncap);

		if (!np)
			return -ENOMEM;
		g->aux = np;
		g->aux_cap = ncap;
	}
	g->aux_len += spegen_packets(s, g->aux + g->aux_len);
	return 0;
}

/* One memory instruction just stepped: sample it when its turn comes. */
static int sample(struct gen *g, const struct spegen_operand *op,
                  const struct user_regs_struct *before, uint64_t next_rip)
{
	struct spegen_sample s = { 0 };
	char func[256];
	uint64_t fstart, fend;
	uint8_t probe;

	g->mem_insns++;
	if (--g->countdown)
		return 0;
	/* the next interval: period plus 0..period/2, so that a loop whose
	 * memory instructions divide the period is not sampled at one place */
	g->jitter ^= g->jitter << 13;
	g->jitter ^= g->jitter >> 7;
	g->jitter ^= g->jitter << 17;
	g->countdown = g->period + g->jitter % (g->period / 2 + 1);
	s.ts = T_START + g->insns;
	s.pid = s.tid = g->pid;
	s.pc = before->rip;
	s.vaddr = spegen_x86_address(op, before, next_rip);
	s.access = op->access;
	/* the operand must name memory the program has: a wrong address is a
	 * generator bug, never a sample */
	if (g->mem_fd >= 0 && pread(g->mem_fd, &probe, 1, (off_t)s.vaddr) != 1)
		return sptd_ptgen_fail(-EFAULT, "pc 0x%" PRIx64 ": computed data address 0x%" PRIx64
		                       " is not mapped (decoder bug)", s.pc, s.vaddr);
	s.paddr = phys_addr(g, s.vaddr);
	spegen_cache_model(&s);
	g->samples++;
	fprintf(g->truth, "%" PRIu64 ",0,%d,%d,0x%" PRIx64 ",%s,0x%" PRIx64 ",", s.ts, s.pid, s.tid,
	        s.pc, spegen_access_name(s.access), s.vaddr);
	if (s.paddr)
		fprintf(g->truth, "0x%" PRIx64, s.paddr);
	fprintf(g->truth, ",0x%" PRIx64 ",", s.events);
	if (s.access != SPEGEN_STORE)
		fprintf(g->truth, "%u", s.source);
	sptd_ptgen_proc_symbolize(g->proc, s.pc, func, sizeof(func), &fstart, &fend);
	fprintf(g->truth, ",%u,%u,%u,%s\n", s.lat_total, s.lat_issue, s.lat_xlat, func);
	return aux_add(g, &s);
}

static int step_all(struct gen *g)
{
	pid_t pid = g->proc->pid;
	int sig = 0;

	while (g->insns < g->max_insns) {
		struct user_regs_struct before, after;
		struct spegen_operand op;
		struct sptd_ptgen_map *m;
		int status, mem = 0, ret;

		if (ptrace(PTRACE_GETREGS, pid, NULL, &before) < 0)
			return sptd_ptgen_fail(-errno, "PTRACE_GETREGS: %s", strerror(errno));
		m = sptd_ptgen_proc_map(g->proc, before.rip);
		if (m)
			mem = spegen_x86_operand(m->bytes + (before.rip - m->start),
			                         (size_t)(m->end - before.rip), &op);
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(long)sig) < 0)
			return sptd_ptgen_fail(-errno, "PTRACE_SINGLESTEP: %s", strerror(errno));
		sig = 0;
		if (waitpid(pid, &status, __WALL) != pid)
			return sptd_ptgen_fail(-ECHILD, "waitpid: %s", strerror(errno));
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			g->proc->pid = 0;     /* reaped */
			break;
		}
		if (WSTOPSIG(status) == SIGTRAP && (status >> 16) != 0)
			return sptd_ptgen_fail(-ENOTSUP, "the program started a thread: sptd-spegen "
			                       "follows one thread only");
		if (WSTOPSIG(status) != SIGTRAP)
			sig = WSTOPSIG(status);   /* delivered with the next step */
		g->insns++;
		if (!mem)
			continue;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &after) < 0)
			return sptd_ptgen_fail(-errno, "PTRACE_GETREGS: %s", strerror(errno));
		if (after.rip <= before.rip || after.rip > before.rip + 15)
			continue;   /* a signal handler ran instead: not this instruction's step */
		ret = sample(g, &op, &before, after.rip);
		if (ret < 0)
			return ret;
	}
	g->t_end = T_START + g->insns;
	return 0;
}

static int write_outputs(struct gen *g, const char *dir, char **argv)
{
	struct spegen_map *maps = calloc(g->proc->nmaps + 1, sizeof(*maps));
	struct spegen_run run = { 0 };
	char path[4200], cmd[1024] = "";
	size_t n = 0;
	FILE *f;
	int ret;

	if (!maps)
		return -ENOMEM;
	for (size_t i = 0; i < g->proc->nmaps; i++) {
		const struct sptd_ptgen_map *m = &g->proc->maps[i];

		if (m->path[0] != '/')
			continue;
		maps[n].start = m->start;
		maps[n].end = m->end;
		maps[n].pgoff = m->pgoff;
		snprintf(maps[n].path, sizeof(maps[n].path), "%s", m->path);
		n++;
	}
	for (int i = 0; argv[i]; i++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), "%s%s", i ? " " : "", argv[i]);
	run.pid = run.tid = g->pid;
	memcpy(run.comm, g->proc->comm, sizeof(run.comm));
	run.maps = maps;
	run.nmaps = n;
	run.aux = g->aux;
	run.aux_len = g->aux_len;
	run.t_start = T_START;
	run.t_end = g->t_end;
	run.period = g->period;
	run.cmdline = cmd;
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	ret = spegen_perf_write(&run, path);
	if (ret < 0)
		sptd_ptgen_fail(ret, "cannot write %s: %s", path, strerror(-ret));
	snprintf(path, sizeof(path), "%s/spe.bin", dir);
	f = ret < 0 ? NULL : fopen(path, "wb");
	if (ret >= 0 && (!f || fwrite(g->aux, 1, g->aux_len, f) != g->aux_len))
		ret = sptd_ptgen_fail(-EIO, "cannot write %s", path);
	if (f && fclose(f) != 0 && ret >= 0)
		ret = sptd_ptgen_fail(-EIO, "cannot write %s", path);
	free(maps);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "period", required_argument, NULL, 'p' },
		{ "max-insns", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gen g = { .period = 3, .max_insns = 2000000, .mem_fd = -1, .pagemap_fd = -1,
	                 .jitter = 0x9e3779b97f4a7c15ull };
	const char *dir = NULL;
	char path[4200];
	uint64_t main_ip;
	int c, ret;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'o': dir = optarg; break;
		case 'p':
		case 'm': {
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || !v || optarg[0] == '-') {
				fprintf(stderr, "sptd-spegen: bad number '%s'\n", optarg);
				return 2;
			}
			*(c == 'p' ? &g.period : &g.max_insns) = v;
			break;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	g.countdown = g.period;
	if (!dir || optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "sptd-spegen: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/truth.csv", dir);
	g.truth = fopen(path, "w");
	if (!g.truth) {
		fprintf(stderr, "sptd-spegen: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(g.truth, "time,cpu,pid,tid,pc,op,vaddr,paddr,events,source,lat_total,lat_issue,"
	                 "lat_xlat,symbol\n");
	ret = sptd_ptgen_proc_launch(argv + optind, &g.proc, &main_ip);
	if (ret >= 0) {
		g.pid = (int)g.proc->pid;
		snprintf(path, sizeof(path), "/proc/%d/mem", g.pid);
		g.mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		snprintf(path, sizeof(path), "/proc/%d/pagemap", g.pid);
		g.pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
		ret = step_all(&g);
	}
	if (ret >= 0)
		ret = write_outputs(&g, dir, argv + optind);
	if (fclose(g.truth) != 0 && ret >= 0)
		ret = sptd_ptgen_fail(-EIO, "cannot write truth.csv");
	if (g.mem_fd >= 0)
		close(g.mem_fd);
	if (g.pagemap_fd >= 0)
		close(g.pagemap_fd);
	sptd_ptgen_proc_destroy(g.proc);
	free(g.aux);
	if (ret < 0) {
		fprintf(stderr, "sptd-spegen: %s\n", sptd_ptgen_err()[0] ? sptd_ptgen_err() :
		        strerror(-ret));
		return ret == -EPERM ? 77 : 1;
	}
	printf("sptd-spegen: %" PRIu64 " instructions, %" PRIu64 " memory, %" PRIu64
	       " samples, %zu SPE bytes\n", g.insns, g.mem_insns, g.samples, g.aux_len);
	return 0;
}
