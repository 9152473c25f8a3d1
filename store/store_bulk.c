/* store_bulk.c — slice rows kept until the commit and written there as
 * finished b-tree pages (store_pages.c builds them, store_pagefile.c
 * writes them) instead of SQL inserts and the CREATE INDEX sorts.
 *
 * Why: on an import, SQLite's inserts of the slice rows and its two slice
 * index builds at commit were most of the time that runs on one core
 * (BENCHMARKS.md).  Rows known in full can be laid out directly, the three
 * trees built at once on their own threads from the moment the decode is
 * done (sptd_store_slices_ready) while the incident is finished and
 * SQLite commits everything else.
 *
 * How the file stays one SQLite wrote: the table and both indexes exist,
 * empty, when the transaction commits (SQLite made them: their root pages
 * are empty leaves).  Then store_pagefile.c puts the trees' pages into the
 * file's free pages and after its last page, overwrites the roots and
 * moves the header on.  The connection holds no lock over this
 * (locking_mode NORMAL before the COMMIT), so at its next statement it
 * sees the new change counter and reads the file again, as it does after
 * another process wrote it.
 *
 * Anything not as expected (no temporary file of ours, a page size,
 * header or freelist this does not write, a slice table or index of
 * another definition, one more index or trigger on slice, rows already in
 * the table, a root page that is not an empty leaf, a file that would grow
 * over SQLite's lock-byte page) sends the rows through SQL instead, before
 * or after the commit.  A write that fails fails the store: the temporary
 * file is never published.  Reads of slice through this API before the
 * commit insert the kept rows first (or count them: sptd_store_count,
 * sptd_store_next_id; -p's filter drops rows in memory).  Trees built early
 * are dropped whenever the kept rows change.  SPTD_STORE_BULK=sql in the
 * environment keeps the SQL path; a number there caps the rows kept (the
 * tests' small cap). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store-local.h"

/* Rows kept at most: about 260 bytes each at the commit's peak (the row,
 * two index keys and a sort's copy, the pages; measured: 4.2 GB for 2^24
 * random rows), so about 1.1 GB here.  Beyond, they go through SQL as they
 * come, and a huge import needs no more memory than SQLite's page cache
 * (malloc does not fail under Linux's overcommit: a cap must). */
#define BULK_MAX_ROWS ((size_t)1 << 22)

/* Rows converted per SQL batch when the rows go through SQL (whole bulk
 * INSERT statements). */
#define SETTLE_CHUNK (4 * SPTD_STORE_BULK_ROWS)

#define N_TREES SPTD_STORE_N_TREES

static int cmp_utid(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Names in sqlite_schema, by enum sptd_store_tree. */
static const char *const tree_names[N_TREES] = { "slice", "slice_utid_ts", "slice_parent_id" };

/* What the commit needs between its two halves. */
struct sptd_store_bulk_plan {
	int64_t page_count;              /* PRAGMA page_count before the commit */
	uint32_t page_size;              /* PRAGMA page_size */
	int64_t root[N_TREES];           /* root pages, by enum sptd_store_tree */
	struct sptd_store_pages *pages;  /* the trees, building */
};

/* Forget trees built early (waiting for their builders, which read the
 * kept rows): the rows are about to change. */
static void prebuilt_drop(struct sptd_store *st)
{
	sptd_store_pages_free(st->prebuilt);
	st->prebuilt = NULL;
}

/* ---- deferring ----------------------------------------------------------- */

int sptd_store_slices_defer(struct sptd_store *st)
{
	const char *env = getenv("SPTD_STORE_BULK");
	char *end;

	if (!st)
		return -EINVAL;
	st->bulk_max = BULK_MAX_ROWS;
	/* SQL when asked, or when the slice table has a column the page
	 * writer cannot encode */
	if ((env && strcmp(env, "sql") == 0) || !sptd_store_pages_layout_ok())
		return 0;
	/* a number: keep at most that many rows (the tests' small limit) */
	if (env && *env) {
		unsigned long long v = strtoull(env, &end, 10);

		if (!*end && v > 0 && v < BULK_MAX_ROWS)
			st->bulk_max = (size_t)v;
	}
	st->bulk_on = 1;
	return 0;
}

size_t sptd_store_slices_paged(const struct sptd_store *st)
{
	return st ? st->paged : 0;
}

static int bulk_add(struct sptd_store *st, const struct sptd_store_slice_row *rows, size_t n)
{
	/* more rows: the trees built before no longer hold them all */
	prebuilt_drop(st);
	if (st->nbulk + n > st->bulk_max) {
		int ret = sptd_store_bulk_settle(st);

		st->bulk_on = 0;
		return ret < 0 ? ret : sptd_store_slices_sql(st, rows, n);
	}
	if (st->nbulk + n > st->bulk_cap) {
		size_t cap = st->bulk_cap ? st->bulk_cap : 4096;
		struct sptd_store_slice_row *p;

		while (cap < st->nbulk + n)
			cap *= 2;
		p = realloc(st->bulk, cap * sizeof(*p));
		if (!p)
			return sptd_store_fail(st, -ENOMEM, "adding slice rows: out of memory "
			                       "(%zu rows)", st->nbulk + n);
		st->bulk = p;
		st->bulk_cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		struct sptd_store_slice_row *b = &st->bulk[st->nbulk + i];

		*b = rows[i];
		/* checked by the caller: one of the four, kept as the store's own */
		b->kind = sptd_store_pages_kind((unsigned)sptd_store_pages_kind_of(rows[i].kind));
	}
	st->nbulk += n;
	return 0;
}

int sptd_store_slices_add(struct sptd_store *st, const struct sptd_store_slice_row *rows,
                          size_t n)
{
	static const char what[] = "adding slice rows";
	size_t k;
	int ret;

	SPTD_STORE_REQUIRE(st, rows || !n, what, "rows is NULL");
	for (k = 0; k < n; k++) {
		SPTD_STORE_REQUIRE(st, rows[k].id >= 0 && rows[k].dur >= 0 && rows[k].depth >= 0,
		                   what, "id, dur or depth is negative");
		SPTD_STORE_REQUIRE(st, sptd_store_pages_kind_of(rows[k].kind) >= 0, what,
		                   "kind is not one of user, kernel, syscall, irq");
	}
	ret = sptd_store_writable_check(st, what);
	if (ret < 0)
		return ret;
	if (st->bulk_on)
		return bulk_add(st, rows, n);
	return sptd_store_slices_sql(st, rows, n);
}

int sptd_store_bulk_settle(struct sptd_store *st)
{
	size_t i = 0;
	int ret = 0;

	prebuilt_drop(st);
	while (i < st->nbulk && ret >= 0) {
		size_t k = st->nbulk - i < SETTLE_CHUNK ? st->nbulk - i : SETTLE_CHUNK;

		ret = sptd_store_slices_sql(st, st->bulk + i, k);
		i += k;
	}
	sptd_store_bulk_release(st);
	return ret < 0 ? ret : 0;
}

void sptd_store_bulk_keep_utids(struct sptd_store *st, int64_t *utids, size_t n)
{
	size_t out = 0;

	prebuilt_drop(st);
	if (n)
		qsort(utids, n, sizeof(*utids), cmp_utid);
	for (size_t i = 0; i < st->nbulk; i++)
		if (n && bsearch(&st->bulk[i].utid, utids, n, sizeof(*utids), cmp_utid))
			st->bulk[out++] = st->bulk[i];
	st->nbulk = out;
}

void sptd_store_bulk_release(struct sptd_store *st)
{
	prebuilt_drop(st);
	free(st->bulk);
	st->bulk = NULL;
	st->nbulk = st->bulk_cap = 0;
}

/* ---- the commit ---------------------------------------------------------------- */

static int row_id_cmp(const void *pa, const void *pb)
{
	const struct sptd_store_slice_row *a = pa, *b = pb;

	return (a->id > b->id) - (a->id < b->id);
}

/* One integer from @sql (a PRAGMA), or -1. */
static int64_t pragma_int(struct sptd_store *st, const char *sql)
{
	sqlite3_stmt *q = NULL;
	int64_t v = -1;

	if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) == SQLITE_INTEGER)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* Is the slice table, with its two indexes and nothing else, exactly as
 * this build creates it, and empty?  Fills @plan's roots.  1 yes, 0 no. */
static int schema_as_built(struct sptd_store *st, struct sptd_store_bulk_plan *plan)
{
	char want[N_TREES][512];
	sqlite3_stmt *q = NULL;
	int seen = 0, ok = 1, rc;

	snprintf(want[SPTD_STORE_TREE_TABLE], sizeof(want[0]), "CREATE TABLE \"%s\" (%s)",
	         sptd_store_table_defs[SPTD_STORE_T_SLICE].name,
	         sptd_store_table_columns(&sptd_store_table_defs[SPTD_STORE_T_SLICE]));
	for (int i = SPTD_STORE_TREE_UTID_TS; i < N_TREES; i++)
		if (sptd_store_index_sql(tree_names[i], want[i], sizeof(want[i])) < 0)
			return 0;
	rc = sqlite3_prepare_v2(st->db, "SELECT type, name, rootpage, sql FROM main.sqlite_schema "
	                        "WHERE tbl_name = 'slice' COLLATE NOCASE", -1, &q, NULL);
	while (rc == SQLITE_OK && ok && sqlite3_step(q) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(q, 1);
		const char *sql = (const char *)sqlite3_column_text(q, 3);
		int i = 0;

		while (i < N_TREES && (!name || strcmp(name, tree_names[i]) != 0))
			i++;
		/* another index, a trigger, or a definition of its own */
		if (i == N_TREES || !sql || strcmp(sql, want[i]) != 0 || (seen & (1 << i)) ||
		    sqlite3_column_type(q, 2) != SQLITE_INTEGER)
			ok = 0;
		else
			plan->root[i] = sqlite3_column_int64(q, 2);
		seen |= 1 << i;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_OK || !ok || seen != (1 << N_TREES) - 1)
		return 0;
	/* empty: its root is an empty leaf, which the tree replaces */
	return pragma_int(st, "SELECT EXISTS (SELECT 1 FROM main.slice)") == 0;
}

/* Put @n rows whose ids are exactly min..min+n-1 in id order in place,
 * each moved once straight to its slot: 1 when done, 0 when the ids are
 * not that (a gap, or an id twice: the rows are then only permuted). */
static int rows_place_dense(struct sptd_store_slice_row *rows, size_t n)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t i;

	for (i = 0; i < n; i++) {
		if (rows[i].id < lo)
			lo = rows[i].id;
		if (rows[i].id > hi)
			hi = rows[i].id;
	}
	/* ids are >= 0, so hi - lo cannot overflow */
	if (!n || (uint64_t)(hi - lo) != n - 1)
		return 0;
	for (i = 0; i < n; i++)
		while ((uint64_t)(rows[i].id - lo) != i) {
			size_t to = (size_t)(rows[i].id - lo);
			struct sptd_store_slice_row t;

			if (rows[to].id == rows[i].id)
				return 0;          /* twice: then another id is missing */
			t = rows[to];
			rows[to] = rows[i];
			rows[i] = t;
		}
	return 1;
}

/* The kept rows in id order.  0, or -EINVAL with the id found twice in
 * *@twice (the constraint SQL would refuse).  A decode's ids are its
 * slices numbered from one start, in the order the slices end: they are
 * placed, not sorted (qsort only for anything else). */
static int rows_sort(struct sptd_store *st, int64_t *twice)
{
	size_t i;

	for (i = 1; i < st->nbulk && st->bulk[i - 1].id < st->bulk[i].id; i++)
		;
	if (i < st->nbulk && !rows_place_dense(st->bulk, st->nbulk))
		qsort(st->bulk, st->nbulk, sizeof(*st->bulk), row_id_cmp);
	for (i = 1; i < st->nbulk; i++)
		if (st->bulk[i - 1].id == st->bulk[i].id) {
			*twice = st->bulk[i].id;
			return -EINVAL;
		}
	return 0;
}

int sptd_store_slices_ready(struct sptd_store *st)
{
	int64_t page_size, twice;

	if (!st)
		return -EINVAL;
	if (!st->nbulk || st->prebuilt || st->fatal)
		return 0;
	page_size = pragma_int(st, "PRAGMA main.page_size");
	if (!sptd_store_page_size_ok(page_size))
		return 0;
	/* an id twice: left to the commit, which says so */
	if (rows_sort(st, &twice) < 0)
		return 0;
	/* no memory now: the commit tries again */
	if (sptd_store_pages_start(st->bulk, st->nbulk, (uint32_t)page_size, &st->prebuilt) < 0)
		st->prebuilt = NULL;
	st->prebuilt_size = (uint32_t)page_size;
	return 0;
}

int sptd_store_bulk_begin(struct sptd_store *st, struct sptd_store_bulk_plan **out)
{
	struct sptd_store_bulk_plan *plan;
	int64_t page_size;
	int ret = 0;

	*out = NULL;
	if (!st->nbulk)
		return 0;
	page_size = pragma_int(st, "PRAGMA main.page_size");
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return sptd_store_fail(st, -ENOMEM, "committing: out of memory");
	if (st->tmp_fd < 0 || !sptd_store_page_size_ok(page_size) ||
	    pragma_int(st, "PRAGMA main.auto_vacuum") != 0 || !schema_as_built(st, plan))
		goto by_sql;
	plan->page_count = pragma_int(st, "PRAGMA main.page_count");
	if (plan->page_count < 1)
		goto by_sql;
	plan->page_size = (uint32_t)page_size;
	if (st->prebuilt && st->prebuilt_size == plan->page_size) {
		/* built since the rows were complete (sptd_store_slices_ready) */
		plan->pages = st->prebuilt;
		st->prebuilt = NULL;
	} else {
		int64_t twice;

		prebuilt_drop(st);
		ret = rows_sort(st, &twice);
		if (ret < 0) {
			ret = sptd_store_fail(st, -EINVAL, "adding slice rows: slice id %lld twice",
			                      (long long)twice);
			goto fail;
		}
		/* the trees build while SQLite commits everything else */
		ret = sptd_store_pages_start(st->bulk, st->nbulk, plan->page_size, &plan->pages);
		if (ret < 0) {
			ret = sptd_store_fail(st, ret, "committing the slice rows: out of memory");
			goto fail;
		}
	}
	/* the connection re-reads the file after the commit (see above) */
	ret = sptd_store_exec(st, "PRAGMA main.locking_mode=NORMAL", "committing");
	if (ret < 0)
		goto fail;
	*out = plan;
	return 0;
by_sql:
	free(plan);
	return sptd_store_bulk_settle(st);
fail:
	sptd_store_bulk_end(st, plan, ret);
	return ret;
}

int sptd_store_bulk_end(struct sptd_store *st, struct sptd_store_bulk_plan *plan, int ret)
{
	int w;

	if (!plan)
		return ret;
	/* no trees when begin failed before building them; the write waits
	 * for each builder (pages_free for all, when nothing is written) */
	w = ret >= 0 && plan->pages ? sptd_store_pages_write(plan->pages, st->tmp_fd,
	                                                     plan->page_count, plan->root) : 1;
	if (ret >= 0 && w == SPTD_STORE_PAGES_NOMEM)
		ret = sptd_store_fail(st, -ENOMEM, "committing the slice rows: out of memory");
	if (ret >= 0) {
		if (w == 0)
			st->paged = st->nbulk;
		if (w < 0) {
			/* pages may be half-written: this file is never published
			 * (the store is failed from here; destroy removes it) */
			ret = sptd_store_fail_write(st, w, "committing the slice rows", strerror(-w));
			sptd_store_mark_fatal(st, ret);
		} else if (w > 0) {
			/* not the file expected: the rows go through SQL */
			ret = sptd_store_exec(st, "BEGIN IMMEDIATE", "committing the slice rows");
			if (ret >= 0) {
				st->writable = 1;
				ret = sptd_store_bulk_settle(st);
				st->writable = 0;
			}
			if (ret >= 0)
				ret = sptd_store_exec(st, "COMMIT", "committing the slice rows");
		}
	}
	sptd_store_pages_free(plan->pages);
	free(plan);
	sptd_store_bulk_release(st);
	return ret;
}
