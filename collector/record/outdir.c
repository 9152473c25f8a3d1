/* outdir.c — the service's output directory.
 *
 * Divisions: checking and opening it (no symlink; root's and writable by
 * root alone, the directories above it too, unless --unsafe-output) · the
 * state file (the incident sequence and the manifest of what this service
 * wrote) · names · stale temporary files.
 *
 * Everything is done relative to one descriptor of the directory, opened
 * once: a directory renamed or replaced by a symlink afterwards changes
 * nothing.  SQLite still needs a path for the incident it writes; the
 * checks make that path one nobody but root can redirect. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "outdir-local.h"
#include "record-local.h"

/* ---- checking and opening ---------------------------------------------------- */

/* Say why @path is refused, and the way out. */
static int refuse(char *err, size_t errlen, const char *path, const char *why)
{
	snprintf(err, errlen, "--output %s: %s; another user could then replace or "
	         "forge incidents, or make every trigger fail.  Use a directory that "
	         "only root can write (the default /var/lib/sysptd is one), or add "
	         "--unsafe-output to accept that risk", path, why);
	return -EPERM;
}

/* Every directory above @dirfd up to / must be root's (or ours) and either
 * not writable by group and others or sticky (like /tmp: nobody else can
 * then rename what root put there).  0, or -EPERM with @err naming the first
 * one that is not. */
static int check_ancestors(int dirfd, const char *path, char *err, size_t errlen)
{
	struct stat here, up;
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0), ret = 0;

	if (fd < 0 || fstat(fd, &here) < 0) {
		ret = -errno;
		goto out;
	}
	for (int depth = 0; depth < 256; depth++) {
		int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (parent < 0 || fstat(parent, &up) < 0) {
			ret = -errno;
			if (parent >= 0)
				close(parent);
			break;
		}
		close(fd);
		fd = parent;
		if (up.st_dev == here.st_dev && up.st_ino == here.st_ino)
			break;   /* "/" is its own parent */
		if ((up.st_uid != 0 && up.st_uid != geteuid()) ||
		    ((up.st_mode & 022) && !(up.st_mode & S_ISVTX))) {
			char why[160];

			snprintf(why, sizeof(why), "a directory above it (%d level%s up) is %s",
			         depth + 1, depth ? "s" : "", up.st_uid != 0 ?
			         "owned by another user" : "writable by group or others and not sticky");
			ret = refuse(err, errlen, path, why);
			break;
		}
		here = up;
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

int sptd_col_outdir_open(struct sptd_col_outdir *od, const char *path, int unsafe,
                         char *err, size_t errlen)
{
	struct stat sb;
	int ret;

	if (!od)
		return -EINVAL;
	memset(od, 0, sizeof(*od));
	od->dirfd = -1;
	if (!path || !*path || !err)
		return -EINVAL;
	err[0] = '\0';
	if (snprintf(od->path, sizeof(od->path), "%s", path) >= (int)sizeof(od->path)) {
		snprintf(err, errlen, "--output %s: path too long", path);
		return -ENAMETOOLONG;
	}
	if (lstat(path, &sb) < 0 && errno == ENOENT && mkdir(path, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "cannot create output directory %s: %s", path, strerror(-ret));
		return ret;
	}
	od->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (unsafe ? 0 : O_NOFOLLOW));
	if (od->dirfd < 0) {
		ret = -errno;
		if (ret == -ELOOP || (ret == -ENOTDIR && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)))
			return refuse(err, errlen, path, "it is a symbolic link");
		snprintf(err, errlen, "--output %s: %s", path, ret == -ENOTDIR ?
		         "not a directory" : strerror(-ret));
		return ret;
	}
	if (fstat(od->dirfd, &sb) < 0) {
		ret = -errno;
		snprintf(err, errlen, "--output %s: %s", path, strerror(-ret));
		goto fail;
	}
	if (!unsafe) {
		ret = 0;
		if (sb.st_uid != geteuid())
			ret = refuse(err, errlen, path, "it is owned by another user");
		else if (sb.st_mode & 022)
			ret = refuse(err, errlen, path, "it is writable by group or others");
		else
			ret = check_ancestors(od->dirfd, path, err, errlen);
		if (ret < 0)
			goto fail;
	}
	/* one service per output directory: two would race for names */
	if (flock(od->dirfd, LOCK_EX | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(err, errlen, "--output %s: %s", path, ret == -EBUSY ?
		         "another sysptd writes its incidents there; give each its own "
		         "--output" : strerror(-ret));
		goto fail;
	}
	if (faccessat(od->dirfd, ".", W_OK | X_OK, AT_EACCESS) < 0) {
		ret = -errno;
		snprintf(err, errlen, "--output %s is not a writable directory: %s", path,
		         strerror(-ret));
		goto fail;
	}
	ret = sptd_col_outdir_load(od);
	if (ret < 0) {
		snprintf(err, errlen, "--output %s: reading %s: %s", path, SPTD_OUTDIR_STATE,
		         strerror(-ret));
		goto fail;
	}
	sptd_col_outdir_clean(od);
	return 0;
fail:
	sptd_col_outdir_close(od);
	return ret;
}

void sptd_col_outdir_close(struct sptd_col_outdir *od)
{
	if (!od)
		return;
	if (od->dirfd >= 0)
		close(od->dirfd);
	od->dirfd = -1;
	free(od->entries);
	od->entries = NULL;
	od->n = od->cap = 0;
}

/* ---- what a file is ---------------------------------------------------------- */

int sptd_col_outdir_stat(const struct sptd_col_outdir *od, const char *name,
                         struct sptd_col_outdir_file *f)
{
	struct statx sx;

	if (!od || od->dirfd < 0 || !name || !f)
		return -EINVAL;
	if (statx(od->dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
		return -errno;
	f->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	f->ino = (ino_t)sx.stx_ino;
	f->bytes = sx.stx_size;
	f->uid = sx.stx_uid;
	f->regular = S_ISREG(sx.stx_mode);
	/* birth where the filesystem keeps it, else the last change */
	if (sx.stx_mask & STATX_BTIME)
		f->born_ns = (int64_t)sx.stx_btime.tv_sec * 1000000000 + sx.stx_btime.tv_nsec;
	else
		f->born_ns = (int64_t)sx.stx_ctime.tv_sec * 1000000000 + sx.stx_ctime.tv_nsec;
	return 0;
}

/* ---- the state file -------------------------------------------------------------- */

/* Its format, one record per line:
 *   next SEQ                      the sequence of the next incident
 *   incident SEQ NAME DEV INO BYTES   one incident this service wrote
 * Only a regular file of ours that nobody else can write is believed. */

static uint64_t name_seq(const char *name);

/* The largest sequence among the incident names in the directory: a
 * state file lost or reset never makes a name come back. */
static uint64_t scan_max_seq(int dirfd)
{
	struct dirent *de;
	uint64_t max = 0;
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d);   /* a dup shares the offset of every earlier walk */
	while ((de = readdir(d))) {
		uint64_t seq = name_seq(de->d_name);

		if (seq > max)
			max = seq;
	}
	closedir(d);
	return max;
}

static int entry_add(struct sptd_col_outdir *od, const struct sptd_col_outdir_entry *e)
{
	if (od->n == od->cap) {
		size_t cap = od->cap ? od->cap * 2 : 64;
		struct sptd_col_outdir_entry *more = realloc(od->entries, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		od->entries = more;
		od->cap = cap;
	}
	od->entries[od->n++] = *e;
	return 0;
}

int sptd_col_outdir_load(struct sptd_col_outdir *od)
{
	char *line = NULL;
	size_t cap = 0;
	struct stat sb;
	FILE *f = NULL;
	uint64_t max;
	int fd, ret = 0;

	od->next_seq = 1;
	fd = openat(od->dirfd, SPTD_OUTDIR_STATE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	                                          O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT && errno != ELOOP)
		return -errno;
	if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	                (sb.st_mode & 022))) {
		sptd_col_log(LOG_WARNING, "%s/%s is not root's own file: ignored (no incident "
		             "written before is deleted by --keep/--max-disk)", od->path,
		             SPTD_OUTDIR_STATE);
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		f = fdopen(fd, "r");
		if (!f) {
			close(fd);
			return -ENOMEM;
		}
	}
	while (f && ret >= 0 && getline(&line, &cap, f) > 0) {
		struct sptd_col_outdir_entry e = { 0 };
		unsigned long long seq, dev, ino, bytes;
		long long born;
		char name[96];

		if (sscanf(line, "next %llu", &seq) == 1) {
			if (seq > od->next_seq)
				od->next_seq = seq;
			continue;
		}
		if (sscanf(line, "incident %llu %95s %llu %llu %lld %llu", &seq, name, &dev, &ino,
		           &born, &bytes) != 6 || strchr(name, '/') || name_seq(name) != seq)
			continue;   /* not a record of ours: skipped, never acted on */
		e.seq = seq;
		snprintf(e.name, sizeof(e.name), "%s", name);
		e.dev = (dev_t)dev;
		e.ino = (ino_t)ino;
		e.born_ns = born;
		e.bytes = bytes;
		ret = entry_add(od, &e);
	}
	free(line);
	if (f)
		fclose(f);
	max = scan_max_seq(od->dirfd);
	if (max >= od->next_seq)
		od->next_seq = max + 1;
	return ret;
}

int sptd_col_outdir_save(struct sptd_col_outdir *od)
{
	struct sptd_col_newfile nf;
	FILE *f;
	int ret;

	if (!od || od->dirfd < 0)
		return -EINVAL;
	ret = sptd_col_newfile_open(&nf, od->dirfd, SPTD_OUTDIR_STATE, 0600);
	if (ret < 0)
		return ret;
	f = fdopen(dup(nf.fd), "w");
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	fprintf(f, "# sysptd: the incidents this service wrote here, oldest first (seq name "
	        "dev ino birth_ns bytes); --keep and --max-disk delete only these\nnext %"
	        PRIu64 "\n", od->next_seq);
	for (size_t i = 0; i < od->n; i++)
		fprintf(f, "incident %" PRIu64 " %s %llu %llu %" PRId64 " %" PRIu64 "\n",
		        od->entries[i].seq, od->entries[i].name,
		        (unsigned long long)od->entries[i].dev,
		        (unsigned long long)od->entries[i].ino, od->entries[i].born_ns,
		        od->entries[i].bytes);
	ret = fclose(f) == 0 ? 0 : -errno;
	if (ret == 0)
		ret = sptd_col_newfile_commit(&nf, 0);
out:
	sptd_col_newfile_fini(&nf);
	return ret;
}

/* ---- names ---------------------------------------------------------------------- */

/* The sequence of an incident name of ours ("incident-<stamp>-NNNNNN.db"),
 * else 0. */
static uint64_t name_seq(const char *name)
{
	size_t len = strlen(name);
	const char *dash, *p;
	char *end;
	uint64_t seq;

	if (strncmp(name, "incident-", 9) != 0 || len < 13 || strcmp(name + len - 3, ".db") != 0)
		return 0;
	for (dash = name + len - 4; dash > name && *dash != '-'; dash--)
		;
	p = dash + 1;
	if (*dash != '-' || (size_t)(name + len - 3 - p) < SPTD_OUTDIR_SEQ_DIGITS)
		return 0;
	seq = strtoull(p, &end, 10);
	return end == name + len - 3 ? seq : 0;
}

int sptd_col_outdir_next(struct sptd_col_outdir *od, char *buf, size_t len)
{
	time_t t = time(NULL);
	struct stat sb;
	struct tm tm;
	char stamp[32];

	if (!od || od->dirfd < 0 || !buf)
		return -EINVAL;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (int tries = 0; tries < 1000; tries++) {
		char name[96];
		uint64_t seq = od->next_seq++;

		snprintf(name, sizeof(name), "incident-%s-%0*" PRIu64 ".db", stamp,
		         SPTD_OUTDIR_SEQ_DIGITS, seq);
		/* the sequence is ours alone; a name already taken (copied in by
		 * hand?) is skipped, never reused */
		if (fstatat(od->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue;
		if (snprintf(buf, len, "%s/%s", od->path, name) >= (int)len)
			return -ENAMETOOLONG;
		return 0;
	}
	return -EEXIST;
}

int sptd_col_outdir_added(struct sptd_col_outdir *od, const char *path)
{
	const char *name;
	struct sptd_col_outdir_entry e;
	struct sptd_col_outdir_file f;
	int ret;

	if (!od || od->dirfd < 0 || !path)
		return -EINVAL;
	name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (strlen(name) >= sizeof(e.name) || !name_seq(name))
		return -EINVAL;
	ret = sptd_col_outdir_stat(od, name, &f);
	if (ret < 0)
		return ret;
	memset(&e, 0, sizeof(e));
	e.seq = name_seq(name);
	snprintf(e.name, sizeof(e.name), "%s", name);
	e.dev = f.dev;
	e.ino = f.ino;
	e.born_ns = f.born_ns;
	e.bytes = f.bytes;
	ret = entry_add(od, &e);
	if (ret < 0)
		return ret;
	if (e.seq >= od->next_seq)
		od->next_seq = e.seq + 1;
	return 0;
}

/* ---- stale temporary files ------------------------------------------------------ */

/* "incident-*.db.tmp.PID" of sysptd before the random suffix: removed when
 * PID is gone and nobody holds the file. */
static int legacy_stale(int dirfd, const char *name)
{
	const char *tmp = strstr(name, ".db.tmp.");
	struct stat sb;
	char *end;
	long pid;
	int fd, ret = 0;

	if (strncmp(name, "incident-", 9) != 0 || !tmp)
		return 0;
	pid = strtol(tmp + 8, &end, 10);
	if (pid <= 0 || *end)
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
	    kill((pid_t)pid, 0) < 0 && errno == ESRCH && flock(fd, LOCK_EX | LOCK_NB) == 0)
		ret = unlinkat(dirfd, name, 0) == 0;
	close(fd);
	return ret;
}

int sptd_col_outdir_clean(struct sptd_col_outdir *od)
{
	struct dirent *de;
	DIR *d;
	int fd, removed = 0;

	if (!od || od->dirfd < 0)
		return -EINVAL;
	fd = fcntl(od->dirfd, F_DUPFD_CLOEXEC, 0);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);   /* a dup shares the offset of every earlier walk */
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, ".tmp."))
			continue;
		if (sptd_col_newfile_stale(od->dirfd, de->d_name) == 1 ||
		    legacy_stale(od->dirfd, de->d_name) == 1) {
			removed++;
			sptd_col_log(LOG_INFO, "removed %s/%s, left by a sysptd that was killed "
			             "while writing it", od->path, de->d_name);
		}
	}
	closedir(d);
	return removed;
}
