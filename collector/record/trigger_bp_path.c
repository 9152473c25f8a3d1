/* trigger_bp_path.c — break=/PATH:SYMBOL: a hardware breakpoint in every
 * process that maps PATH (the same file: device and inode, or the path),
 * at the symbol's address there: one event per thread (pid = tid, cpu -1),
 * whose debug register the kernel switches with the thread, so processes
 * with different load addresses do not compete for the four registers of a
 * CPU.  Processes and threads that appear later are found by a scan of
 * /proc at most a second apart (a new process's calls in its first moments
 * may come before it); a thread that exits closes its event.  Decisions: a
 * process seen without PATH is read again every ten seconds only (a dlopen
 * of PATH is found within that); at most BP_MAX_THREADS threads are armed.
 *
 * Those slots are shared out by user (the process's real uid, so that a
 * set-uid program a user started counts as theirs; issue 28.3: 2,100 idle
 * threads of one user mapping libc took every slot, and root's process
 * started later was never watched).  While slots are free anyone gets one;
 * once all are taken, a thread of root, or of a user holding fewer than
 * BP_USER_SHARE, takes the slot of the newest thread of the user holding
 * the most beyond that share (that thread is no longer watched); anyone
 * else waits for a free slot.  So no user can keep root's threads, nor
 * another user's first BP_USER_SHARE, from being watched.  Threads left
 * unwatched are counted at every scan, said in the log with counts by
 * user, and given to `sysptd status` and the incidents' meta.
 * The rest of the kind is trigger_bp.c. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "sptd_col_base.h"
#include "sptd_dec.h"
#include "trigger-bp-local.h"
#include "trigger-kind-local.h"

#define BP_MAX_THREADS 2048      /* a trigger polls at most SPTD_MAX_CPUS*2+1 fds */
#define BP_SCAN_NS 1000000000LL  /* /proc scans for new processes and threads */
#define BP_RESCAN_NS 10000000000LL /* ... and of every process (a dlopen of PATH) */
#define BP_USER_SHARE (BP_MAX_THREADS / 4) /* slots no other user can take from
                                            * one while they are scarce */
#define BP_SAY_NS 60000000000LL  /* a changed count of unwatched threads is said
                                  * at most this often */

/* break=PATH:SYMBOL: the file, where the symbol lies in it, and what is
 * armed so far. */
struct bp_proc {
	int pid;
	uid_t uid;                /* its real uid when found; -1 unknown */
	uint64_t addr;            /* the symbol in this process */
};
/* The slots one user's threads hold. */
struct bp_user {
	uid_t uid;
	size_t armed;             /* threads armed now */
	size_t unwatched;         /* threads the last scan left unarmed */
	size_t threads;           /* threads the last scan saw (armed or not) */
};
struct bp_path {
	dev_t dev;                /* the file PATH named at arming */
	ino_t ino;
	struct sptd_dec_symfile *sf; /* its symbols and load segments */
	uint64_t vaddr;           /* the symbol's address in the file */
	struct bp_proc *procs;    /* processes that map it */
	size_t nprocs, capprocs;
	int *seen;                /* pids looked at (sorted) */
	size_t nseen, capseen;
	int *tids;                /* threads armed, by event: tids[i] is the
	                           * thread of the trigger's event i, 0 none */
	uid_t *tuids;             /* ... and the user of its process */
	size_t ntids;
	size_t armed;             /* threads armed now */
	struct bp_user *users;    /* every user whose process maps the file */
	size_t nusers, capusers;
	size_t unwatched;         /* threads the last scan left unarmed, all users */
	size_t said_unwatched;    /* ... the count last said in the log */
	int64_t said_at;          /* ns when it was */
	int64_t last_scan;
	int64_t last_full;        /* the last scan that read every process's maps */
	struct pollfd *pfd;       /* path_reap's poll set, by event index */
	size_t cappfd;            /* its allocated entries */
};

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int seen_has(const struct bp_path *p, int pid)
{
	return p->nseen && bsearch(&pid, p->seen, p->nseen, sizeof(int), int_cmp) != NULL;
}

static int seen_add(struct bp_path *p, int pid)
{
	size_t i;

	if (p->nseen == p->capseen) {
		size_t cap = p->capseen ? p->capseen * 2 : 256;
		int *n = realloc(p->seen, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->seen = n;
		p->capseen = cap;
	}
	for (i = p->nseen; i > 0 && p->seen[i - 1] > pid; i--)
		p->seen[i] = p->seen[i - 1];
	p->seen[i] = pid;
	p->nseen++;
	return 0;
}

static struct bp_proc *proc_of(const struct bp_path *p, int pid)
{
	for (size_t i = 0; i < p->nprocs; i++)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	return NULL;
}

/* The real uid of process @pid (/proc/PID/status); (uid_t)-1 when it
 * cannot be read (gone). */
static uid_t proc_uid(int pid)
{
	char path[64], line[256];
	unsigned long uid = (unsigned long)-1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return (uid_t)-1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %lu", &uid) == 1)
			break;
	fclose(f);
	return (uid_t)uid;
}

/* @uid's entry, added when new; NULL out of memory. */
static struct bp_user *user_of(struct bp_path *p, uid_t uid)
{
	for (size_t i = 0; i < p->nusers; i++)
		if (p->users[i].uid == uid)
			return &p->users[i];
	if (p->nusers == p->capusers) {
		size_t cap = p->capusers ? p->capusers * 2 : 8;
		struct bp_user *n = realloc(p->users, cap * sizeof(*n));

		if (!n)
			return NULL;
		p->users = n;
		p->capusers = cap;
	}
	p->users[p->nusers] = (struct bp_user){ .uid = uid };
	return &p->users[p->nusers++];
}

/* A slot for a thread of @u: 1 when one is free, or was freed by giving up
 * the newest thread of the user holding the most beyond BP_USER_SHARE
 * (all taken, and @u is root or holds fewer than that share); 0 none. */
static int slot_for(struct sptd_col_trigger *t, struct bp_path *p, const struct bp_user *u)
{
	struct bp_user *most = NULL;

	if (p->armed < BP_MAX_THREADS)
		return 1;
	if (u->uid != 0 && u->armed >= BP_USER_SHARE)
		return 0;
	for (size_t i = 0; i < p->nusers; i++)
		if (p->users[i].uid != 0 && &p->users[i] != u &&
		    (!most || p->users[i].armed > most->armed))
			most = &p->users[i];
	if (!most || most->armed <= (u->uid == 0 ? 0 : BP_USER_SHARE))
		return 0;
	for (size_t i = p->ntids; i-- > 0;)
		if (p->tids[i] > 0 && p->tuids[i] == most->uid) {
			sptd_col_trigger_events_close_one(&t->events[i]);
			p->tids[i] = 0;
			p->armed--;
			most->armed--;
			return 1;
		}
	return 0;
}

/* Where a process maps the file (its device and inode, or its path): the
 * symbol's address there. */
struct path_find {
	const struct bp_path *p;
	const char *path;
	uint64_t addr;
};

static int path_map(void *ctx, const struct bp_map *m)
{
	struct path_find *f = ctx;
	int64_t bias;

	if (!((m->dev == f->p->dev && m->ino == f->p->ino) || strcmp(m->path, f->path) == 0) ||
	    sptd_dec_symfile_bias(f->p->sf, m->start, m->pgoff, &bias) < 0)
		return 0;
	f->addr = f->p->vaddr + (uint64_t)bias;
	return 1;
}

/* 1 and *@addr when @pid maps the file, 0 when not, -errno. */
static int path_addr_in(const struct bp_path *p, const char *path, int pid, uint64_t *addr)
{
	struct path_find f = { .p = p, .path = path };
	int ret = sptd_col_bp_each_exec_map(pid, path_map, &f);

	if (ret == 1)
		*addr = f.addr;
	return ret;
}

/* Arm every thread of @proc not armed yet. */
static int path_arm_threads(struct sptd_col_trigger *t, struct bp_path *p,
                            const struct bp_proc *proc)
{
	char dir[64], err[256];
	struct dirent *de;
	struct bp_user *u = user_of(p, proc->uid);
	DIR *d;
	int ret = 0;

	if (!u)
		return -ENOMEM;
	snprintf(dir, sizeof(dir), "/proc/%d/task", proc->pid);
	d = opendir(dir);
	if (!d)
		return 0;   /* gone */
	while (ret >= 0 && (de = readdir(d))) {
		int tid = atoi(de->d_name), known = 0;

		if (tid <= 0)
			continue;
		u->threads++;
		for (size_t i = 0; i < p->ntids && !known; i++)
			known = p->tids[i] == tid || p->tids[i] == -tid;
		if (known)
			continue;
		if (!slot_for(t, p, u)) {
			u->unwatched++;
			continue;
		}
		ret = sptd_col_trigger_events_breakpoint_task(t, SPTD_PERF_BP_X, proc->addr, 8, tid,
		                                              err, sizeof(err));
		if (ret == -ESRCH || ret == -ENOENT) {
			ret = 0;   /* the thread ended meanwhile */
			/* its closed slot is kept: tids stays aligned with events */
		} else if (ret < 0) {
			sptd_col_log(LOG_WARNING, "%s: %s", t->spec.text, err);
			ret = 0;   /* another thread may still be armed */
		} else {
			p->armed++;
			u->armed++;
		}
		{
			int *n = realloc(p->tids, (size_t)t->nevents * sizeof(*n));
			uid_t *nu;

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			p->tids = n;
			nu = realloc(p->tuids, (size_t)t->nevents * sizeof(*nu));
			if (!nu) {
				ret = -ENOMEM;
				break;
			}
			p->tuids = nu;
			while (p->ntids < (size_t)t->nevents) {
				p->tuids[p->ntids] = (uid_t)-1;
				p->tids[p->ntids++] = 0;
			}
			if (t->events[t->nevents - 1].fd >= 0) {
				p->tids[t->nevents - 1] = tid;
				p->tuids[t->nevents - 1] = proc->uid;
			}
		}
	}
	closedir(d);
	return ret;
}

/* The threads left unwatched, with counts by user: said when some first
 * are, then when their count changed (at most every BP_SAY_NS), and when
 * none are left. */
static void say_unwatched(const struct sptd_col_trigger *t, struct bp_path *p)
{
	char by[512];
	size_t off = 0, total = 0;
	int64_t now = sptd_col_now_ns();

	for (size_t i = 0; i < p->nusers; i++)
		total += p->users[i].unwatched;
	p->unwatched = total;
	if (total == p->said_unwatched ||
	    (total && p->said_unwatched && now - p->said_at < BP_SAY_NS))
		return;
	p->said_unwatched = total;
	p->said_at = now;
	if (!total) {
		sptd_col_log(LOG_NOTICE, "%s: every thread mapping %s is watched again", t->spec.text,
		             t->spec.path);
		return;
	}
	by[0] = '\0';
	for (size_t i = 0; i < p->nusers && off < sizeof(by) - 1; i++) {
		const struct bp_user *u = &p->users[i];
		int n;

		if (!u->threads)
			continue;
		if (u->uid == (uid_t)-1)
			n = snprintf(by + off, sizeof(by) - off, "%sunknown user %zu of %zu",
			             off ? "; " : "", u->unwatched, u->threads);
		else
			n = snprintf(by + off, sizeof(by) - off, "%suid %u %zu of %zu", off ? "; " : "",
			             (unsigned)u->uid, u->unwatched, u->threads);
		if (n < 0)
			break;
		off += (size_t)n < sizeof(by) - off ? (size_t)n : sizeof(by) - off - 1;
	}
	sptd_col_log(LOG_WARNING, "%s: %zu thread(s) mapping %s are not watched (%zu armed, the "
	             "most one trigger takes; root's threads come first, then each user's first "
	             "%d): not watched by user: %s", t->spec.text, total, t->spec.path, p->armed,
	             BP_USER_SHARE, by);
}

/* New processes that map the file, and new threads of those that do. */
static int path_scan(struct sptd_col_trigger *t, struct bp_path *p)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int ret = 0;

	int full;

	p->last_scan = sptd_col_now_ns();
	/* every BP_RESCAN_NS the processes seen without the file are read
	 * again: one may have mapped it since (dlopen) */
	full = p->last_scan - p->last_full >= BP_RESCAN_NS;
	if (full)
		p->last_full = p->last_scan;
	if (!d)
		return -errno;
	while (ret >= 0 && (de = readdir(d))) {
		int pid = atoi(de->d_name);
		uint64_t addr = 0;

		if (pid <= 0 || proc_of(p, pid) || (!full && seen_has(p, pid)))
			continue;
		if (!seen_has(p, pid) && (ret = seen_add(p, pid)) < 0)
			break;
		if (path_addr_in(p, t->spec.path, pid, &addr) <= 0)
			continue;
		if (p->nprocs == p->capprocs) {
			size_t cap = p->capprocs ? p->capprocs * 2 : 16;
			struct bp_proc *n = realloc(p->procs, cap * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			p->procs = n;
			p->capprocs = cap;
		}
		p->procs[p->nprocs].pid = pid;
		p->procs[p->nprocs].uid = proc_uid(pid);
		p->procs[p->nprocs].addr = addr;
		p->nprocs++;
	}
	closedir(d);
	for (size_t i = 0; i < p->nusers; i++)
		p->users[i].unwatched = p->users[i].threads = 0;
	/* root's threads first: they never wait for a slot */
	for (int root = 1; root >= 0; root--)
		for (size_t i = 0; i < p->nprocs && ret >= 0; i++)
			if ((p->procs[i].uid == 0) == root)
				ret = path_arm_threads(t, p, &p->procs[i]);
	if (ret >= 0)
		say_unwatched(t, p);
	return ret;
}

/* Threads that exited: their events hang up.  Marked (tid negated) when
 * first seen so, closed at the next tick: the drain that follows this tick
 * takes what they recorded before they ended.  (One extra wake of the
 * service's poll per exit, no more.) */
static void path_reap(struct sptd_col_trigger *t, struct bp_path *p)
{
	size_t n = p->ntids < (size_t)t->nevents ? p->ntids : (size_t)t->nevents, armed = 0;

	if (n > p->cappfd) {
		struct pollfd *m = realloc(p->pfd, n * sizeof(*m));

		if (!m)
			return;   /* tried again at the next tick */
		p->pfd = m;
		p->cappfd = n;
	}
	/* one poll of every armed thread's event (index = event index; a
	 * negative fd is skipped by poll) */
	for (size_t i = 0; i < n; i++) {
		if (p->tids[i] < 0) {
			struct bp_user *u = user_of(p, p->tuids[i]);

			sptd_col_trigger_events_close_one(&t->events[i]);
			p->tids[i] = 0;
			p->armed--;
			if (u && u->armed)
				u->armed--;
		}
		p->pfd[i] = (struct pollfd){ .fd = p->tids[i] ? t->events[i].fd : -1,
		                             .events = POLLIN };
		armed += p->pfd[i].fd >= 0;
	}
	if (!armed || poll(p->pfd, (nfds_t)n, 0) <= 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (p->pfd[i].fd >= 0 && (p->pfd[i].revents & POLLHUP))
			p->tids[i] = -p->tids[i];
}

int sptd_col_bp_path_arm(struct sptd_col_trigger *t, struct bp_path **out, char *err,
                         size_t errlen)
{
	const struct sptd_col_trigger_spec *spec = &t->spec;
	struct sptd_dec_sym sym;
	struct stat sb;
	struct bp_path *p;
	int fd, ret;

	fd = sptd_dec_file_open(spec->path, 0, &sb);
	if (fd < 0) {
		snprintf(err, errlen, "break: cannot open %s: %s", spec->path,
		         sptd_dec_file_strerror(fd));
		return fd == -ENOENT ? -ENOENT : -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	*out = p;
	p->dev = sb.st_dev;
	p->ino = sb.st_ino;
	ret = sptd_dec_symfile_load_elf_fd(fd, &p->sf);
	close(fd);
	if (ret < 0) {
		snprintf(err, errlen, "break: %s is not an ELF file sysptd can read", spec->path);
		return -EINVAL;
	}
	if (sptd_dec_symfile_find(p->sf, spec->symbol, &sym) < 0) {
		snprintf(err, errlen, "break: no function '%s' in %s (stripped? see nm)", spec->symbol,
		         spec->path);
		return -ENOENT;
	}
	p->vaddr = sym.addr;
	ret = path_scan(t, p);
	if (ret < 0) {
		snprintf(err, errlen, "break: scanning /proc: %s", strerror(-ret));
		return ret;
	}
	sptd_col_log(LOG_INFO, "%s: %zu process(es) map %s, %zu thread(s) armed; new ones are "
	             "looked for every second", spec->text, p->nprocs, spec->path, p->armed);
	return 0;
}

void sptd_col_bp_path_tick(struct sptd_col_trigger *t, struct bp_path *p)
{
	path_reap(t, p);
	if (sptd_col_now_ns() - p->last_scan >= BP_SCAN_NS && path_scan(t, p) == -ENOMEM)
		sptd_col_log(LOG_WARNING, "%s: out of memory scanning for new processes",
		             t->spec.text);
}

size_t sptd_col_bp_path_unwatched(const struct bp_path *p)
{
	return p ? p->unwatched : 0;
}

int sptd_col_bp_path_has(const struct bp_path *p, int pid)
{
	return p && proc_of(p, pid) != NULL;
}

void sptd_col_bp_path_free(struct bp_path *p)
{
	if (!p)
		return;
	sptd_dec_symfile_destroy(p->sf);
	free(p->procs);
	free(p->seen);
	free(p->tids);
	free(p->tuids);
	free(p->users);
	free(p->pfd);
	free(p);
}
