/* qcode.c — the code the own flow decoder walks: the sections of one
 * address space in one text epoch, put together as libipt's image would
 * have them (a later placement overlapping an earlier one hides it), read
 * from the same section caches, and a cache of the instructions decoded
 * there (ild.c), so that each is decoded once. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dec-local.h"
#include "qcode-local.h"

int sptd_dec_qcode_build(struct sptd_dec_session *s, struct sptd_dec_wcache *wc,
                         const struct sptd_dec_aspace *as, int epoch, struct sptd_dec_qmap *m)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->as = as;
	m->epoch = epoch;
	m->secs = calloc(s->nimages ? s->nimages : 1, sizeof(*m->secs));
	if (!m->secs)
		return -ENOMEM;
	for (i = 0; i < s->nimages; i++) {
		const struct sptd_dec_image *img = &s->images[i];
		struct sptd_dec_qsec *q = &m->secs[m->n];

		if ((img->pid != -1 && img->pid != as->pid) || epoch < img->epoch_lo ||
		    epoch >= img->epoch_hi || !img->size)
			continue;
		/* the same sections sptd_dec_aspace_image_new adds (aspace.c) */
		if (wc && i < wc->n) {
			if (!wc->isid[i]) {
				int isid = pt_iscache_add_file(wc->iscache, img->path, img->offset,
				                               img->size, img->addr);

				if (isid < 0)
					continue;
				wc->isid[i] = isid;
			}
			q->iscache = wc->iscache;
			q->isid = wc->isid[i];
		} else {
			if (img->isid <= 0)
				continue;
			q->iscache = s->iscache;
			q->isid = img->isid;
		}
		q->addr = img->addr;
		q->end = img->addr + img->size < img->addr ? UINT64_MAX : img->addr + img->size;
		m->n++;
	}
	return 0;
}

void sptd_dec_qcode_fini(struct sptd_dec_qmap *m)
{
	if (!m)
		return;
	free(m->secs);
	memset(m, 0, sizeof(*m));
}

/* The section showing @ip in @m and where what it shows ends; NULL none. */
static const struct sptd_dec_qsec *qcode_find(const struct sptd_dec_qmap *m, uint64_t ip,
                                              uint64_t *end)
{
	size_t k = m->n, j;

	while (k-- > 0) {
		const struct sptd_dec_qsec *q = &m->secs[k];

		if (ip < q->addr || ip >= q->end)
			continue;
		*end = q->end;
		for (j = k + 1; j < m->n; j++)
			if (m->secs[j].addr > ip && m->secs[j].addr < *end)
				*end = m->secs[j].addr;
		return q;
	}
	return NULL;
}

/* Read up to @n bytes at @ip from one section; the count, -pte_nomap. */
static int qcode_read(const struct sptd_dec_qmap *m, uint64_t ip, uint8_t *buf, size_t n,
                      int *isid)
{
	const struct sptd_dec_qsec *q;
	uint64_t end = 0;

	if (!m || !(q = qcode_find(m, ip, &end)))
		return -pte_nomap;
	if (end - ip < n)
		n = (size_t)(end - ip);
	*isid = q->isid;
	return pt_iscache_read(q->iscache, buf, n, q->isid, ip);
}

int sptd_dec_qcode_decode_slow(const struct sptd_dec_qmap *m, uint64_t ip, enum pt_exec_mode mode,
                               struct sptd_dec_qinsn *out)
{
	int n, more, isid2, err;

	memset(out, 0, sizeof(*out));
	n = qcode_read(m, ip, out->raw, sizeof(out->raw), &out->isid);
	if (n < 0)
		return n;
	err = sptd_dec_ild_decode(out->raw, (size_t)n, mode, &out->ild);
	/* an instruction running past its section goes on in the next one */
	while (err == -pte_bad_insn && n < (int)sizeof(out->raw)) {
		more = qcode_read(m, ip + (uint64_t)n, out->raw + n, sizeof(out->raw) - (size_t)n,
		                  &isid2);
		if (more <= 0)
			return more == 0 ? -pte_internal : -pte_bad_insn;
		n += more;
		err = sptd_dec_ild_decode(out->raw, (size_t)n, mode, &out->ild);
		if (!err)
			out->truncated = 1;
	}
	return err;
}

int sptd_dec_qcode_cache_init(struct sptd_dec_qcache *c)
{
	c->slots = calloc(SPTD_DEC_QCACHE_SLOTS, sizeof(*c->slots));
	c->runs = calloc(SPTD_DEC_QRUN_SLOTS, sizeof(*c->runs));
	return c->slots && c->runs ? 0 : -ENOMEM;
}

void sptd_dec_qcode_cache_fini(struct sptd_dec_qcache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->runs);
	c->slots = NULL;
	c->runs = NULL;
}

int sptd_dec_qcode_decode_fill(struct sptd_dec_qcache *c, const struct sptd_dec_qmap *m,
                               uint32_t mapid, uint64_t ip, enum pt_exec_mode mode,
                               struct sptd_dec_qinsn *out)
{
	int err = sptd_dec_qcode_decode_slow(m, ip, mode, out);

	if (!err && !out->truncated && c->slots) {
		struct sptd_dec_qslot *sl = sptd_dec_qcache_slot(c, ip);

		sl->ip = ip;
		sl->mapid = mapid;
		sl->mode = (uint8_t)mode;
		sl->isid = out->isid;
		sl->ild = out->ild;
	}
	return err;
}

const struct sptd_dec_qrun *sptd_dec_qcode_run_fill(struct sptd_dec_qcache *c,
                                                    const struct sptd_dec_qmap *m, uint64_t ip,
                                                    enum pt_exec_mode mode)
{
	struct sptd_dec_qrun *r = sptd_dec_qrun_slot(c, ip), run;
	struct sptd_dec_qinsn in;
	uint64_t at = ip;

	memset(&run, 0, sizeof(run));
	run.ip = ip;
	run.mapid = m->id;
	run.mode = (uint8_t)mode;
	run.last_class = ptic_other;
	for (;;) {
		if (sptd_dec_qcode_decode(c, m, at, mode, &in) < 0 || in.truncated ||
		    (run.n && in.isid != run.isid))
			break;
		run.isid = in.isid;
		if (in.ild.iclass != ptic_other && in.ild.iclass != ptic_ptwrite) {
			run.has_term = 1;
			run.term = in.ild;
			break;
		}
		run.last_class = in.ild.iclass;
		run.last_ip = at;
		at += in.ild.size;
		if (++run.n == SPTD_DEC_QRUN_MAX)
			break;
	}
	run.next_ip = at;
	if (!run.n && !run.has_term)
		return NULL;
	*r = run;
	return r;
}

int sptd_dec_qcode_unsupported(const struct pt_config *cfg)
{
	struct pt_packet_decoder *pd;
	struct pt_packet p;
	int st, found = 0;

	pd = pt_pkt_alloc_decoder(cfg);
	if (!pd)
		return 1;
	st = pt_pkt_sync_forward(pd);
	while (st >= 0 && !found) {
		st = pt_pkt_next(pd, &p, sizeof(p));
		if (st < 0) {
			/* past a damaged packet: on at the next PSB */
			if (st != -pte_eos)
				st = pt_pkt_sync_forward(pd);
			continue;
		}
		found = p.type == ppt_ptw;
	}
	pt_pkt_free_decoder(pd);
	return found;
}
