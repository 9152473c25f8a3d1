/* derive-local.h — what derive/ units share. */
#ifndef SPTD_DERIVE_LOCAL_H
#define SPTD_DERIVE_LOCAL_H

#include "sptd_col_base.h"
#include "sptd_col_derive.h"
#include "sptd_col_perf.h"

#endif
