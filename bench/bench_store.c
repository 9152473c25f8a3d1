/* bench_store.c — how close sysptd's store comes to SQLite itself when an
 * import writes its call slices: N slice rows through sptd_store (the bulk
 * path the writer thread uses, then the commit that builds the indexes and
 * fsyncs) against the same rows inserted with bare SQLite (same table,
 * pragmas, 64-row prepared INSERT, the two slice indexes built after),
 * alternating, in the same run; and the same rows kept for the commit and
 * written there as b-tree pages (sptd_store_slices_defer, what a PT decode
 * does since store_bulk.c), which is not bound by SQLite's cost per row.
 *
 * Usage: bench_store [N [ROUNDS [DIR]]]  (default 736537 rows — the dense
 * trace's — 3 rounds, /tmp).  Prints seconds per phase and the ratios. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sptd_store.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Row @i of a single-threaded call tree: ids in start order, a parent a
 * few ids back, as phase 2 emits them. */
static void make_row(int64_t i, struct sptd_store_slice_row *r)
{
	r->id = i + 1;
	r->ts = (i + 1) * 37;
	r->dur = 100 + (i % 50);
	r->cpu = 0;
	r->utid = 1;
	r->depth = (int)(i % 9);
	r->parent_id = i % 9 ? i + 1 - (i % 9) : -1;
	r->symbol_id = i % 300;
	r->kind = SPTD_SLICE_USER;
	r->flags = 0;
}

/* What sysptd's store takes: the rows in the writer's batches, then the
 * commit (indexes of every table, fsync, rename); @paged: the rows kept
 * and written as pages at the commit. */
static int run_store(const char *path, int64_t n, int paged, double *ins, double *commit)
{
	struct sptd_store_slice_row *rows = malloc(4096 * sizeof(*rows));
	struct sptd_store *st = NULL;
	double t0, t1;
	int ret;

	if (!rows)
		return -ENOMEM;
	unlink(path);
	ret = sptd_store_create(path, &st);
	if (ret >= 0 && paged)
		ret = sptd_store_slices_defer(st);
	t0 = now_s();
	for (int64_t i = 0; i < n && ret >= 0; i += 4096) {
		size_t k, m = n - i < 4096 ? (size_t)(n - i) : 4096;

		for (k = 0; k < m; k++)
			make_row(i + (int64_t)k, &rows[k]);
		ret = sptd_store_slices_add(st, rows, m);
	}
	t1 = now_s();
	if (ret >= 0)
		ret = sptd_store_commit(st);
	if (ret >= 0 && paged && sptd_store_slices_paged(st) != (size_t)n) {
		fprintf(stderr, "bench_store: the rows did not go as pages\n");
		ret = -EIO;
	}
	*ins = t1 - t0;
	*commit = now_s() - t1;
	if (ret < 0)
		fprintf(stderr, "bench_store: %s\n", st ? sptd_store_errmsg(st) : strerror(-ret));
	sptd_store_destroy(st);
	free(rows);
	unlink(path);
	return ret;
}

static int exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "bench_store: %s: %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

/* The same rows with bare SQLite: the floor. */
static int run_bare(const char *path, int64_t n, double *ins, double *index, double *commit)
{
	enum { R = 64 };
	char sql[R * 24 + 64];
	sqlite3_stmt *s = NULL;
	sqlite3 *db = NULL;
	double t0, t1, t2;
	int off, ret = -1;

	unlink(path);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		goto out;
	/* as store_file.c creates an incident */
	if (exec(db, "PRAGMA page_size=16384; PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;"
	             "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-32768;") ||
	    exec(db, "CREATE TABLE slice (id INTEGER PRIMARY KEY, ts INT, dur INT, cpu INT, "
	             "utid INT, depth INT, parent_id INT NULL, symbol_id INT NULL, kind TEXT, "
	             "flags INT)") || exec(db, "BEGIN"))
		goto out;
	off = snprintf(sql, sizeof(sql), "INSERT INTO slice VALUES ");
	for (int r = 0; r < R; r++)
		off += snprintf(sql + off, sizeof(sql) - (size_t)off, "%s(?,?,?,?,?,?,?,?,?,?)",
		                r ? "," : "");
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK)
		goto out;
	t0 = now_s();
	for (int64_t i = 0; i + R <= n; i += R) {
		for (int r = 0; r < R; r++) {
			struct sptd_store_slice_row row;
			int b = r * 10;

			make_row(i + r, &row);
			sqlite3_bind_int64(s, b + 1, row.id);
			sqlite3_bind_int64(s, b + 2, row.ts);
			sqlite3_bind_int64(s, b + 3, row.dur);
			sqlite3_bind_int64(s, b + 4, row.cpu);
			sqlite3_bind_int64(s, b + 5, row.utid);
			sqlite3_bind_int64(s, b + 6, row.depth);
			if (row.parent_id < 0)
				sqlite3_bind_null(s, b + 7);
			else
				sqlite3_bind_int64(s, b + 7, row.parent_id);
			sqlite3_bind_int64(s, b + 8, row.symbol_id);
			sqlite3_bind_text(s, b + 9, row.kind, -1, SQLITE_STATIC);
			sqlite3_bind_int64(s, b + 10, row.flags);
		}
		if (sqlite3_step(s) != SQLITE_DONE)
			goto out;
		sqlite3_reset(s);
	}
	t1 = now_s();
	if (exec(db, "CREATE INDEX slice_utid_ts ON slice (utid, ts);"
	             "CREATE INDEX slice_parent_id ON slice (parent_id)"))
		goto out;
	t2 = now_s();
	if (exec(db, "COMMIT"))
		goto out;
	*ins = t1 - t0;
	*index = t2 - t1;
	*commit = now_s() - t2;
	ret = 0;
out:
	sqlite3_finalize(s);
	sqlite3_close(db);
	unlink(path);
	return ret;
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 736537;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	char a[4096], b[4096];

	if (n < 64 || rounds < 1) {
		fprintf(stderr, "usage: bench_store [N>=64 [ROUNDS [DIR]]]\n");
		return 2;
	}
	n -= n % 64;
	snprintf(a, sizeof(a), "%s/bench_store.%d.db", dir, (int)getpid());
	snprintf(b, sizeof(b), "%s/bench_store_bare.%d.db", dir, (int)getpid());
	printf("%lld slice rows, %d rounds, sysptd's store and bare SQLite %s alternating\n",
	       (long long)n, rounds, sqlite3_libversion());
	printf("round | store: insert s, commit (indexes + fsync) s, total | bare: insert s, "
	       "indexes s, commit s, total | store / bare | pages: keep s, commit s, total | "
	       "bare / pages\n");
	for (int r = 0; r < rounds; r++) {
		double si, sc, bi, bx, bc, pi, pc;

		if (run_store(a, n, 0, &si, &sc) < 0 || run_bare(b, n, &bi, &bx, &bc) < 0 ||
		    run_store(a, n, 1, &pi, &pc) < 0)
			return 1;
		printf("%5d | %.3f %.3f %.3f | %.3f %.3f %.3f %.3f | %.2fx | %.3f %.3f %.3f | %.2fx\n",
		       r + 1, si, sc, si + sc, bi, bx, bc, bi + bx + bc, (si + sc) / (bi + bx + bc),
		       pi, pc, pi + pc, (bi + bx + bc) / (pi + pc));
	}
	return 0;
}
