/* fuzz_ftformat.c — ftrace format files (the raw_ftrace_format rows of an
 * incident) through sched/'s parser: libtraceevent parses the fields,
 * prev_state.c the __print_flags table of sched_switch.
 *
 * Input: one format text, given as "sched/sched_switch" (the richest: its
 * prev_state table is read by our own code) after this kernel's
 * header_page.  Checked: -EBADMSG with a reason, or success; and a page of
 * this kernel then parses (or is refused) without a crash whatever the
 * format said about field offsets. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "sptd_sched.h"

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static void *page;        /* a real page of this kernel (the ftrace corpus) */
static size_t page_len;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t len = 0;
	unsigned char *seed;

	(void)argc;
	(void)argv;
	sptd_fuzz_quiet_logs();
	seed = sptd_fuzz_read_file(SPTD_FUZZ_DATA "/../corpus/ftrace/seed-cpu0-first", &len);
	if (seed && len > 32) {
		page = seed;
		memmove(page, seed + 32, len - 32);   /* past the ftrace harness's header */
		page_len = len - 32;
	}
	return 0;
}

static int on_event(void *ctx, const struct sptd_sched_event *ev)
{
	(void)ctx;
	FUZZ_CHECK(ev->type >= SPTD_SCHED_SWITCH && ev->type <= SPTD_SCHED_SOFTIRQ_EXIT,
	           "event type %d", ev->type);
	if (ev->type == SPTD_SCHED_SWITCH)
		FUZZ_CHECK(memchr(ev->u.sw.prev_state, 0, sizeof(ev->u.sw.prev_state)) &&
		           memchr(ev->u.sw.prev_comm, 0, sizeof(ev->u.sw.prev_comm)) &&
		           memchr(ev->u.sw.next_comm, 0, sizeof(ev->u.sw.next_comm)),
		           "unterminated string in a switch");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sptd_sched_parser *p = NULL;
	char *text = malloc(size + 1);
	int rc;

	if (!text || sptd_sched_parser_create(&p) < 0) {
		free(text);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = 0;
	FUZZ_CHECK(sptd_sched_parser_add_format(p, "header_page", header_page) == 0,
	           "header_page: %s", sptd_sched_parser_error(p));
	rc = sptd_sched_parser_add_format(p, "sched/sched_switch", text);
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG || rc == -ENOMEM, "add_format: %d", rc);
	if (rc == -EBADMSG)
		FUZZ_CHECK(sptd_sched_parser_error(p)[0], "refused without a reason");
	if (page) {
		rc = sptd_sched_parser_parse_page(p, 0, page, page_len, on_event, NULL);
		FUZZ_CHECK(rc >= 0 || rc == -EBADMSG, "parse_page: %d", rc);
	}
	sptd_sched_parser_destroy(p);
	free(text);
	return 0;
}
