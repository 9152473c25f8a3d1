/* symfile-local.h — the insides of struct sptd_dec_symfile (symfile.c),
 * shared with demangle.c's helpers. */
#ifndef SPTD_SYMFILE_LOCAL_H
#define SPTD_SYMFILE_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "elf-local.h"
#include "sptd_dec.h"

struct sptd_dec_symfile {
	struct sptd_dec_sym *syms;  /* sorted by addr, one per address */
	uint64_t *ends;             /* ends[i]: first address past syms[i]
	                             * (addr + size, or the next symbol) */
	size_t count;               /* entries in syms/ends */
	char *names;                /* arena holding every name, NUL-separated */
	char *build_id;             /* hex GNU build-id, NULL if none */
	struct sptd_dec_elf_load *loads; /* PT_LOAD headers in file order */
	size_t nloads;              /* entries in loads */
	int is_kallsyms;            /* addresses are kernel VAs; bias is 0 */
	int origin;                 /* SPTD_DEC_SYMS_* bits: where symbols came from */
	char *debug_path;           /* separate debug file used, NULL none */
};

/* The symbols, build-id and PT_LOAD headers of the open ELF file @elf
 * (which the caller keeps and closes), with its debug file's or
 * MiniDebugInfo's symbols when it is stripped.  -EINVAL, -ENOMEM. */
int sptd_dec_symfile_from_elf(struct sptd_dec_elf *elf, struct sptd_dec_symfile **out);

/* Demangle @mangled (see sptd_dec_demangle); returns a malloc'd string the
 * caller frees, or NULL when it is not a mangled name we know, is longer
 * than the demangler is trusted with, or memory ran out. */
char *sptd_dec_demangle_dup(const char *mangled);

#endif /* SPTD_SYMFILE_LOCAL_H */
