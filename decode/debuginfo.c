/* debuginfo.c — where the symbols of a stripped file are: its separate
 * debug file (by build-id, by .gnu_debuglink) or its MiniDebugInfo.
 *
 * Every file here may belong to a user (a debuglink names a file next to
 * the user's program): one function, debug_open, opens them all — no
 * symlink games with FIFOs or devices (O_NONBLOCK, S_ISREG), no file over
 * DEBUG_FILE_MAX — and what it opens is only ever parsed, never trusted: a
 * wrong or hostile debug file gives wrong names for that program, nothing
 * more.  MiniDebugInfo decompression is bounded in memory and output. */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debuginfo-local.h"
#include "elf-local.h"
#include "sptd_dec.h"

/* Default debug root, where Debian's -dbg / -dbgsym packages install. */
#define DEBUG_ROOT_DEFAULT "/usr/lib/debug"
/* Largest separate debug file read (a debuglink's CRC reads it whole). */
#define DEBUG_FILE_MAX (4ull << 30)
/* Largest MiniDebugInfo, compressed and decompressed, and the decoder's
 * memory limit. */
#define MINI_IN_MAX (64u << 20)
#define MINI_OUT_MAX (256u << 20)
#define MINI_MEMLIMIT (128u << 20)

/* ---- opening a candidate ------------------------------------------------- */

/* Open a candidate debug file: a regular file of at most DEBUG_FILE_MAX
 * bytes, without blocking on a FIFO.  The fd, or -ENOENT (any reason not to
 * read it: missing, not regular, too big), -ENOMEM. */
static int debug_open(const char *path, uint64_t *size)
{
	struct stat sb;
	int fd = sptd_dec_file_open(path, 0, &sb);

	if (fd < 0)
		return fd == -ENOMEM ? -ENOMEM : -ENOENT;
	if ((uint64_t)sb.st_size > DEBUG_FILE_MAX) {
		close(fd);
		return -ENOENT;
	}
	if (size)
		*size = (uint64_t)sb.st_size;
	return fd;
}

/* ---- debug roots ---------------------------------------------------------- */

/* The next root of the colon-separated list at *@list into @buf; 0 at the
 * end.  Empty entries are skipped. */
static int next_root(const char **list, char *buf, size_t len)
{
	while (**list) {
		const char *p = *list, *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		*list = end ? end + 1 : p + n;
		if (n == 0 || n >= len)
			continue;
		memcpy(buf, p, n);
		buf[n] = '\0';
		while (n > 1 && buf[n - 1] == '/')
			buf[--n] = '\0';
		return 1;
	}
	return 0;
}

static const char *debug_roots(void)
{
	const char *env = getenv("SPTD_DEBUG_DIRS");

	return env ? env : DEBUG_ROOT_DEFAULT;
}

/* ---- by build-id ------------------------------------------------------------ */

static int valid_hex(const char *s)
{
	size_t n = strlen(s);

	return n >= 4 && n <= 128 && strspn(s, "0123456789abcdef") == n;
}

/* The candidate @path opened as ELF, kept only if its build-id is @build_id. */
static int try_build_id(const char *path, const char *build_id, struct sptd_dec_elf **debug)
{
	struct sptd_dec_elf *e = NULL;
	char *bid = NULL;
	int fd = debug_open(path, NULL), ret;

	if (fd < 0)
		return fd;
	ret = sptd_dec_elf_open_fd_take(fd, path, &e);
	if (ret < 0)
		return ret == -ENOMEM ? ret : -ENOENT;
	ret = sptd_dec_elf_build_id(e, &bid);
	if (ret == 0 && strcmp(bid, build_id) == 0) {
		free(bid);
		*debug = e;
		return 0;
	}
	free(bid);
	sptd_dec_elf_close(e);
	return ret == -ENOMEM ? ret : -ENOENT;
}

static int find_by_build_id(const char *roots, const char *build_id,
                            struct sptd_dec_elf **debug)
{
	char root[4096], path[4096 + 200];
	int ret = -ENOENT;

	if (!build_id || !valid_hex(build_id))
		return -ENOENT;
	while (ret == -ENOENT && next_root(&roots, root, sizeof(root))) {
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, build_id,
		         build_id + 2);
		ret = try_build_id(path, build_id, debug);
	}
	return ret;
}

/* ---- by .gnu_debuglink ---------------------------------------------------------- */

/* The CRC-32 (IEEE, as gdb's gnu_debuglink_crc32 and zlib compute it) of
 * the whole file @fd. */
static int file_crc32(int fd, uint32_t *crc)
{
	const size_t chunk_len = 1u << 16;
	unsigned char *chunk = malloc(chunk_len);
	uint32_t c = 0;
	ssize_t n;
	off_t off = 0;

	if (!chunk)
		return -ENOMEM;
	while ((n = pread(fd, chunk, chunk_len, off)) > 0) {
		c = lzma_crc32(chunk, (size_t)n, c);
		off += n;
	}
	free(chunk);
	if (n < 0)
		return -ENOENT;
	*crc = c;
	return 0;
}

/* The candidate @path opened as ELF, kept only if its CRC-32 is @crc. */
/* A debuglink candidate is CRC'd whole before it is opened: an ELF file
 * first, and at most this big (a sparse 4 GiB file beside a binary took
 * 2.8 s per mapping that named it; real debug files stay well below). */
#define DEBUGLINK_CRC_MAX (1ull << 30)

static int try_debuglink(const char *path, uint32_t crc, struct sptd_dec_elf **debug)
{
	unsigned char magic[4];
	uint64_t size = 0;
	uint32_t got;
	int fd = debug_open(path, &size), ret;

	if (fd < 0)
		return fd;
	if (size > DEBUGLINK_CRC_MAX || pread(fd, magic, sizeof(magic), 0) != sizeof(magic) ||
	    memcmp(magic, "\177ELF", 4) != 0) {
		close(fd);
		return -ENOENT;
	}
	ret = file_crc32(fd, &got);
	if (ret < 0 || got != crc) {
		close(fd);
		return ret == -ENOMEM ? ret : -ENOENT;
	}
	ret = sptd_dec_elf_open_fd_take(fd, path, debug);
	return ret < 0 && ret != -ENOMEM ? -ENOENT : ret;
}

/* The name and CRC of @elf's .gnu_debuglink: a NUL-terminated file name
 * (no directory), padded to 4 bytes, then the CRC in the file's byte
 * order.  -ENODATA none or malformed. */
static int debuglink_read(struct sptd_dec_elf *elf, char *name, size_t namelen,
                          uint32_t *crc)
{
	const unsigned char *data;
	const void *raw;
	size_t len, n, at;

	if (sptd_dec_elf_section(elf, ".gnu_debuglink", &raw, &len) < 0)
		return -ENODATA;
	data = raw;
	n = strnlen((const char *)data, len);
	at = (n + 4) & ~(size_t)3;
	if (n == 0 || n >= namelen || at + 4 > len || memchr(data, '/', n) ||
	    strcmp((const char *)data, ".") == 0 || strcmp((const char *)data, "..") == 0)
		return -ENODATA;
	memcpy(name, data, n + 1);
	if (sptd_dec_elf_little_endian(elf))
		*crc = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 |
		       (uint32_t)data[at + 2] << 16 | (uint32_t)data[at + 3] << 24;
	else
		*crc = (uint32_t)data[at] << 24 | (uint32_t)data[at + 1] << 16 |
		       (uint32_t)data[at + 2] << 8 | (uint32_t)data[at + 3];
	return 0;
}

static int find_by_debuglink(struct sptd_dec_elf *elf, const char *roots,
                             struct sptd_dec_elf **debug)
{
	const char *path = sptd_dec_elf_path(elf), *slash;
	char name[256], dir[4096], root[4096], cand[3 * 4096];
	uint32_t crc;
	int ret;

	if (!path || path[0] != '/' || debuglink_read(elf, name, sizeof(name), &crc) < 0)
		return -ENOENT;
	slash = strrchr(path, '/');
	if ((size_t)(slash - path) >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	/* beside the file (never the file itself), then in .debug/ beside it */
	snprintf(cand, sizeof(cand), "%s/%s", dir, name);
	ret = strcmp(cand, path) == 0 ? -ENOENT : try_debuglink(cand, crc, debug);
	if (ret == -ENOENT) {
		snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, name);
		ret = try_debuglink(cand, crc, debug);
	}
	while (ret == -ENOENT && next_root(&roots, root, sizeof(root))) {
		snprintf(cand, sizeof(cand), "%s%s/%s", root, dir, name);
		ret = try_debuglink(cand, crc, debug);
	}
	return ret;
}

int sptd_dec_debuginfo_find(struct sptd_dec_elf *elf, const char *build_id,
                            struct sptd_dec_elf **debug, int *how)
{
	const char *roots = debug_roots();
	int ret;

	if (!elf || !debug || !how)
		return -EINVAL;
	*debug = NULL;
	*how = 0;
	if (!roots[0])
		return -ENOENT;   /* SPTD_DEBUG_DIRS="": separate debug files are off */
	ret = find_by_build_id(roots, build_id, debug);
	if (ret == 0) {
		*how = SPTD_DEC_SYMS_BUILD_ID;
		return 0;
	}
	if (ret != -ENOENT)
		return ret;
	ret = find_by_debuglink(elf, roots, debug);
	if (ret == 0)
		*how = SPTD_DEC_SYMS_DEBUGLINK;
	return ret;
}

/* ---- MiniDebugInfo ------------------------------------------------------------------ */

int sptd_dec_debuginfo_mini(struct sptd_dec_elf *elf, struct sptd_dec_elf **mini)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	const void *in;
	unsigned char *out = NULL;
	size_t in_len, cap = 0;
	lzma_ret lr;
	int ret;

	if (!elf || !mini)
		return -EINVAL;
	*mini = NULL;
	if (sptd_dec_elf_section(elf, ".gnu_debugdata", &in, &in_len) < 0)
		return -ENODATA;
	if (in_len > MINI_IN_MAX)
		return -EBADMSG;
	if (lzma_stream_decoder(&strm, MINI_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = in_len;
	do {
		if (strm.avail_out == 0) {
			size_t ncap = cap ? cap * 2 : in_len * 4 + 4096;
			unsigned char *grown;

			if (cap >= MINI_OUT_MAX) {
				ret = -EBADMSG;
				goto fail;
			}
			if (ncap > MINI_OUT_MAX)
				ncap = MINI_OUT_MAX;
			grown = realloc(out, ncap);
			if (!grown) {
				ret = -ENOMEM;
				goto fail;
			}
			out = grown;
			strm.next_out = out + cap;
			strm.avail_out = ncap - cap;
			cap = ncap;
		}
		lr = lzma_code(&strm, LZMA_FINISH);
	} while (lr == LZMA_OK);
	if (lr != LZMA_STREAM_END) {
		ret = lr == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
		goto fail;
	}
	ret = sptd_dec_elf_open_mem(out, (size_t)strm.total_out, mini);
	out = NULL;   /* taken over, freed on failure too */
fail:
	lzma_end(&strm);
	free(out);
	return ret;
}
