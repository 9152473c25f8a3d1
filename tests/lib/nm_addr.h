/* nm_addr.h — where binutils' nm puts a symbol: the independent source
 * the symbol tests compare sysptd's ELF reading with. */
#ifndef SPTD_TEST_NM_ADDR_H
#define SPTD_TEST_NM_ADDR_H

#include <stdint.h>

/* Address of @name in `nm --defined-only @path`, 0 when absent. */
uint64_t sptd_test_nm_addr(const char *path, const char *name);

#endif
