/* sptd_col_import.h — recordings made elsewhere -> a new incident: perf.data
 * files (perf record -e intel_pt//, --switch-events, sched_switch) and raw
 * Intel PT with its images, maps, tasks and schedule.
 *
 * Errors: -EBADMSG not perf.data / corrupt / truncated input, -ENOTSUP a
 * variant not handled, -ENOENT, -ENOMEM, -EINVAL; detail in @err or the log. */
#ifndef SPTD_COL_IMPORT_H
#define SPTD_COL_IMPORT_H

#include <stddef.h>
#include <stdint.h>

struct sptd_store;

/* ---- perf.data (perfdata_*.c) ---------------------------------------------- */

/* Where to look for the code of a recorded path. */
struct sptd_col_pd_paths {
	const char *symfs;      /* --symfs DIR or NULL */
	const char *kcore;      /* --kcore DIR (holding kcore, kallsyms) or NULL */
	const char *debug_dir;  /* build-id cache, default ~/.debug */
};

/* Options of `sysptd import perf.data`. */
struct sptd_col_pd_import_opts {
	const char *input;      /* perf.data path */
	const char *output;     /* incident to create */
	struct sptd_col_pd_paths paths;
	int jobs;               /* decode threads, 0 all cores */
	const char *command;    /* argv joined, for meta "command" */
	/* Called once the input is open and the output created, before any
	 * record of the input is parsed (the command gives up root there);
	 * a negative return stops the import with it.  NULL: none. */
	int (*opened)(void *ctx);
	void *opened_ctx;       /* handed to opened and written */
	/* NULL, or called with the incident fully written and decoded, just
	 * before it is committed (to print what it holds from the open
	 * store: the file may not be readable by name yet); a negative
	 * return stops the import */
	int (*written)(void *ctx, struct sptd_store *st);
};

/* What an import found (for the summary line and tests). */
struct sptd_col_pd_import_result {
	int64_t records;        /* records read */
	int64_t aux_bytes;      /* PT bytes stored */
	int64_t switches;       /* context switches from SWITCH/sched_switch */
	int64_t tracepoints;    /* wakeup and IRQ tracepoint records kept */
	int64_t images;         /* mappings whose code was found */
	int64_t images_missing; /* mappings whose code was not found */
	int has_pt;             /* AUXTRACE_INFO of intel_pt present */
	int has_spe;            /* AUXTRACE_INFO of arm_spe present (mem_sample) */
};

/* Read @o->input, write the incident @o->output (raw tables, meta) and
 * decode it (scheduling, PT).  -EBADMSG / -ENOTSUP / -ENOENT: the input
 * (message in @err; also any value of the file the store refuses);
 * -EEXIST output exists; -ENODATA nothing to import (neither PT nor
 * scheduling); -EINVAL only for NULL arguments; other negatives:
 * store/decode failures. */
int sptd_col_perfdata_import(const struct sptd_col_pd_import_opts *o,
                             struct sptd_col_pd_import_result *res,
                             char *err, size_t errlen);


/* ---- raw PT (rawpt_import.c) ------------------------------------------------ */

#define SPTD_IMPORT_MAX 256

/* What `sysptd import --pt` was given. */
struct sptd_col_rawpt_opts {
	const char *pt[SPTD_IMPORT_MAX];    /* per CPU, in CPU order */
	int npt;                         /* PT files */
	const char *image[SPTD_IMPORT_MAX]; /* FILE[@ADDR[:PID]] as given */
	int nimage;                      /* images */
	int family, model, stepping;     /* --cpu-id; 0: unknown */
	int mtc_freq, nom_freq;          /* decode configuration */
	int64_t cpuid15_eax, cpuid15_ebx; /* TSC/crystal ratio */
	int64_t tsc_hz;                  /* TSC frequency, 0 unknown */
	const char *sched;               /* TS CPU PREV NEXT COMM per line */
	const char *maps;                /* PID START END PGOFF PATH per line */
	const char *tasks;               /* PID TID [0xCR3] COMM per line */
	const char *out;                 /* the incident to create */
	int jobs;                        /* decode threads, 0 all cores */
	const char *command;             /* argv joined, for meta "command" */
};

/* Write @o's meta and PT files into the raw tables of @st (a store being
 * created): what root copies in.  -EINVAL no PT, -ENOENT/-EACCES an
 * unreadable file (logged), store errors. */
int sptd_col_rawpt_import_pt(struct sptd_store *st, const struct sptd_col_rawpt_opts *o);
/* Then its images, maps, tasks and schedule: files the invoking user
 * names, read and parsed after root is given up (docs/SECURITY.md).
 * -EINVAL an image spec the command line got wrong, -EBADMSG a malformed
 * --maps/--tasks/--sched line or an unusable image (the input's fault),
 * -ENOENT/-EACCES an unreadable file (all logged), store errors. */
int sptd_col_rawpt_import_inputs(struct sptd_store *st, const struct sptd_col_rawpt_opts *o);

#endif /* SPTD_COL_IMPORT_H */
