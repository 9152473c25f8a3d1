/* perfetto_events.c — TrackEvents on SEQ_TRACK: call slices (SLICE_BEGIN/
 * SLICE_END per thread track, nested by time), samples (instant events whose
 * "stack" annotation is the call stack, innermost frame first), gaps (slices
 * on the per-CPU "sysptd gaps" tracks) and triggers (instants on the global
 * track and on the CPU's).
 *
 * Names are interned per sequence: a slice's name is its symbol (event_names,
 * iid per symbol id), annotation names are a fixed table, and repeated
 * annotation values (symbol, dso, kind, stacks) are interned strings.  Each
 * new iid is defined in the InternedData of the first packet that uses it. */
#include <errno.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"

#define TP_INTERNED     12
#define TP_TRACK_EVENT  11
/* InternedData */
#define ID_EVENT_NAMES  2
#define ID_ARG_NAMES    3
#define ID_ARG_STRINGS  29
/* TrackEvent */
#define TE_ARGS         4
#define TE_TYPE         9
#define TE_NAME_IID     10
#define TE_TRACK        11
#define TE_NAME         23
#define TYPE_BEGIN      1
#define TYPE_END        2
#define TYPE_INSTANT    3
/* DebugAnnotation */
#define DA_NAME_IID     1
#define DA_BOOL         2
#define DA_INT          4
#define DA_STRING       6
#define DA_STRING_IID   17

/* Key spaces of pf->strings. */
#define KEY_DSO     1
#define KEY_KIND    2
#define KEY_SYMBOL  3
#define KEY_TRUNC   4
#define STR_KEY(space, id) ((int64_t)(((uint64_t)(space) << 56) | ((uint64_t)(id) & 0xffffffffffffffULL)))
/* Event name key of a slice whose symbol is unknown. */
#define NAME_UNKNOWN INT64_MIN
/* "blocked: FUNC" names of off-CPU instants: keyed apart from symbol ids */
#define NAME_BLOCKED(SYM) (((int64_t)1 << 62) | ((SYM) & (((int64_t)1 << 62) - 1)))
#define NAME_BLOCKED_UNKNOWN (INT64_MIN + 1)

/* Interned keys hold 56 bits of a symbol or dso id (STR_KEY) and keep
 * the values beyond them for their own names (NAME_*): an id outside -1
 * (no dso) to 2^56 - 2 from a hostile file would take another's name.  0
 * for a NULL or usable id of column @col, else -EBADMSG naming it. */
static int key_check(struct sptd_query_pf *pf, struct sptd_store_stmt *stmt, int col,
                     const char *what)
{
	int64_t id = sptd_store_column_int(stmt, col);

	if (sptd_store_column_type(stmt, col) == SPTD_STORE_NULL ||
	    (id >= -1 && id < (int64_t)0xffffffffffffffLL))
		return 0;
	return sptd_query_pf_fail(pf, -EBADMSG, "%s %lld is out of range (-1 to 2^56 - 2): "
	                          "the file was damaged or written by something else",
	                          what, (long long)id);
}

static const char *const arg_names[SPTD_PF_ARG_COUNT_] = {
	[SPTD_PF_ARG_SYMBOL] = "symbol",     [SPTD_PF_ARG_DSO] = "dso",
	[SPTD_PF_ARG_KIND] = "kind",         [SPTD_PF_ARG_FLAGS] = "flags",
	[SPTD_PF_ARG_INFERRED] = "inferred", [SPTD_PF_ARG_TRUNCATED] = "truncated",
	[SPTD_PF_ARG_STACK] = "stack",       [SPTD_PF_ARG_CPU] = "cpu",
	[SPTD_PF_ARG_REASON] = "reason",     [SPTD_PF_ARG_DETAIL] = "detail",
	[SPTD_PF_ARG_BLOCKED_NS] = "blocked_ns",
	[SPTD_PF_ARG_PAYLOAD] = "payload",   [SPTD_PF_ARG_IP] = "ip",
};

static const char *const kinds[] = { "user", "kernel", "syscall", "irq" };

/* Start a TrackEvent packet's interned part; the fixed annotation names go
 * with the first one. */
static void intern_begin(struct sptd_query_pf *pf)
{
	int i;

	sptd_query_pb_reset(&pf->interned);
	if (pf->arg_names_done)
		return;
	for (i = 1; i < SPTD_PF_ARG_COUNT_; i++) {
		sptd_query_pb_begin(&pf->interned, ID_ARG_NAMES);
		sptd_query_pb_uint(&pf->interned, 1, (uint64_t)i);
		sptd_query_pb_string(&pf->interned, 2, arg_names[i]);
		sptd_query_pb_end(&pf->interned);
	}
	pf->arg_names_done = 1;
}

/* iid of @key in @map, defining it in the packet's InternedData (@field:
 * event_names or debug_annotation_string_values) with text @s if new. */
static int intern(struct sptd_query_pf *pf, struct sptd_query_imap *map,
                  uint32_t field, int64_t key, const char *s, uint64_t *iid)
{
	uint64_t id = sptd_query_imap_get(map, key);
	int rc;

	*iid = 0;
	if (!id) {
		id = pf->next_iid++;
		rc = sptd_query_imap_put(map, key, id);
		if (rc < 0)
			return sptd_query_pf_fail(pf, rc, "out of memory interning names");
		sptd_query_pb_begin(&pf->interned, field);
		sptd_query_pb_uint(&pf->interned, 1, id);
		sptd_query_pb_string(&pf->interned, 2, s ? s : "");
		sptd_query_pb_end(&pf->interned);
	}
	*iid = id;
	return 0;
}

/* Packet header + interned data, then open the TrackEvent. */
static void event_open(struct sptd_query_pf *pf, int64_t ts, uint64_t track, int type)
{
	struct sptd_query_pb *pb = &pf->pkt;

	sptd_query_pf_track_packet(pf, ts);
	if (pf->interned.len || pf->interned.err) {
		sptd_query_pb_begin(pb, TP_INTERNED);
		sptd_query_pb_raw(pb, &pf->interned);
		sptd_query_pb_end(pb);
	}
	sptd_query_pb_begin(pb, TP_TRACK_EVENT);
	sptd_query_pb_uint(pb, TE_TYPE, (uint64_t)type);
	sptd_query_pb_uint(pb, TE_TRACK, track);
}

static void arg_iid(struct sptd_query_pb *pb, int name, uint64_t string_iid)
{
	sptd_query_pb_begin(pb, TE_ARGS);
	sptd_query_pb_uint(pb, DA_NAME_IID, (uint64_t)name);
	sptd_query_pb_uint(pb, DA_STRING_IID, string_iid);
	sptd_query_pb_end(pb);
}

static void arg_str(struct sptd_query_pb *pb, int name, const char *value)
{
	sptd_query_pb_begin(pb, TE_ARGS);
	sptd_query_pb_uint(pb, DA_NAME_IID, (uint64_t)name);
	sptd_query_pb_string(pb, DA_STRING, value);
	sptd_query_pb_end(pb);
}

static void arg_int(struct sptd_query_pb *pb, int name, int64_t value)
{
	sptd_query_pb_begin(pb, TE_ARGS);
	sptd_query_pb_uint(pb, DA_NAME_IID, (uint64_t)name);
	sptd_query_pb_int(pb, DA_INT, value);
	sptd_query_pb_end(pb);
}

/* ---- nesting: one open-slice stack for the track being written ---------- */

struct nest {
	uint64_t track;      /* uuid of the track the stack belongs to */
	int64_t *ends;       /* end ts of each open slice, outermost first */
	size_t depth, cap;   /* open slices, room */
	int64_t last_ts;     /* last timestamp written on the track */
};

static int nest_end_one(struct sptd_query_pf *pf, struct nest *n)
{
	int64_t end = n->ends[--n->depth];

	if (end < n->last_ts)
		end = n->last_ts;
	n->last_ts = end;
	intern_begin(pf);
	event_open(pf, end, n->track, TYPE_END);
	sptd_query_pb_end(&pf->pkt);
	return sptd_query_pf_flush(pf);
}

/* Close every slice of the current track. */
static int nest_close_all(struct sptd_query_pf *pf, struct nest *n)
{
	int rc = 0;

	while (n->depth && rc >= 0)
		rc = nest_end_one(pf, n);
	return rc;
}

/* Before a slice [ts, *end] at @depth (-1: unknown) on @track: switch track
 * if needed, close what ended, clamp *end inside the parent, push it. */
static int nest_push(struct sptd_query_pf *pf, struct nest *n, uint64_t track,
                     int64_t ts, int64_t *end, int depth)
{
	int rc;

	if (n->track != track) {
		if ((rc = nest_close_all(pf, n)) < 0)
			return rc;
		n->track = track;
		n->last_ts = INT64_MIN;
	}
	while (n->depth && (n->ends[n->depth - 1] < ts ||
	                    (n->ends[n->depth - 1] == ts && depth >= 0 &&
	                     (int64_t)n->depth > depth)))
		if ((rc = nest_end_one(pf, n)) < 0)
			return rc;
	if (n->depth && *end > n->ends[n->depth - 1]) {
		*end = n->ends[n->depth - 1];
		pf->stats->clamped++;
	}
	if (n->depth == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 64;
		int64_t *ends = realloc(n->ends, cap * sizeof(*ends));

		if (!ends)
			return sptd_query_pf_fail(pf, -ENOMEM, "out of memory");
		n->ends = ends;
		n->cap = cap;
	}
	n->ends[n->depth++] = *end;
	n->last_ts = ts;
	return 0;
}

int sptd_query_pf_write_slices(struct sptd_query_pf *pf)
{
	static const char sql[] =
		"SELECT s.utid, s.ts, s.dur, s.depth, s.kind, s.flags, s.symbol_id, "
		"       sym.name, sym.dso_id, d.path "
		"FROM slice s LEFT JOIN symbol sym ON sym.id = s.symbol_id "
		"LEFT JOIN dso d ON d.id = sym.dso_id "
		"ORDER BY s.utid, s.ts, s.depth, s.id";
	struct sptd_store_stmt *stmt = NULL;
	struct nest n = { .track = 0 };
	uint64_t total = sptd_query_pf_count(pf, "slice"), done = 0;
	int rc;

	rc = sptd_query_pf_prepare(pf, "slice", sql, &stmt);
	if (rc < 0)
		goto out;
	sptd_query_pf_progress(pf, "slice", 0, total);
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t ts = sptd_store_column_int(stmt, 1);
		int64_t dur = sptd_store_column_int(stmt, 2);
		/* rows are the file's: an end past INT64_MAX is held there */
		int64_t end = dur > 0 && ts > INT64_MAX - dur ? INT64_MAX : ts + (dur > 0 ? dur : 0);
		int depth = (int)sptd_store_column_int(stmt, 3);
		const char *kind = sptd_store_column_text(stmt, 4);
		int flags = (int)sptd_store_column_int(stmt, 5);
		int has_sym = sptd_store_column_type(stmt, 6) != SPTD_STORE_NULL;
		int64_t sym = sptd_store_column_int(stmt, 6);
		const char *sym_name = sptd_store_column_text(stmt, 7);
		const char *dso = sptd_store_column_text(stmt, 9);
		uint64_t track, name_iid, iid;
		struct sptd_query_pb *pb = &pf->pkt;
		size_t k;

		if (++done % 65536 == 0)
			sptd_query_pf_progress(pf, "slice", done, total);
		track = sptd_store_column_type(stmt, 0) == SPTD_STORE_NULL
		        ? SPTD_PF_UUID(SPTD_PF_TRACK_NOTHREAD, 0)
		        : SPTD_PF_UUID(SPTD_PF_TRACK_THREAD, sptd_store_column_int(stmt, 0));
		if ((rc = key_check(pf, stmt, 6, "symbol id")) < 0 ||
		    (rc = key_check(pf, stmt, 8, "dso id")) < 0)
			goto out;
		if ((rc = nest_push(pf, &n, track, ts, &end, depth)) < 0)
			goto out;
		intern_begin(pf);
		if (has_sym && sym_name)
			rc = intern(pf, &pf->names, ID_EVENT_NAMES, sym, sym_name, &name_iid);
		else
			rc = intern(pf, &pf->names, ID_EVENT_NAMES, NAME_UNKNOWN, "[unknown]",
			            &name_iid);
		if (rc < 0)
			goto out;
		/* interned annotation values, defined before the event opens */
		uint64_t sym_iid = 0, dso_iid = 0, kind_iid = 0;

		if (has_sym && sym_name &&
		    (rc = intern(pf, &pf->strings, ID_ARG_STRINGS, STR_KEY(KEY_SYMBOL, sym),
		                 sym_name, &sym_iid)) < 0)
			goto out;
		if (dso && (rc = intern(pf, &pf->strings, ID_ARG_STRINGS,
		                        STR_KEY(KEY_DSO, sptd_store_column_int(stmt, 8)),
		                        dso, &dso_iid)) < 0)
			goto out;
		for (k = 0; kind && k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (!strcmp(kind, kinds[k]) &&
			    (rc = intern(pf, &pf->strings, ID_ARG_STRINGS, STR_KEY(KEY_KIND, k),
			                 kinds[k], &kind_iid)) < 0)
				goto out;
		iid = 0;
		if (flags & (SPTD_SLICE_F_START_TRUNCATED | SPTD_SLICE_F_END_TRUNCATED)) {
			int t = flags & 3;
			static const char *const trunc[] = { "", "start", "end", "both" };

			if ((rc = intern(pf, &pf->strings, ID_ARG_STRINGS, STR_KEY(KEY_TRUNC, t),
			                 trunc[t], &iid)) < 0)
				goto out;
		}
		event_open(pf, ts, track, TYPE_BEGIN);
		sptd_query_pb_uint(pb, TE_NAME_IID, name_iid);
		if (sym_iid)
			arg_iid(pb, SPTD_PF_ARG_SYMBOL, sym_iid);
		if (dso_iid)
			arg_iid(pb, SPTD_PF_ARG_DSO, dso_iid);
		if (kind_iid)
			arg_iid(pb, SPTD_PF_ARG_KIND, kind_iid);
		else if (kind)
			arg_str(pb, SPTD_PF_ARG_KIND, kind);
		if (flags) {
			arg_int(pb, SPTD_PF_ARG_FLAGS, flags);
			if (flags & SPTD_SLICE_F_INFERRED) {
				sptd_query_pb_begin(pb, TE_ARGS);
				sptd_query_pb_uint(pb, DA_NAME_IID, SPTD_PF_ARG_INFERRED);
				sptd_query_pb_uint(pb, DA_BOOL, 1);
				sptd_query_pb_end(pb);
			}
			if (iid)
				arg_iid(pb, SPTD_PF_ARG_TRUNCATED, iid);
		}
		sptd_query_pb_end(pb);
		if ((rc = sptd_query_pf_flush(pf)) < 0)
			goto out;
		pf->stats->slices++;
	}
	if (rc < 0) {
		rc = sptd_query_pf_step_fail(pf, "slice", rc);
		goto out;
	}
	rc = nest_close_all(pf, &n);
out:
	sptd_store_finalize(stmt);
	free(n.ends);
	return rc;
}

/* The interned string of callsite @cs's stack text (made and interned the
 * first time), in *@iid.  0 or an error already reported. */
static int stack_iid_of(struct sptd_query_pf *pf, int64_t cs, uint64_t *iid)
{
	char *text = NULL;
	int rc;

	*iid = sptd_query_imap_get(&pf->stacks, cs);
	if (*iid)
		return 0;
	if ((rc = sptd_query_pf_stack_text(pf, cs, &text)) < 0)
		return rc;
	rc = intern(pf, &pf->stacks, ID_ARG_STRINGS, cs, text, iid);
	free(text);
	return rc;
}

int sptd_query_pf_write_samples(struct sptd_query_pf *pf)
{
	static const char sql[] =
		"SELECT s.ts, s.cpu, s.utid, s.callsite_id, c.symbol_id, sym.name "
		"FROM sample s LEFT JOIN callsite c ON c.id = s.callsite_id "
		"LEFT JOIN symbol sym ON sym.id = c.symbol_id ORDER BY s.ts, s.id";
	struct sptd_store_stmt *stmt = NULL;
	uint64_t total = sptd_query_pf_count(pf, "sample"), done = 0;
	int rc;

	if ((rc = sptd_query_pf_prepare(pf, "sample", sql, &stmt)) < 0)
		goto out;
	sptd_query_pf_progress(pf, "sample", 0, total);
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t ts = sptd_store_column_int(stmt, 0);
		int has_cs = sptd_store_column_type(stmt, 3) != SPTD_STORE_NULL;
		int64_t cs = sptd_store_column_int(stmt, 3);
		int has_sym = sptd_store_column_type(stmt, 4) != SPTD_STORE_NULL &&
		              sptd_store_column_text(stmt, 5);
		uint64_t track, name_iid, stack_iid = 0;

		if (++done % 65536 == 0)
			sptd_query_pf_progress(pf, "sample", done, total);
		track = sptd_store_column_type(stmt, 2) == SPTD_STORE_NULL
		        ? SPTD_PF_UUID(SPTD_PF_TRACK_NOTHREAD, 0)
		        : SPTD_PF_UUID(SPTD_PF_TRACK_THREAD, sptd_store_column_int(stmt, 2));
		if ((rc = key_check(pf, stmt, 4, "symbol id")) < 0)
			goto out;
		intern_begin(pf);
		rc = has_sym ? intern(pf, &pf->names, ID_EVENT_NAMES,
		                      sptd_store_column_int(stmt, 4),
		                      sptd_store_column_text(stmt, 5), &name_iid)
		             : intern(pf, &pf->names, ID_EVENT_NAMES, NAME_UNKNOWN,
		                      "[unknown]", &name_iid);
		if (rc < 0)
			goto out;
		if (has_cs && (rc = stack_iid_of(pf, cs, &stack_iid)) < 0)
			goto out;
		event_open(pf, ts, track, TYPE_INSTANT);
		sptd_query_pb_uint(&pf->pkt, TE_NAME_IID, name_iid);
		if (stack_iid)
			arg_iid(&pf->pkt, SPTD_PF_ARG_STACK, stack_iid);
		arg_int(&pf->pkt, SPTD_PF_ARG_CPU, sptd_store_column_int(stmt, 1));
		sptd_query_pb_end(&pf->pkt);
		if ((rc = sptd_query_pf_flush(pf)) < 0)
			goto out;
		pf->stats->samples++;
	}
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, "sample", rc);
out:
	sptd_store_finalize(stmt);
	return rc;
}

int sptd_query_pf_write_gaps(struct sptd_query_pf *pf)
{
	struct sptd_store_stmt *stmt = NULL;
	struct nest n = { .track = 0 };
	int rc;

	rc = sptd_query_pf_prepare(pf, "gap",
	                           "SELECT cpu, ts, dur, reason FROM gap "
	                           "ORDER BY cpu, ts, dur DESC, id", &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t ts = sptd_store_column_int(stmt, 1);
		int64_t dur = sptd_store_column_int(stmt, 2);
		/* rows are the file's: an end past INT64_MAX is held there */
		int64_t end = dur > 0 && ts > INT64_MAX - dur ? INT64_MAX : ts + (dur > 0 ? dur : 0);
		uint64_t track = sptd_store_column_type(stmt, 0) == SPTD_STORE_NULL
		                 ? SPTD_PF_UUID(SPTD_PF_TRACK_GAP, 0)
		                 : SPTD_PF_UUID(SPTD_PF_TRACK_GAP,
		                                (uint64_t)sptd_store_column_int(stmt, 0) + 1);
		const char *reason = sptd_store_column_text(stmt, 3);

		if ((rc = nest_push(pf, &n, track, ts, &end, -1)) < 0)
			goto out;
		intern_begin(pf);
		event_open(pf, ts, track, TYPE_BEGIN);
		sptd_query_pb_string(&pf->pkt, TE_NAME, reason ? reason : "gap");
		sptd_query_pb_end(&pf->pkt);
		if ((rc = sptd_query_pf_flush(pf)) < 0)
			goto out;
		pf->stats->gaps++;
	}
	if (rc < 0) {
		rc = sptd_query_pf_step_fail(pf, "gap", rc);
		goto out;
	}
	rc = nest_close_all(pf, &n);
out:
	sptd_store_finalize(stmt);
	free(n.ends);
	return rc;
}

static int trigger_instant(struct sptd_query_pf *pf, int64_t ts, uint64_t track,
                           const char *name, const char *detail, int64_t cpu)
{
	intern_begin(pf);
	event_open(pf, ts, track, TYPE_INSTANT);
	sptd_query_pb_string(&pf->pkt, TE_NAME, name);
	if (detail)
		arg_str(&pf->pkt, SPTD_PF_ARG_DETAIL, detail);
	if (cpu >= 0)
		arg_int(&pf->pkt, SPTD_PF_ARG_CPU, cpu);
	sptd_query_pb_end(&pf->pkt);
	return sptd_query_pf_flush(pf);
}

int sptd_query_pf_write_triggers(struct sptd_query_pf *pf)
{
	struct sptd_store_stmt *stmt = NULL;
	char name[160];
	int rc;

	rc = sptd_query_pf_prepare(pf, "trigger",
	                           "SELECT ts, cpu, kind, detail FROM trigger ORDER BY ts, id",
	                           &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t ts = sptd_store_column_int(stmt, 0);
		int has_cpu = sptd_store_column_type(stmt, 1) != SPTD_STORE_NULL;
		int64_t cpu = has_cpu ? sptd_store_column_int(stmt, 1) : -1;
		const char *kind = sptd_store_column_text(stmt, 2);
		const char *detail = sptd_store_column_text(stmt, 3);

		snprintf(name, sizeof(name), "trigger: %s", kind ? kind : "?");
		rc = trigger_instant(pf, ts, SPTD_PF_UUID(SPTD_PF_TRACK_TRIGGER, 0), name,
		                     detail, cpu);
		if (rc >= 0 && cpu >= 0)
			rc = trigger_instant(pf, ts,
			                     SPTD_PF_UUID(SPTD_PF_TRACK_TRIGGER, (uint64_t)cpu + 1),
			                     name, detail, cpu);
		if (rc < 0)
			goto out;
		pf->stats->triggers++;
	}
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, "trigger", rc);
out:
	sptd_store_finalize(stmt);
	return rc;
}

/* Where threads waited (--offcpu): an instant "blocked: FUNC" on the
 * thread's track where each linked blocking thread_state row begins, with
 * the stack and the time it stayed blocked, beside Perfetto's own thread
 * state (built from the switches): the why next to the what. */
int sptd_query_pf_write_offcpu(struct sptd_query_pf *pf)
{
	static const char sql[] =
		"SELECT ts.ts, ts.utid, ts.callsite_id, ts.blocked_function, ts.dur, ts.state, "
		" (SELECT id FROM symbol WHERE name = ts.blocked_function LIMIT 1) "
		"FROM thread_state ts WHERE ts.callsite_id IS NOT NULL ORDER BY ts.ts, ts.id";
	struct sptd_store_stmt *stmt = NULL;
	int rc;

	if ((rc = sptd_query_pf_prepare(pf, "thread_state", sql, &stmt)) < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t ts = sptd_store_column_int(stmt, 0), cs = sptd_store_column_int(stmt, 2);
		const char *fn = sptd_store_column_text(stmt, 3);
		int has_sym = sptd_store_column_type(stmt, 6) != SPTD_STORE_NULL && fn;
		uint64_t name_iid, stack_iid;
		char name[600];   /* a kernel symbol name is at most 512 bytes */

		if (sptd_store_column_type(stmt, 1) == SPTD_STORE_NULL) {
			pf->stats->skipped++;
			continue;
		}
		if ((rc = key_check(pf, stmt, 6, "symbol id")) < 0)
			goto out;
		snprintf(name, sizeof(name), "blocked: %s", fn ? fn : "[unknown]");
		intern_begin(pf);
		rc = intern(pf, &pf->names, ID_EVENT_NAMES,
		            has_sym ? NAME_BLOCKED(sptd_store_column_int(stmt, 6)) : NAME_BLOCKED_UNKNOWN,
		            has_sym ? name : "blocked: [unknown]", &name_iid);
		if (rc < 0)
			goto out;
		if ((rc = stack_iid_of(pf, cs, &stack_iid)) < 0)
			goto out;
		event_open(pf, ts, SPTD_PF_UUID(SPTD_PF_TRACK_THREAD, sptd_store_column_int(stmt, 1)),
		           TYPE_INSTANT);
		sptd_query_pb_uint(&pf->pkt, TE_NAME_IID, name_iid);
		arg_iid(&pf->pkt, SPTD_PF_ARG_STACK, stack_iid);
		arg_int(&pf->pkt, SPTD_PF_ARG_BLOCKED_NS, sptd_store_column_int(stmt, 4));
		sptd_query_pb_end(&pf->pkt);
		if ((rc = sptd_query_pf_flush(pf)) < 0)
			goto out;
		pf->stats->offcpu++;
	}
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, "thread_state", rc);
out:
	sptd_store_finalize(stmt);
	return rc;
}

/* PTWRITE values (PT bit ptw): an instant "ptwrite" on the writing
 * thread's track, the value and the instruction as arguments. */
int sptd_query_pf_write_ptwrites(struct sptd_query_pf *pf)
{
	static const char sql[] =
		"SELECT ts, utid, payload, ip FROM ptwrite WHERE utid IS NOT NULL ORDER BY ts, id";
	struct sptd_store_stmt *stmt = NULL;
	int rc;

	if ((rc = sptd_query_pf_prepare(pf, "ptwrite", sql, &stmt)) < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t ts = sptd_store_column_int(stmt, 0);

		intern_begin(pf);
		event_open(pf, ts, SPTD_PF_UUID(SPTD_PF_TRACK_THREAD, sptd_store_column_int(stmt, 1)),
		           TYPE_INSTANT);
		sptd_query_pb_string(&pf->pkt, TE_NAME, "ptwrite");
		arg_int(&pf->pkt, SPTD_PF_ARG_PAYLOAD, sptd_store_column_int(stmt, 2));
		if (sptd_store_column_type(stmt, 3) != SPTD_STORE_NULL)
			arg_int(&pf->pkt, SPTD_PF_ARG_IP, sptd_store_column_int(stmt, 3));
		sptd_query_pb_end(&pf->pkt);
		if ((rc = sptd_query_pf_flush(pf)) < 0)
			goto out;
		pf->stats->ptwrites++;
	}
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, "ptwrite", rc);
out:
	sptd_store_finalize(stmt);
	return rc;
}

/* Watchpoint hits: an instant "watch: FUNCTION" on the writing thread's
 * track (tid -> its thread row), the instruction, the CPU and what the
 * store did as arguments. */
struct hit_writer {
	struct sptd_query_pf *pf;
	int err;                /* the first failure (pf->err set) */
};

static int write_hit(void *ctx, const struct sptd_store_watch_hit_thread_row *hit)
{
	const struct sptd_store_watch_hit_row *row = &hit->hit;
	int64_t utid = hit->utid;
	struct hit_writer *w = ctx;
	struct sptd_query_pf *pf = w->pf;
	char name[SPTD_QUERY_NAME_MAX + 16], detail[160];
	int rc;

	snprintf(name, sizeof(name), "watch: %s", row->function ? row->function : "[unknown]");
	if (row->watch)
		snprintf(detail, sizeof(detail), "tid %d: 0x%" PRIx64 " -> 0x%" PRIx64 "%s", row->tid,
		         row->old_value, row->new_value, row->silent == 1 ? " (silent)" : "");
	else
		snprintf(detail, sizeof(detail), "tid %d", row->tid);
	intern_begin(pf);
	event_open(pf, row->ts, utid >= 0 ? SPTD_PF_UUID(SPTD_PF_TRACK_THREAD, utid)
	                                  : SPTD_PF_UUID(SPTD_PF_TRACK_NOTHREAD, 0), TYPE_INSTANT);
	sptd_query_pb_string(&pf->pkt, TE_NAME, name);
	arg_int(&pf->pkt, SPTD_PF_ARG_IP, (int64_t)row->ip);
	arg_int(&pf->pkt, SPTD_PF_ARG_CPU, row->cpu);
	arg_str(&pf->pkt, SPTD_PF_ARG_DETAIL, detail);
	sptd_query_pb_end(&pf->pkt);
	if ((rc = sptd_query_pf_flush(pf)) < 0)
		return w->err = rc;
	pf->stats->watch_hits++;
	return 0;
}

int sptd_query_pf_write_watch_hits(struct sptd_query_pf *pf)
{
	struct hit_writer w = { .pf = pf };
	int rc;

	if (!sptd_query_pf_count(pf, "watch_hit"))
		return 0;
	rc = SPTD_STORE_EACH(pf->st, watch_hit_thread, write_hit, &w);
	if (w.err)
		return w.err;
	return rc < 0 ? sptd_query_pf_step_fail(pf, "watch_hit", rc) : 0;
}
