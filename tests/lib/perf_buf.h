/* perf_buf.h — a growing byte buffer and the perf.data pieces the test
 * generators write with it (sptd-ptgen2perf, sptd-spegen): records with
 * their 8-byte header, NUL-terminated strings padded to 8 bytes, and
 * perf_header_string feature strings (u32 length padded to 64).  Header
 * only: each generator is one small program. */
#ifndef SPTD_TEST_PERF_BUF_H
#define SPTD_TEST_PERF_BUF_H

#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf_event_attr flag bits (the bitfield word at offset 40) */
#define AF_DISABLED       (1ull << 0)
#define AF_EXCLUDE_KERNEL (1ull << 5)
#define AF_EXCLUDE_HV     (1ull << 6)
#define AF_MMAP           (1ull << 8)
#define AF_COMM           (1ull << 9)
#define AF_SAMPLE_ID_ALL  (1ull << 18)
#define AF_MMAP2          (1ull << 23)
#define AF_COMM_EXEC      (1ull << 24)
#define AF_CONTEXT_SWITCH (1ull << 26)

/* record types and header feature bits */
enum { REC_COMM = 3, REC_MMAP2 = 10, REC_SWITCH_CPU_WIDE = 15, REC_FINISHED_ROUND = 68,
       REC_AUXTRACE_INFO = 70, REC_AUXTRACE = 71, REC_TIME_CONV = 79 };
enum { FEAT_HOSTNAME = 3, FEAT_OSRELEASE = 4, FEAT_VERSION = 5, FEAT_ARCH = 6,
       FEAT_NRCPUS = 7, FEAT_CPUDESC = 8, FEAT_CPUID = 9, FEAT_CMDLINE = 11 };

/* A growing byte buffer. */
struct perf_buf {
	uint8_t *p;          /* heap */
	size_t len, cap;     /* used / allocated */
	int oom;             /* an append failed: every later one is dropped */
};

/* @n zeroed bytes appended; their address (valid until the next append),
 * NULL when out of memory. */
static inline uint8_t *perf_buf_take(struct perf_buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->len + n > b->cap) {
		size_t ncap = b->cap ? b->cap : 4096;
		void *np;

		while (ncap < b->len + n)
			ncap *= 2;
		np = realloc(b->p, ncap);
		if (!np) {
			b->oom = 1;
			return NULL;
		}
		b->p = np;
		b->cap = ncap;
	}
	memset(b->p + b->len, 0, n);
	b->len += n;
	return b->p + b->len - n;
}

static inline void perf_buf_put(struct perf_buf *b, const void *v, size_t n)
{
	uint8_t *p = perf_buf_take(b, n);

	if (p)
		memcpy(p, v, n);
}

static inline void perf_buf_u32(struct perf_buf *b, uint32_t v) { perf_buf_put(b, &v, 4); }
static inline void perf_buf_u64(struct perf_buf *b, uint64_t v) { perf_buf_put(b, &v, 8); }

/* A record header (size filled by perf_buf_rec_end); the record's offset. */
static inline size_t perf_buf_rec_begin(struct perf_buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->len;

	perf_buf_u32(b, type);
	perf_buf_put(b, &misc, 2);
	perf_buf_take(b, 2);
	return at;
}

static inline void perf_buf_rec_end(struct perf_buf *b, size_t at)
{
	uint16_t size;

	if (b->oom)
		return;
	size = (uint16_t)(b->len - at);
	memcpy(b->p + at + 6, &size, 2);
}

/* A NUL-terminated string padded to 8 bytes (file names, comms). */
static inline void perf_buf_str8(struct perf_buf *b, const char *s)
{
	size_t n = strlen(s) + 1;

	perf_buf_put(b, s, n);
	perf_buf_take(b, (8 - n % 8) % 8);
}

/* perf_header_string: u32 length (padded to 64 like perf) + bytes. */
static inline void perf_buf_hstr(struct perf_buf *b, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + 63) / 64 * 64;

	perf_buf_u32(b, (uint32_t)padded);
	perf_buf_put(b, s, n);
	perf_buf_take(b, padded - n);
}

/* perf_event_attr as the file keeps it (PERF_ATTR_SIZE_VER5, 112 bytes)
 * followed by its ids section (offset, size): a perf_file_attr. */
#define PERF_BUF_ATTR_SIZE 112
#define PERF_BUF_FILE_ATTR_SIZE (PERF_BUF_ATTR_SIZE + 16)

/* One perf_file_attr with the fields the generators set. */
static inline void perf_buf_attr(struct perf_buf *b, uint32_t type, uint64_t config,
                                 uint64_t period, uint64_t sample_type, uint64_t flags,
                                 uint64_t ids_off, uint64_t ids_size)
{
	uint8_t *a = perf_buf_take(b, PERF_BUF_FILE_ATTR_SIZE);
	uint32_t size = PERF_BUF_ATTR_SIZE;

	if (!a)
		return;
	memcpy(a, &type, 4);
	memcpy(a + 4, &size, 4);
	memcpy(a + 8, &config, 8);
	memcpy(a + 16, &period, 8);
	memcpy(a + 24, &sample_type, 8);
	memcpy(a + 40, &flags, 8);
	memcpy(a + PERF_BUF_ATTR_SIZE, &ids_off, 8);
	memcpy(a + PERF_BUF_ATTR_SIZE + 8, &ids_size, 8);
}

/* The 104-byte file header: @nattrs attrs of @file_attr_size bytes each
 * right after it, the data section at @data_off (@data_len bytes), and
 * the feature bits @feats[0..@nfeat). */
static inline void perf_buf_file_header(struct perf_buf *f, uint64_t file_attr_size,
                                        uint64_t nattrs, uint64_t data_off, uint64_t data_len,
                                        const int *feats, size_t nfeat)
{
	uint8_t *h = perf_buf_take(f, 104);
	uint64_t v[6] = { 104, file_attr_size, 104, nattrs * file_attr_size, data_off, data_len };

	if (!h)
		return;
	memcpy(h, "PERFILE2", 8);
	memcpy(h + 8, v, sizeof(v));
	for (size_t i = 0; i < nfeat; i++)
		h[72 + feats[i] / 8] |= (uint8_t)(1u << (feats[i] % 8));
}

/* Write @b to @path (replaced): 0, -ENOMEM (an append had failed), -errno. */
static inline int perf_buf_write_file(const struct perf_buf *b, const char *path)
{
	FILE *out;
	int ret = 0;

	if (b->oom)
		return -ENOMEM;
	out = fopen(path, "wb");
	if (!out)
		return -errno;
	if (fwrite(b->p, 1, b->len, out) != b->len)
		ret = -EIO;
	if (fclose(out) != 0 && ret == 0)
		ret = -EIO;
	return ret;
}

#endif /* SPTD_TEST_PERF_BUF_H */
