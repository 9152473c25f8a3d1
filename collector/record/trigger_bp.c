/* trigger_bp.c — the break= and watch= triggers: hardware breakpoints
 * (x86 debug registers, perf's breakpoint PMU), the triggers of
 * magic-trace (a function executes, no code patched) and of WITCH (a
 * variable is written).  One concept that needs more than 800 lines (see
 * tests/layout LONG_FILES): the kinds share one state, one decision, one
 * hit log and one way to read a process's mappings, which a split had to
 * export through a header of their own.  Divisions:
 *
 *   mappings    the executable file mappings of a process, as
 *               /proc/PID/maps lists them (looking a symbol up in the files
 *               a process maps, naming a hit's function, finding the
 *               processes that map a file)
 *   break=/PATH every process mapping a file (below)
 *   the kind    break=PID:SYMBOL and watch=PID:SYMBOL[+OFF]|PID:0xADDR, and
 *               the decision, log and rows every hit goes through (below)
 *
 * break=PID and watch=: the address is the process's own: the symbol is
 * looked up in the ELF files it maps (read through /proc/PID/map_files,
 * the bytes that ran) and moved by the mapping's load bias.  The events
 * are per CPU and system-wide, so a hit of another process at the same
 * address is dropped here (decide).  A watchpoint fires after the writing
 * instruction: the value after is read from /proc/PID/mem when the hit is
 * decided (microseconds to a millisecond later), the value before is the
 * one read at the previous hit (or when armed); equal values are a silent
 * store, counted as WITCH counts them.  The hits are decided in batches
 * (each check drains the rings): a hit with a later hit of the process in
 * the same batch was stored over before it could be read (a busy machine,
 * or the service writing an incident for longer than the stores are
 * apart), and so was one when a hit came into the rings while its word
 * was read; their values are unknown, and so is the value before the next
 * one; such hits say so and are not counted.  (Left: a store whose trap
 * has not written its sample 0.5 ms after the word was read.)
 * Every hit of the process is also logged (the last HIT_LOG), so that an
 * incident lists each one its window holds, not only the one that fired.
 *
 * break=/PATH:SYMBOL: a hardware breakpoint in every process that maps
 * PATH (the same file: device and inode, or the path), at the symbol's
 * address there: one event per thread (pid = tid, cpu -1), whose debug
 * register the kernel switches with the thread, so processes with
 * different load addresses do not compete for the four registers of a
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
 * user, and given to `sysptd status` and the incidents' meta. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "sptd_col_base.h"
#include "sptd_col_perf.h"
#include "sptd_dec.h"
#include "trigger-kind-local.h"

#define HIT_LOG 1024             /* hits of the process kept, for the rows */
#define BP_MAX_THREADS 2048      /* a trigger polls at most SPTD_MAX_CPUS*2+1 fds */
#define BP_SCAN_NS 1000000000LL  /* /proc scans for new processes and threads */
#define BP_RESCAN_NS 10000000000LL /* ... and of every process (a dlopen of PATH) */
#define BP_USER_SHARE (BP_MAX_THREADS / 4) /* slots no other user can take from
                                            * one while they are scarce */
#define BP_SAY_NS 60000000000LL  /* a changed count of unwatched threads is said
                                  * at most this often */

/* ---- mappings ------------------------------------------------------------------- */

/* One executable file mapping of /proc/PID/maps. */
struct bp_map {
	uint64_t start, end, pgoff;
	dev_t dev;               /* the file's device and inode */
	ino_t ino;
	char path[512];
};

/* Call @fn for each executable file mapping of @pid, in the order of its
 * maps; stops at @fn's first non-zero return, which is returned.
 * -ESRCH: no such process. */
static int each_exec_map(int pid, int (*fn)(void *ctx, const struct bp_map *m), void *ctx)
{
	char path[64], line[1024];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		struct bp_map m;
		char perms[8];
		unsigned long long s, e, off, ino;
		unsigned maj, mnr;
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &maj, &mnr,
		           &ino, &n) < 7 || !n || perms[2] != 'x' || line[n] != '/')
			continue;
		m.start = s;
		m.end = e;
		m.pgoff = off;
		m.dev = makedev(maj, mnr);
		m.ino = (ino_t)ino;
		snprintf(m.path, sizeof(m.path), "%s", line + n);
		m.path[strcspn(m.path, "\n")] = '\0';
		ret = fn(ctx, &m);
	}
	fclose(f);
	return ret;
}

/* ---- break=/PATH ---------------------------------------------------------------- */

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
	int ret = each_exec_map(pid, path_map, &f);

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

/* Open t->spec.path, find its symbol, arm every thread of every process
 * that maps it; the state through *@out (set as soon as it exists, so the
 * caller frees it whatever happens).  -ENOENT, -EINVAL, -ENOMEM, with @err. */
static int path_arm(struct sptd_col_trigger *t, struct bp_path **out, char *err, size_t errlen)
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

/* At each wake of the service: close exited threads' events, and at most
 * once a second look for new processes and threads. */
static void path_tick(struct sptd_col_trigger *t, struct bp_path *p)
{
	path_reap(t, p);
	if (sptd_col_now_ns() - p->last_scan >= BP_SCAN_NS && path_scan(t, p) == -ENOMEM)
		sptd_col_log(LOG_WARNING, "%s: out of memory scanning for new processes",
		             t->spec.text);
}

/* Threads that map the file and the last scan left unwatched (no slot:
 * see slot_for for who is served first).  0 for NULL. */
static size_t path_unwatched(const struct bp_path *p)
{
	return p ? p->unwatched : 0;
}

/* 1 when process @pid is one @p armed. */
static int path_has(const struct bp_path *p, int pid)
{
	return p && proc_of(p, pid) != NULL;
}

/* Accepts NULL. */
static void path_free(struct bp_path *p)
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

/* ---- the kind --------------------------------------------------------------------- */

/* What a break/watch trigger keeps between hits. */
struct bp_state {
	struct {
		int64_t ts;
		int cpu, tid, silent;
		uint64_t ip, old_value, new_value;
	} log[HIT_LOG];           /* the process's latest hits, a ring by time */
	uint64_t nlog;            /* hits logged so far */
	uint64_t addr;            /* the address armed */
	int mem_fd;               /* watch: /proc/PID/mem, -1 none */
	uint64_t shadow;          /* watch: the value last read */
	int have_shadow;
	uint64_t old_value, new_value; /* watch: of the hit last decided */
	int silent;               /* ... 1 when they are equal, -1 unknown */
	const char *unknown_why;  /* ... why they are unknown */
	int64_t hits, silents;    /* watch: hits of the process with values
	                           * known, silent ones */
	int64_t unknowns;         /* watch: hits with values unknown */
	/* the call chains of the latest hits of the process, by time: what
	 * fill() gives the hit that fired */
	struct {
		int64_t ts;
		int n;
		uint64_t ips[SPTD_FIRE_MAX_CHAIN];
	} chains[8];
	unsigned next_chain;
	uint64_t named_ip;        /* the address @named was looked up for */
	char named[160];          /* "func+0x7" there, "" unknown (name_at) */
	struct bp_path *path;     /* break=PATH:SYMBOL; NULL break=PID:SYMBOL */
};

static int bp_every_hit(const struct sptd_col_trigger_spec *spec)
{
	(void)spec;
	return 0;   /* other processes' hits are dropped after the event */
}

static int bp_init(struct sptd_col_trigger *t)
{
	struct bp_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->mem_fd = -1;
	t->kind_state = s;
	return 0;
}

static void bp_fini(struct sptd_col_trigger *t)
{
	struct bp_state *s = t->kind_state;

	if (s && s->mem_fd >= 0)
		close(s->mem_fd);
	if (s)
		path_free(s->path);
	free(s);
	t->kind_state = NULL;
}


/* Looking a symbol up in a process's files. */
struct bp_lookup {
	int pid;
	const char *symbol;      /* the name */
	int data;                /* 1: a variable (watch), 0: a function */
	uint64_t addr;           /* found: the runtime address */
	char file[512];          /* ... in this file */
};

static int lookup_in(void *ctx, const struct bp_map *m)
{
	struct bp_lookup *l = ctx;
	struct sptd_dec_symfile *sf = NULL;
	char mf[96];
	uint64_t vaddr = 0, size = 0;
	int64_t bias = 0;
	int ret;

	/* the bytes that ran, whatever is at the path now */
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, l->pid, m->start, m->end);
	if (sptd_dec_symfile_load_elf(mf, &sf) < 0)
		return 0;
	if (l->data) {
		ret = sptd_dec_data_symbol(mf, l->symbol, &vaddr, &size);
	} else {
		struct sptd_dec_sym sym;

		ret = sptd_dec_symfile_find(sf, l->symbol, &sym);
		vaddr = sym.addr;
	}
	if (ret == 0)
		ret = sptd_dec_symfile_bias(sf, m->start, m->pgoff, &bias);
	sptd_dec_symfile_destroy(sf);
	if (ret < 0)
		return 0;
	l->addr = vaddr + (uint64_t)bias;
	snprintf(l->file, sizeof(l->file), "%s", m->path);
	return 1;
}

/* The runtime address of @spec's symbol (plus its offset) in its process. */
static int bp_resolve(const struct sptd_col_trigger_spec *spec, uint64_t *addr, char *err,
                      size_t errlen)
{
	struct bp_lookup l = { .pid = spec->pid, .symbol = spec->symbol,
	                       .data = spec->kind == SPTD_TRIG_WATCH };
	int ret;

	if (spec->kind == SPTD_TRIG_WATCH && !spec->symbol[0]) {
		*addr = spec->addr;
		return 0;
	}
	ret = each_exec_map(spec->pid, lookup_in, &l);
	if (ret == -ESRCH) {
		snprintf(err, errlen, "no process %d", spec->pid);
		return -ENOENT;
	}
	if (ret < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/maps: %s", spec->pid, strerror(-ret));
		return ret;
	}
	if (ret == 0) {
		snprintf(err, errlen, "no %s '%s' in the files process %d maps (stripped? see nm)",
		         l.data ? "variable" : "function", spec->symbol, spec->pid);
		return -ENOENT;
	}
	*addr = l.addr + spec->offset;
	return 0;
}

/* The value at the watched address now, through /proc/PID/mem.  0 or -errno. */
static int watch_read(const struct sptd_col_trigger *t, uint64_t *value)
{
	const struct bp_state *s = t->kind_state;
	uint64_t v = 0;
	ssize_t n;

	if (s->mem_fd < 0)
		return -EBADF;
	n = pread(s->mem_fd, &v, (size_t)t->spec.bp_len, (off_t)s->addr);
	if (n != t->spec.bp_len)
		return n < 0 ? -errno : -EIO;
	*value = v;   /* little-endian x86: the low bytes hold the value */
	return 0;
}

/* break=/PATH: new processes and threads, exited threads (above) */
static int bp_tick(struct sptd_col_trigger *t, int64_t not_before, struct sptd_col_fire *fire)
{
	struct bp_state *s = t->kind_state;

	(void)not_before;
	(void)fire;
	if (s->path)
		path_tick(t, s->path);
	return 0;
}

static int bp_arm_pid(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                      size_t errlen);

static int bp_arm(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                  size_t errlen)
{
	if (t->spec.kind == SPTD_TRIG_BREAK && t->spec.pid < 0)
		return path_arm(t, &((struct bp_state *)t->kind_state)->path, err, errlen);
	return bp_arm_pid(t, cpus, ncpus, err, errlen);
}

/* break=PID:SYMBOL, watch=: per-CPU events at the process's address. */
static int bp_arm_pid(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                      size_t errlen)
{
	struct bp_state *s = t->kind_state;
	const struct sptd_col_trigger_spec *spec = &t->spec;
	int ret = bp_resolve(spec, &s->addr, err, errlen);

	if (ret < 0)
		return ret;
	if (spec->kind == SPTD_TRIG_WATCH) {
		char mem[64];

		if (s->addr % (uint64_t)spec->bp_len) {
			snprintf(err, errlen, "0x%" PRIx64 " is not aligned to len=%d (the debug "
			         "registers watch aligned 1, 2, 4 or 8 bytes)", s->addr, spec->bp_len);
			return -EINVAL;
		}
		snprintf(mem, sizeof(mem), "/proc/%d/mem", spec->pid);
		s->mem_fd = open(mem, O_RDONLY | O_CLOEXEC);
		if (s->mem_fd >= 0 && watch_read(t, &s->shadow) == 0)
			s->have_shadow = 1;
		else if (s->mem_fd >= 0) {
			snprintf(err, errlen, "0x%" PRIx64 " is not mapped in process %d", s->addr,
			         spec->pid);
			return -EINVAL;
		}
	}
	return sptd_col_trigger_events_breakpoint(t, spec->kind == SPTD_TRIG_WATCH ?
	                                          (spec->bp_rw ? SPTD_PERF_BP_RW : SPTD_PERF_BP_W) :
	                                          SPTD_PERF_BP_X, s->addr,
	                                          (uint64_t)spec->bp_len, cpus, ncpus, err, errlen);
}

/* A store is visible before its trap has written the sample (the #DB
 * handler runs right after the store, on the task's CPU; in a VM that can
 * take tens of microseconds, seen once in ~10 sanitizer runs): give such a
 * sample time to land before the rings are looked at again. */
#define WATCH_SETTLE_NS 500000

static void settle(void)
{
	struct timespec d = { 0, WATCH_SETTLE_NS };

	while (nanosleep(&d, &d) < 0 && errno == EINTR)
		;
}

/* Whether a later hit of the same process is in @h's batch: then the word
 * already holds what that store left. */
static int stored_again(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h)
{
	const struct sptd_col_trigger_hit *end = t->hits + t->nhits;

	if (!t->hits || h < t->hits || h >= end)
		return 0;
	for (const struct sptd_col_trigger_hit *n = h + 1; n < end; n++)
		if (n->task_pid == h->task_pid && n->ts > h->ts)
			return 1;
	return 0;
}

static int bp_decide(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                     int64_t *measure)
{
	struct bp_state *s = t->kind_state;
	uint64_t v = 0;

	*measure = 0;
	if (s->path ? !path_has(s->path, h->task_pid) : h->task_pid != t->spec.pid)
		return 0;   /* another process at the same address */
	if (t->spec.kind == SPTD_TRIG_WATCH) {
		s->old_value = s->new_value = 0;
		s->silent = -1;
		if (stored_again(t, h)) {
			s->unknown_why = "stored again before it was read";
			s->have_shadow = 0;
		} else if (watch_read(t, &v) < 0) {
			s->unknown_why = "process gone";
		} else if (settle(), sptd_col_trigger_events_unread(t)) {
			/* a hit came in since the drain: the word read may be
			 * that later store's */
			s->unknown_why = "stored again before it was read";
			s->have_shadow = 0;
		} else if (!s->have_shadow) {
			s->unknown_why = "the value before is not known";
			s->shadow = v;
			s->have_shadow = 1;
		} else {
			s->old_value = s->shadow;
			s->new_value = v;
			s->silent = v == s->shadow;
			s->silents += s->silent;
			s->hits++;
			s->shadow = v;
		}
		if (s->silent < 0)
			s->unknowns++;
	}
	{
		unsigned slot = (unsigned)(s->nlog++ % HIT_LOG);

		s->log[slot].ts = h->ts;
		s->log[slot].cpu = h->cpu;
		s->log[slot].tid = h->task_tid;
		s->log[slot].ip = h->ip;
		s->log[slot].old_value = s->old_value;
		s->log[slot].new_value = s->new_value;
		s->log[slot].silent = s->silent;
	}
	return 1;
}

/* Naming the function an address of a process is in. */
struct bp_where {
	int pid;
	uint64_t ip;
	char name[160];          /* "func+0x7", "" not found */
};

static int where_in(void *ctx, const struct bp_map *m)
{
	struct bp_where *w = ctx;
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	char mf[96];
	int64_t bias = 0;

	if (w->ip < m->start || w->ip >= m->end)
		return 0;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, w->pid, m->start, m->end);
	if (sptd_dec_symfile_load_elf(mf, &sf) < 0)
		return 1;
	if (sptd_dec_symfile_bias(sf, m->start, m->pgoff, &bias) == 0 &&
	    sptd_dec_symfile_lookup(sf, w->ip - (uint64_t)bias, &sym) == 0)
		snprintf(w->name, sizeof(w->name), "%.120s+0x%" PRIx64, sym.name,
		         w->ip - (uint64_t)bias - sym.addr);
	sptd_dec_symfile_destroy(sf);
	return 1;
}

/* "func+0xOFF" at @ip in the process, through its ELF files; the last
 * answer is kept, since describe and fill ask for the same hit in turn. */
static const char *name_at(const struct sptd_col_trigger *t, uint64_t ip)
{
	struct bp_state *s = t->kind_state;
	struct bp_where w = { .pid = t->spec.pid, .ip = ip };

	if (s->named_ip != ip || !ip) {
		each_exec_map(t->spec.pid, where_in, &w);
		snprintf(s->named, sizeof(s->named), "%s", w.name);
		s->named_ip = ip;
	}
	return s->named;
}

/* The function of a hit at @ip: a break's own (break=/PATH names it;
 * a break=PID hit is at the function's start), a watch's writer. */
static const char *hit_function(const struct sptd_col_trigger *t, uint64_t ip)
{
	const struct bp_state *s = t->kind_state;

	if (s->path)
		return t->spec.symbol;
	return name_at(t, t->spec.kind == SPTD_TRIG_BREAK ? s->addr : ip);
}

static void bp_describe(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                        int64_t measure, char *buf, size_t len)
{
	const struct bp_state *s = t->kind_state;
	const struct sptd_col_trigger_spec *spec = &t->spec;

	(void)measure;
	if (spec->kind == SPTD_TRIG_BREAK && s->path) {
		snprintf(buf, len, "break %.120s:%.100s (0x%" PRIx64 " in pid %d) hit by tid %d",
		         spec->path, spec->symbol, h->ip, h->task_pid, h->task_tid);
		return;
	}
	if (spec->kind == SPTD_TRIG_BREAK) {
		snprintf(buf, len, "break %d:%.100s (0x%" PRIx64 ") hit by tid %d", spec->pid,
		         spec->symbol, s->addr, h->task_tid);
		return;
	}
	{
		const char *fn = name_at(t, h->ip);

		if (s->silent < 0)
			snprintf(buf, len, "watch 0x%" PRIx64 " len %d %s by tid %d at 0x%" PRIx64 " %s: "
			         "values unknown (%s)", s->addr, spec->bp_len,
			         spec->bp_rw ? "accessed" : "written", h->task_tid, h->ip,
			         fn[0] ? fn : "[unknown]", s->unknown_why ? s->unknown_why : "?");
		else
			snprintf(buf, len, "watch 0x%" PRIx64 " len %d %s by tid %d at 0x%" PRIx64 " %s: "
			         "%" PRIu64 " -> %" PRIu64 "%s (%" PRId64 " silent of %" PRId64 " hits%s)",
			         s->addr, spec->bp_len, spec->bp_rw ? "accessed" : "written", h->task_tid,
			         h->ip, fn[0] ? fn : "[unknown]", s->old_value, s->new_value,
			         s->silent ? ", silent store" : "", s->silents, s->hits,
			         s->unknowns ? "; more with values unknown" : "");
	}
}

/* Keep the call chain of each hit of the process (a small ring by time). */
static void bp_record(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                      const struct sptd_col_perf_record *r)
{
	struct bp_state *s = t->kind_state;
	unsigned slot;
	uint64_t n;

	if ((s->path ? !path_has(s->path, h->task_pid) : h->task_pid != t->spec.pid) ||
	    !r->sample.callchain)
		return;
	slot = s->next_chain++ % (sizeof(s->chains) / sizeof(s->chains[0]));
	n = r->sample.nr < SPTD_FIRE_MAX_CHAIN ? r->sample.nr : SPTD_FIRE_MAX_CHAIN;
	s->chains[slot].ts = h->ts;
	s->chains[slot].n = (int)n;
	for (uint64_t i = 0; i < n; i++)
		s->chains[slot].ips[i] = sptd_col_perf_u64(r->sample.callchain, (size_t)i);
}

static void bp_fill(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                    struct sptd_col_fire *fire)
{
	const struct bp_state *s = t->kind_state;

	fire->tid = h->task_tid;
	fire->pid = s->path ? h->task_pid : t->spec.pid;
	fire->ip = h->ip;
	fire->nchain = 0;
	for (size_t i = 0; i < sizeof(s->chains) / sizeof(s->chains[0]); i++)
		if (s->chains[i].n && s->chains[i].ts == h->ts) {
			memcpy(fire->chain, s->chains[i].ips, (size_t)s->chains[i].n * sizeof(uint64_t));
			fire->nchain = s->chains[i].n;
		}
	/* a break's function at its own start (h->ip is that address too) */
	snprintf(fire->function, sizeof(fire->function), "%s", hit_function(t, h->ip));
	if (t->spec.kind != SPTD_TRIG_WATCH || s->silent < 0)
		return;
	fire->watch = 1;
	fire->watch_addr = s->addr;
	fire->old_value = s->old_value;
	fire->new_value = s->new_value;
	fire->silent = s->silent;
	fire->watch_hits = s->hits;
	fire->watch_silent = s->silents;
}

static int bp_hits(const struct sptd_col_trigger *t, int64_t from, int64_t to,
                   sptd_col_trigger_hit_fn fn, void *ctx)
{
	const struct bp_state *s = t->kind_state;
	uint64_t first = s->nlog > HIT_LOG ? s->nlog - HIT_LOG : 0;
	int ret = 0;

	for (uint64_t i = first; i < s->nlog && ret >= 0; i++) {
		unsigned slot = (unsigned)(i % HIT_LOG);
		struct sptd_col_logged_hit h = {
			.ts = s->log[slot].ts, .cpu = s->log[slot].cpu, .tid = s->log[slot].tid,
			.ip = s->log[slot].ip, .watch = t->spec.kind == SPTD_TRIG_WATCH,
			.old_value = s->log[slot].old_value, .new_value = s->log[slot].new_value,
			.silent = s->log[slot].silent,
		};

		if (h.ts < from || h.ts > to)
			continue;
		h.function = hit_function(t, h.ip);
		ret = fn(ctx, &h);
	}
	return ret;
}

int64_t sptd_col_bp_unwatched(struct sptd_col_trigger *const *trig, int n)
{
	int64_t sum = -1;

	for (int i = 0; i < n; i++) {
		const struct bp_state *s = trig[i] ? trig[i]->kind_state : NULL;

		if (!s || trig[i]->ops != &sptd_col_trigger_break_ops || !s->path)
			continue;
		sum = (sum < 0 ? 0 : sum) + (int64_t)path_unwatched(s->path);
	}
	return sum;
}

/* break= and watch= differ in what they arm and say, not in their ops. */
#define BP_OPS(KIND) {                 \
	.kind = KIND,                      \
	.every_hit = bp_every_hit,         \
	.init = bp_init,                   \
	.arm = bp_arm,                     \
	.decide = bp_decide,               \
	.describe = bp_describe,           \
	.record = bp_record,               \
	.fill = bp_fill,                   \
	.hits = bp_hits,                   \
	.tick = bp_tick,                   \
	.fini = bp_fini,                   \
}

const struct sptd_col_trigger_ops sptd_col_trigger_break_ops = BP_OPS(SPTD_TRIG_BREAK);
const struct sptd_col_trigger_ops sptd_col_trigger_watch_ops = BP_OPS(SPTD_TRIG_WATCH);
