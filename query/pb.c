/* pb.c — a small protobuf encoder: enough of the wire format to write
 * Perfetto traces by hand (varints, zigzag, length-delimited fields, nested
 * messages, packed arrays) into a growable buffer that is flushed to a FILE
 * one TracePacket at a time.
 *
 * Nested messages reserve 4 bytes for their length; on close the body is
 * moved back so that the length uses its minimal varint form (the output is
 * canonical, and a 4-byte length bounds a nested body at 256 MiB). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"
#include "query-local.h"

#define PB_LEN_RESERVE 4

void sptd_query_pb_init(struct sptd_query_pb *pb)
{
	memset(pb, 0, sizeof(*pb));
}

void sptd_query_pb_fini(struct sptd_query_pb *pb)
{
	if (!pb)
		return;
	free(pb->data);
	memset(pb, 0, sizeof(*pb));
}

void sptd_query_pb_reset(struct sptd_query_pb *pb)
{
	pb->len = 0;
	pb->depth = 0;
	pb->err = 0;
}

/* Make room for @n more bytes; sets the sticky error on failure. */
static int pb_reserve(struct sptd_query_pb *pb, size_t n)
{
	size_t cap;
	uint8_t *data;

	if (pb->err)
		return pb->err;
	if (pb->len + n <= pb->cap)
		return 0;
	cap = pb->cap ? pb->cap : 4096;
	while (cap < pb->len + n)
		cap *= 2;
	data = realloc(pb->data, cap);
	if (!data) {
		pb->err = -ENOMEM;
		return pb->err;
	}
	pb->data = data;
	pb->cap = cap;
	return 0;
}

static size_t pb_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

void sptd_query_pb_raw_varint(struct sptd_query_pb *pb, uint64_t v)
{
	if (pb_reserve(pb, 10))
		return;
	pb->len += pb_put_varint(pb->data + pb->len, v);
}

uint64_t sptd_query_pb_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void pb_tag(struct sptd_query_pb *pb, uint32_t field, int wire)
{
	sptd_query_pb_raw_varint(pb, ((uint64_t)field << 3) | (uint64_t)wire);
}

void sptd_query_pb_uint(struct sptd_query_pb *pb, uint32_t field, uint64_t v)
{
	pb_tag(pb, field, SPTD_PB_VARINT);
	sptd_query_pb_raw_varint(pb, v);
}

void sptd_query_pb_int(struct sptd_query_pb *pb, uint32_t field, int64_t v)
{
	pb_tag(pb, field, SPTD_PB_VARINT);
	sptd_query_pb_raw_varint(pb, (uint64_t)v);
}

void sptd_query_pb_bytes(struct sptd_query_pb *pb, uint32_t field,
                         const void *bytes, size_t len)
{
	pb_tag(pb, field, SPTD_PB_LEN);
	sptd_query_pb_raw_varint(pb, len);
	if (len == 0 || pb_reserve(pb, len))
		return;
	memcpy(pb->data + pb->len, bytes, len);
	pb->len += len;
}

void sptd_query_pb_text(struct sptd_query_pb *pb, uint32_t field, const char *s, size_t len)
{
	size_t i = 0, o = 0;
	char *fixed;

	/* protobuf strings are UTF-8 (protoc and Perfetto refuse others):
	 * text from an incident is any bytes, so a bad sequence becomes
	 * U+FFFD, as query's own output does */
	while (i < len) {
		int n = (unsigned char)s[i] < 0x80 ? 1 : sptd_query_utf8_seq(s + i, len - i);

		if (n <= 0)
			break;
		i += (size_t)n;
	}
	if (i == len) {
		sptd_query_pb_bytes(pb, field, s, len);
		return;
	}
	if (len > (SIZE_MAX - 1) / 3 || !(fixed = malloc(len * 3 + 1))) {
		if (!pb->err)
			pb->err = -ENOMEM;
		return;
	}
	for (i = 0; i < len;) {
		int n = (unsigned char)s[i] < 0x80 ? 1 : sptd_query_utf8_seq(s + i, len - i);

		if (n <= 0) {
			memcpy(fixed + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(fixed + o, s + i, (size_t)n);
			o += (size_t)n;
			i += (size_t)n;
		}
	}
	sptd_query_pb_bytes(pb, field, fixed, o);
	free(fixed);
}

void sptd_query_pb_string(struct sptd_query_pb *pb, uint32_t field, const char *s)
{
	if (!s)
		s = "";
	sptd_query_pb_text(pb, field, s, strlen(s));
}

void sptd_query_pb_begin(struct sptd_query_pb *pb, uint32_t field)
{
	if (pb->err)
		return;
	if (pb->depth >= SPTD_PB_MAX_DEPTH) {
		pb->err = -E2BIG;
		return;
	}
	pb_tag(pb, field, SPTD_PB_LEN);
	if (pb_reserve(pb, PB_LEN_RESERVE))
		return;
	pb->len += PB_LEN_RESERVE;
	pb->open[pb->depth++] = pb->len;
}

void sptd_query_pb_end(struct sptd_query_pb *pb)
{
	size_t body_at, body_len, n;
	uint8_t len_bytes[10];

	if (pb->err)
		return;
	if (pb->depth == 0) {
		pb->err = -EINVAL;
		return;
	}
	body_at = pb->open[--pb->depth];
	body_len = pb->len - body_at;
	if (body_len >= SPTD_PB_MAX_NESTED) {
		pb->err = -E2BIG;
		return;
	}
	n = pb_put_varint(len_bytes, body_len);
	memcpy(pb->data + body_at - PB_LEN_RESERVE, len_bytes, n);
	if (n < PB_LEN_RESERVE) {
		memmove(pb->data + body_at - PB_LEN_RESERVE + n, pb->data + body_at,
		        body_len);
		pb->len -= PB_LEN_RESERVE - n;
	}
}

void sptd_query_pb_raw(struct sptd_query_pb *pb, const struct sptd_query_pb *fields)
{
	if (fields->err) {
		if (!pb->err)
			pb->err = fields->err;
		return;
	}
	if (fields->len == 0 || pb_reserve(pb, fields->len))
		return;
	memcpy(pb->data + pb->len, fields->data, fields->len);
	pb->len += fields->len;
}

void sptd_query_pb_packed(struct sptd_query_pb *pb, uint32_t field,
                          const struct sptd_query_pb *body)
{
	if (body->err) {
		if (!pb->err)
			pb->err = body->err;
		return;
	}
	if (body->len == 0)
		return;
	sptd_query_pb_bytes(pb, field, body->data, body->len);
}

int sptd_query_pb_flush(struct sptd_query_pb *pb, uint32_t field, FILE *out,
                        uint64_t *bytes)
{
	uint8_t head[16];
	size_t n;
	int rc;

	if (pb->err) {
		rc = pb->err;
		goto out;
	}
	if (pb->depth != 0) {
		rc = -EINVAL;
		goto out;
	}
	n = pb_put_varint(head, ((uint64_t)field << 3) | SPTD_PB_LEN);
	n += pb_put_varint(head + n, pb->len);
	if (fwrite(head, 1, n, out) != n ||
	    (pb->len && fwrite(pb->data, 1, pb->len, out) != pb->len)) {
		rc = -EIO;
		goto out;
	}
	if (bytes)
		*bytes += n + pb->len;
	rc = 0;
out:
	sptd_query_pb_reset(pb);
	return rc;
}
