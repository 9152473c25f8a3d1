/* sample_exited.c — the sampling source's sideband at capture: stored as
 * the PT sideband is (raw_sideband rows, raw_task rows from COMM records,
 * through pt_sideband.c), and the file mappings of sampled processes that
 * were gone before the capture could read /proc/PID/maps rebuilt from its
 * MMAP2 records, so their samples are named as a live process's are.
 *
 * A process's mappings are its MMAP2 records in time order (the rings of
 * several CPUs interleave): an exec (COMM with COMM_EXEC) drops the ones
 * before it, and a mapping drops the older ones it overlaps, as the
 * kernel's own munmap-on-overlap does.  The files are then read only while
 * they are still the files recorded (symcache.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "pt-local.h"
#include "record-local.h"
#include "sptd_store.h"

/* ---- capture: the rings into the store ---------------------------------------- */

static int on_cpu_sideband(void *arg, int cpu, const void *buf, size_t len)
{
	/* sampler rings are on CLOCK_MONOTONIC: no perf clock offset */
	return sptd_col_pt_sideband_store(arg, cpu, 0, buf, len,
	                                  sptd_col_pt_sideband_sample_type(), 0);
}

int sptd_col_sample_sideband_store(struct sptd_col_sampler *s, struct sptd_store *st)
{
	if (!s || !st)
		return -EINVAL;
	return sptd_col_sampler_sideband(s, on_cpu_sideband, st);
}

/* ---- exited processes: their mappings from the stored records ------------------ */

/* One MMAP2 or exec record of a wanted process. */
struct exited_rec {
	uint64_t time;           /* ns, the record's sample_id time */
	size_t seq;              /* order read: breaks ties of @time */
	int pid;                 /* the process (tgid) */
	int exec;                /* 1: an exec (drops the mappings before it) */
	struct sptd_col_symcap_mapping map; /* MMAP2: the mapping (strings owned) */
};

struct exited_ctx {
	const int *pids;         /* processes wanted */
	int npids;               /* count of @pids */
	struct exited_rec *recs; /* their records, any order */
	size_t nrecs, cap;       /* used / allocated */
};

static int exited_wanted(const struct exited_ctx *c, int pid)
{
	for (int i = 0; i < c->npids; i++)
		if (c->pids[i] == pid)
			return 1;
	return 0;
}

static void rec_free(struct exited_rec *r)
{
	free((char *)r->map.path);
	free((char *)r->map.build_id);
}

static int on_exited_record(void *arg, const struct sptd_col_perf_record *r)
{
	struct exited_ctx *c = arg;
	struct exited_rec *e;
	int exec = r->type == SPTD_PERF_RECORD_COMM && (r->misc & SPTD_PERF_MISC_COMM_EXEC);

	/* files, and the vDSO (named from the service's own: one kernel's) */
	if (!exec && (r->type != SPTD_PERF_RECORD_MMAP2 || !r->name ||
	              (r->name[0] != '/' && strcmp(r->name, "[vdso]") != 0) ||
	              !(r->prot & PROT_EXEC) || r->len == 0 || r->addr + r->len < r->addr))
		return 0;
	if (r->pid <= 0 || !exited_wanted(c, r->pid))
		return 0;
	if (c->nrecs == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *more = realloc(c->recs, cap * sizeof(*c->recs));

		if (!more)
			return -ENOMEM;
		c->recs = more;
		c->cap = cap;
	}
	e = &c->recs[c->nrecs];
	memset(e, 0, sizeof(*e));
	e->time = r->id.time;
	e->seq = c->nrecs;
	e->pid = r->pid;
	e->exec = exec;
	if (!exec) {
		char hex[2 * sizeof(r->build_id) + 1];

		e->map.start = r->addr;
		e->map.end = r->addr + r->len;
		e->map.pgoff = r->pgoff;
		e->map.path = strdup(r->name);
		if (r->misc & SPTD_PERF_MISC_MMAP_BUILD_ID) {
			for (unsigned int i = 0; i < r->build_id_size; i++)
				snprintf(hex + 2 * i, 3, "%02x", r->build_id[i]);
			hex[2 * r->build_id_size] = '\0';
			if (r->build_id_size)
				e->map.build_id = strdup(hex);
		} else {
			e->map.dev = (uint64_t)makedev(r->maj, r->min);
			e->map.ino = r->ino;
			e->map.generation = r->ino_generation;
		}
		if (!e->map.path || (r->build_id_size && (r->misc & SPTD_PERF_MISC_MMAP_BUILD_ID) &&
		                     !e->map.build_id)) {
			rec_free(e);
			return -ENOMEM;
		}
	}
	c->nrecs++;
	return 0;
}

static int on_exited_chunk(void *arg, const struct sptd_store_chunk_row *row)
{
	int ret;

	if (!row->data || !row->len)
		return 0;
	ret = sptd_col_pt_sideband_parse(row->data, row->len, sptd_col_pt_sideband_sample_type(),
	                                 on_exited_record, arg);
	/* records after a malformed one are lost, not the ones before */
	return ret == -EBADMSG ? 0 : ret < 0 ? ret : 0;
}

/* By process, then time, then the order read (qsort is not stable). */
static int rec_cmp(const void *a, const void *b)
{
	const struct exited_rec *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int map_cmp(const void *a, const void *b)
{
	const struct sptd_col_symcap_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The mappings of one process, its records @recs[0..@n) in time order,
 * into @out (room for @n): the last exec's and after, the newer of two
 * that overlap.  Returns how many, sorted by start. */
static size_t live_maps(const struct exited_rec *recs, size_t n,
                        struct sptd_col_symcap_mapping *out)
{
	size_t nout = 0;

	for (size_t i = 0; i < n; i++) {
		const struct exited_rec *r = &recs[i];
		size_t k = 0;

		if (r->exec) {
			nout = 0;
			continue;
		}
		for (size_t j = 0; j < nout; j++)
			if (out[j].end <= r->map.start || out[j].start >= r->map.end)
				out[k++] = out[j];
		nout = k;
		out[nout++] = r->map;
	}
	qsort(out, nout, sizeof(*out), map_cmp);
	return nout;
}

int sptd_col_sample_exited_maps(struct sptd_col_symcap *sc, struct sptd_store *st,
                                const int *pids, int npids)
{
	struct exited_ctx c = { .pids = pids, .npids = npids };
	struct sptd_col_symcap_mapping *maps = NULL;
	int ret, total = 0;
	size_t i, j;

	if (!sc || !st || (!pids && npids > 0) || npids < 0)
		return -EINVAL;
	if (npids == 0)
		return 0;
	ret = SPTD_STORE_EACH(st, raw_sideband, on_exited_chunk, &c);
	if (ret < 0 || c.nrecs == 0)
		goto out;
	qsort(c.recs, c.nrecs, sizeof(*c.recs), rec_cmp);
	maps = calloc(c.nrecs, sizeof(*maps));
	if (!maps) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c.nrecs && ret >= 0; i = j) {
		size_t n;

		for (j = i; j < c.nrecs && c.recs[j].pid == c.recs[i].pid; j++)
			;
		n = live_maps(&c.recs[i], j - i, maps);
		if (n == 0)
			continue;
		ret = sptd_col_symcap_task_recorded(sc, c.recs[i].pid, maps, n);
		if (ret == -EEXIST)
			ret = 0;   /* /proc had it after all */
		else if (ret > 0)
			total += ret;
	}
out:
	for (i = 0; i < c.nrecs; i++)
		rec_free(&c.recs[i]);
	free(c.recs);
	free(maps);
	return ret < 0 ? ret : total;
}
