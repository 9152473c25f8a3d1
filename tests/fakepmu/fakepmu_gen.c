/* fakepmu_gen.c — see fakepmu_gen.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakepmu_gen.h"

#define SB_CAP (256 * 1024)   /* sideband bytes per CPU */

/* config.txt's integer @key, or -1. */
static int64_t config_get(const char *dir, const char *key)
{
	char path[4200], line[512];
	size_t klen = strlen(key);
	int64_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.txt", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
			v = strtoll(line + klen + 1, NULL, 0);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

int fakepmu_gen_read_file(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t used = 0, cap = 0, n;

	*buf = NULL;
	*len = 0;
	if (!f)
		return -errno;
	do {
		if (used == cap) {
			unsigned char *more = realloc(b, cap = cap ? cap * 2 : 65536);

			if (!more) {
				free(b);
				fclose(f);
				return -ENOMEM;
			}
			b = more;
		}
		n = fread(b + used, 1, cap - used, f);
		used += n;
	} while (n > 0);
	fclose(f);
	*buf = b;
	*len = used;
	return 0;
}

int fakepmu_gen_task_index(const struct fakepmu_ptgen *g, int tid)
{
	for (int i = 0; i < g->ntasks; i++)
		if (g->tasks[i].tid == tid)
			return i;
	return -1;
}

static int task_pid(const struct fakepmu_ptgen *g, int tid)
{
	int i = fakepmu_gen_task_index(g, tid);

	return i >= 0 ? g->tasks[i].pid : tid;
}

int fakepmu_gen_running_at(const struct fakepmu_ptgen *g, int cpu, int64_t ts, int64_t *since)
{
	int tid = 0;

	*since = 0;
	for (int k = 0; k < g->nsw && g->sws[k].ts <= ts; k++)
		if (g->sws[k].cpu == cpu) {
			tid = g->sws[k].next;
			*since = g->sws[k].ts;
		}
	return tid;
}

/* Hex @s (2 digits a byte) into @out, at most @cap bytes: how many, -1 bad. */
static int hex_bytes(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; s[0] && s[1] && n < cap; s += 2) {
		unsigned v;

		if (sscanf(s, "%2x", &v) != 1)
			return -1;
		out[n++] = (uint8_t)v;
	}
	return *s ? -1 : (int)n;
}

/* pokes.txt (sptd-ptgen --kpoke): "NS ADDR OLD NEW", the bytes in hex. */
static void read_pokes(struct fakepmu_ptgen *g)
{
	char path[4200], line[512], old_hex[64], new_hex[64];
	unsigned long long addr;
	long long ts;
	FILE *f;

	snprintf(path, sizeof(path), "%s/pokes.txt", g->dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && g->npokes < FAKEPMU_GEN_MAXPOKE) {
		struct fakepmu_gen_poke *p = &g->pokes[g->npokes];
		int a, b;

		if (sscanf(line, "%lld %llx %63s %63s", &ts, &addr, old_hex, new_hex) != 4)
			continue;
		a = hex_bytes(old_hex, p->old_bytes, sizeof(p->old_bytes));
		b = hex_bytes(new_hex, p->new_bytes, sizeof(p->new_bytes));
		if (a <= 0 || a != b)
			continue;
		p->ts = ts;
		p->addr = addr;
		p->len = (uint16_t)a;
		g->npokes++;
	}
	if (f)
		fclose(f);
}

static void read_lists(struct fakepmu_ptgen *g)
{
	char path[4200], line[4400], comm[64];
	unsigned long long a;
	long long ts;
	int pid, tid, cpu, prev, next;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tasks.txt", g->dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && g->ntasks < FAKEPMU_GEN_MAXTASK)
		if (sscanf(line, "%d %d %llx %63s", &pid, &tid, &a, comm) == 4) {
			struct fakepmu_gen_task *t = &g->tasks[g->ntasks++];

			t->pid = pid;
			t->tid = tid;
			snprintf(t->comm, sizeof(t->comm), "%s", comm);
		}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/sched.txt", g->dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && g->nsw < FAKEPMU_GEN_MAXSW)
		if (sscanf(line, "%lld %d %d %d", &ts, &cpu, &prev, &next) == 4 && cpu >= 0 &&
		    cpu < g->ncpus)
			g->sws[g->nsw++] = (struct fakepmu_gen_switch){ ts, cpu, prev, next };
	if (f)
		fclose(f);
	read_pokes(g);
}

/* Every task's COMM, and its process's file MMAP2s, on the CPU it first
 * runs on, just before the generator's first switch; then each switch as
 * OUT on the previous task's side and IN on the next's, in the kernel's
 * order around the CR3 write: the OUT record is stamped before it
 * (perf_event_task_sched_out, prepare_task_switch), the IN record after
 * (perf_event_task_sched_in, finish_task_switch), and the generator's
 * PSB+ with the next task's PIP sits at the switch time itself. */
#define FAKEPMU_GEN_SWITCH_NS 5   /* OUT this much before the PIP, IN after */

/* The TEXT_POKE records of pokes up to @until (exclusive) not yet written,
 * each into the sideband of the CPU running at its time (CPU 0 when
 * none: the kernel writes it to the poking CPU's events). */
static void put_pokes(struct fakepmu_ptgen *g, int *next, int64_t until)
{
	for (; *next < g->npokes && g->pokes[*next].ts < until; (*next)++) {
		const struct fakepmu_gen_poke *p = &g->pokes[*next];
		int64_t since;
		int c = 0;

		for (int k = 0; k < g->ncpus; k++)
			if (fakepmu_gen_running_at(g, k, p->ts, &since) > 0)
				c = k;
		g->sb_len[c] = fakepmu_rec_text_poke(g->sb[c], g->sb_len[c], SB_CAP, p->addr,
		                                     p->old_bytes, p->len, p->new_bytes, p->len,
		                                     (uint64_t)p->ts, c);
	}
}

static void build_sideband(struct fakepmu_ptgen *g)
{
	char path[4200], line[4400], file[4096];
	unsigned long long a, b, pgoff;
	int64_t t0 = g->sws[0].ts - 10000;
	int pid, poke = 0;

	for (int i = 0; i < g->ntasks; i++) {
		const struct fakepmu_gen_task *t = &g->tasks[i];
		int c = 0;
		FILE *f;

		for (int k = 0; k < g->nsw; k++)
			if (g->sws[k].next == t->tid) {
				c = g->sws[k].cpu;
				break;
			}
		g->sb_len[c] = fakepmu_rec_comm(g->sb[c], g->sb_len[c], SB_CAP, t->pid, t->tid, t->comm,
		                                (uint64_t)t0 + (uint64_t)i, c);
		if (t->pid != t->tid)
			continue;
		snprintf(path, sizeof(path), "%s/maps.txt", g->dir);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%d %llx %llx %llx %4095s", &pid, &a, &b, &pgoff, file) == 5 &&
			    pid == t->pid && file[0] == '/')
				g->sb_len[c] = fakepmu_rec_mmap2(g->sb[c], g->sb_len[c], SB_CAP, pid, pid, a,
				                                 b - a, pgoff, file, (uint64_t)t0 + 100, c);
		if (f)
			fclose(f);
	}
	for (int k = 0; k < g->nsw; k++) {
		const struct fakepmu_gen_switch *s = &g->sws[k];
		int c = s->cpu;

		put_pokes(g, &poke, s->ts - FAKEPMU_GEN_SWITCH_NS);
		g->sb_len[c] = fakepmu_rec_switch(g->sb[c], g->sb_len[c], SB_CAP, 1, task_pid(g, s->prev),
		                                  s->prev, task_pid(g, s->next), s->next,
		                                  (uint64_t)(s->ts - FAKEPMU_GEN_SWITCH_NS), c);
		g->sb_len[c] = fakepmu_rec_switch(g->sb[c], g->sb_len[c], SB_CAP, 0, task_pid(g, s->next),
		                                  s->next, task_pid(g, s->prev), s->prev,
		                                  (uint64_t)(s->ts + FAKEPMU_GEN_SWITCH_NS), c);
	}
	put_pokes(g, &poke, INT64_MAX);
}

int fakepmu_gen_load(const char *dir, struct fakepmu_ptgen **out, char *err, size_t errlen)
{
	struct fakepmu_ptgen *g;
	char path[4200];
	int ret;

	if (!out || !dir || !err || !errlen)
		return -EINVAL;
	*out = NULL;
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(g->dir, sizeof(g->dir), "%s", dir);
	g->ncpus = (int)config_get(dir, "cpus");
	g->tsc_hz = config_get(dir, "tsc_hz");
	g->start_ns = config_get(dir, "start_ns");
	g->end_ns = config_get(dir, "end_ns");
	if (g->ncpus < 1 || g->ncpus > FAKEPMU_GEN_MAXCPU || g->tsc_hz <= 0 || g->end_ns <= 0) {
		snprintf(err, errlen, "%s/config.txt: no usable cpus (1-%d), tsc_hz, end_ns", dir,
		         FAKEPMU_GEN_MAXCPU);
		ret = -EBADMSG;
		goto fail;
	}
	for (int c = 0; c < g->ncpus; c++) {
		snprintf(path, sizeof(path), "%s/cpu%d.pt", dir, c);
		ret = fakepmu_gen_read_file(path, &g->pt[c], &g->pt_len[c]);
		if (ret < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
			goto fail;
		}
		g->sb[c] = calloc(1, SB_CAP);
		if (!g->sb[c]) {
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
			goto fail;
		}
	}
	read_lists(g);
	if (g->ntasks == 0 || g->nsw == 0) {
		snprintf(err, errlen, "%s: no tasks.txt or sched.txt lines", dir);
		ret = -EBADMSG;
		goto fail;
	}
	build_sideband(g);
	for (int c = 0; c < g->ncpus; c++)
		g->scripts[c] = (struct fakepmu_script){ .pt = g->pt[c], .pt_len = g->pt_len[c],
		                                         .sb = g->sb[c], .sb_len = g->sb_len[c],
		                                         .aux_time = (uint64_t)g->end_ns,
		                                         .end_tsc = (uint64_t)((unsigned __int128)
		                                                   (uint64_t)g->end_ns * (uint64_t)g->tsc_hz /
		                                                   1000000000u) };
	*out = g;
	return 0;
fail:
	fakepmu_gen_free(g);
	return ret;
}

void fakepmu_gen_free(struct fakepmu_ptgen *g)
{
	if (!g)
		return;
	for (int c = 0; c < FAKEPMU_GEN_MAXCPU; c++) {
		free(g->pt[c]);
		free(g->sb[c]);
	}
	free(g);
}

int fakepmu_gen_drop(struct fakepmu_ptgen *g, int cpu, size_t len)
{
	if (!g || cpu < 0 || cpu >= g->ncpus || len >= g->pt_len[cpu])
		return -EINVAL;
	g->scripts[cpu].drop_at = 0;
	g->scripts[cpu].drop_len = len;
	return 0;
}

uint32_t fakepmu_gen_mult(const struct fakepmu_ptgen *g)
{
	uint64_t mult;

	if (!g || g->tsc_hz <= 0)
		return 0;
	mult = (1000000000ull << 31) / (uint64_t)g->tsc_hz;
	if (mult > UINT32_MAX || mult * (uint64_t)g->tsc_hz != 1000000000ull << 31)
		return 0;
	return (uint32_t)mult;
}

int fakepmu_gen_sysfs(const struct fakepmu_ptgen *g, const char *root, int type)
{
	int64_t mtc = config_get(g->dir, "mtc_freq");
	char buf[64];
	int ret;

	if (!g || !root)
		return -EINVAL;
	ret = fakepmu_sysfs(root, FAKEPMU_SKYLAKE, type);
	snprintf(buf, sizeof(buf), "%" PRId64, config_get(g->dir, "nom_freq"));
	if (ret >= 0)
		ret = fakepmu_sysfs_timing(root, "max_nonturbo_ratio", buf);
	snprintf(buf, sizeof(buf), "%" PRId64 ":%" PRId64, config_get(g->dir, "cpuid15_ebx"),
	         config_get(g->dir, "cpuid15_eax"));
	if (ret >= 0)
		ret = fakepmu_sysfs_timing(root, "tsc_art_ratio", buf);
	snprintf(buf, sizeof(buf), "%x", mtc >= 0 && mtc < 16 ? 1u << mtc : 0u);
	if (ret >= 0)
		ret = fakepmu_sysfs_cap(root, "mtc_periods", buf);
	return ret;
}
