/* fakepmu_kcore.c — see fakepmu_kcore.h. */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fakepmu_kcore.h"

static int mkdir_in(const char *root, const char *sub, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s", root, sub);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(root, 0755) < 0 && errno != EEXIST)
		return -errno;
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

/* ROOT/proc/kcore: ELF header, two program headers, then the text segment
 * at FAKEKERNEL_DATA_OFF and the module area after it. */
static int write_kcore(const char *proc, const uint8_t *text, size_t text_len,
                       const struct fakepmu_kcode *code, int ncode)
{
	char path[4200];
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	uint8_t *area;
	uint64_t text_off = FAKEKERNEL_DATA_OFF;
	uint64_t area_off = text_off + ((text_len + 4095) & ~(uint64_t)4095);
	FILE *f;
	int ok;

	area = calloc(1, FAKEKERNEL_MODULES_LEN);
	if (!area)
		return -ENOMEM;
	for (int i = 0; i < ncode; i++)
		if (code[i].addr >= FAKEKERNEL_MODULES &&
		    code[i].addr - FAKEKERNEL_MODULES + code[i].len <= FAKEKERNEL_MODULES_LEN)
			memcpy(area + (code[i].addr - FAKEKERNEL_MODULES), code[i].code, code[i].len);
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 2;
	memset(ph, 0, sizeof(ph));
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
	                      .p_offset = text_off, .p_vaddr = FAKEKERNEL_TEXT,
	                      .p_filesz = text_len, .p_memsz = text_len, .p_align = 4096 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
	                      .p_offset = area_off, .p_vaddr = FAKEKERNEL_MODULES,
	                      .p_filesz = FAKEKERNEL_MODULES_LEN,
	                      .p_memsz = FAKEKERNEL_MODULES_LEN, .p_align = 4096 };
	snprintf(path, sizeof(path), "%s/kcore", proc);
	f = fopen(path, "wb");
	if (!f) {
		free(area);
		return -errno;
	}
	ok = fwrite(&eh, sizeof(eh), 1, f) == 1 && fwrite(ph, sizeof(ph), 1, f) == 1 &&
	     fseek(f, (long)text_off, SEEK_SET) == 0 && fwrite(text, 1, text_len, f) == text_len &&
	     fseek(f, (long)area_off, SEEK_SET) == 0 &&
	     fwrite(area, 1, FAKEKERNEL_MODULES_LEN, f) == FAKEKERNEL_MODULES_LEN;
	free(area);
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

int fakepmu_kernel_write(const char *root, const uint8_t *text, size_t text_len,
                         const struct fakepmu_kcode *code, int ncode, int hide_addrs)
{
	char proc[4100], path[4200];
	uint64_t mask = hide_addrs ? 0 : UINT64_MAX;
	FILE *syms, *mods;
	int ret;

	if (!root || !text || !text_len || (!code && ncode))
		return -EINVAL;
	ret = mkdir_in(root, "proc", proc, sizeof(proc));
	if (ret < 0)
		return ret;
	ret = write_kcore(proc, text, text_len, code, ncode);
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "%s/kallsyms", proc);
	syms = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/modules", proc);
	mods = fopen(path, "w");
	if (!syms || !mods) {
		ret = -errno;
		goto out;
	}
	fprintf(syms, "%016" PRIx64 " T _stext\n", (uint64_t)(FAKEKERNEL_TEXT & mask));
	fprintf(syms, "%016" PRIx64 " T _etext\n", (uint64_t)((FAKEKERNEL_TEXT + text_len) & mask));
	for (int i = 0; i < ncode; i++) {
		if (code[i].tag) {
			fprintf(syms, "%016" PRIx64 " t %s\t[%s]\n", code[i].addr & mask, code[i].name,
			        code[i].tag);
			continue;
		}
		fprintf(syms, "%016" PRIx64 " t %s_fn\t[%s]\n", code[i].addr & mask, code[i].name,
		        code[i].name);
		fprintf(mods, "%s %" PRIu64 " 0 - Live 0x%016" PRIx64 "\n", code[i].name, code[i].size,
		        code[i].addr & mask);
	}
	ret = 0;
out:
	if (syms && fclose(syms) != 0)
		ret = -EIO;
	if (mods && fclose(mods) != 0)
		ret = -EIO;
	return ret;
}
