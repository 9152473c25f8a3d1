/* store-local.h — what the store/ units share: the store object, the table
 * catalogue and the error helpers.  Only store/ includes this (and
 * sqlite3.h). */
#ifndef SPTD_STORE_LOCAL_H
#define SPTD_STORE_LOCAL_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "sptd_store.h"

/* How a column's value sits in its table's row struct (the struct of
 * sptd_store_add and the readers): what is read at offset @off. */
enum sptd_store_ctype {
	SPTD_STORE_C_AUTO,   /* INTEGER PRIMARY KEY SQLite assigns: no field, bound NULL */
	SPTD_STORE_C_NONE,   /* filled later by its own statement: no field, bound NULL */
	SPTD_STORE_C_I64,    /* int64_t */
	SPTD_STORE_C_I32,    /* int */
	SPTD_STORE_C_U64,    /* uint64_t, stored as its int64 two's complement */
	SPTD_STORE_C_TEXT,   /* const char * */
	SPTD_STORE_C_BYTES,  /* const void * at @off, its size_t length at @off2 */
	SPTD_STORE_C_CHAIN,  /* const uint64_t * at @off, its size_t count at @off2:
	                      * stored as little-endian bytes */
};

/* Column flags: what add checks and how a value maps to NULL. */
#define SPTD_STORE_F_NOT_NEG   0x01  /* a value < 0 is refused */
#define SPTD_STORE_F_NEG_NULL  0x02  /* a value < 0 stores NULL (read back as -1) */
#define SPTD_STORE_F_ZERO_NULL 0x04  /* 0 (bytes: a NULL pointer) stores NULL (read back as 0) */
#define SPTD_STORE_F_REQUIRED  0x08  /* text: NULL or "" is refused */
#define SPTD_STORE_F_NOT_NULL  0x10  /* text: NULL is refused ("" is kept);
                                      * bytes: NULL with a length is refused */
#define SPTD_STORE_F_EMPTY_NULL 0x20 /* text: "" stores NULL */

/* One column of a table: its CREATE TABLE declaration and its field. */
struct sptd_store_col {
	const char *name;     /* column name */
	const char *decl;     /* its type in CREATE TABLE ("INT NULL") */
	uint8_t type;         /* enum sptd_store_ctype */
	uint8_t flags;        /* SPTD_STORE_F_* */
	uint16_t off, off2;   /* offsets in the row struct (off2: BYTES, CHAIN) */
	const char *dflt;     /* text: what a NULL stores instead (NULL: NULL) */
};

/* One table of the schema. */
struct sptd_store_table_def {
	const char *name;     /* table name as in docs/SCHEMA.md */
	const struct sptd_store_col *cols; /* its columns, in CREATE order */
	int ncols;            /* number of columns: parameters of its INSERT */
	int replace;          /* keyed map: INSERT OR REPLACE (meta, formats) */
	int clearable;        /* derived table that decode may clear and refill */
	const char *id_col;   /* key column whose values the caller chooses
	                       * (sptd_store_next_id); NULL: the store assigns */
	const char *what;     /* "adding a gap row": messages of add */
	const char *order;    /* ORDER BY of its reader (NULL: stored order) */
	size_t row_size;      /* sizeof its row struct */
	/* NULL, or a check of a row beyond its columns' flags: the reason to
	 * refuse it, or NULL and in *@nulls a bit (1 << column) for each
	 * column to store as NULL. */
	const char *(*check)(const void *row, uint32_t *nulls);
	const char *select;   /* a view: its whole SELECT, columns in @cols'
	                       * order; NULL: a table */
};

/* A meta row (sptd_store_meta_set). */
struct sptd_store_meta_row {
	const char *key, *value;  /* the key and its value */
};

/* The column list of table @t's CREATE TABLE ("id INTEGER PRIMARY KEY,
 * ts INT, ..."), made from its columns once.  Static storage. */
const char *sptd_store_table_columns(const struct sptd_store_table_def *t);

/* The store's own statements (store_named.c): each prepared on first use,
 * then reset and reused for the life of the store.  The per-table slots
 * (count, next id) follow the fixed ones, one per enum sptd_store_table_id. */
enum sptd_store_named_id {
	SPTD_STORE_Q_RAW_MMAP_COUNT,    /* store_lookup.c: counts and lookups */
	SPTD_STORE_Q_DSO_FIND,
	SPTD_STORE_Q_DSO_FIND_PATH,
	SPTD_STORE_Q_SYMBOL_FIND,
	SPTD_STORE_Q_RAW_MMAP_HAS,
	SPTD_STORE_Q_RAW_FILE,
	SPTD_STORE_Q_TABLE_EXISTS,
	SPTD_STORE_Q_GAP_CLEAR,         /* store_clear.c: targeted deletes */
	SPTD_STORE_Q_STATS_CLEAR,
	SPTD_STORE_Q_THREAD_STATE_BLOCK, /* store_clear.c: link an off-CPU stack */
	SPTD_STORE_Q_JSON_OBJECT,       /* store_json.c: is it an object */
	SPTD_STORE_Q_JSON_MEMBERS,      /* ... its members */
	SPTD_STORE_Q_COUNT_OF,          /* + table id: SELECT count(*) */
	SPTD_STORE_Q_NEXT_ID_OF = SPTD_STORE_Q_COUNT_OF + SPTD_STORE_T_COUNT, /* + table id */
	SPTD_STORE_Q_EACH_OF = SPTD_STORE_Q_NEXT_ID_OF + SPTD_STORE_T_COUNT, /* + table or
	                                 * view id: sptd_store_each's SELECT (or its rowids) */
	SPTD_STORE_Q_ROW_OF = SPTD_STORE_Q_EACH_OF + SPTD_STORE_T_ALL, /* + table id: a row
	                                 * by rowid */
	SPTD_STORE_Q_N = SPTD_STORE_Q_ROW_OF + SPTD_STORE_T_COUNT
};

/* The open incident. */
struct sptd_store {
	sqlite3 *db;              /* the connection; NULL once closed */
	char *path;               /* final path: where the incident is (will be) */
	char *tmp_path;           /* created or updated store: the temporary file */
	int tmp_fd;               /* it, open and flock()ed while we write; -1 none */
	int ro_fd;                /* read-only: the file checked and read (SQLite
	                           * opens /proc/self/fd/N of it); -1 none */
	int dir_fd;               /* its directory, for the rename; -1 none */
	int tmp_live;             /* 1 while the temporary file is ours to remove */
	int writable;             /* 1 while rows may be added (open txn) */
	int in_txn;               /* 1 while our transaction is open */
	int created;              /* made by sptd_store_create (rename on commit) */
	int updating;             /* opened for update: a copy, renamed over PATH on commit */
	int committed;            /* sptd_store_commit succeeded: reads only */
	int fatal;                /* < 0: an earlier failure ended the transaction */
	char fatal_msg[1024];      /* what that failure was */
	sqlite3_stmt *insert[SPTD_STORE_T_COUNT]; /* cached INSERT, prepared lazily */
	sqlite3_stmt *slice_bulk; /* cached INSERT of SPTD_STORE_BULK_ROWS slices */
	sqlite3_stmt *meta_get;   /* cached SELECT of one meta value */
	sqlite3_stmt *named[SPTD_STORE_Q_N]; /* the store's own statements, lazily */
	struct sptd_store_stmt *stmts; /* caller statements still alive */
	uint64_t *le_buf;         /* scratch for byte-swapping callchains (BE hosts) */
	size_t le_cap;            /* entries le_buf holds */
	char errmsg[1024];        /* detail of the last failure */
	int64_t time_limit_ns;    /* sptd_store_set_time_limit: 0 none */
	int64_t deadline_ns;      /* ... statements stop at this CLOCK_MONOTONIC time */
	int attach_pending;       /* sptd_store_open_update: SQLite not
	                           * on the copy yet (sptd_store_open_finish) */
	struct sptd_store_slice_row *bulk; /* slice rows kept for the commit
	                           * (sptd_store_slices_defer; kind points to
	                           * static storage) */
	size_t nbulk, bulk_cap;   /* ... rows kept / allocated */
	size_t bulk_max;          /* ... kept at most (then SQL) */
	struct sptd_store_pages *prebuilt; /* their trees, building since
	                           * sptd_store_slices_ready; NULL none */
	uint32_t prebuilt_size;   /* ... for pages of this size */
	int bulk_on;              /* 1: slice rows are kept, not inserted */
	size_t paged;             /* rows the last commit wrote as pages */
	int block_index;          /* thread_state's (utid, ts) index is there for
	                           * sptd_store_thread_state_block (until a clear
	                           * of thread_state drops it) */
};

/* A caller's statement (sptd_store_prepare). */
struct sptd_store_stmt {
	sqlite3_stmt *stmt;          /* NULL once the store was destroyed */
	struct sptd_store *st;       /* owner; NULL once destroyed */
	struct sptd_store_stmt *prev; /* links in st->stmts */
	struct sptd_store_stmt *next;
	char **shown;                /* per column: a text cell with its NUL
	                              * bytes shown as '?' (column_text) */
	size_t *shown_cap;
	int nshown;
};

/* --- the SQLite file format's big-endian fields (store_file.c checks a
 * header; store_pages.c and store_pagefile.c write pages) ------------------ */

static inline void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* The page size a database header @head says (offset 16; 1 is 65536). */
static inline uint32_t sptd_store_header_page_size(const uint8_t *head)
{
	unsigned v = get16(head + 16);

	return v == 1 ? 65536u : v;
}

/* Is @size a page size SQLite uses: a power of two, 512 to 65536? */
static inline int sptd_store_page_size_ok(int64_t size)
{
	return size >= 512 && size <= 65536 && (size & (size - 1)) == 0;
}

/* --- store_bulk.c -------------------------------------------------------- */

/* What the commit's two halves share (store_bulk.c). */
struct sptd_store_bulk_plan;
/* Insert the kept rows through SQL now (someone reads or edits slice
 * before the commit, or the file is not one to write pages into). */
int sptd_store_bulk_settle(struct sptd_store *st);
/* Drop the kept rows whose utid is not one of @utids (@n, any order:
 * sorted here). */
void sptd_store_bulk_keep_utids(struct sptd_store *st, int64_t *utids, size_t n);
/* Free the kept rows (not inserted). */
void sptd_store_bulk_release(struct sptd_store *st);
/* At the commit, after the indexes exist and before COMMIT: with rows
 * kept, either start building their b-trees (*@plan set) or insert them
 * through SQL (*@plan NULL).  0 or a store error. */
int sptd_store_bulk_begin(struct sptd_store *st, struct sptd_store_bulk_plan **plan);
/* After COMMIT returned @ret: write the trees into the file (or, if it
 * is not as expected, the rows through SQL in a transaction of their
 * own); free @plan.  Returns @ret or the first failure. */
int sptd_store_bulk_end(struct sptd_store *st, struct sptd_store_bulk_plan *plan, int ret);

/* --- store_pages.c ------------------------------------------------------- */

/* The b-trees of slice, by their order in sptd_store_pages_write's roots. */
enum sptd_store_tree {
	SPTD_STORE_TREE_TABLE,       /* slice */
	SPTD_STORE_TREE_UTID_TS,     /* slice_utid_ts */
	SPTD_STORE_TREE_PARENT_ID,   /* slice_parent_id */
	SPTD_STORE_N_TREES
};
/* The three trees of some rows, being built by their own threads. */
struct sptd_store_pages;
/* Start building the trees of @n rows @rows (sorted by id, each id once;
 * the caller keeps them until sptd_store_pages_free) for pages of
 * @page_size bytes.  0, -EINVAL, or -ENOMEM. */
int sptd_store_pages_start(const struct sptd_store_slice_row *rows, size_t n, uint32_t page_size,
                           struct sptd_store_pages **out);
/* Wait for the builders: 0, -ENOMEM, or 1 when a page this size cannot
 * hold the trees (then SQL). */
int sptd_store_pages_wait(struct sptd_store_pages *pg);
/* The same for tree @t's builder alone. */
int sptd_store_pages_wait_tree(struct sptd_store_pages *pg, int t);
/* sptd_store_pages_write: a builder ran out of memory (nothing written). */
#define SPTD_STORE_PAGES_NOMEM 2
/* Put the trees into the SQLite file open at @fd, of @page_count pages,
 * whose slice b-trees are the empty leaves @root (its free pages first,
 * then after its end; store_pagefile.c), waiting for each builder: 0; 1
 * when the file is not as expected or a page this size cannot hold the
 * trees (the file as it was: then SQL); SPTD_STORE_PAGES_NOMEM; -errno
 * when a write failed (then the file must not be used: free pages, roots
 * or the header may be half-written).  Returns with every builder done. */
int sptd_store_pages_write(struct sptd_store_pages *pg, int fd, int64_t page_count,
                           const int64_t root[SPTD_STORE_N_TREES]);
/* Wait for the builders and free everything. */
void sptd_store_pages_free(struct sptd_store_pages *pg);
/* The kind column's text for kind number @kind (NULL past the four), and
 * the number of @name (-1: not one of user, kernel, syscall, irq). */
const char *sptd_store_pages_kind(unsigned kind);
/* Can the page writer encode slice records as the slice table's
 * description has them?  1 yes, 0 no: the rows go through SQL. */
int sptd_store_pages_layout_ok(void);
int sptd_store_pages_kind_of(const char *name);

/* --- store_keysort.c ----------------------------------------------------- */

/* An index key: two values and the rowid; a_null: the first value is
 * NULL (slice_parent_id of a root slice). */
struct sptd_store_key {
	int64_t a, b, id;  /* the values, the rowid */
	int a_null;        /* a is NULL */
};
/* qsort order of keys as SQLite orders index records: NULL first, then
 * a, b, id as integers. */
int sptd_store_key_cmp(const void *a, const void *b);
/* Sort @n keys made in id order into index order.  0 or -ENOMEM. */
int sptd_store_keys_sort(struct sptd_store_key *keys, size_t n);

/* --- store_fdvfs.c ------------------------------------------------------- */

/* The name of a read-only VFS whose main database "fd:N" is descriptor N
 * (registered at the first call), or NULL when SQLite refused it. */
const char *sptd_store_fdvfs(void);

/* --- store_schema.c ------------------------------------------------------ */

/* The table catalogue, SPTD_STORE_T_COUNT entries, then the views
 * (SPTD_STORE_T_ALL in all: only sptd_store_each reads those). */
extern const struct sptd_store_table_def sptd_store_table_defs[SPTD_STORE_T_ALL];

/* CREATE every table (inside the open transaction). */
int sptd_store_schema_create(struct sptd_store *st);
/* The CREATE INDEX statement of index @name as sqlite_schema holds it,
 * into @buf.  0, or -ENOENT for no such index of docs/SCHEMA.md. */
int sptd_store_index_sql(const char *name, char *buf, size_t size);
/* DROP the indexes of table @table (enum sptd_store_table_id). */
int sptd_store_schema_drop_indexes(struct sptd_store *st, int table);
/* CREATE INDEX IF NOT EXISTS for every index of docs/SCHEMA.md. */
int sptd_store_schema_index(struct sptd_store *st);
/* Check that every table exists in an opened file: -EBADMSG if not. */
int sptd_store_schema_check(struct sptd_store *st);
/* A statement of @st starts (its first step): its time limit starts now
 * (store_guard.c; nothing without a limit). */
void sptd_store_guard_statement_start(struct sptd_store *st);
/* Look a table up by name: its id, or -1. */
int sptd_store_table_find(const char *name);

/* --- store_tmp.c --------------------------------------------------------- */

/* Create the temporary file beside st->path (st->tmp_path, tmp_fd, dir_fd;
 * O_EXCL|O_NOFOLLOW, random name, mode 0600, flock()ed); @update: for an
 * update of an opened file (the directory opener is told). */
int sptd_store_tmp_create(struct sptd_store *st, int update);
/* Fill the temporary file with the bytes of @src (the incident being
 * updated, described by @sb) and give it @sb's owner and mode. */
int sptd_store_tmp_copy(struct sptd_store *st, int src, const struct stat *sb);
/* fsync the temporary file, check it is still ours, rename it to st->path
 * (over an existing file with @replace, else -EEXIST), fsync the directory. */
int sptd_store_tmp_publish(struct sptd_store *st, int replace);
/* Remove the temporary file unless published; close its fds. */
void sptd_store_tmp_discard(struct sptd_store *st);

/* --- store_migrate.c ----------------------------------------------------- */

/* A file of schema @version older than this build's: add the columns the
 * catalogue has and the file lacks — ALTER TABLE and the current
 * schema_version when @writable (inside the open transaction), else TEMP
 * views that show them as NULL.  0 for a current file. */
int sptd_store_schema_upgrade(struct sptd_store *st, long long version, int writable);
/* --- store_guard.c ------------------------------------------------------- */

/* SQLite's defences for a database file someone else made, on @st's fresh
 * connection (every incident opened).  -EIO when this SQLite lacks one. */
int sptd_store_guard_apply(struct sptd_store *st);

/* --- store_err.c --------------------------------------------------------- */

/* Record a failure on @st ("" prefix-free printf): returns @err. */
/* A value of the file for a message into @shown (48 bytes): at most 40
 * bytes of @text ("NULL" for NULL), control characters as '?' (messages
 * go to a terminal). */
void sptd_store_quote(char shown[48], const char *text);
int sptd_store_fail(struct sptd_store *st, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record failure @err writing the temporary file while doing @what (@why:
 * the system's or SQLite's words): that nothing reached st->path (a new
 * incident: record again) or that it is unchanged (an update: run it
 * again), and to free space when the disk is full.  Returns @err. */
int sptd_store_fail_write(struct sptd_store *st, int err, const char *what, const char *why);
/* Translate SQLite result @rc after doing @what into a negative errno and a
 * message naming @what, the file and SQLite's reason.  Marks the store
 * unusable when the failure ended the transaction. */
int sptd_store_fail_sqlite(struct sptd_store *st, int rc, const char *what);
/* The errno for SQLite result @rc (no message). */
int sptd_store_errno_of(sqlite3 *db, int rc);
/* Mark the transaction as ended by failure @err (message in errmsg). */
void sptd_store_mark_fatal(struct sptd_store *st, int err);
/* Run @sql (no rows expected) and translate a failure. */
int sptd_store_exec(struct sptd_store *st, const char *sql, const char *what);
/* Record a failure of create/open for sptd_store_errmsg(NULL). */
void sptd_store_set_open_error(const char *msg);
/* Common checks before adding a row: -EINVAL, -EROFS, or the sticky error. */
int sptd_store_writable_check(struct sptd_store *st, const char *what);

/* --- store_rows.c -------------------------------------------------------- */

/* Argument checks shared by the add functions: -EINVAL with @reason. */
#define SPTD_STORE_REQUIRE(st, cond, what, reason)                               \
	do {                                                                     \
		if (!(st))                                                       \
			return -EINVAL;                                          \
		if (!(cond))                                                     \
			return sptd_store_fail((st), -EINVAL, "%s: %s", (what),  \
			                       (reason));                        \
	} while (0)

/* Insert @n checked slice rows through SQL (the bulk INSERT). */
int sptd_store_slices_sql(struct sptd_store *st, const struct sptd_store_slice_row *rows,
                          size_t n);
/* Slice rows one bulk INSERT statement carries (10 parameters each). */
#define SPTD_STORE_BULK_ROWS 64

/* The cached INSERT of @table, prepared on first use, after the writable
 * checks; NULL after a failure (recorded on @st, returned through @ret). */
sqlite3_stmt *sptd_store_row_begin(struct sptd_store *st, int table, const char *what,
                                   int *ret);
/* Step the bound INSERT and make it ready for the next row. */
int sptd_store_row_end(struct sptd_store *st, sqlite3_stmt *ins, const char *what);
/* Bind a string (step copies it), NULL for NULL. */
void sptd_store_bind_str(sqlite3_stmt *s, int idx, const char *v);
/* Bind bytes; an empty blob is a zero-length BLOB, not NULL. */
int sptd_store_bind_bytes(struct sptd_store *st, sqlite3_stmt *s, int idx,
                          const void *data, size_t len, const char *what);

/* Finalize the cached statements (before closing the connection). */
void sptd_store_rows_release(struct sptd_store *st);

/* --- store_named.c ------------------------------------------------------- */

/* The statement @q of @st, whose text is @sql, prepared on first use.
 * While @q is running already (a reader called again from its own row
 * callback) a fresh statement is prepared instead and *@owned set to 1.
 * NULL on failure (-EINVAL for a closed store; recorded on @st, returned
 * through @ret).  Give it back with sptd_store_named_done(). */
sqlite3_stmt *sptd_store_named_get(struct sptd_store *st, int q, const char *sql,
                                   const char *what, int *owned, int *ret);
/* Reset @s and clear its bindings, or finalize it when @owned. */
void sptd_store_named_done(sqlite3_stmt *s, int owned);
/* Step @s (got and bound by the caller) to the end, handing each row to
 * @row(@s, @arg); stops at a non-zero @row result and returns it.  Gives
 * @s back.  0 after the last row, or the failure of a step (recorded). */
int sptd_store_named_each(struct sptd_store *st, sqlite3_stmt *s, int owned,
                          const char *what, int (*row)(sqlite3_stmt *s, void *arg),
                          void *arg);
/* Step @s (got and bound by the caller) once: 1 and column 0 in *@value
 * (when not NULL) for a row, 0 for none.  Gives @s back. */
int sptd_store_named_one(struct sptd_store *st, sqlite3_stmt *s, int owned,
                         const char *what, int64_t *value);
/* Finalize every statement of st->named (before the connection closes,
 * and at commit). */
void sptd_store_named_release(struct sptd_store *st);

/* --- store_query.c ------------------------------------------------------- */

/* Detach every caller statement from @st (before the connection closes). */
void sptd_store_stmts_release(struct sptd_store *st);

#endif /* SPTD_STORE_LOCAL_H */
