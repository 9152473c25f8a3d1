/* report_stacks.c — the "total" of the sample reports (top functions): how
 * many samples have a function anywhere in their stack, each sample once
 * however often the function recurs in it.
 *
 * The stacks are callsite chains (callsite.parent_id).  The SQL that walked
 * them (a recursive CTE from every distinct leaf, at most 1,024 frames up,
 * then DISTINCT per leaf and function) was right but costs SQLite's
 * per-row work for every frame of every leaf: a crafted incident whose
 * 20,000 callsites form one chain, each a sample's leaf, took 36 s.  Here
 * the same walk runs in C over arrays: every callsite loaded once with its
 * function key and its parent's index, then each leaf walks up, a function
 * counted once per leaf by a stamp; the result is handed to the report's
 * SQL as a VALUES table, so the rest of the report stays SQL.
 *
 * The result is the SQL walk's, row for row: the leaf and up to 1,024
 * frames above it (a loop of parent links stops there), a parent that is
 * no callsite ends the stack, a leaf that is no callsite counts nowhere.
 * A function is what the report groups by: its symbol, or for frames no
 * symbol covers "u" and the dso of an "[unknown]" symbol row. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query-local.h"

/* Frames above a leaf that count (the SQL's fr.k < 1024). */
#define STACK_FRAMES 1024

/* The function key of each callsite, as the report's SQL groups them. */
#define FKEY_SQL \
	"SELECT c.id, c.parent_id, CASE WHEN c.symbol_id IS NULL THEN 'u' " \
	"WHEN y.name = '[unknown]' THEN 'u' || y.dso_id ELSE 's' || c.symbol_id END " \
	"FROM callsite c LEFT JOIN symbol y ON y.id = c.symbol_id ORDER BY c.id"

/* One callsite. */
struct frame {
	int64_t id, parent_id;   /* parent_id: INT64_MIN for NULL */
	size_t parent;           /* index of the parent, SIZE_MAX none */
	uint32_t fkey;           /* index into the keys */
};

/* The function keys (interned: sptd_query_smap) and, per key, the
 * samples with it in their stack and the last leaf (1-based) that counted
 * it. */
struct keys {
	struct sptd_query_smap map;
	uint64_t *total;
	uint32_t *stamp;
};

static void keys_fini(struct keys *k)
{
	sptd_query_smap_fini(&k->map);
	free(k->total);
	free(k->stamp);
	memset(k, 0, sizeof(*k));
}

/* Index of callsite @id in @f (sorted by id), SIZE_MAX when none. */
static size_t frame_find(const struct frame *f, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && f[lo].id == id ? lo : SIZE_MAX;
}

/* Every callsite, its key and its parent's index into *@out (*@n). */
static int frames_load(struct sptd_store *st, struct keys *k, struct frame **out, size_t *n)
{
	struct sptd_store_stmt *q = NULL;
	struct frame *f = NULL;
	size_t cap = 0, i;
	int rc;

	*out = NULL;
	*n = 0;
	rc = sptd_store_prepare(st, FKEY_SQL, &q);
	while (rc >= 0 && (rc = sptd_store_step(q)) == 1) {
		const char *key = sptd_store_column_text(q, 2);
		int ki;

		if (*n == cap) {
			struct frame *g = realloc(f, (cap ? 2 * cap : 1024) * sizeof(*g));

			if (!g) {
				rc = -ENOMEM;
				break;
			}
			f = g;
			cap = cap ? 2 * cap : 1024;
		}
		ki = sptd_query_smap_intern(&k->map, key ? key : "u");
		if (ki < 0) {
			rc = ki;
			break;
		}
		f[*n] = (struct frame){
			.id = sptd_store_column_int(q, 0),
			.parent_id = sptd_store_column_type(q, 1) == SPTD_STORE_NULL ?
			             INT64_MIN : sptd_store_column_int(q, 1),
			.fkey = (uint32_t)ki,
		};
		(*n)++;
	}
	sptd_store_finalize(q);
	for (i = 0; rc >= 0 && i < *n; i++)
		f[i].parent = f[i].parent_id == INT64_MIN ? SIZE_MAX :
		              frame_find(f, *n, f[i].parent_id);
	if (rc < 0) {
		free(f);
		*n = 0;
		return rc;
	}
	*out = f;
	return 0;
}

/* Walk each leaf's stack, counting every key once per leaf. */
static int leaves_walk(struct sptd_store *st, struct keys *k, const struct frame *f, size_t n)
{
	struct sptd_store_stmt *q = NULL;
	size_t nkeys = k->map.count;
	uint32_t gen = 0;
	int rc;

	k->total = calloc(nkeys ? nkeys : 1, sizeof(*k->total));
	k->stamp = calloc(nkeys ? nkeys : 1, sizeof(*k->stamp));
	if (!k->total || !k->stamp)
		return -ENOMEM;
	rc = sptd_store_prepare(st, "SELECT callsite_id, count(*) FROM sample "
	                        "WHERE callsite_id IS NOT NULL GROUP BY callsite_id", &q);
	while (rc >= 0 && (rc = sptd_store_step(q)) == 1) {
		size_t at = frame_find(f, n, sptd_store_column_int(q, 0));
		uint64_t count = (uint64_t)sptd_store_column_int(q, 1);

		if (at == SIZE_MAX)
			continue;          /* a leaf that is no callsite: nowhere */
		if (++gen == 0) {          /* 2^32 leaves: stamps start again */
			memset(k->stamp, 0, nkeys * sizeof(*k->stamp));
			gen = 1;
		}
		for (int depth = 0; at != SIZE_MAX; depth++) {
			uint32_t key = f[at].fkey;

			if (k->stamp[key] != gen) {
				k->stamp[key] = gen;
				k->total[key] += count;
			}
			if (depth == STACK_FRAMES)
				break;
			at = f[at].parent;
		}
	}
	sptd_store_finalize(q);
	return rc < 0 ? rc : 0;
}

/* @text as an SQL string literal (quotes doubled: a file may hold any
 * text where an id belongs). */
static int literal_add(struct sptd_query_buf *sql, const char *text)
{
	int rc = sptd_query_buf_add(sql, "'", 1);

	while (rc == 0 && *text) {
		size_t run = strcspn(text, "'");

		rc = sptd_query_buf_add(sql, text, run);
		text += run;
		if (rc == 0 && *text == '\'') {
			rc = sptd_query_buf_add(sql, "''", 2);
			text++;
		}
	}
	return rc == 0 ? sptd_query_buf_add(sql, "'", 1) : rc;
}

/* "('key', total)" rows of the keys some stack holds, as SQL VALUES. */
static int values_add(struct sptd_query_buf *sql, const struct keys *k)
{
	char num[32];
	int rc = 0, any = 0;

	for (size_t i = 0; i < k->map.count && rc == 0; i++) {
		if (!k->total[i])
			continue;
		rc = sptd_query_buf_add(sql, any ? ", (" : "(", any ? 3 : 1);
		if (rc == 0)
			rc = literal_add(sql, k->map.strs[i]);
		snprintf(num, sizeof(num), ", %" PRIu64 ")", k->total[i]);
		if (rc == 0)
			rc = sptd_query_buf_add(sql, num, strlen(num));
		any = 1;
	}
	if (rc == 0 && !any)
		rc = sptd_query_buf_add(sql, "(NULL, 0)", 9);
	return rc;
}

int sptd_query_stack_totals(struct sptd_store *st, struct sptd_query_buf *sql)
{
	static const char head[] = "tot(fkey, total) AS (VALUES ";
	struct keys k;
	struct frame *f = NULL;
	size_t n = 0;
	int rc;

	memset(&k, 0, sizeof(k));
	rc = frames_load(st, &k, &f, &n);
	if (rc >= 0)
		rc = leaves_walk(st, &k, f, n);
	if (rc >= 0)
		rc = sptd_query_buf_add(sql, head, strlen(head));
	if (rc >= 0)
		rc = values_add(sql, &k);
	if (rc >= 0)
		rc = sptd_query_buf_add(sql, "), ", 3);
	free(f);
	keys_fini(&k);
	return rc < 0 ? rc : 0;
}
