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
 * libraries is about 1 KiB.
 *
 * Nor is the output bounded by the input: a name whose template arguments
 * refer back to the previous ones twice ("_Z1f1aIS_S_E1aIS0_S0_E...")
 * doubles its text with every group, and 457 bytes of it kept a import
 * busy for as long as it ran, gigabytes of memory and growing (the
 * recorder loads the same symbols).  C++ and Rust go through libiberty's
 * callback demanglers, which allocate nothing, into a buffer of at most
 * DEMANGLE_MAX_OUT bytes; past it the walk is left (longjmp) and the name
 * stays mangled.  D has no callback demangler: a D name with more than
 * DEMANGLE_MAX_DREFS back references stays mangled. */
#include <ctype.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_dec.h"
#include "symfile-local.h"

/* Longest mangled name handed to libiberty (see above). */
#define DEMANGLE_MAX_LEN 8192

/* What libiberty is asked for: parameter lists, ANSI qualifiers. */
#define DEMANGLE_FLAGS (DMGL_PARAMS | DMGL_ANSI)

/* Longest demangled name kept (see above). */
#define DEMANGLE_MAX_OUT (64 * 1024)

/* Most back references ('Q') a D name may hold to be demangled. */
#define DEMANGLE_MAX_DREFS 16

/* The demangled text as libiberty hands it over. */
struct dm_out {
	char *buf;
	size_t len, cap;
	jmp_buf full;   /* left when the text would pass DEMANGLE_MAX_OUT, or
	                 * memory ran out */
};

static void dm_sink(const char *s, size_t n, void *opaque)
{
	struct dm_out *o = opaque;

	if (n > DEMANGLE_MAX_OUT - o->len)
		longjmp(o->full, 1);
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 256;
		char *grown;

		while (cap < o->len + n + 1)
			cap *= 2;
		grown = realloc(o->buf, cap);
		if (!grown)
			longjmp(o->full, 1);
		o->buf = grown;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* @mangled by libiberty's auto style for "_Z"/"_R" names: Rust (legacy
 * and v0) first, then the Itanium ABI, as cplus_demangle(DMGL_AUTO) does;
 * within DEMANGLE_MAX_OUT.  A new string, or NULL. */
static char *callback_demangle(const char *mangled)
{
	/* on the heap: what the sink changed is still there after longjmp
	 * (a local would be indeterminate), and only @o is read then */
	struct dm_out *const o = calloc(1, sizeof(*o));
	char *name = NULL;
	int ok;

	if (!o)
		return NULL;
	if (setjmp(o->full)) {
		/* too long, or no memory: left mangled; the demanglers hold
		 * nothing on the heap, so only our buffer is left to free */
		free(o->buf);
		free(o);
		return NULL;
	}
	ok = rust_demangle_callback(mangled, DEMANGLE_FLAGS, dm_sink, o);
	if (!ok) {
		o->len = 0;
		ok = cplus_demangle_v3_callback(mangled, DEMANGLE_FLAGS, dm_sink, o);
	}
	if (ok && o->buf)
		name = o->buf;
	else
		free(o->buf);
	free(o);
	return name;
}

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
	if (mangled[0] == '_' && (mangled[1] == 'Z' || mangled[1] == 'R')) {
		name = callback_demangle(mangled);
	} else if (mangled[0] == '_' && mangled[1] == 'D') {
		size_t refs = 0;

		for (size_t i = 2; i < len; i++)
			refs += mangled[i] == 'Q';
		if (refs <= DEMANGLE_MAX_DREFS)
			name = cplus_demangle(mangled, DEMANGLE_FLAGS | DMGL_DLANG);
	}
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
