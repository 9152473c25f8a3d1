/* privs.c — least privilege: commands that parse files drop root, and the
 * service keeps only the capabilities it uses.
 *
 * Divisions: whom a command becomes (the user who ran sudo, else nobody) ·
 * dropping to that user · running a parse in a child that dropped (the
 * parent keeps root only to rename the result into place) · the service's
 * capability sets.  Capabilities are set with the raw capget/capset and
 * prctl calls (linux/capability.h, no libcap): the service needs a handful
 * of calls, and a dependency for them would be one more library in a root
 * process.  See docs/SECURITY.md for who may do what. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sptd_col_base.h"

/* ---- whom a command becomes ------------------------------------------------ */

/* A decimal id from the environment; -1 when absent or not a number. */
static long env_id(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long id;

	if (!v || !*v)
		return -1;
	errno = 0;
	id = strtol(v, &end, 10);
	return errno || *end || id < 0 || id > 0x7fffffffL ? -1 : id;
}

int sptd_col_privs_target(struct sptd_col_user *u)
{
	long uid = env_id("SUDO_UID"), gid = env_id("SUDO_GID");
	struct passwd *pw;

	if (!u)
		return -EINVAL;
	memset(u, 0, sizeof(*u));
	if (uid > 0 && gid >= 0) {
		/* the user who ran `sudo sysptd ...`: files they write are theirs */
		u->uid = (uid_t)uid;
		u->gid = (gid_t)gid;
		u->from_sudo = 1;
		pw = getpwuid(u->uid);
		snprintf(u->name, sizeof(u->name), "%s", pw ? pw->pw_name : "");
		return 0;
	}
	pw = getpwnam("nobody");
	u->uid = pw ? pw->pw_uid : 65534;
	u->gid = pw ? pw->pw_gid : 65534;
	snprintf(u->name, sizeof(u->name), "nobody");
	return 0;
}

/* The write end of the hand-off pipe in a privs child (-1 elsewhere), and
 * whether it has dropped root. */
static int handoff_fd = -1;
static int handoff_dropped;

/* One message of the hand-off pipe: what, replace, lengths, then both
 * names (NUL-terminated). */
struct handoff_msg {
	unsigned char what;      /* SPTD_COL_HANDOFF_* or 'D' (dropped) */
	unsigned char replace;   /* READY: rename over an existing file */
	unsigned short tmp_len;  /* bytes of the temporary name, NUL included */
	unsigned short path_len; /* bytes of the final name, NUL included */
};

static int handoff_send(int what, const char *tmp, const char *path, int replace)
{
	char buf[sizeof(struct handoff_msg) + 2 * PATH_MAX];
	struct handoff_msg m = { .what = (unsigned char)what, .replace = (unsigned char)!!replace };
	size_t tl = tmp ? strlen(tmp) + 1 : 0, pl = path ? strlen(path) + 1 : 0;

	if (tl > PATH_MAX || pl > PATH_MAX)
		return -ENAMETOOLONG;
	m.tmp_len = (unsigned short)tl;
	m.path_len = (unsigned short)pl;
	memcpy(buf, &m, sizeof(m));
	if (tl)
		memcpy(buf + sizeof(m), tmp, tl);
	if (pl)
		memcpy(buf + sizeof(m) + tl, path, pl);
	/* one write of at most PIPE_BUF... or not: the parent reads it whole */
	return write(handoff_fd, buf, sizeof(m) + tl + pl) == (ssize_t)(sizeof(m) + tl + pl) ?
	       1 : -EIO;
}

/* ---- dropping ---------------------------------------------------------------- */

int sptd_col_privs_drop(const struct sptd_col_user *u)
{
	uid_t ruid, euid, suid;
	pid_t parent = getppid();
	int ret, deathsig = 0;

	if (!u || u->uid == 0)
		return -EINVAL;
	if (geteuid() != 0)
		return 0;   /* nothing to drop */
	/* the kernel clears a parent-death signal when the credentials change
	 * (commit_creds): taken now, set again after the drop */
	if (prctl(PR_GET_PDEATHSIG, &deathsig, 0, 0, 0) < 0)
		deathsig = 0;
	/* groups: the sudo user's own, else none */
	ret = u->from_sudo && u->name[0] ? initgroups(u->name, u->gid) : setgroups(0, NULL);
	if (ret < 0 && u->from_sudo)
		ret = setgroups(0, NULL);
	if (ret < 0 || setresgid(u->gid, u->gid, u->gid) < 0 ||
	    setresuid(u->uid, u->uid, u->uid) < 0)
		return -errno;
	/* no way back: not to uid 0, not through a set-uid program */
	if (setuid(0) == 0 || getresuid(&ruid, &euid, &suid) < 0 || ruid != u->uid ||
	    euid != u->uid || suid != u->uid)
		return -EPERM;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (deathsig) {
		if (prctl(PR_SET_PDEATHSIG, deathsig, 0, 0, 0) < 0)
			return -errno;
		/* the parent died while the signal was off: it will never come */
		if (getppid() != parent) {
			raise(deathsig);
			return -ESRCH;
		}
	}
	return 1;
}

int sptd_col_privs_drop_root(char *err, size_t errlen)
{
	struct sptd_col_user u;
	int ret;

	if (geteuid() != 0)
		return 0;
	sptd_col_privs_target(&u);
	ret = sptd_col_privs_drop(&u);
	if (ret > 0 && handoff_fd >= 0 && !handoff_dropped) {
		/* from here on the parent believes no new file of ours */
		handoff_send('D', NULL, NULL, 0);
		handoff_dropped = 1;
	}
	if (ret < 0 && err)
		snprintf(err, errlen, "cannot drop root to %s (uid %u): %s; refusing to parse "
		         "the file as root", u.name[0] ? u.name : "the invoking user",
		         (unsigned)u.uid, strerror(-ret));
	return ret;
}

/* ---- a parse in a child, and the hand-off of its files -------------------------- */

int sptd_col_privs_handoff(int what, const char *tmp, const char *path, int replace)
{
	if (handoff_fd < 0)
		return 0;   /* nobody to hand to: the caller renames itself */
	if (!tmp || !path || (what != SPTD_COL_HANDOFF_CREATED && what != SPTD_COL_HANDOFF_READY))
		return -EINVAL;
	return handoff_send(what, tmp, path, replace);
}

/* What the parent heard from its child. */
struct handoff_file {
	char tmp[PATH_MAX];      /* announced while the child was root */
	char path[PATH_MAX];     /* where it goes */
	int ready, replace;      /* the child finished it; rename over */
};

/* Read the child's messages until it closes the pipe (exits).  Only files
 * announced before the child said it dropped root are believed: a child
 * taken over while parsing can at most have the file it was asked to
 * write put where it was asked to put it. */
static int handoff_collect(int fd, struct handoff_file *files, int max)
{
	struct handoff_msg m;
	char tmp[PATH_MAX], path[PATH_MAX];
	int n = 0, dropped = 0;

	for (;;) {
		ssize_t got = read(fd, &m, sizeof(m));

		if (got < 0 && errno == EINTR)
			continue;
		if (got != (ssize_t)sizeof(m))
			break;
		if (m.tmp_len > PATH_MAX || m.path_len > PATH_MAX ||
		    (m.tmp_len && read(fd, tmp, m.tmp_len) != m.tmp_len) ||
		    (m.path_len && read(fd, path, m.path_len) != m.path_len))
			break;
		if (m.what == 'D') {
			dropped = 1;
			continue;
		}
		if (!m.tmp_len || !m.path_len || tmp[m.tmp_len - 1] || path[m.path_len - 1])
			break;
		if (m.what == SPTD_COL_HANDOFF_CREATED && !dropped && n < max &&
		    strncmp(tmp, path, strlen(path)) == 0 &&
		    strncmp(tmp + strlen(path), ".tmp.", 5) == 0) {
			snprintf(files[n].tmp, PATH_MAX, "%s", tmp);
			snprintf(files[n].path, PATH_MAX, "%s", path);
			files[n].ready = files[n].replace = 0;
			n++;
		} else if (m.what == SPTD_COL_HANDOFF_READY) {
			for (int i = 0; i < n; i++)
				if (strcmp(files[i].tmp, tmp) == 0 && strcmp(files[i].path, path) == 0) {
					files[i].ready = 1;
					files[i].replace = m.replace;
				}
		}
	}
	return n;
}

/* After the child: rename what it finished (when it succeeded), remove
 * the rest.  The first rename failure becomes the status. */
static int handoff_apply(struct handoff_file *files, int n, int ok)
{
	int status = SPTD_EXIT_OK;

	for (int i = 0; i < n; i++) {
		struct stat sb;
		int ret;

		if (lstat(files[i].tmp, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		if (!ok || !files[i].ready) {
			unlink(files[i].tmp);
			continue;
		}
		ret = files[i].replace ? rename(files[i].tmp, files[i].path) :
		      renameat2(AT_FDCWD, files[i].tmp, AT_FDCWD, files[i].path, RENAME_NOREPLACE);
		if (ret < 0 && !files[i].replace && (errno == EINVAL || errno == ENOSYS)) {
			ret = link(files[i].tmp, files[i].path);
			if (ret == 0)
				unlink(files[i].tmp);
		}
		if (ret < 0) {
			fprintf(stderr, "sysptd: cannot rename %s to %s: %s\n", files[i].tmp,
			        files[i].path, strerror(errno));
			unlink(files[i].tmp);
			status = SPTD_EXIT_FAIL;
			continue;
		}
		{
			char dir[PATH_MAX];
			const char *slash = strrchr(files[i].path, '/');
			int dfd;

			snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - files[i].path) : 1,
			         slash ? (slash == files[i].path ? "/" : files[i].path) : ".");
			dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (dfd >= 0) {
				fsync(dfd);
				close(dfd);
			}
		}
	}
	return status;
}

/* The child of sptd_col_privs_child while it runs (0 none): a signal
 * that stops the parent is passed on to it, and the parent stays to clean
 * up after it. */
static volatile pid_t child_pid;

static void forward_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	/* a terminal's Ctrl+C or hangup went to the whole process group, the
	 * child included: passing it on would deliver it twice (the query
	 * shell would see two interrupts); one sent to this process alone is
	 * passed on */
	if (info && info->si_code == SI_KERNEL)
		return;
	if (child_pid > 0)
		kill(child_pid, sig);
}

int sptd_col_privs_child(int (*fn)(void *ctx), void *ctx)
{
	struct sigaction ign = { .sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO }, old[4];
	static const int sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	static struct handoff_file files[8];
	int status = 0, pipefd[2], nfiles = 0, ret;
	pid_t pid;

	if (!fn)
		return -EINVAL;
	if (geteuid() != 0)
		return fn(ctx);   /* not root: nothing to keep apart */
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	/* Ctrl+C (the whole process group) or a signal to this process: the
	 * child stops, and the parent lives on to remove what it left */
	child_pid = 0;
	sigemptyset(&ign.sa_mask);
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &ign, &old[i]);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 4; i++)
			sigaction(sigs[i], &old[i], NULL);
		/* the parent killed (kill -9): stop too, nothing to hand to */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() == 1)
			_exit(SPTD_EXIT_FAIL);
		close(pipefd[0]);
		handoff_fd = pipefd[1];
		handoff_dropped = 0;
		ret = fn(ctx);
		fflush(NULL);
		_exit(ret & 0xff);
	}
	close(pipefd[1]);
	if (pid > 0) {
		child_pid = pid;
		nfiles = handoff_collect(pipefd[0], files, 8);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(pipefd[0]);
	child_pid = 0;
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (pid < 0)
		return -errno;
	ret = WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
	      WIFEXITED(status) ? WEXITSTATUS(status) : SPTD_EXIT_FAIL;
	/* a reader that went away (sysptd script | head) ends the output as it
	 * ends perf script's: quietly, status 141 */
	if (WIFSIGNALED(status) && (WTERMSIG(status) != SIGPIPE || nfiles))
		fprintf(stderr, "sysptd: the parsing process died of signal %d (%s)%s\n",
		        WTERMSIG(status), strsignal(WTERMSIG(status)),
		        nfiles ? ": nothing was written" : "");
	if (handoff_apply(files, nfiles, ret == SPTD_EXIT_OK) != SPTD_EXIT_OK && ret == SPTD_EXIT_OK)
		ret = SPTD_EXIT_FAIL;
	return ret;
}

/* ---- the service's capabilities --------------------------------------------------- */

int sptd_col_privs_limit_caps(const int *keep, int nkeep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	uint64_t mask = 0;
	int last;

	if (!keep && nkeep)
		return -EINVAL;
	for (int i = 0; i < nkeep; i++) {
		if (keep[i] < 0 || keep[i] > 63)
			return -EINVAL;
		mask |= 1ull << keep[i];
	}
	/* the highest capability this kernel knows */
	last = 40;
	{
		FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");

		if (f) {
			if (fscanf(f, "%d", &last) != 1)
				last = 40;
			fclose(f);
		}
	}
	/* the bounding set first (needs CAP_SETPCAP, which goes last): no
	 * exec can give back what is dropped here */
	for (int cap = 0; cap <= last && cap < 64; cap++)
		if (!(mask & (1ull << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EINVAL)
			return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = (uint32_t)mask;
	data[1].effective = data[1].permitted = (uint32_t)(mask >> 32);
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* The initial PID namespace's inode: a kernel constant
 * (PROC_PID_INIT_INO in include/linux/proc_ns.h). */
#define PIDNS_INIT_INO 0xEFFFFFFCUL

int sptd_col_pidns_nested(unsigned long *ino)
{
	struct stat st;

	if (!ino)
		return -EINVAL;
	*ino = 0;
	if (stat("/proc/self/ns/pid", &st) < 0)
		return -errno;
	*ino = (unsigned long)st.st_ino;
	return *ino != PIDNS_INIT_INO;
}
