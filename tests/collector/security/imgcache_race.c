/* imgcache_race.c — root's side of issue 28 item 2, run by
 * test_attacks_paths.sh while the attacker swaps a directory on PATH:
 *
 *   imgcache_race DB CACHE PID PATH N [gone]
 *
 * writes the incident DB as a PT capture would leave it for the image
 * step: N dso rows naming PATH without a build-id (a program linked
 * without one), each mapped by process PID over every range
 * /proc/PID/maps gives for a file of PATH's name, then runs that step
 * (sptd_col_pt_images_files, image cache CACHE, --portable) once, which
 * reads the file N times.  With "gone" the rows name a process that cannot
 * exist (above pid_max's ceiling, 2^22) at PID's ranges: the mapping can no
 * longer be opened, as when the process exited before the image step.
 * Prints "files N embedded E missing M".  What the bytes are is the
 * script's to check (raw_file). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt-local.h"
#include "sptd_store.h"

/* One mapping of the file. */
struct range {
	uint64_t start, end, pgoff;   /* as /proc/PID/maps gives them */
};

/* The ranges @pid maps from a file named like @path (its last component:
 * the directories above it are what the attacker swaps, so maps may name
 * either). */
static int ranges_of(int pid, const char *path, struct range *r, int max)
{
	const char *base = strrchr(path, '/');
	char maps[64], line[4096];
	int n = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		const char *name;
		int at = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &r[n].start,
		           &r[n].end, &r[n].pgoff, &at) < 3 || at == 0)
			continue;
		name = strrchr(line + at, '/');
		if (name && strcmp(name, base) == 0)
			n++;
	}
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	struct range r[16];
	struct sptd_store *st = NULL;
	int64_t embedded = -1, missing = -1;
	int pid, n, nr, ret, row_pid;

	if (argc != 6 && !(argc == 7 && strcmp(argv[6], "gone") == 0)) {
		fprintf(stderr, "usage: imgcache_race DB CACHE PID PATH N [gone]\n");
		return 2;
	}
	pid = atoi(argv[3]);
	n = atoi(argv[5]);
	nr = ranges_of(pid, argv[4], r, 16);
	if (nr <= 0) {
		fprintf(stderr, "imgcache_race: process %d maps no file named like %s\n", pid,
		        argv[4]);
		return 1;
	}
	row_pid = argc == 7 ? (1 << 22) : pid;
	ret = sptd_store_create(argv[1], &st);
	for (int i = 1; ret >= 0 && i <= n; i++) {
		ret = SPTD_STORE_ADD(st, dso, i, argv[4], NULL);
		for (int k = 0; ret >= 0 && k < nr; k++)
			ret = SPTD_STORE_ADD(st, raw_mmap, row_pid, r[k].start, r[k].end, r[k].pgoff, i,
			                     (int64_t)(r[k].start - r[k].pgoff), 0);
	}
	if (ret >= 0)
		ret = sptd_col_pt_images_files(st, argv[2], 1);
	if (ret >= 0)
		ret = sptd_store_query_int(st, "SELECT value FROM meta WHERE key = "
		                           "'pt_images_embedded'", &embedded);
	if (ret >= 0)
		ret = sptd_store_query_int(st, "SELECT value FROM meta WHERE key = "
		                           "'pt_images_missing'", &missing);
	if (ret >= 0)
		ret = sptd_store_commit(st);
	sptd_store_destroy(st);
	if (ret < 0) {
		fprintf(stderr, "imgcache_race: %s\n", strerror(-ret));
		return 1;
	}
	printf("files %d embedded %" PRId64 " missing %" PRId64 "\n", n, embedded, missing);
	return 0;
}
