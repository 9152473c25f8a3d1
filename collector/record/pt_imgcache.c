/* pt_imgcache.c — the code of mapped files for PT decoding: a
 * content-addressed image cache, files embedded in the incident
 * (--portable), and the decode-time lookup over both.
 *
 * Divisions: the cache (DIR/<build-id hex>/<basename>, as
 * perf's ~/.debug; a file is copied once) · capture (every file dso row:
 * cache it, embed it) · decode-time lookup (embedded, then cache, then the
 * recorded path, each only when its build-id matches the one recorded).
 *
 * The paths are users': any name on them may be swapped for a symlink to
 * a file only root can read at any moment (issue 28).  So a mapped file is
 * opened once, as the mapping itself (/proc/PID/map_files of a process
 * that maps it) or, only when a build-id was recorded, by its path — and
 * its build-id, its cached copy and its embedded bytes are all read
 * through that one descriptor, the build-id proving the path's file is
 * the one mapped.  A file without a build-id that no live process maps
 * any more is neither cached nor embedded: nothing would prove it is the
 * file that ran.
 *
 * A build-id names a file's contents, so a cached copy never needs
 * refreshing and a library upgraded after the capture is not mistaken for
 * the one that ran. */
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

#include "pt-local.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_store.h"

/* Largest file embedded or cached (SQLite blobs stop at 1 GB). */
#define IMG_FILE_MAX (512ull << 20)

/* ---- the cache -------------------------------------------------------------------- */

/* mkdir -p, root's own: 0700, since the cache holds copies of users'
 * files (a private binary must not become readable through it). */
static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

/* Copy all of @in (from its start, whatever its offset) to @out.  -errno. */
static int copy_fd(int in, int out)
{
	char buf[65536];
	off_t at = 0;
	ssize_t n;

	while ((n = pread(in, buf, sizeof(buf), at)) > 0) {
		at += n;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0)
				return -errno;
			done += w;
		}
	}
	return n < 0 ? -errno : 0;
}

/* sptd_col_pt_imgcache_put of the file open at @in (@sb its fstat), named
 * @path: every byte cached is read from @in. */
static int imgcache_put_fd(const char *dir, int in, const struct stat *sb, const char *path,
                           const char *build_id, char *out, size_t outlen)
{
	char sub[PATH_MAX], dst[PATH_MAX], bid[130];
	struct sptd_col_newfile nf = { .fd = -1, .dirfd = -1 };
	struct stat there;
	int ret;

	ret = sptd_col_pt_imgcache_path(dir, build_id, path, dst, sizeof(dst));
	if (ret < 0)
		return ret;
	if (snprintf(out, outlen, "%s", dst) >= (int)outlen)
		return -ENAMETOOLONG;
	if (lstat(dst, &there) == 0 && S_ISREG(there.st_mode))
		return 0;   /* same build-id: same contents, already there */
	if ((uint64_t)sb->st_size > IMG_FILE_MAX)
		return -EFBIG;
	snprintf(sub, sizeof(sub), "%s/%s", dir, build_id);
	ret = mkdir_p(sub);
	if (ret < 0)
		goto out;
	/* copy beside, check, then rename: readers never see half a file,
	 * and a file replaced since it was mapped is not cached under the
	 * old build-id */
	ret = sptd_col_newfile_open(&nf, AT_FDCWD, dst, 0600);
	if (ret >= 0)
		ret = copy_fd(in, nf.fd);
	if (ret >= 0 && (sptd_dec_build_id_fd(nf.fd, bid, sizeof(bid)) < 0 ||
	                 !sptd_dec_build_id_match(bid, build_id)))
		ret = -ESTALE;
	if (ret >= 0) {
		ret = sptd_col_newfile_commit(&nf, SPTD_COL_NEWFILE_NOREPLACE);
		if (ret == -EEXIST)
			ret = 0;   /* another recorder cached it meanwhile */
		else if (ret >= 0)
			ret = 1;
	}
out:
	sptd_col_newfile_fini(&nf);
	return ret;
}

int sptd_col_pt_imgcache_put(const char *dir, const char *path, const char *build_id,
                             char *out, size_t outlen)
{
	struct stat sb;
	int in, ret;

	if (!dir || !path || path[0] != '/' || !out)
		return -EINVAL;
	/* the user's file: no FIFO, no device, no symlink, bounded; what is
	 * cached is checked to have @build_id */
	in = sptd_dec_file_open(path, SPTD_DEC_OPEN_NOFOLLOW, &sb);
	if (in < 0)
		return in == -EFBIG || in == -ENXIO ? -EFBIG : in;
	ret = imgcache_put_fd(dir, in, &sb, path, build_id, out, outlen);
	close(in);
	return ret;
}

/* ---- capture ---------------------------------------------------------------------- */

/* Read all of the file open at @fd (@size bytes by its fstat). */
static int slurp_fd(int fd, uint64_t size, unsigned char **data, size_t *len)
{
	unsigned char *buf;
	size_t got = 0;

	*data = NULL;
	*len = 0;
	if (size > IMG_FILE_MAX)
		return -EFBIG;
	buf = malloc(size ? (size_t)size : 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)size) {
		ssize_t n = pread(fd, buf + got, (size_t)size - got, (off_t)got);

		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		got += (size_t)n;
	}
	*data = buf;
	*len = got;
	return 0;
}

/* Mappings of one file tried through /proc/PID/map_files, at most. */
#define IMG_MAPS_TRIED 8

/* One mapping of a file dso, as raw_mmap has it. */
struct file_map {
	int pid;                 /* the process */
	uint64_t start, end;     /* the range it maps */
};

/* One file dso row. */
struct file_dso {
	int64_t id;              /* dso.id */
	char *path;              /* dso.path */
	char *build_id;          /* dso.build_id, NULL none */
	struct file_map maps[IMG_MAPS_TRIED]; /* its first mappings in raw_mmap */
	int nmaps;               /* used entries of maps */
};

static void file_dsos_free(struct file_dso *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].path);
		free(d[i].build_id);
	}
	free(d);
}

/* The dso rows naming a file, as file_dsos gathers them. */
struct file_dsos_ctx {
	struct file_dso *d;      /* rows so far */
	size_t n, cap;           /* used / allocated */
};

static int on_dso(void *arg, const struct sptd_store_dso_row *row)
{
	struct file_dsos_ctx *fc = arg;
	struct file_dso *d;

	if (!row->path || row->path[0] != '/')
		return 0;   /* [vdso], [kernel.kallsyms], anonymous code: no file */
	if (fc->n == fc->cap) {
		size_t cap = fc->cap ? fc->cap * 2 : 64;
		struct file_dso *more = realloc(fc->d, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		fc->d = more;
		fc->cap = cap;
	}
	d = &fc->d[fc->n++];
	memset(d, 0, sizeof(*d));
	d->id = row->id;
	d->path = strdup(row->path);
	d->build_id = row->build_id ? strdup(row->build_id) : NULL;
	if (!d->path || (row->build_id && !d->build_id))
		return -ENOMEM;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct file_dso *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* A raw_mmap row of a process (not the kernel's): one more mapping of its
 * dso to open the file through. */
static int on_mmap(void *arg, const struct sptd_store_raw_mmap_row *row)
{
	struct file_dsos_ctx *fc = arg;
	struct file_dso key = { .id = row->dso_id }, *d;

	if (row->pid <= 0)
		return 0;
	d = bsearch(&key, fc->d, fc->n, sizeof(*fc->d), by_id);
	if (d && d->nmaps < IMG_MAPS_TRIED)
		d->maps[d->nmaps++] = (struct file_map){
			.pid = row->pid, .start = row->start, .end = row->end,
		};
	return 0;
}

/* Every dso row naming a file, by id, with its first mappings, read out
 * before rows are added. */
static int file_dsos(struct sptd_store *st, struct file_dso **out, size_t *count)
{
	struct file_dsos_ctx fc = { 0 };
	int ret = SPTD_STORE_EACH(st, dso, on_dso, &fc);

	if (ret >= 0 && fc.n) {
		qsort(fc.d, fc.n, sizeof(*fc.d), by_id);
		ret = SPTD_STORE_EACH(st, raw_mmap, on_mmap, &fc);
	}
	if (ret < 0) {
		file_dsos_free(fc.d, fc.n);
		return ret;
	}
	*out = fc.d;
	*count = fc.n;
	return 0;
}

/* Open the file of @d: a mapping of it through /proc/PID/map_files (the
 * file that ran, whatever its path names now), else — only with a
 * recorded build-id, which the caller then checks on the descriptor — its
 * path.  The fd (the caller closes it), -ENOKEY no build-id and no live
 * mapping, or sptd_dec_file_open's error. */
static int open_mapped(const struct file_dso *d, struct stat *sb)
{
	char where[96];
	int fd;

	for (int k = 0; k < d->nmaps; k++) {
		snprintf(where, sizeof(where), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		         d->maps[k].pid, d->maps[k].start, d->maps[k].end);
		fd = sptd_dec_file_open(where, 0, sb);
		if (fd >= 0)
			return fd;
	}
	if (!d->build_id)
		return -ENOKEY;
	return sptd_dec_file_open(d->path, SPTD_DEC_OPEN_NOFOLLOW, sb);
}

int sptd_col_pt_images_files(struct sptd_store *st, const char *cache_dir, int portable)
{
	struct file_dso *d = NULL;
	size_t n = 0;
	int64_t cached = 0, embedded = 0, missing = 0;
	int ret;

	if (!st)
		return -EINVAL;
	ret = file_dsos(st, &d, &n);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < n && ret >= 0; i++) {
		char bid[130], where[PATH_MAX];
		struct stat sb;
		int fd = open_mapped(&d[i], &sb), have;

		if (fd < 0) {
			missing++;
			if (fd == -ENOKEY)
				sptd_col_log(LOG_WARNING, "image %s has no build-id and no process maps "
				             "it any more: not cached or embedded (nothing proves the file "
				             "at that path is the one that ran); its code will show as "
				             "gaps unless it is found unchanged at decode", d[i].path);
			else
				sptd_col_log(LOG_WARNING, "image %s unreadable (%s): its code will show "
				             "as gaps", d[i].path, sptd_dec_file_strerror(fd));
			continue;
		}
		have = sptd_dec_build_id_fd(fd, bid, sizeof(bid)) == 0;
		/* the file must still be what was mapped */
		if (d[i].build_id && (!have || !sptd_dec_build_id_match(bid, d[i].build_id))) {
			missing++;
			sptd_col_log(LOG_WARNING, "image %s changed or vanished since it was mapped "
			             "(build-id %s): its code will show as gaps", d[i].path,
			             d[i].build_id);
			close(fd);
			continue;
		}
		if (cache_dir && have) {
			int c = imgcache_put_fd(cache_dir, fd, &sb, d[i].path, bid, where, sizeof(where));

			if (c >= 0)
				cached += c;
			else
				sptd_col_log(LOG_WARNING, "cannot cache %s in %s: %s", d[i].path,
				             cache_dir, strerror(-c));
		}
		if (portable) {
			unsigned char *data;
			size_t len;
			int r = slurp_fd(fd, (uint64_t)sb.st_size, &data, &len);

			if (r < 0) {
				missing++;
				sptd_col_log(LOG_WARNING, "cannot embed %s: %s", d[i].path, strerror(-r));
				close(fd);
				continue;
			}
			ret = sptd_store_raw_file_add(st, d[i].id, have ? bid : NULL, data, len);
			free(data);
			if (ret >= 0)
				embedded++;
		}
		close(fd);
	}
	if (ret >= 0 && cache_dir)
		ret = sptd_store_meta_set(st, "pt_image_cache", cache_dir);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_portable", portable ? 1 : 0);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_images_cached", cached);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_images_embedded", embedded);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_images_missing", missing);
	file_dsos_free(d, n);
	return ret < 0 ? ret : (int)n;
}
