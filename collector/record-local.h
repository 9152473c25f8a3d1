/* record-local.h — the recording service's options and state. */
#ifndef SPTD_RECORD_LOCAL_H
#define SPTD_RECORD_LOCAL_H

#include <stdint.h>

#include "sptd_col.h"
#include "trigger-local.h"

struct sptd_sched_trace;
struct sptd_col_pt;

#define SPTD_MAX_TRIGGERS 16
#define SPTD_MAX_CPUS 1024

enum sptd_col_source { SPTD_SOURCE_AUTO, SPTD_SOURCE_SAMPLE, SPTD_SOURCE_PT };

struct sptd_col_record_opts {
	int64_t window_ns;          /* history kept before the trigger */
	int64_t post_ns;            /* and after it */
	int64_t cooldown_ns;        /* ignore triggers this long after a capture */
	int count;                  /* incidents before exiting, 0 forever */
	int keep;                   /* newest incidents kept in output, 0 all */
	const char *output;         /* directory for incident files */
	enum sptd_col_source source;
	int freq;                   /* sampling frequency per CPU */
	uint64_t buffer_bytes;      /* per-CPU ftrace ring, 0: from window */
	int user_only;
	enum sptd_col_pt_timing timing; /* --timing (PT) */
	const char *image_cache;    /* --image-cache DIR (PT): mapped files by build-id */
	int portable;               /* --portable (PT): embed mapped files in the incident */
	int jobs;                   /* decode threads */
	int quiet;
	struct sptd_col_trigger_spec triggers[SPTD_MAX_TRIGGERS];
	int ntriggers;
	char command[1024];         /* argv joined, for meta */
};

/* Parse record's command line into @o.  Returns 0, 1 for --help (printed),
 * or -EINVAL with the message printed to stderr. */
int sptd_col_record_parse(int argc, char **argv, struct sptd_col_record_opts *o);

/* ftrace ring KiB per CPU for @o: --buffer, or sized from the window. */
uint64_t sptd_col_record_buffer_kb(const struct sptd_col_record_opts *o);

/* Delete the oldest incident-*.db files in @dir beyond @keep.  Returns how
 * many were removed. */
int sptd_col_retention(const char *dir, int keep);

/* The running service: what is armed and what it has done (cmd_record.c
 * arms and loops, record_capture.c freezes, copies and writes). */
struct sptd_col_service {
	struct sptd_col_record_opts *o;
	int cpus[SPTD_MAX_CPUS], ncpus;
	struct sptd_sched_trace *trace;
	struct sptd_col_sampler *sampler;
	struct sptd_col_pt *pt;     /* the PT source (source "pt"), else NULL */
	struct sptd_col_trigger *trig[SPTD_MAX_TRIGGERS];
	int ntrig;
	struct sptd_col_trigger_spec manual;
	int lock_fd, ctl_fd, sig_fd;
	int incidents;             /* written so far */
	int64_t last_capture;      /* ns, for --cooldown */
	int64_t armed_at;          /* ns when the rings last started filling */
	char last_path[4096];
	const char *source_name;
	int pt_failed;             /* opening PT failed: a runtime failure, not usage */
	int aux_pause;             /* 1: triggers pause PT in the kernel (AUX pause) */
	int kernel_freeze;         /* traceoff event triggers installed in ftrace */
	int aux_refused_logged;    /* the kernel's refusal was said once */
};

/* CLOCK_MONOTONIC now, in ns: the incident clock of the service. */
int64_t sptd_col_now_ns(void);
/* 1 when the service records Intel PT (source "pt"). */
int sptd_col_record_is_pt(const struct sptd_col_service *s);
/* Freeze, copy the window around @fire, re-arm, then decode and write one
 * incident.  An error loses this incident only. */
int sptd_col_record_capture(struct sptd_col_service *s, const struct sptd_col_fire *fire);
/* Turn every source back on after a capture. */
void sptd_col_record_rearm(struct sptd_col_service *s);

#endif
