/* import-local.h — what import/ units share. */
#ifndef SPTD_IMPORT_LOCAL_H
#define SPTD_IMPORT_LOCAL_H

#include "sptd_col_base.h"
#include "sptd_col_derive.h"
#include "sptd_col_import.h"
#include "sptd_col_perf.h"

#endif
