/* command.c — `sysptd record -- CMD`: the command the service starts once
 * armed (fork, exec, its exit watched with ptrace) and its SIGCHLDs (its
 * exit stop, other ptrace stops passed on, its end).  The service's loop
 * (service.c) fires an incident when it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "record-local.h"

/* Close every descriptor from 3 up but @keep_a and @keep_b (CMD's child,
 * before exec): the recorder holds several per CPU, beyond any fixed
 * bound on a large machine. */
static void close_from_3(int keep_a, int keep_b)
{
	int lo = keep_a < keep_b ? keep_a : keep_b, hi = keep_a < keep_b ? keep_b : keep_a;
	long max;

	if ((lo <= 3 || close_range(3, (unsigned)lo - 1, 0) == 0) &&
	    (hi <= lo + 1 || close_range((unsigned)lo + 1, (unsigned)hi - 1, 0) == 0) &&
	    close_range((unsigned)hi + 1, ~0U, 0) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < (max > 0 ? max : 65536); fd++)
		if (fd != keep_a && fd != keep_b)
			close((int)fd);
}

/* Start CMD now that everything is armed: in this process group (Ctrl+C
 * reaches it too), with every signal unblocked and no descriptor of ours.
 * It runs as root, as with perf record -- CMD, but before the service
 * drops its capabilities.  Its main thread is ptrace-seized for one event
 * only, its exit (PTRACE_O_TRACEEXIT): stopped there, before the kernel
 * releases its memory, its mappings can still be read, so the incident
 * of its exit names CMD's own functions; every other stop is passed on at
 * once.  0, or an exit status (127 cannot run it).  Called by
 * sptd_col_record_run (service.c) once armed. */
int sptd_col_record_command_start(struct sptd_col_service *s)
{
	char *const *argv = s->o->cmd_argv;
	int report[2], go[2], err = 0;
	ssize_t n;
	pid_t pid;
	char c = 1;

	if (pipe2(report, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		fprintf(stderr, "sysptd: cannot start '%s': %s\n", argv[0], strerror(errno));
		return SPTD_EXIT_FAIL;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "sysptd: cannot start '%s': %s\n", argv[0], strerror(errno));
		close(report[0]);
		close(report[1]);
		close(go[0]);
		close(go[1]);
		return SPTD_EXIT_FAIL;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close_from_3(report[1], go[0]);
		if (s->nofile.rlim_cur)
			setrlimit(RLIMIT_NOFILE, &s->nofile);
		/* wait until the parent has seized us (or gave up) */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		err = errno;
		(void)!write(report[1], &err, sizeof(err));
		_exit(127);
	}
	close(report[1]);
	close(go[0]);
	if (s->o->no_exit_watch)
		;   /* --no-exit-watch: the incident comes after CMD is gone */
	else if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT) == 0)
		s->child_traced = 1;
	else
		sptd_col_log(LOG_WARNING, "cannot watch %s's exit (ptrace: %s): its own functions "
		             "may be unresolved in the incident of its exit", argv[0], strerror(errno));
	(void)!write(go[1], &c, 1);
	close(go[1]);
	do
		n = read(report[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == (ssize_t)sizeof(err)) {
		waitpid(pid, NULL, 0);
		fprintf(stderr, "sysptd: cannot run '%s': %s\n", argv[0], strerror(err));
		return err == ENOENT ? 127 : 126;
	}
	s->child = (int)pid;
	s->child_status = -1;
	sptd_col_log(LOG_INFO, "running %s (pid %d): an incident of the last window when it exits",
	             argv[0], (int)pid);
	return 0;
}

/* A group stop is a PTRACE_EVENT_STOP with the stopping signal; one with
 * SIGTRAP is not (ptrace(2)), for instance the one after a SIGCONT: a
 * PTRACE_LISTEN there left CMD stopped for good (`record -- timeout 1 X`
 * hung: timeout sends SIGCONT to its group when the time is up). */
static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* SIGCHLD from CMD: its exit stop (1: fire, @detail said; the caller
 * detaches once the incident is written), another ptrace stop (passed on:
 * 0), or its end (reaped: 1 unless its exit stop fired already).  Called
 * by the service's loop (service.c) on SIGCHLD. */
int sptd_col_record_command_reap(struct sptd_col_service *s, char *detail, size_t len)
{
	int wst;
	pid_t r;

	if (!s->child)
		return 0;
	while ((r = waitpid(s->child, &wst, WNOHANG | __WALL)) == s->child && WIFSTOPPED(wst)) {
		unsigned long msg = 0;

		if ((wst >> 8) == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			ptrace(PTRACE_GETEVENTMSG, s->child, NULL, &msg);
			wst = (int)msg;
			s->child_exit_stop = 1;
			s->child_status = WIFSIGNALED(wst) ? 128 + WTERMSIG(wst) : WEXITSTATUS(wst);
			if (WIFSIGNALED(wst))
				snprintf(detail, len, "%s (pid %d) killed by signal %d", s->o->cmd_argv[0],
				         s->child, WTERMSIG(wst));
			else
				snprintf(detail, len, "%s (pid %d) exited with status %d",
				         s->o->cmd_argv[0], s->child, WEXITSTATUS(wst));
			return 1;
		}
		if ((wst >> 16) == PTRACE_EVENT_STOP && is_stop_signal(WSTOPSIG(wst)))
			ptrace(PTRACE_LISTEN, s->child, NULL, NULL);   /* a group stop: stay stopped */
		else if ((wst >> 16) == PTRACE_EVENT_STOP)
			ptrace(PTRACE_CONT, s->child, NULL, NULL);   /* e.g. after SIGCONT: go on */
		else
			ptrace(PTRACE_CONT, s->child, NULL, (void *)(long)WSTOPSIG(wst));
	}
	if (r != s->child)
		return 0;
	if (s->child_exit_stop) {
		/* its incident was written at its exit stop */
		s->child_status = WIFSIGNALED(wst) ? 128 + WTERMSIG(wst) : WEXITSTATUS(wst);
		s->child = 0;
		return 0;
	}
	if (WIFSIGNALED(wst)) {
		s->child_status = 128 + WTERMSIG(wst);
		snprintf(detail, len, "%s (pid %d) killed by signal %d", s->o->cmd_argv[0], s->child,
		         WTERMSIG(wst));
	} else {
		s->child_status = WEXITSTATUS(wst);
		snprintf(detail, len, "%s (pid %d) exited with status %d", s->o->cmd_argv[0], s->child,
		         s->child_status);
	}
	s->child = 0;
	return 1;
}
