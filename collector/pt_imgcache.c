/* pt_imgcache.c — the code of mapped files for PT decoding: a
 * content-addressed image cache, files embedded in the incident
 * (--portable), and the decode-time lookup over both.
 *
 * Divisions: build-ids · the cache (DIR/<build-id hex>/<basename>, as
 * perf's ~/.debug; a file is copied once) · capture (every file dso row:
 * cache it, embed it) · decode-time lookup (embedded, then cache, then the
 * recorded path, each only when its build-id matches the one recorded).
 *
 * A build-id names a file's contents, so a cached copy never needs
 * refreshing and a library upgraded after the capture is not mistaken for
 * the one that ran. */
#include <dirent.h>
#include <elf.h>
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
#include "sptd_store.h"

/* Largest file embedded or cached (SQLite blobs stop at 1 GB). */
#define IMG_FILE_MAX (512ull << 20)
/* Largest note segment read looking for the build-id. */
#define IMG_NOTE_MAX (1u << 20)

/* ---- build-ids --------------------------------------------------------------- */

/* The GNU build-id in the notes at [off, off+len) of @fd, as hex. */
static int notes_build_id(int fd, uint64_t off, uint64_t len, uint32_t align, char *hex,
                          size_t hexlen)
{
	unsigned char *buf;
	size_t pos = 0, a = align == 8 ? 8 : 4;
	int ret = -ENODATA;

	if (len == 0 || len > IMG_NOTE_MAX)
		return -ENODATA;
	buf = malloc((size_t)len);
	if (!buf)
		return -ENOMEM;
	if (pread(fd, buf, (size_t)len, (off_t)off) != (ssize_t)len) {
		free(buf);
		return -EBADMSG;
	}
	while (pos + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;
		size_t name_at, desc_at, next;

		memcpy(&nh, buf + pos, sizeof(nh));
		name_at = pos + sizeof(nh);
		desc_at = name_at + ((nh.n_namesz + a - 1) & ~(a - 1));
		next = desc_at + ((nh.n_descsz + a - 1) & ~(a - 1));
		if (nh.n_namesz > len || nh.n_descsz > len || desc_at > len || next > len ||
		    desc_at + nh.n_descsz > len)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(buf + name_at, "GNU", 4) == 0 && nh.n_descsz > 0) {
			if (hexlen < (size_t)nh.n_descsz * 2 + 1) {
				ret = -ENAMETOOLONG;
				break;
			}
			for (uint32_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + i * 2, 3, "%02x", buf[desc_at + i]);
			ret = 0;
			break;
		}
		pos = next;
	}
	free(buf);
	return ret;
}

int sptd_col_pt_build_id(const char *path, char *hex, size_t hexlen)
{
	Elf64_Ehdr eh;
	int fd, ret = -ENODATA;

	if (!path || !hex || hexlen == 0)
		return -EINVAL;
	hex[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		ret = -EBADMSG;   /* not a 64-bit little-endian ELF file */
		goto out;
	}
	/* program headers first (what the loader maps), sections as fallback */
	if (eh.e_phentsize == sizeof(Elf64_Phdr)) {
		for (int i = 0; i < eh.e_phnum && ret == -ENODATA; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type == PT_NOTE)
				ret = notes_build_id(fd, ph.p_offset, ph.p_filesz, (uint32_t)ph.p_align,
				                     hex, hexlen);
		}
	}
	if (ret == -ENODATA && eh.e_shentsize == sizeof(Elf64_Shdr)) {
		for (int i = 0; i < eh.e_shnum && ret == -ENODATA; i++) {
			Elf64_Shdr sh;

			if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh))) !=
			    (ssize_t)sizeof(sh))
				break;
			if (sh.sh_type == SHT_NOTE)
				ret = notes_build_id(fd, sh.sh_offset, sh.sh_size,
				                     (uint32_t)sh.sh_addralign, hex, hexlen);
		}
	}
out:
	close(fd);
	return ret;
}

/* ---- the cache -------------------------------------------------------------------- */

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

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* Copy @src to @dst (a new file, mode 0644).  -errno. */
static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0) {
				ret = -errno;
				goto out;
			}
			done += w;
		}
	}
	if (n < 0)
		ret = -errno;
out:
	if (close(out) < 0 && ret == 0)
		ret = -errno;
	close(in);
	return ret;
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

int sptd_col_pt_imgcache_put(const char *dir, const char *path, const char *build_id,
                             char *out, size_t outlen)
{
	char sub[PATH_MAX], dst[PATH_MAX], tmp[PATH_MAX + 32], bid[130];
	struct stat sb;
	int ret;

	if (!dir || !path || path[0] != '/' || !out)
		return -EINVAL;
	ret = sptd_col_pt_imgcache_path(dir, build_id, path, dst, sizeof(dst));
	if (ret < 0)
		return ret;
	if (snprintf(out, outlen, "%s", dst) >= (int)outlen)
		return -ENAMETOOLONG;
	if (stat(dst, &sb) == 0)
		return 0;   /* same build-id: same contents, already there */
	if (stat(path, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > IMG_FILE_MAX)
		return -EFBIG;
	snprintf(sub, sizeof(sub), "%s/%s", dir, build_id);
	ret = mkdir_p(sub);
	if (ret < 0)
		return ret;
	/* copy beside, check, then rename: readers never see half a file,
	 * and a file replaced since it was mapped is not cached under the
	 * old build-id */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dst, (int)getpid());
	unlink(tmp);
	ret = copy_file(path, tmp);
	if (ret >= 0 && (sptd_col_pt_build_id(tmp, bid, sizeof(bid)) < 0 ||
	                 strcmp(bid, build_id) != 0))
		ret = -ESTALE;
	if (ret >= 0 && rename(tmp, dst) < 0)
		ret = -errno;
	if (ret < 0) {
		unlink(tmp);
		return ret;
	}
	return 1;
}

/* ---- capture ---------------------------------------------------------------------- */

/* Read a whole (regular, bounded) file. */
static int slurp(const char *path, unsigned char **data, size_t *len)
{
	struct stat sb;
	unsigned char *buf;
	int fd, ret = 0;
	size_t got = 0;

	*data = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > IMG_FILE_MAX) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc(sb.st_size ? (size_t)sb.st_size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);

		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*data = buf;
	*len = got;
	return 0;
}

/* One file dso row. */
struct file_dso {
	int64_t id;              /* dso.id */
	char *path;              /* dso.path */
	char *build_id;          /* dso.build_id, NULL none */
};

static void file_dsos_free(struct file_dso *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].path);
		free(d[i].build_id);
	}
	free(d);
}

/* Every dso row naming a file, read out before rows are added. */
static int file_dsos(struct sptd_store *st, struct file_dso **out, size_t *count)
{
	struct sptd_store_stmt *stmt = NULL;
	struct file_dso *d = NULL;
	size_t n = 0, cap = 0;
	int ret;

	ret = sptd_store_prepare(st, "SELECT id, path, build_id FROM dso WHERE path LIKE '/%' "
	                         "ORDER BY id", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		const char *path = sptd_store_column_text(stmt, 1);
		const char *bid = sptd_store_column_text(stmt, 2);

		if (n == cap) {
			struct file_dso *more = realloc(d, (cap = cap ? cap * 2 : 64) * sizeof(*d));

			if (!more) {
				ret = -ENOMEM;
				break;
			}
			d = more;
		}
		d[n].id = sptd_store_column_int(stmt, 0);
		d[n].path = strdup(path ? path : "");
		d[n].build_id = bid ? strdup(bid) : NULL;
		n++;
		if (!d[n - 1].path || (bid && !d[n - 1].build_id)) {
			ret = -ENOMEM;
			break;
		}
	}
	sptd_store_finalize(stmt);
	if (ret < 0) {
		file_dsos_free(d, n);
		return ret;
	}
	*out = d;
	*count = n;
	return 0;
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
		const char *src = d[i].path;
		int have = sptd_col_pt_build_id(d[i].path, bid, sizeof(bid)) == 0;
		int in_cache = 0;

		/* the file must still be what was mapped */
		if (d[i].build_id && (!have || strcmp(bid, d[i].build_id) != 0)) {
			missing++;
			sptd_col_log(LOG_WARNING, "image %s changed or vanished since it was mapped "
			             "(build-id %s): its code will show as gaps", d[i].path,
			             d[i].build_id);
			continue;
		}
		if (cache_dir && have) {
			int c = sptd_col_pt_imgcache_put(cache_dir, d[i].path, bid, where, sizeof(where));

			if (c >= 0) {
				in_cache = 1;
				cached += c;
				src = where;   /* embed the checked copy */
			} else {
				sptd_col_log(LOG_WARNING, "cannot cache %s in %s: %s", d[i].path,
				             cache_dir, strerror(-c));
			}
		}
		if (portable) {
			unsigned char *data;
			size_t len;
			int r = slurp(src, &data, &len);

			if (r < 0) {
				missing++;
				sptd_col_log(LOG_WARNING, "cannot embed %s: %s", src, strerror(-r));
				continue;
			}
			ret = sptd_store_raw_file_add(st, d[i].id, have ? bid : NULL, data, len);
			free(data);
			if (ret >= 0)
				embedded++;
		}
		(void)in_cache;
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

/* ---- decode-time lookup ------------------------------------------------------------ */

struct sptd_col_pt_imgfind {
	struct sptd_store *st;       /* the incident; borrowed */
	struct sptd_store_stmt *embedded; /* SELECT from raw_file; NULL: no such table */
	char cache_dir[PATH_MAX];    /* "" none */
	char tmp_dir[PATH_MAX];      /* where embedded files are unpacked; "" not yet */
	char where[PATH_MAX];        /* the last answer */
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
	if (env && env[0])
		snprintf(f->cache_dir, sizeof(f->cache_dir), "%s", env);
	else if (sptd_store_meta_get(st, "pt_image_cache", f->cache_dir, sizeof(f->cache_dir)) < 0)
		snprintf(f->cache_dir, sizeof(f->cache_dir), "%s", sptd_col_pt_imgcache_default());
	/* raw_file exists only in incidents that embed files */
	if (sptd_store_prepare(st, "SELECT data FROM raw_file WHERE dso_id = ?", &f->embedded) < 0)
		f->embedded = NULL;
	*out = f;
	return 0;
}

/* Unpack dso @id's embedded bytes under tmp_dir, keeping the basename (the
 * decoder names images by it). */
static int unpack(struct sptd_col_pt_imgfind *f, int64_t id, const char *path,
                  const void *data, size_t len)
{
	char dir[PATH_MAX + 32];
	int fd, ret = 0;

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
	fd = open(f->where, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
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

int sptd_col_pt_imgfind_lookup(struct sptd_col_pt_imgfind *f, int64_t dso_id, const char *path,
                               const char *build_id, const char **where)
{
	char bid[130];
	int ret;

	if (!f || !path || !where)
		return -EINVAL;
	*where = NULL;
	if (build_id && !build_id[0])
		build_id = NULL;
	/* 1. embedded in the incident */
	if (f->embedded) {
		sptd_store_reset(f->embedded);
		sptd_store_bind_int(f->embedded, 1, dso_id);
		ret = sptd_store_step(f->embedded);
		if (ret < 0)
			return ret;
		if (ret == 1) {
			size_t len = 0;
			const void *data = sptd_store_column_blob(f->embedded, 0, &len);

			if (data && len) {
				ret = unpack(f, dso_id, path, data, len);
				sptd_store_reset(f->embedded);
				if (ret < 0)
					return ret;
				*where = f->where;
				return SPTD_PT_IMAGE_EMBEDDED;
			}
		}
		sptd_store_reset(f->embedded);
	}
	/* 2. the image cache, by build-id */
	if (build_id && f->cache_dir[0] &&
	    sptd_col_pt_imgcache_path(f->cache_dir, build_id, path, f->where, sizeof(f->where)) == 0 &&
	    access(f->where, R_OK) == 0) {
		*where = f->where;
		return SPTD_PT_IMAGE_CACHED;
	}
	/* 3. where it was mapped, if it is still the same file */
	if (access(path, R_OK) < 0)
		return -ENOENT;
	if (build_id && (sptd_col_pt_build_id(path, bid, sizeof(bid)) < 0 ||
	                 strcmp(bid, build_id) != 0))
		return -ESTALE;
	snprintf(f->where, sizeof(f->where), "%s", path);
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
	sptd_store_finalize(f->embedded);
	if (f->tmp_dir[0])
		remove_tmp(f->tmp_dir);
	free(f);
}
