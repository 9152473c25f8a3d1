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
#include "query-local.h"

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

	va_start(ap, fmt);
	rc = sptd_query_verr(pf->err, pf->errlen, rc, fmt, ap);
	va_end(ap);
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

uint32_t sptd_query_pf_clock_id(const struct sptd_query_pf *pf)
{
	return pf->monotonic ? CLOCK_MONOTONIC_ID : CLOCK_BOOTTIME_ID;
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
		sptd_query_pb_uint(pb, 58, sptd_query_pf_clock_id(pf));
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

/* Append printf(@fmt) and a newline to @buf (*len bytes of *cap). */
static int stack_add(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int stack_add(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (*len + (size_t)n + 2 > *cap) {
		size_t want = *cap;
		char *grown;

		while (*len + (size_t)n + 2 > want)
			want *= 2;
		grown = realloc(*buf, want);
		if (!grown)
			return -ENOMEM;
		*buf = grown;
		*cap = want;
	}
	va_start(ap, fmt);
	vsnprintf(*buf + *len, *cap - *len, fmt, ap);
	va_end(ap);
	*len += (size_t)n;
	(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
	return 0;
}

/* Load the callsite chains for the stack texts, and their budgets. */
static int chains_load(struct sptd_query_pf *pf)
{
	int rc = sptd_query_stacks_load(pf->st, &pf->chains, pf->err, pf->errlen);
	uint32_t n;

	if (rc < 0)
		return rc;
	n = sptd_query_stacks_count(pf->chains);
	pf->stack_budget = SPTD_PF_STACK_BUDGET(n);
	pf->stack_bytes = SPTD_PF_STACK_BYTES(n);
	pf->frames = calloc(SPTD_QUERY_STACK_MAX, sizeof(*pf->frames));
	return pf->frames ? 0 : sptd_query_pf_fail(pf, -ENOMEM, "out of memory");
}

int sptd_query_pf_stack_text(struct sptd_query_pf *pf, int64_t callsite, char **text)
{
	size_t len = 0, cap = 256;
	char *buf = NULL;
	uint32_t leaf;
	int rc = 0, n = 0, cut = 0;

	if (!pf->chains && (rc = chains_load(pf)) < 0)
		return rc;
	if (!(buf = malloc(cap)))
		return sptd_query_pf_fail(pf, -ENOMEM, "out of memory");
	buf[0] = '\0';
	leaf = sptd_query_stacks_find(pf->chains, callsite);
	if (leaf != SPTD_QUERY_NONE && pf->stack_budget > 0 && pf->stack_bytes > 0)
		n = sptd_query_stacks_walk(pf->chains, leaf, pf->frames, SPTD_QUERY_STACK_MAX, &cut);
	for (int i = 0; i < n && rc == 0; i++) {
		const struct sptd_query_frame *f = &pf->frames[i];
		size_t before = len;

		if (pf->stack_budget <= 0 || pf->stack_bytes <= 0) {
			cut = 1;   /* the budget spent before this stack's root */
			break;
		}
		/* perf script's "-F +dsoff" form: a frame no symbol covers shows its
		 * dso and offset, "[unknown] (/usr/lib/libz.so.1+0x3f20)"; one in
		 * no known mapping its address */
		if (!f->symbol && f->dso)
			rc = stack_add(&buf, &len, &cap, "[unknown] (%s+0x%" PRIx64 ")", f->dso, f->addr);
		else if (f->symbol)
			rc = stack_add(&buf, &len, &cap, "%s%s%s%s", f->symbol, f->dso ? " (" : "",
			               f->dso ? f->dso : "", f->dso ? ")" : "");
		else
			rc = stack_add(&buf, &len, &cap, "[unknown] (0x%" PRIx64 ")", f->addr);
		pf->stack_budget--;
		pf->stack_bytes -= (int64_t)(len - before);
	}
	if (rc == 0 && leaf != SPTD_QUERY_NONE && (cut || !n)) {
		rc = stack_add(&buf, &len, &cap, "[stack cut]");
		pf->stats->stacks_cut++;
	}
	if (rc < 0) {
		free(buf);
		return sptd_query_pf_fail(pf, rc, "out of memory");
	}
	if (len)
		buf[len - 1] = '\0'; /* no trailing newline */
	*text = buf;
	return 0;
}
