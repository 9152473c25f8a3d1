/* perfetto_json.c — the incident as Chrome trace-event JSON, for tools that
 * read only that (chrome://tracing, speedscope, older Perfetto).
 *
 * {"traceEvents":[...],"displayTimeUnit":"ns"} with:
 *   "M" process_name / thread_name metadata for every process and thread;
 *   a pseudo-process "sysptd CPUs" (pid SPTD_JSON_CPU_PID) with one thread
 *     per CPU (tid = cpu) holding sched slices, irqs and softirqs as "X"
 *     events, and one thread per CPU (tid GAP_TID + cpu) for gaps;
 *   call slices as "X" on their thread; samples as thread-scoped "i" with
 *     the stack in args; triggers as global "i".
 * "ts"/"dur" are microseconds with the nanoseconds as 3 decimals.  Rows are
 * streamed to the FILE: memory stays bounded. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"
#include "query-local.h"

#define SPTD_JSON_CPU_PID 2147483646  /* pseudo-process holding the CPUs */
#define GAP_TID           1000000     /* gap thread of CPU n: GAP_TID + n + 1 */

struct jw {
	struct sptd_query_pf *pf;  /* the export */
	int first;                 /* no event written yet (comma handling) */
	int failed;                /* a write failed */
};

static void jw_printf(struct jw *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void jw_printf(struct jw *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfprintf(w->pf->out, fmt, ap);
	va_end(ap);
	if (n < 0)
		w->failed = 1;
	else
		w->pf->stats->bytes += (uint64_t)n;
}

/* A JSON string literal (format_json.c's escaping: invalid UTF-8 becomes
 * U+FFFD); NULL writes "". */
static void jw_str(struct jw *w, const char *s)
{
	if (!s)
		s = "";
	if (sptd_query_json_string_counted(w->pf->out, s, strlen(s), &w->pf->stats->bytes) < 0)
		w->failed = 1;
}

/* ns -> "us.nnn" */
static void jw_us(struct jw *w, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	jw_printf(w, ",\"%s\":%s%" PRIu64 ".%03u", key, ns < 0 ? "-" : "",
	          a / 1000, (unsigned)(a % 1000));
}

/* Open an event object: {"ph":..,"pid":..,"tid":..,"name":.. */
static void jw_event(struct jw *w, const char *ph, int64_t pid, int64_t tid,
                     const char *name)
{
	jw_printf(w, "%s\n{\"ph\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"name\":",
	          w->first ? "" : ",", ph, pid, tid);
	jw_str(w, name);
	w->first = 0;
	w->pf->stats->packets++;
}

static void jw_meta(struct jw *w, const char *what, int64_t pid, int64_t tid,
                    const char *name)
{
	jw_event(w, "M", pid, tid, what);
	jw_printf(w, ",\"args\":{\"name\":");
	jw_str(w, name);
	jw_printf(w, "}}");
}

/* Run @sql and hand each row to @row; progress under @phase. */
static int jw_rows(struct jw *w, const char *phase, const char *sql,
                   int (*row)(struct jw *w, struct sptd_store_stmt *stmt))
{
	struct sptd_store_stmt *stmt = NULL;
	uint64_t done = 0;
	int rc;

	rc = sptd_query_pf_prepare(w->pf, phase, sql, &stmt);
	if (rc < 0)
		return rc;
	sptd_query_pf_progress(w->pf, phase, 0, 0);
	while ((rc = sptd_store_step(stmt)) == 1) {
		if ((rc = row(w, stmt)) < 0)
			break;
		if (w->failed) {
			rc = sptd_query_pf_fail(w->pf, -EIO, "writing the trace failed: %s",
			                        strerror(errno));
			break;
		}
		if (++done % 65536 == 0)
			sptd_query_pf_progress(w->pf, phase, done, 0);
	}
	if (rc < 0 && !(w->pf->err && w->pf->err[0]))
		rc = sptd_query_pf_step_fail(w->pf, phase, rc);
	sptd_store_finalize(stmt);
	return rc < 0 ? rc : 0;
}

static int row_process(struct jw *w, struct sptd_store_stmt *s)
{
	jw_meta(w, "process_name", sptd_store_column_int(s, 0), 0, sptd_store_column_text(s, 1));
	w->pf->stats->processes++;
	return 0;
}

static int row_thread(struct jw *w, struct sptd_store_stmt *s)
{
	jw_meta(w, "thread_name", sptd_store_column_int(s, 0), sptd_store_column_int(s, 1),
	        sptd_store_column_text(s, 2));
	w->pf->stats->threads++;
	return 0;
}

/* The gap thread of @cpu; a CPU number no machine has (a corrupt row) gets
 * the all-CPUs gap thread instead of an overflowing tid. */
static int64_t gap_tid(int64_t cpu)
{
	return cpu >= 0 && cpu < GAP_TID ? GAP_TID + cpu + 1 : GAP_TID;
}

/* A CPU's thread is its number, its gaps' thread GAP_TID + cpu + 1: a
 * CPU from GAP_TID up (no machine has one: a hostile file) would share
 * another's thread.  Its rows are skipped, its gaps go to the all-CPUs
 * gap thread (gap_tid). */
static int cpu_ok(int64_t cpu)
{
	return cpu >= -1 && cpu < GAP_TID;
}

static int row_cpu(struct jw *w, struct sptd_store_stmt *s)
{
	char name[48];
	int64_t cpu = sptd_store_column_int(s, 0);

	if (!cpu_ok(cpu))
		return 0;
	snprintf(name, sizeof(name), "CPU %" PRId64, cpu);
	jw_meta(w, "thread_name", SPTD_JSON_CPU_PID, cpu, name);
	snprintf(name, sizeof(name), "sysptd gaps cpu %" PRId64, cpu);
	jw_meta(w, "thread_name", SPTD_JSON_CPU_PID, gap_tid(cpu), name);
	return 0;
}

static int row_sched(struct jw *w, struct sptd_store_stmt *s)
{
	if (!cpu_ok(sptd_store_column_int(s, 0))) {
		w->pf->stats->skipped++;
		return 0;
	}
	jw_event(w, "X", SPTD_JSON_CPU_PID, sptd_store_column_int(s, 0),
	         sptd_store_column_text(s, 3) ? sptd_store_column_text(s, 3) : "?");
	jw_us(w, "ts", sptd_store_column_int(s, 1));
	jw_us(w, "dur", sptd_store_column_int(s, 2));
	jw_printf(w, ",\"args\":{\"tid\":%" PRId64 ",\"prio\":%" PRId64 ",\"end_state\":",
	          sptd_store_column_int(s, 4), sptd_store_column_int(s, 5));
	jw_str(w, sptd_store_column_text(s, 6));
	jw_printf(w, "}}");
	w->pf->stats->sched_switches++;
	return 0;
}

static int row_irq(struct jw *w, struct sptd_store_stmt *s)
{
	char name[160];
	int soft = (int)sptd_store_column_int(s, 3);

	if (!cpu_ok(sptd_store_column_int(s, 0))) {
		w->pf->stats->skipped++;
		return 0;
	}

	if (soft)
		snprintf(name, sizeof(name), "softirq %s", sptd_store_column_text(s, 5)
		         ? sptd_store_column_text(s, 5) : "?");
	else
		snprintf(name, sizeof(name), "irq %" PRId64 " %s", sptd_store_column_int(s, 4),
		         sptd_store_column_text(s, 5) ? sptd_store_column_text(s, 5) : "");
	jw_event(w, "X", SPTD_JSON_CPU_PID, sptd_store_column_int(s, 0), name);
	jw_us(w, "ts", sptd_store_column_int(s, 1));
	jw_us(w, "dur", sptd_store_column_int(s, 2));
	jw_printf(w, ",\"args\":{\"%s\":%" PRId64 "}}", soft ? "vec" : "irq",
	          sptd_store_column_int(s, 4));
	w->pf->stats->irq_events += 2;
	return 0;
}

static int row_slice(struct jw *w, struct sptd_store_stmt *s)
{
	int64_t flags = sptd_store_column_int(s, 7);

	jw_event(w, "X", sptd_store_column_int(s, 2), sptd_store_column_int(s, 3),
	         sptd_store_column_text(s, 4) ? sptd_store_column_text(s, 4) : "[unknown]");
	jw_us(w, "ts", sptd_store_column_int(s, 0));
	jw_us(w, "dur", sptd_store_column_int(s, 1));
	jw_printf(w, ",\"args\":{\"kind\":");
	jw_str(w, sptd_store_column_text(s, 6));
	if (sptd_store_column_text(s, 5)) {
		jw_printf(w, ",\"dso\":");
		jw_str(w, sptd_store_column_text(s, 5));
	}
	jw_printf(w, ",\"depth\":%" PRId64 ",\"flags\":%" PRId64 "%s%s}}",
	          sptd_store_column_int(s, 8), flags,
	          (flags & SPTD_SLICE_F_INFERRED) ? ",\"inferred\":true" : "",
	          (flags & 3) ? ",\"truncated\":true" : "");
	w->pf->stats->slices++;
	return 0;
}

static int row_sample(struct jw *w, struct sptd_store_stmt *s)
{
	char *stack = NULL;
	int rc;

	if (sptd_store_column_type(s, 4) != SPTD_STORE_NULL) {
		rc = sptd_query_pf_stack_text(w->pf, sptd_store_column_int(s, 4), &stack);
		if (rc < 0)
			return rc;
	}
	jw_event(w, "i", sptd_store_column_int(s, 1), sptd_store_column_int(s, 2),
	         sptd_store_column_text(s, 5) ? sptd_store_column_text(s, 5) : "[unknown]");
	jw_us(w, "ts", sptd_store_column_int(s, 0));
	jw_printf(w, ",\"s\":\"t\",\"args\":{\"cpu\":%" PRId64 ",\"stack\":",
	          sptd_store_column_int(s, 3));
	jw_str(w, stack);
	jw_printf(w, "}}");
	free(stack);
	w->pf->stats->samples++;
	return 0;
}

static int row_gap(struct jw *w, struct sptd_store_stmt *s)
{
	int64_t tid = sptd_store_column_type(s, 0) == SPTD_STORE_NULL
	              ? GAP_TID : gap_tid(sptd_store_column_int(s, 0));

	jw_event(w, "X", SPTD_JSON_CPU_PID, tid,
	         sptd_store_column_text(s, 3) ? sptd_store_column_text(s, 3) : "gap");
	jw_us(w, "ts", sptd_store_column_int(s, 1));
	jw_us(w, "dur", sptd_store_column_int(s, 2));
	jw_printf(w, "}");
	w->pf->stats->gaps++;
	return 0;
}

static int row_trigger(struct jw *w, struct sptd_store_stmt *s)
{
	char name[160];

	snprintf(name, sizeof(name), "trigger: %s",
	         sptd_store_column_text(s, 2) ? sptd_store_column_text(s, 2) : "?");
	jw_event(w, "i", SPTD_JSON_CPU_PID,
	         sptd_store_column_type(s, 1) == SPTD_STORE_NULL ? 0 : sptd_store_column_int(s, 1),
	         name);
	jw_us(w, "ts", sptd_store_column_int(s, 0));
	jw_printf(w, ",\"s\":\"g\",\"args\":{\"detail\":");
	jw_str(w, sptd_store_column_text(s, 3));
	jw_printf(w, "}}");
	w->pf->stats->triggers++;
	return 0;
}

/* PT's power (cpu_freq, cpu_idle): counters of the CPUs' process, one
 * series per CPU ("cpu N MHz", "cpu N C-state": 0 awake). */
static int row_power(struct jw *w, struct sptd_store_stmt *s)
{
	char name[48];
	int64_t cpu = sptd_store_column_int(s, 0), kind = sptd_store_column_int(s, 2);

	snprintf(name, sizeof(name), "cpu %" PRId64 " %s", cpu, kind == 0 ? "MHz" : "C-state");
	jw_event(w, "C", SPTD_JSON_CPU_PID, 0, name);
	jw_us(w, "ts", sptd_store_column_int(s, 1));
	jw_printf(w, ",\"args\":{\"%s\":%" PRId64 "}}", kind == 0 ? "MHz" : "C-state",
	          kind == 0 ? sptd_store_column_int(s, 3) / 1000 : sptd_store_column_int(s, 3));
	w->pf->stats->power_events++;
	return 0;
}

/* PTWRITE values: instants on the writing thread. */
static int row_ptwrite(struct jw *w, struct sptd_store_stmt *s)
{
	jw_event(w, "i", sptd_store_column_int(s, 1), sptd_store_column_int(s, 2), "ptwrite");
	jw_us(w, "ts", sptd_store_column_int(s, 0));
	jw_printf(w, ",\"s\":\"t\",\"args\":{\"payload\":\"0x%" PRIx64 "\"}}",
	          (uint64_t)sptd_store_column_int(s, 3));
	w->pf->stats->ptwrites++;
	return 0;
}

int sptd_query_pf_write_json(struct sptd_query_pf *pf)
{
	struct jw w = { .pf = pf, .first = 1 };
	int rc;

	jw_printf(&w, "{\"traceEvents\":[");
	jw_meta(&w, "process_name", SPTD_JSON_CPU_PID, 0, "sysptd CPUs");
	if ((rc = jw_rows(&w, "process", "SELECT pid, name FROM process ORDER BY upid",
	                  row_process)) < 0 ||
	    (rc = jw_rows(&w, "thread",
	                  "SELECT coalesce(p.pid, t.tid), t.tid, t.name FROM thread t "
	                  "LEFT JOIN process p ON p.upid = t.upid ORDER BY t.utid",
	                  row_thread)) < 0 ||
	    (rc = jw_rows(&w, "sched_slice",
	                  "SELECT DISTINCT cpu FROM (SELECT cpu FROM sched_slice UNION "
	                  "SELECT cpu FROM irq_slice UNION SELECT cpu FROM softirq_slice "
	                  "UNION SELECT cpu FROM gap) WHERE cpu IS NOT NULL ORDER BY cpu",
	                  row_cpu)) < 0 ||
	    (rc = jw_rows(&w, "sched_slice",
	                  "SELECT ss.cpu, ss.ts, ss.dur, t.name, t.tid, ss.priority, ss.end_state "
	                  "FROM sched_slice ss LEFT JOIN thread t ON t.utid = ss.utid",
	                  row_sched)) < 0 ||
	    (rc = jw_rows(&w, "irq_slice",
	                  "SELECT cpu, ts, dur, 0, irq, name FROM irq_slice UNION ALL "
	                  "SELECT cpu, ts, dur, 1, vec, name FROM softirq_slice",
	                  row_irq)) < 0 ||
	    (rc = jw_rows(&w, "slice",
	                  "SELECT s.ts, s.dur, coalesce(p.pid, t.tid, -1), coalesce(t.tid, -1), "
	                  "sym.name, d.path, s.kind, s.flags, s.depth FROM slice s "
	                  "LEFT JOIN thread t ON t.utid = s.utid "
	                  "LEFT JOIN process p ON p.upid = t.upid "
	                  "LEFT JOIN symbol sym ON sym.id = s.symbol_id "
	                  "LEFT JOIN dso d ON d.id = sym.dso_id", row_slice)) < 0 ||
	    (rc = jw_rows(&w, "sample",
	                  "SELECT s.ts, coalesce(p.pid, t.tid, -1), coalesce(t.tid, -1), s.cpu, "
	                  "s.callsite_id, sym.name FROM sample s "
	                  "LEFT JOIN thread t ON t.utid = s.utid "
	                  "LEFT JOIN process p ON p.upid = t.upid "
	                  "LEFT JOIN callsite c ON c.id = s.callsite_id "
	                  "LEFT JOIN symbol sym ON sym.id = c.symbol_id", row_sample)) < 0 ||
	    (rc = jw_rows(&w, "cpu_idle", sptd_query_pf_power_sql, row_power)) < 0 ||
	    (rc = jw_rows(&w, "ptwrite",
	                  "SELECT w.ts, coalesce(p.pid, t.tid), t.tid, w.payload FROM ptwrite w "
	                  "JOIN thread t ON t.utid = w.utid LEFT JOIN process p ON p.upid = t.upid",
	                  row_ptwrite)) < 0 ||
	    (rc = jw_rows(&w, "gap", "SELECT cpu, ts, dur, reason FROM gap", row_gap)) < 0 ||
	    (rc = jw_rows(&w, "trigger", "SELECT ts, cpu, kind, detail FROM trigger",
	                  row_trigger)) < 0)
		goto out;
	jw_printf(&w, "\n],\"displayTimeUnit\":\"ns\"}\n");
	if (w.failed)
		rc = sptd_query_pf_fail(pf, -EIO, "writing the trace failed: %s", strerror(errno));
out:
	return rc;
}
