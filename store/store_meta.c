/* store_meta.c — the meta table: key/value facts about the incident. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

int sptd_store_meta_set(struct sptd_store *st, const char *key, const char *value)
{
	static const char what[] = "setting a meta value";
	sqlite3_stmt *s;
	int ret;

	SPTD_STORE_REQUIRE(st, key && *key && value, what, "key or value is NULL or empty");
	SPTD_STORE_REQUIRE(st, strcmp(key, "schema_version") != 0, what,
	                   "schema_version is written by the store itself");
	s = sptd_store_row_begin(st, SPTD_STORE_T_META, what, &ret);
	if (!s)
		return ret;
	sptd_store_bind_str(s, 1, key);
	sptd_store_bind_str(s, 2, value);
	return sptd_store_row_end(st, s, what);
}

int sptd_store_meta_set_int(struct sptd_store *st, const char *key, int64_t value)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRId64, value);
	return sptd_store_meta_set(st, key, text);
}

/* Look @key up; on success the value is column 0 of st->meta_get, which the
 * caller resets. */
static int meta_lookup(struct sptd_store *st, const char *key)
{
	static const char what[] = "reading a meta value";
	int rc;

	if (!st->db)
		return sptd_store_fail(st, -EINVAL, "%s: the store is closed", what);
	if (!st->meta_get) {
		rc = sqlite3_prepare_v3(st->db, "SELECT value FROM meta WHERE key = ?1", -1,
		                        SQLITE_PREPARE_PERSISTENT, &st->meta_get, NULL);
		if (rc != SQLITE_OK)
			return sptd_store_fail_sqlite(st, rc, what);
	}
	sqlite3_bind_text(st->meta_get, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st->meta_get);
	if (rc == SQLITE_ROW)
		return 0;
	sqlite3_reset(st->meta_get);
	if (rc == SQLITE_DONE)
		return sptd_store_fail(st, -ENOENT, "%s: no meta key '%s' in %s", what, key,
		                       st->path);
	return sptd_store_fail_sqlite(st, rc, what);
}

int sptd_store_meta_get(struct sptd_store *st, const char *key, char *buf, size_t len)
{
	const char *value;
	size_t n;
	int ret;

	SPTD_STORE_REQUIRE(st, key && buf && len, "reading a meta value", "key or buf is NULL or len is 0");
	ret = meta_lookup(st, key);
	if (ret < 0)
		return ret;
	value = (const char *)sqlite3_column_text(st->meta_get, 0);
	n = value ? strlen(value) : 0;
	snprintf(buf, len, "%s", value ? value : "");
	sqlite3_reset(st->meta_get);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

int sptd_store_meta_get_int(struct sptd_store *st, const char *key, int64_t *value)
{
	const char *text;
	char *end;
	long long v;
	int ret;

	SPTD_STORE_REQUIRE(st, key && value, "reading a meta value", "key or value is NULL");
	ret = meta_lookup(st, key);
	if (ret < 0)
		return ret;
	text = (const char *)sqlite3_column_text(st->meta_get, 0);
	errno = 0;
	v = text ? strtoll(text, &end, 10) : 0;
	if (!text || end == text || *end || errno) {
		char shown[48];

		sptd_store_quote(shown, text);
		ret = sptd_store_fail(st, -EINVAL, "reading meta '%s' of %s: '%s' is not "
		                      "an integer", key, st->path, shown);
	} else
		*value = v;
	sqlite3_reset(st->meta_get);
	return ret;
}

