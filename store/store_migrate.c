/* store_migrate.c — incidents written by an older sysptd: the columns a
 * later schema added (schema 2: `flags` of sched_slice, thread_state,
 * irq_slice and softirq_slice).
 *
 * Every change of the schema since version 1 adds columns at the end of a
 * table, so one generic step covers them all: compare each table of the
 * catalogue (store_schema.c) with the file's.  Opened for update (`sysptd
 * decode`), the file gets the missing columns (ALTER TABLE ADD COLUMN, NULL
 * in the old rows: "not known", until decode refills the table) and the
 * current schema_version, inside the update's transaction.  Opened
 * read-only (query, export), the file is left as it is and TEMP views of the
 * same names, which SQLite resolves before the file's tables, show the
 * missing columns as NULL: queries and reports written for the current
 * schema run unchanged. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store-local.h"

#define MIGRATE_MAX_COLS 32
#define MIGRATE_NAME_LEN 64
#define MIGRATE_SQL_LEN 2048

/* One column of a catalogue entry: its name and its whole declaration. */
struct column_def {
	char name[MIGRATE_NAME_LEN];  /* "flags" */
	char decl[128];               /* "flags INT" */
};

/* Split a catalogue column list ("id INTEGER PRIMARY KEY, ts INT, ...").
 * Returns the number of columns, -EINVAL if one does not fit. */
static int columns_split(const char *list, struct column_def *cols, int max)
{
	int n = 0;

	while (*list) {
		size_t len = strcspn(list, ","), name_len;
		const char *p = list;

		while (*p == ' ')
			p++, len--;
		name_len = strcspn(p, " ,");
		if (n == max || len >= sizeof(cols[n].decl) || name_len >= MIGRATE_NAME_LEN)
			return -EINVAL;
		memcpy(cols[n].decl, p, len);
		cols[n].decl[len] = '\0';
		memcpy(cols[n].name, p, name_len);
		cols[n].name[name_len] = '\0';
		n++;
		list = p + len;
		if (*list == ',')
			list++;
	}
	return n;
}

/* 1 if the file's table @table has column @column, 0 if not. */
static int column_present(struct sptd_store *st, sqlite3_stmt *info, const char *table,
                          const char *column, int *ret)
{
	int found = 0, rc;

	sqlite3_reset(info);
	sqlite3_bind_text(info, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(info)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(info, 0);

		if (name && strcmp(name, column) == 0)
			found = 1;
	}
	if (rc != SQLITE_DONE)
		*ret = sptd_store_fail_sqlite(st, rc, "reading the columns of an older incident");
	return found;
}

/* Bring one table up to the catalogue: ALTER (@writable) or a TEMP view. */
static int table_upgrade(struct sptd_store *st, sqlite3_stmt *info,
                         const struct sptd_store_table_def *t, int writable, int *changed)
{
	struct column_def cols[MIGRATE_MAX_COLS];
	int present[MIGRATE_MAX_COLS];
	char sql[MIGRATE_SQL_LEN];
	int n = columns_split(sptd_store_table_columns(t), cols, MIGRATE_MAX_COLS), missing = 0, ret = 0;
	size_t off;

	if (n < 0)
		return sptd_store_fail(st, -EINVAL, "schema catalogue: bad column list of %s", t->name);
	for (int i = 0; i < n && ret >= 0; i++) {
		present[i] = column_present(st, info, t->name, cols[i].name, &ret);
		missing += !present[i];
	}
	if (ret < 0 || !missing)
		return ret;
	*changed = 1;
	if (missing == n) {
		/* a table added since (schema 3: ftrace_event): created empty,
		 * in the file when updating, else as a TEMP table */
		snprintf(sql, sizeof(sql), "CREATE %sTABLE \"%s\" (%s)", writable ? "" : "TEMP ",
		         t->name, sptd_store_table_columns(t));
		return sptd_store_exec(st, sql, writable ? "adding a table to an older incident" :
		                       "reading an older incident");
	}
	if (writable) {
		for (int i = 0; i < n && ret >= 0; i++) {
			if (present[i])
				continue;
			snprintf(sql, sizeof(sql), "ALTER TABLE main.\"%s\" ADD COLUMN %s", t->name,
			         cols[i].decl);
			ret = sptd_store_exec(st, sql, "adding a column to an older incident");
		}
		return ret;
	}
	off = (size_t)snprintf(sql, sizeof(sql), "CREATE TEMP VIEW \"%s\" AS SELECT ", t->name);
	for (int i = 0; i < n && off < sizeof(sql); i++)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, "%s%s%s%s", i ? ", " : "",
		                        present[i] ? "\"" : "NULL AS \"", cols[i].name, "\"");
	if (off < sizeof(sql))
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, " FROM main.\"%s\"", t->name);
	if (off >= sizeof(sql))
		return sptd_store_fail(st, -EINVAL, "schema catalogue: %s has too many columns",
		                       t->name);
	return sptd_store_exec(st, sql, "reading an older incident");
}

int sptd_store_schema_upgrade(struct sptd_store *st, long long version, int writable)
{
	sqlite3_stmt *info = NULL;
	char sql[160];
	int ret = 0, rc, changed = 0;

	if (version >= SPTD_STORE_SCHEMA_VERSION)
		return 0;
	rc = sqlite3_prepare_v2(st->db, "SELECT name FROM pragma_table_info(?1, 'main')", -1,
	                        &info, NULL);
	if (rc != SQLITE_OK)
		return sptd_store_fail_sqlite(st, rc, "reading the columns of an older incident");
	for (int i = 0; i < SPTD_STORE_T_COUNT && ret >= 0; i++)
		ret = table_upgrade(st, info, &sptd_store_table_defs[i], writable, &changed);
	sqlite3_finalize(info);
	if (ret >= 0 && writable) {
		snprintf(sql, sizeof(sql), "UPDATE meta SET value = '%d' WHERE key = 'schema_version'",
		         SPTD_STORE_SCHEMA_VERSION);
		ret = sptd_store_exec(st, sql, "updating the schema version");
	}
	return ret;
}
