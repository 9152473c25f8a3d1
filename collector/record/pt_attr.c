/* pt_attr.c — the intel_pt PMU as sysfs describes it, and the event config
 * sysptd builds from it.
 *
 * Nothing here hard-codes a bit position: every config term is looked up in
 * ROOT/bus/event_source/devices/intel_pt/format/NAME ("config:14-17") and
 * every optional feature is checked in caps/ (perf-intel-pt.txt describes
 * both).  The layout is the kernel's (arch/x86/events/intel/pt.c): every
 * caps/ file is printed "%x" (pt_cap_show), booleans and bitmaps alike
 * (mtc_periods, cycle_thresholds, psb_periods); max_nonturbo_ratio ("%lu")
 * and tsc_art_ratio ("%u:%u") are an unnamed attribute group, so they sit
 * at the PMU's root, not in caps/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan-local.h"
#include "pt-local.h"

#define PT_DEVICE "bus/event_source/devices/intel_pt"

static char sysfs_root[512];   /* "" until first use */

void sptd_col_pt_set_sysfs_root(const char *root)
{
	if (!root) {
		const char *env = getenv("SPTD_SYSFS_ROOT");

		root = env && env[0] ? env : "/sys";
	}
	snprintf(sysfs_root, sizeof(sysfs_root), "%s", root);
}

const char *sptd_col_pt_sysfs_root(void)
{
	if (!sysfs_root[0])
		sptd_col_pt_set_sysfs_root(NULL);
	return sysfs_root;
}

int sptd_col_pt_available(void)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/" PT_DEVICE, sptd_col_pt_sysfs_root());
	return access(path, F_OK) == 0;
}

int sptd_col_pt_read_sysfs(const char *rel, char *buf, size_t len)
{
	char path[700];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/" PT_DEVICE "/%s", sptd_col_pt_sysfs_root(), rel);
	n = sptd_col_sys.read_file(path, buf, len);
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int sptd_col_pt_term_parse(const char *text, struct sptd_col_pt_term *term)
{
	const char *p;
	char *end;

	if (!text || !term)
		return -EINVAL;
	memset(term, 0, sizeof(*term));
	if (strncmp(text, "config", 6) != 0)
		return -EBADMSG;
	p = text + 6;
	if (*p == ':')
		term->word = 0;
	else if ((*p == '1' || *p == '2') && p[1] == ':')
		term->word = *p++ - '0';
	else
		return -EBADMSG;
	p++;
	for (;;) {
		long lo, hi;

		if (term->nranges == SPTD_PT_TERM_RANGES || *p < '0' || *p > '9')
			return -EBADMSG;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -EBADMSG;
			hi = strtol(p, &end, 10);
		}
		if (lo < 0 || hi > 63 || hi < lo)
			return -EBADMSG;
		term->lo[term->nranges] = (int)lo;
		term->hi[term->nranges] = (int)hi;
		term->nranges++;
		p = end;
		if (*p == ',') {
			p++;
			continue;
		}
		break;
	}
	while (*p == ' ' || *p == '\n')
		p++;
	if (*p)
		return -EBADMSG;
	term->present = 1;
	return 0;
}

int sptd_col_pt_term_set(const struct sptd_col_pt_term *term, uint64_t value,
                         uint64_t config[3])
{
	uint64_t rest = value;
	uint64_t word;

	if (!term || !config || !term->present || term->word < 0 || term->word > 2)
		return -EINVAL;
	word = config[term->word];
	for (int i = 0; i < term->nranges; i++) {
		int width = term->hi[i] - term->lo[i] + 1;
		uint64_t mask = width == 64 ? ~0ull : ((1ull << width) - 1);

		word &= ~(mask << term->lo[i]);
		word |= (rest & mask) << term->lo[i];
		rest = width == 64 ? 0 : rest >> width;
	}
	if (rest)
		return -EINVAL;
	config[term->word] = word;
	return 0;
}

/* A caps/ value, hex as pt_cap_show prints every one; 0 when absent or
 * not a number (the feature is then not used). */
static uint32_t read_cap(const char *name)
{
	char rel[128], buf[64], *end;
	unsigned long v;

	snprintf(rel, sizeof(rel), "caps/%s", name);
	if (sptd_col_pt_read_sysfs(rel, buf, sizeof(buf)) < 0 || !buf[0])
		return 0;
	v = strtoul(buf, &end, 16);
	return *end || v > 0xffffffffu ? 0 : (uint32_t)v;
}

/* The timing attributes at the PMU's root (pt_timing_attr_show):
 * max_nonturbo_ratio in decimal, tsc_art_ratio "num:den"; left 0 when
 * absent or malformed. */
static void read_timing(struct sptd_col_pt_pmu *pmu)
{
	char buf[64], *end;
	unsigned long v;
	unsigned int num, den;
	char extra;

	if (sptd_col_pt_read_sysfs("max_nonturbo_ratio", buf, sizeof(buf)) == 0 && buf[0]) {
		v = strtoul(buf, &end, 10);
		if (!*end && v <= 255)
			pmu->max_nonturbo_ratio = (uint32_t)v;
	}
	if (sptd_col_pt_read_sysfs("tsc_art_ratio", buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "%u:%u%c", &num, &den, &extra) == 2) {
		pmu->tsc_art_num = num;
		pmu->tsc_art_den = den;
	}
}

static int read_term(const char *name, struct sptd_col_pt_term *term, char *err, size_t errlen)
{
	char rel[128], buf[128];

	memset(term, 0, sizeof(*term));
	snprintf(rel, sizeof(rel), "format/%s", name);
	if (sptd_col_pt_read_sysfs(rel, buf, sizeof(buf)) < 0)
		return 0;   /* absent: the term cannot be used */
	if (sptd_col_pt_term_parse(buf, term) < 0) {
		snprintf(err, errlen, "intel_pt format/%s does not parse: '%s'", name, buf);
		return -EBADMSG;
	}
	return 0;
}

int sptd_col_pt_pmu_read(struct sptd_col_pt_pmu *pmu, char *err, size_t errlen)
{
	static const struct { const char *name; size_t off; } terms[] = {
		{ "pt", offsetof(struct sptd_col_pt_pmu, pt) },
		{ "tsc", offsetof(struct sptd_col_pt_pmu, tsc) },
		{ "mtc", offsetof(struct sptd_col_pt_pmu, mtc) },
		{ "mtc_period", offsetof(struct sptd_col_pt_pmu, mtc_period) },
		{ "cyc", offsetof(struct sptd_col_pt_pmu, cyc) },
		{ "cyc_thresh", offsetof(struct sptd_col_pt_pmu, cyc_thresh) },
		{ "psb_period", offsetof(struct sptd_col_pt_pmu, psb_period) },
		{ "noretcomp", offsetof(struct sptd_col_pt_pmu, noretcomp) },
		{ "branch", offsetof(struct sptd_col_pt_pmu, branch) },
		{ "pwr_evt", offsetof(struct sptd_col_pt_pmu, pwr_evt) },
		{ "ptw", offsetof(struct sptd_col_pt_pmu, ptw) },
		{ "fup_on_ptw", offsetof(struct sptd_col_pt_pmu, fup_on_ptw) },
	};
	char buf[64], scratch[8];
	char *end;
	unsigned long type;
	int ret;

	if (!pmu)
		return -EINVAL;
	if (!err) {
		err = scratch;
		errlen = sizeof(scratch);
	}
	memset(pmu, 0, sizeof(*pmu));
	if (!sptd_col_pt_available()) {
		snprintf(err, errlen, "no intel_pt PMU (%s/" PT_DEVICE "): this CPU or VM has "
		         "no Intel PT", sptd_col_pt_sysfs_root());
		return -ENODEV;
	}
	if (sptd_col_pt_read_sysfs("type", buf, sizeof(buf)) < 0) {
		snprintf(err, errlen, "cannot read intel_pt/type under %s", sptd_col_pt_sysfs_root());
		return -ENODEV;
	}
	type = strtoul(buf, &end, 10);
	if (end == buf || *end || type > 0xffffffffu) {
		snprintf(err, errlen, "intel_pt/type is not a number: '%s'", buf);
		return -EBADMSG;
	}
	pmu->type = (uint32_t)type;
	for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
		ret = read_term(terms[i].name,
		                (struct sptd_col_pt_term *)((char *)pmu + terms[i].off), err, errlen);
		if (ret < 0)
			return ret;
	}
	pmu->cap_psb_cyc = read_cap("psb_cyc") != 0;
	pmu->cap_mtc = read_cap("mtc") != 0;
	pmu->mtc_periods = read_cap("mtc_periods");
	pmu->cyc_thresholds = read_cap("cycle_thresholds");
	pmu->psb_periods = read_cap("psb_periods");
	pmu->topa_output = read_cap("topa_output") != 0;
	pmu->topa_multiple = read_cap("topa_multiple_entries") != 0;
	pmu->single_range = read_cap("single_range_output") != 0;
	pmu->ip_filtering = read_cap("ip_filtering") != 0;
	pmu->ptwrite = read_cap("ptwrite") != 0;
	pmu->power_event_trace = read_cap("power_event_trace") != 0;
	read_timing(pmu);
	return 0;
}

int sptd_col_pt_timing_parse(const char *text, enum sptd_col_pt_timing *out)
{
	if (!text || !out)
		return -EINVAL;
	if (strcmp(text, "low") == 0)
		*out = SPTD_PT_TIMING_LOW;
	else if (strcmp(text, "normal") == 0)
		*out = SPTD_PT_TIMING_NORMAL;
	else if (strcmp(text, "high") == 0)
		*out = SPTD_PT_TIMING_HIGH;
	else
		return -EINVAL;
	return 0;
}

/* The allowed value in @bitmap nearest to @want, preferring smaller (more
 * frequent packets) on a tie; -1 when the bitmap is empty. */
static int pick_allowed(uint32_t bitmap, int want)
{
	int best = -1;

	for (int v = 0; v < 32; v++) {
		if (!(bitmap & (1u << v)))
			continue;
		if (best < 0 || abs(v - want) < abs(best - want))
			best = v;
	}
	return best;
}

/* Add "name" (value < 0) or "name=value" to the comma list @desc. */
static void append(char *desc, size_t len, const char *name, int value)
{
	size_t used = strlen(desc);

	if (value < 0)
		snprintf(desc + used, len - used, "%s%s", used ? "," : "", name);
	else
		snprintf(desc + used, len - used, "%s%s=%d", used ? "," : "", name, value);
}

int sptd_col_pt_setup_build(const struct sptd_col_pt_pmu *pmu,
                            const struct sptd_col_pt_request *req,
                            struct sptd_col_pt_setup *out, char *err, size_t errlen)
{
	struct sptd_col_plan_aux aux;
	uint64_t *cfg;
	char scratch[8];
	int ret = 0, v;

	if (!pmu || !req || !out || req->timing < SPTD_PT_TIMING_LOW ||
	    req->timing > SPTD_PT_TIMING_HIGH || req->window_ns < 0)
		return -EINVAL;
	if (!err) {
		err = scratch;
		errlen = sizeof(scratch);
	}
	memset(out, 0, sizeof(*out));
	cfg = out->config;
	out->type = pmu->type;
	out->exclude_kernel = req->user_only ? 1 : 0;
	out->mtc_period = out->cyc_thresh = out->psb_period = -1;
	if (!pmu->tsc.present) {
		snprintf(err, errlen, "intel_pt has no 'tsc' format term: PT could not be placed in time");
		return -ENOTSUP;
	}
	if (pmu->pt.present)
		ret |= sptd_col_pt_term_set(&pmu->pt, 1, cfg);
	ret |= sptd_col_pt_term_set(&pmu->tsc, 1, cfg);
	append(out->desc, sizeof(out->desc), "tsc", -1);
	if (pmu->branch.present) {
		ret |= sptd_col_pt_term_set(&pmu->branch, 1, cfg);
		out->branch = 1;
		append(out->desc, sizeof(out->desc), "branch", -1);
	}
	if (pmu->cap_mtc && pmu->mtc.present) {
		ret |= sptd_col_pt_term_set(&pmu->mtc, 1, cfg);
		out->mtc = 1;
		append(out->desc, sizeof(out->desc), "mtc", -1);
		/* MTC every 2^n crystal clocks (CTC / 2^n).  perf's default is
		 * n = 3 (tools/perf/arch/x86/util/intel-pt.c, "mtc_period=3"), and
		 * so is ours at every --timing: n = 0 would emit 8 times as many
		 * (one 2-byte MTC per ~40 ns at a 24 MHz crystal, ~50 MB/s per
		 * CPU even when idle in C0) for nothing when CYC times the gaps
		 * between them, and without CYC an MTC per ~330 ns is already
		 * finer than the switches and irqs it is lined up with. */
		v = pick_allowed(pmu->mtc_periods, 3);
		if (v >= 0 && pmu->mtc_period.present) {
			ret |= sptd_col_pt_term_set(&pmu->mtc_period, (uint64_t)v, cfg);
			out->mtc_period = v;
			append(out->desc, sizeof(out->desc), "mtc_period", v);
		}
	}
	if (req->timing >= SPTD_PT_TIMING_NORMAL && pmu->cap_psb_cyc && pmu->cyc.present) {
		ret |= sptd_col_pt_term_set(&pmu->cyc, 1, cfg);
		out->cyc = 1;
		append(out->desc, sizeof(out->desc), "cyc", -1);
		v = pick_allowed(pmu->cyc_thresholds, 1);
		if (v >= 0 && pmu->cyc_thresh.present) {
			ret |= sptd_col_pt_term_set(&pmu->cyc_thresh, (uint64_t)v, cfg);
			out->cyc_thresh = v;
			append(out->desc, sizeof(out->desc), "cyc_thresh", v);
		}
	}
	/* PSB every 2^(n+11) bytes: a snapshot can only be decoded from its
	 * first PSB, so keep them close (perf's default 3 = 16 KiB). */
	if (pmu->cap_psb_cyc && pmu->psb_period.present) {
		v = pick_allowed(pmu->psb_periods, 3);
		if (v >= 0) {
			ret |= sptd_col_pt_term_set(&pmu->psb_period, (uint64_t)v, cfg);
			out->psb_period = v;
			append(out->desc, sizeof(out->desc), "psb_period", v);
		}
	}
	if (req->timing == SPTD_PT_TIMING_HIGH && pmu->noretcomp.present) {
		ret |= sptd_col_pt_term_set(&pmu->noretcomp, 1, cfg);
		out->noretcomp = 1;
		append(out->desc, sizeof(out->desc), "noretcomp", -1);
	}
	/* --power: C-state entries and exits (PwrEvtEn; CBR comes anyway) and
	 * PTWRITE with the instruction's address (PTWEn, FUPonPTW), each only
	 * where caps/ says the CPU has it */
	if (req->power) {
		if (pmu->power_event_trace && pmu->pwr_evt.present) {
			ret |= sptd_col_pt_term_set(&pmu->pwr_evt, 1, cfg);
			out->pwr_evt = 1;
			append(out->desc, sizeof(out->desc), "pwr_evt", -1);
		} else {
			append(out->power_lacks, sizeof(out->power_lacks),
			       pmu->power_event_trace ? "C-state events (no pwr_evt format term)"
			                              : "C-state events (caps/power_event_trace is 0)", -1);
		}
		if (pmu->ptwrite && pmu->ptw.present) {
			ret |= sptd_col_pt_term_set(&pmu->ptw, 1, cfg);
			out->ptw = 1;
			append(out->desc, sizeof(out->desc), "ptw", -1);
			if (pmu->fup_on_ptw.present) {
				ret |= sptd_col_pt_term_set(&pmu->fup_on_ptw, 1, cfg);
				append(out->desc, sizeof(out->desc), "fup_on_ptw", -1);
			}
		} else {
			append(out->power_lacks, sizeof(out->power_lacks),
			       pmu->ptwrite ? "PTWRITE (no ptw format term)"
			                    : "PTWRITE (caps/ptwrite is 0)", -1);
		}
	}
	if (req->user_only)
		append(out->desc, sizeof(out->desc), "u", -1);
	if (ret) {
		snprintf(err, errlen, "an intel_pt format term is too narrow for its value");
		return -EBADMSG;
	}

	/* AUX: --buffer or sized from the window, as the capture plan does */
	ret = sptd_col_plan_aux_size(pmu, req->timing, req->user_only, req->aux_bytes,
	                             req->window_ns, &aux);
	if (ret < 0)
		return ret;
	out->rate_bytes_s = aux.rate_bytes_s;
	out->aux_bytes = aux.bytes;
	out->coverage_ns = aux.coverage_ns;
	return 0;
}
