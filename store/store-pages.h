/* store-pages.h — what store_pages.c (building the slice b-trees) and
 * store_pagefile.c (writing them into the file) share: the trees in
 * memory and the file format's constants (its big-endian fields:
 * store-local.h). */
#ifndef SPTD_STORE_PAGES_H
#define SPTD_STORE_PAGES_H

#include <pthread.h>
#include <stdint.h>

#include "store-local.h"

/* Page types of the file format. */
#define PG_INDEX_INTERIOR 0x02
#define PG_TABLE_INTERIOR 0x05
#define PG_INDEX_LEAF     0x0a
#define PG_TABLE_LEAF     0x0d

/* SQLite's lock-byte page holds file offset 2^30; no b-tree may use it. */
#define LOCK_BYTE_OFFSET 0x40000000ULL

#define N_TREES SPTD_STORE_N_TREES

/* One b-tree, built in memory: pages [0, nleaf) are leaves, the rest
 * interior pages, the last one the top.  Child pointers hold page
 * indexes into pages until sptd_store_pages_write moves them to file page
 * numbers. */
struct bulk_btree {
	uint8_t *pages;                  /* npages pages of page_size bytes */
	size_t npages, cap;              /* pages used / allocated */
	size_t zeroed;                   /* pages [0, zeroed) came zeroed (calloc) */
	size_t nleaf;                    /* leaves, the first pages */
	uint32_t page_size;              /* bytes per page (no reserved bytes) */
	int err;                         /* < 0: building failed (-ENOMEM, -EFBIG) */
};

/* One builder thread's work. */
struct build_job {
	struct sptd_store_pages *pg;     /* the trees it builds for */
	int which;                       /* enum sptd_store_tree */
};

/* The three trees (store-local.h: sptd_store_pages_start). */
struct sptd_store_pages {
	const struct sptd_store_slice_row *rows; /* sorted by id, unique */
	size_t nrows;
	uint32_t page_size;              /* the file's */
	struct bulk_btree tree[N_TREES]; /* by enum sptd_store_tree */
	struct build_job job[N_TREES];   /* what each builder does */
	pthread_t thread[N_TREES];       /* the builders */
	int started[N_TREES];            /* thread[i] runs (not joined yet) */
};

#endif
