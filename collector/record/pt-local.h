/* pt-local.h — internals of the Intel PT source (pt_*.c). */
#ifndef SPTD_PT_LOCAL_H
#define SPTD_PT_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_col_base.h"
#include "sptd_col_perf.h"
#include "sptd_col_record.h"

/* Read ROOT/bus/event_source/devices/intel_pt/@rel into @buf, first line
 * only.  -errno of the read. */
int sptd_col_pt_read_sysfs(const char *rel, char *buf, size_t len);

/* The CPU as libipt wants it described. */
struct sptd_col_pt_cpu {
	char vendor[13];          /* "GenuineIntel", "AuthenticAMD" */
	int family, model, stepping; /* display family/model, as perf reports */
	uint32_t cpuid15_eax;     /* TSC/crystal ratio denominator; 0 unknown */
	uint32_t cpuid15_ebx;     /* ... numerator */
};
/* Identify the running CPU with CPUID (leaf 0, 1, 0x15 when present). */
void sptd_col_pt_cpu_identify(struct sptd_col_pt_cpu *cpu);

/* TSC -> perf clock, from the PT event's mmap page, and perf clock ->
 * CLOCK_MONOTONIC.  Measured again at every freeze: the perf clock
 * (local_clock) is not slewed by NTP, CLOCK_MONOTONIC is, so the offset
 * between them moves by up to 500 ppm of the service's uptime. */
struct sptd_col_pt_time {
	int from_perf;            /* 1: cap_user_time_zero; 0: measured here */
	uint32_t mult;            /* ns = zero_ns + (tsc * mult >> shift) */
	int shift;
	uint64_t zero_tsc;        /* tsc subtracted first (0 for perf's page) */
	int64_t zero_ns;          /* perf time_zero (or ns at zero_tsc) */
	int64_t mono_offset_ns;   /* CLOCK_MONOTONIC - perf clock */
	int64_t measured_ns;      /* CLOCK_MONOTONIC when the two relations were
	                           * last measured (the last freeze) */
	int64_t offset_err_ns;    /* mono_offset_ns is good to +- this (half
	                           * the narrowest bracket of clock reads); -1:
	                           * not measured (no way to read the perf clock) */
	int perf_clock_probe;     /* 1: mono_offset_ns from a COMM record of our
	                           * own (no TSC conversion on the page) */
	uint64_t base_tsc;        /* !from_perf: TSC and CLOCK_MONOTONIC at
	                           * create, the long baseline of the TSC rate */
	int64_t base_ns;
};
/* CLOCK_MONOTONIC - perf clock, read from the time of a COMM record the
 * kernel writes of this thread on prctl(PR_SET_NAME) (same name) between
 * two CLOCK_MONOTONIC reads, the narrowest of a few tries: 0 with
 * *@offset_ns and *@err_ns (+- bound) set; -EINVAL NULL arguments, the
 * open's or mmap's -errno, -ENODATA no record came. */
int sptd_col_pt_perf_clock_probe(int64_t *offset_ns, int64_t *err_ns);
/* Perf-clock ns of @tsc. */
int64_t sptd_col_pt_time_ns(const struct sptd_col_pt_time *t, uint64_t tsc);
/* Fill @t when the source is created: the TSC -> perf conversion of
 * @ring's page (a PT event's ring), or, without one, the start of a TSC
 * line measured here (a 5 ms baseline); then a first
 * sptd_col_pt_time_measure (pt_clock.c). */
void sptd_col_pt_time_setup(struct sptd_col_pt_time *t, const struct sptd_col_perf_ring *ring);
/* Measure @t's relations again (at every freeze): the conversion as
 * @ring's page has it now and the offset to CLOCK_MONOTONIC, or the TSC
 * line and the perf-clock probe (pt_clock.c). */
void sptd_col_pt_time_measure(struct sptd_col_pt_time *t, const struct sptd_col_perf_ring *ring);

/* Write the decode configuration and the conversion into meta. */
int sptd_col_pt_meta_write(struct sptd_store *st, const struct sptd_col_pt_pmu *pmu,
                           const struct sptd_col_pt_setup *setup,
                           const struct sptd_col_pt_cpu *cpu,
                           const struct sptd_col_pt_time *time);

/* Store @buf as raw_sideband row (@cpu, @seq), parse it and write raw_switch rows
 * (SWITCH_CPU_WIDE switch-in records) and raw_task rows (COMM records),
 * times shifted by @offset_ns onto the incident clock.  Returns the number
 * of records. */
int sptd_col_pt_sideband_store(struct sptd_store *st, int cpu, int seq, const void *buf,
                               size_t len, uint64_t sample_type, int64_t offset_ns);

/* As sptd_col_pt_mmaps_exited() over the records in @buf (raw_sideband
 * bytes written with @sample_type).  Returns the raw_mmap rows added. */
int sptd_col_pt_mmaps_from_records(struct sptd_store *st, const void *buf, size_t len,
                                   uint64_t sample_type, const int *pids, int npids);

/* Put @value into the bits of @term in @config (3 words).  -EINVAL when the
 * term is absent or @value does not fit. */
int sptd_col_pt_term_set(const struct sptd_col_pt_term *term, uint64_t value,
                         uint64_t config[3]);
/* Parse a format file's text ("config:0-3,7", "config1:5") into @term.
 * -EBADMSG when it does not parse. */
int sptd_col_pt_term_parse(const char *text, struct sptd_col_pt_term *term);

/* The recording source: an intel_pt event and a sideband event per CPU. */
struct sptd_col_pt_config {
	struct sptd_col_pt_request req; /* timing, user_only, sizes */
	const int *cpus;         /* CPUs to trace */
	int ncpus;               /* count of @cpus */
	size_t sideband_pages;   /* data pages of each sideband ring, power of
	                          * two; 0: 64 */
	int aux_pause;           /* 1: try AUX pause (kernel >= 6.13) */
	int cpu_family, cpu_model, cpu_stepping; /* 0: CPUID of this machine
	                          * (recorded only on GenuineIntel: other vendors
	                          * have no PT, and libipt knows no errata for them) */
};

struct sptd_col_pt;

/* Read the PMU, build the setup, open per CPU the PT event (pid -1, cpu N,
 * disabled; data ring + read-only AUX ring = overwrite/snapshot mode) and
 * the sideband dummy event (mmap2, comm, comm_exec, task, context_switch;
 * sample_id_all TID|TIME|CPU; read-only write_backward ring), and read the
 * time conversion from the PT event's mmap page.  Nothing is enabled yet.
 * -ENODEV no PT, -ENOTSUP PMU lacks tsc, -EACCES/-EPERM not allowed,
 * -ENOMEM; @err says what and why. */
int sptd_col_pt_create(const struct sptd_col_pt_config *cfg, struct sptd_col_pt **out,
                       char *err, size_t errlen);
/* The setup in use (borrowed for the life of @pt). */
const struct sptd_col_pt_setup *sptd_col_pt_setup(const struct sptd_col_pt *pt);
/* Enable every CPU's events, sideband first, in one tight loop. */
int sptd_col_pt_enable(struct sptd_col_pt *pt);
/* Freeze: disable PT on every CPU (the PMU writes its last bytes and
 * aux_head), pause the sideband rings, then copy AUX and sideband into
 * memory owned by @pt.  Call sptd_col_pt_enable() to resume. */
int sptd_col_pt_freeze(struct sptd_col_pt *pt);
/* Write the last freeze into @st: raw_pt and raw_sideband per CPU,
 * raw_switch rows from SWITCH_CPU_WIDE, raw_task rows from COMM records,
 * meta pt_* (decode configuration, config used), tsc_* and
 * perf_clock_offset_ns (incident clock: CLOCK_MONOTONIC).  Returns bytes of
 * PT written. */
int64_t sptd_col_pt_write(struct sptd_col_pt *pt, struct sptd_store *st);
/* Processes named by the last freeze's sideband (pids > 0), sorted, unique:
 * fills up to @max, returns how many there are. */
int sptd_col_pt_pids(const struct sptd_col_pt *pt, int *pids, int max);
/* Code that is not in a file, for each process in @pids: anonymous
 * executable mappings (JIT) and the vDSO, copied from /proc/PID/mem into
 * raw_image rows (with a dso row "[anon:PID]" / "[vdso:PID]").  Processes
 * gone meanwhile are skipped.  Returns the number of images. */
int sptd_col_pt_images_anon(struct sptd_store *st, const int *pids, int npids);
/* Kernel code as it is in memory, out of ROOT/proc/kcore (@root: NULL for
 * $SPTD_KERNEL_ROOT, else "", the real /proc), each range a dso row and a
 * raw_image row: the text (_stext.._etext of ROOT/proc/kallsyms,
 * "[kernel.text]"), every live module's text ("[module:NAME]", from
 * ROOT/proc/modules) and code the kernel made at run time that kallsyms
 * names ("[jit:SYMBOL]": [bpf], [__builtin__ftrace] ...).  Module and JIT
 * ranges end where the next code starts (JIT at 64 KiB).  With @pt (NULL:
 * none) its poke rings are read first: code a KSYMBOL record registered and
 * no later one dropped is copied for the record's length under its name
 * ("[jit:NAME]"), whether or not kallsyms lists it.  Meta pt_kernel_image
 * ("kcore", or "none: WHY"), pt_kernel_modules, pt_kernel_jit,
 * pt_kernel_ksyms (JIT ranges a KSYMBOL sized).  What cannot be read costs
 * only itself: @why (@whylen bytes) says what was missed, for a warning (""
 * nothing).  Returns the number of ranges copied; -EINVAL, -ENOMEM, or the
 * store's error. */
int sptd_col_pt_images_kernel(struct sptd_store *st, const char *root, struct sptd_col_pt *pt,
                              char *why, size_t whylen);
/* After the kernel code was copied (sptd_col_pt_images_kernel): every
 * CPU's poke ring (TEXT_POKE and KSYMBOL records, on since the arm, never
 * paused by a freeze) into raw_sideband rows (seq 2), and how many
 * TEXT_POKE records they hold in meta pt_text_pokes: kernel text rewritten
 * between the trace and the end of the copy, which decode applies (kernel
 * code before each rewrite decodes as it was then: decode/textpatch.c).
 * Returns the count; -EINVAL, or the store's error. */
int sptd_col_pt_images_pokes(struct sptd_store *st, struct sptd_col_pt *pt);
/* Copy every CPU's poke ring now (sptd_col_pt_records then sees them).
 * 0, -EINVAL, -ENOMEM, or the pause ioctl's error. */
int sptd_col_pt_pokes_read(struct sptd_col_pt *pt);
/* The poke rings now, into raw_sideband (sptd_col_pt_images_pokes).  0,
 * -EINVAL, -ENOMEM, or the store's error. */
int sptd_col_pt_pokes_store(struct sptd_col_pt *pt, struct sptd_store *st);
/* Every sideband record of the last freeze (both rings of every CPU) and
 * of the last poke rings' copy to @fn.  Returns the count, or @fn's
 * error. */
int sptd_col_pt_records(const struct sptd_col_pt *pt, sptd_col_perf_record_fn fn, void *ctx);
/* The intel_pt event fd on @cpu (a group leader for AUX pause triggers);
 * -ENOENT when @cpu is not traced. */
int sptd_col_pt_fd(const struct sptd_col_pt *pt, int cpu);
/* CLOCK_MONOTONIC - perf clock as the source keeps it, for events on the
 * PT event's clock (AUX pause triggers): valid as long as @pt, read it at
 * each use.  NULL for NULL. */
const int64_t *sptd_col_pt_perf_offset(const struct sptd_col_pt *pt);
/* AUX pause needs a way back: open per CPU an aux_resume sibling of the PT
 * event (a disabled cpu-clock event, see sptd_col_pt_resume).
 * -EINVAL/-EOPNOTSUPP the kernel has no AUX pause (then nothing stays
 * open), or perf_event_open's error; @err says which. */
int sptd_col_pt_resume_open(struct sptd_col_pt *pt, char *err, size_t errlen);
/* Resume PT wherever a trigger paused it (after sptd_col_pt_enable, or
 * after a hit that did not fire): arms each CPU's aux_resume sibling for
 * one overflow (PERF_EVENT_IOC_REFRESH), which resumes PT on that CPU from
 * its own timer; any thread may call it, on any CPU set.  Returns the CPUs
 * armed; one that cannot be is logged once and reported in the next
 * incident (gap row, meta pt_resume_failed). */
int sptd_col_pt_resume(struct sptd_col_pt *pt);
/* File mappings of @pids (processes gone before the capture read /proc)
 * from the last freeze's MMAP2 records: dso rows (path + build-id when the
 * file is still there) and raw_mmap rows.  Writes meta pt_exited_mmaps.
 * Returns the raw_mmap rows added. */
int sptd_col_pt_mmaps_exited(const struct sptd_col_pt *pt, struct sptd_store *st,
                             const int *pids, int npids);

/* ---- images of mapped files (pt_imgcache.c) ---- */

/* Copy @path into the cache @dir under @build_id unless it is there; the
 * copy is checked to still have @build_id (-ESTALE: the file changed since)
 * and renamed into place whole.  @out gets the cached path.  Returns 1
 * copied, 0 already cached, -errno. */
int sptd_col_pt_imgcache_put(const char *dir, const char *path, const char *build_id,
                             char *out, size_t outlen);
/* For every dso row naming a file ("/..."): check the file still has the
 * recorded build-id, copy it into the cache @cache_dir (NULL: none) and,
 * with @portable, embed its bytes in raw_file.  Files that changed or
 * vanished are logged and counted (meta pt_images_missing), not fatal.
 * Writes meta pt_image_cache, pt_portable, pt_images_cached/_embedded.
 * Returns the number of file dsos, or a store error. */
int sptd_col_pt_images_files(struct sptd_store *st, const char *cache_dir, int portable);

/* Accepts NULL: disables, unmaps and closes everything. */
void sptd_col_pt_destroy(struct sptd_col_pt *pt);


#endif
