/* builder_tasks.c — tid -> task table for the slice builder. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "builder-local.h"

#define TASKS_INITIAL 256

int sptd_sched_tasks_init(struct sptd_sched_tasks *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->slot = malloc(TASKS_INITIAL * sizeof(*t->slot));
	if (!t->slot)
		return -ENOMEM;
	t->cap = TASKS_INITIAL;
	for (i = 0; i < t->cap; i++)
		t->slot[i].tid = -1;
	return 0;
}

void sptd_sched_tasks_fini(struct sptd_sched_tasks *t)
{
	if (!t)
		return;
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static size_t tasks_hash(int tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static int tasks_grow(struct sptd_sched_tasks *t)
{
	size_t cap = t->cap * 2, i, h;
	struct sptd_sched_task *slot = malloc(cap * sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		slot[i].tid = -1;
	for (i = 0; i < t->cap; i++) {
		if (t->slot[i].tid < 0)
			continue;
		for (h = tasks_hash(t->slot[i].tid, cap); slot[h].tid >= 0; h = (h + 1) & (cap - 1))
			;
		slot[h] = t->slot[i];
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

struct sptd_sched_task *sptd_sched_tasks_get(struct sptd_sched_tasks *t, int tid)
{
	size_t h;

	if (tid < 0)
		return NULL;
	for (;;) {
		for (h = tasks_hash(tid, t->cap); t->slot[h].tid >= 0; h = (h + 1) & (t->cap - 1))
			if (t->slot[h].tid == tid)
				return &t->slot[h];
		/* only an insertion grows, so pointers to existing tasks stay
		 * valid as long as no new tid is added */
		if ((t->used + 1) * 2 <= t->cap)
			break;
		if (tasks_grow(t) < 0)
			return NULL;
	}
	memset(&t->slot[h], 0, sizeof(t->slot[h]));
	t->slot[h].tid = tid;
	t->slot[h].cpu = -1;
	t->slot[h].waker = -1;
	t->slot[h].prio = -1;
	t->used++;
	return &t->slot[h];
}

static int tasks_cmp(const void *a, const void *b)
{
	const struct sptd_sched_task *x = *(const struct sptd_sched_task *const *)a;
	const struct sptd_sched_task *y = *(const struct sptd_sched_task *const *)b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

struct sptd_sched_task **sptd_sched_tasks_sorted(struct sptd_sched_tasks *t, long *n)
{
	struct sptd_sched_task **v;
	size_t i, k = 0;

	*n = 0;
	if (t->used == 0)
		return NULL;
	v = malloc(t->used * sizeof(*v));
	if (!v) {
		*n = -1;
		return NULL;
	}
	for (i = 0; i < t->cap; i++)
		if (t->slot[i].tid >= 0)
			v[k++] = &t->slot[i];
	qsort(v, k, sizeof(*v), tasks_cmp);
	*n = (long)k;
	return v;
}
