/* textpatch.c — kernel code decoded as it ran at each packet's time, not as
 * it was when copied.
 *
 * The kcore copy is read after the freeze; every TEXT_POKE between the
 * trace and the copy rewrote bytes the trace ran before the rewrite (a
 * static key's jmp became a nop, ftrace's call became a nop, a kprobe's
 * int3 came or went).  The poke times cut the trace into text epochs:
 * epoch k runs from the k-th distinct poke time to the next, the last one
 * is the copy itself.  Each poked range (pokes merged where they meet)
 * gets, for each stretch of epochs in which its bytes differ from the
 * copy, a patch: an image of those bytes (sptd_dec_text_as_of at the
 * stretch's start) shown only in those epochs, placed after every other
 * image so that it covers the copy there.  libipt splits the copy's
 * section around it and does not carry its block cache across the split
 * (pt_blk_proceed_no_event_cached).  The decoder (flow.c) builds its image
 * again when the decoder's time crosses into another epoch.  Patches cost
 * one image per poke and range, never a copy of the kernel per epoch. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "dec-local.h"

/* Pokes beyond this many are not taken (a runaway or forged sideband). */
#define TEXT_POKES_MAX 65536
/* What the patches may cost: their bytes, and pokes undone in all (each
 * stretch of a range undoes that range's pokes).  A real capture needs a
 * few KiB; past either, the ranges left keep the copy's bytes (a gap says
 * so: sptd_dec_session_run). */
#define TEXT_PATCH_BYTES_MAX (64u << 20)
#define TEXT_PATCH_WORK_MAX (64u << 20)

int sptd_dec_session_add_text_poke(struct sptd_dec_session *s,
                                   const struct sptd_dec_text_poke *p)
{
	uint64_t span;
	uint8_t *bytes;

	if (!s || !p || (!p->old_bytes && p->old_len) || (!p->new_bytes && p->new_len))
		return -EINVAL;
	span = p->old_len > p->new_len ? p->old_len : p->new_len;
	if (p->addr > UINT64_MAX - span)
		return -EINVAL;
	if (s->npokes >= TEXT_POKES_MAX)
		return -E2BIG;
	if (s->npokes == s->cappokes) {
		size_t cap = s->cappokes ? s->cappokes * 2 : 16;
		struct sptd_dec_text_poke *n = realloc(s->pokes, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->pokes = n;
		s->cappokes = cap;
	}
	bytes = malloc((size_t)p->old_len + p->new_len + 1);
	if (!bytes)
		return -ENOMEM;
	if (p->old_len)
		memcpy(bytes, p->old_bytes, p->old_len);
	if (p->new_len)
		memcpy(bytes + p->old_len, p->new_bytes, p->new_len);
	s->pokes[s->npokes] = *p;
	s->pokes[s->npokes].old_bytes = bytes;
	s->pokes[s->npokes].new_bytes = bytes + p->old_len;
	s->npokes++;
	return 0;
}

int sptd_dec_session_set_text_copied(struct sptd_dec_session *s, int64_t copied_ts)
{
	if (!s)
		return -EINVAL;
	s->text_copied = copied_ts;
	return 0;
}

void sptd_dec_text_pokes_free(struct sptd_dec_session *s)
{
	for (size_t i = 0; i < s->npokes; i++)
		free((void *)s->pokes[i].old_bytes);
	free(s->pokes);
	s->pokes = NULL;
	s->npokes = s->cappokes = 0;
	free(s->text_times);
	s->text_times = NULL;
	s->ntext_times = 0;
}

int sptd_dec_text_epoch(const struct sptd_dec_session *s, int64_t ts)
{
	size_t lo = 0, hi = s->ntext_times;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->text_times[mid] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo;
}

static int ts_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* A range of kernel code some pokes rewrote. */
struct text_span {
	uint64_t lo, hi;              /* [lo, hi) */
};

static int span_cmp(const void *a, const void *b)
{
	const struct text_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* One patch made, waiting for its bytes to be in the session's file. */
struct text_patch {
	uint64_t addr;                /* where it goes */
	size_t off, len;              /* its bytes in the patch buffer */
	size_t base;                  /* the image it covers */
	int epoch_lo, epoch_hi;       /* when it shows */
};

/* What building the patches collects. */
struct patch_set {
	struct text_patch *v;
	size_t n, cap;
	uint8_t *bytes;               /* every patch's bytes, one after another */
	size_t len, bytes_cap;
	uint64_t work;                /* pokes undone so far */
};

static int patch_add(struct patch_set *ps, const struct text_patch *p, const uint8_t *code)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 16;
		struct text_patch *v = realloc(ps->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ps->v = v;
		ps->cap = cap;
	}
	if (ps->len + p->len > ps->bytes_cap) {
		size_t cap = (ps->len + p->len) * 2;
		uint8_t *b = realloc(ps->bytes, cap);

		if (!b)
			return -ENOMEM;
		ps->bytes = b;
		ps->bytes_cap = cap;
	}
	ps->v[ps->n] = *p;
	ps->v[ps->n].off = ps->len;
	memcpy(ps->bytes + ps->len, code, p->len);
	ps->len += p->len;
	ps->n++;
	return 0;
}

/* The image of copied code holding @addr that libipt would read it from
 * (the last placed), SIZE_MAX none. */
static size_t base_image(const struct sptd_dec_session *s, uint64_t addr)
{
	for (size_t i = s->nimages; i-- > 0;) {
		const struct sptd_dec_image *img = &s->images[i];

		if (img->pid == -1 && img->epoch_hi == INT_MAX && img->addr <= addr &&
		    addr - img->addr < img->size)
			return i;
	}
	return SIZE_MAX;
}

/* Patches of span @sp (inside image @base, whose copied bytes are @copy):
 * one per stretch between the times of the pokes @p[0..@np) that meet it
 * (those after s->text_copied are not among them).  0; 1 over the budget
 * (nothing added); -ENOMEM. */
static int span_patches(struct sptd_dec_session *s, struct patch_set *ps, size_t base,
                        const struct text_span *sp, const uint8_t *copy,
                        const struct sptd_dec_text_poke *p, size_t np, int64_t *times,
                        uint8_t *code)
{
	size_t len = (size_t)(sp->hi - sp->lo), nt = 0;
	int ret = 0;

	for (size_t i = 0; i < np; i++)
		times[nt++] = p[i].ts;
	if (np > TEXT_PATCH_WORK_MAX / np || ps->work > TEXT_PATCH_WORK_MAX - np * np ||
	    (uint64_t)len * np > TEXT_PATCH_BYTES_MAX - ps->len)
		return 1;   /* over budget: this range keeps the copy's bytes */
	ps->work += np * np;
	qsort(times, nt, sizeof(*times), ts_cmp);
	/* [INT64_MIN, t1), [t1, t2), ...: from the last time on, the copy */
	for (size_t i = 0; i < nt && ret >= 0; i++) {
		int64_t from = i ? times[i - 1] : INT64_MIN;
		struct text_patch tp = { .addr = sp->lo, .len = len, .base = base };

		if (i && times[i] == times[i - 1])
			continue;
		memcpy(code, copy, len);
		ret = sptd_dec_text_as_of(code, len, sp->lo, s->text_copied, from, p, np);
		if (ret <= 0 || memcmp(code, copy, len) == 0)
			continue;
		tp.epoch_lo = i ? sptd_dec_text_epoch(s, from) : 0;
		tp.epoch_hi = sptd_dec_text_epoch(s, times[i]);
		ret = patch_add(ps, &tp, code);
	}
	return ret < 0 ? ret : 0;
}

/* Read [@addr, @addr + @len) of image @i out of the session's cache. */
static int image_read(struct sptd_dec_session *s, size_t i, uint64_t addr, uint8_t *buf,
                      size_t len)
{
	size_t got = 0;

	while (got < len) {
		int n = pt_iscache_read(s->iscache, buf + got, len - got, s->images[i].isid,
		                        addr + got);

		if (n <= 0)
			return -EIO;
		got += (size_t)n;
	}
	return 0;
}

/* The pokes (at or before the copy), their spans merged, sorted. */
static int spans_of(const struct sptd_dec_session *s, struct text_span **out, size_t *nout)
{
	struct text_span *v = malloc((s->npokes ? s->npokes : 1) * sizeof(*v));
	size_t n = 0, m = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->npokes; i++) {
		const struct sptd_dec_text_poke *p = &s->pokes[i];
		uint64_t len = p->old_len > p->new_len ? p->old_len : p->new_len;

		if (len && p->ts <= s->text_copied)
			v[n++] = (struct text_span){ p->addr, p->addr + len };
	}
	qsort(v, n, sizeof(*v), span_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && v[i].lo <= v[m - 1].hi) {
			if (v[i].hi > v[m - 1].hi)
				v[m - 1].hi = v[i].hi;
		} else {
			v[m++] = v[i];
		}
	}
	*out = v;
	*nout = m;
	return 0;
}

/* Forget the patches of an earlier run (they are the last images). */
static void patches_drop(struct sptd_dec_session *s)
{
	while (s->nimages && s->images[s->nimages - 1].epoch_hi != INT_MAX) {
		s->nimages--;
		free(s->images[s->nimages].path);
		free(s->images[s->nimages].name);
	}
	free(s->text_times);
	s->text_times = NULL;
	s->ntext_times = 0;
}

/* The epochs' times: every distinct poke time at or before the copy. */
static int times_build(struct sptd_dec_session *s)
{
	size_t n = 0;

	s->text_times = malloc(s->npokes * sizeof(*s->text_times));
	if (!s->text_times)
		return -ENOMEM;
	for (size_t i = 0; i < s->npokes; i++)
		if (s->pokes[i].ts <= s->text_copied)
			s->text_times[n++] = s->pokes[i].ts;
	qsort(s->text_times, n, sizeof(*s->text_times), ts_cmp);
	s->ntext_times = 0;
	for (size_t i = 0; i < n; i++)
		if (!s->ntext_times || s->text_times[i] != s->text_times[s->ntext_times - 1])
			s->text_times[s->ntext_times++] = s->text_times[i];
	return 0;
}

/* Place every patch of @ps, its bytes in one session file. */
static int patches_place(struct sptd_dec_session *s, const struct patch_set *ps)
{
	char path[64];
	int ret;

	if (!ps->n)
		return 0;
	ret = sptd_dec_image_memfd(s, ps->bytes, ps->len, path, sizeof(path));
	for (size_t i = 0; i < ps->n && ret >= 0; i++) {
		const struct text_patch *p = &ps->v[i];
		const struct sptd_dec_image base = s->images[p->base];

		ret = sptd_dec_image_place(s, -1, path, base.name, p->off, p->len, p->addr,
		                           base.bias, base.dso_id, base.symfile);
		if (ret >= 0) {
			s->images[s->nimages - 1].epoch_lo = p->epoch_lo;
			s->images[s->nimages - 1].epoch_hi = p->epoch_hi;
		}
	}
	return ret;
}

int sptd_dec_text_patches_build(struct sptd_dec_session *s)
{
	struct patch_set ps = { 0 };
	struct sptd_dec_text_poke *meet = NULL;
	struct text_span *spans = NULL;
	uint8_t *copy = NULL, *code = NULL;
	int64_t *times = NULL;
	size_t nspans = 0;
	int ret;

	patches_drop(s);
	s->text_unpatched = 0;
	if (!s->npokes)
		return 0;
	ret = times_build(s);
	if (ret >= 0)
		ret = spans_of(s, &spans, &nspans);
	meet = malloc(s->npokes * sizeof(*meet));
	times = malloc(s->npokes * sizeof(*times));
	if (ret >= 0 && (!meet || !times))
		ret = -ENOMEM;
	for (size_t k = 0; k < nspans && ret >= 0; k++) {
		struct text_span sp = spans[k];
		size_t base = base_image(s, sp.lo), np = 0;
		const struct sptd_dec_image *img;
		uint8_t *c1, *c2;

		if (base == SIZE_MAX)
			continue;   /* not copied code: nothing decodes there */
		img = &s->images[base];
		if (sp.hi - img->addr > img->size)
			sp.hi = img->addr + img->size;
		c1 = realloc(copy, (size_t)(sp.hi - sp.lo));
		c2 = c1 ? realloc(code, (size_t)(sp.hi - sp.lo)) : NULL;
		copy = c1 ? c1 : copy;
		code = c2 ? c2 : code;
		if (!c1 || !c2) {
			ret = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < s->npokes; i++) {
			const struct sptd_dec_text_poke *p = &s->pokes[i];
			uint64_t len = p->old_len > p->new_len ? p->old_len : p->new_len;

			if (p->ts <= s->text_copied && p->addr < sp.hi && p->addr + len > sp.lo)
				meet[np++] = *p;
		}
		ret = image_read(s, base, sp.lo, copy, (size_t)(sp.hi - sp.lo));
		if (ret >= 0)
			ret = span_patches(s, &ps, base, &sp, copy, meet, np, times, code);
		if (ret == 1) {
			s->text_unpatched++;
			ret = 0;
		}
	}
	if (ret >= 0)
		ret = patches_place(s, &ps);
	free(ps.v);
	free(ps.bytes);
	free(spans);
	free(meet);
	free(times);
	free(copy);
	free(code);
	return ret < 0 ? ret : 0;
}
