/* test_outdir.c — the service's output directory, table-driven where it
 * can be: which directories are refused, names that are unique for the
 * life of the directory and sort as text, the manifest that survives a
 * restart, --keep and --max-disk deleting only what the service wrote
 * (planted look-alikes and replaced incidents are left alone), stale
 * temporary files, and the safe new-file writer (a planted symlink is
 * replaced, never written through).  Runs as any user; the ownership
 * cases that need another user run when root. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include "outdir-local.h"
#include "record-local.h"
#include "sptd_test.h"

static char top[64];

/* "TOP/NAME" in a static buffer (one of four, round robin). */
static const char *at(const char *name)
{
	static char bufs[4][512];
	static int next;
	char *b = bufs[next++ % 4];

	snprintf(b, 512, "%s/%s", top, name);
	return b;
}

static void write_file(const char *path, size_t bytes)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char buf[4096] = { 0 };

	for (size_t done = 0; fd >= 0 && done < bytes;) {
		size_t n = bytes - done < sizeof(buf) ? bytes - done : sizeof(buf);

		if (write(fd, buf, n) != (ssize_t)n)
			break;
		done += n;
	}
	if (fd >= 0)
		close(fd);
}

static int exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

/* Write one "incident" as the service does: name it, create it, record it. */
static void add_incident(struct sptd_col_outdir *od, char *path, size_t len, size_t bytes)
{
	CHECK_INT(sptd_col_outdir_next(od, path, len), 0);
	write_file(path, bytes);
	CHECK(sptd_col_retention_added(od, path) >= 0);
}

static void test_refused(void)
{
	struct sptd_col_outdir od;
	char err[1024];

	/* a symlink to a directory, a world-writable one, a file */
	mkdir(at("real"), 0700);
	symlink(at("real"), at("link"));
	mkdir(at("open"), 0700);
	chmod(at("open"), 0777);
	write_file(at("afile"), 1);
	CHECK_INT(sptd_col_outdir_open(&od, at("link"), 0, err, sizeof(err)), -EPERM);
	CHECK(strstr(err, "symbolic link") && strstr(err, "--unsafe-output"));
	CHECK_INT(sptd_col_outdir_open(&od, at("open"), 0, err, sizeof(err)), -EPERM);
	CHECK(strstr(err, "writable by group or others") != NULL);
	CHECK_INT(sptd_col_outdir_open(&od, at("afile"), 0, err, sizeof(err)), -ENOTDIR);
	CHECK(strstr(err, "not a directory") != NULL);
	/* a parent that is world-writable and not sticky */
	mkdir(at("open/sub"), 0700);
	CHECK_INT(sptd_col_outdir_open(&od, at("open/sub"), 0, err, sizeof(err)), -EPERM);
	CHECK(strstr(err, "above it") != NULL);
	/* the override takes each of them */
	CHECK_INT(sptd_col_outdir_open(&od, at("link"), 1, err, sizeof(err)), 0);
	sptd_col_outdir_close(&od);
	CHECK_INT(sptd_col_outdir_open(&od, at("open"), 1, err, sizeof(err)), 0);
	sptd_col_outdir_close(&od);
	/* a missing directory is created, 0700 */
	CHECK_INT(sptd_col_outdir_open(&od, at("new"), 0, err, sizeof(err)), 0);
	{
		struct stat sb;

		CHECK(stat(at("new"), &sb) == 0 && (sb.st_mode & 0777) == 0700);
	}
	/* one service per directory */
	{
		struct sptd_col_outdir second;

		CHECK_INT(sptd_col_outdir_open(&second, at("new"), 0, err, sizeof(err)), -EBUSY);
		CHECK(strstr(err, "another sysptd") != NULL);
	}
	sptd_col_outdir_close(&od);
	CHECK_INT(sptd_col_outdir_open(NULL, at("new"), 0, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_col_outdir_open(&od, NULL, 0, err, sizeof(err)), -EINVAL);
	sptd_col_outdir_close(NULL);
	if (geteuid() == 0) {
		/* root: a directory owned by someone else */
		mkdir(at("theirs"), 0700);
		CHECK_INT(chown(at("theirs"), 65534, 65534), 0);
		CHECK_INT(sptd_col_outdir_open(&od, at("theirs"), 0, err, sizeof(err)), -EPERM);
		CHECK(strstr(err, "owned by another user") != NULL);
	}
}

/* Names: unique, in sequence, sorting as text in the order written, even
 * twelve in one second; the sequence survives a restart and a lost state
 * file. */
static void test_names(void)
{
	struct sptd_col_outdir od;
	char err[1024], names[12][512], path[512];

	mkdir(at("names"), 0700);
	CHECK_INT(sptd_col_outdir_open(&od, at("names"), 0, err, sizeof(err)), 0);
	for (int i = 0; i < 12; i++) {
		add_incident(&od, names[i], sizeof(names[i]), 10);
		for (int k = 0; k < i; k++)
			CHECK(strcmp(names[k], names[i]) < 0); /* text order = written order */
	}
	CHECK(strstr(names[0], "-000001.db") != NULL);
	CHECK(strstr(names[11], "-000012.db") != NULL);
	sptd_col_outdir_close(&od);
	/* restart: the sequence goes on, the manifest is back */
	CHECK_INT(sptd_col_outdir_open(&od, at("names"), 0, err, sizeof(err)), 0);
	CHECK_INT((int)od.n, 12);
	CHECK_INT((int)od.next_seq, 13);
	sptd_col_outdir_close(&od);
	/* the state file lost: names never come back (the directory says) */
	CHECK_INT(unlink(at("names/" SPTD_OUTDIR_STATE)), 0);
	CHECK_INT(sptd_col_outdir_open(&od, at("names"), 0, err, sizeof(err)), 0);
	CHECK_INT((int)od.n, 0);     /* nothing is known to be ours any more */
	CHECK_INT(sptd_col_outdir_next(&od, path, sizeof(path)), 0);
	CHECK(strstr(path, "-000013.db") != NULL);
	sptd_col_outdir_close(&od);
	/* a state file others could write is not believed */
	CHECK_INT(sptd_col_outdir_open(&od, at("names"), 0, err, sizeof(err)), 0);
	add_incident(&od, path, sizeof(path), 10);
	sptd_col_outdir_close(&od);
	CHECK_INT(chmod(at("names/" SPTD_OUTDIR_STATE), 0666), 0);
	CHECK_INT(sptd_col_outdir_open(&od, at("names"), 0, err, sizeof(err)), 0);
	CHECK_INT((int)od.n, 0);
	sptd_col_outdir_close(&od);
	CHECK_INT(sptd_col_outdir_next(NULL, path, sizeof(path)), -EINVAL);
	CHECK_INT(sptd_col_outdir_added(NULL, path), -EINVAL);
	CHECK_INT(sptd_col_retention_added(NULL, path), -EINVAL);
}

/* The case: three files planted with incident names, four real
 * incidents, --keep 3: the oldest real one goes, the planted ones stay. */
static void test_keep(void)
{
	static const char *const planted[] = {
		"incident-00000000T000000Z-0.db", "incident-19700101T000000Z-000000.db",
		"incident-99999999T999999Z-999999.db",
	};
	struct sptd_col_outdir od;
	char err[1024], real[4][512];

	mkdir(at("keep"), 0700);
	for (int i = 0; i < 3; i++) {
		snprintf(err, sizeof(err), "%s/keep/%s", top, planted[i]);
		write_file(err, 100);
	}
	CHECK_INT(sptd_col_outdir_open(&od, at("keep"), 0, err, sizeof(err)), 0);
	od.keep = 3;
	for (int i = 0; i < 4; i++)
		add_incident(&od, real[i], sizeof(real[i]), 100);
	CHECK(!exists(real[0]));
	for (int i = 1; i < 4; i++)
		CHECK(exists(real[i]));
	for (int i = 0; i < 3; i++) {
		snprintf(err, sizeof(err), "%s/keep/%s", top, planted[i]);
		CHECK(exists(err));
	}
	/* the planted name with the largest sequence does not make ours reuse
	 * or skip backwards: the next one follows it */
	CHECK((uint64_t)od.next_seq > 999999);
	/* an incident replaced by a forgery (same name, another file) is not
	 * deleted, and no longer counted */
	CHECK_INT(unlink(real[1]), 0);
	write_file(real[1], 100);
	add_incident(&od, real[0], sizeof(real[0]), 100);
	CHECK(exists(real[1]));      /* the forgery is left alone */
	CHECK_INT((int)od.n, 3);
	sptd_col_outdir_close(&od);
}

/* --max-disk: the oldest go until the rest fit; the newest always stays,
 * even alone over the budget. */
static void test_budget(void)
{
	struct sptd_col_outdir od;
	char err[1024], p[6][512];
	struct statvfs vfs;
	uint64_t want;

	mkdir(at("budget"), 0700);
	CHECK_INT(sptd_col_outdir_open(&od, at("budget"), 0, err, sizeof(err)), 0);
	od.max_disk = 250000;
	for (int i = 0; i < 5; i++)
		add_incident(&od, p[i], sizeof(p[i]), 100000);
	/* 5 x 100 kB in a 250 kB budget: the two newest stay */
	for (int i = 0; i < 5; i++)
		CHECK_INT(exists(p[i]), i >= 3);
	CHECK_INT(od.said_space, 1);
	add_incident(&od, p[5], sizeof(p[5]), 400000);
	CHECK(exists(p[5]));
	CHECK(!exists(p[3]) && !exists(p[4]));
	CHECK_INT(od.said_too_big, 1);
	/* the default: 10% of the filesystem, at most 4 GiB */
	CHECK_INT(fstatvfs(od.dirfd, &vfs), 0);
	want = (uint64_t)vfs.f_blocks * vfs.f_frsize / 10;
	if (want > (4ull << 30))
		want = 4ull << 30;
	CHECK(sptd_col_retention_default_budget(od.dirfd) == want);
	CHECK(sptd_col_retention_default_budget(-1) == 0);
	CHECK_INT(sptd_col_retention_apply(NULL), -EINVAL);
	sptd_col_outdir_close(&od);
}

/* Stale temporary files: a dead writer's go, a live writer's stay. */
static void test_stale(void)
{
	struct sptd_col_outdir od;
	char err[1024], live[512], dead[512], legacy[512], other[512];
	int pfd[2], fd;
	pid_t child;

	mkdir(at("stale"), 0700);
	/* a pid that is surely gone: a child that exited */
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	snprintf(dead, sizeof(dead), "%s/stale/incident-x-000001.db.tmp.%d.AbCdEf", top, (int)child);
	snprintf(legacy, sizeof(legacy), "%s/stale/incident-x-0.db.tmp.%d", top, (int)child);
	snprintf(other, sizeof(other), "%s/stale/notes.tmp.%d.AbCdE", top, (int)child);
	write_file(dead, 10);
	write_file(legacy, 10);
	write_file(other, 10);   /* not this naming (5 letters): kept */
	/* a live writer: a child holding the flock on its file */
	snprintf(live, sizeof(live), "%s/stale/incident-x-000002.db.tmp.%d.XyZxyZ", top, (int)getpid());
	write_file(live, 10);
	CHECK_INT(pipe(pfd), 0);
	child = fork();
	if (child == 0) {
		char c;

		fd = open(live, O_RDONLY);
		flock(fd, LOCK_EX);
		close(pfd[0]);
		(void)!write(pfd[1], "x", 1);
		(void)!read(0, &c, 0);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	{
		char c;

		(void)!read(pfd[0], &c, 1);
	}
	close(pfd[0]);
	CHECK_INT(sptd_col_outdir_open(&od, at("stale"), 0, err, sizeof(err)), 0);
	CHECK(!exists(dead));
	CHECK(!exists(legacy));
	CHECK(exists(other));
	CHECK(exists(live));
	sptd_col_outdir_close(&od);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* its writer gone, but its pid (ours) alive and the file fresh: kept;
	 * a minute old: removed */
	CHECK_INT(sptd_col_newfile_stale(open(at("stale"), O_RDONLY | O_DIRECTORY),
	                                  strrchr(live, '/') + 1), 0);
	{
		struct timespec old[2] = { { time(NULL) - 120, 0 }, { time(NULL) - 120, 0 } };
		int dfd = open(at("stale"), O_RDONLY | O_DIRECTORY);

		CHECK_INT(utimensat(AT_FDCWD, live, old, 0), 0);
		CHECK_INT(sptd_col_newfile_stale(dfd, strrchr(live, '/') + 1), 1);
		CHECK_INT(sptd_col_newfile_stale(dfd, "not-ours.db"), 0);
		CHECK_INT(sptd_col_newfile_stale(-1, "x"), -EINVAL);
		close(dfd);
	}
	CHECK(!exists(live));
}

/* The new-file writer: a symlink planted at the final name is replaced,
 * its target untouched; the file has exactly the mode asked for. */
static void test_newfile(void)
{
	struct sptd_col_newfile nf;
	char victim[512], target[512], buf[300] = "";
	struct stat sb;
	int fd;

	snprintf(victim, sizeof(victim), "%s/victim", top);
	snprintf(target, sizeof(target), "%s/out.pftrace", top);
	write_file(victim, 0);
	fd = open(victim, O_WRONLY);
	CHECK_INT(write(fd, "precious", 8), 8);
	close(fd);
	CHECK_INT(symlink(victim, target), 0);
	umask(0);
	CHECK_INT(sptd_col_newfile_open(&nf, AT_FDCWD, target, 0600), 0);
	umask(022);
	CHECK(strstr(nf.tmp, "out.pftrace.tmp.") == nf.tmp);
	CHECK_INT(write(nf.fd, "export", 6), 6);
	CHECK_INT(sptd_col_newfile_commit(&nf, 0), 0);
	sptd_col_newfile_fini(&nf);
	CHECK(lstat(target, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 0777) == 0600);
	fd = open(victim, O_RDONLY);
	CHECK_INT(read(fd, buf, sizeof(buf)), 8);
	close(fd);
	CHECK_STR(buf, "precious");
	/* NOREPLACE refuses an existing name; fini then removes the temp */
	CHECK_INT(sptd_col_newfile_open(&nf, AT_FDCWD, target, 0644), 0);
	CHECK_INT(sptd_col_newfile_commit(&nf, SPTD_COL_NEWFILE_NOREPLACE), -EEXIST);
	snprintf(buf, sizeof(buf), "%s", nf.tmp);
	sptd_col_newfile_fini(&nf);
	CHECK(!exists(at(buf)));
	/* arguments */
	CHECK_INT(sptd_col_newfile_open(NULL, AT_FDCWD, target, 0600), -EINVAL);
	CHECK_INT(sptd_col_newfile_open(&nf, AT_FDCWD, NULL, 0600), -EINVAL);
	CHECK_INT(sptd_col_newfile_open(&nf, AT_FDCWD, at(""), 0600), -EISDIR);
	CHECK_INT(sptd_col_newfile_open(&nf, AT_FDCWD, target, 010000), -EINVAL);
	CHECK_INT(sptd_col_newfile_commit(NULL, 0), -EINVAL);
	sptd_col_newfile_fini(NULL);
}

int main(void)
{
	char cmd[256];

	snprintf(top, sizeof(top), "/tmp/sptd-outdir-XXXXXX");
	if (!mkdtemp(top))
		return 1;
	test_refused();
	test_names();
	test_keep();
	test_budget();
	test_stale();
	test_newfile();
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s; rm -rf %s", top, top);
	if (!sptd_test_failed)
		(void)!system(cmd);
	else
		fprintf(stderr, "files kept in %s\n", top);
	return SPTD_TEST_END();
}
