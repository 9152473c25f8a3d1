/* pt_exited.c — file mappings of processes that ran in the window but were
 * gone before the capture could read /proc/PID/maps: rebuilt from the
 * sideband's MMAP2 records into dso and raw_mmap rows, so their code still
 * decodes (from the file, the image cache or the incident, as for any
 * other process).
 *
 * The bias of a mapping comes from the file's program headers when the
 * file is still there; otherwise the file is assumed mapped as laid out
 * (start - pgoff), which only matters if a copy turns up at decode time.
 *
 * "Still there" is proven, not assumed: the path is the user's and may
 * name a root-only file by now (issue 28).  The file is read only when
 * the path names the very inode the record gives (or, for a record that
 * carries the build-id, only kept when its build-id is that one); its
 * build-id then goes into the dso row, which is what lets the image step
 * copy the file later. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pt-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

struct exited_ctx {
	struct sptd_store *st;       /* where rows go; borrowed */
	const int *pids;             /* processes to rebuild, any order */
	int npids;                   /* count of @pids */
	int rows;                    /* raw_mmap rows added */
};

static int wanted(const struct exited_ctx *c, int pid)
{
	for (int i = 0; i < c->npids; i++)
		if (c->pids[i] == pid)
			return 1;
	return 0;
}

/* The dso row of @path with @build_id (NULL: none), added when new. */
static int dso_for(struct exited_ctx *c, const char *path, const char *build_id, int64_t *id)
{
	int ret = sptd_store_dso_find(c->st, path, build_id, id);

	if (ret != 0)
		return ret < 0 ? ret : 0;
	ret = sptd_store_next_id(c->st, SPTD_STORE_T_DSO, id);
	if (ret < 0)
		return ret;
	return SPTD_STORE_ADD(c->st, dso, *id, path, build_id);
}

/* The headers of the file record @r mapped, NULL when the file at its
 * path cannot be shown to be that file.  @kernel_bid: the build-id the
 * record carries as hex, "" none. */
static struct sptd_dec_symfile *mapped_head(const struct sptd_col_perf_record *r,
                                            const char *kernel_bid)
{
	struct sptd_dec_symfile *sf = NULL;
	int fd;

	if (kernel_bid[0])
		fd = sptd_dec_file_open(r->name, 0, NULL);
	else
		fd = sptd_dec_file_open_inode(r->name, makedev(r->maj, r->min), r->ino, NULL);
	if (fd < 0)
		return NULL;
	if (sptd_dec_symfile_load_elf_head_fd(fd, &sf) < 0)
		sf = NULL;
	close(fd);
	if (sf && kernel_bid[0] &&
	    !sptd_dec_build_id_match(sptd_dec_symfile_build_id(sf), kernel_bid)) {
		sptd_dec_symfile_destroy(sf);
		sf = NULL;
	}
	return sf;
}

static int on_mmap2(void *arg, const struct sptd_col_perf_record *r)
{
	struct exited_ctx *c = arg;
	struct sptd_dec_symfile *sf = NULL;
	const char *bid = NULL;
	char kernel_bid[2 * sizeof(r->build_id) + 1] = "";
	int64_t dso_id = 0, bias;
	int ret;

	if (r->type != SPTD_PERF_RECORD_MMAP2 || !r->name || r->name[0] != '/' ||
	    r->name[1] == '/' /* "//anon" */ || r->pid <= 0 ||
	    !(r->prot & PROT_EXEC) || r->len == 0 || !wanted(c, r->pid))
		return 0;
	for (int i = 0; i < r->build_id_size && i < (int)sizeof(r->build_id); i++)
		snprintf(kernel_bid + 2 * i, 3, "%02x", r->build_id[i]);
	sf = mapped_head(r, kernel_bid);
	if (sf)
		bid = sptd_dec_symfile_build_id(sf);
	else if (kernel_bid[0])
		bid = kernel_bid;
	if (!sf || sptd_dec_symfile_bias(sf, r->addr, r->pgoff, &bias) < 0)
		bias = (int64_t)(r->addr - r->pgoff);
	ret = dso_for(c, r->name, bid, &dso_id);
	sptd_dec_symfile_destroy(sf);
	if (ret < 0)
		return ret;
	/* the same mapping seen twice (a record on two rings) is one row */
	ret = sptd_store_raw_mmap_has(c->st, r->pid, r->addr, r->addr + r->len, dso_id);
	if (ret != 0)
		return ret < 0 ? ret : 0;
	ret = SPTD_STORE_ADD(c->st, raw_mmap, r->pid, r->addr, r->addr + r->len, r->pgoff, dso_id,
	                     bias, 0);
	if (ret >= 0)
		c->rows++;
	return ret;
}

static void exited_begin(struct exited_ctx *c, struct sptd_store *st, const int *pids, int npids)
{
	memset(c, 0, sizeof(*c));
	c->st = st;
	c->pids = pids;
	c->npids = npids;
}

int sptd_col_pt_mmaps_from_records(struct sptd_store *st, const void *buf, size_t len,
                                   uint64_t sample_type, const int *pids, int npids)
{
	struct exited_ctx c;
	int ret;

	if (!st || (!buf && len) || (!pids && npids > 0) || npids < 0)
		return -EINVAL;
	if (npids == 0 || len == 0)
		return 0;
	exited_begin(&c, st, pids, npids);
	ret = sptd_col_pt_sideband_parse(buf, len, sample_type, on_mmap2, &c);
	/* records after a malformed one are lost, not the ones before */
	if (ret == -EBADMSG)
		ret = 0;
	return ret < 0 ? ret : c.rows;
}

int sptd_col_pt_mmaps_exited(const struct sptd_col_pt *pt, struct sptd_store *st,
                             const int *pids, int npids)
{
	struct exited_ctx c;
	int ret;

	if (!pt || !st || (!pids && npids > 0) || npids < 0)
		return -EINVAL;
	if (npids == 0)
		return 0;
	exited_begin(&c, st, pids, npids);
	ret = sptd_col_pt_records(pt, on_mmap2, &c);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_exited_mmaps", c.rows);
	return ret < 0 ? ret : c.rows;
}
