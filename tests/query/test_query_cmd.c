/* test_query_cmd.c — `sysptd query`: output and exit statuses.  Runs the
 * built program ($SPTD_BIN) when it exists; otherwise calls
 * sptd_col_cmd_query() in this process with stdout/stderr sent to files. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_test.h"
#include "query_incident.c"

static const char *bin;          /* $SPTD_BIN when executable, else NULL */
static char out_text[65536];     /* stdout of the last run */
static char err_text[8192];      /* stderr of the last run */

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
	char *argv[16];
	char outp[512], errp[512];
	int argc = 0, status = -1, fd_out, fd_err, saved_out, saved_err;
	va_list ap;

	argv[argc++] = "query";
	va_start(ap, arg0);
	for (const char *a = arg0; a && argc < 15; a = va_arg(ap, const char *))
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
		char *full[18];
		pid_t pid;

		full[0] = (char *)bin;
		for (int i = 0; i <= argc; i++)
			full[i + 1] = argv[i];
		pid = fork();
		if (pid == 0) {
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
		saved_out = dup(1);
		saved_err = dup(2);
		dup2(fd_out, 1);
		dup2(fd_err, 2);
		status = sptd_col_cmd_query(argc, argv);
		fflush(stdout);
		fflush(stderr);
		dup2(saved_out, 1);
		dup2(saved_err, 2);
		close(saved_out);
		close(saved_err);
	}
	close(fd_out);
	close(fd_err);
	slurp(outp, out_text, sizeof(out_text));
	slurp(errp, err_text, sizeof(err_text));
	return status;
}

int main(void)
{
	static const char *const files[] = { "sample.db", "text.db", "corrupt.db", "stdout.txt",
	                                     "stderr.txt", NULL };
	char sample[512], text[512], corrupt[512], missing[512];
	const char *env = getenv("SPTD_BIN");
	FILE *f;

	bin = env && access(env, X_OK) == 0 ? env : NULL;
	printf("running %s\n", bin ? bin : "sptd_col_cmd_query() in-process");
	snprintf(sample, sizeof(sample), "%s", tq_path("sample.db"));
	snprintf(text, sizeof(text), "%s", tq_path("text.db"));
	snprintf(corrupt, sizeof(corrupt), "%s", tq_path("corrupt.db"));
	snprintf(missing, sizeof(missing), "%s", tq_path("missing.db"));
	if (tq_make_incident(sample, TQ_SAMPLE) < 0 || tq_make_incident(corrupt, TQ_SAMPLE) < 0) {
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
	CHECK(strstr(out_text, "Usage: sysptd query INCIDENT") != NULL);
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
	CHECK_INT(query(sample, "--report", "irq", "-f", "csv", NULL), SPTD_EXIT_OK);
	CHECK(strstr(out_text, "\n24,eth0,4,960000,30000,20000,1,2\n") != NULL);
	CHECK_INT(query(sample, "--report", "wakeup", "--include-clipped", "-f", "csv", NULL),
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
	CHECK_INT(query(sample, "SELECT count(*) AS n FROM meta WHERE key = 'host'", "-f", "csv",
	                NULL), SPTD_EXIT_OK);
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
	CHECK(strstr(err_text, "-f needs table, csv or json") != NULL);
	CHECK_INT(query(sample, "-x", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "unknown option '-x'") != NULL);
	CHECK_INT(query(sample, "SELECT 1", "extra", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "unexpected argument 'extra'") != NULL);

	/* getopt_long forms: value in the same argument, "--" ends the options */
	CHECK_INT(query(sample, "-rcpus", NULL), SPTD_EXIT_OK);
	CHECK(strncmp(out_text, "== per CPU", 10) == 0);
	CHECK_INT(query("-fcsv", "--", sample, "SELECT 2 AS two", NULL), SPTD_EXIT_OK);
	CHECK_STR(out_text, "two\n2\n");
	CHECK_INT(query(sample, "--", "-x", NULL), SPTD_EXIT_USAGE);
	CHECK(strstr(err_text, "syntax error") != NULL);

	/* several scans in one process: one that stopped inside "-hx" leaves
	 * nothing behind for the next (in-process whatever $SPTD_BIN says) */
	{
		const char *saved = bin;

		bin = NULL;
		CHECK_INT(query("-hx", NULL), SPTD_EXIT_OK);
		CHECK_INT(query(sample, "SELECT 1 AS one", "-f", "csv", NULL), SPTD_EXIT_OK);
		CHECK_STR(out_text, "one\n1\n");
		CHECK_STR(err_text, "");
		bin = saved;
	}

	tq_cleanup(files);
	return SPTD_TEST_END();
}
