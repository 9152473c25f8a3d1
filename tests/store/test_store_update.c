/* test_store_update.c — an incident opened for update in two steps:
 * sptd_store_open_update (as root: the private copy beside the incident),
 * then sptd_store_open_finish (after the drop: SQLite on that copy through
 * its descriptor, store_fdvfs.c read-write). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store_fixture.h"
#include "store_count.h"

/* Files in the test's directory whose name starts with @prefix. */
static int count_files(const char *prefix)
{
	return count_files_in(fixture_dir, prefix);
}

/* The update in two steps (sptd_store_open_update as root, then
 * sptd_store_open_finish after the drop): the copy made first, SQLite on
 * it through its descriptor.  A copy whose header says WAL becomes a
 * rollback-journal file; no file beside the copy is made (a journal or
 * WAL of the descriptor's name would land in the working directory); a
 * copy SQLite cannot read is a bad file and leaves nothing behind. */
int main(void)
{
	const char *path;
	struct sptd_store *st = NULL;
	unsigned char ver[2] = { 0, 0 };
	sqlite3 *db = NULL;
	char cwd[4096];
	int fd;

	fixture_begin();
	path = fixture_path(1, "two.db");
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		SPTD_SKIP("cannot make an incident");
	CHECK_INT(SPTD_STORE_ADD(st, slice, 1, 10, 5, 0, 1, 0, -1, -1, SPTD_SLICE_USER, 0), 0);
	CHECK_INT(sptd_store_commit(st), 0);
	sptd_store_destroy(st);
	/* the incident in WAL mode, as another writer may leave it */
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "PRAGMA journal_mode=WAL; SELECT count(*) FROM slice", NULL,
	                       NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	/* run where a file named after the descriptor would be made */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_INT(chdir(fixture_dir), 0);
	st = NULL;
	CHECK_INT(sptd_store_open_update(path, &st), 0);
	CHECK_INT(count_files("two.db.tmp."), 1);   /* the copy, made now */
	if (st) {
		CHECK_INT(sptd_store_open_finish(st), 0);
		CHECK_INT(count(st, "SELECT count(*) FROM slice"), 1);
		CHECK_INT(SPTD_STORE_ADD(st, slice, 2, 20, 5, 0, 1, 0, -1, -1, SPTD_SLICE_USER, 0), 0);
		CHECK_INT(sptd_store_commit(st), 0);
		/* only once */
		CHECK_INT(sptd_store_open_finish(st), -EINVAL);
		sptd_store_destroy(st);
	}
	CHECK_INT(count_files("fd:"), 0);
	CHECK_INT(count_files("two.db"), 1);        /* no copy, journal or WAL left */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, ver, 2, 18) == 2);
	if (fd >= 0)
		close(fd);
	CHECK(ver[0] == 1 && ver[1] == 1);
	st = NULL;
	CHECK_INT(sptd_store_open(path, 0, &st), 0);
	CHECK_INT(count(st, "SELECT count(*) FROM slice"), 2);
	sptd_store_destroy(st);
	/* a copy SQLite refuses (its schema page garbled): a bad file, the
	 * copy removed at destroy, the incident as it was */
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, "garbage garbage garbage", 23, 100) == 23);
	if (fd >= 0)
		close(fd);
	st = NULL;
	CHECK_INT(sptd_store_open_update(path, &st), 0);
	if (st) {
		CHECK_INT(sptd_store_open_finish(st), -EBADMSG);
		sptd_store_destroy(st);
	}
	CHECK_INT(count_files("two.db"), 1);
	CHECK_INT(count_files("fd:"), 0);
	/* not a store from _update */
	CHECK_INT(sptd_store_open_finish(NULL), -EINVAL);
	CHECK_INT(chdir(cwd), 0);
	fixture_end();
	return SPTD_TEST_END();
}
