/* grow.c — the growable arrays of collector/: room for one more element,
 * doubling. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sptd_col_base.h"

int sptd_col_grow(void **arr, size_t *cap, size_t used, size_t elem)
{
	size_t ncap;
	void *more;

	if (!arr || !cap || !elem)
		return -EINVAL;
	if (used < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 32;
	if (ncap < *cap || ncap > SIZE_MAX / elem)
		return -ENOMEM;
	more = realloc(*arr, ncap * elem);
	if (!more)
		return -ENOMEM;
	*arr = more;
	*cap = ncap;
	return 0;
}
