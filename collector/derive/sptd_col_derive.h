/* sptd_col_derive.h — raw tables -> derived tables: what capture, import and
 * `sysptd decode` all run.  Tasks (tid -> utid), scheduling, samples, PT,
 * sideband gaps, and where the code of a dso is found for decoding. */
#ifndef SPTD_COL_DERIVE_H
#define SPTD_COL_DERIVE_H

#include <stddef.h>
#include <stdint.h>

struct sptd_store;

/* ---- tasks (tasks.c): tid/pid -> utid/upid for every table -------------- */

struct sptd_col_tasks;

int sptd_col_tasks_create(struct sptd_col_tasks **out);
void sptd_col_tasks_destroy(struct sptd_col_tasks *t);
/* Learn that @tid belongs to process @pid (-1 unknown) and is called @comm
 * (NULL unknown).  Later knowledge refines earlier. */
int sptd_col_tasks_note(struct sptd_col_tasks *t, int tid, int pid,
                        const char *comm, const char *cmdline);
/* The utid for @tid, assigning one if new (never fails for tid >= 0;
 * -EINVAL for tid < 0, -ENOMEM). tid 0 is the idle task ("swapper"). */
int64_t sptd_col_tasks_utid(struct sptd_col_tasks *t, int tid);
/* The tid of @utid; -EINVAL when no task has it. */
int sptd_col_tasks_tid(const struct sptd_col_tasks *t, int64_t utid);
/* The process of @tid as learnt so far; -1 unknown (or no such task). */
int sptd_col_tasks_pid(struct sptd_col_tasks *t, int tid);
/* Write process and thread rows for everything known. */
int sptd_col_tasks_store(struct sptd_col_tasks *t, struct sptd_store *st);

/* ---- derivation from raw tables (derive_*.c): what `sysptd decode` runs -- */

/* Rebuild sample + callsite rows from raw_sample, raw_mmap, symbol. */
int sptd_col_derive_samples(struct sptd_store *st, struct sptd_col_tasks *tasks);
/* Rebuild sched_slice, thread_state, irq_slice, softirq_slice (+ gaps) from
 * raw_ftrace_* and raw_switch, clipped to meta window_start..window_end. */
int sptd_col_derive_sched(struct sptd_store *st, struct sptd_col_tasks *tasks);
/* Rebuild slice/gap/stats rows from raw_pt (+ images, switches); 0 rows and
 * success when the incident has no PT.  @jobs threads (0: all cores). */
int sptd_col_derive_pt(struct sptd_store *st, struct sptd_col_tasks *tasks, int jobs);
/* Rebuild mem_sample from raw_spe (Arm SPE), with stats of what did not
 * decode; 0 rows and success when the incident has none. */
int sptd_col_derive_spe(struct sptd_store *st, struct sptd_col_tasks *tasks);
/* All of the above in order, then process/thread rows; used after capture
 * and by `sysptd decode`. */
int sptd_col_derive_all(struct sptd_store *st, int jobs);
/* Report the PT decode's progress (phases "decoding PT", "call stacks",
 * "writing rows") to @fn in every later derive of this process; NULL:
 * none (the default: the service reports nothing). */
void sptd_col_derive_set_progress(void (*fn)(void *ctx, const char *phase, uint64_t done,
                                             uint64_t total), void *ctx);

/* The kernel's function symbols (kallsyms, runtime addresses) that the PT
 * decode of every later derive of this process names kernel code with
 * (borrowed until set again; NULL: none, the default).  The recorder sets
 * them around its capture's derive; without them the symbols stored with
 * the incident name it (collector/derive/derive_ksyms.c). */
struct sptd_dec_symfile;
void sptd_col_derive_set_kernel_syms(const struct sptd_dec_symfile *sf);

/* Rebuild the gap rows of raw_sideband (reasons "sideband: ..."): AUX
 * records flagged truncated/partial/collision, LOST records and trace
 * (re)starts (ITRACE_START).  Times converted with meta perf_clock_offset_ns.
 * Returns the number of gap rows. */
int sptd_col_derive_pt_sideband(struct sptd_store *st);

/* Tell @tasks the process (and name) of every thread the FORK, EXIT and
 * COMM records of raw_sideband name: threads that exited before the
 * capture keep their process.  0, -EINVAL, -ENOMEM, the store's errors. */
int sptd_col_derive_sideband_tasks(struct sptd_store *st, struct sptd_col_tasks *tasks);

/* The default --image-cache directory (static string). */
const char *sptd_col_pt_imgcache_default(void);
/* Where the cache @dir keeps the file @path of @build_id:
 * DIR/<build-id>/<basename of path>.  -EINVAL (bad build-id: hex only). */
int sptd_col_pt_imgcache_path(const char *dir, const char *build_id, const char *path,
                              char *out, size_t outlen);

/* Where decoding finds the bytes of a dso (sptd_col_pt_imgfind_lookup). */
#define SPTD_PT_IMAGE_EMBEDDED 1 /* raw_file of the incident (--portable) */
#define SPTD_PT_IMAGE_CACHED   2 /* the image cache, by build-id */
#define SPTD_PT_IMAGE_ORIGINAL 3 /* the recorded path, same build-id */

struct sptd_col_pt_imgfind;
/* A lookup over @st (borrowed, must outlive it).  The cache directory is
 * $SPTD_IMAGE_CACHE, else meta pt_image_cache, else the default. */
int sptd_col_pt_imgfind_create(struct sptd_store *st, struct sptd_col_pt_imgfind **out);
/* A readable file with the bytes of dso @dso_id (recorded @path, hex
 * @build_id or NULL): the embedded copy (unpacked into a private temporary
 * directory, keeping the basename), else DIR/<build-id>/<basename>, else
 * @path when its build-id matches.  *@where is valid until the next lookup;
 * an unpacked file stays on disk until destroy, so a decoder may read it
 * lazily.  Returns SPTD_PT_IMAGE_*, -ENOENT nowhere, -EACCES @path not readable
 * (by the user a command parses as), -ESTALE @path is now a
 * different file, -EINVAL, or a store/file error. */
int sptd_col_pt_imgfind_lookup(struct sptd_col_pt_imgfind *f, int64_t dso_id, const char *path,
                               const char *build_id, const char **where);
/* Removes unpacked files.  Accepts NULL. */
void sptd_col_pt_imgfind_destroy(struct sptd_col_pt_imgfind *f);

/* ---- --call-graph dwarf: user stacks unwound (sample_unwind.c) ----------- */

struct sptd_dec_unwind_map;
/* Where process @pid mapped, at @ts, the file holding @addr, with a
 * descriptor proven to be that file: 0 and *@map, or < 0 (-ENOENT: none;
 * the unwind stops there). */
typedef int (*sptd_col_unwind_find_fn)(void *ctx, int pid, int64_t ts, uint64_t addr,
                                       struct sptd_dec_unwind_map *map);
/* The unwinders of one capture or decode, one per process. */
struct sptd_col_unwinders;
/* What they did. */
struct sptd_col_unwind_stats {
	uint64_t samples;        /* samples with a user stack copy */
	uint64_t unwound;        /* ... whose IP had a file to unwind with */
	uint64_t deeper;         /* ... whose DWARF stack replaced a shorter
	                          * frame-pointer one */
};
/* 0 and *@out; -EINVAL, -ENOMEM.  @find gets @ctx, which must outlive it. */
int sptd_col_unwinders_create(sptd_col_unwind_find_fn find, void *ctx,
                              struct sptd_col_unwinders **out);
/* The call chain to keep for a sample at @ts of @pid whose chain is @ips
 * (@nr entries) and whose raw_sample.ustack blob is @ustack: *@chain @ips
 * itself (returns 0: no copy, nothing unwound, or no more user frames than
 * @ips holds), or the kernel part of @ips, PERF_CONTEXT_USER and the DWARF
 * frames (returns 1; borrowed until the next call).  -EINVAL, -ENOMEM. */
int sptd_col_unwind_sample(struct sptd_col_unwinders *w, int pid, int64_t ts,
                           const uint64_t *ips, uint64_t nr, const void *ustack,
                           size_t ustack_len, const uint64_t **chain, uint64_t *chain_nr);
/* Copy the counters into *@stats. */
void sptd_col_unwinders_stats(const struct sptd_col_unwinders *w,
                              struct sptd_col_unwind_stats *stats);
/* Accepts NULL. */
void sptd_col_unwinders_destroy(struct sptd_col_unwinders *w);

#endif /* SPTD_COL_DERIVE_H */
