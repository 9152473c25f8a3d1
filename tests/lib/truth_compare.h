/* truth_compare.h — compare an incident's PT call intervals with the
 * ground truth of the emulated-PT generator (sptd-ptgen's truth.txt,
 * docs/PTGEN.md).  Shared by test_golden (import path), test_pt_fakegold
 * (capture path through the fake PMU) and test_ptgen2perf (perf.data
 * import path), with the helpers they share to run the generator and
 * sysptd and to clean up after themselves.
 *
 * Order: the truth is sorted by (thread, start, depth), its times being
 * exact; the incident is put in preorder through its parent links, since
 * with coarse timing (MTC, TSC) nested intervals may share a timestamp.
 *
 * Names: truth.txt holds mangled names, the incident demangled ones, so the
 * truth is demangled with sptd_dec_demangle before comparing; code without
 * a symbol (PLT stubs: "0xADDR" in the truth, a "dso+0xOFF" placeholder in
 * the incident) is compared by address.  "[irq]" slices of the incident are
 * left out (a user-only trace shows every preemption in user code as one;
 * the generator's truth has no interrupts). */
#ifndef SPTD_TRUTH_COMPARE_H
#define SPTD_TRUTH_COMPARE_H

#include <stddef.h>
#include <stdint.h>

struct sptd_store;

/* One call interval, from truth.txt or from the incident. */
struct frame {
	int tid, depth, flags;     /* thread, nesting level, SPTD_DEC_F_* */
	int64_t start, end;        /* ns */
	int64_t id;                /* incident: slice id; truth: line */
	int64_t parent;            /* incident: parent slice id, -1 none */
	size_t order;              /* incident: position in a preorder walk */
	uint64_t addr;             /* runtime address of the function (0 unknown) */
	uint64_t size;             /* incident: the symbol's size (0 unknown) */
	char name[520];            /* demangled */
};

/* A growable list of intervals. */
struct frames {
	struct frame *v;           /* the intervals */
	size_t n, cap;             /* used / allocated */
};

/* Append @f.  0 or -ENOMEM. */
int truth_frames_push(struct frames *fs, const struct frame *f);
/* Free the list (the struct itself is the caller's). */
void truth_frames_free(struct frames *fs);
/* Sort by thread, start, depth, then line: the truth's order. */
void truth_sort(struct frames *fs);
/* config.txt value of @key in the generator output @dir, or -1. */
int64_t truth_config_get(const char *dir, const char *key);
/* Read @dir/truth.txt, names demangled, sorted (truth_sort).  0 or -errno
 * (-EBADMSG: a malformed line). */
int truth_read(const char *dir, struct frames *out);
/* The slices of the open incident @st that @where (an SQL condition on
 * slice s) selects, appended to @out in no particular order, with thread
 * ids, symbol names, sizes and runtime addresses (symbol address + the bias
 * of its mapping in the thread's process, else of a mapping for every task,
 * pid -1), times minus @time_offset_ns.  0 or -errno (the store's message
 * printed to stderr). */
int truth_read_slices(struct sptd_store *st, const char *where, int64_t time_offset_ns,
                      struct frames *out);
/* The PT slices of the incident @path (all but [irq]), with thread ids,
 * symbol names and runtime addresses, times minus @time_offset_ns, in
 * preorder through their parent links.  0 or -errno. */
int truth_read_incident(const char *path, int64_t time_offset_ns, struct frames *out);
/* How far a decoded time may be from the truth for the timing mode of the
 * generator output @dir (its config.txt). */
int64_t truth_tolerance_ns(const char *dir);
/* Compare one for one: same thread, depth, flags and function, start and
 * end within @tol.  Prints a summary line and the first differences
 * (labelled @name).  0 when equal and non-empty, else -1. */
int truth_compare(const char *name, const struct frames *truth, const struct frames *dec,
                  int64_t tol);
/* Run @argv (argv[0] a path) with its stdout and stderr written to @log,
 * appended when @append, else replacing what @log held.  Its exit status,
 * or -1 when it could not be started or did not exit. */
int truth_run(char *const argv[], const char *log, int append);
/* Run the generator @ptgen -o @outdir with @args (NULL-ended, at most 36
 * words, at most 8 of them "@prog": the program prog in @progs), its
 * stdout and stderr appended to @log.  Its exit status (truth_run), or -1
 * when @args is too long. */
int truth_run_ptgen(const char *ptgen, const char *progs, const char *const args[],
                    const char *outdir, const char *log);
/* truth_run_ptgen with "--start-tsc NOW" first: the generated TSC starts at
 * this machine's, so that a capture relating the fake's perf clock to
 * CLOCK_MONOTONIC through the real TSC (pt_source.c) gets recent times even
 * where the TSC counted for days before this machine booted (a VM). */
int truth_run_ptgen_now(const char *ptgen, const char *progs, const char *const args[],
                        const char *outdir, const char *log);
/* Entries of @buf that truth_import_args() fills (at most). */
#define TRUTH_IMPORT_ARGS 20
/* Append to @argv (at *@argc) the `sysptd import --pt` arguments for the
 * generator's output @dir: one --pt per CPU of config.txt (at most 8),
 * --maps, --tasks, --sched (@sched, or DIR/sched.txt when NULL), the decode
 * configuration of config.txt, and -o @incident.  The strings live in
 * @buf, TRUTH_IMPORT_ARGS entries; @argv is not NULL-terminated. */
void truth_import_args(const char *dir, const char *sched, const char *incident,
                       char buf[][4200], char **argv, int *argc);
/* Append to @argv (at *@argc) an `--image=FILE@ADDR:PID` argument for each
 * image of the generator's output @dir (images.txt) that maps.txt says is
 * a process's [vdso]: its bytes, which `sysptd import --pt` cannot read
 * from a file of its own.  At most @max of them, the strings in @buf. */
void truth_vdso_args(const char *dir, char buf[][4200], int max, char **argv, int *argc);
/* Copy the incident @src to @dst, set its meta window_start to
 * @window_start and run `@sysptd decode @dst` (output appended to @log):
 * the same capture decoded for another window.  0, or -1 (said). */
int truth_decode_window(const char *sysptd, const char *src, const char *dst,
                        int64_t window_start, const char *log);
/* The PT window clip (derive_pt.c) of the incident @clipped against @whole,
 * the same capture decoded with nothing before its window: no slice of
 * @clipped starts before @window_start; the slices of @whole that ended
 * before it are gone, counted in stat slices_before_window; those that
 * cross it start there flagged start-truncated; every other one is kept.
 * Prints what differs (labelled @name).  The number of slices dropped, or
 * -1 when something differs or cannot be read. */
int64_t truth_check_clip(const char *name, const char *whole, const char *clipped,
                         int64_t window_start);
/* Print the first @max_lines lines of @log to stderr, indented. */
void truth_show_log(const char *log, int max_lines);
/* At the end of a test: remove its temporary directory @dir and all in it,
 * unless a check @failed or $SPTD_KEEP is set (then say where it is). */
void truth_tmp_done(const char *dir, int failed);

#endif
