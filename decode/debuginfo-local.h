/* debuginfo-local.h — finding a stripped file's symbols elsewhere
 * (debuginfo.c): the separate debug file, as gdb and perf look for it, and
 * MiniDebugInfo embedded in the file itself.  Only decode/ includes it. */
#ifndef SPTD_DEBUGINFO_LOCAL_H
#define SPTD_DEBUGINFO_LOCAL_H

#include "elf-local.h"

/* The separate debug file of @elf, whose GNU build-id is @build_id (hex,
 * may be NULL), looked for the way gdb and perf do:
 *   1. ROOT/.build-id/<first two hex digits>/<the rest>.debug for every debug
 *      root, whose own build-id must equal @build_id;
 *   2. the .gnu_debuglink name in the file's directory, in its .debug/
 *      subdirectory, and under every ROOT followed by that directory, whose
 *      CRC-32 must equal the link's.
 * Debug roots: $SPTD_DEBUG_DIRS (colon-separated; set and empty: none, and
 * no debuglink search either), else /usr/lib/debug.
 * On success *@debug is open (close it with sptd_dec_elf_close), *@how says
 * which way found it (SPTD_DEC_SYMS_BUILD_ID or SPTD_DEC_SYMS_DEBUGLINK), and its path is sptd_dec_elf_path(*@debug).
 * -ENOENT none found, -EINVAL, -ENOMEM. */
int sptd_dec_debuginfo_find(struct sptd_dec_elf *elf, const char *build_id,
                            struct sptd_dec_elf **debug, int *how);

/* MiniDebugInfo: the xz-compressed ELF file in @elf's .gnu_debugdata section
 * (Fedora and others ship the symbols of local functions that way),
 * decompressed and opened in memory into *@mini (close it with
 * sptd_dec_elf_close).  -ENODATA no such section, -EBADMSG corrupt or over
 * the size limit, -ENOMEM, -EINVAL. */
int sptd_dec_debuginfo_mini(struct sptd_dec_elf *elf, struct sptd_dec_elf **mini);

#endif /* SPTD_DEBUGINFO_LOCAL_H */
