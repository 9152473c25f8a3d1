/* symfind.c — symbols by name, and file offsets of file addresses: what a
 * uprobe needs (the kernel places uprobes by file offset). */
#include <errno.h>
#include <string.h>

#include "elf-local.h"
#include "sptd_dec.h"
#include "symfile-local.h"

/* @name matches a demangled C++ name without its parameter list too:
 * "ns::f" finds "ns::f(int)". */
static int name_matches(const char *sym, const char *name)
{
	size_t len = strlen(name);

	return strcmp(sym, name) == 0 ||
	       (strncmp(sym, name, len) == 0 && sym[len] == '(');
}

int sptd_dec_symfile_find(const struct sptd_dec_symfile *sf, const char *name,
                          struct sptd_dec_sym *sym)
{
	int found = 0;

	if (!sf || !name || !*name || !sym)
		return -EINVAL;
	for (size_t i = 0; i < sf->count; i++) {
		if (!name_matches(sf->syms[i].name, name))
			continue;
		if (found && sf->syms[i].addr != sym->addr)
			return -ENOTUNIQ; /* two functions of that name: say which */
		*sym = sf->syms[i];
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

int sptd_dec_symfile_offset(const struct sptd_dec_symfile *sf, uint64_t addr,
                            uint64_t *offset)
{
	if (!sf || !offset)
		return -EINVAL;
	if (sf->is_kallsyms)
		return -ENOENT;
	for (size_t i = 0; i < sf->nloads; i++) {
		const struct sptd_dec_elf_load *l = &sf->loads[i];

		if (addr >= l->vaddr && addr - l->vaddr < l->filesz) {
			*offset = addr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}
