/* test_cpus.c — the one CPU-list parser (collector/perf/cpus.c), table-
 * driven: sysfs lists, counting without an array, too many CPUs, malformed
 * lists, the online list through a fake read, and invalid arguments. */
#include <errno.h>

#include "sptd_col_perf.h"
#include "sptd_test.h"

static const char *online_text;   /* what the fake read returns; NULL: ENOENT */

static ssize_t fake_read_file(const char *path, char *buf, size_t len)
{
	(void)path;
	if (!online_text)
		return -ENOENT;
	snprintf(buf, len, "%s", online_text);
	return (ssize_t)strlen(buf);
}

static void test_parse(void)
{
	static const struct {
		const char *text;    /* the list */
		int ret;             /* count or -errno, with room for 16 */
		int first, last;     /* first and last CPU when ret > 0 */
	} cases[] = {
		{ "0-1\n", 2, 0, 1 },
		{ "0\n", 1, 0, 0 },
		{ "0,2-3,7", 4, 0, 7 },
		{ "4-7,9\n", 5, 4, 9 },
		{ "0-15", 16, 0, 15 },
		{ "65535", 1, 65535, 65535 },
		{ "", 0, 0, 0 },
		{ "\n", 0, 0, 0 },
		{ "0-16", -E2BIG, 0, 0 },
		{ "a", -EINVAL, 0, 0 },
		{ "3-1", -EINVAL, 0, 0 },
		{ "0-", -EINVAL, 0, 0 },
		{ "0;1", -EINVAL, 0, 0 },
		{ "-1", -EINVAL, 0, 0 },
		{ "0,", 1, 0, 0 },
		{ "65536", -EINVAL, 0, 0 },
		{ "0-99999999999", -EINVAL, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int cpus[16] = { 0 };
		int ret = sptd_col_cpus_parse(cases[i].text, cpus, 16);

		CHECK_INT(ret, cases[i].ret);
		if (ret > 0) {
			CHECK_INT(cpus[0], cases[i].first);
			CHECK_INT(cpus[ret - 1], cases[i].last);
		}
		/* counting alone gives the same count, without a limit */
		ret = sptd_col_cpus_parse(cases[i].text, NULL, 0);
		CHECK_INT(ret, cases[i].ret == -E2BIG ? 17 : cases[i].ret);
	}
	CHECK_INT(sptd_col_cpus_parse("0-4095", NULL, 0), 4096);
}

static void test_online(void)
{
	struct sptd_col_sys saved = sptd_col_sys;
	int cpus[8];

	sptd_col_sys.read_file = fake_read_file;
	online_text = "0-3\n";
	CHECK_INT(sptd_col_cpus_online(cpus, 8), 4);
	CHECK_INT(cpus[3], 3);
	CHECK_INT(sptd_col_cpus_online(NULL, 0), 4);
	CHECK_INT(sptd_col_cpus_online(cpus, 2), -E2BIG);
	online_text = NULL;
	CHECK_INT(sptd_col_cpus_online(cpus, 8), -ENOENT);
	sptd_col_sys = saved;
	/* this machine's */
	CHECK(sptd_col_cpus_online(NULL, 0) >= 1);
}

static void test_invalid(void)
{
	int cpus[4];

	CHECK_INT(sptd_col_cpus_parse(NULL, cpus, 4), -EINVAL);
	CHECK_INT(sptd_col_cpus_parse("0", NULL, 4), -EINVAL);
	CHECK_INT(sptd_col_cpus_parse("0", cpus, 0), -EINVAL);
	CHECK_INT(sptd_col_cpus_parse("0", cpus, -1), -EINVAL);
	CHECK_INT(sptd_col_cpus_online(NULL, 4), -EINVAL);
}

int main(void)
{
	test_parse();
	test_online();
	test_invalid();
	return SPTD_TEST_END();
}
