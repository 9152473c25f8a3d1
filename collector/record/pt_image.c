/* pt_image.c — code that PT decoding needs and no file holds: anonymous
 * executable mappings (JIT), the vDSO, and the kernel text as it is in
 * memory (alternatives, static keys and ftrace patch it at boot and at run
 * time, so vmlinux on disk is not what ran).
 *
 * User code comes out of /proc/PID/mem at capture time; the kernel out of
 * /proc/kcore (an ELF core file: one PT_LOAD per region of kernel memory),
 * between _stext and _etext as /proc/kallsyms names them. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "pt-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

/* Biggest single mapping copied (a JIT heap can be large; PT only needs
 * what ran, but which part ran is not known at capture). */
#define PT_IMAGE_MAX (64u << 20)

static int64_t next_dso_id(struct sptd_store *st)
{
	int64_t id = 1;

	if (sptd_store_next_id(st, SPTD_STORE_T_DSO, &id) < 0)
		id = 1;
	return id;
}

/* Copy [start, end) of @mem (an open /proc/PID/mem) into a raw_image row. */
static int copy_range(struct sptd_store *st, int mem, const char *name, uint64_t start,
                      uint64_t end)
{
	size_t len = (size_t)(end - start);
	unsigned char *buf;
	int64_t id;
	ssize_t got;
	int ret;

	if (end <= start || len > PT_IMAGE_MAX)
		return 0;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	got = pread(mem, buf, len, (off_t)start);
	if (got <= 0) {
		free(buf);
		return 0;   /* unmapped meanwhile, or not readable: nothing to keep */
	}
	id = next_dso_id(st);
	ret = sptd_store_dso_add(st, id, name, NULL);
	if (ret >= 0)
		ret = sptd_store_raw_image_add(st, id, start, buf, (size_t)got);
	free(buf);
	return ret < 0 ? ret : 1;
}

static int images_of(struct sptd_store *st, int pid)
{
	char path[64], line[PATH_MAX + 128], name[64];
	FILE *maps;
	int mem, ret = 0, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return 0;   /* exited */
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0) {
		fclose(maps);
		return 0;
	}
	while (ret >= 0 && fgets(line, sizeof(line), maps)) {
		uint64_t start, end;
		char perms[8];
		int at = 0;
		const char *what;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %n", &start, &end,
		           perms, &at) < 3 || !strchr(perms, 'x'))
			continue;
		what = at ? line + at : "";
		line[strcspn(line, "\n")] = '\0';
		if (what[0] == '\0' || strncmp(what, "[anon", 5) == 0 || strncmp(what, "//anon", 6) == 0)
			snprintf(name, sizeof(name), "[anon:%d]", pid);
		else if (strcmp(what, "[vdso]") == 0)
			snprintf(name, sizeof(name), "[vdso:%d]", pid);
		else
			continue;   /* files: symcap records them by path and build-id */
		ret = copy_range(st, mem, name, start, end);
		if (ret > 0)
			n++;
	}
	close(mem);
	fclose(maps);
	return ret < 0 ? ret : n;
}

int sptd_col_pt_images_anon(struct sptd_store *st, const int *pids, int npids)
{
	int total = 0;

	if (!st || (!pids && npids > 0) || npids < 0)
		return -EINVAL;
	for (int i = 0; i < npids; i++) {
		int ret;

		if (pids[i] <= 0)
			continue;
		ret = images_of(st, pids[i]);
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

/* The directory holding the kernel's proc/kallsyms, proc/kcore and
 * proc/modules: @root, else $SPTD_KERNEL_ROOT (tests: a fake kernel,
 * tests/fakepmu/fakepmu_kcore.h), else "" (the real /proc). */
static const char *kernel_root(const char *root)
{
	const char *env = getenv("SPTD_KERNEL_ROOT");

	if (root)
		return root;
	return env ? env : "";
}

/* _stext and _etext from kallsyms; -EACCES when addresses are hidden. */
static int kernel_text_range(const char *root, uint64_t *start, uint64_t *end)
{
	char line[512];
	FILE *f;

	snprintf(line, sizeof(line), "%s/proc/kallsyms", root);
	f = fopen(line, "re");

	*start = *end = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && (!*start || !*end)) {
		uint64_t addr;
		char type, sym[256];

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, sym) != 3)
			continue;
		if (strcmp(sym, "_stext") == 0)
			*start = addr;
		else if (strcmp(sym, "_etext") == 0)
			*end = addr;
	}
	fclose(f);
	if (!*start || !*end || *end <= *start)
		return -EACCES;
	return 0;
}

int sptd_col_pt_images_kernel(struct sptd_store *st, const char *root)
{
	char kcore[PATH_MAX];
	uint64_t start, end;
	void *buf = NULL;
	size_t len = 0;
	int ret;
	int64_t id;

	if (!st)
		return -EINVAL;
	root = kernel_root(root);
	snprintf(kcore, sizeof(kcore), "%s/proc/kcore", root);
	ret = kernel_text_range(root, &start, &end);
	if (ret < 0)
		goto note;
	/* /proc/kcore is an ELF core file: the PT_LOAD holding _stext */
	ret = sptd_dec_elf_read_vaddr(kcore, start, end, &buf, &len);
	if (ret < 0)
		goto note;
	id = next_dso_id(st);
	ret = sptd_store_dso_add(st, id, "[kernel.text]", NULL);
	if (ret >= 0)
		ret = sptd_store_raw_image_add(st, id, start, buf, len);
	free(buf);
	if (ret >= 0)
		ret = sptd_store_meta_set(st, "pt_kernel_image", "kcore");
	goto out;
note:
	/* Not fatal: the decoder will miss kernel code (or a vmlinux given at
	 * decode time may differ from what ran). */
	if (sptd_store_meta_set(st, "pt_kernel_image", "none: /proc/kcore unreadable; kernel "
	                        "code decodes from vmlinux at best, patched code may misdecode") < 0)
		ret = -EIO;
out:
	return ret;
}
