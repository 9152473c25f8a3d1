/* perfetto_common.c — what every writer of the export shares, and nothing
 * else: errors into the caller's message buffer, statements, flushing a
 * packet, progress, row counts, the opening of a packet on the track
 * sequence, and a callsite's call stack as text.  It calls no writer and
 * not the orchestrator (perfetto_export.c), so the call graph is one way:
 * export -> writers -> common -> pb/store.
 *
 * Field numbers are those of Perfetto's protos (protos/perfetto/trace/...);
 * tests/perfetto/sysptd_trace.proto lists every field written here. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"

/* TracePacket */
#define TP_TIMESTAMP        8
#define TP_SEQ_ID           10
#define TP_SEQ_FLAGS        13
#define TP_FIRST_ON_SEQ     87
#define SEQ_INCREMENTAL_STATE_CLEARED 1
/* ClockSnapshot.Clock ids */
#define CLOCK_MONOTONIC_ID  3
#define CLOCK_BOOTTIME_ID   6

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

const char sptd_query_pf_power_sql[] =
	"SELECT cpu, ts, 0, freq_khz, 0 FROM cpu_freq WHERE freq_khz IS NOT NULL "
	"UNION ALL SELECT cpu, ts, 1, coalesce(state, last_state, 0), id FROM cpu_idle "
	"UNION ALL SELECT cpu, ts + dur, 2, 0, id FROM cpu_idle "
	"ORDER BY 1, 2, 3, 5";

const char sptd_query_pf_walk_sql[] =
	"WITH RECURSIVE chain(id, parent_id, symbol_id, addr, n, depth) AS ("
	" SELECT id, parent_id, symbol_id, addr, 0, depth FROM callsite WHERE id = ?1"
	" UNION ALL SELECT c.id, c.parent_id, c.symbol_id, c.addr, chain.n + 1, c.depth"
	" FROM callsite c JOIN chain ON c.id = chain.parent_id"
	" WHERE chain.n < 1024 AND c.depth < chain.depth)"
	" SELECT chain.addr, sym.name, d.path FROM chain"
	" LEFT JOIN symbol sym ON sym.id = chain.symbol_id"
	" LEFT JOIN dso d ON d.id = sym.dso_id ORDER BY chain.n";

int sptd_query_pf_stack_text(struct sptd_query_pf *pf, struct sptd_store_stmt *walk,
                             int64_t callsite, char **text)
{
	size_t len = 0, cap = 256;
	char *buf = malloc(cap), line[512];
	int rc;

	if (!buf)
		return sptd_query_pf_fail(pf, -ENOMEM, "out of memory");
	buf[0] = '\0';
	sptd_store_reset(walk);
	sptd_store_bind_int(walk, 1, callsite);
	while ((rc = sptd_store_step(walk)) == 1) {
		const char *name = sptd_store_column_text(walk, 1);
		const char *dso = sptd_store_column_text(walk, 2);
		size_t n;

		/* perf script's "-F +dsoff" form: a frame no symbol covers shows its
		 * dso and offset, "[unknown] (/usr/lib/libz.so.1+0x3f20)"; one in
		 * no known mapping its address */
		if (name && dso && strcmp(name, "[unknown]") == 0)
			n = (size_t)snprintf(line, sizeof(line), "[unknown] (%s+0x%" PRIx64 ")\n", dso,
			                     (uint64_t)sptd_store_column_int(walk, 0));
		else if (name)
			n = (size_t)snprintf(line, sizeof(line), "%s%s%s%s\n", name,
			                     dso ? " (" : "", dso ? dso : "", dso ? ")" : "");
		else
			n = (size_t)snprintf(line, sizeof(line), "[unknown] (0x%" PRIx64 ")\n",
			                     (uint64_t)sptd_store_column_int(walk, 0));
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		if (len + n + 1 > cap) {
			char *grown;

			while (len + n + 1 > cap)
				cap *= 2;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				return sptd_query_pf_fail(pf, -ENOMEM, "out of memory");
			}
			buf = grown;
		}
		memcpy(buf + len, line, n + 1);
		len += n;
	}
	if (rc < 0) {
		free(buf);
		return sptd_query_pf_step_fail(pf, "callsite", rc);
	}
	if (len)
		buf[len - 1] = '\0'; /* no trailing newline */
	*text = buf;
	return 0;
}
