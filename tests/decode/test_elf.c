/* test_elf.c — decode/'s one ELF reader (elf.c): opening, PT_LOAD segments,
 * build-id notes, function symbols, the span of the segments and the bytes a
 * core file's segment holds, on the symfix fixture, on this test binary and
 * on crafted files (an ELF core like /proc/kcore, a 32-bit ELF, junk). */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-local.h"
#include "sptd_dec.h"
#include "sptd_test.h"

static char tmpdir[] = "/tmp/sptd-test-elf-XXXXXX";

static void path_of(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", tmpdir, name);
}

static int spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* The first line of a command's output, "" when none. */
static void first_line(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");

	out[0] = '\0';
	if (!p)
		return;
	if (!fgets(out, (int)len, p))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

/* An ELF64 core with two PT_LOAD segments, as /proc/kcore has them:
 * [0xffff0000, +64) from file offset 0x200, [0xffff1000, +32) from 0x300. */
static int write_core(const char *path)
{
	unsigned char file[0x400];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)file;
	Elf64_Phdr *ph = (Elf64_Phdr *)(file + sizeof(*eh));

	memset(file, 0, sizeof(file));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 3;
	ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = 0x1f0, .p_filesz = 0 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x200,
	                      .p_vaddr = 0xffff0000, .p_filesz = 64, .p_memsz = 64 };
	ph[2] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0x300,
	                      .p_vaddr = 0xffff1000, .p_filesz = 32, .p_memsz = 0x1000 };
	for (int i = 0; i < 64; i++)
		file[0x200 + i] = (unsigned char)(0x40 + i);
	for (int i = 0; i < 32; i++)
		file[0x300 + i] = (unsigned char)(0xa0 + i);
	return spit(path, file, 0x320);
}

/* A 32-bit ELF executable with one PT_LOAD and no build-id. */
static int write_elf32(const char *path)
{
	unsigned char file[0x100];
	Elf32_Ehdr *eh = (Elf32_Ehdr *)file;
	Elf32_Phdr *ph = (Elf32_Phdr *)(file + sizeof(*eh));

	memset(file, 0, sizeof(file));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS32;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_386;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph[0] = (Elf32_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
	                      .p_vaddr = 0x8048000, .p_filesz = 0x100, .p_memsz = 0x180 };
	return spit(path, file, sizeof(file));
}

static int count_func(void *ctx, const struct sptd_dec_elf_func *func)
{
	int *n = ctx;

	if (func->name && func->name[0] && func->addr)
		(*n)++;
	return 0;
}

static int find_main(void *ctx, const struct sptd_dec_elf_func *func)
{
	uint64_t *addr = ctx;

	if (strcmp(func->name, "main") == 0)
		*addr = func->addr;
	return 0;
}

static int stop_at_first(void *ctx, const struct sptd_dec_elf_func *func)
{
	(void)ctx;
	(void)func;
	return -ECANCELED;
}

/* The handle on the symfix fixture, compared with readelf and nm. */
static void test_handle(void)
{
	const struct sptd_dec_elf_load *loads;
	struct sptd_dec_elf *elf = NULL;
	char want[256], cmd[PATH_MAX + 128], *bid = NULL;
	uint64_t main_addr = 0, want_main;
	size_t n = 0, i, exec = 0;
	int nfunc = 0;

	CHECK_INT(sptd_dec_elf_open(SPTD_SYMFIX, &elf), 0);
	if (!elf)
		return;
	CHECK_INT(sptd_dec_elf_bits(elf), 64);
	CHECK_INT(sptd_dec_elf_little_endian(elf), 1);
	loads = sptd_dec_elf_loads(elf, &n);
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null | grep -c ' LOAD '", SPTD_SYMFIX);
	first_line(cmd, want, sizeof(want));
	CHECK_INT(n, strtol(want, NULL, 10));
	CHECK(loads != NULL);
	for (i = 0; loads && i < n; i++) {
		exec += (loads[i].flags & SPTD_DEC_ELF_PF_X) != 0;
		CHECK(loads[i].memsz >= loads[i].filesz);
	}
	CHECK_INT(exec, 1);

	CHECK_INT(sptd_dec_elf_build_id(elf, &bid), 0);
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: //p'",
	         SPTD_SYMFIX);
	first_line(cmd, want, sizeof(want));
	CHECK_STR(bid, want);
	free(bid);

	CHECK_INT(sptd_dec_elf_each_func(elf, count_func, &nfunc), 0);
	CHECK(nfunc >= 3);
	CHECK_INT(sptd_dec_elf_each_func(elf, find_main, &main_addr), 0);
	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' 2>/dev/null | sed -n 's/ T main$//p'",
	         SPTD_SYMFIX);
	first_line(cmd, want, sizeof(want));
	want_main = strtoull(want, NULL, 16);
	CHECK(want_main != 0);
	CHECK_INT(main_addr, want_main);
	/* a callback's error ends the walk and is returned */
	CHECK_INT(sptd_dec_elf_each_func(elf, stop_at_first, NULL), -ECANCELED);
	sptd_dec_elf_close(elf);
}

/* Build-ids: the handle, the path function and symfile agree. */
static void test_build_id(void)
{
	struct sptd_dec_symfile *sf = NULL;
	char hex[130], small[8];

	CHECK_INT(sptd_dec_build_id("/proc/self/exe", hex, sizeof(hex)), 0);
	CHECK_INT(strlen(hex), 40);
	CHECK_INT(sptd_dec_symfile_load_elf("/proc/self/exe", &sf), 0);
	if (sf)
		CHECK_STR(sptd_dec_symfile_build_id(sf), hex);
	sptd_dec_symfile_destroy(sf);
	CHECK_INT(sptd_dec_build_id("/proc/self/exe", small, sizeof(small)), -ENAMETOOLONG);
}

/* Issue 28: a file proven once is read through its descriptor.  The
 * inode check of sptd_dec_file_open_inode, and the fd readers giving what
 * the path readers give. */
static void test_fd_readers(void)
{
	struct sptd_dec_symfile *sf = NULL, *head = NULL;
	struct stat sb, got;
	char hex[130], hexfd[130];
	int fd;

	CHECK_INT(stat("/proc/self/exe", &sb), 0);
	fd = sptd_dec_file_open_inode("/proc/self/exe", (uint64_t)sb.st_dev, (uint64_t)sb.st_ino,
	                              &got);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(got.st_ino == sb.st_ino && got.st_dev == sb.st_dev);
	CHECK_INT(sptd_dec_build_id("/proc/self/exe", hex, sizeof(hex)), 0);
	CHECK_INT(sptd_dec_build_id_fd(fd, hexfd, sizeof(hexfd)), 0);
	CHECK_STR(hexfd, hex);
	CHECK_INT(sptd_dec_symfile_load_elf_head_fd(fd, &head), 0);
	CHECK_INT(sptd_dec_symfile_load_elf_fd_named(fd, "/proc/self/exe", &sf), 0);
	if (head && sf) {
		CHECK_STR(sptd_dec_symfile_build_id(head), hex);
		CHECK_STR(sptd_dec_symfile_build_id(sf), hex);
		CHECK_INT(sptd_dec_symfile_count(head), 0);
		CHECK(sptd_dec_symfile_count(sf) > 0);
	}
	sptd_dec_symfile_destroy(head);
	sptd_dec_symfile_destroy(sf);
	close(fd);
	/* another inode at the path: refused, not opened */
	CHECK_INT(sptd_dec_file_open_inode("/proc/self/exe", (uint64_t)sb.st_dev,
	                                   (uint64_t)sb.st_ino + 1, NULL), -ESTALE);
	CHECK_INT(sptd_dec_file_open_inode("/nonexistent/x", 0, 1, NULL), -ENOENT);
	/* invalid arguments */
	CHECK_INT(sptd_dec_file_open_inode(NULL, 0, 1, NULL), -EINVAL);
	CHECK_INT(sptd_dec_file_open_inode("", 0, 1, NULL), -EINVAL);
	CHECK_INT(sptd_dec_build_id_fd(-1, hex, sizeof(hex)), -EINVAL);
	CHECK_INT(sptd_dec_build_id_fd(0, NULL, 0), -EINVAL);
	CHECK_INT(sptd_dec_symfile_load_elf_head_fd(-1, &head), -EINVAL);
	CHECK_INT(sptd_dec_symfile_load_elf_head_fd(0, NULL), -EINVAL);
	CHECK_INT(sptd_dec_symfile_load_elf_fd_named(-1, NULL, &sf), -EINVAL);
	CHECK_INT(sptd_dec_symfile_load_elf_fd_named(0, NULL, NULL), -EINVAL);
}

/* Build-ids of 32 bytes (`ld --build-id=sha256`, mold) reach perf.data and
 * MMAP2 records as their first 20: both must name the file.  Before, a
 * file's 64 digits were cut to 40 in the incident and then refused as
 * "changed since recording" at decode. */
static void test_build_id_match(void)
{
	static const char sha[] =
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
	char dir[64], exe[PATH_MAX], cmd[PATH_MAX + 256], hex[130], head[41];

	CHECK(sptd_dec_build_id_match(sha, sha));
	snprintf(head, sizeof(head), "%.40s", sha);
	CHECK(sptd_dec_build_id_match(sha, head));
	CHECK(sptd_dec_build_id_match(head, sha));
	CHECK(sptd_dec_build_id_match("ABCDEF", "abcdef"));
	head[39] = '0';
	CHECK(!sptd_dec_build_id_match(sha, head));
	CHECK(!sptd_dec_build_id_match(sha, "000102"));     /* not perf's 20 bytes */
	CHECK(!sptd_dec_build_id_match("", ""));
	CHECK(!sptd_dec_build_id_match(NULL, sha));
	/* a real 32-byte build-id (the size of sha256's), when a compiler is
	 * here (bookworm's ld has no --build-id=sha256: given in hex) */
	snprintf(dir, sizeof(dir), "/tmp/sptd-test-sha-XXXXXX");
	if (!mkdtemp(dir))
		return;
	snprintf(exe, sizeof(exe), "%s/sha256", dir);
	snprintf(cmd, sizeof(cmd), "echo 'int main(void) { return 0; }' | cc -x c - -o '%s' "
	         "-Wl,--build-id=0x%s 2>/dev/null", exe, sha);
	if (system(cmd) == 0) {
		CHECK_INT(sptd_dec_build_id(exe, hex, sizeof(hex)), 0);
		CHECK_STR(hex, sha);
		snprintf(head, sizeof(head), "%.40s", hex);
		CHECK(sptd_dec_build_id_match(hex, head));
		unlink(exe);
	} else {
		fprintf(stderr, "note: no cc: the sha256 build-id binary was not made\n");
	}
	rmdir(dir);
}

static void test_crafted(void)
{
	char core[PATH_MAX], elf32[PATH_MAX], junk[PATH_MAX], hex[130];
	struct sptd_dec_elf *elf = NULL;
	uint64_t lo, hi;
	void *buf = NULL;
	size_t len = 0;

	if (!mkdtemp(tmpdir)) {
		CHECK(!"mkdtemp");
		return;
	}
	path_of(core, sizeof(core), "kcore");
	path_of(elf32, sizeof(elf32), "elf32");
	path_of(junk, sizeof(junk), "junk");
	CHECK_INT(write_core(core), 0);
	CHECK_INT(write_elf32(elf32), 0);
	CHECK_INT(spit(junk, "not an ELF file", 15), 0);

	/* a core file: span over all PT_LOADs (memsz), bytes by address */
	CHECK_INT(sptd_dec_elf_span(core, &lo, &hi), 0);
	CHECK_INT(lo, 0xffff0000);
	CHECK_INT(hi, 0xffff2000);
	CHECK_INT(sptd_dec_elf_read_vaddr(core, 0xffff0010, 0xffff0020, &buf, &len), 0);
	CHECK_INT(len, 16);
	if (buf && len == 16)
		CHECK_INT(((unsigned char *)buf)[0], 0x50);
	free(buf);
	buf = NULL;
	/* the end is clipped to the segment holding the start */
	CHECK_INT(sptd_dec_elf_read_vaddr(core, 0xffff1008, 0xffff9000, &buf, &len), 0);
	CHECK_INT(len, 24);
	if (buf && len == 24)
		CHECK_INT(((unsigned char *)buf)[23], 0xbf);
	free(buf);
	buf = NULL;
	/* past a segment's file bytes (bss), or in no segment */
	CHECK_INT(sptd_dec_elf_read_vaddr(core, 0xffff1020, 0xffff1030, &buf, &len), -ENOENT);
	CHECK_INT(sptd_dec_elf_read_vaddr(core, 0x1000, 0x2000, &buf, &len), -ENOENT);
	CHECK(buf == NULL && len == 0);
	CHECK_INT(sptd_dec_build_id(core, hex, sizeof(hex)), -ENODATA);

	/* 32-bit: readable, but neither a build-id file nor a core for kcore */
	CHECK_INT(sptd_dec_elf_open(elf32, &elf), 0);
	CHECK_INT(sptd_dec_elf_bits(elf), 32);
	sptd_dec_elf_close(elf);
	elf = NULL;
	CHECK_INT(sptd_dec_elf_span(elf32, &lo, &hi), 0);
	CHECK_INT(lo, 0x8048000);
	CHECK_INT(hi, 0x8048180);
	CHECK_INT(sptd_dec_build_id(elf32, hex, sizeof(hex)), -EBADMSG);
	CHECK_INT(sptd_dec_elf_read_vaddr(elf32, 0x8048000, 0x8048010, &buf, &len), -EBADMSG);

	/* not ELF, not there */
	CHECK_INT(sptd_dec_elf_open(junk, &elf), -EBADMSG);
	CHECK(elf == NULL);
	CHECK_INT(sptd_dec_elf_span(junk, &lo, &hi), -EBADMSG);
	CHECK_INT(sptd_dec_build_id(junk, hex, sizeof(hex)), -EBADMSG);
	CHECK_INT(sptd_dec_elf_read_vaddr(junk, 1, 2, &buf, &len), -EBADMSG);
	CHECK_INT(sptd_dec_elf_open("/nonexistent/x", &elf), -ENOENT);
	CHECK_INT(sptd_dec_elf_span("/nonexistent/x", &lo, &hi), -ENOENT);
	CHECK_INT(sptd_dec_build_id("/nonexistent/x", hex, sizeof(hex)), -ENOENT);
	CHECK_INT(sptd_dec_elf_read_vaddr("/nonexistent/x", 1, 2, &buf, &len), -ENOENT);

	unlink(core);
	unlink(elf32);
	unlink(junk);
	rmdir(tmpdir);
}

static void test_invalid(void)
{
	struct sptd_dec_elf *elf = NULL;
	char *bid = NULL, hex[8];
	uint64_t lo, hi;
	void *buf = NULL;
	size_t len, n = 5;

	CHECK_INT(sptd_dec_elf_open(NULL, &elf), -EINVAL);
	CHECK_INT(sptd_dec_elf_open(SPTD_SYMFIX, NULL), -EINVAL);
	CHECK_INT(sptd_dec_elf_build_id(NULL, &bid), -EINVAL);
	CHECK_INT(sptd_dec_elf_each_func(NULL, count_func, NULL), -EINVAL);
	CHECK(sptd_dec_elf_loads(NULL, &n) == NULL);
	CHECK_INT(n, 0);
	CHECK_INT(sptd_dec_elf_bits(NULL), 0);
	CHECK_INT(sptd_dec_elf_little_endian(NULL), 0);
	sptd_dec_elf_close(NULL);
	CHECK_INT(sptd_dec_build_id(NULL, hex, sizeof(hex)), -EINVAL);
	CHECK_INT(sptd_dec_build_id(SPTD_SYMFIX, NULL, sizeof(hex)), -EINVAL);
	CHECK_INT(sptd_dec_build_id(SPTD_SYMFIX, hex, 0), -EINVAL);
	CHECK_INT(sptd_dec_elf_span(NULL, &lo, &hi), -EINVAL);
	CHECK_INT(sptd_dec_elf_span(SPTD_SYMFIX, NULL, &hi), -EINVAL);
	CHECK_INT(sptd_dec_elf_read_vaddr(NULL, 1, 2, &buf, &len), -EINVAL);
	CHECK_INT(sptd_dec_elf_read_vaddr(SPTD_SYMFIX, 2, 2, &buf, &len), -EINVAL);
	CHECK_INT(sptd_dec_elf_read_vaddr(SPTD_SYMFIX, 1, 2, NULL, &len), -EINVAL);
	if (sptd_dec_elf_open(SPTD_SYMFIX, &elf) == 0) {
		CHECK_INT(sptd_dec_elf_build_id(elf, NULL), -EINVAL);
		CHECK_INT(sptd_dec_elf_each_func(elf, NULL, NULL), -EINVAL);
		sptd_dec_elf_close(elf);
	}
}

int main(void)
{
	test_handle();
	test_build_id();
	test_fd_readers();
	test_build_id_match();
	test_crafted();
	test_invalid();
	return SPTD_TEST_END();
}
