/* ftrace_craft.c — ftrace pages made by hand (see ftrace_craft.h). */
#include <stdio.h>
#include <string.h>

#include "ftrace_craft.h"
#include "sptd_store.h"

/* Event ids: the numbers the format files below give (any distinct ones do). */
enum {
	ID_SWITCH = 372,
	ID_WAKING = 375,
	ID_IRQ_ENTRY = 225,
	ID_IRQ_EXIT = 224,
	ID_SOFTIRQ_ENTRY = 223,
	ID_SOFTIRQ_EXIT = 222,
};

#define COMMON_FIELDS                                                            \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"        \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"        \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* What tracefs shows on Linux 6.x, x86-64 (events/header_page, ...). */
static const struct {
	const char *name, *text;
} formats[] = {
	{ "header_page",
	  "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n" },
	{ "header_event",
	  "# compressed entry header\n"
	  "\ttype_len    :    5 bits\n"
	  "\ttime_delta  :   27 bits\n"
	  "\tarray       :   32 bits\n\n"
	  "\tpadding     : type == 29\n"
	  "\ttime_extend : type == 30\n"
	  "\ttime_stamp : type == 31\n"
	  "\tdata max type_len  == 28\n" },
	{ "sched/sched_switch",
	  "name: sched_switch\nID: 372\nformat:\n" COMMON_FIELDS
	  "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	  "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	  "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> "
	  "next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, "
	  "REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
	  "0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? "
	  "__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
	  "0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "
	  "\"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, "
	  "{ 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, "
	  "{ 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & "
	  "(((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
	  "0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, "
	  "REC->next_prio\n" },
	{ "sched/sched_waking",
	  "name: sched_waking\nID: 375\nformat:\n" COMMON_FIELDS
	  "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, "
	  "REC->prio, REC->target_cpu\n" },
	{ "irq/irq_handler_entry",
	  "name: irq_handler_entry\nID: 225\nformat:\n" COMMON_FIELDS
	  "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n\n"
	  "print fmt: \"irq=%d name=%s\", REC->irq, __get_str(name)\n" },
	{ "irq/irq_handler_exit",
	  "name: irq_handler_exit\nID: 224\nformat:\n" COMMON_FIELDS
	  "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:int ret;\toffset:12;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"irq=%d ret=%s\", REC->irq, REC->ret ? \"handled\" : \"unhandled\"\n" },
	{ "irq/softirq_entry",
	  "name: softirq_entry\nID: 223\nformat:\n" COMMON_FIELDS
	  "\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	  "print fmt: \"vec=%u\", REC->vec\n" },
	{ "irq/softirq_exit",
	  "name: softirq_exit\nID: 222\nformat:\n" COMMON_FIELDS
	  "\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	  "print fmt: \"vec=%u\", REC->vec\n" },
};

int craft_formats_each(int (*fn)(void *ctx, const char *name, const char *text), void *ctx)
{
	int ret = 0;

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]) && ret >= 0; i++)
		ret = fn(ctx, formats[i].name, formats[i].text);
	return ret < 0 ? ret : 0;
}

static int format_to_store(void *ctx, const char *name, const char *text)
{
	return SPTD_STORE_ADD(ctx, raw_ftrace_format, name, text);
}

int craft_formats_add(struct sptd_store *st)
{
	return craft_formats_each(format_to_store, st);
}

void craft_page_begin(struct craft_page *p, uint64_t ts)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->data, &ts, 8);
	p->used = 16;
	p->last_ts = ts;
}

/* Append a record of @len bytes (a multiple of 4, at most 112) at @ts. */
static void record(struct craft_page *p, uint64_t ts, const void *event, size_t len)
{
	uint64_t delta = ts - p->last_ts;
	uint32_t hdr = (uint32_t)(len / 4) | (uint32_t)(delta << 5);

	if (ts < p->last_ts || delta >= (1u << 27) || len % 4 || len > 112 ||
	    p->used + 4 + len > sizeof(p->data)) {
		p->overflow = 1;
		return;
	}
	memcpy(p->data + p->used, &hdr, 4);
	memcpy(p->data + p->used + 4, event, len);
	p->used += 4 + len;
	p->last_ts = ts;
}

/* The common fields every event starts with. */
static void common(unsigned char *ev, int id, int pid)
{
	uint16_t type = (uint16_t)id;
	int32_t p = pid;

	memcpy(ev, &type, 2);
	ev[2] = 0;
	ev[3] = 0;
	memcpy(ev + 4, &p, 4);
}

static void put32(unsigned char *at, int32_t v)
{
	memcpy(at, &v, 4);
}

/* A comm field: at most 15 bytes and a NUL (the rest is already zero). */
static void put_comm(unsigned char *at, const char *comm)
{
	memcpy(at, comm, strnlen(comm, 15));
}

void craft_switch(struct craft_page *p, uint64_t ts, int pid, const char *prev_comm,
                  int prev_tid, int prev_prio, long prev_state, const char *next_comm,
                  int next_tid, int next_prio)
{
	unsigned char ev[64] = { 0 };
	int64_t state = prev_state;

	common(ev, ID_SWITCH, pid);
	put_comm(ev + 8, prev_comm);
	put32(ev + 24, prev_tid);
	put32(ev + 28, prev_prio);
	memcpy(ev + 32, &state, 8);
	put_comm(ev + 40, next_comm);
	put32(ev + 56, next_tid);
	put32(ev + 60, next_prio);
	record(p, ts, ev, sizeof(ev));
}

void craft_waking(struct craft_page *p, uint64_t ts, int pid, const char *comm, int tid,
                  int prio, int target_cpu)
{
	unsigned char ev[36] = { 0 };

	common(ev, ID_WAKING, pid);
	put_comm(ev + 8, comm);
	put32(ev + 24, tid);
	put32(ev + 28, prio);
	put32(ev + 32, target_cpu);
	record(p, ts, ev, sizeof(ev));
}

void craft_irq_entry(struct craft_page *p, uint64_t ts, int pid, int irq, const char *name)
{
	unsigned char ev[48] = { 0 };
	size_t n = strlen(name) + 1;

	if (n > sizeof(ev) - 16) {
		p->overflow = 1;
		return;
	}
	common(ev, ID_IRQ_ENTRY, pid);
	put32(ev + 8, irq);
	/* __data_loc: offset in the record (low 16 bits), length (high 16) */
	put32(ev + 12, (int32_t)(16u | (uint32_t)n << 16));
	memcpy(ev + 16, name, n);
	record(p, ts, ev, (16 + n + 3) & ~(size_t)3);
}

void craft_irq_exit(struct craft_page *p, uint64_t ts, int pid, int irq, int ret)
{
	unsigned char ev[16] = { 0 };

	common(ev, ID_IRQ_EXIT, pid);
	put32(ev + 8, irq);
	put32(ev + 12, ret);
	record(p, ts, ev, sizeof(ev));
}

void craft_softirq(struct craft_page *p, uint64_t ts, int pid, int vec, int entry)
{
	unsigned char ev[12] = { 0 };

	common(ev, entry ? ID_SOFTIRQ_ENTRY : ID_SOFTIRQ_EXIT, pid);
	put32(ev + 8, vec);
	record(p, ts, ev, sizeof(ev));
}

int craft_page_end(struct craft_page *p)
{
	uint64_t commit = p->used - 16;

	memcpy(p->data + 8, &commit, 8);
	return p->overflow ? -1 : 0;
}
