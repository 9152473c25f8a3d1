/* input.c — reading an sptd-ptgen output directory (docs/PTGEN.md, "Output
 * files"): config.txt keys, images.txt joined with maps.txt, tasks.txt and
 * sched.txt. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "p2p.h"

static FILE *open_in(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		snprintf(err, errlen, "%s: %s (not an sptd-ptgen output directory?)", path,
		         strerror(errno));
	return f;
}

static int bad_line(char *err, size_t errlen, const char *file, int line, const char *text)
{
	snprintf(err, errlen, "%s line %d: cannot parse \"%.80s\"", file, line, text);
	return -EBADMSG;
}

static int read_config(struct sptd_p2p_input *in, char *err, size_t errlen)
{
	char line[512], timing[16] = "";
	FILE *f = open_in(in->dir, "config.txt", err, errlen);
	int n = 0, seen = 0;

	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char key[64];
		char *eq = strchr(line, '=');
		unsigned long long v;

		n++;
		if (!eq || eq - line >= (long)sizeof(key))
			continue;
		memcpy(key, line, (size_t)(eq - line));
		key[eq - line] = 0;
		if (strcmp(key, "timing") == 0) {
			sscanf(eq + 1, "%15s", timing);
			continue;
		}
		if (sscanf(eq + 1, "%llu", &v) != 1)
			continue;
#define KEY(name, field) else if (strcmp(key, name) == 0) (in->field = (__typeof__(in->field))v), seen++
		if (0) {
		}
		KEY("cpu_family", family);
		KEY("cpu_model", model);
		KEY("cpu_stepping", stepping);
		KEY("mtc_freq", mtc_freq);
		KEY("nom_freq", nom_freq);
		KEY("cpuid15_eax", cpuid15_eax);
		KEY("cpuid15_ebx", cpuid15_ebx);
		KEY("tsc_hz", tsc_hz);
		KEY("core_hz", core_hz);
		KEY("retcomp", retcomp);
		KEY("psb_period", psb_period);
		KEY("cpus", cpus);
		KEY("start_ns", start_ns);
		KEY("end_ns", end_ns);
		KEY("switch_cycles", switch_cycles);
#undef KEY
	}
	fclose(f);
	if (strcmp(timing, "none") == 0)
		in->timing = SPTD_P2P_TIMING_NONE;
	else if (strcmp(timing, "tsc") == 0)
		in->timing = SPTD_P2P_TIMING_TSC;
	else if (strcmp(timing, "mtc") == 0)
		in->timing = SPTD_P2P_TIMING_MTC;
	else if (strcmp(timing, "cyc") == 0)
		in->timing = SPTD_P2P_TIMING_CYC;
	else
		return bad_line(err, errlen, "config.txt", n, "timing=?");
	if (seen < 15 || !in->tsc_hz || !in->core_hz || in->cpus <= 0 || in->cpus > 64) {
		snprintf(err, errlen, "config.txt: keys missing or out of range (%d of 15 found)",
		         seen);
		return -EBADMSG;
	}
	return 0;
}

static int read_images(struct sptd_p2p_input *in, char *err, size_t errlen)
{
	char line[PATH_MAX + 128], rel[PATH_MAX];
	FILE *f = open_in(in->dir, "images.txt", err, errlen);
	size_t cap = 0;
	int n = 0, ret = 0;

	if (!f)
		return -ENOENT;
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		struct sptd_p2p_image *im;
		struct stat sb;

		n++;
		if (in->nimages == cap) {
			void *p = realloc(in->images, (cap = cap ? 2 * cap : 16) * sizeof(*in->images));

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			in->images = p;
		}
		im = &in->images[in->nimages];
		memset(im, 0, sizeof(*im));
		if (sscanf(line, "%" SCNx64 " %4095s %d %" SCNx64, &im->addr, rel, &im->pid,
		           &im->cr3) != 4) {
			ret = bad_line(err, errlen, "images.txt", n, line);
			break;
		}
		snprintf(im->bin, sizeof(im->bin), "%.2000s/%.2000s", in->dir, rel);
		if (stat(im->bin, &sb) < 0) {
			snprintf(err, errlen, "%s: %s", im->bin, strerror(errno));
			ret = -ENOENT;
			break;
		}
		im->len = (uint64_t)sb.st_size;
		in->nimages++;
	}
	fclose(f);
	if (ret < 0)
		return ret;
	f = open_in(in->dir, "maps.txt", err, errlen);
	if (!f)
		return -ENOENT;
	n = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, pgoff;
		char file[PATH_MAX];
		int pid;
		size_t i;

		n++;
		if (sscanf(line, "%d %" SCNx64 " %" SCNx64 " %" SCNx64 " %4095s", &pid, &start, &end,
		           &pgoff, file) != 5) {
			ret = bad_line(err, errlen, "maps.txt", n, line);
			break;
		}
		for (i = 0; i < in->nimages; i++)
			if (in->images[i].pid == pid && in->images[i].addr == start) {
				snprintf(in->images[i].file, sizeof(in->images[i].file), "%s", file);
				in->images[i].pgoff = pgoff;
			}
	}
	fclose(f);
	for (size_t i = 0; ret == 0 && i < in->nimages; i++)
		if (!in->images[i].file[0]) {
			snprintf(err, errlen, "maps.txt has no line for the image at 0x%" PRIx64
			         " of pid %d", in->images[i].addr, in->images[i].pid);
			ret = -EBADMSG;
		}
	return ret;
}

static int read_tasks(struct sptd_p2p_input *in, char *err, size_t errlen)
{
	char line[256];
	FILE *f = open_in(in->dir, "tasks.txt", err, errlen);
	size_t cap = 0;
	int n = 0, ret = 0;

	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		struct sptd_p2p_task *t;
		uint64_t cr3;

		n++;
		if (in->ntasks == cap) {
			void *p = realloc(in->tasks, (cap = cap ? 2 * cap : 16) * sizeof(*in->tasks));

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			in->tasks = p;
		}
		t = &in->tasks[in->ntasks];
		memset(t, 0, sizeof(*t));
		if (sscanf(line, "%d %d %" SCNx64 " %15s", &t->pid, &t->tid, &cr3, t->comm) != 4) {
			ret = bad_line(err, errlen, "tasks.txt", n, line);
			break;
		}
		in->ntasks++;
	}
	fclose(f);
	return ret;
}

static int read_sched(struct sptd_p2p_input *in, char *err, size_t errlen)
{
	char line[256];
	FILE *f = open_in(in->dir, "sched.txt", err, errlen);
	size_t cap = 0;
	int n = 0, ret = 0;

	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		struct sptd_p2p_switch *s;
		long long ts;

		n++;
		if (in->nsw == cap) {
			void *p = realloc(in->sw, (cap = cap ? 2 * cap : 64) * sizeof(*in->sw));

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			in->sw = p;
		}
		s = &in->sw[in->nsw];
		if (sscanf(line, "%lld %d %d %d", &ts, &s->cpu, &s->prev, &s->next) != 4 ||
		    s->cpu < 0 || s->cpu >= in->cpus) {
			ret = bad_line(err, errlen, "sched.txt", n, line);
			break;
		}
		s->ts = ts;
		in->nsw++;
	}
	fclose(f);
	return ret;
}

int sptd_p2p_input_read(const char *dir, struct sptd_p2p_input *in, char *err, size_t errlen)
{
	int ret;

	if (!dir || !in || !err || !errlen)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	err[0] = 0;
	if (!realpath(dir, in->dir)) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -ENOENT;
	}
	ret = read_config(in, err, errlen);
	if (ret == 0)
		ret = read_images(in, err, errlen);
	if (ret == 0)
		ret = read_tasks(in, err, errlen);
	if (ret == 0)
		ret = read_sched(in, err, errlen);
	if (ret == 0)
		in->switch_slack_ns = (int64_t)(in->switch_cycles * 1000000000ull / in->core_hz / 4);
	if (ret == 0 && (!in->ntasks || !in->nsw)) {
		snprintf(err, errlen, "%s: no tasks or no switches: nothing ran", in->dir);
		ret = -EBADMSG;
	}
	if (ret < 0)
		sptd_p2p_input_fini(in);
	return ret;
}

void sptd_p2p_input_fini(struct sptd_p2p_input *in)
{
	if (!in)
		return;
	free(in->images);
	free(in->tasks);
	free(in->sw);
	in->images = NULL;
	in->tasks = NULL;
	in->sw = NULL;
	in->nimages = in->ntasks = in->nsw = 0;
}

int sptd_p2p_input_pid(const struct sptd_p2p_input *in, int tid)
{
	for (size_t i = 0; i < in->ntasks; i++)
		if (in->tasks[i].tid == tid)
			return in->tasks[i].pid;
	return tid;
}
