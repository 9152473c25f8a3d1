/* demangle.c — symbol names for people, as c++filt and perf show them.
 *
 * libiberty's cplus_demangle (the demangler of c++filt, gdb and perf's
 * libbfd path) with DMGL_PARAMS | DMGL_ANSI: C++ (Itanium ABI), Rust legacy
 * and Rust v0 ("_R...") in its auto style, D ("_D...") in the dlang style;
 * OCaml ("camlModule__fn_123") the way perf's ocaml_demangle_sym does it,
 * since libiberty does not know it.  No DMGL_VERBOSE: Rust names lose their
 * hash and crate disambiguators, as perf prints them (c++filt adds the
 * disambiguators, e.g. "mycrate[3c1c0]::foo").
 *
 * Untrusted names: libiberty's demangler keeps its parse state in
 * variable-length arrays on the stack, three pointers per input byte, so a
 * name longer than DEMANGLE_MAX_LEN is left mangled rather than risk the
 * stack of a decoder thread.  The longest name in Debian bookworm's
 * libraries is about 1 KiB. */
#include <ctype.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_dec.h"
#include "symfile-local.h"

/* Longest mangled name handed to libiberty (see above). */
#define DEMANGLE_MAX_LEN 8192

/* What libiberty is asked for: parameter lists, ANSI qualifiers. */
#define DEMANGLE_FLAGS (DMGL_PARAMS | DMGL_ANSI)

static int ocaml_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* OCaml native code: "caml" + a capitalised module path joined by "__",
 * "$xx" hex escapes and a "_NNN" stamp: "camlStdlib__List__map_123" ->
 * "Stdlib.List.map" (perf's rule). */
static char *ocaml_demangle(const char *mangled)
{
	size_t len = strlen(mangled), i = 4, j = 0;
	char *out;

	if (len < 5 || strncmp(mangled, "caml", 4) != 0 || !isupper((unsigned char)mangled[4]))
		return NULL;
	out = malloc(len + 1);
	if (!out)
		return NULL;
	while (i < len) {
		if (mangled[i] == '_' && mangled[i + 1] == '_') {
			out[j++] = '.';
			i += 2;
		} else if (mangled[i] == '$' && ocaml_hex(mangled[i + 1]) >= 0 &&
		           ocaml_hex(mangled[i + 2]) >= 0 &&
		           (ocaml_hex(mangled[i + 1]) | ocaml_hex(mangled[i + 2])) != 0) {
			out[j++] = (char)(ocaml_hex(mangled[i + 1]) << 4 | ocaml_hex(mangled[i + 2]));
			i += 3;
		} else {
			out[j++] = mangled[i++];
		}
	}
	out[j] = '\0';
	/* drop a trailing "_" + digits stamp */
	if (j > 0 && isdigit((unsigned char)out[j - 1])) {
		size_t k = j - 1;

		while (k > 0 && isdigit((unsigned char)out[k]))
			k--;
		if (out[k] == '_' && k > 0)
			out[k] = '\0';
	}
	return out;
}

char *sptd_dec_demangle_dup(const char *mangled)
{
	char *name = NULL;
	size_t len;

	if (!mangled)
		return NULL;
	len = strnlen(mangled, DEMANGLE_MAX_LEN + 1);
	if (len > DEMANGLE_MAX_LEN || len < 3)
		return NULL;
	if (mangled[0] == '_' && (mangled[1] == 'Z' || mangled[1] == 'R'))
		/* auto style: Rust (legacy and v0) first, then the Itanium ABI */
		name = cplus_demangle(mangled, DEMANGLE_FLAGS | DMGL_AUTO);
	else if (mangled[0] == '_' && mangled[1] == 'D')
		name = cplus_demangle(mangled, DEMANGLE_FLAGS | DMGL_DLANG);
	else if (mangled[0] == 'c')
		name = ocaml_demangle(mangled);
	if (name && (!name[0] || strcmp(name, mangled) == 0)) {
		free(name);
		name = NULL;
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
		/* Not mangled (or not a mangling we know): hand back a copy. */
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
