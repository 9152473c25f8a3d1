/* replay.c — main() for a harness built without libFuzzer: run every file
 * named on the command line (a directory: every file in it) through
 * LLVMFuzzerTestOneInput once.  CTest runs it on tests/fuzz/corpus/NAME, so
 * inputs that once crashed stay fixed in every build, gcc's included; a
 * crash, a sanitizer report or a failed FUZZ_CHECK fails the test. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Run one file; 1 if it ran, 0 if it could not be read. */
static int replay_file(const char *path)
{
	size_t len = 0;
	void *buf = sptd_fuzz_read_file(path, &len);

	if (!buf) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		return 0;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 1;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of @dir, in name order.  Returns the count run, -1 on
 * an unreadable file. */
static long replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	long ran = 0;

	if (!d) {
		fprintf(stderr, "replay: cannot open %s\n", dir);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **bigger = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));

			if (!bigger)
				abort();
			names = bigger;
		}
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0)
			abort();
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		struct stat sb;

		if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
			if (!replay_file(names[i]))
				ran = -1;
			else if (ran >= 0)
				ran++;
		}
		free(names[i]);
	}
	free(names);
	return ran;
}

int main(int argc, char **argv)
{
	long total = 0;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		struct stat sb;
		long n;

		if (stat(argv[i], &sb) < 0) {
			fprintf(stderr, "replay: no such file %s\n", argv[i]);
			return 1;
		}
		n = S_ISDIR(sb.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
		if (n < 0)
			return 1;
		total += n;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no inputs found: a corpus is missing\n");
		return 1;
	}
	printf("replay: %ld inputs ran without a failure\n", total);
	return 0;
}
