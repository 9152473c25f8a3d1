/* test_parse.c — the collector's parsers, table-driven: durations, sizes,
 * trigger specs, IRQ names, CPU lists; plus the task map.  (Retention and
 * the output directory: tests/collector/security/test_outdir.c.) */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "record-local.h"
#include "sptd_col.h"
#include "sptd_col_derive.h"
#include "sptd_test.h"
#include "trigger-local.h"

static void test_durations(void)
{
	static const struct { const char *text; int ret; int64_t ns; } cases[] = {
		{ "10ms", 0, 10000000 }, { "250us", 0, 250000 }, { "1.5s", 0, 1500000000 },
		{ "100ns", 0, 100 }, { "42", -EINVAL, 0 }, { "10", -EINVAL, 0 }, { "0", 0, 0 },
		{ "0.0", 0, 0 }, { "200", -EINVAL, 0 }, { "1.5", -EINVAL, 0 }, { "0.5ms", 0, 500000 },
		{ "2s", 0, 2000000000 }, { ".25s", 0, 250000000 }, { "1.0000005ms", 0, 1000000 },
		{ "", -EINVAL, 0 }, { "ms", -EINVAL, 0 }, { "-5ms", -EINVAL, 0 }, { "10 ms", -EINVAL, 0 },
		{ "10m", -EINVAL, 0 }, { "10msx", -EINVAL, 0 }, { "1e3", -EINVAL, 0 },
		{ "99999999999999999999s", -EINVAL, 0 }, { "9300000000s", -EINVAL, 0 }, { ".", -EINVAL, 0 },
	};
	int64_t ns;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ns = -1;
		int ret = sptd_col_parse_duration(cases[i].text, &ns);

		CHECK_INT(ret, cases[i].ret);
		if (ret == 0)
			CHECK_INT(ns, cases[i].ns);
		if (ret != cases[i].ret || (ret == 0 && ns != cases[i].ns))
			fprintf(stderr, "  duration case '%s'\n", cases[i].text);
	}
	CHECK_INT(sptd_col_parse_duration(NULL, &ns), -EINVAL);
	CHECK_INT(sptd_col_parse_duration("1ms", NULL), -EINVAL);
}

static void test_sizes(void)
{
	static const struct { const char *text; int ret; uint64_t bytes; } cases[] = {
		{ "4096", 0, 4096 }, { "64K", 0, 65536 }, { "4M", 0, 4194304 }, { "1G", 0, 1073741824 },
		{ "2MiB", 0, 2097152 }, { "1.5M", 0, 1572864 }, { "M", -EINVAL, 0 }, { "4T", -EINVAL, 0 },
		{ "-1M", -EINVAL, 0 },
	};
	uint64_t b;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = sptd_col_parse_size(cases[i].text, &b);

		CHECK_INT(ret, cases[i].ret);
		if (ret == 0)
			CHECK_INT(b, cases[i].bytes);
	}
	CHECK_INT(sptd_col_parse_size("1M", NULL), -EINVAL);
}

/* --call-graph as perf spells it (issue 29). */
static void test_call_graph(void)
{
	static const struct { const char *text; int ret; uint32_t bytes; } cases[] = {
		{ "fp", 0, 0 }, { "dwarf", 0, 8192 }, { "dwarf,16384", 0, 16384 },
		{ "dwarf,4K", 0, 4096 }, { "dwarf,65528", 0, 65528 }, { "dwarf,65536", -EINVAL, 0 },
		{ "dwarf,0", -EINVAL, 0 }, { "dwarf,12", -EINVAL, 0 }, { "dwarf,", -EINVAL, 0 },
		{ "dwarfx", -EINVAL, 0 }, { "lbr", -EINVAL, 0 }, { "", -EINVAL, 0 },
	};
	uint32_t b;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		b = 12345;
		CHECK_INT(sptd_col_parse_call_graph(cases[i].text, &b), cases[i].ret);
		if (cases[i].ret == 0)
			CHECK_INT((int)b, (int)cases[i].bytes);
	}
	CHECK_INT(sptd_col_parse_call_graph(NULL, &b), -EINVAL);
	CHECK_INT(sptd_col_parse_call_graph("fp", NULL), -EINVAL);
}

static void test_triggers(void)
{
	struct sptd_col_trigger_spec s;
	char err[256];
	static const char *const bad[] = {
		"", "irq=", "irq,min=", "irq,max=5ms", "irq=12,min=fast", "irqx",
		"tracepoint=", "tracepoint=sched", "tracepoint=:foo", "tracepoint=sched:",
		"tracepoint=sched:sched_switch,filter=", "tracepoint=sched:sched_switch,flt=x",
		"tracepoint=sch-ed:x", "timer=", "timer=0", "timer=200", "irq,min=50", "timer=fast", "latency=", "uprobe=",
		"uprobe=/bin/true", "uprobe=:main", "bogus", "irq=1,min=1ms,extra",
		"break=", "break=12", "break=12:", "break=0:main", "break=-3:main", "break=/bin/true:",
		"break=/bin/true", "break=/bin/true:main,x",
		"break=12:main,x", "watch=12", "watch=12:", "watch=12:0xzz", "watch=12:0x0",
		"watch=12:v+", "watch=12:v+q", "watch=12:v,len=3", "watch=12:v,r", "watch=12:v,len=16",
		"watch=x:v",
	};

	CHECK_INT(sptd_col_parse_trigger("irq", &s, err, sizeof(err)), 0);
	CHECK_INT(s.kind, SPTD_TRIG_IRQ);
	CHECK_INT(s.irq, -1);
	CHECK_STR(s.irq_name, "");
	CHECK_INT(s.min_ns, 0);

	CHECK_INT(sptd_col_parse_trigger("irq=36", &s, err, sizeof(err)), 0);
	CHECK_INT(s.irq, 36);
	CHECK_STR(s.text, "irq=36");

	CHECK_INT(sptd_col_parse_trigger("irq=virtio1-req.0,min=50us", &s, err, sizeof(err)), 0);
	CHECK_INT(s.irq, -1);
	CHECK_STR(s.irq_name, "virtio1-req.0");
	CHECK_INT(s.min_ns, 50000);

	CHECK_INT(sptd_col_parse_trigger("irq,min=1ms", &s, err, sizeof(err)), 0);
	CHECK_INT(s.min_ns, 1000000);

	CHECK_INT(sptd_col_parse_trigger("tracepoint=sched:sched_process_exit", &s, err, sizeof(err)), 0);
	CHECK_INT(s.kind, SPTD_TRIG_TRACEPOINT);
	CHECK_STR(s.system, "sched");
	CHECK_STR(s.event, "sched_process_exit");
	CHECK_STR(s.filter, "");

	/* the filter runs to the end and may hold commas and colons */
	CHECK_INT(sptd_col_parse_trigger("tracepoint=irq:irq_handler_entry,filter=irq==36 || name ~ \"a,b:c\"",
	                                 &s, err, sizeof(err)), 0);
	CHECK_STR(s.event, "irq_handler_entry");
	CHECK_STR(s.filter, "irq==36 || name ~ \"a,b:c\"");

	CHECK_INT(sptd_col_parse_trigger("timer=500ms", &s, err, sizeof(err)), 0);
	CHECK_INT(s.kind, SPTD_TRIG_TIMER);
	CHECK_INT(s.period_ns, 500000000);
	CHECK_INT(sptd_col_parse_trigger("latency=2ms", &s, err, sizeof(err)), 0);
	CHECK_INT(s.kind, SPTD_TRIG_LATENCY);
	CHECK_INT(sptd_col_parse_trigger("uprobe=/usr/bin/foo:main", &s, err, sizeof(err)), 0);
	CHECK_STR(s.path, "/usr/bin/foo");
	CHECK_STR(s.symbol, "main");
	/* break=PATH:SYMBOL: the ':' after the file name; a C++ name keeps its "::" */
	CHECK_INT(sptd_col_parse_trigger("break=/usr/lib/libq.so.1:ns::Q::flush", &s, err,
	                                 sizeof(err)), 0);
	CHECK_INT(s.kind, SPTD_TRIG_BREAK);
	CHECK_INT(s.pid, -1);
	CHECK_STR(s.path, "/usr/lib/libq.so.1");
	CHECK_STR(s.symbol, "ns::Q::flush");
	CHECK_INT(sptd_col_parse_trigger("break=1234:do_work", &s, err, sizeof(err)), 0);
	CHECK_INT(s.kind, SPTD_TRIG_BREAK);
	CHECK_INT(s.pid, 1234);
	CHECK_STR(s.symbol, "do_work");
	CHECK_INT(sptd_col_parse_trigger("watch=42:counter", &s, err, sizeof(err)), 0);
	CHECK_INT(s.kind, SPTD_TRIG_WATCH);
	CHECK_INT(s.pid, 42);
	CHECK_STR(s.symbol, "counter");
	CHECK_INT(s.bp_len, 8);
	CHECK_INT(s.bp_rw, 0);
	CHECK_INT(s.offset, 0);
	CHECK_INT(sptd_col_parse_trigger("watch=42:table+0x10,rw,len=4", &s, err, sizeof(err)), 0);
	CHECK_STR(s.symbol, "table");
	CHECK_INT(s.offset, 16);
	CHECK_INT(s.bp_rw, 1);
	CHECK_INT(s.bp_len, 4);
	CHECK_INT(sptd_col_parse_trigger("watch=42:0x7ffd1000,w,len=2", &s, err, sizeof(err)), 0);
	CHECK_STR(s.symbol, "");
	CHECK(s.addr == 0x7ffd1000);
	CHECK_INT(s.bp_len, 2);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		int ret = sptd_col_parse_trigger(bad[i], &s, err, sizeof(err));

		CHECK_INT(ret, -EINVAL);
		CHECK(err[0] != '\0'); /* every rejection says why */
		if (ret != -EINVAL)
			fprintf(stderr, "  accepted bad trigger '%s'\n", bad[i]);
	}
	CHECK_INT(sptd_col_parse_trigger(NULL, &s, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_col_parse_trigger("irq", NULL, err, sizeof(err)), -EINVAL);
}

static void test_irq_lookup(const char *dir)
{
	char path[512];
	int irqs[4];
	FILE *f;

	snprintf(path, sizeof(path), "%s/interrupts", dir);
	f = fopen(path, "w");
	fputs("           CPU0       CPU1       \n"
	      "  1:          9          0   IO-APIC   1-edge      i8042\n"
	      " 36:          0      28069 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
	      " 40:          1          2   IO-APIC  16-fasteoi   ehci_hcd:usb1, ahci\n"
	      " 41:          1          2   IO-APIC  17-fasteoi   ahci\n"
	      "NMI:          0          0   Non-maskable interrupts\n"
	      "LOC:       7581       9256   Local timer interrupts\n", f);
	fclose(f);
	CHECK_INT(sptd_col_irq_lookup(path, "virtio1-req.0", irqs, 4), 1);
	CHECK_INT(irqs[0], 36);
	CHECK_INT(sptd_col_irq_lookup(path, "ahci", irqs, 4), 2); /* shared and own line */
	CHECK_INT(irqs[0], 40);
	CHECK_INT(irqs[1], 41);
	CHECK_INT(sptd_col_irq_lookup(path, "ehci_hcd:usb1", irqs, 4), 1);
	CHECK_INT(sptd_col_irq_lookup(path, "virtio1", irqs, 4), -ENOENT); /* whole names only */
	CHECK_INT(sptd_col_irq_lookup(path, "Local", irqs, 4), -ENOENT);  /* not numbered IRQs */
	CHECK_INT(sptd_col_irq_lookup("/nonexistent/interrupts", "x", irqs, 4), -ENOENT);
	CHECK_INT(sptd_col_irq_lookup(path, "", irqs, 4), -EINVAL);
	CHECK_INT(sptd_col_irq_lookup(path, "ahci", NULL, 4), -EINVAL);
}

/* irq=NUM: an IRQ with a handler, one the kernel has without a handler
 * (a /sys/kernel/irq/N whose actions are empty: it never runs), none. */
static void test_irq_number(const char *dir)
{
	char path[512], sysdir[512], file[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/interrupts", dir);   /* from test_irq_lookup */
	snprintf(sysdir, sizeof(sysdir), "%s/irq", dir);
	/* without the sysfs directory: /proc/interrupts alone */
	CHECK_INT(sptd_col_irq_number_check(path, sysdir, 36), 1);
	CHECK_INT(sptd_col_irq_number_check(path, NULL, 41), 1);
	CHECK_INT(sptd_col_irq_number_check(path, sysdir, 999), -ENOENT);
	CHECK_INT(sptd_col_irq_number_check(path, sysdir, 4), -ENOENT);   /* not " 41" */
	CHECK_INT(sptd_col_irq_number_check("/nonexistent/interrupts", NULL, 1), -ENOENT);
	CHECK_INT(sptd_col_irq_number_check(path, NULL, -1), -EINVAL);
	CHECK_INT(sptd_col_irq_number_check(NULL, NULL, 1), -EINVAL);
	/* with it: exact */
	CHECK_INT(mkdir(sysdir, 0700), 0);
	snprintf(file, sizeof(file), "%s/36", sysdir);
	CHECK_INT(mkdir(file, 0700), 0);
	snprintf(file, sizeof(file), "%s/36/actions", sysdir);
	f = fopen(file, "w");
	fputs("virtio1-req.0\n", f);
	fclose(f);
	snprintf(file, sizeof(file), "%s/27", sysdir);
	CHECK_INT(mkdir(file, 0700), 0);
	snprintf(file, sizeof(file), "%s/27/actions", sysdir);
	f = fopen(file, "w");
	fputs("\n", f);
	fclose(f);
	CHECK_INT(sptd_col_irq_number_check(path, sysdir, 36), 1);
	CHECK_INT(sptd_col_irq_number_check(path, sysdir, 27), 0);       /* no handler */
	CHECK_INT(sptd_col_irq_number_check(path, sysdir, 41), -ENOENT); /* sysfs rules */
	CHECK_INT(sptd_col_irq_number_check(path, sysdir, 999), -ENOENT);
	snprintf(file, sizeof(file), "%s/27/actions", sysdir);
	unlink(file);
	snprintf(file, sizeof(file), "%s/27", sysdir);
	rmdir(file);
	snprintf(file, sizeof(file), "%s/36/actions", sysdir);
	unlink(file);
	snprintf(file, sizeof(file), "%s/36", sysdir);
	rmdir(file);
	rmdir(sysdir);
}

static void test_cpus(void)
{
	int cpus[16];

	CHECK_INT(sptd_col_cpus_parse("0-3,6\n", cpus, 16), 5);
	CHECK_INT(cpus[4], 6);
	CHECK_INT(sptd_col_cpus_parse("0\n", cpus, 16), 1);
	CHECK_INT(sptd_col_cpus_parse("0-1,4-5", cpus, 16), 4);
	CHECK_INT(cpus[2], 4);
	CHECK_INT(sptd_col_cpus_parse("3-1", cpus, 16), -EINVAL);
	CHECK_INT(sptd_col_cpus_parse("x", cpus, 16), -EINVAL);
	CHECK_INT(sptd_col_cpus_parse("0-31", cpus, 16), -E2BIG);
	CHECK(sptd_col_cpus_online(cpus, 16) >= 1);
	{
		static const struct { int cpus[4], n; const char *hex; } masks[] = {
			{ { 1 }, 1, "2" }, { { 0, 1 }, 2, "3" }, { { 0, 32 }, 2, "1,00000001" },
			{ { 31 }, 1, "80000000" }, { { 4, 65 }, 2, "2,00000000,00000010" },
		};
		char hex[64];

		for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
			CHECK_INT(sptd_col_cpumask_hex(masks[i].cpus, masks[i].n, hex, sizeof(hex)), 0);
			CHECK_STR(hex, masks[i].hex);
		}
		CHECK_INT(sptd_col_cpumask_hex(masks[4].cpus, 2, hex, 8), -E2BIG);
		cpus[0] = -1;
		CHECK_INT(sptd_col_cpumask_hex(cpus, 1, hex, sizeof(hex)), -EINVAL);
	}
}

static void test_record_options(void)
{
	struct sptd_col_record_opts o;
	struct sptd_col_plan plan;
	char *ok[] = { "sysptd", "--window", "5ms", "--post", "1ms", "-t", "irq=3", "--trigger",
		       "timer=1s", "--once", "--keep", "4", "-o", "/tmp/x", "--freq", "999", NULL };
	char *bad[][4] = {
		{ "sysptd", "--window", "soon", NULL }, { "sysptd", "--window", "0", NULL },
		{ "sysptd", "--bogus", NULL, NULL }, { "sysptd", "--trigger", "wat", NULL },
		{ "sysptd", "--source", "magic", NULL }, { "sysptd", "--freq", "0", NULL },
		{ "sysptd", "--buffer", "12", NULL }, { "sysptd", "extra", NULL, NULL },
		{ "sysptd", "--window", NULL, NULL },
	};

	CHECK_INT(sptd_col_record_parse(16, ok, &o), 0);
	CHECK_INT(o.window_ns, 5000000);
	CHECK_INT(o.post_ns, 1000000);
	CHECK_INT(o.ntriggers, 2);
	CHECK_INT(o.triggers[0].irq, 3);
	CHECK_INT(o.count, 1);
	CHECK_INT(o.keep, 4);
	CHECK_INT(o.freq, 999);
	CHECK_STR(o.output, "/tmp/x");
	/* the options as the plan sizes them (tests/collector/record/test_plan.c
	 * has the whole table) */
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_SAMPLE, NULL, 4096, &plan), 0);
	CHECK_INT(plan.ftrace_kb, 1024); /* small windows get the floor */
	o.window_ns = 10000000000LL;
	CHECK_INT(sptd_col_plan_compute(&o, SPTD_SOURCE_SAMPLE, NULL, 4096, &plan), 0);
	CHECK_INT(plan.ftrace_kb, 640128 > 262144 ? 262144 : 640128);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int argc = 0;

		while (bad[i][argc])
			argc++;
		CHECK_INT(sptd_col_record_parse(argc, bad[i], &o), -EINVAL);
	}
}

static void test_tasks(void)
{
	struct sptd_col_tasks *t = NULL;

	CHECK_INT(sptd_col_tasks_create(NULL), -EINVAL);
	CHECK_INT(sptd_col_tasks_create(&t), 0);
	CHECK_INT(sptd_col_tasks_utid(t, 0), 0);
	CHECK_INT(sptd_col_tasks_utid(t, 100), 1);
	CHECK_INT(sptd_col_tasks_utid(t, 101), 2);
	CHECK_INT(sptd_col_tasks_utid(t, 100), 1); /* stable */
	CHECK_INT(sptd_col_tasks_utid(t, -1), -EINVAL);
	CHECK_INT(sptd_col_tasks_note(t, 101, 100, "worker", NULL), 0);
	CHECK_INT(sptd_col_tasks_note(t, -5, 1, "x", NULL), -EINVAL);
	for (int tid = 1000; tid < 5000; tid++) /* grow past the first table */
		CHECK_INT(sptd_col_tasks_utid(t, tid), tid - 1000 + 3);
	CHECK_INT(sptd_col_tasks_utid(t, 101), 2);
	CHECK_INT(sptd_col_tasks_store(t, NULL), -EINVAL);
	sptd_col_tasks_destroy(t);
	sptd_col_tasks_destroy(NULL);
}

/* The PID namespace check: this test runs where recording would (the
 * host's namespace, or CI's), so it says 0 unless the test itself runs in
 * a namespace of its own; the inode is the one /proc/self/ns/pid names. */
static void test_pidns(void)
{
	unsigned long ino = 0;
	char link[64], want[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
	int nested = sptd_col_pidns_nested(&ino);

	CHECK_INT(sptd_col_pidns_nested(NULL), -EINVAL);
	CHECK(nested == 0 || nested == 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = '\0';
		snprintf(want, sizeof(want), "pid:[%lu]", ino);
		CHECK_STR(link, want);
		CHECK_INT(nested, strcmp(link, "pid:[4026531836]") != 0);
	}
}

int main(void)
{
	char dir[] = "/tmp/sptd-parse-XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	test_durations();
	test_sizes();
	test_call_graph();
	test_triggers();
	test_irq_lookup(dir);
	test_irq_number(dir);
	test_cpus();
	test_record_options();
	test_tasks();
	test_pidns();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		(void)!system(cmd);
	}
	return SPTD_TEST_END();
}
