/* cmd_common.c — what several subcommands share: one way to scan options
 * (getopt_long, restartable within a process, quoting what the user typed),
 * the command line as text, finding incidents (a directory's, `latest`),
 * and opening an incident with one clear message.
 * It calls no subcommand, so nothing here depends on cli.c or cmd_*.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_store.h"

void sptd_col_getopt_start(void)
{
	optind = 0;
	opterr = 0;
}

int sptd_col_getopt_next(int argc, char **argv, const char *shortopts,
                         const struct option *longopts, const char **word)
{
	/* In command-line order ("-" first in shortopts) getopt never moves
	 * arguments, and optind stays on an argument until its last option
	 * letter is read: the argument about to be read is argv[optind]
	 * (optind 0 means "start", i.e. argv[1]). */
	int at = optind > 0 ? optind : 1;
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);

	if (word)
		*word = at < argc ? argv[at] : "";
	return c;
}

int sptd_col_parse_timeout(const char *cmd, const char *word, const char *text, int64_t *ns)
{
	if (sptd_col_parse_duration(text, ns) == 0)
		return 0;
	fprintf(stderr, "sysptd %s: bad duration '%s' for %s: " SPTD_DURATION_HELP
	        " (0: no limit)\n", cmd, text, word);
	return SPTD_EXIT_USAGE;
}

int sptd_col_args_none(int argc, char **argv, const char *cmd)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *word;
	int c;

	sptd_col_getopt_start();
	while ((c = sptd_col_getopt_next(argc, argv, "-:h", longopts, &word)) != -1) {
		if (c == 'h')
			return 1;
		fprintf(stderr, "sysptd %s: unexpected argument '%s'\n", cmd, word);
		return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "sysptd %s: unexpected argument '%s'\n", cmd, argv[optind]);
		return -EINVAL;
	}
	return 0;
}

char *sptd_col_command_text(int argc, char **argv, char *buf, size_t len)
{
	size_t used = 0;

	if (!buf || !len)
		return buf;
	buf[0] = '\0';
	for (int i = 0; i < argc && used + 1 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
	return buf;
}

static int cmp_versions(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

void sptd_col_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int sptd_col_incident_scan(const char *dir, char ***names, size_t *n)
{
	char **list = NULL;
	size_t used = 0, cap = 0;
	struct dirent *e;
	int ret = 0;
	DIR *d;

	*names = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat sb;

		if (len < 4 || strcmp(e->d_name + len - 3, ".db") != 0)
			continue;
		/* regular files only: no FIFO or device to block on, no directory */
		if (fstatat(dirfd(d), e->d_name, &sb, 0) < 0 || !S_ISREG(sb.st_mode))
			continue;
		if (used == cap) {
			char **more = realloc(list, (cap = cap ? cap * 2 : 64) * sizeof(*list));

			if (!more) {
				ret = -ENOMEM;
				break;
			}
			list = more;
		}
		if (!(list[used] = strdup(e->d_name))) {
			ret = -ENOMEM;
			break;
		}
		used++;
	}
	closedir(d);
	if (ret < 0) {
		sptd_col_names_free(list, used);
		return ret;
	}
	if (used)
		qsort(list, used, sizeof(*list), cmp_versions);
	*names = list;
	*n = used;
	return 0;
}

int sptd_col_incident_resolve(const char *cmd, const char *arg, const char *dir,
                              char *path, size_t len)
{
	char **names = NULL;
	size_t n = 0, pick;
	int ret;

	if (strcmp(arg, "latest") != 0) {
		if (snprintf(path, len, "%s", arg) >= (int)len) {
			fprintf(stderr, "sysptd %s: %.64s...: path too long\n", cmd, arg);
			return SPTD_EXIT_BADFILE;
		}
		return 0;
	}
	if (!dir)
		dir = SPTD_COL_DEFAULT_DIR;
	ret = sptd_col_incident_scan(dir, &names, &n);
	if (ret < 0) {
		fprintf(stderr, "sysptd %s: latest: cannot read %s: %s%s\n", cmd, dir, strerror(-ret),
		        ret == -EACCES ? " (incidents are root's: run with sudo)" :
		        ret == -ENOENT ? " (name the incident's directory with --dir DIR)" : "");
		return ret == -EACCES ? SPTD_EXIT_NOPERM : SPTD_EXIT_BADFILE;
	}
	/* the service's own names first: they sort by time */
	for (pick = n; pick > 0; pick--)
		if (strncmp(names[pick - 1], "incident-", 9) == 0)
			break;
	if (!pick)
		pick = n;
	if (!pick) {
		fprintf(stderr, "sysptd %s: latest: no incident (*.db) in %s (name the directory "
		        "with --dir DIR)\n", cmd, dir);
		sptd_col_names_free(names, n);
		return SPTD_EXIT_BADFILE;
	}
	ret = snprintf(path, len, "%s/%s", dir, names[pick - 1]) >= (int)len;
	sptd_col_names_free(names, n);
	if (ret) {
		fprintf(stderr, "sysptd %s: latest: path in %s too long\n", cmd, dir);
		return SPTD_EXIT_BADFILE;
	}
	return 0;
}

int sptd_col_term_width(int fd)
{
	struct winsize ws;

	if (!isatty(fd))
		return 0;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;   /* a terminal that does not say: the classic width */
}

static int incident_opened(const char *cmd, const char *path, int ret);

int sptd_col_incident_open_fd(const char *cmd, int fd, const char *path,
                              struct sptd_store **st)
{
	return incident_opened(cmd, path, sptd_store_open_fd(fd, path, st));
}

int sptd_col_incident_fd(const char *cmd, const char *path, int *fd)
{
	int ret = sptd_store_open_source(path);

	*fd = ret >= 0 ? ret : -1;
	return incident_opened(cmd, path, ret);
}

int sptd_col_incident_update(const char *cmd, const char *path, struct sptd_store **st)
{
	return incident_opened(cmd, path, sptd_store_open_update(path, st));
}

int sptd_col_incident_update_finish(const char *cmd, const char *path, struct sptd_store *st)
{
	return incident_opened(cmd, path, sptd_store_open_finish(st));
}

/* The exit status of an open of @path that returned @ret, its message
 * printed. */
static int incident_opened(const char *cmd, const char *path, int ret)
{
	const char *msg;

	if (ret >= 0)
		return 0;
	msg = sptd_store_errmsg(NULL);
	if (msg && *msg) {
		fprintf(stderr, "sysptd %s: %s\n", cmd, msg);
	} else {
		msg = ret == -ENOENT ? "no such file" :
		      ret == -EBADMSG ? "not a sysptd incident, or corrupt" :
		      ret == -EPROTO ? "written by a newer sysptd; upgrade to read it" : strerror(-ret);
		fprintf(stderr, "sysptd %s: %s: %s\n", cmd, path, msg);
	}
	if (ret == -ENOENT || ret == -EBADMSG || ret == -EPROTO || ret == -EISDIR ||
	    ret == -ENOTDIR)
		return SPTD_EXIT_BADFILE;
	if (ret == -EACCES || ret == -EPERM)
		return SPTD_EXIT_NOPERM;
	return SPTD_EXIT_FAIL;
}

int sptd_col_progress_init(struct sptd_col_progress *p, const char *cmd, int quiet)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->on = !quiet && isatty(STDERR_FILENO);
	return p->on;
}

void sptd_col_progress_show(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct sptd_col_progress *p = ctx;
	int64_t now;
	int same;

	if (!p->on)
		return;
	same = strncmp(p->phase, phase, sizeof(p->phase) - 1) == 0;
	now = sptd_col_now_ns();
	/* the end of a phase (100%) is always shown */
	if (same && now - p->last_ns < 100000000 && !(total && done >= total))
		return;
	snprintf(p->phase, sizeof(p->phase), "%s", phase);
	p->last_ns = now;
	p->shown = 1;
	if (total)
		fprintf(stderr, "\r%s: %s %3llu%% (%llu of %llu)\033[K", p->cmd, phase,
		        (unsigned long long)(done >= total ? 100 : done * 100 / total),
		        (unsigned long long)done, (unsigned long long)total);
	else if (done)
		fprintf(stderr, "\r%s: %s %llu\033[K", p->cmd, phase, (unsigned long long)done);
	else
		fprintf(stderr, "\r%s: %s ...\033[K", p->cmd, phase);
}

void sptd_col_progress_end(struct sptd_col_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
	p->phase[0] = '\0';       /* the next report is drawn anew */
}
