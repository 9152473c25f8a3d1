/* test_lookup.c — the lookups raw triggers need: a tracepoint field's place
 * in the raw record (sched/), and a function's file offset by name (decode/)
 * as uprobes are placed. */
#include <errno.h>
#include <fcntl.h>

#include "sptd_dec.h"
#include "sptd_sched.h"
#include "sptd_test.h"

__attribute__((noinline)) int sptd_lookup_probe_target(int x);
__attribute__((noinline)) int sptd_lookup_probe_target(int x)
{
	return x * 3 + 1;
}

static void test_fields(void)
{
	int off = -1, size = -1, off2 = -1;

	if (sptd_sched_event_exists("sched", "sched_switch", NULL) != 1) {
		fprintf(stderr, "no tracefs here: field lookups not checked\n");
		return;
	}
	CHECK_INT(sptd_sched_event_field("sched", "sched_switch", "next_pid", &off, &size), 0);
	CHECK_INT(size, 4);
	CHECK(off >= 8); /* after the common header */
	CHECK_INT(sptd_sched_event_field("sched", "sched_switch", "prev_comm", &off2, &size), 0);
	CHECK_INT(size, 16); /* arrays: "char prev_comm[16]" */
	CHECK(off2 >= 8 && off2 != off);
	/* dynamic arrays: "__data_loc char[] name", a 4-byte locator */
	if (sptd_sched_event_exists("irq", "irq_handler_entry", NULL) == 1) {
		CHECK_INT(sptd_sched_event_field("irq", "irq_handler_entry", "name", &off, &size), 0);
		CHECK_INT(size, 4);
		CHECK_INT(sptd_sched_event_field("irq", "irq_handler_entry", "irq", &off2, &size), 0);
		CHECK_INT(off2, 8);
	}
	CHECK_INT(sptd_sched_event_field("sched", "sched_switch", "common_pid", &off, &size), 0);
	CHECK_INT(off, 4);
	CHECK_INT(sptd_sched_event_field("sched", "sched_switch", "next", &off, &size), -ENOENT);
	CHECK_INT(sptd_sched_event_field("sched", "no_such_event", "pid", &off, &size), -ENOENT);
	CHECK_INT(sptd_sched_event_field("sched/..", "x", "pid", &off, &size), -EINVAL);
	CHECK_INT(sptd_sched_event_field("sched", "sched_switch", NULL, &off, &size), -EINVAL);
	CHECK_INT(sptd_sched_event_field("sched", "sched_switch", "pid", NULL, &size), -EINVAL);
}

static void test_symbol_offset(void)
{
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	uint64_t offset = 0;
	unsigned char in_file[16], in_memory[16];
	int fd;

	CHECK_INT(sptd_dec_symfile_load_elf("/proc/self/exe", &sf), 0);
	if (!sf)
		return;
	CHECK_INT(sptd_dec_symfile_find(sf, "sptd_lookup_probe_target", &sym), 0);
	CHECK_INT(sptd_dec_symfile_offset(sf, sym.addr, &offset), 0);
	/* the bytes at that file offset are the function's code as it runs */
	fd = open("/proc/self/exe", O_RDONLY);
	CHECK(fd >= 0 && pread(fd, in_file, sizeof(in_file), (off_t)offset) == (ssize_t)sizeof(in_file));
	close(fd);
	memcpy(in_memory, (const void *)(uintptr_t)&sptd_lookup_probe_target, sizeof(in_memory));
	CHECK(memcmp(in_file, in_memory, sizeof(in_file)) == 0);
	CHECK_INT(sptd_dec_symfile_find(sf, "no_such_function_here", &sym), -ENOENT);
	CHECK_INT(sptd_dec_symfile_find(sf, "", &sym), -EINVAL);
	CHECK_INT(sptd_dec_symfile_find(NULL, "main", &sym), -EINVAL);
	CHECK_INT(sptd_dec_symfile_offset(sf, 0xffffffffffff0000ULL, &offset), -ENOENT);
	CHECK_INT(sptd_dec_symfile_offset(NULL, 0, &offset), -EINVAL);
	CHECK_INT(sptd_lookup_probe_target(2), 7);
	sptd_dec_symfile_destroy(sf);
}

int main(void)
{
	test_fields();
	test_symbol_offset();
	return SPTD_TEST_END();
}
