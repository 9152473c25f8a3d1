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

#define PMU_TYPE_INTEL_PT 8          /* as sysfs numbers it on most machines */
#define ATTR_SIZE 112                /* PERF_ATTR_SIZE_VER5 */
#define FILE_ATTR_SIZE (ATTR_SIZE + 16)
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

/* attr flag bits (the bitfield word at offset 40) */
#define AF_DISABLED       (1ull << 0)
#define AF_EXCLUDE_KERNEL (1ull << 5)
#define AF_EXCLUDE_HV     (1ull << 6)
#define AF_MMAP           (1ull << 8)
#define AF_COMM           (1ull << 9)
#define AF_SAMPLE_ID_ALL  (1ull << 18)
#define AF_MMAP2          (1ull << 23)
#define AF_COMM_EXEC      (1ull << 24)
#define AF_CONTEXT_SWITCH (1ull << 26)

enum { REC_COMM = 3, REC_MMAP2 = 10, REC_SWITCH_CPU_WIDE = 15, REC_FINISHED_ROUND = 68,
       REC_AUXTRACE_INFO = 70, REC_AUXTRACE = 71 };
enum { FEAT_HOSTNAME = 3, FEAT_OSRELEASE = 4, FEAT_VERSION = 5, FEAT_ARCH = 6,
       FEAT_NRCPUS = 7, FEAT_CPUDESC = 8, FEAT_CPUID = 9, FEAT_CMDLINE = 11 };
#define MISC_SWITCH_OUT 0x2000u

/* A growing byte buffer. */
struct buf {
	uint8_t *p;          /* heap */
	size_t len, cap;     /* used / allocated */
	int oom;             /* an append failed */
};

static uint8_t *take(struct buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->len + n > b->cap) {
		size_t ncap = b->cap ? b->cap : 4096;
		void *np;

		while (ncap < b->len + n)
			ncap *= 2;
		np = realloc(b->p, ncap);
		if (!np) {
			b->oom = 1;
			return NULL;
		}
		b->p = np;
		b->cap = ncap;
	}
	memset(b->p + b->len, 0, n);
	b->len += n;
	return b->p + b->len - n;
}

static void put_bytes(struct buf *b, const void *v, size_t n)
{
	uint8_t *p = take(b, n);

	if (p)
		memcpy(p, v, n);
}

static void put_u32(struct buf *b, uint32_t v) { put_bytes(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put_bytes(b, &v, 8); }

/* Record header; returns the record's offset for end_rec(). */
static size_t begin_rec(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->len;

	put_u32(b, type);
	put_bytes(b, &misc, 2);
	put_bytes(b, &(uint16_t){ 0 }, 2);
	return at;
}

static void end_rec(struct buf *b, size_t at)
{
	uint16_t size;

	if (b->oom)
		return;
	size = (uint16_t)(b->len - at);
	memcpy(b->p + at + 6, &size, 2);
}

/* A NUL-terminated string padded to 8 bytes (record file names, comms). */
static void put_str8(struct buf *b, const char *s)
{
	size_t n = strlen(s) + 1;

	put_bytes(b, s, n);
	take(b, (8 - n % 8) % 8);
}

static void put_sample_id(struct buf *b, int pid, int tid, int64_t ts, int cpu)
{
	put_u32(b, (uint32_t)pid);
	put_u32(b, (uint32_t)tid);
	put_u64(b, (uint64_t)ts);
	put_u32(b, (uint32_t)cpu);
	put_u32(b, 0);
	put_u64(b, ID_DUMMY(cpu));
}

/* perf_header_string: u32 length (padded to 64 like perf) + bytes. */
static void put_hstr(struct buf *b, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + 63) / 64 * 64;

	put_u32(b, (uint32_t)padded);
	put_bytes(b, s, n);
	take(b, padded - n);
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

static void put_attr(struct buf *b, uint32_t type, uint64_t config, uint64_t flags,
                     uint64_t ids_off, uint64_t ids_size)
{
	uint8_t *a = take(b, FILE_ATTR_SIZE);
	uint32_t size = ATTR_SIZE;
	uint64_t period = 1, st = SAMPLE_TYPE;

	if (!a)
		return;
	memcpy(a, &type, 4);
	memcpy(a + 4, &size, 4);
	memcpy(a + 8, &config, 8);
	memcpy(a + 16, &period, 8);
	memcpy(a + 24, &st, 8);
	memcpy(a + 40, &flags, 8);
	memcpy(a + ATTR_SIZE, &ids_off, 8);
	memcpy(a + ATTR_SIZE + 8, &ids_size, 8);
}

static void put_records(const struct sptd_p2p_input *in, struct buf *d, uint8_t *const *pt,
                        const size_t *ptlen)
{
	uint32_t mult, shift;
	size_t at, i, j;
	int cpu;

	/* AUXTRACE_INFO: type 1 (intel_pt) and perf's 17 private words */
	time_conv(in->tsc_hz, &mult, &shift);
	at = begin_rec(d, REC_AUXTRACE_INFO, 0);
	put_u32(d, 1);
	put_u32(d, 0);
	put_u64(d, PMU_TYPE_INTEL_PT);
	put_u64(d, shift);
	put_u64(d, mult);
	put_u64(d, 0);                   /* time_zero */
	put_u64(d, 1);                   /* cap_user_time_zero */
	put_u64(d, PT_CFG_TSC);
	put_u64(d, PT_CFG_NORETCOMP);
	put_u64(d, 3);                   /* have_sched_switch: CPU-wide switch events */
	put_u64(d, 0);                   /* snapshot mode */
	put_u64(d, 1);                   /* per-CPU mmaps */
	put_u64(d, PT_CFG_MTC);
	put_u64(d, 0xfull << PT_CFG_MTC_SHIFT);
	put_u64(d, in->cpuid15_ebx);     /* tsc_ctc_ratio_n */
	put_u64(d, in->cpuid15_eax);     /* tsc_ctc_ratio_d */
	put_u64(d, PT_CFG_CYC);
	put_u64(d, (uint64_t)in->nom_freq);  /* max non-turbo ratio */
	put_u64(d, 0);                   /* no address filter string */
	end_rec(d, at);

	/* the trace of each CPU, as one AUX buffer read (size padded to 8) */
	for (cpu = 0; cpu < in->cpus; cpu++) {
		size_t padded = (ptlen[cpu] + 7) & ~(size_t)7;

		if (!ptlen[cpu])
			continue;
		at = begin_rec(d, REC_AUXTRACE, 0);
		put_u64(d, padded);
		put_u64(d, 0);               /* offset in the AUX area */
		put_u64(d, 0x1000u + (unsigned)cpu);  /* reference */
		put_u32(d, (uint32_t)cpu);   /* mmap index */
		put_u32(d, UINT32_MAX);      /* tid: per-CPU buffer */
		put_u32(d, (uint32_t)cpu);
		put_u32(d, 0);
		end_rec(d, at);
		put_bytes(d, pt[cpu], ptlen[cpu]);
		take(d, padded - ptlen[cpu]);
	}

	/* processes: COMM then their mappings; then the other threads */
	for (j = 0; j < 2; j++)
		for (i = 0; i < in->ntasks; i++) {
			const struct sptd_p2p_task *t = &in->tasks[i];

			if ((t->pid == t->tid) != (j == 0))
				continue;
			at = begin_rec(d, REC_COMM, 0);
			put_u32(d, (uint32_t)t->pid);
			put_u32(d, (uint32_t)t->tid);
			put_str8(d, t->comm);
			put_sample_id(d, t->pid, t->tid, in->start_ns, 0);
			end_rec(d, at);
			for (size_t k = 0; j == 0 && k < in->nimages; k++) {
				const struct sptd_p2p_image *im = &in->images[k];

				if (im->pid != t->pid)
					continue;
				at = begin_rec(d, REC_MMAP2, 0x2);   /* PERF_RECORD_MISC_USER */
				put_u32(d, (uint32_t)im->pid);
				put_u32(d, (uint32_t)im->pid);
				put_u64(d, im->addr);
				put_u64(d, im->len);
				put_u64(d, im->mmap_pgoff);
				put_u32(d, 0);               /* maj, min, ino, ino_generation */
				put_u32(d, 0);
				put_u64(d, 0);
				put_u64(d, 0);
				put_u32(d, 5);               /* PROT_READ | PROT_EXEC */
				put_u32(d, 2);               /* MAP_PRIVATE */
				put_str8(d, im->mmap_path);
				put_sample_id(d, im->pid, im->pid, in->start_ns, 0);
				end_rec(d, at);
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

		at = begin_rec(d, REC_SWITCH_CPU_WIDE, MISC_SWITCH_OUT);
		put_u32(d, (uint32_t)npid);
		put_u32(d, (uint32_t)s->next);
		put_sample_id(d, ppid, s->prev, ts, s->cpu);
		end_rec(d, at);
		at = begin_rec(d, REC_SWITCH_CPU_WIDE, 0);
		put_u32(d, (uint32_t)ppid);
		put_u32(d, (uint32_t)s->prev);
		put_sample_id(d, npid, s->next, ts, s->cpu);
		end_rec(d, at);
	}
	end_rec(d, begin_rec(d, REC_FINISHED_ROUND, 0));
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
	struct buf f = { 0 }, data = { 0 }, body = { 0 };
	uint8_t *pt[64] = { 0 };
	size_t ptlen[64] = { 0 }, i, feat_start[8], feat_len[8];
	uint64_t attrs_off = 104, ids_off = attrs_off + 2 * FILE_ATTR_SIZE;
	uint64_t ids_size = 8 * (uint64_t)in->cpus, data_off, table_off, bodies_off;
	char cpuid[64], cmdline[PATH_MAX + 32];
	uint8_t *h;
	FILE *out = NULL;
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
		case FEAT_HOSTNAME: put_hstr(&body, "sptd-ptgen"); break;
		case FEAT_OSRELEASE: put_hstr(&body, "6.1.0-ptgen"); break;
		case FEAT_VERSION: put_hstr(&body, "6.1.0"); break;
		case FEAT_ARCH: put_hstr(&body, "x86_64"); break;
		case FEAT_NRCPUS:
			put_u32(&body, (uint32_t)in->cpus);   /* available */
			put_u32(&body, (uint32_t)in->cpus);   /* online */
			break;
		case FEAT_CPUDESC:
			put_hstr(&body, "Intel(R) Core(TM) i7-6700K (emulated by sptd-ptgen)");
			break;
		case FEAT_CPUID: put_hstr(&body, cpuid); break;
		case FEAT_CMDLINE:
			put_u32(&body, 5);
			put_hstr(&body, "perf");
			put_hstr(&body, "record");
			put_hstr(&body, "-e");
			put_hstr(&body, "intel_pt//u");
			put_hstr(&body, "--switch-events");
			break;
		}
		feat_len[i] = body.len - feat_start[i];
	}

	/* the file: header, attrs, ids, data, feature table, bodies */
	data_off = ids_off + 2 * ids_size;
	table_off = data_off + data.len;
	bodies_off = table_off + 16 * nfeat;
	h = take(&f, 104);
	if (h) {
		memcpy(h, "PERFILE2", 8);
		memcpy(h + 8, &(uint64_t){ 104 }, 8);
		memcpy(h + 16, &(uint64_t){ FILE_ATTR_SIZE }, 8);
		memcpy(h + 24, &attrs_off, 8);
		memcpy(h + 32, &(uint64_t){ 2 * FILE_ATTR_SIZE }, 8);
		memcpy(h + 40, &data_off, 8);
		memcpy(h + 48, &(uint64_t){ data.len }, 8);
		for (i = 0; i < nfeat; i++)
			h[72 + feats[i] / 8] |= (uint8_t)(1u << (feats[i] % 8));
	}
	put_attr(&f, PMU_TYPE_INTEL_PT, sptd_p2p_pt_config(in),
	         AF_DISABLED | AF_EXCLUDE_KERNEL | AF_EXCLUDE_HV | AF_SAMPLE_ID_ALL, ids_off, ids_size);
	put_attr(&f, 1 /* PERF_TYPE_SOFTWARE */, 9 /* PERF_COUNT_SW_DUMMY */,
	         AF_EXCLUDE_KERNEL | AF_EXCLUDE_HV | AF_MMAP | AF_COMM | AF_SAMPLE_ID_ALL | AF_MMAP2 |
	         AF_COMM_EXEC | AF_CONTEXT_SWITCH, ids_off + ids_size, ids_size);
	for (int cpu = 0; cpu < in->cpus; cpu++)
		put_u64(&f, ID_PT(cpu));
	for (int cpu = 0; cpu < in->cpus; cpu++)
		put_u64(&f, ID_DUMMY(cpu));
	put_bytes(&f, data.p, data.len);
	for (i = 0; i < nfeat; i++) {
		put_u64(&f, bodies_off + feat_start[i]);
		put_u64(&f, feat_len[i]);
	}
	put_bytes(&f, body.p, body.len);
	if (f.oom || data.oom || body.oom) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	out = fopen(path, "wb");
	if (!out) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fwrite(f.p, 1, f.len, out) != f.len)
		ret = -EIO;
	if (fclose(out) != 0 && ret == 0)
		ret = -EIO;
	if (ret < 0)
		snprintf(err, errlen, "%s: write error", path);
out:
	for (i = 0; i < 64; i++)
		free(pt[i]);
	free(f.p);
	free(data.p);
	free(body.p);
	return ret;
}
