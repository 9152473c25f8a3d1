/* perf-local.h — what perf/ units share. */
#ifndef SPTD_PERF_LOCAL_H
#define SPTD_PERF_LOCAL_H

#include "sptd_col_base.h"
#include "sptd_col_perf.h"

#endif
