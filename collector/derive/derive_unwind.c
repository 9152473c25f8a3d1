/* derive_unwind.c — the files `sysptd decode` unwinds a stored user stack
 * (raw_sample.ustack) with: each mapping's dso, found where the image
 * finder finds PT's code (imgfind.c: the copy embedded in the incident,
 * the image cache by build-id, or the recorded path when its build-id
 * still matches, read through the descriptor that was checked).
 *
 * A path alone proves nothing (docs/SECURITY.md): a dso without a
 * build-id is unwound only from its embedded copy; elsewhere its frames
 * stay as the stored chain has them. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "derive-local.h"
#include "sptd_col_base.h"
#include "sptd_store.h"

/* One dso row. */
struct derive_dso {
	int64_t id;                  /* dso.id */
	char *path;                  /* dso.path */
	char *build_id;              /* dso.build_id, NULL none */
};

struct sptd_col_derive_files {
	struct sptd_col_pt_imgfind *find; /* where a dso's bytes are now */
	struct derive_dso *dsos;     /* sorted by id */
	size_t ndsos, cap;           /* used / allocated */
};

static int on_dso(void *arg, const struct sptd_store_dso_row *row)
{
	struct sptd_col_derive_files *f = arg;
	struct derive_dso *d;

	/* "[kernel.kallsyms]", "//anon": no file to read; "[vdso]": its image
	 * embedded at capture (raw_file) */
	if (!row->path || (row->path[0] != '/' && strcmp(row->path, "[vdso]") != 0))
		return 0;
	if (sptd_col_grow((void **)&f->dsos, &f->cap, f->ndsos, sizeof(*f->dsos)) < 0)
		return -ENOMEM;
	d = &f->dsos[f->ndsos];
	d->id = row->id;
	d->path = strdup(row->path);
	d->build_id = row->build_id && row->build_id[0] ? strdup(row->build_id) : NULL;
	if (!d->path || (row->build_id && row->build_id[0] && !d->build_id)) {
		free(d->path);
		free(d->build_id);
		return -ENOMEM;
	}
	f->ndsos++;
	return 0;
}

static int dso_cmp(const void *a, const void *b)
{
	const struct derive_dso *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int sptd_col_derive_files_create(struct sptd_store *st, struct sptd_col_derive_files **out)
{
	struct sptd_col_derive_files *f;
	int ret;

	if (!st || !out)
		return -EINVAL;
	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	ret = SPTD_STORE_EACH(st, dso, on_dso, f);
	if (ret >= 0)
		ret = sptd_col_pt_imgfind_create(st, &f->find);
	if (ret < 0) {
		sptd_col_derive_files_destroy(f);
		return ret;
	}
	if (f->ndsos)
		qsort(f->dsos, f->ndsos, sizeof(*f->dsos), dso_cmp);
	*out = f;
	return 0;
}

int sptd_col_derive_files_open(struct sptd_col_derive_files *f, int64_t dso_id,
                               const char **name)
{
	struct derive_dso key = { .id = dso_id };
	const struct derive_dso *d;
	const char *where = NULL;
	int kind, fd;

	if (!f || !name)
		return -EINVAL;
	*name = NULL;
	d = f->ndsos ? bsearch(&key, f->dsos, f->ndsos, sizeof(*f->dsos), dso_cmp) : NULL;
	if (!d)
		return -ENOENT;
	kind = sptd_col_pt_imgfind_lookup(f->find, d->id, d->path, d->build_id, &where);
	if (kind < 0)
		return kind;
	/* without a build-id only the incident's own copy is the recorded file */
	if (!d->build_id && kind != SPTD_PT_IMAGE_EMBEDDED)
		return -ENOENT;
	/* the recorded path's answer leads to the checked descriptor, which
	 * the next lookup closes: opened now, it is that file */
	fd = open(where, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*name = d->path;
	return fd;
}

void sptd_col_derive_files_destroy(struct sptd_col_derive_files *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ndsos; i++) {
		free(f->dsos[i].path);
		free(f->dsos[i].build_id);
	}
	free(f->dsos);
	sptd_col_pt_imgfind_destroy(f->find);
	free(f);
}
