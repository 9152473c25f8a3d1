/* test_sched_parser.c — parse real ring-buffer pages (root): a child that
 * sleeps on a pipe and is woken by this process must show up in
 * sched_switch and sched_waking with its tid, comm, state and waker, and
 * the builder must turn that into a runnable row woken by us; every event
 * says its context (irq entries in hard irq, softirq entries serving one,
 * switches in neither).  A ring too small for its events must say it
 * wrapped: a LOST event first on each CPU the kernel's own overrun counter
 * (per_cpu/cpuN/stats) says lost events, with that count.  Then corrupt
 * and truncated pages must give -EBADMSG (or parse), never a crash.
 *
 * The child and this process share one CPU, so each switch-in of the child
 * is from us going to sleep: some kernels never record a switch away from
 * idle (a VM's CPU 1 under Firecracker, 6.18: perf misses it too), which
 * left this test without the child's switch-ins whenever the child ran on
 * that CPU.  test_sched_builder covers what the builder makes of those. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "sptd_sched.h"
#include "sptd_test.h"

#define MAX_PAGES 4096
#define MAX_FORMATS 32

struct capture {
	int nformats;
	char *format_name[MAX_FORMATS];
	char *format_text[MAX_FORMATS];
	int npages;
	int page_cpu[MAX_PAGES];
	size_t page_len[MAX_PAGES];
	unsigned char *page[MAX_PAGES];
};

static int keep_raw(void *ctx, enum sptd_sched_raw_kind kind, const char *name, int cpu,
                    int seq, const void *data, size_t len)
{
	struct capture *c = ctx;

	if (kind == SPTD_SCHED_RAW_FORMAT) {
		if (c->nformats == MAX_FORMATS)
			return -ENOSPC;
		c->format_name[c->nformats] = strdup(name);
		c->format_text[c->nformats] = strndup(data, len);
		c->nformats++;
		return 0;
	}
	if (c->npages == MAX_PAGES)
		return 0;
	c->page[c->npages] = malloc(len);
	memcpy(c->page[c->npages], data, len);
	c->page_len[c->npages] = len;
	c->page_cpu[c->npages] = cpu;
	c->npages++;
	return 0;
}

/* What the events said about the child. */
struct seen {
	int child, parent;
	int nevents, nsoftirq, nirq, bad_irq_name;
	int no_context, irq_not_hard, softirq_not_soft, switch_in_irq;
	int switch_in, switch_out_sleeping, waking_by_parent;
	int64_t min_ts, max_ts;
	struct sptd_sched_builder *builder;
};

static int on_event(void *ctx, const struct sptd_sched_event *ev)
{
	struct seen *s = ctx;

	if (ev->type == SPTD_SCHED_LOST)
		return 0;
	s->nevents++;
	s->no_context += !(ev->context & SPTD_SCHED_CTX_KNOWN);
	if (ev->type == SPTD_SCHED_SWITCH &&
	    (ev->context & (SPTD_SCHED_CTX_HARDIRQ | SPTD_SCHED_CTX_SOFTIRQ)))
		s->switch_in_irq++;
	if ((ev->type == SPTD_SCHED_IRQ_ENTRY || ev->type == SPTD_SCHED_IRQ_EXIT) &&
	    !(ev->context & SPTD_SCHED_CTX_HARDIRQ))
		s->irq_not_hard++;
	if (ev->type == SPTD_SCHED_SOFTIRQ_ENTRY && !(ev->context & SPTD_SCHED_CTX_SOFTIRQ))
		s->softirq_not_soft++;
	if (s->min_ts == 0 || ev->ts < s->min_ts)
		s->min_ts = ev->ts;
	if (ev->ts > s->max_ts)
		s->max_ts = ev->ts;
	switch (ev->type) {
	case SPTD_SCHED_SWITCH:
		if (ev->u.sw.next_tid == s->child && strcmp(ev->u.sw.next_comm, "sptd_pchild") == 0)
			s->switch_in++;
		if (ev->u.sw.prev_tid == s->child && strcmp(ev->u.sw.prev_comm, "sptd_pchild") == 0 &&
		    strcmp(ev->u.sw.prev_state, "S") == 0)
			s->switch_out_sleeping++;
		break;
	case SPTD_SCHED_WAKING:
		if (ev->u.wake.tid == s->child && strcmp(ev->u.wake.comm, "sptd_pchild") == 0 &&
		    ev->pid == s->parent)
			s->waking_by_parent++;
		break;
	case SPTD_SCHED_IRQ_ENTRY:
		s->nirq++;
		if (!ev->u.irq.name[0])
			s->bad_irq_name++;
		break;
	case SPTD_SCHED_SOFTIRQ_ENTRY:
		s->nsoftirq++;
		break;
	default:
		break;
	}
	return s->builder ? sptd_sched_builder_add(s->builder, ev) : 0;
}

/* The builder's view: a runnable row of the child woken by the parent. */
struct rows {
	int child, parent;
	int runnable_by_parent, child_named;
};

static int row_state(void *ctx, int64_t ts, int64_t dur, int tid, const char *state,
                     int cpu, int waker, int flags)
{
	struct rows *r = ctx;

	if (tid == r->child && strcmp(state, "R") == 0 && waker == r->parent && dur >= 0)
		r->runnable_by_parent++;
	return 0;
}

static int row_thread(void *ctx, int tid, const char *comm)
{
	struct rows *r = ctx;

	if (tid == r->child && comm && strcmp(comm, "sptd_pchild") == 0)
		r->child_named++;
	return 0;
}

/* Until @pid sleeps (state S in /proc/PID/stat): 0, or -1 after 10 s.
 * The child of run_child_workload sleeps only in its read(); a fixed
 * usleep was not enough on a loaded machine (ctest -j8): the child had not
 * gone back to read() before the next byte came, read two bytes without
 * sleeping between them, and the test saw 4 switches of 5. */
static int wait_asleep(pid_t pid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		const char *paren;

		if (f)
			fclose(f);
		buf[n] = '\0';
		paren = strrchr(buf, ')');
		if (paren && paren[1] == ' ' && paren[2] == 'S')
			return 0;
		usleep(1000);
	}
	return -1;
}

static void run_child_workload(struct seen *s)
{
	int to_child[2], i;
	pid_t pid;
	char byte = 'x';

	if (pipe(to_child) != 0)
		return;
	{
		/* one CPU for both (see the top): the child inherits it */
		cpu_set_t one;
		int cpu = sched_getcpu();

		CPU_ZERO(&one);
		CPU_SET(cpu >= 0 ? cpu : 0, &one);
		CHECK_INT(sched_setaffinity(0, sizeof(one), &one), 0);
	}
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, "sptd_pchild", 0, 0, 0);
		close(to_child[1]);
		while (read(to_child[0], &byte, 1) == 1)
			;
		_exit(0);
	}
	close(to_child[0]);
	s->child = pid;
	for (i = 0; i < 5; i++) {
		/* each byte wakes the child from its read(): 5 switches in */
		CHECK_INT(wait_asleep(pid), 0);
		if (write(to_child[1], &byte, 1) != 1)
			break;
	}
	CHECK_INT(wait_asleep(pid), 0);
	close(to_child[1]);
	waitpid(pid, NULL, 0);
}

static void check_corrupt(struct sptd_sched_parser *p, const struct capture *c)
{
	unsigned char buf[4096];
	unsigned int seed = 12345;
	int i, ret, refused = 0;
	size_t j;

	/* random bytes: parse or refuse, never crash or read outside */
	for (i = 0; i < 500; i++) {
		for (j = 0; j < sizeof(buf); j++)
			buf[j] = (unsigned char)rand_r(&seed);
		if (i % 2) {   /* plausible commit so the record walk is exercised */
			uint64_t commit = (uint64_t)(rand_r(&seed) % 4080);

			memcpy(buf + 8, &commit, 8);
		}
		ret = sptd_sched_parser_parse_page(p, 0, buf, sizeof(buf), NULL, NULL);
		CHECK(ret >= 0 || ret == -EBADMSG);
		refused += ret == -EBADMSG;
	}
	CHECK(refused > 0);
	CHECK_INT(sptd_sched_parser_parse_page(p, 0, buf, 10, NULL, NULL), -EBADMSG);
	CHECK_INT(sptd_sched_parser_parse_page(p, 0, buf, 0, NULL, NULL), -EBADMSG);
	CHECK(strlen(sptd_sched_parser_error(p)) > 0);

	/* a real page cut short, and one whose commit claims more than a page */
	for (i = 0; i < c->npages; i++) {
		uint64_t commit;

		memcpy(&commit, c->page[i] + 8, 8);
		if ((commit & ((1u << 27) - 1)) > 64)
			break;
	}
	CHECK(i < c->npages);   /* the workload fills more than 64 bytes of a page */
	if (i < c->npages) {
		size_t len = c->page_len[i];

		CHECK(sptd_sched_parser_parse_page(p, 0, c->page[i], len, NULL, NULL) > 0);
		CHECK_INT(sptd_sched_parser_parse_page(p, 0, c->page[i], 40, NULL, NULL), -EBADMSG);
		memcpy(buf, c->page[i], len < sizeof(buf) ? len : sizeof(buf));
		{
			uint64_t huge = 100000;

			memcpy(buf + 8, &huge, 8);
			CHECK_INT(sptd_sched_parser_parse_page(p, 0, buf, sizeof(buf), NULL, NULL),
			          -EBADMSG);
		}
		/* first record: a big record whose length word runs off the page */
		memcpy(buf, c->page[i], len < sizeof(buf) ? len : sizeof(buf));
		{
			uint32_t hdr = 0, length = 0xfffffff0u;

			memcpy(buf + 16, &hdr, 4);
			memcpy(buf + 20, &length, 4);
			CHECK_INT(sptd_sched_parser_parse_page(p, 0, buf, sizeof(buf), NULL, NULL),
			          -EBADMSG);
			length = 3;   /* shorter than its own length word */
			memcpy(buf + 20, &length, 4);
			CHECK_INT(sptd_sched_parser_parse_page(p, 0, buf, sizeof(buf), NULL, NULL),
			          -EBADMSG);
		}
	}
}

static void check_args(void)
{
	struct sptd_sched_parser *p = NULL;
	unsigned char page[64] = { 0 };

	CHECK_INT(sptd_sched_parser_create(NULL), -EINVAL);
	CHECK_INT(sptd_sched_parser_create(&p), 0);
	CHECK_INT(sptd_sched_parser_add_format(NULL, "header_page", "x"), -EINVAL);
	CHECK_INT(sptd_sched_parser_add_format(p, NULL, "x"), -EINVAL);
	CHECK_INT(sptd_sched_parser_add_format(p, "sched/sched_switch", NULL), -EINVAL);
	CHECK_INT(sptd_sched_parser_add_format(p, "noslash", "x"), -EINVAL);
	CHECK_INT(sptd_sched_parser_add_format(p, "/sched_switch", "x"), -EINVAL);
	CHECK_INT(sptd_sched_parser_add_format(p, "sched/", "x"), -EINVAL);
	CHECK_INT(sptd_sched_parser_add_format(p, "header_page", "garbage"), -EBADMSG);
	CHECK_INT(sptd_sched_parser_add_format(p, "header_event", "garbage"), -EBADMSG);
	CHECK_INT(sptd_sched_parser_add_format(p, "sched/sched_switch", "not a format"), -EBADMSG);
	CHECK(strlen(sptd_sched_parser_error(p)) > 0);
	CHECK_STR(sptd_sched_parser_error(NULL), "");
	CHECK_INT(sptd_sched_parser_parse_page(NULL, 0, page, sizeof(page), NULL, NULL), -EINVAL);
	CHECK_INT(sptd_sched_parser_parse_page(p, -1, page, sizeof(page), NULL, NULL), -EINVAL);
	CHECK_INT(sptd_sched_parser_parse_page(p, 0, NULL, sizeof(page), NULL, NULL), -EINVAL);
	/* an empty page (commit 0) has no events */
	CHECK_INT(sptd_sched_parser_parse_page(p, 0, page, sizeof(page), NULL, NULL), 0);
	CHECK_STR(sptd_sched_softirq_name(1), "TIMER");
	CHECK_STR(sptd_sched_softirq_name(9), "RCU");
	CHECK_STR(sptd_sched_softirq_name(10), "?");
	CHECK_STR(sptd_sched_softirq_name(-1), "?");
	sptd_sched_parser_destroy(p);
	sptd_sched_parser_destroy(NULL);
}

static void make_softirqs(void);

/* What a LOST event said, per CPU. */
struct lost_seen {
	int first_lost[64];          /* the CPU's first event was a LOST */
	int64_t count[64];           /* ... its count */
	int any_event[64];           /* some event was seen on the CPU */
	int lost_later;              /* a LOST after a CPU's first event */
};

static int on_lost_event(void *ctx, const struct sptd_sched_event *ev)
{
	struct lost_seen *l = ctx;

	if (ev->cpu < 0 || ev->cpu >= 64)
		return 0;
	if (ev->type == SPTD_SCHED_LOST) {
		if (l->any_event[ev->cpu])
			l->lost_later++;
		else {
			l->first_lost[ev->cpu] = 1;
			l->count[ev->cpu] = ev->u.lost.count;
		}
	}
	l->any_event[ev->cpu] = 1;
	return 0;
}

/* The kernel's own count of overwritten events of @cpu in instance @name. */
static long long overrun_of(const char *name, int cpu)
{
	char path[256], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/instances/%s/per_cpu/cpu%d/stats",
	         name, cpu);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "overrun: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* A ring much too small for what happens: the kernel overwrites, and the
 * first page read of each such CPU must say so, with the kernel's count. */
static void check_wrap(const char *base)
{
	char name[80];
	struct sptd_sched_config cfg = { .buffer_kb = 8, .clock = "mono", .irq = 1, .softirq = 1 };
	struct sptd_sched_trace *tr = NULL;
	struct sptd_sched_parser *p = NULL;
	static struct capture cap;
	struct lost_seen l = { 0 };
	long long overrun[64];
	int ncpus = (int)sysconf(_SC_NPROCESSORS_CONF), wrapped = 0, i, ret;
	struct seen s = { 0 };

	if (ncpus > 64)
		ncpus = 64;
	snprintf(name, sizeof(name), "%s_wrap", base);
	cfg.instance = name;
	if (sptd_sched_trace_create(&cfg, &tr) < 0) {
		CHECK(0);
		return;
	}
	s.parent = getpid();
	CHECK_INT(sptd_sched_trace_start(tr), 0);
	/* until a CPU's ring wrapped (a quiet CPU may take a few rounds) */
	for (int round = 0, any = 0; !any && round < 50; round++) {
		for (i = 0; i < 4; i++)
			run_child_workload(&s);
		make_softirqs();
		for (i = 0; i < ncpus; i++)
			any |= overrun_of(name, i) > 0;
	}
	CHECK_INT(sptd_sched_trace_stop(tr), 0);
	for (i = 0; i < ncpus; i++)
		overrun[i] = overrun_of(name, i);
	ret = sptd_sched_trace_capture(tr, keep_raw, &cap);
	CHECK(ret > 0);
	sptd_sched_trace_destroy(tr);
	CHECK_INT(sptd_sched_parser_create(&p), 0);
	for (i = 0; i < cap.nformats; i++)
		sptd_sched_parser_add_format(p, cap.format_name[i], cap.format_text[i]);
	for (i = 0; i < cap.npages; i++)
		CHECK(sptd_sched_parser_parse_page(p, cap.page_cpu[i], cap.page[i], cap.page_len[i],
		                                   on_lost_event, &l) >= 0);
	for (i = 0; i < ncpus; i++) {
		if (overrun[i] < 0)
			continue;
		CHECK_INT(l.first_lost[i], overrun[i] > 0);
		if (overrun[i] > 0 && l.count[i] >= 0)
			CHECK_INT(l.count[i], overrun[i]);
		wrapped += overrun[i] > 0;
		fprintf(stderr, "wrap: cpu %d overrun %lld, LOST first %d (count %lld)\n", i,
		        overrun[i], l.first_lost[i], (long long)l.count[i]);
	}
	CHECK(wrapped > 0);   /* an 8 KiB ring cannot hold that workload */
	CHECK_INT(l.lost_later, 0);
	sptd_sched_parser_destroy(p);
	for (i = 0; i < cap.npages; i++)
		free(cap.page[i]);
	for (i = 0; i < cap.nformats; i++) {
		free(cap.format_name[i]);
		free(cap.format_text[i]);
	}
	memset(&cap, 0, sizeof(cap));
}

/* Loopback UDP: each packet raises a NET_RX softirq on this CPU, so the
 * capture is sure to hold softirq events whatever else the machine does. */
static void make_softirqs(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	char buf[64] = "sptd";
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&addr, &len) < 0) {
		perror("loopback socket");
		if (fd >= 0)
			close(fd);
		return;
	}
	for (int i = 0; i < 20; i++) {
		(void)!sendto(fd, buf, 4, 0, (struct sockaddr *)&addr, sizeof(addr));
		(void)!recv(fd, buf, sizeof(buf), 0);
	}
	close(fd);
}

int main(void)
{
	char name[64];
	struct sptd_sched_config cfg = { .buffer_kb = 1024, .clock = "mono", .irq = 1,
	                                 .softirq = 1 };
	struct sptd_sched_trace *tr = NULL;
	struct sptd_sched_parser *p = NULL;
	static struct capture cap;
	struct seen s = { 0 };
	struct rows r = { 0 };
	struct sptd_sched_sink sink = { .thread = row_thread, .thread_state = row_state };
	int i, ret, pages, bad_pages = 0;

	check_args();
	SPTD_REQUIRE_ROOT();
	if (sptd_sched_tracefs_ensure() < 0)
		SPTD_SKIP("no tracefs and it cannot be mounted");
	snprintf(name, sizeof(name), "sptd_test_parser_%d", (int)getpid());
	cfg.instance = name;
	ret = sptd_sched_trace_create(&cfg, &tr);
	if (ret < 0)
		SPTD_SKIP("cannot create an ftrace instance: %s", strerror(-ret));

	s.parent = getpid();
	CHECK_INT(sptd_sched_trace_start(tr), 0);
	run_child_workload(&s);
	make_softirqs();
	CHECK_INT(sptd_sched_trace_stop(tr), 0);
	pages = sptd_sched_trace_capture(tr, keep_raw, &cap);
	CHECK(pages > 0);
	CHECK_INT(pages, cap.npages);
	sptd_sched_trace_destroy(tr);

	CHECK(cap.nformats >= 4);
	CHECK_STR(cap.format_name[0], "header_page");
	CHECK_STR(cap.format_name[1], "header_event");
	CHECK_STR(cap.format_name[2], "sched/sched_switch");

	CHECK_INT(sptd_sched_parser_create(&p), 0);
	for (i = 0; i < cap.nformats; i++)
		CHECK_INT(sptd_sched_parser_add_format(p, cap.format_name[i], cap.format_text[i]), 0);
	CHECK_INT(sptd_sched_builder_create(0, INT64_MAX, (int)sysconf(_SC_NPROCESSORS_CONF),
	                                    &s.builder), 0);
	for (i = 0; i < cap.npages; i++) {
		ret = sptd_sched_parser_parse_page(p, cap.page_cpu[i], cap.page[i], cap.page_len[i],
		                                   on_event, &s);
		if (ret < 0) {
			bad_pages++;
			fprintf(stderr, "page %d: %d %s\n", i, ret, sptd_sched_parser_error(p));
		}
	}
	CHECK_INT(bad_pages, 0);
	CHECK(s.nevents > 0);
	CHECK(s.switch_in >= 5);
	CHECK(s.switch_out_sleeping >= 5);
	CHECK(s.waking_by_parent >= 5);
	CHECK(s.nsoftirq > 0);
	CHECK_INT(s.bad_irq_name, 0);
	CHECK_INT(s.no_context, 0);
	CHECK_INT(s.irq_not_hard, 0);
	CHECK_INT(s.softirq_not_soft, 0);
	CHECK_INT(s.switch_in_irq, 0);
	fprintf(stderr, "%d pages, %d events (%d irq, %d softirq); child %d: %d in, %d out "
	        "asleep, %d woken by us\n", cap.npages, s.nevents, s.nirq, s.nsoftirq,
	        s.child, s.switch_in, s.switch_out_sleeping, s.waking_by_parent);

	/* the builder over the same events: the child runnable, woken by us */
	r.child = s.child;
	r.parent = s.parent;
	sink.ctx = &r;
	ret = sptd_sched_builder_finish(s.builder, &sink);
	CHECK(ret > 0);
	CHECK_INT(r.child_named, 1);
	CHECK(r.runnable_by_parent >= 5);
	sptd_sched_builder_destroy(s.builder);

	check_corrupt(p, &cap);
	sptd_sched_parser_destroy(p);
	check_wrap(name);
	for (i = 0; i < cap.npages; i++)
		free(cap.page[i]);
	for (i = 0; i < cap.nformats; i++) {
		free(cap.format_name[i]);
		free(cap.format_text[i]);
	}
	return SPTD_TEST_END();
}
