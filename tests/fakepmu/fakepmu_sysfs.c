/* fakepmu_sysfs.c — the fake intel_pt PMU's sysfs tree (fakepmu_sysfs*,
 * see fakepmu.h): type, format/, caps/ and the timing attributes, laid out
 * as arch/x86/events/intel/pt.c makes them.  Split out of fakepmu.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fakepmu.h"


static int put(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", text);
	fclose(f);
	return 0;
}

static int mkdirs(const char *path)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s", path);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	return mkdir(buf, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

int fakepmu_sysfs(const char *root, enum fakepmu_gen gen, int type)
{
	static const char *const std_fmt[][2] = {
		{ "pt", "config:0" }, { "cyc", "config:1" }, { "pwr_evt", "config:4" },
		{ "fup_on_ptw", "config:5" },
		{ "mtc", "config:9" }, { "tsc", "config:10" }, { "noretcomp", "config:11" },
		{ "ptw", "config:12" }, { "branch", "config:13" }, { "mtc_period", "config:14-17" },
		{ "cyc_thresh", "config:19-22" }, { "psb_period", "config:24-27" },
		{ "event", "config:31" }, { "notnt", "config:55" },
	};
	static const char *const odd_fmt[][2] = {
		{ "pt", "config:0" }, { "cyc", "config:5" }, { "mtc", "config:7" },
		{ "tsc", "config:40" }, { "noretcomp", "config1:63" }, { "branch", "config:2" },
		{ "mtc_period", "config1:3,8-10" }, { "cyc_thresh", "config2:0-3" },
		{ "psb_period", "config:50-53" },
	};
	char dev[900], fmt[1000], caps[1000], buf[32];
	int ret, n;

	n = snprintf(dev, sizeof(dev), "%s/bus/event_source/devices/intel_pt", root);
	if (n < 0 || (size_t)n >= sizeof(dev))
		return -ENAMETOOLONG;
	snprintf(fmt, sizeof(fmt), "%s/format", dev);
	snprintf(caps, sizeof(caps), "%s/caps", dev);
	if ((ret = mkdirs(fmt)) < 0 || (ret = mkdirs(caps)) < 0)
		return ret;
	snprintf(buf, sizeof(buf), "%d", type);
	put(dev, "type", buf);
	if (gen == FAKEPMU_ODD) {
		for (size_t i = 0; i < sizeof(odd_fmt) / sizeof(odd_fmt[0]); i++)
			put(fmt, odd_fmt[i][0], odd_fmt[i][1]);
	} else {
		for (size_t i = 0; i < sizeof(std_fmt) / sizeof(std_fmt[0]); i++)
			if (gen != FAKEPMU_NOTSC || strcmp(std_fmt[i][0], "tsc") != 0)
				put(fmt, std_fmt[i][0], std_fmt[i][1]);
	}
	return fakepmu_sysfs_layout(dev, gen);
}

/* The caps/ files arch/x86/events/intel/pt.c makes (pt_caps[]), in its
 * order: every one exists on every CPU with PT. */
static const char *const kernel_caps[] = {
	"max_subleaf", "cr3_filtering", "psb_cyc", "ip_filtering", "mtc", "ptwrite",
	"power_event_trace", "event_trace", "tnt_disable", "topa_output",
	"topa_multiple_entries", "single_range_output", "output_subsys", "payloads_lip",
	"num_address_ranges", "mtc_periods", "cycle_thresholds", "psb_periods",
};

static int is_kernel_cap(const char *name)
{
	for (size_t i = 0; i < sizeof(kernel_caps) / sizeof(kernel_caps[0]); i++)
		if (strcmp(kernel_caps[i], name) == 0)
			return 1;
	return 0;
}

/* caps/ and the timing attributes of @gen under @dev, laid out and printed
 * as pt.c does: pt_cap_show prints each cap "%x" (CPUID 0x14 fields);
 * pt_timing_attr_show prints max_nonturbo_ratio "%lu" and tsc_art_ratio
 * "%u:%u" in an unnamed group, i.e. at the PMU's root. */
int fakepmu_sysfs_layout(const char *dev, enum fakepmu_gen gen)
{
	const char *values[][2] = {
		{ "max_subleaf", "1" },
		{ "cr3_filtering", "1" },
		{ "psb_cyc", gen >= FAKEPMU_SKYLAKE ? "1" : "0" },
		{ "ip_filtering", gen >= FAKEPMU_SKYLAKE ? "1" : "0" },
		{ "mtc", gen >= FAKEPMU_BROADWELL ? "1" : "0" },
		{ "ptwrite", "0" },
		{ "power_event_trace", "0" },
		{ "event_trace", "0" },
		{ "tnt_disable", "0" },
		{ "topa_output", "1" },
		{ "topa_multiple_entries", gen >= FAKEPMU_BROADWELL ? "1" : "0" },
		{ "single_range_output", "0" },
		{ "output_subsys", "0" },
		{ "payloads_lip", "0" },
		{ "num_address_ranges", gen >= FAKEPMU_SKYLAKE ? "2" : "0" },
		{ "mtc_periods", gen >= FAKEPMU_BROADWELL ? "249" : "0" },
		{ "cycle_thresholds", gen >= FAKEPMU_SKYLAKE ? "3fff" : "0" },
		{ "psb_periods", gen >= FAKEPMU_SKYLAKE ? "3f" : "0" },
	};
	char caps[1100];
	int ret = 0;

	snprintf(caps, sizeof(caps), "%s/caps", dev);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]) && ret >= 0; i++)
		ret = put(caps, values[i][0], values[i][1]);
	/* MSR_PLATFORM_INFO[15:8] and CPUID 0x15 ebx:eax; 0 and 0:0 where the
	 * CPU does not say (Haswell and Broadwell have no leaf 0x15) */
	if (ret >= 0)
		ret = put(dev, "max_nonturbo_ratio", gen >= FAKEPMU_SKYLAKE ? "34" : "0");
	if (ret >= 0)
		ret = put(dev, "tsc_art_ratio", gen >= FAKEPMU_SKYLAKE ? "284:2" : "0:0");
	return ret;
}

int fakepmu_sysfs_cap(const char *root, const char *name, const char *value)
{
	char caps[1100];

	if (!root || !name || !value || strchr(name, '/'))
		return -EINVAL;
	/* only what pt.c has in caps/: max_nonturbo_ratio and tsc_art_ratio
	 * are not there (fakepmu_sysfs_timing) */
	if (!is_kernel_cap(name))
		return -ENOENT;
	snprintf(caps, sizeof(caps), "%s/bus/event_source/devices/intel_pt/caps", root);
	return put(caps, name, value);
}

int fakepmu_sysfs_timing(const char *root, const char *name, const char *value)
{
	char dev[1100];

	if (!root || !name || !value)
		return -EINVAL;
	if (strcmp(name, "max_nonturbo_ratio") != 0 && strcmp(name, "tsc_art_ratio") != 0)
		return -ENOENT;
	snprintf(dev, sizeof(dev), "%s/bus/event_source/devices/intel_pt", root);
	return put(dev, name, value);
}
