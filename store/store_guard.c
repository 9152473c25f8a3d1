/* store_guard.c — reading files other people made: SQLite's defences for
 * untrusted databases on every incident opened (query, export, list,
 * decode), and a time limit for statements a user wrote.
 *
 * An incident is a file people send each other, so its schema is not
 * trusted (SQLite's "Defense Against The Dark Arts"): defensive mode (no
 * writes to the schema or shadow tables, no corrupting PRAGMAs), no
 * functions with side effects from the schema (trusted_schema off), no
 * triggers (the incident schema has none; a planted one would run on
 * decode's inserts), no fts3_tokenizer() (it hands out a library pointer),
 * no extension loading, no double-quoted string literals, and cell size
 * checks that catch corrupt pages early. */
#include <errno.h>
#include <time.h>

#include "store-local.h"

/* How many SQLite VM steps pass between two looks at the clock: a few
 * microseconds of work, so the limit is kept to well within a millisecond. */
#define GUARD_PROGRESS_STEPS 10000

int sptd_store_guard_apply(struct sptd_store *st)
{
	static const struct {
		int op;             /* SQLITE_DBCONFIG_* */
		int on;             /* the value wanted */
		const char *what;   /* for the message */
	} settings[] = {
		{ SQLITE_DBCONFIG_DEFENSIVE, 1, "defensive mode" },
		{ SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, "untrusted schema" },
		{ SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, "triggers off" },
		{ SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, "fts3_tokenizer off" },
		{ SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, "extension loading off" },
		{ SQLITE_DBCONFIG_DQS_DML, 0, "no double-quoted strings" },
		{ SQLITE_DBCONFIG_DQS_DDL, 0, "no double-quoted strings" },
	};
	size_t i;
	int rc, now;

	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		now = -1;
		rc = sqlite3_db_config(st->db, settings[i].op, settings[i].on, &now);
		if (rc != SQLITE_OK || now != settings[i].on)
			return sptd_store_fail(st, -EIO, "opening %s: SQLite refused %s: this "
			                       "SQLite is too old to read files safely (3.31 "
			                       "or newer is needed)", st->path, settings[i].what);
	}
	return sptd_store_exec(st, "PRAGMA cell_size_check=ON", "opening the incident");
}

/* Now on CLOCK_MONOTONIC, ns. */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Progress handler: non-zero interrupts the running statement. */
static int past_deadline(void *ctx)
{
	struct sptd_store *st = ctx;

	return now_ns() >= st->deadline_ns;
}

void sptd_store_guard_statement_start(struct sptd_store *st)
{
	if (!st->time_limit_ns)
		return;
	st->deadline_ns = now_ns() + st->time_limit_ns;
	if (st->deadline_ns < 0)   /* a limit of centuries: none */
		st->deadline_ns = INT64_MAX;
}

int sptd_store_set_time_limit(struct sptd_store *st, int64_t limit_ns)
{
	if (!st || !st->db || limit_ns < 0)
		return -EINVAL;
	st->time_limit_ns = limit_ns;
	if (!limit_ns) {
		sqlite3_progress_handler(st->db, 0, NULL, NULL);
		return 0;
	}
	st->deadline_ns = now_ns() + limit_ns;
	if (st->deadline_ns < 0)   /* a limit of centuries: none */
		st->deadline_ns = INT64_MAX;
	sqlite3_progress_handler(st->db, GUARD_PROGRESS_STEPS, past_deadline, st);
	return 0;
}
