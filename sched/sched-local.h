/* sched-local.h — private to sched/: the structs behind the opaque handles
 * of sptd_sched.h and the helpers the units share. */
#ifndef SPTD_SCHED_LOCAL_H
#define SPTD_SCHED_LOCAL_H

#include <stdint.h>
#include <sys/types.h>
#include <syslog.h>

#include "sptd_sched.h"

struct tracefs_instance;

/* Most events sysptd enables, plus room for the waking fallback. */
#define SPTD_SCHED_MAX_EVENTS 48  /* the 9 of the scheduling view + -e ones */
/* Most traceoff triggers one instance tracks (one per freeze_on event). */
#define SPTD_SCHED_MAX_TRIGGERS 16
/* Room for "system/event" in a name. */
#define SPTD_SCHED_NAME_LEN 128
/* Room for "events/SYSTEM/EVENT/trigger". */
#define SPTD_SCHED_PATH_LEN 192

struct sptd_sched_trace {
	struct tracefs_instance *inst;   /* our instance; NULL after destroy */
	char name[SPTD_SCHED_NAME_LEN];  /* instance name */
	dev_t dev;                       /* the instance directory made: another
	                                  * made under the same name after ours
	                                  * was removed is not ours */
	ino_t ino;
	int nr_events;                   /* used entries of @events */
	char events[SPTD_SCHED_MAX_EVENTS][SPTD_SCHED_NAME_LEN]; /* "sys/event" enabled */
	int nr_triggers;                 /* used entries of @triggers */
	char triggers[SPTD_SCHED_MAX_TRIGGERS][SPTD_SCHED_PATH_LEN]; /* trigger files with traceoff */
	char error[512];                 /* last error detail (kernel error_log text) */
};

/* Report through the hook set by sptd_sched_set_log (silent when unset). */
void sptd_sched_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* 1 if @s is usable as one tracefs path component (no '/', not "." or
 * "..", non-empty, shorter than SPTD_SCHED_NAME_LEN / 2). */
int sptd_sched_name_ok(const char *s);

/* prev_state decoding, format driven (see prev_state.c). */
struct sptd_sched_state_map {
	int nr;                 /* flags found in the print fmt */
	uint64_t value[16];     /* flag bit */
	char letter[16][4];     /* its letter, e.g. "S" */
	uint64_t mask;          /* OR of all flag bits: zero means "R" */
	uint64_t preempt_bit;   /* bit that adds "+" (preempted while runnable) */
};
/* Fill @map from a sched_switch format text; the built-in 6.x table when the
 * text has no usable __print_flags.  Returns 1 if taken from the text, 0 if
 * the fallback was used. */
int sptd_sched_state_map_init(struct sptd_sched_state_map *map, const char *format);
/* Write the letters for @value into @out (at least 4 bytes). */
void sptd_sched_state_format(const struct sptd_sched_state_map *map, uint64_t value,
                             char out[4]);

/* A format file's text rebuilt from lines of the shapes the kernel writes
 * (format_vet.c): header lines, field lines, blank lines; the print fmt is
 * replaced by an empty one.  @fields_only: field and blank lines only
 * (header_page).  *@out is malloc'd (the caller frees it).  0, -ENOMEM, or
 * -EBADMSG with the first refused line number (1-based) in *@bad_line. */
int sptd_sched_format_vet(const char *text, int fields_only, char **out, int *bad_line);

#endif /* SPTD_SCHED_LOCAL_H */
