/* test_symcache.c — the symbol cache kept across incidents (symcache.c):
 *   - two incidents of this process and a child written with the cache
 *     kept, and the same two written with the cache off (every table read
 *     again): every dso, symbol, raw_mmap, sample and callsite row is
 *     identical — the cache changes cost, never rows;
 *   - the second cached incident reads no table again (the cache's
 *     counters), kallsyms included;
 *   - a file replaced at its path (new inode), rewritten in place (new
 *     mtime and size), or rewritten keeping size and mtime with another
 *     build-id, is read again.
 * Kernel frames need root (kallsyms); without it they are left out. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"

#ifndef SPTD_SANITIZED
#define SPTD_SANITIZED 0   /* CMake says whether this is an ASan build */
#endif
#include "symcache-local.h"

static char dir[] = "/tmp/sptd-symcache-XXXXXX";

static __attribute__((noinline, used)) int symcache_test_leaf(int x)
{
	return x * 11 + 2;
}

static __attribute__((noinline, used)) int symcache_test_mid(int x)
{
	return symcache_test_leaf(x) + 1;
}

/* "schedule" in /proc/kallsyms, 0 when unreadable. */
static uint64_t kallsyms_addr(const char *want)
{
	char line[512], name[256], type;
	uint64_t addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) == 3 &&
		    strcmp(name, want) == 0)
			found = addr;
	fclose(f);
	return found;
}

/* Every row of @sql as text, one line per row ("N" for NULL). */
static char *dump(struct sptd_store *st, const char *sql)
{
	struct sptd_store_stmt *q = NULL;
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	out[0] = '\0';
	if (sptd_store_prepare(st, sql, &q) < 0) {
		fprintf(stderr, "%s: %s\n", sql, sptd_store_errmsg(st));
		free(out);
		return NULL;
	}
	while (sptd_store_step(q) == 1) {
		for (int c = 0; c < sptd_store_column_count(q); c++) {
			char cell[1200];
			const char *t;

			if (sptd_store_column_type(q, c) == SPTD_STORE_NULL)
				snprintf(cell, sizeof(cell), "%sN", c ? "|" : "");
			else if (sptd_store_column_type(q, c) == SPTD_STORE_INT)
				snprintf(cell, sizeof(cell), "%s%" PRId64, c ? "|" : "",
				         sptd_store_column_int(q, c));
			else
				snprintf(cell, sizeof(cell), "%s%s", c ? "|" : "",
				         (t = sptd_store_column_text(q, c)) ? t : "?");
			while (len + strlen(cell) + 2 > cap) {
				char *more = realloc(out, cap * 2);

				if (!more)
					goto out;
				out = more;
				cap *= 2;
			}
			memcpy(out + len, cell, strlen(cell) + 1);
			len += strlen(cell);
		}
		out[len++] = '\n';
		out[len] = '\0';
	}
out:
	sptd_store_finalize(q);
	return out;
}

/* The addresses an incident names: frames of this process (its own
 * functions, libc, the vDSO) and of @child; kernel frames when @kernel. */
struct frames {
	pid_t self, child;         /* the two processes */
	uint64_t kernel;           /* "schedule" + 8, 0 none */
	uint64_t leaf, mid;        /* this binary */
	uint64_t libc1, libc2;     /* libc functions */
	uint64_t vdso;             /* a vDSO function, 0 none */
};

/* One incident: snapshot and symbolize the frames, derive samples, commit.
 * @cache NULL: the cache off (a private one per incident). */
static struct sptd_store *incident(const char *name, struct sptd_col_symcache *cache,
                                   const struct frames *fr)
{
	char path[PATH_MAX];
	struct sptd_store *st = NULL;
	struct sptd_col_symcap *c = NULL;
	struct sptd_col_tasks *tasks = NULL;
	const uint64_t s1[] = { PERF_CONTEXT_KERNEL, fr->kernel, PERF_CONTEXT_USER, fr->leaf,
	                        fr->mid, fr->libc1 };
	const uint64_t s2[] = { PERF_CONTEXT_USER, fr->libc2, fr->mid, fr->vdso };
	const uint64_t s3[] = { PERF_CONTEXT_USER, fr->libc1 + 1, fr->leaf + 3 };

	snprintf(path, sizeof(path), "%s/%s.db", dir, name);
	CHECK_INT(sptd_store_create(path, &st), 0);
	if (!st)
		return NULL;
	CHECK_INT(sptd_col_symcap_create(st, cache, &c), 0);
	if (!c)
		return st;
	CHECK_INT(sptd_col_symcap_task(c, fr->self), 0);
	CHECK_INT(sptd_col_symcap_task(c, fr->child), 0);
	/* what capture.c does: every frame of every sample, in order */
	for (size_t i = 0; i < sizeof(s1) / sizeof(s1[0]); i++)
		if (s1[i] && s1[i] < (uint64_t)PERF_CONTEXT_MAX)
			CHECK(sptd_col_symcap_addr(c, fr->self, s1[i], 0) >= 0);
	for (size_t i = 0; i < sizeof(s2) / sizeof(s2[0]); i++)
		if (s2[i] && s2[i] < (uint64_t)PERF_CONTEXT_MAX)
			CHECK(sptd_col_symcap_addr(c, fr->self, s2[i], 0) >= 0);
	for (size_t i = 0; i < sizeof(s3) / sizeof(s3[0]); i++)
		if (s3[i] < (uint64_t)PERF_CONTEXT_MAX)
			CHECK(sptd_col_symcap_addr(c, fr->child, s3[i], 0) >= 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 100, 0, fr->self, fr->self,
	                         fr->kernel ? s1 : s1 + 2, fr->kernel ? 6 : 4, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 200, 1, fr->self, fr->self, s2,
	                         fr->vdso ? 4 : 3, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(SPTD_STORE_ADD(st, raw_sample, 300, 1, fr->child, fr->child, s3, 3, SPTD_RAW_SAMPLE_CLOCK, NULL, 0), 0);
	CHECK_INT(sptd_col_symcap_finish(c), 0);
	sptd_col_symcap_destroy(c);
	CHECK_INT(sptd_col_tasks_create(&tasks), 0);
	CHECK_INT(sptd_col_derive_samples(st, tasks), 0);
	sptd_col_tasks_destroy(tasks);
	CHECK_INT(sptd_store_commit(st), 0);
	if (cache)
		sptd_col_symcache_end(cache);
	return st;
}

/* The rows the cache may not change. */
static const char *const tables[] = {
	"SELECT id, path, build_id FROM dso ORDER BY id",
	"SELECT id, name, dso_id, addr, size FROM symbol ORDER BY id",
	"SELECT pid, start, end, pgoff, dso_id, bias FROM raw_mmap ORDER BY pid, start",
	"SELECT id, parent_id, depth, symbol_id, addr FROM callsite ORDER BY id",
	"SELECT ts, cpu, callsite_id FROM sample ORDER BY ts",
};

static void same_rows(struct sptd_store *a, struct sptd_store *b)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char *x = dump(a, tables[i]), *y = dump(b, tables[i]);

		CHECK(x && y && x[0]);
		if (x && y && strcmp(x, y) != 0)
			fprintf(stderr, "rows differ: %s\ncached:\n%suncached:\n%s", tables[i], x, y);
		CHECK(x && y && strcmp(x, y) == 0);
		free(x);
		free(y);
	}
}

static void test_same_rows(int root)
{
	struct sptd_col_symcache *cache = NULL;
	struct sptd_col_symcache_stats s0, s1, s2;
	struct sptd_store *cached[2] = { NULL, NULL }, *plain[2] = { NULL, NULL };
	struct frames fr = {
		.self = getpid(),
		.leaf = (uint64_t)(uintptr_t)&symcache_test_leaf + 1,
		.mid = (uint64_t)(uintptr_t)&symcache_test_mid + 2,
		.libc1 = (uint64_t)(uintptr_t)&strlen + 3,
		.libc2 = (uint64_t)(uintptr_t)&qsort + 5,
		/* inside the vDSO's code (it is one or two pages) */
		.vdso = getauxval(AT_SYSINFO_EHDR) ? getauxval(AT_SYSINFO_EHDR) + 0x900 : 0,
		.kernel = root ? kallsyms_addr("schedule") + 8 : 0,
	};
	int pipefd[2];
	char c;

	/* a child that maps the same files (it sleeps until killed) */
	CHECK_INT(pipe(pipefd), 0);
	fr.child = fork();
	if (fr.child == 0) {
		close(pipefd[0]);
		(void)!write(pipefd[1], "x", 1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	CHECK_INT(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	if (root && fr.kernel == 8)
		fr.kernel = 0;

	CHECK_INT(sptd_col_symcache_create(1, &cache), 0);
	sptd_col_symcache_stats(cache, &s0);
	CHECK_INT(s0.kallsyms_reads, 1);   /* read when created, before any incident */
	cached[0] = incident("cached-1", cache, &fr);
	plain[0] = incident("plain-1", NULL, &fr);
	sptd_col_symcache_stats(cache, &s1);
	cached[1] = incident("cached-2", cache, &fr);
	plain[1] = incident("plain-2", NULL, &fr);
	sptd_col_symcache_stats(cache, &s2);
	for (int i = 0; i < 2; i++)
		if (cached[i] && plain[i])
			same_rows(cached[i], plain[i]);
	/* the first incident read headers and a few tables; the second none */
	CHECK(s1.file_heads > 0 && s1.file_tables > 0);
	CHECK(s1.file_tables < s1.file_heads);   /* only files an address falls in */
	CHECK_INT(s2.file_heads, s1.file_heads);
	CHECK_INT(s2.file_tables, s1.file_tables);
	CHECK_INT(s2.kallsyms_reads, 1);
	CHECK_INT(s2.vdso_tables, s1.vdso_tables);
	CHECK(s2.file_hits >= s1.file_hits + s1.file_heads);
	/* and the frames are named: this binary's functions, libc's, the kernel's */
	if (cached[1]) {
		int64_t n = -1;

		CHECK_INT(sptd_store_query_int(cached[1], "SELECT count(*) FROM symbol WHERE name IN "
		                               "('symcache_test_leaf', 'symcache_test_mid')", &n), 0);
		CHECK_INT(n, 2);
		/* (an ASan build's libc calls pass through libasan's interceptors) */
		CHECK_INT(sptd_store_query_int(cached[1], SPTD_SANITIZED ?
		                               "SELECT count(*) FROM symbol y JOIN dso d ON d.id = "
		                               "y.dso_id WHERE d.path LIKE '%libc.so%' OR d.path LIKE "
		                               "'%libasan%'" :
		                               "SELECT count(*) FROM symbol y JOIN dso d ON d.id = "
		                               "y.dso_id WHERE d.path LIKE '%libc.so%'", &n), 0);
		CHECK(n >= 2);
		if (fr.kernel) {
			CHECK_INT(sptd_store_query_int(cached[1], "SELECT count(*) FROM symbol "
			                               "WHERE name = 'schedule'", &n), 0);
			CHECK_INT(n, 1);
		}
	}
	for (int i = 0; i < 2; i++) {
		sptd_store_destroy(cached[i]);
		sptd_store_destroy(plain[i]);
	}
	sptd_col_symcache_destroy(cache);
	kill(fr.child, SIGKILL);
	waitpid(fr.child, NULL, 0);
}

/* The head build-id the cache has for @path, "" none. */
static void cached_build_id(struct sptd_col_symcache *cache, const char *path, char *out,
                            size_t len)
{
	struct sptd_col_symcache_file *f = NULL;
	struct stat sb;
	const char *bid;

	out[0] = '\0';
	CHECK_INT(stat(path, &sb), 0);
	sptd_col_symcache_begin(cache);
	CHECK_INT(sptd_col_symcache_file(cache, 0, 0, 0, path, 0, (uint64_t)sb.st_ino, &f), 0);
	bid = f ? sptd_dec_symfile_build_id(sptd_col_symcache_file_head(f)) : NULL;
	snprintf(out, len, "%s", bid ? bid : "");
	/* its symbols load, and are those of that build */
	CHECK(f && sptd_col_symcache_file_syms(cache, f) != NULL);
	sptd_col_symcache_end(cache);
}

/* Flip one byte of the build-id note of @path in place, keeping its size
 * and mtime: only the build-id tells it changed. */
static int corrupt_build_id(const char *path, const char *hex)
{
	unsigned char want[64], *buf = NULL;
	size_t n = strlen(hex) / 2, len = 0;
	struct stat sb;
	struct timespec times[2];
	int fd, ret = -1;

	for (size_t i = 0; i < n && i < sizeof(want); i++)
		sscanf(hex + 2 * i, "%2hhx", &want[i]);
	if (stat(path, &sb) < 0 || !(buf = sptd_test_slurp(path, &len)))
		return -1;
	for (size_t i = 0; i + n <= len; i++) {
		if (memcmp(buf + i, want, n) != 0)
			continue;
		buf[i] ^= 0xff;
		fd = open(path, O_WRONLY);
		if (fd >= 0 && pwrite(fd, buf + i, 1, (off_t)i) == 1)
			ret = 0;
		if (fd >= 0)
			close(fd);
		break;
	}
	free(buf);
	times[0] = sb.st_atim;
	times[1] = sb.st_mtim;
	utimensat(AT_FDCWD, path, times, 0);
	return ret;
}

static void test_changed_files(const char *lib, const char *other)
{
	struct sptd_col_symcache *cache = NULL;
	struct sptd_col_symcache_stats st0, st1;
	char path[256], tmp[300], b1[130], b2[130], b3[130], b4[130], cmd[3 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/lib.so", dir);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", lib, path);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(sptd_col_symcache_create(1, &cache), 0);
	cached_build_id(cache, path, b1, sizeof(b1));
	CHECK(b1[0] != '\0');
	sptd_col_symcache_stats(cache, &st0);
	cached_build_id(cache, path, b2, sizeof(b2));
	sptd_col_symcache_stats(cache, &st1);
	CHECK_STR(b2, b1);
	CHECK_INT(st1.file_heads, st0.file_heads);   /* unchanged: a hit */
	/* replaced: another file renamed over the path */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && mv '%s' '%s'", other, tmp, tmp, path);
	CHECK_INT(system(cmd), 0);
	cached_build_id(cache, path, b3, sizeof(b3));
	CHECK(b3[0] && strcmp(b3, b1) != 0);
	/* rewritten in place (same inode): the old build back */
	snprintf(cmd, sizeof(cmd), "cat '%s' > '%s'", lib, path);
	CHECK_INT(system(cmd), 0);
	cached_build_id(cache, path, b4, sizeof(b4));
	CHECK_STR(b4, b1);
	/* same inode, size and mtime, another build-id: read again */
	CHECK_INT(corrupt_build_id(path, b1), 0);
	cached_build_id(cache, path, b4, sizeof(b4));
	CHECK(b4[0] && strcmp(b4, b1) != 0);
	/* invalid arguments */
	CHECK_INT(sptd_col_symcache_file(NULL, 0, 0, 0, path, 0, 0, NULL), -EINVAL);
	CHECK_INT(sptd_col_symcache_create(1, NULL), -EINVAL);
	CHECK(sptd_col_symcache_file_syms(cache, NULL) == NULL);
	CHECK(sptd_col_symcache_file_head(NULL) == NULL);
	CHECK(sptd_col_symcache_vdso(cache, 0, 0, 0) == NULL);
	sptd_col_symcache_destroy(cache);
	sptd_col_symcache_destroy(NULL);
}

int main(int argc, char **argv)
{
	int root = geteuid() == 0;
	char cmd[PATH_MAX + 16];

	if (argc < 3)
		SPTD_SKIP("usage: test_symcache LIBSPTDSYM OTHER_ELF");
	if (!root)
		fprintf(stderr, "note: not root: kernel frames (kallsyms) left out\n");
	CHECK(mkdtemp(dir) != NULL);
	test_same_rows(root);
	test_changed_files(argv[1], argv[2]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
	return SPTD_TEST_END();
}
