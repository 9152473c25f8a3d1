/* store_tmp.c — the temporary file an incident is written in, beside its
 * final name, and the rename that publishes it.
 *
 * A new incident (sptd_store_create) and an updated one (sptd_store_open
 * for writing: sysptd decode) are both written into "PATH.tmp.PID.XXXXXX"
 * and renamed over PATH on commit, so PATH is always a whole incident: the
 * old one or the new one, never a half-written or half-updated file, and
 * never a hot journal for readers to trip over.  The temporary file is
 * created O_CREAT | O_EXCL | O_NOFOLLOW under a random name relative to a
 * descriptor of the directory (a symlink planted at any name is never
 * written through), and flock()ed while it lives: a cleaner removes only
 * the ones whose writer is gone (collector/base's sptd_col_newfile_stale
 * knows this naming).  Before the rename the name is checked to still be
 * our file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store-local.h"

/* Who renames the temporary files, when not the store itself (a command
 * whose parsing runs in a child that gave up root: the parent renames). */
static sptd_store_handoff_fn handoff;

void sptd_store_set_handoff(sptd_store_handoff_fn fn)
{
	handoff = fn;
}

/* Who opens the temporary file's directory, when not open(2) here. */
static sptd_store_dir_open_fn dir_open;

void sptd_store_set_dir_open(sptd_store_dir_open_fn fn)
{
	dir_open = fn;
}

/* The last component of @path. */
static const char *last_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Six random letters (getrandom, else clock and pid). */
static void random_letters(char out[7])
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char bytes[6];
	struct timespec ts;

	if (getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != (ssize_t)sizeof(bytes)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (size_t i = 0; i < sizeof(bytes); i++)
			bytes[i] = (unsigned char)((uint64_t)ts.tv_nsec >> (i * 5) ^ (uint64_t)getpid());
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		out[i] = abc[bytes[i] % (sizeof(abc) - 1)];
	out[6] = '\0';
}

int sptd_store_tmp_create(struct sptd_store *st, int update)
{
	char dir[PATH_MAX], rnd[7];
	const char *name = last_name(st->path);
	int ret;

	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return sptd_store_fail(st, -EISDIR, "cannot create %s: not a file name", st->path);
	if (name == st->path)
		snprintf(dir, sizeof(dir), ".");
	else if (name == st->path + 1)
		snprintf(dir, sizeof(dir), "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(name - st->path - 1), st->path) >=
	         (int)sizeof(dir))
		return sptd_store_fail(st, -ENAMETOOLONG, "cannot create %s: path too long", st->path);
	if (dir_open) {
		st->dir_fd = dir_open(dir, update);
		ret = st->dir_fd;
	} else {
		st->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ret = -errno;
	}
	if (st->dir_fd < 0) {
		st->dir_fd = -1;
		return sptd_store_fail(st, ret, "cannot create %s: %s", st->path,
		                       ret == -ENOENT ? "no such directory" : strerror(-ret));
	}
	for (int tries = 0; tries < 100; tries++) {
		free(st->tmp_path);
		random_letters(rnd);
		if (asprintf(&st->tmp_path, "%s.tmp.%d.%s", st->path, (int)getpid(), rnd) < 0) {
			st->tmp_path = NULL;
			return sptd_store_fail(st, -ENOMEM, "creating %s: out of memory", st->path);
		}
		/* 0600 whatever the umask: fchmod below; never through a symlink */
		st->tmp_fd = openat(st->dir_fd, last_name(st->tmp_path),
		                    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		                    0600);
		if (st->tmp_fd >= 0 || errno != EEXIST)
			break;
	}
	if (st->tmp_fd < 0) {
		ret = -errno;
		return sptd_store_fail(st, ret, "cannot create %s: %s", st->tmp_path, strerror(-ret));
	}
	st->tmp_live = 1; /* from here on destroy removes the temporary file */
	if (fchmod(st->tmp_fd, 0600) < 0 || flock(st->tmp_fd, LOCK_EX | LOCK_NB) < 0) {
		ret = -errno;
		return sptd_store_fail(st, ret, "cannot set up %s: %s", st->tmp_path, strerror(-ret));
	}
	if (handoff && handoff(SPTD_STORE_HANDOFF_CREATED, st->tmp_path, st->path, 0) < 0)
		return sptd_store_fail(st, -EIO, "cannot announce %s to the parent process",
		                       st->tmp_path);
	return 0;
}

int sptd_store_tmp_copy(struct sptd_store *st, int src, const struct stat *sb)
{
	char buf[1 << 16];
	off_t left = sb->st_size;
	int ret = 0;

	/* copy_file_range: a reflink or in-kernel copy where the filesystem
	 * can; plain reads and writes where it cannot */
	while (left > 0) {
		ssize_t n = copy_file_range(src, NULL, st->tmp_fd, NULL, (size_t)left, 0);

		if (n <= 0)
			break;
		left -= n;
	}
	if (left > 0 && lseek(src, sb->st_size - left, SEEK_SET) >= 0 &&
	    lseek(st->tmp_fd, sb->st_size - left, SEEK_SET) >= 0) {
		while (left > 0 && ret == 0) {
			ssize_t n = read(src, buf, sizeof(buf));

			if (n <= 0) {
				ret = n < 0 ? -errno : -EIO;
				break;
			}
			for (ssize_t done = 0; done < n && ret == 0;) {
				ssize_t w = write(st->tmp_fd, buf + done, (size_t)(n - done));

				if (w < 0)
					ret = errno == EDQUOT ? -ENOSPC : -errno;
				else
					done += w;
			}
			left -= n;
		}
	}
	if (ret == 0 && left > 0)
		ret = -EIO;
	if (ret < 0)
		return sptd_store_fail(st, ret, "copying %s to update it: %s", st->path,
		                       ret == -ENOSPC ? "disk full" : strerror(-ret));
	/* the update replaces the incident: keep its owner and mode */
	if (fchown(st->tmp_fd, sb->st_uid, sb->st_gid) < 0 && errno != EPERM)
		return sptd_store_fail(st, -errno, "cannot chown %s: %s", st->tmp_path, strerror(errno));
	if (fchmod(st->tmp_fd, sb->st_mode & 07777) < 0)
		return sptd_store_fail(st, -errno, "cannot chmod %s: %s", st->tmp_path, strerror(errno));
	return 0;
}

int sptd_store_tmp_publish(struct sptd_store *st, int replace)
{
	const char *tmp = last_name(st->tmp_path), *name = last_name(st->path);
	struct stat ours, there;
	int ret;

	if (fsync(st->tmp_fd) < 0) {
		ret = errno == EDQUOT ? -ENOSPC : -errno;
		return sptd_store_fail(st, ret, "syncing %s: %s: nothing was written to %s",
		                       st->tmp_path, strerror(-ret), st->path);
	}
	/* handed over: the parent (still root) checks and renames it */
	if (handoff) {
		ret = handoff(SPTD_STORE_HANDOFF_READY, st->tmp_path, st->path, replace);
		if (ret < 0)
			return sptd_store_fail(st, ret, "cannot hand %s over to the parent process",
			                       st->tmp_path);
		if (ret == 1) {
			st->tmp_live = 0;   /* the parent renames it (or removes it) */
			return 0;
		}
	}
	/* still our file under that name (a user cannot swap it in a sane
	 * directory; in one they own, this is where it would show) */
	if (fstat(st->tmp_fd, &ours) < 0 ||
	    fstatat(st->dir_fd, tmp, &there, AT_SYMLINK_NOFOLLOW) < 0 ||
	    ours.st_dev != there.st_dev || ours.st_ino != there.st_ino)
		return sptd_store_fail(st, -ESTALE, "%s was replaced while it was written: "
		                       "nothing was written to %s (is its directory writable "
		                       "by others?)", st->tmp_path, st->path);
	if (replace) {
		ret = renameat(st->dir_fd, tmp, st->dir_fd, name) < 0 ? -errno : 0;
	} else {
		ret = renameat2(st->dir_fd, tmp, st->dir_fd, name, RENAME_NOREPLACE) < 0 ? -errno : 0;
		/* filesystems without RENAME_NOREPLACE: link() refuses too */
		if (ret == -EINVAL || ret == -ENOSYS) {
			ret = linkat(st->dir_fd, tmp, st->dir_fd, name, 0) < 0 ? -errno : 0;
			if (ret == 0)
				unlinkat(st->dir_fd, tmp, 0);
		}
	}
	if (ret < 0)
		return sptd_store_fail(st, ret, "cannot rename %s to %s: %s%s", st->tmp_path,
		                       st->path, strerror(-ret), ret == -EEXIST ? " (it appeared "
		                       "while the incident was written; nothing was replaced)" : "");
	st->tmp_live = 0;
	/* The file is in place; a directory that cannot be synced is reported
	 * but the incident stays (removing it now would lose it). */
	if (fsync(st->dir_fd) < 0)
		return sptd_store_fail(st, -errno, "syncing the directory of %s: %s", st->path,
		                       strerror(errno));
	return 0;
}

void sptd_store_tmp_discard(struct sptd_store *st)
{
	if (st->tmp_live && st->dir_fd >= 0 && st->tmp_path)
		unlinkat(st->dir_fd, last_name(st->tmp_path), 0);
	st->tmp_live = 0;
	if (st->tmp_fd >= 0)
		close(st->tmp_fd);
	if (st->dir_fd >= 0)
		close(st->dir_fd);
	st->tmp_fd = st->dir_fd = -1;
}
