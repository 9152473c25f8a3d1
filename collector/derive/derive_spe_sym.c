/* derive_spe_sym.c — the function of a memory sample's instruction: its
 * process's raw_mmap row holding the pc, that dso's file (where
 * sptd_col_pt_imgfind says its recorded bytes are now: embedded copy,
 * image cache by build-id, the unchanged original), the ELF symbol there.
 * A symbol row is reused when one with that dso and address exists (decode
 * runs again over the same file: symbol is never cleared), else added. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "derive-local.h"
#include "sptd_col_base.h"
#include "sptd_dec.h"
#include "sptd_store.h"

struct spe_map { int pid; uint64_t start, end; int64_t dso_id, bias; };
struct spe_dso { int64_t id; char *path, *build_id; struct sptd_dec_symfile *sf; int tried; };
struct spe_symrow { int64_t id, dso_id; uint64_t addr; };

struct sptd_col_spe_sym {
	struct sptd_store *st;
	struct sptd_col_pt_imgfind *find;
	struct spe_map *maps; size_t nmaps, capmaps;
	struct spe_dso *dsos; size_t ndsos, capdsos;
	struct spe_symrow *syms; size_t nsyms, capsyms;
	int64_t next_id;          /* symbol.id of the next added row */
};

static int on_mmap(void *arg, const struct sptd_store_raw_mmap_row *r)
{
	struct sptd_col_spe_sym *y = arg;

	if (sptd_col_grow((void **)&y->maps, &y->capmaps, y->nmaps, sizeof(*y->maps)) < 0)
		return -ENOMEM;
	y->maps[y->nmaps++] = (struct spe_map){ r->pid, r->start, r->end, r->dso_id, r->bias };
	return 0;
}

static int on_dso(void *arg, const struct sptd_store_dso_row *r)
{
	struct sptd_col_spe_sym *y = arg;
	struct spe_dso *d;

	if (sptd_col_grow((void **)&y->dsos, &y->capdsos, y->ndsos, sizeof(*y->dsos)) < 0)
		return -ENOMEM;
	d = &y->dsos[y->ndsos];
	*d = (struct spe_dso){ .id = r->id, .path = strdup(r->path ? r->path : "") };
	d->build_id = r->build_id ? strdup(r->build_id) : NULL;
	if (!d->path || (r->build_id && !d->build_id)) {
		free(d->path);
		free(d->build_id);
		return -ENOMEM;
	}
	y->ndsos++;
	return 0;
}

static int on_symbol(void *arg, const struct sptd_store_symbol_row *r)
{
	struct sptd_col_spe_sym *y = arg;

	if (sptd_col_grow((void **)&y->syms, &y->capsyms, y->nsyms, sizeof(*y->syms)) < 0)
		return -ENOMEM;
	y->syms[y->nsyms++] = (struct spe_symrow){ r->id, r->dso_id, r->addr };
	return 0;
}

int sptd_col_spe_sym_create(struct sptd_store *st, struct sptd_col_spe_sym **out)
{
	struct sptd_col_spe_sym *y = calloc(1, sizeof(*y));
	int ret;

	if (!y)
		return -ENOMEM;
	y->st = st;
	ret = sptd_col_pt_imgfind_create(st, &y->find);
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, raw_mmap, on_mmap, y);
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, dso, on_dso, y);
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, symbol, on_symbol, y);
	if (ret >= 0)
		ret = sptd_store_next_id(st, SPTD_STORE_T_SYMBOL, &y->next_id);
	if (ret < 0) {
		sptd_col_spe_sym_destroy(y);
		return ret;
	}
	*out = y;
	return 0;
}

void sptd_col_spe_sym_destroy(struct sptd_col_spe_sym *y)
{
	if (!y)
		return;
	for (size_t i = 0; i < y->ndsos; i++) {
		free(y->dsos[i].path);
		free(y->dsos[i].build_id);
		sptd_dec_symfile_destroy(y->dsos[i].sf);
	}
	sptd_col_pt_imgfind_destroy(y->find);
	free(y->maps);
	free(y->dsos);
	free(y->syms);
	free(y);
}

/* The symbols of dso @id, loaded on first use; NULL when none can be. */
static struct sptd_dec_symfile *dso_symbols(struct sptd_col_spe_sym *y, int64_t id)
{
	for (size_t i = 0; i < y->ndsos; i++) {
		struct spe_dso *d = &y->dsos[i];
		const char *where = NULL;

		if (d->id != id)
			continue;
		if (!d->tried && d->path[0] == '/') {
			d->tried = 1;
			if (sptd_col_pt_imgfind_lookup(y->find, d->id, d->path, d->build_id, &where) >= 0 &&
			    sptd_dec_symfile_load_elf(where, &d->sf) < 0)
				d->sf = NULL;
		}
		return d->sf;
	}
	return NULL;
}

int64_t sptd_col_spe_sym_resolve(struct sptd_col_spe_sym *y, int pid, uint64_t pc)
{
	const struct spe_map *m = NULL;
	struct sptd_dec_symfile *sf;
	struct sptd_dec_sym sym;
	int ret;

	if (!y)
		return -EINVAL;
	for (size_t i = 0; i < y->nmaps && !m; i++)
		if ((y->maps[i].pid == pid || y->maps[i].pid == -1) && pc >= y->maps[i].start &&
		    pc < y->maps[i].end)
			m = &y->maps[i];
	sf = m ? dso_symbols(y, m->dso_id) : NULL;
	if (!sf || sptd_dec_symfile_lookup(sf, pc - (uint64_t)m->bias, &sym) < 0)
		return -ENOENT;
	for (size_t i = 0; i < y->nsyms; i++)
		if (y->syms[i].dso_id == m->dso_id && y->syms[i].addr == sym.addr)
			return y->syms[i].id;
	if (sptd_col_grow((void **)&y->syms, &y->capsyms, y->nsyms, sizeof(*y->syms)) < 0)
		return -ENOMEM;
	ret = SPTD_STORE_ADD(y->st, symbol, y->next_id, sym.name, m->dso_id, sym.addr, sym.size);
	if (ret < 0)
		return ret;
	y->syms[y->nsyms++] = (struct spe_symrow){ y->next_id, m->dso_id, sym.addr };
	return y->next_id++;
}
