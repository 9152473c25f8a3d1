/* retention.c — --keep and --max-disk: the oldest incidents go, and only
 * incidents this service wrote.
 *
 * The manifest (outdir.c) lists each incident written here with its
 * sequence, device, inode and birth time.  Retention walks it oldest
 * first; a file is deleted only while the name still leads to that very
 * file (same device, inode and birth time, a regular file of ours): a file
 * planted under an incident's name, or an incident replaced by a forgery
 * (even one that got the freed inode number), is never deleted and leaves
 * the manifest.  Files
 * the service did not write — planted look-alikes, incidents of an older
 * sysptd, anything copied in by hand — are never counted and never
 * deleted. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <unistd.h>

#include "outdir-local.h"
#include "record-local.h"

/* The budget when --max-disk is not given: 10% of the filesystem, at most
 * 4 GiB — journald's default for its own files (SystemMaxUse=), which
 * people running services already know. */
#define RETENTION_FS_SHARE 10
#define RETENTION_DEFAULT_CAP (4ull << 30)

int sptd_col_retention_added(struct sptd_col_outdir *od, const char *path)
{
	int ret = sptd_col_outdir_added(od, path);

	if (ret < 0)
		return ret;
	ret = sptd_col_retention_apply(od);
	if (sptd_col_outdir_save(od) < 0)
		sptd_col_log(LOG_WARNING, "cannot save %s/%s: incidents written now may be "
		             "kept beyond --keep/--max-disk after a restart", od->path,
		             SPTD_OUTDIR_STATE);
	return ret;
}

uint64_t sptd_col_retention_default_budget(int dirfd)
{
	struct statvfs vfs;
	uint64_t share;

	if (dirfd < 0 || fstatvfs(dirfd, &vfs) < 0 || vfs.f_blocks == 0)
		return 0;
	share = (uint64_t)vfs.f_blocks * vfs.f_frsize / RETENTION_FS_SHARE;
	return share < RETENTION_DEFAULT_CAP ? share : RETENTION_DEFAULT_CAP;
}

static int by_seq(const void *a, const void *b)
{
	const struct sptd_col_outdir_entry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* 1 when entry @e's name still leads to the file that was written (and
 * refresh its size), 0 when it does not (gone, or another file now). */
static int still_ours(struct sptd_col_outdir *od, struct sptd_col_outdir_entry *e)
{
	struct sptd_col_outdir_file f;

	if (sptd_col_outdir_stat(od, e->name, &f) < 0)
		return 0;
	if (!f.regular || f.dev != e->dev || f.ino != e->ino || f.born_ns != e->born_ns ||
	    f.uid != geteuid()) {
		sptd_col_log(LOG_WARNING, "%s/%s is no longer the incident sysptd wrote there "
		             "(replaced?): left alone, and no longer counted", od->path, e->name);
		return 0;
	}
	e->bytes = f.bytes;
	return 1;
}

/* Delete the oldest entry (index 0) if it is still ours; drop it from the
 * manifest either way.  1 deleted, 0 not. */
static int delete_oldest(struct sptd_col_outdir *od)
{
	int deleted = 0;

	if (still_ours(od, &od->entries[0])) {
		if (unlinkat(od->dirfd, od->entries[0].name, 0) == 0)
			deleted = 1;
		else
			sptd_col_log(LOG_WARNING, "cannot delete %s/%s: %s", od->path,
			             od->entries[0].name, strerror(errno));
	}
	memmove(od->entries, od->entries + 1, (od->n - 1) * sizeof(*od->entries));
	od->n--;
	return deleted;
}

static uint64_t total_bytes(const struct sptd_col_outdir *od)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < od->n; i++)
		sum += od->entries[i].bytes;
	return sum;
}

int sptd_col_retention_apply(struct sptd_col_outdir *od)
{
	size_t kept = 0;
	int deleted = 0;

	if (!od || od->dirfd < 0)
		return -EINVAL;
	if (od->n)   /* none yet: entries may be NULL */
		qsort(od->entries, od->n, sizeof(*od->entries), by_seq);
	/* entries whose file is gone or is not ours any more leave the list */
	for (size_t i = 0; i < od->n; i++)
		if (still_ours(od, &od->entries[i]))
			od->entries[kept++] = od->entries[i];
	od->n = kept;
	while (od->keep > 0 && od->n > (size_t)od->keep)
		deleted += delete_oldest(od);
	while (od->max_disk && od->n > 1 && total_bytes(od) > od->max_disk) {
		if (!od->said_space) {
			sptd_col_log(LOG_WARNING, "incidents in %s take %.1f MB, more than "
			             "--max-disk %.1f MB: deleting the oldest to make room (this is "
			             "said once; --max-disk SIZE or --keep N change it)", od->path,
			             (double)total_bytes(od) / 1e6, (double)od->max_disk / 1e6);
			od->said_space = 1;
		}
		sptd_col_log(LOG_INFO, "deleted %s/%s for space", od->path, od->entries[0].name);
		deleted += delete_oldest(od);
	}
	if (od->max_disk && od->n == 1 && od->entries[0].bytes > od->max_disk &&
	    !od->said_too_big) {
		sptd_col_log(LOG_WARNING, "%s/%s alone takes %.1f MB, more than --max-disk "
		             "%.1f MB: it is kept (the newest incident always is), every older "
		             "one was deleted; raise --max-disk or shorten --window (said once)",
		             od->path, od->entries[0].name, (double)od->entries[0].bytes / 1e6,
		             (double)od->max_disk / 1e6);
		od->said_too_big = 1;
	}
	return deleted;
}
