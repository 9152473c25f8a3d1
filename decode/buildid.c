/* buildid.c — the GNU build-id of an ELF file, read from its notes with plain
 * preads (no libelf): cheap enough to check every mapped file at capture and
 * every cached image at decode. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sptd_dec.h"

/* Largest note segment read looking for the build-id. */
#define NOTE_MAX (1u << 20)

/* The GNU build-id in the notes at [off, off+len) of @fd, as hex. */
static int notes_build_id(int fd, uint64_t off, uint64_t len, uint32_t align, char *hex,
                          size_t hexlen)
{
	unsigned char *buf;
	size_t pos = 0, a = align == 8 ? 8 : 4;
	int ret = -ENODATA;

	if (len == 0 || len > NOTE_MAX)
		return -ENODATA;
	buf = malloc((size_t)len);
	if (!buf)
		return -ENOMEM;
	if (pread(fd, buf, (size_t)len, (off_t)off) != (ssize_t)len) {
		free(buf);
		return -EBADMSG;
	}
	while (pos + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;
		size_t name_at, desc_at, next;

		memcpy(&nh, buf + pos, sizeof(nh));
		name_at = pos + sizeof(nh);
		desc_at = name_at + ((nh.n_namesz + a - 1) & ~(a - 1));
		next = desc_at + ((nh.n_descsz + a - 1) & ~(a - 1));
		if (nh.n_namesz > len || nh.n_descsz > len || desc_at > len || next > len ||
		    desc_at + nh.n_descsz > len)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(buf + name_at, "GNU", 4) == 0 && nh.n_descsz > 0) {
			if (hexlen < (size_t)nh.n_descsz * 2 + 1) {
				ret = -ENAMETOOLONG;
				break;
			}
			for (uint32_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + i * 2, 3, "%02x", buf[desc_at + i]);
			ret = 0;
			break;
		}
		pos = next;
	}
	free(buf);
	return ret;
}

int sptd_dec_build_id(const char *path, char *hex, size_t hexlen)
{
	Elf64_Ehdr eh;
	int fd, ret = -ENODATA;

	if (!path || !hex || hexlen == 0)
		return -EINVAL;
	hex[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		ret = -EBADMSG;   /* not a 64-bit little-endian ELF file */
		goto out;
	}
	/* program headers first (what the loader maps), sections as fallback */
	if (eh.e_phentsize == sizeof(Elf64_Phdr)) {
		for (int i = 0; i < eh.e_phnum && ret == -ENODATA; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type == PT_NOTE)
				ret = notes_build_id(fd, ph.p_offset, ph.p_filesz, (uint32_t)ph.p_align,
				                     hex, hexlen);
		}
	}
	if (ret == -ENODATA && eh.e_shentsize == sizeof(Elf64_Shdr)) {
		for (int i = 0; i < eh.e_shnum && ret == -ENODATA; i++) {
			Elf64_Shdr sh;

			if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh))) !=
			    (ssize_t)sizeof(sh))
				break;
			if (sh.sh_type == SHT_NOTE)
				ret = notes_build_id(fd, sh.sh_offset, sh.sh_size,
				                     (uint32_t)sh.sh_addralign, hex, hexlen);
		}
	}
out:
	close(fd);
	return ret;
}
