/* perfetto_profile.c — the incident's samples as Perfetto's own CPU
 * profile: one PerfSample packet per sample row (cpu, pid, tid, the
 * interned callstack), on a sequence of their own (SEQ_PROFILE), so that
 * trace_processor fills `perf_sample` with every sample and its callsite
 * and ui.perfetto.dev draws the flame graph of an area selection.
 *
 * Interning follows Perfetto's profilers: InternedData.callstacks (frame
 * ids from the root out), frames (function name, mapping, pc), function
 * names, mappings (path and build-id of the dso) — each defined in the
 * packet of the first sample that uses it.  iids are fixed by the
 * in-memory stacks (stacks.c): frame = callsite index + 1, function name =
 * symbol index + 1 (frames no symbol covers get "[unknown] (dso+0xpc)"
 * names after them), mapping = dso index + 1.  The pc is written as
 * rel_pc of a mapping based at 0: the incident keeps each dso's symbols in
 * its own address space, not every process's load address.
 *
 * A stack cut short (deeper than SPTD_QUERY_STACK_MAX frames, a damaged
 * parent link, or the export's frame budget spent) gets a "[stack cut]"
 * frame at its root, as the instants' stack text does. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"

#define TP_TIMESTAMP      8
#define TP_SEQ_ID         10
#define TP_INTERNED       12
#define TP_SEQ_FLAGS      13
#define TP_DEFAULTS       59
#define TP_PERF_SAMPLE    66
#define TP_FIRST_ON_SEQ   87
/* InternedData */
#define ID_FUNCTION_NAMES 5
#define ID_FRAMES         6
#define ID_CALLSTACKS     7
#define ID_BUILD_IDS      16
#define ID_MAPPING_PATHS  17
#define ID_MAPPINGS       19
/* PerfSample */
#define PS_CPU            1
#define PS_PID            2
#define PS_TID            3
#define PS_CALLSTACK      4
#define PS_CPU_MODE       5
#define MODE_KERNEL       1
#define MODE_USER         2
/* kernel text is in the top half of the address space (x86-64, arm64) */
#define KERNEL_PC(pc)     ((pc) >> 63)

/* What the profile writer keeps while it streams the samples. */
struct profile {
	struct sptd_query_pf *pf;
	struct sptd_query_stacks *stacks;
	struct sptd_query_frame *frames;  /* one walk, SPTD_QUERY_STACK_MAX */
	uint8_t *frame_done;              /* per callsite index (+1: "[stack cut]") */
	uint8_t *name_done;               /* per symbol index (+1: "[stack cut]") */
	uint8_t *mapping_done;            /* per dso index */
	struct sptd_query_imap callstack; /* leaf callsite index -> callstack iid */
	struct sptd_query_imap who;       /* utid -> index + 1 into tid/pid */
	int64_t *tid, *pid;               /* of each thread row */
	size_t nthreads, cap_threads;
	uint64_t next_callstack;          /* next callstack iid */
	int64_t budget;                   /* frames callstacks may still hold */
	int err;                          /* a callback's failure (pf->err set) */
};

static int add_thread(void *ctx, const struct sptd_store_thread_info_row *row)
{
	struct profile *p = ctx;
	int rc;

	if (p->nthreads == p->cap_threads) {
		size_t cap = p->cap_threads ? 2 * p->cap_threads : 256;
		int64_t *tid = realloc(p->tid, cap * sizeof(*tid)), *pid;

		if (tid)
			p->tid = tid;
		pid = tid ? realloc(p->pid, cap * sizeof(*pid)) : NULL;
		if (!pid)
			return p->err = sptd_query_pf_fail(p->pf, -ENOMEM, "out of memory");
		p->pid = pid;
		p->cap_threads = cap;
	}
	p->tid[p->nthreads] = row->tid;
	p->pid[p->nthreads] = row->pid >= 0 ? row->pid : row->tid;
	if ((rc = sptd_query_imap_put(&p->who, row->utid, ++p->nthreads)) < 0)
		return p->err = sptd_query_pf_fail(p->pf, rc, "out of memory");
	return 0;
}

/* An InternedString entry (@field: function_names, build_ids, mapping_paths). */
static void interned_string(struct sptd_query_pb *pb, uint32_t field, uint64_t iid,
                            const void *bytes, size_t len)
{
	sptd_query_pb_begin(pb, field);
	sptd_query_pb_uint(pb, 1, iid);
	sptd_query_pb_bytes(pb, 2, bytes, len);
	sptd_query_pb_end(pb);
}

/* Hex @hex as bytes into @out (at most @cap); their count, 0 if not hex. */
static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; hex[0] && hex[1] && n < cap; hex += 2) {
		char pair[3] = { hex[0], hex[1], 0 }, *end;
		unsigned long v = strtoul(pair, &end, 16);

		if (*end)
			return 0;
		out[n++] = (uint8_t)v;
	}
	return hex[0] ? 0 : n;
}

/* Define mapping @dso (index) with its path and build-id. */
static void define_mapping(struct profile *p, const struct sptd_query_frame *f)
{
	struct sptd_query_pb *pb = &p->pf->interned;
	uint64_t iid = (uint64_t)f->dso_index + 1;
	uint8_t id[64];
	size_t idlen = f->build_id ? unhex(f->build_id, id, sizeof(id)) : 0;

	p->mapping_done[f->dso_index] = 1;
	interned_string(pb, ID_MAPPING_PATHS, iid, f->dso, strlen(f->dso));
	if (idlen)
		interned_string(pb, ID_BUILD_IDS, iid, id, idlen);
	sptd_query_pb_begin(pb, ID_MAPPINGS);
	sptd_query_pb_uint(pb, 1, iid);
	if (idlen)
		sptd_query_pb_uint(pb, 2, iid);
	sptd_query_pb_uint(pb, 7, iid);      /* path_string_ids */
	sptd_query_pb_end(pb);
}

/* Define frame @f (callsite index) with its function name and mapping. */
static void define_frame(struct profile *p, const struct sptd_query_frame *f)
{
	struct sptd_query_pb *pb = &p->pf->interned;
	uint32_t nsyms = sptd_query_stacks_nsyms(p->stacks);
	uint64_t name_iid;

	p->frame_done[f->node] = 1;
	if (f->sym != SPTD_QUERY_NONE) {
		name_iid = (uint64_t)f->sym + 1;
		if (!p->name_done[f->sym]) {
			p->name_done[f->sym] = 1;
			interned_string(pb, ID_FUNCTION_NAMES, name_iid, f->symbol, strlen(f->symbol));
		}
	} else {
		/* one name per pc no symbol covers, after the symbols' (and the
		 * "[stack cut]" one at nsyms + 1) */
		char text[SPTD_QUERY_NAME_MAX + 64];
		int n = f->dso ? snprintf(text, sizeof(text), "[unknown] (%s+0x%" PRIx64 ")",
		                          f->dso, f->addr)
		               : snprintf(text, sizeof(text), "[unknown] (0x%" PRIx64 ")", f->addr);

		name_iid = (uint64_t)nsyms + 2 + f->node;
		interned_string(pb, ID_FUNCTION_NAMES, name_iid, text,
		                n < 0 ? 0 : (size_t)n >= sizeof(text) ? sizeof(text) - 1 : (size_t)n);
	}
	if (f->dso_index != SPTD_QUERY_NONE && !p->mapping_done[f->dso_index])
		define_mapping(p, f);
	sptd_query_pb_begin(pb, ID_FRAMES);
	sptd_query_pb_uint(pb, 1, (uint64_t)f->node + 1);
	sptd_query_pb_uint(pb, 2, name_iid);
	if (f->dso_index != SPTD_QUERY_NONE) {
		sptd_query_pb_uint(pb, 3, (uint64_t)f->dso_index + 1);
		sptd_query_pb_uint(pb, 4, f->addr);
	}
	sptd_query_pb_end(pb);
}

/* The "[stack cut]" frame: iid count + 1, its name nsyms + 1. */
static uint64_t cut_frame(struct profile *p)
{
	uint32_t n = sptd_query_stacks_count(p->stacks);
	uint32_t nsyms = sptd_query_stacks_nsyms(p->stacks);
	static const char name[] = "[stack cut]";

	if (!p->frame_done[n]) {
		p->frame_done[n] = 1;
		interned_string(&p->pf->interned, ID_FUNCTION_NAMES, (uint64_t)nsyms + 1,
		                name, sizeof(name) - 1);
		sptd_query_pb_begin(&p->pf->interned, ID_FRAMES);
		sptd_query_pb_uint(&p->pf->interned, 1, (uint64_t)n + 1);
		sptd_query_pb_uint(&p->pf->interned, 2, (uint64_t)nsyms + 1);
		sptd_query_pb_end(&p->pf->interned);
	}
	return (uint64_t)n + 1;
}

/* The callstack iid of leaf callsite index @leaf, defined into
 * pf->interned with its frames when new. */
static int callstack_of(struct profile *p, uint32_t leaf, uint64_t *iid, int *kernel)
{
	uint64_t cut_frame_iid = 0;
	size_t max = SPTD_QUERY_STACK_MAX;
	int n, cut, rc;

	*iid = sptd_query_imap_get(&p->callstack, leaf);
	if (*iid)
		return 0;
	if (p->budget < (int64_t)max)
		max = p->budget > 1 ? (size_t)p->budget : 1;
	n = sptd_query_stacks_walk(p->stacks, leaf, p->frames, max, &cut);
	if (n < 0)
		return sptd_query_pf_fail(p->pf, n, "walking callsite %u failed", leaf);
	p->budget -= n;
	*kernel = KERNEL_PC(p->frames[0].addr) != 0;
	for (int i = 0; i < n; i++)
		if (!p->frame_done[p->frames[i].node])
			define_frame(p, &p->frames[i]);
	if (cut)
		cut_frame_iid = cut_frame(p);
	/* frame ids root first, unpacked: Perfetto's decoder reads this
	 * repeated field one varint field at a time */
	*iid = p->next_callstack++;
	sptd_query_pb_begin(&p->pf->interned, ID_CALLSTACKS);
	sptd_query_pb_uint(&p->pf->interned, 1, *iid);
	if (cut) {
		sptd_query_pb_uint(&p->pf->interned, 2, cut_frame_iid);
		p->pf->stats->stacks_cut++;
	}
	for (int i = n - 1; i >= 0; i--)
		sptd_query_pb_uint(&p->pf->interned, 2, (uint64_t)p->frames[i].node + 1);
	sptd_query_pb_end(&p->pf->interned);
	rc = sptd_query_imap_put(&p->callstack, leaf, *iid);
	return rc < 0 ? sptd_query_pf_fail(p->pf, rc, "out of memory interning stacks") : 0;
}

static int add_sample(void *ctx, const struct sptd_store_stack_row *row)
{
	struct profile *p = ctx;
	struct sptd_query_pb *pb = &p->pf->pkt;
	uint32_t leaf = row->callsite_id != -1 ? sptd_query_stacks_find(p->stacks, row->callsite_id)
	                                       : SPTD_QUERY_NONE;
	uint64_t who = row->utid >= 0 ? sptd_query_imap_get(&p->who, row->utid) : 0;
	uint64_t iid = 0;
	int kernel = 0, rc;

	sptd_query_pb_reset(&p->pf->interned);
	if (leaf != SPTD_QUERY_NONE && (rc = callstack_of(p, leaf, &iid, &kernel)) < 0)
		return p->err = rc;
	sptd_query_pb_uint(pb, TP_TIMESTAMP, (uint64_t)(row->ts < 0 ? 0 : row->ts));
	sptd_query_pb_uint(pb, TP_SEQ_ID, SPTD_PF_SEQ_PROFILE);
	sptd_query_pb_uint(pb, TP_SEQ_FLAGS, 2);     /* needs incremental state */
	if (p->pf->interned.len || p->pf->interned.err) {
		sptd_query_pb_begin(pb, TP_INTERNED);
		sptd_query_pb_raw(pb, &p->pf->interned);
		sptd_query_pb_end(pb);
	}
	sptd_query_pb_begin(pb, TP_PERF_SAMPLE);
	if (row->cpu >= 0)
		sptd_query_pb_uint(pb, PS_CPU, (uint64_t)row->cpu);
	if (who) {
		sptd_query_pb_uint(pb, PS_PID, (uint32_t)p->pid[who - 1]);
		sptd_query_pb_uint(pb, PS_TID, (uint32_t)p->tid[who - 1]);
	}
	if (iid) {
		sptd_query_pb_uint(pb, PS_CALLSTACK, iid);
		sptd_query_pb_uint(pb, PS_CPU_MODE, kernel ? MODE_KERNEL : MODE_USER);
	}
	sptd_query_pb_end(pb);
	if ((rc = sptd_query_pf_flush(p->pf)) < 0)
		return p->err = rc;
	p->pf->stats->profile_samples++;
	if (p->pf->stats->profile_samples % 65536 == 0)
		sptd_query_pf_progress(p->pf, "profile", p->pf->stats->profile_samples, 0);
	return 0;
}

int sptd_query_pf_write_profile(struct sptd_query_pf *pf)
{
	struct profile p = { .pf = pf, .next_callstack = 1 };
	uint32_t n;
	int rc;

	if (!sptd_query_pf_count(pf, "sample"))
		return 0;
	rc = sptd_query_stacks_load(pf->st, &p.stacks, pf->err, pf->errlen);
	if (rc < 0)
		return rc;
	n = sptd_query_stacks_count(p.stacks);
	p.budget = SPTD_PF_STACK_BUDGET(n);
	p.frames = calloc(SPTD_QUERY_STACK_MAX, sizeof(*p.frames));
	p.frame_done = calloc((size_t)n + 1, 1);
	p.name_done = calloc((size_t)sptd_query_stacks_nsyms(p.stacks) + 1, 1);
	p.mapping_done = calloc((size_t)sptd_query_stacks_ndsos(p.stacks) + 1, 1);
	if (!p.frames || !p.frame_done || !p.name_done || !p.mapping_done) {
		rc = sptd_query_pf_fail(pf, -ENOMEM, "out of memory");
		goto out;
	}
	/* the sequence's first packet: clears its incremental state and sets
	 * the clock; trace_processor starts a new interning generation at
	 * defaults, so they come in a packet of their own */
	sptd_query_pb_uint(&pf->pkt, TP_SEQ_ID, SPTD_PF_SEQ_PROFILE);
	sptd_query_pb_uint(&pf->pkt, TP_SEQ_FLAGS, 1);
	sptd_query_pb_uint(&pf->pkt, TP_FIRST_ON_SEQ, 1);
	sptd_query_pb_begin(&pf->pkt, TP_DEFAULTS);
	sptd_query_pb_uint(&pf->pkt, 58, sptd_query_pf_clock_id(pf));
	sptd_query_pb_end(&pf->pkt);
	if ((rc = sptd_query_pf_flush(pf)) < 0)
		goto out;
	rc = SPTD_STORE_EACH(pf->st, thread_info, add_thread, &p);
	if (rc >= 0 && !p.err)
		rc = SPTD_STORE_EACH(pf->st, sample_stack, add_sample, &p);
	if (p.err)
		rc = p.err;
	else if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, "sample", rc == -EIO ? -EBADMSG : rc);
out:
	sptd_query_pb_reset(&pf->interned);
	sptd_query_imap_fini(&p.callstack);
	sptd_query_imap_fini(&p.who);
	free(p.tid);
	free(p.pid);
	free(p.frames);
	free(p.frame_done);
	free(p.name_done);
	free(p.mapping_done);
	sptd_query_stacks_destroy(p.stacks);
	return rc < 0 ? rc : 0;
}
