/* format_vet.c — a format file from an incident, rebuilt from the parts
 * sysptd needs before libtraceevent sees it.
 *
 * Format files travel inside incidents (raw_ftrace_format), so they are
 * anyone's bytes, and libtraceevent 1.7 does not survive hostile ones: its
 * print-fmt parser dereferences NULL on a print fmt naming a field the
 * format lacks, its field parser on a mangled array suffix (both found by
 * fuzzing).  So only lines of the shape the kernel writes are passed on:
 *
 *   name: IDENT            ID: DIGITS             format:
 *   <TAB>field:DECL;<TAB>offset:N;<TAB>size:N;<TAB>signed:0|1;
 *   blank lines (they separate the common fields from the event's)
 *
 * where DECL is letters, digits, '_', ' ', '*' and [DIGITS] or [] array
 * suffixes; the print fmt is replaced by an empty one (sysptd reads fields,
 * never prints events; prev_state.c reads the __print_flags table itself).
 * Any other line refuses the whole format. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched-local.h"

/* Longest line kept; kernel field lines are well under 200 bytes. */
#define VET_MAX_LINE 512

/* @n bytes at @s are decimal digits (at least one). */
static int all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

/* A field declaration: "unsigned short common_type", "char comm[16]",
 * "__data_loc char[] name", "const char * name". */
static int decl_ok(const char *s, size_t n)
{
	size_t i = 0, open = 0;
	int name = 0;

	while (i < n) {
		char c = s[i];

		if (c == '[') {
			open = ++i;
			while (i < n && s[i] != ']')
				i++;
			if (i == n || (i > open && !all_digits(s + open, i - open)))
				return 0;
			i++;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == ' ' || c == '*'))
			return 0;
		name |= c != ' ' && c != '*';
		i++;
	}
	return name;
}

/* "\tfield:DECL;\toffset:N;\tsize:N;\tsigned:0|1;" */
static int field_line_ok(const char *s, size_t n)
{
	const char *end = s + n, *semi;
	static const char *const keys[] = { "\toffset:", "\tsize:", "\tsigned:" };
	size_t i, klen;

	if (n < 7 || memcmp(s, "\tfield:", 7) != 0)
		return 0;
	s += 7;
	semi = memchr(s, ';', (size_t)(end - s));
	if (!semi || !decl_ok(s, (size_t)(semi - s)))
		return 0;
	s = semi + 1;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		klen = strlen(keys[i]);
		if ((size_t)(end - s) < klen || memcmp(s, keys[i], klen) != 0)
			return 0;
		s += klen;
		semi = memchr(s, ';', (size_t)(end - s));
		if (!semi || !all_digits(s, (size_t)(semi - s)) || semi - s > 9)
			return 0;
		s = semi + 1;
	}
	return s == end;
}

/* A header line: "name: IDENT", "ID: N" or "format:". */
static int header_line_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 7 && memcmp(s, "format:", 7) == 0)
		return 1;
	if (n > 4 && memcmp(s, "ID: ", 4) == 0)
		return all_digits(s + 4, n - 4) && n - 4 <= 9;
	if (n > 6 && memcmp(s, "name: ", 6) == 0) {
		for (i = 6; i < n; i++)
			if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
				return 0;
		return 1;
	}
	return 0;
}

int sptd_sched_format_vet(const char *text, int fields_only, char **out, int *bad_line)
{
	size_t len = strlen(text), used = 0;
	const char *p = text, *end = text + len;
	char *copy;
	int line = 0, ret = 0;

	*out = NULL;
	*bad_line = 0;
	copy = malloc(len + sizeof("\nprint fmt: \"\"\n"));
	if (!copy)
		return -ENOMEM;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);

		line++;
		if (!fields_only && n >= 10 && memcmp(p, "print fmt:", 10) == 0)
			break;   /* the rest is the print fmt: not passed on */
		if (n > VET_MAX_LINE || !(n == 0 || field_line_ok(p, n) ||
		                          (!fields_only && header_line_ok(p, n)))) {
			*bad_line = line;
			ret = -EBADMSG;
			break;
		}
		memcpy(copy + used, p, n);
		used += n;
		copy[used++] = '\n';
		p += n + 1;
	}
	if (ret < 0) {
		free(copy);
		return ret;
	}
	if (!fields_only) {
		memcpy(copy + used, "print fmt: \"\"\n", sizeof("print fmt: \"\"\n"));
	} else {
		copy[used] = '\0';
	}
	*out = copy;
	return 0;
}
