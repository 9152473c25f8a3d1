/* perfwrite.c — the perf.data file (tools/perf/Documentation/
 * perf.data-file-format.txt) for a generator run, laid out as `perf record
 * -e intel_pt//u --switch-events -a` writes it:
 *
 *   header (104 bytes) | 2 perf_file_attr (attr 112 + ids section 16) |
 *   ids | data: AUXTRACE_INFO, one AUXTRACE + buffer per CPU, COMM and
 *   MMAP2 per task, SWITCH_CPU_WIDE out+in per sched.txt line,
 *   FINISHED_ROUND | feature table | feature bodies
 *
 * Events: attr 0 is intel_pt (dynamic PMU type 8, user only, config bits
 * from config.txt's timing), attr 1 a dummy tracking event (mmap2, comm,
 * context_switch).  Both sample IP|TID|TIME|CPU|IDENTIFIER with
 * sample_id_all, so every sideband record ends in {pid, tid, time, cpu,
 * id}.  Time: perf time = TSC * mult >> shift with time_zero 0 is exactly
 * the generator's ns when 10^9 / tsc_hz is a power-of-two fraction (the
 * default 2 GHz: mult 1, shift 1), else within 2^-shift of it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p.h"
#include "perf_buf.h"

#define PMU_TYPE_INTEL_PT 8          /* as sysfs numbers it on most machines */
#define FILE_ATTR_SIZE PERF_BUF_FILE_ATTR_SIZE
#define SAMPLE_TYPE 0x10087ull       /* IP|TID|TIME|CPU|IDENTIFIER */
#define SAMPLE_ID_SIZE 32            /* pid,tid | time | cpu,res | identifier */
#define ID_PT(cpu) (1u + (unsigned)(cpu))
#define ID_DUMMY(cpu) (1001u + (unsigned)(cpu))

/* intel_pt config bits (sysfs format on Skylake) */
#define PT_CFG_PT        (1ull << 0)
#define PT_CFG_CYC       (1ull << 1)
#define PT_CFG_MTC       (1ull << 9)
#define PT_CFG_TSC       (1ull << 10)
#define PT_CFG_NORETCOMP (1ull << 11)
#define PT_CFG_BRANCH    (1ull << 13)
#define PT_CFG_MTC_SHIFT 14
#define PT_CFG_PSB_SHIFT 24

#define MISC_SWITCH_OUT 0x2000u

static void put_sample_id(struct perf_buf *b, int pid, int tid, int64_t ts, int cpu)
{
	perf_buf_u32(b, (uint32_t)pid);
	perf_buf_u32(b, (uint32_t)tid);
	perf_buf_u64(b, (uint64_t)ts);
	perf_buf_u32(b, (uint32_t)cpu);
	perf_buf_u32(b, 0);
	perf_buf_u64(b, ID_DUMMY(cpu));
}

uint64_t sptd_p2p_pt_config(const struct sptd_p2p_input *in)
{
	uint64_t c = PT_CFG_PT | PT_CFG_BRANCH;
	unsigned p;

	if (in->timing >= SPTD_P2P_TIMING_TSC)
		c |= PT_CFG_TSC;
	if (in->timing >= SPTD_P2P_TIMING_MTC)
		c |= PT_CFG_MTC | ((uint64_t)(in->mtc_freq & 0xf) << PT_CFG_MTC_SHIFT);
	if (in->timing == SPTD_P2P_TIMING_CYC)
		c |= PT_CFG_CYC;
	if (!in->retcomp)
		c |= PT_CFG_NORETCOMP;
	for (p = 0; p < 16; p++)         /* psb_period: 2^(p+11) bytes */
		if ((1u << (p + 11)) == in->psb_period)
			c |= (uint64_t)p << PT_CFG_PSB_SHIFT;
	return c;
}

/* TSC -> ns as mult >> shift: exact when possible, else the finest shift. */
static void time_conv(uint64_t tsc_hz, uint32_t *mult, uint32_t *shift)
{
	unsigned s;

	for (s = 0; s < 32; s++)
		if (((1000000000ull << s) % tsc_hz) == 0 && (1000000000ull << s) / tsc_hz < (1ull << 32)) {
			*mult = (uint32_t)((1000000000ull << s) / tsc_hz);
			*shift = s;
			return;
		}
	for (s = 31; s > 0; s--)
		if ((1000000000ull << s) / tsc_hz < (1ull << 32))
			break;
	*mult = (uint32_t)((1000000000ull << s) / tsc_hz);
	*shift = s;
}

static void put_records(const struct sptd_p2p_input *in, struct perf_buf *d, uint8_t *const *pt,
                        const size_t *ptlen)
{
	uint32_t mult, shift;
	size_t at, i, j;
	int cpu;

	/* AUXTRACE_INFO: type 1 (intel_pt) and perf's 17 private words */
	time_conv(in->tsc_hz, &mult, &shift);
	at = perf_buf_rec_begin(d, REC_AUXTRACE_INFO, 0);
	perf_buf_u32(d, 1);
	perf_buf_u32(d, 0);
	perf_buf_u64(d, PMU_TYPE_INTEL_PT);
	perf_buf_u64(d, shift);
	perf_buf_u64(d, mult);
	perf_buf_u64(d, 0);                   /* time_zero */
	perf_buf_u64(d, 1);                   /* cap_user_time_zero */
	perf_buf_u64(d, PT_CFG_TSC);
	perf_buf_u64(d, PT_CFG_NORETCOMP);
	perf_buf_u64(d, 3);                   /* have_sched_switch: CPU-wide switch events */
	perf_buf_u64(d, 0);                   /* snapshot mode */
	perf_buf_u64(d, 1);                   /* per-CPU mmaps */
	perf_buf_u64(d, PT_CFG_MTC);
	perf_buf_u64(d, 0xfull << PT_CFG_MTC_SHIFT);
	perf_buf_u64(d, in->cpuid15_ebx);     /* tsc_ctc_ratio_n */
	perf_buf_u64(d, in->cpuid15_eax);     /* tsc_ctc_ratio_d */
	perf_buf_u64(d, PT_CFG_CYC);
	perf_buf_u64(d, (uint64_t)in->nom_freq);  /* max non-turbo ratio */
	perf_buf_u64(d, 0);                   /* no address filter string */
	perf_buf_rec_end(d, at);

	/* the trace of each CPU, as one AUX buffer read (size padded to 8) */
	for (cpu = 0; cpu < in->cpus; cpu++) {
		size_t padded = (ptlen[cpu] + 7) & ~(size_t)7;

		if (!ptlen[cpu])
			continue;
		at = perf_buf_rec_begin(d, REC_AUXTRACE, 0);
		perf_buf_u64(d, padded);
		perf_buf_u64(d, 0);               /* offset in the AUX area */
		perf_buf_u64(d, 0x1000u + (unsigned)cpu);  /* reference */
		perf_buf_u32(d, (uint32_t)cpu);   /* mmap index */
		perf_buf_u32(d, UINT32_MAX);      /* tid: per-CPU buffer */
		perf_buf_u32(d, (uint32_t)cpu);
		perf_buf_u32(d, 0);
		perf_buf_rec_end(d, at);
		perf_buf_put(d, pt[cpu], ptlen[cpu]);
		perf_buf_take(d, padded - ptlen[cpu]);
	}

	/* processes: COMM then their mappings; then the other threads */
	for (j = 0; j < 2; j++)
		for (i = 0; i < in->ntasks; i++) {
			const struct sptd_p2p_task *t = &in->tasks[i];

			if ((t->pid == t->tid) != (j == 0))
				continue;
			at = perf_buf_rec_begin(d, REC_COMM, 0);
			perf_buf_u32(d, (uint32_t)t->pid);
			perf_buf_u32(d, (uint32_t)t->tid);
			perf_buf_str8(d, t->comm);
			put_sample_id(d, t->pid, t->tid, in->start_ns, 0);
			perf_buf_rec_end(d, at);
			for (size_t k = 0; j == 0 && k < in->nimages; k++) {
				const struct sptd_p2p_image *im = &in->images[k];

				if (im->pid != t->pid)
					continue;
				at = perf_buf_rec_begin(d, REC_MMAP2, 0x2);   /* PERF_RECORD_MISC_USER */
				perf_buf_u32(d, (uint32_t)im->pid);
				perf_buf_u32(d, (uint32_t)im->pid);
				perf_buf_u64(d, im->addr);
				perf_buf_u64(d, im->len);
				perf_buf_u64(d, im->mmap_pgoff);
				perf_buf_u32(d, 0);               /* maj, min, ino, ino_generation */
				perf_buf_u32(d, 0);
				perf_buf_u64(d, 0);
				perf_buf_u64(d, 0);
				perf_buf_u32(d, 5);               /* PROT_READ | PROT_EXEC */
				perf_buf_u32(d, 2);               /* MAP_PRIVATE */
				perf_buf_str8(d, im->mmap_path);
				put_sample_id(d, im->pid, im->pid, in->start_ns, 0);
				perf_buf_rec_end(d, at);
			}
		}

	/* each switch as the kernel reports it: OUT of prev, IN of next.  The
	 * generator times a switch at the trace's TIP.PGD (out) or TIP.PGE
	 * (in); the kernel writes its records in between, after the task left
	 * user space and before the next one enters it, so they go
	 * switch_slack_ns into the idle gap (never outside the data). */
	for (i = 0; i < in->nsw; i++) {
		const struct sptd_p2p_switch *s = &in->sw[i];
		int ppid = s->prev ? sptd_p2p_input_pid(in, s->prev) : 0;
		int npid = s->next ? sptd_p2p_input_pid(in, s->next) : 0;
		int64_t ts = s->ts;

		if (s->next == 0 && s->prev != 0)
			ts = ts + in->switch_slack_ns < in->end_ns ? ts + in->switch_slack_ns : in->end_ns;
		else if (s->prev == 0 && s->next != 0)
			ts = ts - in->switch_slack_ns > in->start_ns ? ts - in->switch_slack_ns :
			     in->start_ns;

		at = perf_buf_rec_begin(d, REC_SWITCH_CPU_WIDE, MISC_SWITCH_OUT);
		perf_buf_u32(d, (uint32_t)npid);
		perf_buf_u32(d, (uint32_t)s->next);
		put_sample_id(d, ppid, s->prev, ts, s->cpu);
		perf_buf_rec_end(d, at);
		at = perf_buf_rec_begin(d, REC_SWITCH_CPU_WIDE, 0);
		perf_buf_u32(d, (uint32_t)ppid);
		perf_buf_u32(d, (uint32_t)s->prev);
		put_sample_id(d, npid, s->next, ts, s->cpu);
		perf_buf_rec_end(d, at);
	}
	perf_buf_rec_end(d, perf_buf_rec_begin(d, REC_FINISHED_ROUND, 0));
}

static int read_pt(const struct sptd_p2p_input *in, uint8_t **pt, size_t *len, char *err,
                   size_t errlen)
{
	for (int cpu = 0; cpu < in->cpus; cpu++) {
		char path[PATH_MAX + 32];
		FILE *f;
		long n;

		snprintf(path, sizeof(path), "%s/cpu%d.pt", in->dir, cpu);
		f = fopen(path, "rb");
		if (!f) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -ENOENT;
		}
		if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
		    !(pt[cpu] = malloc((size_t)n + 1)) ||
		    fread(pt[cpu], 1, (size_t)n, f) != (size_t)n) {
			fclose(f);
			snprintf(err, errlen, "%s: cannot read", path);
			return -EIO;
		}
		fclose(f);
		len[cpu] = (size_t)n;
	}
	return 0;
}

int sptd_p2p_perf_write(const struct sptd_p2p_input *in, const char *path, char *err,
                        size_t errlen)
{
	static const int feats[] = { FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH,
	                             FEAT_NRCPUS, FEAT_CPUDESC, FEAT_CPUID, FEAT_CMDLINE };
	const size_t nfeat = sizeof(feats) / sizeof(feats[0]);
	struct perf_buf f = { 0 }, data = { 0 }, body = { 0 };
	uint8_t *pt[64] = { 0 };
	size_t ptlen[64] = { 0 }, i, feat_start[8], feat_len[8];
	uint64_t attrs_off = 104, ids_off = attrs_off + 2 * FILE_ATTR_SIZE;
	uint64_t ids_size = 8 * (uint64_t)in->cpus, data_off, table_off, bodies_off;
	char cpuid[64], cmdline[PATH_MAX + 32];
	int ret;

	if (!in || !path || !err || !errlen || in->cpus <= 0 || in->cpus > 64)
		return -EINVAL;
	ret = read_pt(in, pt, ptlen, err, errlen);
	if (ret < 0)
		goto out;
	put_records(in, &data, pt, ptlen);

	/* feature bodies */
	snprintf(cpuid, sizeof(cpuid), "GenuineIntel,%d,%d,%d", in->family, in->model, in->stepping);
	snprintf(cmdline, sizeof(cmdline), "%.4000s", in->dir);
	for (i = 0; i < nfeat; i++) {
		feat_start[i] = body.len;
		switch (feats[i]) {
		case FEAT_HOSTNAME: perf_buf_hstr(&body, "sptd-ptgen"); break;
		case FEAT_OSRELEASE: perf_buf_hstr(&body, "6.1.0-ptgen"); break;
		case FEAT_VERSION: perf_buf_hstr(&body, "6.1.0"); break;
		case FEAT_ARCH: perf_buf_hstr(&body, "x86_64"); break;
		case FEAT_NRCPUS:
			perf_buf_u32(&body, (uint32_t)in->cpus);   /* available */
			perf_buf_u32(&body, (uint32_t)in->cpus);   /* online */
			break;
		case FEAT_CPUDESC:
			perf_buf_hstr(&body, "Intel(R) Core(TM) i7-6700K (emulated by sptd-ptgen)");
			break;
		case FEAT_CPUID: perf_buf_hstr(&body, cpuid); break;
		case FEAT_CMDLINE:
			perf_buf_u32(&body, 5);
			perf_buf_hstr(&body, "perf");
			perf_buf_hstr(&body, "record");
			perf_buf_hstr(&body, "-e");
			perf_buf_hstr(&body, "intel_pt//u");
			perf_buf_hstr(&body, "--switch-events");
			break;
		}
		feat_len[i] = body.len - feat_start[i];
	}

	/* the file: header, attrs, ids, data, feature table, bodies */
	data_off = ids_off + 2 * ids_size;
	table_off = data_off + data.len;
	bodies_off = table_off + 16 * nfeat;
	perf_buf_file_header(&f, FILE_ATTR_SIZE, 2, data_off, data.len, feats, nfeat);
	perf_buf_attr(&f, PMU_TYPE_INTEL_PT, sptd_p2p_pt_config(in), 1, SAMPLE_TYPE,
	              AF_DISABLED | AF_EXCLUDE_KERNEL | AF_EXCLUDE_HV | AF_SAMPLE_ID_ALL, ids_off,
	              ids_size);
	perf_buf_attr(&f, 1 /* PERF_TYPE_SOFTWARE */, 9 /* PERF_COUNT_SW_DUMMY */, 1, SAMPLE_TYPE,
	              AF_EXCLUDE_KERNEL | AF_EXCLUDE_HV | AF_MMAP | AF_COMM | AF_SAMPLE_ID_ALL | AF_MMAP2 |
	              AF_COMM_EXEC | AF_CONTEXT_SWITCH, ids_off + ids_size, ids_size);
	for (int cpu = 0; cpu < in->cpus; cpu++)
		perf_buf_u64(&f, ID_PT(cpu));
	for (int cpu = 0; cpu < in->cpus; cpu++)
		perf_buf_u64(&f, ID_DUMMY(cpu));
	perf_buf_put(&f, data.p, data.len);
	for (i = 0; i < nfeat; i++) {
		perf_buf_u64(&f, bodies_off + feat_start[i]);
		perf_buf_u64(&f, feat_len[i]);
	}
	perf_buf_put(&f, body.p, body.len);
	ret = data.oom || body.oom ? -ENOMEM : perf_buf_write_file(&f, path);
	if (ret < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
out:
	for (i = 0; i < 64; i++)
		free(pt[i]);
	free(f.p);
	free(data.p);
	free(body.p);
	return ret;
}
