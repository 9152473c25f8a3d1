/* store_schema.c — the tables and indexes of the incident file
 * (docs/SCHEMA.md), their creation, and clearing derived tables (one, or
 * all of them in schema order). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "store-local.h"

/* One index of docs/SCHEMA.md. */
struct sptd_store_index_def {
	const char *name;  /* index name */
	int table;         /* enum sptd_store_table_id it belongs to */
	const char *cols;  /* indexed columns */
};

static const struct sptd_store_index_def index_defs[] = {
	{ "sched_slice_cpu_ts", SPTD_STORE_T_SCHED_SLICE, "cpu, ts" },
	{ "sched_slice_utid", SPTD_STORE_T_SCHED_SLICE, "utid, ts" },
	{ "thread_state_utid_ts", SPTD_STORE_T_THREAD_STATE, "utid, ts" },
	{ "slice_utid_ts", SPTD_STORE_T_SLICE, "utid, ts" },
	{ "slice_parent_id", SPTD_STORE_T_SLICE, "parent_id" },
	{ "sample_ts", SPTD_STORE_T_SAMPLE, "ts" },
	{ "ftrace_event_ts", SPTD_STORE_T_FTRACE_EVENT, "ts" },
	{ "cpu_freq_cpu_ts", SPTD_STORE_T_CPU_FREQ, "cpu, ts" },
	{ "cpu_idle_cpu_ts", SPTD_STORE_T_CPU_IDLE, "cpu, ts" },
	{ "ptwrite_ts", SPTD_STORE_T_PTWRITE, "ts" },
	{ "callsite_parent_id", SPTD_STORE_T_CALLSITE, "parent_id" },
	{ "symbol_dso_addr", SPTD_STORE_T_SYMBOL, "dso_id, addr" },
};

#define N_INDEXES (sizeof(index_defs) / sizeof(index_defs[0]))

/* Names for sptd_store_tables(), NULL-terminated (the catalogue's). */
static const char *table_names[SPTD_STORE_T_COUNT + 1];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_make(void)
{
	for (int i = 0; i < SPTD_STORE_T_COUNT; i++)
		table_names[i] = sptd_store_table_defs[i].name;
}

const char *const *sptd_store_tables(void)
{
	pthread_once(&names_once, names_make);
	return table_names;
}

const char *sptd_store_table_name(enum sptd_store_table_id table)
{
	return (int)table >= 0 && table < SPTD_STORE_T_COUNT ? sptd_store_table_defs[table].name : NULL;
}

int sptd_store_table_find(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < SPTD_STORE_T_COUNT; i++)
		if (strcmp(sptd_store_table_defs[i].name, name) == 0)
			return i;
	return -1;
}

int sptd_store_schema_create(struct sptd_store *st)
{
	char sql[512];
	int ret = 0;

	for (int i = 0; i < SPTD_STORE_T_COUNT && ret >= 0; i++) {
		const struct sptd_store_table_def *t = &sptd_store_table_defs[i];

		/* "trigger" is an SQL keyword: quote every name. */
		snprintf(sql, sizeof(sql), "CREATE TABLE \"%s\" (%s)", t->name, sptd_store_table_columns(t));
		ret = sptd_store_exec(st, sql, "creating the schema");
	}
	return ret;
}

int sptd_store_index_sql(const char *name, char *buf, size_t size)
{
	for (size_t i = 0; i < N_INDEXES; i++) {
		const struct sptd_store_index_def *ix = &index_defs[i];

		if (strcmp(ix->name, name) != 0)
			continue;
		snprintf(buf, size, "CREATE INDEX \"%s\" ON \"%s\" (%s)", ix->name,
		         sptd_store_table_defs[ix->table].name, ix->cols);
		return 0;
	}
	return -ENOENT;
}

int sptd_store_schema_index(struct sptd_store *st)
{
	char sql[256];
	int ret = 0;

	for (size_t i = 0; i < N_INDEXES && ret >= 0; i++) {
		const struct sptd_store_index_def *ix = &index_defs[i];

		snprintf(sql, sizeof(sql), "CREATE INDEX IF NOT EXISTS \"%s\" ON \"%s\" (%s)",
		         ix->name, sptd_store_table_defs[ix->table].name, ix->cols);
		ret = sptd_store_exec(st, sql, "creating the indexes");
	}
	return ret;
}

/* Is the key of table @t still its INTEGER PRIMARY KEY?  A table made
 * again without it (same columns) can hold one id twice: thread rows
 * twice counted every slice twice in the reports, and callsites twice
 * made export's walk of the call stacks branch at every frame (2^60
 * ways: it never ended).  Tables only in temp (added since an older
 * file) are sysptd's own.  0, or -EBADMSG naming the table. */
static int key_check(struct sptd_store *st, const struct sptd_store_table_def *t)
{
	const char *k = strstr(sptd_store_table_columns(t), " INTEGER PRIMARY KEY");
	sqlite3_stmt *q = NULL;
	int rc, ok = 1;

	if (!k)
		return 0;
	rc = sqlite3_prepare_v2(st->db, "SELECT count(*), sum(pk > 0), sum(pk = 1 AND name = ?2 "
	                        "AND upper(type) = 'INTEGER') FROM pragma_table_info(?1, 'main')",
	                        -1, &q, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(q, 1, t->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, sptd_store_table_columns(t), (int)(k - sptd_store_table_columns(t)), SQLITE_STATIC);
		rc = sqlite3_step(q);
	}
	if (rc == SQLITE_ROW && sqlite3_column_int(q, 0) > 0)
		ok = sqlite3_column_int(q, 1) == 1 && sqlite3_column_int(q, 2) == 1;
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW)
		return sptd_store_fail_sqlite(st, rc, "reading the schema");
	if (ok)
		return 0;
	return sptd_store_fail(st, -EBADMSG, "%s is not a complete sysptd incident (table %s "
	                       "does not have %.*s as its INTEGER PRIMARY KEY, so ids may repeat): "
	                       "it was damaged or written by something else", st->path, t->name,
	                       (int)(k - sptd_store_table_columns(t)), sptd_store_table_columns(t));
}

/* Are table @t's columns (and its indexes) plain stored values under
 * collations SQLite has?  A generated column passed columns_check (it is
 * in SELECT *) and then failed readers' statements as if their SQL were
 * wrong ("integer overflow" from `depth INT AS (...)`: script exited 2);
 * an unknown collation failed every ORDER BY of its column.  0, or
 * -EBADMSG naming the table and column. */
static int decl_check(struct sptd_store *st, const struct sptd_store_table_def *t)
{
	static const char sql[] =
		"SELECT name, hidden, NULL FROM pragma_table_xinfo(?1, 'main') WHERE hidden <> 0 "
		"UNION ALL SELECT 'index ' || il.name, 0, ix.coll FROM pragma_index_list(?1, 'main') il, "
		"pragma_index_xinfo(il.name, 'main') ix WHERE ix.coll IS NOT NULL AND "
		"upper(ix.coll) NOT IN ('BINARY', 'NOCASE', 'RTRIM') "
		"UNION ALL SELECT name, -1, NULL FROM pragma_table_xinfo(?1, 'main') LIMIT 1";
	sqlite3_stmt *q = NULL;
	char name[64] = "", coll[64] = "";
	const char *collseq = NULL;
	int rc, hidden = -1, found = 0;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(q, 1, t->name, -1, SQLITE_STATIC);
		rc = sqlite3_step(q);
	}
	if (rc == SQLITE_ROW) {
		found = 1;
		snprintf(name, sizeof(name), "%s", sqlite3_column_text(q, 0) ?
		         (const char *)sqlite3_column_text(q, 0) : "?");
		hidden = sqlite3_column_int(q, 1);
		snprintf(coll, sizeof(coll), "%s", sqlite3_column_text(q, 2) ?
		         (const char *)sqlite3_column_text(q, 2) : "");
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return sptd_store_fail_sqlite(st, rc, "reading the schema");
	if (!found || hidden == -1) {
		/* no generated column nor odd index: each column's collation */
		for (const char *c = sptd_store_table_columns(t); found && *c; ) {
			size_t n = strcspn(c, " ,");

			snprintf(name, sizeof(name), "%.*s", (int)n, c);
			collseq = NULL;
			/* the name alone for SQLite; "column " once it is shown */
			if (sqlite3_table_column_metadata(st->db, "main", t->name, name, NULL,
			                                  &collseq, NULL, NULL, NULL) == SQLITE_OK &&
			    collseq && strcasecmp(collseq, "BINARY") && strcasecmp(collseq, "NOCASE") &&
			    strcasecmp(collseq, "RTRIM")) {
				snprintf(coll, sizeof(coll), "%s", collseq);
				snprintf(name, sizeof(name), "column %.*s", (int)n, c);
				break;
			}
			c = strchr(c, ',');
			if (!c)
				break;
			c += strspn(c, ", ");
		}
		if (!coll[0])
			return 0;
	}
	sptd_store_printable(name, strlen(name));
	sptd_store_printable(coll, strlen(coll));
	if (coll[0])
		return sptd_store_fail(st, -EBADMSG, "%s is not a complete sysptd incident (table %s: "
		                       "%s uses collation \"%s\", which is not SQLite's): it was "
		                       "damaged or written by something else", st->path, t->name,
		                       name, coll);
	return sptd_store_fail(st, -EBADMSG, "%s is not a complete sysptd incident (table %s: "
	                       "column %s is %s, not stored): it was damaged or written by "
	                       "something else", st->path, t->name, name,
	                       hidden == 1 ? "hidden" : "generated");
}

/* Does table @t of the opened file have every column sysptd reads and
 * writes?  A file whose schema was edited (or mutated) would otherwise
 * fail later, in some statement, as if the caller's SQL were wrong.
 * 0, or -EBADMSG naming the table. */
static int columns_check(struct sptd_store *st, const struct sptd_store_table_def *t)
{
	char sql[512], *at;
	const char *c = sptd_store_table_columns(t);
	size_t len;
	sqlite3_stmt *q = NULL;
	int rc;

	len = (size_t)snprintf(sql, sizeof(sql), "SELECT ");
	while (*c && len < sizeof(sql)) {
		size_t n = strcspn(c, " ,");

		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s\"%.*s\"",
		                        len > 7 ? ", " : "", (int)n, c);
		c = strchr(c, ',');
		if (!c)
			break;
		c += strspn(c, ", ");
	}
	if (len < sizeof(sql))
		snprintf(sql + len, sizeof(sql) - len, " FROM \"%s\" LIMIT 0", t->name);
	rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
	sqlite3_finalize(q);
	q = NULL;
	if (rc == SQLITE_OK) {
		/* and no more: rows are inserted by position */
		int n = -1;

		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\" LIMIT 0", t->name);
		if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK)
			n = sqlite3_column_count(q);
		sqlite3_finalize(q);
		if (n == t->ncols) {
			int ret = key_check(st, t);

			return ret < 0 ? ret : decl_check(st, t);
		}
		return sptd_store_fail(st, -EBADMSG, "%s is not a complete sysptd incident (table %s "
		                       "has %d columns, sysptd writes %d): it was damaged or written by "
		                       "something else", st->path, t->name, n, t->ncols);
	}
	at = strstr(sqlite3_errmsg(st->db), "no such column: ");
	return sptd_store_fail(st, -EBADMSG, "%s is not a complete sysptd incident (table %s: %s): "
	                       "it was damaged or written by something else", st->path, t->name,
	                       at ? at : "does not have the columns sysptd uses");
}

int sptd_store_schema_check(struct sptd_store *st)
{
	sqlite3_stmt *q = NULL;
	int ret = 0, rc;

	/* a table added since an older file was written is a TEMP table
	 * when that file is read (store_migrate.c) */
	rc = sqlite3_prepare_v2(st->db,
	                        "SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = ?1 "
	                        "UNION ALL SELECT 1 FROM temp.sqlite_schema WHERE type = 'table' "
	                        "AND name = ?1 LIMIT 1",
	                        -1, &q, NULL);
	if (rc != SQLITE_OK) {
		ret = sptd_store_fail_sqlite(st, rc, "reading the schema");
		goto out;
	}
	for (int i = 0; i < SPTD_STORE_T_COUNT; i++) {
		sqlite3_bind_text(q, 1, sptd_store_table_defs[i].name, -1, SQLITE_STATIC);
		rc = sqlite3_step(q);
		if (rc == SQLITE_DONE) {
			ret = sptd_store_fail(st, -EBADMSG,
			                      "%s is not a complete sysptd incident (no table %s): "
			                      "it was damaged or written by something else",
			                      st->path, sptd_store_table_defs[i].name);
			goto out;
		}
		if (rc != SQLITE_ROW) {
			ret = sptd_store_fail_sqlite(st, rc, "reading the schema");
			goto out;
		}
		sqlite3_reset(q);
		ret = columns_check(st, &sptd_store_table_defs[i]);
		if (ret < 0)
			goto out;
	}
out:
	sqlite3_finalize(q);
	return ret;
}

int sptd_store_schema_drop_indexes(struct sptd_store *st, int table)
{
	char sql[160];
	int ret = 0;

	/* Refilling without the table's indexes is faster; commit puts them
	 * back (sptd_store_schema_index). */
	if (table == SPTD_STORE_T_THREAD_STATE)
		st->block_index = 0;
	for (size_t i = 0; i < N_INDEXES && ret >= 0; i++) {
		if (index_defs[i].table != table)
			continue;
		snprintf(sql, sizeof(sql), "DROP INDEX IF EXISTS \"%s\"", index_defs[i].name);
		ret = sptd_store_exec(st, sql, "clearing a table");
	}
	return ret;
}
