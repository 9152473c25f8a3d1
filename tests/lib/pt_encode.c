/* pt_encode.c — see pt_encode.h. */
#include <string.h>

#include "pt_encode.h"

struct pt_encoder *sptd_test_encoder(uint8_t *buf, size_t cap)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap;
	return pt_alloc_encoder(&cfg);
}

int sptd_test_encode(struct pt_encoder *enc, struct pt_packet *p)
{
	int r = pt_enc_next(enc, p);

	memset(p, 0, sizeof(*p));
	return r < 0;
}

size_t sptd_test_encoder_end(struct pt_encoder *enc, int bad)
{
	uint64_t off = 0;

	if (!bad && pt_enc_get_offset(enc, &off) < 0)
		bad = 1;
	pt_free_encoder(enc);
	return bad ? 0 : (size_t)off;
}
