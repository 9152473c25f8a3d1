/* store_keysort.c — an index's keys in its order (store_pages.c builds
 * the index b-trees of slice from them).  Keys come in id order and are
 * often in index order already, or nearly: this sorts them without
 * compares where it can. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* The compare, inlined in the loops below. */
static inline int key_cmp(const struct sptd_store_key *a, const struct sptd_store_key *b)
{
	/* NULL sorts first */
	if (a->a_null != b->a_null)
		return a->a_null ? -1 : 1;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

int sptd_store_key_cmp(const void *a, const void *b)
{
	return key_cmp(a, b);
}

/* Sort @keys, @nruns ascending runs one after the other (one task's
 * (ts, id) with a few frames out of order): merged pairwise when the runs
 * are few, else qsort.  0 or -ENOMEM. */
static int merge_runs(struct sptd_store_key *keys, size_t n, size_t nruns)
{
	struct sptd_store_key *tmp, *src = keys, *dst;
	size_t *edge, nedge = 0;

	if (nruns > 64) {
		qsort(keys, n, sizeof(*keys), sptd_store_key_cmp);
		return 0;
	}
	tmp = malloc(n * sizeof(*tmp));
	edge = malloc((nruns + 2) * sizeof(*edge));
	if (!tmp || !edge) {
		free(tmp);
		free(edge);
		return -ENOMEM;
	}
	/* edge[r]: where run r starts; edge[nedge - 1] == n */
	edge[nedge++] = 0;
	for (size_t i = 1; i < n; i++)
		if (key_cmp(&keys[i - 1], &keys[i]) > 0)
			edge[nedge++] = i;
	edge[nedge++] = n;
	dst = tmp;
	while (nedge > 2) {
		size_t out = 0, r;

		for (r = 0; r + 2 < nedge; r += 2) {
			size_t a = edge[r], am = edge[r + 1], b = am, bm = edge[r + 2], o = a;

			while (a < am && b < bm)
				dst[o++] = key_cmp(&src[b], &src[a]) < 0 ? src[b++] : src[a++];
			memcpy(dst + o, src + a, (am - a) * sizeof(*dst));
			o += am - a;
			memcpy(dst + o, src + b, (bm - b) * sizeof(*dst));
			edge[out++] = edge[r];
		}
		/* an odd run out: copied as it is */
		if (r + 1 < nedge) {
			memcpy(dst + edge[r], src + edge[r], (edge[r + 1] - edge[r]) * sizeof(*dst));
			edge[out++] = edge[r];
		}
		edge[out++] = n;
		nedge = out;
		dst = src;
		src = src == keys ? tmp : keys;
	}
	if (src != keys)
		memcpy(keys, src, n * sizeof(*keys));
	free(tmp);
	free(edge);
	return 0;
}

/* Sort @keys (made in id order) into index order.  Without compares where
 * it can be: keys often are in order already (one task's (utid, ts)), and
 * the first value is mostly a small number (utid, parent_id): a stable
 * counting sort on it keeps each run in id order, and a run is sorted
 * further only if its second value is out of order.  0 or -ENOMEM. */
int sptd_store_keys_sort(struct sptd_store_key *keys, size_t n)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	struct sptd_store_key *out;
	size_t i, nnull = 0, nb, *at;

	for (i = 1; i < n && key_cmp(&keys[i - 1], &keys[i]) < 0; i++)
		;
	if (i >= n)
		return 0;
	for (i = 0; i < n; i++) {
		if (keys[i].a_null) {
			nnull++;
			continue;
		}
		lo = keys[i].a < lo ? keys[i].a : lo;
		hi = keys[i].a > hi ? keys[i].a : hi;
	}
	/* values spread too wide for buckets: compare */
	if (nnull == n || (uint64_t)hi - (uint64_t)lo > 4 * (uint64_t)n + 1024) {
		qsort(keys, n, sizeof(*keys), sptd_store_key_cmp);
		return 0;
	}
	/* bucket 0: NULL; bucket 1 + v - lo: value v */
	nb = (size_t)((uint64_t)hi - (uint64_t)lo) + 2;
	at = calloc(nb + 1, sizeof(*at));
	out = malloc(n * sizeof(*out));
	if (!at || !out) {
		free(at);
		free(out);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		at[1 + (keys[i].a_null ? 0 : (size_t)((uint64_t)keys[i].a - (uint64_t)lo) + 1)]++;
	for (i = 1; i <= nb; i++)
		at[i] += at[i - 1];
	for (i = 0; i < n; i++)
		out[at[keys[i].a_null ? 0 : (size_t)((uint64_t)keys[i].a - (uint64_t)lo) + 1]++] =
			keys[i];
	memcpy(keys, out, n * sizeof(*keys));
	free(out);
	free(at);
	/* each run of one first value: in (b, id) order unless b goes back */
	for (i = 0; i < n;) {
		size_t j = i + 1, bad = 0;

		for (; j < n && keys[j].a_null == keys[i].a_null && keys[j].a == keys[i].a; j++)
			bad += key_cmp(&keys[j - 1], &keys[j]) > 0;
		if (bad && merge_runs(keys + i, j - i, bad + 1) < 0)
			return -ENOMEM;
		i = j;
	}
	return 0;
}
