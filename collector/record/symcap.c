/* symcap.c — capture-time symbols and tasks: what /proc knows about the
 * processes an incident names, written before they can exit.
 *
 * For a process: raw_task rows (one per thread, from /proc/PID/task), the
 * executable file mappings as raw_mmap rows and their files as dso rows
 * (path + build-id, once per path).  For an address: the symbol row of the
 * function containing it, once per (dso, function).  The kernel is one dso,
 * "[kernel.kallsyms]", mapped for pid -1 over the range its text symbols
 * span, with /proc/kallsyms loaded on first use.  The vDSO is read out of
 * /proc/PID/mem so its symbols resolve too.
 *
 * Ids of dso and symbol rows continue after the largest already stored. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "record-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

/* Addresses at or above this are the kernel's (x86-64, arm64 48-bit VA). */
#define SYMCAP_KERNEL_START 0xffff800000000000ull
#define SYMCAP_KERNEL_DSO "[kernel.kallsyms]"
#define SYMCAP_VDSO "[vdso]"

/* A file (or the kernel, or a vDSO copy) with a dso row. */
struct symcap_dso {
	char *path;              /* as in /proc/PID/maps */
	int64_t id;              /* dso.id */
	struct sptd_dec_symfile *sf; /* symbols, NULL when unreadable */
};

/* One executable mapping of a snapshotted process. */
struct symcap_map {
	int pid;                 /* owner (-1: kernel) */
	uint64_t start, end;     /* [start, end) runtime addresses */
	size_t dso;              /* index into dsos */
	int64_t bias;            /* runtime = dso address + bias */
};

struct sptd_col_symcap {
	struct sptd_store *st;   /* where rows go; borrowed */
	struct symcap_dso *dsos; /* every dso row written */
	size_t ndsos, dsos_cap;  /* used / allocated */
	struct symcap_map *maps; /* every raw_mmap row written */
	size_t nmaps, maps_cap;  /* used / allocated */
	int *pids;               /* processes already snapshotted */
	size_t npids, pids_cap;  /* used / allocated */
	uint64_t *sym_keys;      /* open-addressing set of (dso, symbol addr) */
	size_t *sym_dsos;        /* dso index for each key slot */
	int64_t *sym_ids;        /* symbol id for each key slot */
	size_t sym_slots, nsyms; /* table size (power of two) / used */
	int64_t next_dso_id, next_sym_id; /* ids to hand out */
	int kernel_state;        /* 0 not tried, 1 loaded, -1 unavailable */
	size_t kernel_dso;       /* index of the kernel dso once loaded */
};

static int grow(void **arr, size_t *cap, size_t used, size_t elem)
{
	size_t ncap;
	void *n;

	if (used < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 32;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

int sptd_col_symcap_create(struct sptd_store *st, struct sptd_col_symcap **out)
{
	struct sptd_col_symcap *c;

	if (!st || !out)
		return -EINVAL;
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->st = st;
	if (sptd_store_next_id(st, SPTD_STORE_T_DSO, &c->next_dso_id) < 0)
		c->next_dso_id = 1;
	if (sptd_store_next_id(st, SPTD_STORE_T_SYMBOL, &c->next_sym_id) < 0)
		c->next_sym_id = 1;
	*out = c;
	return 0;
}

/* ---- dsos ------------------------------------------------------------------ */

/* Find or add the dso row for @path; @sf (may be NULL) is taken over. */
static int dso_add(struct sptd_col_symcap *c, const char *path,
                   struct sptd_dec_symfile *sf, size_t *idx)
{
	struct symcap_dso *d;
	int ret;

	ret = grow((void **)&c->dsos, &c->dsos_cap, c->ndsos, sizeof(*c->dsos));
	if (ret < 0)
		goto fail;
	d = &c->dsos[c->ndsos];
	d->path = strdup(path);
	if (!d->path) {
		ret = -ENOMEM;
		goto fail;
	}
	d->id = c->next_dso_id;
	d->sf = sf;
	ret = sptd_store_dso_add(c->st, d->id, path, sf ? sptd_dec_symfile_build_id(sf) : NULL);
	if (ret < 0) {
		free(d->path);
		goto fail;
	}
	c->next_dso_id++;
	*idx = c->ndsos++;
	return 0;
fail:
	sptd_dec_symfile_destroy(sf);
	return ret;
}

static int dso_find(const struct sptd_col_symcap *c, const char *path, size_t *idx)
{
	for (size_t i = 0; i < c->ndsos; i++) {
		if (strcmp(c->dsos[i].path, path) == 0) {
			*idx = i;
			return 1;
		}
	}
	return 0;
}

/* The vDSO is not a file: copy it out of the process into a memfd so that
 * the ELF reader can load it.  NULL when that fails (no symbols then). */
static struct sptd_dec_symfile *vdso_load(int pid, uint64_t start, uint64_t end)
{
	struct sptd_dec_symfile *sf = NULL;
	char path[64];
	size_t len = (size_t)(end - start);
	unsigned char *buf = NULL;
	int mem = -1, fd = -1;

	if (len == 0 || len > (1u << 20))
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	buf = malloc(len);
	if (mem < 0 || !buf || pread(mem, buf, len, (off_t)start) != (ssize_t)len)
		goto out;
	fd = memfd_create("sptd-vdso", MFD_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		goto out;
	if (sptd_dec_symfile_load_elf_fd(fd, &sf) < 0)
		sf = NULL;
out:
	if (fd >= 0)
		close(fd);
	if (mem >= 0)
		close(mem);
	free(buf);
	return sf;
}

/* ---- tasks and mappings ----------------------------------------------------- */

/* The file @pid has mapped at [@start, @end), named @path with inode @ino
 * in its maps, opened for reading.  The path is the user's to change (a
 * deleted executable, a FIFO put at its name: open() would block the
 * recorder for ever), so it is never opened as such: first
 * /proc/PID/map_files/START-END, the very file that was mapped even when
 * deleted or replaced since, so the symbols are those of the bytes that
 * ran (needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN); else the path as
 * the process sees it (/proc/PID/root/PATH, no symlink followed), accepted
 * only when it is still the mapped inode.  Both through the one safe open
 * (regular file, bounded size, O_NONBLOCK).  The fd (the caller closes
 * it), or a negative errno. */
static int open_mapping(int pid, uint64_t start, uint64_t end, const char *path,
                        uint64_t ino)
{
	char link[PATH_MAX + 64];
	struct stat sb;
	int fd;

	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	fd = sptd_dec_file_open(link, 0, NULL);
	if (fd >= 0 || fd == -ENXIO || fd == -EFBIG)
		return fd;
	if (snprintf(link, sizeof(link), "/proc/%d/root%s", pid, path) >= (int)sizeof(link))
		return -ENAMETOOLONG;
	fd = sptd_dec_file_open(link, SPTD_DEC_OPEN_NOFOLLOW, &sb);
	if (fd >= 0 && ino && (uint64_t)sb.st_ino != ino) {
		close(fd);
		return -ESTALE;   /* replaced since it was mapped: not those bytes */
	}
	return fd;
}

/* The ELF symbols of a mapping (open_mapping); NULL when they cannot be
 * read, which leaves its frames unnamed and is never an error. */
static struct sptd_dec_symfile *mapping_symbols(int pid, uint64_t start, uint64_t end,
                                                const char *path, uint64_t ino)
{
	struct sptd_dec_symfile *sf = NULL;
	int fd = open_mapping(pid, start, end, path, ino);

	if (fd < 0) {
		if (fd != -ENOENT && fd != -ESRCH)
			sptd_col_log(LOG_INFO, "symbols: %s of pid %d not read: %s", path, pid,
			             fd == -ESTALE ? "replaced since it was mapped" :
			             sptd_dec_file_strerror(fd));
		return NULL;
	}
	if (sptd_dec_symfile_load_elf_fd(fd, &sf) < 0)
		sf = NULL;
	close(fd);
	return sf;
}

static void read_text(const char *path, char *buf, size_t len, int nul_to_space)
{
	ssize_t n = sptd_col_sys.read_file(path, buf, len);

	if (n < 0) {
		buf[0] = '\0';
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0' && nul_to_space)
			buf[i] = ' ';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
}

static int snapshot_threads(struct sptd_col_symcap *c, int pid, const char *comm,
                            const char *cmdline)
{
	char path[64], tcomm[64];
	struct dirent *de;
	DIR *dir;
	int ret = 0, any = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (de = readdir(dir)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/comm", pid, tid);
		read_text(path, tcomm, sizeof(tcomm), 0);
		ret = sptd_store_raw_task_add(c->st, pid, (int)tid, tcomm[0] ? tcomm : comm,
		                              cmdline[0] ? cmdline : NULL);
		if (ret < 0)
			break;
		any = 1;
	}
	if (dir)
		closedir(dir);
	if (ret >= 0 && !any)
		ret = sptd_store_raw_task_add(c->st, pid, pid, comm, cmdline[0] ? cmdline : NULL);
	return ret < 0 ? ret : 0;
}

/* One line of /proc/PID/maps; executable file mappings and the vDSO
 * become raw_mmap rows. */
static int snapshot_map_line(struct sptd_col_symcap *c, int pid, char *line)
{
	uint64_t start, end, pgoff, ino = 0;
	char perms[8], *path, *deleted;
	int name_at = 0, ret;
	struct sptd_dec_symfile *sf = NULL;
	int64_t bias;
	size_t idx;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %" SCNu64 " %n",
	           &start, &end, perms, &pgoff, &ino, &name_at) < 5 || name_at == 0)
		return 0;
	path = line + name_at;
	path[strcspn(path, "\n")] = '\0';
	if (strchr(perms, 'x') == NULL || (path[0] != '/' && strcmp(path, SYMCAP_VDSO) != 0))
		return 0;
	deleted = strstr(path, " (deleted)");
	if (deleted && deleted[10] == '\0')
		*deleted = '\0';

	if (!dso_find(c, path, &idx)) {
		if (strcmp(path, SYMCAP_VDSO) == 0)
			sf = vdso_load(pid, start, end);
		else
			sf = mapping_symbols(pid, start, end, path, ino);
		ret = dso_add(c, path, sf, &idx);
		if (ret < 0)
			return ret;
	}
	/* Without program headers, assume the file is mapped as laid out. */
	if (!c->dsos[idx].sf ||
	    sptd_dec_symfile_bias(c->dsos[idx].sf, start, pgoff, &bias) < 0)
		bias = (int64_t)(start - pgoff);
	ret = grow((void **)&c->maps, &c->maps_cap, c->nmaps, sizeof(*c->maps));
	if (ret < 0)
		return ret;
	ret = sptd_store_raw_mmap_add(c->st, pid, start, end, pgoff, c->dsos[idx].id, bias);
	if (ret < 0)
		return ret;
	c->maps[c->nmaps++] = (struct symcap_map){
		.pid = pid, .start = start, .end = end, .dso = idx, .bias = bias,
	};
	return 0;
}

int sptd_col_symcap_task(struct sptd_col_symcap *c, int pid)
{
	char path[64], comm[64], cmdline[4096], line[PATH_MAX + 128];
	FILE *maps;
	int ret;

	if (!c || pid <= 0)
		return -EINVAL;
	for (size_t i = 0; i < c->npids; i++)
		if (c->pids[i] == pid)
			return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return -errno;
	ret = grow((void **)&c->pids, &c->pids_cap, c->npids, sizeof(*c->pids));
	if (ret < 0)
		goto out;
	c->pids[c->npids++] = pid;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	read_text(path, comm, sizeof(comm), 0);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	read_text(path, cmdline, sizeof(cmdline), 1);
	ret = snapshot_threads(c, pid, comm, cmdline);
	while (ret >= 0 && fgets(line, sizeof(line), maps))
		ret = snapshot_map_line(c, pid, line);
out:
	fclose(maps);
	return ret < 0 ? ret : 0;
}

/* ---- the kernel -------------------------------------------------------------- */

/* The kernel: one dso and one pid -1 mapping over the whole kernel half of
 * the address space (modules included), bias 0 since kallsyms addresses are
 * runtime addresses.  Without kallsyms the dso still exists, unnamed. */
static int kernel_load(struct sptd_col_symcap *c)
{
	struct sptd_dec_symfile *sf = NULL;
	size_t idx;
	int ret;

	if (c->kernel_state)
		return c->kernel_state > 0 ? 0 : -ENOENT;
	c->kernel_state = -1;
	ret = sptd_dec_symfile_load_kallsyms("/proc/kallsyms", &sf);
	if (ret < 0) {
		sptd_col_log(LOG_WARNING, "symbols: /proc/kallsyms unreadable (%s): kernel "
		             "frames stay unnamed; run as root with kernel.kptr_restrict < 2",
		             strerror(-ret));
		sf = NULL;
	}
	ret = dso_add(c, SYMCAP_KERNEL_DSO, sf, &idx);
	if (ret < 0)
		return ret;
	ret = grow((void **)&c->maps, &c->maps_cap, c->nmaps, sizeof(*c->maps));
	if (ret < 0)
		return ret;
	ret = sptd_store_raw_mmap_add(c->st, -1, SYMCAP_KERNEL_START, UINT64_MAX, 0,
	                              c->dsos[idx].id, 0);
	if (ret < 0)
		return ret;
	c->maps[c->nmaps++] = (struct symcap_map){
		.pid = -1, .start = SYMCAP_KERNEL_START, .end = UINT64_MAX, .dso = idx,
		.bias = 0,
	};
	c->kernel_dso = idx;
	c->kernel_state = 1;
	return 0;
}

/* ---- symbols ------------------------------------------------------------------ */

static uint64_t sym_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return key;
}

/* Slot of @key in the set: where it is, or the empty slot it would take. */
static size_t sym_slot(const struct sptd_col_symcap *c, size_t dso, uint64_t addr)
{
	size_t mask = c->sym_slots - 1;
	size_t i = (size_t)sym_hash(addr ^ ((uint64_t)dso * 0x9e3779b97f4a7c15ull)) & mask;

	while (c->sym_ids[i] != 0 && (c->sym_keys[i] != addr || c->sym_dsos[i] != dso))
		i = (i + 1) & mask;
	return i;
}

static int sym_set_grow(struct sptd_col_symcap *c)
{
	size_t old_slots = c->sym_slots, slots = old_slots ? old_slots * 2 : 1024;
	uint64_t *old_keys = c->sym_keys;
	size_t *old_dsos = c->sym_dsos;
	int64_t *old_ids = c->sym_ids;

	c->sym_keys = calloc(slots, sizeof(*c->sym_keys));
	c->sym_dsos = calloc(slots, sizeof(*c->sym_dsos));
	c->sym_ids = calloc(slots, sizeof(*c->sym_ids));
	if (!c->sym_keys || !c->sym_dsos || !c->sym_ids) {
		free(c->sym_keys);
		free(c->sym_dsos);
		free(c->sym_ids);
		c->sym_keys = old_keys;
		c->sym_dsos = old_dsos;
		c->sym_ids = old_ids;
		return -ENOMEM;
	}
	c->sym_slots = slots;
	for (size_t i = 0; i < old_slots; i++) {
		if (old_ids[i]) {
			size_t j = sym_slot(c, old_dsos[i], old_keys[i]);

			c->sym_keys[j] = old_keys[i];
			c->sym_dsos[j] = old_dsos[i];
			c->sym_ids[j] = old_ids[i];
		}
	}
	free(old_keys);
	free(old_dsos);
	free(old_ids);
	return 0;
}

static const struct symcap_map *map_find(const struct sptd_col_symcap *c, int pid,
                                         uint64_t addr)
{
	for (size_t i = 0; i < c->nmaps; i++)
		if (c->maps[i].pid == pid && addr >= c->maps[i].start && addr < c->maps[i].end)
			return &c->maps[i];
	return NULL;
}

int sptd_col_symcap_addr(struct sptd_col_symcap *c, int pid, uint64_t addr)
{
	const struct symcap_map *m;
	const struct symcap_dso *d;
	struct sptd_dec_sym sym;
	size_t slot;
	int ret;

	if (!c)
		return -EINVAL;
	if (pid < 0 || addr >= SYMCAP_KERNEL_START) {
		pid = -1;
		if (kernel_load(c) < 0)
			return 0;
	} else if (pid > 0 && !map_find(c, pid, addr)) {
		/* not snapshotted yet (or gone): try once, now */
		ret = sptd_col_symcap_task(c, pid);
		if (ret < 0 && ret != -ENOENT && ret != -ESRCH && ret != -EACCES)
			return ret;
	}
	m = map_find(c, pid, addr);
	if (!m)
		return 0;
	d = &c->dsos[m->dso];
	if (!d->sf || sptd_dec_symfile_lookup(d->sf, addr - (uint64_t)m->bias, &sym) < 0)
		return 0;
	if (c->nsyms * 2 >= c->sym_slots) {
		ret = sym_set_grow(c);
		if (ret < 0)
			return ret;
	}
	slot = sym_slot(c, m->dso, sym.addr);
	if (c->sym_ids[slot])
		return 1;
	ret = sptd_store_symbol_add(c->st, c->next_sym_id, sym.name, d->id, sym.addr,
	                            sym.size);
	if (ret < 0)
		return ret;
	c->sym_keys[slot] = sym.addr;
	c->sym_dsos[slot] = m->dso;
	c->sym_ids[slot] = c->next_sym_id++;
	c->nsyms++;
	return 1;
}

int sptd_col_symcap_finish(struct sptd_col_symcap *c)
{
	/* Rows are written as they are found; nothing is held back. */
	return c ? 0 : -EINVAL;
}

void sptd_col_symcap_destroy(struct sptd_col_symcap *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ndsos; i++) {
		free(c->dsos[i].path);
		sptd_dec_symfile_destroy(c->dsos[i].sf);
	}
	free(c->dsos);
	free(c->maps);
	free(c->pids);
	free(c->sym_keys);
	free(c->sym_dsos);
	free(c->sym_ids);
	free(c);
}
