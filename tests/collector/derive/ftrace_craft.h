/* ftrace_craft.h — ftrace ring-buffer pages made by hand, with the format
 * files that describe them, so derive_sched can be fed raw_ftrace_* rows
 * with known events and no root, tracefs or kernel.
 *
 * The layout is the kernel's (64-bit): a page header (u64 timestamp, u64
 * commit = bytes of data), then records, each a 32-bit header (type_len in
 * the low 5 bits = data length / 4, time_delta from the previous record in
 * the high 27) and the event: common_type, common_flags,
 * common_preempt_count, common_pid, then its fields as the format files
 * below place them (those of Linux 6.x on x86-64). */
#ifndef SPTD_TEST_FTRACE_CRAFT_H
#define SPTD_TEST_FTRACE_CRAFT_H

#include <stddef.h>
#include <stdint.h>

struct sptd_store;

#define CRAFT_PAGE_SIZE 4096

/* prev_state values of the formats' __print_flags table */
#define CRAFT_STATE_R 0x000     /* runnable */
#define CRAFT_STATE_S 0x001     /* sleeping */
#define CRAFT_STATE_D 0x002     /* uninterruptible */
#define CRAFT_STATE_PREEMPT 0x100 /* "+": preempted while runnable */

/* One page being written. */
struct craft_page {
	unsigned char data[CRAFT_PAGE_SIZE]; /* the page */
	size_t used;                         /* bytes written, header included */
	uint64_t last_ts;                    /* time of the last record */
	int overflow;                        /* a record did not fit, or a delta was too big */
};

/* Store every format file the crafted events need (header_page,
 * header_event, sched_switch, sched_waking, irq_handler_entry/exit,
 * softirq_entry/exit) as raw_ftrace_format rows.  0 or a store error. */
int craft_formats_add(struct sptd_store *st);
/* Hand the same format files to @fn (name as in raw_ftrace_format, text);
 * stops at and returns @fn's first negative value, else 0. */
int craft_formats_each(int (*fn)(void *ctx, const char *name, const char *text), void *ctx);

/* Start a page whose timestamp is @ts (trace clock). */
void craft_page_begin(struct craft_page *p, uint64_t ts);
/* Append one event at @ts (>= the previous one); @pid is common_pid. */
void craft_switch(struct craft_page *p, uint64_t ts, int pid, const char *prev_comm,
                  int prev_tid, int prev_prio, long prev_state, const char *next_comm,
                  int next_tid, int next_prio);
void craft_waking(struct craft_page *p, uint64_t ts, int pid, const char *comm, int tid,
                  int prio, int target_cpu);
void craft_irq_entry(struct craft_page *p, uint64_t ts, int pid, int irq, const char *name);
void craft_irq_exit(struct craft_page *p, uint64_t ts, int pid, int irq, int ret);
void craft_softirq(struct craft_page *p, uint64_t ts, int pid, int vec, int entry);
/* Write the commit word; the page is then CRAFT_PAGE_SIZE bytes to store.
 * 0, or -1 when a record did not fit (a mistake in the test). */
int craft_page_end(struct craft_page *p);

#endif
