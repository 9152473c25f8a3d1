/* verify.c — decode ptgen's own PT with libipt and compare it with the
 * recorded execution, instruction by instruction.  A difference means the
 * generator (or its branch decoder) is wrong, so the ground truth cannot be
 * trusted: it fails loudly with the first differing position. */
#include <errno.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <string.h>

#include "ptgen.h"

/* The rewritten bytes, read through libipt's callback as they were at the
 * instruction being decoded: the old ones before the rewrite's index. */
struct patch_read {
	const struct sptd_ptgen_patch *patch;
	size_t pos;               /* instructions decoded so far */
};

static int patch_cb(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip,
                    void *context)
{
	const struct patch_read *r = context;
	const struct sptd_ptgen_patch *p = r->patch;
	size_t k;

	(void)asid;
	if (!p || ip < p->addr || ip - p->addr >= p->len)
		return -pte_nomap;
	k = p->len - (size_t)(ip - p->addr);
	if (k > size)
		k = size;
	memcpy(buffer, (r->pos < p->index ? p->old_bytes : p->new_bytes) + (ip - p->addr), k);
	return (int)k;
}

/* Add section @sec to @image, less the patched range (read by patch_cb). */
static int add_section(struct pt_image *image, const struct sptd_ptgen_section *sec,
                       const struct sptd_ptgen_patch *p)
{
	struct pt_asid asid;
	uint64_t end = sec->vaddr + sec->size;
	int status;

	pt_asid_init(&asid);
	asid.cr3 = sec->cr3;
	if (!p || p->addr + p->len <= sec->vaddr || p->addr >= end)
		return pt_image_add_file(image, sec->file, 0, sec->size, &asid, sec->vaddr);
	status = p->addr > sec->vaddr ? pt_image_add_file(image, sec->file, 0,
	                                                  p->addr - sec->vaddr, &asid, sec->vaddr)
	                              : 0;
	if (status >= 0 && p->addr + p->len < end)
		status = pt_image_add_file(image, sec->file, p->addr + p->len - sec->vaddr,
		                           end - (p->addr + p->len), &asid, p->addr + p->len);
	return status;
}

int sptd_ptgen_verify(const uint8_t *pt, size_t len, const struct sptd_ptgen_clock *clk,
                      const struct sptd_ptgen_section *secs, size_t nsecs,
                      const struct sptd_ptgen_patch *patch, const uint64_t *expect, size_t n,
                      int cpu)
{
	struct patch_read pread_ctx = { .patch = patch };
	struct pt_insn_decoder *dec = NULL;
	struct pt_image *image = NULL;
	struct pt_config cfg;
	uint64_t prev_time = 0;
	size_t i, pos = 0;
	int status, err = 0;

	if (!clk || (!secs && nsecs) || (!expect && n))
		return -EINVAL;
	if (!len)
		return n ? sptd_ptgen_fail(-EBADMSG, "cpu%d: no trace for %zu instructions", cpu, n)
		         : 0;
	if (!pt)
		return -EINVAL;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)pt;
	cfg.end = (uint8_t *)pt + len;
	cfg.cpu.vendor = pcv_intel;
	cfg.cpu.family = SPTD_PTGEN_CPU_FAMILY;
	cfg.cpu.model = SPTD_PTGEN_CPU_MODEL;
	cfg.cpu.stepping = SPTD_PTGEN_CPU_STEPPING;
	if (pt_cpu_errata(&cfg.errata, &cfg.cpu) < 0)
		return sptd_ptgen_fail(-EINVAL, "libipt does not know cpu 6/94/3");
	cfg.mtc_freq = clk->mtc_freq;
	cfg.nom_freq = clk->nom_freq;
	cfg.cpuid_0x15_eax = clk->cpuid15_eax;
	cfg.cpuid_0x15_ebx = clk->cpuid15_ebx;

	image = pt_image_alloc("ptgen");
	if (!image)
		return -ENOMEM;
	if (patch && pt_image_set_callback(image, patch_cb, &pread_ctx) < 0) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nsecs; i++) {
		status = add_section(image, &secs[i], patch);
		if (status < 0) {
			err = sptd_ptgen_fail(-EIO, "libipt cannot add image %s: %s", secs[i].file,
			                      pt_errstr(pt_errcode(status)));
			goto out;
		}
	}
	dec = pt_insn_alloc_decoder(&cfg);
	if (!dec) {
		err = -ENOMEM;
		goto out;
	}
	status = pt_insn_set_image(dec, image);
	if (status >= 0)
		status = pt_insn_sync_forward(dec);
	if (status < 0) {
		err = sptd_ptgen_fail(-EBADMSG, "cpu%d: libipt cannot sync: %s", cpu,
		                      pt_errstr(pt_errcode(status)));
		goto out;
	}
	for (;;) {
		struct pt_insn insn;
		uint64_t off = 0, now = 0;

		while (status & pts_event_pending) {
			struct pt_event ev;

			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
		}
		if (status < 0 || (status & pts_eos))
			break;
		pread_ctx.pos = pos;
		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0)
			break;
		pt_insn_get_offset(dec, &off);
		if (pos >= n) {
			err = sptd_ptgen_fail(-EBADMSG,
			                      "cpu%d: libipt decodes more instructions than ran "
			                      "(extra at 0x%" PRIx64 ", pt offset %" PRIu64 ")",
			                      cpu, insn.ip, off);
			goto out;
		}
		if (insn.ip != expect[pos]) {
			err = sptd_ptgen_fail(-EBADMSG,
			                      "cpu%d: instruction %zu: libipt decodes 0x%" PRIx64
			                      ", execution had 0x%" PRIx64 " (pt offset %" PRIu64 ")",
			                      cpu, pos, insn.ip, expect[pos], off);
			goto out;
		}
		/* Time never runs backwards. */
		if (clk->timing != SPTD_PTGEN_TIMING_NONE && pt_insn_time(dec, &now, NULL, NULL) == 0) {
			if (now < prev_time) {
				err = sptd_ptgen_fail(-EBADMSG,
				                      "cpu%d: instruction %zu: libipt time goes back "
				                      "from %" PRIu64 " to %" PRIu64, cpu, pos,
				                      prev_time, now);
				goto out;
			}
			prev_time = now;
		}
		pos++;
	}
	if (status < 0 && status != -pte_eos) {
		uint64_t off = 0;

		pt_insn_get_offset(dec, &off);
		err = sptd_ptgen_fail(-EBADMSG,
		                      "cpu%d: libipt stops after %zu of %zu instructions: %s "
		                      "(pt offset %" PRIu64 ", next expected 0x%" PRIx64 ")",
		                      cpu, pos, n, pt_errstr(pt_errcode(status)), off,
		                      pos < n ? expect[pos] : 0);
		goto out;
	}
	if (pos != n)
		err = sptd_ptgen_fail(-EBADMSG, "cpu%d: libipt decodes %zu instructions, %zu ran",
		                      cpu, pos, n);
out:
	pt_insn_free_decoder(dec);
	pt_image_free(image);
	return err;
}
