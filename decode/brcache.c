/* brcache.c — branch classes of the blocks libipt leaves unclassified:
 * the block's last instruction read from the section cache and classified
 * (opclass.c), remembered per (section, ip, mode) in a direct-mapped cache
 * of one decoder thread.  The hit path is inline (flow-local.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flow-local.h"

int sptd_dec_brcache_init(struct sptd_dec_brcache *bc, struct pt_image_section_cache *iscache)
{
	bc->iscache = iscache;
	bc->slots = calloc(SPTD_DEC_BRCACHE_SLOTS, sizeof(*bc->slots));
	return bc->slots ? 0 : -ENOMEM;
}

void sptd_dec_brcache_fini(struct sptd_dec_brcache *bc)
{
	if (!bc)
		return;
	free(bc->slots);
	bc->slots = NULL;
}

enum pt_insn_class sptd_dec_block_class(struct pt_image_section_cache *iscache,
                                        const struct pt_block *b)
{
	uint8_t insn[16];
	int n;

	if (b->truncated) {
		memcpy(insn, b->raw, b->size < sizeof(insn) ? b->size : sizeof(insn));
		n = b->size;
	} else {
		n = pt_iscache_read(iscache, insn, sizeof(insn), b->isid, b->end_ip);
	}
	if (n <= 0)
		return ptic_error;
	return sptd_dec_opclass(insn, (size_t)n < sizeof(insn) ? (size_t)n : sizeof(insn), b->mode);
}

enum pt_insn_class sptd_dec_brcache_fill(struct sptd_dec_brcache *bc, const struct pt_block *b)
{
	struct sptd_dec_brclass *c = sptd_dec_brcache_slot(bc, b->end_ip);
	enum pt_insn_class iclass = sptd_dec_block_class(bc->iscache, b);

	*c = (struct sptd_dec_brclass){ .ip = b->end_ip, .isid = b->isid, .mode = (int)b->mode,
	                                .iclass = (int)iclass };
	return iclass;
}
