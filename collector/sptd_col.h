/* sptd_col.h — the sysptd program: argv -> subcommands.  Each subcommand
 * returns the process exit status (SPTD_EXIT_*, sptd_col_base.h).
 *
 * Units: cli.c dispatches argv[1] to a subcommand; cmd_<name>.c is one
 * subcommand (cmd_control.c: snapshot and status; cmd_flame.c: flamegraph
 * and diff); cmd_common.c holds what several subcommands share (and the
 * drop of root, once privsep.c) and calls none of them. */
#ifndef SPTD_COL_H
#define SPTD_COL_H

#include <sys/types.h>

#include "sptd_col_base.h"

struct option;
struct sptd_store;

/* ---- shared by the subcommands (cmd_common.c) ------------------------------- */

/* Start a getopt_long() scan of a subcommand's arguments: forget what an
 * earlier scan in this process left behind (optind = 0 makes getopt re-read
 * the ordering flag of the next optstring and drop a half-read "-abc") and
 * leave every error message to the caller (opterr = 0). */
void sptd_col_getopt_start(void);
/* getopt_long() for an optstring that starts with "-:": options and operands
 * come back in command-line order (an operand as 1, in optarg), a missing
 * value as ':' (optopt names the option), anything unknown as '?', and -1
 * after the last argument or at "--" (the operands after it start at
 * optind).  *@word is the argument the result came from as the user typed
 * it ("--format=csv", "-r"), for messages.  Call sptd_col_getopt_start()
 * first. */
int sptd_col_getopt_next(int argc, char **argv, const char *shortopts,
                         const struct option *longopts, const char **word);
/* For a subcommand that takes no arguments but -h/--help: 0 when the
 * command line is empty, 1 when it asks for help (the caller prints it),
 * -EINVAL when it holds anything else ("sysptd @cmd: unexpected argument
 * 'X'" printed to stderr). */
int sptd_col_args_none(int argc, char **argv, const char *cmd);
/* The value of --timeout (@word as typed) for @cmd: a duration, "0" for
 * no limit, into *@ns.  0, or SPTD_EXIT_USAGE with the message printed. */
int sptd_col_parse_timeout(const char *cmd, const char *word, const char *text, int64_t *ns);
/* The command line @argv[0..@argc) joined by spaces into @buf (@len bytes,
 * truncated to fit), as recorded in an incident's meta.  Returns @buf. */
char *sptd_col_command_text(int argc, char **argv, char *buf, size_t len);
/* Where the service writes incidents unless told otherwise (--output), and
 * where `latest` and `sysptd list` look unless told otherwise (--dir). */
#define SPTD_COL_DEFAULT_DIR "/var/lib/sysptd"

/* The incident files of directory @dir: the names (not paths) of its
 * regular files ending in ".db", in version order ("incident-...-9.db"
 * before "...-10.db"; the service's names sort by time).  *@names is an
 * array of *@n strings, freed with sptd_col_names_free().  -errno of
 * opendir, or -ENOMEM. */
int sptd_col_incident_scan(const char *dir, char ***names, size_t *n);
/* Free what sptd_col_incident_scan() returned. */
void sptd_col_names_free(char **names, size_t n);
/* The file an INCIDENT argument names, into @path (@len bytes): @arg as it
 * is, except "latest", the newest incident of @dir (NULL: the default
 * directory): its last "incident-*.db" in version order, else its last
 * "*.db".  On failure prints one message for subcommand @cmd to stderr and
 * returns the exit status (SPTD_EXIT_BADFILE: no such directory or no
 * incident in it), else 0. */
int sptd_col_incident_resolve(const char *cmd, const char *arg, const char *dir,
                              char *path, size_t len);

/* The width of the terminal @fd is (columns), or 0 when @fd is not a
 * terminal: tables are cut to a terminal's width and never otherwise. */
int sptd_col_term_width(int fd);

/* Progress of long work on a terminal: one line on stderr rewritten in
 * place ("sysptd import: decoding PT  43% (312112 of 713168)"), each
 * phase shown when it begins and when it is complete, in between at most
 * ten times a second. */
struct sptd_col_progress {
	const char *cmd;           /* "sysptd import" */
	int on;                    /* stderr is a terminal and not -q: show */
	char phase[32];            /* the phase last shown */
	int64_t last_ns;           /* when (CLOCK_MONOTONIC) */
	int shown;                 /* a line is on the terminal */
};
/* @p for @cmd: 1 when stderr is a terminal and !@quiet (then report with
 * sptd_col_progress_show, @p as its context), else 0 (then showing does
 * nothing). */
int sptd_col_progress_init(struct sptd_col_progress *p, const char *cmd, int quiet);
/* Show @phase: @done of @total (0: a count alone), or nothing for a phase
 * without numbers (@done and @total 0). */
void sptd_col_progress_show(void *p, const char *phase, uint64_t done, uint64_t total);
/* Clear the line (before anything else is printed). */
void sptd_col_progress_end(struct sptd_col_progress *p);

/* The incident opens of the subcommands (@cmd), each in the steps around
 * the drop of root that keep SQLite's parse on the user's side.  On
 * failure each prints one message naming the file and the problem to
 * stderr and returns the exit status (SPTD_EXIT_BADFILE for
 * missing/corrupt/not an incident), else 0. */
/* Open INCIDENT @path into *@fd as root, to be read with
 * sptd_col_incident_open_fd once root is given up. */
int sptd_col_incident_fd(const char *cmd, const char *path, int *fd);
/* Read (read-only) the incident open at @fd, @path naming it in messages:
 * the file the caller looked at is the file read. */
int sptd_col_incident_open_fd(const char *cmd, int fd, const char *path,
                              struct sptd_store **st);
/* Open INCIDENT @path for update: sptd_store_open_update as root (the
 * private copy), then _finish after the drop (SQLite reads the copy).
 * After _finish fails, destroy the store. */
int sptd_col_incident_update(const char *cmd, const char *path, struct sptd_store **st);
int sptd_col_incident_update_finish(const char *cmd, const char *path, struct sptd_store *st);

/* Least privilege for commands that parse files (docs/SECURITY.md): run
 * @fn, which opens what it needs, calls sptd_col_drop_root() and then
 * parses, in a child process when root (the parent, still root, renames
 * the files the child hands over; see sptd_col_privs_child).  Returns
 * @fn's exit status. */
int sptd_col_parse_as_user(const char *cmd, int (*fn)(void *ctx), void *ctx);
/* Give up root for good (to the user who ran sudo, else nobody), saying
 * why on stderr when that fails.  0 (also when not root), or
 * SPTD_EXIT_FAIL: then stop, never parse as root. */
int sptd_col_drop_root(const char *cmd);

/* Most entries a --cpu or --tid list may name. */
#define SPTD_COL_MAX_LIST 4096
/* "0,2-3" -> @out[0..*n) (SPTD_COL_MAX_LIST entries; ranges expanded when
 * @ranges; @max_value bounds each).  -EINVAL for anything else. */
int sptd_col_parse_list(const char *text, int ranges, int64_t max_value, int *out, size_t *n);
/* --time @spec ("A,B", either may be empty; each SECONDS on the clock of
 * the printed times, relative to the window start when @reltime, a
 * duration after the window start, or a percentage of the window) against
 * incident @st (@path in messages) into *@start_ns and *@end_ns (left as they
 * are for an empty end).  0, or the exit status with the message printed
 * for @cmd (SPTD_EXIT_USAGE, SPTD_EXIT_BADFILE for a forged window). */
int sptd_col_time_range(const char *cmd, const char *spec, struct sptd_store *st,
                        const char *path, int reltime, int64_t *start_ns, int64_t *end_ns);

/* -o FILE of a command that reads incidents as the user (flamegraph): made
 * as root beside its final name (sptd_col_newfile: O_EXCL|O_NOFOLLOW, a
 * random name; what a killed writer left removed) with @mode, given to
 * the user who ran sudo; written through nf->fd by the child, renamed into
 * place with _commit once it succeeded (sptd_col_newfile_fini otherwise).
 * 0, or the exit status with the message printed for @cmd. */
int sptd_col_output_open(const char *cmd, const char *output, mode_t mode,
                         struct sptd_col_newfile *nf);
int sptd_col_output_commit(const char *cmd, const char *output, struct sptd_col_newfile *nf);

/* ---- the program ------------------------------------------------------------ */

/* Dispatch argv[1] to a subcommand (no subcommand or an option first:
 * record).  Returns the exit status. */
int sptd_col_main(int argc, char **argv);

struct sptd_col_record_opts;
/* Parse record's command line into @o.  Returns 0, 1 for --help (printed),
 * or -EINVAL with the message printed to stderr. */
int sptd_col_record_parse(int argc, char **argv, struct sptd_col_record_opts *o);

/* The subcommands: each takes its own argv (argv[0] its name, or "sysptd"
 * for record run without one) and returns the exit status. */
int sptd_col_cmd_record(int argc, char **argv);    /* the recording service */
int sptd_col_cmd_decode(int argc, char **argv);    /* rebuild derived tables */
int sptd_col_cmd_query(int argc, char **argv);     /* SQL or a report */
int sptd_col_cmd_export(int argc, char **argv);    /* Perfetto / JSON trace */
int sptd_col_cmd_import(int argc, char **argv);    /* perf.data or raw PT */
int sptd_col_cmd_snapshot(int argc, char **argv);  /* service: write one now */
int sptd_col_cmd_status(int argc, char **argv);    /* service: what it does */
int sptd_col_cmd_list(int argc, char **argv);      /* incidents in a folder */
int sptd_col_cmd_list_events(int argc, char **argv); /* tracepoints for -e */
int sptd_col_cmd_doctor(int argc, char **argv);    /* what this machine has */
int sptd_col_cmd_script(int argc, char **argv);    /* every event, in order */
int sptd_col_cmd_flamegraph(int argc, char **argv); /* SVG or folded stacks */
int sptd_col_cmd_diff(int argc, char **argv);      /* what changed, A to B */

#endif /* SPTD_COL_H */
