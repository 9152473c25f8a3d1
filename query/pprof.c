/* pprof.c — the incident's samples as a pprof profile (profile.proto of
 * github.com/google/pprof, gzipped as pprof, Pyroscope and Parca read it):
 * one Sample per distinct (stack, thread, CPU) with its count, labels
 * "thread" (name), "tid", "pid" and "cpu"; a Location per callsite row
 * used (its pc, its mapping, the function of its symbol), a Function per
 * symbol, a Mapping per dso with its path and build-id.
 *
 * Memory follows the distinct stacks: the callsite tree (stacks.c) and one
 * counter per distinct (leaf, thread, CPU), never the samples.  The
 * message is streamed: its top-level fields may come in any order, so each
 * Location, Function, Mapping and string is written through the gzip
 * stream where a Sample first needs it, strings in index order.  A hostile
 * file's stacks are bounded as the Perfetto export bounds them: at most
 * SPTD_QUERY_STACK_MAX frames a stack and SPTD_PF_STACK_BUDGET frames in
 * all, a stack cut short ending in a "[stack cut]" location. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perfetto-local.h"

/* Profile */
#define PR_SAMPLE_TYPE  1
#define PR_SAMPLE       2
#define PR_MAPPING      3
#define PR_LOCATION     4
#define PR_FUNCTION     5
#define PR_STRINGS      6
#define PR_DURATION     10
#define PR_COMMENT      13

/* One distinct (leaf, thread, CPU) and how many samples it has. */
struct pprof_key {
	int64_t utid;           /* -1 unknown */
	uint32_t leaf;          /* callsite index, SPTD_QUERY_NONE: no stack */
	int32_t cpu;            /* -1 unknown */
	uint64_t count;         /* samples; 0: empty slot */
};

/* One thread's labels. */
struct pprof_thread {
	int64_t utid, tid, pid; /* pid -1 unknown */
	int64_t name;           /* string index of its name, 0 none */
};

struct pprof {
	struct sptd_query_pf *pf;
	struct sptd_query_stacks *stacks;
	struct sptd_query_frame *frames;    /* one walk */
	struct pprof_key *keys;             /* open addressing */
	size_t cap, count;                  /* slots (power of two), used */
	struct pprof_thread *threads;       /* by utid order */
	size_t nthreads, cap_threads;
	struct sptd_query_imap thread_of;   /* utid -> index + 1 */
	struct sptd_query_smap strings;     /* string -> index */
	uint32_t strings_written;           /* strings already in the stream */
	uint8_t *loc_done, *func_done, *map_done; /* per node (+1 cut), sym (+1), dso */
	int64_t budget;                     /* frames samples may still list */
	struct sptd_query_pb msg;           /* one top-level field */
	z_stream z;                         /* gzip of the output */
	int z_open;                         /* deflateInit2 succeeded */
	uint8_t zbuf[1 << 16];              /* deflate's output */
	int err;                            /* a callback's failure (pf->err set) */
};

static size_t key_hash(int64_t utid, uint32_t leaf, int32_t cpu)
{
	uint64_t x = (uint64_t)utid * 0x9e3779b97f4a7c15ULL ^ (uint64_t)leaf * 0xc2b2ae3d27d4eb4fULL ^
	             (uint64_t)(uint32_t)cpu * 0x165667b19e3779f9ULL;

	x ^= x >> 31;
	x *= 0xff51afd7ed558ccdULL;
	return (size_t)(x ^ (x >> 33));
}

/* The slot of (utid, leaf, cpu): the key's, or the empty one it goes in. */
static struct pprof_key *key_slot(struct pprof_key *keys, size_t cap, int64_t utid,
                                  uint32_t leaf, int32_t cpu)
{
	size_t i = key_hash(utid, leaf, cpu) & (cap - 1);

	while (keys[i].count && (keys[i].utid != utid || keys[i].leaf != leaf || keys[i].cpu != cpu))
		i = (i + 1) & (cap - 1);
	return &keys[i];
}

static int key_add(struct pprof *pp, int64_t utid, uint32_t leaf, int32_t cpu)
{
	struct pprof_key *k;

	if (2 * (pp->count + 1) > pp->cap) {
		size_t cap = pp->cap ? 2 * pp->cap : 1024;
		struct pprof_key *keys = calloc(cap, sizeof(*keys));

		if (!keys)
			return -ENOMEM;
		for (size_t i = 0; i < pp->cap; i++)
			if (pp->keys[i].count)
				*key_slot(keys, cap, pp->keys[i].utid, pp->keys[i].leaf,
				          pp->keys[i].cpu) = pp->keys[i];
		free(pp->keys);
		pp->keys = keys;
		pp->cap = cap;
	}
	k = key_slot(pp->keys, pp->cap, utid, leaf, cpu);
	if (!k->count) {
		k->utid = utid;
		k->leaf = leaf;
		k->cpu = cpu;
		pp->count++;
	}
	k->count++;
	return 0;
}

/* Deflate @len bytes (@flush: Z_NO_FLUSH or Z_FINISH) to pf->out. */
static int z_write(struct pprof *pp, const void *data, size_t len, int flush)
{
	int zrc;

	pp->z.next_in = (Bytef *)data;
	pp->z.avail_in = (uInt)len;
	do {
		size_t have;

		pp->z.next_out = pp->zbuf;
		pp->z.avail_out = sizeof(pp->zbuf);
		zrc = deflate(&pp->z, flush);
		if (zrc == Z_STREAM_ERROR)
			return sptd_query_pf_fail(pp->pf, -EIO, "gzip failed");
		have = sizeof(pp->zbuf) - pp->z.avail_out;
		if (have && fwrite(pp->zbuf, 1, have, pp->pf->out) != have)
			return sptd_query_pf_fail(pp->pf, -EIO, "writing the profile failed: %s",
			                          strerror(errno));
		pp->pf->stats->bytes += have;
	} while (pp->z.avail_out == 0 || (flush == Z_FINISH && zrc != Z_STREAM_END));
	return 0;
}

/* Write pp->msg (one or more complete top-level fields) and reset it. */
static int emit(struct pprof *pp)
{
	int rc;

	if (pp->msg.err)
		return sptd_query_pf_fail(pp->pf, pp->msg.err, "encoding the profile failed: %s",
		                          strerror(-pp->msg.err));
	rc = z_write(pp, pp->msg.data, pp->msg.len, Z_NO_FLUSH);
	sptd_query_pb_reset(&pp->msg);
	return rc;
}

/* The string-table index of @s (NULL: ""), its entry written when new. */
static int64_t str(struct pprof *pp, const char *s)
{
	int i = sptd_query_smap_intern(&pp->strings, s ? s : "");

	if (i < 0) {
		pp->err = sptd_query_pf_fail(pp->pf, i, "out of memory");
		return 0;
	}
	while (pp->strings_written <= (uint32_t)i) {
		const char *t = pp->strings.strs[pp->strings_written++];

		sptd_query_pb_text(&pp->msg, PR_STRINGS, t, strlen(t));
	}
	return i;
}

static int add_thread(void *ctx, const struct sptd_store_thread_info_row *row)
{
	struct pprof *pp = ctx;
	struct pprof_thread *t;
	int rc;

	if (pp->nthreads == pp->cap_threads) {
		size_t cap = pp->cap_threads ? 2 * pp->cap_threads : 256;

		t = realloc(pp->threads, cap * sizeof(*t));
		if (!t)
			return pp->err = sptd_query_pf_fail(pp->pf, -ENOMEM, "out of memory");
		pp->threads = t;
		pp->cap_threads = cap;
	}
	t = &pp->threads[pp->nthreads];
	t->utid = row->utid;
	t->tid = row->tid;
	t->pid = row->pid;
	/* names are interned into the table when a sample first uses them */
	t->name = -1;
	if ((rc = sptd_query_imap_put(&pp->thread_of, row->utid, ++pp->nthreads)) < 0)
		return pp->err = sptd_query_pf_fail(pp->pf, rc, "out of memory");
	return 0;
}

static int add_sample(void *ctx, const struct sptd_store_stack_row *row)
{
	struct pprof *pp = ctx;
	uint32_t leaf = row->callsite_id != -1 ? sptd_query_stacks_find(pp->stacks, row->callsite_id)
	                                       : SPTD_QUERY_NONE;
	int rc = key_add(pp, row->utid, leaf, row->cpu);

	if (rc < 0)
		return pp->err = sptd_query_pf_fail(pp->pf, rc, "out of memory");
	pp->pf->stats->profile_samples++;
	return 0;
}

/* Mapping of dso index @f->dso_index. */
static void define_mapping(struct pprof *pp, const struct sptd_query_frame *f)
{
	int64_t file = str(pp, f->dso), build = f->build_id ? str(pp, f->build_id) : 0;

	pp->map_done[f->dso_index] = 1;
	sptd_query_pb_begin(&pp->msg, PR_MAPPING);
	sptd_query_pb_uint(&pp->msg, 1, (uint64_t)f->dso_index + 1);
	sptd_query_pb_int(&pp->msg, 5, file);
	if (build)
		sptd_query_pb_int(&pp->msg, 6, build);
	sptd_query_pb_uint(&pp->msg, 7, 1);            /* has_functions */
	sptd_query_pb_end(&pp->msg);
}

/* Function @id named @name. */
static void define_function(struct pprof *pp, uint64_t id, const char *name)
{
	int64_t s = str(pp, name);

	sptd_query_pb_begin(&pp->msg, PR_FUNCTION);
	sptd_query_pb_uint(&pp->msg, 1, id);
	sptd_query_pb_int(&pp->msg, 2, s);
	sptd_query_pb_int(&pp->msg, 3, s);
	sptd_query_pb_end(&pp->msg);
}

/* Location of frame @f (id node + 1). */
static void define_location(struct pprof *pp, const struct sptd_query_frame *f)
{
	pp->loc_done[f->node] = 1;
	if (f->sym != SPTD_QUERY_NONE && !pp->func_done[f->sym]) {
		pp->func_done[f->sym] = 1;
		define_function(pp, (uint64_t)f->sym + 1, f->symbol);
	}
	if (f->dso_index != SPTD_QUERY_NONE && !pp->map_done[f->dso_index])
		define_mapping(pp, f);
	sptd_query_pb_begin(&pp->msg, PR_LOCATION);
	sptd_query_pb_uint(&pp->msg, 1, (uint64_t)f->node + 1);
	if (f->dso_index != SPTD_QUERY_NONE)
		sptd_query_pb_uint(&pp->msg, 2, (uint64_t)f->dso_index + 1);
	sptd_query_pb_uint(&pp->msg, 3, f->addr);
	if (f->sym != SPTD_QUERY_NONE) {
		sptd_query_pb_begin(&pp->msg, 4);
		sptd_query_pb_uint(&pp->msg, 1, (uint64_t)f->sym + 1);
		sptd_query_pb_end(&pp->msg);
	}
	sptd_query_pb_end(&pp->msg);
}

/* The "[stack cut]" location (id count + 1, function nsyms + 1). */
static uint64_t cut_location(struct pprof *pp)
{
	uint32_t n = sptd_query_stacks_count(pp->stacks);
	uint64_t fn = (uint64_t)sptd_query_stacks_nsyms(pp->stacks) + 1;

	if (!pp->loc_done[n]) {
		pp->loc_done[n] = 1;
		define_function(pp, fn, "[stack cut]");
		sptd_query_pb_begin(&pp->msg, PR_LOCATION);
		sptd_query_pb_uint(&pp->msg, 1, (uint64_t)n + 1);
		sptd_query_pb_begin(&pp->msg, 4);
		sptd_query_pb_uint(&pp->msg, 1, fn);
		sptd_query_pb_end(&pp->msg);
		sptd_query_pb_end(&pp->msg);
	}
	return (uint64_t)n + 1;
}

/* A label: @key with text @s, or with number @num when @s is NULL. */
static void label(struct pprof *pp, struct sptd_query_pb *sample, const char *key,
                  const char *s, int64_t num)
{
	int64_t k = str(pp, key), v = s ? str(pp, s) : 0;

	sptd_query_pb_begin(sample, 3);
	sptd_query_pb_int(sample, 1, k);
	if (s)
		sptd_query_pb_int(sample, 2, v);
	else
		sptd_query_pb_int(sample, 3, num);
	sptd_query_pb_end(sample);
}

/* Sample of key @k: its stack's locations, leaf first, its count, labels. */
static int write_sample(struct pprof *pp, const struct pprof_key *k, struct sptd_query_pb *sample)
{
	uint64_t who = k->utid >= 0 ? sptd_query_imap_get(&pp->thread_of, k->utid) : 0;
	struct sptd_query_pb ids;
	int n = 0, cut = 0;

	sptd_query_pb_reset(sample);
	sptd_query_pb_init(&ids);
	if (k->leaf != SPTD_QUERY_NONE) {
		size_t max = SPTD_QUERY_STACK_MAX;

		if (pp->budget < (int64_t)max)
			max = pp->budget > 1 ? (size_t)pp->budget : 1;
		n = sptd_query_stacks_walk(pp->stacks, k->leaf, pp->frames, max, &cut);
		if (n < 0)
			return sptd_query_pf_fail(pp->pf, n, "walking a stack failed");
		pp->budget -= n;
	}
	for (int i = 0; i < n; i++) {
		if (!pp->loc_done[pp->frames[i].node])
			define_location(pp, &pp->frames[i]);
		sptd_query_pb_raw_varint(&ids, (uint64_t)pp->frames[i].node + 1);
	}
	if (cut) {
		sptd_query_pb_raw_varint(&ids, cut_location(pp));
		pp->pf->stats->stacks_cut++;
	}
	sptd_query_pb_packed(sample, 1, &ids);
	sptd_query_pb_fini(&ids);
	sptd_query_pb_begin(sample, 2);               /* value: packed, one */
	sptd_query_pb_raw_varint(sample, k->count);
	sptd_query_pb_end(sample);
	if (who) {
		struct pprof_thread *t = &pp->threads[who - 1];

		label(pp, sample, "tid", NULL, t->tid);
		if (t->pid >= 0)
			label(pp, sample, "pid", NULL, t->pid);
	}
	if (k->cpu >= 0)
		label(pp, sample, "cpu", NULL, k->cpu);
	return 0;
}

/* Thread names are kept in a second pass over the threads, only for those
 * a sample has: the "thread" label. */
static int name_thread(void *ctx, const struct sptd_store_thread_info_row *row)
{
	struct pprof *pp = ctx;
	uint64_t at = sptd_query_imap_get(&pp->thread_of, row->utid);

	if (at && pp->threads[at - 1].name == -2 && row->name)
		pp->threads[at - 1].name = str(pp, row->name);
	return pp->err;
}

static int write_profile(struct pprof *pp)
{
	struct sptd_query_pb sample;
	int64_t type, unit, comment;
	int rc = 0;

	sptd_query_pb_init(&sample);
	/* the string table starts with "" */
	/* strings go out as they are interned: never inside a nested message */
	str(pp, "");
	type = str(pp, "samples");
	unit = str(pp, "count");
	comment = str(pp, "sysptd incident");
	sptd_query_pb_begin(&pp->msg, PR_SAMPLE_TYPE);
	sptd_query_pb_int(&pp->msg, 1, type);
	sptd_query_pb_int(&pp->msg, 2, unit);
	sptd_query_pb_end(&pp->msg);
	sptd_query_pb_int(&pp->msg, PR_COMMENT, comment);
	if (pp->pf->window_end > pp->pf->window_start)
		sptd_query_pb_int(&pp->msg, PR_DURATION, pp->pf->window_end - pp->pf->window_start);
	/* mark the threads that samples have, then name them */
	for (size_t i = 0; i < pp->cap; i++) {
		uint64_t who = pp->keys[i].count && pp->keys[i].utid >= 0
		               ? sptd_query_imap_get(&pp->thread_of, pp->keys[i].utid) : 0;

		if (who && pp->threads[who - 1].name == -1)
			pp->threads[who - 1].name = -2;
	}
	rc = SPTD_STORE_EACH(pp->pf->st, thread_info, name_thread, pp);
	if (pp->err || rc < 0)
		goto out;
	if ((rc = emit(pp)) < 0)
		goto out;
	for (size_t i = 0; i < pp->cap && !pp->err; i++) {
		const struct pprof_key *k = &pp->keys[i];
		uint64_t who = k->utid >= 0 ? sptd_query_imap_get(&pp->thread_of, k->utid) : 0;

		if (!k->count)
			continue;
		if ((rc = write_sample(pp, k, &sample)) < 0)
			goto out;
		if (who && pp->threads[who - 1].name >= 0) {
			int64_t key = str(pp, "thread");

			sptd_query_pb_begin(&sample, 3);
			sptd_query_pb_int(&sample, 1, key);
			sptd_query_pb_int(&sample, 2, pp->threads[who - 1].name);
			sptd_query_pb_end(&sample);
		}
		/* the definitions (and strings) it needs go first */
		sptd_query_pb_bytes(&pp->msg, PR_SAMPLE, sample.data, sample.len);
		if (sample.err)
			pp->msg.err = sample.err;
		if ((rc = emit(pp)) < 0)
			goto out;
		pp->pf->stats->packets++;
	}
	if (!pp->err)
		rc = z_write(pp, NULL, 0, Z_FINISH);
out:
	sptd_query_pb_fini(&sample);
	if (pp->err)
		return pp->err;
	if (rc < 0 && pp->pf->err && !pp->pf->err[0])
		rc = sptd_query_pf_step_fail(pp->pf, "thread", rc);
	return rc;
}

int sptd_query_pf_write_pprof(struct sptd_query_pf *pf)
{
	struct pprof *pp = calloc(1, sizeof(*pp));
	uint32_t n;
	int rc;

	if (!pp)
		return sptd_query_pf_fail(pf, -ENOMEM, "out of memory");
	pp->pf = pf;
	sptd_query_pb_init(&pp->msg);
	rc = sptd_query_stacks_load(pf->st, &pp->stacks, pf->err, pf->errlen);
	if (rc < 0)
		goto out;
	n = sptd_query_stacks_count(pp->stacks);
	pp->budget = SPTD_PF_STACK_BUDGET(n);
	pp->frames = calloc(SPTD_QUERY_STACK_MAX, sizeof(*pp->frames));
	pp->loc_done = calloc((size_t)n + 1, 1);
	pp->func_done = calloc((size_t)sptd_query_stacks_nsyms(pp->stacks) + 1, 1);
	pp->map_done = calloc((size_t)sptd_query_stacks_ndsos(pp->stacks) + 1, 1);
	if (!pp->frames || !pp->loc_done || !pp->func_done || !pp->map_done) {
		rc = sptd_query_pf_fail(pf, -ENOMEM, "out of memory");
		goto out;
	}
	/* windowBits 15 + 16: a gzip header and trailer, as pprof reads */
	if (deflateInit2(&pp->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		rc = sptd_query_pf_fail(pf, -ENOMEM, "gzip: out of memory");
		goto out;
	}
	pp->z_open = 1;
	rc = SPTD_STORE_EACH(pf->st, thread_info, add_thread, pp);
	if (rc >= 0 && !pp->err)
		rc = SPTD_STORE_EACH(pf->st, sample_stack, add_sample, pp);
	if (pp->err)
		rc = pp->err;
	else if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, "sample", rc == -EIO ? -EBADMSG : rc);
	if (rc >= 0)
		rc = write_profile(pp);
out:
	if (pp->z_open)
		deflateEnd(&pp->z);
	sptd_query_pb_fini(&pp->msg);
	sptd_query_smap_fini(&pp->strings);
	sptd_query_imap_fini(&pp->thread_of);
	sptd_query_stacks_destroy(pp->stacks);
	free(pp->keys);
	free(pp->threads);
	free(pp->frames);
	free(pp->loc_done);
	free(pp->func_done);
	free(pp->map_done);
	free(pp);
	return rc < 0 ? rc : 0;
}
