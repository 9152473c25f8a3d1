/* truth_compare.c — see truth_compare.h.  Moved out of test_golden.c so
 * that the capture-path test (test_pt_fakegold) and the perf.data test
 * (test_ptgen2perf) compare the same way. */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "sptd_dec.h"
#include "sptd_store.h"
#include "truth_compare.h"

int truth_frames_push(struct frames *fs, const struct frame *f)
{
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 1024;
		struct frame *n = realloc(fs->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		fs->v = n;
		fs->cap = cap;
	}
	fs->v[fs->n++] = *f;
	return 0;
}

void truth_frames_free(struct frames *fs)
{
	if (!fs)
		return;
	free(fs->v);
	fs->v = NULL;
	fs->n = fs->cap = 0;
}

/* Preorder: thread, start, depth, then the order frames were opened in. */
static int frame_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void truth_sort(struct frames *fs)
{
	if (fs && fs->n)
		qsort(fs->v, fs->n, sizeof(*fs->v), frame_cmp);
}

/* Siblings: thread, parent, start, then slice id (the decoder hands out
 * ids in the order it opens frames). */
static int sibling_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int order_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* First index in @fs (sorted by sibling_cmp) of the children of @parent in
 * thread @tid; fs->n when none. */
static size_t first_child(const struct frames *fs, int tid, int64_t parent)
{
	size_t lo = 0, hi = fs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct frame *m = &fs->v[mid];

		if (m->tid < tid || (m->tid == tid && m->parent < parent))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < fs->n && fs->v[lo].tid == tid && fs->v[lo].parent == parent ? lo : fs->n;
}

/* Put the incident's intervals in preorder by walking the parent links:
 * with coarse timing (MTC, TSC) many intervals share one timestamp, and
 * sorting by (start, depth) would not give the nesting order the truth's
 * exact times give.  A frame whose parent is not in the set (an [irq]
 * slice, left out) counts as a root. */
static int preorder(struct frames *fs)
{
	size_t *stack = NULL, n = 0, i, next = 0;
	int64_t *ids = NULL;
	int err = 0;

	qsort(fs->v, fs->n, sizeof(*fs->v), sibling_cmp);
	stack = malloc((fs->n + 1) * sizeof(*stack));
	ids = malloc((fs->n + 1) * sizeof(*ids));
	if (!stack || !ids) {
		free(stack);
		free(ids);
		return -ENOMEM;
	}
	for (i = 0; i < fs->n; i++) {
		fs->v[i].order = SIZE_MAX;
		ids[i] = fs->v[i].id;
	}
	qsort(ids, fs->n, sizeof(*ids), id_cmp);
	/* roots, in sibling order, pushed in reverse so the first pops first */
	for (i = fs->n; i-- > 0;) {
		const struct frame *f = &fs->v[i];

		if (f->parent < 0 || !bsearch(&f->parent, ids, fs->n, sizeof(*ids), id_cmp))
			stack[n++] = i;
	}
	while (n) {
		size_t k = stack[--n], c, end;

		fs->v[k].order = next++;
		c = first_child(fs, fs->v[k].tid, fs->v[k].id);
		for (end = c; end < fs->n && fs->v[end].tid == fs->v[k].tid &&
		              fs->v[end].parent == fs->v[k].id; end++)
			;
		while (end-- > c)
			stack[n++] = end;
	}
	for (i = 0; i < fs->n && !err; i++)
		if (fs->v[i].order == SIZE_MAX)
			err = -ELOOP;
	free(stack);
	free(ids);
	qsort(fs->v, fs->n, sizeof(*fs->v), order_cmp);
	return err;
}

/* config.txt value of @key, or -1. */
int64_t truth_config_get(const char *dir, const char *key)
{
	char path[4200], line[512];
	size_t klen = strlen(key);
	int64_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.txt", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == '=')
			v = strtoll(line + klen + 1, NULL, 0);
	if (f)
		fclose(f);
	return v;
}

void truth_import_args(const char *dir, const char *sched, const char *incident,
                       char buf[][4200], char **argv, int *argc)
{
	int64_t cpus = truth_config_get(dir, "cpus");
	int n = 0;

	for (int i = 0; i < cpus && i < 8; i++)
		snprintf(buf[n++], 4200, "--pt=%s/cpu%d.pt", dir, i);
	snprintf(buf[n++], 4200, "--maps=%s/maps.txt", dir);
	snprintf(buf[n++], 4200, "--tasks=%s/tasks.txt", dir);
	if (sched)
		snprintf(buf[n++], 4200, "--sched=%s", sched);
	else
		snprintf(buf[n++], 4200, "--sched=%s/sched.txt", dir);
	snprintf(buf[n++], 4200, "--cpu-id=%" PRId64 "/%" PRId64 "/%" PRId64,
	         truth_config_get(dir, "cpu_family"), truth_config_get(dir, "cpu_model"),
	         truth_config_get(dir, "cpu_stepping"));
	snprintf(buf[n++], 4200, "--mtc-freq=%" PRId64, truth_config_get(dir, "mtc_freq"));
	snprintf(buf[n++], 4200, "--nom-freq=%" PRId64, truth_config_get(dir, "nom_freq"));
	snprintf(buf[n++], 4200, "--cpuid15=%" PRId64 "/%" PRId64,
	         truth_config_get(dir, "cpuid15_eax"), truth_config_get(dir, "cpuid15_ebx"));
	snprintf(buf[n++], 4200, "--tsc-hz=%" PRId64, truth_config_get(dir, "tsc_hz"));
	snprintf(buf[n++], 4200, "-o%s", incident);
	for (int i = 0; i < n; i++)
		argv[(*argc)++] = buf[i];
}

void truth_vdso_args(const char *dir, char buf[][4200], int max, char **argv, int *argc)
{
	char path[4200], line[4400], img[4096], mpath[4096];
	unsigned long long addr, cr3, start, end, pgoff;
	int pid, mpid, k = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%.4000s/images.txt", dir);
	f = fopen(path, "r");
	while (f && k < max && fgets(line, sizeof(line), f)) {
		FILE *m;
		int vdso = 0;

		if (sscanf(line, "%llx %4095s %d %llx", &addr, img, &pid, &cr3) != 4)
			continue;
		snprintf(path, sizeof(path), "%.4000s/maps.txt", dir);
		m = fopen(path, "r");
		while (m && fgets(line, sizeof(line), m))
			if (sscanf(line, "%d %llx %llx %llx %4095s", &mpid, &start, &end, &pgoff,
			           mpath) == 5 && mpid == pid && start == addr &&
			    strcmp(mpath, "[vdso]") == 0)
				vdso = 1;
		if (m)
			fclose(m);
		if (!vdso)
			continue;
		if ((size_t)snprintf(buf[k], 4200, "--image=%.2000s/%.2000s@0x%llx:%d", dir, img,
		                     addr, pid) >= 4200)
			continue;
		argv[(*argc)++] = buf[k++];
	}
	if (f)
		fclose(f);
}

int truth_read(const char *dir, struct frames *out)
{
	char path[4200], line[1024], mangled[512];
	FILE *f;
	int lineno = 0, err = 0;

	snprintf(path, sizeof(path), "%s/truth.txt", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		struct frame fr;
		long long s, e;

		memset(&fr, 0, sizeof(fr));
		if (sscanf(line, "%d %d %lld %lld %d %511s", &fr.tid, &fr.depth, &s, &e, &fr.flags,
		           mangled) != 6) {
			err = -EBADMSG;
			break;
		}
		fr.start = s;
		fr.end = e;
		fr.id = ++lineno;
		if (strncmp(mangled, "0x", 2) == 0)
			fr.addr = strtoull(mangled, NULL, 16);
		if (sptd_dec_demangle(mangled, fr.name, sizeof(fr.name)) < 0)
			snprintf(fr.name, sizeof(fr.name), "%s", mangled);
		err = truth_frames_push(out, &fr);
	}
	fclose(f);
	truth_sort(out);
	return err;
}

int truth_read_slices(struct sptd_store *st, const char *where, int64_t time_offset_ns,
                      struct frames *out)
{
	/* the bias: of the mapping in the thread's process, else of one for
	 * every task (pid -1: what a perf.data import of a file without
	 * per-task mappings stores) */
	static const char head[] =
		"SELECT t.tid, s.depth, s.ts, s.ts + s.dur, s.flags, s.id, y.name, "
		"  y.addr + coalesce((SELECT m.bias FROM raw_mmap m WHERE m.dso_id = y.dso_id "
		"                     AND m.pid = t.upid_pid), "
		"                    (SELECT m.bias FROM raw_mmap m WHERE m.dso_id = y.dso_id "
		"                     AND m.pid = -1), 0), "
		"  coalesce(s.parent_id, -1), y.size "
		"FROM slice s JOIN (SELECT th.utid, th.tid, p.pid AS upid_pid FROM thread th "
		"                   LEFT JOIN process p ON p.upid = th.upid) t ON t.utid = s.utid "
		"LEFT JOIN symbol y ON y.id = s.symbol_id WHERE ";
	struct sptd_store_stmt *stmt = NULL;
	char sql[sizeof(head) + 512];
	int ret;

	if ((size_t)snprintf(sql, sizeof(sql), "%s%s", head, where) >= sizeof(sql))
		return -ENAMETOOLONG;
	ret = sptd_store_prepare(st, sql, &stmt);
	while (ret >= 0 && (ret = sptd_store_step(stmt)) == 1) {
		struct frame fr;
		const char *name = sptd_store_column_text(stmt, 6);

		memset(&fr, 0, sizeof(fr));
		fr.tid = (int)sptd_store_column_int(stmt, 0);
		fr.depth = (int)sptd_store_column_int(stmt, 1);
		fr.start = sptd_store_column_int(stmt, 2) - time_offset_ns;
		fr.end = sptd_store_column_int(stmt, 3) - time_offset_ns;
		fr.flags = (int)sptd_store_column_int(stmt, 4);
		fr.id = sptd_store_column_int(stmt, 5);
		fr.addr = (uint64_t)sptd_store_column_int(stmt, 7);
		fr.parent = sptd_store_column_int(stmt, 8);
		fr.size = (uint64_t)sptd_store_column_int(stmt, 9);
		snprintf(fr.name, sizeof(fr.name), "%s", name ? name : "(none)");
		ret = truth_frames_push(out, &fr);
	}
	if (ret < 0)
		fprintf(stderr, "  slices: %s\n", sptd_store_errmsg(st));
	sptd_store_finalize(stmt);
	return ret < 0 ? ret : 0;
}

/* The PT slices of the incident (all but [irq]), in preorder. */
int truth_read_incident(const char *path, int64_t time_offset_ns, struct frames *out)
{
	struct sptd_store *st = NULL;
	int ret;

	ret = sptd_store_open(path, 0, &st);
	if (ret < 0)
		fprintf(stderr, "  %s: cannot open (%d)\n", path, ret);
	if (ret >= 0)
		ret = truth_read_slices(st, "s.kind <> 'irq'", time_offset_ns, out);
	sptd_store_destroy(st);
	if (ret >= 0)
		ret = preorder(out);
	return ret < 0 ? ret : 0;
}

/* Same function: by name, or by address for code without a symbol. */
static int same_function(const struct frame *truth, const struct frame *dec)
{
	if (truth->addr)
		return dec->addr == truth->addr &&
		       (strncmp(dec->name, "0x", 2) == 0 || strstr(dec->name, "+0x"));
	return strcmp(truth->name, dec->name) == 0;
}

/* How far a decoded time may be from the truth, from config.txt: the
 * decoder knows the time of the timing packets only, and libipt's time is
 * that of the last one read (it reads ahead to the next branch packet). */
int64_t truth_tolerance_ns(const char *dir)
{
	int64_t core_hz = truth_config_get(dir, "core_hz"), mtc_freq = truth_config_get(dir, "mtc_freq");
	int64_t psb = truth_config_get(dir, "psb_period"), timing_cyc, ns_per_cycle;
	char path[4200], line[128], mode[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.txt", dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "timing=%15s", mode) == 1)
			break;
	if (f)
		fclose(f);
	ns_per_cycle = core_hz > 0 ? 1000000000 / core_hz : 1;
	if (ns_per_cycle < 1)
		ns_per_cycle = 1;
	timing_cyc = strcmp(mode, "cyc") == 0;
	if (timing_cyc)
		/* CYC comes with every branch packet; a TNT packet carries up to
		 * 6 branches, so the time of an event without a packet of its
		 * own is known up to the instructions up to the next packet */
		return 128 * ns_per_cycle;
	if (strcmp(mode, "mtc") == 0)
		/* one MTC period: 2^mtc_freq ticks of the 25 MHz crystal */
		return ((int64_t)1 << mtc_freq) * 40 + 64 * ns_per_cycle;
	/* TSC only: time is known at PSB+ (every psb_period bytes) and at
	 * switches; between them the decoder places events by instruction
	 * count (decode/flow.c), so the bound is psb_period cycles (a PSB+
	 * interval holds more instructions than bytes: this bound needs that
	 * placement, libipt's step time alone misses it by about 2x) */
	return psb * ns_per_cycle;
}

int truth_compare(const char *casename, const struct frames *truth, const struct frames *dec,
                   int64_t tol)
{
	size_t i, n = truth->n < dec->n ? truth->n : dec->n, bad = 0;
	int64_t worst = 0;

	if (truth->n != dec->n)
		fprintf(stderr, "  %s: %zu decoded intervals, truth has %zu\n", casename, dec->n,
		        truth->n);
	for (i = 0; i < n; i++) {
		const struct frame *t = &truth->v[i], *d = &dec->v[i];
		int64_t ds = llabs(t->start - d->start), de = llabs(t->end - d->end);

		if (ds > worst)
			worst = ds;
		if (de > worst)
			worst = de;
		if (t->tid == d->tid && t->depth == d->depth && t->flags == d->flags &&
		    same_function(t, d) && ds <= tol && de <= tol)
			continue;
		if (bad++ < 5)
			fprintf(stderr, "  %s: interval %zu: truth tid %d depth %d [%" PRId64 ", %"
			        PRId64 "] flags %d %s; decoded tid %d depth %d [%" PRId64 ", %" PRId64
			        "] flags %d %s\n", casename, i, t->tid, t->depth, t->start, t->end,
			        t->flags, t->name, d->tid, d->depth, d->start, d->end, d->flags, d->name);
	}
	printf("  %s: %zu intervals, %zu differ, worst time error %" PRId64 " ns (tolerance %"
	       PRId64 ")\n", casename, truth->n, bad, worst, tol);
	return truth->n == dec->n && bad == 0 && truth->n > 0 ? 0 : -1;
}

int truth_run(char *const argv[], const char *log, int append)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen(log, append ? "a" : "w", stdout) || dup2(fileno(stdout), 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int truth_run_ptgen(const char *ptgen, const char *progs, const char *const args[],
                    const char *outdir, const char *log)
{
	char progpath[8][4200];
	char *argv[40];
	int argc = 0, np = 0;

	argv[argc++] = (char *)ptgen;
	argv[argc++] = "-o";
	argv[argc++] = (char *)outdir;
	for (int i = 0; args[i]; i++) {
		if (argc >= 39 || (args[i][0] == '@' && np >= 8))
			return -1;
		if (args[i][0] == '@') {
			snprintf(progpath[np], sizeof(progpath[np]), "%s/%s", progs, args[i] + 1);
			argv[argc++] = progpath[np++];
		} else {
			argv[argc++] = (char *)args[i];
		}
	}
	argv[argc] = NULL;
	return truth_run(argv, log, 1);
}

int truth_run_ptgen_now(const char *ptgen, const char *progs, const char *const args[],
                        const char *outdir, const char *log)
{
	const char *all[40] = { "--start-tsc" };
	char tsc[32];
	int n = 2;

	snprintf(tsc, sizeof(tsc), "%" PRIu64, (uint64_t)__rdtsc());
	all[1] = tsc;
	for (int i = 0; args[i]; i++) {
		if (n >= 39)
			return -1;
		all[n++] = args[i];
	}
	all[n] = NULL;
	return truth_run_ptgen(ptgen, progs, all, outdir, log);
}

static int copy_file(const char *src, const char *dst)
{
	FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
	char buf[65536];
	size_t n;
	int ret = in && out ? 0 : -1;

	while (ret == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			ret = -1;
	if (in && ferror(in))
		ret = -1;
	if (out && fclose(out) != 0)
		ret = -1;
	if (in)
		fclose(in);
	return ret;
}

int truth_decode_window(const char *sysptd, const char *src, const char *dst,
                        int64_t window_start, const char *log)
{
	struct sptd_store *st = NULL;
	char *argv[] = { (char *)sysptd, "decode", (char *)dst, NULL };
	int rc;

	if (copy_file(src, dst) < 0) {
		fprintf(stderr, "  cannot copy %s to %s\n", src, dst);
		return -1;
	}
	if (sptd_store_open(dst, 1, &st) < 0 ||
	    sptd_store_meta_set_int(st, "window_start", window_start) < 0 ||
	    sptd_store_commit(st) < 0) {
		fprintf(stderr, "  %s: cannot set window_start\n", dst);
		sptd_store_destroy(st);
		return -1;
	}
	sptd_store_destroy(st);
	rc = truth_run(argv, log, 1);
	if (rc != 0) {
		fprintf(stderr, "  sysptd decode %s: exit %d\n", dst, rc);
		truth_show_log(log, 20);
		return -1;
	}
	return 0;
}

/* What "SELECT count(*) FROM slice WHERE @cond" counts in @st with ?1
 * bound to @window_start; -1 failed. */
static int64_t count_slices(struct sptd_store *st, const char *cond, int64_t window_start)
{
	struct sptd_store_stmt *s = NULL;
	char sql[256];
	int64_t v = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM slice WHERE %s", cond);
	if (sptd_store_prepare(st, sql, &s) < 0)
		return -1;
	if (strstr(cond, "?1"))
		sptd_store_bind_int(s, 1, window_start);
	if (sptd_store_step(s) == 1)
		v = sptd_store_column_int(s, 0);
	sptd_store_finalize(s);
	return v;
}

int64_t truth_check_clip(const char *name, const char *whole, const char *clipped,
                         int64_t window_start)
{
	struct sptd_store *w = NULL, *c = NULL;
	int64_t total, before, crossing, kept, early, truncated, stat = 0, ret = -1;

	if (sptd_store_open(whole, 0, &w) < 0 || sptd_store_open(clipped, 0, &c) < 0) {
		fprintf(stderr, "  %s: cannot open %s or %s\n", name, whole, clipped);
		goto out;
	}
	total = count_slices(w, "1", window_start);
	before = count_slices(w, "dur >= 0 AND ts + dur < ?1", window_start);
	crossing = count_slices(w, "ts < ?1 AND (dur < 0 OR ts + dur >= ?1)", window_start);
	kept = count_slices(c, "1", window_start);
	early = count_slices(c, "ts < ?1", window_start);
	truncated = count_slices(c, "ts = ?1 AND flags & 1", window_start);
	if (sptd_store_query_int(c, "SELECT value FROM stats WHERE name = 'slices_before_window'",
	                         &stat) < 0)
		stat = 0;
	printf("  %s: %lld slices, %lld ended before window_start %lld, %lld cross it; clipped: "
	       "%lld kept, %lld start before it, %lld start there truncated, stat %lld\n", name,
	       (long long)total, (long long)before, (long long)window_start, (long long)crossing,
	       (long long)kept, (long long)early, (long long)truncated, (long long)stat);
	if (total > 0 && before >= 0 && crossing >= 0 && early == 0 && kept == total - before &&
	    stat == before && truncated >= crossing)
		ret = before;
out:
	sptd_store_destroy(w);
	sptd_store_destroy(c);
	return ret;
}

void truth_show_log(const char *log, int max_lines)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f) && n++ < max_lines)
		fprintf(stderr, "    | %s", line);
	if (f)
		fclose(f);
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

void truth_tmp_done(const char *dir, int failed)
{
	if (failed || getenv("SPTD_KEEP")) {
		fprintf(stderr, "files kept in %s\n", dir);
		return;
	}
	if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}
