/* trigger_bp_maps.c — the executable file mappings of a process, as
 * /proc/PID/maps lists them, for the break= and watch= triggers (looking a
 * symbol up in the files a process maps, naming a hit's function, finding
 * the processes that map a file). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "trigger-bp-local.h"

int sptd_col_bp_each_exec_map(int pid, int (*fn)(void *ctx, const struct bp_map *m),
                              void *ctx)
{
	char path[64], line[1024];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		struct bp_map m;
		char perms[8];
		unsigned long long s, e, off, ino;
		unsigned maj, mnr;
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &maj, &mnr,
		           &ino, &n) < 7 || !n || perms[2] != 'x' || line[n] != '/')
			continue;
		m.start = s;
		m.end = e;
		m.pgoff = off;
		m.dev = makedev(maj, mnr);
		m.ino = (ino_t)ino;
		snprintf(m.path, sizeof(m.path), "%s", line + n);
		m.path[strcspn(m.path, "\n")] = '\0';
		ret = fn(ctx, &m);
	}
	fclose(f);
	return ret;
}
