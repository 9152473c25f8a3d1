/* freeze-local.h — the event that froze ftrace when the kernel did
 * (freeze_scan.c), for the capture. */
#ifndef SPTD_COL_FREEZE_LOCAL_H
#define SPTD_COL_FREEZE_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_sched.h"
#include "sptd_store.h"
#include "trigger-local.h"

/* Follows IRQ handlers, and the latest event, through the pages as they
 * are captured. */
struct sptd_col_freeze_scan {
	const struct sptd_col_trigger_spec *spec; /* the trigger that fired */
	struct sptd_sched_parser *parser;  /* NULL: nothing to look for */
	int irq;                           /* 1: look for handler returns */
	int64_t last_ts;                   /* the latest event of any CPU, -1 none */
	int last_cpu;                      /* its CPU */
	int64_t *entry_ts;                 /* per CPU: open handler's entry, -1 none */
	int *entry_irq;                    /* per CPU: its IRQ */
	char (*entry_name)[32];            /* per CPU: its name */
	int64_t exit_ts;                   /* latest return of a wanted IRQ, -1 none */
	int exit_cpu, exit_irq;            /* its CPU and IRQ */
	int64_t exit_took;                 /* its handler's duration, -1 unknown */
	char exit_name[32];                /* its name, "" unknown */
	/* perf's hit, to be found in ftrace's record (sptd_col_freeze_scan_match) */
	int match;                         /* 0 none, SPTD_TRIG_IRQ or SPTD_TRIG_LATENCY */
	int match_cpu, match_subject;      /* the hit's CPU; its IRQ, or the task switched in */
	int64_t match_at;                  /* perf's time of it */
	int64_t match_slack;               /* how far ftrace's time of it may be */
	int64_t match_entry;               /* irq: the open entry on match_cpu, -1 none */
	int match_entry_irq;               /* its IRQ */
	char match_entry_name[32];         /* its name */
	int64_t found_ts, found_took;      /* the nearest event found (-1 none), and
	                                    * the handler's time (-1 unknown) */
	char found_name[32];               /* irq: its handler's name */
};

/* Look for what froze ftrace when the kernel freezes at @spec's event:
 * the handler return for an irq trigger (no min=), the latest recorded
 * event for the others (a tracepoint trigger's event is not recorded
 * unless the instance has it: the hit came right after that event).
 * Otherwise the scan does nothing.  0, or -ENOMEM. */
int sptd_col_freeze_scan_init(struct sptd_col_freeze_scan *fs,
                              const struct sptd_col_trigger_spec *spec);
/* Feed one format or page as sptd_sched_trace_capture hands it out
 * (formats first).  0, or -ENOMEM. */
int sptd_col_freeze_scan_raw(struct sptd_col_freeze_scan *fs, enum sptd_sched_raw_kind kind,
                             const char *name, int cpu, const void *data, size_t len);
/* When the rings froze at a wanted handler return more than @slack_ns
 * before @fire (a hit perf did not sample), make that return the fire
 * (time, CPU, detail): 1.  When @fire is one no perf sample reported
 * (fire->unreported: its time is when the service noticed the freeze) and
 * no handler return names the hit, the hit came after the latest recorded
 * event and before the next would have been: that event's time becomes
 * the fire's (CPU unknown, -1), said in its detail: 2.  Else 0 and @fire
 * unchanged.  Needs the rings' clock to be @fire's (CLOCK_MONOTONIC, the
 * sampling source's "mono"). */
int sptd_col_freeze_scan_apply(const struct sptd_col_freeze_scan *fs, int64_t slack_ns,
                               struct sptd_col_fire *fire);
/* Also look for the event perf's hit @fire (fire->measured: an irq or
 * latency trigger) was, in ftrace's record: the return of IRQ
 * fire->subject, or the switch to task fire->subject, on fire->cpu, nearest
 * fire->ts within @slack_ns.  Call after init, before the pages.  0, or
 * -ENOMEM. */
int sptd_col_freeze_scan_match(struct sptd_col_freeze_scan *fs, const struct sptd_col_fire *fire,
                               int64_t slack_ns);
/* When that event was found, make its time the fire's (an irq: and the
 * handler's time, ftrace's entry to return, in fire->measure and the
 * detail, as its irq_slice has them): 1.  Else 0 and @fire unchanged. */
int sptd_col_freeze_scan_matched(const struct sptd_col_freeze_scan *fs,
                                 struct sptd_col_fire *fire);
/* A latency trigger's claim, from the incident's own thread_state (after
 * derive): the runnable row of task fire->subject that ends at fire->ts
 * (ftrace's switch, when sptd_col_freeze_scan_matched found it; else the
 * nearest ending within @slack_ns) is the wait; fire->measure and the
 * detail become its length, said as a lower bound when the row began
 * before the window.  With no such row the detail says perf's wait is not
 * in the record and claims none (fire->measure -1).  0, or a negative
 * errno of the store. */
int sptd_col_freeze_scan_wait(struct sptd_store *st, struct sptd_col_fire *fire,
                              int64_t slack_ns);
void sptd_col_freeze_scan_fini(struct sptd_col_freeze_scan *fs);

#endif
