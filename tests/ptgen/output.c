/* output.c — the files of a sptd-ptgen run (formats in docs/PTGEN.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptgen-out.h"

static FILE *open_out(const struct sptd_ptgen_run *g, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", g->outdir, name);
	f = fopen(path, "we");
	if (!f)
		sptd_ptgen_fail(-errno, "cannot write %s: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *name)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return sptd_ptgen_fail(-EIO, "error writing %s", name);
	return 0;
}

int sptd_ptgen_out_open(struct sptd_ptgen_run *g)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/images", g->outdir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return sptd_ptgen_fail(-errno, "cannot create %s: %s", path, strerror(errno));
	g->sched = open_out(g, "sched.txt");
	return g->sched ? 0 : -EIO;
}

void sptd_ptgen_out_close(struct sptd_ptgen_run *g)
{
	if (g->sched)
		fclose(g->sched);
	g->sched = NULL;
}

int sptd_ptgen_out_switch(struct sptd_ptgen_run *g, int cpu, const struct sptd_ptgen_task *prev,
                          const struct sptd_ptgen_task *next)
{
	char idle[32];

	snprintf(idle, sizeof(idle), "swapper/%d", cpu);
	fprintf(g->sched, "%" PRIu64 " %d %d %d %s\n", sptd_ptgen_ns(&g->clk, g->cycle), cpu,
	        prev ? (int)prev->tid : 0, next ? (int)next->tid : 0,
	        next ? next->proc->comm : idle);
	return 0;
}

static void image_name(char *buf, size_t len, const struct sptd_ptgen_proc *p,
                       const struct sptd_ptgen_map *m)
{
	snprintf(buf, len, "images/%d-%" PRIx64 ".bin", (int)p->pid, m->start);
}

static int write_images(struct sptd_ptgen_run *g)
{
	FILE *idx, *maps, *f;
	char name[256];
	size_t i, j;
	int err = 0;

	idx = open_out(g, "images.txt");
	if (!idx)
		return -EIO;
	maps = open_out(g, "maps.txt");
	if (!maps) {
		fclose(idx);
		return -EIO;
	}
	for (i = 0; i < g->nprocs && !err; i++) {
		const struct sptd_ptgen_proc *p = g->procs[i];

		for (j = 0; j < p->nmaps && !err; j++) {
			const struct sptd_ptgen_map *m = &p->maps[j];

			uint64_t at = g->clk.kernel ? sptd_ptgen_kaddr(m->start) : m->start;

			if (!m->touched)
				continue;
			image_name(name, sizeof(name), p, m);
			f = open_out(g, name);
			if (!f) {
				err = -EIO;
				break;
			}
			if (fwrite(m->bytes, 1, m->end - m->start, f) != m->end - m->start)
				err = sptd_ptgen_fail(-EIO, "error writing %s", name);
			if (close_out(f, name) < 0 && !err)
				err = -EIO;
			/* --kernel: the kernel's code at its kernel address, and
			 * no mapping of the program there */
			fprintf(idx, "0x%" PRIx64 " %s %d 0x%" PRIx64 "\n", at, name, (int)p->pid, p->cr3);
			if (at == m->start)
					fprintf(maps, "%d 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " %s\n",
				        (int)p->pid, m->start, m->end, m->pgoff, m->path);
		}
	}
	if (close_out(idx, "images.txt") < 0 && !err)
		err = -EIO;
	if (close_out(maps, "maps.txt") < 0 && !err)
		err = -EIO;
	return err;
}

static int tid_cmp(const void *a, const void *b)
{
	const struct sptd_ptgen_task *x = *(struct sptd_ptgen_task *const *)a;
	const struct sptd_ptgen_task *y = *(struct sptd_ptgen_task *const *)b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

int sptd_ptgen_out_finish(struct sptd_ptgen_run *g)
{
	uint64_t calls = 0, rets = 0, frames = 0;
	struct sptd_ptgen_task **sorted = NULL;
	char name[64];
	FILE *f;
	size_t i;
	int err, cpu;

	for (cpu = 0; cpu < g->ncpus; cpu++) {
		const uint8_t *data;
		size_t len;

		sptd_ptgen_stream_data(g->streams[cpu], &len);
		data = sptd_ptgen_stream_data(g->streams[cpu], &len);
		snprintf(name, sizeof(name), "cpu%d.pt", cpu);
		f = open_out(g, name);
		if (!f)
			return -EIO;
		if (len && fwrite(data, 1, len, f) != len) {
			fclose(f);
			return sptd_ptgen_fail(-EIO, "error writing %s", name);
		}
		err = close_out(f, name);
		if (err < 0)
			return err;
	}
	err = write_images(g);
	if (err < 0)
		return err;

	f = open_out(g, "tasks.txt");
	if (!f)
		return -EIO;
	for (i = 0; i < g->ntasks; i++)
		if (g->tasks[i]->proc)
			fprintf(f, "%d %d 0x%" PRIx64 " %s\n", (int)g->tasks[i]->proc->pid,
			        (int)g->tasks[i]->tid, g->tasks[i]->proc->cr3, g->tasks[i]->proc->comm);
	err = close_out(f, "tasks.txt");
	if (err < 0)
		return err;

	sorted = malloc((g->ntasks ? g->ntasks : 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, g->tasks, g->ntasks * sizeof(*sorted));
	qsort(sorted, g->ntasks, sizeof(*sorted), tid_cmp);
	f = open_out(g, "truth.txt");
	if (!f) {
		free(sorted);
		return -EIO;
	}
	for (i = 0, err = 0; i < g->ntasks && !err; i++)
		if (sorted[i]->proc && sorted[i]->insns)
			err = sptd_ptgen_truth_write(sorted[i], sptd_ptgen_ns(&g->clk, g->end_cycle), f,
			                             &calls, &rets, &frames);
	free(sorted);
	if (close_out(f, "truth.txt") < 0 && !err)
		err = -EIO;
	if (err < 0)
		return err;

	if (g->clk.power) {
		/* power.txt: "KIND CPU NS VALUES..." per packet, by CPU then time */
		static const char *const kinds[] = { "cbr", "mwait", "pwre", "pwrx", "ptw" };

		f = open_out(g, "power.txt");
		if (!f)
			return -EIO;
		for (cpu = 0; cpu < g->ncpus; cpu++) {
			size_t n;
			const struct sptd_ptgen_power *pw = sptd_ptgen_stream_power(g->streams[cpu], &n);

			for (i = 0; i < n; i++)
				fprintf(f, "%s %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " 0x%" PRIx64
				        "\n", kinds[pw[i].kind], cpu, sptd_ptgen_ns(&g->clk, pw[i].cycle),
				        pw[i].a, pw[i].b, pw[i].c, pw[i].ip);
		}
		if (close_out(f, "power.txt") < 0)
			return -EIO;
	}
	f = open_out(g, "config.txt");
	if (!f)
		return -EIO;
	fprintf(f, "cpu_vendor=intel\ncpu_family=%d\ncpu_model=%d\ncpu_stepping=%d\n",
	        SPTD_PTGEN_CPU_FAMILY, SPTD_PTGEN_CPU_MODEL, SPTD_PTGEN_CPU_STEPPING);
	fprintf(f, "mtc_freq=%u\nnom_freq=%u\ncbr=%u\ncpuid15_eax=%u\ncpuid15_ebx=%u\n",
	        g->clk.mtc_freq, g->clk.nom_freq, g->clk.cbr, g->clk.cpuid15_eax,
	        g->clk.cpuid15_ebx);
	fprintf(f, "tsc_hz=%" PRIu64 "\ncore_hz=%" PRIu64 "\ntsc_per_cycle=%" PRIu64 "\n",
	        g->clk.tsc_hz, g->clk.core_hz, g->clk.tsc_per_cycle);
	fprintf(f, "timing=%s\nretcomp=%d\npsb_period=%zu\ncpus=%d\nslice_insns=%" PRIu64 "\n",
	        (const char *[]){ "none", "tsc", "mtc", "cyc" }[g->clk.timing], g->clk.retcomp,
	        g->clk.psb_period, g->ncpus, g->slice);
	fprintf(f, "syscall_cycles=%" PRIu64 "\nswitch_cycles=%" PRIu64 "\n", g->clk.syscall_cycles,
	        g->clk.switch_cycles);
	fprintf(f, "start_ns=%" PRIu64 "\nend_ns=%" PRIu64 "\n", sptd_ptgen_ns(&g->clk, g->start_cycle),
	        sptd_ptgen_ns(&g->clk, g->end_cycle));
	fprintf(f, "truncated=%d\npower=%d\nkernel=%d\n", g->insns >= g->max_insns ? 1 : 0,
	        g->clk.power, g->clk.kernel);
	fprintf(f, "processes=%zu\ntasks=%zu\ninstructions=%" PRIu64 "\n", g->nprocs, g->ntasks,
	        g->insns);
	fprintf(f, "calls=%" PRIu64 "\nreturns=%" PRIu64 "\nframes=%" PRIu64 "\n", calls, rets,
	        frames);
	for (cpu = 0; cpu < g->ncpus; cpu++) {
		struct sptd_ptgen_stream_stats st;

		sptd_ptgen_stream_stats(g->streams[cpu], &st);
		fprintf(f, "insns_cpu%d=%zu\n", cpu, g->logs[cpu].n);
		fprintf(f, "packets_cpu%d=psb:%" PRIu64 " tnt:%" PRIu64 " tip:%" PRIu64
		           " pge:%" PRIu64 " pgd:%" PRIu64 " fup:%" PRIu64 " tsc:%" PRIu64
		           " mtc:%" PRIu64 " cyc:%" PRIu64 " pip:%" PRIu64 " retcomp:%" PRIu64 "\n",
		        cpu, st.psb, st.tnt, st.tip, st.pge, st.pgd, st.fup, st.tsc, st.mtc, st.cyc,
		        st.pip, st.retcomp);
	}
	return close_out(f, "config.txt");
}

int sptd_ptgen_out_verify(struct sptd_ptgen_run *g)
{
	struct sptd_ptgen_section *secs = NULL;
	char (*files)[4096] = NULL;
	size_t n = 0, cap = 0, i, j;
	int err = 0, cpu;

	for (i = 0; i < g->nprocs; i++)
		cap += g->procs[i]->nmaps;
	secs = calloc(cap ? cap : 1, sizeof(*secs));
	files = calloc(cap ? cap : 1, sizeof(*files));
	if (!secs || !files) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nprocs; i++) {
		const struct sptd_ptgen_proc *p = g->procs[i];

		for (j = 0; j < p->nmaps; j++) {
			const struct sptd_ptgen_map *m = &p->maps[j];
			char name[256];

			if (!m->touched)
				continue;
			image_name(name, sizeof(name), p, m);
			snprintf(files[n], sizeof(files[n]), "%s/%s", g->outdir, name);
			secs[n].file = files[n];
			secs[n].vaddr = g->clk.kernel ? sptd_ptgen_kaddr(m->start) : m->start;
			secs[n].size = m->end - m->start;
			secs[n].cr3 = p->cr3;
			n++;
		}
	}
	for (cpu = 0; cpu < g->ncpus && !err; cpu++) {
		const uint8_t *data;
		size_t len;

		data = sptd_ptgen_stream_data(g->streams[cpu], &len);
		err = sptd_ptgen_verify(data, len, &g->clk, secs, n, g->kpatch ? &g->kpatch[cpu] : NULL,
		                        g->logs[cpu].ips, g->logs[cpu].n, cpu);
	}
out:
	free(secs);
	free(files);
	return err;
}
