/* test_perf_event.c — collector/perf's event API (event.c) and mapped
 * rings (ring_map.c) against a fake syscall table: each sysptd event
 * description becomes exactly the perf_event_attr the kernel expects
 * (table-driven), ioctls carry the right request and argument, errors come
 * back as -errno, the control page's fields are read and written as
 * perf_event_open(2) says, a trigger's event works end to end, and every
 * public function refuses bad arguments. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "perf-local.h"
#include "sptd_test.h"

/* ---- the fake syscalls ---------------------------------------------------------- */

static struct perf_event_attr last_attr;   /* attr of the last open */
static int last_cpu, last_group, last_pid;  /* its other arguments */
static unsigned long last_flags;            /* its flags */
static int open_errno;                      /* 0: succeed with fd 42 */
static unsigned long last_req, last_arg;    /* last ioctl */
static int ioctl_errno;                     /* 0: succeed */
static int mmap_errno;                      /* 0: succeed (heap memory) */
static int last_prot;                       /* prot of the last mmap */
static off_t last_off;                      /* offset of the last mmap */
static int munmaps;                         /* munmap calls */
static const char *file_text;               /* what read_file returns; NULL: ENOENT */
static char last_path[256];                 /* path read */

static int fake_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                     unsigned long flags)
{
	last_attr = *attr;
	last_pid = pid;
	last_cpu = cpu;
	last_group = group_fd;
	last_flags = flags;
	if (open_errno) {
		errno = open_errno;
		return -1;
	}
	return 42;
}

static int fake_ioctl(int fd, unsigned long req, unsigned long arg)
{
	(void)fd;
	last_req = req;
	last_arg = arg;
	if (ioctl_errno) {
		errno = ioctl_errno;
		return -1;
	}
	return 0;
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *mem;

	(void)addr, (void)flags, (void)fd;
	last_prot = prot;
	last_off = off;
	if (mmap_errno) {
		errno = mmap_errno;
		return MAP_FAILED;
	}
	mem = calloc(1, len);
	return mem ? mem : MAP_FAILED;
}

static int fake_munmap(void *addr, size_t len)
{
	(void)len;
	free(addr);
	munmaps++;
	return 0;
}

static ssize_t fake_read_file(const char *path, char *buf, size_t len)
{
	snprintf(last_path, sizeof(last_path), "%s", path);
	if (!file_text)
		return -ENOENT;
	snprintf(buf, len, "%s", file_text);
	return (ssize_t)strlen(buf);
}

static struct sptd_col_sys saved;

static void fake_install(void)
{
	saved = sptd_col_sys;
	sptd_col_sys.perf_event_open = fake_open;
	sptd_col_sys.ioctl = fake_ioctl;
	sptd_col_sys.mmap = fake_mmap;
	sptd_col_sys.munmap = fake_munmap;
	sptd_col_sys.read_file = fake_read_file;
}

/* ---- events: description -> attr -------------------------------------------------- */

/* The aux_action u32 after aux_sample_size (__reserved_3 in older headers). */
static uint32_t aux_action_of(const struct perf_event_attr *a)
{
	uint32_t v;

	memcpy(&v, (const char *)a + offsetof(struct perf_event_attr, aux_sample_size) + 4, 4);
	return v;
}

static void test_attr_flags(void)
{
	/* each flag bit alone sets exactly its attr bit */
	static const struct {
		uint32_t flag;
		const char *name;
	} flags[] = {
		{ SPTD_PERF_EV_DISABLED, "disabled" },
		{ SPTD_PERF_EV_FREQ, "freq" },
		{ SPTD_PERF_EV_EXCLUDE_KERNEL, "exclude_kernel" },
		{ SPTD_PERF_EV_EXCLUDE_HV, "exclude_hv" },
		{ SPTD_PERF_EV_EXCLUDE_CALLCHAIN_KERNEL, "exclude_callchain_kernel" },
		{ SPTD_PERF_EV_SAMPLE_ID_ALL, "sample_id_all" },
		{ SPTD_PERF_EV_WRITE_BACKWARD, "write_backward" },
		{ SPTD_PERF_EV_MMAP, "mmap" },
		{ SPTD_PERF_EV_MMAP2, "mmap2" },
		{ SPTD_PERF_EV_COMM, "comm" },
		{ SPTD_PERF_EV_COMM_EXEC, "comm_exec" },
		{ SPTD_PERF_EV_TASK, "task" },
		{ SPTD_PERF_EV_CONTEXT_SWITCH, "context_switch" },
		{ SPTD_PERF_EV_WATERMARK, "watermark" },
		{ SPTD_PERF_EV_USE_CLOCKID, "use_clockid" },
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct sptd_col_perf_event ev = { .flags = flags[i].flag };
		struct perf_event_attr want;
		const char *name = flags[i].name;

		memset(&want, 0, sizeof(want));
		want.size = sizeof(want);
		want.disabled = strcmp(name, "disabled") == 0;
		want.freq = strcmp(name, "freq") == 0;
		want.exclude_kernel = strcmp(name, "exclude_kernel") == 0;
		want.exclude_hv = strcmp(name, "exclude_hv") == 0;
		want.exclude_callchain_kernel = strcmp(name, "exclude_callchain_kernel") == 0;
		want.sample_id_all = strcmp(name, "sample_id_all") == 0;
		want.write_backward = strcmp(name, "write_backward") == 0;
		want.mmap = strcmp(name, "mmap") == 0;
		want.mmap2 = strcmp(name, "mmap2") == 0;
		want.comm = strcmp(name, "comm") == 0;
		want.comm_exec = strcmp(name, "comm_exec") == 0;
		want.task = strcmp(name, "task") == 0;
		want.context_switch = strcmp(name, "context_switch") == 0;
		want.watermark = strcmp(name, "watermark") == 0;
		want.use_clockid = strcmp(name, "use_clockid") == 0;
		CHECK_INT(sptd_col_perf_event_open(&ev, -1, 0, -1), 42);
		if (memcmp(&last_attr, &want, sizeof(want)) != 0) {
			fprintf(stderr, "  flag %s: attr differs\n", name);
			CHECK(0);
		}
	}
}

/* The events sysptd opens, each against the attr the old hand-written
 * code built (perf_event_open(2) for the fields). */
static void test_attr_events(void)
{
	struct sptd_col_perf_event ev;
	const char *path = "/usr/bin/prog";

	/* the sampler: cpu-clock, kernel+user chains, overwrite ring */
	ev = (struct sptd_col_perf_event){
		.type = SPTD_PERF_TYPE_SOFTWARE,
		.config = { SPTD_PERF_COUNT_SW_CPU_CLOCK },
		.period = 4000,
		.sample_type = SPTD_PERF_SAMPLE_IP | SPTD_PERF_SAMPLE_CALLCHAIN,
		.flags = SPTD_PERF_EV_FREQ | SPTD_PERF_EV_EXCLUDE_HV | SPTD_PERF_EV_WRITE_BACKWARD |
		         SPTD_PERF_EV_USE_CLOCKID,
		.clockid = CLOCK_MONOTONIC,
		.max_stack = 127,
	};
	CHECK_INT(sptd_col_perf_event_open(&ev, -1, 3, -1), 42);
	CHECK_INT(last_attr.size, sizeof(last_attr));
	CHECK_INT(last_attr.type, PERF_TYPE_SOFTWARE);
	CHECK_INT(last_attr.config, PERF_COUNT_SW_CPU_CLOCK);
	CHECK_INT(last_attr.freq, 1);
	CHECK_INT(last_attr.sample_freq, 4000);
	CHECK_INT(last_attr.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN);
	CHECK_INT(last_attr.exclude_hv, 1);
	CHECK_INT(last_attr.write_backward, 1);
	CHECK_INT(last_attr.use_clockid, 1);
	CHECK_INT(last_attr.clockid, CLOCK_MONOTONIC);
	CHECK_INT(last_attr.sample_max_stack, 127);
	CHECK_INT(last_attr.disabled, 0);
	CHECK_INT(last_pid, -1);
	CHECK_INT(last_cpu, 3);
	CHECK_INT(last_group, -1);
	CHECK_INT(last_flags, PERF_FLAG_FD_CLOEXEC);

	/* a PMU event with three config words and a period */
	ev = (struct sptd_col_perf_event){
		.type = 9, .config = { 0x2401, 0x5, 0x7 }, .period = 1,
		.sample_type = SPTD_PERF_SAMPLE_TID, .read_format = SPTD_PERF_FORMAT_ID,
		.flags = SPTD_PERF_EV_DISABLED,
	};
	CHECK_INT(sptd_col_perf_event_open(&ev, -1, 0, -1), 42);
	CHECK_INT(last_attr.type, 9);
	CHECK_INT(last_attr.config, 0x2401);
	CHECK_INT(last_attr.config1, 0x5);
	CHECK_INT(last_attr.config2, 0x7);
	CHECK_INT(last_attr.freq, 0);
	CHECK_INT(last_attr.sample_period, 1);
	CHECK_INT(last_attr.read_format, PERF_FORMAT_ID);
	CHECK_INT(last_attr.disabled, 1);
	CHECK_INT(aux_action_of(&last_attr), 0);

	/* a trigger's tracepoint: sibling of a leader, pausing AUX, woken per
	 * half ring */
	sptd_col_perf_event_tracepoint(&ev, 321);
	ev.sample_type = SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_RAW;
	ev.flags = SPTD_PERF_EV_DISABLED | SPTD_PERF_EV_WATERMARK;
	ev.wakeup = 4096;
	ev.aux_action = SPTD_PERF_AUX_PAUSE;
	CHECK_INT(sptd_col_perf_event_open(&ev, -1, 2, 17), 42);
	CHECK_INT(last_attr.type, PERF_TYPE_TRACEPOINT);
	CHECK_INT(last_attr.config, 321);
	CHECK_INT(last_attr.sample_period, 1);
	CHECK_INT(last_attr.watermark, 1);
	CHECK_INT(last_attr.wakeup_watermark, 4096);
	CHECK_INT(aux_action_of(&last_attr), SPTD_PERF_AUX_PAUSE);
	sptd_col_perf_attr_set_aux_action(NULL, SPTD_PERF_AUX_PAUSE);   /* ignored */
	CHECK_INT(last_group, 17);
	/* ... or woken per event */
	ev.flags = 0;
	ev.wakeup = 1;
	ev.aux_action = 0;
	CHECK_INT(sptd_col_perf_event_open(&ev, -1, 2, -1), 42);
	CHECK_INT(last_attr.watermark, 0);
	CHECK_INT(last_attr.wakeup_events, 1);

	/* a uprobe by path and offset: config1 points at the path */
	sptd_col_perf_event_uprobe(&ev, 8, path, 0x1234);
	CHECK_INT(sptd_col_perf_event_open(&ev, -1, 0, -1), 42);
	CHECK_INT(last_attr.type, 8);
	CHECK_INT(last_attr.config, 0);
	CHECK(last_attr.config1 == (uint64_t)(uintptr_t)path);
	CHECK_INT(last_attr.config2, 0x1234);
	CHECK_INT(last_attr.sample_period, 1);

	/* the AUX pause bits land where 6.13 put aux_action */
	ev = (struct sptd_col_perf_event){ .aux_action = SPTD_PERF_AUX_START_PAUSED |
	                                                 SPTD_PERF_AUX_RESUME };
	CHECK_INT(sptd_col_perf_event_open(&ev, -1, 0, -1), 42);
	CHECK_INT(aux_action_of(&last_attr), SPTD_PERF_AUX_START_PAUSED | SPTD_PERF_AUX_RESUME);
	/* ... and the helper kept for trigger.c writes the same bits */
	sptd_col_perf_attr_set_aux_action(&last_attr, SPTD_PERF_AUX_PAUSE);
	CHECK_INT(aux_action_of(&last_attr), SPTD_PERF_AUX_PAUSE);

	/* errors come back as -errno */
	open_errno = EACCES;
	CHECK_INT(sptd_col_perf_event_open(&ev, -1, 0, -1), -EACCES);
	open_errno = EINVAL;
	CHECK_INT(sptd_col_perf_event_open(&ev, -1, 0, 5), -EINVAL);
	open_errno = 0;
	CHECK_INT(sptd_col_perf_event_open(NULL, -1, 0, -1), -EINVAL);
	sptd_col_perf_event_tracepoint(NULL, 1);
	sptd_col_perf_event_uprobe(NULL, 1, path, 0);
}

static void test_ioctls(void)
{
	CHECK_INT(sptd_col_perf_event_enable(5), 0);
	CHECK_INT(last_req, PERF_EVENT_IOC_ENABLE);
	CHECK_INT(sptd_col_perf_event_disable(5), 0);
	CHECK_INT(last_req, PERF_EVENT_IOC_DISABLE);
	CHECK_INT(sptd_col_perf_event_refresh(5, 1), 0);
	CHECK_INT(last_req, PERF_EVENT_IOC_REFRESH);
	CHECK_INT(last_arg, 1);
	CHECK_INT(sptd_col_perf_event_refresh(5, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_event_refresh(-1, 1), -EBADF);
	CHECK_INT(sptd_col_perf_event_pause_output(5, 1), 0);
	CHECK_INT(last_req, PERF_EVENT_IOC_PAUSE_OUTPUT);
	CHECK_INT(last_arg, 1);
	CHECK_INT(sptd_col_perf_event_pause_output(5, 7), 0);
	CHECK_INT(last_arg, 1);
	CHECK_INT(sptd_col_perf_event_pause_output(5, 0), 0);
	CHECK_INT(last_arg, 0);
	CHECK_INT(sptd_col_perf_event_set_filter(5, "irq == 36"), 0);
	CHECK_INT(last_req, PERF_EVENT_IOC_SET_FILTER);
	CHECK_STR((const char *)(uintptr_t)last_arg, "irq == 36");
	ioctl_errno = EINVAL;
	CHECK_INT(sptd_col_perf_event_set_filter(5, "bogus =="), -EINVAL);
	ioctl_errno = ENOTTY;
	CHECK_INT(sptd_col_perf_event_enable(5), -ENOTTY);
	CHECK_INT(sptd_col_perf_event_disable(5), -ENOTTY);
	CHECK_INT(sptd_col_perf_event_pause_output(5, 1), -ENOTTY);
	ioctl_errno = 0;
	CHECK_INT(sptd_col_perf_event_set_filter(5, NULL), -EINVAL);
	CHECK_INT(sptd_col_perf_event_enable(-1), -EBADF);
	CHECK_INT(sptd_col_perf_event_disable(-1), -EBADF);
	CHECK_INT(sptd_col_perf_event_pause_output(-1, 1), -EBADF);
	CHECK_INT(sptd_col_perf_event_set_filter(-1, "x"), -EBADF);
}

static void test_pmu_type(void)
{
	file_text = "8\n";
	CHECK_INT(sptd_col_perf_pmu_type("uprobe"), 8);
	CHECK_STR(last_path, "/sys/bus/event_source/devices/uprobe/type");
	file_text = "x";
	CHECK_INT(sptd_col_perf_pmu_type("uprobe"), -EBADMSG);
	file_text = "";
	CHECK_INT(sptd_col_perf_pmu_type("uprobe"), -EBADMSG);
	file_text = "99999999999";
	CHECK_INT(sptd_col_perf_pmu_type("uprobe"), -EBADMSG);
	file_text = NULL;
	CHECK_INT(sptd_col_perf_pmu_type("nosuch"), -ENOENT);
	CHECK_INT(sptd_col_perf_pmu_type(NULL), -EINVAL);
	CHECK_INT(sptd_col_perf_pmu_type(""), -EINVAL);
	CHECK_INT(sptd_col_perf_pmu_type("../x"), -EINVAL);
}

/* ---- mapped rings ------------------------------------------------------------------- */

/* Append @len bytes to a forward data ring as the kernel would. */
static void kernel_put(struct sptd_col_perf_ring *ring, const void *rec, size_t len)
{
	struct perf_event_mmap_page *pg = ring->base;
	unsigned char *data = (unsigned char *)ring->base + pg->data_offset;

	for (size_t i = 0; i < len; i++)
		data[(pg->data_head + i) % pg->data_size] = ((const unsigned char *)rec)[i];
	pg->data_head += len;
}

static int count_rec(void *ctx, const void *rec, size_t len)
{
	uint64_t seq;

	memcpy(&seq, (const unsigned char *)rec + 8, 8);
	*(uint64_t *)ctx = *(uint64_t *)ctx * 10 + seq;
	(void)len;
	return 0;
}

static void test_rings(void)
{
	struct sptd_col_perf_ring ring = { 0 };
	struct sptd_col_perf_clock clock;
	struct perf_event_mmap_page *pg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char rec[16], out[64];
	uint64_t size, seen = 0;
	const void *data;

	/* forward ring: mapped read-write, data area after the control page */
	CHECK_INT(sptd_col_perf_ring_map(&ring, 5, 2, 1), 0);
	CHECK_INT(last_prot, PROT_READ | PROT_WRITE);
	CHECK_INT(last_off, 0);
	CHECK_INT(ring.len, 3 * page);
	pg = ring.base;
	data = sptd_col_perf_ring_data(&ring, &size);   /* a kernel before 4.1 */
	CHECK(data == (unsigned char *)ring.base + page);
	CHECK_INT(size, 2 * page);
	pg->data_offset = page;
	pg->data_size = 2 * page;
	data = sptd_col_perf_ring_data(&ring, &size);
	CHECK(data == (unsigned char *)ring.base + page);
	CHECK_INT(size, 2 * page);
	pg->data_size = 4 * page;   /* a page lying about its ring */
	CHECK(sptd_col_perf_ring_data(&ring, &size) == NULL);
	pg->data_size = 2 * page;

	/* records in, drained in order, tail follows head */
	for (uint64_t seq = 1; seq <= 3; seq++) {
		struct perf_event_header h = { .type = SPTD_PERF_RECORD_LOST_SAMPLES, .size = 16 };

		memcpy(rec, &h, 8);
		memcpy(rec + 8, &seq, 8);
		kernel_put(&ring, rec, sizeof(rec));
	}
	CHECK_INT(sptd_col_perf_ring_head(&ring), 48);
	CHECK_INT(sptd_col_perf_ring_unread(&ring), 48);
	CHECK_INT(sptd_col_perf_ring_drain(&ring, count_rec, &seen), 3);
	CHECK_INT(seen, 123);
	CHECK_INT(pg->data_tail, 48);
	CHECK_INT(sptd_col_perf_ring_unread(&ring), 0);
	CHECK_INT(sptd_col_perf_ring_drain(&ring, count_rec, &seen), 0);

	/* consume: the oldest bytes, at most the room given */
	kernel_put(&ring, rec, sizeof(rec));
	kernel_put(&ring, rec, sizeof(rec));
	CHECK_INT(sptd_col_perf_ring_consume(&ring, out, 20), 20);
	CHECK_INT(pg->data_tail, 68);
	CHECK_INT(sptd_col_perf_ring_unread(&ring), 12);
	CHECK_INT(sptd_col_perf_ring_consume(&ring, out, sizeof(out)), 12);
	CHECK_INT(sptd_col_perf_ring_consume(&ring, out, sizeof(out)), 0);
	/* an overrun (no reader would allow it): only the ring's worth */
	pg->data_head = pg->data_tail + 3 * 2 * page;
	CHECK_INT(sptd_col_perf_ring_unread(&ring), 2 * page);
	pg->data_tail = pg->data_head;

	/* the AUX ring behind it: aux_offset/aux_size set, mapped read-only */
	CHECK_INT(sptd_col_perf_ring_map_aux(&ring, 5, 4 * page, 0), 0);
	CHECK_INT(pg->aux_offset, 3 * page);
	CHECK_INT(pg->aux_size, 4 * page);
	CHECK_INT(last_off, 3 * page);
	CHECK_INT(last_prot, PROT_READ);
	CHECK_INT(ring.aux_len, 4 * page);
	pg->aux_head = 777;
	CHECK_INT(sptd_col_perf_ring_aux_head(&ring), 777);
	CHECK_INT(sptd_col_perf_ring_map_aux(&ring, 5, 4 * page, 0), -EINVAL);   /* twice */

	/* the clock */
	pg->cap_user_time = 1;
	pg->cap_user_time_zero = 1;
	pg->time_mult = 123456;
	pg->time_shift = 31;
	pg->time_zero = 1000000;
	pg->time_offset = 5;
	CHECK_INT(sptd_col_perf_ring_clock(&ring, &clock), 0);
	CHECK_INT(clock.cap_user_time, 1);
	CHECK_INT(clock.cap_user_time_zero, 1);
	CHECK_INT(clock.time_mult, 123456);
	CHECK_INT(clock.time_shift, 31);
	CHECK_INT(clock.time_zero, 1000000);
	CHECK_INT(clock.time_offset, 5);

	munmaps = 0;
	sptd_col_perf_ring_unmap(&ring);
	CHECK_INT(munmaps, 2);
	CHECK(ring.base == NULL && ring.aux == NULL);
	sptd_col_perf_ring_unmap(&ring);   /* zeroed: nothing */
	CHECK_INT(munmaps, 2);
	sptd_col_perf_ring_unmap(NULL);

	/* read-only ring; failures */
	CHECK_INT(sptd_col_perf_ring_map(&ring, 5, 1, 0), 0);
	CHECK_INT(last_prot, PROT_READ);
	sptd_col_perf_ring_unmap(&ring);
	mmap_errno = EPERM;
	CHECK_INT(sptd_col_perf_ring_map(&ring, 5, 1, 0), -EPERM);
	CHECK(ring.base == NULL);
	mmap_errno = 0;
	CHECK_INT(sptd_col_perf_ring_map(&ring, 5, 1, 1), 0);
	mmap_errno = ENOMEM;
	CHECK_INT(sptd_col_perf_ring_map_aux(&ring, 5, page, 0), -ENOMEM);
	CHECK(ring.aux == NULL);
	mmap_errno = 0;
	sptd_col_perf_ring_unmap(&ring);
}

/* What a trigger keeps of each tracepoint sample (TIME | CPU | RAW). */
struct hits {
	int n;                   /* samples seen */
	uint64_t time[4];        /* their times */
	int cpu[4];              /* their CPUs */
	uint32_t raw0[4];        /* the first u32 of their raw data */
};

static int on_trigger_record(void *ctx, const void *rec, size_t len)
{
	static const struct sptd_col_perf_layout layout = {
		.sample_type = SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_RAW,
	};
	struct hits *h = ctx;
	struct sptd_col_perf_record r;

	if (sptd_col_perf_record_parse(rec, len, &layout, &r) < 0 ||
	    r.type != SPTD_PERF_RECORD_SAMPLE || h->n == 4)
		return 0;
	h->time[h->n] = r.id.time;
	h->cpu[h->n] = r.id.cpu;
	memcpy(&h->raw0[h->n], r.sample.raw, 4);
	h->n++;
	return 0;
}

/* A trigger's event end to end: a tracepoint sibling opened, filtered,
 * its ring mapped and enabled, then drained sample by sample. */
static void test_trigger_flow(void)
{
	struct sptd_col_perf_event ev;
	struct sptd_col_perf_ring ring = { 0 };
	struct perf_event_mmap_page *pg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct hits h = { 0 };
	int fd;

	sptd_col_perf_event_tracepoint(&ev, 77);
	ev.sample_type = SPTD_PERF_SAMPLE_TIME | SPTD_PERF_SAMPLE_CPU | SPTD_PERF_SAMPLE_RAW;
	ev.flags = SPTD_PERF_EV_DISABLED | SPTD_PERF_EV_USE_CLOCKID;
	ev.clockid = CLOCK_MONOTONIC;
	ev.wakeup = 1;
	ev.aux_action = SPTD_PERF_AUX_PAUSE;
	fd = sptd_col_perf_event_open(&ev, -1, 1, 9);
	CHECK_INT(fd, 42);
	CHECK_INT(last_group, 9);
	CHECK_INT(sptd_col_perf_event_set_filter(fd, "irq==36"), 0);
	CHECK_INT(sptd_col_perf_ring_map(&ring, fd, 1, 1), 0);
	CHECK_INT(sptd_col_perf_event_enable(fd), 0);
	pg = ring.base;
	pg->data_offset = page;
	pg->data_size = page;
	/* two hits (irq 36 on cpu 1, then 37 on cpu 2) with a LOST between,
	 * the second across the ring's end */
	pg->data_head = pg->data_tail = page - 40;
	for (int i = 0; i < 2; i++) {
		uint64_t rec[5];
		struct perf_event_header hd = { .type = SPTD_PERF_RECORD_SAMPLE, .size = 40 };
		uint32_t cpu_res[2] = { 1u + (uint32_t)i, 0 }, raw[2] = { 4, 36u + (uint32_t)i };
		struct perf_event_header lost = { .type = SPTD_PERF_RECORD_LOST, .size = 24 };
		uint64_t lost_rec[3] = { 0, 1, 1 };

		memcpy(&rec[0], &hd, 8);
		rec[1] = 1000 + (uint64_t)i;
		memcpy(&rec[2], cpu_res, 8);
		memcpy(&rec[3], raw, 8);
		rec[4] = 0;
		kernel_put(&ring, rec, 40);
		if (i == 0) {
			memcpy(&lost_rec[0], &lost, 8);
			kernel_put(&ring, lost_rec, sizeof(lost_rec));
		}
	}
	CHECK_INT(sptd_col_perf_ring_drain(&ring, on_trigger_record, &h), 3);
	CHECK_INT(h.n, 2);
	CHECK_INT(h.time[0], 1000);
	CHECK_INT(h.cpu[0], 1);
	CHECK_INT(h.raw0[0], 36);
	CHECK_INT(h.time[1], 1001);
	CHECK_INT(h.cpu[1], 2);
	CHECK_INT(h.raw0[1], 37);
	CHECK_INT(sptd_col_perf_ring_unread(&ring), 0);
	sptd_col_perf_ring_unmap(&ring);
}

static int never(void *ctx, const void *rec, size_t len)
{
	(void)ctx, (void)rec, (void)len;
	return -ECANCELED;
}

static void test_ring_invalid(void)
{
	struct sptd_col_perf_ring ring = { 0 }, mapped = { 0 };
	struct sptd_col_perf_clock clock;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char out[8];
	uint64_t size = 1;

	CHECK_INT(sptd_col_perf_ring_map(NULL, 5, 1, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_map(&ring, -1, 1, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_map(&ring, 5, 0, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_map(&ring, 5, 3, 0), -EINVAL);   /* not a power of two */
	CHECK_INT(sptd_col_perf_ring_map_aux(NULL, 5, page, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_map_aux(&ring, 5, page, 0), -EINVAL);   /* unmapped */
	CHECK_INT(sptd_col_perf_ring_map(&mapped, 5, 1, 1), 0);
	CHECK_INT(sptd_col_perf_ring_map(&mapped, 5, 1, 1), -EINVAL);   /* mapped twice */
	CHECK_INT(sptd_col_perf_ring_map_aux(&mapped, -1, page, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_map_aux(&mapped, 5, 0, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_map_aux(&mapped, 5, page + 1, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_map_aux(&mapped, 5, 3 * page, 0), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_drain(&mapped, NULL, NULL), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_consume(&mapped, NULL, 8), -EINVAL);
	sptd_col_perf_ring_unmap(&mapped);
	CHECK(sptd_col_perf_ring_data(NULL, &size) == NULL);
	CHECK_INT(size, 0);
	CHECK(sptd_col_perf_ring_data(&ring, NULL) == NULL);
	CHECK_INT(sptd_col_perf_ring_head(NULL), 0);
	CHECK_INT(sptd_col_perf_ring_head(&ring), 0);
	CHECK_INT(sptd_col_perf_ring_aux_head(&ring), 0);
	CHECK_INT(sptd_col_perf_ring_unread(&ring), 0);
	CHECK_INT(sptd_col_perf_ring_clock(&ring, &clock), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_clock(NULL, &clock), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_consume(&ring, out, sizeof(out)), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_consume(NULL, out, sizeof(out)), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_drain(&ring, never, NULL), -EINVAL);
	CHECK_INT(sptd_col_perf_ring_drain(NULL, never, NULL), -EINVAL);
}

int main(void)
{
	fake_install();
	test_attr_flags();
	test_attr_events();
	test_ioctls();
	test_pmu_type();
	test_rings();
	test_trigger_flow();
	test_ring_invalid();
	sptd_col_sys = saved;
	return SPTD_TEST_END();
}
