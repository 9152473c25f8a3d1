/* image.c — memory images: the placements of code in the section cache
 * (ELF files by their PT_LOAD segments, flat files, copied bytes), which
 * the address spaces (aspace.c) are built from. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-pt.h>

#include "dec-local.h"
#include "elf-local.h"
#include "symfile-local.h"

/* A new zeroed image slot; NULL when out of memory. */
static struct sptd_dec_image *image_new(struct sptd_dec_session *s)
{
	struct sptd_dec_image *img;

	if (s->nimages == s->capimages) {
		size_t cap = s->capimages ? s->capimages * 2 : 16;
		struct sptd_dec_image *n = realloc(s->images, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->images = n;
		s->capimages = cap;
	}
	img = &s->images[s->nimages];
	memset(img, 0, sizeof(*img));
	img->dso_id = -1;
	return img;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Add [offset, offset+size) of @path at @addr to the cache and record it. */
int sptd_dec_image_place(struct sptd_dec_session *s, int pid, const char *path,
                         const char *name, uint64_t offset, uint64_t size,
                         uint64_t addr, int64_t bias, int64_t dso_id,
                         struct sptd_dec_symfile *sf)
{
	struct sptd_dec_image *img = image_new(s);
	int isid;

	if (!img)
		return -ENOMEM;
	isid = pt_iscache_add_file(s->iscache, path, offset, size, addr);
	if (isid < 0)
		return isid == -pte_nomem ? -ENOMEM : -EIO;
	img->pid = pid;
	img->path = strdup(path);
	img->name = strdup(name);
	if (!img->path || !img->name) {
		free(img->path);
		free(img->name);
		return -ENOMEM;
	}
	img->offset = offset;
	img->size = size;
	img->addr = addr;
	img->bias = bias;
	img->dso_id = dso_id;
	img->isid = isid;
	img->symfile = sf;
	img->epoch_lo = 0;
	img->epoch_hi = INT_MAX;
	s->nimages++;
	return 0;
}

/* Keep @fd (open on a regular file) for the session, as "/proc/self/fd/N"
 * in @fdpath: libipt reads sections lazily by file name, and that name must
 * lead to the file checked now, not to whatever a user has put at the path
 * meanwhile (a FIFO would block the decoder for ever).  One descriptor per
 * file (by device and inode), however many processes map it.  Takes @fd
 * over (closed on failure or when the file is already kept). */
static int image_keep_fd(struct sptd_dec_session *s, int fd, const struct stat *sb,
                         char *fdpath, size_t len)
{
	struct sptd_dec_imgfile *files;
	size_t i;

	for (i = 0; i < s->nfiles; i++)
		if (s->files[i].dev == sb->st_dev && s->files[i].ino == sb->st_ino)
			break;
	if (i < s->nfiles) {
		close(fd);
		fd = s->files[i].fd;
	} else {
		files = realloc(s->files, (s->nfiles + 1) * sizeof(*files));
		if (!files) {
			close(fd);
			return -ENOMEM;
		}
		s->files = files;
		s->files[s->nfiles++] = (struct sptd_dec_imgfile){
			.dev = sb->st_dev, .ino = sb->st_ino, .fd = fd,
		};
	}
	snprintf(fdpath, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* The kept file behind descriptor @fd (image_keep_fd's). */
static struct sptd_dec_imgfile *image_file(struct sptd_dec_session *s, int fd)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].fd == fd)
			return &s->files[i];
	return NULL;
}

/* Open the user's file @path (sptd_dec_file_open) and keep it for the
 * session; its name for libipt in @fdpath, its size in *@size. */
static int image_open(struct sptd_dec_session *s, const char *path, char *fdpath,
                      size_t len, uint64_t *size)
{
	struct stat sb;
	int fd = sptd_dec_file_open(path, 0, &sb);

	if (fd < 0)
		return fd;
	*size = (uint64_t)sb.st_size;
	return image_keep_fd(s, fd, &sb, fdpath, len);
}

int sptd_dec_session_add_flat(struct sptd_dec_session *s, int pid, const char *path,
                              uint64_t addr, int64_t dso_id)
{
	char fdpath[64];
	uint64_t size = 0;
	int fd;

	if (!s || !path || pid < -1)
		return -EINVAL;
	fd = image_open(s, path, fdpath, sizeof(fdpath), &size);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOMEM || fd == -ENXIO || fd == -EFBIG ||
		       fd == -EISDIR ? fd : -EIO;
	if (size == 0)
		return -EBADMSG;
	return sptd_dec_image_place(s, pid, fdpath, base_name(path), 0, size, addr,
	                   (int64_t)addr, dso_id, NULL);
}

int sptd_dec_image_memfd(struct sptd_dec_session *s, const void *data, size_t len,
                         char *path, size_t pathlen)
{
	size_t off = 0;
	int fd, err, *n;

	/* libipt's section cache reads files: give the bytes a file */
	fd = memfd_create("sysptd-image", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t w = write(fd, (const char *)data + off, len - off);

		if (w < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		off += (size_t)w;
	}
	n = realloc(s->memfds, (s->nmemfds + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	s->memfds = n;
	s->memfds[s->nmemfds++] = fd;
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	return 0;
}

int sptd_dec_session_kernel_syms(struct sptd_dec_session *s, const struct sptd_dec_symfile *sf)
{
	int named = 0;

	if (!s || !sf)
		return -EINVAL;
	for (size_t i = 0; i < s->nimages; i++) {
		struct sptd_dec_image *img = &s->images[i];

		if (img->symfile || (img->addr >> 63) == 0)
			continue;
		/* images borrow their symfile; kallsyms addresses are runtime */
		img->symfile = (struct sptd_dec_symfile *)sf;
		img->bias = 0;
		named++;
	}
	return named;
}

int sptd_dec_session_add_bytes(struct sptd_dec_session *s, int pid, const char *name,
                               const void *data, size_t len, uint64_t addr,
                               int64_t dso_id)
{
	char path[64];
	int err;

	if (!s || !name || !data || !len || pid < -1)
		return -EINVAL;
	err = sptd_dec_image_memfd(s, data, len, path, sizeof(path));
	if (err < 0)
		return err;
	return sptd_dec_image_place(s, pid, path, name, 0, len, addr, (int64_t)addr, dso_id,
	                   NULL);
}

int sptd_dec_session_add_elf(struct sptd_dec_session *s, int pid, const char *path,
                             int64_t bias, int64_t dso_id)
{
	const struct sptd_dec_elf_load *loads;
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_imgfile *file;
	struct sptd_dec_elf *elf = NULL;
	const char *name;
	char fdpath[64];
	uint64_t size = 0;
	size_t n, i, placed = 0;
	int err, fd;

	if (!s || !path || pid < -1)
		return -EINVAL;
	name = base_name(path);
	fd = image_open(s, path, fdpath, sizeof(fdpath), &size);
	err = fd < 0 ? fd : sptd_dec_elf_open_fd(fd, &elf);
	if (err < 0)
		return err == -ENOENT || err == -EBADMSG || err == -ENOMEM || err == -ENXIO ||
		       err == -EFBIG || err == -EISDIR ? err : -EIO;
	loads = sptd_dec_elf_loads(elf, &n);
	for (i = 0; i < n; i++)
		placed += loads[i].filesz != 0;
	if (!placed) {
		err = -EBADMSG;
		goto out;
	}
	/* symbols are a bonus: an ELF without them still decodes.  Read once
	 * per file, however many processes map it (libc in every one of a
	 * system-wide recording), and owned by the file image_open kept */
	file = image_file(s, fd);
	if (!file) {
		err = -EIO;
		goto out;
	}
	if (!file->sf_read) {
		if (sptd_dec_symfile_from_elf(elf, &sf) < 0)
			sf = NULL;
		file->sf = sf;
		file->sf_read = 1;
	}
	for (i = 0; i < n && !err; i++) {
		if (!loads[i].filesz)
			continue;
		err = sptd_dec_image_place(s, pid, fdpath, name, loads[i].offset, loads[i].filesz,
		                           loads[i].vaddr + (uint64_t)bias, bias, dso_id, file->sf);
	}
out:
	sptd_dec_elf_close(elf);
	return err;
}

void sptd_dec_images_free(struct sptd_dec_session *s)
{
	size_t i;

	for (i = 0; i < s->nimages; i++) {
		free(s->images[i].path);
		free(s->images[i].name);
	}
	free(s->images);
	s->images = NULL;
	s->nimages = s->capimages = 0;
	for (i = 0; i < s->nmemfds; i++)
		close(s->memfds[i]);
	free(s->memfds);
	s->memfds = NULL;
	s->nmemfds = 0;
	for (i = 0; i < s->nfiles; i++) {
		close(s->files[i].fd);
		sptd_dec_symfile_destroy(s->files[i].sf);
	}
	free(s->files);
	s->files = NULL;
	s->nfiles = 0;
}
