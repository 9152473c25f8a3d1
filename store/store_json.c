/* store_json.c — JSON objects that a recording keeps in text columns (the
 * args of ftrace_event: sched/ writes them), read member by member with
 * SQLite's JSON functions, so that no module parses JSON by hand.
 *
 * json_each gives each member's key, type and value.  An integer above
 * INT64_MAX comes back from it as a real (rounded); its exact digits are
 * the member's JSON text (`->` by its full path), read for those only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"
#include "sptd_store_text.h"

static const char object_sql[] =
	"SELECT CASE WHEN json_valid(?1) THEN json_type(?1) = 'object' ELSE 0 END";
static const char members_sql[] =
	"SELECT key, type, atom, CASE WHEN type = 'integer' AND typeof(atom) <> 'integer' "
	"THEN ?1 -> fullkey END FROM json_each(?1)";

/* An integer too big for int64 from its JSON digits: UINT when it fits
 * uint64, else OTHER. */
static void big_integer(const char *digits, struct sptd_store_json_member *m)
{
	char *end;

	m->kind = SPTD_STORE_JSON_OTHER;
	if (!digits || *digits < '0' || *digits > '9')
		return;
	errno = 0;
	m->u = strtoull(digits, &end, 10);
	if (!errno && !*end && m->u > (uint64_t)INT64_MAX)
		m->kind = SPTD_STORE_JSON_UINT;
}

/* One row of members_sql as a member. */
static void member_of(sqlite3_stmt *s, struct sptd_store_json_member *m)
{
	const char *type = (const char *)sqlite3_column_text(s, 1);

	memset(m, 0, sizeof(*m));
	m->key = (const char *)sqlite3_column_text(s, 0);
	if (!m->key)
		m->key = "";
	m->kind = SPTD_STORE_JSON_OTHER;
	if (!type)
		return;
	if (strcmp(type, "text") == 0) {
		m->kind = SPTD_STORE_JSON_TEXT;
		m->text = (const char *)sqlite3_column_text(s, 2);
		m->len = (size_t)sqlite3_column_bytes(s, 2);
		if (!m->text)
			m->text = "";
	} else if (strcmp(type, "true") == 0) {
		m->kind = SPTD_STORE_JSON_TRUE;
	} else if (strcmp(type, "integer") == 0) {
		if (sqlite3_column_type(s, 2) == SQLITE_INTEGER) {
			m->kind = SPTD_STORE_JSON_INT;
			m->i = sqlite3_column_int64(s, 2);
		} else {
			big_integer((const char *)sqlite3_column_text(s, 3), m);
		}
	}
}

struct members_ctx {
	int (*fn)(void *ctx, const struct sptd_store_json_member *m);
	void *ctx;
};

static int member_row(sqlite3_stmt *s, void *arg)
{
	const struct members_ctx *c = arg;
	struct sptd_store_json_member m;

	member_of(s, &m);
	return c->fn(c->ctx, &m);
}

int sptd_store_json_members(struct sptd_store *st, const char *json,
                            int (*fn)(void *ctx, const struct sptd_store_json_member *m),
                            void *ctx)
{
	static const char what[] = "reading a JSON object";
	struct members_ctx c = { fn, ctx };
	sqlite3_stmt *s;
	int64_t is_object = 0;
	int owned, ret = 0;

	if (!st || !json || !fn)
		return st ? sptd_store_fail(st, -EINVAL, "%s: json or fn is NULL", what) : -EINVAL;
	s = sptd_store_named_get(st, SPTD_STORE_Q_JSON_OBJECT, object_sql, what, &owned, &ret);
	if (!s)
		return ret;
	if (sqlite3_bind_text(s, 1, json, -1, SQLITE_STATIC) != SQLITE_OK) {
		sptd_store_named_done(s, owned);
		return sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
	}
	ret = sptd_store_named_one(st, s, owned, what, &is_object);
	if (ret < 0)
		return ret;
	if (!is_object)
		return -EBADMSG;
	s = sptd_store_named_get(st, SPTD_STORE_Q_JSON_MEMBERS, members_sql, what, &owned, &ret);
	if (!s)
		return ret;
	if (sqlite3_bind_text(s, 1, json, -1, SQLITE_STATIC) != SQLITE_OK) {
		sptd_store_named_done(s, owned);
		return sptd_store_fail(st, -ENOMEM, "%s: out of memory", what);
	}
	return sptd_store_named_each(st, s, owned, what, member_row, &c);
}
