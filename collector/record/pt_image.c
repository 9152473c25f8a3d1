/* pt_image.c — code that PT decoding needs and no file holds: anonymous
 * executable mappings (JIT), the vDSO, and the kernel's code as it is in
 * memory (alternatives, static keys and ftrace patch it at boot and at run
 * time, so vmlinux on disk is not what ran).
 *
 * User code comes out of /proc/PID/mem at capture time; the kernel's out of
 * /proc/kcore (an ELF core file: one PT_LOAD per region of kernel memory,
 * the module area one of them, as perf record --kcore copies it): the text
 * between _stext and _etext as /proc/kallsyms names them, each module's
 * text from /proc/modules, and the code kallsyms lists under [bpf] and
 * [__builtin__*] (BPF JIT, ftrace and kprobe trampolines). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "pt-local.h"
#include "record-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

/* Biggest single mapping copied (a JIT heap can be large; PT only needs
 * what ran, but which part ran is not known at capture). */
#define PT_IMAGE_MAX (64u << 20)

static int64_t next_dso_id(struct sptd_store *st)
{
	int64_t id = 1;

	if (sptd_store_next_id(st, SPTD_STORE_T_DSO, &id) < 0)
		id = 1;
	return id;
}

/* Copy [start, end) of @mem (an open /proc/PID/mem) into a raw_image row. */
static int copy_range(struct sptd_store *st, int mem, const char *name, uint64_t start,
                      uint64_t end)
{
	size_t len = (size_t)(end - start);
	unsigned char *buf;
	int64_t id;
	ssize_t got;
	int ret;

	if (end <= start || len > PT_IMAGE_MAX)
		return 0;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	got = pread(mem, buf, len, (off_t)start);
	if (got <= 0) {
		free(buf);
		return 0;   /* unmapped meanwhile, or not readable: nothing to keep */
	}
	id = next_dso_id(st);
	ret = SPTD_STORE_ADD(st, dso, id, name, NULL);
	if (ret >= 0)
		ret = SPTD_STORE_ADD(st, raw_image, id, start, buf, (size_t)got, NULL);
	free(buf);
	return ret < 0 ? ret : 1;
}

static int images_of(struct sptd_store *st, int pid)
{
	char path[64], line[PATH_MAX + 128], name[64];
	FILE *maps;
	int mem, ret = 0, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return 0;   /* exited */
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0) {
		fclose(maps);
		return 0;
	}
	while (ret >= 0 && fgets(line, sizeof(line), maps)) {
		uint64_t start, end;
		char perms[8];
		int at = 0;
		const char *what;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %n", &start, &end,
		           perms, &at) < 3 || !strchr(perms, 'x'))
			continue;
		what = at ? line + at : "";
		line[strcspn(line, "\n")] = '\0';
		if (what[0] == '\0' || strncmp(what, "[anon", 5) == 0 || strncmp(what, "//anon", 6) == 0)
			snprintf(name, sizeof(name), "[anon:%d]", pid);
		else if (strcmp(what, "[vdso]") == 0)
			snprintf(name, sizeof(name), "[vdso:%d]", pid);
		else
			continue;   /* files: symcap records them by path and build-id */
		ret = copy_range(st, mem, name, start, end);
		if (ret > 0)
			n++;
	}
	close(mem);
	fclose(maps);
	return ret < 0 ? ret : n;
}

int sptd_col_pt_images_anon(struct sptd_store *st, const int *pids, int npids)
{
	int total = 0;

	if (!st || (!pids && npids > 0) || npids < 0)
		return -EINVAL;
	for (int i = 0; i < npids; i++) {
		int ret;

		if (pids[i] <= 0)
			continue;
		ret = images_of(st, pids[i]);
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

/* ---- kernel code: text, modules, JIT ---------------------------------------- */

/* Code the kernel made at run time (BPF JIT, ftrace and kprobe trampolines)
 * is named by kallsyms without a size: copied up to the next code kallsyms
 * or /proc/modules names, at most this much. */
#define PT_KERNEL_JIT_MAX (64u << 10)

enum kcode_kind {
	KCODE_TEXT,     /* _stext.._etext */
	KCODE_MODULE,   /* a module's text, from /proc/modules */
	KCODE_JIT,      /* kallsyms [bpf], [__builtin__ftrace], [__builtin__kprobes] */
};

/* One range of kernel code to copy out of kcore. */
struct kcode {
	uint64_t start, end;     /* [start, end); end 0 until ranges are sized */
	enum kcode_kind kind;
	int ksym;                /* 1: a KSYMBOL record gave end (JIT only) */
	char name[96];           /* its dso path: [kernel.text], [module:NAME], [jit:SYMBOL] */
};

/* The ranges the kernel's files name. */
struct kcode_list {
	struct kcode *v;
	size_t n, cap;
	int hidden;              /* modules listed without their address */
};

/* Add [@start, @end) named "[@prefix@what]". */
static int kcode_add(struct kcode_list *l, enum kcode_kind kind, uint64_t start, uint64_t end,
                     const char *prefix, const char *what)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct kcode *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = (struct kcode){ .start = start, .end = end, .kind = kind };
	snprintf(l->v[l->n].name, sizeof(l->v[l->n].name), "[%s%s]", prefix, what);
	l->n++;
	return 0;
}

const char *sptd_col_kernel_root(const char *root)
{
	const char *env = getenv("SPTD_KERNEL_ROOT");

	if (root)
		return root;
	return env ? env : "";
}

/* From kallsyms: _stext.._etext (-EACCES when addresses are hidden: no
 * CAP_SYSLOG, or kptr_restrict) and the start of every piece of code the
 * kernel made at run time, which kallsyms lists under a pseudo-module
 * ("[bpf]", "[__builtin__ftrace]", "[__builtin__kprobes]"). */
static int kallsyms_read(const char *root, struct kcode_list *l)
{
	char line[512];
	uint64_t stext = 0, etext = 0;
	int ret = 0;
	FILE *f;

	snprintf(line, sizeof(line), "%s/proc/kallsyms", root);
	f = fopen(line, "re");
	if (!f)
		return -errno;
	while (ret >= 0 && fgets(line, sizeof(line), f)) {
		char type, sym[256], mod[128];
		uint64_t addr;
		int n = sscanf(line, "%" SCNx64 " %c %255s %127s", &addr, &type, sym, mod);

		if (n == 3 && strcmp(sym, "_stext") == 0)
			stext = addr;
		else if (n == 3 && strcmp(sym, "_etext") == 0)
			etext = addr;
		else if (n == 4 && addr && (type == 't' || type == 'T') &&
		         (strcmp(mod, "[bpf]") == 0 || strncmp(mod, "[__builtin__", 12) == 0))
			ret = kcode_add(l, KCODE_JIT, addr, 0, "jit:", sym);
	}
	fclose(f);
	if (ret < 0)
		return ret;
	if (!stext || !etext || etext <= stext)
		return -EACCES;
	return kcode_add(l, KCODE_TEXT, stext, etext, "", "kernel.text");
}

/* From /proc/modules (kernel/module/procfs.c m_show): "NAME SIZE REFS DEPS
 * STATE 0xADDR", ADDR the text's base (0 without CAP_SYSLOG), SIZE that of
 * every part of the module (text, rodata, data), so the text is sized
 * later, up to the next code. */
static int modules_read(const char *root, struct kcode_list *l)
{
	char line[1024];
	int ret = 0;
	FILE *f;

	snprintf(line, sizeof(line), "%s/proc/modules", root);
	f = fopen(line, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;   /* a kernel without modules */
	while (ret >= 0 && fgets(line, sizeof(line), f)) {
		char name[64], state[16];
		uint64_t size, addr;

		if (sscanf(line, "%63s %" SCNu64 " %*s %*s %15s 0x%" SCNx64, name, &size, state,
		           &addr) != 4 || strcmp(state, "Live") != 0 || !size)
			continue;
		if (!addr) {
			l->hidden++;
			continue;
		}
		if (addr <= UINT64_MAX - size)
			ret = kcode_add(l, KCODE_MODULE, addr, addr + size, "module:", name);
	}
	fclose(f);
	return ret;
}

static int kcode_cmp(const void *a, const void *b)
{
	const struct kcode *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort; a module or JIT range ends where the next code starts (module
 * sizes count data too; JIT has no size), JIT at PT_KERNEL_JIT_MAX unless
 * a KSYMBOL record sized it. */
static void kcode_size(struct kcode_list *l)
{
	qsort(l->v, l->n, sizeof(*l->v), kcode_cmp);
	for (size_t i = 0; i < l->n; i++) {
		struct kcode *k = &l->v[i];
		uint64_t next = UINT64_MAX;

		for (size_t j = i + 1; j < l->n && next == UINT64_MAX; j++)
			if (l->v[j].start > k->start)
				next = l->v[j].start;
		if (k->kind == KCODE_JIT && !k->ksym)
			k->end = k->start <= UINT64_MAX - PT_KERNEL_JIT_MAX ? k->start + PT_KERNEL_JIT_MAX
			                                                    : UINT64_MAX;
		if (k->kind != KCODE_TEXT && k->end > next)
			k->end = next;
		if (k->kind != KCODE_TEXT && k->end - k->start > PT_IMAGE_MAX)
			k->end = k->start + PT_IMAGE_MAX;
	}
}

/* Copy one range out of @kcore into a dso + raw_image row.  1 copied, 0 not
 * there (*@err its errno), < 0 a store error or -ENOMEM. */
static int kcode_copy(struct sptd_store *st, const char *kcore, const struct kcode *k, int *err)
{
	void *buf = NULL;
	size_t len = 0;
	int64_t id;
	int ret;

	if (k->end <= k->start)
		return 0;
	ret = sptd_dec_elf_read_vaddr(kcore, k->start, k->end, &buf, &len);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		*err = -ret;
		return 0;
	}
	id = next_dso_id(st);
	ret = SPTD_STORE_ADD(st, dso, id, k->name, NULL);
	if (ret >= 0)
		ret = SPTD_STORE_ADD(st, raw_image, id, k->start, buf, len, NULL);
	free(buf);
	return ret < 0 ? ret : 1;
}

/* ---- KSYMBOL: the size and name of JIT code ------------------------------------ */

/* One KSYMBOL record (kernel/events/core.c perf_event_ksymbol_output). */
struct ksym {
	uint64_t time;           /* perf clock */
	uint64_t addr;           /* the code */
	uint32_t len;            /* its bytes */
	int unregister;          /* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER */
	char name[80];           /* its symbol */
};

struct ksym_list {
	struct ksym *v;
	size_t n, cap;
};

static int on_ksymbol(void *ctx, const struct sptd_col_perf_record *r)
{
	struct ksym_list *l = ctx;

	if (r->type != SPTD_PERF_RECORD_KSYMBOL || !r->len || !r->name)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct ksym *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = (struct ksym){ .time = r->id.time, .addr = r->addr, .len = r->len,
	                            .unregister = (r->ksym_flags & 1) != 0 };
	snprintf(l->v[l->n].name, sizeof(l->v[l->n].name), "%s", r->name);
	l->n++;
	return 0;
}

static int ksym_time_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* The code @pt's poke rings (read now) say is there: the last record of
 * each address, in time order across CPUs, registers or drops it.  Each
 * registered one sizes the JIT range kallsyms gave at its address, or adds
 * one.  The number sized or added, or -ENOMEM. */
static int ksyms_apply(struct sptd_col_pt *pt, struct kcode_list *l)
{
	struct ksym_list ks = { 0 };
	int ret = sptd_col_pt_pokes_read(pt), n = 0;

	if (ret >= 0)
		ret = sptd_col_pt_records(pt, on_ksymbol, &ks);
	if (ret < 0 && ret != -ENOMEM)
		ret = 0;   /* a ring not read: kallsyms alone sizes JIT code */
	if (ks.n)   /* qsort wants a valid array even for none */
		qsort(ks.v, ks.n, sizeof(*ks.v), ksym_time_cmp);
	for (size_t i = 0; i < ks.n && ret >= 0; i++) {
		const struct ksym *k = &ks.v[i];
		size_t j, later = 0;

		for (j = i + 1; j < ks.n && !later; j++)
			later = ks.v[j].addr == k->addr;
		if (later || k->unregister || k->addr > UINT64_MAX - k->len)
			continue;
		for (j = 0; j < l->n; j++)
			if (l->v[j].kind == KCODE_JIT && l->v[j].start == k->addr)
				break;
		if (j == l->n) {
			ret = kcode_add(l, KCODE_JIT, k->addr, 0, "jit:", k->name);
			if (ret < 0)
				break;
		}
		l->v[j].end = k->addr + k->len;
		l->v[j].ksym = 1;
		n++;
	}
	free(ks.v);
	return ret < 0 ? ret : n;
}

int sptd_col_pt_images_kernel(struct sptd_store *st, const char *root, struct sptd_col_pt *pt,
                              char *why, size_t whylen)
{
	struct kcode_list l = { 0 };
	char kcore[PATH_MAX], image[PATH_MAX + 160] = "kcore";
	int ret, copied = 0, modules = 0, jit = 0, missed = 0, text_err = 0, err = 0;
	int modules_err = 0, ksyms = 0;

	if (!st || !why || !whylen)
		return -EINVAL;
	why[0] = '\0';
	root = sptd_col_kernel_root(root);
	snprintf(kcore, sizeof(kcore), "%s/proc/kcore", root);
	ret = kallsyms_read(root, &l);
	if (ret == -ENOMEM)
		goto out;
	if (ret < 0) {
		snprintf(image, sizeof(image), "none: %s/proc/kallsyms: %s", root,
		         ret == -EACCES ? "kernel addresses hidden (no CAP_SYSLOG, or "
		                          "kernel.kptr_restrict)" : strerror(-ret));
		goto meta;
	}
	ret = modules_read(root, &l);
	if (ret == -ENOMEM)
		goto out;
	modules_err = ret < 0 ? -ret : 0;   /* then no module is copied: said below */
	ksyms = pt ? ksyms_apply(pt, &l) : 0;
	if (ksyms < 0) {
		ret = ksyms;
		goto out;
	}
	kcode_size(&l);
	for (size_t i = 0; i < l.n; i++) {
		int e = 0;

		ret = kcode_copy(st, kcore, &l.v[i], &e);
		if (ret < 0)
			goto out;
		copied += ret;
		if (l.v[i].kind == KCODE_TEXT && !ret)
			text_err = e;
		else if (l.v[i].kind == KCODE_MODULE)
			modules += ret;
		else if (l.v[i].kind == KCODE_JIT)
			jit += ret;
		if (l.v[i].kind != KCODE_TEXT && !ret) {
			missed++;
			err = err ? err : e;
		}
	}
	if (text_err)
		snprintf(image, sizeof(image), "none: %s: %s reading the kernel text", kcore,
		         strerror(text_err));
meta:
	/* every rewrite stamped up to now is in the copy (textpatch.c) */
	ret = sptd_store_meta_set_int(st, "pt_kernel_copied_ns", sptd_col_now_ns());
	if (ret >= 0)
		ret = sptd_store_meta_set(st, "pt_kernel_image", image);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_kernel_modules", modules);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_kernel_jit", jit);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_kernel_ksyms", ksyms);
	if (ret < 0)
		goto out;
	if (strcmp(image, "kcore") != 0)
		snprintf(why, whylen, "kernel text not captured (%s): kernel code in this incident "
		         "shows as gaps; user code decodes as usual", image + 6);
	else if (modules_err)
		snprintf(why, whylen, "kernel modules not captured (%s/proc/modules: %s): code in "
		         "modules shows as gaps", root, strerror(modules_err));
	else if (missed || l.hidden)
		snprintf(why, whylen, "%d module/JIT range(s) of kernel code not copied from %s (%s)"
		         "%s: code there shows as gaps", missed, kcore,
		         missed ? strerror(err) : "none missing",
		         l.hidden ? "; /proc/modules hides module addresses (no CAP_SYSLOG)" : "");
	ret = copied;
out:
	free(l.v);
	return ret;
}

/* ---- kernel text rewritten while PT ran -------------------------------------- */

static int on_text_poke(void *ctx, const struct sptd_col_perf_record *r)
{
	if (r->type == SPTD_PERF_RECORD_TEXT_POKE)
		(*(int *)ctx)++;
	return 0;
}

int sptd_col_pt_images_pokes(struct sptd_store *st, struct sptd_col_pt *pt)
{
	int pokes = 0, ret;

	if (!st || !pt)
		return -EINVAL;
	ret = sptd_col_pt_pokes_store(pt, st);
	if (ret >= 0)
		ret = sptd_col_pt_records(pt, on_text_poke, &pokes);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_text_pokes", pokes);
	return ret < 0 ? ret : pokes;
}
