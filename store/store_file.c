/* store_file.c — the incident file's lifetime: create into a temporary file,
 * open an existing one (checking that it is an incident we can read),
 * commit (fsync + atomic rename) and destroy. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store-local.h"

/* Pragmas of a created store.  The temporary file is private to us until it
 * is renamed, and commit fsyncs it before the rename, so the journal only
 * has to make ROLLBACK work: an in-memory journal costs nothing for pages
 * that did not exist at BEGIN (all of them in a new file), and synchronous
 * writes would only slow the bulk insert down.  A crash leaves a stray
 * temporary file, never a half-written PATH.  16 KiB pages hold a 4 KiB
 * ftrace page per row without overflow chains and cut per-page work of the
 * bulk insert (~10% on slices). */
static const char create_pragmas[] =
	"PRAGMA page_size=16384;"
	"PRAGMA journal_mode=MEMORY;"
	"PRAGMA synchronous=OFF;"
	"PRAGMA locking_mode=EXCLUSIVE;"
	"PRAGMA cache_size=-32768;";

/* Pragmas of a store opened for update: a real rollback journal with full
 * syncs, because the file being changed is the incident itself. */
static const char update_pragmas[] =
	"PRAGMA journal_mode=DELETE;"
	"PRAGMA synchronous=FULL;"
	"PRAGMA cache_size=-32768;";

static struct sptd_store *store_alloc(const char *path)
{
	struct sptd_store *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->path = strdup(path);
	if (!st->path) {
		free(st);
		return NULL;
	}
	return st;
}

/* Free what create/open built, after a failure: keep the message for
 * sptd_store_errmsg(NULL). */
static int give_up(struct sptd_store *st, int ret)
{
	if (st) {
		sptd_store_set_open_error(st->errmsg);
		sptd_store_destroy(st);
	}
	return ret;
}

int sptd_store_create(const char *path, struct sptd_store **out)
{
	struct sptd_store *st = NULL;
	struct stat sb;
	char sql[128];
	int ret, fd, rc;

	if (out)
		*out = NULL;
	if (!path || !*path || !out)
		return sptd_store_fail(NULL, -EINVAL, "sptd_store_create: %s",
		                       !out ? "out is NULL" : "path is NULL or empty");
	st = store_alloc(path);
	if (!st)
		return sptd_store_fail(NULL, -ENOMEM, "creating %s: out of memory", path);
	if (asprintf(&st->tmp_path, "%s.tmp.%d", path, (int)getpid()) < 0) {
		st->tmp_path = NULL;
		ret = sptd_store_fail(st, -ENOMEM, "creating %s: out of memory", path);
		goto fail;
	}
	if (lstat(path, &sb) == 0) {
		ret = sptd_store_fail(st, -EEXIST, "%s already exists: choose another "
		                      "name or remove it first", path);
		goto fail;
	}
	if (errno != ENOENT) {
		ret = -errno;
		sptd_store_fail(st, ret, "cannot create %s: %s", path, strerror(-ret));
		goto fail;
	}
	/* Made here, not by SQLite, so the mode is 0600 whatever the umask. */
	fd = open(st->tmp_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		sptd_store_fail(st, ret, "cannot create %s: %s%s", st->tmp_path,
		                strerror(-ret), ret == -EEXIST ? " (left by a crashed "
		                "sysptd? remove it)" : "");
		goto fail;
	}
	st->created = 1; /* from here on destroy removes the temporary file */
	ret = fchmod(fd, 0600) < 0 ? -errno : 0;
	close(fd);
	if (ret < 0) {
		sptd_store_fail(st, ret, "cannot chmod %s: %s", st->tmp_path, strerror(-ret));
		goto fail;
	}
	rc = sqlite3_open_v2(st->tmp_path, &st->db, SQLITE_OPEN_READWRITE, NULL);
	if (rc != SQLITE_OK) {
		ret = sptd_store_fail_sqlite(st, rc, "opening the new incident");
		goto fail;
	}
	ret = sptd_store_exec(st, create_pragmas, "setting up the new incident");
	if (ret < 0)
		goto fail;
	ret = sptd_store_exec(st, "BEGIN", "starting the transaction");
	if (ret < 0)
		goto fail;
	st->in_txn = 1;
	st->writable = 1;
	ret = sptd_store_schema_create(st);
	if (ret < 0)
		goto fail;
	snprintf(sql, sizeof(sql), "INSERT INTO meta VALUES ('schema_version', '%d')",
	         SPTD_STORE_SCHEMA_VERSION);
	ret = sptd_store_exec(st, sql, "writing the schema version");
	if (ret < 0)
		goto fail;
	*out = st;
	return 0;
fail:
	return give_up(st, ret);
}

/* Big-endian field of the SQLite header. */
static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Look at the file before SQLite does, for messages that say what is wrong
 * with it: missing, empty, not SQLite, or shorter than its header says. */
static int check_file(struct sptd_store *st)
{
	static const char magic[16] = "SQLite format 3";
	unsigned char hdr[100];
	struct stat sb;
	uint64_t page_size, pages;
	ssize_t n;
	int fd, ret = 0;

	fd = open(st->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return sptd_store_fail(st, ret, "cannot open %s: %s", st->path,
		                       ret == -ENOENT ? "no such file" : strerror(-ret));
	}
	if (fstat(fd, &sb) < 0) {
		ret = -errno;
		sptd_store_fail(st, ret, "cannot stat %s: %s", st->path, strerror(-ret));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is not a sysptd incident (not a "
		                      "regular file)", st->path);
		goto out;
	}
	if (sb.st_size == 0) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is not a sysptd incident (the file "
		                      "is empty)", st->path);
		goto out;
	}
	n = pread(fd, hdr, sizeof(hdr), 0);
	if (n < 0) {
		ret = -errno;
		sptd_store_fail(st, ret, "cannot read %s: %s", st->path, strerror(-ret));
		goto out;
	}
	if (n < (ssize_t)sizeof(hdr) || memcmp(hdr, magic, sizeof(magic)) != 0) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is not a sysptd incident (file is "
		                      "not a database): check the path", st->path);
		goto out;
	}
	page_size = hdr[16] << 8 | hdr[17];
	if (page_size == 1)
		page_size = 65536;
	pages = be32(hdr + 28);
	/* The page count is only valid when stamped by the same write as the
	 * change counter (offsets 24 and 92). */
	if (pages && be32(hdr + 24) == be32(hdr + 92) &&
	    pages * page_size > (uint64_t)sb.st_size) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is damaged: truncated to %lld of "
		                      "%llu bytes (an interrupted copy?); take it again "
		                      "from the recording machine", st->path,
		                      (long long)sb.st_size,
		                      (unsigned long long)(pages * page_size));
		goto out;
	}
	/* An auto-vacuum file names its largest root page (offset 52); one
	 * beyond the end sends SQLite looking for pointer-map pages it then
	 * "cannot grow to", reported as a full disk. */
	if (page_size >= 512 && be32(hdr + 52) > (uint64_t)sb.st_size / page_size) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is damaged: its header names root page "
		                      "%u of a %llu-page file; take it again from the recording "
		                      "machine", st->path, be32(hdr + 52),
		                      (unsigned long long)((uint64_t)sb.st_size / page_size));
		goto out;
	}
out:
	close(fd);
	return ret;
}

/* Check that the opened file is an incident of a schema we understand. */
static int check_incident(struct sptd_store *st)
{
	sqlite3_stmt *q = NULL;
	const char *text;
	char *end;
	long long version;
	int ret = 0, rc;

	rc = sqlite3_prepare_v2(st->db, "SELECT count(*) FROM sqlite_schema WHERE "
	                        "type = 'table' AND name = 'meta'", -1, &q, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(q);
	if (rc != SQLITE_ROW) {
		ret = sptd_store_fail_sqlite(st, rc, "opening the incident");
		goto out;
	}
	if (sqlite3_column_int(q, 0) == 0) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is not a sysptd incident (no meta "
		                      "table)", st->path);
		goto out;
	}
	sqlite3_finalize(q);
	q = NULL;
	rc = sqlite3_prepare_v2(st->db, "SELECT value FROM meta WHERE key = 'schema_version'",
	                        -1, &q, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(q);
	if (rc == SQLITE_DONE) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is not a sysptd incident (no "
		                      "schema_version in its meta table)", st->path);
		goto out;
	}
	if (rc != SQLITE_ROW) {
		ret = sptd_store_fail_sqlite(st, rc, "opening the incident");
		goto out;
	}
	text = (const char *)sqlite3_column_text(q, 0);
	errno = 0;
	version = text ? strtoll(text, &end, 10) : 0;
	if (!text || end == text || *end || errno || version < 1) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is not a sysptd incident (bad "
		                      "schema_version '%s')", st->path, text ? text : "NULL");
		goto out;
	}
	if (version > SPTD_STORE_SCHEMA_VERSION) {
		ret = sptd_store_fail(st, -EPROTO, "%s was written by a newer sysptd (schema "
		                      "version %lld; this one reads up to %d): upgrade sysptd",
		                      st->path, version, SPTD_STORE_SCHEMA_VERSION);
		goto out;
	}
	ret = sptd_store_schema_check(st);
out:
	sqlite3_finalize(q);
	return ret;
}

int sptd_store_open(const char *path, int writable, struct sptd_store **out)
{
	struct sptd_store *st = NULL;
	int ret, rc;

	if (out)
		*out = NULL;
	if (!path || !*path || !out || (writable != 0 && writable != 1))
		return sptd_store_fail(NULL, -EINVAL, "sptd_store_open: %s",
		                       !out ? "out is NULL" : !path || !*path ?
		                       "path is NULL or empty" : "writable is not 0 or 1");
	st = store_alloc(path);
	if (!st)
		return sptd_store_fail(NULL, -ENOMEM, "opening %s: out of memory", path);
	ret = check_file(st);
	if (ret < 0)
		goto fail;
	rc = sqlite3_open_v2(path, &st->db, writable ? SQLITE_OPEN_READWRITE
	                                             : SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK) {
		ret = sptd_store_fail_sqlite(st, rc, "opening the incident");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 2000);
	ret = sptd_store_guard_apply(st);
	if (ret < 0)
		goto fail;
	ret = sptd_store_exec(st, writable ? update_pragmas : "PRAGMA query_only=1",
	                      "opening the incident");
	if (ret < 0)
		goto fail;
	ret = check_incident(st);
	if (ret < 0)
		goto fail;
	if (writable) {
		ret = sptd_store_exec(st, "BEGIN IMMEDIATE", "starting the update");
		if (ret < 0)
			goto fail;
		st->in_txn = 1;
		st->writable = 1;
	}
	*out = st;
	return 0;
fail:
	/* the arguments were checked above: SQLite refusing the file itself
	 * ("unsupported file format", a schema it cannot parse) is a bad file */
	if (ret == -EINVAL)
		ret = -EBADMSG;
	return give_up(st, ret);
}

/* fsync a file or directory by path. */
static int sync_path(const char *path, int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Move the committed temporary file to PATH, refusing to replace a file
 * that appeared meanwhile, and make the new name durable. */
static int publish(struct sptd_store *st)
{
	char dir[PATH_MAX];
	const char *slash;
	int ret;

	ret = sync_path(st->tmp_path, 0);
	if (ret < 0)
		return sptd_store_fail(st, ret == -EDQUOT ? -ENOSPC : ret,
		                       "syncing %s: %s: nothing was written to %s",
		                       st->tmp_path, strerror(-ret), st->path);
	if (renameat2(AT_FDCWD, st->tmp_path, AT_FDCWD, st->path, RENAME_NOREPLACE) < 0) {
		ret = -errno;
		/* Filesystems without RENAME_NOREPLACE: link() refuses too. */
		if (ret == -EINVAL || ret == -ENOSYS) {
			ret = link(st->tmp_path, st->path) < 0 ? -errno : 0;
			if (ret == 0)
				unlink(st->tmp_path);
		}
		if (ret < 0)
			return sptd_store_fail(st, ret, "cannot rename %s to %s: %s%s",
			                       st->tmp_path, st->path, strerror(-ret),
			                       ret == -EEXIST ? " (it appeared while the "
			                       "incident was written; nothing was replaced)" : "");
	}
	slash = strrchr(st->path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == st->path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - st->path), st->path);
	ret = sync_path(dir, O_DIRECTORY);
	/* The file is in place; a directory that cannot be synced is reported
	 * but the incident stays (removing it now would lose it). */
	free(st->tmp_path);
	st->tmp_path = NULL;
	if (ret < 0)
		return sptd_store_fail(st, ret, "syncing directory %s: %s", dir, strerror(-ret));
	return 0;
}

int sptd_store_commit(struct sptd_store *st)
{
	int ret;

	if (!st)
		return -EINVAL;
	if (st->committed)
		return sptd_store_fail(st, -EINVAL, "committing %s: already committed", st->path);
	ret = sptd_store_writable_check(st, "committing");
	if (ret < 0)
		return ret;
	ret = sptd_store_schema_index(st);
	if (ret < 0)
		return ret;
	sptd_store_rows_release(st);
	sptd_store_named_release(st);
	ret = sptd_store_exec(st, "COMMIT", "committing");
	if (ret < 0)
		return ret;
	st->in_txn = 0;
	st->writable = 0;
	if (st->created) {
		ret = publish(st);
		if (ret < 0 && st->tmp_path) {
			/* Not at PATH: the file stays temporary and destroy removes it. */
			sptd_store_mark_fatal(st, ret);
			return ret;
		}
	}
	st->committed = 1;
	/* Give up the exclusive lock of the bulk write (it is dropped at the
	 * next access), so other processes can read the incident while this
	 * store stays open. */
	sqlite3_exec(st->db, "PRAGMA query_only=1; PRAGMA locking_mode=NORMAL;"
	             "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
	return ret;
}

void sptd_store_destroy(struct sptd_store *st)
{
	if (!st)
		return;
	sptd_store_stmts_release(st);
	sptd_store_rows_release(st);
	sptd_store_named_release(st);
	if (st->db) {
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close_v2(st->db);
		st->db = NULL;
	}
	if (st->created && st->tmp_path)
		unlink(st->tmp_path);
	free(st->le_buf);
	free(st->tmp_path);
	free(st->path);
	free(st);
}

const char *sptd_store_path(const struct sptd_store *st)
{
	return st ? st->path : NULL;
}
