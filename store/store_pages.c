/* store_pages.c — the slice table's and its two indexes' b-trees built in
 * memory as finished pages of the SQLite file format
 * (https://www.sqlite.org/fileformat2.html), on three threads;
 * store_pagefile.c writes them into the committed file, store_bulk.c
 * decides when (and when not: then SQL) and keeps the rows.
 *
 * The records are SQLite's own: the serial type of each integer the one
 * SQLite picks (0 and 1 in no bytes: schema format 4), the INTEGER PRIMARY
 * KEY as NULL in the record and as the cell's rowid.  Table leaves are
 * filled in rowid order; interior cells carry their left child's largest
 * rowid.  An index b-tree holds each key once: a full leaf's next key moves
 * up as the separator between it and the next leaf, and so on up.  No page
 * is left without a cell beside its right pointer (SQLite makes none). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"
#include "store-pages.h"

/* ---- record encoding ------------------------------------------------------ */

/* SQLite's varint of @v at @p: 1-9 bytes, returns the count. */
static unsigned put_varint(uint8_t *p, uint64_t v)
{
	uint8_t tmp[10];
	unsigned n = 0;

	/* the lengths and most ids of a slice row */
	if (v < 0x80) {
		p[0] = (uint8_t)v;
		return 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(v >> 7 | 0x80);
		p[1] = (uint8_t)(v & 0x7f);
		return 2;
	}
	if (v < 0x200000) {
		p[0] = (uint8_t)(v >> 14 | 0x80);
		p[1] = (uint8_t)((v >> 7 & 0x7f) | 0x80);
		p[2] = (uint8_t)(v & 0x7f);
		return 3;
	}
	if (v >> 56) {
		p[8] = (uint8_t)v;
		v >>= 8;
		for (int i = 7; i >= 0; i--, v >>= 7)
			p[i] = (uint8_t)((v & 0x7f) | 0x80);
		return 9;
	}
	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | 0x80);
		v >>= 7;
	} while (v);
	tmp[0] &= 0x7f;
	for (unsigned i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* The serial type SQLite gives integer @v in a file of schema format 4. */
static unsigned int_type(int64_t v)
{
	uint64_t u;

	if (v == 0 || v == 1)
		return 8 + (unsigned)v;
	u = v < 0 ? ~(uint64_t)v : (uint64_t)v;
	if (u <= 127)
		return 1;
	if (u <= 32767)
		return 2;
	if (u <= 8388607)
		return 3;
	if (u <= 2147483647)
		return 4;
	if (u <= 0x7fffffffffffULL)
		return 5;
	return 6;
}

/* Integer @v as a column: its serial type at *@type, its bytes (big-
 * endian, as many as the type says) at @body.  Returns the byte count. */
static inline unsigned put_value(uint8_t *type, uint8_t *body, int64_t v)
{
	/* bytes by serial type; 8 and 9: the value is the type */
	static const uint8_t type_bytes[10] = { 0, 1, 2, 3, 4, 6, 8, 8, 0, 0 };
	uint64_t u = (uint64_t)v;
	unsigned t = int_type(v), n = type_bytes[t];

	*type = (uint8_t)t;
	for (unsigned i = 0; i < n; i++)
		body[i] = (uint8_t)(u >> (8 * (n - 1 - i)));
	return n;
}

/* Does the slice table's description (store_tables.c) give records this
 * encoder writes?  The first column the INTEGER PRIMARY KEY, the others
 * integers or the kind (a text that is one of the four), and a record
 * always under 128 bytes with a one-byte header length.  A column it
 * cannot write (a text of any length, bytes) makes the store keep slice
 * rows on the SQL path instead (sptd_store_slices_defer): 1 yes, 0 no. */
int sptd_store_pages_layout_ok(void)
{
	const struct sptd_store_table_def *t = &sptd_store_table_defs[SPTD_STORE_T_SLICE];
	unsigned most = 1;   /* the header length */

	if (t->ncols < 1 || t->cols[0].type != SPTD_STORE_C_I64 ||
	    strcmp(t->cols[0].decl, "INTEGER PRIMARY KEY") != 0)
		return 0;
	for (int c = 0; c < t->ncols; c++) {
		const struct sptd_store_col *col = &t->cols[c];

		switch (col->type) {
		case SPTD_STORE_C_I64:
		case SPTD_STORE_C_I32:
		case SPTD_STORE_C_U64:
			most += 1 + 8;
			break;
		case SPTD_STORE_C_TEXT:
			if (strcmp(col->name, "kind") != 0 || col->dflt)
				return 0;
			most += 1 + sizeof(SPTD_SLICE_SYSCALL);
			break;
		default:
			return 0;
		}
	}
	return most < 128;
}

/* The table record of slice row @r, column by column as the slice table's
 * description says: the id, the rowid, is stored as NULL; a value that
 * stores NULL (< 0 parent_id) as NULL; the kind as text.  The header (its
 * length and a type per column) and the record are under 128 bytes
 * (sptd_store_pages_layout_ok). */
static unsigned slice_record(uint8_t *out, const struct sptd_store_slice_row *r)
{
	const struct sptd_store_table_def *t = &sptd_store_table_defs[SPTD_STORE_T_SLICE];
	uint8_t *h = out + 1, *b = out + 1 + t->ncols;

	out[0] = (uint8_t)(1 + t->ncols);
	*h++ = 0;
	for (int c = 1; c < t->ncols; c++) {
		const struct sptd_store_col *col = &t->cols[c];
		const char *p = (const char *)r + col->off;
		int64_t v;

		if (col->type == SPTD_STORE_C_TEXT) {
			const char *text = *(const char *const *)(const void *)p;
			size_t len = strlen(text);

			*h++ = (uint8_t)(13 + 2 * len);
			memcpy(b, text, len);
			b += len;
			continue;
		}
		if (col->type == SPTD_STORE_C_I32)
			v = *(const int *)(const void *)p;
		else
			memcpy(&v, p, sizeof(v));
		if (((col->flags & SPTD_STORE_F_NEG_NULL) && v < 0) ||
		    ((col->flags & SPTD_STORE_F_ZERO_NULL) && v == 0))
			*h++ = 0;
		else
			b += put_value(h++, b, v);
	}
	return (unsigned)(b - out);
}

/* The index record of key @k: (a, b, rowid), or (a, rowid) with @two. */
static unsigned key_record(uint8_t *out, const struct sptd_store_key *k, int two)
{
	unsigned ncol = two ? 2 : 3;
	uint8_t *h = out + 1, *b = out + 1 + ncol;

	out[0] = (uint8_t)(1 + ncol);
	if (k->a_null)
		*h++ = 0;
	else
		b += put_value(h++, b, k->a);
	if (!two)
		b += put_value(h++, b, k->b);
	b += put_value(h, b, k->id);
	return (unsigned)(b - out);
}

/* ---- pages ------------------------------------------------------------------ */

/* A page being filled. */
struct page_fill {
	uint8_t *p;          /* the page */
	unsigned hdr;        /* header bytes: 8 (leaf) or 12 (interior) */
	unsigned ncell;      /* cells so far */
	unsigned top;        /* start of the cell content area */
	unsigned last;       /* bytes of content the last cell took */
};

/* Page index of a new zeroed page of @t, or -1 (t->err set). */
static long page_new(struct bulk_btree *t)
{
	if (t->npages == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		uint8_t *p = realloc(t->pages, cap * t->page_size);

		if (!p) {
			t->err = -ENOMEM;
			return -1;
		}
		t->pages = p;
		t->cap = cap;
	}
	if (t->npages >= t->zeroed)
		memset(t->pages + t->npages * t->page_size, 0, t->page_size);
	return (long)t->npages++;
}

/* Room for about the pages of @n cells averaging @room bytes (a quarter
 * more, and the interior pages), allocated zeroed at once: no copies as
 * the tree grows, each page touched once.  Growing past it still works. */
static void tree_reserve(struct bulk_btree *t, size_t n, unsigned room)
{
	size_t per = (t->page_size - 12) / (room ? room : 1), cap;

	cap = n / (per ? per : 1);
	cap += cap / 4 + cap / 32 + 16;
	t->pages = calloc(cap, t->page_size);
	if (t->pages)
		t->cap = t->zeroed = cap;
}

static void fill_start(struct page_fill *f, struct bulk_btree *t, long pg, uint8_t type)
{
	f->p = t->pages + (size_t)pg * t->page_size;
	f->p[0] = type;
	f->hdr = (type == PG_TABLE_INTERIOR || type == PG_INDEX_INTERIOR) ? 12 : 8;
	f->ncell = 0;
	f->top = t->page_size;
}

/* Size a cell of @size bytes takes on its page: its pointer, and at
 * least 4 bytes (SQLite counts a shorter cell as 4). */
static unsigned cell_room(unsigned size)
{
	return 2 + (size < 4 ? 4 : size);
}

/* Room for one more cell of @size bytes (and its pointer)? */
static int fill_fits(const struct page_fill *f, unsigned size)
{
	return f->hdr + 2 * f->ncell + cell_room(size) <= f->top;
}

/* Add a cell of @size bytes. */
static void fill_add(struct page_fill *f, const uint8_t *cell, unsigned size)
{
	unsigned room = cell_room(size) - 2;

	f->top -= room;
	memcpy(f->p + f->top, cell, size);
	put16(f->p + f->hdr + 2 * f->ncell, f->top);
	f->ncell++;
	f->last = room;
}

/* Take the last cell added back out (once after each fill_add). */
static void fill_undo(struct page_fill *f)
{
	f->ncell--;
	memset(f->p + f->top, 0, f->last);
	put16(f->p + f->hdr + 2 * f->ncell, 0);
	f->top += f->last;
	f->last = 0;
}

/* Finish the header: cell count, content start, right child (interior). */
static void fill_end(struct page_fill *f, uint32_t right)
{
	put16(f->p + 3, f->ncell);
	put16(f->p + 5, f->top == 65536 ? 0 : f->top);
	if (f->hdr == 12)
		put32(f->p + 8, right);
}

/* The interior cell of a child and its key into @cell: table (@keys NULL):
 * the key is the child's largest rowid; index: the key is the index of
 * the separator in @keys (@two as key_record).  Returns its length. */
static unsigned interior_cell(uint8_t *cell, uint32_t child, int64_t key,
                              const struct sptd_store_key *keys, int two)
{
	unsigned len;

	put32(cell, child);
	if (!keys)
		return 4 + put_varint(cell + 4, (uint64_t)key);
	/* under 128 bytes, as in the leaves: the length is one byte */
	len = key_record(cell + 5, &keys[key], two);
	cell[4] = (uint8_t)len;
	return 5 + len;
}

/* The interior levels above @nchild pages @child, whose keys are @key
 * (interior_cell's), up to one top page: pages of @type.  A page holds
 * cells for children i .. i+c-1 and child i+c as its right pointer; the
 * key of child i+c goes up with the page.  In place: a level has fewer
 * pages than children, so the next level's list overwrites the front.
 * 0, or t->err (-ENOMEM, -EFBIG: a page cannot hold two cells). */
static int build_interior(struct bulk_btree *t, uint32_t *child, int64_t *key, size_t nchild,
                          uint8_t type, const struct sptd_store_key *keys, int two)
{
	uint8_t cell[4 + 9 + 64];
	struct page_fill f;

	while (nchild > 1) {
		size_t out_n = 0;

		for (size_t i = 0; i < nchild;) {
			size_t c = 0;
			unsigned used = 12;
			long pg;

			while (i + c < nchild - 1) {
				unsigned room = cell_room(interior_cell(cell, child[i + c], key[i + c],
				                                        keys, two));

				if (used + room > t->page_size)
					break;
				used += room;
				c++;
			}
			/* the next page needs one cell besides its right pointer */
			if (i + c + 2 == nchild)
				c--;
			if (c == 0)
				return t->err = -EFBIG;
			pg = page_new(t);
			if (pg < 0)
				return t->err;
			fill_start(&f, t, pg, type);
			for (size_t k = i; k < i + c; k++)
				fill_add(&f, cell, interior_cell(cell, child[k], key[k], keys, two));
			fill_end(&f, child[i + c]);
			key[out_n] = key[i + c];
			child[out_n++] = (uint32_t)pg;
			i += c + 1;
		}
		nchild = out_n;
	}
	return 0;
}

/* ---- the table ---------------------------------------------------------- */

/* Append leaf @pg, largest rowid @rowid, to @child and @key, the lists the interior
 * levels are built from.  0, or -ENOMEM (t->err). */
static int child_push(struct bulk_btree *t, uint32_t **child, int64_t **key, size_t *n,
                      size_t *cap, long pg, int64_t rowid)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		uint32_t *nc = realloc(*child, c * sizeof(**child));
		int64_t *nk;

		if (!nc)
			return t->err = -ENOMEM;
		*child = nc;
		nk = realloc(*key, c * sizeof(**key));
		if (!nk)
			return t->err = -ENOMEM;
		*key = nk;
		*cap = c;
	}
	(*child)[*n] = (uint32_t)pg;
	(*key)[(*n)++] = rowid;
	return 0;
}

/* Build the table b-tree of @rows (sorted by id) into @t.  0 or -ENOMEM. */
static int build_table(struct bulk_btree *t, const struct sptd_store_slice_row *rows, size_t n)
{
	uint8_t cell[9 + 9 + 128];
	struct page_fill f;
	uint32_t *child = NULL;
	int64_t *maxkey = NULL;
	size_t nchild = 0, cap = 0, i;
	long pg;

	/* room for the leaves, from the first rows' sizes */
	{
		unsigned sum = 0, k = n < 64 ? (unsigned)n : 64;

		for (unsigned j = 0; j < k; j++) {
			uint8_t rec[128];
			unsigned len = slice_record(rec, &rows[j]);

			sum += cell_room(put_varint(cell, len) + put_varint(cell, (uint64_t)rows[j].id) +
			                 len);
		}
		tree_reserve(t, n, k ? sum / k + 1 : 64);
	}
	/* leaves */
	pg = page_new(t);
	if (pg < 0)
		goto out;
	fill_start(&f, t, pg, PG_TABLE_LEAF);
	for (i = 0; i < n; i++) {
		/* the record (under 128 bytes: its length is one byte) after the
		 * length and the rowid, encoded in place */
		unsigned c = 1 + put_varint(cell + 1, (uint64_t)rows[i].id), len;

		len = slice_record(cell + c, &rows[i]);
		cell[0] = (uint8_t)len;
		c += len;
		if (!fill_fits(&f, c)) {
			fill_end(&f, 0);
			if (child_push(t, &child, &maxkey, &nchild, &cap, pg, rows[i - 1].id) < 0)
				goto out;
			pg = page_new(t);
			if (pg < 0)
				goto out;
			fill_start(&f, t, pg, PG_TABLE_LEAF);
		}
		fill_add(&f, cell, c);
	}
	fill_end(&f, 0);
	t->nleaf = t->npages;
	if (t->npages == 1)
		goto out;
	/* the last leaf: the caller's n > 0 */
	if (child_push(t, &child, &maxkey, &nchild, &cap, pg, rows[n - 1].id) < 0)
		goto out;

	/* interior levels: each cell a child and its largest rowid */
	build_interior(t, child, maxkey, nchild, PG_TABLE_INTERIOR, NULL, 0);
out:
	free(child);
	free(maxkey);
	return t->err;
}

/* ---- the indexes -------------------------------------------------------------- */

/* Build an index b-tree of @keys (sorted) into @t; @two: keys are (a,
 * rowid).  In an index b-tree every key is in one cell: a full page's
 * next key moves up as the separator between it and the next page.
 * 0, -ENOMEM, or -EFBIG (a page this size cannot hold two keys). */
static int build_index(struct bulk_btree *t, const struct sptd_store_key *keys, size_t n, int two)
{
	uint8_t cell[4 + 9 + 64];
	struct page_fill f;
	uint32_t *child = NULL;
	int64_t *sep = NULL;    /* key index of the separator after child[i] */
	size_t nchild = 0, i;
	long pg;

	child = malloc((n / 2 + 2) * sizeof(*child));
	sep = malloc((n / 2 + 2) * sizeof(*sep));
	if (!child || !sep) {
		t->err = -ENOMEM;
		goto out;
	}
	/* room for the leaves, from the first keys' sizes */
	{
		unsigned sum = 0, k = n < 64 ? (unsigned)n : 64;

		for (unsigned j = 0; j < k; j++) {
			uint8_t rec[64];
			unsigned len = key_record(rec, &keys[j], two);

			sum += cell_room(put_varint(cell, len) + len);
		}
		tree_reserve(t, n, k ? sum / k + 1 : 32);
	}
	/* leaves: entries i .. k-1, then entry k goes up */
	for (i = 0; i < n;) {
		size_t k = i;

		pg = page_new(t);
		if (pg < 0)
			goto out;
		fill_start(&f, t, pg, PG_INDEX_LEAF);
		for (; k < n; k++) {
			/* under 128 bytes: the length is one byte */
			unsigned len = key_record(cell + 1, &keys[k], two);

			cell[0] = (uint8_t)len;
			if (!fill_fits(&f, 1 + len))
				break;
			fill_add(&f, cell, 1 + len);
		}
		/* a separator needs a leaf after it: the last key cannot be
		 * one, the page's own last key goes up instead */
		if (k + 1 == n && k > i) {
			fill_undo(&f);
			k--;
		}
		if (k == i) {
			t->err = -EFBIG;
			goto out;
		}
		fill_end(&f, 0);
		child[nchild] = (uint32_t)pg;
		sep[nchild++] = (int64_t)k; /* == n on the last leaf: none */
		i = k + 1;
	}
	t->nleaf = t->npages;
	/* interior levels: nchild children, nchild - 1 separators */
	build_interior(t, child, sep, nchild, PG_INDEX_INTERIOR, keys, two);
out:
	free(child);
	free(sep);
	return t->err;
}

/* ---- builder threads ---------------------------------------------------------- */

static void *build_main(void *arg)
{
	struct sptd_store_pages *pg = ((struct build_job *)arg)->pg;
	int which = ((struct build_job *)arg)->which;
	struct bulk_btree *t = &pg->tree[which];
	struct sptd_store_key *keys;
	size_t n = pg->nrows;

	if (which == SPTD_STORE_TREE_TABLE) {
		build_table(t, pg->rows, n);
		return NULL;
	}
	keys = malloc(n * sizeof(*keys));
	if (!keys) {
		t->err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sptd_store_slice_row *r = &pg->rows[i];

		if (which == SPTD_STORE_TREE_UTID_TS)
			keys[i] = (struct sptd_store_key){ .a = r->utid, .b = r->ts, .id = r->id };
		else
			keys[i] = (struct sptd_store_key){ .a = r->parent_id < 0 ? 0 : r->parent_id,
			                             .a_null = r->parent_id < 0, .id = r->id };
	}
	t->err = sptd_store_keys_sort(keys, n);
	if (!t->err)
		build_index(t, keys, n, which == SPTD_STORE_TREE_PARENT_ID);
	free(keys);
	return NULL;
}

int sptd_store_pages_start(const struct sptd_store_slice_row *rows, size_t n, uint32_t page_size,
                           struct sptd_store_pages **out)
{
	struct sptd_store_pages *pg;

	*out = NULL;
	if (!rows || !n || !sptd_store_page_size_ok(page_size))
		return -EINVAL;
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	pg->rows = rows;
	pg->nrows = n;
	pg->page_size = page_size;
	for (int t = 0; t < N_TREES; t++) {
		pg->tree[t].page_size = page_size;
		pg->job[t] = (struct build_job){ pg, t };
	}
	for (int t = 0; t < N_TREES; t++)
		pg->started[t] = pthread_create(&pg->thread[t], NULL, build_main, &pg->job[t]) == 0;
	/* no thread: built here */
	for (int t = 0; t < N_TREES; t++)
		if (!pg->started[t])
			build_main(&pg->job[t]);
	*out = pg;
	return 0;
}

int sptd_store_pages_wait_tree(struct sptd_store_pages *pg, int t)
{
	if (pg->started[t])
		pthread_join(pg->thread[t], NULL);
	pg->started[t] = 0;
	if (pg->tree[t].err < 0)
		return pg->tree[t].err == -ENOMEM ? -ENOMEM : 1;
	return 0;
}

int sptd_store_pages_wait(struct sptd_store_pages *pg)
{
	int ret = 0;

	for (int t = 0; t < N_TREES; t++) {
		int w = sptd_store_pages_wait_tree(pg, t);

		if (!ret)
			ret = w;
	}
	return ret;
}

void sptd_store_pages_free(struct sptd_store_pages *pg)
{
	if (!pg)
		return;
	sptd_store_pages_wait(pg);
	for (int t = 0; t < N_TREES; t++)
		free(pg->tree[t].pages);
	free(pg);
}
