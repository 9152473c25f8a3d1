/* pt-local.h — internals of the Intel PT source (pt_*.c). */
#ifndef SPTD_PT_LOCAL_H
#define SPTD_PT_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_col.h"

/* The attr field Linux 6.13 added for AUX pause: a u32 right after
 * aux_sample_size, where older headers (Debian bookworm's) have
 * __reserved_3.  Bits as in the 6.13 uapi. */
#define SPTD_PT_AUX_START_PAUSED (1u << 0)  /* start AUX tracing paused */
#define SPTD_PT_AUX_PAUSE        (1u << 1)  /* on overflow, pause AUX tracing */
#define SPTD_PT_AUX_RESUME       (1u << 2)  /* on overflow, resume AUX tracing */

/* Read ROOT/bus/event_source/devices/intel_pt/@rel into @buf, first line
 * only.  -errno of the read. */
int sptd_col_pt_read_sysfs(const char *rel, char *buf, size_t len);
/* Largest AUX ring the PMU's ToPA capabilities allow per CPU. */
uint64_t sptd_col_pt_aux_max(const struct sptd_col_pt_pmu *pmu);

/* The CPU as libipt wants it described. */
struct sptd_col_pt_cpu {
	char vendor[13];          /* "GenuineIntel", "AuthenticAMD" */
	int family, model, stepping; /* display family/model, as perf reports */
	uint32_t cpuid15_eax;     /* TSC/crystal ratio denominator; 0 unknown */
	uint32_t cpuid15_ebx;     /* ... numerator */
};
/* Identify the running CPU with CPUID (leaf 0, 1, 0x15 when present). */
void sptd_col_pt_cpu_identify(struct sptd_col_pt_cpu *cpu);

/* TSC -> perf clock, from the PT event's mmap page. */
struct sptd_col_pt_time {
	int from_perf;            /* 1: cap_user_time_zero; 0: measured here */
	uint32_t mult;            /* ns = zero_ns + (tsc * mult >> shift) */
	int shift;
	uint64_t zero_tsc;        /* tsc subtracted first (0 for perf's page) */
	int64_t zero_ns;          /* perf time_zero (or ns at zero_tsc) */
	int64_t mono_offset_ns;   /* CLOCK_MONOTONIC - perf clock */
};
/* Perf-clock ns of @tsc. */
int64_t sptd_col_pt_time_ns(const struct sptd_col_pt_time *t, uint64_t tsc);

/* Write the decode configuration and the conversion into meta. */
int sptd_col_pt_meta_write(struct sptd_store *st, const struct sptd_col_pt_pmu *pmu,
                           const struct sptd_col_pt_setup *setup,
                           const struct sptd_col_pt_cpu *cpu,
                           const struct sptd_col_pt_time *time);

/* Store @buf as raw_sideband row (@cpu, @seq), parse it and write raw_switch rows
 * (SWITCH_CPU_WIDE switch-in records) and raw_task rows (COMM records),
 * times shifted by @offset_ns onto the incident clock.  Returns the number
 * of records. */
int sptd_col_pt_sideband_store(struct sptd_store *st, int cpu, int seq, const void *buf,
                               size_t len, uint64_t sample_type, int64_t offset_ns);
/* Set the AUX pause bits (SPTD_PT_AUX_*) of @attr: the u32 after
 * aux_sample_size (aux_action in 6.13 headers). */
struct perf_event_attr;
void sptd_col_pt_attr_set_aux_action(struct perf_event_attr *attr, uint32_t bits);
/* 1 when the kernel takes an intel_pt event with aux_start_paused (AUX
 * pause, Linux 6.13+), 0 when it refuses it, -errno when PT cannot be opened
 * at all (EACCES...). */
int sptd_col_pt_aux_pause_probe(const struct sptd_col_pt_pmu *pmu, int cpu);

/* As sptd_col_pt_mmaps_exited() over the records in @buf (raw_sideband
 * bytes written with @sample_type).  Returns the raw_mmap rows added. */
int sptd_col_pt_mmaps_from_records(struct sptd_store *st, const void *buf, size_t len,
                                   uint64_t sample_type, const int *pids, int npids);

#endif
