/* perfetto_intern.c — the two small hash maps interning needs: int64 keys
 * (symbol, dso, callsite ids) to interned ids, and strings (task comms) to
 * their index in a compact_sched intern table.  Open addressing, linear
 * probing, grown at half load; they hold one entry per distinct name, so
 * their size follows the code and tasks seen, never the number of events. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto-local.h"

static size_t hash64(int64_t key)
{
	uint64_t x = (uint64_t)key;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (size_t)x;
}

static size_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

void sptd_query_imap_fini(struct sptd_query_imap *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

uint64_t sptd_query_imap_get(const struct sptd_query_imap *m, int64_t key)
{
	size_t i;

	if (!m->cap)
		return 0;
	for (i = hash64(key) & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return 0;
}

static void imap_insert(int64_t *keys, uint64_t *vals, size_t cap, int64_t key,
                        uint64_t val)
{
	size_t i;

	for (i = hash64(key) & (cap - 1); vals[i] && keys[i] != key; i = (i + 1) & (cap - 1))
		;
	keys[i] = key;
	vals[i] = val;
}

int sptd_query_imap_put(struct sptd_query_imap *m, int64_t key, uint64_t val)
{
	if (val == 0)
		return -EINVAL;
	if ((m->count + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256, i;
		int64_t *keys = calloc(cap, sizeof(*keys));
		uint64_t *vals = calloc(cap, sizeof(*vals));

		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		for (i = 0; i < m->cap; i++)
			if (m->vals[i])
				imap_insert(keys, vals, cap, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	if (!sptd_query_imap_get(m, key))
		m->count++;
	imap_insert(m->keys, m->vals, m->cap, key, val);
	return 0;
}

void sptd_query_smap_fini(struct sptd_query_smap *m)
{
	if (!m)
		return;
	sptd_query_smap_clear(m);
	free(m->strs);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void sptd_query_smap_clear(struct sptd_query_smap *m)
{
	size_t i;

	for (i = 0; i < m->count; i++)
		free(m->strs[i]);
	if (m->slots)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
}

static int smap_grow(struct sptd_query_smap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i, j;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->count; i++) {
		for (j = hash_str(m->strs[i]) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = (uint32_t)(i + 1);
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int sptd_query_smap_intern(struct sptd_query_smap *m, const char *s)
{
	size_t i;
	char *copy;

	if (!s)
		s = "";
	if ((m->count + 1) * 2 > m->cap && smap_grow(m))
		return -ENOMEM;
	for (i = hash_str(s) & (m->cap - 1); m->slots[i]; i = (i + 1) & (m->cap - 1))
		if (strcmp(m->strs[m->slots[i] - 1], s) == 0)
			return (int)(m->slots[i] - 1);
	if (m->count == m->strs_cap) {
		size_t n = m->strs_cap ? m->strs_cap * 2 : 64;
		char **strs = realloc(m->strs, n * sizeof(*strs));

		if (!strs)
			return -ENOMEM;
		m->strs = strs;
		m->strs_cap = n;
	}
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	m->strs[m->count] = copy;
	m->slots[i] = (uint32_t)(m->count + 1);
	return (int)m->count++;
}
