/* units.c — durations ("10ms") and sizes ("64M") as users type them.
 *
 * Table-driven tests in tests/collector/test_parse.c cover every accepted form and the
 * rejections. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_col_base.h"

struct unit {
	const char *suffix;  /* as typed */
	int64_t scale;       /* multiplier to the base unit */
};

/* Parse "<number><suffix>" where number may have a fraction; the suffix must
 * be one of @units ("" allowed when listed). */
static int parse_scaled(const char *text, const struct unit *units, int64_t *out)
{
	const char *p = text;
	uint64_t whole = 0, frac = 0, frac_div = 1;
	int digits = 0;

	if (!text || !out)
		return -EINVAL;
	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p) && *p != '.')
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++, digits++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		for (; isdigit((unsigned char)*p); p++, digits++) {
			if (frac_div >= 1000000000000ULL)
				continue; /* beyond ps precision: ignore */
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_div *= 10;
		}
	}
	if (!digits)
		return -EINVAL;
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcmp(p, u->suffix) != 0)
			continue;
		if (whole > (uint64_t)INT64_MAX / (uint64_t)u->scale)
			return -EINVAL;
		*out = (int64_t)(whole * (uint64_t)u->scale +
		                 frac * (uint64_t)u->scale / frac_div);
		return 0;
	}
	return -EINVAL;
}

/* A duration always has its unit: a bare "10" is refused (it used to mean
 * 10 ns, and `--window 10` recorded nothing).  Only zero, the same in every
 * unit, may go without one. */
int sptd_col_parse_duration(const char *text, int64_t *ns)
{
	static const struct unit units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 }, { NULL, 0 },
	};
	static const struct unit bare[] = { { "", 1 }, { NULL, 0 } };
	int64_t v;

	if (parse_scaled(text, bare, &v) == 0) {
		if (v != 0)
			return -EINVAL;
		if (ns)
			*ns = 0;
		return ns ? 0 : -EINVAL;
	}
	return parse_scaled(text, units, ns);
}

int sptd_col_parse_size(const char *text, uint64_t *bytes)
{
	static const struct unit units[] = {
		{ "", 1 }, { "K", 1 << 10 }, { "KiB", 1 << 10 }, { "k", 1 << 10 },
		{ "M", 1 << 20 }, { "MiB", 1 << 20 }, { "G", 1 << 30 },
		{ "GiB", 1 << 30 }, { NULL, 0 },
	};
	int64_t v;
	int ret = parse_scaled(text, units, &v);

	if (ret < 0 || !bytes)
		return ret < 0 ? ret : -EINVAL;
	*bytes = (uint64_t)v;
	return 0;
}

int sptd_col_parse_call_graph(const char *text, uint32_t *stack_user)
{
	uint64_t bytes = SPTD_CALL_GRAPH_STACK_DEFAULT;

	if (!text || !stack_user)
		return -EINVAL;
	if (strcmp(text, "fp") == 0) {
		*stack_user = 0;
		return 0;
	}
	if (strncmp(text, "dwarf", 5) != 0 || (text[5] != '\0' && text[5] != ','))
		return -EINVAL;
	if (text[5] == ',' && sptd_col_parse_size(text + 6, &bytes) < 0)
		return -EINVAL;
	if (bytes < 8 || bytes > SPTD_CALL_GRAPH_STACK_MAX || bytes % 8)
		return -EINVAL;
	*stack_user = (uint32_t)bytes;
	return 0;
}

int sptd_col_parse_int(const char *text, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (!text || !out)
		return -EINVAL;
	errno = 0;
	v = strtoll(text, &end, 0);
	if (errno || end == text || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}
