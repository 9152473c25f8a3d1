/* symcache.c — symbol tables kept across incidents.
 *
 * What an incident costs without it: /proc/kallsyms read and parsed again
 * (the kernel formats ~150k lines: vsnprintf topped the profile) and every
 * ELF file each sampled process maps loaded and sorted again.  Here:
 *   - kallsyms is read once when the service arms, and again only after an
 *     incident whose end finds /proc/modules changed (a module loaded or
 *     unloaded moves symbols; refcounts are not compared);
 *   - a mapped file is one entry keyed by (device, inode, mtime, size) of
 *     the file actually read, its build-id checked again on its first use
 *     in each incident; its headers (build-id, PT_LOAD, a few preads) are
 *     read when a process maps it, its symbols only when an address of the
 *     incident falls in it;
 *   - every read is from a descriptor proven to be the mapped file: the
 *     path opened only when the inode it names is the one /proc/PID/maps
 *     gives (sptd_dec_file_open_inode), else the mapping itself through
 *     /proc/PID/map_files; never a second open by name.  The path belongs
 *     to the process's owner, who may swap it for a link to a file only
 *     root can read between a check and an open (issue 28);
 *   - identical vDSOs share one table.
 * Bounds: entries unused for CACHE_IDLE_INCIDENTS incidents go, and beyond
 * CACHE_MAX_FILES files or CACHE_MAX_SYMS symbols the least recently used
 * go first.
 *
 * Divisions: entries and their key, locating a mapped file, the kernel,
 * the vDSO, the incident cycle (begin/end, eviction). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>

#include "record-local.h"
#include "sptd_dec.h"
#include "symcache-local.h"

/* An entry unused for this many incidents is dropped. */
#define CACHE_IDLE_INCIDENTS 64
/* At most this many files, and this many symbols in all (about 70 bytes
 * each: ~140 MB). */
#define CACHE_MAX_FILES 512
#define CACHE_MAX_SYMS (2u << 20)
/* Hash buckets of the file table. */
#define CACHE_BUCKETS 1024
/* Largest vDSO read, and how many distinct ones are kept. */
#define VDSO_MAX (1u << 20)
#define VDSO_KEEP 4

struct sptd_col_symcache_file {
	struct sptd_col_symcache_file *next; /* bucket chain */
	uint64_t dev, ino;          /* of the file read (stat) */
	int64_t mtime_ns;           /* its modification time */
	uint64_t size;              /* its size */
	char *path;                 /* the path a mapping of it had in maps */
	int pid;                    /* that mapping's process, */
	uint64_t start, end;        /* its range, */
	uint64_t map_dev, map_ino;  /* and the file maps gave for it: how the
	                             * file is located again for its symbols */
	struct sptd_dec_symfile *head; /* build-id + PT_LOAD headers */
	struct sptd_dec_symfile *syms; /* all symbols; NULL until wanted */
	int syms_state;             /* 0 not read, 1 read, -1 unreadable */
	uint64_t used_gen;          /* the last incident that used it */
	uint64_t checked_gen;       /* the last incident that checked its build-id */
};

/* One vDSO image and its table. */
struct symcache_vdso {
	unsigned char *bytes;       /* the image as read from a process */
	size_t len;                 /* its length */
	struct sptd_dec_symfile *sf; /* its symbols; NULL unreadable */
	uint64_t used_gen;          /* the last incident that used it */
};

struct sptd_col_symcache {
	int enabled;                /* 0: everything is dropped at each end */
	uint64_t gen;               /* incident counter (begin increments it) */
	struct sptd_col_symcache_file *buckets[CACHE_BUCKETS]; /* files by (dev, ino) */
	size_t nfiles;              /* entries in the table */
	size_t nsyms;               /* symbols held by their tables */
	struct sptd_dec_symfile *kernel; /* kallsyms; NULL not read or unreadable */
	int kernel_state;           /* 0 not tried, 1 read, -1 unreadable */
	uint64_t modules_hash;      /* /proc/modules (names, sizes, addresses) when read */
	int kernel_warned;          /* the unreadable kallsyms was said */
	struct symcache_vdso vdso[VDSO_KEEP]; /* distinct vDSOs seen */
	int nvdso;                  /* entries of vdso */
	struct sptd_col_symcache_stats stats; /* what it has done */
};

/* ---- entries ----------------------------------------------------------------- */

static size_t bucket_of(uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xff51afd7ed558ccdull);

	return (size_t)(h ^ (h >> 29)) & (CACHE_BUCKETS - 1);
}

static void file_free(struct sptd_col_symcache *c, struct sptd_col_symcache_file *f)
{
	c->stats.evicted++;
	if (f->syms)
		c->nsyms -= sptd_dec_symfile_count(f->syms);
	sptd_dec_symfile_destroy(f->head);
	sptd_dec_symfile_destroy(f->syms);
	free(f->path);
	free(f);
}

static void file_unlink(struct sptd_col_symcache *c, struct sptd_col_symcache_file *f)
{
	struct sptd_col_symcache_file **p = &c->buckets[bucket_of(f->dev, f->ino)];

	while (*p && *p != f)
		p = &(*p)->next;
	if (*p)
		*p = f->next;
	c->nfiles--;
	file_free(c, f);
}

static int64_t mtime_ns(const struct stat *sb)
{
	return (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

/* ---- locating a mapped file -------------------------------------------------- */

/* Open the file @pid maps at [@start, @end): @path when it names the very
 * inode /proc/PID/maps gives (@dev, @ino), else the mapping itself through
 * /proc/PID/map_files (the file deleted or replaced, or an overlay whose
 * maps numbers are not the path's).  Anything else at the path is refused:
 * it is not what ran, and it may be a link to a file that only root can
 * read.  Every file the symbolizer reads for a mapping is opened here and
 * read through the descriptor returned (the caller closes it), never
 * reopened by name.  *@named: 1 opened by @path.  -ENOENT when neither
 * works. */
int sptd_col_symcache_locate(int pid, uint64_t start, uint64_t end, const char *path,
                             uint64_t dev, uint64_t ino, struct stat *sb, int *named)
{
	char where[96];
	int fd;

	*named = 1;
	fd = sptd_dec_file_open_inode(path, dev, ino, sb);
	if (fd >= 0)
		return fd;
	*named = 0;
	if (pid > 0) {
		snprintf(where, sizeof(where), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid,
		         start, end);
		fd = sptd_dec_file_open(where, 0, sb);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

/* Remember the mapping @f was last located through: its symbols are read
 * through the same route.  -ENOMEM. */
static int file_route(struct sptd_col_symcache_file *f, int pid, uint64_t start, uint64_t end,
                      const char *path, uint64_t dev, uint64_t ino)
{
	if (!f->path || strcmp(f->path, path) != 0) {
		char *copy = strdup(path);

		if (!copy)
			return -ENOMEM;
		free(f->path);
		f->path = copy;
	}
	f->pid = pid;
	f->start = start;
	f->end = end;
	f->map_dev = dev;
	f->map_ino = ino;
	return 0;
}

/* Is @f still the file open at @fd?  Its build-id, read once per incident. */
static int file_still_same(struct sptd_col_symcache *c, struct sptd_col_symcache_file *f, int fd)
{
	const char *want = sptd_dec_symfile_build_id(f->head);
	char bid[130];
	int ret;

	if (f->checked_gen == c->gen)
		return 1;
	ret = sptd_dec_build_id_fd(fd, bid, sizeof(bid));
	if (ret == -ENODATA ? want != NULL : ret < 0 || !sptd_dec_build_id_match(bid, want))
		return 0;
	f->checked_gen = c->gen;
	return 1;
}

int sptd_col_symcache_file(struct sptd_col_symcache *c, int pid, uint64_t start, uint64_t end,
                           const char *path, uint64_t dev, uint64_t ino,
                           struct sptd_col_symcache_file **out)
{
	struct sptd_col_symcache_file *f;
	struct stat sb;
	size_t b;
	int fd, named, ret;

	if (!c || !path || !out)
		return -EINVAL;
	*out = NULL;
	fd = sptd_col_symcache_locate(pid, start, end, path, dev, ino, &sb, &named);
	if (fd < 0)
		return -ENOENT;
	b = bucket_of((uint64_t)sb.st_dev, (uint64_t)sb.st_ino);
	for (f = c->buckets[b]; f; f = f->next) {
		if (f->dev != (uint64_t)sb.st_dev || f->ino != (uint64_t)sb.st_ino)
			continue;
		if (f->mtime_ns == mtime_ns(&sb) && f->size == (uint64_t)sb.st_size &&
		    file_still_same(c, f, fd)) {
			ret = file_route(f, pid, start, end, path, dev, ino);
			if (ret < 0)
				goto out;
			f->used_gen = c->gen;
			c->stats.file_hits++;
			*out = f;
			goto out;
		}
		/* the same inode rewritten: only if no incident still holds it */
		if (f->used_gen == c->gen)
			break;
		file_unlink(c, f);
		break;
	}
	ret = -ENOMEM;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto out;
	f->dev = (uint64_t)sb.st_dev;
	f->ino = (uint64_t)sb.st_ino;
	f->mtime_ns = mtime_ns(&sb);
	f->size = (uint64_t)sb.st_size;
	ret = file_route(f, pid, start, end, path, dev, ino);
	if (ret < 0) {
		free(f);
		goto out;
	}
	c->stats.file_heads++;
	ret = sptd_dec_symfile_load_elf_head_fd(fd, &f->head);
	if (ret < 0) {
		free(f->path);
		free(f);
		ret = ret == -ENOMEM ? ret : -ENOENT;
		goto out;
	}
	f->used_gen = f->checked_gen = c->gen;
	f->next = c->buckets[b];
	c->buckets[b] = f;
	c->nfiles++;
	*out = f;
	ret = 0;
out:
	close(fd);
	return ret;
}

/* The inode generation of @path (FS_IOC_GETVERSION), 0 and *@gen; -errno
 * where the file system does not keep one. */
static int file_generation(const char *path, uint64_t *gen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), ret = 0;
	int v = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, FS_IOC_GETVERSION, &v) < 0)
		ret = -errno;
	close(fd);
	*gen = (uint32_t)v;
	return ret;
}

int sptd_col_symcache_file_recorded(struct sptd_col_symcache *c, const char *path,
                                    uint64_t dev, uint64_t ino, uint64_t generation,
                                    const char *build_id, struct sptd_col_symcache_file **out)
{
	struct sptd_col_symcache_file *f = NULL;
	const char *have;
	struct stat sb;
	uint64_t gen = 0;
	int ret;

	if (!c || !path || !out)
		return -EINVAL;
	*out = NULL;
	if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
		return -ENOENT;
	if (!build_id && ((uint64_t)sb.st_dev != dev || (uint64_t)sb.st_ino != ino ||
	                  (generation && file_generation(path, &gen) == 0 && gen != generation)))
		return -ESTALE;
	/* no process to read map_files of: @path or nothing */
	ret = sptd_col_symcache_file(c, 0, 0, 0, path, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino,
	                             &f);
	if (ret < 0)
		return ret;
	/* the entry is what was read: it must be the recorded file too */
	have = sptd_dec_symfile_build_id(f->head);
	if (build_id ? !have || !sptd_dec_build_id_match(have, build_id)
	             : f->dev != dev || f->ino != ino)
		return -ESTALE;
	*out = f;
	return 0;
}

const struct sptd_dec_symfile *sptd_col_symcache_file_head(const struct sptd_col_symcache_file *f)
{
	return f ? f->head : NULL;
}

const struct sptd_dec_symfile *sptd_col_symcache_file_syms(struct sptd_col_symcache *c,
                                                           struct sptd_col_symcache_file *f)
{
	const char *want, *got;
	struct stat sb;
	int fd, named, ret;

	if (!c || !f)
		return NULL;
	if (f->syms_state)
		return f->syms;
	f->syms_state = -1;
	c->stats.file_tables++;
	/* located again as the headers were, and read only if it is the very
	 * file (inode, size, mtime) they came from */
	fd = sptd_col_symcache_locate(f->pid, f->start, f->end, f->path, f->map_dev, f->map_ino,
	                              &sb, &named);
	if (fd < 0)
		return NULL;
	ret = -ESTALE;
	if ((uint64_t)sb.st_dev == f->dev && (uint64_t)sb.st_ino == f->ino &&
	    mtime_ns(&sb) == f->mtime_ns && (uint64_t)sb.st_size == f->size)
		ret = sptd_dec_symfile_load_elf_fd_named(fd, named ? f->path : NULL, &f->syms);
	close(fd);
	if (ret < 0) {
		f->syms = NULL;
		return NULL;
	}
	/* the headers and the symbols must come from the same build */
	want = sptd_dec_symfile_build_id(f->head);
	got = sptd_dec_symfile_build_id(f->syms);
	if ((want || got) && (!want || !got || strcmp(want, got) != 0)) {
		sptd_dec_symfile_destroy(f->syms);
		f->syms = NULL;
		return NULL;
	}
	f->syms_state = 1;
	c->nsyms += sptd_dec_symfile_count(f->syms);
	return f->syms;
}

/* ---- the kernel ---------------------------------------------------------------- */

/* FNV-1a of what in /proc/modules moves symbols: each module's name, size
 * and address (not its reference count, which changes all the time). */
static uint64_t modules_hash(void)
{
	char line[1024];
	uint64_t h = 0xcbf29ce484222325ull;
	FILE *f;

	snprintf(line, sizeof(line), "%s/proc/modules", sptd_col_kernel_root(NULL));
	f = fopen(line, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char name[256], addr[64];
		unsigned long size;

		if (sscanf(line, "%255s %lu %*s %*s %*s %63s", name, &size, addr) < 2)
			continue;
		for (const char *p = name; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
		h = (h ^ size) * 0x100000001b3ull;
		for (const char *p = addr; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	}
	fclose(f);
	return h;
}

static void kernel_load(struct sptd_col_symcache *c)
{
	char path[4200];
	int ret;

	c->modules_hash = modules_hash();
	c->stats.kallsyms_reads++;
	snprintf(path, sizeof(path), "%s/proc/kallsyms", sptd_col_kernel_root(NULL));
	ret = sptd_dec_symfile_load_kallsyms(path, &c->kernel);
	if (ret < 0) {
		c->kernel = NULL;
		c->kernel_state = -1;
		if (!c->kernel_warned)
			sptd_col_log(LOG_WARNING, "symbols: /proc/kallsyms unreadable (%s): kernel "
			             "frames stay unnamed; run as root with kernel.kptr_restrict < 2",
			             strerror(-ret));
		c->kernel_warned = 1;
		return;
	}
	c->kernel_state = 1;
}

const struct sptd_dec_symfile *sptd_col_symcache_kernel(struct sptd_col_symcache *c)
{
	if (!c)
		return NULL;
	if (!c->kernel_state)
		kernel_load(c);
	return c->kernel;
}

/* ---- the vDSO ------------------------------------------------------------------ */

/* A table of the vDSO image @buf (@len bytes), through a memfd since it is
 * not a file: NULL when it cannot be read as ELF. */
static struct sptd_dec_symfile *vdso_table(const unsigned char *buf, size_t len)
{
	struct sptd_dec_symfile *sf = NULL;
	int fd = memfd_create("sptd-vdso", MFD_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (write(fd, buf, len) == (ssize_t)len && sptd_dec_symfile_load_elf_fd(fd, &sf) < 0)
		sf = NULL;
	close(fd);
	return sf;
}

const struct sptd_dec_symfile *sptd_col_symcache_vdso(struct sptd_col_symcache *c, int pid,
                                                      uint64_t start, uint64_t end)
{
	struct symcache_vdso *v;
	size_t len = (size_t)(end - start);
	unsigned char *buf;
	char path[64];
	int mem, i;

	if (!c || pid <= 0 || end <= start || len > VDSO_MAX)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0)
		return NULL;
	buf = malloc(len);
	if (!buf || pread(mem, buf, len, (off_t)start) != (ssize_t)len) {
		free(buf);
		close(mem);
		return NULL;
	}
	close(mem);
	for (i = 0; i < c->nvdso; i++) {
		if (c->vdso[i].len == len && memcmp(c->vdso[i].bytes, buf, len) == 0) {
			free(buf);
			c->vdso[i].used_gen = c->gen;
			return c->vdso[i].sf;
		}
	}
	/* a new one: take a free slot, else the one unused longest (never one
	 * this incident uses) */
	if (c->nvdso < VDSO_KEEP) {
		i = c->nvdso++;
	} else {
		for (i = -1; ++i < VDSO_KEEP && c->vdso[i].used_gen == c->gen;)
			;
		if (i == VDSO_KEEP) {
			free(buf);
			return NULL;
		}
		free(c->vdso[i].bytes);
		sptd_dec_symfile_destroy(c->vdso[i].sf);
	}
	v = &c->vdso[i];
	v->bytes = buf;
	v->len = len;
	v->sf = vdso_table(buf, len);
	c->stats.vdso_tables++;
	v->used_gen = c->gen;
	return v->sf;
}

int sptd_col_symcache_vdso_image(const struct sptd_col_symcache *c,
                                 const struct sptd_dec_symfile *sf,
                                 const unsigned char **bytes, size_t *len)
{
	if (!c || !sf || !bytes || !len)
		return -EINVAL;
	for (int i = 0; i < c->nvdso; i++) {
		if (c->vdso[i].sf == sf) {
			*bytes = c->vdso[i].bytes;
			*len = c->vdso[i].len;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- the incident cycle ------------------------------------------------------------ */

int sptd_col_symcache_create(int enabled, struct sptd_col_symcache **out)
{
	struct sptd_col_symcache *c;
	const char *env = getenv("SPTD_SYMBOL_CACHE");

	if (!out)
		return -EINVAL;
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (enabled < 0)
		enabled = !(env && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0));
	c->enabled = enabled != 0;
	if (c->enabled)
		kernel_load(c);
	*out = c;
	return 0;
}

void sptd_col_symcache_stats(const struct sptd_col_symcache *c,
                             struct sptd_col_symcache_stats *stats)
{
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (c && stats)
		*stats = c->stats;
}

void sptd_col_symcache_begin(struct sptd_col_symcache *c)
{
	if (c)
		c->gen++;
}

/* Oldest-first order of last use. */
static int by_use(const void *a, const void *b)
{
	const struct sptd_col_symcache_file *x = *(struct sptd_col_symcache_file *const *)a;
	const struct sptd_col_symcache_file *y = *(struct sptd_col_symcache_file *const *)b;

	return x->used_gen < y->used_gen ? -1 : x->used_gen > y->used_gen;
}

/* Drop idle entries, then the least recently used beyond the limits. */
static void evict(struct sptd_col_symcache *c, int all)
{
	struct sptd_col_symcache_file **list;
	size_t n = 0, i;

	list = c->nfiles ? malloc(c->nfiles * sizeof(*list)) : NULL;
	for (size_t b = 0; b < CACHE_BUCKETS; b++) {
		struct sptd_col_symcache_file **p = &c->buckets[b];

		while (*p) {
			struct sptd_col_symcache_file *f = *p;

			if (all || !list || f->used_gen + CACHE_IDLE_INCIDENTS < c->gen) {
				*p = f->next;
				c->nfiles--;
				file_free(c, f);
				continue;
			}
			list[n++] = f;
			p = &f->next;
		}
	}
	if (n > 1)
		qsort(list, n, sizeof(*list), by_use);
	for (i = 0; i < n && (c->nfiles > CACHE_MAX_FILES || c->nsyms > CACHE_MAX_SYMS); i++)
		file_unlink(c, list[i]);
	free(list);
}

void sptd_col_symcache_end(struct sptd_col_symcache *c)
{
	if (!c)
		return;
	evict(c, !c->enabled);
	if (!c->enabled) {
		sptd_dec_symfile_destroy(c->kernel);
		c->kernel = NULL;
		c->kernel_state = 0;
		for (int i = 0; i < c->nvdso; i++) {
			free(c->vdso[i].bytes);
			sptd_dec_symfile_destroy(c->vdso[i].sf);
		}
		c->nvdso = 0;
		return;
	}
	/* a module came or went: re-read kallsyms now, not on the next trigger */
	if (c->kernel_state && modules_hash() != c->modules_hash) {
		sptd_dec_symfile_destroy(c->kernel);
		c->kernel = NULL;
		kernel_load(c);
	}
}

void sptd_col_symcache_destroy(struct sptd_col_symcache *c)
{
	if (!c)
		return;
	evict(c, 1);
	sptd_dec_symfile_destroy(c->kernel);
	for (int i = 0; i < c->nvdso; i++) {
		free(c->vdso[i].bytes);
		sptd_dec_symfile_destroy(c->vdso[i].sf);
	}
	free(c);
}
