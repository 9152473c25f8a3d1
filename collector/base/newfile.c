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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* Follow @dir as the kernel would, but refuse a symbolic link that root
 * does not own: root writing an export to "~user/exports/x.json" where
 * that user had made exports a link to /root replaced /root's files
 * (audit of 2026-11-27; the user who ran sudo is no exception: issue 28).
 * The directory reached is in *@sb.  0, -EPERM (said on stderr) or
 * -errno (said unless @quiet). */
static int check_dir_links(const char *dir, struct stat *sb, int quiet)
{
	char cur[PATH_MAX], rest[PATH_MAX], link[PATH_MAX], next[PATH_MAX];
	int hops = 0;

	if (geteuid() != 0)
		return stat(dir, sb) == 0 ? 0 : -errno;   /* the kernel's rules are the user's */
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
		if (lsb.st_uid != 0) {
			if (!quiet)
				fprintf(stderr, "sysptd: %s is a link owned by uid %u: not followed "
				        "as root (write to the directory it names instead)\n", next,
				        (unsigned)lsb.st_uid);
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

/* Open directory @dir in a child that has become @u (sptd_col_privs_drop):
 * the path resolved with that user's rights, links and all, and the
 * directory one they may write.  The descriptor comes back over a socket
 * (SCM_RIGHTS).  0 and *@dirfd, or -errno (-EACCES: not theirs to write). */
static int open_dir_as(const char *dir, const struct sptd_col_user *u, int *dirfd)
{
	char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int sv[2], status, ret;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	if (pid == 0) {
		int fd = -1, err = 0;

		close(sv[0]);
		if (sptd_col_privs_drop(u) < 0)
			err = EPERM;
		else if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			err = errno;
		else if (faccessat(fd, ".", W_OK | X_OK, 0) < 0)
			err = errno;
		/* the answer: one byte, the errno, with the descriptor when 0 */
		byte = (char)err;
		if (err == 0) {
			memset(ctl, 0, sizeof(ctl));
			msg.msg_control = ctl;
			msg.msg_controllen = sizeof(ctl);
			cm = CMSG_FIRSTHDR(&msg);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		}
		_exit(sendmsg(sv[1], &msg, 0) == 1 ? 0 : 1);
	}
	close(sv[1]);
	memset(ctl, 0, sizeof(ctl));
	msg.msg_control = ctl;
	msg.msg_controllen = sizeof(ctl);
	ret = recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC) == 1 ? 0 : -EIO;
	cm = ret == 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (ret == 0 && byte)
		ret = -(unsigned char)byte;
	else if (ret == 0 && cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	         cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(dirfd, CMSG_DATA(cm), sizeof(int));
	else if (ret == 0)
		ret = -EIO;
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return ret;
}

/* sptd_col_newfile_dir_open, saying why it refuses unless @quiet. */
static int dir_open(const char *dir, int flags, int quiet)
{
	struct sptd_col_user user;
	struct stat want, got;
	int fd = -1, ret;

	if (!dir || !*dir || (flags & ~SPTD_COL_NEWFILE_DIR_UPDATE))
		return -EINVAL;
	/* through sudo, a new file goes only where its user could put it */
	if (geteuid() == 0 && !(flags & SPTD_COL_NEWFILE_DIR_UPDATE) &&
	    sptd_col_privs_target(&user) == 0 && user.from_sudo) {
		ret = open_dir_as(dir, &user, &fd);
		if ((ret == -EACCES || ret == -EPERM) && !quiet)
			fprintf(stderr, "sysptd: %s: uid %u (who ran sudo) may not write there: "
			        "not written as root (write where you may, or run it from a root "
			        "login)\n", dir, (unsigned)user.uid);
		return ret < 0 ? ret : fd;
	}
	ret = check_dir_links(dir, &want, quiet);
	if (ret < 0)
		return ret;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the directory checked, not one a link swapped in since */
	if (fstat(fd, &got) != 0 || got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int sptd_col_newfile_dir_open(const char *dir, int flags)
{
	return dir_open(dir, flags, 0);
}

int sptd_col_newfile_links_ok(const char *path)
{
	struct stat sb;

	if (!path || !*path)
		return -EINVAL;
	return check_dir_links(path, &sb, 0);
}

/* Split @path into its directory (opened into *@dirfd) and last name. */
/* @path's directory (".", "/" or what comes before its last '/') into
 * @dir, its last component into *@name: 0, -EISDIR (no name, "." or
 * ".."), -ENAMETOOLONG. */
static int path_split(const char *path, char *dir, size_t dirlen, const char **name)
{
	const char *slash = strrchr(path, '/');

	*name = slash ? slash + 1 : path;
	if (!**name || strcmp(*name, ".") == 0 || strcmp(*name, "..") == 0)
		return -EISDIR;
	if (!slash)
		snprintf(dir, dirlen, ".");
	else if (slash == path)
		snprintf(dir, dirlen, "/");
	else if (snprintf(dir, dirlen, "%.*s", (int)(slash - path), path) >= (int)dirlen)
		return -ENAMETOOLONG;
	return 0;
}

static int open_parent(const char *path, int *dirfd, const char **name)
{
	char dir[PATH_MAX];
	int ret = path_split(path, dir, sizeof(dir), name);

	if (ret < 0)
		return ret;
	*dirfd = sptd_col_newfile_dir_open(dir, 0);
	return *dirfd < 0 ? *dirfd : 0;
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

/* A temporary file of ours is owned by this process's user, or, as root
 * through sudo, by the user who ran it (an export is given to them). */
static int owner_is_us(uid_t uid)
{
	struct sptd_col_user user;

	if (uid == geteuid())
		return 1;
	return geteuid() == 0 && sptd_col_privs_target(&user) == 0 && user.from_sudo &&
	       uid == user.uid;
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
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && owner_is_us(sb.st_uid) &&
	    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
	    ((kill((pid_t)pid, 0) < 0 && errno == ESRCH) || time(NULL) - sb.st_mtime > 60))
		ret = unlinkat(dirfd, name, 0) == 0 ? 1 : -errno;
	close(fd);
	return ret;
}

int sptd_col_newfile_sweep(const char *path, int flags)
{
	char dir[PATH_MAX];
	const char *name;
	struct dirent *de;
	size_t len;
	int dfd, removed = 0, ret;
	DIR *d;

	if (!path || !*path)
		return -EINVAL;
	ret = path_split(path, dir, sizeof(dir), &name);
	if (ret < 0)
		return ret;
	len = strlen(name);
	/* the directory as the writer would open it: never one that the
	 * user who ran sudo could not write, nor through their links */
	dfd = dir_open(dir, flags, 1);   /* refused: the writer will say why */
	if (dfd < 0)
		return dfd;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -ENOMEM;
	}
	/* "NAME.tmp.": sptd_col_newfile_stale checks the rest of the naming */
	while ((de = readdir(d)))
		if (strncmp(de->d_name, name, len) == 0 && strncmp(de->d_name + len, ".tmp.", 5) == 0 &&
		    (ret = sptd_col_newfile_stale(dirfd(d), de->d_name)) == 1)
			removed++;
	closedir(d);
	return removed;
}
