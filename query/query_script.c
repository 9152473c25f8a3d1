/* query_script.c — `sysptd script`: every event of an incident in time
 * order.  Each kind of event is one SQL stream sorted by time (SQLite's
 * sorter spills to temporary files, so memory stays bounded however big the
 * incident); the streams are merged here, one row at a time, and each row
 * is filtered (CPU, thread) and printed by query_script_line.c.
 *
 * Divisions: the streams' SQL; opening them; the optional ftrace_event
 * stream; filters; the merge. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script-local.h"

/* ---- the streams' SQL ------------------------------------------------------ */

/* The task current on X's CPU at X's time: the last sched slice that began
 * by then, if it had not ended (the index on sched_slice(cpu, ts) finds it;
 * in a gap there is none). */
#define CUR(X) \
	"(SELECT CASE WHEN c.ts + c.dur >= " X ".ts THEN c.utid END FROM sched_slice c " \
	"WHERE c.cpu = " X ".cpu AND c.ts <= " X ".ts ORDER BY c.ts DESC LIMIT 1)"

/* A call slice with its function and file: depth, kind, flags, symbol,
 * dso, dur after the four common columns. */
#define SLICE_COLS(TS) \
	"SELECT " TS " AS t, sl.cpu, sl.utid, NULL, sl.depth, sl.kind, sl.flags, sym.name, d.path, " \
	"sl.dur FROM slice sl LEFT JOIN symbol sym ON sym.id = sl.symbol_id " \
	"LEFT JOIN dso d ON d.id = sym.dso_id WHERE t BETWEEN ?1 AND ?2 "

/* irq: number, name, ret, dur; softirq: vector, name, NULL, dur. */
#define IRQ_COLS(TS, TABLE, NUM, RET) \
	"SELECT " TS " AS t, i.cpu, " CUR("i") ", NULL, i." NUM ", i.name, " RET ", i.dur " \
	"FROM " TABLE " i WHERE t BETWEEN ?1 AND ?2 "

static const char *const stream_sql[SCRIPT_NKINDS] = {
	/* a call of no length prints its return itself (query_script_line.c) */
	[SCRIPT_RETURN] = SLICE_COLS("sl.ts + sl.dur") "AND (typeof(sl.dur) <> 'integer' OR "
	                  "sl.dur <> 0) ORDER BY t, sl.depth DESC, sl.id DESC",
	[SCRIPT_IRQ_EXIT] = IRQ_COLS("i.ts + i.dur", "irq_slice", "irq", "i.ret") "ORDER BY t, i.id",
	[SCRIPT_SOFTIRQ_EXIT] = IRQ_COLS("i.ts + i.dur", "softirq_slice", "vec", "NULL")
	                        "ORDER BY t, i.id",
	/* dur, reason */
	[SCRIPT_GAP] = "SELECT g.ts, g.cpu, NULL, NULL, g.dur, g.reason FROM gap g "
	               "WHERE g.ts BETWEEN ?1 AND ?2 ORDER BY g.ts, g.id",
	/* kind, detail */
	[SCRIPT_TRIGGER] = "SELECT t.ts, t.cpu, " CUR("t") ", NULL, t.kind, t.detail FROM trigger t "
	                   "WHERE t.ts BETWEEN ?1 AND ?2 ORDER BY t.ts, t.id",
	/* the previous slice of the CPU switched out (current task) for the
	 * next (other): prev_state, prev_prio, next_prio; the previous task is
	 * unknown after a gap in the CPU's slices */
	[SCRIPT_SWITCH] =
		"SELECT ts, cpu, CASE WHEN prev_end = ts THEN prev_utid END, utid, "
		"CASE WHEN prev_end = ts THEN prev_state END, "
		"CASE WHEN prev_end = ts THEN prev_prio END, priority FROM ("
		"SELECT s.id, s.ts, s.cpu, s.utid, s.priority, lag(s.utid) OVER w AS prev_utid, "
		"lag(s.end_state) OVER w AS prev_state, lag(s.priority) OVER w AS prev_prio, "
		"lag(s.ts + s.dur) OVER w AS prev_end, row_number() OVER w AS rn FROM sched_slice s "
		"WINDOW w AS (PARTITION BY s.cpu ORDER BY s.ts, s.id)) "
		"WHERE rn > 1 AND ts BETWEEN ?1 AND ?2 ORDER BY ts, id",
	/* the waker is current (on the CPU its Running state names), the wakee
	 * the other task; a runnable row whose start was not seen (flag 1:
	 * woken before the window, cut at its start) is no waking then; one
	 * woken from interrupt context (flags 32, 64) has no waking task */
	[SCRIPT_WAKEUP] =
		"SELECT t.ts, (SELECT CASE WHEN w.state = 'Running' THEN w.cpu END FROM thread_state w "
		"WHERE w.utid = t.waker_utid AND w.ts <= t.ts ORDER BY w.ts DESC LIMIT 1), "
		"t.waker_utid, t.utid, coalesce(t.flags, 0) & 96 FROM thread_state t "
		"WHERE t.state = 'R' AND (t.waker_utid IS NOT NULL OR coalesce(t.flags, 0) & 96) "
		"AND (coalesce(t.flags, 0) & 1) = 0 AND "
		"t.ts BETWEEN ?1 AND ?2 ORDER BY t.ts, t.id",
	[SCRIPT_IRQ_ENTRY] = IRQ_COLS("i.ts", "irq_slice", "irq", "i.ret") "ORDER BY t, i.id",
	[SCRIPT_SOFTIRQ_ENTRY] = IRQ_COLS("i.ts", "softirq_slice", "vec", "NULL") "ORDER BY t, i.id",
	/* ids are in call order (pre-order): an interrupt entered at the
	 * instant of a call came out ahead of it, ordered by depth */
	[SCRIPT_CALL] = SLICE_COLS("sl.ts") "ORDER BY t, sl.id",
	/* callsite (the innermost frame) */
	[SCRIPT_SAMPLE] = "SELECT s.ts, s.cpu, s.utid, NULL, s.callsite_id FROM sample s "
	                  "WHERE s.ts BETWEEN ?1 AND ?2 ORDER BY s.ts, s.id",
	[SCRIPT_FTRACE] = NULL,   /* built from the table's columns */
};

/* Which SPTD_QUERY_EV_* bit selects each kind. */
static const unsigned kind_bit[SCRIPT_NKINDS] = {
	[SCRIPT_RETURN] = SPTD_QUERY_EV_CALL, [SCRIPT_IRQ_EXIT] = SPTD_QUERY_EV_IRQ,
	[SCRIPT_SOFTIRQ_EXIT] = SPTD_QUERY_EV_SOFTIRQ, [SCRIPT_GAP] = SPTD_QUERY_EV_GAP,
	[SCRIPT_TRIGGER] = SPTD_QUERY_EV_TRIGGER, [SCRIPT_SWITCH] = SPTD_QUERY_EV_SCHED,
	[SCRIPT_WAKEUP] = SPTD_QUERY_EV_WAKEUP, [SCRIPT_IRQ_ENTRY] = SPTD_QUERY_EV_IRQ,
	[SCRIPT_SOFTIRQ_ENTRY] = SPTD_QUERY_EV_SOFTIRQ, [SCRIPT_CALL] = SPTD_QUERY_EV_CALL,
	[SCRIPT_SAMPLE] = SPTD_QUERY_EV_SAMPLE, [SCRIPT_FTRACE] = SPTD_QUERY_EV_FTRACE,
};

/* ---- opening them ---------------------------------------------------------- */

/* Step @ss to its next row: 1 a row, 0 the end, or a negative errno. */
static int stream_next(struct script_stream *ss)
{
	int rc = sptd_store_step(ss->stmt);

	ss->has_row = rc == 1;
	if (rc == 1)
		ss->ts = sptd_store_column_int(ss->stmt, 0);
	return rc;
}

/* Prepare @sql as the stream of @kind, bound to the time range. */
static int stream_open(struct script *s, enum script_kind kind, const char *sql,
                       char *err, size_t errlen)
{
	struct script_stream *ss = &s->streams[s->nstreams];
	int rc;

	memset(ss, 0, sizeof(*ss));
	ss->kind = kind;
	rc = sptd_query_prepare(s->st, sql, &ss->stmt, err, errlen);
	if (rc < 0)
		return rc == -EINVAL ? sptd_query_err(err, errlen, -EBADMSG,
		                                      "not a sysptd incident (or too old): %s", err) : rc;
	rc = sptd_store_bind_int(ss->stmt, 1, s->o->start_ns);
	if (rc >= 0)
		rc = sptd_store_bind_int(ss->stmt, 2, s->o->end_ns);
	s->nstreams++;
	if (rc < 0)
		return sptd_query_err(err, errlen, rc, "cannot bind the time range");
	return 0;
}

/* ---- the optional ftrace_event stream -------------------------------------- */

/* Tracepoints the recording added beyond the fixed set go to a table
 * ftrace_event when the incident has one: its rows print as
 * "ftrace: NAME: col=value ...".  Its ts is required; cpu and utid are
 * used when present.  Returns 0 (also when there is no such table). */
static int ftrace_open(struct script *s, char *err, size_t errlen)
{
	struct sptd_store_stmt *cols = NULL;
	struct sptd_query_buf sql = { 0 }, rest = { 0 };
	int rc, has_ts = 0, has_cpu = 0, has_utid = 0, n = 0;

	rc = sptd_query_prepare(s->st, "SELECT name FROM pragma_table_info('ftrace_event')",
	                        &cols, err, errlen);
	while (rc >= 0 && (rc = sptd_store_step(cols)) == 1) {
		const char *name = sptd_store_column_text(cols, 0);

		if (!name || strchr(name, '"'))
			continue;
		if (strcmp(name, "ts") == 0)
			has_ts = 1;
		else if (strcmp(name, "cpu") == 0)
			has_cpu = 1;
		else if (strcmp(name, "utid") == 0)
			has_utid = 1;
		else if (sptd_query_buf_add(&rest, ", f.\"", 5) < 0 ||
		         sptd_query_buf_add(&rest, name, strlen(name)) < 0 ||
		         sptd_query_buf_add(&rest, "\"", 1) < 0)
			rc = -ENOMEM;
		else
			n++;
	}
	sptd_store_finalize(cols);
	if (rc < 0 || !has_ts)
		goto out;   /* no table (or no time): nothing to print */
	rc = sptd_query_buf_add(&sql, "SELECT f.ts, ", 13);
	if (rc >= 0 && has_cpu)
		rc = sptd_query_buf_add(&sql, "f.cpu, ", 7);
	else if (rc >= 0)
		rc = sptd_query_buf_add(&sql, "NULL, ", 6);
	if (rc >= 0 && has_utid)
		rc = sptd_query_buf_add(&sql, "f.utid, NULL", 12);
	else if (rc >= 0 && has_cpu)
		rc = sptd_query_buf_add(&sql, CUR("f") ", NULL", strlen(CUR("f") ", NULL"));
	else if (rc >= 0)
		rc = sptd_query_buf_add(&sql, "NULL, NULL", 10);
	if (rc >= 0 && rest.len)
		rc = sptd_query_buf_add(&sql, rest.data, rest.len);
	if (rc >= 0) {
		static const char tail[] = " FROM ftrace_event f WHERE f.ts BETWEEN ?1 AND ?2 "
		                           "ORDER BY f.ts, f.rowid";

		rc = sptd_query_buf_add(&sql, tail, strlen(tail));
	}
	if (rc < 0) {
		rc = sptd_query_err(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	s->ftrace_ncols = 4 + n;
	rc = stream_open(s, SCRIPT_FTRACE, sql.data, err, errlen);
out:
	if (rc < 0 && rc != -ENOMEM)
		rc = 0;     /* an odd table is left out, not fatal */
	sptd_query_buf_fini(&sql);
	sptd_query_buf_fini(&rest);
	return rc < 0 ? rc : 0;
}

/* ---- filters ---------------------------------------------------------------- */

static int in_list(const int *list, size_t n, int64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return 0;
}

/* The tid of the thread in column @col of @ss's row, -1 when NULL or
 * unknown. */
static int64_t row_tid(struct script *s, struct script_stream *ss, int col)
{
	const struct script_task *t;

	if (sptd_store_column_type(ss->stmt, col) == SPTD_STORE_NULL)
		return -1;
	t = sptd_query_script_task(s, sptd_store_column_int(ss->stmt, col));
	return t ? t->tid : -1;
}

/* Does the current row of @ss pass the CPU and thread filters? */
static int row_wanted(struct script *s, struct script_stream *ss)
{
	const struct sptd_query_script_opts *o = s->o;

	if (o->ncpus) {
		/* an event of no one CPU (a gap or trigger of all) stays */
		if (sptd_store_column_type(ss->stmt, 1) == SPTD_STORE_NULL) {
			if (ss->kind != SCRIPT_GAP && ss->kind != SCRIPT_TRIGGER)
				return 0;
		} else if (!in_list(o->cpus, o->ncpus, sptd_store_column_int(ss->stmt, 1))) {
			return 0;
		}
	}
	if (o->ntids) {
		int64_t a = row_tid(s, ss, 2), b = row_tid(s, ss, 3);

		if (!(a >= 0 && in_list(o->tids, o->ntids, a)) &&
		    !(b >= 0 && in_list(o->tids, o->ntids, b)))
			return 0;
	}
	return 1;
}

/* ---- the merge ----------------------------------------------------------------- */

int sptd_query_script(struct sptd_store *st, const struct sptd_query_script_opts *opts,
                      FILE *out, char *err, size_t errlen)
{
	struct script *s = NULL;
	struct script_stream *call = NULL;   /* the calls' stream, if open */
	char source[32] = "";
	unsigned kinds;
	int rc = 0, i;

	if (err && errlen)
		err[0] = '\0';
	if (!st || !opts || !out)
		return sptd_query_err(err, errlen, -EINVAL, "%s", !st ? "no incident open" :
		                      !opts ? "no options" : "no output stream");
	if (opts->start_ns > opts->end_ns)
		return sptd_query_err(err, errlen, -EINVAL, "the time range ends before it starts");
	s = calloc(1, sizeof(*s));
	if (!s)
		return sptd_query_err(err, errlen, -ENOMEM, "out of memory");
	s->st = st;
	s->o = opts;
	s->out = out;
	for (i = 0; i < SCRIPT_TASK_CACHE; i++)
		s->tasks[i].utid = -1;
	if (opts->reltime && sptd_store_meta_get_int(st, "window_start", &s->zero) < 0)
		s->zero = 0;
	sptd_store_meta_get(st, "source", source, sizeof(source));
	s->sample_event = strcmp(source, "sample") == 0 ? "cpu-clock" : "sample";
	kinds = opts->kinds ? opts->kinds : SPTD_QUERY_EV_ALL;

	for (i = 0; i < SCRIPT_NKINDS && rc >= 0; i++) {
		if (!(kinds & kind_bit[i]))
			continue;
		if (i == SCRIPT_FTRACE)
			rc = ftrace_open(s, err, errlen);
		else
			rc = stream_open(s, (enum script_kind)i, stream_sql[i], err, errlen);
	}
	for (i = 0; i < s->nstreams && rc >= 0; i++) {
		rc = stream_next(&s->streams[i]);
		if (s->streams[i].kind == SCRIPT_CALL)
			call = &s->streams[i];
	}
	/* the merge: the stream whose row comes first (ties: kind order) */
	while (rc >= 0) {
		struct script_stream *next = NULL;

		for (i = 0; i < s->nstreams; i++) {
			struct script_stream *ss = &s->streams[i];

			if (ss->has_row && (!next || ss->ts < next->ts))
				next = ss;
		}
		if (!next)
			break;
		/* at one instant the returns come first, but for a call
		 * nested in the slice returning then */
		if (next->kind == SCRIPT_RETURN && sptd_query_script_call_inside(call, next))
			next = call;
		if (row_wanted(s, next)) {
			sptd_query_script_flush(s, next);
			rc = sptd_query_script_line(s, next);
			if (rc < 0)
				break;
			s->lines++;
		}
		rc = stream_next(next);
	}
	if (rc >= 0)
		sptd_query_script_flush(s, NULL);
	sptd_query_script_pending_free(s);
	if (rc < 0 && !(err && err[0])) {
		const char *msg = sptd_store_errmsg(st);

		if (rc == -EIO && ferror(out))
			sptd_query_err(err, errlen, rc, "cannot write the output");
		else
			sptd_query_err(err, errlen, rc, "%s%s", rc == -EBADMSG ?
			               "incident file is corrupt: " : "", msg && *msg ? msg : strerror(-rc));
	}
	if (rc >= 0 && (fflush(out) != 0 || ferror(out)))
		rc = sptd_query_err(err, errlen, -EIO, "cannot write the output");
	for (i = 0; i < s->nstreams; i++)
		sptd_store_finalize(s->streams[i].stmt);
	sptd_store_finalize(s->thread_stmt);
	sptd_store_finalize(s->frame_stmt);
	if (rc >= 0)
		rc = s->lines > INT_MAX ? INT_MAX : (int)s->lines;
	free(s);
	return rc;
}
