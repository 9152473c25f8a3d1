/* test_query_cmd.c — `sysptd query`: output and exit statuses.  Runs the
 * built program ($SPTD_BIN) when it exists; otherwise calls
 * sptd_col_cmd_query() in this process with stdout/stderr sent to files. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_test.h"
#include "query_incident.c"

static const char *bin;          /* $SPTD_BIN when executable, else NULL */
static char out_text[65536];     /* stdout of the last run */
static char err_text[8192];      /* stderr of the last run */
static const char *stdin_path;   /* stdin of the next runs (NULL: /dev/null) */

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

/* Run `sysptd query ARGS...` (NULL-terminated); returns its exit status. */
static int query(const char *arg0, ...)
{
	char *argv[24];
	char outp[512], errp[512];
	int argc = 0, status = -1, fd_out, fd_err, saved_out, saved_err;
	va_list ap;

	argv[argc++] = "query";
	va_start(ap, arg0);
	for (const char *a = arg0; a && argc < 23; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	snprintf(outp, sizeof(outp), "%s", tq_path("stdout.txt"));
	snprintf(errp, sizeof(errp), "%s", tq_path("stderr.txt"));

	fflush(stdout);
	fflush(stderr);
	fd_out = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fd_err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd_out < 0 || fd_err < 0) {
		perror("open");
		exit(1);
	}
	if (bin) {
		char *full[26];
		pid_t pid;

		full[0] = (char *)bin;
		for (int i = 0; i <= argc; i++)
			full[i + 1] = argv[i];
		pid = fork();
		if (pid == 0) {
			int fd_in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);

			dup2(fd_in, 0);
			dup2(fd_out, 1);
			dup2(fd_err, 2);
			execv(bin, full);
			_exit(127);
		}
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
			status = WEXITSTATUS(status);
		else
			status = -1;
	} else {
		int fd_in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
		int saved_in = dup(0);

		saved_out = dup(1);
		saved_err = dup(2);
		dup2(fd_in, 0);
		close(fd_in);
		clearerr(stdin);
		dup2(fd_out, 1);
		dup2(fd_err, 2);
		status = sptd_col_cmd_query(argc, argv);
		fflush(stdout);
		fflush(stderr);
		dup2(saved_in, 0);
		clearerr(stdin);
		dup2(saved_out, 1);
		dup2(saved_err, 2);
		close(saved_in);
		close(saved_out);
		close(saved_err);
	}
	close(fd_out);
	close(fd_err);
	slurp(outp, out_text, sizeof(out_text));
	slurp(errp, err_text, sizeof(err_text));
	return status;
}

/* Write @text to file @name under the test directory; returns its path
 * (a static buffer of its own: tq_path's is reused by every run). */
static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s", tq_path(name));
	f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* Issue 14 item 7: several incidents, `latest`, SQL from a file and from
 * stdin; item 8: text never cut when the output is not a terminal. */
static void test_several(const char *sample, const char *pt, const char *missing,
                         const char *corrupt)
{
	char want[4096], dir[512], a[600], b[600], c[600], nodir[512], nofile[512];

	/* the README's own example: a glob of incidents and a report */
	CHECK_INT(query(sample, pt, "--report", "cpus", NULL), SPTD_EXIT_OK);
	snprintf(want, sizeof(want), "=== %s ===\n== per CPU", sample);
	CHECK(strncmp(out_text, want, strlen(want)) == 0);
	snprintf(want, sizeof(want), "\n=== %s ===\n== per CPU", pt);
	CHECK(strstr(out_text, want) != NULL);
	CHECK_STR(err_text, "");
	/* json: one array of report objects, each naming its incident */
	CHECK_INT(query(sample, pt, "-r", "irq", "--format", "json", NULL), SPTD_EXIT_OK);
	CHECK(out_text[0] == '[' && strstr(out_text, "\"incident\": ") != NULL);
	snprintf(want, sizeof(want), "\"incident\": \"%s\"", pt);
	CHECK(strstr(out_text, want) != NULL);
	/* one result with a first column `incident` */
	CHECK_INT(query(sample, pt, "SELECT count(*) AS n, sum(dur) AS d FROM sched_slice",
	                "--format", "csv", NULL), SPTD_EXIT_OK);
	snprintf(want, sizeof(want), "incident,n,d\n%s,6,20500000\n%s,6,20500000\n", sample, pt);
	CHECK_STR(out_text, want);
	CHECK_INT(query(sample, pt, "SELECT value FROM meta WHERE key = 'source'", NULL),
	          SPTD_EXIT_OK);
	CHECK(strstr(out_text, " incident ") == out_text + 0 || strstr(out_text, "incident") != NULL);
	CHECK(strstr(out_text, "| sample\n") != NULL && strstr(out_text, "| pt\n") != NULL);
	CHECK(strstr(out_text, "(2 rows)\n") != NULL);
	/* a missing and a corrupt incident are reported; the good one is read;
	 * exit 6 */
	CHECK_INT(query(missing, sample, corrupt, "SELECT 7 AS seven", "--format", "csv", NULL),
	          SPTD_EXIT_BADFILE);
	snprintf(want, sizeof(want), "incident,seven\n%s,7\n", sample);
	CHECK(strncmp(out_text, want, strlen(want)) == 0 || strcmp(out_text, "seven\n7\n") == 0);
	CHECK(strstr(err_text, "missing.db") != NULL);
	/* SQL after the incidents only */
	CHECK_INT(query(sample, "SELECT 1", pt, NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "after the SQL") != NULL);

	/* latest: the newest incident-*.db in --dir, in version order (-10
	 * after -9), whatever the others are called */
	snprintf(dir, sizeof(dir), "%s", tq_path("latest"));
	mkdir(dir, 0700);
	snprintf(a, sizeof(a), "%s/incident-20240101T000000Z-9.db", dir);
	snprintf(b, sizeof(b), "%s/incident-20240101T000000Z-10.db", dir);
	snprintf(c, sizeof(c), "%s/zzz-imported.db", dir);
	CHECK(link(sample, a) == 0 && link(pt, b) == 0 && link(sample, c) == 0);
	CHECK_INT(query("latest", "--dir", dir, "SELECT value FROM meta WHERE key = 'source'",
	                "--format", "csv", NULL), SPTD_EXIT_OK);
	CHECK_STR(out_text, "value\npt\n");
	CHECK_INT(query("-d", dir, "latest", sample, "SELECT count(*) AS n FROM meta",
	                "--format", "csv", NULL), SPTD_EXIT_OK);
	snprintf(want, sizeof(want), "incident,n\n%s,", b);
	CHECK(strncmp(out_text, want, strlen(want)) == 0);
	snprintf(nodir, sizeof(nodir), "%s", tq_path("no-such-dir"));
	snprintf(nofile, sizeof(nofile), "%s", tq_path("no-such.sql"));
	CHECK_INT(query("latest", "--dir", nodir, "SELECT 1", NULL),
	          SPTD_EXIT_BADFILE);
	CHECK(strstr(err_text, "latest: cannot read") != NULL && strstr(err_text, "--dir") != NULL);
	unlink(a);
	unlink(b);
	unlink(c);
	CHECK_INT(query("latest", "--dir", dir, "SELECT 1", NULL), SPTD_EXIT_BADFILE);
	CHECK(strstr(err_text, "latest: no incident") != NULL);
	rmdir(dir);

	/* -f FILE: several statements, each its own result, comments and a
	 * ';' inside a string */
	CHECK_INT(query(sample, "-f", write_file("q.sql", "-- counts\nSELECT count(*) AS n FROM "
	                "sched_slice;\nSELECT ';' AS semi,\n  2 AS two;\n"), "--format", "csv", NULL),
	          SPTD_EXIT_OK);
	CHECK_STR(out_text, "n\n6\nsemi,two\n;,2\n");
	CHECK_INT(query(sample, "--file", write_file("bad.sql", "SELECT 1 AS one; SELEC 2;\n"
	                "SELECT 3;"), "--format", "csv", NULL), SPTD_EXIT_USAGE);
	CHECK_STR(out_text, "one\n1\n");
	CHECK(strstr(err_text, "syntax error") != NULL);
	/* an error names the statement and its line (issue 30) */
	CHECK(strstr(err_text, "statement 2 (line 1): ") != NULL);
	/* statements are split by SQLite: the ';' inside a trigger's BEGIN ...
	 * END and in a comment do not end a statement, so the trigger is one
	 * statement, refused as a write, named once by its line */
	CHECK_INT(query(sample, "-f", write_file("trig.sql", "SELECT 1 AS one; -- a; b\n"
	                "/* c; */\nCREATE TRIGGER t AFTER INSERT ON meta BEGIN\n"
	                "  SELECT 1;\nEND;\nSELECT 3 AS three;\n"), "--format", "csv", NULL),
	          SPTD_EXIT_USAGE);
	CHECK_STR(out_text, "one\n1\n");
	CHECK(strstr(err_text, "statement 2 (line 3): query is read-only") != NULL);
	CHECK(strchr(err_text, '\n') == err_text + strlen(err_text) - 1);
	/* one statement alone is not numbered */
	CHECK_INT(query(sample, "-f", write_file("trig.sql", "\n\nSELEC 1;\n"), NULL),
	          SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "statement") == NULL && strstr(err_text, "syntax error") != NULL);
	CHECK_INT(query(sample, "-f", nofile, NULL), SPTD_EXIT_BADFILE);
	CHECK(strstr(err_text, "no-such.sql") != NULL);
	/* the old -f FORMAT gets a hint */
	CHECK_INT(query(sample, "SELECT 1", "-f", "csv", NULL), SPTD_EXIT_USAGE);
	CHECK_INT(query(sample, "-f", "csv", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "--format csv") != NULL);
	/* '-': SQL from stdin, also through -f - */
	stdin_path = write_file("stdin.sql", "SELECT name FROM thread WHERE tid = 101;");
	CHECK_INT(query(sample, "-", "--format", "csv", NULL), SPTD_EXIT_OK);
	CHECK_STR(out_text, "name\nworker\n");
	CHECK_INT(query(sample, "-f", "-", "--format", "csv", NULL), SPTD_EXIT_OK);
	CHECK_STR(out_text, "name\nworker\n");
	stdin_path = NULL;

	/* item 8: not a terminal, nothing is cut, however long */
	CHECK_INT(query(sample, "SELECT printf('%.100c', 'x') AS t", NULL), SPTD_EXIT_OK);
	snprintf(want, sizeof(want), " %.100s\n(1 row)\n", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	CHECK(strstr(out_text, want) != NULL);
	CHECK(strstr(out_text, "\xe2\x80\xa6") == NULL);
	/* --width N cuts to N columns even to a file */
	CHECK_INT(query(sample, "SELECT printf('%.100c', 'x') AS t", "--width", "20", NULL),
	          SPTD_EXIT_OK);
	CHECK(strstr(out_text, " xxxxxxxxxxxxxxxxx\xe2\x80\xa6\n") != NULL);
	CHECK_INT(query(sample, "SELECT 1", "-w", "wide", NULL), SPTD_EXIT_USAGE);
}

int main(void)
{
	static const char *const files[] = { "sample.db", "text.db", "corrupt.db", "stdout.txt",
	                                     "stderr.txt", "pt.db", "q.sql", "bad.sql",
	                                     "stdin.sql", "trig.sql", NULL };
	char sample[512], text[512], corrupt[512], missing[512], pt[512];
	const char *env = getenv("SPTD_BIN");
	FILE *f;

	bin = env && access(env, X_OK) == 0 ? env : NULL;
	printf("running %s\n", bin ? bin : "sptd_col_cmd_query() in-process");
	snprintf(sample, sizeof(sample), "%s", tq_path("sample.db"));
	snprintf(text, sizeof(text), "%s", tq_path("text.db"));
	snprintf(corrupt, sizeof(corrupt), "%s", tq_path("corrupt.db"));
	snprintf(missing, sizeof(missing), "%s", tq_path("missing.db"));
	snprintf(pt, sizeof(pt), "%s", tq_path("pt.db"));
	if (tq_make_incident(sample, TQ_SAMPLE) < 0 || tq_make_incident(corrupt, TQ_SAMPLE) < 0 ||
	    tq_make_incident(pt, TQ_PT) < 0) {
		fprintf(stderr, "cannot build the test incidents\n");
		return 1;
	}
	f = fopen(text, "w");
	if (f) {
		fputs("this is not an incident\n", f);
		fclose(f);
	}
	/* corrupt: keep the SQLite header, overwrite the pages after it */
	f = fopen(corrupt, "r+");
	if (f) {
		static char junk[16384];

		memset(junk, 0xa5, sizeof(junk));
		fseek(f, 100, SEEK_SET);
		fwrite(junk, 1, sizeof(junk), f);
		fclose(f);
	}

	/* help and listing */
	CHECK_INT(query("--help", NULL), SPTD_EXIT_OK);
	CHECK(strstr(out_text, "Usage: sysptd query [OPTIONS] INCIDENT...") != NULL);
	CHECK_INT(query("--report", "list", NULL), SPTD_EXIT_OK);
	CHECK(strncmp(out_text, "summary ", 8) == 0);
	CHECK(strstr(out_text, "\nthreads ") != NULL);

	/* default: the summary report */
	CHECK_INT(query(sample, NULL), SPTD_EXIT_OK);
	CHECK(strncmp(out_text, "== incident ==\n", 15) == 0);
	CHECK(strstr(out_text, "== top 5 tasks by CPU time ==") != NULL);
	CHECK_STR(err_text, "");

	/* SQL and formats */
	CHECK_INT(query(sample, "SELECT cpu, count(*) AS n FROM sched_slice GROUP BY cpu ORDER BY cpu",
	                "--format", "csv", NULL), SPTD_EXIT_OK);
	CHECK_STR(out_text, "cpu,n\n0,3\n1,3\n");
	CHECK_INT(query("--format=json", sample, "SELECT name FROM thread WHERE tid = 101", NULL),
	          SPTD_EXIT_OK);
	CHECK_STR(out_text, "[\n{\"name\":\"worker\"}\n]\n");
	CHECK_INT(query(sample, "--report", "irq", "--format", "csv", NULL), SPTD_EXIT_OK);
	CHECK(strstr(out_text, "\n24,eth0,4,960000,30000,20000,1,2\n") != NULL);
	CHECK_INT(query(sample, "--report", "wakeup", "--include-clipped", "--format", "csv", NULL),
	          SPTD_EXIT_OK);
	CHECK(strstr(out_text, "\n1000000,*,1000000,102,late,100,server,0\n") != NULL);
	CHECK_INT(query(sample, "--report", "irq", "--include-clipped", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "--include-clipped goes with --report wakeup") != NULL);
	CHECK_INT(query(sample, "--report=cpus", NULL), SPTD_EXIT_OK);
	CHECK(strncmp(out_text, "== per CPU", 10) == 0);

	/* bad files */
	CHECK_INT(query(missing, NULL), SPTD_EXIT_BADFILE);
	CHECK(strncmp(err_text, "sysptd query: ", 14) == 0);
	CHECK_INT(query(text, "SELECT 1", NULL), SPTD_EXIT_BADFILE);
	CHECK(strncmp(err_text, "sysptd query: ", 14) == 0);
	{
		int st = query(corrupt, NULL);

		CHECK_INT(st, SPTD_EXIT_BADFILE);
		CHECK(strncmp(err_text, "sysptd query: ", 14) == 0);
		if (st != SPTD_EXIT_BADFILE)
			fprintf(stderr, "corrupt file: status %d, stderr: %s\n", st, err_text);
	}

	/* bad SQL, writes, bad command lines */
	CHECK_INT(query(sample, "SELEC 1", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "syntax error") != NULL);
	CHECK_STR(out_text, "");
	CHECK_INT(query(sample, "DROP TABLE meta", NULL), SPTD_EXIT_USAGE);
	CHECK(strncmp(err_text, "sysptd query: query is read-only", 32) == 0);
	CHECK_INT(query(sample, "SELECT count(*) AS n FROM meta WHERE key = 'host'", "--format",
	                "csv", NULL), SPTD_EXIT_OK);
	CHECK_STR(out_text, "n\n1\n");
	CHECK_INT(query(sample, "--report", "nope", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "unknown report 'nope'") != NULL);
	CHECK_INT(query(sample, "--format", "xml", NULL), SPTD_EXIT_USAGE);
	CHECK_INT(query(sample, "SELECT 1", "--report", "cpus", NULL), SPTD_EXIT_USAGE);
	CHECK_INT(query(sample, "SELECT 1", "extra", NULL), SPTD_EXIT_USAGE);
	CHECK_INT(query("--bogus", NULL), SPTD_EXIT_USAGE);
	CHECK_INT(query(NULL), SPTD_EXIT_USAGE);
	CHECK_INT(query(sample, "--report", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "--report needs a report name") != NULL);
	CHECK_INT(query(sample, "-f", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "-f needs a FILE of SQL") != NULL);
	CHECK_INT(query(sample, "--format", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "--format needs table, csv or json") != NULL);
	CHECK_INT(query(sample, "-x", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "unknown option '-x'") != NULL);
	CHECK_INT(query(sample, "SELECT 1", "extra", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "unexpected argument 'extra'") != NULL);

	/* getopt_long forms: value in the same argument, "--" ends the options */
	CHECK_INT(query(sample, "-rcpus", NULL), SPTD_EXIT_OK);
	CHECK(strncmp(out_text, "== per CPU", 10) == 0);
	CHECK_INT(query("--format=csv", "--", sample, "SELECT 2 AS two", NULL), SPTD_EXIT_OK);
	CHECK_STR(out_text, "two\n2\n");
	CHECK_INT(query(sample, "--", "-x y", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "syntax error") != NULL);

	test_several(sample, pt, missing, corrupt);

	/* several scans in one process: one that stopped inside "-hx" leaves
	 * nothing behind for the next (in-process whatever $SPTD_BIN says) */
	{
		const char *saved = bin;

		bin = NULL;
		CHECK_INT(query("-hx", NULL), SPTD_EXIT_OK);
		CHECK_INT(query(sample, "SELECT 1 AS one", "--format", "csv", NULL), SPTD_EXIT_OK);
		CHECK_STR(out_text, "one\n1\n");
		CHECK_STR(err_text, "");
		bin = saved;
	}

	tq_cleanup(files);
	return SPTD_TEST_END();
}
