/* test_perf_record.c — the one perf record parser (collector/perf/record.c)
 * from bytes, table-driven: every record type sysptd meets, with and
 * without the sample_id trailer, SAMPLE for each sample_type field and
 * READ per read_format; then every such record cut short at every length,
 * lying sizes and counts, the sample id lookup, a file's attr decoded
 * against the kernel's own struct, and invalid arguments.
 *
 * Records are written here from perf_event_open(2)'s layouts by a small
 * encoder (items: u32, u64, NUL-terminated strings padded to 8 bytes),
 * independently of the parser under test. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>

#include "sptd_col_perf.h"
#include "sptd_test.h"

/* ---- the encoder ------------------------------------------------------------ */

/* One item of a record body: a u32, a u64, or a string. */
struct item {
	char kind;               /* '4' u32, '8' u64, 's' string (NUL + pad to 8), 0 end */
	uint64_t v;              /* the number */
	const char *s;           /* the string */
};
#define U32(x) { '4', (uint64_t)(x), NULL }
#define U64(x) { '8', (uint64_t)(x), NULL }
#define STR(x) { 's', 0, (x) }
#define MAX_ITEMS 32

/* Write header + @items into @buf; the header's size is the bytes written
 * (or @size_override when not 0).  Returns the bytes written. */
static size_t encode(unsigned char *buf, uint32_t type, uint16_t misc, const struct item *items,
                     uint16_t size_override)
{
	size_t n = 8;
	uint16_t size;

	for (int i = 0; i < MAX_ITEMS && items[i].kind; i++) {
		const struct item *it = &items[i];

		if (it->kind == '4') {
			uint32_t v = (uint32_t)it->v;

			memcpy(buf + n, &v, 4);
			n += 4;
		} else if (it->kind == '8') {
			memcpy(buf + n, &it->v, 8);
			n += 8;
		} else {
			size_t len = strlen(it->s) + 1, padded = (len + 7) & ~(size_t)7;

			memset(buf + n, 0, padded);
			memcpy(buf + n, it->s, len);
			n += padded;
		}
	}
	size = size_override ? size_override : (uint16_t)n;
	memcpy(buf, &type, 4);
	memcpy(buf + 4, &misc, 2);
	memcpy(buf + 6, &size, 2);
	return n;
}

/* ---- fields of a parsed record, by name ---------------------------------------- */

enum field {
	F_END, F_ID_PRESENT, F_ID_PID, F_ID_TID, F_ID_HAS_TIME, F_ID_TIME, F_ID_ID, F_ID_STREAM,
	F_ID_CPU, F_PID, F_TID, F_PPID, F_PTID, F_TASK_TIME, F_ADDR, F_LEN, F_PGOFF, F_MAJ, F_MIN,
	F_INO, F_INO_GEN, F_BID_SIZE, F_BID0, F_BID_LAST, F_PROT, F_FLAGS, F_SWITCH_OUT,
	F_OTHER_PID, F_OTHER_TID, F_AUX_OFF, F_AUX_SIZE, F_AUX_FLAGS, F_LOST_ID, F_LOST, F_S_IP,
	F_S_ADDR, F_S_PERIOD, F_R_NR, F_R_TE, F_R_TR, F_R_VALUE, F_R_ID, F_R_LOST, F_R_STRIDE,
	F_R_GROUP_LAST, F_CC_NR, F_CC_LAST, F_RAW_SIZE, F_RAW0, F_KSYM_TYPE, F_KSYM_FLAGS,
	F_POKE_OLD_LEN, F_POKE_NEW_LEN, F_POKE_OLD0, F_POKE_OLD_LAST, F_POKE_NEW0, F_POKE_NEW_LAST,
	F_COUNT
};

static long long field_of(const struct sptd_col_perf_record *r, enum field f)
{
	const struct sptd_col_perf_sample *s = &r->sample;

	switch (f) {
	case F_ID_PRESENT: return r->id.present;
	case F_ID_PID: return r->id.pid;
	case F_ID_TID: return r->id.tid;
	case F_ID_HAS_TIME: return r->id.has_time;
	case F_ID_TIME: return (long long)r->id.time;
	case F_ID_ID: return (long long)r->id.id;
	case F_ID_STREAM: return (long long)r->id.stream_id;
	case F_ID_CPU: return r->id.cpu;
	case F_PID: return r->pid;
	case F_TID: return r->tid;
	case F_PPID: return r->ppid;
	case F_PTID: return r->ptid;
	case F_TASK_TIME: return (long long)r->task_time;
	case F_ADDR: return (long long)r->addr;
	case F_LEN: return (long long)r->len;
	case F_PGOFF: return (long long)r->pgoff;
	case F_MAJ: return r->maj;
	case F_MIN: return r->min;
	case F_INO: return (long long)r->ino;
	case F_INO_GEN: return (long long)r->ino_generation;
	case F_BID_SIZE: return r->build_id_size;
	case F_BID0: return r->build_id[0];
	case F_BID_LAST: return r->build_id[19];
	case F_PROT: return r->prot;
	case F_FLAGS: return r->flags;
	case F_SWITCH_OUT: return r->switch_out;
	case F_OTHER_PID: return r->other_pid;
	case F_OTHER_TID: return r->other_tid;
	case F_AUX_OFF: return (long long)r->aux_offset;
	case F_AUX_SIZE: return (long long)r->aux_size;
	case F_AUX_FLAGS: return (long long)r->aux_flags;
	case F_LOST_ID: return (long long)r->lost_id;
	case F_LOST: return (long long)r->lost;
	case F_S_IP: return (long long)s->ip;
	case F_S_ADDR: return (long long)s->addr;
	case F_S_PERIOD: return (long long)s->period;
	case F_R_NR: return (long long)s->read.nr;
	case F_R_TE: return (long long)s->read.time_enabled;
	case F_R_TR: return (long long)s->read.time_running;
	case F_R_VALUE: return (long long)s->read.value;
	case F_R_ID: return (long long)s->read.id;
	case F_R_LOST: return (long long)s->read.lost;
	case F_R_STRIDE: return (long long)s->read.stride;
	case F_R_GROUP_LAST:
		return s->read.group ? (long long)sptd_col_perf_u64(s->read.group,
		       s->read.nr * s->read.stride / 8 - 1) : -7;
	case F_CC_NR: return (long long)s->nr;
	case F_CC_LAST: return s->nr ? (long long)sptd_col_perf_u64(s->callchain, s->nr - 1) : -7;
	case F_RAW_SIZE: return s->raw_size;
	case F_RAW0: return s->raw ? ((const unsigned char *)s->raw)[0] : -7;
	case F_KSYM_TYPE: return r->ksym_type;
	case F_KSYM_FLAGS: return r->ksym_flags;
	case F_POKE_OLD_LEN: return r->poke_old_len;
	case F_POKE_NEW_LEN: return r->poke_new_len;
	case F_POKE_OLD0: return r->poke_old && r->poke_old_len ? r->poke_old[0] : -7;
	case F_POKE_OLD_LAST:
		return r->poke_old && r->poke_old_len ? r->poke_old[r->poke_old_len - 1] : -7;
	case F_POKE_NEW0: return r->poke_new && r->poke_new_len ? r->poke_new[0] : -7;
	case F_POKE_NEW_LAST:
		return r->poke_new && r->poke_new_len ? r->poke_new[r->poke_new_len - 1] : -7;
	default: return -99;
	}
}

/* What a field holds when the record does not have it. */
static long long field_default(enum field f)
{
	switch (f) {
	case F_ID_PID: case F_ID_TID: case F_ID_CPU: case F_PID: case F_TID: case F_PPID:
	case F_PTID: case F_OTHER_PID: case F_OTHER_TID:
		return -1;
	case F_R_GROUP_LAST: case F_CC_LAST: case F_RAW0: case F_POKE_OLD0: case F_POKE_OLD_LAST:
	case F_POKE_NEW0: case F_POKE_NEW_LAST:
		return -7;
	default:
		return 0;
	}
}

/* An expected field value. */
struct want {
	enum field f;            /* F_END ends the list */
	long long v;             /* its value */
};

/* ---- the table of good records ----------------------------------------------------- */

#define ST_SB (SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU)
#define ST_ALL_ID (SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_ID | \
                   SPTD_PERF_SAMPLE_STREAM_ID | SPTD_PERF_SAMPLE_CPU | \
                   SPTD_PERF_SAMPLE_IDENTIFIER)
#define SB { ST_SB, 0, 1, 0 }                   /* sysptd's sideband layout */
#define NO_TRAILER { ST_SB, 0, 0, 0 }           /* sample_id_all off */
/* the trailer TID|TIME|CPU: pid 7 tid 8, time 9000, cpu 3 */
#define TRAILER U32(7), U32(8), U64(9000), U32(3), U32(0)
#define TRAILER_WANT { F_ID_PRESENT, 1 }, { F_ID_PID, 7 }, { F_ID_TID, 8 }, \
                     { F_ID_HAS_TIME, 1 }, { F_ID_TIME, 9000 }, { F_ID_CPU, 3 }
#define CHAIN_MARK ((uint64_t)-512)          /* PERF_CONTEXT_USER */

struct good_case {
	const char *name;        /* what the row shows */
	uint32_t type;           /* header type */
	uint16_t misc;           /* header misc */
	struct sptd_col_perf_layout layout; /* parsed with */
	struct item items[MAX_ITEMS]; /* the body (and trailer) */
	struct want want[40];    /* fields that differ from their default */
	const char *name_want;   /* r->name expected, NULL none */
};

/* Rows whose layout is fixed: any smaller size in their header is a lie
 * the parser must catch (bodies ending in a string or left unparsed may
 * still fit). */
static const char *const exact[] = {
	"fork", "exit", "lost", "lost samples", "switch in", "switch out", "switch cpu-wide out",
	"switch cpu-wide in", "aux", "itrace start", "every trailer field", "time-only trailer",
	"text poke", "text poke: a trampoline added",
	"sample: the sampler's", "sample: a trigger's tracepoint", "sample: every field up to RAW",
	"sample: read with times and lost", "sample: read of a group", "sample: empty call chain",
};

static int is_exact(const char *name)
{
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strcmp(exact[i], name) == 0)
			return 1;
	return 0;
}

static const struct good_case good[] = {
	{ "mmap", SPTD_PERF_RECORD_MMAP, SPTD_PERF_MISC_USER, SB,
	  { U32(100), U32(101), U64(0x400000), U64(0x2000), U64(0x1000), STR("/bin/x"), TRAILER },
	  { { F_PID, 100 }, { F_TID, 101 }, { F_ADDR, 0x400000 }, { F_LEN, 0x2000 },
	    { F_PGOFF, 0x1000 }, TRAILER_WANT }, "/bin/x" },
	{ "mmap2 with inode", SPTD_PERF_RECORD_MMAP2, 0, SB,
	  { U32(100), U32(101), U64(0x400000), U64(0x2000), U64(0x1000), U32(8), U32(1),
	    U64(1234), U64(5), U32(5), U32(2), STR("/usr/lib/libc.so.6"), TRAILER },
	  { { F_PID, 100 }, { F_TID, 101 }, { F_ADDR, 0x400000 }, { F_LEN, 0x2000 },
	    { F_PGOFF, 0x1000 }, { F_MAJ, 8 }, { F_MIN, 1 }, { F_INO, 1234 }, { F_INO_GEN, 5 },
	    { F_PROT, 5 }, { F_FLAGS, 2 }, TRAILER_WANT }, "/usr/lib/libc.so.6" },
	{ "mmap2 with build id", SPTD_PERF_RECORD_MMAP2, SPTD_PERF_MISC_MMAP_BUILD_ID, SB,
	  /* build id size 20, 3 reserved bytes, build id 0xa1 .. 0xb4 */
	  { U32(100), U32(101), U64(0x400000), U64(0x2000), U64(0), U32(20),
	    U64(0xa8a7a6a5a4a3a2a1ull), U64(0xb0afaeadacabaaa9ull), U32(0xb4b3b2b1u), U32(5),
	    U32(2), STR("/x"), TRAILER },
	  { { F_PID, 100 }, { F_TID, 101 }, { F_ADDR, 0x400000 }, { F_LEN, 0x2000 },
	    { F_BID_SIZE, 20 }, { F_BID0, 0xa1 }, { F_BID_LAST, 0xb4 }, { F_PROT, 5 },
	    { F_FLAGS, 2 }, TRAILER_WANT }, "/x" },
	{ "comm", SPTD_PERF_RECORD_COMM, SPTD_PERF_MISC_COMM_EXEC, SB,
	  { U32(100), U32(101), STR("worker"), TRAILER },
	  { { F_PID, 100 }, { F_TID, 101 }, TRAILER_WANT }, "worker" },
	{ "comm, no trailer", SPTD_PERF_RECORD_COMM, 0, NO_TRAILER,
	  { U32(100), U32(101), STR("a name of 15 ch") },
	  { { F_PID, 100 }, { F_TID, 101 } }, "a name of 15 ch" },
	{ "fork", SPTD_PERF_RECORD_FORK, 0, SB,
	  { U32(200), U32(100), U32(201), U32(101), U64(4242), TRAILER },
	  { { F_PID, 200 }, { F_PPID, 100 }, { F_TID, 201 }, { F_PTID, 101 },
	    { F_TASK_TIME, 4242 }, TRAILER_WANT }, NULL },
	{ "exit", SPTD_PERF_RECORD_EXIT, 0, SB,
	  { U32(200), U32(100), U32(201), U32(101), U64(4343), TRAILER },
	  { { F_PID, 200 }, { F_PPID, 100 }, { F_TID, 201 }, { F_PTID, 101 },
	    { F_TASK_TIME, 4343 }, TRAILER_WANT }, NULL },
	{ "lost", SPTD_PERF_RECORD_LOST, 0, SB, { U64(77), U64(12), TRAILER },
	  { { F_LOST_ID, 77 }, { F_LOST, 12 }, TRAILER_WANT }, NULL },
	{ "lost samples", SPTD_PERF_RECORD_LOST_SAMPLES, 0, SB, { U64(31), TRAILER },
	  { { F_LOST, 31 }, TRAILER_WANT }, NULL },
	{ "switch in", SPTD_PERF_RECORD_SWITCH, 0, SB, { TRAILER }, { TRAILER_WANT }, NULL },
	{ "switch out", SPTD_PERF_RECORD_SWITCH, SPTD_PERF_MISC_SWITCH_OUT, SB, { TRAILER },
	  { { F_SWITCH_OUT, 1 }, TRAILER_WANT }, NULL },
	{ "switch cpu-wide out", SPTD_PERF_RECORD_SWITCH_CPU_WIDE, SPTD_PERF_MISC_SWITCH_OUT, SB,
	  { U32(300), U32(301), TRAILER },
	  { { F_SWITCH_OUT, 1 }, { F_OTHER_PID, 300 }, { F_OTHER_TID, 301 }, TRAILER_WANT }, NULL },
	{ "switch cpu-wide in", SPTD_PERF_RECORD_SWITCH_CPU_WIDE, 0, SB,
	  { U32(300), U32(301), TRAILER },
	  { { F_OTHER_PID, 300 }, { F_OTHER_TID, 301 }, TRAILER_WANT }, NULL },
	{ "aux", SPTD_PERF_RECORD_AUX, 0, SB, { U64(4096), U64(8192), U64(0x3), TRAILER },
	  { { F_AUX_OFF, 4096 }, { F_AUX_SIZE, 8192 }, { F_AUX_FLAGS, 3 }, TRAILER_WANT }, NULL },
	{ "itrace start", SPTD_PERF_RECORD_ITRACE_START, 0, SB, { U32(100), U32(101), TRAILER },
	  { { F_PID, 100 }, { F_TID, 101 }, TRAILER_WANT }, NULL },
	/* a 5-byte NOP (0f 1f 44 00 00) becomes jmp rel32 (e9 11 22 33 44):
	 * u16 old_len 5, u16 new_len 5, ten bytes, two of padding */
	{ "text poke", SPTD_PERF_RECORD_TEXT_POKE, 0, SB,
	  { U64(0xffffffff81001000ull), U32(5 | 5 << 16), U32(0x00441f0fu),
	    U64(0x000044332211e900ull), TRAILER },
	  { { F_ADDR, (long long)0xffffffff81001000ull }, { F_POKE_OLD_LEN, 5 },
	    { F_POKE_NEW_LEN, 5 }, { F_POKE_OLD0, 0x0f }, { F_POKE_OLD_LAST, 0 },
	    { F_POKE_NEW0, 0xe9 }, { F_POKE_NEW_LAST, 0x44 }, TRAILER_WANT }, NULL },
	/* new code where there was none: old_len 0, four bytes c3 cc cc cc */
	{ "text poke: a trampoline added", SPTD_PERF_RECORD_TEXT_POKE, 0, SB,
	  { U64(0xffffffffc0005000ull), U32(0 | 4 << 16), U32(0xccccccc3u), TRAILER },
	  { { F_ADDR, (long long)0xffffffffc0005000ull }, { F_POKE_NEW_LEN, 4 },
	    { F_POKE_NEW0, 0xc3 }, { F_POKE_NEW_LAST, 0xcc }, TRAILER_WANT }, NULL },
	{ "ksymbol", SPTD_PERF_RECORD_KSYMBOL, 0, SB,
	  { U64(0xffffffffc0003000ull), U32(0x180), U32(1 | 0 << 16), STR("bpf_prog_0123_x"),
	    TRAILER },
	  { { F_ADDR, (long long)0xffffffffc0003000ull }, { F_LEN, 0x180 }, { F_KSYM_TYPE, 1 },
	    TRAILER_WANT }, "bpf_prog_0123_x" },
	{ "ksymbol unregistered", SPTD_PERF_RECORD_KSYMBOL, 0, SB,
	  { U64(0xffffffffc0003000ull), U32(0x180), U32(1 | 1 << 16), STR("bpf_prog_0123_x"),
	    TRAILER },
	  { { F_ADDR, (long long)0xffffffffc0003000ull }, { F_LEN, 0x180 }, { F_KSYM_TYPE, 1 },
	    { F_KSYM_FLAGS, 1 }, TRAILER_WANT }, "bpf_prog_0123_x" },
	{ "throttle: trailer only", SPTD_PERF_RECORD_THROTTLE, 0, SB,
	  { U64(1), U64(2), U64(3), TRAILER }, { TRAILER_WANT }, NULL },
	{ "every trailer field", SPTD_PERF_RECORD_LOST_SAMPLES, 0, { ST_ALL_ID, 0, 1, 0 },
	  { U64(5), U32(7), U32(8), U64(9000), U64(55), U64(66), U32(3), U32(0), U64(55) },
	  { { F_LOST, 5 }, { F_ID_PRESENT, 1 }, { F_ID_PID, 7 }, { F_ID_TID, 8 },
	    { F_ID_HAS_TIME, 1 }, { F_ID_TIME, 9000 }, { F_ID_ID, 55 }, { F_ID_STREAM, 66 },
	    { F_ID_CPU, 3 } }, NULL },
	{ "time-only trailer", SPTD_PERF_RECORD_ITRACE_START, 0, { SPTD_PERF_SAMPLE_TIME, 0, 1, 0 },
	  { U32(1), U32(2), U64(123) },
	  { { F_PID, 1 }, { F_TID, 2 }, { F_ID_PRESENT, 1 }, { F_ID_HAS_TIME, 1 },
	    { F_ID_TIME, 123 } }, NULL },
	{ "perf's own type: no trailer", SPTD_PERF_RECORD_FINISHED_ROUND, 0, SB, { U64(1) }, { { F_END, 0 } }, NULL },
	{ "sample: the sampler's", SPTD_PERF_RECORD_SAMPLE, SPTD_PERF_MISC_USER,
	  { SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME |
	    SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_CALLCHAIN, 0, 0, 0 },
	  { U64(0x401000), U32(7), U32(8), U64(9000), U32(3), U32(0), U64(3), U64(CHAIN_MARK),
	    U64(0x401000), U64(0x402000) },
	  { { F_S_IP, 0x401000 }, TRAILER_WANT, { F_CC_NR, 3 }, { F_CC_LAST, 0x402000 } }, NULL },
	{ "sample: a trigger's tracepoint", SPTD_PERF_RECORD_SAMPLE, 0,
	  { SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU |
	    SPTD_PERF_SAMPLE_RAW, 0, 1, 0 },
	  /* raw: size 12 (the kernel pads size + data to whole u64s), 12 bytes */
	  { U32(7), U32(8), U64(9000), U32(3), U32(0), U32(12), U32(0x2a), U64(0x1122) },
	  { TRAILER_WANT, { F_RAW_SIZE, 12 }, { F_RAW0, 0x2a } }, NULL },
	{ "sample: every field up to RAW", SPTD_PERF_RECORD_SAMPLE, 0,
	  { SPTD_PERF_SAMPLE_IDENTIFIER | SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID |
	    SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_ADDR | SPTD_PERF_SAMPLE_ID |
	    SPTD_PERF_SAMPLE_STREAM_ID | SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_PERIOD |
	    SPTD_PERF_SAMPLE_READ | SPTD_PERF_SAMPLE_CALLCHAIN | SPTD_PERF_SAMPLE_RAW,
	    SPTD_PERF_FORMAT_ID, 1, 0 },
	  { U64(55), U64(0x401000), U32(7), U32(8), U64(9000), U64(0xdead0), U64(55), U64(66),
	    U32(3), U32(0), U64(4000), U64(123), U64(55), U64(1), U64(0x401000), U32(4),
	    U32(0x99) },
	  { { F_ID_PRESENT, 1 }, { F_ID_ID, 55 }, { F_S_IP, 0x401000 }, { F_ID_PID, 7 },
	    { F_ID_TID, 8 }, { F_ID_HAS_TIME, 1 }, { F_ID_TIME, 9000 }, { F_S_ADDR, 0xdead0 },
	    { F_ID_STREAM, 66 }, { F_ID_CPU, 3 }, { F_S_PERIOD, 4000 }, { F_R_NR, 1 },
	    { F_R_VALUE, 123 }, { F_R_ID, 55 }, { F_R_STRIDE, 16 }, { F_CC_NR, 1 },
	    { F_CC_LAST, 0x401000 }, { F_RAW_SIZE, 4 }, { F_RAW0, 0x99 } }, NULL },
	{ "sample: read with times and lost", SPTD_PERF_RECORD_SAMPLE, 0,
	  { SPTD_PERF_SAMPLE_READ, SPTD_PERF_FORMAT_TOTAL_TIME_ENABLED |
	    SPTD_PERF_FORMAT_TOTAL_TIME_RUNNING | SPTD_PERF_FORMAT_ID | SPTD_PERF_FORMAT_LOST, 0, 0 },
	  { U64(10), U64(20), U64(15), U64(55), U64(2) },
	  { { F_R_NR, 1 }, { F_R_VALUE, 10 }, { F_R_TE, 20 }, { F_R_TR, 15 }, { F_R_ID, 55 },
	    { F_R_LOST, 2 }, { F_R_STRIDE, 24 } }, NULL },
	{ "sample: read of a group", SPTD_PERF_RECORD_SAMPLE, 0,
	  { SPTD_PERF_SAMPLE_READ | SPTD_PERF_SAMPLE_TIME, SPTD_PERF_FORMAT_GROUP |
	    SPTD_PERF_FORMAT_TOTAL_TIME_ENABLED | SPTD_PERF_FORMAT_ID, 0, 0 },
	  { U64(9000), U64(2), U64(20), U64(10), U64(55), U64(11), U64(56) },
	  { { F_ID_PRESENT, 1 }, { F_ID_HAS_TIME, 1 }, { F_ID_TIME, 9000 }, { F_R_NR, 2 },
	    { F_R_TE, 20 }, { F_R_VALUE, 10 }, { F_R_ID, 55 }, { F_R_STRIDE, 16 },
	    { F_R_GROUP_LAST, 56 } }, NULL },
	{ "sample: empty call chain", SPTD_PERF_RECORD_SAMPLE, 0,
	  { SPTD_PERF_SAMPLE_CALLCHAIN, 0, 0, 0 }, { U64(0) }, { { F_END, 0 } }, NULL },
};

/* Every good record parses to exactly its fields (the rest at their
 * defaults), and every shorter length of it is -EBADMSG. */
static void test_good_records(void)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const struct good_case *c = &good[i];
		unsigned char buf[512];
		struct sptd_col_perf_record r;
		long long want[F_COUNT];
		size_t len = encode(buf, c->type, c->misc, c->items, 0);
		int ret = sptd_col_perf_record_parse(buf, len, &c->layout, &r);

		for (int f = 0; f < F_COUNT; f++)
			want[f] = field_default((enum field)f);
		for (int w = 0; w < 40 && c->want[w].f != F_END; w++)
			want[c->want[w].f] = c->want[w].v;
		CHECK_INT(ret, 0);
		if (ret != 0) {
			fprintf(stderr, "  in case '%s'\n", c->name);
			continue;
		}
		CHECK_INT(r.type, c->type);
		CHECK_INT(r.misc, c->misc);
		CHECK_INT(r.size, len);
		for (int f = F_ID_PRESENT; f < F_COUNT; f++) {
			if (field_of(&r, (enum field)f) != want[f]) {
				fprintf(stderr, "  case '%s', field %d: %lld, expected %lld\n", c->name, f,
				        field_of(&r, (enum field)f), want[f]);
				CHECK(0);
			}
		}
		if (c->name_want)
			CHECK_STR(r.name, c->name_want);
		else
			CHECK(r.name == NULL);
		/* a longer buffer (the next record after it) changes nothing */
		memset(buf + len, 0xff, 16);
		CHECK_INT(sptd_col_perf_record_parse(buf, len + 16, &c->layout, &r), 0);
		CHECK_INT(r.size, len);
		/* cut short anywhere: the header's size lies about what is there */
		for (size_t cut = 0; cut < len; cut++)
			if (sptd_col_perf_record_parse(buf, cut, &c->layout, &r) != -EBADMSG) {
				fprintf(stderr, "  case '%s' cut at %zu parsed\n", c->name, cut);
				CHECK(0);
			}
		/* a header claiming less than the layout needs */
		for (uint16_t size = 8; is_exact(c->name) && size < len; size++) {
			memcpy(buf + 6, &size, sizeof(size));
			if (sptd_col_perf_record_parse(buf, size, &c->layout, &r) != -EBADMSG) {
				fprintf(stderr, "  case '%s' claiming %u bytes parsed\n", c->name, size);
				CHECK(0);
			}
		}
	}
}

/* ---- lying records ------------------------------------------------------------------- */

struct bad_case {
	const char *name;        /* what is wrong */
	uint32_t type;           /* header type */
	uint16_t misc;           /* header misc */
	uint16_t size;           /* header size claimed (0: the bytes written) */
	struct sptd_col_perf_layout layout; /* parsed with */
	struct item items[MAX_ITEMS]; /* the body */
};

static const struct bad_case bad[] = {
	{ "size below a header", SPTD_PERF_RECORD_COMM, 0, 4, SB, { U64(0) } },
	{ "size beyond the bytes", SPTD_PERF_RECORD_LOST, 0, 0xffff, SB, { U64(0) } },
	{ "too short for the trailer", SPTD_PERF_RECORD_LOST_SAMPLES, 0, 16, SB, { U64(1), U64(2) } },
	{ "comm without its NUL", SPTD_PERF_RECORD_COMM, 0, 24, NO_TRAILER,
	  { U32(1), U32(1), U64(0x6867666564636261ull) } },
	{ "comm without a name", SPTD_PERF_RECORD_COMM, 0, 16, NO_TRAILER, { U32(1), U32(1) } },
	{ "mmap2 cut before its name", SPTD_PERF_RECORD_MMAP2, 0, 0, NO_TRAILER,
	  { U32(1), U32(1), U64(1), U64(1), U64(0), U64(0), U64(0), U64(0), U64(0) } },
	{ "mmap without a name", SPTD_PERF_RECORD_MMAP, 0, 0, NO_TRAILER,
	  { U32(1), U32(1), U64(1), U64(1), U64(0) } },
	{ "fork cut short", SPTD_PERF_RECORD_FORK, 0, 0, NO_TRAILER, { U32(1), U32(1), U64(1) } },
	{ "aux cut short", SPTD_PERF_RECORD_AUX, 0, 0, NO_TRAILER, { U64(1), U64(1) } },
	{ "lost cut short", SPTD_PERF_RECORD_LOST, 0, 0, NO_TRAILER, { U64(1) } },
	{ "lost samples empty", SPTD_PERF_RECORD_LOST_SAMPLES, 0, 0, NO_TRAILER, { { 0 } } },
	{ "itrace start empty", SPTD_PERF_RECORD_ITRACE_START, 0, 0, NO_TRAILER, { { 0 } } },
	{ "text poke: bytes past the record", SPTD_PERF_RECORD_TEXT_POKE, 0, 0, NO_TRAILER,
	  { U64(1), U32(5 | 5 << 16), U32(0) } },
	{ "text poke: no lengths", SPTD_PERF_RECORD_TEXT_POKE, 0, 0, NO_TRAILER, { U64(1) } },
	{ "ksymbol without a name", SPTD_PERF_RECORD_KSYMBOL, 0, 0, NO_TRAILER,
	  { U64(1), U32(16), U32(1) } },
	{ "cpu-wide switch empty", SPTD_PERF_RECORD_SWITCH_CPU_WIDE, 0, 0, NO_TRAILER, { { 0 } } },
	{ "sample: a field missing", SPTD_PERF_RECORD_SAMPLE, 0, 0,
	  { SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID | SPTD_PERF_SAMPLE_TIME, 0, 0, 0 },
	  { U64(1), U32(1), U32(1) } },
	{ "sample: chain longer than the record", SPTD_PERF_RECORD_SAMPLE, 0, 0,
	  { SPTD_PERF_SAMPLE_CALLCHAIN, 0, 0, 0 }, { U64(3), U64(1), U64(2) } },
	{ "sample: chain count that overflows", SPTD_PERF_RECORD_SAMPLE, 0, 0,
	  { SPTD_PERF_SAMPLE_CALLCHAIN, 0, 0, 0 }, { U64(0x2000000000000001ull), U64(1) } },
	{ "sample: raw longer than the record", SPTD_PERF_RECORD_SAMPLE, 0, 0,
	  { SPTD_PERF_SAMPLE_RAW, 0, 0, 0 }, { U32(64), U32(0) } },
	{ "sample: raw size cut", SPTD_PERF_RECORD_SAMPLE, 0, 0,
	  { SPTD_PERF_SAMPLE_CALLCHAIN | SPTD_PERF_SAMPLE_RAW, 0, 0, 0 }, { U64(0) } },
	{ "sample: group larger than the record", SPTD_PERF_RECORD_SAMPLE, 0, 0,
	  { SPTD_PERF_SAMPLE_READ, SPTD_PERF_FORMAT_GROUP, 0, 0 }, { U64(1000), U64(1) } },
	{ "sample: group count that overflows", SPTD_PERF_RECORD_SAMPLE, 0, 0,
	  { SPTD_PERF_SAMPLE_READ, SPTD_PERF_FORMAT_GROUP | SPTD_PERF_FORMAT_ID, 0, 0 },
	  { U64(0x1000000000000001ull), U64(1), U64(1) } },
	{ "sample: read without its id", SPTD_PERF_RECORD_SAMPLE, 0, 0,
	  { SPTD_PERF_SAMPLE_READ, SPTD_PERF_FORMAT_ID, 0, 0 }, { U64(1) } },
};

static void test_bad_records(void)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct bad_case *c = &bad[i];
		unsigned char buf[512];
		struct sptd_col_perf_record r;
		size_t len = encode(buf, c->type, c->misc, c->items, c->size);
		int ret;

		ret = sptd_col_perf_record_parse(buf, len, &c->layout, &r);
		if (ret != -EBADMSG) {
			fprintf(stderr, "  bad case '%s' returned %d\n", c->name, ret);
			CHECK(0);
		} else {
			CHECK(1);
		}
	}
}

/* ---- ids, sizes, attrs ----------------------------------------------------------------- */

static void test_sample_event_id(void)
{
	static const struct item with_identifier[] = { U64(77), U64(0x401000), { 0 } };
	static const struct item with_id[] = { U64(0x401000), U32(1), U32(2), U64(9), U64(78),
	                                       { 0 } };
	unsigned char buf[128];
	uint64_t id = 1;
	size_t len;

	len = encode(buf, SPTD_PERF_RECORD_SAMPLE, 0, with_identifier, 0);
	CHECK_INT(sptd_col_perf_sample_event_id(buf, len, SPTD_PERF_SAMPLE_IDENTIFIER |
	                                        SPTD_PERF_SAMPLE_IP, &id), 1);
	CHECK_INT(id, 77);
	len = encode(buf, SPTD_PERF_RECORD_SAMPLE, 0, with_id, 0);
	CHECK_INT(sptd_col_perf_sample_event_id(buf, len, SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID |
	                                        SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_ID, &id), 1);
	CHECK_INT(id, 78);
	/* ID behind ADDR: IP, ADDR (the pid/tid u64), ID (9) */
	CHECK_INT(sptd_col_perf_sample_event_id(buf, len, SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_ADDR |
	                                        SPTD_PERF_SAMPLE_ID, &id), 1);
	CHECK_INT(id, 9);
	/* no id in the layout */
	CHECK_INT(sptd_col_perf_sample_event_id(buf, len, SPTD_PERF_SAMPLE_IP, &id), 0);
	CHECK_INT(id, 0);
	/* the id would lie past the record */
	CHECK_INT(sptd_col_perf_sample_event_id(buf, len, SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID |
	                                        SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_ADDR |
	                                        SPTD_PERF_SAMPLE_ID, &id), -EBADMSG);
	CHECK_INT(sptd_col_perf_sample_event_id(buf, len - 1, SPTD_PERF_SAMPLE_ID, &id), -EBADMSG);
	CHECK_INT(sptd_col_perf_sample_event_id(buf, 4, SPTD_PERF_SAMPLE_ID, &id), -EBADMSG);
	CHECK_INT(sptd_col_perf_sample_event_id(NULL, len, SPTD_PERF_SAMPLE_ID, &id), -EINVAL);
	CHECK_INT(sptd_col_perf_sample_event_id(buf, len, SPTD_PERF_SAMPLE_ID, NULL), -EINVAL);
}

static void test_sizes(void)
{
	static const uint64_t bytes[3] = { 1, 0x0807060504030201ull, 3 };

	CHECK_INT(sptd_col_perf_id_size(0), 0);
	CHECK_INT(sptd_col_perf_id_size(ST_SB), 24);
	CHECK_INT(sptd_col_perf_id_size(ST_ALL_ID), 48);
	/* bits that are not in the trailer do not count */
	CHECK_INT(sptd_col_perf_id_size(SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_CALLCHAIN |
	                                SPTD_PERF_SAMPLE_RAW | SPTD_PERF_SAMPLE_TIME), 8);
	CHECK(sptd_col_perf_u64(bytes, 1) == 0x0807060504030201ull);
	/* unaligned */
	CHECK(sptd_col_perf_u64((const unsigned char *)bytes + 1, 0) == 0x0100000000000000ull);
}

static void test_attr_decode(void)
{
	struct perf_event_attr attr;
	struct sptd_col_perf_attr got;
	unsigned char file[sizeof(attr)];

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = 8;
	attr.config = 0x2001;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER;
	attr.read_format = PERF_FORMAT_ID;
	attr.sample_id_all = 1;
	attr.disabled = 1;
	attr.exclude_guest = 1;
	memcpy(file, &attr, sizeof(attr));
	CHECK_INT(sptd_col_perf_attr_decode(file, sizeof(file), &got), 0);
	CHECK_INT(got.type, 8);
	CHECK_INT(got.config, 0x2001);
	CHECK_INT(got.layout.sample_type, attr.sample_type);
	CHECK_INT(got.layout.read_format, PERF_FORMAT_ID);
	CHECK_INT(got.layout.sample_id_all, 1);
	attr.sample_id_all = 0;
	memcpy(file, &attr, sizeof(attr));
	CHECK_INT(sptd_col_perf_attr_decode(file, 64, &got), 0);   /* the first version */
	CHECK_INT(got.layout.sample_id_all, 0);
	CHECK_INT(sptd_col_perf_attr_decode(file, 63, &got), -EBADMSG);
	CHECK_INT(sptd_col_perf_attr_decode(NULL, 64, &got), -EINVAL);
	CHECK_INT(sptd_col_perf_attr_decode(file, 64, NULL), -EINVAL);
}

static void test_invalid(void)
{
	const struct sptd_col_perf_layout layout = SB;
	struct sptd_col_perf_record r;
	unsigned char buf[16] = { 0 };

	CHECK_INT(sptd_col_perf_record_parse(NULL, 16, &layout, &r), -EINVAL);
	CHECK_INT(sptd_col_perf_record_parse(buf, 16, NULL, &r), -EINVAL);
	CHECK_INT(sptd_col_perf_record_parse(buf, 16, &layout, NULL), -EINVAL);
	CHECK_INT(sptd_col_perf_record_parse(buf, 7, &layout, &r), -EBADMSG);
	/* a zeroed header claims no size at all */
	CHECK_INT(sptd_col_perf_record_parse(buf, 16, &layout, &r), -EBADMSG);
}

int main(void)
{
	test_good_records();
	test_bad_records();
	test_sample_event_id();
	test_sizes();
	test_attr_decode();
	test_invalid();
	return SPTD_TEST_END();
}
