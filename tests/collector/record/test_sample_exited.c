/* test_sample_exited.c — the sampling source's sideband (issue 27 items 1
 * and 3), unit by unit on real perf events and real files:
 *   - every new entry point refuses bad arguments;
 *   - a file recorded by device/inode or build-id is used only while it is
 *     still that file: a copy replaced by another program (rename over it)
 *     or a wrong build-id gives -ESTALE, a missing one -ENOENT;
 *   - (root) the sampler's sideband rings, around a program that maps
 *     itself, prints where its hot function is and exits: stored in an
 *     incident, they name that function at that address for the gone
 *     process, and a gone program's two sleeping threads get its pid as
 *     their process.
 * Usage: test_sample_exited EXITED_PROG OTHER_ELF */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"
#include "symcache-local.h"

static char dir[] = "/tmp/sptd-sexited-XXXXXX";

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out, ret = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			ret = -EIO;
			break;
		}
	close(in);
	close(out);
	return ret;
}

static void test_invalid(void)
{
	struct sptd_col_symcache *cache = NULL;
	struct sptd_col_symcache_file *f = (void *)1;
	struct sptd_col_symcap_mapping m = { .start = 0x2000, .end = 0x1000, .path = "/x" };
	int pid = 1;

	CHECK_INT(sptd_col_symcache_create(0, &cache), 0);
	CHECK_INT(sptd_col_symcache_file_recorded(NULL, "/bin/sh", 0, 0, 0, NULL, &f), -EINVAL);
	CHECK_INT(sptd_col_symcache_file_recorded(cache, NULL, 0, 0, 0, NULL, &f), -EINVAL);
	CHECK_INT(sptd_col_symcache_file_recorded(cache, "/bin/sh", 0, 0, 0, NULL, NULL), -EINVAL);
	CHECK_INT(sptd_col_symcap_task_recorded(NULL, 1, &m, 1), -EINVAL);
	CHECK_INT(sptd_col_sample_exited_maps(NULL, NULL, &pid, 1), -EINVAL);
	CHECK_INT(sptd_col_sample_sideband_store(NULL, NULL), -EINVAL);
	CHECK_INT(sptd_col_sampler_sideband(NULL, NULL, NULL), -EINVAL);
	CHECK_INT(sptd_col_derive_sideband_tasks(NULL, NULL), -EINVAL);
	{
		/* a sideband ring that is not a power of two pages */
		struct sptd_col_sampler_config cfg = {
			.freq = 1000, .ring_pages = 8, .max_stack = 16, .sideband_pages = 3,
		};
		struct sptd_col_sampler *s = (void *)1;

		CHECK_INT(sptd_col_sampler_create(&cfg, &s), -EINVAL);
		CHECK(s == NULL);
	}
	sptd_col_symcache_destroy(cache);
}

/* A recorded file is used only while it is the file recorded. */
static void test_recorded_file(const char *prog, const char *other)
{
	struct sptd_col_symcache *cache = NULL;
	struct sptd_col_symcache_file *f = NULL;
	char path[PATH_MAX], next[PATH_MAX], bid[130], wrong[41];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/prog", dir);
	snprintf(next, sizeof(next), "%s/prog.new", dir);
	CHECK_INT(copy_file(prog, path), 0);
	CHECK_INT(stat(path, &sb), 0);
	CHECK(sptd_dec_build_id(path, bid, sizeof(bid)) >= 0);
	memset(wrong, '0', 40);
	wrong[40] = '\0';
	CHECK_INT(sptd_col_symcache_create(0, &cache), 0);
	sptd_col_symcache_begin(cache);
	/* the file as recorded: by inode, by build-id */
	CHECK_INT(sptd_col_symcache_file_recorded(cache, path, (uint64_t)sb.st_dev,
	                                          (uint64_t)sb.st_ino, 0, NULL, &f), 0);
	CHECK(f != NULL);
	CHECK_INT(sptd_col_symcache_file_recorded(cache, path, 0, 0, 0, bid, &f), 0);
	/* another inode, another build */
	CHECK_INT(sptd_col_symcache_file_recorded(cache, path, (uint64_t)sb.st_dev,
	                                          (uint64_t)sb.st_ino + 1, 0, NULL, &f), -ESTALE);
	CHECK(f == NULL);
	CHECK_INT(sptd_col_symcache_file_recorded(cache, path, 0, 0, 0, wrong, &f), -ESTALE);
	/* replaced since: another program renamed over it */
	CHECK_INT(copy_file(other, next), 0);
	CHECK_INT(rename(next, path), 0);
	CHECK_INT(sptd_col_symcache_file_recorded(cache, path, (uint64_t)sb.st_dev,
	                                          (uint64_t)sb.st_ino, 0, NULL, &f), -ESTALE);
	CHECK_INT(sptd_col_symcache_file_recorded(cache, path, 0, 0, 0, bid, &f), -ESTALE);
	/* gone */
	CHECK_INT(unlink(path), 0);
	CHECK_INT(sptd_col_symcache_file_recorded(cache, path, (uint64_t)sb.st_dev,
	                                          (uint64_t)sb.st_ino, 0, NULL, &f), -ENOENT);
	sptd_col_symcache_end(cache);
	sptd_col_symcache_destroy(cache);
}

/* Run @prog @mode to its end; its first output line into @line. */
static int run_prog(const char *prog, const char *mode, char *line, size_t len)
{
	int fds[2], status = 0;
	pid_t child;
	FILE *out;

	if (pipe(fds) < 0)
		return -errno;
	child = fork();
	if (child == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(prog, prog, mode, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	line[0] = '\0';
	if (!out || !fgets(line, (int)len, out))
		line[0] = '\0';
	if (out)
		fclose(out);
	else
		close(fds[0]);
	waitpid(child, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && line[0] ? 0 : -EIO;
}

static void test_real(const char *prog)
{
	struct sptd_col_sampler_config cfg = {
		.freq = 1000, .ring_pages = 8, .use_clock = 1, .max_stack = 16,
		.sideband_pages = SPTD_SAMPLER_SIDEBAND_PAGES,
	};
	struct sptd_col_sampler *s = NULL;
	struct sptd_col_symcap *sc = NULL;
	struct sptd_col_tasks *tasks = NULL;
	struct sptd_store *st = NULL;
	char line[256], path[PATH_MAX], sql[512];
	int pid = 0, tpid = 0, named = 0, unnamed = 0, ret;
	unsigned long long hot = 0;
	int64_t v = -1;

	if (geteuid() != 0) {
		SPTD_SKIP_PART("the sampler's sideband: needs root (system-wide perf events)");
		return;
	}
	ret = sptd_col_sampler_create(&cfg, &s);
	if (ret == -EACCES || ret == -EPERM || ret == -ENOENT) {
		SPTD_SKIP_PART("perf_event_open refused: %s", strerror(-ret));
		return;
	}
	CHECK_INT(ret, 0);
	if (!s)
		return;
	CHECK_INT(run_prog(prog, "where", line, sizeof(line)), 0);
	CHECK_INT(sscanf(line, "pid %d hot %llx", &pid, &hot), 2);
	CHECK_INT(run_prog(prog, "thread", line, sizeof(line)), 0);
	CHECK_INT(sscanf(line, "pid %d named %d unnamed %d", &tpid, &named, &unnamed), 3);
	CHECK_INT(sptd_col_sampler_pause(s, 1), 0);

	snprintf(path, sizeof(path), "%s/incident.db", dir);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		goto out;
	/* one row per CPU, and the COMM of the exec among the raw_task rows */
	CHECK(sptd_col_sample_sideband_store(s, st) > 0);
	CHECK_INT(sptd_store_query_int(st, "SELECT count(*) FROM raw_sideband", &v), 0);
	CHECK(v > 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM raw_task WHERE pid = %d AND tid = %d "
	         "AND comm = 't_exitw'", tpid, named);
	CHECK_INT(sptd_store_query_int(st, sql, &v), 0);
	CHECK(v >= 1);

	/* the gone process's mappings, and its hot function named */
	CHECK_INT(sptd_col_symcap_create(st, NULL, &sc), 0);
	if (sc) {
		CHECK(sptd_col_symcap_task(sc, pid) < 0);   /* gone: /proc has nothing */
		CHECK(sptd_col_sample_exited_maps(sc, st, &pid, 1) > 0);
		CHECK_INT(sptd_col_symcap_addr(sc, pid, hot, 0), 1);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM symbol y JOIN dso d ON "
		         "d.id = y.dso_id JOIN raw_mmap m ON m.dso_id = d.id WHERE m.pid = %d "
		         "AND y.name = 'exitedprog_hot_spin' AND m.start <= %llu AND %llu < m.\"end\"",
		         pid, hot, hot);
		CHECK_INT(sptd_store_query_int(st, sql, &v), 0);
		CHECK_INT(v, 1);
		/* asked again: already there */
		CHECK_INT(sptd_col_symcap_task_recorded(sc, pid, NULL, 0), -EEXIST);
		sptd_col_symcap_destroy(sc);
	}

	/* the gone program's threads belong to it */
	CHECK_INT(sptd_col_tasks_create(&tasks), 0);
	if (tasks) {
		CHECK_INT(sptd_col_derive_sideband_tasks(st, tasks), 0);
		CHECK_INT(sptd_col_tasks_store(tasks, st), 0);
		for (int i = 0; i < 2; i++) {
			snprintf(sql, sizeof(sql), "SELECT p.pid FROM thread t JOIN process p ON "
			         "p.upid = t.upid WHERE t.tid = %d", i ? unnamed : named);
			v = -1;
			CHECK_INT(sptd_store_query_int(st, sql, &v), 0);
			CHECK_INT(v, tpid);
		}
		sptd_col_tasks_destroy(tasks);
	}
out:
	sptd_store_destroy(st);
	unlink(path);
	sptd_col_sampler_destroy(s);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_sample_exited EXITED_PROG OTHER_ELF\n");
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_invalid();
	test_recorded_file(argv[1], argv[2]);
	test_real(argv[1]);
	rmdir(dir);
	return SPTD_TEST_END();
}
