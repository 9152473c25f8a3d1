/* perfout.c — the perf.data (tools/perf/Documentation/perf.data-file-
 * format.txt) that `perf record -e arm_spe_0/ts_enable=1,pa_enable=1/u --
 * PROGRAM` writes on an arm64 machine, for the generator's samples:
 *
 *   header | 2 attrs (arm_spe, dummy tracking event) | ids | data:
 *   TIME_CONV, AUXTRACE_INFO (type ARM_SPE), COMM, MMAP2 per mapping,
 *   one AUXTRACE + its SPE bytes for CPU 0, FINISHED_ROUND |
 *   feature table | features (arch aarch64, cpuid = a Neoverse N1 MIDR)
 *
 * Time: the SPE timestamp counts the generic timer, converted by
 * TIME_CONV's mult/shift; here mult 1, shift 0, zero 0: timestamp = ns.
 * Both events sample IP|TID|TIME|CPU|IDENTIFIER (+PHYS_ADDR for SPE, so
 * perf's synthesized memory samples carry it) with sample_id_all. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spegen.h"

#define PMU_TYPE_ARM_SPE 8          /* the dynamic PMU type arm_spe_0 gets on most machines */
#define AUXTRACE_ARM_SPE 4          /* perf's enum auxtrace_type */
#define ATTR_SIZE 112
#define FILE_ATTR_SIZE (ATTR_SIZE + 16)
#define SAMPLE_TYPE 0x10087ull      /* IP|TID|TIME|CPU|IDENTIFIER */
#define SAMPLE_PHYS_ADDR (1ull << 19)
#define ID_SPE 1
#define ID_DUMMY 2
#define SPE_CFG_TS (1ull << 0)      /* arm_spe format: ts_enable config:0 */
#define SPE_CFG_PA (1ull << 1)      /* pa_enable config:1 */
#define SPE_CFG_LOAD (1ull << 33)   /* load_filter config:33 */
#define SPE_CFG_STORE (1ull << 34)  /* store_filter config:34 */

#define AF_DISABLED (1ull << 0)
#define AF_EXCLUDE_KERNEL (1ull << 5)
#define AF_EXCLUDE_HV (1ull << 6)
#define AF_MMAP (1ull << 8)
#define AF_COMM (1ull << 9)
#define AF_SAMPLE_ID_ALL (1ull << 18)
#define AF_MMAP2 (1ull << 23)
#define AF_COMM_EXEC (1ull << 24)

enum { REC_COMM = 3, REC_MMAP2 = 10, REC_FINISHED_ROUND = 68, REC_AUXTRACE_INFO = 70,
       REC_AUXTRACE = 71, REC_TIME_CONV = 79 };
enum { FEAT_HOSTNAME = 3, FEAT_OSRELEASE = 4, FEAT_VERSION = 5, FEAT_ARCH = 6,
       FEAT_NRCPUS = 7, FEAT_CPUDESC = 8, FEAT_CPUID = 9, FEAT_CMDLINE = 11 };

struct buf {
	uint8_t *p;
	size_t len, cap;
	int oom;
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

static void put(struct buf *b, const void *v, size_t n)
{
	uint8_t *p = take(b, n);

	if (p)
		memcpy(p, v, n);
}

static void u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static size_t rec_begin(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->len;

	u32(b, type);
	put(b, &misc, 2);
	take(b, 2);
	return at;
}

static void rec_end(struct buf *b, size_t at)
{
	uint16_t size = (uint16_t)(b->len - at);

	if (!b->oom)
		memcpy(b->p + at + 6, &size, 2);
}

static void str8(struct buf *b, const char *s)
{
	size_t n = strlen(s) + 1;

	put(b, s, n);
	take(b, (8 - n % 8) % 8);
}

static void sample_id(struct buf *b, int pid, int tid, uint64_t ts)
{
	u32(b, (uint32_t)pid);
	u32(b, (uint32_t)tid);
	u64(b, ts);
	u64(b, 0);               /* cpu 0, reserved */
	u64(b, ID_DUMMY);
}

static void hstr(struct buf *b, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + 63) / 64 * 64;

	u32(b, (uint32_t)padded);
	put(b, s, n);
	take(b, padded - n);
}

static void attr(struct buf *b, uint32_t type, uint64_t config, uint64_t period,
                 uint64_t sample_type, uint64_t flags, uint64_t ids_off)
{
	uint8_t *a = take(b, FILE_ATTR_SIZE);
	uint32_t size = ATTR_SIZE;

	if (!a)
		return;
	memcpy(a, &type, 4);
	memcpy(a + 4, &size, 4);
	memcpy(a + 8, &config, 8);
	memcpy(a + 16, &period, 8);
	memcpy(a + 24, &sample_type, 8);
	memcpy(a + 40, &flags, 8);
	memcpy(a + ATTR_SIZE, &ids_off, 8);
	memcpy(a + ATTR_SIZE + 8, &(uint64_t){ 8 }, 8);
}

static void records(const struct spegen_run *run, struct buf *d)
{
	uint64_t t0 = run->t_start ? run->t_start - 1 : 0;
	size_t at, padded = (run->aux_len + 7) & ~(size_t)7;

	at = rec_begin(d, REC_TIME_CONV, 0);
	u64(d, 0);               /* time_shift */
	u64(d, 1);               /* time_mult */
	u64(d, 0);               /* time_zero */
	u64(d, 0);               /* time_cycles */
	u64(d, ~0ull);           /* time_mask */
	u64(d, 1);               /* cap_user_time_zero 1, cap_user_time_short 0 */
	rec_end(d, at);

	at = rec_begin(d, REC_AUXTRACE_INFO, 0);
	u32(d, AUXTRACE_ARM_SPE);
	u32(d, 0);
	u64(d, PMU_TYPE_ARM_SPE); /* priv[ARM_SPE_PMU_TYPE] */
	u64(d, 1);                /* per-CPU mmaps */
	rec_end(d, at);

	at = rec_begin(d, REC_COMM, 0);
	u32(d, (uint32_t)run->pid);
	u32(d, (uint32_t)run->tid);
	str8(d, run->comm);
	sample_id(d, run->pid, run->tid, t0);
	rec_end(d, at);
	for (size_t i = 0; i < run->nmaps; i++) {
		const struct spegen_map *m = &run->maps[i];

		at = rec_begin(d, REC_MMAP2, 0x2);   /* PERF_RECORD_MISC_USER */
		u32(d, (uint32_t)run->pid);
		u32(d, (uint32_t)run->pid);
		u64(d, m->start);
		u64(d, m->end - m->start);
		u64(d, m->pgoff);
		u64(d, 0);               /* maj, min */
		u64(d, 0);               /* ino */
		u64(d, 0);               /* ino_generation */
		u32(d, 5);               /* PROT_READ | PROT_EXEC */
		u32(d, 2);               /* MAP_PRIVATE */
		str8(d, m->path);
		sample_id(d, run->pid, run->pid, t0);
		rec_end(d, at);
	}

	at = rec_begin(d, REC_AUXTRACE, 0);
	u64(d, padded);
	u64(d, 0);                   /* offset in the AUX area */
	u64(d, 0x5be0);              /* reference */
	u32(d, 0);                   /* mmap index */
	u32(d, (uint32_t)run->tid);  /* the task-bound event's task */
	u32(d, 0);                   /* cpu */
	u32(d, 0);
	rec_end(d, at);
	put(d, run->aux, run->aux_len);
	take(d, padded - run->aux_len);
	rec_end(d, rec_begin(d, REC_FINISHED_ROUND, 0));
}

int spegen_perf_write(const struct spegen_run *run, const char *path)
{
	static const int feats[] = { FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH,
	                             FEAT_NRCPUS, FEAT_CPUDESC, FEAT_CPUID, FEAT_CMDLINE };
	enum { NFEAT = sizeof(feats) / sizeof(feats[0]) };
	struct buf f = { 0 }, data = { 0 }, body = { 0 };
	size_t fstart[NFEAT], flen[NFEAT];
	uint64_t attrs_off = 104, ids_off = attrs_off + 2 * FILE_ATTR_SIZE;
	uint64_t data_off = ids_off + 16, table_off, bodies_off;
	FILE *out;
	uint8_t *h;
	int ret = 0;

	records(run, &data);
	for (size_t i = 0; i < NFEAT; i++) {
		fstart[i] = body.len;
		switch (feats[i]) {
		case FEAT_HOSTNAME: hstr(&body, "sptd-spegen"); break;
		case FEAT_OSRELEASE: hstr(&body, "6.1.0-spegen"); break;
		case FEAT_VERSION: hstr(&body, "6.1.0"); break;
		case FEAT_ARCH: hstr(&body, "aarch64"); break;
		case FEAT_NRCPUS: u32(&body, 1); u32(&body, 1); break;
		case FEAT_CPUDESC: hstr(&body, "Neoverse-N1 (emulated by sptd-spegen)"); break;
		case FEAT_CPUID: hstr(&body, "0x00000000410fd0c0"); break;
		case FEAT_CMDLINE:
			u32(&body, 4);
			hstr(&body, "perf");
			hstr(&body, "record");
			hstr(&body, "-e");
			hstr(&body, "arm_spe_0/ts_enable=1,pa_enable=1,load_filter=1,store_filter=1/u");
			break;
		}
		flen[i] = body.len - fstart[i];
	}
	table_off = data_off + data.len;
	bodies_off = table_off + 16 * NFEAT;
	h = take(&f, 104);
	if (h) {
		memcpy(h, "PERFILE2", 8);
		memcpy(h + 8, &(uint64_t){ 104 }, 8);
		memcpy(h + 16, &(uint64_t){ FILE_ATTR_SIZE }, 8);
		memcpy(h + 24, &attrs_off, 8);
		memcpy(h + 32, &(uint64_t){ 2 * FILE_ATTR_SIZE }, 8);
		memcpy(h + 40, &data_off, 8);
		memcpy(h + 48, &(uint64_t){ data.len }, 8);
		for (size_t i = 0; i < NFEAT; i++)
			h[72 + feats[i] / 8] |= (uint8_t)(1u << (feats[i] % 8));
	}
	attr(&f, PMU_TYPE_ARM_SPE, SPE_CFG_TS | SPE_CFG_PA | SPE_CFG_LOAD | SPE_CFG_STORE,
	     run->period, SAMPLE_TYPE | SAMPLE_PHYS_ADDR,
	     AF_DISABLED | AF_EXCLUDE_KERNEL | AF_EXCLUDE_HV | AF_SAMPLE_ID_ALL, ids_off);
	attr(&f, 1 /* PERF_TYPE_SOFTWARE */, 9 /* PERF_COUNT_SW_DUMMY */, 1, SAMPLE_TYPE,
	     AF_EXCLUDE_KERNEL | AF_EXCLUDE_HV | AF_MMAP | AF_COMM | AF_SAMPLE_ID_ALL | AF_MMAP2 |
	     AF_COMM_EXEC, ids_off + 8);
	u64(&f, ID_SPE);
	u64(&f, ID_DUMMY);
	put(&f, data.p, data.len);
	for (size_t i = 0; i < NFEAT; i++) {
		u64(&f, bodies_off + fstart[i]);
		u64(&f, flen[i]);
	}
	put(&f, body.p, body.len);
	if (f.oom || data.oom || body.oom) {
		ret = -ENOMEM;
		goto out;
	}
	out = fopen(path, "wb");
	if (!out) {
		ret = -errno;
		goto out;
	}
	if (fwrite(f.p, 1, f.len, out) != f.len)
		ret = -EIO;
	if (fclose(out) != 0 && ret == 0)
		ret = -EIO;
out:
	free(f.p);
	free(data.p);
	free(body.p);
	return ret;
}
