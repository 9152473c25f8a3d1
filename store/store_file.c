/* store_file.c — the incident file's lifetime: create into a temporary file,
 * open an existing one (checking that it is an incident we can read; for
 * an update, a private copy of it), commit (fsync + atomic rename, see
 * store_tmp.c) and destroy. */
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

/* Pragmas of a store opened for update.  The update works on a private
 * copy that replaces the incident only once committed and synced (a kill
 * leaves the incident as it was, and no hot journal beside it), so, as for
 * a new file, the journal only has to make ROLLBACK work. */
static const char update_pragmas[] =
	"PRAGMA journal_mode=MEMORY;"
	"PRAGMA synchronous=OFF;"
	"PRAGMA locking_mode=EXCLUSIVE;"
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
	st->tmp_fd = st->dir_fd = st->ro_fd = -1;
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
	int ret, rc;

	if (out)
		*out = NULL;
	if (!path || !*path || !out)
		return sptd_store_fail(NULL, -EINVAL, "sptd_store_create: %s",
		                       !out ? "out is NULL" : "path is NULL or empty");
	st = store_alloc(path);
	if (!st)
		return sptd_store_fail(NULL, -ENOMEM, "creating %s: out of memory", path);
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
	/* Made here, not by SQLite: mode 0600 whatever the umask, O_EXCL and
	 * O_NOFOLLOW under a random name (store_tmp.c). */
	ret = sptd_store_tmp_create(st, 0);
	if (ret < 0)
		goto fail;
	st->created = 1; /* from here on destroy removes the temporary file */
	/* one thread uses a store at a time: no per-call mutex (NOMUTEX) */
	rc = sqlite3_open_v2(st->tmp_path, &st->db,
	                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
	                     NULL);
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

/* Look at the file before SQLite does, for messages that say what is wrong
 * with it: missing, empty, not SQLite, or shorter than its header says.
 * O_NONBLOCK: a FIFO at the path is refused, not waited on.  With @keep
 * the open file is handed out in *@keep (and its stat in *@keep_sb). */
static int check_fd(struct sptd_store *st, int fd, int *keep, struct stat *keep_sb);

/* @path opened to be checked and read; -errno (message in @st or, NULL,
 * the thread's) when it cannot be. */
static int open_source(struct sptd_store *st, const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), ret;

	if (fd >= 0)
		return fd;
	ret = -errno;
	return sptd_store_fail(st, ret, "cannot open %s: %s", path,
	                       ret == -ENOENT ? "no such file" : strerror(-ret));
}

int sptd_store_open_source(const char *path)
{
	if (!path || !*path)
		return sptd_store_fail(NULL, -EINVAL, "sptd_store_open_source: path is NULL or empty");
	return open_source(NULL, path);
}

static int check_file(struct sptd_store *st, int *keep, struct stat *keep_sb)
{
	int fd = open_source(st, st->path);

	return fd < 0 ? fd : check_fd(st, fd, keep, keep_sb);
}

/* check_file's checks on @fd, which it takes over (kept in *@keep). */
static int check_fd(struct sptd_store *st, int fd, int *keep, struct stat *keep_sb)
{
	static const char magic[16] = "SQLite format 3";
	unsigned char hdr[100];
	struct stat sb;
	uint64_t page_size, pages;
	ssize_t n;
	int ret = 0;

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
	page_size = sptd_store_header_page_size(hdr);
	pages = get32(hdr + 28);
	/* The page count is only valid when stamped by the same write as the
	 * change counter (offsets 24 and 92). */
	if (pages && get32(hdr + 24) == get32(hdr + 92) &&
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
	if (page_size >= 512 && get32(hdr + 52) > (uint64_t)sb.st_size / page_size) {
		ret = sptd_store_fail(st, -EBADMSG, "%s is damaged: its header names root page "
		                      "%u of a %llu-page file; take it again from the recording "
		                      "machine", st->path, get32(hdr + 52),
		                      (unsigned long long)((uint64_t)sb.st_size / page_size));
		goto out;
	}
out:
	if (ret == 0 && keep) {
		*keep = fd;
		*keep_sb = sb;
	} else {
		close(fd);
	}
	return ret;
}

/* An older sysptd updated incidents in place: one killed meanwhile left a
 * hot journal (PATH-journal) beside it.  Open it read-write once, which
 * makes SQLite roll that update back, so the copy taken next is whole. */
static int roll_back_old_update(struct sptd_store *st)
{
	sqlite3 *db = NULL;
	char *journal = NULL;
	struct stat sb;
	int rc, ret = 0;

	if (asprintf(&journal, "%s-journal", st->path) < 0)
		return sptd_store_fail(st, -ENOMEM, "opening %s: out of memory", st->path);
	if (lstat(journal, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		rc = sqlite3_open_v2(st->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW,
		                     NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			ret = sptd_store_fail(st, -EBADMSG, "%s has an unfinished update (%s, left "
			                      "by an interrupted sysptd decode) that cannot be rolled "
			                      "back: %s", st->path, journal, sqlite3_errstr(rc));
		sqlite3_close_v2(db);
	}
	free(journal);
	return ret;
}

/* Check that the opened file is an incident of a schema we understand;
 * its schema version through @version_out. */
static int check_incident(struct sptd_store *st, long long *version_out)
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
		char shown[48];

		sptd_store_quote(shown, text);
		ret = sptd_store_fail(st, -EBADMSG, "%s is not a sysptd incident (bad "
		                      "schema_version '%s')", st->path, shown);
		goto out;
	}
	if (version > SPTD_STORE_SCHEMA_VERSION) {
		ret = sptd_store_fail(st, -EPROTO, "%s was written by a newer sysptd (schema "
		                      "version %lld; this one reads up to %d): upgrade sysptd",
		                      st->path, version, SPTD_STORE_SCHEMA_VERSION);
		goto out;
	}
	*version_out = version;
out:
	sqlite3_finalize(q);
	return ret;
}

/* "file:PATH?immutable=1" for a read-only open.  An incident never
 * changes once it has a name (the recorder and decode rename a finished
 * file over it), so SQLite need not lock it nor look for a journal beside
 * it: a "-journal" or "-wal" file someone put there (in a directory they
 * can write) is never read, never rolled back into the incident, and
 * cannot make the open fail.  sqlite3_free() the result. */
static int immutable_uri(const char *path, char **uri)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(path), n = 0;
	char *u = sqlite3_malloc64(len * 3 + 32);

	*uri = NULL;
	if (!u)
		return -ENOMEM;
	n += (size_t)sprintf(u, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/-_.~", *p)) {
			u[n++] = (char)*p;
		} else {
			u[n++] = '%';
			u[n++] = hex[*p >> 4];
			u[n++] = hex[*p & 15];
		}
	}
	snprintf(u + n, 16, "?immutable=1");
	*uri = u;
	return 0;
}

static int open_checked(struct sptd_store *st, int writable, int src, struct stat *src_sb,
                        struct sptd_store **out);
static int open_source_taken(struct sptd_store *st, int writable, int src, struct stat *src_sb);
static int open_attach(struct sptd_store *st, int writable);

/* sptd_store_open, and with @writable 2 sptd_store_open_update. */
static int store_open(const char *path, int writable, struct sptd_store **out)
{
	struct sptd_store *st = NULL;
	struct stat src_sb;
	char *real;
	int ret, src = -1;

	if (out)
		*out = NULL;
	if (!path || !*path || !out)
		return sptd_store_fail(NULL, -EINVAL, "sptd_store_open: %s",
		                       !out ? "out is NULL" : "path is NULL or empty");
	/* an update replaces the file a symlink leads to, not the link */
	real = writable ? realpath(path, NULL) : NULL;
	st = store_alloc(real ? real : path);
	free(real);
	if (!st)
		return sptd_store_fail(NULL, -ENOMEM, "opening %s: out of memory", path);
	if (writable) {
		ret = roll_back_old_update(st);
		if (ret < 0)
			goto fail;
	}
	/* read-only: SQLite reads the very file checked (store_fdvfs.c),
	 * not whatever is at the path by then (a FIFO renamed over it blocked
	 * the reader for ever; a link swapped to a root-only incident was
	 * read where the export's mode came from the first) */
	ret = check_file(st, &src, &src_sb);
	if (ret < 0)
		goto fail;
	if (writable == 2) {
		/* sptd_store_open_update: the copy only */
		ret = open_source_taken(st, 1, src, &src_sb);
		if (ret < 0)
			goto fail;
		st->attach_pending = 1;
		*out = st;
		return 0;
	}
	return open_checked(st, writable, src, &src_sb, out);
fail:
	return give_up(st, ret);
}

int sptd_store_open(const char *path, int writable, struct sptd_store **out)
{
	if (writable != 0 && writable != 1)
		return sptd_store_fail(NULL, -EINVAL, "sptd_store_open: writable is not 0 or 1");
	return store_open(path, writable, out);
}

int sptd_store_open_update(const char *path, struct sptd_store **out)
{
	return store_open(path, 2, out);
}

int sptd_store_open_finish(struct sptd_store *st)
{
	int ret;

	if (!st || !st->attach_pending)
		return sptd_store_fail(st, -EINVAL, "sptd_store_open_finish: %s", !st ?
		                       "st is NULL" : "not a store from sptd_store_open_update");
	st->attach_pending = 0;
	ret = open_attach(st, 1);
	/* SQLite refusing the copy itself is a bad file (as sptd_store_open) */
	if (ret == -EINVAL)
		ret = -EBADMSG;
	if (ret < 0)
		sptd_store_set_open_error(st->errmsg);
	return ret;
}

int sptd_store_open_fd(int fd, const char *label, struct sptd_store **out)
{
	struct sptd_store *st;
	struct stat sb;
	int ret, src = -1, dup_fd;

	if (out)
		*out = NULL;
	if (fd < 0 || !label || !*label || !out)
		return sptd_store_fail(NULL, -EINVAL, "sptd_store_open_fd: %s", fd < 0 ?
		                       "fd is negative" : !out ? "out is NULL" : "no label");
	st = store_alloc(label);
	if (!st)
		return sptd_store_fail(NULL, -ENOMEM, "opening %s: out of memory", label);
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0) {
		ret = sptd_store_fail(st, -errno, "cannot open %s: %s", label, strerror(errno));
		return give_up(st, ret);
	}
	ret = check_fd(st, dup_fd, &src, &sb);
	if (ret < 0)
		return give_up(st, ret);
	return open_checked(st, 0, src, &sb, out);
}

/* An open's first part, once @src (the file, taken over) passed check_fd:
 * read-only, the descriptor SQLite will read; for update, the private
 * copy made (its descriptor kept in st->tmp_fd).  0 or a store error. */
static int open_source_taken(struct sptd_store *st, int writable, int src, struct stat *src_sb)
{
	unsigned char ver[2];
	int ret;

	if (!writable) {
		st->ro_fd = src;
		return 0;
	}
	/* work on a private copy beside it; commit renames it over */
	ret = sptd_store_tmp_create(st, 1);
	if (ret >= 0)
		ret = sptd_store_tmp_copy(st, src, src_sb);
	close(src);
	if (ret < 0)
		return ret;
	st->updating = 1;
	/* a copy in WAL mode (file format 2) would want a WAL and its index
	 * beside it: the copy is made a rollback-journal file (1), which it
	 * is once its journal is in memory (the original's WAL, if any, was
	 * never part of what the copy holds) */
	if (pread(st->tmp_fd, ver, sizeof(ver), 18) == (ssize_t)sizeof(ver) &&
	    (ver[0] == 2 || ver[1] == 2)) {
		ver[0] = ver[1] = 1;
		if (pwrite(st->tmp_fd, ver, sizeof(ver), 18) != (ssize_t)sizeof(ver))
			return sptd_store_fail(st, -EIO, "copying %s to update it: %s", st->path,
			                       strerror(errno ? errno : EIO));
	}
	return 0;
}

/* An open's second part: SQLite on the descriptor of open_source_taken,
 * the checks, and for update the transaction.  0 or a store error (the
 * caller gives the store up). */
static int open_attach(struct sptd_store *st, int writable)
{
	char *uri = NULL;
	long long version = 0;
	int ret, rc;

	if (sptd_store_fdvfs()) {
		char name[32];

		/* the descriptor checked (or the copy made), never a path
		 * again (store_fdvfs.c) */
		snprintf(name, sizeof(name), "fd:%d", writable ? st->tmp_fd : st->ro_fd);
		rc = sqlite3_open_v2(name, &st->db, writable ? SQLITE_OPEN_READWRITE :
		                     SQLITE_OPEN_READONLY, sptd_store_fdvfs());
	} else if (writable) {
		rc = sqlite3_open_v2(st->tmp_path, &st->db,
		                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
	} else {
		ret = immutable_uri(st->path, &uri);
		if (ret < 0)
			return sptd_store_fail(st, ret, "opening %s: out of memory", st->path);
		rc = sqlite3_open_v2(uri, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
		sqlite3_free(uri);
	}
	if (rc != SQLITE_OK)
		return sptd_store_fail_sqlite(st, rc, "opening the incident");
	sqlite3_busy_timeout(st->db, 2000);
	ret = sptd_store_guard_apply(st);
	if (ret < 0)
		return ret;
	if (writable) {
		ret = sptd_store_exec(st, update_pragmas, "opening the incident");
		if (ret < 0)
			return ret;
	}
	ret = check_incident(st, &version);
	if (ret < 0)
		return ret;
	if (writable) {
		ret = sptd_store_exec(st, "BEGIN IMMEDIATE", "starting the update");
		if (ret < 0)
			return ret;
		st->in_txn = 1;
		st->writable = 1;
		/* an older file gets the columns added since, in this update */
		ret = sptd_store_schema_upgrade(st, version, 1);
	} else {
		/* read-only: an older file's missing columns read as NULL
		 * (TEMP views), then nothing may write */
		ret = sptd_store_schema_upgrade(st, version, 0);
		if (ret >= 0)
			ret = sptd_store_exec(st, "PRAGMA query_only=1", "opening the incident");
	}
	/* after the upgrade: an older file has the added columns by now */
	if (ret >= 0)
		ret = sptd_store_schema_check(st);
	return ret;
}

/* The rest of an open, once @src (the file, taken over) passed check_fd. */
static int open_checked(struct sptd_store *st, int writable, int src, struct stat *src_sb,
                        struct sptd_store **out)
{
	int ret = open_source_taken(st, writable, src, src_sb);

	if (ret >= 0)
		ret = open_attach(st, writable);
	if (ret < 0) {
		/* the arguments were checked above: SQLite refusing the file
		 * itself ("unsupported file format", a schema it cannot
		 * parse) is a bad file */
		return give_up(st, ret == -EINVAL ? -EBADMSG : ret);
	}
	*out = st;
	return 0;
}

int sptd_store_commit(struct sptd_store *st)
{
	struct sptd_store_bulk_plan *bulk = NULL;
	int ret;

	if (!st)
		return -EINVAL;
	if (st->committed)
		return sptd_store_fail(st, -EINVAL, "committing %s: already committed", st->path);
	ret = sptd_store_writable_check(st, "committing");
	if (ret < 0)
		return ret;
	ret = sptd_store_schema_index(st);
	if (ret >= 0)
		ret = sptd_store_bulk_begin(st, &bulk);
	if (ret < 0)
		return ret;
	sptd_store_rows_release(st);
	sptd_store_named_release(st);
	ret = sptd_store_exec(st, "COMMIT", "committing");
	if (ret >= 0) {
		st->in_txn = 0;
		st->writable = 0;
		/* what SQLite wrote goes to the disk while the slice pages are
		 * finished and written: the fsync at publish waits for less
		 * (advisory: that fsync reports any error) */
		if (st->tmp_fd >= 0 && (st->created || st->updating))
			sync_file_range(st->tmp_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	}
	/* the slice rows kept for the commit: written now */
	ret = sptd_store_bulk_end(st, bulk, ret);
	if (ret < 0)
		return ret;
	if (st->created || st->updating) {
		ret = sptd_store_tmp_publish(st, st->updating);
		if (ret < 0 && st->tmp_live) {
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
	sptd_store_bulk_release(st);
	sptd_store_tmp_discard(st);
	if (st->ro_fd >= 0)
		close(st->ro_fd);
	free(st->le_buf);
	free(st->tmp_path);
	free(st->path);
	free(st);
}

const char *sptd_store_path(const struct sptd_store *st)
{
	return st ? st->path : NULL;
}
