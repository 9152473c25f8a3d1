/* script-local.h — internals of `sysptd script` (query_script.c merges
 * the event streams, query_script_line.c prints one event).
 *
 * Each kind of event is one stream: a statement over one table, ordered by
 * the event's time, bound to the time range (?1, ?2).  Every stream's rows
 * start with the same four columns so the merge and the filters need not
 * know the kind:
 *   0 ts     when (ns, the incident's clock)
 *   1 cpu    where (NULL: not tied to one CPU, or unknown)
 *   2 utid   the task current on that CPU then (NULL: none known)
 *   3 other  the other task of a switch (next) or a wakeup (the wakee),
 *            so --tid matches both sides; NULL otherwise
 * then the kind's own columns (see each stream's SQL). */
#ifndef SPTD_QUERY_SCRIPT_LOCAL_H
#define SPTD_QUERY_SCRIPT_LOCAL_H

#include <stdint.h>
#include <stdio.h>

#include "query-local.h"

/* The kinds of event, in the order they print when they share a time
 * (what ends before what begins). */
enum script_kind {
	SCRIPT_RETURN,       /* a call slice ends */
	SCRIPT_IRQ_EXIT,     /* a hard irq handler returns */
	SCRIPT_SOFTIRQ_EXIT, /* a softirq ends */
	SCRIPT_GAP,          /* data is missing from here */
	SCRIPT_TRIGGER,      /* what fired */
	SCRIPT_SWITCH,       /* sched_switch */
	SCRIPT_WAKEUP,       /* sched_waking */
	SCRIPT_IRQ_ENTRY,    /* a hard irq handler runs */
	SCRIPT_SOFTIRQ_ENTRY,/* a softirq runs */
	SCRIPT_CALL,         /* a call slice begins */
	SCRIPT_SAMPLE,       /* a sample, with its stack */
	SCRIPT_FTRACE,       /* another tracepoint the recording added */
	SCRIPT_NKINDS
};

/* Direct-mapped cache of thread names: every line names its task. */
#define SCRIPT_TASK_CACHE 1024
#define SCRIPT_COMM_MAX 64

/* One cached thread. */
struct script_task {
	int64_t utid;                 /* key (any value a file holds) */
	int used;                     /* 0: an empty slot */
	int64_t tid;                  /* its tid (as the file holds it), -1 unknown */
	char comm[SCRIPT_COMM_MAX];   /* its name, printable */
};

/* One event stream being merged. */
struct script_stream {
	enum script_kind kind;        /* what its rows are */
	struct sptd_store_stmt *stmt; /* the rows, by time */
	int has_row;                  /* stmt holds a current row */
	int64_t ts;                   /* time of the current row */
};

/* The return of a call of no length, held back until nothing nested in
 * that call can come any more (a deeper call of its thread at its
 * instant still can). */
struct script_pending {
	int64_t ts, utid, depth;      /* its instant, thread and nesting */
	char *line;                   /* the whole return line, formatted */
};

/* The whole run. */
struct script {
	struct sptd_store *st;        /* the incident */
	const struct sptd_query_script_opts *o; /* filters and style */
	FILE *out;                    /* where lines go */
	int64_t zero;                 /* subtracted from times (reltime), else 0 */
	const char *sample_event;     /* what a sample is called ("cpu-clock") */
	struct script_stream streams[SCRIPT_NKINDS]; /* those that exist */
	int nstreams;                 /* entries of @streams */
	struct sptd_store_stmt *thread_stmt;   /* utid -> tid, name */
	struct sptd_store_stmt *frame_stmt;    /* callsite id -> frame */
	struct script_task tasks[SCRIPT_TASK_CACHE]; /* name cache */
	int ftrace_ncols;             /* columns of the ftrace stream's rows */
	uint64_t lines;               /* events printed */
	struct script_pending *pend;  /* held-back returns, outermost first */
	size_t npend, cappend;        /* entries used / allocated */
};

/* The thread @utid from the name cache (loaded on a miss); NULL when the
 * incident has no such thread.  Valid until the next call. */
const struct script_task *sptd_query_script_task(struct script *s, int64_t utid);
/* Print the current row of @ss as one event (and a sample's stack); the
 * return of a call of no length is held back (below).  0 or -ENOMEM. */
int sptd_query_script_line(struct script *s, struct script_stream *ss);
/* Print the held-back returns that come before the current row of @ss
 * (NULL: all of them, at the end), innermost first. */
void sptd_query_script_flush(struct script *s, const struct script_stream *ss);
/* Does the current row of @call (the calls) come before that of @ret (the
 * returns) at one instant: a call of the same thread, deeper, is nested
 * in the slice that returns then. */
int sptd_query_script_call_inside(const struct script_stream *call,
                                  const struct script_stream *ret);
/* Free what the run still holds back (nothing after a clean end). */
void sptd_query_script_pending_free(struct script *s);
/* @text with control characters escaped and invalid UTF-8 as '?', so one
 * event stays one line whatever an incident holds. */
void sptd_query_script_text(FILE *out, const char *text);

#endif /* SPTD_QUERY_SCRIPT_LOCAL_H */
