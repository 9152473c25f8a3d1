/* test_sampler.c — the sampling source: sample record
 * parsing and window filtering over a hand-built ring, error paths through
 * a failing syscall table, and (as root) real cpu-clock events sampling a
 * busy function of this test, symbolized through symcap + derive. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include "sampling-local.h"
#include "record-local.h"
#include "sptd_store.h"
#include "sptd_test.h"

static char last_log[1024];

static void capture_log(void *ctx, int level, const char *msg)
{
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- no privileges needed ----------------------------------------------------- */

/* A PERF_RECORD_SAMPLE as the sampler lays it out, @nr chain entries. */
static size_t build_sample(uint64_t *rec, uint64_t ts, uint32_t cpu, uint32_t tid,
                           uint64_t nr, uint64_t first_ip)
{
	struct perf_event_header hdr = {
		.type = PERF_RECORD_SAMPLE,
		.size = (uint16_t)(8 * (6 + nr)),
	};
	uint32_t pidtid[2] = { tid, tid }, cpures[2] = { cpu, 0 };

	memcpy(&rec[0], &hdr, 8);
	rec[1] = first_ip;
	memcpy(&rec[2], pidtid, 8);
	rec[3] = ts;
	memcpy(&rec[4], cpures, 8);
	rec[5] = nr;
	for (uint64_t i = 0; i < nr; i++)
		rec[6 + i] = first_ip + i;
	return hdr.size;
}

static void test_sample_parse(void)
{
	uint64_t rec[16];
	struct sptd_col_sample s;
	size_t len = build_sample(rec, 12345, 1, 77, 3, 0x401000);

	CHECK_INT(sptd_col_sample_parse(rec, len, &s), 0);
	CHECK_INT(s.ts, 12345);
	CHECK_INT(s.cpu, 1);
	CHECK_INT(s.pid, 77);
	CHECK_INT(s.tid, 77);
	CHECK_INT(s.nr, 3);
	CHECK_INT(s.ips[2], 0x401002);
	/* truncated: chain claims more than the record holds */
	CHECK_INT(sptd_col_sample_parse(rec, len - 8, &s), -EBADMSG);
	CHECK_INT(sptd_col_sample_parse(rec, 20, &s), -EBADMSG);
	rec[5] = UINT64_MAX;
	CHECK_INT(sptd_col_sample_parse(rec, len, &s), -EBADMSG);
	/* another record type */
	((struct perf_event_header *)rec)->type = PERF_RECORD_LOST;
	CHECK_INT(sptd_col_sample_parse(rec, len, &s), -ENOMSG);
	CHECK_INT(sptd_col_sample_parse(NULL, len, &s), -EINVAL);
}

struct got {
	int n;
	int64_t ts[64];
	uint64_t ip0[64];
	int stop_after;
};

static int got_sample(void *ctx, const struct sptd_col_sample *s)
{
	struct got *g = ctx;

	if (g->n < 64) {
		g->ts[g->n] = s->ts;
		g->ip0[g->n] = s->nr ? s->ips[0] : 0;
	}
	g->n++;
	if (g->stop_after && g->n == g->stop_after)
		return -ECANCELED;
	return 0;
}

/* Samples at ts 100..1000 written the kernel's backward way, plus a LOST
 * record; read back oldest first, filtered by the window. */
static void test_sample_ring_read(void)
{
	static uint64_t ring[512]; /* 4 KiB */
	unsigned char *r = (unsigned char *)ring;
	uint64_t head = 0, rec[16];
	struct got g = { 0 };

	memset(ring, 0, sizeof(ring));
	for (int i = 1; i <= 10; i++) {
		size_t len = build_sample(rec, (uint64_t)i * 100, 0, 5, (uint64_t)(i % 4),
		                          0x1000 * (uint64_t)i);

		head -= len;
		for (size_t k = 0; k < len; k++)
			r[(head + k) % sizeof(ring)] = ((unsigned char *)rec)[k];
		if (i == 5) {
			struct perf_event_header lost = { .type = PERF_RECORD_LOST, .size = 24 };

			head -= 24;
			memset(rec, 0, 24);
			memcpy(rec, &lost, 8);
			for (size_t k = 0; k < 24; k++)
				r[(head + k) % sizeof(ring)] = ((unsigned char *)rec)[k];
		}
	}
	CHECK_INT(sptd_col_sample_ring_read(ring, sizeof(ring), head, INT64_MIN, INT64_MAX,
	                                    got_sample, &g), 10);
	CHECK_INT(g.n, 10);
	for (int i = 0; i < 10 && i < g.n; i++)
		CHECK_INT(g.ts[i], (i + 1) * 100);
	CHECK_INT(g.ip0[1], 0x2000);

	memset(&g, 0, sizeof(g));
	CHECK_INT(sptd_col_sample_ring_read(ring, sizeof(ring), head, 300, 700,
	                                    got_sample, &g), 5);
	CHECK_INT(g.ts[0], 300);
	CHECK_INT(g.ts[4], 700);

	memset(&g, 0, sizeof(g));
	g.stop_after = 2;
	CHECK_INT(sptd_col_sample_ring_read(ring, sizeof(ring), head, 0, 1000,
	                                    got_sample, &g), -ECANCELED);
	CHECK_INT(sptd_col_sample_ring_read(NULL, sizeof(ring), head, 0, 1, got_sample, &g),
	          -EINVAL);
	CHECK_INT(sptd_col_sample_ring_read(ring, sizeof(ring), head, 0, 1, NULL, &g), -EINVAL);
	CHECK_INT(sptd_col_sample_ring_read(ring, 100, head, 0, 1, got_sample, &g), -EINVAL);
	CHECK_INT(sptd_col_sample_parse(ring, 16, NULL), -EINVAL);
	CHECK(sptd_col_sampler_sample_type() == (SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_TID |
	      SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_CALLCHAIN));
}

/* ---- error paths through the syscall table -------------------------------------- */

static int fake_errno;

static int fake_open_fails(struct perf_event_attr *attr, pid_t pid, int cpu,
                           int group_fd, unsigned long flags)
{
	errno = fake_errno;
	return -1;
}

static ssize_t fake_cpus_missing(const char *path, char *buf, size_t len)
{
	return -ENOENT;
}

static int fake_opened, fake_closed;

static int fake_open_ok(struct perf_event_attr *attr, pid_t pid, int cpu,
                        int group_fd, unsigned long flags)
{
	/* the attributes the sampler promises */
	if (attr->type != PERF_TYPE_SOFTWARE || attr->config != PERF_COUNT_SW_CPU_CLOCK ||
	    !attr->write_backward || !attr->freq || attr->sample_freq != 1000 ||
	    pid != -1 || cpu < 0 || !attr->use_clockid || attr->sample_max_stack != 32 ||
	    attr->exclude_callchain_kernel || attr->exclude_callchain_user) {
		errno = EINVAL;
		return -1;
	}
	fake_opened++;
	return dup(0);
}

static void *fake_mmap_fails(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	errno = EPERM;
	return MAP_FAILED;
}

static int fake_close(int fd)
{
	fake_closed++;
	return close(fd);
}

static void test_errors(void)
{
	struct sptd_col_sampler_config cfg = {
		.freq = 1000, .ring_pages = 8, .use_clock = 1, .max_stack = 32,
	};
	struct sptd_col_sampler_config bad;
	struct sptd_col_sys saved = sptd_col_sys;
	struct sptd_col_sampler *s = (void *)1;

	CHECK_INT(sptd_col_sampler_create(NULL, &s), -EINVAL);
	CHECK(s == NULL);
	CHECK_INT(sptd_col_sampler_create(&cfg, NULL), -EINVAL);
	bad = cfg;
	bad.freq = 0;
	CHECK_INT(sptd_col_sampler_create(&bad, &s), -EINVAL);
	bad = cfg;
	bad.ring_pages = 3;
	CHECK_INT(sptd_col_sampler_create(&bad, &s), -EINVAL);
	bad = cfg;
	bad.max_stack = -1;
	CHECK_INT(sptd_col_sampler_create(&bad, &s), -EINVAL);
	CHECK_INT(sptd_col_sampler_pause(NULL, 1), -EINVAL);
	CHECK_INT(sptd_col_sampler_read(NULL, 0, 1, got_sample, NULL), -EINVAL);
	sptd_col_sampler_destroy(NULL);

	sptd_col_sys.perf_event_open = fake_open_fails;
	fake_errno = EACCES;
	last_log[0] = '\0';
	CHECK_INT(sptd_col_sampler_create(&cfg, &s), -EACCES);
	CHECK(s == NULL);
	CHECK(strstr(last_log, "perf_event_paranoid") != NULL);
	fake_errno = EMFILE;
	CHECK_INT(sptd_col_sampler_create(&cfg, &s), -EMFILE);
	CHECK(strstr(last_log, "ulimit") != NULL);
	fake_errno = ENOENT;
	CHECK_INT(sptd_col_sampler_create(&cfg, &s), -ENOENT);
	CHECK(strstr(last_log, "cpu-clock") != NULL);
	sptd_col_sys = saved;

	/* the ring cannot be mapped: the fd opened for it is closed again */
	sptd_col_sys.perf_event_open = fake_open_ok;
	sptd_col_sys.mmap = fake_mmap_fails;
	sptd_col_sys.close = fake_close;
	CHECK_INT(sptd_col_sampler_create(&cfg, &s), -EPERM);
	CHECK(s == NULL);
	CHECK_INT(fake_opened, 1);
	CHECK_INT(fake_closed, 1);
	CHECK(strstr(last_log, "perf_event_mlock_kb") != NULL);
	sptd_col_sys = saved;

	sptd_col_sys.read_file = fake_cpus_missing;
	CHECK_INT(sptd_col_sampler_create(&cfg, &s), -ENOENT);
	CHECK(strstr(last_log, "/sys/devices/system/cpu/online") != NULL);
	sptd_col_sys = saved;
}

/* ---- real perf events (root) ---------------------------------------------------- */

static volatile uint64_t busy_sink;

static __attribute__((noinline)) void sampler_test_busy_spin(int64_t until)
{
	uint64_t x = busy_sink;

	while (now_ns() < until) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		busy_sink = x;
	}
}

struct real {
	int64_t from, to;
	int64_t last_ts[1024];   /* per CPU */
	int n, own, out_of_window, not_monotonic, bad_cpu;
	pid_t tid;
	struct sptd_store *st;   /* when symbolizing */
	struct sptd_col_symcap *cap;
	int store_err;
};

static int real_sample(void *ctx, const struct sptd_col_sample *s)
{
	struct real *r = ctx;

	r->n++;
	if (s->ts < r->from || s->ts > r->to)
		r->out_of_window++;
	if (s->cpu < 0 || s->cpu >= 1024) {
		r->bad_cpu++;
		return 0;
	}
	if (s->ts < r->last_ts[s->cpu])
		r->not_monotonic++;
	r->last_ts[s->cpu] = s->ts;
	if (s->tid == r->tid)
		r->own++;
	if (r->st && s->tid == r->tid) {
		if (SPTD_STORE_ADD(r->st, raw_sample, s->ts, s->cpu, s->pid, s->tid,
		                   s->ips, s->nr, SPTD_RAW_SAMPLE_CLOCK, NULL, 0) < 0)
			r->store_err++;
		for (uint64_t i = 0; i < s->nr; i++)
			if (s->ips[i] < PERF_CONTEXT_MAX &&
			    sptd_col_symcap_addr(r->cap, s->pid, s->ips[i], s->ts) < 0)
				r->store_err++;
	}
	return 0;
}

static void test_real(void)
{
	struct sptd_col_sampler_config cfg = {
		.freq = 10000, .ring_pages = 64, .use_clock = 1, .max_stack = 64,
	};
	struct sptd_col_sampler *s = NULL;
	struct sptd_col_tasks *tasks = NULL;
	struct real r;
	char dir[] = "/tmp/sptd-sampler-XXXXXX", path[64];
	int64_t start, end, count = 0;
	int ret, full;

	ret = sptd_col_sampler_create(&cfg, &s);
	if (ret == -EACCES || ret == -EPERM || ret == -ENOENT)
		SPTD_SKIP("perf_event_open refused (%s): %s", strerror(-ret), last_log);
	CHECK_INT(ret, 0);
	if (!s)
		return;
	start = now_ns();
	sampler_test_busy_spin(start + 200 * 1000000ll);
	end = now_ns();
	CHECK_INT(sptd_col_sampler_pause(s, 1), 0);

	memset(&r, 0, sizeof(r));
	r.from = start;
	r.to = end;
	r.tid = gettid();
	full = sptd_col_sampler_read(s, start, end, real_sample, &r);
	CHECK(full > 0);
	CHECK_INT(full, r.n);
	/* 200 ms at 10 kHz is ~2000 samples on our CPU; a busy VM may lose
	 * some, never most */
	CHECK(r.own > 100);
	CHECK_INT(r.out_of_window, 0);
	CHECK_INT(r.not_monotonic, 0);
	CHECK_INT(r.bad_cpu, 0);

	/* a narrower window delivers a subset, all inside it */
	memset(&r, 0, sizeof(r));
	r.from = start + 150 * 1000000ll;
	r.to = end;
	r.tid = gettid();
	ret = sptd_col_sampler_read(s, r.from, r.to, real_sample, &r);
	CHECK(ret > 0 && ret < full);
	CHECK_INT(r.out_of_window, 0);
	CHECK_INT(sptd_col_sampler_read(s, 10, 5, real_sample, &r), -EINVAL);

	/* symbolize our own samples: symcap + derive must name the function */
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/incident.db", dir);
	memset(&r, 0, sizeof(r));
	r.from = start;
	r.to = end;
	r.tid = gettid();
	CHECK_INT(sptd_store_create(path, &r.st), 0);
	if (r.st) {
		CHECK_INT(sptd_col_symcap_create(r.st, NULL, &r.cap), 0);
		CHECK_INT(sptd_col_symcap_task(r.cap, getpid()), 0);
		CHECK(sptd_col_sampler_read(s, start, end, real_sample, &r) > 0);
		CHECK_INT(r.store_err, 0);
		CHECK_INT(sptd_col_symcap_finish(r.cap), 0);
		CHECK_INT(sptd_col_tasks_create(&tasks), 0);
		CHECK_INT(sptd_col_derive_samples(r.st, tasks), 0);
		CHECK_INT(sptd_store_query_int(r.st,
			"SELECT count(*) FROM sample s JOIN callsite c ON c.id = s.callsite_id "
			"JOIN symbol y ON y.id = c.symbol_id "
			"WHERE y.name = 'sampler_test_busy_spin'", &count), 0);
		fprintf(stderr, "note: %d samples of this thread, %" PRId64
		        " attributed to sampler_test_busy_spin\n", r.own, count);
		/* most of our samples hit the spin itself (the rest: now_ns/vdso) */
		CHECK(count > r.own / 4);
		sptd_col_tasks_destroy(tasks);
		sptd_col_symcap_destroy(r.cap);
		sptd_store_destroy(r.st);
	}
	rmdir(dir);

	CHECK_INT(sptd_col_sampler_pause(s, 0), 0);
	sptd_col_sampler_destroy(s);
}

int main(void)
{
	sptd_col_set_log(capture_log, NULL);
	test_sample_parse();
	test_sample_ring_read();
	test_errors();
	/* what ran must still pass; the rest is a skip, not a pass */
	if (geteuid() != 0)
		SPTD_SKIP_PART("real perf events: needs root (CI runs as root)");
	else
		test_real();
	return SPTD_TEST_END();
}
