/* newfile.c — writing a new file the safe way: beside its final name, then
 * renamed into place.
 *
 * sysptd runs as root and writes into directories that other users may
 * write too (an export into /tmp, a decode next to a copied incident).  A
 * predictable temporary name there is an invitation: a user plants a
 * symlink at "FILE.tmp" to /etc/shadow and root's fopen() truncates the
 * victim.  So every file sysptd writes is created with O_CREAT | O_EXCL |
 * O_NOFOLLOW under a name with a random part (mkostemp's way) relative to
 * a descriptor of its directory, written through that descriptor, fsynced,
 * and renamed over the final name (rename replaces a symlink planted there;
 * it never writes through one), then the directory is fsynced.  A crash
 * leaves at most a "NAME.tmp.PID.XXXXXX" file, which the writer holds an
 * flock() on while it lives, so a cleaner can tell a stale one from one
 * being written (sptd_col_newfile_stale). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sptd_col_base.h"

/* Random letters for a temporary name (getrandom, else time and pid). */
static void random_suffix(char *out, size_t n)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char bytes[16];
	struct timespec ts;

	if (n > sizeof(bytes))
		n = sizeof(bytes);
	if (getrandom(bytes, n, GRND_NONBLOCK) != (ssize_t)n) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (size_t i = 0; i < n; i++)
			bytes[i] = (unsigned char)((uint64_t)ts.tv_nsec >> (i * 5) ^ (uint64_t)getpid() >> i);
	}
	for (size_t i = 0; i < n; i++)
		out[i] = abc[bytes[i] % (sizeof(abc) - 1)];
	out[n] = '\0';
}

/* Follow @dir as the kernel would, but refuse a symbolic link that
 * neither root nor the user who ran sudo owns: root writing an export to
 * "~user/exports/x.json" where that user had made exports a link to
 * /root replaced /root's files (audit of 2026-11-27).  The directory
 * reached is in *@sb.  0, -EPERM (said on stderr) or -errno. */
static int check_dir_links(const char *dir, struct stat *sb)
{
	char cur[PATH_MAX], rest[PATH_MAX], link[PATH_MAX], next[PATH_MAX];
	struct sptd_col_user user;
	long sudo_uid = -1;
	int hops = 0;

	if (geteuid() != 0)
		return stat(dir, sb) == 0 ? 0 : -errno;   /* the kernel's rules are the user's */
	if (sptd_col_privs_target(&user) == 0 && user.from_sudo)
		sudo_uid = (long)user.uid;
	if (snprintf(rest, sizeof(rest), "%s", dir) >= (int)sizeof(rest))
		return -ENAMETOOLONG;
	snprintf(cur, sizeof(cur), "%s", rest[0] == '/' ? "" : ".");
	while (rest[0]) {
		char *p = rest, *slash;
		struct stat lsb;
		ssize_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		if (snprintf(next, sizeof(next), "%s/%s", cur, p) >= (int)sizeof(next))
			return -ENAMETOOLONG;
		memmove(rest, slash ? slash + 1 : p + strlen(p), strlen(slash ? slash + 1 : "") + 1);
		if (lstat(next, &lsb) != 0)
			return -errno;
		if (!S_ISLNK(lsb.st_mode)) {
			snprintf(cur, sizeof(cur), "%s", next);
			continue;
		}
		if (lsb.st_uid != 0 && (long)lsb.st_uid != sudo_uid) {
			fprintf(stderr, "sysptd: %s is a link owned by uid %u: not followed as root "
			        "(write to the directory it names instead)\n", next, (unsigned)lsb.st_uid);
			return -EPERM;
		}
		if (++hops > 40)
			return -ELOOP;
		n = readlink(next, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		if (snprintf(next, sizeof(next), "%s/%s", link, rest) >= (int)sizeof(next))
			return -ENAMETOOLONG;
		snprintf(rest, sizeof(rest), "%s", next);
		if (link[0] == '/')
			cur[0] = '\0';
	}
	return stat(cur[0] ? cur : "/", sb) == 0 ? 0 : -errno;
}

/* Split @path into its directory (opened into *@dirfd) and last name. */
static int open_parent(const char *path, int *dirfd, const char **name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	*name = slash ? slash + 1 : path;
	if (!**name || strcmp(*name, ".") == 0 || strcmp(*name, "..") == 0)
		return -EISDIR;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	{
		struct stat want, got;
		int ret = check_dir_links(dir, &want);

		if (ret < 0)
			return ret;
		*dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*dirfd < 0)
			return -errno;
		/* the directory checked, not one a link swapped in since */
		if (fstat(*dirfd, &got) != 0 || got.st_dev != want.st_dev ||
		    got.st_ino != want.st_ino) {
			close(*dirfd);
			*dirfd = -1;
			return -EPERM;
		}
		return 0;
	}
}

int sptd_col_newfile_open(struct sptd_col_newfile *nf, int dirfd, const char *path,
                          mode_t mode)
{
	const char *name;
	char rnd[8];
	int ret;

	if (!nf)
		return -EINVAL;
	memset(nf, 0, sizeof(*nf));
	nf->fd = nf->dirfd = -1;
	if (!path || !*path || (dirfd < 0 && dirfd != AT_FDCWD) || (mode & ~07777))
		return -EINVAL;
	if (dirfd >= 0) {
		name = path;
		if (strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			return -EINVAL;
		nf->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
		if (nf->dirfd < 0)
			return -errno;
	} else {
		ret = open_parent(path, &nf->dirfd, &name);
		if (ret < 0)
			return ret;
	}
	if (strlen(name) >= sizeof(nf->name)) {
		ret = -ENAMETOOLONG;
		goto fail;
	}
	snprintf(nf->name, sizeof(nf->name), "%s", name);
	for (int tries = 0; tries < 100; tries++) {
		random_suffix(rnd, 6);
		/* keep the temporary name within NAME_MAX however long NAME is */
		snprintf(nf->tmp, sizeof(nf->tmp), "%.200s.tmp.%d.%s", name, (int)getpid(), rnd);
		nf->fd = openat(nf->dirfd, nf->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
		                                    O_NOCTTY | O_CLOEXEC, mode & 0777);
		if (nf->fd >= 0 || errno != EEXIST)
			break;
	}
	if (nf->fd < 0) {
		ret = -errno;
		goto fail;
	}
	/* the mode asked for, whatever the umask; the lock says "being written" */
	if (fchmod(nf->fd, mode) < 0 || flock(nf->fd, LOCK_EX | LOCK_NB) < 0) {
		ret = -errno;
		goto fail;
	}
	return 0;
fail:
	sptd_col_newfile_fini(nf);
	return ret;
}

int sptd_col_newfile_commit(struct sptd_col_newfile *nf, int flags)
{
	int ret;

	if (!nf || nf->fd < 0 || nf->dirfd < 0 || (flags & ~SPTD_COL_NEWFILE_NOREPLACE))
		return -EINVAL;
	if (fsync(nf->fd) < 0)
		return errno == EDQUOT ? -ENOSPC : -errno;
	if (flags & SPTD_COL_NEWFILE_NOREPLACE) {
		ret = renameat2(nf->dirfd, nf->tmp, nf->dirfd, nf->name, RENAME_NOREPLACE);
		/* filesystems without RENAME_NOREPLACE: link() refuses as well */
		if (ret < 0 && (errno == EINVAL || errno == ENOSYS)) {
			ret = linkat(nf->dirfd, nf->tmp, nf->dirfd, nf->name, 0);
			if (ret == 0)
				unlinkat(nf->dirfd, nf->tmp, 0);
		}
	} else {
		ret = renameat(nf->dirfd, nf->tmp, nf->dirfd, nf->name);
	}
	if (ret < 0)
		return -errno;
	nf->tmp[0] = '\0';   /* nothing left to remove */
	nf->committed = 1;
	/* the new name durable; the file is in place even if this fails */
	return fsync(nf->dirfd) < 0 ? -errno : 0;
}

void sptd_col_newfile_fini(struct sptd_col_newfile *nf)
{
	if (!nf)
		return;
	if (nf->fd >= 0 && nf->dirfd >= 0 && nf->tmp[0])
		unlinkat(nf->dirfd, nf->tmp, 0);
	if (nf->fd >= 0)
		close(nf->fd);
	if (nf->dirfd >= 0)
		close(nf->dirfd);
	nf->fd = nf->dirfd = -1;
	nf->tmp[0] = '\0';
}

int sptd_col_newfile_stale(int dirfd, const char *name)
{
	const char *tmp, *p;
	struct stat sb;
	long pid;
	int fd, ret;

	if (dirfd < 0 || !name)
		return -EINVAL;
	/* NAME.tmp.PID.XXXXXX: this file's own naming, and nothing else */
	tmp = strstr(name, ".tmp.");
	if (!tmp || tmp == name)
		return 0;
	p = tmp + 5;
	if (!(*p >= '1' && *p <= '9'))
		return 0;
	pid = strtol(p, (char **)&p, 10);
	if (*p != '.' || strlen(p + 1) != 6)
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = 0;
	/* A live writer holds the lock from just after it created the file
	 * until it renamed or removed it; in that first instant the file is
	 * new and its writer alive.  So: not locked, and its writer gone (or
	 * the file untouched for a minute, should the pid have been reused). */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
	    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
	    ((kill((pid_t)pid, 0) < 0 && errno == ESRCH) || time(NULL) - sb.st_mtime > 60))
		ret = unlinkat(dirfd, name, 0) == 0 ? 1 : -errno;
	close(fd);
	return ret;
}
