/* symfile.c — function symbols of an ELF file or a kallsyms list, sorted
 * for binary search, with the GNU build-id and the PT_LOAD headers that
 * turn a mapping into a bias.
 *
 * Divisions: building the table (shared), ELF loading (through elf.c, the
 * one ELF reader, and debuginfo.c for a stripped file's symbols), kallsyms
 * loading, lookup and bias.
 *
 * Rules (the emulated-PT generator's tests/ptgen/symtab.c applies the same,
 * so that golden tests compare names exactly): .symtab and .dynsym both feed
 * one table; undefined and zero-address symbols are skipped; at one address
 * only one symbol is kept: GLOBAL over WEAK over LOCAL, then the shorter
 * mangled name, then the alphabetically first mangled name; it takes the
 * first size among the aliases in that order; a size-0 symbol reaches to
 * the next symbol, but not past the end of its section (ELF) or 4 KiB (the
 * last kallsyms symbol). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfo-local.h"
#include "elf-local.h"
#include "sptd_dec.h"
#include "symfile-local.h"

/* How far a size-0 symbol with nothing after it and no section end may
 * reach. */
#define SYMFILE_LAST_REACH 4096

/* ---- building the table --------------------------------------------------- */

/* A symbol while the table is being built. */
struct raw_sym {
	uint64_t addr;          /* file address / kernel VA */
	uint64_t size;          /* from the symbol table; 0 unknown */
	uint64_t limit;         /* no symbol reaches past this (section end) */
	size_t name_off;        /* offset of the name in the builder's arena */
	size_t key_off;         /* offset of the mangled name (the sort key) */
	const char *key;        /* arena + key_off, set once the arena is final */
	int rank;               /* binding preference: higher wins at one address */
};

struct builder {
	struct raw_sym *syms;   /* collected symbols, unsorted */
	size_t count, cap;      /* used and allocated entries */
	char *arena;            /* names, NUL-separated */
	size_t arena_len, arena_cap; /* used and allocated bytes */
};

static void builder_fini(struct builder *b)
{
	free(b->syms);
	free(b->arena);
	memset(b, 0, sizeof(*b));
}

static int builder_add(struct builder *b, uint64_t addr, uint64_t size,
                       uint64_t limit, const char *name, int rank)
{
	char *demangled = sptd_dec_demangle_dup(name);
	size_t nkey = strlen(name) + 1, nname = demangled ? strlen(demangled) + 1 : 0;

	if (b->count == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct raw_sym *syms = realloc(b->syms, cap * sizeof(*syms));

		if (!syms)
			goto nomem;
		b->syms = syms;
		b->cap = cap;
	}
	if (b->arena_len + nkey + nname > b->arena_cap) {
		size_t cap = b->arena_cap ? b->arena_cap * 2 : 16384;
		char *arena;

		while (cap < b->arena_len + nkey + nname)
			cap *= 2;
		arena = realloc(b->arena, cap);
		if (!arena)
			goto nomem;
		b->arena = arena;
		b->arena_cap = cap;
	}
	/* the mangled name, then the demangled one when it differs */
	memcpy(b->arena + b->arena_len, name, nkey);
	if (demangled)
		memcpy(b->arena + b->arena_len + nkey, demangled, nname);
	b->syms[b->count++] = (struct raw_sym){
		.addr = addr, .size = size, .limit = limit,
		.name_off = demangled ? b->arena_len + nkey : b->arena_len,
		.key_off = b->arena_len, .rank = rank,
	};
	b->arena_len += nkey + nname;
	free(demangled);
	return 0;
nomem:
	free(demangled);
	return -ENOMEM;
}

/* Sort by address; at one address the preferred symbol comes first. */
static int raw_sym_cmp(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;
	size_t lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	lx = strlen(x->key);
	ly = strlen(y->key);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Turn the builder into @sf's table (the arena moves to @sf). */
static int builder_finish(struct builder *b, struct sptd_dec_symfile *sf)
{
	size_t i, out = 0;
	uint64_t covered = 0;   /* the end of the sized symbols so far */

	for (i = 0; i < b->count; i++)
		b->syms[i].key = b->arena + b->syms[i].key_off;
	if (b->count)
		qsort(b->syms, b->count, sizeof(*b->syms), raw_sym_cmp);
	for (i = 0; i < b->count; i++) {
		const struct raw_sym *r = &b->syms[i];

		/* a label inside a function is no function of its own */
		if (r->rank == SPTD_DEC_ELF_BIND_LABEL && r->addr < covered)
			continue;
		if (out == 0 || r->addr != b->syms[out - 1].addr)
			b->syms[out++] = *r;
		else if (!b->syms[out - 1].size)
			b->syms[out - 1].size = r->size; /* an alias's size */
		if (r->size && r->addr + r->size > covered)
			covered = r->addr + r->size;
	}
	sf->syms = calloc(out ? out : 1, sizeof(*sf->syms));
	sf->ends = calloc(out ? out : 1, sizeof(*sf->ends));
	if (!sf->syms || !sf->ends)
		return -ENOMEM;
	for (i = 0; i < out; i++) {
		const struct raw_sym *r = &b->syms[i];
		uint64_t end;

		if (r->size) {
			end = r->addr + r->size;
		} else {
			if (i + 1 < out)
				end = b->syms[i + 1].addr;
			else if (r->limit > r->addr)
				end = r->limit;
			else
				end = r->addr + SYMFILE_LAST_REACH;
			if (r->limit > r->addr && end > r->limit)
				end = r->limit;
			if (end <= r->addr)
				end = r->addr + 1;
		}
		sf->syms[i].name = b->arena + r->name_off;
		sf->syms[i].addr = r->addr;
		sf->syms[i].size = r->size;
		sf->ends[i] = end;
	}
	sf->count = out;
	sf->names = b->arena;
	b->arena = NULL;
	return 0;
}

/* The end of a loader: on success so far (@ret >= 0) @b becomes @sf's
 * table and @sf goes out through *@out; @b is released, and @sf freed
 * unless handed out.  @ret, or builder_finish's error. */
static int builder_publish(struct builder *b, struct sptd_dec_symfile *sf, int ret,
                           struct sptd_dec_symfile **out)
{
	if (ret >= 0)
		ret = builder_finish(b, sf);
	if (ret >= 0) {
		*out = sf;
		sf = NULL;
	}
	builder_fini(b);
	sptd_dec_symfile_destroy(sf);
	return ret;
}

/* ---- ELF ------------------------------------------------------------------ */

static int elf_add_func(void *ctx, const struct sptd_dec_elf_func *func)
{
	return builder_add(ctx, func->addr, func->size, func->limit, func->name, func->bind);
}

/* A stripped file (no .symtab): the function symbols of its separate debug
 * file, else of its MiniDebugInfo, join its .dynsym in @b.  Not finding
 * any is not an error; a corrupt one is skipped. */
static int add_debug_syms(struct sptd_dec_elf *elf, struct sptd_dec_symfile *sf,
                          struct builder *b)
{
	struct sptd_dec_elf *debug = NULL;
	int how = 0, ret;

	if (sptd_dec_elf_has_symtab(elf))
		return 0;
	ret = sptd_dec_debuginfo_find(elf, sf->build_id, &debug, &how);
	if (ret == 0) {
		sf->debug_path = strdup(sptd_dec_elf_path(debug));
		if (!sf->debug_path) {
			ret = -ENOMEM;
			goto out;
		}
	} else if (ret == -ENOENT) {
		ret = sptd_dec_debuginfo_mini(elf, &debug);
		how = SPTD_DEC_SYMS_MINIDEBUGINFO;
		if (ret == -ENODATA || ret == -EBADMSG)
			ret = -ENOENT;
	}
	if (ret < 0)
		goto out;
	ret = sptd_dec_elf_each_func(debug, elf_add_func, b);
	if (ret == 0)
		sf->origin |= how;
out:
	sptd_dec_elf_close(debug);
	return ret == -ENOENT ? 0 : ret;
}

int sptd_dec_symfile_from_elf(struct sptd_dec_elf *elf, struct sptd_dec_symfile **out)
{
	struct sptd_dec_symfile *sf = NULL;
	const struct sptd_dec_elf_load *loads;
	struct builder b = { 0 };
	int ret;

	if (!elf || !out)
		return -EINVAL;
	*out = NULL;
	ret = -ENOMEM;
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		goto out;
	loads = sptd_dec_elf_loads(elf, &sf->nloads);
	if (sf->nloads) {
		sf->loads = malloc(sf->nloads * sizeof(*sf->loads));
		if (!sf->loads)
			goto out;
		memcpy(sf->loads, loads, sf->nloads * sizeof(*sf->loads));
	}
	ret = sptd_dec_elf_build_id(elf, &sf->build_id);
	if (ret < 0 && ret != -ENODATA)
		goto out;
	ret = sptd_dec_elf_each_func(elf, elf_add_func, &b);
	if (ret < 0)
		goto out;
	if (b.count)
		sf->origin |= SPTD_DEC_SYMS_FILE;
	ret = add_debug_syms(elf, sf, &b);
out:
	return builder_publish(&b, sf, ret, out);
}

/* Build-id and PT_LOAD headers of @elf into a new symfile without symbols. */
static int symfile_head(struct sptd_dec_elf *elf, struct sptd_dec_symfile **out)
{
	struct sptd_dec_symfile *sf;
	const struct sptd_dec_elf_load *loads;
	int ret = -ENOMEM;

	sf = calloc(1, sizeof(*sf));
	if (!sf)
		goto out;
	loads = sptd_dec_elf_loads(elf, &sf->nloads);
	if (sf->nloads) {
		sf->loads = malloc(sf->nloads * sizeof(*sf->loads));
		if (!sf->loads)
			goto out;
		memcpy(sf->loads, loads, sf->nloads * sizeof(*sf->loads));
	}
	ret = sptd_dec_elf_build_id(elf, &sf->build_id);
	if (ret < 0 && ret != -ENODATA)
		goto out;
	sf->syms = calloc(1, sizeof(*sf->syms));
	sf->ends = calloc(1, sizeof(*sf->ends));
	ret = sf->syms && sf->ends ? 0 : -ENOMEM;
out:
	if (ret < 0) {
		sptd_dec_symfile_destroy(sf);
		sf = NULL;
	}
	*out = sf;
	return ret;
}

int sptd_dec_symfile_load_elf_head(const char *path, struct sptd_dec_symfile **out)
{
	struct sptd_dec_elf *elf = NULL;
	int ret;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	ret = sptd_dec_elf_open_head(path, &elf);
	if (ret >= 0)
		ret = symfile_head(elf, out);
	sptd_dec_elf_close(elf);
	return ret;
}

int sptd_dec_symfile_load_elf(const char *path, struct sptd_dec_symfile **out)
{
	struct sptd_dec_elf *elf = NULL;
	int ret;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	ret = sptd_dec_elf_open(path, &elf);
	if (ret >= 0)
		ret = sptd_dec_symfile_from_elf(elf, out);
	sptd_dec_elf_close(elf);
	return ret;
}

int sptd_dec_symfile_load_elf_fd_named(int fd, const char *path, struct sptd_dec_symfile **out)
{
	struct sptd_dec_elf *elf = NULL;
	int ret;

	if (fd < 0 || !out)
		return -EINVAL;
	*out = NULL;
	ret = sptd_dec_elf_open_fd_named(fd, path, &elf);
	if (ret >= 0)
		ret = sptd_dec_symfile_from_elf(elf, out);
	sptd_dec_elf_close(elf);
	return ret;
}

int sptd_dec_symfile_load_elf_fd(int fd, struct sptd_dec_symfile **out)
{
	return sptd_dec_symfile_load_elf_fd_named(fd, NULL, out);
}

int sptd_dec_symfile_load_elf_head_fd(int fd, struct sptd_dec_symfile **out)
{
	struct sptd_dec_elf *elf = NULL;
	int ret;

	if (fd < 0 || !out)
		return -EINVAL;
	*out = NULL;
	ret = sptd_dec_elf_open_head_fd(fd, &elf);
	if (ret >= 0)
		ret = symfile_head(elf, out);
	sptd_dec_elf_close(elf);
	return ret;
}

/* ---- kallsyms ------------------------------------------------------------- */

/* "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[mod]". */
static int kallsyms_parse_line(char *line, uint64_t *addr, char *type, char **name)
{
	char *end, *p;

	*addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return -1;
	p = end + 1;
	if (!*p || p[1] != ' ')
		return -1;
	*type = *p;
	p += 2;
	end = p + strcspn(p, "\t \n");
	*end = '\0';
	if (!*p)
		return -1;
	*name = p;
	return 0;
}

int sptd_dec_symfile_load_kallsyms(const char *path, struct sptd_dec_symfile **out)
{
	struct sptd_dec_symfile *sf = NULL;
	struct builder b = { 0 };
	char line[1024];
	FILE *f = NULL;
	size_t i, zero = 0;
	int fd, ret;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	/* a saved copy may be anywhere: no FIFO or device (procfs files are
	 * regular, of size 0) */
	fd = sptd_dec_file_open(path, 0, NULL);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	ret = -ENOMEM;
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		goto out;
	sf->is_kallsyms = 1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t addr;
		char type, *name;

		if (kallsyms_parse_line(line, &addr, &type, &name) < 0)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr == 0) {
			zero++;
			continue;
		}
		ret = builder_add(&b, addr, 0, 0, name,
		                  type == 'T' ? 3 : type == 'W' || type == 'w' ? 2 : 1);
		if (ret < 0)
			goto out;
	}
	if (ferror(f)) {
		ret = -EIO;
		goto out;
	}
	/* kptr_restrict (or not root): every address reads as 0. */
	ret = -EACCES;
	if (b.count == 0 && zero > 0)
		goto out;
	ret = builder_finish(&b, sf);
	if (ret < 0)
		goto out;
	/* kallsyms has no sizes: each symbol reaches to the next one. */
	for (i = 0; i + 1 < sf->count; i++)
		sf->syms[i].size = sf->ends[i] - sf->syms[i].addr;
	*out = sf;
	sf = NULL;
out:
	builder_fini(&b);
	sptd_dec_symfile_destroy(sf);
	if (f)
		fclose(f);
	return ret;
}

int sptd_dec_symfile_from_list(const struct sptd_dec_sym *syms, size_t n,
                               struct sptd_dec_symfile **out)
{
	struct sptd_dec_symfile *sf = NULL;
	struct builder b = { 0 };
	int ret = -ENOMEM;

	if ((!syms && n) || !out)
		return -EINVAL;
	*out = NULL;
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		goto out;
	sf->is_kallsyms = 1;   /* runtime addresses: no file offsets */
	ret = 0;
	for (size_t i = 0; i < n && ret >= 0; i++)
		if (syms[i].name && syms[i].addr)
			ret = builder_add(&b, syms[i].addr, syms[i].size, 0, syms[i].name, 3);
out:
	ret = builder_publish(&b, sf, ret, out);
	return ret < 0 ? ret : 0;
}

/* ---- queries -------------------------------------------------------------- */

const char *sptd_dec_symfile_build_id(const struct sptd_dec_symfile *sf)
{
	return sf ? sf->build_id : NULL;
}

size_t sptd_dec_symfile_count(const struct sptd_dec_symfile *sf)
{
	return sf ? sf->count : 0;
}

int sptd_dec_symfile_origin(const struct sptd_dec_symfile *sf)
{
	return sf ? sf->origin : 0;
}

const char *sptd_dec_symfile_debug_path(const struct sptd_dec_symfile *sf)
{
	return sf ? sf->debug_path : NULL;
}

int sptd_dec_symfile_lookup(const struct sptd_dec_symfile *sf, uint64_t addr,
                            struct sptd_dec_sym *sym)
{
	size_t lo = 0, hi, i;

	if (!sf || !sym)
		return -EINVAL;
	hi = sf->count;
	/* first symbol with start > addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sf->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The closest start at or below addr usually contains it; a few steps
	 * back find an enclosing function when a small one sits inside it. */
	for (i = lo; i > 0 && lo - i < 4; i--) {
		if (addr < sf->ends[i - 1]) {
			*sym = sf->syms[i - 1];
			return 0;
		}
	}
	return -ENOENT;
}

int sptd_dec_symfile_bias(const struct sptd_dec_symfile *sf, uint64_t map_start,
                          uint64_t pgoff, int64_t *bias)
{
	const struct sptd_dec_elf_load *best = NULL;
	int best_score = -1;
	long page_size = sysconf(_SC_PAGESIZE);
	uint64_t page = page_size > 0 ? (uint64_t)page_size : 4096;
	size_t i;

	if (!sf || !bias)
		return -EINVAL;
	if (sf->is_kallsyms) {
		*bias = 0;
		return 0;
	}
	/* A segment is mapped from its offset rounded down to a page, so a
	 * mapping's pgoff may lie before p_offset; where two segments share a
	 * page, the executable one and the one starting in pgoff's page win
	 * (callers map code). */
	for (i = 0; i < sf->nloads; i++) {
		const struct sptd_dec_elf_load *l = &sf->loads[i];
		uint64_t first = l->offset & ~(page - 1);
		int score;

		if (pgoff < first || pgoff >= l->offset + (l->filesz ? l->filesz : 1))
			continue;
		score = ((l->flags & SPTD_DEC_ELF_PF_X) ? 2 : 0) + (first == pgoff ? 1 : 0);
		if (score > best_score) {
			best = l;
			best_score = score;
		}
	}
	if (!best)
		return -ENOENT;
	*bias = (int64_t)(map_start - (best->vaddr - best->offset + pgoff));
	return 0;
}

void sptd_dec_symfile_destroy(struct sptd_dec_symfile *sf)
{
	if (!sf)
		return;
	free(sf->syms);
	free(sf->ends);
	free(sf->names);
	free(sf->build_id);
	free(sf->debug_path);
	free(sf->loads);
	free(sf);
}
