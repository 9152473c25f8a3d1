/* tasks.c — one identity per thread and process for every table.
 *
 * sched/, the sampler and the PT decoder all name tasks by tid; the incident
 * names them by utid/upid as Perfetto does.  This registry hands out utids in
 * first-seen order and, at the end, writes process and thread rows with the
 * best names known (comm from the trace, cmdline from /proc at capture). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "derive-local.h"
#include "sptd_store.h"

struct task {
	int tid;            /* kernel thread id; 0 is the idle task */
	int pid;            /* thread group id, -1 while unknown */
	int64_t utid;       /* our id, index into tasks[] */
	char comm[16];      /* last comm seen ("" unknown) */
	char *cmdline;      /* process command line (heap), NULL unknown */
};

struct sptd_col_tasks {
	struct task *tasks;  /* by utid */
	size_t ntasks, cap;
	int64_t *slots;      /* open-addressing hash tid -> utid, -1 empty */
	size_t nslots;       /* power of two */
};

static size_t slot_of(const struct sptd_col_tasks *t, int tid)
{
	return ((uint32_t)tid * 2654435761u) & (t->nslots - 1);
}

static int rehash(struct sptd_col_tasks *t, size_t nslots)
{
	int64_t *slots = malloc(nslots * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < nslots; i++)
		slots[i] = -1;
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	for (size_t i = 0; i < t->ntasks; i++) {
		size_t s = slot_of(t, t->tasks[i].tid);

		while (t->slots[s] >= 0)
			s = (s + 1) & (nslots - 1);
		t->slots[s] = (int64_t)i;
	}
	return 0;
}

int sptd_col_tasks_create(struct sptd_col_tasks **out)
{
	struct sptd_col_tasks *t;

	if (!out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t || rehash(t, 256) < 0) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void sptd_col_tasks_destroy(struct sptd_col_tasks *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ntasks; i++)
		free(t->tasks[i].cmdline);
	free(t->tasks);
	free(t->slots);
	free(t);
}

static struct task *find(struct sptd_col_tasks *t, int tid)
{
	size_t s = slot_of(t, tid);

	while (t->slots[s] >= 0) {
		if (t->tasks[t->slots[s]].tid == tid)
			return &t->tasks[t->slots[s]];
		s = (s + 1) & (t->nslots - 1);
	}
	return NULL;
}

static struct task *get(struct sptd_col_tasks *t, int tid)
{
	struct task *task = find(t, tid);
	size_t s;

	if (task)
		return task;
	if ((t->ntasks + 1) * 2 > t->nslots && rehash(t, t->nslots * 2) < 0)
		return NULL;
	if (t->ntasks == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct task *tasks = realloc(t->tasks, cap * sizeof(*tasks));

		if (!tasks)
			return NULL;
		t->tasks = tasks;
		t->cap = cap;
	}
	task = &t->tasks[t->ntasks];
	memset(task, 0, sizeof(*task));
	task->tid = tid;
	task->pid = tid == 0 ? 0 : -1;
	task->utid = (int64_t)t->ntasks;
	if (tid == 0)
		strcpy(task->comm, "swapper");
	s = slot_of(t, tid);
	while (t->slots[s] >= 0)
		s = (s + 1) & (t->nslots - 1);
	t->slots[s] = (int64_t)t->ntasks++;
	return task;
}

int sptd_col_tasks_note(struct sptd_col_tasks *t, int tid, int pid,
                        const char *comm, const char *cmdline)
{
	struct task *task;

	if (!t || tid < 0)
		return -EINVAL;
	task = get(t, tid);
	if (!task)
		return -ENOMEM;
	if (pid >= 0)
		task->pid = pid;
	if (comm && *comm && tid != 0) {
		strncpy(task->comm, comm, sizeof(task->comm) - 1);
		task->comm[sizeof(task->comm) - 1] = '\0';
	}
	if (cmdline && *cmdline) {
		char *copy = strdup(cmdline);

		if (!copy)
			return -ENOMEM;
		free(task->cmdline);
		task->cmdline = copy;
	}
	return 0;
}

int64_t sptd_col_tasks_utid(struct sptd_col_tasks *t, int tid)
{
	struct task *task;

	if (!t || tid < 0)
		return -EINVAL;
	task = get(t, tid);
	return task ? task->utid : -ENOMEM;
}

int sptd_col_tasks_tid(const struct sptd_col_tasks *t, int64_t utid)
{
	if (!t || utid < 0 || (uint64_t)utid >= t->ntasks)
		return -EINVAL;
	return t->tasks[utid].tid;
}

int sptd_col_tasks_pid(struct sptd_col_tasks *t, int tid)
{
	struct task *task = t && tid >= 0 ? find(t, tid) : NULL;

	return task ? task->pid : -1;
}

int sptd_col_tasks_store(struct sptd_col_tasks *t, struct sptd_store *st)
{
	int ret = 0;

	if (!t || !st)
		return -EINVAL;
	/* upid = utid of the process's main thread (tid == pid), so one
	 * numbering serves both; a thread whose process is unknown is its
	 * own process only if it is a group leader we never saw otherwise. */
	for (size_t i = 0; i < t->ntasks && ret >= 0; i++) {
		struct task *task = &t->tasks[i];
		int pid = task->pid >= 0 ? task->pid : task->tid;
		struct task *leader = pid == task->tid ? task : get(t, pid);

		if (!leader)
			return -ENOMEM;
		task = &t->tasks[i]; /* get() may have moved the array */
		if (leader->pid < 0)
			leader->pid = pid;
	}
	for (size_t i = 0; i < t->ntasks && ret >= 0; i++) {
		struct task *task = &t->tasks[i];

		if (task->pid == task->tid)
			ret = SPTD_STORE_ADD(st, process, task->utid, task->pid,
			                     task->comm[0] ? task->comm : NULL,
			                     task->cmdline);
	}
	for (size_t i = 0; i < t->ntasks && ret >= 0; i++) {
		struct task *task = &t->tasks[i];
		struct task *leader = find(t, task->pid);

		ret = SPTD_STORE_ADD(st, thread, task->utid, task->tid,
		                     leader ? leader->utid : -1,
		                     task->comm[0] ? task->comm : NULL);
	}
	return ret < 0 ? ret : 0;
}
