/* test_perfdata.c — `sysptd import perf.data` on real recordings.
 *
 * Calls and returns: each fixture is imported; then the PT, images, tasks
 * and switches the incident holds are decoded again through decode/'s
 * session (phase 1 per CPU) and the CALL and RETURN flow events are compared
 * with perf's `perf script --itrace=cr -F +flags` lines, one for one and in
 * order, per CPU.  A perf line counts as a call when its flags contain the
 * word "call" ("call", and "tr end  call": a call whose target lies outside
 * the traced range, after which the trace stops), as a return when they
 * contain "return" ("return", "tr end  return"); "tr strt", "tr end",
 * "syscall", "async" and "hw int" lines are neither.  Two events are equal
 * when the branch address (perf's first address) is equal and the target
 * (perf's address after "=>") is equal, except that perf prints target 0 for
 * a "tr end" branch into untraced code; then the target is not compared.
 * The incident's own stats rows (calls, returns, per CPU, written by the
 * import's decode) must equal the same counts.
 *
 * Also: a perf.data recorded here with `perf record -e sched:sched_switch -a`
 * imports its scheduling; bad inputs give clear errors and exit statuses.
 * Without the fixtures directory the parts that read it are skipped (the
 * test then reports skip, never pass); a file missing from it fails. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "perfdata-local.h"
#include "sptd_col.h"
#include "sptd_col_derive.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_test.h"

struct branch {
	int tid;           /* as perf names the task */
	int cpu;
	int kind;          /* SPTD_DEC_FLOW_CALL / RETURN */
	uint64_t from, to;
	int to_unknown;    /* perf printed 0: trace ended */
};

struct branches {
	struct branch *b;
	size_t n, cap;
};

static char tmpdir[256];

static void push(struct branches *bs, const struct branch *b)
{
	if (bs->n == bs->cap) {
		bs->cap = bs->cap ? bs->cap * 2 : 1024;
		bs->b = realloc(bs->b, bs->cap * sizeof(*bs->b));
		if (!bs->b)
			abort();
	}
	bs->b[bs->n++] = *b;
}

/* perf script --itrace=cr -F +flags output -> calls and returns. */
static int parse_perf(FILE *f, struct branches *bs)
{
	char line[4096];

	while (fgets(line, sizeof(line), f)) {
		struct branch b = { 0 };
		char *br = strstr(line, "branches"), *cpu = strchr(line, '['), *arrow, *flags, *p;

		if (!br || !cpu || !(arrow = strstr(line, "=>")))
			continue;
		flags = strchr(br, ':');
		while (flags && *flags == ':')
			flags = strchr(flags + 1, ' ') ? strchr(flags + 1, ' ') : NULL;
		if (!flags)
			continue;
		b.cpu = atoi(cpu + 1);
		/* "COMM TID [CPU]": the word before the CPU */
		for (p = cpu; p > line && p[-1] == ' '; p--)
			;
		while (p > line && p[-1] >= '0' && p[-1] <= '9')
			p--;
		b.tid = atoi(p);
		/* flags run until the first hex address */
		p = flags;
		while (*p == ' ')
			p++;
		{
			char word[64];
			int is_call = 0, is_ret = 0, n;

			while (sscanf(p, "%63s%n", word, &n) == 1 && strspn(word, "0123456789abcdef") != strlen(word)) {
				if (strcmp(word, "call") == 0)
					is_call = 1;
				if (strcmp(word, "return") == 0)
					is_ret = 1;
				p += n;
			}
			if (!is_call && !is_ret)
				continue;
			b.kind = is_call ? SPTD_DEC_FLOW_CALL : SPTD_DEC_FLOW_RETURN;
		}
		b.from = strtoull(p, NULL, 16);
		b.to = strtoull(arrow + 2, NULL, 16);
		b.to_unknown = b.to == 0 && strstr(flags, "tr end") != NULL;
		push(bs, &b);
	}
	return 0;
}

struct collect {
	struct branches *bs;
	int cpu;
};

static int on_flow(void *arg, const struct sptd_dec_flow *ev)
{
	struct collect *c = arg;
	struct branch b = { .cpu = c->cpu, .kind = ev->kind, .from = ev->from, .to = ev->to };

	if (ev->kind == SPTD_DEC_FLOW_CALL || ev->kind == SPTD_DEC_FLOW_RETURN)
		push(c->bs, &b);
	return 0;
}

static int64_t q(struct sptd_store *st, const char *sql)
{
	int64_t v = -1;

	if (sptd_store_query_int(st, sql, &v) < 0)
		return -1;
	return v;
}

static int64_t meta_i(struct sptd_store *st, const char *key)
{
	int64_t v = 0;

	sptd_store_meta_get_int(st, key, &v);
	return v;
}

/* Decode what the incident holds, per CPU, into @bs. */
static int redecode(struct sptd_store *st, struct branches *bs)
{
	struct sptd_dec_config cfg = { 0 };
	struct sptd_dec_session *s = NULL;
	struct sptd_store_stmt *stmt = NULL;
	int cpus[1024], ncpus = 0, ret, i;

	cfg.cpu_family = (int)meta_i(st, "pt_cpu_family");
	cfg.cpu_model = (int)meta_i(st, "pt_cpu_model");
	cfg.cpu_stepping = (int)meta_i(st, "pt_cpu_stepping");
	cfg.mtc_freq = (int)meta_i(st, "pt_mtc_freq");
	cfg.nom_freq = (int)meta_i(st, "pt_nom_freq");
	cfg.cpuid15_eax = (uint32_t)meta_i(st, "pt_cpuid15_eax");
	cfg.cpuid15_ebx = (uint32_t)meta_i(st, "pt_cpuid15_ebx");
	cfg.no_timing = (int)meta_i(st, "pt_no_timing");
	cfg.tsc_mult = (uint32_t)meta_i(st, "tsc_mult");
	cfg.tsc_shift = (int)meta_i(st, "tsc_shift");
	cfg.tsc_offset_ns = meta_i(st, "tsc_offset_ns");
	cfg.jobs = 1;
	ret = sptd_dec_session_create(&cfg, &s);
	if (ret < 0)
		return ret;
	ret = sptd_store_prepare(st, "SELECT m.pid, d.path, m.bias, m.dso_id FROM raw_mmap m "
	                         "JOIN dso d ON d.id = m.dso_id", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1)
		sptd_dec_session_add_elf(s, (int)sptd_store_column_int(stmt, 0),
		                         sptd_store_column_text(stmt, 1),
		                         sptd_store_column_int(stmt, 2), sptd_store_column_int(stmt, 3));
	sptd_store_finalize(stmt);
	ret = sptd_store_prepare(st, "SELECT pid, tid FROM raw_task WHERE pid >= 0", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1)
		sptd_dec_session_add_task(s, (int)sptd_store_column_int(stmt, 1),
		                          (int)sptd_store_column_int(stmt, 0));
	sptd_store_finalize(stmt);
	ret = sptd_store_prepare(st, "SELECT ts, cpu, prev_tid, next_tid FROM raw_switch", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1)
		sptd_dec_session_add_switch(s, sptd_store_column_int(stmt, 0),
		                            (int)sptd_store_column_int(stmt, 1),
		                            (int)sptd_store_column_int(stmt, 2),
		                            (int)sptd_store_column_int(stmt, 3));
	sptd_store_finalize(stmt);
	ret = sptd_store_prepare(st, "SELECT cpu, data FROM raw_pt ORDER BY cpu, seq", &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		size_t len = 0;
		const void *d = sptd_store_column_blob(stmt, 1, &len);
		int cpu = (int)sptd_store_column_int(stmt, 0);

		sptd_dec_session_add_pt(s, cpu, d, len);
		if (!ncpus || cpus[ncpus - 1] != cpu)
			cpus[ncpus++] = cpu;
	}
	sptd_store_finalize(stmt);
	for (i = 0; i < ncpus && ret >= 0; i++) {
		struct collect c = { .bs = bs, .cpu = cpus[i] };
		int64_t n = sptd_dec_session_run_cpu(s, cpus[i], NULL, on_flow, &c);

		ret = n < 0 ? (int)n : 0;
	}
	sptd_dec_session_destroy(s);
	return ret;
}

/* Compare per CPU, in order; report the first difference. */
static void compare(const char *name, const struct branches *want, const struct branches *got,
                    struct sptd_store *st)
{
	int cpu;

	for (cpu = 0; cpu < 1024; cpu++) {
		size_t i = 0, j = 0, nw = 0, ng = 0, calls = 0, rets = 0, mism = 0;
		char sql[160];

		for (;;) {
			while (i < want->n && want->b[i].cpu != cpu)
				i++;
			while (j < got->n && got->b[j].cpu != cpu)
				j++;
			if (i >= want->n || j >= got->n)
				break;
			if (want->b[i].kind != got->b[j].kind || want->b[i].from != got->b[j].from ||
			    (!want->b[i].to_unknown && want->b[i].to != got->b[j].to)) {
				if (!mism++)
					fprintf(stderr, "%s cpu %d #%zu: perf %s %llx => %llx, sysptd %s %llx => %llx\n",
					        name, cpu, nw, want->b[i].kind == SPTD_DEC_FLOW_CALL ? "call" : "return",
					        (unsigned long long)want->b[i].from, (unsigned long long)want->b[i].to,
					        got->b[j].kind == SPTD_DEC_FLOW_CALL ? "call" : "return",
					        (unsigned long long)got->b[j].from, (unsigned long long)got->b[j].to);
			}
			calls += want->b[i].kind == SPTD_DEC_FLOW_CALL;
			rets += want->b[i].kind == SPTD_DEC_FLOW_RETURN;
			i++, j++, nw++, ng++;
		}
		for (; i < want->n; i++)
			if (want->b[i].cpu == cpu)
				nw++, calls += want->b[i].kind == SPTD_DEC_FLOW_CALL,
				rets += want->b[i].kind == SPTD_DEC_FLOW_RETURN;
		for (; j < got->n; j++)
			ng += got->b[j].cpu == cpu;
		if (!nw && !ng)
			continue;
		if (nw != ng)
			fprintf(stderr, "%s cpu %d: perf %zu calls+returns, sysptd %zu\n", name, cpu, nw, ng);
		CHECK_INT(ng, nw);
		CHECK_INT(mism, 0);
		snprintf(sql, sizeof(sql), "SELECT value FROM stats WHERE name = 'calls' AND cpu = %d", cpu);
		CHECK_INT(q(st, sql), (int64_t)calls);
		snprintf(sql, sizeof(sql), "SELECT value FROM stats WHERE name = 'returns' AND cpu = %d", cpu);
		CHECK_INT(q(st, sql), (int64_t)rets);
		printf("%s cpu %d: %zu calls, %zu returns, equal to perf's: %s\n", name, cpu, calls,
		       rets, nw == ng && !mism ? "yes" : "NO");
	}
}

static int have_perf(void)
{
	return system("perf --version >/dev/null 2>&1") == 0;
}

/* The interrupts of a user-only trace against perf's saved lines: each
 * "tr end  async" (the trace stops at an interrupt) and the "tr strt" after
 * it (back in user code) bound one [irq] slice, to the microsecond perf
 * prints (it truncates).  libipt hands out that event after reading on to
 * the re-enable: stamped with its decoder's clock, the slice began at its
 * end and lasted 0 ns. */
static void check_interrupts(const char *name, FILE *f, struct sptd_store *st)
{
	char line[4096], sql[256];
	int64_t start_us = -1, n = 0;

	while (fgets(line, sizeof(line), f)) {
		char *cpu = strchr(line, '['), *dot;
		int64_t us;

		if (!cpu || !(cpu = strchr(cpu, ']')) || !(dot = strchr(cpu, '.')))
			continue;
		us = strtoll(cpu + 1, NULL, 10) * 1000000 + strtoll(dot + 1, NULL, 10);
		if (strstr(line, "tr end  async")) {
			start_us = us;
		} else if (strstr(line, "tr strt") && start_us >= 0) {
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM slice WHERE kind = 'irq' AND "
			         "ts / 1000 = %" PRId64 " AND (ts + dur) / 1000 = %" PRId64 " AND dur > 0",
			         start_us, us);
			if (q(st, sql) != 1)
				fprintf(stderr, "%s: no [irq] slice from %" PRId64 " us to %" PRId64
				        " us as perf has it\n", name, start_us, us);
			CHECK_INT(q(st, sql), 1);
			start_us = -1;
			n++;
		}
	}
	CHECK_INT(q(st, "SELECT count(*) FROM slice WHERE kind = 'irq'"), n);
	printf("%s: %" PRId64 " interrupts as perf has them\n", name, n);
}

/* The slice rows of incidents @a and @b, every column, in id order and in
 * each index's order: the same?  And does SQLite find @a whole?  (@a's
 * rows were written as pages at the commit, @b's through SQL.) */
static void same_slices(const char *name, const char *a, const char *b)
{
	static const char *const walks[] = {
		"SELECT id, ts, dur, cpu, utid, depth, parent_id, symbol_id, kind, flags "
		"FROM slice ORDER BY id",
		"SELECT id FROM slice INDEXED BY slice_utid_ts WHERE utid >= 0 ORDER BY utid, ts",
		"SELECT id FROM slice INDEXED BY slice_parent_id ORDER BY parent_id",
	};
	struct sptd_store *sa = NULL, *sb = NULL;
	struct sptd_store_stmt *qa = NULL, *qb = NULL;
	int64_t rows = 0;

	CHECK_INT(sptd_store_open(a, 0, &sa), 0);
	CHECK_INT(sptd_store_open(b, 0, &sb), 0);
	if (!sa || !sb)
		goto out;
	CHECK_INT(sptd_store_prepare(sa, "PRAGMA integrity_check", &qa), 0);
	CHECK(qa && sptd_store_step(qa) == 1 && strcmp(sptd_store_column_text(qa, 0), "ok") == 0);
	sptd_store_finalize(qa);
	for (int w = 0; w < 3; w++) {
		int ra = 1, rb = 1, diff = 0;

		qa = qb = NULL;
		CHECK_INT(sptd_store_prepare(sa, walks[w], &qa), 0);
		CHECK_INT(sptd_store_prepare(sb, walks[w], &qb), 0);
		while (qa && qb && !diff) {
			ra = sptd_store_step(qa);
			rb = sptd_store_step(qb);
			if (ra != 1 || rb != 1)
				break;
			for (int c = 0; c < (w ? 1 : 10); c++) {
				const char *ta = sptd_store_column_text(qa, c);
				const char *tb = sptd_store_column_text(qb, c);

				if ((ta == NULL) != (tb == NULL) || (ta && strcmp(ta, tb) != 0))
					diff = 1;
			}
			rows += !w;
		}
		if (diff || ra != rb)
			fprintf(stderr, "%s: walk %d: the two imports differ\n", name, w);
		CHECK(!diff && ra == 0 && rb == 0);
		sptd_store_finalize(qa);
		sptd_store_finalize(qb);
	}
	CHECK(rows > 0);
out:
	sptd_store_destroy(sa);
	sptd_store_destroy(sb);
}

static void test_fixture(const char *name, int saved)
{
	char out[600], cmd[2048], data[600], symfs[600], err[1024];
	struct sptd_col_pd_import_opts o = { 0 };
	struct sptd_col_pd_import_result res;
	struct branches want = { 0 }, got = { 0 };
	struct sptd_store *st = NULL;
	FILE *f;

	snprintf(out, sizeof(out), "%s/%s.db", tmpdir, name);
	snprintf(cmd, sizeof(cmd), "real-pt/%s/perf.data", name);
	if (sptd_test_fixture(data, sizeof(data), cmd) < 0)
		return;
	snprintf(cmd, sizeof(cmd), "real-pt/%s/symfs", name);
	if (sptd_test_fixture(symfs, sizeof(symfs), cmd) < 0)
		return;
	o.input = data;
	o.output = out;
	o.paths.symfs = symfs;
	o.jobs = 1;
	CHECK_INT(sptd_col_perfdata_import(&o, &res, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stderr, "%s: %s\n", name, err);
	CHECK(res.has_pt);
	CHECK(res.aux_bytes > 0);
	/* the same import with the slice rows through SQL: the same rows */
	{
		char out_sql[640];

		snprintf(out_sql, sizeof(out_sql), "%s/%s-sql.db", tmpdir, name);
		o.output = out_sql;
		setenv("SPTD_STORE_BULK", "sql", 1);
		CHECK_INT(sptd_col_perfdata_import(&o, &res, err, sizeof(err)), 0);
		unsetenv("SPTD_STORE_BULK");
		o.output = out;
		same_slices(name, out, out_sql);
	}
	if (saved) {
		snprintf(err, sizeof(err), "real-pt/%s/perf-script-itrace-cr.txt", name);
		f = sptd_test_fixture(cmd, sizeof(cmd), err) == 0 ? fopen(cmd, "r") : NULL;
	} else {
		if (!have_perf()) {
			SPTD_SKIP_PART("%s: perf is not installed: perf's sequence not compared",
			               name);
			goto out;
		}
		snprintf(cmd, sizeof(cmd), "perf script -i '%s' --symfs='%s' --itrace=cr -F +flags 2>/dev/null",
		         data, symfs);
		f = popen(cmd, "r");
	}
	CHECK(f != NULL);
	if (!f)
		goto out;
	parse_perf(f, &want);
	if (saved)
		fclose(f);
	else
		pclose(f);
	CHECK(want.n > 0 || strcmp(name, "hase-loopy") == 0);
	CHECK_INT(sptd_store_open(out, 0, &st), 0);
	if (st) {
		CHECK_INT(redecode(st, &got), 0);
		compare(name, &want, &got, st);
		/* the task perf gives every call is the slices' (the libxdc
		 * captures have no timing: their calls were the idle task's) */
		if (want.n) {
			size_t k;

			for (k = 1; k < want.n && want.b[k].tid == want.b[0].tid; k++)
				;
			if (k == want.n) {
				char sql[256];

				snprintf(sql, sizeof(sql), "SELECT count(*) FROM slice s JOIN thread t "
				         "USING (utid) WHERE t.tid <> %d", want.b[0].tid);
				CHECK_INT(q(st, sql), 0);
				CHECK(q(st, "SELECT count(*) FROM slice") > 0);
			}
		}
		if (strcmp(name, "hase-control_flow") == 0) {
			/* the program exits (perf script --show-task-events:
			 * PERF_RECORD_EXIT(19731:19731) at 969388.522161294): its
			 * last slice leaves it a zombie, and it is never runnable
			 * after (it was R to the window end) */
			CHECK_INT(q(st, "SELECT count(*) FROM sched_slice s JOIN thread t USING (utid) "
			          "WHERE t.tid = 19731 AND s.end_state = 'Z' AND s.ts + s.dur >= "
			          "969388522161294 AND s.ts = (SELECT max(x.ts) FROM sched_slice x "
			          "WHERE x.utid = s.utid)"), 1);
			CHECK_INT(q(st, "SELECT count(*) FROM thread_state s JOIN thread t USING (utid) "
			          "WHERE t.tid = 19731 AND s.state LIKE 'R%' AND s.ts >= 969388522161294"),
			          0);
			/* the 6 frames it still had open (main down to the
			 * syscall into exit_group) end at that switch-out, 9.5 us
			 * after its EXIT record, not at the recording's last
			 * switch 26 us later; ended by the exit, not truncated */
			CHECK_INT(q(st, "SELECT count(*) FROM slice s JOIN thread t USING (utid) "
			          "WHERE t.tid = 19731 AND s.ts + s.dur = 969388522170842 AND "
			          "(s.flags & 2) = 0"), 6);
			CHECK_INT(q(st, "SELECT count(*) FROM slice WHERE (flags & 2) != 0"), 0);
		}
		/* nothing of a thread outlives it: no slice runs past the end
		 * of the scheduling slice that left its thread dead */
		CHECK_INT(q(st, "SELECT count(*) FROM slice s JOIN sched_slice x USING (utid) WHERE "
		          "substr(x.end_state, 1, 1) IN ('X', 'Z') AND s.ts <= x.ts + x.dur AND "
		          "s.ts + s.dur > x.ts + x.dur"), 0);
		if (saved) {
			snprintf(err, sizeof(err), "real-pt/%s/perf-script-itrace-cr.txt", name);
			f = sptd_test_fixture(cmd, sizeof(cmd), err) == 0 ? fopen(cmd, "r") : NULL;
			CHECK(f != NULL);
			if (f) {
				check_interrupts(name, f, st);
				fclose(f);
			}
		}
		/* the recording's identity lands in meta */
		{
			char buf[256];

			CHECK(sptd_store_meta_get(st, "perf_cmdline", buf, sizeof(buf)) > 0);
			CHECK(sptd_store_meta_get(st, "source", buf, sizeof(buf)) > 0 &&
			      strcmp(buf, "pt") == 0);
		}
		CHECK(q(st, "SELECT count(*) FROM sched_slice") > 0);
		CHECK(q(st, "SELECT count(*) FROM dso WHERE path LIKE '%symfs%'") >= 1);
	}
	sptd_store_destroy(st);
out:
	free(want.b);
	free(got.b);
}

static int run_import(const char *a1, const char *a2, const char *a3, const char *a4,
                      const char *a5)
{
	char *argv[8] = { "import" };
	int argc = 1;

	if (a1) argv[argc++] = (char *)a1;
	if (a2) argv[argc++] = (char *)a2;
	if (a3) argv[argc++] = (char *)a3;
	if (a4) argv[argc++] = (char *)a4;
	if (a5) argv[argc++] = (char *)a5;
	return sptd_col_cmd_import(argc, argv);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static void test_bad_files(void)
{
	char path[512], out[512], err[1024];
	unsigned char junk[4096];
	struct sptd_col_perfdata *pd = NULL;
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 2654435761u >> 13);
	snprintf(path, sizeof(path), "%s/random.data", tmpdir);
	write_file(path, junk, sizeof(junk));
	CHECK_INT(sptd_col_perfdata_open(path, &pd, err, sizeof(err)), -EBADMSG);
	CHECK(pd == NULL);
	CHECK(strstr(err, "not a perf.data") != NULL);
	snprintf(out, sizeof(out), "%s/random.db", tmpdir);
	CHECK_INT(run_import(path, "-o", out, NULL, NULL), SPTD_EXIT_BADFILE);
	CHECK(access(out, F_OK) != 0);

	snprintf(path, sizeof(path), "%s/empty.data", tmpdir);
	write_file(path, "", 0);
	CHECK_INT(sptd_col_perfdata_open(path, &pd, err, sizeof(err)), -EBADMSG);

	/* pipe-mode header */
	memcpy(junk, "PERFILE2", 8);
	memset(junk + 8, 0, 8);
	junk[8] = 16;
	snprintf(path, sizeof(path), "%s/pipe.data", tmpdir);
	write_file(path, junk, 64);
	CHECK_INT(sptd_col_perfdata_open(path, &pd, err, sizeof(err)), -ENOTSUP);
	CHECK(strstr(err, "pipe") != NULL);

	/* argument errors */
	CHECK_INT(sptd_col_perfdata_open(NULL, &pd, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_col_perfdata_import(NULL, NULL, err, sizeof(err)), -EINVAL);
	CHECK_INT(sptd_col_perfdata_walk(NULL, NULL, NULL), -EINVAL);
	sptd_col_perfdata_close(NULL);
	CHECK_INT(run_import("a.data", "b.data", NULL, NULL, NULL), SPTD_EXIT_USAGE);
	CHECK_INT(run_import("x.data", "--bogus", NULL, NULL, NULL), SPTD_EXIT_USAGE);
	snprintf(path, sizeof(path), "%s/missing.data", tmpdir);
	CHECK_INT(run_import(path, "-o", out, NULL, NULL), SPTD_EXIT_BADFILE);
}

/* A real recording cut inside its data section and inside its header; and
 * an import over an incident that exists (test_fixture wrote it). */
static void test_cut_files(void)
{
	char path[512], out[512], err[1024], src[600];
	struct sptd_col_perfdata *pd = NULL;
	FILE *f;
	size_t n;
	static unsigned char buf[1 << 20];

	if (sptd_test_fixture(src, sizeof(src), "real-pt/hase-control_flow/perf.data") < 0)
		return;
	f = fopen(src, "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/trunc.data", tmpdir);
	write_file(path, buf, n / 2);
	CHECK_INT(sptd_col_perfdata_open(path, &pd, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "truncated") != NULL);
	printf("truncated file: %s\n", err);
	snprintf(out, sizeof(out), "%s/trunc.db", tmpdir);
	CHECK_INT(run_import(path, "-o", out, NULL, NULL), SPTD_EXIT_BADFILE);
	write_file(path, buf, 60);
	CHECK_INT(sptd_col_perfdata_open(path, &pd, err, sizeof(err)), -EBADMSG);
	/* output exists */
	snprintf(out, sizeof(out), "%s/hase-control_flow.db", tmpdir);
	CHECK_INT(run_import(src, "-o", out, NULL, NULL), SPTD_EXIT_FAIL);
}

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The number a shell pipeline @cmd prints (grep -c), -1 if none. */
static int64_t sh_count(const char *cmd)
{
	int64_t n = -1;
	FILE *f = popen(cmd, "r");

	if (f) {
		if (fscanf(f, "%" SCNd64, &n) != 1)
			n = -1;
		pclose(f);
	}
	return n;
}

/* perf record of the sched_switch tracepoint, system-wide; and a recording
 * with neither PT nor switches. */
static void test_recorded(void)
{
	char cmd[1024], data[512], out[512], nopt[512];
	struct sptd_store *st = NULL;
	int64_t lines;
	FILE *f;

	if (geteuid() != 0 || !have_perf() || access("/sys/kernel/tracing/events/sched", F_OK) != 0) {
		SPTD_SKIP_PART("recording with perf needs root, perf and tracefs");
		return;
	}
	snprintf(data, sizeof(data), "%s/sched.data", tmpdir);
	snprintf(cmd, sizeof(cmd), "perf record -q -o '%s' -e sched:sched_switch -a -- sleep 0.2 "
	         ">/dev/null 2>&1", data);
	if (sh(cmd) != 0) {
		SPTD_SKIP_PART("perf record -e sched:sched_switch failed here");
		return;
	}
	snprintf(cmd, sizeof(cmd), "perf script -i '%s' -F event 2>/dev/null | grep -c sched_switch", data);
	lines = sh_count(cmd);
	snprintf(out, sizeof(out), "%s/sched.db", tmpdir);
	CHECK_INT(run_import(data, "-o", out, NULL, NULL), SPTD_EXIT_OK);
	CHECK_INT(sptd_store_open(out, 0, &st), 0);
	if (st) {
		int64_t sw = q(st, "SELECT count(*) FROM raw_switch");

		printf("sched.data: perf shows %" PRId64 " sched_switch samples, incident has %" PRId64
		       " switches, %" PRId64 " sched slices\n", lines, sw,
		       q(st, "SELECT count(*) FROM sched_slice"));
		CHECK(lines > 0);
		CHECK_INT(sw, lines);
		CHECK(q(st, "SELECT count(*) FROM sched_slice") > 0);
		/* the workload exec'd: its thread is named by what it became,
		 * whichever CPU's chunk of the file came last */
		CHECK(q(st, "SELECT count(*) FROM sched_slice s JOIN thread t USING (utid) "
		        "WHERE t.name = 'sleep'") > 0);
		CHECK_INT(q(st, "SELECT count(*) FROM thread WHERE name = 'perf-exec'"), 0);
		/* each slice ends in the state perf prints for its switch: per
		 * state, as many as perf has, less at most one per CPU (a CPU's
		 * first switch ends a slice that began before the record) */
		snprintf(cmd, sizeof(cmd), "perf script -i '%s' -F trace 2>/dev/null | "
		         "grep -o 'prev_state=[^ ]*' | sort | uniq -c", data);
		f = popen(cmd, "r");
		CHECK(f != NULL);
		if (f) {
			int64_t n, cpus = q(st, "SELECT count(DISTINCT cpu) FROM sched_slice");
			int64_t states = 0, blocked = 0;
			char state[16], sql[256];

			while (fscanf(f, "%" SCNd64 " prev_state=%15s", &n, state) == 2) {
				snprintf(sql, sizeof(sql), "SELECT count(*) FROM sched_slice WHERE "
				         "end_state = '%s'", state);
				printf("  prev_state %s: perf %" PRId64 ", incident %" PRId64 "\n", state,
				       n, q(st, sql));
				CHECK(q(st, sql) <= n && q(st, sql) >= n - cpus);
				states++;
				if (state[0] != 'R')
					blocked += n;
			}
			pclose(f);
			CHECK(states > 0);
			CHECK(blocked > 0);   /* sleep 0.2 blocks */
		}
		CHECK(q(st, "SELECT count(*) FROM slice") == 0);
		{
			char buf[64];

			CHECK(sptd_store_meta_get(st, "source", buf, sizeof(buf)) > 0 &&
			      strcmp(buf, "sched") == 0);
			CHECK(sptd_store_meta_get(st, "host", buf, sizeof(buf)) > 0);
		}
	}
	sptd_store_destroy(st);

	/* SWITCH records alone (no tracepoint): a switch out that the kernel
	 * marks preempted (Linux 4.17+) ends runnable, R+, as perf prints
	 * "OUT preempt"; two busy loops on one CPU preempt each other */
	snprintf(data, sizeof(data), "%s/switch.data", tmpdir);
	snprintf(cmd, sizeof(cmd), "perf record -q -o '%s' -e dummy --switch-events -a -- "
	         "taskset -c 0 sh -c 'timeout 0.3 sh -c \"while :; do :; done\" & "
	         "timeout 0.3 sh -c \"while :; do :; done\"; sleep 0.05; wait' >/dev/null 2>&1",
	         data);
	if (sh(cmd) != 0) {
		SPTD_SKIP_PART("perf record --switch-events failed here");
	} else {
		int64_t preempt, outs;

		snprintf(cmd, sizeof(cmd), "perf script -i '%s' --show-switch-events 2>/dev/null | "
		         "grep -c 'SWITCH_CPU_WIDE OUT preempt'", data);
		preempt = sh_count(cmd);
		snprintf(cmd, sizeof(cmd), "perf script -i '%s' --show-switch-events 2>/dev/null | "
		         "grep -c 'SWITCH_CPU_WIDE OUT'", data);
		outs = sh_count(cmd);
		snprintf(out, sizeof(out), "%s/switch.db", tmpdir);
		CHECK_INT(run_import(data, "-o", out, NULL, NULL), SPTD_EXIT_OK);
		CHECK_INT(sptd_store_open(out, 0, &st), 0);
		if (st) {
			int64_t cpus = q(st, "SELECT count(DISTINCT cpu) FROM sched_slice");
			int64_t rp = q(st, "SELECT count(*) FROM sched_slice WHERE end_state = 'R+'");

			printf("switch.data: perf shows %" PRId64 " switches out, %" PRId64 " preempted; "
			       "incident: %" PRId64 " R+ switches, %" PRId64 " R+ sched slices\n", outs,
			       preempt, q(st, "SELECT count(*) FROM raw_switch WHERE prev_state = 'R+'"),
			       rp);
			CHECK(preempt > 0);
			CHECK(outs > preempt);  /* sleep 0.05 and the exits are not */
			CHECK_INT(q(st, "SELECT count(*) FROM raw_switch WHERE prev_state = 'R+'"),
			          preempt);
			CHECK(rp <= preempt && rp >= preempt - cpus);
		}
		sptd_store_destroy(st);
		st = NULL;
	}

	snprintf(nopt, sizeof(nopt), "%s/nopt.data", tmpdir);
	snprintf(cmd, sizeof(cmd), "perf record -q -o '%s' -e cpu-clock -- true >/dev/null 2>&1", nopt);
	if (sh(cmd) == 0) {
		snprintf(out, sizeof(out), "%s/nopt.db", tmpdir);
		CHECK_INT(run_import(nopt, "-o", out, NULL, NULL), SPTD_EXIT_BADFILE);
		CHECK(access(out, F_OK) != 0);
	}
}

int main(void)
{
	char cmd[600];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sptd-perfdata-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (sptd_test_fixtures_for("importing the real recordings")) {
		test_fixture("hase-control_flow", 1);
		test_fixture("hase-loopy", 1);
		test_fixture("hase-control_flow-snapshot", 1);
		test_fixture("libxdc-foo", 0);
		test_fixture("libxdc-unzip", 0);
		test_fixture("libxdc-mruby", 0);
		test_cut_files();
	}
	test_bad_files();
	test_recorded();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return SPTD_TEST_END();
}
