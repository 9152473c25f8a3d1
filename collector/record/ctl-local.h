/* ctl-local.h — the root-only control socket and the single-instance lock. */
#ifndef SPTD_CTL_LOCAL_H
#define SPTD_CTL_LOCAL_H

#include <stddef.h>

#include "sptd_col_record.h"

/* Take the single-instance lock in the run directory.  Returns the lock fd,
 * -EBUSY when another sysptd holds it (its pid through @holder). */
int sptd_col_lock_take(int *holder);

/* Listen on the control socket (mode 0600, owner root).  Returns the fd. */
int sptd_col_ctl_listen(void);
/* Accept one client, check it is root (SO_PEERCRED), read one command line.
 * Returns the client fd (caller replies and closes) or -errno. */
int sptd_col_ctl_accept(int listen_fd, char *cmd, size_t len);

#endif
