/* imgfind.c — where decoding finds the bytes of a dso: the copy embedded in
 * the incident (--portable), the image cache by build-id, or the recorded
 * path when its build-id still matches.
 *
 * The recorded path is a user's: between a check and a second open any
 * name on it may be swapped for a link to a file only root can read
 * (issue 28).  So it is opened once, its build-id read from that
 * descriptor, and the decoder is handed a name that leads to that very
 * descriptor (a link to /proc/self/fd/N in the private directory, keeping
 * the basename).  A file without a build-id has nothing to prove it is
 * the one recorded and is read as it is now (import names its images so;
 * the recorder's own capture embeds such files, when asked, through the
 * mapping itself: pt_imgcache.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "derive-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"


/* ---- the cache's layout: DIR/<build-id hex>/<basename>, as perf's ~/.debug -- */

const char *sptd_col_pt_imgcache_default(void)
{
	return "/var/lib/sysptd/images";
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int valid_build_id(const char *bid)
{
	size_t n = bid ? strlen(bid) : 0;

	if (n < 2 || n > 128)
		return 0;
	return strspn(bid, "0123456789abcdef") == n;
}

int sptd_col_pt_imgcache_path(const char *dir, const char *build_id, const char *path,
                              char *out, size_t outlen)
{
	if (!dir || !dir[0] || !path || !out || !valid_build_id(build_id))
		return -EINVAL;
	if (snprintf(out, outlen, "%s/%s/%s", dir, build_id, base_name(path)) >= (int)outlen)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- decode-time lookup ------------------------------------------------------------ */

struct sptd_col_pt_imgfind {
	struct sptd_store *st;       /* the incident; borrowed */
	char cache_dir[PATH_MAX];    /* "" none */
	char tmp_dir[PATH_MAX];      /* where embedded files are unpacked; "" not yet */
	char where[PATH_MAX];        /* the last answer */
	int held_fd;                 /* the recorded path's file, opened once and checked,
	                              * while the last answer leads to it; -1 none */
};

int sptd_col_pt_imgfind_create(struct sptd_store *st, struct sptd_col_pt_imgfind **out)
{
	struct sptd_col_pt_imgfind *f;
	const char *env = getenv("SPTD_IMAGE_CACHE");

	if (!st || !out)
		return -EINVAL;
	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->st = st;
	f->held_fd = -1;
	if (env && env[0])
		snprintf(f->cache_dir, sizeof(f->cache_dir), "%s", env);
	else if (sptd_store_meta_get(st, "pt_image_cache", f->cache_dir, sizeof(f->cache_dir)) < 0)
		snprintf(f->cache_dir, sizeof(f->cache_dir), "%s", sptd_col_pt_imgcache_default());
	*out = f;
	return 0;
}

/* The private directory of dso @id's file under tmp_dir (made on first
 * use), and f->where its file there, keeping the basename of @path (the
 * decoder names images by it). */
static int private_name(struct sptd_col_pt_imgfind *f, int64_t id, const char *path)
{
	char dir[PATH_MAX + 32];
	int ret;

	if (!f->tmp_dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(f->tmp_dir, sizeof(f->tmp_dir), "%s/sptd-images-XXXXXX",
		         tmp && tmp[0] ? tmp : "/tmp");
		if (!mkdtemp(f->tmp_dir)) {
			ret = -errno;
			f->tmp_dir[0] = '\0';
			return ret;
		}
	}
	snprintf(dir, sizeof(dir), "%s/%" PRId64, f->tmp_dir, id);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (snprintf(f->where, sizeof(f->where), "%s/%s", dir, base_name(path)) >=
	    (int)sizeof(f->where))
		return -ENAMETOOLONG;
	return 0;
}

/* Unpack dso @id's embedded bytes under tmp_dir, keeping the basename. */
static int unpack(struct sptd_col_pt_imgfind *f, int64_t id, const char *path,
                  const void *data, size_t len)
{
	int fd, ret = private_name(f, id, path);

	if (ret < 0)
		return ret;
	unlink(f->where);
	fd = open(f->where, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, (const char *)data + done, len - done);

		if (w < 0) {
			ret = -errno;
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	return ret;
}

/* Which dso the raw_file reader's bytes belong to. */
struct unpack_ctx {
	struct sptd_col_pt_imgfind *f;   /* the lookup */
	int64_t dso_id;                  /* the dso */
	const char *path;                /* its recorded path */
};

static int on_embedded(void *arg, const void *data, size_t len)
{
	const struct unpack_ctx *u = arg;

	return unpack(u->f, u->dso_id, u->path, data, len);
}

int sptd_col_pt_imgfind_lookup(struct sptd_col_pt_imgfind *f, int64_t dso_id, const char *path,
                               const char *build_id, const char **where)
{
	struct unpack_ctx u;
	char bid[130];
	int fd, ret;

	if (!f || !path || !where)
		return -EINVAL;
	*where = NULL;
	if (build_id && !build_id[0])
		build_id = NULL;
	/* 1. embedded in the incident */
	u.f = f;
	u.dso_id = dso_id;
	u.path = path;
	ret = sptd_store_raw_file_read(f->st, dso_id, on_embedded, &u);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		*where = f->where;
		return SPTD_PT_IMAGE_EMBEDDED;
	}
	/* 2. the image cache, by build-id */
	if (build_id && f->cache_dir[0] &&
	    sptd_col_pt_imgcache_path(f->cache_dir, build_id, path, f->where, sizeof(f->where)) == 0 &&
	    access(f->where, R_OK) == 0) {
		*where = f->where;
		return SPTD_PT_IMAGE_CACHED;
	}
	/* 3. where it was mapped, if it is still the same file: opened once,
	 * checked and read through that descriptor */
	if (f->held_fd >= 0)
		close(f->held_fd);
	f->held_fd = -1;
	fd = sptd_dec_file_open(path, 0, NULL);
	/* unreadable is not missing: a command parsing as nobody says so */
	if (fd < 0)
		return fd == -EACCES || fd == -EPERM ? -EACCES : fd == -ENOMEM ? fd : -ENOENT;
	if (build_id && (sptd_dec_build_id_fd(fd, bid, sizeof(bid)) < 0 ||
	                 !sptd_dec_build_id_match(bid, build_id))) {
		close(fd);
		return -ESTALE;
	}
	ret = private_name(f, dso_id, path);
	if (ret >= 0) {
		char self[64];

		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		unlink(f->where);
		if (symlink(self, f->where) < 0)
			ret = -errno;
	}
	if (ret < 0) {
		close(fd);
		return ret;
	}
	f->held_fd = fd;
	*where = f->where;
	return SPTD_PT_IMAGE_ORIGINAL;
}

/* Remove the unpacked files (one level of dso directories). */
static void remove_tmp(const char *top)
{
	DIR *d = opendir(top);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char sub[PATH_MAX + 300];
		DIR *s;
		struct dirent *fe;

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", top, de->d_name);
		s = opendir(sub);
		while (s && (fe = readdir(s))) {
			char file[PATH_MAX + 600];

			if (strcmp(fe->d_name, ".") == 0 || strcmp(fe->d_name, "..") == 0)
				continue;
			snprintf(file, sizeof(file), "%s/%s", sub, fe->d_name);
			unlink(file);
		}
		if (s)
			closedir(s);
		rmdir(sub);
	}
	if (d)
		closedir(d);
	rmdir(top);
}

void sptd_col_pt_imgfind_destroy(struct sptd_col_pt_imgfind *f)
{
	if (!f)
		return;
	if (f->held_fd >= 0)
		close(f->held_fd);
	if (f->tmp_dir[0])
		remove_tmp(f->tmp_dir);
	free(f);
}
