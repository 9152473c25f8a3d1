/* test_dec_pip.c — the PIP/CR3 cross-check of the sched timeline in PT
 * decode (decode/flow.c flow_paging): sptd-ptgen runs two static programs
 * on 2 CPUs (each process gets its own CR3, written as PIP packets at every
 * switch-in), and the real `sysptd import` decodes it twice: with the true
 * sched.txt no CR3 may disagree with the schedule; with a sched.txt whose
 * two switches have their next tasks swapped, the decode must count
 * cr3_mismatches and leave a gap naming both processes.
 *
 * Usage: test_dec_pip PTGEN PROGS_DIR   (sysptd from $SPTD_BIN; root) */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sptd_store.h"
#include "sptd_test.h"
#include "truth_compare.h"

#define MAX_LINES 65536

/* One line of sched.txt. */
struct sw_line {
	long long ts;
	int cpu, prev, next;
	char comm[64];
};

/* Import @dir's PT with @sched into @incident; the exit status. */
static int import(const char *sysptd, const char *dir, const char *sched,
                  const char *incident, const char *log)
{
	char buf[TRUTH_IMPORT_ARGS][4200];
	char *argv[TRUTH_IMPORT_ARGS + 4];
	int argc = 0;

	argv[argc++] = (char *)sysptd;
	argv[argc++] = "import";
	truth_import_args(dir, sched, incident, buf, argv, &argc);
	argv[argc] = NULL;
	unlink(incident);
	return truth_run(argv, log, 1);
}

/* The cr3_mismatches total of @incident, and in @reason (may stay empty)
 * the first "pt: CR3" gap; -1 when the incident cannot be read. */
static int64_t mismatches(const char *incident, char *reason, size_t len)
{
	struct sptd_store *st = NULL;
	struct sptd_store_stmt *q = NULL;
	int64_t n = -1, rows = -1;

	reason[0] = '\0';
	if (sptd_store_open(incident, 0, &st) < 0)
		return -1;
	if (sptd_store_query_int(st, "SELECT count(*) FROM stats WHERE name = 'cr3_mismatches'",
	                         &rows) < 0 || rows < 1 ||
	    sptd_store_query_int(st, "SELECT sum(value) FROM stats WHERE name = 'cr3_mismatches'",
	                         &n) < 0)
		n = -1;
	if (sptd_store_prepare(st, "SELECT reason FROM gap WHERE reason LIKE 'pt: CR3 %' "
	                           "ORDER BY ts LIMIT 1", &q) >= 0 &&
	    sptd_store_step(q) == 1 && sptd_store_column_text(q, 0))
		snprintf(reason, len, "%s", sptd_store_column_text(q, 0));
	sptd_store_finalize(q);
	sptd_store_destroy(st);
	return n;
}

/* Write @dir/sched-bad.txt: sched.txt with the next tasks of two switches
 * of the second half (running different processes) swapped.  0 and the two
 * pids, or -1. */
static int write_bad_sched(const char *dir, char *out, size_t outlen, int *pid_a, int *pid_b)
{
	static struct sw_line v[MAX_LINES];
	char path[4400], line[512];
	size_t n = 0, i, j;
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/sched.txt", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < MAX_LINES && fgets(line, sizeof(line), f)) {
		v[n].comm[0] = '\0';
		if (sscanf(line, "%lld %d %d %d %63s", &v[n].ts, &v[n].cpu, &v[n].prev,
		           &v[n].next, v[n].comm) >= 4)
			n++;
	}
	fclose(f);
	/* single-threaded programs: tid = pid */
	for (i = n / 2; i < n && ret < 0; i++) {
		for (j = i + 1; j < n && ret < 0; j++) {
			if (v[i].next != v[j].next && v[i].next > 0 && v[j].next > 0) {
				struct sw_line t = v[i];

				*pid_a = v[i].next;
				*pid_b = v[j].next;
				v[i].next = v[j].next;
				memcpy(v[i].comm, v[j].comm, sizeof(v[i].comm));
				v[j].next = t.next;
				memcpy(v[j].comm, t.comm, sizeof(v[j].comm));
				ret = 0;
			}
		}
	}
	if (ret < 0)
		return -1;
	snprintf(out, outlen, "%s/sched-bad.txt", dir);
	f = fopen(out, "w");
	if (!f)
		return -1;
	for (i = 0; i < n; i++)
		fprintf(f, "%lld %d %d %d %s\n", v[i].ts, v[i].cpu, v[i].prev, v[i].next,
		        v[i].comm[0] ? v[i].comm : "-");
	return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *sysptd = getenv("SPTD_BIN");
	char tmp[] = "/tmp/sptd-pip-XXXXXX";
	char dir[4200], log[4300], incident[4300], sched[4300], bad[4300], p1[4300], p2[4300];
	char reason[512], want_a[64], want_b[64];
	char *gen[16];
	int rc, a = -1, b = -1;
	int64_t n;

	if (argc < 3) {
		fprintf(stderr, "usage: test_dec_pip PTGEN PROGS_DIR\n");
		return 2;
	}
	if (!sysptd || access(sysptd, X_OK) != 0)
		SPTD_SKIP("no sysptd binary (set SPTD_BIN)");
	SPTD_REQUIRE_ROOT();
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	/* import reads --image, --maps, --tasks and --sched after giving up
	 * root (as nobody from a root login): they must be readable to it */
	chmod(tmp, 0755);
	snprintf(dir, sizeof(dir), "%s/gen", tmp);
	snprintf(log, sizeof(log), "%s/log", tmp);
	snprintf(incident, sizeof(incident), "%s/x.incident", tmp);
	snprintf(sched, sizeof(sched), "%s/sched.txt", dir);
	snprintf(p1, sizeof(p1), "%s/ptprog-fib", argv[2]);
	snprintf(p2, sizeof(p2), "%s/ptprog-fptr", argv[2]);
	gen[0] = argv[1];
	gen[1] = "-o";
	gen[2] = dir;
	gen[3] = "--cpus";
	gen[4] = "2";
	gen[5] = "--slice-insns";
	gen[6] = "500";
	gen[7] = "--";
	gen[8] = p1;
	gen[9] = "--";
	gen[10] = p2;
	gen[11] = NULL;
	rc = truth_run(gen, log, 1);
	if (rc == 77)
		SPTD_SKIP("ptrace not permitted (kernel.yama.ptrace_scope)");
	CHECK(rc == 0);
	if (rc != 0) {
		truth_show_log(log, 30);
		return SPTD_TEST_END();
	}

	/* the true schedule: every PIP agrees with it */
	rc = import(sysptd, dir, sched, incident, log);
	CHECK(rc == 0);
	n = mismatches(incident, reason, sizeof(reason));
	printf("true schedule: %" PRId64 " cr3_mismatches%s%s\n", n, reason[0] ? ", gap: " : "",
	       reason);
	CHECK(n == 0);
	CHECK(reason[0] == '\0');

	/* two switches' next tasks swapped: the PIPs disagree */
	CHECK(write_bad_sched(dir, bad, sizeof(bad), &a, &b) == 0);
	rc = import(sysptd, dir, bad, incident, log);
	CHECK(rc == 0);
	n = mismatches(incident, reason, sizeof(reason));
	printf("swapped %d/%d: %" PRId64 " cr3_mismatches, gap: %s\n", a, b, n, reason);
	CHECK(n > 0);
	snprintf(want_a, sizeof(want_a), "pid %d", a);
	snprintf(want_b, sizeof(want_b), "pid %d", b);
	CHECK(strncmp(reason, "pt: CR3 0x", 10) == 0);
	CHECK(strstr(reason, want_a) != NULL);
	CHECK(strstr(reason, want_b) != NULL);
	if (sptd_test_failed)
		truth_show_log(log, 30);
	truth_tmp_done(tmp, sptd_test_failed);
	return SPTD_TEST_END();
}
