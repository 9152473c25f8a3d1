/* sptd_col.h — the sysptd program: argv -> subcommands.  Each subcommand
 * returns the process exit status (SPTD_EXIT_*, sptd_col_base.h). */
#ifndef SPTD_COL_H
#define SPTD_COL_H

#include "sptd_col_base.h"

struct sptd_store;

/* The value of long option @opt at argv[*i]: "--opt=V", or the next
 * argument (advancing *i); NULL when it is missing. */
const char *sptd_col_option_value(int argc, char **argv, int *i, const char *opt);
/* Open INCIDENT @path for subcommand @cmd; on failure print one message
 * naming the file and the problem to stderr and return the exit status
 * (SPTD_EXIT_BADFILE for missing/corrupt/not an incident), else 0. */
int sptd_col_incident_open(const char *cmd, const char *path, int writable,
                           struct sptd_store **st);

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

/* Dispatch argv[1] to a subcommand (no subcommand or an option first:
 * record).  Returns the exit status. */
int sptd_col_main(int argc, char **argv);

struct sptd_col_record_opts;
/* Parse record's command line into @o.  Returns 0, 1 for --help (printed),
 * or -EINVAL with the message printed to stderr. */
int sptd_col_record_parse(int argc, char **argv, struct sptd_col_record_opts *o);
int sptd_col_cmd_record(int argc, char **argv);
int sptd_col_cmd_decode(int argc, char **argv);
int sptd_col_cmd_query(int argc, char **argv);
int sptd_col_cmd_export(int argc, char **argv);
int sptd_col_cmd_import(int argc, char **argv);
int sptd_col_cmd_snapshot(int argc, char **argv);
int sptd_col_cmd_status(int argc, char **argv);
int sptd_col_cmd_list(int argc, char **argv);
int sptd_col_cmd_doctor(int argc, char **argv);


#endif /* SPTD_COL_H */
