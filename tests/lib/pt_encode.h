/* pt_encode.h — the few lines every hand-made PT trace of the tests opens
 * and closes libipt's encoder with. */
#ifndef SPTD_TEST_PT_ENCODE_H
#define SPTD_TEST_PT_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

/* An encoder writing into @buf (@cap bytes); NULL out of memory. */
struct pt_encoder *sptd_test_encoder(uint8_t *buf, size_t cap);
/* Encode @p and zero it for the next packet: 1 when it failed, else 0. */
int sptd_test_encode(struct pt_encoder *enc, struct pt_packet *p);
/* Free @enc: the bytes written, 0 when @bad or the offset is unknown. */
size_t sptd_test_encoder_end(struct pt_encoder *enc, int bad);

#endif
