/* aspace.c — address spaces: the images each process sees (each decoder
 * thread builds its own libipt image of one, sections from the shared
 * cache), which task decodes in which, and resolving code addresses to
 * functions and symbol ids. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "dec-local.h"

int sptd_dec_task_pid(const struct sptd_dec_session *s, int tid)
{
	size_t i;

	for (i = s->ntasks; i-- > 0;)
		if (s->task_pid[2 * i] == tid)
			return s->task_pid[2 * i + 1];
	return tid;
}

/* ---- address spaces -------------------------------------------------------- */

static int image_addr_cmp(const void *a, const void *b)
{
	const struct sptd_dec_image *x = *(struct sptd_dec_image *const *)a;
	const struct sptd_dec_image *y = *(struct sptd_dec_image *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/* Fill @as with the global images and those of @pid. */
static int aspace_fill(struct sptd_dec_session *s, struct sptd_dec_aspace *as, int pid)
{
	size_t i;

	as->pid = pid;
	as->by_addr = calloc(s->nimages ? s->nimages : 1, sizeof(*as->by_addr));
	if (!as->by_addr)
		return -ENOMEM;
	for (i = 0; i < s->nimages; i++) {
		struct sptd_dec_image *img = &s->images[i];

		/* patches (textpatch.c) are code, not what names it */
		if ((img->pid != -1 && img->pid != pid) || img->epoch_hi != INT_MAX)
			continue;
		as->by_addr[as->count++] = img;
	}
	qsort(as->by_addr, as->count, sizeof(*as->by_addr), image_addr_cmp);
	return 0;
}

int sptd_dec_wcache_init(struct sptd_dec_wcache *wc, const struct sptd_dec_session *s)
{
	memset(wc, 0, sizeof(*wc));
	wc->iscache = pt_iscache_alloc(NULL);
	wc->isid = calloc(s->nimages ? s->nimages : 1, sizeof(*wc->isid));
	if (!wc->iscache || !wc->isid) {
		sptd_dec_wcache_fini(wc);
		return -ENOMEM;
	}
	wc->n = s->nimages;
	return 0;
}

void sptd_dec_wcache_fini(struct sptd_dec_wcache *wc)
{
	if (!wc)
		return;
	pt_iscache_free(wc->iscache);
	free(wc->isid);
	memset(wc, 0, sizeof(*wc));
}

/* Add session image @i to @image from @wc (its section added to @wc first
 * if need be), else from the session's cache.  libipt's status. */
static int image_add(struct sptd_dec_session *s, struct sptd_dec_wcache *wc,
                     struct pt_image *image, size_t i)
{
	const struct sptd_dec_image *img = &s->images[i];

	if (!wc || i >= wc->n)
		return pt_image_add_cached(image, s->iscache, img->isid, NULL);
	if (!wc->isid[i]) {
		int isid = pt_iscache_add_file(wc->iscache, img->path, img->offset, img->size,
		                               img->addr);

		if (isid < 0)
			return isid;
		wc->isid[i] = isid;
	}
	return pt_image_add_cached(image, wc->iscache, wc->isid[i], NULL);
}

int sptd_dec_aspace_image_new(struct sptd_dec_session *s, struct sptd_dec_wcache *wc,
                              const struct sptd_dec_aspace *as, int epoch,
                              struct pt_image **out)
{
	struct pt_image *image;
	char name[32];
	size_t i;
	int err = 0;

	if (!s || !as || !out)
		return -EINVAL;
	*out = NULL;
	snprintf(name, sizeof(name), "pid-%d", as->pid);
	image = pt_image_alloc(name);
	if (!image)
		return -ENOMEM;
	/* in the order added: a later placement overlapping an earlier one
	 * replaces it, in libipt as in image_at() */
	for (i = 0; i < s->nimages && !err; i++) {
		const struct sptd_dec_image *img = &s->images[i];

		if ((img->pid != -1 && img->pid != as->pid) || epoch < img->epoch_lo ||
		    epoch >= img->epoch_hi)
			continue;
		err = image_add(s, wc, image, i);
		if (err < 0)
			err = err == -pte_nomem ? -ENOMEM : -EIO;
		else
			err = 0;
	}
	if (err < 0) {
		pt_image_free(image);
		return err;
	}
	*out = image;
	return 0;
}

int sptd_dec_aspaces_build(struct sptd_dec_session *s)
{
	size_t i, j, n = 1;
	int err;

	for (i = 0; i < s->nimages; i++) {
		int seen = s->images[i].pid == -1;

		for (j = 0; j < i && !seen; j++)
			seen = s->images[j].pid == s->images[i].pid;
		if (!seen)
			n++;
	}
	s->aspaces = calloc(n, sizeof(*s->aspaces));
	if (!s->aspaces)
		return -ENOMEM;
	s->naspaces = n;
	err = aspace_fill(s, &s->aspaces[0], -1);
	for (i = 0, n = 1; i < s->nimages && !err; i++) {
		int seen = s->images[i].pid == -1;

		for (j = 0; j < i && !seen; j++)
			seen = s->images[j].pid == s->images[i].pid;
		if (!seen)
			err = aspace_fill(s, &s->aspaces[n++], s->images[i].pid);
	}
	return err;
}

void sptd_dec_aspaces_free(struct sptd_dec_session *s)
{
	size_t i;

	for (i = 0; i < s->naspaces; i++)
		free(s->aspaces[i].by_addr);
	free(s->aspaces);
	s->aspaces = NULL;
	s->naspaces = 0;
	/* its entries name the address spaces just freed */
	free(s->resolved);
	s->resolved = NULL;
}

struct sptd_dec_aspace *sptd_dec_aspace_of(struct sptd_dec_session *s, int tid)
{
	int pid = tid < 0 ? -1 : sptd_dec_task_pid(s, tid);
	size_t i;

	for (i = 1; i < s->naspaces && pid >= 0; i++)
		if (s->aspaces[i].pid == pid)
			return &s->aspaces[i];
	return &s->aspaces[0];
}

/* ---- functions and symbols ---------------------------------------------------- */

/* The image containing @addr in @as, NULL if none. */
static struct sptd_dec_image *image_at(const struct sptd_dec_aspace *as, uint64_t addr)
{
	size_t lo = 0, hi = as->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (as->by_addr[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* overlapping placements: the latest added wins, scan a little back */
	while (lo-- > 0) {
		struct sptd_dec_image *img = as->by_addr[lo];

		if (addr - img->addr < img->size)
			return img;
		if (as->count - lo > 8)
			break;
	}
	return NULL;
}

/* Function containing @addr; *imgp the image (NULL: none), *sym filled and
 * 1 returned when a symbol names it. */
static int func_find(const struct sptd_dec_aspace *as, uint64_t addr,
                     struct sptd_dec_func *f, struct sptd_dec_image **imgp,
                     struct sptd_dec_sym *sym)
{
	struct sptd_dec_image *img = image_at(as, addr);

	memset(f, 0, sizeof(*f));
	f->start = addr;
	f->symbol_id = -1;
	*imgp = img;
	if (img && img->symfile &&
	    sptd_dec_symfile_lookup(img->symfile, addr - (uint64_t)img->bias, sym) == 0) {
		f->start = sym->addr + (uint64_t)img->bias;
		f->size = sym->size;
		f->known = 1;
		return 1;
	}
	return 0;
}

int sptd_dec_func_peek(struct sptd_dec_session *s, int tid, uint64_t addr,
                       struct sptd_dec_func *f)
{
	struct sptd_dec_image *img;
	struct sptd_dec_sym sym;

	if (!s || !f || !s->aspaces)
		return -EINVAL;
	func_find(sptd_dec_aspace_of(s, tid), addr, f, &img, &sym);
	return 0;
}

int sptd_dec_func_peek_as(const struct sptd_dec_aspace *as, uint64_t addr,
                          struct sptd_dec_func *f)
{
	struct sptd_dec_image *img;
	struct sptd_dec_sym sym;

	if (!as || !f)
		return -EINVAL;
	func_find(as, addr, f, &img, &sym);
	return 0;
}

static uint64_t symkey_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return key;
}

/* The id for @key, 0 with *slot set where it goes when new. */
static int symtab_grow(struct sptd_dec_session *s)
{
	size_t cap = s->symcap ? s->symcap * 2 : 1024, i;
	struct sptd_dec_symkey *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < s->symcap; i++) {
		size_t h;

		if (!s->symtab[i].id)
			continue;
		for (h = symkey_hash(s->symtab[i].key) & (cap - 1); n[h].id; h = (h + 1) & (cap - 1))
			;
		n[h] = s->symtab[i];
	}
	free(s->symtab);
	s->symtab = n;
	s->symcap = cap;
	return 0;
}

static void remember(struct sptd_dec_resolved *slot, const struct sptd_dec_aspace *as,
                     uint64_t addr, const struct sptd_dec_func *f)
{
	if (slot)
		*slot = (struct sptd_dec_resolved){ .as = as, .addr = addr, .f = *f };
}

int sptd_dec_func_resolve(void *ctx, int tid, uint64_t addr, struct sptd_dec_func *f)
{
	struct sptd_dec_session *s = ctx;
	struct sptd_dec_resolved *hit = NULL;
	struct sptd_dec_image *img;
	struct sptd_dec_sym sym;
	struct sptd_dec_symbol out;
	char name[256];
	uint64_t key;
	size_t h;
	int named, err;

	/* phase 2 replays one task at a time: remember its address space */
	if (!s->resolve_as || s->resolve_tid != tid) {
		s->resolve_as = sptd_dec_aspace_of(s, tid);
		s->resolve_tid = tid;
	}
	/* an address seen before in this address space: the same answer
	 * (without the cache, out of memory, every address is looked up) */
	if (!s->resolved)
		s->resolved = calloc(SPTD_DEC_RESOLVED_SLOTS, sizeof(*s->resolved));
	if (s->resolved) {
		hit = &s->resolved[sptd_dec_resolved_slot(addr)];
		if (hit->as == s->resolve_as && hit->addr == addr) {
			*f = hit->f;
			return 0;
		}
	}
	named = func_find(s->resolve_as, addr, f, &img, &sym);
	/* key: which image (0 none) and the function start */
	key = ((uint64_t)(img ? (size_t)(img - s->images) + 1 : 0) << 48) ^ f->start;
	if (2 * (s->symcount + 1) > s->symcap) {
		err = symtab_grow(s);
		if (err < 0)
			return err;
	}
	for (h = symkey_hash(key) & (s->symcap - 1); s->symtab[h].id; h = (h + 1) & (s->symcap - 1)) {
		if (s->symtab[h].key == key) {
			f->symbol_id = s->symtab[h].id;
			remember(hit, s->resolve_as, addr, f);
			return 0;
		}
	}
	memset(&out, 0, sizeof(out));
	out.id = ++s->next_symbol_id;
	out.dso_id = img ? img->dso_id : -1;
	if (named) {
		out.name = sym.name;
		out.addr = sym.addr;
		out.size = sym.size;
	} else if (img) {
		uint64_t off = f->start - img->addr + img->offset;

		snprintf(name, sizeof(name), "%s+0x%" PRIx64, img->name, off);
		out.name = name;
		out.addr = f->start - (uint64_t)img->bias;
	} else {
		snprintf(name, sizeof(name), "0x%" PRIx64, f->start);
		out.name = name;
		out.addr = f->start;
	}
	s->symtab[h].key = key;
	s->symtab[h].id = out.id;
	s->symcount++;
	f->symbol_id = out.id;
	err = s->sink && s->sink->symbol ? s->sink->symbol(s->sink->ctx, &out) : 0;
	if (err >= 0)
		remember(hit, s->resolve_as, addr, f);
	return err;
}
