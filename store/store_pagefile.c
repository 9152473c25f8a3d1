/* store_pagefile.c — the slice b-trees store_pages.c built, written into
 * the committed file (https://www.sqlite.org/fileformat2.html): each
 * tree's pages other than its root go first into the file's free pages
 * (what `sysptd decode`'s DELETE of the old slice rows and DROP of their
 * indexes left on the freelist: reused, as SQL inserts would, so that a
 * decode run again and again does not grow the file), then after its last
 * page; the free pages left over become the freelist again; then each
 * root page is overwritten with the top of its tree, and last the header:
 * page count, freelist, change counter.
 *
 * Nothing is written before every check passed: the header as SQLite
 * left it (page size, no reserved bytes, schema format 4, UTF-8, no
 * auto-vacuum, a page count matching the file's size), the roots empty
 * leaves of their kind inside the file, a freelist whose every page is
 * inside the file once.  In a file with no free page (a new incident)
 * each tree goes after the file's end as soon as its builder is done, and
 * the disk starts writing it back while the others are built; anything
 * that stops that cuts the file back to its own pages.  A write that
 * fails leaves a file the caller must not publish (store_bulk.c marks the
 * store failed). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store-pages.h"

/* All @len bytes of @buf at @off of @fd: 0 or -errno (a short write goes
 * on, so a full disk reports ENOSPC). */
static int write_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The free pages of the file whose header is @head (@page_count pages of
 * @psz bytes): every trunk and leaf page, sorted, into *@out (freed by the
 * caller), *@n of them.  0; 1 when the freelist is not one to trust (a
 * page outside the file or twice, counts that disagree: then SQL);
 * -ENOMEM. */
static int freelist_read(int fd, const uint8_t *head, uint32_t psz, uint64_t page_count,
                         uint32_t **out, size_t *n)
{
	uint32_t trunk = get32(head + 32), count = get32(head + 36);
	uint8_t *seen = NULL, *buf = NULL;
	uint32_t *list = NULL;
	size_t got = 0;
	int ret = 1;

	*out = NULL;
	*n = 0;
	if (!count)
		return trunk ? 1 : 0;
	if (count >= page_count)
		return 1;
	list = malloc((size_t)count * sizeof(*list));
	seen = calloc((size_t)(page_count / 8 + 1), 1);
	buf = malloc(psz);
	if (!list || !seen || !buf) {
		ret = -ENOMEM;
		goto out;
	}
#define TAKE(pg)                                                                         \
	do {                                                                             \
		uint32_t p_ = (pg);                                                      \
		if (p_ < 2 || p_ > page_count || (seen[p_ / 8] >> (p_ % 8) & 1) ||        \
		    got >= count)                                                        \
			goto out;                                                        \
		seen[p_ / 8] |= (uint8_t)(1u << (p_ % 8));                               \
		list[got++] = p_;                                                        \
	} while (0)
	while (trunk) {
		uint32_t leaves;

		TAKE(trunk);
		if (pread(fd, buf, psz, (off_t)((uint64_t)(trunk - 1) * psz)) != (ssize_t)psz)
			goto out;
		leaves = get32(buf + 4);
		if (leaves > psz / 4 - 2)
			goto out;
		for (uint32_t i = 0; i < leaves; i++)
			TAKE(get32(buf + 8 + 4 * i));
		trunk = get32(buf);
	}
#undef TAKE
	if (got != count)
		goto out;
	qsort(list, got, sizeof(*list), cmp_u32);
	*out = list;
	*n = got;
	list = NULL;
	ret = 0;
out:
	free(list);
	free(seen);
	free(buf);
	return ret;
}

/* Make @n free pages @free the file's freelist: trunk pages of at most
 * psz/4 - 8 leaves (SQLite's own limit, kept for older readers).  Sets the
 * header's first trunk and count in @head.  0 or -errno. */
static int freelist_write(int fd, uint8_t *head, uint32_t psz, const uint32_t *free_pages,
                          size_t n)
{
	const size_t per = psz / 4 - 8;
	uint8_t *buf = malloc(psz);
	size_t i = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	put32(head + 32, n ? free_pages[0] : 0);
	put32(head + 36, (uint32_t)n);
	while (i < n && ret >= 0) {
		uint32_t trunk = free_pages[i++];
		size_t leaves = n - i < per ? n - i : per;

		memset(buf, 0, psz);
		put32(buf, i + leaves < n ? free_pages[i + leaves] : 0);
		put32(buf + 4, (uint32_t)leaves);
		for (size_t k = 0; k < leaves; k++)
			put32(buf + 8 + 4 * k, free_pages[i + k]);
		i += leaves;
		ret = write_all(fd, buf, psz, (uint64_t)(trunk - 1) * psz);
	}
	free(buf);
	return ret;
}

/* File page of the @k-th page written (all trees' non-root pages in
 * turn): the free pages first, then those after the file's last page. */
static uint32_t page_no(size_t k, const uint32_t *free_pages, size_t use, uint64_t page_count)
{
	return k < use ? free_pages[k] : (uint32_t)(page_count + 1 + (k - use));
}

/* Tree @tr's pages but its root, as the @k0-th page written on: child
 * pointers turned into file page numbers, then runs of consecutive file
 * pages written in one go each.  0 or -errno. */
static int tree_write(struct bulk_btree *tr, int fd, size_t k0, const uint32_t *free_pages,
                      size_t use, uint64_t page_count)
{
	const uint32_t psz = tr->page_size;
	size_t body = tr->npages - 1;
	int ret = 0;

	for (size_t k = tr->nleaf; k < tr->npages; k++) {
		uint8_t *p = tr->pages + k * psz;
		unsigned ncell = get16(p + 3);

		for (unsigned c = 0; c < ncell; c++) {
			uint8_t *cell = p + get16(p + 12 + 2 * c);

			put32(cell, page_no(k0 + get32(cell), free_pages, use, page_count));
		}
		put32(p + 8, page_no(k0 + get32(p + 8), free_pages, use, page_count));
	}
	for (size_t k = 0; k < body && ret >= 0;) {
		uint32_t first = page_no(k0 + k, free_pages, use, page_count);
		size_t run = 1;

		while (k + run < body && page_no(k0 + k + run, free_pages, use, page_count) == first + run)
			run++;
		ret = write_all(fd, tr->pages + k * psz, run * psz, (uint64_t)(first - 1) * psz);
		k += run;
	}
	return ret;
}

/* Would a file of @page_count pages of @psz bytes growing to @total pages
 * cross the lock-byte page, or pass SQLite's last page number? */
static int growth_bad(uint64_t page_count, uint64_t total, uint32_t psz)
{
	return (page_count * psz <= LOCK_BYTE_OFFSET && total * psz > LOCK_BYTE_OFFSET) ||
	       total > 0xfffffffeULL;
}

/* The progressive write (no free pages: every page goes after the file's
 * end): each tree as soon as its builder is done, in tree order, the disk
 * starting on it while the others are built.  The file's own pages are
 * untouched until every tree is out, so anything that stops the write
 * cuts the file back to @page_count pages: as it was.  0 with the pages
 * written (*@total: the file's pages then), else as sptd_store_pages_write. */
static int write_appending(struct sptd_store_pages *pg, int fd, uint64_t page_count,
                           uint64_t *total)
{
	const uint32_t psz = pg->page_size;
	size_t k0 = 0;
	int ret = 0;

	for (int t = 0; t < N_TREES && ret == 0; t++) {
		struct bulk_btree *tr = &pg->tree[t];

		ret = sptd_store_pages_wait_tree(pg, t);
		if (ret == -ENOMEM)
			ret = SPTD_STORE_PAGES_NOMEM;
		else if (ret == 0 && growth_bad(page_count, page_count + k0 + tr->npages - 1, psz))
			ret = 1;
		else if (ret == 0)
			ret = tree_write(tr, fd, k0, NULL, 0, page_count);
		if (ret == 0) {
			/* advisory: the fsync at publish reports any error */
			sync_file_range(fd, (off_t)((page_count + k0) * psz),
			                (off_t)((tr->npages - 1) * psz), SYNC_FILE_RANGE_WRITE);
			k0 += tr->npages - 1;
		}
	}
	if (ret != 0) {
		sptd_store_pages_wait(pg);
		if (ftruncate(fd, (off_t)(page_count * psz)) < 0)
			return -errno;
		return ret;
	}
	*total = page_count + k0;
	return 0;
}

int sptd_store_pages_write(struct sptd_store_pages *pg, int fd, int64_t page_count,
                           const int64_t root[SPTD_STORE_N_TREES])
{
	uint8_t head[100];
	const uint32_t psz = pg->page_size;
	uint32_t *free_pages = NULL;
	uint64_t total = 0, counter;
	size_t need = 0, nfree = 0, use = 0, k0 = 0;
	struct stat sb;
	int ret;

	/* what can be checked before the trees are done: the file */
	if (pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) || fstat(fd, &sb) < 0)
		ret = 1;
	/* the header as SQLite left it: our page size, no reserved bytes,
	 * schema format 4 (serial types 8 and 9), UTF-8, no auto-vacuum, the
	 * page count we were told and a file of that size */
	else if (memcmp(head, "SQLite format 3", 16) != 0 ||
	         sptd_store_header_page_size(head) != psz || head[20] != 0 ||
	         get32(head + 44) != 4 || get32(head + 56) != 1 || get32(head + 52) != 0 ||
	         get32(head + 24) != get32(head + 92) || get32(head + 28) != (uint64_t)page_count ||
	         (uint64_t)sb.st_size != (uint64_t)page_count * psz)
		ret = 1;
	else
		ret = 0;
	/* each root a page of its own inside the file, and still the empty
	 * leaf SQLite made (a crafted schema could name any page) */
	for (int t = 0; t < N_TREES && ret == 0; t++) {
		uint8_t leaf[8];

		if (root[t] < 2 || root[t] > page_count ||
		    pread(fd, leaf, sizeof(leaf), (off_t)((root[t] - 1) * psz)) !=
		            (ssize_t)sizeof(leaf) ||
		    leaf[0] != (t == SPTD_STORE_TREE_TABLE ? PG_TABLE_LEAF : PG_INDEX_LEAF) ||
		    get16(leaf + 3))
			ret = 1;
		for (int u = 0; u < t; u++)
			if (root[u] == root[t])
				ret = 1;
	}
	if (ret == 0)
		ret = freelist_read(fd, head, psz, (uint64_t)page_count, &free_pages, &nfree);
	/* a root on the freelist: the file contradicts itself */
	for (int t = 0; t < N_TREES && nfree && ret == 0; t++) {
		uint32_t r = (uint32_t)root[t];

		if (bsearch(&r, free_pages, nfree, sizeof(*free_pages), cmp_u32))
			ret = 1;
	}
	if (ret != 0) {
		free(free_pages);
		sptd_store_pages_wait(pg);
		return ret;
	}
	if (!nfree) {
		/* a new file (or one with no free page): trees go out as
		 * they are done */
		ret = write_appending(pg, fd, (uint64_t)page_count, &total);
	} else {
		/* free pages to fill first: every tree's size must be known */
		ret = sptd_store_pages_wait(pg);
		if (ret == -ENOMEM)
			ret = SPTD_STORE_PAGES_NOMEM;
		for (int t = 0; t < N_TREES && ret == 0; t++)
			need += pg->tree[t].npages - 1;
		use = need < nfree ? need : nfree;
		total = (uint64_t)page_count + (need - use);
		if (ret == 0 && growth_bad((uint64_t)page_count, total, psz))
			ret = 1;
		for (int t = 0; t < N_TREES && ret == 0; t++) {
			ret = tree_write(&pg->tree[t], fd, k0, free_pages, use, (uint64_t)page_count);
			k0 += pg->tree[t].npages - 1;
		}
	}
	/* the free pages not used stay free */
	if (ret == 0)
		ret = freelist_write(fd, head, psz, nfree ? free_pages + use : NULL, nfree - use);
	free(free_pages);
	/* the roots, then the header that makes the pages part of the file */
	for (int t = 0; t < N_TREES && ret == 0; t++) {
		struct bulk_btree *tr = &pg->tree[t];

		ret = write_all(fd, tr->pages + (tr->npages - 1) * psz, psz,
		                (uint64_t)(root[t] - 1) * psz);
	}
	if (ret != 0)
		return ret;
	counter = get32(head + 24) + 1;
	put32(head + 24, (uint32_t)counter);
	put32(head + 92, (uint32_t)counter);
	put32(head + 28, (uint32_t)total);
	return write_all(fd, head, sizeof(head), 0);
}
