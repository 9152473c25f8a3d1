/* test_perfetto_protoc.c — the exporter's bytes checked by protoc:
 * `protoc --decode=perfetto.protos.Trace tests/perfetto/sysptd_trace.proto`
 * must accept the file, print expected values, and find no field that the
 * .proto does not declare (protoc prints those as bare numbers).  Skips
 * when protoc is not installed (Debian: protobuf-compiler). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_query.h"
#include "sptd_store.h"
#include "sptd_test.h"

static const char *const expected[] = {
	"sysname: \"Linux\"", "release: \"6.1.0-test\"", "primary_trace_clock: 6",
	"switch_next_pid: 42", "intern_table: \"worker\"", "waking_pid: 43",
	"irq_handler_entry {", "name: \"eth0\"", "softirq_entry {",
	"type: TYPE_SLICE_BEGIN", "type: TYPE_SLICE_END", "type: TYPE_INSTANT",
	"name: \"handle_request\"", "thread_name: \"worker\"", "name: \"sysptd gaps cpu 0\"",
	"name: \"sysptd trigger\"", "timestamp_clock_id: 3", "cmdline: \"server\"",
	NULL,
};

int main(void)
{
	char dir[] = "/tmp/sptd-pfprotoc-XXXXXX", db[128], out[128], cmd[1024], err[256];
	const char *src = getenv("SPTD_SRC");
	struct sptd_store *st = NULL;
	char *text = NULL;
	size_t len = 0, cap = 0, n, i;
	char buf[4096], line[512];
	FILE *f, *p;
	int unknown = 0;

	if (system("protoc --version >/dev/null 2>&1") != 0)
		SPTD_SKIP("protoc not found (apt install protobuf-compiler)");
	if (!src)
		SPTD_SKIP("SPTD_SRC not set (run through ctest)");
	if (!mkdtemp(dir))
		SPTD_SKIP("cannot create a temporary directory");
	snprintf(db, sizeof(db), "%s/i.db", dir);
	snprintf(out, sizeof(out), "%s/i.pftrace", dir);
	CHECK_INT(sptd_store_create(db, &st), 0);
	if (!st)
		return SPTD_TEST_END();
	sptd_store_meta_set_int(st, "window_start", 5000);
	sptd_store_meta_set_int(st, "window_end", 9000);
	sptd_store_meta_set(st, "clock", "monotonic");
	sptd_store_meta_set(st, "kernel", "6.1.0-test");
	SPTD_STORE_ADD(st, process, 1, 42, "server", "server --port 80");
	SPTD_STORE_ADD(st, thread, 1, 42, 1, "worker");
	SPTD_STORE_ADD(st, thread, 2, 43, 1, "helper");
	SPTD_STORE_ADD(st, sched_slice, 5000, 1000, 0, 1, "S", 120, 0);
	SPTD_STORE_ADD(st, sched_slice, 6000, 3000, 0, 2, NULL, 120, 0);
	SPTD_STORE_ADD(st, thread_state, 5500, 500, 2, "R", 0, 1, 0);
	SPTD_STORE_ADD(st, irq_slice, 5200, 100, 0, 11, "eth0", 1, 0);
	SPTD_STORE_ADD(st, softirq_slice, 5300, 100, 0, 3, "NET_RX", 0);
	SPTD_STORE_ADD(st, dso, 1, "/usr/bin/server", NULL);
	SPTD_STORE_ADD(st, symbol, 1, "handle_request", 1, 0x1000, 0x100);
	SPTD_STORE_ADD(st, slice, 1, 5000, 800, 0, 1, 0, -1, 1, "user", 0);
	SPTD_STORE_ADD(st, callsite, 1, -1, 0, 1, 0x1010);
	SPTD_STORE_ADD(st, sample, 7000, 0, 2, 1);
	SPTD_STORE_ADD(st, gap, 8000, 100, 0, "overflow");
	SPTD_STORE_ADD(st, trigger, 8900, 0, "timer", "timer=1ms");
	CHECK_INT(sptd_store_commit(st), 0);
	f = fopen(out, "wb");
	CHECK(f != NULL);
	if (!f)
		return SPTD_TEST_END();
	CHECK_INT(sptd_query_export(st, f, SPTD_QUERY_EXPORT_PROTO, NULL, err, sizeof(err)), 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
	         "protoc --proto_path=%s/tests/perfetto --decode=perfetto.protos.Trace "
	         "%s/tests/perfetto/sysptd_trace.proto < %s 2>&1; echo \"exit=$?\"",
	         src, src, out);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	if (!p)
		return SPTD_TEST_END();
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			text = realloc(text, cap);
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	pclose(p);
	CHECK(text != NULL);
	if (!text)
		return SPTD_TEST_END();
	text[len] = '\0';
	CHECK(strstr(text, "exit=0") != NULL);
	for (i = 0; expected[i]; i++)
		if (!strstr(text, expected[i])) {
			fprintf(stderr, "protoc output lacks: %s\n", expected[i]);
			CHECK(0);
		}
	/* a field the .proto does not declare is printed as "NUMBER: ..." */
	for (const char *s = text; *s;) {
		const char *e = strchr(s, '\n');
		size_t l = e ? (size_t)(e - s) : strlen(s);

		snprintf(line, sizeof(line), "%.*s", (int)(l < sizeof(line) - 1 ? l : sizeof(line) - 1), s);
		for (i = 0; line[i] == ' '; i++)
			;
		if (isdigit((unsigned char)line[i])) {
			fprintf(stderr, "undeclared field: %s\n", line);
			unknown++;
		}
		s += l + (e ? 1 : 0);
	}
	CHECK_INT(unknown, 0);
	if (getenv("SPTD_VERBOSE"))
		fputs(text, stdout);
	free(text);
	sptd_store_destroy(st);
	if (!getenv("SPTD_KEEP")) {
		remove(out);
		remove(db);
		rmdir(dir);
	}
	return SPTD_TEST_END();
}
