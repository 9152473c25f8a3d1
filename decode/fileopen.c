/* fileopen.c — opening a file that someone else controls.
 *
 * sysptd reads files that users own and can change at any moment: the
 * executables and libraries their processes mapped, debug files, uprobe
 * targets, images in an incident.  A path is only a name: between the
 * recording and the open it may have become a FIFO (open() blocks until a
 * writer comes, for ever), a device (/dev/zero never ends), a symlink to a
 * file the user could not read, or a sparse file of a terabyte.  Every
 * such open in sysptd goes through sptd_dec_file_open(): O_NONBLOCK so
 * that opening a FIFO or device returns at once, O_NOCTTY, O_CLOEXEC,
 * optionally O_NOFOLLOW, then fstat() of what was really opened: only a
 * regular file of a sane size is handed on. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sptd_dec.h"

int sptd_dec_file_open(const char *path, int flags, struct stat *sb)
{
	struct stat own;
	int fd, fl, ret;

	if (!path || !*path || (flags & ~(SPTD_DEC_OPEN_NOFOLLOW | SPTD_DEC_OPEN_ANY_SIZE)))
		return -EINVAL;
	if (!sb)
		sb = &own;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
	                (flags & SPTD_DEC_OPEN_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -errno;
	if (fstat(fd, sb) < 0) {
		ret = -errno;
		goto fail;
	}
	if (!S_ISREG(sb->st_mode)) {
		ret = S_ISDIR(sb->st_mode) ? -EISDIR : -ENXIO;
		goto fail;
	}
	if (!(flags & SPTD_DEC_OPEN_ANY_SIZE) && (uint64_t)sb->st_size > SPTD_DEC_FILE_MAX) {
		ret = -EFBIG;
		goto fail;
	}
	/* a regular file: reads block as usual (O_NONBLOCK only guarded open) */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	return ret;
}

int sptd_dec_file_open_inode(const char *path, uint64_t dev, uint64_t ino, struct stat *sb)
{
	char self[64];
	struct stat own, at;
	int where, fd;

	if (!path || !*path)
		return -EINVAL;
	if (!sb)
		sb = &own;
	/* O_PATH opens nothing (a FIFO or device is not woken, no read
	 * permission is used): it only pins the inode the path names now */
	where = open(path, O_PATH | O_CLOEXEC);
	if (where < 0)
		return -errno;
	if (fstat(where, &at) < 0) {
		fd = -errno;
		goto out;
	}
	if ((uint64_t)at.st_ino != ino || (dev != 0 && (uint64_t)at.st_dev != dev)) {
		fd = -ESTALE;
		goto out;
	}
	/* reopening the O_PATH descriptor opens that inode, whatever the
	 * path names by now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", where);
	fd = sptd_dec_file_open(self, 0, sb);
	if (fd >= 0 && (sb->st_ino != at.st_ino || sb->st_dev != at.st_dev)) {
		close(fd);
		fd = -ESTALE;
	}
out:
	close(where);
	return fd;
}

const char *sptd_dec_file_strerror(int err)
{
	switch (err) {
	case -ENXIO:
		return "not a regular file (a FIFO, socket or device)";
	case -EISDIR:
		return "a directory, not a file";
	case -ELOOP:
		return "a symbolic link (not followed)";
	case -EFBIG:
		return "larger than sysptd reads (4 GiB)";
	default:
		return strerror(err < 0 ? -err : err);
	}
}
