/* symcap.c — capture-time symbols and tasks: what /proc knows about the
 * processes an incident names, written before they can exit.
 *
 * For a process: raw_task rows (one per thread, from /proc/PID/task), the
 * executable file mappings as raw_mmap rows and their files as dso rows
 * (path + build-id, once per file).  For an address: the symbol row of the
 * function containing it, once per (dso, function).  The kernel is one dso,
 * "[kernel.kallsyms]", mapped for pid -1 over the whole kernel half of the
 * address space.  The vDSO is read out of /proc/PID/mem so its symbols
 * resolve too.  Symbol tables come from the symbol cache (symcache.c):
 * a file's are read only when an address of the incident falls in it, and
 * kept for later incidents.
 *
 * Ids of dso and symbol rows continue after the largest already stored. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>

#include "record-local.h"
#include "sptd_col_base.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "symcache-local.h"

/* Addresses at or above this are the kernel's (x86-64, arm64 48-bit VA). */
#define SYMCAP_KERNEL_START 0xffff800000000000ull
#define SYMCAP_KERNEL_DSO "[kernel.kallsyms]"
#define SYMCAP_VDSO "[vdso]"

/* A file (or the kernel, or a vDSO) with a dso row in this incident. */
struct symcap_dso {
	char *path;              /* as in /proc/PID/maps */
	int64_t id;              /* dso.id */
	struct sptd_col_symcache_file *file; /* the cached file; NULL kernel, vDSO, unreadable */
	const struct sptd_dec_symfile *sf; /* symbols: the kernel's or vDSO's at once, a
	                          * file's once an address needs them; NULL none */
	int syms_tried;          /* a file's symbols were asked for */
};

/* One executable mapping of a snapshotted process. */
struct symcap_map {
	uint64_t start, end;     /* [start, end) runtime addresses */
	uint64_t pgoff;          /* file offset of @start */
	size_t dso;              /* index into dsos */
	int64_t bias;            /* runtime = dso address + bias */
	uint64_t dev, ino;       /* the file as /proc or the record named it; 0 unknown */
	int64_t until;           /* in force before this time (ns); 0: to the end */
};

/* A snapshotted process and its mappings (contiguous in maps[], by start). */
struct symcap_proc {
	int pid;                 /* the process */
	size_t first, count;     /* its range of maps[] */
	int timed;               /* some mapping has an end time: they may
	                          * overlap, and the time of an address counts */
};

struct sptd_col_symcap {
	struct sptd_store *st;   /* where rows go; borrowed */
	struct sptd_col_symcache *cache; /* symbol tables; borrowed unless owned */
	int owns_cache;          /* created here (no cache given): destroyed here */
	struct symcap_dso *dsos; /* every dso row written */
	size_t ndsos, dsos_cap;  /* used / allocated */
	struct symcap_map *maps; /* every user raw_mmap row written */
	size_t nmaps, maps_cap;  /* used / allocated */
	struct symcap_proc *procs; /* processes already snapshotted */
	size_t nprocs, procs_cap; /* used / allocated */
	size_t last_proc;        /* procs[] index of the last lookup (samples come in runs) */
	uint64_t *sym_keys;      /* open-addressing set of (dso, symbol addr) */
	size_t *sym_dsos;        /* dso index for each key slot */
	int64_t *sym_ids;        /* symbol id for each key slot */
	size_t sym_slots, nsyms; /* table size (power of two) / used */
	int64_t next_dso_id, next_sym_id; /* ids to hand out */
	int kernel_state;        /* 0 not tried, 1 mapped, -1 unavailable */
	size_t kernel_dso;       /* index of the kernel dso once mapped */
};

int sptd_col_symcap_create(struct sptd_store *st, struct sptd_col_symcache *cache,
                           struct sptd_col_symcap **out)
{
	struct sptd_col_symcap *c;
	int ret;

	if (!st || !out)
		return -EINVAL;
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->st = st;
	c->cache = cache;
	if (!cache) {
		ret = sptd_col_symcache_create(0, &c->cache);
		if (ret < 0) {
			free(c);
			return ret;
		}
		c->owns_cache = 1;
	}
	sptd_col_symcache_begin(c->cache);
	if (sptd_store_next_id(st, SPTD_STORE_T_DSO, &c->next_dso_id) < 0)
		c->next_dso_id = 1;
	if (sptd_store_next_id(st, SPTD_STORE_T_SYMBOL, &c->next_sym_id) < 0)
		c->next_sym_id = 1;
	*out = c;
	return 0;
}

/* ---- dsos ------------------------------------------------------------------ */

/* Add the dso row for @path: the cached @file (may be NULL) or the kernel's
 * or a vDSO's table @sf (may be NULL). */
static int dso_add(struct sptd_col_symcap *c, const char *path,
                   struct sptd_col_symcache_file *file, const struct sptd_dec_symfile *sf,
                   size_t *idx)
{
	const struct sptd_dec_symfile *head = file ? sptd_col_symcache_file_head(file) : sf;
	struct symcap_dso *d;
	int ret;

	ret = sptd_col_grow((void **)&c->dsos, &c->dsos_cap, c->ndsos, sizeof(*c->dsos));
	if (ret < 0)
		return ret;
	d = &c->dsos[c->ndsos];
	memset(d, 0, sizeof(*d));
	d->path = strdup(path);
	if (!d->path)
		return -ENOMEM;
	d->id = c->next_dso_id;
	d->file = file;
	d->sf = sf;
	ret = SPTD_STORE_ADD(c->st, dso, d->id, path, head ? sptd_dec_symfile_build_id(head) : NULL);
	/* a vDSO is no file anyone can read later: its image goes into the
	 * incident (raw_file), so `sysptd decode` unwinds through it again */
	if (ret >= 0 && !file && sf && strcmp(path, SYMCAP_VDSO) == 0) {
		const unsigned char *bytes;
		size_t len;

		if (sptd_col_symcache_vdso_image(c->cache, sf, &bytes, &len) == 0)
			ret = sptd_store_raw_file_add(c->st, d->id, sptd_dec_symfile_build_id(sf),
			                              bytes, len);
	}
	if (ret < 0) {
		free(d->path);
		return ret;
	}
	c->next_dso_id++;
	*idx = c->ndsos++;
	return 0;
}

/* The dso row of this file (same cache entry, or for what has none — an
 * unreadable file, a vDSO — the same path and table). */
static int dso_find(const struct sptd_col_symcap *c, const char *path,
                    const struct sptd_col_symcache_file *file,
                    const struct sptd_dec_symfile *sf, size_t *idx)
{
	for (size_t i = 0; i < c->ndsos; i++) {
		const struct symcap_dso *d = &c->dsos[i];

		if (file ? d->file == file
		         : !d->file && d->sf == sf && strcmp(d->path, path) == 0) {
			*idx = i;
			return 1;
		}
	}
	return 0;
}

/* The symbols of dso @idx: read on first use (a file's), NULL none. */
static const struct sptd_dec_symfile *dso_syms(struct sptd_col_symcap *c, size_t idx)
{
	struct symcap_dso *d = &c->dsos[idx];

	if (d->file && !d->syms_tried) {
		d->syms_tried = 1;
		d->sf = sptd_col_symcache_file_syms(c->cache, d->file);
	}
	return d->sf;
}

/* ---- tasks and mappings ----------------------------------------------------- */

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
		ret = SPTD_STORE_ADD(c->st, raw_task, pid, (int)tid, tcomm[0] ? tcomm : comm,
		                     cmdline[0] ? cmdline : NULL);
		if (ret < 0)
			break;
		any = 1;
	}
	if (dir)
		closedir(dir);
	if (ret >= 0 && !any)
		ret = SPTD_STORE_ADD(c->st, raw_task, pid, pid, comm, cmdline[0] ? cmdline : NULL);
	return ret < 0 ? ret : 0;
}

static int map_add(struct sptd_col_symcap *c, int pid, const struct sptd_col_symcap_mapping *m,
                   struct sptd_col_symcache_file *file, const struct sptd_dec_symfile *sf);

/* One line of /proc/PID/maps; executable file mappings and the vDSO
 * become raw_mmap rows (their symbols are read only when an address of the
 * incident falls in them). */
static int snapshot_map_line(struct sptd_col_symcap *c, int pid, char *line)
{
	struct sptd_col_symcap_mapping m = { .path = NULL };
	uint64_t start, end, pgoff, ino;
	unsigned int dev_major, dev_minor;
	char perms[8], *path, *deleted;
	int name_at = 0, ret;
	struct sptd_col_symcache_file *file = NULL;
	const struct sptd_dec_symfile *sf = NULL;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
	           &start, &end, perms, &pgoff, &dev_major, &dev_minor, &ino, &name_at) < 7 ||
	    name_at == 0)
		return 0;
	path = line + name_at;
	path[strcspn(path, "\n")] = '\0';
	if (strchr(perms, 'x') == NULL || (path[0] != '/' && strcmp(path, SYMCAP_VDSO) != 0))
		return 0;
	deleted = strstr(path, " (deleted)");
	if (deleted && deleted[10] == '\0')
		*deleted = '\0';

	if (strcmp(path, SYMCAP_VDSO) == 0) {
		sf = sptd_col_symcache_vdso(c->cache, pid, start, end);
	} else {
		ret = sptd_col_symcache_file(c->cache, pid, start, end, path,
		                             makedev(dev_major, dev_minor), ino, &file);
		if (ret == -ENOMEM)
			return ret;
	}
	m = (struct sptd_col_symcap_mapping){
		.start = start, .end = end, .pgoff = pgoff, .path = path,
		.dev = (uint64_t)makedev(dev_major, dev_minor), .ino = sf ? 0 : ino,
	};
	return map_add(c, pid, &m, file, sf);
}

/* The raw_mmap row (and the dso row when new) of one executable mapping
 * @m: @file cached (or NULL), or a vDSO's table @sf (or NULL). */
static int map_add(struct sptd_col_symcap *c, int pid, const struct sptd_col_symcap_mapping *m,
                   struct sptd_col_symcache_file *file, const struct sptd_dec_symfile *sf)
{
	const char *path = m->path;
	uint64_t start = m->start, end = m->end, pgoff = m->pgoff;
	const struct sptd_dec_symfile *head;
	int64_t bias;
	size_t idx;
	int ret;

	if (!dso_find(c, path, file, sf, &idx)) {
		ret = dso_add(c, path, file, sf, &idx);
		if (ret < 0)
			return ret;
	}
	/* Without program headers, assume the file is mapped as laid out. */
	head = file ? sptd_col_symcache_file_head(file) : sf;
	if (!head || sptd_dec_symfile_bias(head, start, pgoff, &bias) < 0)
		bias = (int64_t)(start - pgoff);
	ret = sptd_col_grow((void **)&c->maps, &c->maps_cap, c->nmaps, sizeof(*c->maps));
	if (ret < 0)
		return ret;
	ret = SPTD_STORE_ADD(c->st, raw_mmap, pid, start, end, pgoff, c->dsos[idx].id, bias,
	                     m->until);
	if (ret < 0)
		return ret;
	c->maps[c->nmaps++] = (struct symcap_map){
		.start = start, .end = end, .pgoff = pgoff, .dso = idx, .bias = bias,
		.dev = m->dev, .ino = m->ino, .until = m->until,
	};
	return 0;
}

/* The snapshot of @pid, NULL when it was never taken. */
static struct symcap_proc *proc_find(struct sptd_col_symcap *c, int pid)
{
	if (c->last_proc < c->nprocs && c->procs[c->last_proc].pid == pid)
		return &c->procs[c->last_proc];
	for (size_t i = 0; i < c->nprocs; i++) {
		if (c->procs[i].pid == pid) {
			c->last_proc = i;
			return &c->procs[i];
		}
	}
	return NULL;
}

int sptd_col_symcap_task(struct sptd_col_symcap *c, int pid)
{
	char path[64], comm[64], cmdline[4096], line[PATH_MAX + 128];
	struct symcap_proc *p;
	FILE *maps;
	int ret;

	if (!c || pid <= 0)
		return -EINVAL;
	if (proc_find(c, pid))
		return 0;
	ret = sptd_col_grow((void **)&c->procs, &c->procs_cap, c->nprocs, sizeof(*c->procs));
	if (ret < 0)
		return ret;
	/* tried once: a process that is gone is not asked again */
	p = &c->procs[c->nprocs++];
	*p = (struct symcap_proc){ .pid = pid, .first = c->nmaps };
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return -errno;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	read_text(path, comm, sizeof(comm), 0);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	read_text(path, cmdline, sizeof(cmdline), 1);
	ret = snapshot_threads(c, pid, comm, cmdline);
	while (ret >= 0 && fgets(line, sizeof(line), maps))
		ret = snapshot_map_line(c, pid, line);
	fclose(maps);
	/* maps[] may have moved; this process's rows are the last ones */
	c->procs[c->nprocs - 1].count = c->nmaps - c->procs[c->nprocs - 1].first;
	return ret < 0 ? ret : 0;
}

/* The vDSO of a process that is gone: the kernel maps one image into every
 * process of an ABI, so this service's own, when it is as long as the
 * recorded mapping (a 32-bit process's is another); NULL otherwise. */
static const struct sptd_dec_symfile *own_vdso(struct sptd_col_symcap *c, uint64_t len)
{
	char line[512], name[64];
	uint64_t start, end;
	FILE *f = fopen("/proc/self/maps", "re");
	const struct sptd_dec_symfile *sf = NULL;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %*s %*s %63s", &start, &end,
		           name) == 3 && strcmp(name, SYMCAP_VDSO) == 0) {
			if (end - start == len)
				sf = sptd_col_symcache_vdso(c->cache, getpid(), start, end);
			break;
		}
	if (f)
		fclose(f);
	return sf;
}

int sptd_col_symcap_task_recorded(struct sptd_col_symcap *c, int pid,
                                  const struct sptd_col_symcap_mapping *maps, size_t n)
{
	struct symcap_proc *p;
	size_t i, added = 0;
	int ret = 0;

	int timed = 0;

	if (!c || pid <= 0 || (!maps && n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!maps[i].path || maps[i].end <= maps[i].start || maps[i].until < 0)
			return -EINVAL;
		timed |= maps[i].until != 0;
	}
	/* in force together: sorted and apart */
	for (i = 1; i < n && !timed; i++)
		if (maps[i].start < maps[i - 1].end)
			return -EINVAL;
	p = proc_find(c, pid);
	if (p && p->count)
		return -EEXIST;
	if (!p) {
		ret = sptd_col_grow((void **)&c->procs, &c->procs_cap, c->nprocs, sizeof(*c->procs));
		if (ret < 0)
			return ret;
		c->procs[c->nprocs++] = (struct symcap_proc){ .pid = pid };
	}
	/* this process's rows are appended: its range starts at the end */
	p = proc_find(c, pid);
	p->first = c->nmaps;
	p->timed = timed;
	for (i = 0; i < n && ret >= 0; i++) {
		const struct sptd_col_symcap_mapping *m = &maps[i];
		struct sptd_col_symcache_file *file = NULL;

		const struct sptd_dec_symfile *sf = NULL;

		if (strcmp(m->path, SYMCAP_VDSO) == 0)
			sf = own_vdso(c, m->end - m->start);
		else
			ret = sptd_col_symcache_file_recorded(c->cache, m->path, m->dev, m->ino,
			                                      m->generation, m->build_id, &file);
		/* gone or replaced: the mapping stays, without symbols */
		if (ret == -ENOENT || ret == -ESTALE)
			ret = 0;
		if (ret >= 0)
			ret = map_add(c, pid, m, file, sf);
		if (ret >= 0)
			added++;
	}
	p->count = c->nmaps - p->first;   /* map_add leaves procs[] alone */
	return ret < 0 ? ret : (int)added;
}

/* The snapshot of @pid in *@p, taken now when it was not yet (tried once:
 * NULL when the process is gone).  0, or an error other than the
 * process's being gone. */
static int proc_snapshot(struct sptd_col_symcap *c, int pid, const struct symcap_proc **p)
{
	int ret;

	*p = proc_find(c, pid);
	if (*p)
		return 0;
	ret = sptd_col_symcap_task(c, pid);
	if (ret < 0 && ret != -ENOENT && ret != -ESRCH && ret != -EACCES)
		return ret;
	*p = proc_find(c, pid);
	return 0;
}

int sptd_col_symcap_task_mappings(struct sptd_col_symcap *c, int pid,
                                  int (*fn)(void *ctx, const struct sptd_col_symcap_mapping *m),
                                  void *ctx)
{
	const struct symcap_proc *p;
	int ret = 0;

	if (!c || pid <= 0 || !fn)
		return -EINVAL;
	ret = proc_snapshot(c, pid, &p);
	if (ret < 0)
		return ret;
	if (!p || !p->count || p->timed)
		return -ENOENT;
	for (size_t i = 0; i < p->count && ret >= 0; i++) {
		const struct symcap_map *m = &c->maps[p->first + i];
		struct sptd_col_symcap_mapping out = {
			.start = m->start, .end = m->end, .pgoff = m->pgoff,
			.path = c->dsos[m->dso].path, .dev = m->dev, .ino = m->ino,
		};

		ret = fn(ctx, &out);
	}
	return ret < 0 ? ret : (int)p->count;
}

/* ---- the kernel -------------------------------------------------------------- */

/* The kernel: one dso over the whole kernel half of the address space
 * (modules included), a pid -1 raw_mmap row with bias 0 since kallsyms
 * addresses are runtime addresses.  Without kallsyms the dso still
 * exists, unnamed. */
static int kernel_map(struct sptd_col_symcap *c)
{
	size_t idx;
	int ret;

	if (c->kernel_state)
		return c->kernel_state > 0 ? 0 : -ENOENT;
	c->kernel_state = -1;
	ret = dso_add(c, SYMCAP_KERNEL_DSO, NULL, sptd_col_symcache_kernel(c->cache), &idx);
	if (ret < 0)
		return ret;
	ret = SPTD_STORE_ADD(c->st, raw_mmap, -1, SYMCAP_KERNEL_START, UINT64_MAX, 0,
	                     c->dsos[idx].id, 0, 0);
	if (ret < 0)
		return ret;
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

/* The mapping of @p containing @addr at @ts, NULL none.  Of a process
 * whose mappings have end times, the one in force then: of those holding
 * @addr and not ended by @ts, the one that ended first. */
static const struct symcap_map *map_find(const struct sptd_col_symcap *c,
                                         const struct symcap_proc *p, uint64_t addr, int64_t ts)
{
	size_t lo = 0, hi = p->count;

	if (p->timed) {
		const struct symcap_map *best = NULL;

		for (size_t i = 0; i < p->count; i++) {
			const struct symcap_map *m = &c->maps[p->first + i];
			uint64_t until = m->until ? (uint64_t)m->until : UINT64_MAX;

			if (addr >= m->start && addr < m->end && until > (uint64_t)ts &&
			    (!best || until < (best->until ? (uint64_t)best->until : UINT64_MAX)))
				best = m;
		}
		return best;
	}

	/* first mapping starting above addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->maps[p->first + mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && addr < c->maps[p->first + lo - 1].end)
		return &c->maps[p->first + lo - 1];
	return NULL;
}

int sptd_col_symcap_addr(struct sptd_col_symcap *c, int pid, uint64_t addr, int64_t ts)
{
	const struct symcap_map *m;
	const struct sptd_dec_symfile *sf;
	struct sptd_dec_sym sym;
	const struct symcap_proc *p;
	size_t slot, dso;
	uint64_t file_addr;
	int ret;

	if (!c)
		return -EINVAL;
	if (pid < 0 || addr >= SYMCAP_KERNEL_START) {
		ret = kernel_map(c);
		if (ret < 0)
			return ret == -ENOENT ? 0 : ret;
		dso = c->kernel_dso;
		file_addr = addr;
	} else {
		if (pid == 0)
			return 0;   /* the idle task maps nothing */
		ret = proc_snapshot(c, pid, &p);
		if (ret < 0)
			return ret;
		m = p ? map_find(c, p, addr, ts) : NULL;
		if (!m)
			return 0;
		dso = m->dso;
		file_addr = addr - (uint64_t)m->bias;
	}
	sf = dso_syms(c, dso);
	if (!sf || sptd_dec_symfile_lookup(sf, file_addr, &sym) < 0)
		return 0;
	if (c->nsyms * 2 >= c->sym_slots) {
		ret = sym_set_grow(c);
		if (ret < 0)
			return ret;
	}
	slot = sym_slot(c, dso, sym.addr);
	if (c->sym_ids[slot])
		return 1;
	ret = SPTD_STORE_ADD(c->st, symbol, c->next_sym_id, sym.name, c->dsos[dso].id, sym.addr,
	                     sym.size);
	if (ret < 0)
		return ret;
	c->sym_keys[slot] = sym.addr;
	c->sym_dsos[slot] = dso;
	c->sym_ids[slot] = c->next_sym_id++;
	c->nsyms++;
	return 1;
}

/* The unwinder's file for a vDSO mapping @m: its image (as read for its
 * symbols) in a memfd; -ENOENT for what is no vDSO or was unreadable. */
static int vdso_fd(const struct sptd_col_symcap *c, const struct symcap_map *m,
                   struct sptd_dec_unwind_map *out)
{
	const struct symcap_dso *d = &c->dsos[m->dso];
	const unsigned char *bytes;
	size_t len;
	int fd;

	if (d->file || !d->sf || strcmp(d->path, SYMCAP_VDSO) != 0 ||
	    sptd_col_symcache_vdso_image(c->cache, d->sf, &bytes, &len) < 0)
		return -ENOENT;
	fd = memfd_create("sptd-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (write(fd, bytes, len) != (ssize_t)len) {
		close(fd);
		return -ENOENT;
	}
	out->fd = fd;
	return 0;
}

int sptd_col_symcap_unwind_map(struct sptd_col_symcap *c, int pid, uint64_t addr,
                               struct sptd_dec_unwind_map *out)
{
	const struct symcap_map *m;
	struct symcap_proc *p;
	struct stat sb;
	int named;

	if (!c || !out)
		return -EINVAL;
	p = pid > 0 ? proc_find(c, pid) : NULL;
	/* the unwinder runs on live processes: their mappings now */
	m = p ? map_find(c, p, addr, INT64_MAX) : NULL;
	if (!m)
		return -ENOENT;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->name = c->dsos[m->dso].path;
	out->fd = -1;
	if (!m->ino)
		return vdso_fd(c, m, out);
	out->fd = sptd_col_symcache_locate(pid, m->start, m->end, c->dsos[m->dso].path, m->dev,
	                                   m->ino, &sb, &named);
	return out->fd < 0 ? -ENOENT : 0;
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
	for (size_t i = 0; i < c->ndsos; i++)
		free(c->dsos[i].path);
	free(c->dsos);
	free(c->maps);
	free(c->procs);
	free(c->sym_keys);
	free(c->sym_dsos);
	free(c->sym_ids);
	if (c->owns_cache) {
		sptd_col_symcache_end(c->cache);
		sptd_col_symcache_destroy(c->cache);
	}
	free(c);
}
