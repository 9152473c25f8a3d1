/* sample_exited.c — the sampling source's sideband at capture: stored as
 * the PT sideband is (raw_sideband rows, raw_task rows from COMM records,
 * through pt_sideband.c), and the file mappings of sampled processes that
 * were gone before the capture could read /proc/PID/maps rebuilt from its
 * MMAP2 records, so their samples are named as a live process's are.
 *
 * A process's mappings are kept in time, as perf keeps them: its records
 * in time order (the rings of several CPUs interleave) start from its
 * parent's mappings at its fork (FORK: a child runs its parent's code until
 * it execs), an exec (COMM with COMM_EXEC) ends every mapping before it,
 * and a mapping ends the older ones it overlaps, as the kernel's own
 * munmap-on-overlap does.  Each becomes a raw_mmap row with the time it
 * ended (until_ts), so a sample is named by the mappings in force at its
 * time.  A parent's mappings at the fork come from its own records, or from
 * /proc where it is alive and its records begin after its exec.  The files
 * are read only while they are still the files recorded (symcache.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "pt-local.h"
#include "record-local.h"
#include "sptd_col_base.h"
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

/* What a record of a process says. */
enum exited_kind {
	REC_MMAP,                /* a file mapping (or the vDSO) */
	REC_EXEC,                /* an exec: the mappings before it end */
	REC_FORK,                /* the process began as a copy of @ppid */
};

/* One MMAP2, exec or fork record of a process. */
struct exited_rec {
	uint64_t time;           /* ns, the record's sample_id time */
	size_t seq;              /* order read: breaks ties of @time */
	int pid;                 /* the process (tgid) */
	enum exited_kind kind;   /* what it says */
	int ppid;                /* REC_FORK: the parent process */
	struct sptd_col_symcap_mapping map; /* REC_MMAP: the mapping (strings owned) */
};

struct exited_ctx {
	struct exited_rec *recs; /* every process's records, sorted once read */
	size_t nrecs, cap;       /* used / allocated */
	struct sptd_col_symcap *sc; /* /proc snapshots of live parents */
};

/* A set of mappings (strings borrowed from records or the symcap). */
struct map_set {
	struct sptd_col_symcap_mapping *v; /* the mappings */
	size_t n, cap;           /* used / allocated */
};

/* Parents followed back from a fork, at most: a chain of forks without
 * execs (a shell's subshells) is rarely deeper. */
#define EXITED_FORK_DEPTH 8

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
	/* a new process, not a thread */
	int fork = r->type == SPTD_PERF_RECORD_FORK && r->pid != r->ppid && r->ppid > 0;

	/* files, and the vDSO (named from the service's own: one kernel's) */
	if (!exec && !fork &&
	    (r->type != SPTD_PERF_RECORD_MMAP2 || !r->name ||
	     (r->name[0] != '/' && strcmp(r->name, "[vdso]") != 0) ||
	     !(r->prot & PROT_EXEC) || r->len == 0 || r->addr + r->len < r->addr))
		return 0;
	if (r->pid <= 0)
		return 0;
	if (sptd_col_grow((void **)&c->recs, &c->cap, c->nrecs, sizeof(*c->recs)) < 0)
		return -ENOMEM;
	e = &c->recs[c->nrecs];
	memset(e, 0, sizeof(*e));
	e->time = r->id.time;
	e->seq = c->nrecs;
	e->pid = r->pid;
	e->kind = exec ? REC_EXEC : fork ? REC_FORK : REC_MMAP;
	e->ppid = fork ? r->ppid : 0;
	if (e->kind == REC_MMAP) {
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

/* The records of @pid: *@first and the count returned (0 none). */
static size_t recs_of(const struct exited_ctx *c, int pid, size_t *first)
{
	size_t lo = 0, hi = c->nrecs, n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->recs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo + n < c->nrecs && c->recs[lo + n].pid == pid)
		n++;
	return n;
}

static int set_push(struct map_set *s, const struct sptd_col_symcap_mapping *m)
{
	if (sptd_col_grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v)) < 0)
		return -ENOMEM;
	s->v[s->n++] = *m;
	return 0;
}

/* Every mapping of @cur ends at @time: into @ended (NULL: dropped). */
static int set_end_all(struct map_set *cur, uint64_t time, struct map_set *ended)
{
	int ret = 0;

	for (size_t i = 0; i < cur->n && ended && ret >= 0; i++) {
		cur->v[i].until = (int64_t)time;
		ret = set_push(ended, &cur->v[i]);
	}
	cur->n = 0;
	return ret;
}

/* Mapping @m made at @time: the ones of @cur it overlaps end then (into
 * @ended, NULL: dropped), @m joins @cur. */
static int set_map(struct map_set *cur, const struct sptd_col_symcap_mapping *m, uint64_t time,
                   struct map_set *ended)
{
	size_t k = 0;
	int ret = 0;

	for (size_t j = 0; j < cur->n && ret >= 0; j++) {
		if (cur->v[j].end <= m->start || cur->v[j].start >= m->end) {
			cur->v[k++] = cur->v[j];
		} else if (ended) {
			cur->v[j].until = (int64_t)time;
			ret = set_push(ended, &cur->v[j]);
		}
	}
	cur->n = k;
	return ret < 0 ? ret : set_push(cur, m);
}

static int on_live_map(void *arg, const struct sptd_col_symcap_mapping *m)
{
	return set_push(arg, m);
}

/* The mappings of process @pid at @time into @cur (empty on entry), from
 * its records since its last exec or fork before @time (a fork: its
 * parent's then); a process whose records begin later in its life starts
 * from what /proc says of it now (a live parent). */
static int maps_at(struct exited_ctx *c, int pid, uint64_t time, int depth, struct map_set *cur)
{
	size_t first, n = recs_of(c, pid, &first), begin = first, end = first;
	int ret = 0;

	for (; end < first + n && c->recs[end].time <= time; end++)
		if (c->recs[end].kind != REC_MMAP)
			begin = end;
	if (begin == end || c->recs[begin].kind == REC_MMAP) {
		ret = sptd_col_symcap_task_mappings(c->sc, pid, on_live_map, cur);
		if (ret == -ENOENT)
			ret = 0;
	} else if (c->recs[begin].kind == REC_FORK && depth < EXITED_FORK_DEPTH &&
	           c->recs[begin].ppid != pid) {
		ret = maps_at(c, c->recs[begin].ppid, c->recs[begin].time, depth + 1, cur);
	}
	for (size_t i = begin; i < end && ret >= 0; i++)
		if (c->recs[i].kind == REC_MMAP)
			ret = set_map(cur, &c->recs[i].map, c->recs[i].time, NULL);
	return ret < 0 ? ret : 0;
}

/* Every mapping process @pid had, each with the time it ended (0: never),
 * into @out (empty on entry), sorted by start. */
static int maps_in_time(struct exited_ctx *c, int pid, struct map_set *out)
{
	struct map_set cur = { 0 };
	size_t first, n = recs_of(c, pid, &first);
	int ret = 0;

	for (size_t i = first; i < first + n && ret >= 0; i++) {
		const struct exited_rec *r = &c->recs[i];

		if (r->kind == REC_EXEC) {
			ret = set_end_all(&cur, r->time, out);
		} else if (r->kind == REC_MMAP) {
			ret = set_map(&cur, &r->map, r->time, out);
		} else if (r->ppid != pid) {
			ret = set_end_all(&cur, r->time, out);
			if (ret >= 0)
				ret = maps_at(c, r->ppid, r->time, 1, &cur);
		}
	}
	for (size_t i = 0; i < cur.n && ret >= 0; i++) {
		cur.v[i].until = 0;
		ret = set_push(out, &cur.v[i]);
	}
	free(cur.v);
	if (ret >= 0 && out->n)
		qsort(out->v, out->n, sizeof(*out->v), map_cmp);
	return ret;
}

int sptd_col_sample_exited_maps(struct sptd_col_symcap *sc, struct sptd_store *st,
                                const int *pids, int npids)
{
	struct exited_ctx c = { .sc = sc };
	struct map_set maps = { 0 };
	int ret, total = 0;

	if (!sc || !st || (!pids && npids > 0) || npids < 0)
		return -EINVAL;
	if (npids == 0)
		return 0;
	ret = SPTD_STORE_EACH(st, raw_sideband, on_exited_chunk, &c);
	if (ret < 0 || c.nrecs == 0)
		goto out;
	qsort(c.recs, c.nrecs, sizeof(*c.recs), rec_cmp);
	for (int i = 0; i < npids && ret >= 0; i++) {
		size_t first;

		if (pids[i] <= 0 || recs_of(&c, pids[i], &first) == 0)
			continue;
		maps.n = 0;
		ret = maps_in_time(&c, pids[i], &maps);
		if (ret < 0 || maps.n == 0)
			continue;
		ret = sptd_col_symcap_task_recorded(sc, pids[i], maps.v, maps.n);
		if (ret == -EEXIST)
			ret = 0;   /* /proc had it after all */
		else if (ret > 0)
			total += ret;
	}
out:
	for (size_t i = 0; i < c.nrecs; i++)
		rec_free(&c.recs[i]);
	free(c.recs);
	free(maps.v);
	return ret < 0 ? ret : total;
}
