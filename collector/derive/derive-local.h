/* derive-local.h — what derive/ units share. */
#ifndef SPTD_DERIVE_LOCAL_H
#define SPTD_DERIVE_LOCAL_H

#include "sptd_col_base.h"
#include "sptd_col_derive.h"
#include "sptd_col_perf.h"

struct sptd_store;
struct sptd_dec_session;

/* The longest call chain a kernel records, in entries: frames up to
 * perf_event_attr.sample_max_stack (16 bits; sysptd asks 127, perf's
 * default) plus a context marker per change of context (at most
 * kernel.perf_event_max_contexts_per_stack, itself at most 1000).  A
 * raw_sample chain longer than this is a damaged file: one of 400 MB made
 * decode run 141 s in 9.1 GB and write 50 M callsite rows. */
#define SPTD_DERIVE_MAX_CHAIN (65535 + 1000)

/* Callsite rows one decode may intern for @ROWS raw_sample rows: 128 per
 * row (perf's default --max-stack, 127, and one) and a million besides.
 * Real stacks share their callers, so they stay far below it; more is a
 * file forged to exhaust memory. */
#define SPTD_DERIVE_CALLSITE_BUDGET(ROWS) ((int64_t)(ROWS) * 128 + ((int64_t)1 << 20))

/* Every row of raw table @table (raw_sample, raw_ftrace_page, raw_pt)
 * names a CPU from 0 to 2^31 - 1 (a cpu column of -1, 2^31 or INT64_MAX
 * read as an int became a negative cpu, or another CPU's).  0; -EBADMSG
 * with sptd_store_damaged() naming the table, the row and the value; or
 * the store's error. */
int sptd_col_derive_check_cpus(struct sptd_store *st, const char *table);

/* Every raw_sample call chain is whole 8-byte entries and at most
 * SPTD_DERIVE_MAX_CHAIN of them; checked with length(), which SQLite
 * answers without reading the blob.  0, -EBADMSG (sptd_store_damaged: the
 * row and its size) or the store's error. */
int sptd_col_derive_check_chains(struct sptd_store *st);

/* The TEXT_POKE records of the stored sideband (raw_sideband), on the
 * incident clock, and meta pt_kernel_copied_ns, to session @s: kernel code
 * decodes as it ran, not as copied (decode/textpatch.c).  0, -EINVAL, or
 * the store's error or -ENOMEM. */
int sptd_col_derive_text_pokes(struct sptd_store *st, struct sptd_dec_session *s);

/* Names for the kernel code session @s holds as bytes (derive_ksyms.c):
 * the kallsyms the recorder set, else the kernel symbol rows the incident
 * stored; a symfile made for it is the caller's in *@owned (free it with
 * sptd_dec_symfile_destroy after the session).  Call before
 * sptd_col_derive_text_pokes.  0, -EINVAL, -ENOMEM, the store's error. */
struct sptd_dec_symfile;
int sptd_col_derive_kernel_names(struct sptd_store *st, struct sptd_dec_session *s,
                                 struct sptd_dec_symfile **owned);

/* The files `sysptd decode` unwinds stored user stacks with
 * (derive_unwind.c): the incident's dso rows and where their bytes are. */
struct sptd_col_derive_files;
/* 0 and *@out; -EINVAL, -ENOMEM, the store's errors. */
int sptd_col_derive_files_create(struct sptd_store *st, struct sptd_col_derive_files **out);
/* A read-only descriptor of dso @dso_id's file, proven to be the recorded
 * one (embedded copy; image cache or recorded path by build-id), *@name its
 * recorded path (valid until destroy); the caller closes it.  -ENOENT
 * (no such dso, no file, or nothing proves one), -ESTALE, -EACCES,
 * -EINVAL, or a store/file error. */
int sptd_col_derive_files_open(struct sptd_col_derive_files *f, int64_t dso_id,
                               const char **name);
/* Accepts NULL; removes what was unpacked. */
void sptd_col_derive_files_destroy(struct sptd_col_derive_files *f);

/* ---- the function of a memory sample's pc (derive_spe_sym.c) ------------- */

struct sptd_col_spe_sym;
/* Over @st's raw_mmap, dso and symbol rows.  0 and *@out, -ENOMEM, the
 * store's errors. */
int sptd_col_spe_sym_create(struct sptd_store *st, struct sptd_col_spe_sym **out);
/* The symbol.id of the function holding @pc in process @pid (a row added
 * when none has it yet); -ENOENT no mapping, file or symbol covers it,
 * -EINVAL, -ENOMEM, the store's errors. */
int64_t sptd_col_spe_sym_resolve(struct sptd_col_spe_sym *y, int pid, uint64_t pc);
/* Accepts NULL. */
void sptd_col_spe_sym_destroy(struct sptd_col_spe_sym *y);

#endif
