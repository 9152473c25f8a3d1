/* cpus.c — CPU lists as sysfs writes them ("0-3,6"), and the online CPUs:
 * the one parser of them (the service and the sampler both use it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf-local.h"

/* Far above any kernel's NR_CPUS: a bigger number is a broken list. */
#define CPUS_LIMIT 65535

int sptd_col_cpus_parse(const char *text, int *cpus, int max)
{
	int n = 0;
	const char *p = text;

	if (!text || max < 0 || (!cpus && max > 0) || (cpus && max == 0))
		return -EINVAL;
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a > CPUS_LIMIT)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b > CPUS_LIMIT)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (cpus && n >= max)
				return -E2BIG;
			if (cpus)
				cpus[n] = (int)c;
			n++;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n;
}

int sptd_col_cpus_online(int *cpus, int max)
{
	char buf[4096];
	ssize_t len = sptd_col_sys.read_file("/sys/devices/system/cpu/online", buf, sizeof(buf));

	if (len < 0)
		return (int)len;
	return sptd_col_cpus_parse(buf, cpus, max);
}

int sptd_col_cpumask_hex(const int *cpus, int n, char *buf, size_t len)
{
	uint32_t words[(CPUS_LIMIT + 32) / 32];
	int top = 0;
	size_t off = 0;

	if (!cpus || n <= 0 || !buf || !len)
		return -EINVAL;
	memset(words, 0, sizeof(words));
	for (int i = 0; i < n; i++) {
		if (cpus[i] < 0 || cpus[i] > CPUS_LIMIT)
			return -EINVAL;
		words[cpus[i] / 32] |= 1u << (cpus[i] % 32);
		if (cpus[i] / 32 > top)
			top = cpus[i] / 32;
	}
	/* the kernel's bitmap format: 32-bit words, most significant first */
	for (int w = top; w >= 0; w--) {
		int k = snprintf(buf + off, len - off, w == top ? "%x" : ",%08x", words[w]);

		if (k < 0 || (size_t)k >= len - off)
			return -E2BIG;
		off += (size_t)k;
	}
	return 0;
}
