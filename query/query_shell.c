/* query_shell.c — the interactive shell of `sysptd query`, in the manner of
 * sqlite3 and trace_processor_shell: a prompt, SQL statements that may span
 * lines and end with ';', and a few dot commands on a line of their own.
 *
 * Input is read with getline(), so the terminal's own line editing applies
 * (backspace, ^U, ^W); there is no history recall (no readline).  Prompts
 * and messages go to the session's message stream, results to its output,
 * so `sysptd query X > out.txt` keeps only results in the file. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query-local.h"
#include "sptd_store_text.h"

#define PROMPT      "sysptd> "
#define PROMPT_MORE "   ...> "

static const char shell_help[] =
"SQL statements end with ';' and may span lines; they run on every incident\n"
"(with several, results get a first column \"incident\").  Tables follow\n"
"Perfetto's names: sched_slice, thread_state, thread, process, slice, ...\n"
"\n"
".help                this text\n"
".tables              the tables of the (first) incident\n"
".schema [TABLE]      their CREATE statements\n"
".report [NAME]       a canned report (no NAME: list them)\n"
".mode [table|csv|json]  how results print (no argument: the current one)\n"
".incidents           the incidents this shell reads\n"
".read FILE           run the SQL statements in FILE\n"
".quit, .exit         leave (or end of input: Ctrl+D)\n";

static const char *const mode_names[] = { "table", "csv", "json" };

/* The words of a dot command line: @line is cut in place. */
static int split_words(char *line, char **words, int max)
{
	int n = 0;
	char *save = NULL, *w;

	for (w = strtok_r(line, " \t\r\n", &save); w && n < max;
	     w = strtok_r(NULL, " \t\r\n", &save))
		words[n++] = w;
	return n;
}

/* One read-only statement on the first incident, each row's first column
 * printed as a line (or joined by two spaces when @inline_sep). */
static int print_lines(struct sptd_query_session *s, const char *sql, const char *arg,
                       int inline_sep)
{
	struct sptd_store_stmt *stmt = NULL;
	char err[512] = "";
	int rc, step = 0, col = 0;

	rc = sptd_query_prepare(s->inc[0].st, sql, &stmt, err, sizeof(err));
	if (rc >= 0 && arg)
		rc = sptd_store_bind_text(stmt, 1, arg);
	while (rc >= 0 && (step = sptd_store_step(stmt)) == 1) {
		const char *text = sptd_store_column_text(stmt, 0);
		int w = text ? (int)strlen(text) : 0;

		if (!text)
			continue;
		if (inline_sep) {
			if (col && col + 2 + w > 78) {
				fputc('\n', s->out);
				col = 0;
			}
			fputs(col ? "  " : "", s->out);
			sptd_query_put_shown(s->out, text, 0);
			col += (col ? 2 : 0) + w;
		} else {
			sptd_query_put_shown(s->out, text, 1);
			fputc('\n', s->out);
		}
	}
	if (rc >= 0 && step < 0) {
		rc = step;
		snprintf(err, sizeof(err), "%s", sptd_store_errmsg(s->inc[0].st));
	}
	if (col)
		fputc('\n', s->out);
	sptd_store_finalize(stmt);
	if (rc < 0)
		sptd_query_session_error(s, NULL, err, rc);
	fflush(s->out);
	return rc;
}

/* Run the SQL statements in file @path. */
static int read_file(struct sptd_query_session *s, const char *path)
{
	struct sptd_query_buf text = { 0 };
	char chunk[8192], err[512];
	size_t n;
	int rc = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		rc = -errno;
		snprintf(err, sizeof(err), ".read %s: %s", path, strerror(errno));
		sptd_query_session_error(s, NULL, err, rc);
		return rc;
	}
	while (rc == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		rc = sptd_query_buf_add(&text, chunk, n);
	if (rc == 0 && ferror(f))
		rc = -EIO;
	fclose(f);
	if (rc == 0 && text.len != strlen(text.data ? text.data : ""))
		rc = -EINVAL;   /* a NUL byte: not SQL text */
	if (rc < 0) {
		snprintf(err, sizeof(err), ".read %s: %s", path, rc == -EINVAL ?
		         "not a text file" : strerror(-rc));
		sptd_query_session_error(s, NULL, err, rc);
	} else if (text.len) {
		rc = sptd_query_session_sql(s, text.data);
	}
	sptd_query_buf_fini(&text);
	return rc;
}

/* One dot command.  1: leave the shell; 0: go on. */
static int dot_command(struct sptd_query_session *s, char *line)
{
	char *w[4], err[256];
	int n = split_words(line, w, 4);
	const char *cmd = n ? w[0] : ".";

	if (strcmp(cmd, ".quit") == 0 || strcmp(cmd, ".exit") == 0 || strcmp(cmd, ".q") == 0)
		return 1;
	if (strcmp(cmd, ".help") == 0) {
		fputs(shell_help, s->msg);
	} else if (strcmp(cmd, ".tables") == 0) {
		print_lines(s, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
		            "AND name NOT LIKE 'sqlite_%' ORDER BY name", NULL, 1);
	} else if (strcmp(cmd, ".schema") == 0) {
		print_lines(s, "SELECT sql || ';' FROM sqlite_master WHERE sql IS NOT NULL "
		            "AND name NOT LIKE 'sqlite_%' AND (?1 IS NULL OR tbl_name = ?1) "
		            "ORDER BY type = 'index', tbl_name, name", n > 1 ? w[1] : NULL, 0);
	} else if (strcmp(cmd, ".report") == 0) {
		if (n < 2) {
			const char *const *names = sptd_query_report_names();

			for (; *names; names++)
				fprintf(s->msg, "%-10s %s\n", *names, sptd_query_report_describe(*names));
		} else {
			sptd_query_session_report(s, w[1]);
		}
	} else if (strcmp(cmd, ".mode") == 0) {
		enum sptd_query_format fmt;

		if (n < 2)
			fprintf(s->msg, "%s\n", mode_names[s->opts.format]);
		else if (sptd_query_format_parse(w[1], &fmt) < 0)
			sptd_query_session_error(s, NULL, ".mode: table, csv or json", -EINVAL);
		else
			s->opts.format = fmt;
	} else if (strcmp(cmd, ".incidents") == 0) {
		for (size_t i = 0; i < s->n; i++) {
			sptd_query_put_shown(s->msg, s->inc[i].label, 0);
			fputc('\n', s->msg);
		}
	} else if (strcmp(cmd, ".read") == 0) {
		if (n < 2)
			sptd_query_session_error(s, NULL, ".read needs a FILE", -EINVAL);
		else
			read_file(s, w[1]);
	} else {
		snprintf(err, sizeof(err), "unknown command '%s' (.help lists them)", cmd);
		sptd_query_session_error(s, NULL, err, -EINVAL);
	}
	return 0;
}

/* What the shell has read of a statement not yet run. */
struct shell_pending {
	struct sptd_query_buf text;   /* the lines, as typed */
	unsigned line;                /* the input line @text starts on */
	int named;                    /* name each statement's line in its errors
	                               * (input from a file, not a terminal) */
};

/* Run the first statement of @p, through @span's bytes, and drop it. */
static void run_first(struct sptd_query_session *s, struct shell_pending *p,
                      const struct sptd_store_sql_span *span)
{
	struct sptd_query_buf *b = &p->text;

	if (p->named)
		snprintf(s->where, sizeof(s->where), "line %u", p->line + span->line - 1);
	b->data[span->start + span->len] = '\0';
	sptd_query_session_statement(s, b->data + span->start);
	s->where[0] = '\0';
	memmove(b->data, b->data + span->used, b->len - span->used + 1);
	b->len -= span->used;
	p->line += span->lines_used;
}

/* Run every complete statement at the start of @p and drop it; keep an
 * incomplete one.  Returns 1 when something is still pending. */
static int run_complete(struct sptd_query_session *s, struct shell_pending *p)
{
	struct sptd_store_sql_span span;
	int rc;

	while (p->text.len) {
		rc = sptd_store_sql_next(p->text.data, &span);
		if (rc < 0) {
			sptd_query_session_error(s, NULL, "out of memory", rc);
			sptd_query_buf_clear(&p->text);
			return 0;
		}
		if (rc == 0) {
			sptd_query_buf_clear(&p->text);   /* blanks, comments, ';' */
			return 0;
		}
		if (!span.complete)
			return 1;
		run_first(s, p, &span);
	}
	return 0;
}

int sptd_query_session_shell(struct sptd_query_session *s, FILE *in, int interactive)
{
	struct shell_pending pending = { .named = !interactive };
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	unsigned lineno = 0;
	int more = 0, rc = 0;

	if (!s || !in)
		return -EINVAL;
	if (interactive) {
		fprintf(s->msg, "sysptd query shell on %zu incident%s%s", s->n, s->n == 1 ? "" : "s",
		        s->n == 1 ? ": " : "");
		sptd_query_put_shown(s->msg, s->n == 1 ? s->inc[0].label : "", 0);
		fputs(".  End SQL with ';'; .help for commands, .quit to leave.\n", s->msg);
	}
	for (;;) {
		char *p;

		if (interactive) {
			fputs(more ? PROMPT_MORE : PROMPT, s->msg);
			fflush(s->msg);
		}
		errno = 0;
		got = getline(&line, &cap, in);
		if (got < 0) {
			if (interactive && errno == EINTR) {
				/* Ctrl+C: drop the statement being typed, prompt again */
				clearerr(in);
				sptd_query_buf_clear(&pending.text);
				more = 0;
				fputc('\n', s->msg);
				continue;
			}
			if (ferror(in))
				rc = -EIO;
			if (interactive)
				fputc('\n', s->msg);
			break;
		}
		lineno++;
		if ((size_t)got != strlen(line)) {
			sptd_query_session_error(s, NULL, "a line holds a NUL byte: ignored", -EINVAL);
			continue;
		}
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (!more && *p == '.') {
			if (dot_command(s, p))
				break;
			continue;
		}
		if (!pending.text.len)
			pending.line = lineno;
		if (sptd_query_buf_add(&pending.text, line, (size_t)got) < 0) {
			sptd_query_session_error(s, NULL, "out of memory", -ENOMEM);
			rc = -ENOMEM;
			break;
		}
		more = run_complete(s, &pending);
	}
	/* input ended inside a statement: run it as sqlite3 does */
	if (rc == 0 && more && pending.text.len) {
		struct sptd_store_sql_span span;

		if (sptd_store_sql_next(pending.text.data, &span) > 0)
			run_first(s, &pending, &span);
	}
	free(line);
	sptd_query_buf_fini(&pending.text);
	return rc;
}
