/* cmd_common.c — what several subcommands share: one way to scan options
 * (getopt_long, restartable within a process, quoting what the user typed),
 * the command line as text, finding incidents (a directory's, `latest`),
 * opening an incident with one clear message, the --cpu/--tid lists and
 * --time ranges of script and flamegraph, and giving root up to parse.
 * It calls no subcommand, so nothing here depends on cli.c or cmd_*.c. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
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

/* ---- --cpu, --tid and --time of script and flamegraph ------------------------ */

int sptd_col_parse_list(const char *text, int ranges, int64_t max_value, int *out, size_t *n)
{
	const char *p = text;

	*n = 0;
	if (!*p)
		return -EINVAL;
	while (*p) {
		int64_t a, b;
		char *end;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = b = strtoll(p, &end, 10);
		p = end;
		if (ranges && *p == '-') {
			if (!isdigit((unsigned char)p[1]))
				return -EINVAL;
			b = strtoll(p + 1, &end, 10);
			p = end;
		}
		if (a < 0 || b < a || b > max_value || (size_t)(b - a) >= SPTD_COL_MAX_LIST - *n)
			return -EINVAL;
		for (int64_t v = a; v <= b; v++)
			out[(*n)++] = (int)v;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -EINVAL;
	}
	return 0;
}

/* "12.345678901" seconds -> ns, exactly (no float rounding). */
static int parse_seconds(const char *text, int64_t *ns)
{
	int64_t sec = 0, frac = 0, scale = 1000000000;
	const char *p = text;

	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (sec > (INT64_MAX / 1000000000 - 9) / 10)
			return -EINVAL;
		sec = sec * 10 + (*p - '0');
	}
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
	if (*p)
		return -EINVAL;
	*ns = sec * 1000000000 + frac;
	return 0;
}

/* One end of --time: SECONDS (absolute, on the clock of the printed
 * times), DUR with a unit (after the window start) or PCT% of the window.
 * @zero: what printed times are relative to (0 or the window start). */
static int parse_time(const char *text, int64_t ws, int64_t we, int64_t zero, int64_t *ns)
{
	size_t len = strlen(text);
	int64_t v;

	if (len > 1 && text[len - 1] == '%') {
		char num[32];
		char *end;
		double pct;

		if (len >= sizeof(num))
			return -EINVAL;
		memcpy(num, text, len - 1);
		num[len - 1] = '\0';
		pct = strtod(num, &end);
		if (*end || end == num || pct < 0 || pct > 100)
			return -EINVAL;
		/* the window comes from the file: any int64 pair, so in double
		 * and clipped, never a wrapped difference */
		{
			double t = (double)ws + ((double)we - (double)ws) * pct / 100.0;

			*ns = t >= 9.2233720368547748e18 ? INT64_MAX :
			      t <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)t;
		}
		return 0;
	}
	if (len && isalpha((unsigned char)text[len - 1])) {
		if (sptd_col_parse_duration(text, &v) < 0)
			return -EINVAL;
		if (__builtin_add_overflow(ws, v, ns))
			*ns = v < 0 ? INT64_MIN : INT64_MAX;
		return 0;
	}
	if (parse_seconds(text, &v) < 0)
		return -EINVAL;
	if (__builtin_add_overflow(zero, v, ns))
		*ns = v < 0 ? INT64_MIN : INT64_MAX;
	return 0;
}

int sptd_col_time_range(const char *cmd, const char *spec, struct sptd_store *st,
                        const char *path, int reltime, int64_t *start_ns, int64_t *end_ns)
{
	char start[64], end[64];
	const char *comma = strchr(spec, ',');
	int64_t ws = 0, we = 0, zero;
	size_t n;
	int have;

	if (!comma || strchr(comma + 1, ',') || (size_t)(comma - spec) >= sizeof(start) ||
	    strlen(comma + 1) >= sizeof(end)) {
		fprintf(stderr, "sysptd %s: bad --time '%s': want START,END (either may be empty)\n",
		        cmd, spec);
		return SPTD_EXIT_USAGE;
	}
	n = (size_t)(comma - spec);
	memcpy(start, spec, n);
	start[n] = '\0';
	snprintf(end, sizeof(end), "%s", comma + 1);
	have = sptd_store_meta_get_int(st, "window_start", &ws) == 0;
	have = sptd_store_meta_get_int(st, "window_end", &we) == 0 && have;
	if (have && we < ws) {
		/* as query's reports: the file's fault, not the request's */
		fprintf(stderr, "sysptd %s: %s: the recording window ends before it starts "
		        "(window_start %lld, window_end %lld): the file was damaged or forged\n",
		        cmd, path, (long long)ws, (long long)we);
		return SPTD_EXIT_BADFILE;
	}
	zero = reltime ? ws : 0;
	if ((start[0] && parse_time(start, ws, we, zero, start_ns) < 0) ||
	    (end[0] && parse_time(end, ws, we, zero, end_ns) < 0)) {
		fprintf(stderr, "sysptd %s: bad --time '%s': each end is SECONDS (12.5), a "
		        "duration after the window start (2ms) or a percentage (25%%)\n", cmd, spec);
		return SPTD_EXIT_USAGE;
	}
	if (*start_ns > *end_ns) {
		fprintf(stderr, "sysptd %s: --time '%s' ends before it starts\n", cmd, spec);
		return SPTD_EXIT_USAGE;
	}
	return 0;
}

/* ---- a command's output file, written as export writes its own ------------------ */

int sptd_col_output_open(const char *cmd, const char *output, mode_t mode,
                         struct sptd_col_newfile *nf)
{
	struct sptd_col_user user;
	int ret = sptd_col_newfile_sweep(output, 0);

	if (ret > 0)
		fprintf(stderr, "sysptd %s: removed %d temporary file(s) beside %s, left by a "
		        "writer that was killed\n", cmd, ret, output);
	ret = sptd_col_newfile_open(nf, AT_FDCWD, output, mode);
	if (ret < 0) {
		fprintf(stderr, "sysptd %s: cannot write %s: %s\n", cmd, output, strerror(-ret));
		return ret == -EACCES || ret == -EPERM ? SPTD_EXIT_NOPERM : SPTD_EXIT_FAIL;
	}
	/* run with sudo: the file is the user's, as if they had written it */
	if (geteuid() == 0 && sptd_col_privs_target(&user) == 0 && user.from_sudo &&
	    fchown(nf->fd, user.uid, user.gid) < 0)
		fprintf(stderr, "sysptd %s: warning: cannot give %s to uid %u: %s\n", cmd, output,
		        (unsigned)user.uid, strerror(errno));
	return 0;
}

int sptd_col_output_commit(const char *cmd, const char *output, struct sptd_col_newfile *nf)
{
	int ret = sptd_col_newfile_commit(nf, 0);

	if (ret < 0) {
		fprintf(stderr, "sysptd %s: cannot write %s: %s\n", cmd, output,
		        ret == -ENOSPC ? "disk full" : strerror(-ret));
		return SPTD_EXIT_FAIL;
	}
	return 0;
}

/* ---- giving root up (docs/SECURITY.md): commands that parse files open what
 * they need as root, then parse in a child that has become the user who
 * ran sudo (else nobody); the parent, still root, renames what the child
 * finished (collector/base privs.c does the work) -------------------------- */

/* sptd_store_dir_open_fn: the store's temporary files as newfile.c's. */
static int store_dir_open(const char *dir, int update)
{
	return sptd_col_newfile_dir_open(dir, update ? SPTD_COL_NEWFILE_DIR_UPDATE : 0);
}

int sptd_col_parse_as_user(const char *cmd, int (*fn)(void *ctx), void *ctx)
{
	int ret;

	/* new and updated incidents are renamed by the parent, still root,
	 * in a directory opened as sptd_col_newfile_dir_open decides (never
	 * through a user's symlink; through sudo, only one that user may
	 * write, for a new incident) */
	sptd_store_set_handoff(sptd_col_privs_handoff);
	sptd_store_set_dir_open(store_dir_open);
	ret = sptd_col_privs_child(fn, ctx);
	sptd_store_set_dir_open(NULL);
	sptd_store_set_handoff(NULL);
	if (ret < 0) {
		fprintf(stderr, "sysptd %s: cannot start the process that reads the file: %s\n",
		        cmd, strerror(-ret));
		return SPTD_EXIT_FAIL;
	}
	return ret;
}

int sptd_col_drop_root(const char *cmd)
{
	char err[512];

	if (sptd_col_privs_drop_root(err, sizeof(err)) < 0) {
		fprintf(stderr, "sysptd %s: %s\n", cmd, err);
		return SPTD_EXIT_FAIL;
	}
	return 0;
}
