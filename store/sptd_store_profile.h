/* sptd_store_profile.h — part of sptd_store.h (which includes it): the
 * reader of watchpoint hits with their threads, for the Perfetto profile
 * packets of query/ (the other profile readers are the views frame,
 * sample_stack, offcpu_stack and thread_info of sptd_store_rows.h).
 * store/store_profile.c runs it; the reader conventions of sptd_store.h
 * hold (borrowed pointers, @fn's return, the errors). */
#ifndef SPTD_STORE_PROFILE_H
#define SPTD_STORE_PROFILE_H

#include <stdint.h>

struct sptd_store;
struct sptd_store_watch_hit_row;

/* watch_hit rows by ts, then id, as struct sptd_store_watch_hit_row
 * (sptd_store_rows.h; watch 0 and silent -1 where the values were not read),
 * each with @utid, the thread row of its tid (-1 none). */
int sptd_store_watch_hit_each(struct sptd_store *st,
                              int (*fn)(void *ctx, const struct sptd_store_watch_hit_row *row,
                                        int64_t utid),
                              void *ctx);

#endif /* SPTD_STORE_PROFILE_H */
