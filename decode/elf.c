/* elf.c — the one reader of ELF files: opening one (libelf), its PT_LOAD
 * segments, its GNU build-id note, its function symbols, the address span of
 * its segments and the bytes a segment holds at a virtual address.  Every
 * other unit, in decode/ and outside it, reads ELF through these functions;
 * no other file includes an ELF header but unwind.c (libdw, whose frame
 * API reads the call-frame information).
 *
 * Divisions: the handle (open a path, an fd or bytes in memory; class,
 * segments), build-id notes, function symbols, sections by name, path-based
 * helpers for callers outside decode/. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-local.h"
#include "sptd_dec.h"

/* Largest note segment or section searched for the build-id. */
#define ELF_NOTE_MAX (1u << 20)

struct sptd_dec_elf {
	int fd;                          /* the open file; -1 for a memory image */
	void *image;                     /* a memory image's bytes (owned), else NULL */
	char *path;                      /* where it was opened from; NULL memory */
	Elf *elf;                        /* libelf's view of it */
	int bits;                        /* 32, 64, 0 unknown class */
	int little_endian;               /* ELFDATA2LSB */
	struct sptd_dec_elf_load *loads; /* PT_LOAD headers in file order */
	size_t nloads;                   /* entries of loads */
};

/* ---- the handle ------------------------------------------------------------ */

/* Every PT_LOAD header of @e; none when the program headers are unreadable. */
static int elf_read_loads(struct sptd_dec_elf *e)
{
	size_t n, i;

	if (elf_getphdrnum(e->elf, &n) != 0 || n == 0)
		return 0;
	e->loads = calloc(n, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->loads[e->nloads++] = (struct sptd_dec_elf_load){
			.vaddr = ph.p_vaddr, .offset = ph.p_offset, .filesz = ph.p_filesz,
			.memsz = ph.p_memsz, .flags = ph.p_flags,
		};
	}
	return 0;
}

/* Fill in @e (its fd or image already set) from libelf's view @e->elf:
 * class, byte order, segments.  -EBADMSG not ELF, -ENOMEM. */
static int elf_setup(struct sptd_dec_elf *e)
{
	const char *ident;
	int ret;

	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF)
		return -EBADMSG;
	ident = elf_getident(e->elf, NULL);
	if (ident) {
		e->bits = ident[EI_CLASS] == ELFCLASS64 ? 64 : ident[EI_CLASS] == ELFCLASS32 ? 32 : 0;
		e->little_endian = ident[EI_DATA] == ELFDATA2LSB;
	}
	ret = elf_read_loads(e);
	return ret < 0 ? ret : 0;
}

/* Open the file @fd (taken over: closed on failure too) with libelf command
 * @cmd: ELF_C_READ_MMAP for files whose sections are read (symbols),
 * ELF_C_READ where only headers and notes are: it reads what is asked for
 * and nothing more (a build-id check costs no more than plain preads; files
 * too big to map, such as /proc/kcore, open).  @path (may be NULL) is
 * remembered for sptd_dec_elf_path. */
static int elf_begin_fd(int fd, const char *path, Elf_Cmd cmd, struct sptd_dec_elf **out)
{
	struct sptd_dec_elf *e;
	int ret;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -EIO;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return -ENOMEM;
	}
	e->fd = fd;
	ret = -ENOMEM;
	if (path && !(e->path = strdup(path)))
		goto fail;
	e->elf = elf_begin(e->fd, cmd, NULL);
	ret = elf_setup(e);
	if (ret < 0)
		goto fail;
	*out = e;
	return 0;
fail:
	sptd_dec_elf_close(e);
	return ret;
}

/* Open @path as a file a user controls (sptd_dec_file_open: no FIFO, no
 * device, bounded size unless @open_flags say otherwise), then read it. */
static int elf_open_cmd(const char *path, int open_flags, Elf_Cmd cmd,
                        struct sptd_dec_elf **out)
{
	int fd;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	fd = sptd_dec_file_open(path, open_flags, NULL);
	if (fd < 0)
		return fd;
	return elf_begin_fd(fd, path, cmd, out);
}

int sptd_dec_elf_open(const char *path, struct sptd_dec_elf **out)
{
	return elf_open_cmd(path, 0, ELF_C_READ_MMAP, out);
}

int sptd_dec_elf_open_head(const char *path, struct sptd_dec_elf **out)
{
	return elf_open_cmd(path, 0, ELF_C_READ, out);
}

/* Read the file open at @fd through a copy of it (the caller keeps @fd):
 * a regular file of a sane size, named @path (may be NULL). */
static int elf_dup_cmd(int fd, const char *path, Elf_Cmd cmd, struct sptd_dec_elf **out)
{
	struct stat sb;
	int own;

	if (fd < 0 || !out)
		return -EINVAL;
	*out = NULL;
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return S_ISDIR(sb.st_mode) ? -EISDIR : -ENXIO;
	if ((uint64_t)sb.st_size > SPTD_DEC_FILE_MAX)
		return -EFBIG;
	own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return -errno;
	return elf_begin_fd(own, path, cmd, out);
}

int sptd_dec_elf_open_fd(int fd, struct sptd_dec_elf **out)
{
	return elf_dup_cmd(fd, NULL, ELF_C_READ_MMAP, out);
}

int sptd_dec_elf_open_fd_named(int fd, const char *path, struct sptd_dec_elf **out)
{
	return elf_dup_cmd(fd, path, ELF_C_READ_MMAP, out);
}

int sptd_dec_elf_open_head_fd(int fd, struct sptd_dec_elf **out)
{
	return elf_dup_cmd(fd, NULL, ELF_C_READ, out);
}

int sptd_dec_elf_open_fd_take(int fd, const char *path, struct sptd_dec_elf **out)
{
	if (!out || fd < 0) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	return elf_begin_fd(fd, path, ELF_C_READ_MMAP, out);
}

int sptd_dec_elf_open_mem(void *image, size_t len, struct sptd_dec_elf **out)
{
	struct sptd_dec_elf *e;
	int ret;

	if (!image || !len || !out) {
		free(image);
		return -EINVAL;
	}
	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(image);
		return -EIO;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		free(image);
		return -ENOMEM;
	}
	e->fd = -1;
	e->image = image;
	e->elf = elf_memory(image, len);
	ret = elf_setup(e);
	if (ret < 0) {
		sptd_dec_elf_close(e);
		return ret;
	}
	*out = e;
	return 0;
}

const char *sptd_dec_elf_path(const struct sptd_dec_elf *elf)
{
	return elf ? elf->path : NULL;
}

int sptd_dec_elf_dup_fd(const struct sptd_dec_elf *elf)
{
	int fd;

	if (!elf || elf->fd < 0)
		return -EINVAL;
	fd = fcntl(elf->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

void sptd_dec_elf_close(struct sptd_dec_elf *elf)
{
	if (!elf)
		return;
	if (elf->elf)
		elf_end(elf->elf);
	if (elf->fd >= 0)
		close(elf->fd);
	free(elf->image);
	free(elf->path);
	free(elf->loads);
	free(elf);
}

int sptd_dec_elf_bits(const struct sptd_dec_elf *elf)
{
	return elf ? elf->bits : 0;
}

int sptd_dec_elf_little_endian(const struct sptd_dec_elf *elf)
{
	return elf ? elf->little_endian : 0;
}

const struct sptd_dec_elf_load *sptd_dec_elf_loads(const struct sptd_dec_elf *elf, size_t *n)
{
	if (n)
		*n = elf ? elf->nloads : 0;
	return elf && elf->nloads ? elf->loads : NULL;
}

/* ---- build-id ---------------------------------------------------------------- */

/* The first GNU build-id note in @data as malloc'd hex: 0, -ENODATA none,
 * -ENOMEM. */
static int notes_build_id(Elf_Data *data, char **hex)
{
	size_t off = 0, name_off, desc_off, i;
	GElf_Nhdr nhdr;

	if (!data || data->d_size > ELF_NOTE_MAX)
		return -ENODATA;
	while (off < data->d_size &&
	       (off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const unsigned char *desc;
		char *out;

		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4) != 0 ||
		    nhdr.n_descsz == 0)
			continue;
		desc = (const unsigned char *)data->d_buf + desc_off;
		out = malloc((size_t)nhdr.n_descsz * 2 + 1);
		if (!out)
			return -ENOMEM;
		for (i = 0; i < nhdr.n_descsz; i++)
			snprintf(out + i * 2, 3, "%02x", desc[i]);
		*hex = out;
		return 0;
	}
	return -ENODATA;
}

int sptd_dec_elf_build_id(struct sptd_dec_elf *elf, char **hex)
{
	Elf_Scn *scn = NULL;
	size_t n, i;
	int ret = -ENODATA;

	if (!elf || !hex)
		return -EINVAL;
	*hex = NULL;
	/* program headers first (what the loader maps), sections as fallback */
	if (elf_getphdrnum(elf->elf, &n) == 0) {
		for (i = 0; i < n && ret == -ENODATA; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf->elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
			    ph.p_filesz > ELF_NOTE_MAX)
				continue;
			ret = notes_build_id(elf_getdata_rawchunk(elf->elf, (int64_t)ph.p_offset,
			                                          ph.p_filesz,
			                                          ph.p_align == 8 ? ELF_T_NHDR8 :
			                                                            ELF_T_NHDR),
			                     hex);
		}
	}
	while (ret == -ENODATA && (scn = elf_nextscn(elf->elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_NOTE)
			ret = notes_build_id(elf_getdata(scn, NULL), hex);
	}
	return ret;
}

/* ---- function symbols ------------------------------------------------------- */

/* The function symbols of one symbol table section. */
static int elf_table_funcs(struct sptd_dec_elf *e, Elf_Scn *scn, const GElf_Shdr *shdr,
                           int (*fn)(void *ctx, const struct sptd_dec_elf_func *func),
                           void *ctx)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;
	int ret;

	if (!data || shdr->sh_entsize == 0)
		return 0;
	n = shdr->sh_size / shdr->sh_entsize;
	for (i = 1; i < n; i++) {
		struct sptd_dec_elf_func func;
		GElf_Sym sym;
		GElf_Shdr target;
		Elf_Scn *tscn;
		int type, bind;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		func.name = elf_strptr(e->elf, shdr->sh_link, sym.st_name);
		if (!func.name || !*func.name)
			continue;
		func.addr = sym.st_value;
		func.size = sym.st_size;
		func.limit = 0;
		tscn = sym.st_shndx < SHN_LORESERVE ? elf_getscn(e->elf, sym.st_shndx) : NULL;
		if (!tscn || !gelf_getshdr(tscn, &target))
			tscn = NULL;
		if (tscn)
			func.limit = target.sh_addr + target.sh_size;
		/* a label: only in code, and not an assembler's local or
		 * mapping symbol ($x, $d) */
		if (type == STT_NOTYPE && (!tscn || !(target.sh_flags & SHF_EXECINSTR) ||
		                           func.name[0] == '$' || func.name[0] == '.'))
			continue;
		bind = GELF_ST_BIND(sym.st_info);
		func.bind = type == STT_NOTYPE ? SPTD_DEC_ELF_BIND_LABEL :
		            bind == STB_GLOBAL ? SPTD_DEC_ELF_BIND_GLOBAL :
		            bind == STB_WEAK ? SPTD_DEC_ELF_BIND_WEAK : SPTD_DEC_ELF_BIND_LOCAL;
		ret = fn(ctx, &func);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int sptd_dec_elf_each_func(struct sptd_dec_elf *elf,
                           int (*fn)(void *ctx, const struct sptd_dec_elf_func *func),
                           void *ctx)
{
	Elf_Scn *scn = NULL;
	int ret;

	if (!elf || !fn)
		return -EINVAL;
	while ((scn = elf_nextscn(elf->elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		ret = elf_table_funcs(elf, scn, &shdr, fn, ctx);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- sections by name ----------------------------------------------------------- */

/* The section named @name, its header in *@shdr; NULL when there is none. */
static Elf_Scn *elf_find_section(struct sptd_dec_elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf->elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf->elf, scn)) != NULL) {
		const char *sname;

		if (!gelf_getshdr(scn, shdr))
			continue;
		sname = elf_strptr(elf->elf, shstrndx, shdr->sh_name);
		if (sname && strcmp(sname, name) == 0)
			return scn;
	}
	return NULL;
}

int sptd_dec_elf_data_symbol(struct sptd_dec_elf *elf, const char *name, uint64_t *addr,
                             uint64_t *size)
{
	Elf_Scn *scn = NULL;
	int found = 0;

	if (!elf || !name || !addr || !size)
		return -EINVAL;
	while ((scn = elf_nextscn(elf->elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_SYMTAB &&
		                                  shdr.sh_type != SHT_DYNSYM) || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 1; i < n; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			if (GELF_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
			    sym.st_value == 0)
				continue;
			s = elf_strptr(elf->elf, shdr.sh_link, sym.st_name);
			if (!s || strcmp(s, name) != 0)
				continue;
			if (found && (*addr != sym.st_value))
				return -ENOTUNIQ;
			*addr = sym.st_value;
			*size = sym.st_size;
			found = 1;
		}
	}
	return found ? 0 : -ENOENT;
}

int sptd_dec_elf_section(struct sptd_dec_elf *elf, const char *name, const void **data,
                         size_t *len)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *d;

	if (!elf || !name || !data || !len)
		return -EINVAL;
	*data = NULL;
	*len = 0;
	scn = elf_find_section(elf, name, &shdr);
	if (!scn || shdr.sh_type == SHT_NOBITS)
		return -ENODATA;
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size == 0)
		return -ENODATA;
	*data = d->d_buf;
	*len = d->d_size;
	return 0;
}

int sptd_dec_elf_has_symtab(struct sptd_dec_elf *elf)
{
	Elf_Scn *scn = NULL;

	if (!elf)
		return 0;
	while ((scn = elf_nextscn(elf->elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB &&
		    shdr.sh_entsize && shdr.sh_size / shdr.sh_entsize > 1)
			return 1;
	}
	return 0;
}

/* ---- path-based helpers (sptd_dec.h) ------------------------------------------- */

int sptd_dec_build_id_match(const char *a, const char *b)
{
	size_t la, lb;

	if (!a || !b || !a[0] || !b[0])
		return 0;
	la = strlen(a);
	lb = strlen(b);
	if (la == lb)
		return strcasecmp(a, b) == 0;
	/* perf's and the kernel's 20 bytes of a longer id */
	return (la == 40 || lb == 40) && strncasecmp(a, b, 40) == 0;
}

/* The build-id of the open @elf (closed here) into @hex. */
static int build_id_of(struct sptd_dec_elf *elf, char *hex, size_t hexlen)
{
	char *found = NULL;
	int ret;

	if (elf->bits != 64 || !elf->little_endian) {
		ret = -EBADMSG;   /* not a 64-bit little-endian ELF file */
		goto out;
	}
	ret = sptd_dec_elf_build_id(elf, &found);
	if (ret < 0)
		goto out;
	if (strlen(found) + 1 > hexlen) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	memcpy(hex, found, strlen(found) + 1);
out:
	free(found);
	sptd_dec_elf_close(elf);
	return ret;
}

int sptd_dec_build_id(const char *path, char *hex, size_t hexlen)
{
	struct sptd_dec_elf *elf = NULL;
	int ret;

	if (!path || !hex || hexlen == 0)
		return -EINVAL;
	hex[0] = '\0';
	ret = elf_open_cmd(path, 0, ELF_C_READ, &elf);
	return ret < 0 ? ret : build_id_of(elf, hex, hexlen);
}

int sptd_dec_build_id_fd(int fd, char *hex, size_t hexlen)
{
	struct sptd_dec_elf *elf = NULL;
	int ret;

	if (fd < 0 || !hex || hexlen == 0)
		return -EINVAL;
	hex[0] = '\0';
	ret = elf_dup_cmd(fd, NULL, ELF_C_READ, &elf);
	return ret < 0 ? ret : build_id_of(elf, hex, hexlen);
}

int sptd_dec_elf_span(const char *path, uint64_t *lo, uint64_t *hi)
{
	struct sptd_dec_elf *elf = NULL;
	size_t i;
	int ret;

	if (!path || !lo || !hi)
		return -EINVAL;
	*lo = UINT64_MAX;
	*hi = 0;
	ret = elf_open_cmd(path, 0, ELF_C_READ, &elf);
	if (ret < 0)
		return ret;
	for (i = 0; i < elf->nloads; i++) {
		const struct sptd_dec_elf_load *l = &elf->loads[i];

		if (l->vaddr > UINT64_MAX - l->memsz) {
			ret = -ERANGE;  /* a segment past the top of the address space */
			goto out;
		}
		if (l->vaddr < *lo)
			*lo = l->vaddr;
		if (l->vaddr + l->memsz > *hi)
			*hi = l->vaddr + l->memsz;
	}
	ret = elf->nloads ? 0 : -EBADMSG;
out:
	sptd_dec_elf_close(elf);
	return ret;
}

int sptd_dec_elf_read_vaddr(const char *path, uint64_t start, uint64_t end, void **buf,
                            size_t *len)
{
	struct sptd_dec_elf *elf = NULL;
	unsigned char *bytes;
	size_t i, n;
	int ret;

	if (!path || !buf || !len || end <= start)
		return -EINVAL;
	*buf = NULL;
	*len = 0;
	/* headers only: /proc/kcore is far too big to map (and its size is
	 * the kernel's address space, not bytes on a disk) */
	ret = elf_open_cmd(path, SPTD_DEC_OPEN_ANY_SIZE, ELF_C_READ, &elf);
	if (ret < 0)
		return ret;
	ret = -EBADMSG;
	if (elf->bits != 64)
		goto out;
	ret = -ENOENT;
	for (i = 0; i < elf->nloads; i++) {
		const struct sptd_dec_elf_load *l = &elf->loads[i];

		if (start < l->vaddr || start >= l->vaddr + l->filesz)
			continue;
		if (end > l->vaddr + l->filesz)
			end = l->vaddr + l->filesz;
		n = (size_t)(end - start);
		bytes = malloc(n);
		if (!bytes) {
			ret = -ENOMEM;
			break;
		}
		if (pread(elf->fd, bytes, n, (off_t)(l->offset + (start - l->vaddr))) !=
		    (ssize_t)n) {
			free(bytes);
			ret = -EIO;
			break;
		}
		*buf = bytes;
		*len = n;
		ret = 0;
		break;
	}
out:
	sptd_dec_elf_close(elf);
	return ret;
}

int sptd_dec_data_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	struct sptd_dec_elf *elf = NULL;
	int ret = sptd_dec_elf_open(path, &elf);

	if (ret < 0)
		return ret;
	ret = sptd_dec_elf_data_symbol(elf, name, addr, size);
	sptd_dec_elf_close(elf);
	return ret;
}
