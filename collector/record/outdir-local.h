/* outdir-local.h — the service's output directory: checked once, held
 * open, incidents named by a sequence that lives as long as the directory,
 * a manifest of what this service wrote, and the retention that deletes
 * only from it (outdir.c, retention.c). */
#ifndef SPTD_OUTDIR_LOCAL_H
#define SPTD_OUTDIR_LOCAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The state file in the output directory (root's, 0600). */
#define SPTD_OUTDIR_STATE ".sysptd-state"
/* Incident names: "incident-<UTC time>-<sequence>.db", the sequence
 * zero-padded to this many digits so that names sort as text. */
#define SPTD_OUTDIR_SEQ_DIGITS 6

/* One incident this service wrote (a manifest entry). */
struct sptd_col_outdir_entry {
	uint64_t seq;            /* its sequence number: order of writing */
	char name[96];           /* file name inside the directory */
	dev_t dev;               /* st_dev when written */
	ino_t ino;               /* st_ino when written */
	int64_t born_ns;         /* its birth time (statx btime; ctime where the
	                          * filesystem has none): with dev and ino, what
	                          * tells our file from one put at its name
	                          * later, even on a reused inode */
	uint64_t bytes;          /* its size when written */
};

/* What a file in the directory is now (sptd_col_outdir_stat). */
struct sptd_col_outdir_file {
	dev_t dev;               /* device */
	ino_t ino;               /* inode */
	int64_t born_ns;         /* birth (or change) time, ns */
	uint64_t bytes;          /* size */
	uid_t uid;               /* owner */
	int regular;             /* 1: a regular file (not a symlink...) */
};



/* The output directory of a running service. */
struct sptd_col_outdir {
	int dirfd;               /* the directory, opened once (no symlink); -1 none */
	char path[4096];         /* as given, for messages and for SQLite */
	uint64_t next_seq;       /* sequence of the next incident */
	struct sptd_col_outdir_entry *entries; /* manifest, oldest first */
	size_t n, cap;           /* used / allocated entries */
	int keep;                /* --keep: newest incidents kept, 0 all */
	uint64_t max_disk;       /* --max-disk: bytes all incidents may take, 0 no limit */
	int said_space;          /* "deleting for space" was said */
	int said_too_big;        /* "one incident exceeds the budget" was said */
};

/* What @name in the directory is (no symlink followed).  -errno. */
int sptd_col_outdir_stat(const struct sptd_col_outdir *od, const char *name,
                         struct sptd_col_outdir_file *f);

/* Open (creating it 0700 when missing) and check the output directory
 * @path: not a symlink, owned by us (root), not writable by group or
 * others, and every directory above it either root's and not writable by
 * others or sticky — unless @unsafe (--unsafe-output).  Then read the
 * state file (sequence, manifest) and remove stale temporary files.
 * -EPERM unsafe (@err names why and the fix), -EBUSY another service
 * writes there, -ENOTDIR, or another negative errno (@err says which). */
int sptd_col_outdir_open(struct sptd_col_outdir *od, const char *path, int unsafe,
                         char *err, size_t errlen);
/* The full path of the next incident ("DIR/incident-<UTC>-<seq>.db") in
 * @buf; the sequence is taken and saved, so a name is never handed out
 * twice for the life of the directory. */
int sptd_col_outdir_next(struct sptd_col_outdir *od, char *buf, size_t len);
/* Record the incident just renamed into place at @path (one that
 * sptd_col_outdir_next named) in the manifest (in memory: see
 * sptd_col_retention_added). */
int sptd_col_outdir_added(struct sptd_col_outdir *od, const char *path);
/* Remove temporary files a killed writer left ("*.tmp.PID.XXXXXX" whose
 * writer is gone).  Returns how many. */
int sptd_col_outdir_clean(struct sptd_col_outdir *od);
/* Read the state file into od->next_seq and the manifest (a state file
 * that is not root's own is ignored, with a warning); the sequence is at
 * least one more than any incident name in the directory. */
int sptd_col_outdir_load(struct sptd_col_outdir *od);
/* Write the state file (sequence and manifest) atomically. */
int sptd_col_outdir_save(struct sptd_col_outdir *od);
/* Close; accepts a zeroed or failed @od. */
void sptd_col_outdir_close(struct sptd_col_outdir *od);

/* ---- retention (retention.c) -------------------------------------------- */

/* Delete the oldest incidents of the manifest beyond od->keep, then beyond
 * od->max_disk bytes in all (never the newest one; said once when it alone
 * exceeds the budget).  Only manifest entries whose file is still the one
 * written (same device and inode, a regular file of ours) are deleted;
 * entries whose file is gone or replaced are dropped from the manifest.
 * Returns how many files were deleted. */
int sptd_col_retention_apply(struct sptd_col_outdir *od);
/* After an incident was renamed into place at @path: record it in the
 * manifest, apply --keep and --max-disk, save the state file.  Returns how
 * many older incidents were deleted. */
int sptd_col_retention_added(struct sptd_col_outdir *od, const char *path);
/* The default --max-disk for the filesystem of @dirfd: 10% of its size,
 * at most 4 GiB (journald's SystemMaxUse rule); 0 when it cannot be read. */
uint64_t sptd_col_retention_default_budget(int dirfd);

#endif /* SPTD_OUTDIR_LOCAL_H */
