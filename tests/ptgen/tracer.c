/* tracer.c — starting a program under ptrace up to `main`, and keeping a
 * copy of its executable mappings (for the branch decoder, for symbols and
 * for the images a PT decoder needs). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptgen.h"

static uint64_t next_cr3 = 0x1a2b3000;

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, buf, len, (off_t)addr);
	close(fd);
	if (got < 0)
		return -errno;
	return got == (ssize_t)len ? 0 : -EIO;
}

static int have_map(const struct sptd_ptgen_proc *proc, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < proc->nmaps; i++)
		if (proc->maps[i].start == start && proc->maps[i].end == end)
			return 1;
	return 0;
}

int sptd_ptgen_proc_rescan(struct sptd_ptgen_proc *proc)
{
	char path[64], line[4096];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)proc->pid);
	f = fopen(path, "re");
	if (!f)
		return sptd_ptgen_fail(-errno, "cannot read %s", path);
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, pgoff;
		char perms[8], file[4096] = "";
		struct sptd_ptgen_map *m, *nm;
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s%n", &start, &end,
		           perms, &pgoff, &pos) < 4)
			continue;
		if (perms[2] != 'x' || have_map(proc, start, end))
			continue;
		if (pos > 0) {
			const char *p = line + pos;

			while (*p == ' ')
				p++;
			snprintf(file, sizeof(file), "%s", p);
			file[strcspn(file, "\n")] = 0;
		}
		if (strcmp(file, "[vsyscall]") == 0)
			continue; /* not readable, never used by modern libc */
		nm = realloc(proc->maps, (proc->nmaps + 1) * sizeof(*nm));
		if (!nm) {
			err = -ENOMEM;
			break;
		}
		proc->maps = nm;
		m = &proc->maps[proc->nmaps];
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = end;
		m->pgoff = pgoff;
		m->path = strdup(*file ? file : "[anon]");
		m->bytes = malloc(end - start);
		if (!m->path || !m->bytes) {
			free(m->path);
			free(m->bytes);
			err = -ENOMEM;
			break;
		}
		err = read_mem(proc->pid, start, m->bytes, end - start);
		if (err < 0) {
			free(m->path);
			free(m->bytes);
			err = sptd_ptgen_fail(err, "cannot read code of pid %d at 0x%" PRIx64,
			                      (int)proc->pid, start);
			break;
		}
		proc->nmaps++;
	}
	fclose(f);
	return err;
}

struct sptd_ptgen_map *sptd_ptgen_proc_map(struct sptd_ptgen_proc *proc, uint64_t ip)
{
	size_t i;
	int pass;

	if (proc->last_map < proc->nmaps && ip >= proc->maps[proc->last_map].start &&
	    ip < proc->maps[proc->last_map].end)
		return &proc->maps[proc->last_map];
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < proc->nmaps; i++) {
			if (ip >= proc->maps[i].start && ip < proc->maps[i].end) {
				proc->last_map = i;
				return &proc->maps[i];
			}
		}
		if (pass == 0 && sptd_ptgen_proc_rescan(proc) < 0)
			return NULL;
	}
	return NULL;
}

struct sptd_ptgen_symtab *sptd_ptgen_map_syms(struct sptd_ptgen_map *m)
{
	if (m->syms_tried)
		return m->syms;
	m->syms_tried = 1;
	if (m->path[0] == '/') {
		if (sptd_ptgen_symtab_load(m->path, NULL, 0, &m->syms) < 0)
			return NULL;
	} else if (strcmp(m->path, "[vdso]") == 0) {
		if (sptd_ptgen_symtab_load(NULL, m->bytes, m->end - m->start, &m->syms) < 0)
			return NULL;
	} else {
		return NULL;
	}
	if (sptd_ptgen_symtab_bias(m->syms, m->start, m->pgoff, &m->bias) < 0) {
		sptd_ptgen_symtab_destroy(m->syms);
		m->syms = NULL;
	}
	return m->syms;
}

/* Kernel code (--kernel) is looked up at the user address it runs at and
 * named at its kernel address. */
void sptd_ptgen_proc_symbolize(struct sptd_ptgen_proc *proc, uint64_t ip, char *buf,
                               size_t len, uint64_t *start, uint64_t *end)
{
	uint64_t uip = sptd_ptgen_uaddr(ip), shift = ip - uip;
	struct sptd_ptgen_map *m = sptd_ptgen_proc_map(proc, uip);
	struct sptd_ptgen_symtab *st = m ? sptd_ptgen_map_syms(m) : NULL;
	const char *name;
	uint64_t s, e;

	if (st && sptd_ptgen_symtab_lookup(st, uip - (uint64_t)m->bias, &name, &s, &e) == 0) {
		snprintf(buf, len, "%s", name);
		*start = s + (uint64_t)m->bias + shift;
		*end = e + (uint64_t)m->bias + shift;
		return;
	}
	snprintf(buf, len, "0x%" PRIx64, ip);
	*start = ip;
	*end = ip + 1;
}

int sptd_ptgen_proc_is_func_start(struct sptd_ptgen_proc *proc, uint64_t ip)
{
	struct sptd_ptgen_map *m = sptd_ptgen_proc_map(proc, sptd_ptgen_uaddr(ip));
	struct sptd_ptgen_symtab *st = m ? sptd_ptgen_map_syms(m) : NULL;
	uint64_t s;

	ip = sptd_ptgen_uaddr(ip);
	if (!st || sptd_ptgen_symtab_lookup(st, ip - (uint64_t)m->bias, NULL, &s, NULL) < 0)
		return 0;
	return s == ip - (uint64_t)m->bias;
}

static int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char dir[4096];

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK) == 0 ? 0 : -ENOENT;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		if (n >= sizeof(dir))
			n = sizeof(dir) - 1;
		memcpy(dir, path, n);
		dir[n] = 0;
		if (strlen(dir) + strlen(name) + 2 > len)
			return -ENAMETOOLONG;
		strcpy(out, *dir ? dir : ".");
		strcat(out, "/");
		strcat(out, name);
		if (access(out, X_OK) == 0)
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	return -ENOENT;
}

/* Runtime address of `main` in the stopped process: its symbol plus the
 * bias of the executable's mapping. */
static int locate_main(struct sptd_ptgen_proc *proc, const char *exe, uint64_t *ip)
{
	struct sptd_ptgen_symtab *st = NULL;
	char real[4096];
	uint64_t addr;
	int err;

	if (!realpath(exe, real))
		return sptd_ptgen_fail(-errno, "%s: cannot resolve path", exe);
	err = sptd_ptgen_symtab_load(real, NULL, 0, &st);
	if (err < 0)
		return sptd_ptgen_fail(err, "%s: cannot read ELF symbols", exe);
	err = sptd_ptgen_symtab_find(st, "main", &addr);
	if (err < 0) {
		err = sptd_ptgen_fail(-ENOENT, "%s: no `main` symbol (stripped?)", exe);
		goto out;
	}
	/* The executable's lowest mapping tells the bias (PIE). */
	{
		char path[64], line[4096];
		FILE *f;
		int found = 0;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)proc->pid);
		f = fopen(path, "re");
		if (!f) {
			err = -errno;
			goto out;
		}
		while (!found && fgets(line, sizeof(line), f)) {
			uint64_t start, end, pgoff;
			char *file = strchr(line, '/');
			int64_t bias;

			if (!file || sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &start, &end,
			                    &pgoff) != 3)
				continue;
			file[strcspn(file, "\n")] = 0;
			if (strcmp(file, real) != 0)
				continue;
			if (sptd_ptgen_symtab_bias(st, start, pgoff, &bias) == 0) {
				*ip = addr + (uint64_t)bias;
				found = 1;
			}
		}
		fclose(f);
		if (!found)
			err = sptd_ptgen_fail(-ENOENT, "%s: not found in /proc/%d/maps", real,
			                      (int)proc->pid);
	}
out:
	sptd_ptgen_symtab_destroy(st);
	return err;
}

int sptd_ptgen_proc_launch(char *const argv[], struct sptd_ptgen_proc **out,
                           uint64_t *main_ip)
{
	struct sptd_ptgen_proc *proc = NULL;
	char exe[4096];
	uint64_t ip = 0, word, patched;
	struct user_regs_struct regs;
	int status, err, pipefd[2];
	pid_t pid;
	char *slash;
	FILE *f;

	if (!argv || !argv[0] || !out || !main_ip)
		return -EINVAL;
	if (find_program(argv[0], exe, sizeof(exe)) < 0)
		return sptd_ptgen_fail(-ENOENT, "%s: no such program", argv[0]);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	if (pid == 0) {
		int e = 0;

		close(pipefd[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
			e = errno;
			if (write(pipefd[1], &e, sizeof(e)) < 0)
				_exit(127);
			_exit(127);
		}
		execv(exe, argv);
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	{
		int e = 0;
		ssize_t got = read(pipefd[0], &e, sizeof(e));

		close(pipefd[0]);
		if (got == (ssize_t)sizeof(e)) {
			waitpid(pid, &status, 0);
			if (e == EPERM)
				return sptd_ptgen_fail(-EPERM, "ptrace not permitted here");
			return sptd_ptgen_fail(-e, "%s: cannot exec: %s", exe, strerror(e));
		}
	}
	proc = calloc(1, sizeof(*proc));
	if (!proc) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -ENOMEM;
	}
	proc->pid = pid;
	proc->cr3 = next_cr3;
	next_cr3 += 0x11000;
	slash = strrchr(exe, '/');
	{
		const char *base = slash ? slash + 1 : exe;
		size_t bl = strlen(base);

		if (bl >= sizeof(proc->comm))
			bl = sizeof(proc->comm) - 1;
		memcpy(proc->comm, base, bl);
		proc->comm[bl] = 0;
	}

	/* Stopped by the exec's SIGTRAP. */
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		err = sptd_ptgen_fail(-ECHILD, "%s: did not stop after exec", exe);
		goto fail;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
	           (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)) < 0) {
		err = sptd_ptgen_fail(-errno, "PTRACE_SETOPTIONS: %s", strerror(errno));
		goto fail;
	}
	err = locate_main(proc, exe, &ip);
	if (err < 0)
		goto fail;
	errno = 0;
	word = (uint64_t)ptrace(PTRACE_PEEKDATA, pid, (void *)ip, NULL);
	if (errno) {
		err = sptd_ptgen_fail(-errno, "%s: cannot read main at 0x%" PRIx64, exe, ip);
		goto fail;
	}
	patched = (word & ~0xffull) | 0xcc;
	if (ptrace(PTRACE_POKEDATA, pid, (void *)ip, (void *)patched) < 0 ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL) < 0) {
		err = sptd_ptgen_fail(-errno, "%s: cannot set breakpoint", exe);
		goto fail;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGTRAP) {
		err = sptd_ptgen_fail(-ECHILD, "%s: exited or got a signal before main", exe);
		goto fail;
	}
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0 || regs.rip != ip + 1) {
		err = sptd_ptgen_fail(-ECHILD, "%s: stopped at an unexpected place", exe);
		goto fail;
	}
	regs.rip = ip;
	if (ptrace(PTRACE_POKEDATA, pid, (void *)ip, (void *)word) < 0 ||
	    ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0) {
		err = sptd_ptgen_fail(-errno, "%s: cannot remove breakpoint", exe);
		goto fail;
	}
	err = sptd_ptgen_proc_rescan(proc);
	if (err < 0)
		goto fail;
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(proc->comm, sizeof(proc->comm), f))
				proc->comm[strcspn(proc->comm, "\n")] = 0;
			fclose(f);
		}
	}
	*out = proc;
	*main_ip = ip;
	return 0;
fail:
	sptd_ptgen_proc_destroy(proc);
	return err;
}

void sptd_ptgen_proc_destroy(struct sptd_ptgen_proc *proc)
{
	size_t i;

	if (!proc)
		return;
	if (proc->pid > 0 && kill(proc->pid, SIGKILL) == 0) {
		int status;
		pid_t r;

		/* A thread-group leader is reported only after its other
		 * (traced) threads are reaped, so reap whatever comes. */
		while ((r = waitpid(-1, &status, __WALL)) > 0 &&
		       !(r == proc->pid && (WIFEXITED(status) || WIFSIGNALED(status))))
			;
	}
	for (i = 0; i < proc->nmaps; i++) {
		free(proc->maps[i].path);
		free(proc->maps[i].bytes);
		sptd_ptgen_symtab_destroy(proc->maps[i].syms);
	}
	free(proc->maps);
	free(proc);
}
