/* fakepmu.h — a fake intel_pt PMU for tests of collector/pt_*.c.
 *
 * fakepmu_sysfs() writes a sysfs tree (intel_pt type, format/, caps/) of a
 * CPU generation under a directory; fakepmu_install() replaces the members
 * of sptd_col_sys so perf_event_open/mmap/ioctl/munmap/close of intel_pt and
 * dummy events are served here: the AUX ring and the data rings are plain
 * memory that the fake "hardware" fills with the PT bytes and sideband
 * records a test scripts for each CPU, when the PT event is disabled (the
 * freeze).  Everything else falls through to the real calls. */
#ifndef SPTD_FAKEPMU_H
#define SPTD_FAKEPMU_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

/* CPU generations whose caps differ in what matters to sysptd. */
enum fakepmu_gen {
	FAKEPMU_HASWELL,    /* no MTC, no CYC/psb_period, single ToPA entry */
	FAKEPMU_BROADWELL,  /* MTC, no CYC/psb_period */
	FAKEPMU_SKYLAKE,    /* MTC, CYC, psb_period, multiple ToPA entries */
	FAKEPMU_ODD,        /* Skylake caps with format bits moved and split */
	FAKEPMU_NOTSC,      /* a broken PMU without a tsc term */
};

/* Write ROOT/bus/event_source/devices/intel_pt for @gen with PMU type
 * @type.  0 or -errno. */
int fakepmu_sysfs(const char *root, enum fakepmu_gen gen, int type);

/* Overwrite ROOT/.../intel_pt/caps/@name with @value (after
 * fakepmu_sysfs), to describe the CPU a trace came from; @value as the
 * kernel prints it (hex).  -ENOENT for a name pt.c has no cap of (e.g.
 * max_nonturbo_ratio: fakepmu_sysfs_timing), 0 or -errno. */
int fakepmu_sysfs_cap(const char *root, const char *name, const char *value);
/* Overwrite ROOT/.../intel_pt/@name, one of pt.c's timing attributes at
 * the PMU's root: max_nonturbo_ratio (decimal) or tsc_art_ratio
 * ("num:den").  -ENOENT for any other name, 0 or -errno. */
int fakepmu_sysfs_timing(const char *root, const char *name, const char *value);
/* Write caps/ and the timing attributes of @gen under the PMU directory
 * @dev exactly as pt.c lays them out (fakepmu_sysfs calls it).  0 or -errno. */
int fakepmu_sysfs_layout(const char *dev, enum fakepmu_gen gen);

/* What one CPU's "hardware" produces while enabled. */
struct fakepmu_script {
	const unsigned char *pt;  /* PT byte stream written into the AUX ring */
	size_t pt_len;
	size_t drop_at, drop_len; /* bytes [drop_at, drop_at+drop_len) are lost:
	                           * not written, AUX record flagged TRUNCATED */
	const unsigned char *sb;  /* sideband records (oldest first) written to
	                           * the dummy event's backward ring */
	size_t sb_len;
	uint64_t aux_time;        /* perf time stamped on the AUX record */
	uint64_t end_tsc;         /* TSC at the stream's end (0: unknown), for
	                           * fakepmu_tsc_follow */
};

/* Replace sptd_col_sys with the fake for PMU @type; scripts per CPU index
 * (cpu number) up to @ncpus.  @head_is_counter: aux_head is a free-running
 * counter (else the position in the ring, as Intel PT snapshot mode does). */
void fakepmu_install(int type, const struct fakepmu_script *scripts, int ncpus,
                     int head_is_counter);
/* The same fake without touching sptd_col_sys (for a process that does
 * not link sptd_col: tests/fakepmu/preload.c): fills @fake with the fake
 * calls, which fall through to @real for everything not theirs. */
struct sptd_col_sys;
void fakepmu_serve(int type, const struct fakepmu_script *scripts, int ncpus,
                   int head_is_counter, const struct sptd_col_sys *real,
                   struct sptd_col_sys *fake);
/* The perf clock the fake's user pages offer from the next mmap on:
 * ns = @time_zero + (tsc * @mult >> @shift).  fakepmu_install() resets it
 * (fakepmu_serve() too) to the default, a clock that reads about
 * CLOCK_MONOTONIC now with ns = tsc / 2. */
void fakepmu_set_clock(uint64_t time_zero, uint32_t mult, uint16_t shift);
/* A perf clock that runs off CLOCK_MONOTONIC, as the kernel's does (NTP
 * slews CLOCK_MONOTONIC, not local_clock): from now on the fake's user
 * pages convert this machine's TSC to a clock that reads CLOCK_MONOTONIC +
 * @offset_ns now and runs @ppm parts per million fast; records the fake
 * makes at run time (fakepmu_clock_switches, the COMM of a clock probe:
 * a dummy with comm on pid 0, cpu -1) are stamped with it.  Call after
 * fakepmu_install; 0 or -EIO (no TSC rate measured). */
int fakepmu_clock_drift(int64_t offset_ns, int ppm);
/* That clock now. */
uint64_t fakepmu_clock_now(void);
/* @on: pages mapped from now on offer no TSC conversion
 * (cap_user_time_zero 0, time fields 0: a guest on kvm-clock). */
void fakepmu_clock_no_time_zero(int on);
/* With fakepmu_clock_drift: each time a PT event is disabled (a freeze),
 * its CPU switches from @tid_out to @tid_in, a SWITCH_CPU_WIDE out and
 * in pair stamped then written into that CPU's dummy ring (-1: none). */
void fakepmu_clock_switches(int tid_out, int tid_in);
/* @on 1: the TSC the fake offers (sptd_col_sys.tsc) is the hardware's
 * that made the scripts: each PT run sets it to the script's end_tsc, from
 * where it runs on at this machine's rate, so the run's trace ends at the
 * moment it is frozen, as real PT's does, and each incident's lies in its
 * window however long ago the script was made (one script serves every
 * incident: the TSC goes back at each run).  @on 0 (the default after
 * fakepmu_install): this machine's TSC.  Not with fakepmu_clock_drift,
 * whose clock reads this machine's TSC. */
void fakepmu_tsc_follow(int on);
/* A machine whose largest free physically contiguous block is @largest
 * bytes (0: no limit, the default after fakepmu_install): mapping an
 * overwrite (read-only) AUX ring bigger than that fails with ENOMEM, as
 * the kernel's rb_alloc_aux does for a PMU without multiple ToPA entries
 * (PERF_PMU_CAP_AUX_NO_SG); set it only for such a PMU. */
void fakepmu_aux_contiguous(size_t largest);
/* Restore the real calls and free every fake ring. */
void fakepmu_uninstall(void);

/* Failure injection: the next perf_event_open of an intel_pt event fails
 * with @err (0: no failure). */
void fakepmu_fail_open(int err);

/* Every open carrying aux_action bits into the group of a fake intel_pt
 * event fails with @err until reset with 0 (a kernel without AUX pause:
 * EINVAL).  Group siblings (AUX pause triggers, aux_resume events) are
 * served here, refused as the kernel refuses them (one clock per group,
 * one CPU, aux_action under intel_pt only). */
void fakepmu_fail_grouped(int err);
/* The group sibling @fd overflows on its CPU (a trigger hit): with
 * aux_pause its intel_pt leader stops writing there (what it produced up
 * to now stays) until a sibling with aux_resume fires; disable/enable
 * does not clear it.  PERF_EVENT_IOC_REFRESH on a sampling sibling fires
 * it the same way.  0 or -EINVAL (not a sibling). */
int fakepmu_fire(int fd);
/* A sample (TIME | CPU | RAW of 4 zero bytes, as far as the event asks)
 * stamped @time on @cpu, into the ring of the served event @fd.  0 or
 * -EINVAL (not served, not mapped, other sample_type bits). */
int fakepmu_put_sample(int fd, uint64_t time, int cpu);
/* PERF_EVENT_IOC_REFRESH fails with @err until reset with 0. */
void fakepmu_fail_refresh(int err);
/* 1 when the intel_pt event of @cpu is AUX-paused, 0 not, -1 none open. */
int fakepmu_pt_paused(int cpu);
/* The group_fd event @i was opened with (-1 none), and its own fd. */
int fakepmu_group_fd(int i);
int fakepmu_event_fd(int i);

/* @on 1: the fake is a kernel older than 5.9: an attr with text_poke set
 * is refused with EINVAL, as perf_copy_attr refuses reserved bits. */
void fakepmu_refuse_text_poke(int on);

/* Attributes of the events opened so far, in order (NULL past the end). */
const struct perf_event_attr *fakepmu_attr(int i, int *cpu);
/* How many events are open now / were opened in all. */
int fakepmu_open_count(void);
/* Mapping checks the fake made: 1 when every AUX ring was mapped read-only
 * at the offset the user page named and every dummy ring read-only. */
int fakepmu_maps_ok(void);

/* Build sideband records with sample_id TID|TIME|CPU into @buf (at most
 * @cap bytes); each returns the new length. */
size_t fakepmu_rec_comm(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                        const char *comm, uint64_t time, int cpu);
size_t fakepmu_rec_mmap2(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                         uint64_t addr, uint64_t size, uint64_t pgoff, const char *file,
                         uint64_t time, int cpu);
size_t fakepmu_rec_switch(unsigned char *buf, size_t len, size_t cap, int out, int pid,
                          int tid, int other_pid, int other_tid, uint64_t time, int cpu);
size_t fakepmu_rec_lost(unsigned char *buf, size_t len, size_t cap, uint64_t lost,
                        uint64_t time, int cpu);
size_t fakepmu_rec_aux(unsigned char *buf, size_t len, size_t cap, uint64_t off,
                       uint64_t size, uint64_t flags, uint64_t time, int cpu);
size_t fakepmu_rec_itrace(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                          uint64_t time, int cpu);
/* PERF_RECORD_TEXT_POKE: at @addr @old_len bytes became @new_len (at most
 * 256 each); the fake writes it only to an event opened with
 * attr.text_poke, as the kernel does. */
size_t fakepmu_rec_text_poke(unsigned char *buf, size_t len, size_t cap, uint64_t addr,
                             const void *old_bytes, uint16_t old_len, const void *new_bytes,
                             uint16_t new_len, uint64_t time, int cpu);
/* PERF_RECORD_KSYMBOL: BPF code @name of @code_len bytes at @addr came
 * (@unregister 0) or went (1); only to an event opened with attr.ksymbol. */
size_t fakepmu_rec_ksymbol(unsigned char *buf, size_t len, size_t cap, uint64_t addr,
                           uint32_t code_len, int unregister, const char *name, uint64_t time,
                           int cpu);
/* The kernel rewrites @len (at most 64) bytes at @addr on @cpu at perf time
 * @time, now: a TEXT_POKE record into every served dummy ring of @cpu
 * that asked for it and whose output is on (a paused ring loses it, as
 * the kernel's does).  The number of rings written, -EINVAL. */
int fakepmu_put_text_poke(int cpu, uint64_t time, uint64_t addr, const uint8_t *old_bytes,
                          const uint8_t *new_bytes, uint16_t len);

#endif
