/* fakepmu_genk.c — the fake kernel of a sptd-ptgen --kernel output (see
 * fakepmu_gen.h): kernel.txt's text and module into a kcore, its
 * functions into kallsyms. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakepmu_gen.h"
#include "fakepmu_kcore.h"

/* The code kernel.txt names: text and one module. */
struct genk {
	unsigned char *text, *mod;
	size_t text_len, mod_len;
	uint64_t text_addr, mod_addr;
	char mod_name[64];
};

/* Read the image @file (relative to the output @dir) into *@buf. */
static int read_image(const char *dir, const char *file, uint64_t len, unsigned char **buf,
                      size_t *got)
{
	char path[8400];
	int ret;

	if (strstr(file, ".."))
		return -EBADMSG;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ret = fakepmu_gen_read_file(path, buf, got);
	return ret < 0 ? ret : *got == len ? 0 : -EBADMSG;
}

static int read_code(const struct fakepmu_ptgen *g, struct genk *k)
{
	char path[4200], line[4400], file[4096], name[64];
	unsigned long long a, n;
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kernel.txt", g->dir);
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	while (ret >= 0 && fgets(line, sizeof(line), f)) {
		if (!k->text && sscanf(line, "text %llx %llx %4095s", &a, &n, file) == 3) {
			k->text_addr = a;
			ret = read_image(g->dir, file, n, &k->text, &k->text_len);
		} else if (!k->mod && sscanf(line, "module %63s %llx %llx %4095s", name, &a, &n,
		                             file) == 4) {
			k->mod_addr = a;
			snprintf(k->mod_name, sizeof(k->mod_name), "%s", name);
			ret = read_image(g->dir, file, n, &k->mod, &k->mod_len);
		}
	}
	fclose(f);
	if (ret >= 0 && (!k->text || k->text_addr != FAKEKERNEL_TEXT ||
	                 (k->mod && (k->mod_addr < FAKEKERNEL_MODULES ||
	                             k->mod_addr - FAKEKERNEL_MODULES + k->mod_len >
	                             FAKEKERNEL_MODULES_LEN))))
		ret = -EBADMSG;
	return ret;
}

/* Append kernel.txt's "sym ADDR TYPE NAME [MODULE]" lines to kallsyms. */
static int add_syms(const struct fakepmu_ptgen *g, const char *root)
{
	char path[4200], line[4400], type[4], name[256], mod[128];
	unsigned long long a;
	FILE *in, *out;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/kernel.txt", g->dir);
	in = fopen(path, "r");
	snprintf(path, sizeof(path), "%s/proc/kallsyms", root);
	out = in ? fopen(path, "a") : NULL;
	while (in && out && fgets(line, sizeof(line), in)) {
		int n = sscanf(line, "sym %llx %3s %255s %127s", &a, type, name, mod);

		if (n == 3)
			fprintf(out, "%016llx %s %s\n", a, type, name);
		else if (n == 4)
			fprintf(out, "%016llx %s %s\t%s\n", a, type, name, mod);
	}
	if (!in || !out)
		ret = -errno;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		ret = -EIO;
	return ret;
}

int fakepmu_gen_kernel(const struct fakepmu_ptgen *g, const char *root)
{
	struct genk k;
	struct fakepmu_kcode mod;
	int ret;

	if (!g || !root)
		return -EINVAL;
	memset(&k, 0, sizeof(k));
	ret = read_code(g, &k);
	if (ret >= 0) {
		mod = (struct fakepmu_kcode){ .name = k.mod_name, .addr = k.mod_addr,
		                              .size = k.mod_len, .code = k.mod, .len = k.mod_len };
		ret = fakepmu_kernel_write(root, k.text, k.text_len, &mod, k.mod ? 1 : 0, 0);
	}
	if (ret >= 0)
		ret = add_syms(g, root);
	free(k.text);
	free(k.mod);
	return ret;
}
