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

#include "perf_buf.h"
#include "spegen.h"

#define PMU_TYPE_ARM_SPE 8          /* the dynamic PMU type arm_spe_0 gets on most machines */
#define AUXTRACE_ARM_SPE 4          /* perf's enum auxtrace_type */
#define FILE_ATTR_SIZE PERF_BUF_FILE_ATTR_SIZE
#define SAMPLE_TYPE 0x10087ull      /* IP|TID|TIME|CPU|IDENTIFIER */
#define SAMPLE_PHYS_ADDR (1ull << 19)
#define ID_SPE 1
#define ID_DUMMY 2
#define SPE_CFG_TS (1ull << 0)      /* arm_spe format: ts_enable config:0 */
#define SPE_CFG_PA (1ull << 1)      /* pa_enable config:1 */
#define SPE_CFG_LOAD (1ull << 33)   /* load_filter config:33 */
#define SPE_CFG_STORE (1ull << 34)  /* store_filter config:34 */

static void sample_id(struct perf_buf *b, int pid, int tid, uint64_t ts)
{
	perf_buf_u32(b, (uint32_t)pid);
	perf_buf_u32(b, (uint32_t)tid);
	perf_buf_u64(b, ts);
	perf_buf_u64(b, 0);               /* cpu 0, reserved */
	perf_buf_u64(b, ID_DUMMY);
}

static void records(const struct spegen_run *run, struct perf_buf *d)
{
	uint64_t t0 = run->t_start ? run->t_start - 1 : 0;
	size_t at, padded = (run->aux_len + 7) & ~(size_t)7;

	at = perf_buf_rec_begin(d, REC_TIME_CONV, 0);
	perf_buf_u64(d, 0);               /* time_shift */
	perf_buf_u64(d, 1);               /* time_mult */
	perf_buf_u64(d, 0);               /* time_zero */
	perf_buf_u64(d, 0);               /* time_cycles */
	perf_buf_u64(d, ~0ull);           /* time_mask */
	perf_buf_u64(d, 1);               /* cap_user_time_zero 1, cap_user_time_short 0 */
	perf_buf_rec_end(d, at);

	at = perf_buf_rec_begin(d, REC_AUXTRACE_INFO, 0);
	perf_buf_u32(d, AUXTRACE_ARM_SPE);
	perf_buf_u32(d, 0);
	perf_buf_u64(d, PMU_TYPE_ARM_SPE); /* priv[ARM_SPE_PMU_TYPE] */
	perf_buf_u64(d, 1);                /* per-CPU mmaps */
	perf_buf_rec_end(d, at);

	at = perf_buf_rec_begin(d, REC_COMM, 0);
	perf_buf_u32(d, (uint32_t)run->pid);
	perf_buf_u32(d, (uint32_t)run->tid);
	perf_buf_str8(d, run->comm);
	sample_id(d, run->pid, run->tid, t0);
	perf_buf_rec_end(d, at);
	for (size_t i = 0; i < run->nmaps; i++) {
		const struct spegen_map *m = &run->maps[i];

		at = perf_buf_rec_begin(d, REC_MMAP2, 0x2);   /* PERF_RECORD_MISC_USER */
		perf_buf_u32(d, (uint32_t)run->pid);
		perf_buf_u32(d, (uint32_t)run->pid);
		perf_buf_u64(d, m->start);
		perf_buf_u64(d, m->end - m->start);
		perf_buf_u64(d, m->pgoff);
		perf_buf_u64(d, 0);               /* maj, min */
		perf_buf_u64(d, 0);               /* ino */
		perf_buf_u64(d, 0);               /* ino_generation */
		perf_buf_u32(d, 5);               /* PROT_READ | PROT_EXEC */
		perf_buf_u32(d, 2);               /* MAP_PRIVATE */
		perf_buf_str8(d, m->path);
		sample_id(d, run->pid, run->pid, t0);
		perf_buf_rec_end(d, at);
	}

	at = perf_buf_rec_begin(d, REC_AUXTRACE, 0);
	perf_buf_u64(d, padded);
	perf_buf_u64(d, 0);                   /* offset in the AUX area */
	perf_buf_u64(d, 0x5be0);              /* reference */
	perf_buf_u32(d, 0);                   /* mmap index */
	perf_buf_u32(d, (uint32_t)run->tid);  /* the task-bound event's task */
	perf_buf_u32(d, 0);                   /* cpu */
	perf_buf_u32(d, 0);
	perf_buf_rec_end(d, at);
	perf_buf_put(d, run->aux, run->aux_len);
	perf_buf_take(d, padded - run->aux_len);
	perf_buf_rec_end(d, perf_buf_rec_begin(d, REC_FINISHED_ROUND, 0));
}

int spegen_perf_write(const struct spegen_run *run, const char *path)
{
	static const int feats[] = { FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH,
	                             FEAT_NRCPUS, FEAT_CPUDESC, FEAT_CPUID, FEAT_CMDLINE };
	enum { NFEAT = sizeof(feats) / sizeof(feats[0]) };
	struct perf_buf f = { 0 }, data = { 0 }, body = { 0 };
	size_t fstart[NFEAT], flen[NFEAT];
	uint64_t attrs_off = 104, ids_off = attrs_off + 2 * FILE_ATTR_SIZE;
	uint64_t data_off = ids_off + 16, table_off, bodies_off;
	int ret = 0;

	records(run, &data);
	for (size_t i = 0; i < NFEAT; i++) {
		fstart[i] = body.len;
		switch (feats[i]) {
		case FEAT_HOSTNAME: perf_buf_hstr(&body, "sptd-spegen"); break;
		case FEAT_OSRELEASE: perf_buf_hstr(&body, "6.1.0-spegen"); break;
		case FEAT_VERSION: perf_buf_hstr(&body, "6.1.0"); break;
		case FEAT_ARCH: perf_buf_hstr(&body, "aarch64"); break;
		case FEAT_NRCPUS: perf_buf_u32(&body, 1); perf_buf_u32(&body, 1); break;
		case FEAT_CPUDESC: perf_buf_hstr(&body, "Neoverse-N1 (emulated by sptd-spegen)"); break;
		case FEAT_CPUID: perf_buf_hstr(&body, "0x00000000410fd0c0"); break;
		case FEAT_CMDLINE:
			perf_buf_u32(&body, 4);
			perf_buf_hstr(&body, "perf");
			perf_buf_hstr(&body, "record");
			perf_buf_hstr(&body, "-e");
			perf_buf_hstr(&body, "arm_spe_0/ts_enable=1,pa_enable=1,load_filter=1,store_filter=1/u");
			break;
		}
		flen[i] = body.len - fstart[i];
	}
	table_off = data_off + data.len;
	bodies_off = table_off + 16 * NFEAT;
	perf_buf_file_header(&f, FILE_ATTR_SIZE, 2, data_off, data.len, feats, NFEAT);
	perf_buf_attr(&f, PMU_TYPE_ARM_SPE, SPE_CFG_TS | SPE_CFG_PA | SPE_CFG_LOAD | SPE_CFG_STORE,
	              run->period, SAMPLE_TYPE | SAMPLE_PHYS_ADDR,
	              AF_DISABLED | AF_EXCLUDE_KERNEL | AF_EXCLUDE_HV | AF_SAMPLE_ID_ALL, ids_off, 8);
	perf_buf_attr(&f, 1 /* PERF_TYPE_SOFTWARE */, 9 /* PERF_COUNT_SW_DUMMY */, 1, SAMPLE_TYPE,
	              AF_EXCLUDE_KERNEL | AF_EXCLUDE_HV | AF_MMAP | AF_COMM | AF_SAMPLE_ID_ALL |
	              AF_MMAP2 | AF_COMM_EXEC, ids_off + 8, 8);
	perf_buf_u64(&f, ID_SPE);
	perf_buf_u64(&f, ID_DUMMY);
	perf_buf_put(&f, data.p, data.len);
	for (size_t i = 0; i < NFEAT; i++) {
		perf_buf_u64(&f, bodies_off + fstart[i]);
		perf_buf_u64(&f, flen[i]);
	}
	perf_buf_put(&f, body.p, body.len);
	ret = data.oom || body.oom ? -ENOMEM : perf_buf_write_file(&f, path);
	free(f.p);
	free(data.p);
	free(body.p);
	return ret;
}
