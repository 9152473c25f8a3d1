/* elf-local.h — an open ELF file (elf.c) for decode/'s own units: its
 * PT_LOAD segments, GNU build-id and function symbols, read through one
 * handle.  Only decode/ includes it; everything outside decode/ uses the
 * path-based functions of sptd_dec.h (sptd_dec_elf_span,
 * sptd_dec_elf_read_vaddr, sptd_dec_build_id). */
#ifndef SPTD_ELF_LOCAL_H
#define SPTD_ELF_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_dec.h"

/* p_flags bit of an executable segment (PF_X), for callers that prefer
 * code mappings without including an ELF header. */
#define SPTD_DEC_ELF_PF_X 0x1u

/* One PT_LOAD program header. */
struct sptd_dec_elf_load {
	uint64_t vaddr;        /* p_vaddr */
	uint64_t offset;       /* p_offset */
	uint64_t filesz;       /* p_filesz: bytes the file holds (0: bss only) */
	uint64_t memsz;        /* p_memsz: bytes in memory */
	uint32_t flags;        /* p_flags (SPTD_DEC_ELF_PF_X) */
};

/* Binding of a function symbol, numbered in order of preference when
 * several name one address (GLOBAL over WEAK over LOCAL). */
enum sptd_dec_elf_bind {
	SPTD_DEC_ELF_BIND_LABEL = 0,   /* STT_NOTYPE in code (ld.so's _start):
	                                * named where no function covers it */
	SPTD_DEC_ELF_BIND_LOCAL = 1,   /* STB_LOCAL and anything unknown */
	SPTD_DEC_ELF_BIND_WEAK = 2,    /* STB_WEAK */
	SPTD_DEC_ELF_BIND_GLOBAL = 3,  /* STB_GLOBAL */
};

/* One function symbol as the symbol table gives it. */
struct sptd_dec_elf_func {
	const char *name;      /* mangled name; borrowed, valid while the file is open */
	uint64_t addr;         /* st_value: file address */
	uint64_t size;         /* st_size; 0 unknown */
	uint64_t limit;        /* end of the symbol's section (sh_addr + sh_size); 0 unknown */
	int bind;              /* enum sptd_dec_elf_bind */
};

/* An open ELF file. */
struct sptd_dec_elf;

/* Open @path (any class and byte order that libelf reads) as a file a
 * user controls (sptd_dec_file_open: symlinks followed, no FIFO or device,
 * at most SPTD_DEC_FILE_MAX bytes).  -EINVAL NULL, the negative errno of
 * open(2) (-ENOENT, -EACCES ...), -ENXIO not a regular file, -EFBIG too
 * large, -EBADMSG not ELF,
 * -EIO libelf unusable, -ENOMEM.  A file whose program headers cannot be
 * read opens with no segments. */
int sptd_dec_elf_open(const char *path, struct sptd_dec_elf **out);
/* Read the ELF file open at @fd (a copy of the fd is taken; the caller
 * keeps and closes its own): for a file opened elsewhere, such as a
 * process's mapping through /proc/PID/map_files.  Same errors as
 * sptd_dec_elf_open, plus -ENXIO not a regular file, -EFBIG too large. */
int sptd_dec_elf_open_fd(int fd, struct sptd_dec_elf **out);
/* sptd_dec_elf_open_fd, with @path (may be NULL) as what sptd_dec_elf_path
 * says: where a stripped file's .gnu_debuglink is looked for.  Every byte
 * is read from @fd; @path is never opened. */
int sptd_dec_elf_open_fd_named(int fd, const char *path, struct sptd_dec_elf **out);
/* sptd_dec_elf_open_head for the file open at @fd (a copy of the fd is
 * taken; the caller keeps its own).  Errors as sptd_dec_elf_open_fd. */
int sptd_dec_elf_open_head_fd(int fd, struct sptd_dec_elf **out);
/* Open @path for its headers and notes only (libelf reads what is asked
 * for, nothing is mapped): PT_LOAD segments and the build-id at the cost of
 * a few preads.  Errors as sptd_dec_elf_open. */
int sptd_dec_elf_open_head(const char *path, struct sptd_dec_elf **out);
/* Open the file @fd, which is taken over (closed by sptd_dec_elf_close, and
 * on failure); @path (may be NULL) is what sptd_dec_elf_path says.  For
 * callers that open the file themselves (debuginfo.c checks a file before
 * parsing it).  Errors as sptd_dec_elf_open. */
int sptd_dec_elf_open_fd_take(int fd, const char *path, struct sptd_dec_elf **out);
/* Open the ELF image of @len bytes at @image, a malloc'd buffer taken over
 * (freed by sptd_dec_elf_close, and on failure): MiniDebugInfo once
 * decompressed.  -EINVAL, -EBADMSG not ELF, -EIO, -ENOMEM. */
int sptd_dec_elf_open_mem(void *image, size_t len, struct sptd_dec_elf **out);
/* Accepts NULL. */
void sptd_dec_elf_close(struct sptd_dec_elf *elf);
/* A new descriptor of @elf's file (the caller closes it), -EINVAL for a
 * memory image, or -errno of the dup. */
int sptd_dec_elf_dup_fd(const struct sptd_dec_elf *elf);
/* The path @elf was opened from; NULL for a memory image.  Borrowed for the
 * life of @elf. */
const char *sptd_dec_elf_path(const struct sptd_dec_elf *elf);
/* 64 for ELFCLASS64, 32 for ELFCLASS32, 0 otherwise. */
int sptd_dec_elf_bits(const struct sptd_dec_elf *elf);
/* 1 when the file is little-endian (ELFDATA2LSB). */
int sptd_dec_elf_little_endian(const struct sptd_dec_elf *elf);
/* The PT_LOAD headers in file order (those with p_filesz 0 too), borrowed
 * for the life of @elf; their number in *@n.  NULL with *@n 0 when none. */
const struct sptd_dec_elf_load *sptd_dec_elf_loads(const struct sptd_dec_elf *elf, size_t *n);
/* The first GNU build-id note, PT_NOTE segments first and SHT_NOTE sections
 * as fallback, as a malloc'd lowercase hex string in *@hex (the caller frees
 * it).  -EINVAL, -ENODATA no such note, -ENOMEM. */
int sptd_dec_elf_build_id(struct sptd_dec_elf *elf, char **hex);
/* Call @fn for every defined function symbol (STT_FUNC and STT_GNU_IFUNC,
 * section index defined, address not 0, name not empty) of the .symtab and
 * .dynsym sections, in section order then table order.  0, -EINVAL, or the
 * first negative value @fn returned. */
int sptd_dec_elf_each_func(struct sptd_dec_elf *elf,
                           int (*fn)(void *ctx, const struct sptd_dec_elf_func *func),
                           void *ctx);

/* The raw bytes of the section named @name (".gnu_debuglink",
 * ".gnu_debugdata"), borrowed for the life of @elf.  -EINVAL, -ENODATA no
 * such section, or one without file bytes (SHT_NOBITS, empty). */
int sptd_dec_elf_section(struct sptd_dec_elf *elf, const char *name, const void **data,
                         size_t *len);
/* 1 when @elf has a .symtab (SHT_SYMTAB) with at least one symbol: a file
 * not stripped, whose separate debug file would add no function symbol. */
int sptd_dec_elf_has_symtab(struct sptd_dec_elf *elf);
/* The variable (STT_OBJECT) named @name: its file address and size.
 * -ENOENT none, -ENOTUNIQ several at different addresses. */
int sptd_dec_elf_data_symbol(struct sptd_dec_elf *elf, const char *name, uint64_t *addr,
                             uint64_t *size);

#endif /* SPTD_ELF_LOCAL_H */
