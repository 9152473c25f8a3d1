/* elfwrap.c — giving each flat image a file that perf and `sysptd import`
 * can read code and symbols from.
 *
 * An image whose bytes are those of its maps.txt file at pgoff (every
 * file-backed text mapping: text is never relocated with -z now) is named
 * by that file, as perf record would.  Otherwise (the vdso, code patched in
 * memory, or --wrap-all) the image is wrapped: an ELF64 ET_EXEC with one
 * PT_LOAD at the image's address and a .text section over it, so perf's
 * symbol code (which places symbols by section) and sysptd's loader (by
 * program headers) both find the code; .symtab gets the function symbols
 * of the original file or, for the vdso, of the in-memory ELF itself,
 * moved by the mapping's load bias.  The one .text loses the original
 * section ends that a size-0 symbol stops at (_init in .init must not
 * cover the PLT), so every symbol is written with the extent the symbol
 * rules give it in the original file as its st_size. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "p2p.h"

/* How far a size-0 symbol with no symbol after it and no section end
 * reaches (as tests/ptgen/symtab.c and decode/symfile.c). */
#define WRAP_LAST_REACH 4096

/* One function symbol for the wrapper. */
struct wsym {
	char *name;          /* heap */
	uint64_t addr;       /* run-time address */
	uint64_t size;       /* st_size; the wrapper gets the symbol's extent */
	uint64_t limit;      /* run-time end of its original section, 0 unknown */
	int rank;            /* 0 GLOBAL, 1 WEAK, 2 LOCAL (lower preferred) */
	unsigned char info;  /* st_info (binding and type) */
};

/* A growing array of symbols. */
struct wsyms {
	struct wsym *s;      /* heap, @n used of @cap */
	size_t n, cap;
};

static void wsyms_free(struct wsyms *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		free(ws->s[i].name);
	free(ws->s);
}

static int read_all(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	uint8_t *buf;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &sb) < 0 || !(buf = malloc((size_t)sb.st_size + 1))) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*out = buf;
	*len = (size_t)sb.st_size;
	return 0;
}

/* Load bias of the mapping at @map_start of file offset @map_pgoff. */
static int elf_bias(Elf *e, uint64_t map_start, uint64_t map_pgoff, int64_t *bias)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n) != 0)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (map_pgoff >= (ph.p_offset & ~0xfffull) && map_pgoff < ph.p_offset + ph.p_filesz) {
			*bias = (int64_t)(map_start - map_pgoff) - (int64_t)(ph.p_vaddr - ph.p_offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* Every function symbol of @e (.symtab and .dynsym: defined, non-zero
 * address, named), moved by @bias, with its section's end. */
static int collect_syms(Elf *e, int64_t bias, struct wsyms *ws)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 1; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			uint64_t limit = 0;
			int type, bind;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name || !name[0])
				continue;
			if (sym.st_shndx < SHN_LORESERVE) {
				Elf_Scn *tscn = elf_getscn(e, sym.st_shndx);
				GElf_Shdr tsh;

				if (tscn && gelf_getshdr(tscn, &tsh))
					limit = tsh.sh_addr + tsh.sh_size + (uint64_t)bias;
			}
			if (ws->n == ws->cap) {
				size_t ncap = ws->cap ? 2 * ws->cap : 256;
				void *p = realloc(ws->s, ncap * sizeof(*ws->s));

				if (!p)
					return -ENOMEM;
				ws->s = p;
				ws->cap = ncap;
			}
			ws->s[ws->n].name = strdup(name);
			if (!ws->s[ws->n].name)
				return -ENOMEM;
			bind = GELF_ST_BIND(sym.st_info);
			ws->s[ws->n].addr = sym.st_value + (uint64_t)bias;
			ws->s[ws->n].size = sym.st_size;
			ws->s[ws->n].limit = limit;
			ws->s[ws->n].rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
			ws->s[ws->n].info = sym.st_info;
			ws->n++;
		}
	}
	return 0;
}

/* By address; at one address the symbol the alias rules keep first. */
static int pref_cmp(const void *a, const void *b)
{
	const struct wsym *x = a, *y = b;
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

/* Give every symbol of @ws the extent the symbol rules of docs/PTGEN.md
 * give its address in the original file: the first non-zero size among
 * the aliases in preference order, else up to the next symbol but not
 * past the kept alias's section end (4 KiB with neither).  The wrapper
 * has one section over the whole image, so these ends are written out as
 * sizes.  Then keep the symbols in [@lo, @hi), one per (address, name). */
static void fix_extents(struct wsyms *ws, uint64_t lo, uint64_t hi)
{
	size_t i, j, g, out = 0;

	if (ws->n)
		qsort(ws->s, ws->n, sizeof(*ws->s), pref_cmp);
	for (g = 0; g < ws->n; g = j) {
		uint64_t addr = ws->s[g].addr, size = 0, limit = ws->s[g].limit, end;

		for (j = g; j < ws->n && ws->s[j].addr == addr; j++)
			if (!size)
				size = ws->s[j].size;
		if (size) {
			end = addr + size;
		} else {
			if (j < ws->n)
				end = ws->s[j].addr;
			else
				end = limit > addr ? limit : addr + WRAP_LAST_REACH;
			if (limit > addr && end > limit)
				end = limit;
		}
		for (i = g; i < j; i++)
			ws->s[i].size = end - addr;
	}
	for (i = 0; i < ws->n; i++) {
		struct wsym *s = &ws->s[i];
		int dup = 0;

		/* the same symbol in both tables: aliases sort together, and
		 * equal names are adjacent unless the bindings differ */
		for (j = out; j > 0 && ws->s[j - 1].addr == s->addr && !dup; j--)
			dup = strcmp(ws->s[j - 1].name, s->name) == 0;
		if (dup || s->addr < lo || s->addr >= hi) {
			free(s->name);
			continue;
		}
		ws->s[out++] = *s;
	}
	ws->n = out;
}

static int load_syms(const char *symsrc, const uint8_t *mem, size_t memlen, uint64_t map_start,
                     uint64_t map_pgoff, uint64_t lo, uint64_t hi, struct wsyms *ws)
{
	int fd = -1, ret;
	Elf *e = NULL;
	int64_t bias = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	if (mem) {
		e = elf_memory((char *)(uintptr_t)mem, memlen);
	} else {
		fd = open(symsrc, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		e = elf_begin(fd, ELF_C_READ, NULL);
	}
	if (!e || elf_kind(e) != ELF_K_ELF) {
		ret = -EBADMSG;
		goto out;
	}
	ret = elf_bias(e, map_start, map_pgoff, &bias);
	if (ret == 0)
		ret = collect_syms(e, bias, ws);
	if (ret == 0)
		fix_extents(ws, lo, hi);
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Little-endian stores into a byte buffer. */
static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void shdr(uint8_t *p, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
                 uint64_t off, uint64_t size, uint32_t link, uint32_t info, uint64_t align,
                 uint64_t entsize)
{
	put32(p, name);
	put32(p + 4, type);
	put64(p + 8, flags);
	put64(p + 16, addr);
	put64(p + 24, off);
	put64(p + 32, size);
	put32(p + 40, link);
	put32(p + 44, info);
	put64(p + 48, align);
	put64(p + 56, entsize);
}

static int local_first(const void *a, const void *b)
{
	const struct wsym *x = a, *y = b;
	int lx = GELF_ST_BIND(x->info) == STB_LOCAL, ly = GELF_ST_BIND(y->info) == STB_LOCAL;

	if (lx != ly)
		return lx ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int sptd_p2p_elf_write(const char *path, uint64_t addr, const uint8_t *code, size_t len,
                       const char *symsrc, const uint8_t *symsrc_mem, size_t symsrc_len,
                       uint64_t map_start, uint64_t map_pgoff, uint64_t *code_off,
                       char *err, size_t errlen)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	struct wsyms ws = { 0 };
	uint64_t off_code = 0x1000 + (addr & 0xfff), off_sym, off_str, off_shstr, off_sh, total;
	size_t strsize = 1, nlocal = 0, i, pos;
	uint8_t *f = NULL;
	FILE *out = NULL;
	int ret = 0;

	if (symsrc || symsrc_mem) {
		ret = load_syms(symsrc, symsrc_mem, symsrc_len, map_start, map_pgoff, addr, addr + len,
		                &ws);
		if (ret < 0) {
			snprintf(err, errlen, "symbols of %s: %s", symsrc ? symsrc : "[vdso]",
			         strerror(-ret));
			goto out;
		}
	}
	qsort(ws.s, ws.n, sizeof(*ws.s), local_first);
	for (i = 0; i < ws.n; i++) {
		strsize += strlen(ws.s[i].name) + 1;
		nlocal += GELF_ST_BIND(ws.s[i].info) == STB_LOCAL;
	}
	off_sym = (off_code + len + 7) & ~7ull;
	off_str = off_sym + 24 * (ws.n + 1);
	off_shstr = off_str + strsize;
	off_sh = (off_shstr + sizeof(shstr) + 7) & ~7ull;
	total = off_sh + 5 * 64;
	f = calloc(1, total);
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	/* ELF header */
	memcpy(f, "\177ELF", 4);
	f[4] = 2;            /* ELFCLASS64 */
	f[5] = 1;            /* little-endian */
	f[6] = 1;            /* EV_CURRENT */
	put16(f + 16, 2);    /* ET_EXEC */
	put16(f + 18, 62);   /* EM_X86_64 */
	put32(f + 20, 1);
	put64(f + 24, addr);
	put64(f + 32, 64);   /* e_phoff */
	put64(f + 40, off_sh);
	put16(f + 52, 64);
	put16(f + 54, 56);
	put16(f + 56, 1);
	put16(f + 58, 64);
	put16(f + 60, 5);
	put16(f + 62, 4);
	/* the one PT_LOAD, R+X */
	put32(f + 64, 1);
	put32(f + 68, 5);
	put64(f + 72, off_code);
	put64(f + 80, addr);
	put64(f + 88, addr);
	put64(f + 96, len);
	put64(f + 104, len);
	put64(f + 112, 0x1000);
	memcpy(f + off_code, code, len);
	/* .symtab and .strtab */
	for (i = 0, pos = 1; i < ws.n; i++) {
		uint8_t *s = f + off_sym + 24 * (i + 1);
		size_t l = strlen(ws.s[i].name) + 1;

		put32(s, (uint32_t)pos);
		s[4] = ws.s[i].info;
		put16(s + 6, 1);     /* .text */
		put64(s + 8, ws.s[i].addr);
		put64(s + 16, ws.s[i].size);
		memcpy(f + off_str + pos, ws.s[i].name, l);
		pos += l;
	}
	memcpy(f + off_shstr, shstr, sizeof(shstr));
	shdr(f + off_sh + 64, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, addr, off_code, len, 0, 0,
	     16, 0);
	shdr(f + off_sh + 128, 7, SHT_SYMTAB, 0, 0, off_sym, 24 * (ws.n + 1), 3,
	     (uint32_t)nlocal + 1, 8, 24);
	shdr(f + off_sh + 192, 15, SHT_STRTAB, 0, 0, off_str, strsize, 0, 0, 1, 0);
	shdr(f + off_sh + 256, 23, SHT_STRTAB, 0, 0, off_shstr, sizeof(shstr), 0, 0, 1, 0);
	out = fopen(path, "wb");
	if (!out || fwrite(f, 1, total, out) != total) {
		ret = -errno ? -errno : -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		goto out;
	}
	*code_off = off_code;
out:
	if (out && fclose(out) != 0 && ret == 0) {
		ret = -EIO;
		snprintf(err, errlen, "%s: write error", path);
	}
	free(f);
	wsyms_free(&ws);
	return ret;
}

/* 1 if @file holds @code at @off. */
static int file_matches(const char *file, uint64_t off, const uint8_t *code, size_t len)
{
	uint8_t *buf = NULL;
	size_t flen = 0;
	int same;

	if (file[0] != '/' || read_all(file, &buf, &flen) < 0)
		return 0;
	same = off <= flen && len <= flen - off && memcmp(buf + off, code, len) == 0;
	free(buf);
	return same;
}

int sptd_p2p_images_prepare(struct sptd_p2p_input *in, const char *wrapdir, int wrap_all,
                            char *err, size_t errlen)
{
	int ret = 0;

	for (size_t i = 0; i < in->nimages && ret == 0; i++) {
		struct sptd_p2p_image *im = &in->images[i];
		uint8_t *code = NULL;
		size_t len = 0;
		int is_vdso = strcmp(im->file, "[vdso]") == 0;

		ret = read_all(im->bin, &code, &len);
		if (ret < 0) {
			snprintf(err, errlen, "%s: %s", im->bin, strerror(-ret));
			break;
		}
		if (!wrap_all && file_matches(im->file, im->pgoff, code, len)) {
			snprintf(im->mmap_path, sizeof(im->mmap_path), "%s", im->file);
			im->mmap_pgoff = im->pgoff;
		} else {
			if (mkdir(wrapdir, 0755) < 0 && errno != EEXIST) {
				ret = -errno;
				snprintf(err, errlen, "%s: %s", wrapdir, strerror(errno));
			} else {
				snprintf(im->mmap_path, sizeof(im->mmap_path), "%.3000s/%d-%" PRIx64 ".elf",
				         wrapdir, im->pid, im->addr);
				ret = sptd_p2p_elf_write(im->mmap_path, im->addr, code, len,
				                         is_vdso || access(im->file, R_OK) != 0 ? NULL : im->file,
				                         is_vdso && len >= 4 && memcmp(code, "\177ELF", 4) == 0 ?
				                         code : NULL, len, im->addr, is_vdso ? 0 : im->pgoff,
				                         &im->mmap_pgoff, err, errlen);
				im->wrapped = 1;
			}
		}
		free(code);
	}
	return ret;
}
