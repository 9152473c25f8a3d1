/* demangle.c — symbol names for people: C++ (Itanium ABI) through the C++
 * runtime's demangler, Rust legacy names (which are Itanium-shaped) through
 * the same demangler plus Rust's own escapes and hash suffix.
 *
 * Rust v0 names ("_R...") are left mangled: the C++ runtime does not know
 * them and a v0 demangler is a project of its own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_dec.h"
#include "symfile-local.h"

/* From the C++ runtime (libstdc++/libc++abi, linked as stdc++): returns a
 * malloc'd demangled name or NULL with *status < 0. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* A Rust legacy symbol is an Itanium nested name whose last component is
 * "h" + 16 hex digits: "_ZN...17h0123456789abcdefE". */
static int is_rust_legacy(const char *mangled)
{
	size_t n = strlen(mangled);
	const char *tail;

	if (n < 3 + 20 || strncmp(mangled, "_ZN", 3) != 0 || mangled[n - 1] != 'E')
		return 0;
	tail = mangled + n - 20; /* "17h" + 16 hex + "E" */
	if (strncmp(tail, "17h", 3) != 0)
		return 0;
	for (int i = 3; i < 19; i++)
		if (!is_hex(tail[i]))
			return 0;
	return 1;
}

/* Rust legacy escapes: "$LT$" -> '<', "$u7b$" -> '{', ".." -> "::", ... */
static const struct {
	const char *esc;
	char c;
} rust_escapes[] = {
	{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' },
	{ "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/* Rewrite @s in place (the result is never longer). */
static void rust_unescape(char *s)
{
	char *out = s;
	int component_start = 1;

	while (*s) {
		size_t i;
		int done = 0;

		/* rustc prefixes a path component that begins with '$' by '_' */
		if (component_start && s[0] == '_' && s[1] == '$')
			s++;
		component_start = 0;
		if (s[0] == ':' && s[1] == ':') {
			*out++ = *s++;
			*out++ = *s++;
			component_start = 1;
			continue;
		}

		if (s[0] == '.' && s[1] == '.') {
			*out++ = ':';
			*out++ = ':';
			s += 2;
			continue;
		}
		if (*s == '$') {
			for (i = 0; i < sizeof(rust_escapes) / sizeof(rust_escapes[0]); i++) {
				size_t n = strlen(rust_escapes[i].esc);

				if (strncmp(s, rust_escapes[i].esc, n) == 0) {
					*out++ = rust_escapes[i].c;
					s += n;
					done = 1;
					break;
				}
			}
			if (!done && s[1] == 'u' && is_hex(s[2]) && is_hex(s[3]) && s[4] == '$') {
				char hex[3] = { s[2], s[3], '\0' };

				*out++ = (char)strtol(hex, NULL, 16);
				s += 5;
				done = 1;
			}
			if (done)
				continue;
		}
		*out++ = *s++;
	}
	*out = '\0';
}

char *sptd_dec_demangle_dup(const char *mangled)
{
	char *name;
	int status = 0;
	size_t n;

	if (!mangled || strncmp(mangled, "_Z", 2) != 0)
		return NULL;
	name = __cxa_demangle(mangled, NULL, NULL, &status);
	if (!name || status != 0) {
		free(name);
		return NULL;
	}
	if (is_rust_legacy(mangled)) {
		n = strlen(name);
		/* drop "::h0123456789abcdef" */
		if (n > 19 && strncmp(name + n - 19, "::h", 3) == 0)
			name[n - 19] = '\0';
		rust_unescape(name);
	}
	return name;
}

int sptd_dec_demangle(const char *mangled, char *buf, size_t len)
{
	char *name;
	size_t n;
	int ret;

	if (!mangled || !buf || len == 0)
		return -EINVAL;
	name = sptd_dec_demangle_dup(mangled);
	if (!name) {
		/* Not mangled (or a kind left as is): hand back a copy. */
		n = strlen(mangled);
		ret = -EINVAL;
		if (n >= len)
			n = len - 1;
		memcpy(buf, mangled, n);
		buf[n] = '\0';
		return ret;
	}
	n = strlen(name);
	ret = n > INT32_MAX ? INT32_MAX : (int)n;
	if (n >= len)
		n = len - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	free(name);
	/* Like snprintf: the full length, even when @buf held less. */
	return ret;
}
