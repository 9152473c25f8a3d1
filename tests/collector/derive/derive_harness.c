/* derive_harness.c — scratch directory, log and incidents of the derive
 * tests (see derive_harness.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "derive_harness.h"
#include "sptd_col_base.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "store_rows.h"

char harness_dir[256];
char harness_log[512];

static void on_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	snprintf(harness_log, sizeof(harness_log), "%s", msg);
}

int harness_init(const char *test)
{
	snprintf(harness_dir, sizeof(harness_dir), "/tmp/sptd-%s-XXXXXX", test);
	if (!mkdtemp(harness_dir)) {
		perror("mkdtemp");
		harness_dir[0] = '\0';
		return -1;
	}
	sptd_col_set_log(on_log, NULL);
	return 0;
}

void harness_fini(void)
{
	if (harness_dir[0] && rmdir(harness_dir) != 0)
		fprintf(stderr, "could not remove %s\n", harness_dir);
}

int harness_case(const char *name, struct sptd_col_tasks **tasks, struct sptd_store **st)
{
	*tasks = NULL;
	*st = NULL;
	if (sptd_col_tasks_create(tasks) < 0)
		fprintf(stderr, "harness: no task registry for %s\n", name);
	sptd_test_store_new(harness_dir, name, st);
	return *tasks && *st ? 0 : -1;
}

void harness_case_end(struct sptd_col_tasks *tasks, struct sptd_store *st)
{
	sptd_store_destroy(st);
	sptd_col_tasks_destroy(tasks);
}
