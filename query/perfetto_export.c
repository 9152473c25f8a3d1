/* perfetto_export.c — sptd_query_export(): the order of the trace, the
 * metadata packets (ClockSnapshot, SystemInfo) and the helpers every phase
 * shares (errors, statements, flushing, progress).
 *
 * Field numbers are those of Perfetto's protos (protos/perfetto/trace/...);
 * tests/perfetto/sysptd_trace.proto lists every field written here. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"

/* TracePacket */
#define TP_TIMESTAMP        8
#define TP_SEQ_ID           10
#define TP_SEQ_FLAGS        13
#define TP_CLOCK_SNAPSHOT   6
#define TP_SYSTEM_INFO      45
#define TP_FIRST_ON_SEQ     87
#define SEQ_INCREMENTAL_STATE_CLEARED 1
/* ClockSnapshot */
#define CS_CLOCKS           1
#define CS_PRIMARY_CLOCK    2
#define CS_CLOCK_ID         1
#define CS_CLOCK_TS         2
#define CLOCK_MONOTONIC_ID  3
#define CLOCK_BOOTTIME_ID   6
/* SystemInfo / Utsname */
#define SI_UTSNAME          1
#define SI_NUM_CPUS         8
#define UTS_SYSNAME         1
#define UTS_VERSION         2
#define UTS_RELEASE         3
#define UTS_MACHINE         4

int sptd_query_pf_fail(struct sptd_query_pf *pf, int rc, const char *fmt, ...)
{
	va_list ap;

	if (pf->err && pf->errlen) {
		va_start(ap, fmt);
		vsnprintf(pf->err, pf->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int sptd_query_pf_prepare(struct sptd_query_pf *pf, const char *what,
                          const char *sql, struct sptd_store_stmt **out)
{
	int rc = sptd_store_prepare(pf->st, sql, out);

	if (rc < 0) {
		/* a missing table/column means the file is not a (complete) incident */
		if (rc == -EINVAL)
			rc = -EBADMSG;
		return sptd_query_pf_fail(pf, rc, "cannot read %s: %s", what,
		                          sptd_store_errmsg(pf->st));
	}
	return 0;
}

int sptd_query_pf_step_fail(struct sptd_query_pf *pf, const char *what, int rc)
{
	return sptd_query_pf_fail(pf, rc, "reading %s failed: %s", what,
	                          sptd_store_errmsg(pf->st));
}

int sptd_query_pf_flush(struct sptd_query_pf *pf)
{
	int rc = sptd_query_pb_flush(&pf->pkt, 1, pf->out, &pf->stats->bytes);

	if (rc == -EIO)
		return sptd_query_pf_fail(pf, rc, "writing the trace failed: %s",
		                          strerror(errno));
	if (rc < 0)
		return sptd_query_pf_fail(pf, rc, "encoding a packet failed: %s",
		                          strerror(-rc));
	pf->stats->packets++;
	return 0;
}

void sptd_query_pf_progress(struct sptd_query_pf *pf, const char *phase,
                            uint64_t done, uint64_t total)
{
	if (pf->progress)
		pf->progress(pf->progress_ctx, phase, done, total);
}

uint64_t sptd_query_pf_count(struct sptd_query_pf *pf, const char *table)
{
	char sql[128];
	int64_t n = 0;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM \"%s\"", table);
	if (sptd_store_query_int(pf->st, sql, &n) < 0 || n < 0)
		return 0;
	return (uint64_t)n;
}

int64_t sptd_query_pf_task_state(const char *state)
{
	int64_t bits = 0;
	const char *p;

	/* TASK_REPORT encoding of sched_switch prev_state (kernels >= 4.14),
	 * which Perfetto decodes for the release given in SystemInfo. */
	if (!state)
		return 0;
	for (p = state; *p; p++) {
		switch (*p) {
		case 'S': bits |= 0x01; break;
		case 'D': bits |= 0x02; break;
		case 'T': bits |= 0x04; break;
		case 't': bits |= 0x08; break;
		case 'X': bits |= 0x10; break;
		case 'Z': bits |= 0x20; break;
		case 'P': bits |= 0x40; break;
		case 'I': bits |= 0x80; break;
		case '+': bits |= 0x100; break; /* preempted: TASK_REPORT_MAX */
		default: break;                 /* 'R', '|', 'K', 'W', 'N'... */
		}
	}
	return bits;
}

void sptd_query_pf_track_packet(struct sptd_query_pf *pf, int64_t ts)
{
	struct sptd_query_pb *pb = &pf->pkt;

	sptd_query_pb_uint(pb, TP_TIMESTAMP, (uint64_t)(ts < 0 ? 0 : ts));
	sptd_query_pb_uint(pb, TP_SEQ_ID, SPTD_PF_SEQ_TRACK);
	if (!pf->track_seq_started) {
		/* first packet: clear incremental state, set the clock default */
		sptd_query_pb_uint(pb, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED | 2);
		sptd_query_pb_uint(pb, TP_FIRST_ON_SEQ, 1);
		sptd_query_pb_begin(pb, 59);           /* trace_packet_defaults */
		sptd_query_pb_uint(pb, 58, pf->monotonic ? CLOCK_MONOTONIC_ID
		                                         : CLOCK_BOOTTIME_ID);
		sptd_query_pb_end(pb);
		pf->track_seq_started = 1;
	} else {
		sptd_query_pb_uint(pb, TP_SEQ_FLAGS, 2); /* SEQ_NEEDS_INCREMENTAL_STATE */
	}
}

/* meta text into @buf, "" when absent. */
static void meta_text(struct sptd_query_pf *pf, const char *key, char *buf, size_t len)
{
	if (sptd_store_meta_get(pf->st, key, buf, len) < 0)
		buf[0] = '\0';
}

/* Window bounds from meta, else from the data itself. */
static int read_window(struct sptd_query_pf *pf)
{
	char clock[32];
	int64_t v;

	pf->window_start = 0;
	pf->window_end = 0;
	if (sptd_store_meta_get_int(pf->st, "window_start", &v) >= 0)
		pf->window_start = v;
	else if (sptd_store_query_int(pf->st,
	                              "SELECT min(t) FROM (SELECT min(ts) AS t FROM sched_slice "
	                              "UNION ALL SELECT min(ts) FROM slice UNION ALL "
	                              "SELECT min(ts) FROM sample UNION ALL SELECT min(ts) FROM irq_slice)",
	                              &v) >= 0)
		pf->window_start = v;
	if (sptd_store_meta_get_int(pf->st, "window_end", &v) >= 0)
		pf->window_end = v;
	meta_text(pf, "clock", clock, sizeof(clock));
	pf->monotonic = strcmp(clock, "monotonic") == 0;
	return 0;
}

/* ClockSnapshot: the incident clock is declared equal to BOOTTIME (the trace
 * default, which ftrace data is read in) at the window start, so every
 * timestamp keeps its value. */
static int write_clock_snapshot(struct sptd_query_pf *pf)
{
	struct sptd_query_pb *pb = &pf->pkt;
	uint64_t ts = (uint64_t)(pf->window_start < 0 ? 0 : pf->window_start);

	sptd_query_pb_uint(pb, TP_TIMESTAMP, ts);
	sptd_query_pb_uint(pb, TP_SEQ_ID, SPTD_PF_SEQ_META);
	sptd_query_pb_uint(pb, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	sptd_query_pb_uint(pb, TP_FIRST_ON_SEQ, 1);
	sptd_query_pb_begin(pb, TP_CLOCK_SNAPSHOT);
	sptd_query_pb_begin(pb, CS_CLOCKS);
	sptd_query_pb_uint(pb, CS_CLOCK_ID, CLOCK_BOOTTIME_ID);
	sptd_query_pb_uint(pb, CS_CLOCK_TS, ts);
	sptd_query_pb_end(pb);
	if (pf->monotonic) {
		sptd_query_pb_begin(pb, CS_CLOCKS);
		sptd_query_pb_uint(pb, CS_CLOCK_ID, CLOCK_MONOTONIC_ID);
		sptd_query_pb_uint(pb, CS_CLOCK_TS, ts);
		sptd_query_pb_end(pb);
	}
	sptd_query_pb_uint(pb, CS_PRIMARY_CLOCK, CLOCK_BOOTTIME_ID);
	sptd_query_pb_end(pb);
	return sptd_query_pf_flush(pf);
}

/* SystemInfo.utsname: Perfetto decodes sched_switch prev_state by release. */
static int write_system_info(struct sptd_query_pf *pf)
{
	struct sptd_query_pb *pb = &pf->pkt;
	char release[128], version[256], machine[64];
	int64_t cpus = 0;

	meta_text(pf, "kernel", release, sizeof(release));
	meta_text(pf, "kernel_version", version, sizeof(version));
	meta_text(pf, "machine", machine, sizeof(machine));
	sptd_query_pb_uint(pb, TP_TIMESTAMP,
	                   (uint64_t)(pf->window_start < 0 ? 0 : pf->window_start));
	sptd_query_pb_uint(pb, TP_SEQ_ID, SPTD_PF_SEQ_META);
	sptd_query_pb_begin(pb, TP_SYSTEM_INFO);
	sptd_query_pb_begin(pb, SI_UTSNAME);
	sptd_query_pb_string(pb, UTS_SYSNAME, "Linux");
	if (version[0])
		sptd_query_pb_string(pb, UTS_VERSION, version);
	if (release[0])
		sptd_query_pb_string(pb, UTS_RELEASE, release);
	if (machine[0])
		sptd_query_pb_string(pb, UTS_MACHINE, machine);
	sptd_query_pb_end(pb);
	if (sptd_store_meta_get_int(pf->st, "cpus", &cpus) >= 0 && cpus > 0)
		sptd_query_pb_uint(pb, SI_NUM_CPUS, (uint64_t)cpus);
	sptd_query_pb_end(pb);
	return sptd_query_pf_flush(pf);
}

static int write_proto(struct sptd_query_pf *pf)
{
	int rc;

	if ((rc = write_clock_snapshot(pf)) < 0 ||
	    (rc = write_system_info(pf)) < 0 ||
	    (rc = sptd_query_pf_write_process_tree(pf)) < 0 ||
	    (rc = sptd_query_pf_write_tracks(pf)) < 0 ||
	    (rc = sptd_query_pf_write_sched(pf)) < 0 ||
	    (rc = sptd_query_pf_write_wakings(pf)) < 0 ||
	    (rc = sptd_query_pf_write_irqs(pf)) < 0 ||
	    (rc = sptd_query_pf_write_slices(pf)) < 0 ||
	    (rc = sptd_query_pf_write_samples(pf)) < 0 ||
	    (rc = sptd_query_pf_write_gaps(pf)) < 0 ||
	    (rc = sptd_query_pf_write_triggers(pf)) < 0)
		return rc;
	return 0;
}

int sptd_query_export_format_parse(const char *name,
                                   enum sptd_query_export_format *fmt)
{
	if (!name || !fmt)
		return -EINVAL;
	if (!strcmp(name, "proto") || !strcmp(name, "pftrace") ||
	    !strcmp(name, "protobuf") || !strcmp(name, "perfetto")) {
		*fmt = SPTD_QUERY_EXPORT_PROTO;
		return 0;
	}
	if (!strcmp(name, "json")) {
		*fmt = SPTD_QUERY_EXPORT_JSON;
		return 0;
	}
	return -EINVAL;
}

int sptd_query_export_opts(struct sptd_store *st, FILE *out,
                           const struct sptd_query_export_options *opts,
                           struct sptd_query_export_stats *stats,
                           char *err, size_t errlen)
{
	struct sptd_query_export_stats local_stats;
	struct sptd_query_export_options defaults;
	struct sptd_query_pf pf;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!opts) {
		memset(&defaults, 0, sizeof(defaults));
		opts = &defaults;
	}
	if (!stats)
		stats = &local_stats;
	memset(stats, 0, sizeof(*stats));
	memset(&pf, 0, sizeof(pf));
	pf.err = err;
	pf.errlen = errlen;
	if (!st || !out)
		return sptd_query_pf_fail(&pf, -EINVAL, "export: %s is NULL",
		                          !st ? "the incident" : "the output");
	if (opts->format != SPTD_QUERY_EXPORT_PROTO &&
	    opts->format != SPTD_QUERY_EXPORT_JSON)
		return sptd_query_pf_fail(&pf, -EINVAL, "export: unknown format %d",
		                          (int)opts->format);
	pf.st = st;
	pf.out = out;
	pf.stats = stats;
	pf.progress = opts->progress;
	pf.progress_ctx = opts->progress_ctx;
	pf.next_iid = 1;
	sptd_query_pb_init(&pf.pkt);
	sptd_query_pb_init(&pf.interned);
	rc = read_window(&pf);
	if (rc < 0)
		goto out;
	if (opts->format == SPTD_QUERY_EXPORT_JSON)
		rc = sptd_query_pf_write_json(&pf);
	else
		rc = write_proto(&pf);
	if (rc >= 0 && fflush(out) != 0)
		rc = sptd_query_pf_fail(&pf, -EIO, "writing the trace failed: %s",
		                        strerror(errno));
out:
	sptd_query_pb_fini(&pf.pkt);
	sptd_query_pb_fini(&pf.interned);
	sptd_query_imap_fini(&pf.names);
	sptd_query_imap_fini(&pf.strings);
	sptd_query_imap_fini(&pf.stacks);
	return rc < 0 ? rc : 0;
}

int sptd_query_export(struct sptd_store *st, FILE *out,
                      enum sptd_query_export_format fmt,
                      struct sptd_query_export_stats *stats,
                      char *err, size_t errlen)
{
	struct sptd_query_export_options opts;

	memset(&opts, 0, sizeof(opts));
	opts.format = fmt;
	return sptd_query_export_opts(st, out, &opts, stats, err, errlen);
}
