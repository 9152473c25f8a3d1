/* perf-local.h — what perf/ units share. */
#ifndef SPTD_PERF_LOCAL_H
#define SPTD_PERF_LOCAL_H

#include "sptd_col_base.h"
#include "sptd_col_perf.h"

struct perf_event_attr;
/* Set the aux_action bits (SPTD_PERF_AUX_*) of @attr whatever the installed
 * header calls them (the u32 after aux_sample_size: __reserved_3 before
 * Linux 6.13).  A NULL @attr is ignored. */
void sptd_col_perf_attr_set_aux_action(struct perf_event_attr *attr, uint32_t bits);

#endif
