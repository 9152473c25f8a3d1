/* test_dec_stack.c — phase 2, table-driven: flow event lists in, slices out
 * (frame rules 1-6, inferred frames and depth consistency, migration
 * between CPUs, tail calls, unwinding, kernel entries, no-timing traces);
 * then the invalid-argument checks of every public PT-decoding function. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#include "sptd_dec.h"
#include "sptd_test.h"

#define K 0xffffffff81000000ull /* a kernel text address */

/* The functions of the pretend program. */
static const struct { uint64_t start, size; int64_t id; } funcs[] = {
	{ 0x1000, 0x100, 10 },  /* main */
	{ 0x2000, 0x100, 11 },  /* A */
	{ 0x3000, 0x100, 12 },  /* B */
	{ 0x4000, 0x100, 13 },  /* C */
	{ K, 0x100, 20 },       /* kernel entry code */
	{ K + 0x1000, 0x100, 21 }, /* a kernel function */
};

static int resolve(void *ctx, int tid, uint64_t addr, struct sptd_dec_func *f)
{
	size_t i;

	(void)ctx;
	(void)tid;
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		if (addr - funcs[i].start < funcs[i].size) {
			f->start = funcs[i].start;
			f->size = funcs[i].size;
			f->symbol_id = funcs[i].id;
			f->known = 1;
			return 0;
		}
	}
	f->start = addr;
	f->size = 0;
	f->symbol_id = 99;
	f->known = 0;
	return 0;
}

#define MAXS 64
struct got {
	struct sptd_dec_slice s[MAXS];
	int n;
	int symbols;
};

static int got_slice(void *ctx, const struct sptd_dec_slice *s)
{
	struct got *g = ctx;

	if (g->n < MAXS)
		g->s[g->n++] = *s;
	return 0;
}

static int got_symbol(void *ctx, const struct sptd_dec_symbol *sym)
{
	struct got *g = ctx;

	(void)sym;
	g->symbols++;
	return 0;
}

/* An expected slice; parent named by its symbol (-1: none). */
struct want {
	int tid;
	int64_t sym, ts, dur;
	int depth;
	int64_t parent_sym;
	const char *kind;
	int flags;
	int cpu;
};

struct ev {
	int64_t ts;
	int cpu, tid, kind;
	uint64_t from, to;
	int flags;
};

struct stack_case {
	const char *name;
	struct ev ev[16];
	struct want want[8];
	int nwant;
	struct { int tid; int64_t ts; } exits[4]; /* tasks' ends (tid 0: none) */
};

#define U SPTD_DEC_KIND_USER
#define CALL SPTD_DEC_FLOW_CALL
#define RET SPTD_DEC_FLOW_RETURN
#define JMP SPTD_DEC_FLOW_JUMP
#define FCALL SPTD_DEC_FLOW_FAR_CALL
#define FRET SPTD_DEC_FLOW_FAR_RETURN
#define IRQ SPTD_DEC_FLOW_INTERRUPT
#define ENA SPTD_DEC_FLOW_ENABLE
#define DIS SPTD_DEC_FLOW_DISABLE
#define INF (SPTD_DEC_F_INFERRED | SPTD_DEC_F_START_TRUNCATED)
#define NT SPTD_DEC_F_NO_TIME

static const struct stack_case cases[] = {
	{ "nesting", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, CALL, 0x2010, 0x3000, 0 },
		{ 30, 0, 7, RET, 0x3050, 0x2015, 0 }, { 40, 0, 7, RET, 0x2050, 0x1015, 0 } },
	  { { 7, 11, 10, 30, 0, -1, U, 0, 0 }, { 7, 12, 20, 10, 1, 11, U, 0, 0 } }, 2, { { 0 } } },
	{ "inferred frames shift depths", {
		{ 10, 0, 7, CALL, 0x2010, 0x3000, 0 }, { 20, 0, 7, RET, 0x3050, 0x2015, 0 },
		{ 30, 0, 7, RET, 0x2050, 0x1015, 0 }, { 50, 0, 7, RET, 0x1050, 0x9000, 0 } },
	  /* inferred frames start at the task's first event (10), not the
	   * window's start (0) */
	  { { 7, 12, 10, 10, 2, 11, U, 0, 0 }, { 7, 11, 10, 20, 1, 10, U, INF, 0 },
	    { 7, 10, 10, 40, 0, -1, U, INF, 0 } }, 3, { { 0 } } },
	{ "data start is each task's own first event", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, RET, 0x2050, 0x1015, 0 },
		{ 30, 1, 8, ENA, 0, 0x3040, 0 }, { 45, 1, 8, RET, 0x3050, 0x2015, 0 },
		{ 60, 0, 7, RET, 0x1050, 0x9000, 0 } },
	  { { 7, 11, 10, 10, 1, 10, U, 0, 0 }, { 7, 10, 10, 50, 0, -1, U, INF, 0 },
	    { 8, 12, 30, 15, 0, -1, U, INF, 1 } }, 3, { { 0 } } },
	{ "open at the end", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, CALL, 0x2010, 0x3000, 0 },
		{ 30, 0, 7, RET, 0x3050, 0x2015, 0 }, { 100, 0, 7, DIS, 0x2020, 0, 0 } },
	  { { 7, 11, 10, 90, 0, -1, U, SPTD_DEC_F_END_TRUNCATED, 0 },
	    { 7, 12, 20, 10, 1, 11, U, 0, 0 } }, 2, { { 0 } } },
	{ "an exited task's open frames end at its exit, unflagged", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, CALL, 0x2010, 0x3000, 0 },
		{ 30, 1, 8, CALL, 0x1010, 0x4000, 0 } },
	  /* task 8 did not exit: still open at the data end (100) */
	  { { 7, 11, 10, 50, 0, -1, U, 0, 0 }, { 7, 12, 20, 40, 1, 11, U, 0, 0 },
	    { 8, 13, 30, 70, 0, -1, U, SPTD_DEC_F_END_TRUNCATED, 1 } }, 3,
	  { { 7, 60 } } },
	{ "the first exit after the task's last event counts", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 30, 0, 7, CALL, 0x2010, 0x3000, 0 } },
	  /* 5: an earlier task with tid 7; 70 and 50: the first after 30 is 50 */
	  { { 7, 11, 10, 40, 0, -1, U, 0, 0 }, { 7, 12, 30, 20, 1, 11, U, 0, 0 } }, 2,
	  { { 7, 5 }, { 7, 70 }, { 7, 50 } } },
	{ "an exit before the task's last event is not its own", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 30, 0, 7, CALL, 0x2010, 0x3000, 0 } },
	  { { 7, 11, 10, 90, 0, -1, U, SPTD_DEC_F_END_TRUNCATED, 0 },
	    { 7, 12, 30, 70, 1, 11, U, SPTD_DEC_F_END_TRUNCATED, 0 } }, 2,
	  { { 7, 20 }, { 8, 40 } } },
	{ "tail call", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, JMP, 0x2020, 0x3000, 0 },
		{ 25, 0, 7, JMP, 0x3020, 0x3040, 0 }, { 30, 0, 7, RET, 0x3050, 0x1015, 0 } },
	  { { 7, 11, 10, 10, 0, -1, U, 0, 0 },
	    { 7, 12, 20, 10, 0, -1, U, SPTD_DEC_F_TAILCALL, 0 } }, 2, { { 0 } } },
	{ "unwinding (longjmp/exception)", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, CALL, 0x2010, 0x3000, 0 },
		{ 30, 0, 7, CALL, 0x3010, 0x4000, 0 }, { 40, 0, 7, JMP, 0x4020, 0x2080, 0 },
		{ 50, 0, 7, RET, 0x2090, 0x1015, 0 } },
	  { { 7, 11, 10, 40, 0, -1, U, 0, 0 }, { 7, 12, 20, 20, 1, 11, U, 0, 0 },
	    { 7, 13, 30, 10, 2, 12, U, 0, 0 } }, 3, { { 0 } } },
	{ "return to a frame further down", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, CALL, 0x2010, 0x3000, 0 },
		{ 30, 0, 7, CALL, 0x3010, 0x4000, 0 }, { 40, 0, 7, RET, 0x4020, 0x1015, 0 } },
	  { { 7, 11, 10, 30, 0, -1, U, 0, 0 }, { 7, 12, 20, 20, 1, 11, U, 0, 0 },
	    { 7, 13, 30, 10, 2, 12, U, 0, 0 } }, 3, { { 0 } } },
	{ "syscall in user-only trace", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, FCALL, 0x2020, 0, 0 },
		{ 20, 0, 7, DIS, 0x2020, 0, 0 }, { 35, 0, 7, ENA, 0, 0x2022, 0 },
		{ 40, 0, 7, RET, 0x2050, 0x1015, 0 } },
	  { { 7, 11, 10, 30, 0, -1, U, 0, 0 },
	    { 7, SPTD_DEC_SYM_SYSCALL, 20, 15, 1, 11, SPTD_DEC_KIND_SYSCALL, 0, 0 } }, 2, { { 0 } } },
	{ "interrupt with kernel calls", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 0, 7, IRQ, 0x2020, K, 0 },
		{ 22, 0, 7, CALL, K + 0x10, K + 0x1000, 0 }, { 25, 0, 7, RET, K + 0x1050, K + 0x15, 0 },
		{ 27, 0, 7, RET, K + 0x20, K + 0x2000, 0 }, /* a kernel return under the entry */
		{ 30, 0, 7, FRET, K + 0x30, 0x2020, 0 }, { 40, 0, 7, RET, 0x2050, 0x1015, 0 } },
	  { { 7, 11, 10, 30, 0, -1, U, 0, 0 },
	    { 7, SPTD_DEC_SYM_IRQ, 20, 10, 1, 11, SPTD_DEC_KIND_IRQ, 0, 0 },
	    { 7, 21, 22, 3, 2, SPTD_DEC_SYM_IRQ, SPTD_DEC_KIND_KERNEL, 0, 0 } }, 3, { { 0 } } },
	{ "migration between CPUs, another task between", {
		{ 10, 0, 7, CALL, 0x1010, 0x2000, 0 }, { 20, 1, 7, CALL, 0x2010, 0x3000, 0 },
		{ 25, 0, 8, CALL, 0x1010, 0x4000, 0 }, { 27, 0, 8, RET, 0x4050, 0x1015, 0 },
		{ 30, 1, 7, RET, 0x3050, 0x2015, 0 }, { 40, 0, 7, RET, 0x2050, 0x1015, 0 } },
	  { { 7, 11, 10, 30, 0, -1, U, 0, 0 }, { 7, 12, 20, 10, 1, 11, U, 0, 1 },
	    { 8, 13, 25, 2, 0, -1, U, 0, 0 } }, 3, { { 0 } } },
	{ "no timing: order kept", {
		{ 0, 0, 7, CALL, 0x1010, 0x2000, NT }, { 1, 0, 7, CALL, 0x2010, 0x3000, NT },
		{ 2, 0, 7, RET, 0x3050, 0x2015, NT }, { 3, 0, 7, RET, 0x2050, 0x1015, NT } },
	  { { 7, 11, 0, 3, 0, -1, U, NT, 0 }, { 7, 12, 1, 1, 1, 11, U, NT, 0 } }, 2, { { 0 } } },
	{ "unknown tasks: one stack per CPU", {
		{ 10, 0, -1, CALL, 0x1010, 0x2000, 0 }, { 15, 1, -1, RET, 0x3050, 0x2015, 0 },
		{ 20, 0, -1, RET, 0x2050, 0x1015, 0 } },
	  { { -1, 11, 10, 10, 0, -1, U, 0, 0 }, { -1, 12, 15, 0, 0, -1, U, INF, 1 } }, 2, { { 0 } } },
};

static const struct sptd_dec_slice *find_slice(const struct got *g, int tid, int64_t sym,
                                               int64_t ts)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (g->s[i].tid == tid && g->s[i].symbol_id == sym && g->s[i].ts == ts)
			return &g->s[i];
	return NULL;
}

static const struct sptd_dec_slice *by_id(const struct got *g, int64_t id)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (g->s[i].id == id)
			return &g->s[i];
	return NULL;
}

static void run_case(const struct stack_case *c)
{
	struct got g;
	struct sptd_dec_sink sink = { .ctx = &g, .slice = got_slice, .symbol = got_symbol };
	struct sptd_dec_stacks *st = NULL;
	int i, failed = sptd_test_failed;
	int64_t n;

	memset(&g, 0, sizeof(g));
	CHECK_INT(sptd_dec_stacks_create(resolve, NULL, &sink, &st), 0);
	for (i = 0; i < 16 && c->ev[i].kind; i++) {
		struct sptd_dec_flow ev = {
			.ts = c->ev[i].ts, .seq = (uint64_t)i, .cpu = c->ev[i].cpu,
			.tid = c->ev[i].tid, .kind = c->ev[i].kind, .flags = c->ev[i].flags,
			.from = c->ev[i].from, .to = c->ev[i].to,
		};
		CHECK_INT(sptd_dec_stacks_add(st, &ev), 0);
	}
	for (i = 0; i < 4 && c->exits[i].tid; i++)
		CHECK_INT(sptd_dec_stacks_add_exit(st, c->exits[i].tid, c->exits[i].ts), 0);
	/* the window: 0 .. 100 (the no-timing case: its own first/last order) */
	n = c->ev[0].flags & NT ? sptd_dec_stacks_run(st, 1, 0) : sptd_dec_stacks_run(st, 0, 100);
	CHECK_INT(n, c->nwant);
	CHECK_INT(g.n, c->nwant);
	/* handed out in id order (each task's frames placed by id as they
	 * close), so the store's rows need no sort: ids ascend */
	for (i = 1; i < g.n; i++)
		CHECK(g.s[i].id > g.s[i - 1].id);
	for (i = 0; i < c->nwant; i++) {
		const struct want *w = &c->want[i];
		const struct sptd_dec_slice *s = find_slice(&g, w->tid, w->sym, w->ts);
		const struct sptd_dec_slice *p;

		CHECK(s != NULL);
		if (!s)
			continue;
		CHECK_INT(s->dur, w->dur);
		CHECK_INT(s->depth, w->depth);
		CHECK_INT(s->flags, w->flags);
		CHECK_INT(s->cpu, w->cpu);
		CHECK_STR(s->kind, w->kind);
		p = s->parent_id >= 0 ? by_id(&g, s->parent_id) : NULL;
		CHECK_INT(p ? p->symbol_id : -1, w->parent_sym);
		if (p)
			CHECK_INT(p->depth, s->depth - 1);
	}
	if (sptd_test_failed != failed)
		fprintf(stderr, "  in case \"%s\"\n", c->name);
	sptd_dec_stacks_destroy(st);
}

/* The stacks module is reusable: a second run starts clean. */
static void test_rerun(void)
{
	struct got g;
	struct sptd_dec_sink sink = { .ctx = &g, .slice = got_slice };
	struct sptd_dec_stacks *st = NULL;
	struct sptd_dec_flow ev = { .ts = 5, .tid = 1, .kind = CALL, .from = 0x1010, .to = 0x2000 };

	memset(&g, 0, sizeof(g));
	CHECK_INT(sptd_dec_stacks_create(NULL, NULL, &sink, &st), 0);
	CHECK_INT(sptd_dec_stacks_add(st, &ev), 0);
	CHECK_INT(sptd_dec_stacks_run(st, 0, 10), 1);
	/* exits are for one run: this one's task 1 ends at the window end */
	CHECK_INT(sptd_dec_stacks_add_exit(st, 1, 7), 0);
	CHECK_INT(sptd_dec_stacks_run(st, 0, 10), 0);
	CHECK_INT(sptd_dec_stacks_add(st, &ev), 0);
	CHECK_INT(sptd_dec_stacks_run(st, 0, 10), 1);
	CHECK_INT(g.s[1].dur, 5);
	CHECK_INT(g.s[1].flags, SPTD_DEC_F_END_TRUNCATED);
	/* without a resolver the symbol is unknown */
	CHECK_INT(g.s[0].symbol_id, -1);
	CHECK_INT(g.s[0].flags, SPTD_DEC_F_END_TRUNCATED);
	sptd_dec_stacks_destroy(st);
}

static int abort_slice(void *ctx, const struct sptd_dec_slice *s)
{
	(void)ctx;
	(void)s;
	return -ECANCELED;
}

static void test_sink_error(void)
{
	struct sptd_dec_sink sink = { .slice = abort_slice };
	struct sptd_dec_stacks *st = NULL;
	struct sptd_dec_flow ev = { .ts = 5, .tid = 1, .kind = CALL, .from = 0x1010, .to = 0x2000 };

	CHECK_INT(sptd_dec_stacks_create(resolve, NULL, &sink, &st), 0);
	CHECK_INT(sptd_dec_stacks_add(st, &ev), 0);
	CHECK_INT(sptd_dec_stacks_run(st, 0, 10), -ECANCELED);
	sptd_dec_stacks_destroy(st);
}

/* The decode moves glibc's mmap and trim thresholds while its threads run
 * (session.c, run_arenas_begin): afterwards they are glibc's defaults
 * again, so a 1 MiB block is mmapped, not taken from (and kept in) an
 * arena.  AddressSanitizer has its own allocator: nothing to see there. */
static void check_malloc_restored(void)
{
#if !defined(__SANITIZE_ADDRESS__)
	struct mallinfo2 before = mallinfo2(), after;
	void *big = malloc(1u << 20);

	after = mallinfo2();
	CHECK(big != NULL);
	CHECK_INT((long long)after.hblks, (long long)before.hblks + 1);
	free(big);
#endif
}

static void test_invalid_args(void)
{
	struct sptd_dec_sink sink = { 0 };
	struct sptd_dec_stacks *st = NULL;
	struct sptd_dec_session *s = NULL;
	struct sptd_dec_config cfg = { 0 }, bad;
	struct sptd_dec_flow ev = { .kind = 0 };
	uint8_t byte = 0;

	CHECK_INT(sptd_dec_stacks_create(resolve, NULL, NULL, &st), -EINVAL);
	CHECK_INT(sptd_dec_stacks_create(resolve, NULL, &sink, NULL), -EINVAL);
	CHECK_INT(sptd_dec_stacks_add(NULL, &ev), -EINVAL);
	CHECK_INT(sptd_dec_stacks_run(NULL, 0, 0), -EINVAL);
	CHECK_INT(sptd_dec_stacks_add_exit(NULL, 1, 0), -EINVAL);
	sptd_dec_stacks_destroy(NULL);
	CHECK_INT(sptd_dec_stacks_create(resolve, NULL, &sink, &st), 0);
	CHECK_INT(sptd_dec_stacks_add(st, NULL), -EINVAL);
	CHECK_INT(sptd_dec_stacks_add(st, &ev), -EINVAL);          /* kind 0 */
	ev.kind = SPTD_DEC_FLOW_ERROR + 1;
	CHECK_INT(sptd_dec_stacks_add(st, &ev), -EINVAL);
	CHECK_INT(sptd_dec_stacks_add_exit(st, 0, 10), -EINVAL);  /* idle never exits */
	CHECK_INT(sptd_dec_stacks_add_exit(st, -1, 10), -EINVAL);
	sptd_dec_stacks_destroy(st);

	CHECK_INT(sptd_dec_session_create(NULL, &s), -EINVAL);
	CHECK_INT(sptd_dec_session_create(&cfg, NULL), -EINVAL);
	bad = cfg;
	bad.mtc_freq = 16;
	CHECK_INT(sptd_dec_session_create(&bad, &s), -EINVAL);
	bad = cfg;
	bad.jobs = -1;
	CHECK_INT(sptd_dec_session_create(&bad, &s), -EINVAL);
	bad = cfg;
	bad.tsc_shift = 64;
	CHECK_INT(sptd_dec_session_create(&bad, &s), -EINVAL);
	bad = cfg;
	bad.cpu_model = 256;
	CHECK_INT(sptd_dec_session_create(&bad, &s), -EINVAL);
	sptd_dec_session_destroy(NULL);

	CHECK_INT(sptd_dec_session_create(&cfg, &s), 0);
	CHECK_INT(sptd_dec_session_add_elf(NULL, -1, "/bin/true", 0, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_elf(s, -1, NULL, 0, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_elf(s, -2, "/bin/true", 0, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_elf(s, -1, "/nonexistent/x", 0, -1), -ENOENT);
	CHECK_INT(sptd_dec_session_add_elf(s, -1, "/etc/hostname", 0, -1), -EBADMSG);
	CHECK_INT(sptd_dec_session_add_flat(NULL, -1, "/etc/hostname", 0x1000, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_flat(s, -1, NULL, 0x1000, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_flat(s, -1, "/nonexistent/x", 0x1000, -1), -ENOENT);
	/* a device is never read as an image (a user's FIFO would block) */
	CHECK_INT(sptd_dec_session_add_flat(s, -1, "/dev/null", 0x1000, -1), -ENXIO);
	CHECK_INT(sptd_dec_session_add_bytes(NULL, -1, "x", &byte, 1, 0x1000, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_bytes(s, -1, NULL, &byte, 1, 0x1000, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_bytes(s, -1, "x", NULL, 1, 0x1000, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_bytes(s, -1, "x", &byte, 0, 0x1000, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_task(NULL, 1, 1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_task(s, -1, 1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_task(s, 1, -1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_switch(NULL, 0, 0, 1, 2), -EINVAL);
	CHECK_INT(sptd_dec_session_add_switch(s, 0, -1, 1, 2), -EINVAL);
	CHECK_INT(sptd_dec_session_add_switch(s, 0, 5000, 1, 2), -EINVAL);
	CHECK_INT(sptd_dec_session_add_switch(s, 0, 0, -1, 2), -EINVAL);
	CHECK_INT(sptd_dec_session_add_exit(NULL, 1, 0), -EINVAL);
	CHECK_INT(sptd_dec_session_add_exit(s, 0, 0), -EINVAL);
	CHECK_INT(sptd_dec_session_add_pt(NULL, 0, &byte, 1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_pt(s, -1, &byte, 1), -EINVAL);
	CHECK_INT(sptd_dec_session_add_pt(s, 0, NULL, 1), -EINVAL);
	CHECK_INT(sptd_dec_session_run(NULL, &sink), -EINVAL);
	CHECK_INT(sptd_dec_session_run(s, NULL), -EINVAL);
	CHECK_INT(sptd_dec_session_run_cpu(NULL, 0, &sink, NULL, NULL), -EINVAL);
	CHECK_INT(sptd_dec_session_run_cpu(s, 0, &sink, NULL, NULL), -EINVAL); /* no cpu 0 */
	CHECK_INT(sptd_dec_session_no_time(NULL), 0);
	/* valid inputs still work after the rejected ones */
	CHECK_INT(sptd_dec_session_add_task(s, 5, 4), 0);
	CHECK_INT(sptd_dec_session_add_switch(s, 100, 0, 0, 5), 0);
	CHECK_INT(sptd_dec_session_add_exit(s, 5, 200), 0);
	CHECK_INT(sptd_dec_session_add_bytes(s, 4, "code", &byte, 1, 0x1000, 3), 0);
	CHECK_INT(sptd_dec_session_add_pt(s, 0, &byte, 1), 0);
	/* one byte of PT has no PSB: decodes to a gap, not a failure */
	CHECK_INT(sptd_dec_session_run(s, &sink), 0);
	sptd_dec_session_destroy(s);
	check_malloc_restored();
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	test_rerun();
	test_sink_error();
	test_invalid_args();
	return SPTD_TEST_END();
}
