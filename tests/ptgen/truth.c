/* truth.c — ground-truth call intervals from the recorded execution.
 *
 * One shadow stack per task, fed with every executed instruction, applying
 * the frame rules a PT decoder applies to the trace (docs/PTGEN.md):
 * calls push, returns pop (an empty stack makes an inferred frame from the
 * task's data start, its first traced instruction), jumps to another function's first byte are tail calls,
 * jumps and returns into a function further down the stack unwind to it,
 * syscalls nest a "[syscall]" frame, and what is open at the end is closed
 * there. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptgen.h"

#define FLAG_START_TRUNC 1
#define FLAG_END_TRUNC 2
#define FLAG_INFERRED 4
#define FLAG_TAILCALL 8

/* One frame, open (on the stack) or closed (an interval). */
struct frame {
	uint64_t fstart, fend;  /* runtime range of its function; 0,0 for [syscall] */
	char *name;             /* function name (heap) */
	uint64_t start_ns;      /* call time */
	uint64_t end_ns;        /* return time (closed frames) */
	int depth;              /* stack depth when pushed */
	uint64_t inferred_at;   /* inferred frames made before it was pushed */
	int flags;              /* FLAG_* */
};

struct sptd_ptgen_truth_task {
	struct frame *stack;       /* open frames, outermost first */
	size_t n, cap;             /* used / allocated in @stack */
	struct frame *done;        /* closed intervals */
	size_t ndone, capdone;     /* used / allocated in @done */
	uint64_t inferred;         /* inferred frames so far: each shifts older ones */
	uint64_t start_ns;         /* data start: the task's first instruction */
	int seen;                  /* an instruction was recorded */
	int in_syscall;            /* top frame is [syscall], closes at next insn */
	size_t kentry;             /* --kernel: 1 + index of the open [syscall]
	                            * frame whose kernel code runs, 0 none */
	uint64_t calls, rets;      /* call / return instructions seen */
};

int sptd_ptgen_truth_attach(struct sptd_ptgen_task *task, uint64_t start_ns)
{
	if (!task)
		return -EINVAL;
	task->truth = calloc(1, sizeof(*task->truth));
	if (!task->truth)
		return -ENOMEM;
	task->truth->start_ns = start_ns;
	return 0;
}

void sptd_ptgen_truth_detach(struct sptd_ptgen_task *task)
{
	struct sptd_ptgen_truth_task *t;
	size_t i;

	if (!task || !task->truth)
		return;
	t = task->truth;
	for (i = 0; i < t->n; i++)
		free(t->stack[i].name);
	for (i = 0; i < t->ndone; i++)
		free(t->done[i].name);
	free(t->stack);
	free(t->done);
	free(t);
	task->truth = NULL;
}

static int add_done(struct sptd_ptgen_truth_task *t, const struct frame *f)
{
	if (t->ndone == t->capdone) {
		size_t ncap = t->capdone ? t->capdone * 2 : 256;
		struct frame *nd = realloc(t->done, ncap * sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		t->done = nd;
		t->capdone = ncap;
	}
	t->done[t->ndone++] = *f;
	return 0;
}

static int push(struct sptd_ptgen_truth_task *t, const char *name, uint64_t fstart,
                uint64_t fend, uint64_t ns, int flags)
{
	struct frame *f;

	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct frame *ns_ = realloc(t->stack, ncap * sizeof(*ns_));

		if (!ns_)
			return -ENOMEM;
		t->stack = ns_;
		t->cap = ncap;
	}
	f = &t->stack[t->n];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	f->fstart = fstart;
	f->fend = fend;
	f->start_ns = ns;
	f->depth = (int)t->n;
	f->inferred_at = t->inferred;
	f->flags = flags;
	t->n++;
	return 0;
}

static int pop(struct sptd_ptgen_truth_task *t, uint64_t ns, int flags)
{
	struct frame *f = &t->stack[--t->n];

	f->end_ns = ns;
	f->flags |= flags;
	return add_done(t, f);
}

/* Rule 4: if @target lies in the function of a frame below the top, close
 * the frames above it.  Returns 1 if it did. */
static int unwind_to(struct sptd_ptgen_truth_task *t, uint64_t target, uint64_t ns)
{
	size_t k;
	int err;

	if (t->n < 2)
		return 0;
	for (k = t->n - 1; k-- > 0;) {
		if (target >= t->stack[k].fstart && target < t->stack[k].fend) {
			while (t->n > k + 1) {
				err = pop(t, ns, 0);
				if (err < 0)
					return err;
			}
			return 1;
		}
	}
	return 0;
}

static int in_top(const struct sptd_ptgen_truth_task *t, uint64_t addr)
{
	return t->n && addr >= t->stack[t->n - 1].fstart && addr < t->stack[t->n - 1].fend;
}

int sptd_ptgen_truth_insn(struct sptd_ptgen_task *task, uint64_t ns, uint64_t ip,
                          const struct sptd_ptgen_insn *insn, uint64_t next)
{
	struct sptd_ptgen_truth_task *t;
	char name[512];
	uint64_t fs, fe;
	int err = 0;

	if (!task || !task->truth || !insn)
		return -EINVAL;
	t = task->truth;
	if (!t->seen) {
		/* Data start of every task is its first traced instruction (not
		 * the run's first instruction): a decoder sees a task from its
		 * first event in the trace on, nothing earlier. */
		t->seen = 1;
		t->start_ns = ns;
	}
	if (t->in_syscall) {
		t->in_syscall = 0;
		err = pop(t, ns, 0);
		if (err < 0)
			return err;
	}
	/* a jump or return right under a kernel entry: the decoder cannot
	 * tell where the entry began, so neither opens nor closes anything */
	if (t->kentry && t->n == t->kentry &&
	    (insn->kind == SPTD_PTGEN_BR_JMP || insn->kind == SPTD_PTGEN_BR_JMP_IND ||
	     insn->kind == SPTD_PTGEN_BR_RET))
		return 0;
	switch (insn->kind) {
	case SPTD_PTGEN_BR_CALL:
	case SPTD_PTGEN_BR_CALL_IND:
		t->calls++;
		sptd_ptgen_proc_symbolize(task->proc, next, name, sizeof(name), &fs, &fe);
		return push(t, name, fs, fe, ns, 0);
	case SPTD_PTGEN_BR_RET:
		t->rets++;
		if (!t->n) {
			struct frame f;

			memset(&f, 0, sizeof(f));
			sptd_ptgen_proc_symbolize(task->proc, ip, name, sizeof(name), &fs, &fe);
			f.name = strdup(name);
			if (!f.name)
				return -ENOMEM;
			f.start_ns = t->start_ns;
			f.end_ns = ns;
			f.depth = 0;
			f.inferred_at = ++t->inferred;
			f.flags = FLAG_INFERRED | FLAG_START_TRUNC;
			return add_done(t, &f);
		}
		err = pop(t, ns, 0);
		if (err < 0)
			return err;
		if (t->n && !in_top(t, next))
			err = unwind_to(t, next, ns);
		return err < 0 ? err : 0;
	case SPTD_PTGEN_BR_JMP:
	case SPTD_PTGEN_BR_JMP_IND:
		if (in_top(t, next))
			return 0;
		if (sptd_ptgen_proc_is_func_start(task->proc, next)) {
			if (t->n) {
				err = pop(t, ns, 0);
				if (err < 0)
					return err;
			}
			sptd_ptgen_proc_symbolize(task->proc, next, name, sizeof(name), &fs, &fe);
			return push(t, name, fs, fe, ns, FLAG_TAILCALL);
		}
		err = unwind_to(t, next, ns);
		return err < 0 ? err : 0;
	case SPTD_PTGEN_BR_SYSCALL:
		/* --kernel: kernel code runs under it up to the SYSRET */
		if (sptd_ptgen_is_kernel(next))
			t->kentry = t->n + 1;
		else
			t->in_syscall = 1;
		return push(t, "[syscall]", 0, 0, ns, 0);
	case SPTD_PTGEN_BR_FAR:
		/* SYSRET: back in user space, the kernel's frames and the
		 * [syscall] frame end */
		while (t->kentry && t->n >= t->kentry && !err)
			err = pop(t, ns, 0);
		t->kentry = 0;
		return err;
	default:
		return 0;
	}
}

static int frame_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->depth - y->depth;
}

int sptd_ptgen_truth_write(struct sptd_ptgen_task *task, uint64_t end_ns, void *fp,
                           uint64_t *calls, uint64_t *rets, uint64_t *frames)
{
	struct sptd_ptgen_truth_task *t;
	FILE *f = fp;
	size_t i;
	int err;

	if (!task || !task->truth || !f)
		return -EINVAL;
	t = task->truth;
	while (t->n) {
		err = pop(t, end_ns, FLAG_END_TRUNC);
		if (err < 0)
			return err;
	}
	t->in_syscall = 0;
	t->kentry = 0;
	/* Final depth: every inferred frame made after a frame was pushed
	 * encloses it. */
	for (i = 0; i < t->ndone; i++)
		t->done[i].depth += (int)(t->inferred - t->done[i].inferred_at);
	qsort(t->done, t->ndone, sizeof(*t->done), frame_cmp);
	for (i = 0; i < t->ndone; i++) {
		const struct frame *d = &t->done[i];

		fprintf(f, "%d %d %" PRIu64 " %" PRIu64 " %d %s\n", (int)task->tid, d->depth,
		        d->start_ns, d->end_ns, d->flags, d->name);
	}
	*calls += t->calls;
	*rets += t->rets;
	*frames += t->ndone;
	/* Depths are final now: a second write would shift them again. */
	t->inferred = 0;
	for (i = 0; i < t->ndone; i++)
		t->done[i].inferred_at = 0;
	return 0;
}
