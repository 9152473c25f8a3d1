/* trace.c — sysptd's own ftrace instance: mount, create (replacing a stale
 * one), freeze triggers, on/off, reset, destroy.  Capture is in capture.c.
 *
 * Files are written with plain open/write rather than
 * tracefs_instance_file_write so that the kernel's errno (EINVAL for a bad
 * filter, EEXIST, EBUSY) reaches the caller unchanged. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs.h>

#include "sched-local.h"

#define SPTD_TRACEFS_MOUNT "/sys/kernel/tracing"

/* Map an errno from tracefs to the codes sptd_sched.h lists. */
static int sched_errno(int err)
{
	switch (err) {
	case EPERM: case EACCES: case ENOENT: case EINVAL: case EBUSY:
	case ENOMEM: case EEXIST: case ENODEV:
		return -err;
	default:
		return -EIO;
	}
}

int sptd_sched_tracefs_ensure(void)
{
	struct stat st;

	if (access(SPTD_TRACEFS_MOUNT "/trace", F_OK) == 0)
		return 0;
	if (stat(SPTD_TRACEFS_MOUNT, &st) != 0 || !S_ISDIR(st.st_mode)) {
		sptd_sched_log(LOG_ERR, "no %s directory: this kernel has no tracefs "
		               "(CONFIG_TRACING); sched events are unavailable",
		               SPTD_TRACEFS_MOUNT);
		return -ENODEV;
	}
	if (mount("nodev", SPTD_TRACEFS_MOUNT, "tracefs", 0, NULL) != 0) {
		int err = errno;

		sptd_sched_log(LOG_ERR, "cannot mount tracefs on %s: %s%s",
		               SPTD_TRACEFS_MOUNT, strerror(err),
		               (err == EPERM || err == EACCES) ? " (run as root)" : "");
		return -ENODEV;
	}
	if (access(SPTD_TRACEFS_MOUNT "/trace", F_OK) != 0) {
		sptd_sched_log(LOG_ERR, "tracefs mounted on %s but has no trace file",
		               SPTD_TRACEFS_MOUNT);
		return -ENODEV;
	}
	return 0;
}

int sptd_sched_event_exists(const char *system, const char *event, int *id)
{
	const char *dir;
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd, ret;

	if (!sptd_sched_name_ok(system) || !sptd_sched_name_ok(event))
		return -EINVAL;
	dir = tracefs_tracing_dir();
	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, system, event);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : sched_errno(errno);
	n = read(fd, buf, sizeof(buf) - 1);
	ret = n > 0 ? 1 : -EIO;
	if (n > 0 && id) {
		buf[n] = '\0';
		*id = atoi(buf);
	}
	close(fd);
	return ret;
}

int sptd_sched_events_each(int (*fn)(void *ctx, const char *system, const char *event),
                           void *ctx)
{
	const char *dir = tracefs_tracing_dir();
	char path[PATH_MAX], line[512];
	int ret = 0;
	FILE *f;

	if (!fn)
		return -EINVAL;
	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/available_events", dir);
	f = fopen(path, "re");
	if (!f)
		return sched_errno(errno);
	while (ret >= 0 && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		line[strcspn(line, "\n")] = '\0';
		if (!colon)
			continue;
		*colon = '\0';
		ret = fn(ctx, line, colon + 1);
	}
	if (ret >= 0 && ferror(f))
		ret = -EIO;
	fclose(f);
	return ret;
}

/* Write @str to a file of @inst; O_TRUNC unless @append.  0 or -errno. */
static int inst_write(struct tracefs_instance *inst, const char *file,
                      const char *str, int append)
{
	char *path = tracefs_instance_get_file(inst, file);
	size_t len = strlen(str);
	int fd, ret = 0;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CLOEXEC | (append ? 0 : O_TRUNC));
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (write(fd, str, len) != (ssize_t)len)
		ret = errno ? -errno : -EIO;
	close(fd);
out:
	tracefs_put_tracing_file(path);
	return ret;
}

/* Keep the kernel's explanation of the last failed write (error_log). */
static void trace_keep_error(struct sptd_sched_trace *tr, const char *what, int ret)
{
	char *kernel = tracefs_error_last(tr->inst);
	char *nl;

	if (kernel && (nl = strrchr(kernel, '\n')) && nl[1] == '\0')
		*nl = '\0';
	snprintf(tr->error, sizeof(tr->error), "%s: %s%s%s", what, strerror(-ret),
	         kernel ? ": " : "", kernel ? kernel : "");
	free(kernel);
	sptd_sched_log(LOG_ERR, "%s", tr->error);
}

/* The trigger text to write for removing the trigger shown as @line
 * ("traceoff:unlimited if prev_pid == 1" -> "!traceoff"). */
static void trigger_removal(const char *line, char *out, size_t size)
{
	size_t n = strcspn(line, " \t[");
	char *colon;

	snprintf(out, size, "!%.*s", (int)n, line);
	/* drop a trailing ":unlimited", ":COUNT" or ":count=COUNT" (how
	 * newer kernels show a counted trigger) */
	colon = strrchr(out, ':');
	if (colon) {
		const char *num = colon + 1;

		if (strncmp(num, "count=", 6) == 0)
			num += 6;
		if (strcmp(num, "unlimited") == 0 || strspn(num, "0123456789") == strlen(num))
			*colon = '\0';
	}
}

/* Remove every trigger of one event of @inst (best effort). */
static void event_triggers_clear(struct tracefs_instance *inst, const char *file)
{
	char *text = tracefs_instance_file_read(inst, file, NULL);
	char *line, *save = NULL;

	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char cmd[256];

		if (line[0] == '#' || line[0] == '\0')
			continue;
		trigger_removal(line, cmd, sizeof(cmd));
		inst_write(inst, file, cmd, 1);
	}
	free(text);
}

/* Walk events/SYSTEM/EVENT/trigger of a stale instance; the kernel would
 * drop them at rmdir, but a trigger that fires meanwhile would freeze a ring
 * we are about to reuse, so they go first. */
static void stale_triggers_clear(struct tracefs_instance *inst)
{
	char *events = tracefs_instance_get_file(inst, "events");
	DIR *sysdir = events ? opendir(events) : NULL;
	struct dirent *sys;

	while (sysdir && (sys = readdir(sysdir))) {
		char path[PATH_MAX];
		struct dirent *ev;
		DIR *evdir;

		if (sys->d_name[0] == '.' || (sys->d_type != DT_DIR && sys->d_type != DT_UNKNOWN))
			continue;
		snprintf(path, sizeof(path), "%s/%s", events, sys->d_name);
		evdir = opendir(path);
		while (evdir && (ev = readdir(evdir))) {
			char file[PATH_MAX];

			if (ev->d_name[0] == '.' || (ev->d_type != DT_DIR && ev->d_type != DT_UNKNOWN))
				continue;
			snprintf(file, sizeof(file), "events/%s/%s/trigger", sys->d_name,
			         ev->d_name);
			event_triggers_clear(inst, file);
		}
		if (evdir)
			closedir(evdir);
	}
	if (sysdir)
		closedir(sysdir);
	tracefs_put_tracing_file(events);
}

/* Remove an instance named @name left by a run that was killed. */
static int stale_instance_remove(const char *name)
{
	struct tracefs_instance *inst = tracefs_instance_alloc(NULL, name);
	int ret = 0;

	if (!inst)
		return -ENOMEM;
	tracefs_trace_off(inst);
	inst_write(inst, "events/enable", "0", 0);
	stale_triggers_clear(inst);
	if (tracefs_instance_destroy(inst) != 0) {
		ret = sched_errno(errno);
		sptd_sched_log(LOG_ERR, "cannot remove stale ftrace instance %s: %s",
		               name, strerror(-ret));
	} else {
		sptd_sched_log(LOG_INFO, "removed stale ftrace instance %s", name);
	}
	tracefs_instance_free(inst);
	return ret;
}

/* Enable SYSTEM/EVENT in the instance and remember it for capture. */
static int trace_enable(struct sptd_sched_trace *tr, const char *system,
                        const char *event, int required)
{
	char file[SPTD_SCHED_PATH_LEN];
	int ret = sptd_sched_event_exists(system, event, NULL);

	if (ret == 0) {
		if (required) {
			snprintf(tr->error, sizeof(tr->error), "no %s:%s tracepoint", system, event);
			return -ENOENT;
		}
		sptd_sched_log(LOG_WARNING, "no %s:%s tracepoint in this kernel; "
		               "its rows will be missing", system, event);
		return 0;
	}
	if (ret < 0)
		return ret;
	if (tr->nr_events >= SPTD_SCHED_MAX_EVENTS)
		return -ENOMEM;
	snprintf(file, sizeof(file), "events/%s/%s/enable", system, event);
	ret = inst_write(tr->inst, file, "1", 0);
	if (ret < 0) {
		trace_keep_error(tr, file, ret);
		return ret;
	}
	snprintf(tr->events[tr->nr_events++], SPTD_SCHED_NAME_LEN, "%s/%s", system, event);
	return 1;
}

static int trace_setup(struct sptd_sched_trace *tr, const struct sptd_sched_config *cfg)
{
	char kb[32];
	int ret;

	ret = inst_write(tr->inst, "tracing_on", "0", 0);
	if (ret < 0)
		goto fail;
	ret = inst_write(tr->inst, "options/overwrite", "1", 0);
	if (ret < 0)
		goto fail;
	if (cfg->buffer_kb) {
		snprintf(kb, sizeof(kb), "%zu", cfg->buffer_kb);
		ret = inst_write(tr->inst, "buffer_size_kb", kb, 0);
		if (ret < 0) {
			trace_keep_error(tr, "buffer_size_kb", ret);
			return ret == -EINVAL ? -EINVAL : ret;
		}
	}
	if (cfg->cpumask) {
		ret = inst_write(tr->inst, "tracing_cpumask", cfg->cpumask, 0);
		if (ret < 0) {
			trace_keep_error(tr, "tracing_cpumask", ret);
			return ret;
		}
	}
	if (cfg->clock) {
		ret = inst_write(tr->inst, "trace_clock", cfg->clock, 0);
		if (ret < 0) {
			trace_keep_error(tr, "trace_clock (see the instance's trace_clock "
			                 "for the clocks this kernel has)", ret);
			return ret;
		}
	}
	ret = trace_enable(tr, "sched", "sched_switch", 1);
	if (ret < 0)
		return ret;
	ret = sptd_sched_event_exists("sched", "sched_waking", NULL);
	ret = trace_enable(tr, "sched", ret == 1 ? "sched_waking" : "sched_wakeup", 1);
	if (ret < 0)
		return ret;
	if ((ret = trace_enable(tr, "sched", "sched_wakeup_new", 0)) < 0 ||
	    (ret = trace_enable(tr, "sched", "sched_process_fork", 0)) < 0 ||
	    (ret = trace_enable(tr, "sched", "sched_process_exit", 0)) < 0)
		return ret;
	if (cfg->irq && ((ret = trace_enable(tr, "irq", "irq_handler_entry", 0)) < 0 ||
	                 (ret = trace_enable(tr, "irq", "irq_handler_exit", 0)) < 0))
		return ret;
	if (cfg->softirq && ((ret = trace_enable(tr, "irq", "softirq_entry", 0)) < 0 ||
	                     (ret = trace_enable(tr, "irq", "softirq_exit", 0)) < 0))
		return ret;
	for (int i = 0; i < cfg->nextra && ret >= 0; i++) {
		const struct sptd_sched_extra *x = &cfg->extra[i];
		char file[SPTD_SCHED_PATH_LEN + 256];

		if (!sptd_sched_name_ok(x->system) || !sptd_sched_name_ok(x->event)) {
			snprintf(tr->error, sizeof(tr->error), "bad event name %s:%s", x->system, x->event);
			sptd_sched_log(LOG_ERR, "%s", tr->error);
			return -EINVAL;
		}
		if (sptd_sched_event_exists(x->system, x->event, NULL) != 1) {
			snprintf(tr->error, sizeof(tr->error), "no tracepoint %s:%s in this kernel "
			         "(`sysptd list-events` lists them)", x->system, x->event);
			sptd_sched_log(LOG_ERR, "%s", tr->error);
			return -ENOENT;
		}
		if (x->filter[0]) {
			snprintf(file, sizeof(file), "events/%s/%s/filter", x->system, x->event);
			ret = inst_write(tr->inst, file, x->filter, 0);
			if (ret < 0) {
				snprintf(tr->error, sizeof(tr->error), "the kernel refused the filter "
				         "'%.200s' of %.60s:%.100s (%s)", x->filter, x->system, x->event,
				         strerror(-ret));
				sptd_sched_log(LOG_ERR, "%s", tr->error);
				return -EINVAL;
			}
		}
		ret = trace_enable(tr, x->system, x->event, 1);
	}
	if (ret < 0)
		return ret;
	ret = tracefs_instance_file_clear(tr->inst, "trace") == 0 ? 0 : -EIO;
	if (ret < 0)
		goto fail;
	return 0;
fail:
	trace_keep_error(tr, "setting up the ftrace instance", ret);
	return ret;
}

/* The device and inode of instance @name's directory: which one it is (a
 * directory made again under the same name has another inode). */
static int instance_id(const char *name, dev_t *dev, ino_t *ino)
{
	const char *dir = tracefs_tracing_dir();
	char path[PATH_MAX];
	struct stat sb;
	int n;

	if (!dir)
		return -ENODEV;
	n = snprintf(path, sizeof(path), "%s/instances/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (lstat(path, &sb) < 0)
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOENT;
	*dev = sb.st_dev;
	*ino = sb.st_ino;
	return 0;
}

int sptd_sched_instance_exists(const char *name)
{
	if (!name || !sptd_sched_name_ok(name))
		return -EINVAL;
	return tracefs_instance_exists(name) ? 1 : 0;
}

int sptd_sched_trace_present(const struct sptd_sched_trace *tr)
{
	dev_t dev;
	ino_t ino;
	int ret;

	if (!tr || !tr->inst)
		return -EINVAL;
	ret = instance_id(tr->name, &dev, &ino);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	return dev == tr->dev && ino == tr->ino;
}

int sptd_sched_trace_create(const struct sptd_sched_config *cfg,
                            struct sptd_sched_trace **out)
{
	struct sptd_sched_trace *tr = NULL;
	int ret;

	if (out)
		*out = NULL;
	if (!cfg || !out || !sptd_sched_name_ok(cfg->instance) ||
	    (cfg->clock && (!cfg->clock[0] || strpbrk(cfg->clock, " \n/"))) ||
	    cfg->buffer_kb > (size_t)INT_MAX)
		return -EINVAL;
	ret = sptd_sched_tracefs_ensure();
	if (ret < 0)
		return ret;
	if (tracefs_instance_exists(cfg->instance)) {
		ret = stale_instance_remove(cfg->instance);
		if (ret < 0)
			return ret;
	}
	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	snprintf(tr->name, sizeof(tr->name), "%s", cfg->instance);
	errno = 0;
	tr->inst = tracefs_instance_create(cfg->instance);
	if (!tr->inst) {
		ret = errno ? sched_errno(errno) : -EIO;
		sptd_sched_log(LOG_ERR, "cannot create ftrace instance %s: %s%s",
		               cfg->instance, strerror(-ret),
		               (ret == -EPERM || ret == -EACCES) ? " (run as root)" : "");
		goto fail;
	}
	if (!tracefs_instance_is_new(tr->inst)) {
		/* someone created it between our removal and now */
		tracefs_instance_free(tr->inst);
		tr->inst = NULL;
		ret = -EBUSY;
		goto fail;
	}
	ret = instance_id(tr->name, &tr->dev, &tr->ino);
	if (ret < 0)
		goto fail;
	ret = trace_setup(tr, cfg);
	if (ret < 0)
		goto fail;
	*out = tr;
	return 0;
fail:
	sptd_sched_trace_destroy(tr);
	return ret;
}

int sptd_sched_trace_freeze_on(struct sptd_sched_trace *tr, const char *system,
                               const char *event, const char *filter)
{
	char file[SPTD_SCHED_PATH_LEN], cmd[4096];
	int i, ret, known = 0;

	if (!tr || !tr->inst || !sptd_sched_name_ok(system) || !sptd_sched_name_ok(event))
		return -EINVAL;
	if (filter && (!filter[0] || strchr(filter, '\n') ||
	               strlen(filter) > sizeof(cmd) - 32))
		return -EINVAL;
	ret = sptd_sched_event_exists(system, event, NULL);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		snprintf(tr->error, sizeof(tr->error), "no tracepoint %s:%s "
		         "(see %s/available_events)", system, event,
		         tracefs_tracing_dir() ? tracefs_tracing_dir() : "tracefs");
		return -ENOENT;
	}
	snprintf(file, sizeof(file), "events/%s/%s/trigger", system, event);
	for (i = 0; i < tr->nr_triggers; i++)
		if (strcmp(tr->triggers[i], file) == 0)
			known = 1;
	if (known)   /* the kernel allows one traceoff per event: replace it */
		inst_write(tr->inst, file, "!traceoff", 1);
	else if (tr->nr_triggers >= SPTD_SCHED_MAX_TRIGGERS)
		return -ENOMEM;
	/* one shot: once it froze the rings it does nothing until removed
	 * and installed again, so a hit after the capture re-armed the rings
	 * cannot freeze them while the service ignores hits (cooldown) */
	if (filter)
		snprintf(cmd, sizeof(cmd), "traceoff:1 if %s", filter);
	else
		snprintf(cmd, sizeof(cmd), "traceoff:1");
	tracefs_error_clear(tr->inst);
	ret = inst_write(tr->inst, file, cmd, 1);
	if (ret < 0) {
		trace_keep_error(tr, file, ret);
		ret = (ret == -EINVAL || ret == -ENOENT) ? -EINVAL : sched_errno(-ret);
		if (known)   /* the old one is gone now */
			known = -1;
	}
	if (known == 0 && ret == 0)
		snprintf(tr->triggers[tr->nr_triggers++], SPTD_SCHED_PATH_LEN, "%s", file);
	return ret;
}

int sptd_sched_trace_freeze_off(struct sptd_sched_trace *tr)
{
	int i, ret = 0;

	if (!tr || !tr->inst)
		return -EINVAL;
	for (i = 0; i < tr->nr_triggers; i++) {
		int r = inst_write(tr->inst, tr->triggers[i], "!traceoff", 1);

		/* ENOENT: the kernel had no such trigger left */
		if (r < 0 && r != -ENOENT && ret == 0) {
			trace_keep_error(tr, tr->triggers[i], r);
			ret = sched_errno(-r);
		}
	}
	tr->nr_triggers = 0;
	return ret;
}

int sptd_sched_trace_start(struct sptd_sched_trace *tr)
{
	if (!tr || !tr->inst)
		return -EINVAL;
	return tracefs_trace_on(tr->inst) == 0 ? 0 : sched_errno(errno);
}

int sptd_sched_trace_stop(struct sptd_sched_trace *tr)
{
	if (!tr || !tr->inst)
		return -EINVAL;
	return tracefs_trace_off(tr->inst) == 0 ? 0 : sched_errno(errno);
}

int sptd_sched_trace_is_on(struct sptd_sched_trace *tr)
{
	int on;

	if (!tr || !tr->inst)
		return -EINVAL;
	on = tracefs_trace_is_on(tr->inst);
	return on < 0 ? -EIO : on;
}

int sptd_sched_trace_reset(struct sptd_sched_trace *tr)
{
	if (!tr || !tr->inst)
		return -EINVAL;
	return tracefs_instance_file_clear(tr->inst, "trace") == 0 ? 0 : -EIO;
}

const char *sptd_sched_trace_error(const struct sptd_sched_trace *tr)
{
	return tr ? tr->error : "";
}

void sptd_sched_trace_destroy(struct sptd_sched_trace *tr)
{
	int i;

	if (!tr)
		return;
	/* removed from outside (or another's under our name now): nothing of
	 * ours left to undo */
	if (tr->inst && tr->ino && sptd_sched_trace_present(tr) == 0) {
		tracefs_instance_free(tr->inst);
		tr->inst = NULL;
	}
	if (tr->inst) {
		tracefs_trace_off(tr->inst);
		for (i = 0; i < tr->nr_triggers; i++)
			inst_write(tr->inst, tr->triggers[i], "!traceoff", 1);
		inst_write(tr->inst, "events/enable", "0", 0);
		if (tracefs_instance_destroy(tr->inst) != 0)
			sptd_sched_log(LOG_WARNING, "cannot remove ftrace instance %s: %s",
			               tr->name, strerror(errno));
		tracefs_instance_free(tr->inst);
	}
	free(tr);
}
