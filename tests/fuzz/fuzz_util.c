/* fuzz_util.c — helpers every harness links: scratch files, fixtures,
 * quiet log hooks, the session of a raw-PT input. */
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

/* One fixture image of the raw-PT inputs. */
struct rawpt_image {
	const char *rel;       /* path under the fixtures */
	uint64_t addr;         /* where a flat image goes; 0: ELF */
	void *bytes;           /* loaded on first use; NULL: missing */
	size_t len;
	char path[4096];       /* full path (ELF images load from it) */
};

static struct rawpt_image rawpt_images[] = {
	{ "real-pt/libxdc-foo/flat_7ffff7819000.img", 0x7ffff7819000ull, NULL, 0, "" },
	{ "real-pt/libxdc-unzip/flat_400000.img", 0x400000ull, NULL, 0, "" },
	{ "real-pt/drpt2trace-hello/hello", 0, NULL, 0, "" },
};
#define RAWPT_NIMAGES (sizeof(rawpt_images) / sizeof(rawpt_images[0]))

/* Image @i, loaded on first use; NULL when the fixture is missing. */
static struct rawpt_image *rawpt_image(unsigned i)
{
	static int loaded;

	if (!loaded) {
		for (size_t k = 0; k < RAWPT_NIMAGES; k++) {
			snprintf(rawpt_images[k].path, sizeof(rawpt_images[k].path), "%s/%s",
			         sptd_fuzz_fixtures(), rawpt_images[k].rel);
			rawpt_images[k].bytes = sptd_fuzz_read_file(rawpt_images[k].path,
			                                            &rawpt_images[k].len);
		}
		loaded = 1;
	}
	return i < RAWPT_NIMAGES && rawpt_images[i].bytes ? &rawpt_images[i] : NULL;
}

struct sptd_dec_session *sptd_fuzz_rawpt_session(const uint8_t *data, size_t size, int decoder)
{
	struct sptd_dec_config cfg;
	struct sptd_dec_session *s = NULL;
	const uint8_t *pt = data + SPTD_FUZZ_RAWPT_HEADER;
	size_t ptlen = size - SPTD_FUZZ_RAWPT_HEADER, half;
	struct rawpt_image *img;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	cfg.decoder = decoder;
	cfg.no_timing = data[1] & 1;
	if (data[1] & 2) {
		cfg.tsc_mult = (uint32_t)(data[6] | data[7] << 8);
		cfg.tsc_shift = data[5] & 63;
	} else if (data[1] & 4) {
		cfg.tsc_hz = 1000000ull * (1 + data[5]);
	}
	cfg.mtc_freq = data[2] & 15;
	cfg.nom_freq = data[3];
	if (data[4] % 3 == 1) {
		cfg.cpu_family = 6, cfg.cpu_model = 94, cfg.cpu_stepping = 3;
	} else if (data[4] % 3 == 2) {
		cfg.cpu_family = 6, cfg.cpu_model = 85, cfg.cpu_stepping = 4;
	}
	cfg.jobs = 1;
	ret = sptd_dec_session_create(&cfg, &s);
	FUZZ_CHECK(ret == 0, "session_create: %d", ret);
	img = rawpt_image(data[0] % 4);
	if (img) {
		if (img->addr)
			ret = sptd_dec_session_add_bytes(s, -1, "image", img->bytes, img->len,
			                                 img->addr, 1);
		else
			ret = sptd_dec_session_add_elf(s, -1, img->path, 0, 1);
		FUZZ_CHECK(ret == 0, "image %u: %d", data[0] % 4, ret);
	}
	if (data[1] & 16) {
		sptd_dec_session_add_task(s, 1, 1);
		sptd_dec_session_add_task(s, 2, 2);
		sptd_dec_session_add_switch(s, 0, 0, 0, 1);
		sptd_dec_session_add_switch(s, 1000, 0, 1, 2);
		sptd_dec_session_add_switch(s, 0, 1, 0, 2);
	}
	half = (data[1] & 8) ? ptlen / 2 : ptlen;
	if (half)
		FUZZ_CHECK(sptd_dec_session_add_pt(s, 0, pt, half) == 0, "add_pt cpu 0");
	if (ptlen > half)
		FUZZ_CHECK(sptd_dec_session_add_pt(s, 1, pt + half, ptlen - half) == 0,
		           "add_pt cpu 1");
	return s;
}
