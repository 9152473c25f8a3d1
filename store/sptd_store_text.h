/* sptd_store_text.h — text that SQLite reads for the other modules: SQL a
 * user wrote, split into statements as SQLite's own shell splits it
 * (store_sqltext.c), and the JSON objects a recording keeps (tracepoint
 * args), read with SQLite's JSON functions (store_json.c).  Part of
 * store/'s public API, kept in a header of its own while sptd_store.h
 * stands at the 800-line limit (it folds back in once the table-driven
 * store shrinks that header). */
#ifndef SPTD_STORE_TEXT_H
#define SPTD_STORE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "sptd_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One statement of a text that holds several (a file, stdin, a shell's
 * lines), as sptd_store_sql_next() finds it. */
struct sptd_store_sql_span {
	size_t start, len;  /* its text: from its first token (blanks, comments
	                     * and empty statements before it skipped) to the ';'
	                     * that ends it, that ';' and blanks before it left out */
	size_t used;        /* bytes of the text it takes: through that ';', or
	                     * to the end when no ';' ends it */
	unsigned line;      /* the line its first token is on, 1 for the text's
	                     * first line */
	unsigned lines_used; /* newlines in the @used bytes (to count lines on) */
	int complete;       /* 1: a ';' ends it; 0: it runs to the end of the
	                     * text, where more may follow */
};

/* The first statement of @sql.  A statement ends at the first ';' after
 * which SQLite's sqlite3_complete() says the text is complete: a ';' in a
 * string, a quoted name or a comment does not end it, nor one inside the
 * BEGIN ... END of CREATE TRIGGER.  The cost is a scan of the statement
 * per ';' inside it.  Returns 1 (*@span filled), 0 when @sql holds nothing
 * but blanks, comments and ';' (@span->used covers them), -EINVAL (NULL),
 * -ENOMEM. */
int sptd_store_sql_next(const char *sql, struct sptd_store_sql_span *span);

/* What a member of a JSON object holds, as sptd_store_json_members()
 * reads it. */
enum sptd_store_json_kind {
	SPTD_STORE_JSON_TEXT = 0, /* a string */
	SPTD_STORE_JSON_INT,      /* an integer in the int64 range */
	SPTD_STORE_JSON_UINT,     /* an integer above INT64_MAX, up to UINT64_MAX */
	SPTD_STORE_JSON_TRUE,
	SPTD_STORE_JSON_OTHER,    /* false, null, a real, an array, an object, an
	                           * integer beyond 64 bits */
};
/* One member. */
struct sptd_store_json_member {
	const char *key;          /* its name (borrowed, valid during the call) */
	enum sptd_store_json_kind kind;
	int64_t i;                /* INT */
	uint64_t u;               /* UINT */
	const char *text;         /* TEXT: the string as SQLite's JSON functions
	                           * decode it, escapes resolved (borrowed) */
	size_t len;               /* ... its bytes (a \u0000 in it is a NUL) */
};
/* Hand each member of the JSON object @json to @fn(@ctx, member), in the
 * object's order, read by SQLite's JSON functions (json_each): nothing of
 * the text is parsed here.  A non-zero @fn result stops the walk and is
 * returned.  0 walked; -EBADMSG when @json is not well-formed JSON or not
 * an object (nothing handed to @fn); -EINVAL (NULL @st/@json/@fn); the
 * store's error otherwise (message in sptd_store_errmsg()). */
int sptd_store_json_members(struct sptd_store *st, const char *json,
                            int (*fn)(void *ctx, const struct sptd_store_json_member *m),
                            void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* SPTD_STORE_TEXT_H */
