/* test_tasks.c — the task registry of collector/derive (tasks.c): utids in
 * first-seen order, later knowledge refining earlier, and the process and
 * thread rows it writes, compared row for row.  Every public function gets
 * its invalid-argument case. */
#include <errno.h>
#include <stdlib.h>

#include "derive_harness.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "store_rows.h"

static void test_invalid(void)
{
	struct sptd_col_tasks *t = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(sptd_col_tasks_create(NULL), -EINVAL);
	sptd_col_tasks_destroy(NULL);
	CHECK_INT(harness_case("invalid", &t, &st), 0);
	CHECK_INT(sptd_col_tasks_note(NULL, 1, 1, "x", NULL), -EINVAL);
	CHECK_INT(sptd_col_tasks_note(t, -1, 1, "x", NULL), -EINVAL);
	CHECK_INT(sptd_col_tasks_utid(NULL, 1), -EINVAL);
	CHECK_INT(sptd_col_tasks_utid(t, -1), -EINVAL);
	CHECK_INT(sptd_col_tasks_store(NULL, st), -EINVAL);
	CHECK_INT(sptd_col_tasks_store(t, NULL), -EINVAL);
	/* nothing known: nothing written */
	CHECK_INT(sptd_col_tasks_store(t, st), 0);
	CHECK_ROWS(st, "SELECT count(*) FROM process", "0\n");
	CHECK_ROWS(st, "SELECT count(*) FROM thread", "0\n");
	harness_case_end(t, st);
}

/* utids are handed out in first-seen order and never change, through
 * enough tids to grow the table several times. */
static void test_utids(void)
{
	enum { N = 5000 };
	struct sptd_col_tasks *t = NULL;
	int bad = 0;

	CHECK_INT(sptd_col_tasks_create(&t), 0);
	if (!t)
		return;
	CHECK_INT(sptd_col_tasks_utid(t, 500), 0);
	CHECK_INT(sptd_col_tasks_utid(t, 0), 1);
	CHECK_INT(sptd_col_tasks_utid(t, 500), 0);
	CHECK_INT(sptd_col_tasks_note(t, 7, 7, "seven", NULL), 0);
	CHECK_INT(sptd_col_tasks_utid(t, 7), 2);
	/* tids that collide in a small table: multiples of a power of two */
	for (int i = 0; i < N; i++)
		if (sptd_col_tasks_utid(t, 1000 + i * 1024) != 3 + i)
			bad++;
	for (int i = N - 1; i >= 0; i--)
		if (sptd_col_tasks_utid(t, 1000 + i * 1024) != 3 + i)
			bad++;
	CHECK_INT(bad, 0);
	CHECK_INT(sptd_col_tasks_utid(t, 500), 0);
	CHECK_INT(sptd_col_tasks_utid(t, 7), 2);
	CHECK_INT(sptd_col_tasks_utid(t, 99), 3 + N);
	sptd_col_tasks_destroy(t);
}

/* Process rows for group leaders (upid = the leader's utid), thread rows
 * for every task, with the best names known. */
static void test_store_rows(void)
{
	struct sptd_col_tasks *t = NULL;
	struct sptd_store *st = NULL;

	CHECK_INT(harness_case("rows", &t, &st), 0);
	if (!t || !st)
		goto out;
	CHECK_INT(sptd_col_tasks_utid(t, 500), 0);          /* process not known yet */
	CHECK_INT(sptd_col_tasks_utid(t, 0), 1);            /* the idle task */
	CHECK_INT(sptd_col_tasks_note(t, 501, 500, "worker", NULL), 0);
	CHECK_INT(sptd_col_tasks_note(t, 500, 500, "server", "server --old"), 0);
	/* later knowledge refines: a later cmdline replaces, unknowns keep */
	CHECK_INT(sptd_col_tasks_note(t, 500, -1, NULL, "server --port 80"), 0);
	CHECK_INT(sptd_col_tasks_note(t, 501, -1, "", NULL), 0);
	/* a thread of a process never seen itself: the leader is made up */
	CHECK_INT(sptd_col_tasks_note(t, 502, 777, "orphan", NULL), 0);
	/* a task with no process: its own process */
	CHECK_INT(sptd_col_tasks_note(t, 600, -1, "a-comm-longer-than-15", NULL), 0);
	/* the idle task keeps its name */
	CHECK_INT(sptd_col_tasks_note(t, 0, 0, "idle", NULL), 0);
	CHECK_INT(sptd_col_tasks_utid(t, 501), 2);
	CHECK_INT(sptd_col_tasks_utid(t, 502), 3);
	CHECK_INT(sptd_col_tasks_utid(t, 600), 4);
	CHECK_INT(sptd_col_tasks_store(t, st), 0);
	/* 777 got the next utid when its thread was stored */
	CHECK_INT(sptd_col_tasks_utid(t, 777), 5);
	CHECK_ROWS(st, "SELECT upid, pid, name, cmdline FROM process ORDER BY upid",
	           "0|500|server|server --port 80\n"
	           "1|0|swapper|NULL\n"
	           "4|600|a-comm-longer-t|NULL\n"
	           "5|777|NULL|NULL\n");
	CHECK_ROWS(st, "SELECT utid, tid, upid, name FROM thread ORDER BY utid",
	           "0|500|0|server\n"
	           "1|0|1|swapper\n"
	           "2|501|0|worker\n"
	           "3|502|5|orphan\n"
	           "4|600|4|a-comm-longer-t\n"
	           "5|777|5|NULL\n");
out:
	harness_case_end(t, st);
}

int main(void)
{
	if (harness_init("tasks") < 0)
		return 1;
	test_invalid();
	test_utids();
	test_store_rows();
	harness_fini();
	return SPTD_TEST_END();
}
