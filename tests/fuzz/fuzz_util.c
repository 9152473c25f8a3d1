/* fuzz_util.c — helpers every harness links: scratch files, fixtures,
 * quiet log hooks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "sptd_col_base.h"
#include "sptd_dec.h"
#include "sptd_sched.h"

int sptd_fuzz_write_file(const char *path, const void *data, size_t size)
{
	const unsigned char *p = data;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	while (size) {
		ssize_t n = write(fd, p, size);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		p += n;
		size -= (size_t)n;
	}
	close(fd);
	return ret;
}

void *sptd_fuzz_read_file(const char *path, size_t *len)
{
	struct stat sb;
	unsigned char *buf = NULL;
	size_t done = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		goto fail;
	buf = malloc((size_t)sb.st_size + 1);
	if (!buf)
		goto fail;
	while (done < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)sb.st_size - done);

		if (n <= 0)
			goto fail;
		done += (size_t)n;
	}
	close(fd);
	*len = done;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

static char scratch[PATH_MAX];

/* Remove the scratch directory and what the harness left in it. */
static void scratch_remove(void)
{
	DIR *d = opendir(scratch);
	struct dirent *e;
	char path[PATH_MAX + 256];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", scratch, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(scratch);
}

const char *sptd_fuzz_scratch(void)
{
	const char *base;

	if (scratch[0])
		return scratch;
	base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(scratch, sizeof(scratch), "%s/sptd-fuzz.XXXXXX", base);
	if (!mkdtemp(scratch)) {
		fprintf(stderr, "fuzz: cannot make a scratch directory under %s: %s\n", base,
		        strerror(errno));
		abort();
	}
	atexit(scratch_remove);
	return scratch;
}

const char *sptd_fuzz_fixtures(void)
{
	const char *env = getenv("SPTD_FIXTURES");

	return env && *env ? env : SPTD_FUZZ_FIXTURES;
}

static void drop_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

/* SPTD_FUZZ_LOG=1: what the libraries say, to see why an input failed. */
static void print_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "log(%d): %s\n", level, msg);
}

void sptd_fuzz_quiet_logs(void)
{
	const char *env = getenv("SPTD_FUZZ_LOG");
	sptd_log_fn fn = env && *env == '1' ? print_log : drop_log;

	sptd_col_set_log(fn, NULL);
	sptd_sched_set_log(fn, NULL);
	sptd_dec_set_log(fn, NULL);
}
