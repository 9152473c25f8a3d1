/* nm_addr.c — see nm_addr.h. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "nm_addr.h"

uint64_t sptd_test_nm_addr(const char *path, const char *name)
{
	char cmd[PATH_MAX + 64], line[1024], type, sym[900];
	uint64_t addr, found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%" SCNx64 " %c %899s", &addr, &type, sym) == 3 &&
		    strcmp(sym, name) == 0)
			found = addr;
	pclose(p);
	return found;
}
