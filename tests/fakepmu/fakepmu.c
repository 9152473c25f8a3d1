/* fakepmu.c — see fakepmu.h.  Written to perf_event_open(2)'s contract:
 * user page first (data_offset/data_size, time_* fields), data pages after;
 * the AUX ring is mapped at the user page's aux_offset with aux_size bytes;
 * a read-only AUX mapping means overwrite mode; write_backward rings grow
 * downwards from head 0. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <x86intrin.h>
#include <unistd.h>

#include "fakepmu.h"
#include "sptd_col_perf.h"

#define MAX_EVENTS 256

struct fake_event {
	int fd;                        /* real fd (of /dev/null) standing for it */
	int open;                      /* 1 until closed */
	int cpu;
	int is_pt;                     /* intel_pt, else the dummy or a group sibling */
	int is_dummy;                  /* the sideband dummy */
	int group_fd;                  /* group leader's fd as passed (-1 none) */
	struct perf_event_attr attr;   /* as opened */
	unsigned char *base;           /* user page + data */
	size_t len;
	unsigned char *aux;            /* AUX ring */
	size_t aux_len;
	uint64_t aux_written;          /* bytes ever written to the AUX ring */
	int enabled, ran, paused;
};

static struct fake_event events[MAX_EVENTS];
static int nevents;
static struct sptd_col_sys saved;
static int fake_type, fail_errno, counter_head, maps_bad, fail_grouped;
static int clock_set;                /* 1: clock_* below replace the default */
static uint64_t clock_zero;          /* time_zero offered */
static uint32_t clock_mult;          /* time_mult offered */
static uint16_t clock_shift;         /* time_shift offered */
static const struct fakepmu_script *scripts;
static int nscripts;

/* ---- sysfs ------------------------------------------------------------------- */

static int put(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", text);
	fclose(f);
	return 0;
}

static int mkdirs(const char *path)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s", path);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	return mkdir(buf, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

int fakepmu_sysfs(const char *root, enum fakepmu_gen gen, int type)
{
	static const char *const std_fmt[][2] = {
		{ "pt", "config:0" }, { "cyc", "config:1" }, { "pwr_evt", "config:4" },
		{ "fup_on_ptw", "config:5" },
		{ "mtc", "config:9" }, { "tsc", "config:10" }, { "noretcomp", "config:11" },
		{ "ptw", "config:12" }, { "branch", "config:13" }, { "mtc_period", "config:14-17" },
		{ "cyc_thresh", "config:19-22" }, { "psb_period", "config:24-27" },
	};
	static const char *const odd_fmt[][2] = {
		{ "pt", "config:0" }, { "cyc", "config:5" }, { "mtc", "config:7" },
		{ "tsc", "config:40" }, { "noretcomp", "config1:63" }, { "branch", "config:2" },
		{ "mtc_period", "config1:3,8-10" }, { "cyc_thresh", "config2:0-3" },
		{ "psb_period", "config:50-53" },
	};
	char dev[900], fmt[1000], caps[1000], buf[32];
	int ret, n;

	n = snprintf(dev, sizeof(dev), "%s/bus/event_source/devices/intel_pt", root);
	if (n < 0 || (size_t)n >= sizeof(dev))
		return -ENAMETOOLONG;
	snprintf(fmt, sizeof(fmt), "%s/format", dev);
	snprintf(caps, sizeof(caps), "%s/caps", dev);
	if ((ret = mkdirs(fmt)) < 0 || (ret = mkdirs(caps)) < 0)
		return ret;
	snprintf(buf, sizeof(buf), "%d", type);
	put(dev, "type", buf);
	if (gen == FAKEPMU_ODD) {
		for (size_t i = 0; i < sizeof(odd_fmt) / sizeof(odd_fmt[0]); i++)
			put(fmt, odd_fmt[i][0], odd_fmt[i][1]);
	} else {
		for (size_t i = 0; i < sizeof(std_fmt) / sizeof(std_fmt[0]); i++)
			if (gen != FAKEPMU_NOTSC || strcmp(std_fmt[i][0], "tsc") != 0)
				put(fmt, std_fmt[i][0], std_fmt[i][1]);
	}
	put(caps, "psb_cyc", gen >= FAKEPMU_SKYLAKE ? "1" : "0");
	put(caps, "mtc", gen >= FAKEPMU_BROADWELL ? "1" : "0");
	put(caps, "mtc_periods", gen >= FAKEPMU_BROADWELL ? "249" : "0");
	put(caps, "cyc_thresholds", gen >= FAKEPMU_SKYLAKE ? "3fff" : "0");
	put(caps, "psb_periods", gen >= FAKEPMU_SKYLAKE ? "3f" : "0");
	put(caps, "topa_output", "1");
	put(caps, "topa_multiple_entries", gen >= FAKEPMU_BROADWELL ? "1" : "0");
	put(caps, "single_range_output", "0");
	put(caps, "ip_filtering", gen >= FAKEPMU_SKYLAKE ? "1" : "0");
	put(caps, "max_nonturbo_ratio", gen >= FAKEPMU_SKYLAKE ? "34" : "0");
	put(caps, "tsc_art_ratio", gen >= FAKEPMU_SKYLAKE ? "284:2" : "0:0");
	return 0;
}

int fakepmu_sysfs_cap(const char *root, const char *name, const char *value)
{
	char caps[1100];

	if (!root || !name || !value || strchr(name, '/'))
		return -EINVAL;
	snprintf(caps, sizeof(caps), "%s/bus/event_source/devices/intel_pt/caps", root);
	return put(caps, name, value);
}

/* ---- records --------------------------------------------------------------------- */

static size_t rec_put(unsigned char *buf, size_t len, size_t cap, uint32_t type, uint16_t misc,
                      const void *body, size_t blen, int pid, int tid, uint64_t time, int cpu)
{
	struct perf_event_header h;
	size_t size = sizeof(h) + ((blen + 7) & ~(size_t)7) + 24;
	uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid }, cpus[2] = { (uint32_t)cpu, 0 };
	unsigned char *p;

	if (len + size > cap)
		return len;
	p = buf + len;
	memset(p, 0, size);
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)size;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), body, blen);
	p += size - 24;
	memcpy(p, ids, 8);
	memcpy(p + 8, &time, 8);
	memcpy(p + 16, cpus, 8);
	return len + size;
}

size_t fakepmu_rec_comm(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                        const char *comm, uint64_t time, int cpu)
{
	unsigned char body[64] = { 0 };
	uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid };
	size_t n = strlen(comm) + 1;

	memcpy(body, ids, 8);
	memcpy(body + 8, comm, n > 40 ? 40 : n);
	return rec_put(buf, len, cap, PERF_RECORD_COMM, 0, body, 8 + n, pid, tid, time, cpu);
}

size_t fakepmu_rec_mmap2(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                         uint64_t addr, uint64_t size, uint64_t pgoff, const char *file,
                         uint64_t time, int cpu)
{
	unsigned char body[64 + 256] = { 0 };
	uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid }, prot = PROT_READ | PROT_EXEC, flags = MAP_PRIVATE;
	struct stat sb;
	size_t n = strlen(file) + 1;

	if (n > 256)
		n = 256;
	memcpy(body, ids, 8);
	memcpy(body + 8, &addr, 8);
	memcpy(body + 16, &size, 8);
	memcpy(body + 24, &pgoff, 8);
	/* the device and inode, as the kernel gives them for a file (the
	 * recorder reads the path only when it is still that inode) */
	if (file[0] == '/' && stat(file, &sb) == 0) {
		uint32_t maj = major(sb.st_dev), min = minor(sb.st_dev);
		uint64_t ino = sb.st_ino;

		memcpy(body + 32, &maj, 4);
		memcpy(body + 36, &min, 4);
		memcpy(body + 40, &ino, 8);
	}
	memcpy(body + 56, &prot, 4);
	memcpy(body + 60, &flags, 4);
	memcpy(body + 64, file, n);
	return rec_put(buf, len, cap, PERF_RECORD_MMAP2, 0, body, 64 + n, pid, tid, time, cpu);
}

size_t fakepmu_rec_switch(unsigned char *buf, size_t len, size_t cap, int out, int pid,
                          int tid, int other_pid, int other_tid, uint64_t time, int cpu)
{
	uint32_t body[2] = { (uint32_t)other_pid, (uint32_t)other_tid };

	return rec_put(buf, len, cap, PERF_RECORD_SWITCH_CPU_WIDE,
	               out ? PERF_RECORD_MISC_SWITCH_OUT : 0, body, 8, pid, tid, time, cpu);
}

size_t fakepmu_rec_lost(unsigned char *buf, size_t len, size_t cap, uint64_t lost,
                        uint64_t time, int cpu)
{
	uint64_t body[2] = { 0, lost };

	return rec_put(buf, len, cap, PERF_RECORD_LOST, 0, body, 16, -1, -1, time, cpu);
}

size_t fakepmu_rec_aux(unsigned char *buf, size_t len, size_t cap, uint64_t off,
                       uint64_t size, uint64_t flags, uint64_t time, int cpu)
{
	uint64_t body[3] = { off, size, flags };

	return rec_put(buf, len, cap, PERF_RECORD_AUX, 0, body, 24, -1, -1, time, cpu);
}

size_t fakepmu_rec_itrace(unsigned char *buf, size_t len, size_t cap, int pid, int tid,
                          uint64_t time, int cpu)
{
	uint32_t body[2] = { (uint32_t)pid, (uint32_t)tid };

	return rec_put(buf, len, cap, PERF_RECORD_ITRACE_START, 0, body, 8, pid, tid, time, cpu);
}

/* ---- the fake calls ------------------------------------------------------------- */

static struct fake_event *by_fd(int fd)
{
	for (int i = 0; i < nevents; i++)
		if (events[i].open && events[i].fd == fd)
			return &events[i];
	return NULL;
}

static int fake_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                     unsigned long flags)
{
	struct fake_event *e;
	int is_pt = (int)attr->type == fake_type;
	int is_dummy = attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_DUMMY;

	struct fake_event *leader = group_fd >= 0 ? by_fd(group_fd) : NULL;

	if (!is_pt && !is_dummy && !leader)
		return saved.perf_event_open(attr, pid, cpu, group_fd, flags);
	if (leader && (fail_grouped || leader->cpu != cpu)) {
		errno = fail_grouped ? fail_grouped : EINVAL;
		return -1;
	}
	if (is_pt && fail_errno) {
		errno = fail_errno;
		fail_errno = 0;
		return -1;
	}
	if (nevents == MAX_EVENTS || pid != -1 || cpu < 0) {
		errno = EINVAL;
		return -1;
	}
	e = &events[nevents];
	memset(e, 0, sizeof(*e));
	e->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -1;
	e->open = 1;
	e->cpu = cpu;
	e->is_pt = is_pt;
	e->is_dummy = is_dummy;
	e->group_fd = group_fd;
	e->attr = *attr;
	nevents++;
	return e->fd;
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct fake_event *e = by_fd(fd);
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	if (!e)
		return saved.mmap(addr, len, prot, flags, fd, off);
	if (off == 0) {
		struct perf_event_mmap_page *pg;
		size_t pages = len / (size_t)page - 1;

		if (len % (size_t)page || (pages & (pages - 1)) || e->base) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (posix_memalign(&mem, (size_t)page, len))
			return MAP_FAILED;
		memset(mem, 0, len);
		pg = mem;
		pg->data_offset = (uint64_t)page;
		pg->data_size = len - (size_t)page;
		pg->cap_user_time_zero = 1;
		/* perf clock = time_zero + tsc / 2, with time_zero chosen so
		 * that it reads about CLOCK_MONOTONIC now, as on a real host */
		{
			struct timespec ts;
			uint64_t tsc = __rdtsc();

			clock_gettime(CLOCK_MONOTONIC, &ts);
			pg->time_zero = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - tsc / 2;
		}
		pg->time_mult = 1u << 30;
		pg->time_shift = 31;
		if (clock_set) {
			pg->time_zero = clock_zero;
			pg->time_mult = clock_mult;
			pg->time_shift = clock_shift;
		}
		if (e->is_dummy && (prot & PROT_WRITE))
			maps_bad = 1;   /* the sideband ring must be overwrite (read-only) */
		e->base = mem;
		e->len = len;
		return mem;
	}
	{
		struct perf_event_mmap_page *pg = (void *)e->base;
		size_t pages = len / (size_t)page;

		if (!e->is_pt || !pg || (uint64_t)off != pg->aux_offset || len != pg->aux_size ||
		    len % (size_t)page || (pages & (pages - 1)) || e->aux) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (prot & PROT_WRITE)
			maps_bad = 1;   /* sysptd wants overwrite (snapshot) mode */
		if (posix_memalign(&mem, (size_t)page, len))
			return MAP_FAILED;
		memset(mem, 0, len);
		e->aux = mem;
		e->aux_len = len;
		return mem;
	}
}

static int fake_munmap(void *addr, size_t len)
{
	for (int i = 0; i < nevents; i++) {
		if (events[i].base == addr) {
			free(events[i].base);
			events[i].base = NULL;
			return 0;
		}
		if (events[i].aux == addr) {
			free(events[i].aux);
			events[i].aux = NULL;
			return 0;
		}
	}
	return saved.munmap(addr, len);
}

/* Append one record to a forward data ring. */
static void forward_put(struct fake_event *e, const unsigned char *rec, size_t len)
{
	struct perf_event_mmap_page *pg = (void *)e->base;
	uint64_t size = pg->data_size;

	for (size_t i = 0; i < len; i++)
		e->base[pg->data_offset + (pg->data_head + i) % size] = rec[i];
	__atomic_store_n(&pg->data_head, pg->data_head + len, __ATOMIC_RELEASE);
}

/* Write @len record bytes into a backward ring: head moves down first. */
static void backward_put(struct fake_event *e, const unsigned char *rec, size_t len)
{
	struct perf_event_mmap_page *pg = (void *)e->base;
	uint64_t size = pg->data_size, head = pg->data_head - len;

	for (size_t i = 0; i < len; i++)
		e->base[pg->data_offset + (head + i) % size] = rec[i];
	__atomic_store_n(&pg->data_head, head, __ATOMIC_RELEASE);
}

/* The hardware ran: stream the script's PT into the AUX ring, then (as the
 * kernel does on stop) publish aux_head and an AUX record. */
static void pt_run(struct fake_event *e)
{
	const struct fakepmu_script *s = e->cpu < nscripts ? &scripts[e->cpu] : NULL;
	struct perf_event_mmap_page *pg = (void *)e->base;
	unsigned char rec[64];
	uint64_t start = e->aux_written, flags = PERF_AUX_FLAG_OVERWRITE;
	size_t n;

	if (!s || !e->aux)
		return;
	for (size_t i = 0; i < s->pt_len; i++) {
		if (s->drop_len && i >= s->drop_at && i < s->drop_at + s->drop_len)
			continue;
		e->aux[e->aux_written % e->aux_len] = s->pt[i];
		e->aux_written++;
	}
	if (s->drop_len)
		flags |= PERF_AUX_FLAG_TRUNCATED;
	pg->aux_head = counter_head ? e->aux_written : e->aux_written % e->aux_len;
	n = fakepmu_rec_aux(rec, 0, sizeof(rec), start % e->aux_len, e->aux_written - start,
	                    flags, s->aux_time, e->cpu);
	forward_put(e, rec, n);
}

static void sideband_run(struct fake_event *e)
{
	const struct fakepmu_script *s = e->cpu < nscripts ? &scripts[e->cpu] : NULL;
	size_t off = 0;

	if (!s || !s->sb)
		return;
	while (off + sizeof(struct perf_event_header) <= s->sb_len) {
		struct perf_event_header h;

		memcpy(&h, s->sb + off, sizeof(h));
		if (h.size == 0)
			break;
		backward_put(e, s->sb + off, h.size);
		off += h.size;
	}
}

static int fake_ioctl(int fd, unsigned long req, unsigned long arg)
{
	struct fake_event *e = by_fd(fd);

	if (!e)
		return saved.ioctl(fd, req, arg);
	switch (req) {
	case PERF_EVENT_IOC_ENABLE:
		if (!e->enabled && !e->ran && e->is_dummy && !e->paused && e->base)
			sideband_run(e);
		if (e->is_dummy)
			e->ran = 1;
		e->enabled = 1;
		return 0;
	case PERF_EVENT_IOC_DISABLE:
		if (e->enabled && e->is_pt && !e->ran) {
			pt_run(e);
			e->ran = 1;
		}
		e->enabled = 0;
		return 0;
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
		e->paused = arg != 0;
		return 0;
	case PERF_EVENT_IOC_SET_FILTER:
		return 0;
	default:
		errno = ENOTTY;
		return -1;
	}
}

static int fake_close(int fd)
{
	struct fake_event *e = by_fd(fd);

	if (!e)
		return saved.close(fd);
	e->open = 0;
	return close(fd);
}

void fakepmu_serve(int type, const struct fakepmu_script *s, int n, int head_is_counter,
                   const struct sptd_col_sys *real, struct sptd_col_sys *fake)
{
	saved = *real;
	fake_type = type;
	scripts = s;
	nscripts = n;
	counter_head = head_is_counter;
	nevents = 0;
	fail_grouped = 0;
	maps_bad = 0;
	clock_set = 0;
	*fake = *real;
	fake->perf_event_open = fake_open;
	fake->mmap = fake_mmap;
	fake->munmap = fake_munmap;
	fake->ioctl = fake_ioctl;
	fake->close = fake_close;
}

void fakepmu_set_clock(uint64_t time_zero, uint32_t mult, uint16_t shift)
{
	clock_set = 1;
	clock_zero = time_zero;
	clock_mult = mult;
	clock_shift = shift;
}

/* The preload (FAKEPMU_PRELOAD) serves the calls without sptd_col, whose
 * table it cannot reach inside another program. */
#ifndef FAKEPMU_PRELOAD
static int installed;                /* 1: sptd_col_sys holds the fake */

void fakepmu_install(int type, const struct fakepmu_script *s, int n, int head_is_counter)
{
	struct sptd_col_sys real = installed ? saved : sptd_col_sys;

	installed = 1;
	fakepmu_serve(type, s, n, head_is_counter, &real, &sptd_col_sys);
}

void fakepmu_uninstall(void)
{
	for (int i = 0; i < nevents; i++) {
		free(events[i].base);
		free(events[i].aux);
		if (events[i].open)
			close(events[i].fd);
	}
	nevents = 0;
	if (installed)
		sptd_col_sys = saved;
	installed = 0;
}
#endif

void fakepmu_fail_open(int err)
{
	fail_errno = err;
}

void fakepmu_fail_grouped(int err)
{
	fail_grouped = err;
}

int fakepmu_group_fd(int i)
{
	return i < 0 || i >= nevents ? -1 : events[i].group_fd;
}

int fakepmu_event_fd(int i)
{
	return i < 0 || i >= nevents ? -1 : events[i].fd;
}

const struct perf_event_attr *fakepmu_attr(int i, int *cpu)
{
	if (i < 0 || i >= nevents)
		return NULL;
	if (cpu)
		*cpu = events[i].cpu;
	return &events[i].attr;
}

int fakepmu_open_count(void)
{
	int n = 0;

	for (int i = 0; i < nevents; i++)
		n += events[i].open;
	return n;
}

int fakepmu_maps_ok(void)
{
	return !maps_bad;
}
