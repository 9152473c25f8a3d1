/* symcache-local.h — symbol tables kept across incidents (symcache.c), so
 * that an incident on a busy machine reads neither /proc/kallsyms nor the
 * symbol tables of files an earlier incident already read. */
#ifndef SPTD_SYMCACHE_LOCAL_H
#define SPTD_SYMCACHE_LOCAL_H

#include <stdint.h>

struct sptd_dec_symfile;

/* The cache.  One per service; used by one thread. */
struct sptd_col_symcache;
/* One mapped file in the cache: its headers always, its symbols once an
 * address needs them.  Valid until sptd_col_symcache_end. */
struct sptd_col_symcache_file;

/* A new cache.  @enabled 1: entries outlive incidents, and /proc/kallsyms
 * is read here, once, before the first trigger; 0: every incident starts
 * empty and reads everything again, through the same code (what
 * bench/bench-incident.sh compares, and what the test of identical rows
 * checks); -1: on unless $SPTD_SYMBOL_CACHE is "off" or "0".  -EINVAL,
 * -ENOMEM. */
int sptd_col_symcache_create(int enabled, struct sptd_col_symcache **out);
/* Accepts NULL. */
void sptd_col_symcache_destroy(struct sptd_col_symcache *c);

/* An incident starts using the cache: entries are checked again (build-id)
 * on their first use in it. */
void sptd_col_symcache_begin(struct sptd_col_symcache *c);
/* The incident is written: drop what it may not keep (everything when
 * caching is off; else files unused for a while, or the least recently
 * used beyond the size limits), and re-read /proc/kallsyms when
 * /proc/modules changed — after the incident, not on the next one's path.
 * Pointers handed out before are invalid afterwards. */
void sptd_col_symcache_end(struct sptd_col_symcache *c);

/* The file that process @pid maps at [@start, @end) from @path, device
 * @dev and inode @ino as /proc/PID/maps says: read from @path when it still
 * names that inode, else from /proc/PID/map_files (the mapped file itself,
 * deleted or replaced); any other file at @path is refused.  Headers and
 * symbols are each read through one descriptor proven to be that file,
 * never by reopening the name.  Keyed by (device, inode, mtime, size) and
 * checked by build-id once per incident.  0 and *@f, or -ENOENT (gone,
 * unreadable, another file at the path, not ELF: the caller keeps the
 * mapping without symbols), -ENOMEM. */
int sptd_col_symcache_file(struct sptd_col_symcache *c, int pid, uint64_t start, uint64_t end,
                           const char *path, uint64_t dev, uint64_t ino,
                           struct sptd_col_symcache_file **f);
/* Open the file @pid maps at [@start, @end) from @path, device @dev and
 * inode @ino as /proc/PID/maps says: @path only when it names that very
 * inode, else the mapping itself through /proc/PID/map_files; anything
 * else at the path is refused (SECURITY.md).  The fd (the caller closes
 * it), *@sb its stat, *@named 1 when opened by @path; -ENOENT. */
struct stat;
int sptd_col_symcache_locate(int pid, uint64_t start, uint64_t end, const char *path,
                             uint64_t dev, uint64_t ino, struct stat *sb, int *named);
/* The file a process gone by now mapped from @path, as the sideband's MMAP2
 * record describes it: with @build_id (hex, NULL when the record had
 * none) the file at @path must be that build; else its device and inode
 * must be @dev and @ino (and its inode generation @generation, where the
 * file system tells and @generation is not 0).  Then as
 * sptd_col_symcache_file (same entries).  0 and *@f, -EINVAL, -ENOENT (no
 * such file, unreadable, not ELF), -ESTALE (a different file is at @path
 * now: its symbols would be wrong), -ENOMEM. */
int sptd_col_symcache_file_recorded(struct sptd_col_symcache *c, const char *path,
                                    uint64_t dev, uint64_t ino, uint64_t generation,
                                    const char *build_id, struct sptd_col_symcache_file **f);
/* Build-id and PT_LOAD headers of @f (no symbols): for dso rows and the
 * bias.  Borrowed until sptd_col_symcache_end. */
const struct sptd_dec_symfile *sptd_col_symcache_file_head(const struct sptd_col_symcache_file *f);
/* The symbols of @f, read on the first call; NULL when they cannot be read
 * (or changed since the headers were: the build-id differs).  Borrowed
 * until sptd_col_symcache_end. */
const struct sptd_dec_symfile *sptd_col_symcache_file_syms(struct sptd_col_symcache *c,
                                                           struct sptd_col_symcache_file *f);

/* What the cache has done since it was created (tests, and the proof that
 * a second incident reads no table again). */
struct sptd_col_symcache_stats {
	uint64_t file_hits;         /* mapped files found in the cache */
	uint64_t file_heads;        /* files whose headers were read */
	uint64_t file_tables;       /* files whose symbols were read */
	uint64_t kallsyms_reads;    /* times /proc/kallsyms was read */
	uint64_t vdso_tables;       /* vDSO tables built */
	uint64_t evicted;           /* files dropped */
};
/* Copy the counters into *@stats. */
void sptd_col_symcache_stats(const struct sptd_col_symcache *c,
                             struct sptd_col_symcache_stats *stats);

/* The kernel's text symbols (/proc/kallsyms), NULL when unreadable (said
 * once, with the fix).  Borrowed until sptd_col_symcache_end. */
const struct sptd_dec_symfile *sptd_col_symcache_kernel(struct sptd_col_symcache *c);
/* The symbols of the vDSO that @pid maps at [@start, @end), read out of the
 * process (identical vDSOs share one table); NULL when unreadable.
 * Borrowed until sptd_col_symcache_end. */
const struct sptd_dec_symfile *sptd_col_symcache_vdso(struct sptd_col_symcache *c, int pid,
                                                      uint64_t start, uint64_t end);
/* The image read for the vDSO table @sf (from sptd_col_symcache_vdso):
 * 0 and *@bytes, *@len (borrowed like @sf), or -ENOENT. */
int sptd_col_symcache_vdso_image(const struct sptd_col_symcache *c,
                                 const struct sptd_dec_symfile *sf,
                                 const unsigned char **bytes, size_t *len);

#endif /* SPTD_SYMCACHE_LOCAL_H */
