/* symtab.c — function symbols of one ELF (file or memory) for naming frames.
 *
 * Aliases (several symbols at one address) resolve to one name chosen the
 * same way every time: GLOBAL before WEAK before LOCAL, then the shorter
 * name, then the alphabetically first; the kept symbol takes the first
 * size among the aliases in that order.  A size-0 symbol reaches to the next
 * symbol but never past the end of its section (so _init, size 0 in .init,
 * does not cover the PLT after it).  decode/symfile.c applies the same
 * rules: the golden test compares names exactly. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptgen.h"

/* How far a size-0 symbol with nothing after it and no section end may
 * reach (as decode/symfile.c). */
#define SYM_LAST_REACH 4096

struct sym {
	uint64_t addr;   /* file address */
	uint64_t size;   /* 0 when the table gave none */
	uint64_t limit;  /* end of its section, 0 unknown */
	int rank;        /* binding preference, lower wins */
	char *name;      /* heap */
};

struct seg {
	uint64_t vaddr, offset, filesz; /* one PT_LOAD */
};

struct sptd_ptgen_symtab {
	struct sym *syms;  /* sorted by address, one per address */
	size_t n;          /* entries in @syms */
	struct seg *segs;  /* PT_LOAD program headers */
	size_t nsegs;      /* entries in @segs */
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	size_t lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int add_symbols(struct sptd_ptgen_symtab *st, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
                       size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count, i;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;
		uint64_t limit;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		limit = 0;
		if (sym.st_shndx < SHN_LORESERVE) {
			Elf_Scn *tscn = elf_getscn(elf, sym.st_shndx);
			GElf_Shdr target;

			if (tscn && gelf_getshdr(tscn, &target))
				limit = target.sh_addr + target.sh_size;
		}
		if (st->n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 256;
			struct sym *ns = realloc(st->syms, ncap * sizeof(*ns));

			if (!ns)
				return -ENOMEM;
			st->syms = ns;
			*cap = ncap;
		}
		st->syms[st->n].addr = sym.st_value;
		st->syms[st->n].size = sym.st_size;
		st->syms[st->n].limit = limit;
		st->syms[st->n].rank = GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? 0 :
		                       GELF_ST_BIND(sym.st_info) == STB_WEAK ? 1 : 2;
		st->syms[st->n].name = strdup(name);
		if (!st->syms[st->n].name)
			return -ENOMEM;
		st->n++;
	}
	return 0;
}

static int load_elf(struct sptd_ptgen_symtab *st, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0, phnum, i, j;
	int err;

	if (elf_kind(elf) != ELF_K_ELF)
		return -EBADMSG;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		err = add_symbols(st, elf, scn, &sh, &cap);
		if (err < 0)
			return err;
	}
	if (elf_getphdrnum(elf, &phnum) == 0 && phnum) {
		st->segs = calloc(phnum, sizeof(*st->segs));
		if (!st->segs)
			return -ENOMEM;
		for (i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			st->segs[st->nsegs].vaddr = ph.p_vaddr;
			st->segs[st->nsegs].offset = ph.p_offset;
			st->segs[st->nsegs].filesz = ph.p_filesz;
			st->nsegs++;
		}
	}
	/* Sort, then keep the preferred name of each address. */
	qsort(st->syms, st->n, sizeof(*st->syms), sym_cmp);
	for (i = 0, j = 0; i < st->n; i++) {
		if (j && st->syms[j - 1].addr == st->syms[i].addr) {
			if (!st->syms[j - 1].size)
				st->syms[j - 1].size = st->syms[i].size;
			free(st->syms[i].name);
			continue;
		}
		st->syms[j++] = st->syms[i];
	}
	st->n = j;
	return 0;
}

int sptd_ptgen_symtab_load(const char *path, const void *mem, size_t size,
                           struct sptd_ptgen_symtab **out)
{
	struct sptd_ptgen_symtab *st = NULL;
	Elf *elf = NULL;
	int fd = -1, err;

	if (!out || (!path && !mem))
		return -EINVAL;
	*out = NULL;
	elf_version(EV_CURRENT);
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	if (path) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			goto fail;
		}
		elf = elf_begin(fd, ELF_C_READ, NULL);
	} else {
		elf = elf_memory((char *)mem, size);
	}
	if (!elf) {
		err = -EBADMSG;
		goto fail;
	}
	err = load_elf(st, elf);
	if (err < 0)
		goto fail;
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	*out = st;
	return 0;
fail:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	sptd_ptgen_symtab_destroy(st);
	return err;
}

void sptd_ptgen_symtab_destroy(struct sptd_ptgen_symtab *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->n; i++)
		free(st->syms[i].name);
	free(st->syms);
	free(st->segs);
	free(st);
}

int sptd_ptgen_symtab_lookup(const struct sptd_ptgen_symtab *st, uint64_t addr,
                             const char **name, uint64_t *start, uint64_t *end)
{
	size_t lo = 0, hi;
	const struct sym *s;
	uint64_t e;

	if (!st || !st->n)
		return -ENOENT;
	hi = st->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (st->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &st->syms[lo];
	if (s->addr > addr)
		return -ENOENT;
	if (s->size) {
		e = s->addr + s->size;
	} else {
		if (lo + 1 < st->n)
			e = st->syms[lo + 1].addr;
		else
			e = s->limit > s->addr ? s->limit : s->addr + SYM_LAST_REACH;
		if (s->limit > s->addr && e > s->limit)
			e = s->limit;
	}
	if (addr >= e)
		return -ENOENT;
	if (name)
		*name = s->name;
	if (start)
		*start = s->addr;
	if (end)
		*end = e;
	return 0;
}

int sptd_ptgen_symtab_bias(const struct sptd_ptgen_symtab *st, uint64_t map_start,
                           uint64_t pgoff, int64_t *bias)
{
	size_t i;

	if (!st || !bias)
		return -EINVAL;
	for (i = 0; i < st->nsegs; i++) {
		const struct seg *g = &st->segs[i];
		uint64_t seg_page = g->offset & ~0xfffull;

		if (pgoff >= seg_page && pgoff < g->offset + g->filesz) {
			/* file address of map_start = vaddr - (offset - pgoff) */
			uint64_t file_addr = g->vaddr - (g->offset - pgoff);

			*bias = (int64_t)(map_start - file_addr);
			return 0;
		}
	}
	return -ENOENT;
}

int sptd_ptgen_symtab_find(const struct sptd_ptgen_symtab *st, const char *name,
                           uint64_t *addr)
{
	size_t i;

	if (!st || !name || !addr)
		return -EINVAL;
	for (i = 0; i < st->n; i++) {
		if (strcmp(st->syms[i].name, name) == 0) {
			*addr = st->syms[i].addr;
			return 0;
		}
	}
	return -ENOENT;
}

int sptd_ptgen_symtab_get(const struct sptd_ptgen_symtab *st, size_t i, const char **name,
                          uint64_t *start, uint64_t *end)
{
	if (!st || i >= st->n)
		return -ENOENT;
	return sptd_ptgen_symtab_lookup(st, st->syms[i].addr, name, start, end);
}
