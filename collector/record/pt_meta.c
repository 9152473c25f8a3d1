/* pt_meta.c — what a decoder needs to know about the recording, written
 * into meta: the CPU (CPUID), the PMU's timing ratios, the config used, and
 * the TSC -> incident clock conversion.
 *
 * meta keys (decode/ reads pt_cpu_*, pt_mtc_freq, pt_nom_freq,
 * pt_cpuid15_*; derive_sched/derive_pt read tsc_*):
 *   pt_cpu_vendor, pt_cpu_family, pt_cpu_model, pt_cpu_stepping
 *   pt_cpuid15_eax, pt_cpuid15_ebx  TSC/crystal ratio (caps/tsc_art_ratio, else CPUID 0x15)
 *   pt_nom_freq      caps/max_nonturbo_ratio
 *   pt_mtc_freq      the mtc_period used (0: no MTC)
 *   pt_psb_period, pt_cyc_thresh, pt_noretcomp, pt_user_only
 *   pt_config, pt_config1, pt_config2 (hex), pt_config_terms, pt_type
 *   pt_aux_bytes, pt_coverage_ns
 *   tsc_mult, tsc_shift, tsc_zero, tsc_offset_ns: ns = ((tsc - zero) * mult >> shift) + offset
 *   pt_time_source   "perf" (the PT event's mmap page) or "tsc-derived" (measured)
 *   perf_clock_offset_ns  CLOCK_MONOTONIC - perf clock: sideband times + it = incident ns
 *   perf_clock_measured_ns  CLOCK_MONOTONIC when tsc_* and perf_clock_offset_ns
 *                    were measured (this incident's freeze)
 *   perf_clock_error_ns  perf_clock_offset_ns is good to +- this; -1: the
 *                    perf clock could not be read (sideband times are raw)
 *   perf_clock_via   "tsc" (a TSC read through the page's conversion) or
 *                    "comm" (a COMM record of sysptd's own, no conversion)
 *
 * SPTD_PT_CPU=FAMILY/MODEL/STEPPING in the environment replaces what CPUID
 * says (only when set; vendor then GenuineIntel): for a guest whose CPUID
 * hides the host's Intel model while PT is passed through, so the decoder
 * applies the errata of the CPU that wrote the trace (as import --cpu-id),
 * and for the tests that record a fake intel_pt PMU on a non-Intel host. */
#include <cpuid.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "pt-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

void sptd_col_pt_cpu_identify(struct sptd_col_pt_cpu *cpu)
{
	unsigned int eax, ebx, ecx, edx, max;

	memset(cpu, 0, sizeof(*cpu));
	if (!__get_cpuid(0, &max, &ebx, &ecx, &edx))
		return;
	memcpy(cpu->vendor, &ebx, 4);
	memcpy(cpu->vendor + 4, &edx, 4);
	memcpy(cpu->vendor + 8, &ecx, 4);
	cpu->vendor[12] = '\0';
	if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
		int family = (int)((eax >> 8) & 0xf), model = (int)((eax >> 4) & 0xf);

		/* extended family/model as the SDM's display rules say */
		if (family == 0xf)
			family += (int)((eax >> 20) & 0xff);
		if (family == 0x6 || family >= 0xf)
			model += (int)((eax >> 16) & 0xf) << 4;
		cpu->family = family;
		cpu->model = model;
		cpu->stepping = (int)(eax & 0xf);
	}
	if (max >= 0x15 && __get_cpuid(0x15, &eax, &ebx, &ecx, &edx)) {
		cpu->cpuid15_eax = eax;
		cpu->cpuid15_ebx = ebx;
	}
	{
		const char *env = getenv("SPTD_PT_CPU");
		int f, m, s;
		char extra;

		if (env && env[0] && (sscanf(env, "%d/%d/%d%c", &f, &m, &s, &extra) != 3 || f <= 0 ||
		                      f > 255 || m < 0 || m > 255 || s < 0 || s > 255)) {
			sptd_col_log(LOG_WARNING, "SPTD_PT_CPU='%s' ignored: want FAMILY/MODEL/STEPPING, "
			             "e.g. 6/85/4", env);
		} else if (env && env[0]) {
			snprintf(cpu->vendor, sizeof(cpu->vendor), "GenuineIntel");
			cpu->family = f;
			cpu->model = m;
			cpu->stepping = s;
		}
	}
}

int64_t sptd_col_pt_time_ns(const struct sptd_col_pt_time *t, uint64_t tsc)
{
	/* decode/'s conversion, the one the stored times go through */
	const struct sptd_dec_tsc conv = {
		.mult = t->mult, .shift = (unsigned int)t->shift, .zero = t->zero_tsc,
		.offset_ns = t->zero_ns,
	};

	return sptd_dec_tsc_ns(&conv, tsc);
}

int sptd_col_pt_meta_write(struct sptd_store *st, const struct sptd_col_pt_pmu *pmu,
                           const struct sptd_col_pt_setup *setup,
                           const struct sptd_col_pt_cpu *cpu,
                           const struct sptd_col_pt_time *time)
{
	char cfg[3][24];
	uint32_t eax = pmu->tsc_art_den, ebx = pmu->tsc_art_num;
	int ret = 0;

	if (!st || !pmu || !setup || !cpu || !time)
		return -EINVAL;
	if (!eax || !ebx) {
		eax = cpu->cpuid15_eax;
		ebx = cpu->cpuid15_ebx;
	}
	for (int i = 0; i < 3; i++)
		snprintf(cfg[i], sizeof(cfg[i]), "0x%" PRIx64, setup->config[i]);
	{
		const struct { const char *key, *value; } text[] = {
			{ "pt_cpu_vendor", cpu->vendor }, { "pt_config", cfg[0] },
			{ "pt_config1", cfg[1] }, { "pt_config2", cfg[2] },
			{ "pt_config_terms", setup->desc },
			{ "pt_time_source", time->from_perf ? "perf" : "tsc-derived" },
			{ "perf_clock_via", time->perf_clock_probe ? "comm" : "tsc" },
		};
		const struct { const char *key; int64_t value; } ints[] = {
			{ "pt_cpu_family", cpu->family }, { "pt_cpu_model", cpu->model },
			{ "pt_cpu_stepping", cpu->stepping },
			{ "pt_cpuid15_eax", eax }, { "pt_cpuid15_ebx", ebx },
			{ "pt_nom_freq", pmu->max_nonturbo_ratio },
			{ "pt_mtc_freq", setup->mtc && setup->mtc_period >= 0 ? setup->mtc_period : 0 },
			{ "pt_psb_period", setup->psb_period }, { "pt_cyc_thresh", setup->cyc ? setup->cyc_thresh : -1 },
			{ "pt_noretcomp", setup->noretcomp }, { "pt_user_only", setup->exclude_kernel },
			{ "pt_type", setup->type }, { "pt_aux_bytes", (int64_t)setup->aux_bytes },
			{ "pt_coverage_ns", setup->coverage_ns },
			{ "pt_sideband_sample_type", (int64_t)sptd_col_pt_sideband_sample_type() },
			{ "tsc_mult", time->mult }, { "tsc_shift", time->shift },
			{ "tsc_zero", (int64_t)time->zero_tsc },
			/* without the page's conversion the TSC line is on
			 * CLOCK_MONOTONIC already; the offset is the sideband's */
			{ "tsc_offset_ns", time->zero_ns + (time->from_perf ? time->mono_offset_ns : 0) },
			{ "perf_clock_offset_ns", time->mono_offset_ns },
			{ "perf_clock_measured_ns", time->measured_ns },
			{ "perf_clock_error_ns", time->offset_err_ns },
		};

		for (size_t i = 0; i < sizeof(text) / sizeof(text[0]) && ret >= 0; i++)
			ret = sptd_store_meta_set(st, text[i].key, text[i].value);
		for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]) && ret >= 0; i++)
			ret = sptd_store_meta_set_int(st, ints[i].key, ints[i].value);
	}
	return ret < 0 ? ret : 0;
}
