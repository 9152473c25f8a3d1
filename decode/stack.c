/* stack.c — phase 2: per-task shadow stacks turning flow events into call
 * intervals (slices).
 *
 * Events of one task, from every CPU it ran on, are replayed in time order
 * against one stack.  The frame rules (shared with the emulated-PT
 * generator's ground truth):
 *  1. a near call pushes a frame for the function containing the target;
 *  2. a near return pops the top frame; on an empty stack it makes an
 *     inferred frame for the function returned from, starting at the
 *     task's data start, and every frame of the task emitted so far moves
 *     one level deeper under it (frames are buffered per task until its
 *     end).  The data start is the task's own first event in the trace,
 *     for every task (a deliberate rule: earlier it was the run's first
 *     event, which claimed that a task scheduled in later had been in that
 *     function since before it was ever seen);
 *  3. a non-conditional jump to the first byte of a known function other
 *     than the top frame's is a tail call: the top frame is replaced;
 *  4. a jump, return or trace resume landing inside a function further down
 *     the stack pops down to it (exceptions, longjmp, untraced callees);
 *  5. syscalls and interrupts open "[syscall]"/"[irq]" frames under the
 *     current one, closed when execution resumes in user space; kernel
 *     calls nest under them;
 *  6. frames open at the end close at the data end, flagged; those of a
 *     task that exited (sptd_dec_stacks_add_exit: its last switch-out
 *     left it dead) close where it exited, unflagged, for they ended
 *     there (a call that never returned because the thread ended).
 *
 * A task's frames get consecutive ids, so its slices go to the sink in id
 * order (an incident's rows are then appended in key order).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dec-local.h"

/* One open frame. */
struct stack_frame {
	int64_t id;                /* slice id */
	int64_t ts;                /* start */
	int cpu;                   /* CPU it began on */
	int64_t parent_id;         /* -1 at depth 0 */
	int64_t symbol_id;         /* -1 unknown */
	uint64_t fstart, fsize;    /* function extent (fsize 0: only fstart known) */
	uint64_t call_ip;          /* ip of the call that opened it, 0 unknown */
	const char *kind;          /* SPTD_DEC_KIND_* */
	int flags;                 /* SPTD_DEC_F_* */
	int special;               /* 1: [syscall]/[irq] frame */
};

/* The task being replayed. */
struct stack_task {
	struct stack_frame *open;  /* the stack, [0] outermost */
	size_t nopen, capopen;
	struct sptd_dec_slice *done; /* closed frames, emitted at the task's end:
	                             * frame id first_id + k at done[k] */
	size_t ndone, capdone;     /* frames closed; room in done */
	int tid, cpu_key;          /* identity (cpu_key only for tid < 0) */
	int64_t data_start;        /* time of the task's first event */
	int64_t last_ts;           /* time of its latest event */
	int no_time;               /* its events carry SPTD_DEC_F_NO_TIME */
	int64_t first_id;          /* id of its first frame */
};

/* A task's end: its last switch-out, which left it dead. */
struct stack_exit {
	int tid;
	int64_t ts;
};

struct sptd_dec_stacks {
	sptd_dec_func_fn fn;       /* resolver, may be NULL */
	void *fn_ctx;
	struct sptd_dec_sink sink; /* copy of the caller's sink */
	struct sptd_dec_flowbuf queue; /* events queued by sptd_dec_stacks_add */
	struct stack_exit *exits;  /* queued by sptd_dec_stacks_add_exit */
	size_t nexits, capexits;
	int64_t next_id;           /* last slice id handed out */
	int64_t start, end;        /* data window of the current run */
	int reported_syscall, reported_irq; /* special symbols sent */
	sptd_dec_progress_fn progress;     /* NULL: none */
	void *progress_ctx;
	struct stack_task task;    /* scratch for the task being replayed */
};

static int addr_is_kernel(uint64_t addr)
{
	return (addr >> 63) != 0;
}

int sptd_dec_stacks_create(sptd_dec_func_fn fn, void *fn_ctx,
                           const struct sptd_dec_sink *sink,
                           struct sptd_dec_stacks **out)
{
	struct sptd_dec_stacks *st;

	if (!sink || !out)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->fn = fn;
	st->fn_ctx = fn_ctx;
	st->sink = *sink;
	*out = st;
	return 0;
}

void sptd_dec_stacks_destroy(struct sptd_dec_stacks *st)
{
	if (!st)
		return;
	sptd_dec_flowbuf_fini(&st->queue);
	free(st->exits);
	free(st->task.open);
	free(st->task.done);
	free(st);
}

int sptd_dec_stacks_add(struct sptd_dec_stacks *st, const struct sptd_dec_flow *ev)
{
	struct sptd_dec_flowrec *rec;

	if (!st || !ev || ev->kind < SPTD_DEC_FLOW_CALL || ev->kind > SPTD_DEC_FLOW_ERROR)
		return -EINVAL;
	rec = sptd_dec_flowbuf_slot(&st->queue);
	if (!rec)
		return -ENOMEM;
	memset(rec, 0, sizeof(*rec));
	rec->ev = *ev;
	st->queue.n++;
	return 0;
}

int sptd_dec_stacks_add_exit(struct sptd_dec_stacks *st, int tid, int64_t ts)
{
	if (!st || tid <= 0)
		return -EINVAL;
	if (st->nexits == st->capexits) {
		size_t cap = st->capexits ? st->capexits * 2 : 64;
		struct stack_exit *n = realloc(st->exits, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->exits = n;
		st->capexits = cap;
	}
	st->exits[st->nexits++] = (struct stack_exit){ .tid = tid, .ts = ts };
	return 0;
}

static int exit_cmp(const void *a, const void *b)
{
	const struct stack_exit *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The first exit of @tid at or after @after (its events end before its
 * exit; an exit before them was an earlier task with the same tid), or -1. */
static int64_t exit_after(const struct sptd_dec_stacks *st, int tid, int64_t after)
{
	size_t lo = 0, hi = st->nexits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct stack_exit *x = &st->exits[mid];

		if (x->tid < tid || (x->tid == tid && x->ts < after))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nexits && st->exits[lo].tid == tid ? st->exits[lo].ts : -1;
}

static int resolve(struct sptd_dec_stacks *st, int tid, uint64_t addr,
                   struct sptd_dec_func *f)
{
	memset(f, 0, sizeof(*f));
	f->start = addr;
	f->symbol_id = -1;
	if (!st->fn || !addr)
		return 0;
	return st->fn(st->fn_ctx, tid, addr, f);
}

/* Is @addr inside the function of @fr?  With an unknown size only its first
 * byte is known to be. */
static int frame_contains(const struct stack_frame *fr, uint64_t addr)
{
	if (fr->special || !fr->fstart)
		return 0;
	if (fr->fsize)
		return addr >= fr->fstart && addr - fr->fstart < fr->fsize;
	return addr == fr->fstart;
}

/* Does @addr look like the return address of @fr's call (the instruction
 * after it: a call is at most 15 bytes)? */
static int frame_returns_to(const struct stack_frame *fr, uint64_t addr)
{
	return fr->call_ip && addr > fr->call_ip && addr - fr->call_ip <= 15;
}

/* Room for closed frames up to index @n - 1 in one allocation (the task's
 * event count bounds its frames: each event opens at most one), so that
 * the buffer rarely moves while it fills; untouched room costs no memory.
 * 0 or -ENOMEM. */
static int done_reserve(struct stack_task *t, size_t n)
{
	struct sptd_dec_slice *d;

	if (n <= t->capdone)
		return 0;
	d = realloc(t->done, n * sizeof(*d));
	if (!d)
		return -ENOMEM;
	t->done = d;
	t->capdone = n;
	return 0;
}

/* A closed frame, placed by its id: the task's frames take consecutive ids
 * from t->first_id on, so its slices come out in id order without a sort.
 * Whenever the task's stack is empty (a frame inferred, the task's end)
 * every id it took is closed: done[0 .. ndone) is then exactly its slices. */
static int done_push(struct stack_task *t, const struct sptd_dec_slice *sl)
{
	int64_t k = sl->id - t->first_id;

	/* every id of the task is first_id or later (stacks_replay) */
	if (k < 0)
		return -EINVAL;
	if ((uint64_t)k >= t->capdone) {
		size_t cap = t->capdone ? t->capdone * 2 : 256;

		while (cap <= (uint64_t)k)
			cap *= 2;
		if (done_reserve(t, cap) < 0)
			return -ENOMEM;
	}
	t->done[k] = *sl;
	t->ndone++;
	return 0;
}

/* Close the top frame at @ts with extra @flags. */
static int frame_pop(struct sptd_dec_stacks *st, struct stack_task *t, int64_t ts,
                     int flags)
{
	struct stack_frame *fr = &t->open[t->nopen - 1];
	struct sptd_dec_slice sl = {
		.id = fr->id, .ts = fr->ts, .dur = sptd_dec_span(fr->ts, ts),
		.cpu = fr->cpu, .tid = t->tid, .depth = (int)(t->nopen - 1),
		.parent_id = fr->parent_id, .symbol_id = fr->symbol_id,
		.kind = fr->kind, .flags = fr->flags | flags,
	};

	(void)st;
	t->nopen--;
	return done_push(t, &sl);
}

static int frame_push(struct sptd_dec_stacks *st, struct stack_task *t,
                      const struct sptd_dec_flow *ev, const struct sptd_dec_func *f,
                      const char *kind, int flags, uint64_t call_ip, int special)
{
	struct stack_frame *fr;

	if (t->nopen == t->capopen) {
		size_t cap = t->capopen ? t->capopen * 2 : 64;
		struct stack_frame *n = realloc(t->open, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->open = n;
		t->capopen = cap;
	}
	fr = &t->open[t->nopen];
	fr->id = ++st->next_id;
	fr->ts = ev->ts;
	fr->cpu = ev->cpu;
	fr->parent_id = t->nopen ? t->open[t->nopen - 1].id : -1;
	fr->symbol_id = f->symbol_id;
	fr->fstart = f->start;
	fr->fsize = f->size;
	fr->call_ip = call_ip;
	fr->kind = kind;
	fr->flags = flags | (ev->flags & SPTD_DEC_F_NO_TIME);
	fr->special = special;
	t->nopen++;
	return 0;
}

static int pop_to(struct sptd_dec_stacks *st, struct stack_task *t, size_t keep,
                  int64_t ts)
{
	int err = 0;

	while (t->nopen > keep && !err)
		err = frame_pop(st, t, ts, 0);
	return err;
}

/* Rule 2, empty stack: the frame returned from began before the data. */
static int frame_infer(struct sptd_dec_stacks *st, struct stack_task *t,
                       const struct sptd_dec_flow *ev)
{
	struct sptd_dec_func f;
	struct sptd_dec_slice sl;
	int64_t id = ++st->next_id;
	size_t i;
	int err;

	err = resolve(st, t->tid, ev->from, &f);
	if (err < 0)
		return err;
	/* the stack is empty: done[0 .. ndone) holds every frame before */
	for (i = 0; i < t->ndone; i++) {
		t->done[i].depth++;
		if (t->done[i].parent_id < 0)
			t->done[i].parent_id = id;
	}
	memset(&sl, 0, sizeof(sl));
	sl.id = id;
	sl.ts = t->data_start < ev->ts ? t->data_start : ev->ts;
	sl.dur = sptd_dec_span(sl.ts, ev->ts);
	sl.cpu = ev->cpu;
	sl.tid = t->tid;
	sl.depth = 0;
	sl.parent_id = -1;
	sl.symbol_id = f.symbol_id;
	sl.kind = addr_is_kernel(ev->from) ? SPTD_DEC_KIND_KERNEL : SPTD_DEC_KIND_USER;
	sl.flags = SPTD_DEC_F_INFERRED | SPTD_DEC_F_START_TRUNCATED |
	           (ev->flags & SPTD_DEC_F_NO_TIME);
	return done_push(t, &sl);
}

/* Rule 4: index of the frame that @to lands in below the top, or -1 when
 * none (returns also match by return address: then the frames from that
 * callee up go).  *keep gets how many frames stay. */
static int unwind_target(const struct stack_task *t, uint64_t to, size_t *keep)
{
	size_t j;

	if (!to || t->nopen == 0)
		return 0;
	for (j = t->nopen - 1; j-- > 0;) {
		if (frame_returns_to(&t->open[j + 1], to) || frame_contains(&t->open[j], to)) {
			*keep = j + 1;
			return 1;
		}
	}
	if (frame_returns_to(&t->open[0], to)) {
		*keep = 0;
		return 1;
	}
	return 0;
}

static int on_return(struct sptd_dec_stacks *st, struct stack_task *t,
                     const struct sptd_dec_flow *ev)
{
	size_t keep;

	if (t->nopen == 0)
		return frame_infer(st, t, ev);
	/* a kernel return right under a kernel entry frame left a function
	 * entered before tracing: nothing of ours to pop */
	if (t->open[t->nopen - 1].special && addr_is_kernel(ev->from))
		return 0;
	if (unwind_target(t, ev->to, &keep))
		return pop_to(st, t, keep, ev->ts);
	return frame_pop(st, t, ev->ts, 0);
}

static int on_jump(struct sptd_dec_stacks *st, struct stack_task *t,
                   const struct sptd_dec_flow *ev)
{
	struct sptd_dec_func f;
	struct stack_frame top;
	size_t keep;
	int err;

	if (t->nopen == 0 || !ev->to)
		return 0;
	top = t->open[t->nopen - 1];
	if (top.special || frame_contains(&top, ev->to))
		return 0;
	err = resolve(st, t->tid, ev->to, &f);
	if (err < 0)
		return err;
	if (f.known && f.start == ev->to && top.fstart != ev->to) {
		err = frame_pop(st, t, ev->ts, 0);
		if (err < 0)
			return err;
		return frame_push(st, t, ev, &f,
		                  addr_is_kernel(ev->to) ? SPTD_DEC_KIND_KERNEL : SPTD_DEC_KIND_USER,
		                  SPTD_DEC_F_TAILCALL, top.call_ip, 0);
	}
	if (unwind_target(t, ev->to, &keep))
		return pop_to(st, t, keep, ev->ts);
	return 0;
}

static int report_special(struct sptd_dec_stacks *st, int64_t id)
{
	struct sptd_dec_symbol sym = { .id = id, .dso_id = -1 };
	int *done = id == SPTD_DEC_SYM_SYSCALL ? &st->reported_syscall : &st->reported_irq;

	if (*done || !st->sink.symbol)
		return 0;
	*done = 1;
	sym.name = id == SPTD_DEC_SYM_SYSCALL ? "[syscall]" : "[irq]";
	return st->sink.symbol(st->sink.ctx, &sym);
}

static int open_special(struct sptd_dec_stacks *st, struct stack_task *t,
                        const struct sptd_dec_flow *ev, int64_t sym)
{
	struct sptd_dec_func f = { .symbol_id = sym };
	int err = report_special(st, sym);

	if (err < 0)
		return err;
	return frame_push(st, t, ev, &f,
	                  sym == SPTD_DEC_SYM_SYSCALL ? SPTD_DEC_KIND_SYSCALL : SPTD_DEC_KIND_IRQ,
	                  0, ev->from, 1);
}

/* Back in user space: every kernel-side frame is over. */
static int leave_kernel(struct sptd_dec_stacks *st, struct stack_task *t, int64_t ts)
{
	size_t j, keep = t->nopen;

	for (j = t->nopen; j-- > 0;) {
		if (t->open[j].special)
			keep = j;
		else if (strcmp(t->open[j].kind, SPTD_DEC_KIND_KERNEL) != 0)
			break;
	}
	return pop_to(st, t, keep, ts);
}

static int on_event(struct sptd_dec_stacks *st, struct stack_task *t,
                    const struct sptd_dec_flow *ev)
{
	struct sptd_dec_func f;
	size_t keep;
	int err;

	switch (ev->kind) {
	case SPTD_DEC_FLOW_CALL:
		err = resolve(st, t->tid, ev->to, &f);
		if (err < 0)
			return err;
		return frame_push(st, t, ev, &f,
		                  addr_is_kernel(ev->to) ? SPTD_DEC_KIND_KERNEL : SPTD_DEC_KIND_USER,
		                  0, ev->from, 0);
	case SPTD_DEC_FLOW_RETURN:
		return on_return(st, t, ev);
	case SPTD_DEC_FLOW_JUMP:
		return on_jump(st, t, ev);
	case SPTD_DEC_FLOW_FAR_CALL:
		return open_special(st, t, ev, SPTD_DEC_SYM_SYSCALL);
	case SPTD_DEC_FLOW_INTERRUPT:
		return open_special(st, t, ev, SPTD_DEC_SYM_IRQ);
	case SPTD_DEC_FLOW_FAR_RETURN:
		if (ev->to && addr_is_kernel(ev->to)) {
			/* iret inside the kernel: the innermost kernel entry ends */
			for (keep = t->nopen; keep-- > 0;)
				if (t->open[keep].special)
					return pop_to(st, t, keep, ev->ts);
			return 0;
		}
		return leave_kernel(st, t, ev->ts);
	case SPTD_DEC_FLOW_ENABLE:
		if (!ev->to || addr_is_kernel(ev->to))
			return 0;
		err = leave_kernel(st, t, ev->ts);
		if (err < 0 || t->nopen == 0 || frame_contains(&t->open[t->nopen - 1], ev->to))
			return err;
		if (unwind_target(t, ev->to, &keep))
			return pop_to(st, t, keep, ev->ts);
		return 0;
	default:
		/* disable, overflow, errors: phase 1 recorded the gap; the stack
		 * stays as it was */
		return 0;
	}
}

/* Close what is still open and hand the task's slices to the sink. */
static int task_finish(struct sptd_dec_stacks *st, struct stack_task *t, int64_t *count)
{
	int64_t end = st->end, x;
	int flag = SPTD_DEC_F_END_TRUNCATED, err = 0;
	size_t i;

	/* a task that exited in the window: what it left open ended there */
	if (t->tid > 0 && !t->no_time && (x = exit_after(st, t->tid, t->last_ts)) >= 0 &&
	    x <= end) {
		end = x;
		flag = 0;
	}
	while (t->nopen && !err) {
		int64_t e = end > t->open[t->nopen - 1].ts ? end : t->open[t->nopen - 1].ts;

		err = frame_pop(st, t, e, flag);
	}
	/* every id the task took is closed now, in id order as placed (a
	 * frame left unplaced would be a bug here: not handed out unwritten) */
	if (!err && st->next_id - t->first_id + 1 != (int64_t)t->ndone)
		err = -EINVAL;
	for (i = 0; i < t->ndone && !err; i++)
		if (st->sink.slice)
			err = st->sink.slice(st->sink.ctx, &t->done[i]);
	*count += (int64_t)t->ndone;
	t->ndone = 0;
	t->nopen = 0;
	return err;
}

/* Replay @nev events in phase 2's order (sptd_dec_flows_order). */
static int64_t stacks_replay(struct sptd_dec_stacks *st, struct sptd_dec_flow *const *ev,
                             size_t nev, int64_t start, int64_t end)
{
	struct stack_task *t = &st->task;
	int64_t count = 0;
	size_t i;
	int err = 0;

	if (start > end) {
		start = INT64_MAX;
		end = INT64_MIN;
		for (i = 0; i < nev; i++) {
			if (ev[i]->ts < start)
				start = ev[i]->ts;
			if (ev[i]->ts > end)
				end = ev[i]->ts;
		}
	}
	st->start = start;
	st->end = end;
	if (st->nexits > 1)
		qsort(st->exits, st->nexits, sizeof(*st->exits), exit_cmp);
	for (i = 0; i < nev && !err; i++) {
		const struct sptd_dec_flow *e = ev[i];
		int key = e->tid < 0 ? e->cpu : -1;

		if (i == 0 || e->tid != t->tid || key != t->cpu_key) {
			size_t j;

			if (i)
				err = task_finish(st, t, &count);
			t->tid = e->tid;
			t->cpu_key = key;
			t->data_start = e->ts; /* events are in time order */
			t->no_time = (e->flags & SPTD_DEC_F_NO_TIME) != 0;
			t->first_id = st->next_id + 1;
			for (j = i + 1; j < nev && ev[j]->tid == e->tid &&
			                (e->tid >= 0 || ev[j]->cpu == e->cpu); j++)
				;
			if (!err)
				err = done_reserve(t, j - i);
			if (err)
				break;
		}
		t->last_ts = e->ts;
		err = on_event(st, t, e);
		if (st->progress && (i & 0xffff) == 0)
			st->progress(st->progress_ctx, "call stacks", i, nev);
	}
	if (!err && nev)
		err = task_finish(st, t, &count);
	if (!err && st->progress)
		st->progress(st->progress_ctx, "call stacks", nev, nev);
	t->nopen = t->ndone = 0;
	st->nexits = 0;
	return err < 0 ? err : count;
}

void sptd_dec_stacks_set_progress(struct sptd_dec_stacks *st, sptd_dec_progress_fn fn,
                                  void *ctx)
{
	if (!st)
		return;
	st->progress = fn;
	st->progress_ctx = ctx;
}

int64_t sptd_dec_stacks_run_cpus(struct sptd_dec_stacks *st, const struct sptd_dec_cpu_flows *cpus,
                                 int ncpus, int64_t start, int64_t end)
{
	struct sptd_dec_flow **ord = NULL;
	size_t n = 0;
	int64_t ret;

	if (!st || (ncpus && !cpus))
		return -EINVAL;
	ret = sptd_dec_flows_order(cpus, ncpus, &ord, &n);
	if (ret >= 0)
		ret = stacks_replay(st, ord, n, start, end);
	free(ord);
	return ret;
}

int64_t sptd_dec_stacks_run(struct sptd_dec_stacks *st, int64_t start, int64_t end)
{
	struct sptd_dec_cpu_flows all;
	int64_t ret;

	if (!st)
		return -EINVAL;
	memset(&all, 0, sizeof(all));
	ret = sptd_dec_cpu_flows_add(&all, &st->queue, 0, st->queue.n);
	if (ret >= 0)
		ret = sptd_dec_stacks_run_cpus(st, &all, 1, start, end);
	sptd_dec_cpu_flows_fini(&all);
	sptd_dec_flowbuf_fini(&st->queue);
	return ret;
}
