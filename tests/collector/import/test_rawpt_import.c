/* test_rawpt_import.c — `sysptd import` end to end on the real captures: the
 * incident's stats rows equal MANIFEST.md's figures, slices and symbols are
 * written, a re-decode (derive_all on the opened file) gives the same rows,
 * and bad command lines are refused with a usage status.  Without the
 * fixtures directory only the bad usage runs (and the test reports skip);
 * a file missing from it fails. */
#include <errno.h>
#include <sys/stat.h>

#include "sptd_col.h"
#include "sptd_col_derive.h"
#include "sptd_store.h"
#include "sptd_test.h"

static int64_t q(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	if (sptd_store_query_int(st, sql, &v) < 0)
		return -1;
	return v;
}

static int run_import(int argc, char **argv)
{
	return sptd_col_cmd_import(argc, argv);
}

static void test_unzip(const char *dir)
{
	char pt[1024], img[1100], out[1024], sched[1024];
	struct sptd_store *st = NULL;
	int64_t slices, symbols;
	FILE *f;

	if (sptd_test_fixture(pt, sizeof(pt), "real-pt/libxdc-unzip/trace.pt") < 0 ||
	    sptd_test_fixture(img, sizeof(img) - 16, "real-pt/libxdc-unzip/flat_400000.img") < 0)
		return;
	strcat(img, "@0x400000");
	snprintf(out, sizeof(out), "%s/unzip.db", dir);
	snprintf(sched, sizeof(sched), "%s/sched.txt", dir);
	f = fopen(sched, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "# ts cpu prev next comm\n0 0 0 4242 unzip\n");
	fclose(f);
	{
		char *argv[] = { "import", "--pt", pt, "--image", img, "--sched", sched,
		                 "-j", "1", "-o", out, NULL };

		CHECK_INT(run_import(11, argv), SPTD_EXIT_OK);
	}
	CHECK_INT(sptd_store_open(out, 1, &st), 0);
	if (!st)
		return;
	CHECK_INT(q(st, "SELECT value FROM stats WHERE name = 'instructions' AND cpu = 0"), 149576);
	CHECK_INT(q(st, "SELECT value FROM stats WHERE name = 'calls' AND cpu = 0"), 219);
	CHECK_INT(q(st, "SELECT value FROM stats WHERE name = 'returns' AND cpu = 0"), 111);
	CHECK_INT(q(st, "SELECT value FROM stats WHERE name = 'pt_bytes' AND cpu = 0"), 16896);
	CHECK_INT(q(st, "SELECT count(*) FROM raw_image"), 1);
	slices = q(st, "SELECT count(*) FROM slice");
	symbols = q(st, "SELECT count(*) FROM symbol");
	CHECK(slices >= 219);
	CHECK(symbols > 0);
	/* every slice belongs to the task the sched list names */
	CHECK_INT(q(st, "SELECT count(*) FROM slice s JOIN thread t ON t.utid = s.utid "
	            "WHERE t.tid = 4242"), slices);
	/* parents exist and are one level up */
	CHECK_INT(q(st, "SELECT count(*) FROM slice c JOIN slice p ON p.id = c.parent_id "
	            "WHERE p.depth <> c.depth - 1"), 0);
	CHECK_INT(q(st, "SELECT count(*) FROM slice WHERE parent_id IS NULL AND depth <> 0"), 0);
	/* placeholders name unknown code by image and offset */
	CHECK(q(st, "SELECT count(*) FROM symbol WHERE name LIKE 'flat_400000.img+0x%'") > 0);
	/* no timing packets: the clock says order */
	{
		char clock[32];

		CHECK(sptd_store_meta_get(st, "clock", clock, sizeof(clock)) > 0);
		CHECK_STR(clock, "order");
	}
	/* rebuild, as sysptd decode does: same rows, no duplicate symbols */
	CHECK_INT(sptd_col_derive_all(st, 2), 0);
	CHECK_INT(q(st, "SELECT count(*) FROM slice"), slices);
	CHECK_INT(q(st, "SELECT count(*) FROM symbol"), symbols);
	CHECK_INT(q(st, "SELECT count(*) FROM stats WHERE name = 'calls'"), 1);
	sptd_store_destroy(st);
}

static void test_hello(const char *dir)
{
	char pt[1024], img[1024], out[1024];
	struct sptd_store *st = NULL;
	char *argv[] = { "import", "--pt", pt, "--image", img, "--cpu-id", "6/85/4",
	                 "-o", out, NULL };

	if (sptd_test_fixture(pt, sizeof(pt), "real-pt/drpt2trace-hello/pt.bin") < 0 ||
	    sptd_test_fixture(img, sizeof(img), "real-pt/drpt2trace-hello/hello") < 0)
		return;
	snprintf(out, sizeof(out), "%s/hello.db", dir);
	CHECK_INT(run_import(9, argv), SPTD_EXIT_OK);
	CHECK_INT(sptd_store_open(out, 0, &st), 0);
	if (!st)
		return;
	CHECK_INT(q(st, "SELECT value FROM stats WHERE name = 'instructions'"), 8);
	CHECK_INT(q(st, "SELECT value FROM stats WHERE name = 'far_calls'"), 2);
	CHECK_INT(q(st, "SELECT count(*) FROM slice WHERE kind = 'syscall'"), 2);
	CHECK_INT(q(st, "SELECT count(*) FROM slice s JOIN symbol y ON y.id = s.symbol_id "
	            "WHERE y.name = '[syscall]'"), 2);
	/* the ELF is referenced, loaded by program headers (bias 0) */
	CHECK_INT(q(st, "SELECT count(*) FROM raw_mmap WHERE bias = 0 AND start = 0x400000"), 1);
	CHECK_INT(q(st, "SELECT value FROM meta WHERE key = 'pt_cpu_model'"), 85);
	sptd_store_destroy(st);
	st = NULL;
	/* the file on disk is no longer the one recorded (another build-id):
	 * a re-decode does not read it, its code becomes a gap */
	CHECK_INT(sptd_store_open(out, 1, &st), 0);
	if (!st)
		return;
	{
		struct sptd_store_stmt *stmt = NULL;

		CHECK_INT(sptd_store_prepare(st, "UPDATE dso SET build_id = "
		          "'00112233445566778899aabbccddeeff00112233' WHERE path LIKE '%/hello'",
		          &stmt), 0);
		CHECK(stmt && sptd_store_step(stmt) >= 0);
		sptd_store_finalize(stmt);
	}
	CHECK_INT(sptd_col_derive_all(st, 1), 0);
	CHECK_INT(q(st, "SELECT value FROM stats WHERE name = 'instructions'"), 0);
	CHECK(q(st, "SELECT count(*) FROM gap WHERE reason LIKE '%missing image%'") >= 1);
	sptd_store_destroy(st);
}

static void test_bad_usage(const char *dir)
{
	char out[1024];
	char *no_out[] = { "import", "--pt", "x.pt", NULL };
	char *bad_cpu[] = { "import", "--pt", "x.pt", "--cpu-id", "6-85", "-o", out, NULL };
	char *bad_opt[] = { "import", "--bogus", NULL };
	char *missing[] = { "import", "--pt", "/nonexistent/cpu0.pt", "-o", out, NULL };
	char *help[] = { "import", "--help", NULL };

	snprintf(out, sizeof(out), "%s/bad.db", dir);
	CHECK_INT(run_import(3, no_out), SPTD_EXIT_USAGE);
	CHECK_INT(run_import(7, bad_cpu), SPTD_EXIT_USAGE);
	CHECK_INT(run_import(2, bad_opt), SPTD_EXIT_USAGE);
	CHECK_INT(run_import(5, missing), SPTD_EXIT_BADFILE);
	CHECK_INT(run_import(2, help), SPTD_EXIT_OK);
	CHECK(access(out, F_OK) != 0);
}

static void test_derive_args(void)
{
	CHECK_INT(sptd_col_derive_pt(NULL, NULL, 0), -EINVAL);
}

int main(void)
{
	char dir[] = "/tmp/sptd-import-XXXXXX";

	if (!mkdtemp(dir))
		SPTD_SKIP("cannot make a temporary directory");
	/* import reads --image, --maps, --tasks and --sched after giving up
	 * root (as nobody from a root login): they must be readable to it */
	chmod(dir, 0755);
	/* the real captures; bad usage needs none */
	if (sptd_test_fixtures_for("importing the real captures")) {
		test_unzip(dir);
		test_hello(dir);
	}
	test_bad_usage(dir);
	test_derive_args();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return SPTD_TEST_END();
}
