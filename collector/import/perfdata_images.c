/* perfdata_images.c — finding the code a perf.data mapping names, in the
 * order perf looks: the --symfs tree, the build-id cache (~/.debug), then
 * the recorded path on this machine.  A file whose GNU build-id differs
 * from the recorded one is another build and is refused.  The kernel
 * ("[kernel.kallsyms]...") is found only in a `perf record --kcore`
 * directory (DIR/kcore: an ELF core whose segments sit at kernel addresses). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata-local.h"
#include "sptd_dec.h"

static int is_file(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, R_OK) == 0;
}

/* 1 if @path is a readable file whose build-id is @build_id (or either is
 * unknown). */
static int acceptable(const char *path, const char *build_id)
{
	struct sptd_dec_symfile *sf = NULL;
	const char *have;
	int ok;

	if (!is_file(path))
		return 0;
	if (!build_id || !build_id[0])
		return 1;
	if (sptd_dec_symfile_load_elf(path, &sf) < 0)
		return 0;
	have = sptd_dec_symfile_build_id(sf);
	ok = !have || sptd_dec_build_id_match(have, build_id);
	sptd_dec_symfile_destroy(sf);
	return ok;
}

static int take(const char *cand, char *out, size_t outlen)
{
	char real[PATH_MAX];

	if (!realpath(cand, real))
		return 0;
	snprintf(out, outlen, "%s", real);
	return 1;
}

int sptd_col_perfdata_find_image(const struct sptd_col_pd_paths *paths,
                                 const char *recorded, const char *build_id,
                                 char *out, size_t outlen)
{
	char cand[PATH_MAX], dflt[PATH_MAX];
	const char *debug;

	if (!paths || !recorded || !out || !outlen)
		return -EINVAL;
	out[0] = 0;
	if (strncmp(recorded, "[kernel.kallsyms]", 17) == 0) {
		if (!paths->kcore)
			return 0;
		snprintf(cand, sizeof(cand), "%s/kcore", paths->kcore);
		return is_file(cand) ? take(cand, out, outlen) : 0;
	}
	if (recorded[0] != '/')
		return 0;        /* [vdso], //anon, [stack], modules by name */
	if (paths->symfs) {
		snprintf(cand, sizeof(cand), "%s%s", paths->symfs, recorded);
		if (acceptable(cand, build_id))
			return take(cand, out, outlen);
	}
	debug = paths->debug_dir;
	if (!debug && getenv("HOME")) {
		snprintf(dflt, sizeof(dflt), "%s/.debug", getenv("HOME"));
		debug = dflt;
	}
	if (debug && build_id && strlen(build_id) > 2) {
		if (snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s/elf", debug, build_id,
		             build_id + 2) < (int)sizeof(cand) && acceptable(cand, build_id))
			return take(cand, out, outlen);
		if (snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s", debug, build_id,
		             build_id + 2) < (int)sizeof(cand) && acceptable(cand, build_id))
			return take(cand, out, outlen);
		if (snprintf(cand, sizeof(cand), "%s%s/%s/elf", debug, recorded, build_id) <
		    (int)sizeof(cand) && acceptable(cand, build_id))
			return take(cand, out, outlen);
	}
	if (acceptable(recorded, build_id))
		return take(recorded, out, outlen);
	return 0;
}

int sptd_col_perfdata_load(struct sptd_col_pd_loaded *c, const char *path,
                           struct sptd_dec_symfile **sf)
{
	size_t k;

	for (k = 0; k < SPTD_COL_PD_LOADED_MAX; k++) {
		if (c->slot[k].path && strcmp(c->slot[k].path, path) == 0) {
			*sf = c->slot[k].sf;
			return c->slot[k].err;
		}
	}
	k = c->next;
	c->next = (c->next + 1) % SPTD_COL_PD_LOADED_MAX;
	free(c->slot[k].path);
	sptd_dec_symfile_destroy(c->slot[k].sf);
	c->slot[k].sf = NULL;
	c->slot[k].path = strdup(path);
	if (!c->slot[k].path)
		return -ENOMEM;
	c->slot[k].err = sptd_dec_symfile_load_elf(path, &c->slot[k].sf);
	if (c->slot[k].err < 0) {
		sptd_dec_symfile_destroy(c->slot[k].sf);
		c->slot[k].sf = NULL;
	}
	*sf = c->slot[k].sf;
	return c->slot[k].err;
}

void sptd_col_perfdata_loaded_fini(struct sptd_col_pd_loaded *c)
{
	for (size_t k = 0; k < SPTD_COL_PD_LOADED_MAX; k++) {
		free(c->slot[k].path);
		sptd_dec_symfile_destroy(c->slot[k].sf);
		c->slot[k].path = NULL;
		c->slot[k].sf = NULL;
	}
}
