/* store_fdvfs.c — an SQLite VFS over a file descriptor.
 *
 * SQLite's unix VFS opens a database by name, and resolves symbolic links
 * in that name first (xFullPathname): handing it /proc/self/fd/N reopens
 * whatever is at the file's path by then.  A reader checks the file it
 * opened (regular, a database) and then SQLite must read that same file:
 * a FIFO renamed over the path in between blocked the reader for ever, a
 * link swapped to another incident was read where the checked file's mode
 * had been taken, and a path over 512 bytes could not be opened at all.
 * And a process that opened a file as root and then gave root up can let
 * SQLite read it only through the descriptor it holds.
 *
 * The "sptd-fd" VFS opens the main database as the descriptor named in
 * its file name ("fd:N").  Read-only (a reader): reads are pread(2) on
 * it, nothing is written, locks are not needed (the incident is opened
 * immutable).  Read-write (an update's private copy, which no other
 * process opens; journal in memory, exclusive locking): pread and pwrite,
 * ftruncate, fdatasync, and locks that always succeed.  No file beside a
 * descriptor is ever opened by name (a journal or WAL of "fd:N" would be
 * made in the working directory): such an open fails.  Everything else
 * (temporary files of the sorter, randomness, time) goes to the default
 * VFS. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store-local.h"

struct fd_file {
	sqlite3_file base;   /* first: SQLite's view */
	int fd;              /* not ours: the store keeps and closes it */
	int rw;              /* opened read-write (an update's copy) */
};

static int fd_close(sqlite3_file *f)
{
	(void)f;
	return SQLITE_OK;
}

static int fd_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	struct fd_file *p = (struct fd_file *)f;
	size_t got = 0;

	while (got < (size_t)amt) {
		ssize_t n = pread(p->fd, (char *)buf + got, (size_t)amt - got, (off_t)off + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return SQLITE_IOERR_READ;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got < (size_t)amt) {
		/* SQLite's contract: the rest zeroed */
		memset((char *)buf + got, 0, (size_t)amt - got);
		return SQLITE_IOERR_SHORT_READ;
	}
	return SQLITE_OK;
}

static int fd_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	struct fd_file *p = (struct fd_file *)f;
	size_t done = 0;

	if (!p->rw)
		return SQLITE_READONLY;
	while (done < (size_t)amt) {
		ssize_t n = pwrite(p->fd, (const char *)buf + done, (size_t)amt - done,
		                   (off_t)off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == ENOSPC || errno == EDQUOT))
			return SQLITE_FULL;
		if (n <= 0)
			return SQLITE_IOERR_WRITE;
		done += (size_t)n;
	}
	return SQLITE_OK;
}

static int fd_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct fd_file *p = (struct fd_file *)f;

	if (!p->rw)
		return SQLITE_READONLY;
	return ftruncate(p->fd, (off_t)size) == 0 ? SQLITE_OK : SQLITE_IOERR_TRUNCATE;
}

static int fd_sync(sqlite3_file *f, int flags)
{
	struct fd_file *p = (struct fd_file *)f;

	(void)flags;
	if (!p->rw)
		return SQLITE_OK;
	return fdatasync(p->fd) == 0 ? SQLITE_OK : SQLITE_IOERR_FSYNC;
}

static int fd_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct stat sb;

	if (fstat(((struct fd_file *)f)->fd, &sb) != 0)
		return SQLITE_IOERR_FSTAT;
	*size = (sqlite3_int64)sb.st_size;
	return SQLITE_OK;
}

static int fd_lock(sqlite3_file *f, int level)
{
	/* read-only: shared locks for reading, never one that would let a
	 * write in; read-write: a private copy, no one else to exclude */
	return ((struct fd_file *)f)->rw || level <= SQLITE_LOCK_SHARED ? SQLITE_OK
	                                                                : SQLITE_READONLY;
}

static int fd_unlock(sqlite3_file *f, int level)
{
	(void)f, (void)level;
	return SQLITE_OK;
}

static int fd_reserved(sqlite3_file *f, int *out)
{
	(void)f;
	*out = 0;
	return SQLITE_OK;
}

static int fd_control(sqlite3_file *f, int op, void *arg)
{
	(void)f, (void)op, (void)arg;
	return SQLITE_NOTFOUND;
}

static int fd_sector(sqlite3_file *f)
{
	(void)f;
	return 4096;
}

static int fd_chars(sqlite3_file *f)
{
	return ((struct fd_file *)f)->rw ? 0 : SQLITE_IOCAP_IMMUTABLE;
}

static const sqlite3_io_methods fd_methods = {
	.iVersion = 1,
	.xClose = fd_close,
	.xRead = fd_read,
	.xWrite = fd_write,
	.xTruncate = fd_truncate,
	.xSync = fd_sync,
	.xFileSize = fd_size,
	.xLock = fd_lock,
	.xUnlock = fd_unlock,
	.xCheckReservedLock = fd_reserved,
	.xFileControl = fd_control,
	.xSectorSize = fd_sector,
	.xDeviceCharacteristics = fd_chars,
};

static sqlite3_vfs fd_vfs;

/* "fd:N" of the main database: that descriptor; anything else (the
 * sorter's temporary files) the default VFS's. */
static int fdvfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
                      int *out_flags)
{
	sqlite3_vfs *def = vfs->pAppData;
	struct fd_file *p = (struct fd_file *)file;
	char *end;
	long fd;

	p->base.pMethods = NULL;
	if (!(flags & SQLITE_OPEN_MAIN_DB)) {
		/* nothing beside a descriptor (a journal, a WAL) by name */
		if (name && strncmp(name, "fd:", 3) == 0)
			return SQLITE_CANTOPEN;
		return def->xOpen(def, name, file, flags, out_flags);
	}
	if (!name || strncmp(name, "fd:", 3) != 0)
		return SQLITE_CANTOPEN;
	errno = 0;
	fd = strtol(name + 3, &end, 10);
	if (errno || *end || fd < 0 || fd > 0x7fffffff || (flags & SQLITE_OPEN_CREATE))
		return SQLITE_CANTOPEN;
	p->fd = (int)fd;
	p->rw = (flags & SQLITE_OPEN_READWRITE) != 0;
	p->base.pMethods = &fd_methods;
	if (out_flags)
		*out_flags = p->rw ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
	return SQLITE_OK;
}

static int fdvfs_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
	sqlite3_vfs *def = vfs->pAppData;

	/* nothing beside a descriptor exists to delete */
	if (name && strncmp(name, "fd:", 3) == 0)
		return SQLITE_IOERR_DELETE_NOENT;
	return def->xDelete(def, name, sync);
}

static int fdvfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	sqlite3_vfs *def = vfs->pAppData;

	if (name && strncmp(name, "fd:", 3) == 0) {
		*out = 0;   /* no journal, no WAL beside a descriptor */
		return SQLITE_OK;
	}
	return def->xAccess(def, name, flags, out);
}

static int fdvfs_fullpath(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	sqlite3_vfs *def = vfs->pAppData;

	if (name && strncmp(name, "fd:", 3) == 0) {
		/* as it is: never resolved to a path */
		if ((int)strlen(name) + 1 > n)
			return SQLITE_CANTOPEN;
		memcpy(out, name, strlen(name) + 1);
		return SQLITE_OK;
	}
	return def->xFullPathname(def, name, n, out);
}

static int fdvfs_random(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *def = vfs->pAppData;

	return def->xRandomness(def, n, out);
}

static int fdvfs_sleep(sqlite3_vfs *vfs, int us)
{
	sqlite3_vfs *def = vfs->pAppData;

	return def->xSleep(def, us);
}

static int fdvfs_time(sqlite3_vfs *vfs, double *out)
{
	sqlite3_vfs *def = vfs->pAppData;

	return def->xCurrentTime(def, out);
}

static int fdvfs_error(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *def = vfs->pAppData;

	return def->xGetLastError ? def->xGetLastError(def, n, out) : 0;
}

static int fdvfs_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	sqlite3_vfs *def = vfs->pAppData;

	if (def->iVersion >= 2 && def->xCurrentTimeInt64)
		return def->xCurrentTimeInt64(def, out);
	{
		double d;
		int rc = def->xCurrentTime(def, &d);

		*out = (sqlite3_int64)(d * 86400000.0);
		return rc;
	}
}

static int fd_vfs_ok;

static void fdvfs_register(void)
{
	sqlite3_vfs *def = sqlite3_vfs_find(NULL);

	if (!def)
		return;
	fd_vfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = def->szOsFile > (int)sizeof(struct fd_file) ? def->szOsFile
		                                                        : (int)sizeof(struct fd_file),
		.mxPathname = def->mxPathname,
		.zName = "sptd-fd",
		.pAppData = def,
		.xOpen = fdvfs_open,
		.xDelete = fdvfs_delete,
		.xAccess = fdvfs_access,
		.xFullPathname = fdvfs_fullpath,
		.xRandomness = fdvfs_random,
		.xSleep = fdvfs_sleep,
		.xCurrentTime = fdvfs_time,
		.xGetLastError = fdvfs_error,
		.xCurrentTimeInt64 = fdvfs_time64,
	};
	fd_vfs_ok = sqlite3_vfs_register(&fd_vfs, 0) == SQLITE_OK;
}

const char *sptd_store_fdvfs(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fdvfs_register);
	return fd_vfs_ok ? "sptd-fd" : NULL;
}
