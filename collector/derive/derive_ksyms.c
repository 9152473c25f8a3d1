/* derive_ksyms.c — names for the kernel code an incident holds as bytes
 * ([kernel.text], [module:NAME], [jit:NAME] raw_image rows), which have no
 * symbol table of their own.
 *
 * At capture the recorder hands derive the kernel's symbols as it read
 * them (kallsyms, sptd_col_derive_set_kernel_syms): every function the
 * trace enters is named from them, and its symbol row is stored (only
 * those, not the kernel's hundred thousand).  A later decode (`sysptd
 * decode`, on any machine) has no kallsyms: it names the kernel code from
 * the symbol rows the capture stored in those dsos, which are the
 * functions the same trace enters again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "derive-local.h"
#include "sptd_col_base.h"
#include "sptd_dec.h"
#include "sptd_store.h"

static const struct sptd_dec_symfile *live_ksyms;

void sptd_col_derive_set_kernel_syms(const struct sptd_dec_symfile *sf)
{
	live_ksyms = sf;
}

/* What the store's rows give: the kernel dsos, then their named symbols. */
struct ksyms_ctx {
	int64_t *dsos;             /* ids of kernel code dsos */
	size_t ndsos, capdsos;
	struct sptd_dec_sym *syms; /* names borrowed from @names */
	size_t nsyms, capsyms;
	char **names;              /* copies, one per symbol */
	size_t capnames;
};

static int is_kernel_dso(const char *path)
{
	return path && (strcmp(path, "[kernel.text]") == 0 || strncmp(path, "[module:", 8) == 0 ||
	                strncmp(path, "[jit:", 5) == 0);
}

static int on_dso(void *arg, const struct sptd_store_dso_row *row)
{
	struct ksyms_ctx *k = arg;

	if (!is_kernel_dso(row->path))
		return 0;
	if (sptd_col_grow((void **)&k->dsos, &k->capdsos, k->ndsos, sizeof(*k->dsos)) < 0)
		return -ENOMEM;
	k->dsos[k->ndsos++] = row->id;
	return 0;
}

static int on_symbol_row(void *arg, const struct sptd_store_symbol_row *row)
{
	struct ksyms_ctx *k = arg;
	size_t i;

	for (i = 0; i < k->ndsos && k->dsos[i] != row->dso_id; i++)
		;
	/* placeholders ("[kernel.text]+0x18", "0x...") name nothing */
	if (i == k->ndsos || !row->name || !row->addr || (row->addr >> 63) == 0 ||
	    strstr(row->name, "+0x") || strncmp(row->name, "0x", 2) == 0)
		return 0;
	if (sptd_col_grow((void **)&k->syms, &k->capsyms, k->nsyms, sizeof(*k->syms)) < 0 ||
	    sptd_col_grow((void **)&k->names, &k->capnames, k->nsyms, sizeof(*k->names)) < 0)
		return -ENOMEM;
	k->names[k->nsyms] = strdup(row->name);
	if (!k->names[k->nsyms])
		return -ENOMEM;
	k->syms[k->nsyms] = (struct sptd_dec_sym){ .name = k->names[k->nsyms], .addr = row->addr,
	                                          .size = row->size };
	k->nsyms++;
	return 0;
}

int sptd_col_derive_kernel_names(struct sptd_store *st, struct sptd_dec_session *s,
                                 struct sptd_dec_symfile **owned)
{
	struct ksyms_ctx k;
	int ret;

	if (!st || !s || !owned)
		return -EINVAL;
	*owned = NULL;
	if (live_ksyms)
		return sptd_dec_session_kernel_syms(s, live_ksyms) < 0 ? -EINVAL : 0;
	memset(&k, 0, sizeof(k));
	ret = SPTD_STORE_EACH(st, dso, on_dso, &k);
	if (ret >= 0 && k.ndsos)
		ret = SPTD_STORE_EACH(st, symbol, on_symbol_row, &k);
	if (ret >= 0 && k.nsyms)
		ret = sptd_dec_symfile_from_list(k.syms, k.nsyms, owned);
	if (ret >= 0 && *owned)
		ret = sptd_dec_session_kernel_syms(s, *owned) < 0 ? -EINVAL : 0;
	for (size_t i = 0; i < k.nsyms; i++)
		free(k.names[i]);
	free(k.names);
	free(k.syms);
	free(k.dsos);
	return ret < 0 ? ret : 0;
}
