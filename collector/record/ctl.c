/* ctl.c — the control socket (`sysptd snapshot`, `sysptd status`) and the
 * lock that keeps a second service from fighting over the ftrace instance. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl-local.h"

static char service_name[SPTD_NAME_MAX + 1]; /* --name; "" the default service */

static const char *rundir_base(void)
{
	const char *dir = getenv("SYSPTD_RUNDIR");

	return dir && *dir ? dir : "/run/sysptd";
}

int sptd_col_set_service_name(const char *name)
{
	size_t n;

	if (!name) {
		service_name[0] = '\0';
		return 0;
	}
	n = strlen(name);
	if (n == 0 || n > SPTD_NAME_MAX || name[0] == '-' || name[0] == '.')
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '-' || name[i] == '_' ||
		      name[i] == '.'))
			return -EINVAL;
	memcpy(service_name, name, n + 1);
	return 0;
}

const char *sptd_col_service_name(void)
{
	return service_name;
}

const char *sptd_col_rundir(void)
{
	static char dir[256];

	if (!service_name[0])
		return rundir_base();
	/* under name/, so that no NAME can be a file of the default service
	 * ("lock", "control": a recorder named so kept it from starting) */
	snprintf(dir, sizeof(dir), "%s/name/%s", rundir_base(), service_name);
	return dir;
}

void sptd_col_instance_name(char *buf, size_t len)
{
	snprintf(buf, len, service_name[0] ? "sysptd-%s" : "sysptd", service_name);
}

static int path_in_rundir(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", sptd_col_rundir(), name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int sptd_col_lock_take(int *holder)
{
	char path[256], pid[32];
	int fd, ret;

	if (mkdir(rundir_base(), 0700) < 0 && errno != EEXIST)
		return -errno;
	if (service_name[0]) {
		char names[256];

		snprintf(names, sizeof(names), "%s/name", rundir_base());
		if (mkdir(names, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (mkdir(sptd_col_rundir(), 0700) < 0 && errno != EEXIST)
			return -errno;
	}
	ret = path_in_rundir(path, sizeof(path), "lock");
	if (ret < 0)
		return ret;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);

		if (holder)
			*holder = n > 0 ? (pid[n] = '\0', atoi(pid)) : 0;
		close(fd);
		return -EBUSY;
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int sptd_col_doctor_lock(void)
{
	char path[256];
	int fd, ret;

	if (mkdir(rundir_base(), 0700) < 0 && errno != EEXIST)
		return -errno;
	/* a service's NAME cannot start with '.': never a service's directory */
	ret = snprintf(path, sizeof(path), "%s/.doctor.lock", rundir_base());
	if (ret < 0 || (size_t)ret >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* a doctor measures for about a second: wait up to 10 s, never for
	 * ever (a stopped doctor holds the lock) */
	for (int tries = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; tries++) {
		const struct timespec pause = { 0, 50 * 1000 * 1000 };

		if ((errno != EWOULDBLOCK && errno != EINTR) || tries >= 200) {
			ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
			close(fd);
			return ret;
		}
		nanosleep(&pause, NULL);
	}
	return fd;
}

static int socket_addr(struct sockaddr_un *addr)
{
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	return path_in_rundir(addr->sun_path, sizeof(addr->sun_path), "control");
}

int sptd_col_ctl_listen(void)
{
	struct sockaddr_un addr;
	int fd, ret = socket_addr(&addr);
	mode_t old;

	if (ret < 0)
		return ret;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* we hold the lock: any socket there is stale; anything else is not
	 * ours to remove (a directory: what a recorder named "control" made
	 * before named recorders moved under name/) */
	if (unlink(addr.sun_path) < 0 && errno != ENOENT) {
		ret = errno == EISDIR || errno == EPERM ? -EEXIST : -errno;
		close(fd);
		return ret;
	}
	old = umask(0177);
	ret = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (ret < 0 || listen(fd, 8) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int sptd_col_ctl_accept(int listen_fd, char *cmd, size_t len)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct pollfd pfd;
	size_t off = 0;
	int fd;

	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != 0) {
		static const char msg[] = "error: the control socket is for root only\n";

		(void)!write(fd, msg, sizeof(msg) - 1);
		close(fd);
		return -EPERM;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (off + 1 < len && poll(&pfd, 1, 1000) > 0) {
		ssize_t n = read(fd, cmd + off, len - 1 - off);

		if (n <= 0)
			break;
		off += (size_t)n;
		if (memchr(cmd, '\n', off))
			break;
	}
	cmd[off] = '\0';
	cmd[strcspn(cmd, "\r\n")] = '\0';
	return fd;
}

int sptd_col_ctl_request(const char *cmd, char *reply, size_t len, int timeout_ms)
{
	struct sockaddr_un addr;
	struct pollfd pfd;
	size_t off = 0;
	int fd, ret = socket_addr(&addr);

	if (ret < 0)
		return ret;
	if (!cmd || !reply || !len)
		return -EINVAL;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    write(fd, cmd, strlen(cmd)) < 0 || write(fd, "\n", 1) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (off + 1 < len) {
		ssize_t n;

		ret = poll(&pfd, 1, timeout_ms);
		if (ret <= 0) {
			ret = ret == 0 ? -ETIMEDOUT : -errno;
			break;
		}
		n = read(fd, reply + off, len - 1 - off);
		if (n <= 0) {
			ret = 0;
			break;
		}
		off += (size_t)n;
	}
	reply[off] = '\0';
	close(fd);
	return ret < 0 ? ret : (int)off;
}
