/* perfetto_sched.c — scheduling and interrupts as ftrace data, per CPU, in
 * FtraceEventBundles, so Perfetto builds its own sched, thread_state and
 * irq tables exactly as for its own recordings.
 *
 *   switches  sched_slice rows -> compact_sched switch arrays: one switch at
 *             each slice start (prev_state = the previous slice's end_state),
 *             and a switch to idle where a slice ended with a state and
 *             nothing followed at once.  Perfetto drops the first compact
 *             switch of each CPU (it has no prev_pid to close), so each
 *             CPU starts with a seed switch to idle 1 ns before its first
 *             slice: dropped in its place, it tells Perfetto who ran, and
 *             the first slice shows (trace_processor's
 *             compact_sched_switch_skipped counts the seeds).
 *   wakings   thread_state "R" rows -> compact_sched waking arrays in the
 *             bundle of the CPU the waker ran on (Perfetto takes the waker
 *             from the CPU), else of the target CPU.
 *   irqs      irq_slice/softirq_slice -> irq_handler_entry/exit and
 *             softirq_entry/exit FtraceEvents in time order.
 *
 * Bundles hold at most BUNDLE_MAX records, so memory is bounded. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"
#include "sptd_store_text.h"

#define BUNDLE_MAX 4096

/* TracePacket.ftrace_events, FtraceEventBundle */
#define TP_FTRACE_EVENTS 1
#define TP_SEQ_ID        10
#define FEB_CPU          1
#define FEB_EVENT        2
#define FEB_COMPACT      4
/* CompactSched */
#define CS_SWITCH_TS     1
#define CS_PREV_STATE    2
#define CS_NEXT_PID      3
#define CS_NEXT_PRIO     4
#define CS_INTERN        5
#define CS_NEXT_COMM     6
#define CS_WAKING_TS     7
#define CS_WAKING_PID    8
#define CS_WAKING_CPU    9
#define CS_WAKING_PRIO   10
#define CS_WAKING_COMM   11
#define CS_WAKING_FLAGS  12
/* FtraceEvent */
#define FE_TIMESTAMP     1
#define FE_PID           2
#define FE_SOFTIRQ_ENTRY 24
#define FE_SOFTIRQ_EXIT  25
#define FE_IRQ_ENTRY     36
#define FE_IRQ_EXIT      37
#define FE_GENERIC       327
#define FE_BLOCKED_REASON 18   /* SchedBlockedReasonFtraceEvent: pid, caller (iid), io_wait */
#define FE_CPU_FREQUENCY 11    /* CpuFrequencyFtraceEvent: state (kHz), cpu_id */
#define FE_CPU_IDLE      13    /* CpuIdleFtraceEvent: state, cpu_id */
#define CPU_IDLE_EXIT    4294967295u  /* cpu_idle's state on leaving, as the kernel's */
#define TP_INTERNED_DATA 12
#define ID_KERNEL_SYMBOLS 26   /* InternedData.kernel_symbols: InternedString iid, str */
/* GenericFtraceEvent and its Field */
#define GE_EVENT_NAME    1
#define GE_FIELD         2
#define GF_NAME          1
#define GF_STR           3
#define GF_INT           4
#define GF_UINT          5

/* Idle task priority as sched_switch reports it. */
#define IDLE_PRIO 120

/* One CPU's bundle being filled. */
struct bundle {
	int cpu;                        /* -1: none open */
	size_t n;                       /* records in it */
	int64_t last_switch, last_wake; /* previous timestamps (delta coding) */
	struct sptd_query_pb sw_ts, sw_state, sw_pid, sw_prio, sw_comm;
	struct sptd_query_pb wk_ts, wk_pid, wk_cpu, wk_prio, wk_comm, wk_flags;
	struct sptd_query_pb events;    /* FtraceEvent messages (field 2 each) */
	struct sptd_query_smap comms;   /* compact_sched intern table */
};

static struct sptd_query_pb *bundle_arrays(struct bundle *b, int i)
{
	struct sptd_query_pb *all[] = {
		&b->sw_ts, &b->sw_state, &b->sw_pid, &b->sw_prio, &b->sw_comm,
		&b->wk_ts, &b->wk_pid, &b->wk_cpu, &b->wk_prio, &b->wk_comm,
		&b->wk_flags, &b->events,
	};

	return i < (int)(sizeof(all) / sizeof(all[0])) ? all[i] : NULL;
}

static void bundle_init(struct bundle *b)
{
	memset(b, 0, sizeof(*b));
	b->cpu = -1;
}

static void bundle_fini(struct bundle *b)
{
	struct sptd_query_pb *a;
	int i;

	for (i = 0; (a = bundle_arrays(b, i)); i++)
		sptd_query_pb_fini(a);
	sptd_query_smap_fini(&b->comms);
}

/* Write the open bundle (if it holds anything) as one packet. */
static int bundle_flush(struct sptd_query_pf *pf, struct bundle *b)
{
	struct sptd_query_pb *pb = &pf->pkt, *a;
	size_t i;
	int rc = 0, k;

	if (b->cpu < 0 || b->n == 0)
		goto reset;
	sptd_query_pb_uint(pb, TP_SEQ_ID, SPTD_PF_SEQ_FTRACE);
	if (!pf->ftrace_seq_started) {
		sptd_query_pb_uint(pb, 13, 1);  /* SEQ_INCREMENTAL_STATE_CLEARED */
		sptd_query_pb_uint(pb, 87, 1);  /* first_packet_on_sequence */
		pf->ftrace_seq_started = 1;
	}
	sptd_query_pb_begin(pb, TP_FTRACE_EVENTS);
	sptd_query_pb_uint(pb, FEB_CPU, (uint64_t)b->cpu);
	sptd_query_pb_raw(pb, &b->events); /* whole `event = 2` fields */
	if (b->sw_ts.len || b->wk_ts.len) {
		sptd_query_pb_begin(pb, FEB_COMPACT);
		sptd_query_pb_packed(pb, CS_SWITCH_TS, &b->sw_ts);
		sptd_query_pb_packed(pb, CS_PREV_STATE, &b->sw_state);
		sptd_query_pb_packed(pb, CS_NEXT_PID, &b->sw_pid);
		sptd_query_pb_packed(pb, CS_NEXT_PRIO, &b->sw_prio);
		for (i = 0; i < b->comms.count; i++)
			sptd_query_pb_string(pb, CS_INTERN, b->comms.strs[i]);
		sptd_query_pb_packed(pb, CS_NEXT_COMM, &b->sw_comm);
		sptd_query_pb_packed(pb, CS_WAKING_TS, &b->wk_ts);
		sptd_query_pb_packed(pb, CS_WAKING_PID, &b->wk_pid);
		sptd_query_pb_packed(pb, CS_WAKING_CPU, &b->wk_cpu);
		sptd_query_pb_packed(pb, CS_WAKING_PRIO, &b->wk_prio);
		sptd_query_pb_packed(pb, CS_WAKING_COMM, &b->wk_comm);
		sptd_query_pb_packed(pb, CS_WAKING_FLAGS, &b->wk_flags);
		sptd_query_pb_end(pb);
	}
	sptd_query_pb_end(pb);
	rc = sptd_query_pf_flush(pf);
reset:
	for (k = 0; (a = bundle_arrays(b, k)); k++)
		sptd_query_pb_reset(a);
	sptd_query_smap_clear(&b->comms);
	b->n = 0;
	b->last_switch = 0;
	b->last_wake = 0;
	return rc;
}

/* Make @b the open bundle of @cpu, flushing another CPU's or a full one. */
static int bundle_for(struct sptd_query_pf *pf, struct bundle *b, int cpu)
{
	int rc = 0;

	if (b->cpu != cpu || b->n >= BUNDLE_MAX) {
		rc = bundle_flush(pf, b);
		b->cpu = cpu;
	}
	return rc;
}

/* Kernel prev_state bits for an ftrace state string ("S", "R+", "D|K"...). */
static int64_t task_state(const char *state)
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

static int add_switch(struct sptd_query_pf *pf, struct bundle *b, int cpu,
                      int64_t ts, int64_t prev_state, int next_pid,
                      int next_prio, const char *comm)
{
	int rc = bundle_for(pf, b, cpu), idx;

	if (rc < 0)
		return rc;
	idx = sptd_query_smap_intern(&b->comms, comm);
	if (idx < 0)
		return sptd_query_pf_fail(pf, idx, "out of memory");
	/* modulo 2^64 as the reader adds them: no signed overflow on any ts */
	sptd_query_pb_raw_varint(&b->sw_ts, (uint64_t)ts - (uint64_t)b->last_switch);
	sptd_query_pb_raw_varint(&b->sw_state, (uint64_t)prev_state);
	sptd_query_pb_raw_varint(&b->sw_pid, (uint64_t)(int64_t)next_pid);
	sptd_query_pb_raw_varint(&b->sw_prio, (uint64_t)(int64_t)next_prio);
	sptd_query_pb_raw_varint(&b->sw_comm, (uint64_t)idx);
	b->last_switch = ts;
	b->n++;
	pf->stats->sched_switches++;
	return 0;
}

/* Switch from the task that ended at @ts to idle. */
static int add_idle_switch(struct sptd_query_pf *pf, struct bundle *b, int cpu,
                           int64_t ts, const char *prev_end_state)
{
	char comm[32];

	snprintf(comm, sizeof(comm), "swapper/%d", cpu);
	return add_switch(pf, b, cpu, ts, task_state(prev_end_state),
	                  0, IDLE_PRIO, comm);
}


/* Column @col as a CPU or tid (32 bits in sched events); -1 for NULL or
 * outside 0..INT32_MAX (a cast put CPU 2^32 + 2's rows on CPU 2). */
static int int_of(struct sptd_store_stmt *stmt, int col)
{
	int64_t v = sptd_store_column_int(stmt, col);

	return sptd_store_column_type(stmt, col) == SPTD_STORE_NULL || v < 0 || v > INT32_MAX
	       ? -1 : (int)v;
}
/* The end of a writer's loop over @stmt (on @table): a step error @rc < 0
 * reported, else the last bundle flushed; @stmt and @b released either
 * way.  0 or -errno. */
static int writer_done(struct sptd_query_pf *pf, struct bundle *b, struct sptd_store_stmt *stmt,
                       const char *table, int rc)
{
	if (rc < 0)
		rc = sptd_query_pf_step_fail(pf, table, rc);
	else
		rc = bundle_flush(pf, b);
	sptd_store_finalize(stmt);
	bundle_fini(b);
	return rc;
}

int sptd_query_pf_write_sched(struct sptd_query_pf *pf)
{
	static const char sql[] =
		"SELECT ss.cpu, ss.ts, ss.dur, ss.end_state, ss.priority, t.tid, t.name "
		"FROM sched_slice ss LEFT JOIN thread t ON t.utid = ss.utid "
		"ORDER BY ss.cpu, ss.ts, ss.id";
	struct sptd_store_stmt *stmt = NULL;
	struct bundle b;
	char prev_state[16] = "";
	int have_prev = 0, prev_has_state = 0, cpu = -1, seeded = 0, rc;
	int64_t prev_end = 0;
	uint64_t total = sptd_query_pf_count(pf, "sched_slice"), done = 0;

	bundle_init(&b);
	rc = sptd_query_pf_prepare(pf, "sched_slice", sql, &stmt);
	if (rc < 0)
		goto out;
	sptd_query_pf_progress(pf, "sched_slice", 0, total);
	while ((rc = sptd_store_step(stmt)) == 1) {
		int row_cpu = int_of(stmt, 0);
		int64_t ts = sptd_store_column_int(stmt, 1);
		int64_t dur = sptd_store_column_int(stmt, 2);
		const char *end_state = sptd_store_column_text(stmt, 3);
		int prio = (int)sptd_store_column_int(stmt, 4);
		int64_t state;

		if (++done % 65536 == 0)
			sptd_query_pf_progress(pf, "sched_slice", done, total);
		if (row_cpu != cpu) {
			if (have_prev && prev_has_state &&
			    (rc = add_idle_switch(pf, &b, cpu, prev_end, prev_state)) < 0)
				goto out;
			cpu = row_cpu;
			have_prev = 0;
			seeded = 0;
		}
		if (row_cpu < 0 || int_of(stmt, 5) < 0) {
			/* no CPU, or an unknown thread (a CPU or tid beyond int in
			 * a hostile file too): nothing to switch to */
			pf->stats->skipped++;
			continue;
		}
		if (!seeded) {
			/* the switch Perfetto drops, so that it keeps the next one */
			rc = add_idle_switch(pf, &b, cpu, ts > 0 ? ts - 1 : 0, NULL);
			if (rc < 0)
				goto out;
			seeded = 1;
		}
		state = 0;
		if (have_prev) {
			state = task_state(prev_has_state ? prev_state : NULL);
			if (prev_end < ts) {
				/* the CPU idled between the two slices */
				rc = add_idle_switch(pf, &b, cpu, prev_end,
				                     prev_has_state ? prev_state : NULL);
				if (rc < 0)
					goto out;
				state = 0;
			}
		}
		rc = add_switch(pf, &b, cpu, ts, state, int_of(stmt, 5),
		                prio, sptd_store_column_text(stmt, 6));
		if (rc < 0)
			goto out;
		have_prev = 1;
		/* both from the file: clipped, never past INT64_MAX */
		if (__builtin_add_overflow(ts, dur > 0 ? dur : 0, &prev_end))
			prev_end = INT64_MAX;
		prev_has_state = end_state != NULL;
		snprintf(prev_state, sizeof(prev_state), "%s", end_state ? end_state : "");
	}
	if (rc >= 0 && have_prev && prev_has_state &&
	    (rc = add_idle_switch(pf, &b, cpu, prev_end, prev_state)) < 0)
		goto out;
	return writer_done(pf, &b, stmt, "sched_slice", rc);
out:
	sptd_store_finalize(stmt);
	bundle_fini(&b);
	return rc;
}

int sptd_query_pf_write_wakings(struct sptd_query_pf *pf)
{
	/* bundle CPU: where the waker ran then, else the target; for a real
	 * waking (a waker, or flags 32/64: from an interrupt) else where the
	 * woken task ran next, else any CPU: never dropped for want of one
	 * (Perfetto then missed its R state).  A runnable row with neither is a
	 * preemption: its R comes from the switch.  A task's slices do not
	 * overlap, so the waker's latest slice begun by then is the one (one
	 * step down the (utid, ts) index: every earlier slice took 41 s for
	 * 20,000 wakeups); only the idle task (utid 0) runs on every CPU */
	static const char sql[] =
		"SELECT coalesce((SELECT CASE WHEN ss.ts + ss.dur >= s.ts THEN ss.cpu END "
		"                 FROM sched_slice ss WHERE ss.utid = s.waker_utid "
		"                   AND s.waker_utid != 0 AND ss.ts <= s.ts "
		"                 ORDER BY ss.ts DESC LIMIT 1), "
		"                (SELECT ss.cpu FROM sched_slice ss "
		"                 WHERE s.waker_utid = 0 AND ss.utid = 0 AND ss.ts <= s.ts "
		"                   AND ss.ts + ss.dur >= s.ts ORDER BY ss.ts DESC LIMIT 1), "
		"                s.cpu, "
		"                CASE WHEN s.waker_utid IS NOT NULL OR s.flags & 96 THEN coalesce("
		"                 (SELECT ss.cpu FROM sched_slice ss WHERE ss.utid = s.utid "
		"                   AND ss.ts >= s.ts ORDER BY ss.ts LIMIT 1), "
		"                 (SELECT min(cpu) FROM sched_slice)) END) AS bcpu, "
		"       s.ts, s.cpu, t.tid, t.name, coalesce(s.flags, 0) & 96 "
		"FROM thread_state s LEFT JOIN thread t ON t.utid = s.utid "
		"WHERE s.state = 'R' ORDER BY bcpu, s.ts, s.id";
	struct sptd_store_stmt *stmt = NULL;
	struct bundle b;
	int rc;

	bundle_init(&b);
	rc = sptd_query_pf_prepare(pf, "thread_state", sql, &stmt);
	if (rc < 0)
		goto out;
	sptd_query_pf_progress(pf, "thread_state", 0, 0);
	while ((rc = sptd_store_step(stmt)) == 1) {
		int cpu, target, idx;
		int64_t ts = sptd_store_column_int(stmt, 1), wf;

		cpu = int_of(stmt, 0);
		target = sptd_store_column_type(stmt, 2) == SPTD_STORE_NULL ? cpu : int_of(stmt, 2);
		if (cpu < 0 || target < 0 || int_of(stmt, 3) < 0) {
			pf->stats->skipped++; /* no CPU known, or no such thread */
			continue;
		}
		if ((rc = bundle_for(pf, &b, cpu)) < 0)
			goto out;
		idx = sptd_query_smap_intern(&b.comms, sptd_store_column_text(stmt, 4));
		if (idx < 0) {
			rc = sptd_query_pf_fail(pf, idx, "out of memory");
			goto out;
		}
		sptd_query_pb_raw_varint(&b.wk_ts, (uint64_t)ts - (uint64_t)b.last_wake);
		sptd_query_pb_raw_varint(&b.wk_pid, (uint64_t)sptd_store_column_int(stmt, 3));
		sptd_query_pb_raw_varint(&b.wk_cpu, (uint64_t)(int64_t)target);
		sptd_query_pb_raw_varint(&b.wk_prio, IDLE_PRIO);
		sptd_query_pb_raw_varint(&b.wk_comm, (uint64_t)idx);
		/* common_flags: TRACE_FLAG_HARDIRQ 0x08, _SOFTIRQ 0x10 (irq_context) */
		wf = sptd_store_column_int(stmt, 5);
		sptd_query_pb_raw_varint(&b.wk_flags, wf & 32 ? 0x08 : wf & 64 ? 0x10 : 0);
		b.last_wake = ts;
		b.n++;
		pf->stats->sched_wakings++;
	}
	return writer_done(pf, &b, stmt, "thread_state", rc);
out:
	sptd_store_finalize(stmt);
	bundle_fini(&b);
	return rc;
}

int sptd_query_pf_write_irqs(struct sptd_query_pf *pf)
{
	/* entries and exits of both tables, per CPU in time order; at one
	 * instant: exits of earlier-started slices after later ones (inner
	 * first), then entries (outer first), then exits of empty slices */
	static const char sql[] =
		"SELECT cpu, t, is_exit, soft, num, name, ret FROM ("
		" SELECT cpu, ts AS t, 1 AS phase, -dur AS tb, 0 AS is_exit, 0 AS soft,"
		"        irq AS num, name, ret FROM irq_slice"
		" UNION ALL SELECT cpu, ts + dur, CASE WHEN dur > 0 THEN 0 ELSE 2 END, -ts,"
		"        1, 0, irq, name, ret FROM irq_slice"
		" UNION ALL SELECT cpu, ts, 1, -dur, 0, 1, vec, NULL, 0 FROM softirq_slice"
		" UNION ALL SELECT cpu, ts + dur, CASE WHEN dur > 0 THEN 0 ELSE 2 END, -ts,"
		"        1, 1, vec, NULL, 0 FROM softirq_slice"
		") ORDER BY cpu, t, phase, tb";
	struct sptd_store_stmt *stmt = NULL;
	struct bundle b;
	uint64_t total = 2 * (sptd_query_pf_count(pf, "irq_slice") +
	                      sptd_query_pf_count(pf, "softirq_slice")), done = 0;
	int rc;

	bundle_init(&b);
	rc = sptd_query_pf_prepare(pf, "irq_slice/softirq_slice", sql, &stmt);
	if (rc < 0)
		goto out;
	sptd_query_pf_progress(pf, "irq_slice", 0, total);
	while ((rc = sptd_store_step(stmt)) == 1) {
		int cpu = int_of(stmt, 0);
		int64_t t = sptd_store_column_int(stmt, 1);
		int is_exit = (int)sptd_store_column_int(stmt, 2);
		int soft = (int)sptd_store_column_int(stmt, 3);
		int64_t num = sptd_store_column_int(stmt, 4);
		struct sptd_query_pb *ev = &b.events;

		if (++done % 65536 == 0)
			sptd_query_pf_progress(pf, "irq_slice", done, total);
		if (cpu < 0) {
			pf->stats->skipped++;
			continue;
		}
		if ((rc = bundle_for(pf, &b, cpu)) < 0)
			goto out;
		sptd_query_pb_begin(ev, FEB_EVENT);
		sptd_query_pb_uint(ev, FE_TIMESTAMP, (uint64_t)(t < 0 ? 0 : t));
		sptd_query_pb_uint(ev, FE_PID, 0);
		if (soft) {
			sptd_query_pb_begin(ev, is_exit ? FE_SOFTIRQ_EXIT : FE_SOFTIRQ_ENTRY);
			sptd_query_pb_uint(ev, 1, (uint64_t)num);   /* vec */
		} else if (!is_exit) {
			sptd_query_pb_begin(ev, FE_IRQ_ENTRY);
			sptd_query_pb_int(ev, 1, num);              /* irq */
			sptd_query_pb_string(ev, 2, sptd_store_column_text(stmt, 5));
		} else {
			sptd_query_pb_begin(ev, FE_IRQ_EXIT);
			sptd_query_pb_int(ev, 1, num);              /* irq */
			sptd_query_pb_int(ev, 2, sptd_store_column_int(stmt, 6)); /* ret */
		}
		sptd_query_pb_end(ev);
		sptd_query_pb_end(ev);
		b.n++;
		pf->stats->irq_events++;
	}
	return writer_done(pf, &b, stmt, "irq_slice", rc);
out:
	sptd_store_finalize(stmt);
	bundle_fini(&b);
	return rc;
}

/* ---- added tracepoints (sysptd -e) ------------------------------------------------- */

/* A member of an event's args that no GenericFtraceEvent field can hold
 * (false, null, a real, an object, an array: not what sched/ writes). */
static int field_unfit(void *ctx, const struct sptd_store_json_member *m)
{
	(void)ctx;
	return m->kind == SPTD_STORE_JSON_OTHER;
}

/* @m as a GenericFtraceEvent field of the event in @ctx: a string, a
 * negative integer as int_value, others as uint_value (true as 1). */
static int field_write(void *ctx, const struct sptd_store_json_member *m)
{
	struct sptd_query_pb *ev = ctx;

	sptd_query_pb_begin(ev, GE_FIELD);
	sptd_query_pb_string(ev, GF_NAME, m->key);
	if (m->kind == SPTD_STORE_JSON_TEXT)
		sptd_query_pb_text(ev, GF_STR, m->text, m->len);
	else if (m->kind == SPTD_STORE_JSON_INT && m->i < 0)
		sptd_query_pb_int(ev, GF_INT, m->i);
	else
		sptd_query_pb_uint(ev, GF_UINT, m->kind == SPTD_STORE_JSON_INT ? (uint64_t)m->i :
		                   m->kind == SPTD_STORE_JSON_UINT ? m->u : 1);
	sptd_query_pb_end(ev);
	return 0;
}

/* @args (text from the file: hostile) as GenericFtraceEvent fields, read
 * with SQLite's JSON functions; args that are not a JSON object, or hold a
 * member no field can, go in whole as one string field "args".  0 or the
 * store's error. */
static int generic_fields(struct sptd_query_pf *pf, struct sptd_query_pb *ev, const char *args)
{
	int rc = args ? sptd_store_json_members(pf->st, args, field_unfit, NULL) : -EBADMSG;

	if (rc == 0)
		rc = sptd_store_json_members(pf->st, args, field_write, ev);
	else if (rc == 1 || rc == -EBADMSG) {
		sptd_query_pb_begin(ev, GE_FIELD);
		sptd_query_pb_string(ev, GF_NAME, "args");
		sptd_query_pb_string(ev, GF_STR, args ? args : "");
		sptd_query_pb_end(ev);
		rc = 0;
	}
	return rc < 0 ? sptd_query_pf_step_fail(pf, "ftrace_event args", rc) : 0;
}

int sptd_query_pf_write_ftrace_events(struct sptd_query_pf *pf)
{
	static const char sql[] =
		"SELECT f.cpu, f.ts, t.tid, f.name, f.args FROM ftrace_event f "
		"LEFT JOIN thread t ON t.utid = f.utid ORDER BY f.cpu, f.ts, f.id";
	struct sptd_store_stmt *stmt = NULL;
	uint64_t total = sptd_query_pf_count(pf, "ftrace_event"), done = 0;
	struct bundle b;
	int rc;

	bundle_init(&b);
	rc = sptd_query_pf_prepare(pf, "ftrace_event", sql, &stmt);
	if (rc < 0)
		goto out;
	sptd_query_pf_progress(pf, "ftrace_event", 0, total);
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t cpu = sptd_store_column_int(stmt, 0);
		int64_t t = sptd_store_column_int(stmt, 1);
		const char *name = sptd_store_column_text(stmt, 3);
		struct sptd_query_pb *ev = &b.events;
		size_t pfx;

		if (++done % 65536 == 0)
			sptd_query_pf_progress(pf, "ftrace_event", done, total);
		if (cpu < 0 || cpu > INT32_MAX || !name) {
			pf->stats->skipped++;
			continue;
		}
		if ((rc = bundle_for(pf, &b, (int)cpu)) < 0)
			goto out;
		sptd_query_pb_begin(ev, FEB_EVENT);
		sptd_query_pb_uint(ev, FE_TIMESTAMP, (uint64_t)(t < 0 ? 0 : t));
		sptd_query_pb_uint(ev, FE_PID, sptd_store_column_type(stmt, 2) == SPTD_STORE_NULL ? 0 :
		                   (uint64_t)(uint32_t)sptd_store_column_int(stmt, 2));
		sptd_query_pb_begin(ev, FE_GENERIC);
		/* Perfetto names generic events by the event alone, as ftrace does */
		pfx = strcspn(name, ":");
		sptd_query_pb_string(ev, GE_EVENT_NAME, name[pfx] ? name + pfx + 1 : name);
		if ((rc = generic_fields(pf, ev, sptd_store_column_text(stmt, 4))) < 0)
			goto out;
		sptd_query_pb_end(ev);
		sptd_query_pb_end(ev);
		b.n++;
		pf->stats->ftrace_events++;
	}
	return writer_done(pf, &b, stmt, "ftrace_event", rc);
out:
	sptd_store_finalize(stmt);
	bundle_fini(&b);
	return rc;
}

/* ---- why threads slept (--offcpu) -------------------------------------------------- */

/* Perfetto's own thread_state.blocked_function: a sched_blocked_reason
 * event just after each blocking switch that sysptd linked to a function
 * (thread_state.blocked_function), its caller an iid of the ftrace
 * sequence's interned kernel symbols, written once before the events. */
int sptd_query_pf_write_blocked(struct sptd_query_pf *pf)
{
	static const char names_sql[] =
		"SELECT DISTINCT blocked_function FROM thread_state WHERE blocked_function IS NOT NULL "
		"ORDER BY blocked_function";
	static const char sql[] =
		"SELECT coalesce((SELECT s.cpu FROM sched_slice s WHERE s.utid = ts.utid AND "
		" s.ts + s.dur = ts.ts LIMIT 1), 0) AS c, ts.ts, ts.dur, th.tid, ts.blocked_function, "
		" ts.state FROM thread_state ts JOIN thread th ON th.utid = ts.utid "
		"WHERE ts.blocked_function IS NOT NULL ORDER BY c, ts.ts, ts.id";
	struct sptd_store_stmt *stmt = NULL;
	struct sptd_query_pb *pb = &pf->pkt;
	struct sptd_query_smap names = { 0 };
	struct bundle b;
	int rc, n = 0;

	bundle_init(&b);
	rc = sptd_query_pf_prepare(pf, "thread_state", names_sql, &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		const char *name = sptd_store_column_text(stmt, 0);

		if (name && (rc = sptd_query_smap_intern(&names, name)) < 0)
			goto out;
	}
	if (rc < 0) {
		rc = sptd_query_pf_step_fail(pf, "thread_state", rc);
		goto out;
	}
	sptd_store_finalize(stmt);
	stmt = NULL;
	if (names.count == 0)
		goto out;
	/* the names, interned on the ftrace sequence (iid = index + 1) */
	sptd_query_pb_uint(pb, TP_SEQ_ID, SPTD_PF_SEQ_FTRACE);
	if (!pf->ftrace_seq_started) {
		sptd_query_pb_uint(pb, 13, 1 | 2);  /* INCREMENTAL_STATE_CLEARED | NEEDS_IT */
		sptd_query_pb_uint(pb, 87, 1);      /* first_packet_on_sequence */
		pf->ftrace_seq_started = 1;
	} else {
		sptd_query_pb_uint(pb, 13, 2);      /* SEQ_NEEDS_INCREMENTAL_STATE */
	}
	sptd_query_pb_begin(pb, TP_INTERNED_DATA);
	for (size_t i = 0; i < names.count; i++) {
		sptd_query_pb_begin(pb, ID_KERNEL_SYMBOLS);
		sptd_query_pb_uint(pb, 1, i + 1);
		sptd_query_pb_string(pb, 2, names.strs[i]);
		sptd_query_pb_end(pb);
	}
	sptd_query_pb_end(pb);
	if ((rc = sptd_query_pf_flush(pf)) < 0)
		goto out;
	rc = sptd_query_pf_prepare(pf, "thread_state", sql, &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t cpu = sptd_store_column_int(stmt, 0), ts = sptd_store_column_int(stmt, 1);
		int64_t dur = sptd_store_column_int(stmt, 2);
		const char *name = sptd_store_column_text(stmt, 4), *state = sptd_store_column_text(stmt, 5);
		struct sptd_query_pb *ev = &b.events;
		int iid;

		if (!name || cpu < 0 || cpu > INT32_MAX || (iid = sptd_query_smap_intern(&names, name)) < 0) {
			pf->stats->skipped++;
			continue;
		}
		if ((rc = bundle_for(pf, &b, (int)cpu)) < 0)
			goto out;
		sptd_query_pb_begin(ev, FEB_EVENT);
		/* just after the switch that began the wait, inside it */
		sptd_query_pb_uint(ev, FE_TIMESTAMP, (uint64_t)(ts < 0 ? 0 : ts) + (dur > 1 ? 1 : 0));
		sptd_query_pb_uint(ev, FE_PID, (uint64_t)(uint32_t)sptd_store_column_int(stmt, 3));
		sptd_query_pb_begin(ev, FE_BLOCKED_REASON);
		sptd_query_pb_int(ev, 1, sptd_store_column_int(stmt, 3));
		sptd_query_pb_uint(ev, 2, (uint64_t)iid + 1);
		sptd_query_pb_uint(ev, 3, state && state[0] == 'D');
		sptd_query_pb_end(ev);
		sptd_query_pb_end(ev);
		b.n++;
		n++;
	}
	rc = writer_done(pf, &b, stmt, "thread_state", rc);
	stmt = NULL;
	sptd_query_smap_fini(&names);
	return rc;
out:
	sptd_store_finalize(stmt);
	bundle_fini(&b);
	sptd_query_smap_fini(&names);
	return rc;
}

/* ---- what PT said about the CPUs (cpu_freq, cpu_idle) ------------------------- */

/* The kernel's own power events, which trace_processor turns into its
 * cpufreq and cpuidle counter tracks: cpu_frequency at each ratio change
 * (kHz), cpu_idle with the C-state number on entry and 4294967295 on exit. */
int sptd_query_pf_write_power(struct sptd_query_pf *pf)
{
	struct sptd_store_stmt *stmt = NULL;
	struct bundle b;
	int rc;

	bundle_init(&b);
	if (sptd_query_pf_count(pf, "cpu_freq") == 0 && sptd_query_pf_count(pf, "cpu_idle") == 0)
		return 0;
	rc = sptd_query_pf_prepare(pf, "cpu_idle", sptd_query_pf_power_sql, &stmt);
	if (rc < 0)
		goto out;
	while ((rc = sptd_store_step(stmt)) == 1) {
		int64_t cpu = sptd_store_column_int(stmt, 0), t = sptd_store_column_int(stmt, 1);
		int64_t kind = sptd_store_column_int(stmt, 2), v = sptd_store_column_int(stmt, 3);
		struct sptd_query_pb *ev = &b.events;

		if (cpu < 0 || cpu > INT32_MAX || v < 0 || v > UINT32_MAX) {
			pf->stats->skipped++;
			continue;
		}
		if ((rc = bundle_for(pf, &b, (int)cpu)) < 0)
			goto out;
		sptd_query_pb_begin(ev, FEB_EVENT);
		sptd_query_pb_uint(ev, FE_TIMESTAMP, (uint64_t)(t < 0 ? 0 : t));
		sptd_query_pb_uint(ev, FE_PID, 0);
		sptd_query_pb_begin(ev, kind == 0 ? FE_CPU_FREQUENCY : FE_CPU_IDLE);
		sptd_query_pb_uint(ev, 1, kind == 2 ? CPU_IDLE_EXIT : (uint64_t)v);
		sptd_query_pb_uint(ev, 2, (uint64_t)cpu);
		sptd_query_pb_end(ev);
		sptd_query_pb_end(ev);
		b.n++;
		pf->stats->power_events++;
	}
	return writer_done(pf, &b, stmt, "cpu_idle", rc);
out:
	sptd_store_finalize(stmt);
	bundle_fini(&b);
	return rc;
}
