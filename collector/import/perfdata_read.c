/* perfdata_read.c — the perf.data container: file header, attributes with
 * their ids, feature sections and the record stream.
 *
 * Layout (perf.data-file-format.txt): a 104-byte header {magic "PERFILE2",
 * header size, attr size, attrs section, data section, event_types section,
 * 256 feature bits}; the attrs section holds perf_event_attr + ids section
 * per event; the data section holds records, each an 8-byte header {type,
 * misc, size}; an AUXTRACE record is followed by its buffer; after the data
 * section comes one {offset, size} per set feature bit, in bit order. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata-local.h"
#include "sptd_dec.h"

#define PD_MAGIC 0x32454c4946524550ull   /* "PERFILE2" little-endian */
#define PD_MAGIC_SWAPPED 0x50455246494c4532ull
#define PD_HEADER_SIZE 104
#define PD_ATTR_MIN 64                   /* PERF_ATTR_SIZE_VER0 */

uint64_t sptd_col_pd_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

uint32_t sptd_col_pd_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int fail(struct sptd_col_perfdata *pd, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sptd_col_perfdata *pd, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pd->err, sizeof(pd->err), fmt, ap);
	va_end(ap);
	return err;
}

/* 1 if [off, off+len) lies inside the file. */
static int in_file(const struct sptd_col_perfdata *pd, uint64_t off, uint64_t len)
{
	return off <= pd->size && len <= pd->size - off;
}

static int read_attrs(struct sptd_col_perfdata *pd, uint64_t attr_size,
                      uint64_t off, uint64_t size)
{
	size_t n, i;

	if (attr_size < PD_ATTR_MIN + 16 || attr_size > 4096)
		return fail(pd, -EBADMSG, "bad attribute size %llu in the file header",
		            (unsigned long long)attr_size);
	if (!in_file(pd, off, size) || size % attr_size)
		return fail(pd, -EBADMSG, "attribute section (offset %llu, %llu bytes) is "
		            "outside the file: truncated?", (unsigned long long)off,
		            (unsigned long long)size);
	n = size / attr_size;
	if (!n)
		return fail(pd, -EBADMSG, "the file describes no events");
	pd->attrs = calloc(n, sizeof(*pd->attrs));
	if (!pd->attrs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const uint8_t *a = pd->map + off + i * attr_size;
		const uint8_t *ids = a + attr_size - 16;
		uint64_t ids_off = sptd_col_pd_u64(ids), ids_size = sptd_col_pd_u64(ids + 8);
		struct sptd_col_perfdata_attr *at = &pd->attrs[i];

		/* attr_size >= PD_ATTR_MIN + 16: the decode cannot fail */
		sptd_col_perf_attr_decode(a, (size_t)attr_size - 16, &at->event);
		if (ids_size) {
			if (!in_file(pd, ids_off, ids_size) || ids_size % 8)
				return fail(pd, -EBADMSG, "ids of event %zu are outside the file: "
				            "truncated?", i);
			at->ids = (const uint64_t *)(const void *)(pd->map + ids_off);
			at->nids = ids_size / 8;
		}
	}
	pd->nattrs = n;
	return 0;
}

static int read_features(struct sptd_col_perfdata *pd, const uint8_t *bits)
{
	uint64_t pos = pd->data_off + pd->data_size;
	int feat;

	for (feat = 1; feat < PD_FEAT_MAX; feat++) {
		uint64_t off, size;

		if (!(bits[feat / 8] & (1u << (feat % 8))))
			continue;
		if (!in_file(pd, pos, 16))
			return fail(pd, -EBADMSG, "feature table ends after the end of the file: "
			            "the file is truncated");
		off = sptd_col_pd_u64(pd->map + pos);
		size = sptd_col_pd_u64(pd->map + pos + 8);
		pos += 16;
		if (!in_file(pd, off, size))
			return fail(pd, -EBADMSG, "feature %d lies outside the file: the file is "
			            "truncated", feat);
		pd->feat_off[feat] = off;
		pd->feat_size[feat] = size;
	}
	return 0;
}

static int parse_header(struct sptd_col_perfdata *pd)
{
	const uint8_t *h = pd->map;
	uint64_t magic, hsize;
	int ret;

	if (pd->size < 16)
		return fail(pd, -EBADMSG, "not a perf.data file (only %zu bytes)", pd->size);
	magic = sptd_col_pd_u64(h);
	if (magic == PD_MAGIC_SWAPPED)
		return fail(pd, -ENOTSUP, "big-endian perf.data is not supported");
	if (magic != PD_MAGIC)
		return fail(pd, -EBADMSG, "not a perf.data file (no PERFILE2 magic)");
	hsize = sptd_col_pd_u64(h + 8);
	if (hsize == 16)
		return fail(pd, -ENOTSUP, "pipe-mode perf.data is not supported: record to "
		            "a file (perf record -o FILE) or convert with perf inject -o FILE");
	if (hsize < PD_HEADER_SIZE || pd->size < PD_HEADER_SIZE)
		return fail(pd, -EBADMSG, "perf.data header is truncated");
	pd->data_off = sptd_col_pd_u64(h + 40);
	pd->data_size = sptd_col_pd_u64(h + 48);
	if (pd->data_off < PD_HEADER_SIZE || pd->data_off > pd->size)
		return fail(pd, -EBADMSG, "data section starts at %llu, outside the %zu-byte "
		            "file: truncated?", (unsigned long long)pd->data_off, pd->size);
	if (pd->data_size == 0 && pd->size > pd->data_off) {
		/* perf record did not finish (killed): records run to the end */
		pd->data_size = pd->size - pd->data_off;
		pd->data_size_guessed = 1;
	} else if (!in_file(pd, pd->data_off, pd->data_size)) {
		return fail(pd, -EBADMSG, "the file is truncated: its data section needs %llu "
		            "bytes at offset %llu but the file has %zu",
		            (unsigned long long)pd->data_size, (unsigned long long)pd->data_off,
		            pd->size);
	}
	ret = read_attrs(pd, sptd_col_pd_u64(h + 16), sptd_col_pd_u64(h + 24),
	                 sptd_col_pd_u64(h + 32));
	if (ret < 0)
		return ret;
	if (pd->data_size_guessed)
		return 0;
	return read_features(pd, h + 72);
}

int sptd_col_perfdata_open(const char *path, struct sptd_col_perfdata **out,
                           char *err, size_t errlen)
{
	struct sptd_col_perfdata *pd;
	char file[PATH_MAX];
	struct stat sb;
	int fd = -1, ret;

	if (err && errlen)
		err[0] = 0;
	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	snprintf(file, sizeof(file), "%s", path);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		snprintf(file, sizeof(file), "%s/data", path);   /* perf record --kcore */
	/* never blocks on a FIFO, never reads a device; any size (mapped) */
	fd = sptd_dec_file_open(file, SPTD_DEC_OPEN_ANY_SIZE, &sb);
	if (fd == -ENXIO) {
		ret = fail(pd, -EBADMSG, "%s is not a regular file", file);
		goto out;
	}
	if (fd < 0) {
		ret = fail(pd, fd, "%s: %s", file, strerror(-fd));
		goto out;
	}
	pd->size = (size_t)sb.st_size;
	if (pd->size) {
		void *m = mmap(NULL, pd->size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (m == MAP_FAILED) {
			ret = fail(pd, -errno, "%s: mmap: %s", file, strerror(errno));
			goto out;
		}
		pd->map = m;
	}
	ret = parse_header(pd);
out:
	if (fd >= 0)
		close(fd);
	if (ret < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s", pd->err);
		sptd_col_perfdata_close(pd);
		return ret;
	}
	*out = pd;
	return 0;
}

void sptd_col_perfdata_close(struct sptd_col_perfdata *pd)
{
	if (!pd)
		return;
	if (pd->map)
		munmap((void *)pd->map, pd->size);
	free(pd->attrs);
	free(pd);
}

const char *sptd_col_perfdata_errmsg(const struct sptd_col_perfdata *pd)
{
	return pd ? pd->err : "";
}

int sptd_col_perfdata_walk(struct sptd_col_perfdata *pd, sptd_col_perfdata_rec_fn fn,
                           void *ctx)
{
	uint64_t pos, end;
	int ret;

	if (!pd || !fn)
		return -EINVAL;
	pos = pd->data_off;
	end = pd->data_off + pd->data_size;
	while (pos < end) {
		struct sptd_col_perfdata_rec rec;

		if (end - pos < 8)
			return fail(pd, -EBADMSG, "truncated record header at offset %llu",
			            (unsigned long long)pos);
		memset(&rec, 0, sizeof(rec));
		rec.data = pd->map + pos;
		rec.type = sptd_col_pd_u32(rec.data);
		memcpy(&rec.misc, rec.data + 4, 2);
		memcpy(&rec.size, rec.data + 6, 2);
		rec.offset = pos;
		if (rec.size < 8)
			return fail(pd, -EBADMSG, "corrupt record (size %u) at offset %llu",
			            rec.size, (unsigned long long)pos);
		if (rec.size > end - pos)
			return fail(pd, -EBADMSG, "the file is truncated: record at offset %llu "
			            "needs %u bytes, %llu left", (unsigned long long)pos, rec.size,
			            (unsigned long long)(end - pos));
		if (rec.type == SPTD_PERF_RECORD_COMPRESSED)
			return fail(pd, -ENOTSUP, "compressed perf.data (perf record -z) is not "
			            "supported: decompress with perf inject -i IN -o OUT");
		pos += rec.size;
		if (rec.type == SPTD_PERF_RECORD_AUXTRACE) {
			if (rec.size < 48)
				return fail(pd, -EBADMSG, "corrupt AUXTRACE record at offset %llu",
				            (unsigned long long)rec.offset);
			rec.payload_len = sptd_col_pd_u64(rec.data + 8);
			if (rec.payload_len > end - pos)
				return fail(pd, -EBADMSG, "the file is truncated: AUXTRACE buffer at "
				            "offset %llu needs %llu bytes, %llu left",
				            (unsigned long long)pos,
				            (unsigned long long)rec.payload_len,
				            (unsigned long long)(end - pos));
			rec.payload = pd->map + pos;
			pos += rec.payload_len;
		}
		ret = fn(ctx, &rec);
		if (ret < 0)
			return ret;
	}
	return 0;
}

const uint8_t *sptd_col_perfdata_feature(const struct sptd_col_perfdata *pd, int feat,
                                         size_t *len)
{
	if (!pd || feat <= 0 || feat >= PD_FEAT_MAX || !pd->feat_size[feat])
		return NULL;
	if (len)
		*len = pd->feat_size[feat];
	return pd->map + pd->feat_off[feat];
}

/* One perf_header_string {u32 len; char str[len]} at *pos. */
static int take_string(const uint8_t *p, size_t size, size_t *pos, char *buf, size_t len)
{
	uint32_t n;

	if (size - *pos < 4)
		return -EBADMSG;
	n = sptd_col_pd_u32(p + *pos);
	*pos += 4;
	if (n > size - *pos)
		return -EBADMSG;
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), (const char *)p + *pos);
	*pos += n;
	return (int)strlen(buf);
}

int sptd_col_perfdata_feature_string(const struct sptd_col_perfdata *pd, int feat,
                                     char *buf, size_t len)
{
	size_t size = 0, pos = 0;
	const uint8_t *p = sptd_col_perfdata_feature(pd, feat, &size);

	if (!buf || !len)
		return -EINVAL;
	buf[0] = 0;
	if (!p)
		return -ENOENT;
	return take_string(p, size, &pos, buf, len);
}

int sptd_col_perfdata_cmdline(const struct sptd_col_perfdata *pd, char *buf, size_t len)
{
	size_t size = 0, pos = 4, used = 0;
	const uint8_t *p = sptd_col_perfdata_feature(pd, PD_FEAT_CMDLINE, &size);
	uint32_t n, i;
	char arg[1024];

	if (!buf || !len)
		return -EINVAL;
	buf[0] = 0;
	if (!p)
		return -ENOENT;
	if (size < 4)
		return -EBADMSG;
	n = sptd_col_pd_u32(p);
	for (i = 0; i < n; i++) {
		if (take_string(p, size, &pos, arg, sizeof(arg)) < 0)
			return -EBADMSG;
		if (used + 1 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", arg);
		if (used >= len)
			used = len - 1;
	}
	return (int)used;
}
