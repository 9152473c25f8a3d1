/* store_err.c — turning SQLite results into negative errnos and messages
 * that name what failed, the file, and what to do about it. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "store-local.h"

/* Detail of the last failed create/open of this thread (no store exists to
 * hold it); read with sptd_store_errmsg(NULL). */
static _Thread_local char open_error[1024];

void sptd_store_printable(char *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = '?';
}

void sptd_store_quote(char shown[48], const char *text)
{
	snprintf(shown, 48, "%.40s", text ? text : "NULL");
	sptd_store_printable(shown, strlen(shown));
}

void sptd_store_set_open_error(const char *msg)
{
	snprintf(open_error, sizeof(open_error), "%s", msg ? msg : "");
}

int sptd_store_fail(struct sptd_store *st, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (st)
		vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
	else
		vsnprintf(open_error, sizeof(open_error), fmt, ap);
	va_end(ap);
	/* messages name files and quote them: nothing of a hostile name or
	 * value may reach a terminal as an escape sequence or a new line */
	if (st)
		sptd_store_printable(st->errmsg, strlen(st->errmsg));
	else
		sptd_store_printable(open_error, strlen(open_error));
	return err;
}

int sptd_store_damaged(struct sptd_store *st, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	if (!st || !fmt)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return sptd_store_fail(st, -EBADMSG, "%s is damaged: %s; take it again from the "
	                       "recording machine", st->path, what);
}

int sptd_store_errno_of(sqlite3 *db, int rc)
{
	int sys;

	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EBADMSG;
	case SQLITE_INTERRUPT:   /* only our progress handler interrupts */
		return -ETIMEDOUT;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_ERROR: /* syntax, no such table/column: the caller's SQL */
	case SQLITE_RANGE:
	case SQLITE_MISUSE:
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_TOOBIG:
	case SQLITE_AUTH:
		return -EINVAL;
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		sys = db ? sqlite3_system_errno(db) : 0;
		if (sys == ENOENT || sys == EACCES || sys == EPERM || sys == EISDIR)
			return -sys;
		return rc == SQLITE_PERM ? -EACCES : -EIO;
	case SQLITE_IOERR:
		sys = db ? sqlite3_system_errno(db) : 0;
		return sys == ENOSPC || sys == EDQUOT ? -ENOSPC : -EIO;
	default:
		return -EIO;
	}
}

/* SQLite said "out of memory": 1 when this process can still allocate a
 * good deal, i.e. the machine is not short of memory (SQLite also says so
 * when a single allocation would pass its 2 GiB limit). */
static int nomem_was_impossible(void)
{
	void *probe = malloc(64u << 20);

	if (!probe)
		return 0;
	free(probe);
	return 1;
}

int sptd_store_fail_write(struct sptd_store *st, int err, const char *what, const char *why)
{
	const char *how = err == -ENOSPC ? "disk full" : strerror(-err);
	const char *fix = err == -ENOSPC ? "free some space and " : "";

	if (st->updating)
		return sptd_store_fail(st, err, "%s: %s writing %s (%s): %s is unchanged; %srun it "
		                       "again", what, how, st->tmp_path, why, st->path, fix);
	return sptd_store_fail(st, err, "%s: %s writing %s (%s): nothing was written to %s; "
	                       "%srecord again", what, how, st->tmp_path, why, st->path, fix);
}

int sptd_store_fail_sqlite(struct sptd_store *st, int rc, const char *what)
{
	int err = sptd_store_errno_of(st->db, rc);
	const char *why = st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
	int ended = st->in_txn && st->db && sqlite3_get_autocommit(st->db);

	if (err == 0)
		err = -EIO;
	/* a damaged file can make SQLite fail with "out of memory" on every
	 * statement (fuzz_incident found one): reading an incident, with memory
	 * free, that is the file's fault, not the machine's */
	if (err == -ENOMEM && !st->writable && nomem_was_impossible())
		return sptd_store_fail(st, -EBADMSG, "%s: %s: SQLite ran out of memory reading it "
		                       "while memory is free: the file is damaged; take it again "
		                       "from the recording machine", what, st->path);
	if (err == -ENOSPC && st->tmp_path)
		sptd_store_fail_write(st, err, what, why);
	else if (err == -ENOSPC)
		sptd_store_fail(st, err, "%s: disk full updating %s (%s): the update is "
		                "rolled back and %s is unchanged; free some space and "
		                "run it again", what, st->path, why, st->path);
	else if (err == -EBADMSG)
		sptd_store_fail(st, err, "%s: %s: %s: the file is not a sysptd incident or "
		                "is damaged (truncated copy?); take it again from the "
		                "recording machine", what, st->path, why);
	else if (err == -ETIMEDOUT)
		sptd_store_fail(st, err, "%s: %s: stopped after the time limit of %.3g s "
		                "(a runaway query?); raise it with --timeout", what, st->path,
		                (double)st->time_limit_ns / 1e9);
	else if (err == -EBUSY)
		sptd_store_fail(st, err, "%s: %s: %s: another process is updating it; "
		                "try again when it is done", what, st->path, why);
	else
		sptd_store_fail(st, err, "%s: %s: %s", what, st->path, why);

	/* SQLite ends the transaction itself on some failures (full disk, I/O
	 * error, out of memory); from then on nothing may be added. */
	if (ended || (st->in_txn && (err == -ENOSPC || err == -EIO || err == -ENOMEM)))
		sptd_store_mark_fatal(st, err);
	return err;
}

_Static_assert(sizeof(((struct sptd_store *)0)->fatal_msg) ==
               sizeof(((struct sptd_store *)0)->errmsg), "fatal_msg copies errmsg");

void sptd_store_mark_fatal(struct sptd_store *st, int err)
{
	st->fatal = err;
	memcpy(st->fatal_msg, st->errmsg, sizeof(st->fatal_msg));
}

int sptd_store_exec(struct sptd_store *st, const char *sql, const char *what)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sptd_store_fail_sqlite(st, rc, what);
}

int sptd_store_writable_check(struct sptd_store *st, const char *what)
{
	if (!st || !st->db)
		return st ? sptd_store_fail(st, -EINVAL, "%s: the store is closed", what)
		          : -EINVAL;
	if (st->fatal)
		return sptd_store_fail(st, st->fatal, "%s: an earlier failure ended the "
		                       "transaction: %s", what, st->fatal_msg);
	if (!st->writable)
		return sptd_store_fail(st, -EROFS, "%s: %s is %s", what, st->path,
		                       st->committed ? "committed: only reads are allowed"
		                                                 : "opened read-only");
	return 0;
}

const char *sptd_store_errmsg(const struct sptd_store *st)
{
	return st ? st->errmsg : open_error;
}
