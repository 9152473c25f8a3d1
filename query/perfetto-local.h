/* perfetto-local.h — internals of the Perfetto/JSON exporter (query/perfetto*.c)
 * and of the small protobuf writer it uses (query/pb.c).
 *
 * Divisions:
 *   pb.c               growable protobuf buffer: varint, zigzag, tags,
 *                      nested messages, packed arrays
 *   perfetto_intern.c  int64 -> iid map and string -> index map
 *   perfetto_export.c  entry points: the orchestrator, calls the writers
 *   perfetto_common.c  what the writers share (errors, statements,
 *                      flushing, progress, counts, stacks); calls no writer
 *   perfetto_meta.c    window and clock from meta; ClockSnapshot, SystemInfo
 *   perfetto_sched.c   per-CPU FtraceEventBundles (compact_sched, irq)
 *   perfetto_tracks.c  ProcessTree and TrackDescriptors
 *   perfetto_events.c  TrackEvents: slices, samples, gaps, triggers
 *   perfetto_profile.c PerfSample packets: samples as Perfetto's CPU profile
 *   perfetto_json.c    Chrome trace-event JSON
 *   pprof.c            the samples as a pprof profile (gzipped profile.proto)
 *   stacks.c           callsite chains in memory (shared with flame graphs)
 */
#ifndef SPTD_PERFETTO_LOCAL_H
#define SPTD_PERFETTO_LOCAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "query-local.h"
#include "sptd_query.h"
#include "sptd_store.h"

/* ---- protobuf writer (pb.c) ------------------------------------------------ */

/* Deepest nesting of length-delimited messages one buffer supports. */
#define SPTD_PB_MAX_DEPTH 8
/* Largest body of one nested message: its length is kept in at most 4 bytes. */
#define SPTD_PB_MAX_NESTED ((size_t)1 << 28)

/* Protobuf wire types. */
#define SPTD_PB_VARINT 0
#define SPTD_PB_I64    1
#define SPTD_PB_LEN    2
#define SPTD_PB_I32    5

/* A message being encoded.  Errors are sticky: after the first failure every
 * call is a no-op and @err says why, so encoders check once at the end. */
struct sptd_query_pb {
	uint8_t *data;                     /* encoded bytes */
	size_t len;                        /* bytes used */
	size_t cap;                        /* bytes allocated */
	size_t open[SPTD_PB_MAX_DEPTH];    /* offsets of open nested bodies */
	int depth;                         /* nested messages open */
	int err;                           /* 0, -ENOMEM or -E2BIG */
};

void sptd_query_pb_init(struct sptd_query_pb *pb);
/* Frees the bytes; accepts a zeroed buffer. */
void sptd_query_pb_fini(struct sptd_query_pb *pb);
/* Forget the content (keeps the allocation). */
void sptd_query_pb_reset(struct sptd_query_pb *pb);
/* Unsigned LEB128 with no tag (packed array elements, lengths). */
void sptd_query_pb_raw_varint(struct sptd_query_pb *pb, uint64_t v);
/* Zigzag mapping of sint32/sint64. */
uint64_t sptd_query_pb_zigzag(int64_t v);
/* Tag + varint: uint32/uint64/enum/bool fields. */
void sptd_query_pb_uint(struct sptd_query_pb *pb, uint32_t field, uint64_t v);
/* Tag + varint of the two's complement: int32/int64 fields. */
void sptd_query_pb_int(struct sptd_query_pb *pb, uint32_t field, int64_t v);
/* Tag + length + bytes: bytes/string fields. */
void sptd_query_pb_bytes(struct sptd_query_pb *pb, uint32_t field,
                         const void *bytes, size_t len);
/* A string field; NULL writes "". */
void sptd_query_pb_string(struct sptd_query_pb *pb, uint32_t field, const char *s);
/* @len bytes of text as a string field, invalid UTF-8 replaced by U+FFFD. */
void sptd_query_pb_text(struct sptd_query_pb *pb, uint32_t field, const char *s, size_t len);
/* Open a nested message in @field; close with sptd_query_pb_end(). */
void sptd_query_pb_begin(struct sptd_query_pb *pb, uint32_t field);
void sptd_query_pb_end(struct sptd_query_pb *pb);
/* Append the fields already encoded in @fields (their tags included). */
void sptd_query_pb_raw(struct sptd_query_pb *pb, const struct sptd_query_pb *fields);
/* A packed repeated field whose elements were encoded into @body. Nothing
 * is written for an empty @body. */
void sptd_query_pb_packed(struct sptd_query_pb *pb, uint32_t field,
                          const struct sptd_query_pb *body);
/* Write @pb as one field @field (a Trace's `packet = 1`) to @out, then
 * reset it.  Adds the bytes written to *@bytes.  -EIO on a write error,
 * -EINVAL if a nested message is still open, or the buffer's sticky error. */
int sptd_query_pb_flush(struct sptd_query_pb *pb, uint32_t field, FILE *out,
                        uint64_t *bytes);

/* ---- intern maps (perfetto_intern.c) --------------------------------------- */

/* int64 key -> small positive id, assigned in order of first use. */
struct sptd_query_imap {
	int64_t *keys;      /* open-addressing slots */
	uint64_t *vals;     /* 0: empty slot */
	size_t cap;         /* slots, a power of two */
	size_t count;       /* keys stored */
};

void sptd_query_imap_fini(struct sptd_query_imap *m);
/* The id of @key (> 0), or 0 if absent. */
uint64_t sptd_query_imap_get(const struct sptd_query_imap *m, int64_t key);
/* Store @key -> @val (> 0).  -ENOMEM. */
int sptd_query_imap_put(struct sptd_query_imap *m, int64_t key, uint64_t val);

/* The string -> index map (compact_sched comm tables) is in query-local.h. */

/* ---- the exporter ------------------------------------------------------------ */

/* Trusted packet sequence ids used in the file. */
#define SPTD_PF_SEQ_META   1   /* clock snapshot, system info, process tree */
#define SPTD_PF_SEQ_FTRACE 2   /* ftrace bundles */
#define SPTD_PF_SEQ_TRACK  3   /* track descriptors and track events (interned) */
#define SPTD_PF_SEQ_PROFILE 4  /* PerfSample packets (interned callstacks) */

/* Track uuids: kind in the top byte, an id below. */
#define SPTD_PF_UUID(kind, id) (((uint64_t)(kind) << 56) | ((uint64_t)(id) & 0xffffffffffffffULL))
#define SPTD_PF_TRACK_THREAD   1   /* id: utid */
#define SPTD_PF_TRACK_PROCESS  2   /* id: upid */
#define SPTD_PF_TRACK_GAP      3   /* id: cpu + 1 (0: gaps of no CPU) */
#define SPTD_PF_TRACK_TRIGGER  4   /* id: 0 global, cpu + 1 per CPU */
#define SPTD_PF_TRACK_NOTHREAD 5   /* slices whose thread is unknown */

/* Fixed interned debug-annotation names (iid = enum value). */
enum sptd_pf_arg {
	SPTD_PF_ARG_SYMBOL = 1,
	SPTD_PF_ARG_DSO,
	SPTD_PF_ARG_KIND,
	SPTD_PF_ARG_FLAGS,
	SPTD_PF_ARG_INFERRED,
	SPTD_PF_ARG_TRUNCATED,
	SPTD_PF_ARG_STACK,
	SPTD_PF_ARG_CPU,
	SPTD_PF_ARG_REASON,
	SPTD_PF_ARG_DETAIL,
	SPTD_PF_ARG_BLOCKED_NS,
	SPTD_PF_ARG_PAYLOAD,
	SPTD_PF_ARG_IP,
	SPTD_PF_ARG_COUNT_, /* one past the last */
};

/* State of one export. */
struct sptd_query_pf {
	struct sptd_store *st;                /* incident, read-only */
	FILE *out;                            /* where the trace goes */
	struct sptd_query_export_stats *stats;/* counts, never NULL inside */
	char *err;                            /* caller's message buffer */
	size_t errlen;                        /* its size */
	sptd_query_export_progress_fn progress; /* or NULL */
	void *progress_ctx;                   /* for @progress */
	struct sptd_query_pb pkt;             /* the packet being built */
	struct sptd_query_pb interned;        /* InternedData entries for pkt */
	int arg_names_done;                   /* debug annotation names interned */
	int64_t window_start, window_end;     /* ns, from meta (or data bounds) */
	int monotonic;                        /* meta clock is "monotonic" */
	int track_seq_started;                /* first packet of SEQ_TRACK written */
	int ftrace_seq_started;               /* first packet of SEQ_FTRACE written */
	uint64_t next_iid;                    /* next interned id on SEQ_TRACK */
	struct sptd_query_imap names;         /* symbol id -> event name iid */
	struct sptd_query_imap strings;       /* string key -> debug string iid */
	struct sptd_query_imap stacks;        /* callsite id -> debug string iid */
	int64_t stack_budget;                 /* frames stack texts may still hold;
	                                       * -1 until the first stack */
	int64_t stack_bytes;                  /* and bytes (SPTD_PF_STACK_BYTES) */
	struct sptd_query_stacks *chains;     /* callsite chains, loaded at the
	                                       * first stack text */
	struct sptd_query_frame *frames;      /* one walk of them */
};

/* Frames all the stack texts of one export may hold: per callsite row as
 * many as perf's default --max-stack (127) and a margin.  Each distinct
 * leaf's text holds its whole stack, so a hostile chain of N callsites,
 * each a sample's leaf, asked for N x 1024 frames: 2 GB of trace from a
 * 2 MB file. */
#define SPTD_PF_STACK_BUDGET(CALLSITES) ((int64_t)(CALLSITES) * 128 + ((int64_t)1 << 20))
/* Bytes they may hold: 8 a frame of that budget.  Names are whole up to
 * SPTD_QUERY_NAME_MAX, so a chain of kilobyte names would otherwise stay
 * within the frames and still make gigabytes. */
#define SPTD_PF_STACK_BYTES(CALLSITES) (SPTD_PF_STACK_BUDGET(CALLSITES) * 8)

/* ---- what every writer shares (perfetto_common.c) -------------------------- */

/* Write a formatted message to pf->err and return @rc. */
int sptd_query_pf_fail(struct sptd_query_pf *pf, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prepare @sql; on failure fill pf->err with the store's message naming
 * @what and return the error (-EBADMSG for a missing table/column). */
int sptd_query_pf_prepare(struct sptd_query_pf *pf, const char *what,
                          const char *sql, struct sptd_store_stmt **out);
/* A step error of @what -> pf->err. */
int sptd_query_pf_step_fail(struct sptd_query_pf *pf, const char *what, int rc);
/* Flush pf->pkt as one TracePacket, counting it. */
int sptd_query_pf_flush(struct sptd_query_pf *pf);
/* Report progress (no-op without a callback). */
void sptd_query_pf_progress(struct sptd_query_pf *pf, const char *phase,
                            uint64_t done, uint64_t total);
/* Row count of @table (0 when it is missing). */
uint64_t sptd_query_pf_count(struct sptd_query_pf *pf, const char *table);
/* Open a TracePacket on SEQ_TRACK at @ts: sets sequence id and flags (the
 * first one also clears incremental state and sets the clock default). */
void sptd_query_pf_track_packet(struct sptd_query_pf *pf, int64_t ts);
/* The ClockSnapshot clock id the incident's timestamps are in. */
uint32_t sptd_query_pf_clock_id(const struct sptd_query_pf *pf);
/* SQL of PT's power edges for both exports, by CPU and time: cpu, ts, kind
 * (0 a ratio from cpu_freq, 1 a C-state entered, 2 left), value (kHz; the
 * C-state number), the row id (ties). */
extern const char sptd_query_pf_power_sql[];
/* The call stack of @callsite as text, innermost frame first, one frame
 * per line ("symbol (dso)" or "0xADDR"); *text is freed by the caller.
 * The walk runs over the callsite chains loaded once (stacks.c). */
int sptd_query_pf_stack_text(struct sptd_query_pf *pf, int64_t callsite, char **text);

/* ---- the writers, called by perfetto_export.c only -------------------------- */

/* Window bounds (pf->window_start/end) from meta, else from the data
 * itself, and whether the incident clock is monotonic (perfetto_meta.c). */
int sptd_query_pf_read_window(struct sptd_query_pf *pf);
/* ClockSnapshot: the incident clock is declared equal to BOOTTIME (the
 * trace default, which ftrace data is read in) at the window start, so
 * every timestamp keeps its value (perfetto_meta.c). */
int sptd_query_pf_write_clock_snapshot(struct sptd_query_pf *pf);
/* SystemInfo.utsname: Perfetto decodes sched_switch prev_state by release
 * (perfetto_meta.c). */
int sptd_query_pf_write_system_info(struct sptd_query_pf *pf);
/* Phases of the protobuf export, in the order of the trace; each returns
 * 0 or a negative errno with pf->err set. */
int sptd_query_pf_write_process_tree(struct sptd_query_pf *pf); /* perfetto_tracks.c */
int sptd_query_pf_write_tracks(struct sptd_query_pf *pf);       /* perfetto_tracks.c */
int sptd_query_pf_write_sched(struct sptd_query_pf *pf);        /* perfetto_sched.c */
int sptd_query_pf_write_wakings(struct sptd_query_pf *pf);      /* perfetto_sched.c */
int sptd_query_pf_write_irqs(struct sptd_query_pf *pf);         /* perfetto_sched.c */
int sptd_query_pf_write_ftrace_events(struct sptd_query_pf *pf); /* perfetto_sched.c */
int sptd_query_pf_write_blocked(struct sptd_query_pf *pf);      /* perfetto_sched.c */
int sptd_query_pf_write_power(struct sptd_query_pf *pf);        /* perfetto_sched.c */
int sptd_query_pf_write_ptwrites(struct sptd_query_pf *pf);     /* perfetto_events.c */
int sptd_query_pf_write_slices(struct sptd_query_pf *pf);       /* perfetto_events.c */
int sptd_query_pf_write_samples(struct sptd_query_pf *pf);      /* perfetto_events.c */
int sptd_query_pf_write_offcpu(struct sptd_query_pf *pf);       /* perfetto_events.c */
int sptd_query_pf_write_watch_hits(struct sptd_query_pf *pf);   /* perfetto_events.c */
int sptd_query_pf_write_profile(struct sptd_query_pf *pf);      /* perfetto_profile.c */
int sptd_query_pf_write_gaps(struct sptd_query_pf *pf);         /* perfetto_events.c */
int sptd_query_pf_write_triggers(struct sptd_query_pf *pf);     /* perfetto_events.c */
/* The samples as a gzipped pprof profile, the whole export (pprof.c). */
int sptd_query_pf_write_pprof(struct sptd_query_pf *pf);
/* The whole Chrome trace-event JSON export (perfetto_json.c). */
int sptd_query_pf_write_json(struct sptd_query_pf *pf);

#endif /* SPTD_PERFETTO_LOCAL_H */
