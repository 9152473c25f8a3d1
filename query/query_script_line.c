/* query_script_line.c — one event of `sysptd script` as one line, in the
 * manner of `perf script` (and `trace-cmd report`):
 *
 *     COMM   TID [CPU] SECONDS.NANOSECS: EVENT: DETAILS
 *
 * COMM and TID are the task current on that CPU (for a switch: the one
 * switching out; for a wakeup: the waker), "-" when no task is known
 * (a gap, a CPU with no sched data then); CPU "---" when the event is tied
 * to none.  A sample's call stack follows on indented lines, innermost
 * frame first, "ADDR SYMBOL (DSO)" as perf prints them ("[unknown]" for
 * what could not be named).  Every text that comes from the incident is
 * escaped: one event stays one line. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script-local.h"

void sptd_query_script_text(FILE *out, const char *text)
{
	size_t n = text ? strlen(text) : 0, i = 0;

	while (i < n) {
		unsigned char c = (unsigned char)text[i];
		int len;

		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\x%02x", c);
			i++;
			continue;
		}
		len = sptd_query_utf8_seq(text + i, n - i);
		if (len <= 0) {
			fputc('?', out);
			i++;
		} else {
			fwrite(text + i, 1, (size_t)len, out);
			i += (size_t)len;
		}
	}
}

/* Copy @text into @buf (@len bytes) with what sptd_query_script_text()
 * would escape replaced by '?' (names are printed in a padded column). */
static void printable(char *buf, size_t len, const char *text)
{
	size_t i = 0, o = 0, n = text ? strlen(text) : 0;

	while (i < n && o + 1 < len) {
		unsigned char c = (unsigned char)text[i];
		int sl = c < 0x20 || c == 0x7f ? 0 : sptd_query_utf8_seq(text + i, n - i);

		if (sl <= 0 || o + (size_t)sl >= len) {
			if (sl > 0)
				break;   /* a character that does not fit: stop before it */
			buf[o++] = '?';
			i++;
			continue;
		}
		memcpy(buf + o, text + i, (size_t)sl);
		o += (size_t)sl;
		i += (size_t)sl;
	}
	buf[o] = '\0';
}

const struct script_task *sptd_query_script_task(struct script *s, int64_t utid)
{
	static const char sql[] = "SELECT tid, name FROM thread WHERE utid = ?1";
	struct script_task *t = &s->tasks[(uint64_t)utid % SCRIPT_TASK_CACHE];

	if (t->used && t->utid == utid)
		return t;
	if (!s->thread_stmt && sptd_query_prepare(s->st, sql, &s->thread_stmt, NULL, 0) < 0)
		return NULL;
	sptd_store_reset(s->thread_stmt);
	if (sptd_store_bind_int(s->thread_stmt, 1, utid) < 0 || sptd_store_step(s->thread_stmt) != 1) {
		sptd_store_reset(s->thread_stmt);
		return NULL;
	}
	t->utid = utid;
	t->used = 1;
	t->tid = sptd_store_column_int(s->thread_stmt, 0);
	printable(t->comm, sizeof(t->comm), sptd_store_column_text(s->thread_stmt, 1));
	if (!t->comm[0])
		snprintf(t->comm, sizeof(t->comm), ":%" PRId64, t->tid);
	sptd_store_reset(s->thread_stmt);
	return t;
}

/* The thread of column @col (NULL when the column is NULL or unknown). */
static const struct script_task *col_task(struct script *s, struct script_stream *ss, int col)
{
	if (sptd_store_column_type(ss->stmt, col) == SPTD_STORE_NULL)
		return NULL;
	return sptd_query_script_task(s, sptd_store_column_int(ss->stmt, col));
}

/* Text of column @col, "" for NULL. */
static const char *col_text(struct script_stream *ss, int col)
{
	const char *t = sptd_store_column_text(ss->stmt, col);

	return t ? t : "";
}

/* "COMM TID [CPU] SECONDS: " */
static void prefix(struct script *s, struct script_stream *ss)
{
	const struct script_task *t = col_task(s, ss, 2);
	/* both from the file: the difference saturates instead of wrapping */
	int64_t ts = sptd_sat_sub(ss->ts, s->zero);
	uint64_t mag = ts < 0 ? (uint64_t)0 - (uint64_t)ts : (uint64_t)ts;
	char tid[24], when[32];

	if (t)
		snprintf(tid, sizeof(tid), "%" PRId64, t->tid);
	fprintf(s->out, "%16s %6s ", t ? t->comm : "-", t ? tid : "-");
	if (sptd_store_column_type(ss->stmt, 1) == SPTD_STORE_NULL)
		fputs("[---] ", s->out);
	else
		fprintf(s->out, "[%03" PRId64 "] ", sptd_store_column_int(ss->stmt, 1));
	snprintf(when, sizeof(when), "%s%" PRIu64 ".%09" PRIu64, ts < 0 ? "-" : "",
	         mag / 1000000000u, mag % 1000000000u);
	fprintf(s->out, "%15s: ", when);   /* perf's "%5lu.%09lu" */
}

/* " (12.345 us)" for column @col in ns. */
static void duration(struct script *s, struct script_stream *ss, int col)
{
	char text[32];

	fprintf(s->out, " (%s)", sptd_query_duration_text(sptd_store_column_int(ss->stmt, col),
	                                                     text, sizeof(text)));
}

/* "comm=X pid=N" of the thread in column @col ("comm=? pid=?" unknown). */
static void task_fields(struct script *s, struct script_stream *ss, int col,
                        const char *pfx)
{
	const struct script_task *t = col_task(s, ss, col);

	if (t)
		fprintf(s->out, "%scomm=%s %spid=%" PRId64, pfx, t->comm, pfx, t->tid);
	else
		fprintf(s->out, "%scomm=? %spid=?", pfx, pfx);
}

static void line_switch(struct script *s, struct script_stream *ss)
{
	fputs("sched:sched_switch: ", s->out);
	task_fields(s, ss, 2, "prev_");
	if (sptd_store_column_type(ss->stmt, 5) == SPTD_STORE_NULL)
		fputs(" prev_prio=?", s->out);
	else
		fprintf(s->out, " prev_prio=%" PRId64, sptd_store_column_int(ss->stmt, 5));
	fputs(" prev_state=", s->out);
	sptd_query_script_text(s->out, sptd_store_column_type(ss->stmt, 4) == SPTD_STORE_NULL ?
	                       "?" : col_text(ss, 4));
	fputs(" ==> ", s->out);
	task_fields(s, ss, 3, "next_");
	fprintf(s->out, " next_prio=%" PRId64 "\n", sptd_store_column_int(ss->stmt, 6));
}

/* A hard irq (@irq) or softirq entry/exit. */
static void line_irq(struct script *s, struct script_stream *ss, int irq, int entry)
{
	int64_t num = sptd_store_column_int(ss->stmt, 4);

	if (irq && entry) {
		fprintf(s->out, "irq:irq_handler_entry: irq=%" PRId64 " name=", num);
		sptd_query_script_text(s->out, col_text(ss, 5));
	} else if (irq) {
		int64_t ret = sptd_store_column_int(ss->stmt, 6);

		fprintf(s->out, "irq:irq_handler_exit: irq=%" PRId64 " ret=%s", num,
		        ret == 1 ? "handled" : ret == 0 ? "unhandled" : "unknown");
		duration(s, ss, 7);
	} else {
		fprintf(s->out, "irq:softirq_%s: vec=%" PRId64 " [action=", entry ? "entry" : "exit",
		        num);
		sptd_query_script_text(s->out, col_text(ss, 5));
		fputc(']', s->out);
		if (!entry)
			duration(s, ss, 7);
	}
	fputc('\n', s->out);
}

/* A call slice's call or return: "call:   SYMBOL (DSO)" indented by depth. */
static void line_call(struct script *s, struct script_stream *ss, int call)
{
	int64_t depth = sptd_store_column_int(ss->stmt, 4), flags = sptd_store_column_int(ss->stmt, 6);
	const char *kind = col_text(ss, 5);

	/* a depth from the file: at most 64 levels of indent, none below 0 */
	fprintf(s->out, "%s: %*s", call ? "call" : "return",
	        (int)(depth > 64 ? 128 : depth < 0 ? 0 : depth * 2), "");
	sptd_query_script_text(s->out, sptd_store_column_type(ss->stmt, 7) == SPTD_STORE_NULL ?
	                       "[unknown]" : col_text(ss, 7));
	fputs(" (", s->out);
	sptd_query_script_text(s->out, sptd_store_column_type(ss->stmt, 8) == SPTD_STORE_NULL ?
	                       "[unknown]" : col_text(ss, 8));
	fputc(')', s->out);
	if (strcmp(kind, "user") != 0) {
		fputs(" [", s->out);
		sptd_query_script_text(s->out, kind);
		fputc(']', s->out);
	}
	if (call && (flags & SPTD_SLICE_F_START_TRUNCATED))
		fputs(" (began before the trace)", s->out);
	if (call && (flags & SPTD_SLICE_F_INFERRED))
		fputs(" (inferred: its call is not in the trace)", s->out);
	if (!call)
		duration(s, ss, 9);
	if (!call && (flags & SPTD_SLICE_F_END_TRUNCATED))
		fputs(" (still running at the end)", s->out);
	fputc('\n', s->out);
}

/* The frames of callsite @id, innermost first, one indented line each. */
static int stack(struct script *s, int64_t id)
{
	static const char sql[] =
		"SELECT c.parent_id, c.addr, sym.name, d.path, c.depth FROM callsite c "
		"LEFT JOIN symbol sym ON sym.id = c.symbol_id LEFT JOIN dso d ON d.id = sym.dso_id "
		"WHERE c.id = ?1";
	int rc, frames = 0, cut = 1;
	int64_t depth = 0;

	if (!s->frame_stmt) {
		rc = sptd_query_prepare(s->st, sql, &s->frame_stmt, NULL, 0);
		if (rc < 0)
			return rc;
	}
	/* parent links could loop in a hostile file: at most 1024 frames */
	while (frames++ < 1024) {
		const char *name, *path;
		int64_t parent;

		sptd_store_reset(s->frame_stmt);
		rc = sptd_store_bind_int(s->frame_stmt, 1, id);
		if (rc >= 0)
			rc = sptd_store_step(s->frame_stmt);
		if (rc <= 0)
			break;
		/* each caller is one level out (callsite.depth): a parent not
		 * shallower than its child is a loop in a hostile file (A -> B ->
		 * A printed as a 1024-frame stack), and the stack ends there */
		if (frames > 1 && sptd_store_column_int(s->frame_stmt, 4) >= depth)
			break;
		depth = sptd_store_column_int(s->frame_stmt, 4);
		name = sptd_store_column_text(s->frame_stmt, 2);
		path = sptd_store_column_text(s->frame_stmt, 3);
		fprintf(s->out, "\t%16" PRIx64 " ", (uint64_t)sptd_store_column_int(s->frame_stmt, 1));
		sptd_query_script_text(s->out, name ? name : "[unknown]");
		fputs(" (", s->out);
		sptd_query_script_text(s->out, path ? path : "[unknown]");
		fputs(")\n", s->out);
		if (sptd_store_column_type(s->frame_stmt, 0) == SPTD_STORE_NULL) {
			cut = 0;   /* the root: the whole stack was printed */
			break;
		}
		parent = sptd_store_column_int(s->frame_stmt, 0);
		if (parent == id)
			break;
		id = parent;
	}
	sptd_store_reset(s->frame_stmt);
	if (rc < 0)
		return rc;
	/* stopped before a root (1024 frames, a loop, a parent not there):
	 * said, as the export says it */
	if (cut && frames > 1)
		fputs("\t[stack cut]\n", s->out);
	return 0;
}

/* Another tracepoint's row: "ftrace: col=value ..." (name first when the
 * table has a name column). */
/* A flat JSON object of sysptd's (ftrace_event.args) as trace-cmd prints
 * fields: "k=v k=v", strings without their quotes; anything else as is. */
static void json_flat(FILE *out, const char *j)
{
	int in_str = 0, key = 1, depth = 0;
	char *buf;
	size_t n = 0;

	if (!j || *j != '{' || !(buf = malloc(strlen(j) + 1))) {
		/* not an object (or no memory): as it is */
		sptd_query_script_text(out, j ? j : "");
		return;
	}
	/* never longer than @j: every byte gives at most one; an object or
	 * array inside a value is printed as it is, its commas and colons
	 * included (a '}' of one ended the line and hid what followed) */
	for (j++; *j; j++) {
		if (depth > 0) {
			/* inside a nested value: its bytes as they are, strings
			 * followed only so that their braces do not count */
			buf[n++] = *j;
			if (in_str && *j == '\\' && j[1])
				buf[n++] = *++j;
			else if (*j == '"')
				in_str = !in_str;
			else if (!in_str && (*j == '{' || *j == '['))
				depth++;
			else if (!in_str && (*j == '}' || *j == ']'))
				depth--;
		} else if (in_str) {
			if (*j == '\\' && j[1]) {
				if (j[1] == 'u') {
					buf[n++] = '?';
					j += j[2] && j[3] && j[4] && j[5] ? 5 : 1;
				} else {
					buf[n++] = *++j;
				}
			} else if (*j == '"') {
				in_str = 0;
			} else {
				buf[n++] = *j;
			}
		} else if (*j == '"') {
			in_str = 1;
		} else if (*j == '{' || *j == '[') {
			depth++;
			buf[n++] = *j;
		} else if (*j == '}') {
			break;
		} else if (*j == ':' && key) {
			buf[n++] = '=';
			key = 0;
		} else if (*j == ',') {
			buf[n++] = ' ';
			key = 1;
		} else {
			buf[n++] = *j;
		}
	}
	buf[n] = '\0';
	sptd_query_script_text(out, buf);
	free(buf);
}

static void line_ftrace(struct script *s, struct script_stream *ss)
{
	int name_col = -1, args_col = -1;

	for (int i = 4; i < s->ftrace_ncols; i++) {
		const char *col = sptd_store_column_name(ss->stmt, i);

		if (col && strcmp(col, "name") == 0)
			name_col = i;
		else if (col && strcmp(col, "args") == 0)
			args_col = i;
	}
	if (name_col >= 0 && args_col >= 0) {
		/* sysptd's own table: "SYS:EVENT: field=value ..." as trace-cmd */
		sptd_query_script_text(s->out, col_text(ss, name_col));
		fputs(": ", s->out);
		json_flat(s->out, col_text(ss, args_col));
		fputc('\n', s->out);
		return;
	}
	fputs("ftrace:", s->out);
	for (int i = 4; i < s->ftrace_ncols; i++) {
		const char *name = sptd_store_column_name(ss->stmt, i);

		fputc(' ', s->out);
		sptd_query_script_text(s->out, name ? name : "?");
		fputc('=', s->out);
		sptd_query_script_text(s->out, sptd_store_column_type(ss->stmt, i) == SPTD_STORE_NULL ?
		                       "" : col_text(ss, i));
	}
	fputc('\n', s->out);
}

/* ---- returns held back ---------------------------------------------------- */

/* Thread and depth of a call or return row; 0 when the thread is NULL. */
static int row_nest(const struct script_stream *ss, int64_t *utid, int64_t *depth)
{
	if (sptd_store_column_type(ss->stmt, 2) == SPTD_STORE_NULL)
		return 0;
	*utid = sptd_store_column_int(ss->stmt, 2);
	*depth = sptd_store_column_int(ss->stmt, 4);
	return 1;
}

int sptd_query_script_call_inside(const struct script_stream *call,
                                  const struct script_stream *ret)
{
	int64_t cu, cd, ru, rd;

	return call && ret && call->has_row && ret->has_row && call->ts == ret->ts &&
	       row_nest(call, &cu, &cd) && row_nest(ret, &ru, &rd) && cu == ru && cd > rd;
}

/* Hold back the return of the call of no length in @ss's row (its line
 * formatted now, while the row is current).  0 or -ENOMEM. */
static int hold_return(struct script *s, struct script_stream *ss)
{
	struct script_pending *p;
	FILE *out = s->out, *mem;
	char *line = NULL;
	size_t len = 0;
	int64_t utid = -1, depth = 0;

	row_nest(ss, &utid, &depth);
	if (s->npend == s->cappend) {
		size_t cap = s->cappend ? s->cappend * 2 : 16;

		p = realloc(s->pend, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->pend = p;
		s->cappend = cap;
	}
	mem = open_memstream(&line, &len);
	if (!mem)
		return -ENOMEM;
	s->out = mem;
	prefix(s, ss);
	line_call(s, ss, 0);
	s->out = out;
	if (fclose(mem) != 0 || !line) {
		free(line);
		return -ENOMEM;
	}
	/* a NULL thread nests in nothing: out before the next row */
	s->pend[s->npend++] = (struct script_pending){ .ts = ss->ts, .utid = utid,
	                                               .depth = depth, .line = line };
	return 0;
}

void sptd_query_script_flush(struct script *s, const struct script_stream *ss)
{
	int64_t utid = 0, depth = 0;
	int nests = ss && ss->kind == SCRIPT_CALL && row_nest(ss, &utid, &depth);

	while (s->npend) {
		struct script_pending *p = &s->pend[s->npend - 1];

		/* a deeper call of its thread at its instant runs inside it */
		if (nests && p->utid >= 0 && ss->ts == p->ts && utid == p->utid && depth > p->depth)
			break;
		fputs(p->line, s->out);
		free(p->line);
		s->npend--;
		s->lines++;
	}
}

void sptd_query_script_pending_free(struct script *s)
{
	while (s->npend)
		free(s->pend[--s->npend].line);
	free(s->pend);
	s->pend = NULL;
	s->cappend = 0;
}

int sptd_query_script_line(struct script *s, struct script_stream *ss)
{
	int rc = 0;

	prefix(s, ss);
	switch (ss->kind) {
	case SCRIPT_SWITCH:
		line_switch(s, ss);
		break;
	case SCRIPT_WAKEUP:
		fputs("sched:sched_waking: ", s->out);
		task_fields(s, ss, 3, "");
		if (sptd_store_column_int(ss->stmt, 4) & 32)
			fputs(" irq_context=hardirq", s->out);
		else if (sptd_store_column_int(ss->stmt, 4) & 64)
			fputs(" irq_context=softirq", s->out);
		fputc('\n', s->out);
		break;
	case SCRIPT_IRQ_ENTRY:
	case SCRIPT_IRQ_EXIT:
		line_irq(s, ss, 1, ss->kind == SCRIPT_IRQ_ENTRY);
		break;
	case SCRIPT_SOFTIRQ_ENTRY:
	case SCRIPT_SOFTIRQ_EXIT:
		line_irq(s, ss, 0, ss->kind == SCRIPT_SOFTIRQ_ENTRY);
		break;
	case SCRIPT_CALL:
	case SCRIPT_RETURN:
		line_call(s, ss, ss->kind == SCRIPT_CALL);
		/* a call of no length: the returns stream leaves it out, its
		 * return is held back until the calls nested in it at its
		 * instant are out (sptd_query_script_flush) */
		if (ss->kind == SCRIPT_CALL && sptd_store_column_type(ss->stmt, 9) == SPTD_STORE_INT &&
		    sptd_store_column_int(ss->stmt, 9) == 0)
			rc = hold_return(s, ss);
		break;
	case SCRIPT_SAMPLE:
		fprintf(s->out, "%s:\n", s->sample_event);
		if (!s->o->no_stack && sptd_store_column_type(ss->stmt, 4) != SPTD_STORE_NULL)
			rc = stack(s, sptd_store_column_int(ss->stmt, 4));
		break;
	case SCRIPT_GAP: {
		char text[32];

		fprintf(s->out, "gap: %s: ", sptd_query_duration_text(sptd_store_column_int(ss->stmt, 4),
		                                                      text, sizeof(text)));
		sptd_query_script_text(s->out, col_text(ss, 5));
		fputc('\n', s->out);
		break;
	}
	case SCRIPT_TRIGGER:
		fputs("trigger: ", s->out);
		sptd_query_script_text(s->out, col_text(ss, 4));
		if (sptd_store_column_type(ss->stmt, 5) != SPTD_STORE_NULL) {
			fputs(": ", s->out);
			sptd_query_script_text(s->out, col_text(ss, 5));
		}
		fputc('\n', s->out);
		break;
	case SCRIPT_FTRACE:
		line_ftrace(s, ss);
		break;
	default:
		fputc('\n', s->out);
		break;
	}
	if (rc >= 0 && ferror(s->out))
		rc = -EIO;
	return rc;
}
